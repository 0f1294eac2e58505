//! A user-written trigger: fire early every `N` elements, and once more when the watermark
//! passes the end of the window (like Flink's `EventTimeTrigger` combined with a `CountTrigger`).
//!
//! Run with `cargo run -p engine --example early_firing_trigger`. It windows a few elements into
//! 10 ms tumbling windows, prints every firing, and checks them.

use engine::assigners::{TimeDomain, TumblingWindows};
use engine::core::{NumericAggregate, TimeWindow, Timestamp, TriggerResult, Window};
use engine::operator::{Emitted, Incremental, OperatorConfig, WindowComputation, WindowOperator};
use engine::triggers::{Trigger, TriggerContext};

/// Fires every `every` elements (early results) and at the window's end; the count is the
/// trigger's per-window state, so each window counts on its own.
#[derive(Debug, Clone, Copy)]
struct EarlyFiringTrigger {
    every: u64,
}

impl<T, W: Window> Trigger<T, W> for EarlyFiringTrigger {
    /// Elements since the last early firing.
    type State = u64;

    fn on_element<C: TriggerContext>(
        &self,
        _element: &T,
        _timestamp: Timestamp,
        window: &W,
        count: &mut u64,
        ctx: &mut C,
    ) -> TriggerResult {
        if window.max_timestamp() <= ctx.current_watermark() {
            return TriggerResult::Fire; // a late element within the allowed lateness
        }
        ctx.register_event_time_timer(window.max_timestamp());
        *count += 1;
        if *count >= self.every {
            *count = 0;
            TriggerResult::Fire
        } else {
            TriggerResult::Continue
        }
    }

    fn on_event_time<C: TriggerContext>(
        &self,
        time: Timestamp,
        window: &W,
        _count: &mut u64,
        _ctx: &mut C,
    ) -> TriggerResult {
        if time == window.max_timestamp() {
            TriggerResult::Fire
        } else {
            TriggerResult::Continue
        }
    }

    fn on_processing_time<C: TriggerContext>(
        &self,
        _time: Timestamp,
        _window: &W,
        _count: &mut u64,
        _ctx: &mut C,
    ) -> TriggerResult {
        TriggerResult::Continue
    }

    fn can_merge(&self) -> bool {
        true
    }

    fn on_merge<C: TriggerContext>(
        &self,
        window: &W,
        merged: &[u64],
        count: &mut u64,
        ctx: &mut C,
    ) {
        *count = merged.iter().sum();
        if window.max_timestamp() > ctx.current_watermark() {
            ctx.register_event_time_timer(window.max_timestamp());
        }
    }

    fn clear<C: TriggerContext>(&self, window: &W, count: &mut u64, ctx: &mut C) {
        *count = 0;
        ctx.delete_event_time_timer(window.max_timestamp());
    }

    fn describe(&self) -> String {
        format!("EarlyFiringTrigger(every {})", self.every)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let assigner = TumblingWindows::new(10, 0, TimeDomain::EventTime)?;
    let trigger = EarlyFiringTrigger { every: 2 };
    let mut op = WindowOperator::new(
        assigner,
        trigger,
        Incremental(NumericAggregate::Sum),
        OperatorConfig::default(),
    )?;
    let mut out = Vec::new();
    for (ts, v) in [(1, 1.0), (2, 2.0), (3, 3.0), (4, 4.0), (5, 5.0)] {
        op.process_element("sensor", v, ts, &mut out)?;
    }
    op.process_watermark(9, &mut out);
    for e in &out {
        println!("{e:?}");
    }
    let sums: Vec<Option<f64>> = out
        .iter()
        .filter_map(|e| match e {
            Emitted::Result { result, window, .. } => {
                assert_eq!(*window, TimeWindow::new(0, 10));
                Some(*result)
            }
            _ => None,
        })
        .collect();
    // Early after 2 and 4 elements (1+2, 1+2+3+4), then the end-of-window firing with all five.
    assert_eq!(sums, [Some(3.0), Some(10.0), Some(15.0)]);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn example_runs_and_checks_its_firings() {
        super::main().expect("the example's assertions hold");
    }
}
