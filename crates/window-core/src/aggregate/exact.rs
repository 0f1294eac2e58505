//! A numeric aggregate whose result keeps an exact integer where an `f64` cannot hold it.

use super::{AggregateFunction, Number, NumericAcc, NumericAggregate, NumericStats};

/// 2^53: from here up an `f64` result prints with an exponent (`window_io`), so an exact
/// integer result of this magnitude is [`NumericResult::Integer`].
const F64_EXACT: u128 = 1 << 53;

/// What [`ExactNumeric`] gives: the aggregate's `f64` result, or its exact integer where that
/// lies beyond 2^53 (where an `f64` rounds it).
#[derive(Clone, Copy, PartialEq, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum NumericResult {
    /// The result as [`NumericAggregate`] gives it; `None` where it is undefined.
    Float(Option<f64>),
    /// A sum or mean of integers, or the minimum or maximum of [`Number::Int`] values, exactly,
    /// of magnitude 2^53 or more (where `f64` results print with an exponent).
    Integer(i128),
}

impl NumericResult {
    /// The result as an `f64` (rounded, for [`NumericResult::Integer`]).
    #[must_use]
    pub fn as_f64(self) -> Option<f64> {
        match self {
            NumericResult::Float(v) => v,
            NumericResult::Integer(i) => Some(i as f64),
        }
    }
}

/// [`NumericAggregate`] over [`Number`] values, with a result that keeps the exact integer
/// where an `f64` would round it (beyond 2^53): `9007199254740993 + 1` is `9007199254740994`, as
/// Flink's `sum` over a `Long` field gives it (an `f64` cannot even hold the first value); the
/// maximum of `9007199254740993` and `9007199254740992` is the first. Everywhere else the result
/// is the plain aggregate's `f64` ([`NumericResult::Float`]), so that outputs below 2^53 are
/// the plain aggregate's. Same accumulator ([`NumericAcc`]); adds with
/// [`NumericAggregate::add_number`], merges as [`NumericAggregate`].
///
/// # Examples
/// ```
/// use window_core::{AggregateFunction, ExactNumeric, Number, NumericAggregate, NumericResult};
/// let sum = ExactNumeric(NumericAggregate::Sum);
/// let mut acc = sum.create_accumulator();
/// for v in [9_007_199_254_740_993, 1] { sum.add(&mut acc, &Number::Int(v)); }
/// assert_eq!(sum.get_result(&acc), NumericResult::Integer(9_007_199_254_740_994));
/// let mut small = sum.create_accumulator();
/// sum.add(&mut small, &Number::Float(2.5));
/// assert_eq!(sum.get_result(&small), NumericResult::Float(Some(2.5)));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ExactNumeric(pub NumericAggregate);

/// Over [`Number`] values: integers are summed and compared exactly, so the result is exact
/// beyond 2^53 (`9007199254740993 + 1` is `9007199254740994`, as Flink's `sum` of a `Long`
/// field, where `f64` values would already be rounded when read).
impl AggregateFunction<Number> for ExactNumeric {
    type Acc = NumericAcc;
    type Out = NumericResult;

    fn create_accumulator(&self) -> NumericAcc {
        NumericAcc::default()
    }

    // Always inlined (a benchmark): the callers are per-element loops in other crates, where
    // the compiler otherwise kept a call.
    #[inline(always)]
    fn add(&self, acc: &mut NumericAcc, value: &Number) {
        self.0.add_number(acc, *value);
    }

    #[inline(always)]
    fn merge(&self, acc: &mut NumericAcc, other: NumericAcc) {
        self.0.merge(acc, other);
    }

    /// As [`NumericAggregate`] retracts (counts always, exact sums, never min or max).
    fn retract(&self, acc: &mut NumericAcc, other: &NumericAcc) -> bool {
        self.0.retract(acc, other)
    }

    #[inline(always)]
    fn get_result(&self, acc: &NumericAcc) -> NumericResult {
        self.result(acc)
    }
}

impl ExactNumeric {
    /// The result of `acc` (see the type).
    #[must_use]
    #[inline(always)]
    pub fn result(&self, acc: &NumericAcc) -> NumericResult {
        let exact = match self.0 {
            // Below 2^53 neither the sum nor the mean is an Integer result: no division.
            NumericAggregate::Sum | NumericAggregate::Mean if acc.below_2_53_or_float() => None,
            NumericAggregate::Sum | NumericAggregate::Mean => self.0.integer_result(acc),
            NumericAggregate::Min | NumericAggregate::Max if acc.count() > 0 => {
                match acc.extreme() {
                    Number::Int(i) => Some(i128::from(i)),
                    Number::Float(_) => None,
                }
            }
            _ => None,
        };
        match exact {
            Some(i) if i.unsigned_abs() >= F64_EXACT => NumericResult::Integer(i),
            _ => NumericResult::Float(self.0.get_result(acc)),
        }
    }

    /// The result over full statistics: what [`ExactNumeric::result`] gives on the accumulator
    /// of the same values.
    #[must_use]
    pub fn of(&self, stats: &NumericStats) -> NumericResult {
        self.result(stats.acc_of(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(a: NumericAggregate, values: &[Number]) -> NumericResult {
        let f = ExactNumeric(a);
        let mut acc = f.create_accumulator();
        for v in values {
            f.add(&mut acc, v);
        }
        f.get_result(&acc)
    }

    fn floats(values: &[f64]) -> Vec<Number> {
        values.iter().map(|&v| Number::Float(v)).collect()
    }

    #[test]
    fn integers_beyond_2_pow_53_are_exact_and_the_rest_is_the_plain_aggregate() {
        let two53 = 9_007_199_254_740_992.0;
        let int53 = 9_007_199_254_740_992_i64;
        // The issue's example: Flink's Long sum gives 9007199254740994.
        assert_eq!(
            result(
                NumericAggregate::Sum,
                &[Number::Int(int53 + 1), Number::Int(1)]
            ),
            NumericResult::Integer(9_007_199_254_740_994)
        );
        assert_eq!(
            result(NumericAggregate::Sum, &floats(&[two53, 1.0])),
            NumericResult::Integer(9_007_199_254_740_993)
        );
        assert_eq!(
            result(NumericAggregate::Sum, &floats(&[-two53, -1.0])),
            NumericResult::Integer(-9_007_199_254_740_993)
        );
        // (2^53 + 2 + 2^53 + 4) / 2 = 2^53 + 3, which no f64 holds.
        assert_eq!(
            result(NumericAggregate::Mean, &floats(&[two53 + 2.0, two53 + 4.0])),
            NumericResult::Integer(9_007_199_254_740_995)
        );
        // Min and max of integers are exact too, also against a float of the same f64.
        let ints = [
            Number::Int(int53 + 1),
            Number::Float(two53),
            Number::Int(int53 + 3),
            Number::Float(0.5),
        ];
        assert_eq!(
            result(NumericAggregate::Max, &ints),
            NumericResult::Integer((int53 + 3).into())
        );
        assert_eq!(
            result(NumericAggregate::Min, &ints[..3]),
            NumericResult::Float(Some(two53))
        );
        assert_eq!(
            result(
                NumericAggregate::Min,
                &[Number::Int(-int53 - 5), Number::Int(7)]
            ),
            NumericResult::Integer((-int53 - 5).into())
        );
        // Below 2^53, for fractions, a mean that is no integer, min and max of floats: the
        // plain aggregate's f64.
        for (a, values) in [
            (NumericAggregate::Sum, vec![two53 - 2.0, 1.0]),
            (NumericAggregate::Sum, vec![1.5, 2.0]),
            (
                NumericAggregate::Mean,
                vec![two53 + 2.0, two53 + 4.0, two53 + 4.0],
            ),
            (NumericAggregate::Max, vec![two53 * 4.0, 1.0]),
            (NumericAggregate::Count, vec![1.0, 2.0]),
            (NumericAggregate::Min, vec![]),
        ] {
            assert_eq!(
                result(a, &floats(&values)),
                NumericResult::Float(a.get_result(&{
                    let mut acc = a.create_accumulator();
                    for v in &values {
                        a.add(&mut acc, v);
                    }
                    acc
                })),
                "{a:?} {values:?}"
            );
        }
    }
}
