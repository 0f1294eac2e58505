//! A merchant's takings over the last minute, every 500 ms: a sliding sum over sparse keys, the
//! workload the key-window paper was written for (`docs/keywindow.md`). With 120 windows per
//! element and a payment every few seconds per merchant, Flink's operator keeps, fires and
//! cleans up 120 windows per payment; key windows keep two per payment and emit where a
//! merchant's sum changes; sliced windows keep one partial sum per non-empty 500 ms slice and
//! emit every window, as Flink does.
//!
//! ```text
//! cargo run -p engine --example merchant_sliding_sum
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use engine::assigners::SlidingEventTimeWindows;
use engine::core::{MapAggregate, NumericAggregate, TimeWindow};
use engine::job::Strategy;
use engine::keywindow::EmitMode;
use engine::stream::{Collected, DataStream, WatermarkStrategy};

/// A card payment.
#[derive(Clone, Debug)]
struct Payment {
    merchant: u64,
    /// Cents.
    amount: i64,
    /// Event time in ms.
    at: i64,
}

/// 5,000 payments over 200 merchants, about one every 2.4 s per merchant, up to 1 s out of
/// order (a deterministic generator).
fn payments() -> Vec<Payment> {
    let mut state = 0x2545_F491_4F6C_DD1D_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..5_000)
        .map(|i| Payment {
            merchant: next() % 200,
            amount: (next() % 10_000) as i64,
            at: i * 100 - (next() % 1_000) as i64,
        })
        .collect()
}

type Sums = Collected<u64, TimeWindow, Payment, Option<f64>>;

/// The job with `strategy`.
fn takings(strategy: Strategy) -> Result<Sums, Box<dyn std::error::Error>> {
    let watermarks = WatermarkStrategy::for_bounded_out_of_orderness(Duration::from_secs(1))
        .with_timestamp_assigner(|p: &Payment| p.at);
    let total = MapAggregate::new(|p: &Payment| p.amount as f64, NumericAggregate::Sum);
    let sums = DataStream::from_collection(payments())
        .assign_timestamps_and_watermarks(watermarks)
        .key_by(|p: &Payment| p.merchant)
        .window(SlidingEventTimeWindows::of(
            Duration::from_secs(60),
            Duration::from_millis(500),
        )?)
        .strategy(strategy)
        .aggregate(total)?
        .collect()?;
    Ok(sums)
}

/// Results per (merchant, window).
fn by_window(sums: &Sums) -> BTreeMap<(u64, TimeWindow), Option<f64>> {
    sums.results
        .iter()
        .map(|r| ((r.key, r.window), r.value))
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let native = by_window(&takings(Strategy::Native)?);
    for strategy in [
        Strategy::Native,
        Strategy::KeyWindow,
        Strategy::Sliced(EmitMode::AllWindows),
    ] {
        let sums = takings(strategy)?;
        let same = by_window(&sums) == native;
        let m = sums.metrics;
        println!(
            "{:>9}: {:>7} results (Flink's: {same}), {:>7} window states created ({} native \
             windows), {} late",
            strategy.label(),
            sums.results.len(),
            m.windows_created,
            m.native_windows,
            m.late_elements
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sliced_windows_give_flinks_windows_and_key_windows_their_changes() {
        let native = takings(Strategy::Native).unwrap();
        let sliced = takings(Strategy::Sliced(EmitMode::AllWindows)).unwrap();
        let keyed = takings(Strategy::KeyWindow).unwrap();
        // Integer amounts: sums are exact whatever the order they are added in.
        assert_eq!(by_window(&sliced), by_window(&native));
        assert!(native.results.len() > 100_000, "{}", native.results.len());
        // Key windows: every value is the native result of its window, with far fewer windows.
        let n = by_window(&native);
        for r in &keyed.results {
            assert_eq!(n.get(&(r.key, r.window)), Some(&r.value), "{r:?}");
        }
        assert!(keyed.metrics.windows_created * 20 < native.metrics.windows_created);
        assert_eq!(keyed.metrics.native_windows, native.metrics.windows_created);
        assert!(sliced.metrics.windows_created < native.metrics.windows_created / 20);
    }
}
