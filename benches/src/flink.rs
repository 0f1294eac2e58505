//! The workload real Flink 2.3 was run on (`docs/flink-baseline.md`, copied from the shared folder), so that our
//! events per second compare with Flink's.
//!
//! Event `g` of `0..n`: key `g % 10000`, event time `g / 100` ms (100 events per ms; every key
//! gets one event per 100 ms), value `g % 100`. Watermark: bounded out-of-orderness 0, and the
//! end of input fires every open window. Windows: keyed incremental sum, sliding 60 s / 500 ms
//! (each element in 120 windows) or tumbling 60 s. Flink's figures on a 2-vCPU machine like
//! ours, parallelism 1: tumbling 1.62 M events/s (n = 10 M), sliding **7.3 k** events/s
//! (n = 1 M), 6.2 k (n = 10 M).

use crate::GeneratedEvent;

/// Number of keys of the Flink-baseline workload.
pub const FLINK_KEYS: u32 = 10_000;
/// Flink's sliding window: size 60 s.
pub const FLINK_SIZE_MS: i64 = 60_000;
/// Flink's sliding window: slide 500 ms.
pub const FLINK_SLIDE_MS: i64 = 500;
/// Flink's events per second, parallelism 1, sliding 60 s / 500 ms over 1 M events.
pub const FLINK_SLIDING_EVENTS_PER_SEC: f64 = 7_300.0;
/// Flink's events per second, parallelism 1, tumbling 60 s over 10 M events.
pub const FLINK_TUMBLING_EVENTS_PER_SEC: f64 = 1_620_000.0;

/// The first `n` events of the Flink-baseline workload.
///
/// # Examples
/// ```
/// let e = benches::flink::flink_events(20_001);
/// assert_eq!(e[20_000], (200, 0, 0.0));
/// assert_eq!(e[10_123], (101, 123, 23.0));
/// ```
#[must_use]
pub fn flink_events(n: usize) -> Vec<GeneratedEvent> {
    (0..n as u64)
        .map(|g| {
            (
                (g / 100) as i64,
                (g % u64::from(FLINK_KEYS)) as u32,
                (g % 100) as f64,
            )
        })
        .collect()
}

/// What the native operator must emit on the first `n` events with windows of `size` every
/// `slide` ms (tumbling when equal): `(windows emitted, sum of all window sums)`, computed in
/// closed form. Reproduces Flink's table: `(1_390_000, 5.94e9)` for sliding 60 s / 500 ms over
/// 1 M events, `(20_000, 4.95e8)` for tumbling 60 s over 10 M.
///
/// # Panics
/// If `slide < 100` or `size` is not a multiple of `slide` (a key's windows would not be
/// contiguous, which the closed form assumes).
///
/// # Examples
/// ```
/// use benches::flink::flink_expected;
/// assert_eq!(flink_expected(1_000_000, 60_000, 500), (1_390_000, 5_940_000_000.0));
/// assert_eq!(flink_expected(10_000_000, 60_000, 60_000), (20_000, 495_000_000.0));
/// ```
#[must_use]
pub fn flink_expected(n: u64, size: i64, slide: i64) -> (u64, f64) {
    assert!(
        slide >= 100 && size % slide == 0,
        "closed form needs contiguous windows"
    );
    let keys = u64::from(FLINK_KEYS);
    let mut windows = 0u64;
    for k in 0..keys.min(n) {
        // Events of key k: g = k + 10000 j < n, at time k / 100 + 100 j (every 100 ms).
        let last_j = (n - 1 - k) / keys;
        let first_t = (k / 100) as i64;
        let last_t = first_t + 100 * last_j as i64;
        let first_window = (first_t - size).div_euclid(slide) + 1;
        let last_window = last_t.div_euclid(slide);
        windows += (last_window - first_window + 1) as u64;
    }
    // Every element is in size / slide windows; values g % 100.
    let value_sum: u64 = (n / 100) * 4950 + (0..n % 100).sum::<u64>();
    (windows, value_sum as f64 * (size / slide) as f64)
}
