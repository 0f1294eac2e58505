//! Spark Streaming's time arithmetic (`Time`, `Duration`, `Interval`), kept separate because the
//! exact rounding decides which batches a slice returns: remainders and quotients truncate
//! toward zero as Java's `%` and `/` do, and a range of batch times includes both ends like
//! Scala's `from to end by step`.
//!
//! Times and durations are `i64` milliseconds. Additions and subtractions saturate (the
//! workspace's invariant); Java would wrap. A time's distance from the zero time can exceed an
//! `i64` (a zero time before 0 and a batch near `i64::MAX`), so it is computed in `i128`
//! ([`since`]) and every quotient and remainder by a slide is exact; batch times themselves that
//! do not fit are refused (`Error::TimeOutOfRange`).

use crate::error::{Error, Result};

/// Spark's `Duration.isMultipleOf` / `Time.isMultipleOf`: `d % of == 0` with Java's remainder.
///
/// # Errors
/// [`Error::ZeroSlide`] naming `stream` when `of` is 0 (Spark's `/ by zero`).
pub(crate) fn is_multiple_of(d: i64, of: i64, stream: &'static str) -> Result<bool> {
    if of == 0 {
        return Err(Error::ZeroSlide { stream });
    }
    // `wrapping_rem` only differs from `%` for i64::MIN % -1, where Java gives 0 too.
    Ok(d.wrapping_rem(of) == 0)
}

/// `t - zero`, exact (an `i64` difference can overflow: a zero time before 0 and `t` near
/// `i64::MAX`).
pub(crate) fn since(t: i64, zero: i64) -> i128 {
    i128::from(t) - i128::from(zero)
}

/// Spark's `Time.isMultipleOf` of the time since the zero time: `(t - zero) % of == 0`, with
/// the difference exact.
///
/// # Errors
/// [`Error::ZeroSlide`] naming `stream` when `of` is 0.
pub(crate) fn is_multiple_since(t: i64, zero: i64, of: i64, stream: &'static str) -> Result<bool> {
    if of == 0 {
        return Err(Error::ZeroSlide { stream });
    }
    Ok(since(t, zero) % i128::from(of) == 0)
}

/// Spark's `Time.floor(that, zeroTime)`: `((t - zero) / slide) * slide + zero`, with a quotient
/// truncated toward zero (so a time before `zero` rounds up, toward it). Exact: the result lies
/// between `t` and `zero`, so it always fits.
pub(crate) fn floor(t: i64, slide: i64, zero: i64) -> i64 {
    debug_assert!(slide != 0, "callers check the slide first");
    let slide = i128::from(slide);
    let floored = since(t, zero) / slide * slide + i128::from(zero);
    i64::try_from(floored).unwrap_or(t)
}

/// Spark's `Time.to(end, step)` for a positive step: `from, from + step, ...` up to and
/// including `to`; empty when `from > to`.
pub(crate) fn times_inclusive(from: i64, to: i64, step: i64) -> impl Iterator<Item = i64> {
    debug_assert!(step > 0, "callers check the slide first");
    let mut next = (from <= to).then_some(from);
    std::iter::from_fn(move || {
        let t = next?;
        next = t.checked_add(step).filter(|n| *n <= to);
        Some(t)
    })
}

/// Spark's default checkpoint interval of a stream that must checkpoint (`DStream.initialize`):
/// `slide * ceil(10 s / slide)`, i.e. the smallest multiple of the slide that is at least
/// 10 s (the slide itself when it is longer). The quotient goes through a double and an `Int`
/// as in Spark, so a zero slide gives 0.
pub(crate) fn default_checkpoint_interval(slide: i64) -> i64 {
    let quotient = (10_000.0 / slide as f64).ceil();
    // Scala's Double.toInt saturates and maps NaN to 0; `as i32` does the same.
    let times = quotient as i32;
    slide.saturating_mul(i64::from(times))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_truncates_toward_zero_time() {
        // NOTES.md section 4: slice(1500, 3500) is aligned to 1000 and 3000.
        assert_eq!(floor(1500, 1000, 0), 1000);
        assert_eq!(floor(3500, 1000, 0), 3000);
        // Relative to a zero time of 2000 (clock started at 2500, case 11).
        assert_eq!(floor(4700, 1000, 2000), 4000);
        // Before zero: Java's quotient truncates, so -2500 goes to -2000.
        assert_eq!(floor(-2500, 1000, 0), -2000);
        // Far from a zero time before 0: the difference does not fit in an i64.
        let day = 86_400_000;
        assert_eq!(floor(i64::MAX, day, -day), 9_223_372_036_828_800_000);
        assert_eq!(floor(i64::MIN, day, day), -9_223_372_036_828_800_000);
        assert!(is_multiple_since(9_223_372_036_828_800_000, -day, day, "x").unwrap());
        assert!(!is_multiple_since(i64::MAX, -day, day, "x").unwrap());
    }

    #[test]
    fn inclusive_ranges() {
        assert_eq!(
            times_inclusive(1000, 3000, 1000).collect::<Vec<_>>(),
            [1000, 2000, 3000]
        );
        assert_eq!(times_inclusive(4000, 2000, 1000).count(), 0);
        assert_eq!(
            times_inclusive(2000, 2000, 1000).collect::<Vec<_>>(),
            [2000]
        );
        assert_eq!(
            times_inclusive(i64::MAX - 1, i64::MAX, 5).collect::<Vec<_>>(),
            [i64::MAX - 1]
        );
    }

    #[test]
    fn default_checkpoint_intervals_match_spark() {
        // Values recorded in the `graph` of the Spark cases (NOTES.md section 6).
        assert_eq!(default_checkpoint_interval(1000), 10_000);
        assert_eq!(default_checkpoint_interval(2000), 10_000);
        assert_eq!(default_checkpoint_interval(3000), 12_000);
        assert_eq!(default_checkpoint_interval(10_000), 10_000);
        assert_eq!(default_checkpoint_interval(15_000), 15_000);
        assert_eq!(default_checkpoint_interval(0), 0);
    }

    #[test]
    fn zero_divisor_is_an_error() {
        assert_eq!(
            is_multiple_of(1000, 0, "WindowedDStream"),
            Err(Error::ZeroSlide {
                stream: "WindowedDStream"
            })
        );
        assert_eq!(is_multiple_of(-3000, 1000, "x"), Ok(true));
        assert_eq!(is_multiple_of(1500, 1000, "x"), Ok(false));
    }
}
