//! The operator's timers in [`MarkedTimers`] (live timers kept in the windows' state) against
//! the plain structure, [`TimerService`] (a set of live timers beside the time order): random
//! jobs over every built-in trigger, tumbling, sliding and session windows in both time
//! domains, allowed lateness and the late side output, driven by elements, watermarks and
//! processing time. Both must emit the same records in the same order (all keys together), hold
//! the same number of window states after every step and the same timers and windows at the
//! end. Only the operator on [`MarkedTimers`] retires fired windows that wait for cleanup into
//! its FIFO (`is_only_timer`), so this also compares the retired path with the plain one. Cases
//! come from a seeded generator, so a failure names its seed.

#[allow(
    dead_code,
    reason = "this test uses the generators, not the reference assignment"
)]
mod common;

use std::sync::Arc;

use common::{gen_windows, Rng, Windows};
use timer_service::TimerService;
use window_assigners::{
    SessionWindows, SlidingWindows, TimeDomain, TumblingWindows, WindowAssigner,
};
use window_core::{Timestamp, TimestampedValue};
use window_operator::{
    Emitted, FullWindow, KeyId, LateDataPolicy, OperatorConfig, WindowComputation, WindowOperator,
};
use window_triggers::{
    AnyTrigger, ContinuousEventTimeTrigger, ContinuousProcessingTimeTrigger, CountTrigger,
    DeltaTrigger, Trigger,
};

const CASES: u64 = 3_000;
const KEYS: [&str; 3] = ["a", "b", "c"];

type Contents = Vec<(Timestamp, f64)>;
type ContentsFn = fn(&[TimestampedValue<f64>]) -> Contents;

fn contents_of(els: &[TimestampedValue<f64>]) -> Contents {
    els.iter().map(|e| (e.timestamp, e.value)).collect()
}

#[derive(Clone, Copy, Debug)]
enum Step {
    Element {
        key: &'static str,
        ts: Timestamp,
        value: f64,
    },
    Watermark(Timestamp),
    Clock(Timestamp),
}

/// A random built-in trigger (some cannot merge: session windows refuse them).
fn gen_trigger(rng: &mut Rng) -> AnyTrigger<f64> {
    let base = match rng.range(0, 6) {
        0 => AnyTrigger::ProcessingTime,
        1 => AnyTrigger::Count(CountTrigger::of(rng.range(1, 4) as u64).unwrap()),
        2 => AnyTrigger::ContinuousEventTime(
            ContinuousEventTimeTrigger::of(rng.range(1, 8)).unwrap(),
        ),
        3 => AnyTrigger::ContinuousProcessingTime(
            ContinuousProcessingTimeTrigger::of(rng.range(1, 8)).unwrap(),
        ),
        4 => AnyTrigger::Delta(DeltaTrigger::of(
            rng.range(1, 20) as f64,
            Arc::new(|old: &f64, new: &f64| (new - old).abs()),
        )),
        5 => AnyTrigger::EventTime,
        _ => AnyTrigger::Never,
    };
    if rng.chance(30) {
        AnyTrigger::Purging(Box::new(base))
    } else {
        base
    }
}

fn gen_steps(rng: &mut Rng) -> Vec<Step> {
    let mut wm = rng.range(-30, 0);
    let mut clock = rng.range(-30, 0);
    // The clock is set first, as a runtime does (from i64::MIN a continuous processing-time
    // trigger would fire every interval up to the first reading).
    std::iter::once(Step::Clock(clock))
        .chain((0..rng.range(0, 50)).map(|i| match rng.range(0, 9) {
            0 | 1 => {
                wm += rng.range(-3, 10);
                Step::Watermark(wm)
            }
            2 => {
                clock += rng.range(0, 10);
                Step::Clock(clock)
            }
            _ => Step::Element {
                key: KEYS[rng.range(0, 2) as usize],
                ts: wm.max(clock) + rng.range(-25, 15),
                value: (i * 7 % 13) as f64,
            },
        }))
        .collect()
}

/// Records of one run, the window states held after each step, and what is left at the end:
/// (windows, keys, timers).
type Run = (
    Vec<Emitted<&'static str, A2, f64, Contents>>,
    Vec<usize>,
    (usize, usize, (usize, usize)),
);
type A2 = window_core::TimeWindow;

fn run<A, S>(
    mut op: WindowOperator<&'static str, f64, A, AnyTrigger<f64>, FullWindow<ContentsFn>, S>,
    steps: &[Step],
) -> Run
where
    A: WindowAssigner<f64, Window = A2>,
    AnyTrigger<f64>: Trigger<f64, A2>,
    S: window_operator::TimerStore<A2>,
{
    let mut out = Vec::new();
    let mut held = Vec::with_capacity(steps.len());
    for s in steps {
        match *s {
            Step::Element { key, ts, value } => {
                // A merge behind the watermark is refused the same way by both: keep going.
                let _ = op.process_element(key, value, ts, &mut out);
            }
            Step::Watermark(w) => {
                op.process_watermark(w, &mut out);
            }
            Step::Clock(t) => op.advance_processing_time(t, &mut out),
        }
        held.push(op.live_windows());
    }
    // The end of input: the final watermark, and the clock well past every window of the case
    // (not to i64::MAX: a continuous trigger would fire every interval up to there).
    op.process_watermark(i64::MAX, &mut out);
    op.advance_processing_time(1_000, &mut out);
    let left = (op.live_windows(), op.live_keys(), op.pending_timers());
    (out, held, left)
}

fn compare<A>(
    seed: u64,
    assigner: A,
    trigger: &AnyTrigger<f64>,
    config: OperatorConfig,
    steps: &[Step],
) -> Option<usize>
where
    A: WindowAssigner<f64, Window = A2> + Clone,
    AnyTrigger<f64>: Trigger<f64, A2>,
{
    let function = || FullWindow::new(contents_of as ContentsFn);
    let marked = WindowOperator::new(assigner.clone(), trigger.clone(), function(), config).ok()?;
    let plain = WindowOperator::<_, _, _, _, _, TimerService<KeyId, A2>>::with_timer_store(
        assigner,
        trigger.clone(),
        function(),
        config,
    )
    .ok()?;
    let (a, held_a, left_a) = run(marked, steps);
    let (b, held_b, left_b) = run(plain, steps);
    assert_eq!(
        a, b,
        "seed {seed}: records differ\n{trigger:?} {config:?}\n{steps:?}"
    );
    assert_eq!(held_a, held_b, "seed {seed}: window states held differ");
    assert_eq!(left_a, left_b, "seed {seed}: state left differs");
    Some(a.len())
}

#[test]
fn marked_timers_fire_what_the_plain_timer_service_fires_in_the_same_order() {
    let mut records = 0;
    let mut compared = 0;
    for seed in 1..=CASES {
        if std::env::var_os("TIMER_STORES_TRACE").is_some() {
            eprintln!("seed {seed}");
        }
        let mut rng = Rng::new(seed);
        let domain = if rng.chance(70) {
            TimeDomain::EventTime
        } else {
            TimeDomain::ProcessingTime
        };
        let trigger = gen_trigger(&mut rng);
        let trigger = match (domain, trigger) {
            (TimeDomain::ProcessingTime, AnyTrigger::EventTime) => AnyTrigger::ProcessingTime,
            (_, t) => t,
        };
        let config = OperatorConfig {
            allowed_lateness: rng.range(0, 15),
            late_data: if rng.chance(50) {
                LateDataPolicy::SideOutput
            } else {
                LateDataPolicy::Drop
            },
        };
        let session = rng.chance(30).then(|| rng.range(1, 12));
        let windows = gen_windows(&mut rng, 80);
        let steps = gen_steps(&mut rng);
        if std::env::var_os("TIMER_STORES_TRACE").is_some() {
            eprintln!("{domain:?} {trigger:?} {config:?} {session:?} {windows:?}\n{steps:?}");
        }
        let n = match (session, windows) {
            (Some(gap), _) => compare(
                seed,
                SessionWindows::with_gap(gap, domain).unwrap(),
                &trigger,
                config,
                &steps,
            ),
            (None, Windows::Tumbling { size, offset }) => compare(
                seed,
                TumblingWindows::new(size, offset, domain).unwrap(),
                &trigger,
                config,
                &steps,
            ),
            (
                None,
                Windows::Sliding {
                    size,
                    slide,
                    offset,
                },
            ) => compare(
                seed,
                SlidingWindows::new(size, slide, offset, domain).unwrap(),
                &trigger,
                config,
                &steps,
            ),
        };
        if let Some(n) = n {
            records += n;
            compared += 1;
        }
    }
    assert!(compared > CASES * 3 / 4, "only {compared} cases built");
    assert!(records > 10 * CASES as usize, "only {records} records");
}
