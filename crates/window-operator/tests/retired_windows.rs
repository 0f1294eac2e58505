//! Retired windows (`window-operator/src/retired.rs`) under stress: random event-time jobs
//! with allowed lateness, big watermark jumps and late elements, over built-in triggers and
//! custom ones that re-register end-of-window timers late, leave orphan timers behind, or add
//! processing-time timers after the window's end. The operator on `MarkedTimers` (which retires
//! fired windows into the FIFO) is run beside the one on the plain `TimerService` (which never
//! retires): after every step both must have emitted the same records and hold the same window
//! states, keys, timers, metrics and live state. Cases come from a seeded generator, so a
//! failure names its seed. (Written by the review of issue 12's retired windows.)

#[allow(
    dead_code,
    reason = "this test uses the generators, not the reference assignment"
)]
mod common;

use common::{gen_windows, Rng, Windows};
use timer_service::TimerService;
use window_assigners::{SlidingWindows, TimeDomain, TumblingWindows, WindowAssigner};
use window_core::{TimeWindow, Timestamp, TimestampedValue, TriggerResult, Window};
use window_operator::{
    Emitted, FullWindow, KeyId, LateDataPolicy, OperatorConfig, WindowComputation, WindowOperator,
};
use window_triggers::{
    AnyTrigger, ContinuousEventTimeTrigger, ContinuousProcessingTimeTrigger, CountTrigger, Trigger,
    TriggerContext,
};

type Contents = Vec<(Timestamp, f64)>;
type ContentsFn = fn(&[TimestampedValue<f64>]) -> Contents;
fn contents_of(els: &[TimestampedValue<f64>]) -> Contents {
    els.iter().map(|e| (e.timestamp, e.value)).collect()
}

#[derive(Clone, Debug)]
enum Custom {
    Any(AnyTrigger<f64>),
    /// Registers max_ts on every element (also late ones: fires at next watermark).
    Deferred,
    /// Late element: timer at wm + d; never deletes it.
    LateTimer(i64),
    /// At max_ts: fire and set a processing-time timer.
    ProcAfterEnd,
    /// At max_ts: fire; late element: register max_ts + d and fire then.
    LateEcho(i64),
}

impl Trigger<f64, TimeWindow> for Custom {
    type State = <AnyTrigger<f64> as Trigger<f64, TimeWindow>>::State;
    fn on_element<C: TriggerContext>(
        &self,
        e: &f64,
        ts: Timestamp,
        w: &TimeWindow,
        s: &mut Self::State,
        ctx: &mut C,
    ) -> TriggerResult {
        match self {
            Custom::Any(t) => t.on_element(e, ts, w, s, ctx),
            Custom::Deferred => {
                ctx.register_event_time_timer(w.max_timestamp());
                TriggerResult::Continue
            }
            Custom::LateTimer(d) => {
                if w.max_timestamp() <= ctx.current_watermark() {
                    let t = ctx.current_watermark() + d;
                    ctx.register_event_time_timer(t);
                } else {
                    ctx.register_event_time_timer(w.max_timestamp());
                }
                TriggerResult::Continue
            }
            Custom::ProcAfterEnd => {
                ctx.register_event_time_timer(w.max_timestamp());
                TriggerResult::Continue
            }
            Custom::LateEcho(d) => {
                if w.max_timestamp() <= ctx.current_watermark() {
                    ctx.register_event_time_timer(w.max_timestamp() + d);
                    TriggerResult::Fire
                } else {
                    ctx.register_event_time_timer(w.max_timestamp());
                    TriggerResult::Continue
                }
            }
        }
    }
    fn on_event_time<C: TriggerContext>(
        &self,
        t: Timestamp,
        w: &TimeWindow,
        s: &mut Self::State,
        ctx: &mut C,
    ) -> TriggerResult {
        match self {
            Custom::Any(tr) => tr.on_event_time(t, w, s, ctx),
            Custom::Deferred | Custom::LateTimer(_) | Custom::LateEcho(_) => TriggerResult::Fire,
            Custom::ProcAfterEnd => {
                if t == w.max_timestamp() {
                    let p = ctx.current_processing_time().saturating_add(5);
                    ctx.register_processing_time_timer(p);
                    TriggerResult::Fire
                } else {
                    TriggerResult::Continue
                }
            }
        }
    }
    fn on_processing_time<C: TriggerContext>(
        &self,
        t: Timestamp,
        w: &TimeWindow,
        s: &mut Self::State,
        ctx: &mut C,
    ) -> TriggerResult {
        match self {
            Custom::Any(tr) => tr.on_processing_time(t, w, s, ctx),
            Custom::ProcAfterEnd => TriggerResult::FireAndPurge,
            _ => TriggerResult::Continue,
        }
    }
    fn clear<C: TriggerContext>(&self, w: &TimeWindow, s: &mut Self::State, ctx: &mut C) {
        match self {
            Custom::Any(tr) => tr.clear(w, s, ctx),
            Custom::Deferred | Custom::ProcAfterEnd | Custom::LateEcho(_) => {
                ctx.delete_event_time_timer(w.max_timestamp())
            }
            Custom::LateTimer(_) => {}
        }
    }
    fn describe(&self) -> String {
        format!("{self:?}")
    }
}

#[derive(Clone, Copy, Debug)]
enum Step {
    El {
        key: &'static str,
        ts: Timestamp,
        value: f64,
    },
    Wm(Timestamp),
    Clock(Timestamp),
}
const KEYS: [&str; 6] = ["a", "b", "c", "d", "e", "f"];

fn gen_trigger(rng: &mut Rng) -> Custom {
    let base = match rng.range(0, 12) {
        0 => AnyTrigger::ProcessingTime,
        1 => AnyTrigger::Count(CountTrigger::of(rng.range(1, 4) as u64).unwrap()),
        2 | 3 => AnyTrigger::ContinuousEventTime(
            ContinuousEventTimeTrigger::of(rng.range(1, 8)).unwrap(),
        ),
        4 => AnyTrigger::ContinuousProcessingTime(
            ContinuousProcessingTimeTrigger::of(rng.range(1, 8)).unwrap(),
        ),
        5 => return Custom::Deferred,
        6 => return Custom::LateTimer(rng.range(0, 10)),
        7 => return Custom::ProcAfterEnd,
        8 => return Custom::LateEcho(rng.range(0, 20)),
        _ => AnyTrigger::EventTime,
    };
    Custom::Any(if rng.chance(30) {
        AnyTrigger::Purging(Box::new(base))
    } else {
        base
    })
}

fn gen_steps(rng: &mut Rng) -> Vec<Step> {
    let mut wm = rng.range(-30, 0);
    let mut clock = rng.range(-30, 0);
    let n = rng.range(0, 300);
    let nkeys = rng.range(1, 6) as usize;
    std::iter::once(Step::Clock(clock))
        .chain((0..n).map(|i| match rng.range(0, 12) {
            0 | 1 => {
                wm += if rng.chance(10) {
                    rng.range(10, 60)
                } else {
                    rng.range(-3, 8)
                };
                Step::Wm(wm)
            }
            2 => {
                clock += rng.range(0, 10);
                Step::Clock(clock)
            }
            _ => Step::El {
                key: KEYS[rng.range(0, nkeys as i64 - 1) as usize],
                ts: wm + rng.range(-60, 15),
                value: (i * 7 % 13) as f64,
            },
        }))
        .collect()
}

type Out = Vec<Emitted<&'static str, TimeWindow, f64, Contents>>;
/// After a step: window states, keys, timers (event, processing), metrics and live state.
type Held = (usize, usize, (usize, usize), String);
fn run<A, S>(
    mut op: WindowOperator<&'static str, f64, A, Custom, FullWindow<ContentsFn>, S>,
    steps: &[Step],
) -> (Out, Vec<Held>)
where
    A: WindowAssigner<f64, Window = TimeWindow>,
    S: window_operator::TimerStore<TimeWindow>,
{
    let mut out = Vec::new();
    let mut held = Vec::new();
    for s in steps {
        match *s {
            Step::El { key, ts, value } => {
                let _ = op.process_element(key, value, ts, &mut out);
            }
            Step::Wm(w) => {
                op.process_watermark(w, &mut out);
            }
            Step::Clock(t) => op.advance_processing_time(t, &mut out),
        }
        held.push((
            op.live_windows(),
            op.live_keys(),
            op.pending_timers(),
            format!("{:?} {:?}", op.metrics(), op.live_state()),
        ));
    }
    op.process_watermark(i64::MAX, &mut out);
    op.advance_processing_time(10_000, &mut out);
    held.push((
        op.live_windows(),
        op.live_keys(),
        op.pending_timers(),
        format!("{:?}", op.metrics()),
    ));
    (out, held)
}

fn compare<A: WindowAssigner<f64, Window = TimeWindow> + Clone>(
    seed: u64,
    a: A,
    tr: &Custom,
    config: OperatorConfig,
    steps: &[Step],
) -> usize {
    let f = || FullWindow::new(contents_of as ContentsFn);
    let m = WindowOperator::new(a.clone(), tr.clone(), f(), config).unwrap();
    let p = WindowOperator::<_, _, _, _, _, TimerService<KeyId, TimeWindow>>::with_timer_store(
        a,
        tr.clone(),
        f(),
        config,
    )
    .unwrap();
    let (oa, ha) = run(m, steps);
    let (ob, hb) = run(p, steps);
    assert_eq!(
        oa, ob,
        "seed {seed}: records differ {tr:?} {config:?}\n{steps:?}"
    );
    for (i, (x, y)) in ha.iter().zip(&hb).enumerate() {
        assert_eq!(
            x,
            y,
            "seed {seed}: step {i} differs {tr:?} {config:?}\n{:?}",
            &steps[..=i.min(steps.len() - 1)]
        );
    }
    oa.len()
}

/// Cases run (each twice: on both timer stores).
const CASES: u64 = 3_000;

#[test]
fn retired_windows_match_the_plain_timer_service_after_every_step() {
    let mut total = 0;
    for seed in 1..=CASES {
        let mut rng = Rng::new(seed ^ 0xabcdef);
        let trigger = gen_trigger(&mut rng);
        let config = OperatorConfig {
            allowed_lateness: rng.range(1, 40),
            late_data: if rng.chance(50) {
                LateDataPolicy::SideOutput
            } else {
                LateDataPolicy::Drop
            },
        };
        let windows = gen_windows(&mut rng, 80);
        let steps = gen_steps(&mut rng);
        total += match windows {
            Windows::Tumbling { size, offset } => compare(
                seed,
                TumblingWindows::new(size, offset, TimeDomain::EventTime).unwrap(),
                &trigger,
                config,
                &steps,
            ),
            Windows::Sliding {
                size,
                slide,
                offset,
            } => compare(
                seed,
                SlidingWindows::new(size, slide, offset, TimeDomain::EventTime).unwrap(),
                &trigger,
                config,
                &steps,
            ),
        };
    }
    assert!(total > 50 * CASES as usize, "only {total} records");
}
