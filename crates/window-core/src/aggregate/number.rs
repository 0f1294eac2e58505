//! [`Number`]: an element value that is an exact integer or a float, as Flink's `Long` and
//! `Double` fields are two types; and the extremes (min, max) of [`super::NumericAcc`] over it.
//!
//! An `f64` holds every integer only up to 2^53 (9007199254740992): `9007199254740993` read as an
//! `f64` is `9007199254740992`. Input values written as integers are therefore kept as `i64`
//! ([`Number::Int`]), so that sums, means, minima and maxima of them are exact (Flink sums a
//! `Long` field exactly); every other value is an `f64` ([`Number::Float`]).

use std::cmp::Ordering;
use std::fmt;

use super::{NumericAcc, FLOAT};

/// A numeric element value: an integer, exactly, or a float.
///
/// Equality and order are numeric and exact across the variants: `Int(3) == Float(3.0)`, and
/// `Int(9007199254740993) > Float(9007199254740992.0)` (where the `f64` of the integer is equal
/// to the float). NaN is unordered, as for `f64`. 16 bytes.
///
/// # Examples
/// ```
/// use window_core::Number;
/// let big = Number::Int(9_007_199_254_740_993);
/// assert_eq!(big.as_f64(), 9_007_199_254_740_992.0); // rounded
/// assert!(big > Number::Float(9_007_199_254_740_992.0)); // compared exactly
/// assert_eq!(Number::Int(3), Number::Float(3.0));
/// assert_eq!(Number::from(2.5).to_string(), "2.5");
/// ```
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Number {
    /// An integer (an input value written without fraction or exponent that fits an `i64`).
    Int(i64),
    /// Any other value.
    Float(f64),
}

impl Number {
    /// The value as an `f64`: rounded to nearest for an integer beyond 2^53 in magnitude.
    #[must_use]
    #[inline]
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }

    /// Whether the value is NaN (only a [`Number::Float`] can be).
    #[must_use]
    #[inline]
    pub fn is_nan(self) -> bool {
        matches!(self, Number::Float(f) if f.is_nan())
    }
}

impl Default for Number {
    /// `Int(0)`.
    fn default() -> Self {
        Number::Int(0)
    }
}

impl From<f64> for Number {
    fn from(f: f64) -> Self {
        Number::Float(f)
    }
}

impl From<i64> for Number {
    fn from(i: i64) -> Self {
        Number::Int(i)
    }
}

impl From<Number> for f64 {
    /// [`Number::as_f64`].
    fn from(n: Number) -> Self {
        n.as_f64()
    }
}

impl fmt::Display for Number {
    /// The integer's digits, or the float as `f64`'s `Display` writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Int(i) => write!(f, "{i}"),
            Number::Float(x) => write!(f, "{x}"),
        }
    }
}

/// `i` against `f`, exactly.
fn cmp_int_float(i: i64, f: f64) -> Option<Ordering> {
    let rounded = i as f64;
    match rounded.partial_cmp(&f)? {
        // Rounding is monotonic and `f` is an f64: a rounded value below (above) `f` comes from
        // an integer below (above) it.
        Ordering::Equal => {
            // `f` equals a rounded i64, so it is an integer of magnitude at most 2^63, which
            // an i128 holds.
            Some(i128::from(i).cmp(&(f as i128)))
        }
        other => Some(other),
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        self.partial_cmp(other) == Some(Ordering::Equal)
    }
}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        match (*self, *other) {
            (Number::Int(a), Number::Int(b)) => Some(a.cmp(&b)),
            (Number::Float(a), Number::Float(b)) => a.partial_cmp(&b),
            (Number::Int(a), Number::Float(b)) => cmp_int_float(a, b),
            (Number::Float(a), Number::Int(b)) => cmp_int_float(b, a).map(Ordering::reverse),
        }
    }
}

/// The extremes of [`NumericAcc`] (min and max): the extreme is kept as the [`Number`] it is, an
/// exact `i64` in `int` (the [`FLOAT`] flag clear) or an `f64` in `value` (the flag set), so
/// that the maximum of `9007199254740993` and `9007199254740992` is the first.
impl NumericAcc {
    /// The extreme so far (min or max accumulators); meaningless while empty.
    #[inline]
    pub(super) fn extreme(&self) -> Number {
        if self.count & FLOAT == 0 {
            Number::Int(self.int)
        } else {
            Number::Float(self.float())
        }
    }

    #[inline]
    fn set_extreme(&mut self, n: Number) {
        match n {
            Number::Int(i) => {
                (self.int, self.word) = (i, 0);
                self.count &= !FLOAT;
            }
            Number::Float(f) => {
                self.int = 0;
                self.set_float(f);
                self.count |= FLOAT;
            }
        }
    }

    /// Folds `n` into the minimum (`min`) or maximum, without counting it. NaN values are
    /// skipped, as `f64::min` and `f64::max` skip them (a NaN alone leaves `+inf` / `-inf`).
    #[inline]
    pub(super) fn add_extreme(&mut self, n: Number, min: bool) {
        if self.count() == 0 {
            let none = if min {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            };
            self.set_extreme(if n.is_nan() { Number::Float(none) } else { n });
            return;
        }
        // The common cases, a value of the extreme's kind, inline; a mix apart.
        match (n, self.count & FLOAT == 0) {
            (Number::Int(i), true) => {
                if (min && i < self.int) || (!min && i > self.int) {
                    self.int = i;
                }
            }
            (Number::Float(f), false) => {
                // A NaN compares false: skipped.
                let current = self.float();
                if (min && f < current) || (!min && f > current) {
                    self.set_float(f);
                }
            }
            _ => self.add_extreme_mixed(n, min),
        }
    }

    /// [`NumericAcc::add_extreme`] of an integer against a float extreme or the reverse.
    #[inline(never)]
    fn add_extreme_mixed(&mut self, n: Number, min: bool) {
        let ordering = if min {
            Ordering::Less
        } else {
            Ordering::Greater
        };
        let current = self.extreme();
        match n.partial_cmp(&current) {
            Some(o) if o == ordering => self.set_extreme(n),
            // Of equal values the integer stays, whatever the order they came in.
            Some(Ordering::Equal) if matches!((n, current), (Number::Int(_), Number::Float(_))) => {
                self.set_extreme(n)
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_equality_are_exact_across_integers_and_floats() {
        let two53 = 9_007_199_254_740_992_i64;
        let f = two53 as f64;
        assert!(Number::Int(two53 + 1) > Number::Float(f));
        assert!(Number::Float(f) < Number::Int(two53 + 1));
        assert_eq!(Number::Int(two53), Number::Float(f));
        assert!(Number::Int(two53 - 1) < Number::Float(f));
        assert!(Number::Int(i64::MAX) < Number::Float(2f64.powi(63)));
        assert!(Number::Int(i64::MIN) == Number::Float(-(2f64.powi(63))));
        assert!(Number::Int(i64::MIN) > Number::Float(f64::NEG_INFINITY));
        assert!(Number::Int(0) > Number::Float(-0.5));
        assert!(Number::Int(1) < Number::Float(1.5));
        assert_eq!(Number::Int(1).partial_cmp(&Number::Float(f64::NAN)), None);
        assert_ne!(Number::Float(f64::NAN), Number::Float(f64::NAN));
        assert_eq!(Number::Int(-7).to_string(), "-7");
        assert_eq!(Number::Int(two53 + 1).as_f64(), f);
    }

    /// A reference order key: integer part and fraction, exact for finite values below 2^64.
    fn key(n: Number) -> (i128, f64) {
        match n {
            Number::Int(i) => (i128::from(i), 0.0),
            Number::Float(f) => (f.floor() as i128, f - f.floor()),
        }
    }

    /// ExactNumeric over random integers (the whole i64 range, many beyond 2^53) and floats
    /// (integral and fractional), in every split into two merged accumulators, against
    /// references computed from the values directly: the i128 sum, the extreme by exact order.
    #[test]
    fn exact_results_equal_a_direct_reference_in_any_split() {
        use crate::aggregate::{AggregateFunction, ExactNumeric, NumericAggregate, NumericResult};
        let mut seed = 0x2545_F491_4F6C_DD1D_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let two53 = 1_i128 << 53;
        for case in 0..2000 {
            let n = 1 + (next() % 8) as usize;
            let values: Vec<Number> = (0..n)
                .map(|_| match next() % 6 {
                    // The whole i64 range: sums beyond it are exact too (an i128).
                    0 => Number::Int(next() as i64),
                    1 => Number::Int((1 << 53) + (next() % 16) as i64 - 8),
                    2 => Number::Float(((1_u64 << 53) + (next() % 16) * 2) as f64),
                    3 if case % 2 == 0 => Number::Float((next() % 1000) as f64 / 8.0 - 60.0),
                    _ => Number::Int((next() % 2001) as i64 - 1000),
                })
                .collect();
            let cut = (next() as usize) % (n + 1);
            let all_ints = values.iter().all(|v| matches!(v, Number::Int(_)));
            for agg in [
                NumericAggregate::Sum,
                NumericAggregate::Min,
                NumericAggregate::Max,
            ] {
                let f = ExactNumeric(agg);
                let (mut left, mut right) = (f.create_accumulator(), f.create_accumulator());
                values[..cut].iter().for_each(|v| f.add(&mut left, v));
                values[cut..].iter().for_each(|v| f.add(&mut right, v));
                f.merge(&mut left, right);
                let got = f.get_result(&left);
                let want = match agg {
                    NumericAggregate::Sum if all_ints => {
                        let sum: i128 = values.iter().map(|v| key(*v).0).sum();
                        match sum.abs() >= two53 {
                            true => NumericResult::Integer(sum),
                            false => NumericResult::Float(Some(sum as f64)),
                        }
                    }
                    // Mixed sums are floats; they are checked by the tests of NumericAcc.
                    NumericAggregate::Sum => continue,
                    _ => {
                        let pick = values.iter().copied().reduce(|a, b| {
                            // Of equal values the first stays, but an integer replaces a
                            // float, as in the accumulator.
                            let better = if agg == NumericAggregate::Min {
                                Ordering::Less
                            } else {
                                Ordering::Greater
                            };
                            let o = key(b).partial_cmp(&key(a));
                            let int_for_float = o == Some(Ordering::Equal)
                                && matches!((b, a), (Number::Int(_), Number::Float(_)));
                            if o == Some(better) || int_for_float {
                                b
                            } else {
                                a
                            }
                        });
                        match pick.expect("non-empty") {
                            Number::Int(i) if i128::from(i).abs() >= two53 => {
                                NumericResult::Integer(i.into())
                            }
                            other => NumericResult::Float(Some(other.as_f64())),
                        }
                    }
                };
                assert_eq!(got, want, "{agg:?} of {values:?} split at {cut}");
            }
        }
    }
}
