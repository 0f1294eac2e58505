//! Aggregate functions: how elements are folded into a window result.
//!
//! An [`AggregateFunction`] keeps one small accumulator per window and adds elements to it as they
//! arrive, so a window never stores its raw elements (Flink's incremental aggregation with
//! `AggregateFunction`). `merge` combines two accumulators: session windows need it when they
//! merge, and key windows and sliced sliding windows build results from partial accumulators.
//! A [`ReduceFunction`] is the special case where input, accumulator and output have one type.
//!
//! [`NumericAggregate`] is the ready-made set the command line offers: count, sum, min, max and
//! mean over `f64` values, all sharing one accumulator, [`NumericStats`].

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

impl AggregateFunction<f64> for NumericAggregate {
    type Acc = NumericStats;
    type Out = Option<f64>;

    fn create_accumulator(&self) -> NumericStats {
        NumericStats::default()
    }

    fn add(&self, acc: &mut NumericStats, value: &f64) {
        acc.add(*value);
    }

    fn merge(&self, acc: &mut NumericStats, other: NumericStats) {
        acc.merge(&other);
    }

    fn get_result(&self, acc: &NumericStats) -> Option<f64> {
        self.of(acc)
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
        NumericAggregate::Sum.merge(&mut a, b);
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
