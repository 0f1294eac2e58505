//! The batch times of `windowctl dstream`, found exactly near the ends of `i64` time: every
//! time is computed in `i128` and a batch time, zero time or window time that an `i64` of
//! milliseconds cannot hold is refused with the flag and the values that lead to it (Spark's
//! `Time` is a Java `long` and would wrap around; see `docs/dstream.md`).

use anyhow::{bail, Result};

use super::MAX_BATCHES;

/// The event-time batches of an input whose events lie from `min` to `max` ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct EventBatches {
    /// The zero time: the last multiple of the batch interval at or before `min`, in ms.
    pub zero: i64,
    /// The number of batches from the first one to the one holding `max`.
    pub count: usize,
    /// The time of the batch holding `max` (its end, `zero + count · interval`), in ms.
    pub last_batch: i64,
}

impl EventBatches {
    /// The 0-based batch of an event at `t` ms (`min <= t <= max`).
    pub(super) fn index(&self, t: i64, interval: i64) -> usize {
        let i = (i128::from(t) - i128::from(self.zero)) / i128::from(interval);
        usize::try_from(i).unwrap_or(0)
    }
}

/// `i64::MIN` and `i64::MAX` as the message of a refusal names them.
const LIMITS: &str = "-9223372036854775808 ms to 9223372036854775807 ms";

/// The batches of events from `min` to `max` ms with batches of `interval` ms (positive).
///
/// # Errors
/// In this order: a zero time before `i64::MIN` (an event too close to it for the interval),
/// more than [`MAX_BATCHES`] batches, a batch time after `i64::MAX` (an event too close to
/// it): each naming the events, `--batch-interval` and the limit.
pub(super) fn event_batches(min: i64, max: i64, interval: i64) -> Result<EventBatches> {
    let i = i128::from(interval);
    let zero = i128::from(min).div_euclid(i) * i;
    let Ok(zero) = i64::try_from(zero) else {
        // The first multiple of the interval at or after i64::MIN (the quotient truncates
        // toward 0, up for a negative time).
        let first = i128::from(i64::MIN) / i * i;
        bail!(
            "the earliest event, at {min} ms, is in the batch [{zero}, {}) ms of --batch-interval {interval} ms, whose start (the zero time of the batches) is before the times an i64 of milliseconds can hold ({LIMITS}): with this batch interval, events must be at or after {first} ms; use a smaller --batch-interval",
            zero + i
        );
    };
    let count = (i128::from(max) - i128::from(zero)) / i + 1;
    // Too many batches first: that is what a typical mistake (a batch interval too small for
    // the input) meets, also when the latest batch is out of range too.
    if count > i128::from(MAX_BATCHES) {
        bail!(
            "the events span {count} batches of {interval} ms (from {min} ms to {max} ms; more than {MAX_BATCHES}); use a larger --batch-interval"
        );
    }
    let last_batch = i128::from(zero) + count * i;
    let Ok(last) = i64::try_from(last_batch) else {
        let limit = i128::from(i64::MAX).div_euclid(i) * i;
        bail!(
            "the latest event, at {max} ms, is in the batch [{}, {last_batch}) ms of --batch-interval {interval} ms, whose batch time (its end) is after the times an i64 of milliseconds can hold ({LIMITS}): with this batch interval, events must be before {limit} ms",
            last_batch - i
        );
    };
    Ok(EventBatches {
        zero,
        count: usize::try_from(count).unwrap_or(0),
        last_batch: last,
    })
}

/// The durations of a job that decide its window times, in ms (all positive but `window`,
/// which may be 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Durations {
    /// The batch interval.
    pub interval: i64,
    /// The window duration.
    pub window: i64,
    /// The slide duration.
    pub slide: i64,
}

/// The time of the last window that holds the batch at `last_batch`: the last valid time of
/// the windowed stream (`zero + k · slide`) at or before `last_batch + window - interval`,
/// which the job runs batches up to; `last_batch` itself when no window holds that batch (a
/// window of 0, or shorter than its slide with the batch between two windows).
///
/// # Errors
/// That window's time is after `i64::MAX`, naming `--window`, `--slide` and the batch.
pub(super) fn last_window(zero: i64, last_batch: i64, d: Durations) -> Result<i64> {
    let (zero, last) = (i128::from(zero), i128::from(last_batch));
    let (w, s) = (i128::from(d.window), i128::from(d.slide));
    let end = last + w - i128::from(d.interval);
    let t = zero + (end - zero).div_euclid(s) * s;
    if t < last {
        return Ok(last_batch);
    }
    i64::try_from(t).or_else(|_| {
        bail!(
            "the last window holding the batch at {last_batch} ms (the latest events) would be output at {t} ms, after the times an i64 of milliseconds can hold ({LIMITS}): --window {} ms with --slide {} ms reaches past them; use a shorter --window or earlier events",
            d.window,
            d.slide
        )
    })
}

/// The time of the batch `index` (0-based) after the zero time: `zero + (index + 1) ·
/// interval` ms.
///
/// # Errors
/// A time after `i64::MAX` (a clock near the end of time), naming `--batch-interval`.
pub(super) fn batch_time(zero: i64, index: u64, interval: i64) -> Result<i64> {
    let t = i128::from(zero) + (i128::from(index) + 1) * i128::from(interval);
    i64::try_from(t).or_else(|_| {
        bail!(
            "the batch after {} ms of --batch-interval {interval} ms would be at {t} ms, after the times an i64 of milliseconds can hold ({LIMITS})",
            t - i128::from(interval)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000;

    #[test]
    fn batches_near_the_ends() {
        assert_eq!(
            event_batches(-1000, 5000, 1000).unwrap(),
            EventBatches {
                zero: -1000,
                count: 7,
                last_batch: 6000
            }
        );
        // The first and last batch of a day that fit.
        let first = -9_223_372_036_828_800_000;
        let b = event_batches(first, first, DAY).unwrap();
        assert_eq!((b.zero, b.count, b.last_batch), (first, 1, first + DAY));
        let last = 9_223_372_036_828_800_000 - 1;
        let b = event_batches(last, last, DAY).unwrap();
        assert_eq!(b.last_batch, 9_223_372_036_828_800_000);
        // One millisecond further.
        assert!(event_batches(first - 1, first, DAY).is_err());
        assert!(event_batches(last + 1, last + 1, DAY).is_err());
        // 1 ms batches reach i64::MIN but never i64::MAX (that batch would end after it).
        assert_eq!(event_batches(i64::MIN, i64::MIN, 1).unwrap().zero, i64::MIN);
        assert!(event_batches(i64::MAX, i64::MAX, 1).is_err());
        assert_eq!(
            event_batches(i64::MAX - 1, i64::MAX - 1, 1)
                .unwrap()
                .last_batch,
            i64::MAX
        );
    }

    #[test]
    fn last_windows() {
        let d = |window, slide| Durations {
            interval: 1000,
            window,
            slide,
        };
        // Window 3 s, slide 1 s: the batch at 5000 is in the windows at 5000, 6000, 7000.
        assert_eq!(last_window(0, 5000, d(3000, 1000)).unwrap(), 7000);
        // Slide 2 s: windows at even times; the last holding 5000 is at 6000.
        assert_eq!(last_window(0, 5000, d(3000, 2000)).unwrap(), 6000);
        // Window 1 s, slide 2 s: no window holds the batch at 5000.
        assert_eq!(last_window(0, 5000, d(1000, 2000)).unwrap(), 5000);
        assert_eq!(last_window(0, 5000, d(0, 1000)).unwrap(), 5000);
        // A zero time before 0 and a window ending exactly at the last whole second of time.
        let end = 9_223_372_036_854_775_000;
        assert_eq!(last_window(-1000, end - 1000, d(2000, 1000)).unwrap(), end);
        assert!(last_window(-1000, end, d(2000, 1000)).is_err());
    }

    #[test]
    fn batch_times() {
        assert_eq!(batch_time(10_000, 0, 1000).unwrap(), 11_000);
        assert_eq!(batch_time(i64::MAX - 1, 0, 1).unwrap(), i64::MAX);
        assert!(batch_time(i64::MAX - 1, 1, 1).is_err());
    }
}
