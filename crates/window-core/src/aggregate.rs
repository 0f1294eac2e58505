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
//! needs (a count and one running value), so that adding and merging stay a few instructions:
//! sliced windows merge partial accumulators on every firing. Sums are exact over integers (an
//! `i64` sum while every value is one) and do not overflow in between (a float sum that
//! overflows is kept scaled by 2^-64); [`NumericAcc`] says how and at what cost.
//! [`NumericStats`] keeps all five at once, for callers that want every statistic of a window;
//! [`NumericAggregates`] is several of the aggregates over it, as one aggregate function.

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

    /// Removes `other`'s contribution from `acc`, where that is exact; returns whether it did.
    /// `other` must be a part of `acc`: the accumulator of some of the elements added to (or
    /// merged into) `acc`. On `true`, `acc` equals what merging the remaining parts gives (so
    /// a result read from it does not depend on whether parts were retracted); on `false` the
    /// aggregate cannot take that part out exactly and `acc` is unchanged. Retracting an empty
    /// accumulator returns whether `acc` is still in a form that can be retracted from.
    ///
    /// This is the inverse of the *invertible* aggregates of the sliding-window literature
    /// ("subtract on evict": Tangwongsan, Hirzel, Schneider, Wu, "General incremental
    /// sliding-window aggregation", VLDB 2015; Scotty's invertible aggregate functions, Traub
    /// et al., ICDE 2018 / TODS 2021): a window of a sum can drop what leaves in O(1) instead
    /// of recombining what stays. Shapes: a count always retracts, a sum only while it is
    /// exact (integers; a float sum would lose what a large value absorbed:
    /// `(1e17 + 1.5) - 1e17` is `0`, not `1.5`), a min or max never (nothing tells the next
    /// extreme). `keywindow` uses it for elements behind the watermark; everything else only
    /// merges.
    ///
    /// The provided method retracts nothing and returns `false`: every aggregate works without
    /// it.
    fn retract(&self, acc: &mut Self::Acc, other: &Self::Acc) -> bool {
        let _ = (acc, other);
        false
    }
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

    fn retract(&self, acc: &mut F::Acc, other: &F::Acc) -> bool {
        self.inner.retract(acc, other)
    }
}

/// Flag in the top bit of [`NumericAcc`]'s count: the sum is kept as a float (`value`), because
/// some value was not an integer of the `i64` range or the integer sum left that range.
const FLOAT: u64 = 1 << 63;
/// Flag in the next bit: the float sum is kept scaled by [`DOWN`] (2^-64), because an
/// unscaled partial sum overflowed.
const SCALED: u64 = 1 << 62;
/// Both flags.
const FLAGS: u64 = FLOAT | SCALED;
/// 2^-64, the factor of a scaled sum: exact on every value of magnitude at least 2^-958.
const DOWN: f64 = 1.0 / 18_446_744_073_709_551_616.0;
/// 2^64, back from a scaled sum.
const UP: f64 = 18_446_744_073_709_551_616.0;

/// The accumulator of [`NumericAggregate`]: the element count and one running value whose
/// meaning depends on the aggregate. 24 bytes (count, a float word, an integer word), where
/// [`NumericStats`] takes 72.
///
/// | aggregate | kept |
/// |---|---|
/// | count | the count only |
/// | min / max | smallest / largest value, exactly as the [`Number`] it is: an integer in the integer word, a float in the float word (NaN values are skipped, as `f64::min`/`max` skip them; of equal values an integer is kept, so the result does not depend on the order) |
/// | sum / mean | the sum, exact or as a float (below) |
///
/// **The sum** (sum and mean) is kept in one of three forms, chosen by the values seen:
/// - *exact*: while every value is an integer of the `i64` range ([`Number::Int`], or an
///   integral `f64` with `-2^63 <= v < 2^63`), the sum is an `i128` (its two halves in the two
///   words), with no rounding and no overflow at all: a count below 2^62 of values below 2^63
///   sums below 2^125. `2^53 + 1` is `9007199254740993`, where an `f64` sum would round it to
///   `2^53`, and `i64::MAX + i64::MAX - i64::MAX` is `i64::MAX` (Flink sums `Long` values
///   exactly while the sum fits and wraps around where it does not; this sum never wraps, and
///   a total beyond the `i64` range is still exact). The `f64` result is the exact sum
///   rounded once, [`NumericAggregate::integer_result`] the exact integer; the mean is
///   computed from the exact sum and count (`exact_mean`), so it does not depend on the order
///   of the values either.
/// - *float*: from the first other value (a fraction, a NaN, a magnitude of 2^63 or more) the
///   sum is an `f64`: the exact sum so far (one rounding, none below 2^53) plus each further
///   value, in order. For values and partial sums below 2^53 this is the same `f64` the plain
///   sum gives.
/// - *scaled*: when a float partial sum of finite values overflows, the sum is kept times 2^-64
///   from then on, so that it cannot overflow in between (`1e308 + 1e308 - 1e308` is `1e308`,
///   where the plain sum is `inf`, then `NaN` or `-inf`); the result is scaled back, and is
///   infinite only if the sum itself is beyond the `f64` range. The cost: values below 2^-958
///   (1e-288) in magnitude lose precision once a window's sum is scaled.
///
/// Adding costs an `i128` add (exact) or a float add and an overflow check (float); no
/// allocation. The forms' flags are the top two bits of the count word. Merging follows the
/// same rules, so partial accumulators merge to what one accumulator of all the values gives
/// whenever the sums are exact, and to the same float operations as the plain sum otherwise.
///
/// Accumulators are only meaningful to the [`NumericAggregate`] that made them.
#[derive(Clone, Copy, PartialEq, Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NumericAcc {
    /// Number of elements (low 62 bits) and the form ([`FLOAT`], [`SCALED`]).
    count: u64,
    /// The float word: the bits of an `f64` (a float min or max, the float sum, scaled by
    /// 2^-64 in the scaled form), or the high 64 bits of the exact `i128` sum.
    word: u64,
    /// The integer word: an integer min or max, or the low 64 bits of the exact sum.
    int: i64,
}

impl NumericAcc {
    /// Number of elements added (or merged in).
    #[must_use]
    #[inline]
    pub fn count(&self) -> u64 {
        self.count & !FLAGS
    }
}

/// Count, sum, min, max and mean of `f64` or [`Number`] values at once, for callers that want
/// every statistic of a window; each as the single aggregate's [`NumericAcc`] keeps it (exact
/// for integers, sums without overflow in between). 72 bytes.
#[derive(Clone, Copy, PartialEq, Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NumericStats {
    /// Count and sum, as [`NumericAggregate::Sum`] keeps them.
    sum: NumericAcc,
    /// The minimum, as [`NumericAggregate::Min`] keeps it.
    min: NumericAcc,
    /// The maximum, as [`NumericAggregate::Max`] keeps it.
    max: NumericAcc,
}

impl NumericStats {
    /// Adds one value.
    pub fn add(&mut self, v: f64) {
        self.add_number(Number::Float(v));
    }

    /// Adds one value, an integer exactly.
    pub fn add_number(&mut self, v: Number) {
        NumericAggregate::Sum.add_number(&mut self.sum, v);
        NumericAggregate::Min.add_number(&mut self.min, v);
        NumericAggregate::Max.add_number(&mut self.max, v);
    }

    /// Folds another accumulator into this one.
    pub fn merge(&mut self, other: &NumericStats) {
        NumericAggregate::Sum.merge(&mut self.sum, other.sum);
        NumericAggregate::Min.merge(&mut self.min, other.min);
        NumericAggregate::Max.merge(&mut self.max, other.max);
    }

    /// Number of values.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.sum.count()
    }

    /// The accumulator `aggregate` would have kept over the same values.
    #[must_use]
    pub fn acc_of(&self, aggregate: NumericAggregate) -> &NumericAcc {
        match aggregate {
            NumericAggregate::Min => &self.min,
            NumericAggregate::Max => &self.max,
            _ => &self.sum,
        }
    }
}

/// The numeric aggregates of `windowctl --agg`: count, sum, min, max, mean over `f64` values.
///
/// The result is `None` only where the aggregate of an empty window is undefined (min, max and
/// mean of no elements); count and sum of an empty window are 0. A window normally holds at least
/// one element; empty windows are emitted only after an evictor removed everything.
///
/// Sums and means are exact over integers and do not overflow in between (see [`NumericAcc`]);
/// Flink's built-in `sum` on a `Double` field overflows to `inf` (and `NaN`) where ours stays
/// finite, a deliberate difference.
///
/// # Examples
/// ```
/// use window_core::{AggregateFunction, NumericAggregate};
/// let mean = NumericAggregate::Mean;
/// let mut acc = mean.create_accumulator();
/// for v in [1.0, 2.0, 6.0] { mean.add(&mut acc, &v); }
/// assert_eq!(mean.get_result(&acc), Some(3.0));
/// let mut big = mean.create_accumulator();
/// for v in [1e308, 1e308, -1e308] { mean.add(&mut big, &v); }
/// assert_eq!(mean.get_result(&big), Some(1e308 / 3.0));
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
    /// The aggregate's name, as `windowctl --agg` spells it and its output column is named:
    /// `count`, `sum`, `min`, `max`, `mean`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            NumericAggregate::Count => "count",
            NumericAggregate::Sum => "sum",
            NumericAggregate::Min => "min",
            NumericAggregate::Max => "max",
            NumericAggregate::Mean => "mean",
        }
    }

    /// The aggregate of full statistics: what [`AggregateFunction::get_result`] gives on the
    /// accumulator of the same values.
    #[must_use]
    pub fn of(self, s: &NumericStats) -> Option<f64> {
        self.get_result(s.acc_of(self))
    }

    /// The result as an exact integer, where it is one: the count; the sum while it is exact
    /// ([`NumericAcc::exact_sum`]); min and max when integral and in the `i64` range; the mean
    /// when the exact sum divides by the count. `None` otherwise (then print
    /// [`AggregateFunction::get_result`]'s `f64`). An `f64` result holds an integer exactly only
    /// below 2^53: this is the result for an output that prints integers beyond.
    #[must_use]
    pub fn integer_result(self, acc: &NumericAcc) -> Option<i128> {
        let count = acc.count();
        match self {
            NumericAggregate::Count => Some(i128::from(count)),
            NumericAggregate::Sum => acc.exact_sum(),
            _ if count == 0 => None,
            NumericAggregate::Min | NumericAggregate::Max => match acc.extreme() {
                Number::Int(i) => Some(i128::from(i)),
                Number::Float(f) => {
                    let i = f as i64;
                    (i as f64 == f && i != i64::MAX).then_some(i128::from(i))
                }
            },
            NumericAggregate::Mean => {
                let n = i128::from(count);
                acc.exact_sum().filter(|s| s % n == 0).map(|s| s / n)
            }
        }
    }
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
            NumericAggregate::Sum | NumericAggregate::Mean => acc.add_to_sum(v),
            NumericAggregate::Min => acc.add_extreme(Number::Float(v), true),
            NumericAggregate::Max => acc.add_extreme(Number::Float(v), false),
        }
        acc.count += 1;
    }

    #[inline(always)]
    fn merge(&self, acc: &mut NumericAcc, other: NumericAcc) {
        if other.count() == 0 {
            return;
        }
        if acc.count() == 0 {
            *acc = other;
            return;
        }
        match self {
            NumericAggregate::Count => acc.count += other.count(),
            NumericAggregate::Sum | NumericAggregate::Mean => acc.merge_sum(&other),
            NumericAggregate::Min | NumericAggregate::Max => {
                acc.add_extreme(other.extreme(), *self == NumericAggregate::Min);
                acc.count += other.count();
            }
        }
    }

    #[inline]
    fn get_result(&self, acc: &NumericAcc) -> Option<f64> {
        match self {
            NumericAggregate::Count => Some(acc.count() as f64),
            NumericAggregate::Sum => Some(acc.sum()),
            _ if acc.count() == 0 => None,
            NumericAggregate::Min | NumericAggregate::Max => Some(acc.extreme().as_f64()),
            NumericAggregate::Mean => Some(acc.mean()),
        }
    }

    /// Count: the counts subtract. Sum and mean: only while both sums are exact (the `i128`
    /// form of [`NumericAcc`]), the sums and counts subtract; a float or scaled sum refuses (a
    /// float difference loses what a large value absorbed). Min and max: never. Refuses, too,
    /// a part larger than `acc` (a count, or a nonzero sum left over a count of 0).
    fn retract(&self, acc: &mut NumericAcc, other: &NumericAcc) -> bool {
        match self {
            NumericAggregate::Count => match acc.count().checked_sub(other.count()) {
                Some(count) => {
                    acc.count = (acc.count & FLAGS) | count;
                    true
                }
                None => false,
            },
            NumericAggregate::Sum | NumericAggregate::Mean => acc.retract_sum(other),
            NumericAggregate::Min | NumericAggregate::Max => false,
        }
    }
}

impl NumericAggregate {
    /// Adds a [`Number`] to `acc` (what [`ExactNumeric`] and [`NumericAggregates`] add): an
    /// integer is added to the sum exactly and compared exactly (the maximum of
    /// `9007199254740993` and `9007199254740992` is the first, where their `f64`s are equal); a
    /// float as [`AggregateFunction::add`] adds it. Same accumulator.
    #[inline(always)]
    pub fn add_number(self, acc: &mut NumericAcc, value: Number) {
        match (self, value) {
            (NumericAggregate::Count, _) => {}
            (NumericAggregate::Sum | NumericAggregate::Mean, Number::Int(i)) => {
                acc.add_int_to_sum(i);
            }
            (NumericAggregate::Sum | NumericAggregate::Mean, Number::Float(f)) => {
                acc.add_to_sum(f);
            }
            (NumericAggregate::Min, n) => acc.add_extreme(n, true),
            (NumericAggregate::Max, n) => acc.add_extreme(n, false),
        }
        acc.count += 1;
    }
}

mod exact;
mod number;
mod several;
mod sum;
pub use exact::{ExactNumeric, NumericResult};
pub use number::Number;
pub use several::{AggregateListError, NumericAggregates};

#[cfg(test)]
mod tests;
