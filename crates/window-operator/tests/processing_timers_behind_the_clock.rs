//! Issue #16, item 3: a continuous processing-time trigger on an event-time window whose end the
//! processing clock has already passed. Flink's `ContinuousProcessingTimeTrigger` re-registers
//! `min(time + interval, maxTimestamp)`, the time that just fired, and fires it again without
//! end; ours fires once per timer instant and then at the interval boundaries after the clock,
//! while the window lives, and the operator goes on taking elements.

use window_assigners::{TimeDomain, TumblingWindows};
use window_core::{NumericAggregate, TimeWindow, Timestamp};
use window_operator::{Emitted, Incremental, OperatorConfig, WindowComputation, WindowOperator};
use window_triggers::{AnyTrigger, ContinuousProcessingTimeTrigger};

type Out<W, R> = Vec<Emitted<&'static str, W, f64, R>>;
const MIN: Timestamp = i64::MIN;

fn config() -> OperatorConfig {
    OperatorConfig::default()
}

fn tumbling(size: i64) -> TumblingWindows {
    TumblingWindows::new(size, 0, TimeDomain::EventTime).unwrap()
}

fn tw(start: Timestamp, end: Timestamp) -> TimeWindow {
    TimeWindow::new(start, end)
}

fn res(
    key: &'static str,
    window: TimeWindow,
    result: Option<f64>,
    watermark: Timestamp,
) -> Emitted<&'static str, TimeWindow, f64, Option<f64>> {
    Emitted::Result {
        key,
        window,
        result,
        watermark,
    }
}

fn results(out: &Out<TimeWindow, Option<f64>>) -> usize {
    out.iter()
        .filter(|e| matches!(e, Emitted::Result { .. }))
        .count()
}

#[test]
fn an_event_time_window_behind_the_clock_fires_once_per_clock_step() {
    // The case: clock 100, tumbling 10 ms, interval 5 ms, an element at 1, clock to 101
    // (before: 1,000,000 firings in that one advance).
    let trigger =
        AnyTrigger::ContinuousProcessingTime(ContinuousProcessingTimeTrigger::of(5).unwrap());
    let mut op = WindowOperator::new(
        tumbling(10),
        trigger,
        Incremental(NumericAggregate::Count),
        config(),
    )
    .unwrap();
    let mut out: Out<TimeWindow, Option<f64>> = Vec::new();
    op.advance_processing_time(100, &mut out);
    op.process_element("a", 1.0, 1, &mut out).unwrap();
    // The first fire time is capped at the window's end, 9, already behind the clock.
    assert_eq!(op.next_processing_time_timer(), Some(9));
    op.advance_processing_time(101, &mut out);
    assert_eq!(out, [res("a", tw(0, 10), Some(1.0), MIN)]);
    // Next: the interval boundary after the clock, not 9 again.
    assert_eq!(op.next_processing_time_timer(), Some(105));
    // The operator keeps taking input; the element joins the open window.
    op.process_element("a", 1.0, 2, &mut out).unwrap();
    op.advance_processing_time(104, &mut out);
    assert_eq!(results(&out), 1);
    op.advance_processing_time(105, &mut out);
    assert_eq!(out[1], res("a", tw(0, 10), Some(2.0), MIN));
    assert_eq!(op.next_processing_time_timer(), Some(110));
    // A jump of the clock fires once, not once per interval skipped.
    op.advance_processing_time(1_000_003, &mut out);
    assert_eq!(results(&out), 3);
    assert_eq!(op.next_processing_time_timer(), Some(1_000_005));
    // The watermark cleans the window up (a processing-time trigger does not fire at the
    // event-time end), and its timer goes with it.
    op.process_watermark(9, &mut out);
    assert_eq!(op.live_windows(), 0);
    assert_eq!(op.pending_timers(), (0, 0));
    op.advance_processing_time(2_000_000, &mut out);
    assert_eq!(results(&out), 3);
}

#[test]
fn a_window_behind_the_clock_at_the_end_of_time_stops() {
    // The clock at i64::MAX: the boundary after it does not exist; the window fires once.
    let trigger =
        AnyTrigger::ContinuousProcessingTime(ContinuousProcessingTimeTrigger::of(5).unwrap());
    let mut op = WindowOperator::new(
        tumbling(10),
        trigger,
        Incremental(NumericAggregate::Count),
        config(),
    )
    .unwrap();
    let mut out: Out<TimeWindow, Option<f64>> = Vec::new();
    op.advance_processing_time(100, &mut out);
    op.process_element("a", 1.0, 1, &mut out).unwrap();
    op.advance_processing_time(i64::MAX, &mut out);
    assert_eq!(results(&out), 1);
    assert_eq!(op.next_processing_time_timer(), None);
}
