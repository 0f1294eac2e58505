//! Aggregate functions: how elements are folded into a window result.
//!
//! An [`AggregateFunction`] keeps one small accumulator per window and adds elements to it as they
//! arrive, so a window never stores its raw elements (Flink's incremental aggregation with
//! `AggregateFunction`). `merge` combines two accumulators: session windows need it when they
//! merge, and key windows and sliced sliding windows build results from partial accumulators.
//! A [`ReduceFunction`] is the special case where input, accumulator and output have one type.
//!
//! [`NumericAggregate`] is the ready-made set the command line offers: count, sum, min, max and
//! mean over `f64` values. Its accumulator, [`NumericAcc`], keeps only what the chosen aggregate
//! needs (a count and one running value; the mean also a running mean), so that adding and merging
//! stay a few instructions: sliced windows merge partial accumulators on every firing.
//! [`NumericStats`] keeps all five at once, for callers that want every statistic of a window.

/// Incremental aggregation over a window (Flink's `AggregateFunction<IN, ACC, OUT>`).
///
/// The accumulator is created empty, elements are added one by one, accumulators of two windows
/// may be merged, and the result is read without consuming the accumulator (a window can fire
/// several times).
pub trait AggregateFunction<In> {
    /// The running state of one window.
    type Acc: Clone;
    /// What the window emits.
    type Out;

    /// A fresh, empty accumulator.
    fn create_accumulator(&self) -> Self::Acc;
    /// Adds one element to `acc`.
    fn add(&self, acc: &mut Self::Acc, value: &In);
    /// Folds `other` into `acc`; the result must equal adding both windows' elements to one.
    fn merge(&self, acc: &mut Self::Acc, other: Self::Acc);
    /// The window's result for the current accumulator.
    fn get_result(&self, acc: &Self::Acc) -> Self::Out;
}

/// Combines two values of one type into one (Flink's `ReduceFunction<T>`).
pub trait ReduceFunction<T> {
    /// Combines `a` and `b`; must be associative.
    fn reduce(&self, a: T, b: &T) -> T;
}

impl<T, F: Fn(T, &T) -> T> ReduceFunction<T> for F {
    fn reduce(&self, a: T, b: &T) -> T {
        self(a, b)
    }
}

/// An [`AggregateFunction`] made from a [`ReduceFunction`]: the accumulator is the reduced value
/// so far (`None` for an empty window), as Flink's `reduce` on a windowed stream.
///
/// # Examples
/// ```
/// use window_core::{AggregateFunction, ReduceAggregate};
/// let max = ReduceAggregate::new(|a: i64, b: &i64| a.max(*b));
/// let mut acc = max.create_accumulator();
/// max.add(&mut acc, &3);
/// max.add(&mut acc, &7);
/// assert_eq!(max.get_result(&acc), Some(7));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct ReduceAggregate<R> {
    reduce: R,
}

impl<R> ReduceAggregate<R> {
    /// Wraps a reduce function.
    #[must_use]
    pub const fn new(reduce: R) -> Self {
        Self { reduce }
    }
}

impl<T: Clone, R: ReduceFunction<T>> AggregateFunction<T> for ReduceAggregate<R> {
    type Acc = Option<T>;
    type Out = Option<T>;

    fn create_accumulator(&self) -> Option<T> {
        None
    }

    fn add(&self, acc: &mut Option<T>, value: &T) {
        *acc = Some(match acc.take() {
            None => value.clone(),
            Some(a) => self.reduce.reduce(a, value),
        });
    }

    fn merge(&self, acc: &mut Option<T>, other: Option<T>) {
        if let Some(o) = other {
            self.add(acc, &o);
        }
    }

    fn get_result(&self, acc: &Option<T>) -> Option<T> {
        acc.clone()
    }
}

/// Another aggregate function over a field of the element: `extract` maps each element to what
/// `inner` aggregates (a sum of one field of a user struct, say).
///
/// # Examples
/// ```
/// use window_core::{AggregateFunction, MapAggregate, NumericAggregate};
/// struct Order { amount: f64 }
/// let total = MapAggregate::new(|o: &Order| o.amount, NumericAggregate::Sum);
/// let mut acc = total.create_accumulator();
/// total.add(&mut acc, &Order { amount: 2.5 });
/// total.add(&mut acc, &Order { amount: 4.0 });
/// assert_eq!(total.get_result(&acc), Some(6.5));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct MapAggregate<G, F> {
    extract: G,
    inner: F,
}

impl<G, F> MapAggregate<G, F> {
    /// `inner` over `extract(element)`.
    pub const fn new(extract: G, inner: F) -> Self {
        Self { extract, inner }
    }
}

impl<T, U, G, F> AggregateFunction<T> for MapAggregate<G, F>
where
    G: Fn(&T) -> U,
    F: AggregateFunction<U>,
{
    type Acc = F::Acc;
    type Out = F::Out;

    fn create_accumulator(&self) -> F::Acc {
        self.inner.create_accumulator()
    }

    fn add(&self, acc: &mut F::Acc, value: &T) {
        self.inner.add(acc, &(self.extract)(value));
    }

    fn merge(&self, acc: &mut F::Acc, other: F::Acc) {
        self.inner.merge(acc, other);
    }

    fn get_result(&self, acc: &F::Acc) -> F::Out {
        self.inner.get_result(acc)
    }
}

/// Count, sum, min and max of `f64` values: the accumulator of [`NumericAggregate`].
///
/// `min` and `max` are `+inf`/`-inf` while `count == 0`.
#[derive(Clone, Copy, PartialEq, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NumericStats {
    /// Number of elements.
    pub count: u64,
    /// Sum of the values.
    pub sum: f64,
    /// Smallest value, `+inf` when empty.
    pub min: f64,
    /// Largest value, `-inf` when empty.
    pub max: f64,
    /// Running mean, kept incrementally so that it does not overflow where `sum` does
    /// (`1e308` and `1e308` have mean `1e308`); 0 when empty.
    pub mean: f64,
}

impl Default for NumericStats {
    fn default() -> Self {
        Self {
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            mean: 0.0,
        }
    }
}

impl NumericStats {
    /// Adds one value.
    pub fn add(&mut self, v: f64) {
        self.count += 1;
        self.mean += (v - self.mean) / self.count as f64;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Folds another accumulator into this one.
    pub fn merge(&mut self, other: &NumericStats) {
        if other.count > 0 {
            let total = (self.count + other.count) as f64;
            self.mean += (other.mean - self.mean) * (other.count as f64 / total);
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }
}

/// The numeric aggregates of `windowctl --agg`: count, sum, min, max, mean over `f64` values.
///
/// The result is `None` only where the aggregate of an empty window is undefined (min, max and
/// mean of no elements); count and sum of an empty window are 0. A window normally holds at least
/// one element; empty windows are emitted only after an evictor removed everything.
///
/// # Examples
/// ```
/// use window_core::{AggregateFunction, NumericAggregate};
/// let mean = NumericAggregate::Mean;
/// let mut acc = mean.create_accumulator();
/// for v in [1.0, 2.0, 6.0] { mean.add(&mut acc, &v); }
/// assert_eq!(mean.get_result(&acc), Some(3.0));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum NumericAggregate {
    /// Number of elements.
    Count,
    /// Sum of the values.
    Sum,
    /// Smallest value.
    Min,
    /// Largest value.
    Max,
    /// Arithmetic mean (sum / count).
    Mean,
}

impl NumericAggregate {
    /// The aggregate of an accumulator, as [`AggregateFunction::get_result`] gives it.
    #[must_use]
    pub fn of(self, s: &NumericStats) -> Option<f64> {
        match self {
            NumericAggregate::Count => Some(s.count as f64),
            NumericAggregate::Sum => Some(s.sum),
            _ if s.count == 0 => None,
            NumericAggregate::Min => Some(s.min),
            NumericAggregate::Max => Some(s.max),
            // The running mean; the exact sum / count when that is finite and available.
            NumericAggregate::Mean if s.sum.is_finite() => Some(s.sum / s.count as f64),
            NumericAggregate::Mean => Some(s.mean),
        }
    }
}

/// The accumulator of [`NumericAggregate`]: the element count and one running value whose
/// meaning depends on the aggregate. 24 bytes, where [`NumericStats`] takes 40.
///
/// | aggregate | `value` | `mean` |
/// |---|---|---|
/// | count | unused (0) | unused |
/// | sum | sum of the values | unused |
/// | min / max | smallest / largest value (`f64::min`/`max`: NaN values are skipped), 0 while empty | unused |
/// | mean | sum of the values | running mean, finite where the sum overflows |
///
/// Accumulators are only meaningful to the [`NumericAggregate`] that made them.
#[derive(Clone, Copy, PartialEq, Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NumericAcc {
    /// Number of elements.
    pub count: u64,
    /// The running value (see the table).
    pub value: f64,
    /// The running mean (mean only; see the table).
    pub mean: f64,
}

impl AggregateFunction<f64> for NumericAggregate {
    type Acc = NumericAcc;
    type Out = Option<f64>;

    fn create_accumulator(&self) -> NumericAcc {
        NumericAcc::default()
    }

    #[inline]
    fn add(&self, acc: &mut NumericAcc, value: &f64) {
        let v = *value;
        match self {
            NumericAggregate::Count => {}
            NumericAggregate::Sum => acc.value += v,
            // min/max of +-inf and v, as NumericStats, so NaN behaves the same in both.
            NumericAggregate::Min if acc.count == 0 => acc.value = f64::INFINITY.min(v),
            NumericAggregate::Min => acc.value = acc.value.min(v),
            NumericAggregate::Max if acc.count == 0 => acc.value = f64::NEG_INFINITY.max(v),
            NumericAggregate::Max => acc.value = acc.value.max(v),
            NumericAggregate::Mean => {
                acc.value += v;
                acc.mean += (v - acc.mean) / (acc.count + 1) as f64;
            }
        }
        acc.count += 1;
    }

    #[inline]
    fn merge(&self, acc: &mut NumericAcc, other: NumericAcc) {
        if other.count == 0 {
            return;
        }
        if acc.count == 0 {
            *acc = other;
            return;
        }
        match self {
            NumericAggregate::Count => {}
            NumericAggregate::Sum => acc.value += other.value,
            NumericAggregate::Min => acc.value = acc.value.min(other.value),
            NumericAggregate::Max => acc.value = acc.value.max(other.value),
            NumericAggregate::Mean => {
                acc.value += other.value;
                let total = (acc.count + other.count) as f64;
                acc.mean += (other.mean - acc.mean) * (other.count as f64 / total);
            }
        }
        acc.count += other.count;
    }

    #[inline]
    fn get_result(&self, acc: &NumericAcc) -> Option<f64> {
        match self {
            NumericAggregate::Count => Some(acc.count as f64),
            NumericAggregate::Sum => Some(acc.value),
            _ if acc.count == 0 => None,
            NumericAggregate::Min | NumericAggregate::Max => Some(acc.value),
            // The exact sum / count when the sum is finite, else the running mean.
            NumericAggregate::Mean if acc.value.is_finite() => Some(acc.value / acc.count as f64),
            NumericAggregate::Mean => Some(acc.mean),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_aggregates_over_values_and_merges() {
        let mut a = NumericStats::default();
        for v in [4.0, -2.0, 10.0] {
            a.add(v);
        }
        let mut b = NumericStats::default();
        b.add(7.0);
        a.merge(&b);
        assert_eq!(NumericAggregate::Count.of(&a), Some(4.0));
        assert_eq!(NumericAggregate::Sum.of(&a), Some(19.0));
        assert_eq!(NumericAggregate::Min.of(&a), Some(-2.0));
        assert_eq!(NumericAggregate::Max.of(&a), Some(10.0));
        assert_eq!(NumericAggregate::Mean.of(&a), Some(4.75));
        let mut huge = NumericStats::default();
        huge.add(1e308);
        huge.add(1e308);
        assert_eq!(
            NumericAggregate::Mean.of(&huge),
            Some(1e308),
            "no overflow in the mean"
        );
        let empty = NumericStats::default();
        assert_eq!(NumericAggregate::Min.of(&empty), None);
        assert_eq!(NumericAggregate::Count.of(&empty), Some(0.0));
    }

    #[test]
    fn lean_accumulator_gives_the_numeric_stats_results() {
        // NumericAcc keeps less than NumericStats; every aggregate must still give what
        // `NumericAggregate::of` gives on the full statistics, over adds and merges in any split.
        let all = [
            NumericAggregate::Count,
            NumericAggregate::Sum,
            NumericAggregate::Min,
            NumericAggregate::Max,
            NumericAggregate::Mean,
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for case in 0..500 {
            let n = (next() % 12) as usize;
            let values: Vec<f64> = (0..n)
                .map(|_| match next() % 10 {
                    0 if case % 7 == 0 => 1e308,
                    1 if case % 11 == 0 => f64::NAN,
                    _ => (next() % 2001) as f64 - 1000.0,
                })
                .collect();
            let cut = if n == 0 {
                0
            } else {
                (next() as usize) % (n + 1)
            };
            // The same split on the full statistics: the same float operations in the same order.
            let (mut stats, mut right_stats) = (NumericStats::default(), NumericStats::default());
            values[..cut].iter().for_each(|v| stats.add(*v));
            values[cut..].iter().for_each(|v| right_stats.add(*v));
            stats.merge(&right_stats);
            for agg in all {
                let (mut left, mut right) = (agg.create_accumulator(), agg.create_accumulator());
                values[..cut].iter().for_each(|v| agg.add(&mut left, v));
                values[cut..].iter().for_each(|v| agg.add(&mut right, v));
                agg.merge(&mut left, right);
                let (got, want) = (agg.get_result(&left), agg.of(&stats));
                let same = match (got, want) {
                    (Some(g), Some(w)) => g == w || (g.is_nan() && w.is_nan()),
                    (g, w) => g == w,
                };
                assert!(
                    same,
                    "{agg:?} of {values:?} split at {cut}: {got:?}, want {want:?}"
                );
                // And from the values directly, not through either accumulator (skipping NaN
                // inputs, where min and max follow f64::min/max and sums are NaN).
                if values.iter().any(|v| v.is_nan()) {
                    continue;
                }
                let sum = values[..cut].iter().sum::<f64>() + values[cut..].iter().sum::<f64>();
                let direct = match agg {
                    NumericAggregate::Count => Some(n as f64),
                    NumericAggregate::Sum => Some(sum),
                    _ if n == 0 => None,
                    NumericAggregate::Min => values.iter().copied().reduce(f64::min),
                    NumericAggregate::Max => values.iter().copied().reduce(f64::max),
                    NumericAggregate::Mean if sum.is_finite() => Some(sum / n as f64),
                    // An overflowing sum: the mean of the values, each divided first.
                    NumericAggregate::Mean => {
                        let mean: f64 = values.iter().map(|v| v / n as f64).sum();
                        let g = got.expect("mean of a non-empty window");
                        assert!(
                            (g - mean).abs() <= mean.abs() * 1e-12,
                            "{values:?}: {g} vs {mean}"
                        );
                        continue;
                    }
                };
                assert_eq!(got, direct, "{agg:?} of {values:?} split at {cut}");
            }
        }
        let mean = NumericAggregate::Mean;
        let mut acc = mean.create_accumulator();
        mean.add(&mut acc, &1e308);
        mean.add(&mut acc, &1e308);
        assert_eq!(
            mean.get_result(&acc),
            Some(1e308),
            "no overflow in the mean"
        );
        assert_eq!(
            NumericAggregate::Max.get_result(&NumericAcc::default()),
            None
        );
        assert_eq!(
            NumericAggregate::Sum.get_result(&NumericAcc::default()),
            Some(0.0)
        );
    }

    #[test]
    fn reduce_aggregate_merges_partials() {
        let sum = ReduceAggregate::new(|a: i64, b: &i64| a + b);
        let mut x = sum.create_accumulator();
        sum.add(&mut x, &2);
        let mut y = sum.create_accumulator();
        sum.add(&mut y, &5);
        sum.merge(&mut x, y);
        sum.merge(&mut x, None);
        assert_eq!(sum.get_result(&x), Some(7));
    }
}
