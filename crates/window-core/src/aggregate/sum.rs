//! The sum of [`NumericAcc`] (sum and mean): exact as an `i128` over integers, else a float
//! sum that does not overflow in between. The forms are described on [`NumericAcc`].

use super::{NumericAcc, DOWN, FLAGS, FLOAT, SCALED, UP};

/// 2^53: below it every integer is an `f64`.
const TWO_53: u128 = 1 << 53;

impl NumericAcc {
    /// The float word as an `f64`.
    #[inline]
    pub(super) fn float(&self) -> f64 {
        f64::from_bits(self.word)
    }

    #[inline]
    pub(super) fn set_float(&mut self, v: f64) {
        self.word = v.to_bits();
    }

    /// The exact sum, from its two words (exact form): the float word, as an `i64`, counts
    /// units of 2^64 and the integer word is added to them, so that a sum that fits an `i64` has
    /// a float word of 0 (one comparison, [`NumericAcc::small`]).
    #[inline]
    fn exact(&self) -> i128 {
        (i128::from(self.word as i64) << 64) + i128::from(self.int)
    }

    #[inline]
    fn set_exact(&mut self, sum: i128) {
        match i64::try_from(sum) {
            Ok(i) => (self.int, self.word) = (i, 0),
            Err(_) => {
                // The low 64 bits as an i64; the rest is a multiple of 2^64.
                let low = sum as i64;
                self.int = low;
                self.word = ((sum - i128::from(low)) >> 64) as i64 as u64;
            }
        }
    }

    /// The exact sum where it fits an `i64` (the float word is 0): the common case, taken
    /// without `i128` arithmetic (an `i128` to `f64` conversion is a library call).
    #[inline]
    fn small(&self) -> Option<i64> {
        (self.word == 0).then_some(self.int)
    }

    /// The exact sum, while every value added is an integer of the `i64` range (see the type's
    /// documentation); `None` otherwise. Only meaningful for the sum and mean accumulators.
    #[must_use]
    #[inline]
    pub fn exact_sum(&self) -> Option<i128> {
        (self.count & FLOAT == 0).then(|| self.exact_i128())
    }

    /// The exact sum (exact form), without the two-word arithmetic where it fits an `i64`.
    #[inline]
    fn exact_i128(&self) -> i128 {
        self.small().map_or_else(|| self.exact(), i128::from)
    }

    /// Adds `v` to the sum (without counting it).
    #[inline]
    pub(super) fn add_to_sum(&mut self, v: f64) {
        if self.count & FLOAT == 0 {
            // Saturating: NaN is 0, and 2^63 or more is i64::MAX, which no f64 equals.
            let i = v as i64;
            if i as f64 == v && i != i64::MAX {
                self.add_int_to_sum(i);
                return;
            }
            self.leave_exact();
        }
        self.add_float(v);
    }

    /// Adds an integer to the sum (without counting it): exactly while the sum is exact.
    #[inline]
    pub(super) fn add_int_to_sum(&mut self, i: i64) {
        if self.count & FLOAT == 0 {
            if let Some(sum) = self.small().and_then(|s| s.checked_add(i)) {
                self.int = sum;
                return;
            }
        }
        self.add_int_wide(i);
    }

    /// [`NumericAcc::add_int_to_sum`] where the sum leaves the `i64` range or is a float: apart,
    /// so that the common path stays small enough to be inlined into the callers' loops.
    #[cold]
    #[inline(never)]
    fn add_int_wide(&mut self, i: i64) {
        if self.count & FLOAT == 0 {
            // Cannot overflow below 2^62 elements; if it ever did, the float form goes on.
            if let Some(sum) = self.exact().checked_add(i128::from(i)) {
                self.set_exact(sum);
                return;
            }
            self.leave_exact();
        }
        self.add_float(i as f64);
    }

    /// Leaves the exact form: the float sum starts from the exact sum, rounded once.
    #[inline]
    fn leave_exact(&mut self) {
        let sum = self.exact_f64();
        self.int = 0;
        self.set_float(sum);
        self.count |= FLOAT;
    }

    /// Adds `v` to the float sum (float form).
    #[inline]
    fn add_float(&mut self, v: f64) {
        if self.count & SCALED != 0 {
            self.set_float(self.float() + v * DOWN);
            return;
        }
        let sum = self.float() + v;
        if sum.is_infinite() {
            self.add_infinite(v, sum);
        } else {
            self.set_float(sum);
        }
    }

    /// Adds `v` where the unscaled float sum became `sum`, infinite: an overflow of finite
    /// values goes on scaled, an infinite value stays infinite.
    #[cold]
    #[inline(never)]
    fn add_infinite(&mut self, v: f64, sum: f64) {
        if v.is_finite() && self.float().is_finite() {
            self.set_float(self.float() * DOWN + v * DOWN);
            self.count |= SCALED;
        } else {
            self.set_float(sum);
        }
    }

    /// The float sum times 2^-64, whatever the form.
    fn scaled_sum(&self) -> f64 {
        match self.count & FLAGS {
            0 => self.exact_f64() * DOWN,
            FLOAT => self.float() * DOWN,
            _ => self.float(),
        }
    }

    /// Folds `other`'s sum and count into this one, both non-empty.
    #[inline]
    pub(super) fn merge_sum(&mut self, other: &NumericAcc) {
        // Both exact and of the i64 range: one test of the flags and the float words.
        if ((self.count | other.count) & FLAGS) | self.word | other.word == 0 {
            if let Some(sum) = self.int.checked_add(other.int) {
                self.int = sum;
                self.count += other.count;
                return;
            }
        }
        self.merge_wide(other);
    }

    /// [`NumericAcc::merge_sum`] beyond the `i64` range or of floats (apart, as
    /// [`NumericAcc::add_int_wide`]).
    #[inline(never)]
    fn merge_wide(&mut self, other: &NumericAcc) {
        let count = self.count() + other.count();
        let forms = (self.count | other.count) & FLAGS;
        if forms == 0 {
            if let Some(sum) = self.exact().checked_add(other.exact()) {
                self.set_exact(sum);
                self.count = count;
                return;
            }
        }
        if forms & SCALED == 0 {
            let (a, b) = (self.float_sum(), other.float_sum());
            let sum = a + b;
            if !(sum.is_infinite() && a.is_finite() && b.is_finite()) {
                self.set_float(sum);
                (self.int, self.count) = (0, count | FLOAT);
                return;
            }
        }
        self.set_float(self.scaled_sum() + other.scaled_sum());
        (self.int, self.count) = (0, count | FLAGS);
    }

    /// Takes `other`'s sum and count out of this one, where both sums are exact; returns
    /// whether it did (unchanged otherwise: a float or scaled form, a larger count, or a sum
    /// left over a count of 0). The result is the accumulator of the remaining values, as
    /// merging them gives it (the exact form is one value per sum).
    pub(super) fn retract_sum(&mut self, other: &NumericAcc) -> bool {
        if (self.count | other.count) & FLAGS != 0 {
            return false;
        }
        let (Some(count), Some(sum)) = (
            self.count.checked_sub(other.count),
            self.exact_i128().checked_sub(other.exact_i128()),
        ) else {
            return false;
        };
        if count == 0 && sum != 0 {
            return false;
        }
        self.set_exact(sum);
        self.count = count;
        true
    }

    /// Whether the sum (and so the mean) is a float, or exact and below 2^53 in magnitude: no
    /// exact integer result (one test on the common path of every firing).
    #[inline(always)]
    pub(super) fn below_2_53_or_float(&self) -> bool {
        self.count & FLOAT != 0 || (self.word == 0 && self.int.unsigned_abs() < 1 << 53)
    }

    /// The exact sum as an `f64`, rounded once.
    #[inline]
    fn exact_f64(&self) -> f64 {
        match self.small() {
            Some(s) => s as f64,
            None => self.exact() as f64,
        }
    }

    /// The unscaled float sum (exact or float form).
    fn float_sum(&self) -> f64 {
        if self.count & FLOAT == 0 {
            self.exact_f64()
        } else {
            self.float()
        }
    }

    /// The sum as an `f64`: exact and rounded once, or the float sum.
    #[inline]
    pub(super) fn sum(&self) -> f64 {
        match self.count & FLAGS {
            0 => self.exact_f64(),
            FLOAT => self.float(),
            _ => self.float() * UP,
        }
    }

    /// The mean of a non-empty accumulator: sum / count, without overflow in between where the
    /// sum is scaled, from the exact sum where there is one.
    pub(super) fn mean(&self) -> f64 {
        let n = self.count();
        match self.count & FLAGS {
            0 => exact_mean(self.exact_i128(), n),
            FLOAT => self.float() / n as f64,
            _ => {
                let sum = self.float() * UP;
                if sum.is_finite() {
                    sum / n as f64
                } else {
                    self.float() / n as f64 * UP
                }
            }
        }
    }
}

/// `sum / n` as an `f64`, `n > 0`: correctly rounded where the sum is below 2^53 (one IEEE
/// division, as the plain mean), where it divides evenly, and where the quotient is beyond
/// 2^53; within the last bit otherwise. A function of the exact sum and count only, so the
/// same values in any order give the same mean.
#[inline]
fn exact_mean(sum: i128, n: u64) -> f64 {
    if sum.unsigned_abs() < TWO_53 && n < (1 << 53) {
        // Both exact as f64: one correctly rounded division, the plain mean's (through i64:
        // an i128 to f64 conversion is a library call).
        return sum as i64 as f64 / n as f64;
    }
    let d = i128::from(n);
    let (q, r) = (sum / d, sum % d);
    if r == 0 {
        q as f64
    } else if q.unsigned_abs() > TWO_53 {
        // The mean lies strictly between q and q + sign(r); beyond 2^53 every such point
        // rounds as the midpoint 2q + sign(r) over 2 does (a sticky bit below the last place).
        (2 * q + r.signum()) as f64 / 2.0
    } else {
        q as f64 + r as f64 / d as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exact_sum_keeps_both_halves_of_an_i128() {
        let mut acc = NumericAcc::default();
        for s in [
            0_i128,
            -1,
            1,
            i128::from(i64::MAX) * 3,
            i128::from(i64::MIN) * 5,
            1 << 100,
            -(1 << 100) + 7,
            i128::from(i64::MAX) + 1,
            i128::from(i64::MIN) - 1,
        ] {
            acc.set_exact(s);
            // A sum of the i64 range has a float word of 0 (the fast path).
            assert_eq!(acc.small().is_some(), i64::try_from(s).is_ok(), "{s}");
            assert_eq!(acc.exact(), s);
        }
    }

    #[test]
    fn exact_means_are_correctly_rounded_and_do_not_depend_on_the_order() {
        // 9007199254740999 / 3 = 3002399751580333 exactly; the f64 sum gave ...333.5.
        assert_eq!(
            exact_mean(9_007_199_254_740_999, 3),
            3_002_399_751_580_333.0
        );
        // (i64::MAX + i64::MAX - 2) / 2 = i64::MAX - 1, rounded once.
        let m = i128::from(i64::MAX);
        assert_eq!(exact_mean(2 * m - 2, 2), (m - 1) as f64);
        // (2^53 + 1 + 2^53 + 2) / 2 = 2^53 + 1.5: rounds to 2^53 + 2.
        let t = 1_i128 << 53;
        assert_eq!(exact_mean(2 * t + 3, 2), (t + 2) as f64);
        assert_eq!(exact_mean(-(2 * t + 3), 2), -(t + 2) as f64);
        // Below 2^53: the plain division.
        assert_eq!(exact_mean(5, 3), 5.0 / 3.0);
        assert_eq!(exact_mean(-7, 2), -3.5);
        // A quotient beyond 2^53 with a remainder: against the correctly rounded value of
        // the rational, checked by exact comparison with its neighbours.
        let mut seed = 0x1234_5678_9ABC_DEF1_u64;
        for _ in 0..10_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let n = 1 + (seed % 1000);
            let sum = (i128::from(seed as i64) << (seed % 9)) * 7;
            let got = exact_mean(sum, n);
            // No f64 is nearer to sum / n than got: compare n * x with sum exactly for got
            // and its two neighbours (all integers here), by magnitude.
            if got.abs() >= 9_007_199_254_740_992.0 {
                let (a, s) = (got.abs(), sum.abs());
                let up = f64::from_bits(a.to_bits() + 1);
                let down = f64::from_bits(a.to_bits() - 1);
                let err = |x: f64| (x as i128 * i128::from(n) - s).abs();
                assert!(err(a) <= err(up) && err(a) <= err(down), "{sum}/{n}: {got}");
            }
        }
    }
}
