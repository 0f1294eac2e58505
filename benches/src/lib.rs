//! Benchmarks of the windowing engine: deterministic workloads, the sliding-window strategies
//! behind one interface, and the table that `cargo xtask bench` prints.
//!
//! - [`e2e`]: the end-to-end table's inputs and its bare parse-and-count program;
//! - [`keyed`]: keyed events with uniform or Zipf keys (1k, 100k, 1M keys);
//! - [`flights`]: the bundled NYC flights 2013 data replayed time-compressed;
//! - [`flink`]: the workload real Flink was measured on (`docs/flink-baseline.md`, copied from the shared folder);
//! - [`nexmark`]: a Nexmark generator and the window queries Q5, Q7, Q11, Q12;
//! - [`strategy`]: `native`, `keywindow`, `sliced` and `sliced:changes` for sliding windows;
//! - [`table`]: runs every workload × strategy and a bare hash-map count as the baseline.
//!
//! Everything generated is a pure function of a seed, so every benchmark of one workload sees
//! the same events, and a shorter stream is a prefix of a longer one.
#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

pub mod e2e;
pub mod flights;
pub mod flink;
pub mod keyed;
pub mod nexmark;
pub mod rng;
pub mod strategy;
pub mod table;

/// One generated event: `(timestamp ms, key id, value)`.
pub type GeneratedEvent = (i64, u32, f64);

/// `n` events over `keys` keys, uniformly chosen with a seeded xorshift generator, timestamps
/// advancing by `step_ms` per event with up to `disorder_ms` of out-of-orderness (the criterion
/// `operator` bench's input).
#[must_use]
pub fn uniform_events(
    n: usize,
    keys: u32,
    step_ms: i64,
    disorder_ms: i64,
    seed: u64,
) -> Vec<GeneratedEvent> {
    let mut state = seed.max(1);
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..n)
        .map(|i| {
            let r = next();
            let jitter = if disorder_ms > 0 {
                (r >> 32) as i64 % disorder_ms
            } else {
                0
            };
            let ts = i as i64 * step_ms - jitter;
            (ts, (r % u64::from(keys)) as u32, (r >> 40) as f64 / 1024.0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_is_deterministic_and_in_range() {
        let a = uniform_events(1000, 10, 5, 3, 42);
        assert_eq!(a, uniform_events(1000, 10, 5, 3, 42));
        assert!(a.iter().all(|e| e.1 < 10));
        assert!(a
            .iter()
            .enumerate()
            .all(|(i, e)| e.0 <= i as i64 * 5 && e.0 > i as i64 * 5 - 3));
    }
}
