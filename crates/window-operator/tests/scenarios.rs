//! Scenario rows of `tests/conformance/scenarios.md` that concern the window operator,
//! watermarks, assigners, triggers, lateness, merging and input validation: one test per row
//! (two where a row has two variants), named after the row id. Each test cites its row and the
//! row's source. Notation as in the table: times in ms, `a@t=v` is an element of key `a` at
//! event time `t` with value `v` (1 when omitted), `WM->w` advances the watermark.

use std::sync::Arc;

use window_assigners::{
    AssignerError, GlobalWindows, Merges, SessionWindows, SlidingWindows, TimeDomain,
    TumblingWindows, WindowAssigner,
};
use window_core::{GlobalWindow, NumericAggregate, TimeWindow, Timestamp, TimestampedValue};
use window_operator::watermark::{BoundedOutOfOrderness, WatermarkCombiner};
use window_operator::{
    ElementError, Emitted, FullWindow, Incremental, LateDataPolicy, OperatorConfig, OperatorError,
    Rejected, WindowComputation, WindowOperator,
};
use window_triggers::{
    AnyTrigger, ContinuousEventTimeTrigger, ContinuousProcessingTimeTrigger, CountTrigger,
    DeltaTrigger,
};

const MIN: Timestamp = i64::MIN;
const MAX: Timestamp = i64::MAX;

/// Collected output of an operator over `&str` keys and `f64` values.
type Out<W, R> = Vec<Emitted<&'static str, W, f64, R>>;
/// A window's contents: `(timestamp, value)` in the window's order.
type Contents = Vec<(Timestamp, f64)>;
type ContentsFn = fn(&[TimestampedValue<f64>]) -> Contents;

fn contents_of(els: &[TimestampedValue<f64>]) -> Contents {
    els.iter().map(|e| (e.timestamp, e.value)).collect()
}

/// Full-window function: the window's elements as `(timestamp, value)`.
fn contents() -> FullWindow<ContentsFn> {
    FullWindow::new(contents_of as ContentsFn)
}

/// Incremental sum; its result is `Some(sum)`.
fn sum() -> Incremental<NumericAggregate> {
    Incremental(NumericAggregate::Sum)
}

fn config(allowed_lateness: i64, side_output: bool) -> OperatorConfig {
    OperatorConfig {
        allowed_lateness,
        late_data: if side_output {
            LateDataPolicy::SideOutput
        } else {
            LateDataPolicy::Drop
        },
    }
}

fn tw(start: Timestamp, end: Timestamp) -> TimeWindow {
    TimeWindow::new(start, end)
}

fn tumbling(size: i64) -> TumblingWindows {
    TumblingWindows::new(size, 0, TimeDomain::EventTime).unwrap()
}

fn sessions(gap: i64) -> SessionWindows<f64> {
    SessionWindows::with_gap(gap, TimeDomain::EventTime).unwrap()
}

fn res<W, R>(
    key: &'static str,
    window: W,
    result: R,
    watermark: Timestamp,
) -> Emitted<&'static str, W, f64, R> {
    Emitted::Result {
        key,
        window,
        result,
        watermark,
    }
}

fn late<W, R>(
    key: &'static str,
    timestamp: Timestamp,
    value: f64,
    watermark: Timestamp,
) -> Emitted<&'static str, W, f64, R> {
    Emitted::Late {
        key,
        timestamp,
        value,
        watermark,
    }
}

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
fn b24_bounded_out_of_orderness_starts_at_min_and_never_regresses() {
    // Row B24: bounded out-of-orderness 60 000; a periodic watermark before any element, then
    // a@100, a@50, and a restart with no new elements. Source: streaming-with-flink/
    // examples-scala#5; Flink's generator starts from MIN + delay + 1.
    let mut op =
        WindowOperator::new(tumbling(10), AnyTrigger::EventTime, sum(), config(0, true)).unwrap();
    let mut out: Out<TimeWindow, Option<f64>> = Vec::new();
    let mut g = BoundedOutOfOrderness::new(60_000);
    assert_eq!(g.current(), MIN, "not a wrapped huge positive value");
    assert!(!op.process_watermark(g.current(), &mut out));
    for t in [100, 50] {
        op.process_element("a", 1.0, t, &mut out).unwrap();
        g.on_event(t);
        assert_eq!(g.current(), -59_901);
        op.process_watermark(g.current(), &mut out);
    }
    assert_eq!(op.current_watermark(), -59_901);
    assert!(out.is_empty(), "nothing fires: {out:?}");
    // After a restart without new elements the generator is back at MIN, not wrapped.
    let restarted = BoundedOutOfOrderness::new(60_000);
    assert_eq!(restarted.current(), MIN);
    assert!(!op.process_watermark(restarted.current(), &mut out));
    assert_eq!(op.current_watermark(), -59_901);
    // An element near MIN: the watermark saturates at MIN instead of wrapping.
    let mut edge = BoundedOutOfOrderness::new(60_000);
    edge.on_event(MIN + 10);
    assert_eq!(edge.current(), MIN);
}

type SumOp<A> =
    WindowOperator<&'static str, f64, A, AnyTrigger<f64>, Incremental<NumericAggregate>>;

/// An element from one input of a [`WatermarkCombiner`] at processing time `now`.
fn feed(
    op: &mut SumOp<TumblingWindows>,
    c: &mut WatermarkCombiner,
    input: usize,
    t: Timestamp,
    now: Timestamp,
    out: &mut Out<TimeWindow, Option<f64>>,
) {
    c.on_activity(input, now);
    op.process_element("a", 1.0, t, out).unwrap();
}

fn b25_operator() -> SumOp<TumblingWindows> {
    WindowOperator::new(tumbling(10), AnyTrigger::EventTime, sum(), config(0, true)).unwrap()
}

#[test]
fn b25_idle_input_is_excluded_and_resuming_input_cannot_move_watermark_back() {
    // Row B25: two inputs into one tumbling-10 operator. Input 1: a@1, a@15, own WM 25; input
    // 2 silent; then input 2 resumes with a@5 and own WM 3. Source: apache/flink#6076 (docs),
    // apache/beam#31085, apache/beam#31390, ArroyoSystems/arroyo#222.

    // Without idleness handling the silent input holds event time at MIN.
    let mut op = b25_operator();
    let mut c = WatermarkCombiner::new(2, None);
    let mut out = Vec::new();
    c.on_processing_time(0);
    feed(&mut op, &mut c, 0, 1, 0, &mut out);
    feed(&mut op, &mut c, 0, 15, 100, &mut out);
    op.process_watermark(c.on_watermark(0, 25, 200), &mut out);
    op.process_watermark(c.on_processing_time(1_000_000), &mut out);
    assert_eq!(c.combined(), MIN);
    assert_eq!(op.current_watermark(), MIN);
    assert!(out.is_empty(), "{out:?}");

    // With idleness (timeout 1 s, the job starts at processing time 0): input 2 is left out
    // once silent for 1 s, and windows [0,10) and [10,20) fire.
    let mut op = b25_operator();
    let mut c = WatermarkCombiner::new(2, Some(1_000));
    let mut out = Vec::new();
    c.on_processing_time(0);
    feed(&mut op, &mut c, 0, 1, 0, &mut out);
    feed(&mut op, &mut c, 0, 15, 100, &mut out);
    assert_eq!(c.on_watermark(0, 25, 800), MIN, "input 2 not idle yet");
    let wm = c.on_processing_time(1_000); // input 2 silent for 1 s; input 1 active at 0.8 s
    assert_eq!(wm, 25);
    op.process_watermark(wm, &mut out);
    assert_eq!(
        out,
        [
            res("a", tw(0, 10), Some(1.0), 25),
            res("a", tw(10, 20), Some(1.0), 25)
        ]
    );
    // Input 2 resumes: a@5 is late, and its WM 3 does not move the combined watermark back.
    out.clear();
    feed(&mut op, &mut c, 1, 5, 1_500, &mut out);
    assert_eq!(c.on_watermark(1, 3, 1_500), 25);
    assert!(!op.process_watermark(c.combined(), &mut out));
    assert_eq!(out, [late("a", 5, 1.0, 25)]);
    assert_eq!(op.current_watermark(), 25);
}

#[test]
fn b25_when_every_input_turns_idle_the_max_watermark_is_flushed() {
    // Row B25 (with idleness), when input 1 also goes quiet after its WM 25: as Flink's
    // StatusWatermarkValve does when its last active channel turns idle, event time moves to
    // the largest input watermark, so the windows still fire. Source: apache/flink#6076,
    // ArroyoSystems/arroyo#222.
    let mut op = b25_operator();
    let mut c = WatermarkCombiner::new(2, Some(1_000));
    let mut out = Vec::new();
    c.on_processing_time(0);
    feed(&mut op, &mut c, 0, 1, 0, &mut out);
    feed(&mut op, &mut c, 0, 15, 0, &mut out);
    assert_eq!(c.on_watermark(0, 25, 0), MIN);
    let wm = c.on_processing_time(1_000); // both inputs silent for 1 s
    assert_eq!(wm, 25);
    op.process_watermark(wm, &mut out);
    assert_eq!(
        out,
        [
            res("a", tw(0, 10), Some(1.0), 25),
            res("a", tw(10, 20), Some(1.0), 25)
        ]
    );
}

#[test]
fn b27_ended_inputs_count_as_max_and_global_never_trigger_stays_silent() {
    // Row B27: input 1 has a@3 then ends; input 2 gives WM 7, WM 12, then ends; a global-window
    // operator with the never trigger runs alongside. Lateness 5 and an extra b@15 on input 1
    // show that the final MAX watermark fires pending windows. Source: apache/flink#1060
    // (FLINK-2577).
    let mut op =
        WindowOperator::new(tumbling(10), AnyTrigger::EventTime, sum(), config(5, false)).unwrap();
    let mut global = WindowOperator::new(
        GlobalWindows::create(),
        AnyTrigger::Never,
        sum(),
        config(0, false),
    )
    .unwrap();
    let mut out: Out<TimeWindow, Option<f64>> = Vec::new();
    let mut gout: Out<GlobalWindow, Option<f64>> = Vec::new();
    let mut c = WatermarkCombiner::new(2, None);
    for (k, t) in [("a", 3), ("b", 15)] {
        c.on_activity(0, 0);
        op.process_element(k, 1.0, t, &mut out).unwrap();
        global.process_element(k, 1.0, t, &mut gout).unwrap();
    }
    let mut step = |wm: Timestamp,
                    out: &mut Out<TimeWindow, Option<f64>>,
                    gout: &mut Out<GlobalWindow, Option<f64>>| {
        op.process_watermark(wm, out);
        global.process_watermark(wm, gout);
    };
    let wm = c.on_end(0);
    assert_eq!(wm, MIN);
    step(wm, &mut out, &mut gout);
    let wm = c.on_watermark(1, 7, 0);
    assert_eq!(wm, 7);
    step(wm, &mut out, &mut gout);
    assert!(out.is_empty());
    let wm = c.on_watermark(1, 12, 0);
    assert_eq!(wm, 12);
    step(wm, &mut out, &mut gout);
    assert_eq!(out, [res("a", tw(0, 10), Some(1.0), 12)]);
    let wm = c.on_end(1);
    assert_eq!(wm, MAX);
    step(wm, &mut out, &mut gout);
    assert_eq!(
        out,
        [
            res("a", tw(0, 10), Some(1.0), 12),
            res("b", tw(10, 20), Some(1.0), MAX)
        ]
    );
    assert_eq!((op.live_windows(), op.pending_timers()), (0, (0, 0)));
    assert!(gout.is_empty(), "the never trigger emits nothing: {gout:?}");
    assert_eq!(global.live_windows(), 2);
}

#[test]
fn b29_end_timer_and_cleanup_timer_fire_once() {
    // Row B29: tumbling [0,10): a@1, WM->9, WM->100 (lateness 0); a@1, WM->9, WM->14 (lateness
    // 5). Source: Flink WindowOperator (fire and cleanup in one timer callback when lateness 0).
    for (lateness, second) in [(0, 100), (5, 14)] {
        let mut op = WindowOperator::new(
            tumbling(10),
            AnyTrigger::EventTime,
            sum(),
            config(lateness, false),
        )
        .unwrap();
        let mut out: Out<TimeWindow, Option<f64>> = Vec::new();
        op.process_element("a", 1.0, 1, &mut out).unwrap();
        op.process_watermark(9, &mut out);
        op.process_watermark(second, &mut out);
        assert_eq!(
            out,
            [res("a", tw(0, 10), Some(1.0), 9)],
            "lateness {lateness}"
        );
        assert_eq!(
            (op.live_windows(), op.pending_timers()),
            (0, (0, 0)),
            "lateness {lateness}"
        );
        assert_eq!(op.metrics().windows_fired, 1);
    }
}

#[test]
fn b33_sliding_windows_hold_only_their_own_elements() {
    // Row B33: sliding size 10 s slide 5 s; an element at 12 s; a stream with one element
    // every 2 s from 0 s. Source: robinhood/faust#203 (also #199).
    let assigner = SlidingWindows::new(10_000, 5_000, 0, TimeDomain::EventTime).unwrap();
    let mut op = WindowOperator::new(
        assigner,
        AnyTrigger::EventTime,
        contents(),
        config(0, false),
    )
    .unwrap();
    let mut out: Out<TimeWindow, Contents> = Vec::new();
    op.process_element("a", 1.0, 12_000, &mut out).unwrap();
    op.process_watermark(MAX, &mut out);
    assert_eq!(
        out,
        [
            res("a", tw(5_000, 15_000), vec![(12_000, 1.0)], MAX),
            res("a", tw(10_000, 20_000), vec![(12_000, 1.0)], MAX),
        ]
    );

    let mut op = WindowOperator::new(
        assigner,
        AnyTrigger::EventTime,
        contents(),
        config(0, false),
    )
    .unwrap();
    let mut out: Out<TimeWindow, Contents> = Vec::new();
    let stream: Vec<Timestamp> = (0..=60_000).step_by(2_000).collect();
    for &t in &stream {
        op.process_element("a", 1.0, t, &mut out).unwrap();
        op.process_watermark(t - 1, &mut out);
    }
    op.process_watermark(MAX, &mut out);
    let mut seen = Vec::new();
    for e in &out {
        let Emitted::Result { window, result, .. } = e else {
            panic!("unexpected {e:?}");
        };
        let want: Contents = stream
            .iter()
            .filter(|&&t| window.start() <= t && t < window.end())
            .map(|&t| (t, 1.0))
            .collect();
        assert_eq!(result, &want, "window {window:?}");
        assert!(
            result.len() <= 5,
            "window {window:?} holds {}",
            result.len()
        );
        seen.push(window.start());
    }
    let expected_starts: Vec<Timestamp> = (-5_000..=60_000).step_by(5_000).collect();
    assert_eq!(seen, expected_starts, "every window exactly once, in order");
}

#[test]
fn b35_sliding_fires_every_slide_of_watermark_progress() {
    // Row B35: event-time sliding size 10 s slide 2 s; one element per second from 0 s to
    // 20 s; WM = max ts. Source: ClickHouse/ClickHouse#36861 (fix for #34044).
    let assigner = SlidingWindows::new(10_000, 2_000, 0, TimeDomain::EventTime).unwrap();
    let mut op = WindowOperator::new(
        assigner,
        AnyTrigger::EventTime,
        contents(),
        config(0, false),
    )
    .unwrap();
    let mut out: Out<TimeWindow, Contents> = Vec::new();
    let stream: Vec<Timestamp> = (0..=20_000).step_by(1_000).collect();
    for &t in &stream {
        op.process_element("a", 1.0, t, &mut out).unwrap();
        op.process_watermark(t, &mut out);
    }
    let during: Vec<(Timestamp, Timestamp)> = out
        .iter()
        .map(|e| match e {
            Emitted::Result {
                window, watermark, ..
            } => (window.end(), *watermark),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    let expected: Vec<(Timestamp, Timestamp)> =
        (2_000..=20_000).step_by(2_000).map(|e| (e, e)).collect();
    assert_eq!(
        during, expected,
        "one firing per 2 s of watermark, windows ending at 2 s, 4 s, ..."
    );
    op.process_watermark(MAX, &mut out);
    let mut ends = Vec::new();
    for e in &out {
        let Emitted::Result { window, result, .. } = e else {
            panic!("unexpected {e:?}");
        };
        let want: Contents = stream
            .iter()
            .filter(|&&t| window.start() <= t && t < window.end())
            .map(|&t| (t, 1.0))
            .collect();
        assert_eq!(result, &want, "window {window:?}");
        ends.push(window.end());
    }
    let all: Vec<Timestamp> = (2_000..=30_000).step_by(2_000).collect();
    assert_eq!(ends, all, "each window exactly once");
}

#[test]
fn b36_very_late_element_creates_no_window_state() {
    // Row B36: sliding 10/5, lateness 0: a@100, WM->100, a@3, WM->200. Source:
    // quixio/quix-streams#728, laminardb/laminardb#65.
    let assigner = SlidingWindows::new(10, 5, 0, TimeDomain::EventTime).unwrap();
    let mut op =
        WindowOperator::new(assigner, AnyTrigger::EventTime, sum(), config(0, true)).unwrap();
    let mut out: Out<TimeWindow, Option<f64>> = Vec::new();
    op.process_element("a", 1.0, 100, &mut out).unwrap();
    op.process_watermark(100, &mut out);
    let before = (
        op.live_windows(),
        op.pending_timers(),
        op.metrics().windows_created,
    );
    op.process_element("a", 1.0, 3, &mut out).unwrap();
    assert_eq!(
        (
            op.live_windows(),
            op.pending_timers(),
            op.metrics().windows_created
        ),
        before
    );
    assert_eq!(before.2, 2);
    op.process_watermark(200, &mut out);
    op.process_watermark(MAX, &mut out);
    assert_eq!(
        out,
        [
            late("a", 3, 1.0, 100),
            res("a", tw(95, 105), Some(1.0), 200),
            res("a", tw(100, 110), Some(1.0), 200),
        ]
    );
    assert_eq!(op.metrics().late_elements, 1);
}

#[test]
fn b37_late_element_is_not_folded_into_next_session() {
    // Row B37: sessions gap 5, lateness 0: a@0, a@2, WM->20, a@22, late a@1, WM->40. Source:
    // hazelcast/hazelcast-jet#747 (fix #756).
    let mut op = WindowOperator::new(
        sessions(5),
        AnyTrigger::EventTime,
        contents(),
        config(0, true),
    )
    .unwrap();
    let mut out: Out<TimeWindow, Contents> = Vec::new();
    op.process_element("a", 0.0, 0, &mut out).unwrap();
    op.process_element("a", 2.0, 2, &mut out).unwrap();
    op.process_watermark(20, &mut out);
    op.process_element("a", 22.0, 22, &mut out).unwrap();
    op.process_element("a", 1.0, 1, &mut out).unwrap();
    op.process_watermark(40, &mut out);
    assert_eq!(
        out,
        [
            res("a", tw(0, 7), vec![(0, 0.0), (2, 2.0)], 20),
            late("a", 1, 1.0, 20),
            res("a", tw(22, 27), vec![(22, 22.0)], 40),
        ]
    );
}

#[test]
fn b45_missing_timestamps_and_non_positive_sizes_are_rejected() {
    // Row B45: an element without a timestamp in event time, zero sizes/slides/gaps, and a
    // dynamic gap of 0 for one element. Source: Flink event-time assigners and dynamic session
    // gap checks; risingwavelabs/risingwave#22615, risingwavelabs/risingwave#4156.
    let mut op =
        WindowOperator::new(tumbling(10), AnyTrigger::EventTime, sum(), config(0, true)).unwrap();
    let mut out: Out<TimeWindow, Option<f64>> = Vec::new();
    let err = op.process_element("a", 1.0, MIN, &mut out).unwrap_err();
    assert_eq!(err, Rejected::new(ElementError::MissingTimestamp, "a", 1.0));
    assert!(err.to_string().contains("no timestamp"), "{err}");
    assert_eq!(op.metrics().elements, 0, "the element is not counted");
    assert_eq!((op.live_windows(), op.live_keys()), (0, 0), "nor added");
    op.process_element("a", 2.0, 3, &mut out).unwrap();
    op.process_watermark(MAX, &mut out);
    assert_eq!(
        out,
        [res("a", tw(0, 10), Some(2.0), MAX)],
        "never windowed at MIN"
    );

    let sliding = SlidingWindows::new(10, 5, 0, TimeDomain::EventTime).unwrap();
    let mut op =
        WindowOperator::new(sliding, AnyTrigger::EventTime, sum(), config(0, false)).unwrap();
    assert_eq!(
        op.process_element("a", 1.0, MIN, &mut out),
        Err(Rejected::new(ElementError::MissingTimestamp, "a", 1.0))
    );
    let mut op =
        WindowOperator::new(sessions(5), AnyTrigger::EventTime, sum(), config(0, false)).unwrap();
    assert_eq!(
        op.process_element("a", 1.0, MIN, &mut out),
        Err(Rejected::new(ElementError::MissingTimestamp, "a", 1.0))
    );
    assert_eq!((op.metrics().elements, op.live_windows()), (0, 0));

    // Processing time only carries the timestamp along: no error.
    let proc = TumblingWindows::new(10, 0, TimeDomain::ProcessingTime).unwrap();
    let mut op =
        WindowOperator::new(proc, AnyTrigger::ProcessingTime, sum(), config(0, false)).unwrap();
    op.advance_processing_time(0, &mut out);
    op.process_element("a", 1.0, MIN, &mut out).unwrap();

    // Zero and negative sizes, slides and gaps: rejected with a message naming the value.
    for (what, r) in [
        (
            "window size",
            TumblingWindows::new(0, 0, TimeDomain::EventTime).map(|_| ()),
        ),
        (
            "window size",
            TumblingWindows::new(-10, 0, TimeDomain::EventTime).map(|_| ()),
        ),
        (
            "window size",
            SlidingWindows::new(0, 5, 0, TimeDomain::EventTime).map(|_| ()),
        ),
        (
            "slide",
            SlidingWindows::new(10, 0, 0, TimeDomain::EventTime).map(|_| ()),
        ),
        (
            "slide",
            SlidingWindows::new(10, -5, 0, TimeDomain::EventTime).map(|_| ()),
        ),
        (
            "session gap",
            SessionWindows::<f64>::with_gap(0, TimeDomain::EventTime).map(|_| ()),
        ),
        (
            "session gap",
            SessionWindows::<f64>::with_gap(-1, TimeDomain::ProcessingTime).map(|_| ()),
        ),
    ] {
        let err = r.unwrap_err();
        assert!(
            matches!(err, AssignerError::NotPositive { what: w, .. } if w == what),
            "{err:?}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains(what) && msg.contains("must be positive"),
            "{msg}"
        );
    }

    // A dynamic gap of 0 (or negative) is an error for that element only.
    let dynamic = SessionWindows::<f64>::with_dynamic_gap(
        Arc::new(|v: &f64| *v as i64),
        TimeDomain::EventTime,
    );
    let mut op =
        WindowOperator::new(dynamic, AnyTrigger::EventTime, sum(), config(0, false)).unwrap();
    let mut out: Out<TimeWindow, Option<f64>> = Vec::new();
    assert_eq!(
        op.process_element("a", 0.0, 5, &mut out)
            .map_err(|r| r.error),
        Err(ElementError::InvalidDynamicGap {
            gap: 0,
            timestamp: 5
        })
    );
    assert_eq!(
        op.process_element("a", -2.0, 5, &mut out)
            .map_err(|r| r.error),
        Err(ElementError::InvalidDynamicGap {
            gap: -2,
            timestamp: 5
        })
    );
    assert_eq!((op.metrics().elements, op.live_windows()), (0, 0));
    op.process_element("a", 3.0, 6, &mut out).unwrap();
    op.process_watermark(MAX, &mut out);
    assert_eq!(out, [res("a", tw(6, 9), Some(3.0), MAX)]);
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

#[test]
fn b47_chained_window_operators_see_results_before_the_watermark() {
    // Row B47: stage 1 tumbling 5 sum, results stamped with the window max timestamp; stage 2
    // tumbling 10 over them; input a@1=1, a@6=2, WM->9. Source: apache/flink#6076 (docs: an
    // operator emits everything a watermark causes before forwarding it).
    let mut stage1 =
        WindowOperator::new(tumbling(5), AnyTrigger::EventTime, sum(), config(0, false)).unwrap();
    let mut stage2 =
        WindowOperator::new(tumbling(10), AnyTrigger::EventTime, sum(), config(0, true)).unwrap();
    let mut out2: Out<TimeWindow, Option<f64>> = Vec::new();
    let mut forward = |out1: Out<TimeWindow, Option<f64>>,
                       wm: Option<Timestamp>,
                       out2: &mut Out<TimeWindow, Option<f64>>| {
        for e in out1 {
            let Emitted::Result {
                key,
                window,
                result,
                ..
            } = e
            else {
                panic!("stage 1 emitted {e:?}");
            };
            let ts = window_core::Window::max_timestamp(&window);
            stage2
                .process_element(key, result.unwrap(), ts, out2)
                .unwrap();
        }
        if let Some(wm) = wm {
            stage2.process_watermark(wm, out2);
        }
    };
    let mut out1 = Vec::new();
    stage1.process_element("a", 1.0, 1, &mut out1).unwrap();
    stage1.process_element("a", 2.0, 6, &mut out1).unwrap();
    assert!(out1.is_empty());
    stage1.process_watermark(9, &mut out1);
    assert_eq!(
        out1,
        [
            res("a", tw(0, 5), Some(1.0), 9),
            res("a", tw(5, 10), Some(2.0), 9)
        ]
    );
    forward(out1, Some(9), &mut out2);
    assert_eq!(out2, [res("a", tw(0, 10), Some(3.0), 9)]);
    let mut out1 = Vec::new();
    stage1.process_watermark(MAX, &mut out1);
    forward(out1, Some(MAX), &mut out2);
    assert_eq!(out2.len(), 1, "fires once, nothing late: {out2:?}");
}
