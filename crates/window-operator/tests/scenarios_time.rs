//! Scenario rows of `tests/conformance/scenarios.md` that concern watermarks (bounded
//! out-of-orderness, idle and ended inputs), timers, sliding windows, late elements, input
//! validation and chained operators: one test per row (two where a row has two variants), named
//! after the row id. Each test cites its row and the
//! row's source. Notation as in the table: times in ms, `a@t=v` is an element of key `a` at
//! event time `t` with value `v` (1 when omitted), `WM->w` advances the watermark. Shared
//! helpers: `common/scenario.rs`.
//! The trigger, merging and lateness rows are in `scenarios_triggers.rs`.

#[path = "common/scenario.rs"]
mod scenario;

use std::sync::Arc;

use scenario::{config, contents, late, res, sessions, sum, tumbling, tw, Contents, Out, MAX, MIN};
use window_assigners::{
    AssignerError, GlobalWindows, SessionWindows, SlidingWindows, TimeDomain, TumblingWindows,
};
use window_core::{GlobalWindow, NumericAggregate, TimeWindow, Timestamp};
use window_operator::watermark::{BoundedOutOfOrderness, WatermarkCombiner};
use window_operator::{
    ElementError, Emitted, Incremental, Rejected, WindowComputation, WindowOperator,
};
use window_triggers::AnyTrigger;

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
