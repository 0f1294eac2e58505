//! A numeric aggregate whose result keeps an exact integer where an `f64` cannot hold it.

use super::{AggregateFunction, NumericAcc, NumericAggregate};

/// The largest integer below which every integer is an `f64`: 2^53.
const F64_EXACT: u64 = 1 << 53;

/// What [`ExactNumeric`] gives: the aggregate's `f64` result, or its exact integer where that
/// lies beyond 2^53 (where an `f64` rounds it).
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum NumericResult {
    /// The result as [`NumericAggregate`] gives it; `None` where it is undefined.
    Float(Option<f64>),
    /// A sum or mean of integers, exactly, beyond 2^53 in magnitude.
    Integer(i64),
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

/// [`NumericAggregate`] with a result that keeps the exact integer of a sum or mean of integer
/// values where an `f64` would round it (beyond 2^53): `9007199254740992 + 1` is
/// `9007199254740993`, as Flink's `sum` over a `Long` field gives it, where the `f64` result is
/// `9007199254740992`. Everywhere else the result is the aggregate's `f64` ([`NumericResult::Float`]),
/// so that outputs below 2^53 are the plain aggregate's. Same accumulator ([`NumericAcc`]), adds
/// and merges as [`NumericAggregate`].
///
/// # Examples
/// ```
/// use window_core::{AggregateFunction, ExactNumeric, NumericAggregate, NumericResult};
/// let sum = ExactNumeric(NumericAggregate::Sum);
/// let mut acc = sum.create_accumulator();
/// for v in [9_007_199_254_740_992.0, 1.0] { sum.add(&mut acc, &v); }
/// assert_eq!(sum.get_result(&acc), NumericResult::Integer(9_007_199_254_740_993));
/// let mut small = sum.create_accumulator();
/// sum.add(&mut small, &2.5);
/// assert_eq!(sum.get_result(&small), NumericResult::Float(Some(2.5)));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct ExactNumeric(pub NumericAggregate);

impl AggregateFunction<f64> for ExactNumeric {
    type Acc = NumericAcc;
    type Out = NumericResult;

    fn create_accumulator(&self) -> NumericAcc {
        self.0.create_accumulator()
    }

    #[inline]
    fn add(&self, acc: &mut NumericAcc, value: &f64) {
        self.0.add(acc, value);
    }

    #[inline]
    fn merge(&self, acc: &mut NumericAcc, other: NumericAcc) {
        self.0.merge(acc, other);
    }

    #[inline]
    fn get_result(&self, acc: &NumericAcc) -> NumericResult {
        let exact = match self.0 {
            NumericAggregate::Sum | NumericAggregate::Mean => self.0.integer_result(acc),
            _ => None,
        };
        match exact {
            Some(i) if i.unsigned_abs() > F64_EXACT => NumericResult::Integer(i),
            _ => NumericResult::Float(self.0.get_result(acc)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(a: NumericAggregate, values: &[f64]) -> NumericResult {
        let f = ExactNumeric(a);
        let mut acc = f.create_accumulator();
        for v in values {
            f.add(&mut acc, v);
        }
        f.get_result(&acc)
    }

    #[test]
    fn integers_beyond_2_pow_53_are_exact_and_the_rest_is_the_plain_aggregate() {
        let two53 = 9_007_199_254_740_992.0;
        assert_eq!(
            result(NumericAggregate::Sum, &[two53, 1.0]),
            NumericResult::Integer(9_007_199_254_740_993)
        );
        assert_eq!(
            result(NumericAggregate::Sum, &[-two53, -1.0]),
            NumericResult::Integer(-9_007_199_254_740_993)
        );
        // (2^53 + 2 + 2^53 + 4) / 2 = 2^53 + 3, which no f64 holds.
        assert_eq!(
            result(NumericAggregate::Mean, &[two53 + 2.0, two53 + 4.0]),
            NumericResult::Integer(9_007_199_254_740_995)
        );
        // Up to 2^53, for fractions, a mean that is no integer, min and max: the plain
        // aggregate's f64.
        for (a, values) in [
            (NumericAggregate::Sum, vec![two53 - 1.0, 1.0]),
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
                result(a, &values),
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
