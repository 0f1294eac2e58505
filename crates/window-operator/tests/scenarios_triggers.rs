//! Scenario rows of `tests/conformance/scenarios.md` that concern triggers (continuous, count,
//! delta), merging session windows, and allowed lateness with late firings and the late side
//! output: one test per row (two where a row has two variants), named after the row id.
//! Each test cites its row and the
//! row's source. Notation as in the table: times in ms, `a@t=v` is an element of key `a` at
//! event time `t` with value `v` (1 when omitted), `WM->w` advances the watermark. Shared
//! helpers: `common/scenario.rs`.
//! The watermark, timer, sliding-window and validation rows are in `scenarios_time.rs`.

#[path = "common/scenario.rs"]
mod scenario;

use std::sync::Arc;

use scenario::{config, contents, late, res, sessions, sum, tumbling, tw, Contents, Out, MAX, MIN};
use window_assigners::{
    GlobalWindows, Merges, SessionWindows, TimeDomain, TumblingWindows, WindowAssigner,
};
use window_core::{GlobalWindow, NumericAggregate, TimeWindow, Timestamp, TimestampedValue};
use window_operator::{
    ElementError, Emitted, FullWindow, Incremental, OperatorError, Rejected, WindowComputation,
    WindowOperator,
};
use window_triggers::{
    AnyTrigger, ContinuousEventTimeTrigger, ContinuousProcessingTimeTrigger, CountTrigger,
    DeltaTrigger,
};

fn abs_diff() -> window_triggers::DeltaFunction<f64> {
    Arc::new(|old: &f64, new: &f64| (new - old).abs())
}

#[test]
fn b05_processing_time_tumbling_with_continuous_trigger_fires_at_window_end() {
    // Row B05: processing-time tumbling 60 s, continuous processing-time trigger every 10 s,
    // elements at processing times 5 s, 15 s, ..., 55 s. Source: apache/flink#17106
    // (FLINK-20443), related PR apache/flink#17209.
    let assigner = TumblingWindows::new(60_000, 0, TimeDomain::ProcessingTime).unwrap();
    let trigger =
        AnyTrigger::ContinuousProcessingTime(ContinuousProcessingTimeTrigger::of(10_000).unwrap());
    let mut op = WindowOperator::new(
        assigner,
        trigger,
        Incremental(NumericAggregate::Count),
        config(0, false),
    )
    .unwrap();
    let mut out: Out<TimeWindow, Option<f64>> = Vec::new();
    for t in (5_000..60_000).step_by(10_000) {
        op.advance_processing_time(t, &mut out);
        op.process_element("a", 1.0, t, &mut out).unwrap();
    }
    assert_eq!(op.next_processing_time_timer(), Some(59_999));
    op.advance_processing_time(60_000, &mut out);
    let w = tw(0, 60_000);
    let expected: Out<TimeWindow, Option<f64>> = (1..=6)
        .map(|n| res("a", w, Some(f64::from(n)), MIN))
        .collect();
    assert_eq!(
        out, expected,
        "counts 1..5 at 10 s..50 s and 6 at the window end 59.999 s"
    );
    assert_eq!(op.live_windows(), 0);
    assert_eq!(op.pending_timers(), (0, 0));
}

#[test]
fn b07_processing_time_sessions_merge_with_continuous_trigger() {
    // Row B07: processing-time sessions gap 10 s, continuous processing-time trigger 5 s;
    // a at proc 1 s, a at proc 7 s. Source: apache/flink#12754, apache/flink#15241 (FLINK-5717).
    let assigner = SessionWindows::<f64>::with_gap(10_000, TimeDomain::ProcessingTime).unwrap();
    let trigger =
        AnyTrigger::ContinuousProcessingTime(ContinuousProcessingTimeTrigger::of(5_000).unwrap());
    let mut op = WindowOperator::new(
        assigner,
        trigger,
        Incremental(NumericAggregate::Count),
        config(0, false),
    )
    .unwrap();
    let mut out: Out<TimeWindow, Option<f64>> = Vec::new();
    op.advance_processing_time(1_000, &mut out);
    op.process_element("a", 1.0, 1_000, &mut out).unwrap();
    op.advance_processing_time(5_000, &mut out);
    assert_eq!(out, [res("a", tw(1_000, 11_000), Some(1.0), MIN)]);
    op.advance_processing_time(7_000, &mut out);
    op.process_element("a", 1.0, 7_000, &mut out).unwrap();
    // The merged session inherits the pending fire time 10 s.
    assert_eq!(op.next_processing_time_timer(), Some(10_000));
    assert_eq!(op.live_windows(), 1);
    op.advance_processing_time(30_000, &mut out);
    let merged = tw(1_000, 17_000);
    assert_eq!(
        out,
        [
            res("a", tw(1_000, 11_000), Some(1.0), MIN),
            res("a", merged, Some(2.0), MIN), // 10 s
            res("a", merged, Some(2.0), MIN), // 15 s
            res("a", merged, Some(2.0), MIN), // end: 16.999 s
        ]
    );
    assert_eq!(op.live_windows(), 0);
    assert_eq!(op.pending_timers(), (0, 0));
}

#[test]
fn b08_event_time_sessions_continuous_trigger_survives_merge() {
    // Row B08: event-time sessions gap 5, continuous event-time trigger 4: a@1, a@3, WM->4,
    // WM->7. Source: apache/flink#2671 (FLINK-4862).
    let trigger = AnyTrigger::ContinuousEventTime(ContinuousEventTimeTrigger::of(4).unwrap());
    let mut op = WindowOperator::new(sessions(5), trigger, contents(), config(0, false)).unwrap();
    let mut out: Out<TimeWindow, Contents> = Vec::new();
    op.process_element("a", 1.0, 1, &mut out).unwrap();
    op.process_element("a", 1.0, 3, &mut out).unwrap();
    assert_eq!(op.live_windows(), 1);
    op.process_watermark(4, &mut out);
    op.process_watermark(7, &mut out);
    op.process_watermark(MAX, &mut out);
    let both = vec![(1, 1.0), (3, 1.0)];
    assert_eq!(
        out,
        [
            res("a", tw(1, 8), both.clone(), 4),
            res("a", tw(1, 8), both, 7)
        ]
    );
    assert_eq!(op.pending_timers(), (0, 0));
}

fn b10_run(trigger: AnyTrigger<f64>) -> (Out<TimeWindow, Option<f64>>, usize) {
    let mut op = WindowOperator::new(tumbling(10), trigger, sum(), config(0, false)).unwrap();
    let mut out = Vec::new();
    for t in [1, 2, 3] {
        op.process_element("a", 1.0, t, &mut out).unwrap();
    }
    op.process_watermark(20, &mut out);
    op.process_watermark(MAX, &mut out);
    (out, op.live_windows())
}

#[test]
fn b10_count_trigger_replaces_default_and_leftovers_are_discarded() {
    // Row B10: tumbling [0,10) with a count trigger of 2 (then purging): a@1, a@2, a@3, WM->20.
    // Source: Alibaba Cloud Flink docs on custom triggers; Flink CountTrigger source.
    let count2 = AnyTrigger::Count(CountTrigger::of(2).unwrap());
    let (out, live) = b10_run(count2.clone());
    assert_eq!(
        out,
        [res("a", tw(0, 10), Some(2.0), MIN)],
        "a@3 is never emitted"
    );
    assert_eq!(live, 0, "cleanup at WM 9 discards the leftover");
    let (out, live) = b10_run(count2.purging());
    assert_eq!(
        out,
        [res("a", tw(0, 10), Some(2.0), MIN)],
        "purging variant"
    );
    assert_eq!(live, 0);
}

#[test]
fn b11_global_count_trigger_non_purging_accumulates_purging_does_not() {
    // Row B11: global windows + count trigger 3, nine elements of value 1; then the
    // count-tumbling helper (purging count trigger). Source: apache/flink#26229 (FLINK-31949).
    // The function reports (elements held, sum), so each firing shows what the window retains.
    type Held = fn(&[TimestampedValue<f64>]) -> (usize, f64);
    let held: Held = |els| (els.len(), els.iter().map(|e| e.value).sum());
    let count3 = AnyTrigger::Count(CountTrigger::of(3).unwrap());

    let mut op = WindowOperator::new(
        GlobalWindows::create(),
        count3.clone(),
        FullWindow::new(held),
        config(0, false),
    )
    .unwrap();
    let mut out: Out<GlobalWindow, (usize, f64)> = Vec::new();
    for t in 0..9 {
        op.process_element("a", 1.0, t, &mut out).unwrap();
    }
    op.process_watermark(MAX, &mut out);
    assert_eq!(
        out,
        [
            res("a", GlobalWindow, (3, 3.0), MIN),
            res("a", GlobalWindow, (6, 6.0), MIN),
            res("a", GlobalWindow, (9, 9.0), MIN),
        ],
        "non-purging: FIRE keeps the contents, all 9 retained"
    );
    assert_eq!(op.live_windows(), 1);
    assert_eq!(op.metrics().windows_fired, 3);

    let mut op = WindowOperator::new(
        GlobalWindows::create(),
        count3.purging(),
        FullWindow::new(held),
        config(0, false),
    )
    .unwrap();
    let mut out: Out<GlobalWindow, (usize, f64)> = Vec::new();
    for t in 0..9 {
        op.process_element("a", 1.0, t, &mut out).unwrap();
    }
    op.process_watermark(MAX, &mut out);
    assert_eq!(
        out,
        [
            res("a", GlobalWindow, (3, 3.0), MIN),
            res("a", GlobalWindow, (3, 3.0), MIN),
            res("a", GlobalWindow, (3, 3.0), MIN),
        ],
        "count-tumbling: each firing sees only its 3 elements (at most 2 retained in between)"
    );
    assert_eq!(op.metrics().windows_fired, 3);
    assert!(op.live_windows() <= 1);
}

#[test]
fn b17_touching_sessions_merge_separated_do_not() {
    // Row B17: sessions gap 10: a@0, a@10 (touch, merge); b@0, b@11 (separate). Source: Flink
    // TimeWindow.intersects; apache/flink#1802 (FLINK-3174).
    let mut op =
        WindowOperator::new(sessions(10), AnyTrigger::EventTime, sum(), config(0, false)).unwrap();
    let mut out: Out<TimeWindow, Option<f64>> = Vec::new();
    for (k, t) in [("a", 0), ("a", 10), ("b", 0), ("b", 11)] {
        op.process_element(k, 1.0, t, &mut out).unwrap();
    }
    op.process_watermark(MAX, &mut out);
    assert_eq!(
        out,
        [
            res("b", tw(0, 10), Some(1.0), MAX),
            res("a", tw(0, 20), Some(2.0), MAX),
            res("b", tw(11, 21), Some(1.0), MAX),
        ]
    );
}

#[test]
fn b18_bridged_sessions_fire_once_at_merged_end() {
    // Row B18: sessions gap 5: a@1, a@8, a@5 (bridges into [1,13)), WM->5, WM->11, WM->12.
    // Source: apache/flink#1802 (FLINK-3174), apache/flink#2751.
    let mut op = WindowOperator::new(
        sessions(5),
        AnyTrigger::EventTime,
        contents(),
        config(0, false),
    )
    .unwrap();
    let mut out: Out<TimeWindow, Contents> = Vec::new();
    for t in [1, 8, 5] {
        op.process_element("a", f64::from(t as i32), t, &mut out)
            .unwrap();
    }
    assert_eq!(op.live_windows(), 1);
    op.process_watermark(5, &mut out);
    op.process_watermark(11, &mut out);
    assert!(
        out.is_empty(),
        "timers of merged-away windows must not fire: {out:?}"
    );
    op.process_watermark(12, &mut out);
    assert_eq!(out.len(), 1, "{out:?}");
    let Emitted::Result {
        key,
        window,
        result,
        watermark,
    } = &out[0]
    else {
        panic!("expected a result, got {:?}", out[0]);
    };
    assert_eq!((*key, *window, *watermark), ("a", tw(1, 13), 12));
    // Flink's order after a merge depends on Java hash-set iteration: compare as a set.
    let mut got = result.clone();
    got.sort_by_key(|e| e.0);
    assert_eq!(got, [(1, 1.0), (5, 5.0), (8, 8.0)]);
    op.process_watermark(MAX, &mut out);
    assert_eq!(out.len(), 1);
}

/// A merging assigner that merges `[0,10)` and `[5,15)` into the shorter `[0,4)` (row B19).
#[derive(Clone, Copy, Debug)]
struct ShrinkingMerge;

impl WindowAssigner<f64> for ShrinkingMerge {
    type Window = TimeWindow;

    fn assign_windows(
        &self,
        _element: &f64,
        timestamp: Timestamp,
        _processing_time: Timestamp,
        out: &mut Vec<TimeWindow>,
    ) -> Result<(), ElementError> {
        out.push(tw(timestamp, timestamp + 10));
        Ok(())
    }

    fn is_event_time(&self) -> bool {
        true
    }

    fn is_merging(&self) -> bool {
        true
    }

    fn merge_windows(&self, windows: &mut [TimeWindow], out: &mut Merges<TimeWindow>) {
        let (a, b) = (tw(0, 10), tw(5, 15));
        if windows.contains(&a) && windows.contains(&b) {
            out.push(tw(0, 4), &[a, b]);
        }
    }

    fn describe(&self) -> String {
        "shrinking-merge".to_owned()
    }
}

#[test]
fn b19_merge_behind_watermark_is_an_error_and_late_merging_window_is_cleared() {
    // Row B19: a custom merging assigner merges [0,10) and [5,15) into [0,4) while WM = 3,
    // lateness 0: hard error. Source: apache/flink#3587 (FLINK-5972), apache/flink#3535
    // (FLINK-5713).
    let mut op = WindowOperator::new(
        ShrinkingMerge,
        AnyTrigger::EventTime,
        sum(),
        config(0, false),
    )
    .unwrap();
    let mut out: Out<TimeWindow, Option<f64>> = Vec::new();
    op.process_element("a", 1.0, 0, &mut out).unwrap();
    op.process_watermark(3, &mut out);
    let err = op.process_element("a", 1.0, 5, &mut out).unwrap_err();
    let behind = ElementError::MergeBehindTime {
        domain: TimeDomain::EventTime,
        current: 3,
        start: 0,
        end: 4,
    };
    assert_eq!(
        err,
        Rejected::new(behind, "a", 1.0),
        "the element comes back"
    );
    assert!(err.to_string().contains("cannot become earlier"), "{err}");
    assert!(out.is_empty());

    // A merging window that is late for another reason (here: the new session window itself
    // is behind the watermark) has all its state cleared and the element is dropped.
    let mut op = WindowOperator::new(
        sessions(5),
        AnyTrigger::EventTime,
        contents(),
        config(0, true),
    )
    .unwrap();
    let mut out: Out<TimeWindow, Contents> = Vec::new();
    op.process_element("a", 30.0, 30, &mut out).unwrap();
    op.process_watermark(20, &mut out);
    let before = (op.live_windows(), op.pending_timers());
    op.process_element("a", 1.0, 1, &mut out).unwrap();
    assert_eq!(
        (op.live_windows(), op.pending_timers()),
        before,
        "no state left for [1,6)"
    );
    op.process_watermark(40, &mut out);
    assert_eq!(
        out,
        [
            late("a", 1, 1.0, 20),
            res("a", tw(30, 35), vec![(30, 30.0)], 40)
        ]
    );
    assert_eq!(
        (op.live_windows(), op.live_keys(), op.pending_timers()),
        (0, 0, (0, 0))
    );
}

fn b21_run(trigger: AnyTrigger<f64>) -> (Out<TimeWindow, Option<f64>>, usize) {
    let mut op = WindowOperator::new(tumbling(10), trigger, sum(), config(5, true)).unwrap();
    let mut out = Vec::new();
    op.process_element("a", 1.0, 1, &mut out).unwrap();
    op.process_element("a", 2.0, 2, &mut out).unwrap();
    op.process_watermark(9, &mut out);
    op.process_element("a", 4.0, 3, &mut out).unwrap();
    op.process_watermark(14, &mut out);
    op.process_element("a", 8.0, 4, &mut out).unwrap();
    op.process_watermark(MAX, &mut out);
    (out, op.live_windows())
}

#[test]
fn b21_allowed_lateness_late_firing_and_side_output() {
    // Row B21: tumbling [0,10), lateness 5, late side output: a@1=1, a@2=2, WM->9, a@3=4,
    // WM->14, a@4=8; then with the purging trigger. Source: apache/flink#3191 (FLINK-5529),
    // apache/flink#2093 (FLINK-3714).
    let w = tw(0, 10);
    let (out, live) = b21_run(AnyTrigger::EventTime);
    assert_eq!(
        out,
        [
            res("a", w, Some(3.0), 9),
            res("a", w, Some(7.0), 9), // immediately on a@3, accumulated
            late("a", 4, 8.0, 14),     // nothing at WM 14 (cleanup only)
        ]
    );
    assert_eq!(live, 0);
    let (out, _) = b21_run(AnyTrigger::EventTime.purging());
    assert_eq!(
        out,
        [
            res("a", w, Some(3.0), 9),
            res("a", w, Some(4.0), 9),
            late("a", 4, 8.0, 14)
        ],
        "purging: the late firing holds only the new element"
    );
}

#[test]
fn b46_delta_trigger_on_tumbling_and_rejected_on_sessions() {
    // Row B46: tumbling [0,100) with a delta trigger (threshold 5, absolute difference):
    // a@1=1, a@2=3, a@3=10, a@4=12; and sessions with a delta trigger. Source: Flink
    // WindowedStream merging-trigger check; Flink DeltaTrigger source.
    let trigger = AnyTrigger::Delta(DeltaTrigger::of(5.0, abs_diff()));
    let mut op =
        WindowOperator::new(tumbling(100), trigger.clone(), contents(), config(0, false)).unwrap();
    let mut out: Out<TimeWindow, Contents> = Vec::new();
    for (t, v) in [(1, 1.0), (2, 3.0), (3, 10.0)] {
        op.process_element("a", v, t, &mut out).unwrap();
    }
    assert_eq!(
        out,
        [res(
            "a",
            tw(0, 100),
            vec![(1, 1.0), (2, 3.0), (3, 10.0)],
            MIN
        )]
    );
    op.process_element("a", 12.0, 4, &mut out).unwrap();
    op.process_watermark(MAX, &mut out);
    assert_eq!(
        out.len(),
        1,
        "no fire at 12 (delta 2 to the remembered 10), none on the watermark: {out:?}"
    );

    let err =
        WindowOperator::<&str, f64, _, _, _>::new(sessions(5), trigger, sum(), config(0, false))
            .unwrap_err();
    assert!(
        matches!(err, OperatorError::TriggerCannotMerge { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("DeltaTrigger"), "{err}");
}
