//! Snapshots of the window operator: a job run with snapshots taken and restored into freshly
//! built operators emits exactly what the uninterrupted run emits.
//!
//! Random jobs over every assigner (tumbling, sliding with and without gaps, sessions with a
//! static and a dynamic gap, global windows, count windows), in event time and processing time,
//! with every built-in trigger (purging or not), incremental aggregation or the full contents
//! with and without an evictor, allowed lateness 0 or more, late data dropped or sent to the
//! side output, and timers in both stores (`MarkedTimers`, `TimerService`). Inputs come with
//! disorder (elements behind the watermark, some beyond the lateness), negative timestamps,
//! watermark and wall-clock advances. Each run is cut at several random steps: the operator
//! writes a snapshot, a fresh operator of the same configuration loads it and runs on (a later
//! cut snapshots that restored operator). The concatenated records, the rejected elements, and
//! at the end the counters, the live state, the watermark and the next processing-time timer
//! must equal the uninterrupted run's. Cases come from a seeded generator, so a failure names
//! its seed.
//!
//! Also: torn, garbled and foreign bytes are refused with `SnapshotError::Invalid` and leave
//! the operator as it was; a snapshot of another configuration names what differs; an
//! operator made without `with_snapshots` answers `Unsupported`.

#[allow(
    dead_code,
    reason = "this test uses the generator, not the reference assignment"
)]
mod common;

use std::sync::Arc;

use common::Rng;
use timer_service::TimerService;
use window_assigners::{
    GlobalWindows, SessionWindows, SlidingWindows, TimeDomain, TumblingWindows, WindowAssigner,
};
use window_core::{
    AnyWindow, Converted, ElementError, Emitted, NumericAggregate, SnapshotError, Timestamp,
    TimestampedValue, WindowComputation,
};
use window_operator::{
    AnyEvictor, CountEvictor, DeltaEvictor, EvictMoment, Evicting, Incremental, KeyId,
    LateDataPolicy, OperatorConfig, TimeEvictor, WindowOperator,
};
use window_triggers::{
    AnyTrigger, AnyTriggerState, ContinuousEventTimeTrigger, ContinuousProcessingTimeTrigger,
    CountTrigger, DeltaTrigger, Trigger,
};

const CASES: u64 = 1_500;

/// A window's result: a number (incremental) or the contents left after eviction.
#[derive(Clone, Debug, PartialEq)]
enum Res {
    Number(Option<f64>),
    Contents(Vec<(Timestamp, f64)>),
}

impl From<Option<f64>> for Res {
    fn from(v: Option<f64>) -> Self {
        Res::Number(v)
    }
}

type ContentsFn = fn(&[TimestampedValue<f64>]) -> Res;

fn contents_of(els: &[TimestampedValue<f64>]) -> Res {
    Res::Contents(els.iter().map(|e| (e.timestamp, e.value)).collect())
}

type Op = Box<dyn WindowComputation<String, f64, Window = AnyWindow, Output = Res>>;
type Out = Vec<Emitted<String, AnyWindow, f64, Res>>;

#[derive(Clone, Copy, Debug)]
enum Assigner {
    Tumbling { size: i64, offset: i64 },
    Sliding { size: i64, slide: i64, offset: i64 },
    Session { gap: i64 },
    DynamicSession,
    Global,
}

/// One job's configuration: everything a fresh operator is built from.
#[derive(Clone, Debug)]
struct Case {
    assigner: Assigner,
    domain: TimeDomain,
    trigger: AnyTrigger<f64>,
    /// `None`: the full contents (with `evictor`).
    aggregate: Option<NumericAggregate>,
    evictor: Option<AnyEvictor<f64>>,
    config: OperatorConfig,
    plain_timers: bool,
}

/// The gap of an element of a dynamic session: its value, so that 0 is rejected.
fn gap_of(v: &f64) -> i64 {
    *v as i64
}

fn build(case: &Case) -> Option<Op> {
    let d = case.domain;
    match case.assigner {
        Assigner::Tumbling { size, offset } => {
            with_assigner(case, TumblingWindows::new(size, offset, d).ok()?)
        }
        Assigner::Sliding {
            size,
            slide,
            offset,
        } => with_assigner(case, SlidingWindows::new(size, slide, offset, d).ok()?),
        Assigner::Session { gap } => with_assigner(case, SessionWindows::with_gap(gap, d).ok()?),
        Assigner::DynamicSession => {
            with_assigner(case, SessionWindows::with_dynamic_gap(Arc::new(gap_of), d))
        }
        Assigner::Global => with_assigner(case, GlobalWindows::create()),
    }
}

fn with_assigner<A>(case: &Case, assigner: A) -> Option<Op>
where
    A: WindowAssigner<f64> + 'static,
    A::Window: serde::Serialize + serde::de::DeserializeOwned + 'static,
    AnyWindow: From<A::Window>,
    AnyTrigger<f64>: Trigger<f64, A::Window, State = AnyTriggerState<f64>>,
{
    let trigger = case.trigger.clone();
    let config = case.config;
    let evicting = || Evicting::new(case.evictor.clone(), contents_of as ContentsFn);
    type Plain<W> = TimerService<KeyId, W>;
    Some(match (case.aggregate, case.plain_timers) {
        (Some(agg), false) => erase(
            WindowOperator::new(assigner, trigger, Incremental(agg), config)
                .ok()?
                .with_snapshots(),
        ),
        (Some(agg), true) => erase(
            WindowOperator::<_, _, _, _, _, Plain<A::Window>>::with_timer_store(
                assigner,
                trigger,
                Incremental(agg),
                config,
            )
            .ok()?
            .with_snapshots(),
        ),
        (None, false) => erase(
            WindowOperator::new(assigner, trigger, evicting(), config)
                .ok()?
                .with_snapshots(),
        ),
        (None, true) => erase(
            WindowOperator::<_, _, _, _, _, Plain<A::Window>>::with_timer_store(
                assigner,
                trigger,
                evicting(),
                config,
            )
            .ok()?
            .with_snapshots(),
        ),
    })
}

fn erase<C>(c: C) -> Op
where
    C: WindowComputation<String, f64> + 'static,
    AnyWindow: From<C::Window>,
    Res: From<C::Output>,
{
    Box::new(Converted::<C, AnyWindow, Res>::new(c))
}

fn gen_trigger(rng: &mut Rng, domain: TimeDomain) -> AnyTrigger<f64> {
    let base = match rng.range(0, 8) {
        0 => AnyTrigger::ProcessingTime,
        1 => AnyTrigger::Count(CountTrigger::of(rng.range(1, 4) as u64).unwrap()),
        2 => AnyTrigger::ContinuousEventTime(
            ContinuousEventTimeTrigger::of(rng.range(1, 8)).unwrap(),
        ),
        3 => AnyTrigger::ContinuousProcessingTime(
            ContinuousProcessingTimeTrigger::of(rng.range(1, 8)).unwrap(),
        ),
        4 => AnyTrigger::Delta(DeltaTrigger::of(
            rng.range(1, 6) as f64,
            Arc::new(|old: &f64, new: &f64| (new - old).abs()),
        )),
        5 => AnyTrigger::Never,
        // The default of the domain, twice as often.
        _ if domain == TimeDomain::ProcessingTime => AnyTrigger::ProcessingTime,
        _ => AnyTrigger::EventTime,
    };
    if rng.chance(25) {
        base.purging()
    } else {
        base
    }
}

fn gen_evictor(rng: &mut Rng) -> Option<AnyEvictor<f64>> {
    let moment = if rng.chance(50) {
        EvictMoment::Before
    } else {
        EvictMoment::After
    };
    match rng.range(0, 4) {
        0 => Some(AnyEvictor::Count(CountEvictor::of(
            rng.range(0, 3) as usize,
            moment,
        ))),
        1 => Some(AnyEvictor::Time(TimeEvictor::of(rng.range(1, 6), moment))),
        2 => Some(AnyEvictor::Delta(DeltaEvictor::of(
            rng.range(1, 6) as f64,
            Arc::new(|a: &f64, b: &f64| (a - b).abs()),
            moment,
        ))),
        _ => None,
    }
}

fn gen_assigner(rng: &mut Rng) -> Assigner {
    match rng.range(0, 9) {
        0 | 1 => {
            let size = rng.range(1, 15);
            Assigner::Tumbling {
                size,
                offset: rng.range(-(size - 1), size - 1),
            }
        }
        2..=4 => {
            let size = rng.range(1, 20);
            let slide = if rng.chance(80) {
                rng.range(1, size)
            } else {
                rng.range(1, 15)
            };
            Assigner::Sliding {
                size,
                slide,
                offset: rng.range(-(slide - 1), slide - 1),
            }
        }
        5 | 6 => Assigner::Session {
            gap: rng.range(1, 12),
        },
        7 => Assigner::DynamicSession,
        _ => Assigner::Global,
    }
}

fn gen_case(rng: &mut Rng) -> Case {
    let domain = if rng.chance(70) {
        TimeDomain::EventTime
    } else {
        TimeDomain::ProcessingTime
    };
    let assigner = gen_assigner(rng);
    let mut trigger = gen_trigger(rng, domain);
    let (aggregate, mut evictor) = if rng.chance(50) {
        (Some(NumericAggregate::Sum), None)
    } else {
        (None, gen_evictor(rng))
    };
    // Count windows, as Flink's countWindow builds them, now and then.
    if matches!(assigner, Assigner::Global) && rng.chance(50) {
        let n = rng.range(1, 4) as u64;
        trigger = AnyTrigger::Count(CountTrigger::of(n).unwrap());
        if aggregate.is_some() {
            trigger = trigger.purging();
        } else {
            let size = rng.range(1, 5) as usize;
            evictor = Some(AnyEvictor::Count(CountEvictor::of(
                size,
                EvictMoment::Before,
            )));
        }
    }
    let config = OperatorConfig {
        allowed_lateness: if rng.chance(50) { 0 } else { rng.range(1, 15) },
        late_data: if rng.chance(50) {
            LateDataPolicy::SideOutput
        } else {
            LateDataPolicy::Drop
        },
    };
    Case {
        assigner,
        domain,
        trigger,
        aggregate,
        evictor,
        config,
        plain_timers: rng.chance(30),
    }
}

#[derive(Clone, Debug)]
enum Step {
    Element { key: u8, ts: Timestamp, value: f64 },
    Watermark(Timestamp),
    Clock(Timestamp),
}

fn gen_steps(rng: &mut Rng) -> Vec<Step> {
    let mut wm = rng.range(-60, 0);
    let mut clock = rng.range(-60, 0);
    // The clock is set first, as a runtime does (from i64::MIN a continuous processing-time
    // trigger would fire every interval up to the first reading).
    let mut steps = vec![Step::Clock(clock)];
    for _ in 0..rng.range(0, 70) {
        steps.push(match rng.range(0, 9) {
            0 | 1 => {
                wm += rng.range(-3, 10);
                Step::Watermark(wm)
            }
            2 => {
                clock += rng.range(0, 10);
                Step::Clock(clock)
            }
            _ => Step::Element {
                key: rng.range(0, 3) as u8,
                ts: wm.max(clock) + rng.range(-25, 15),
                value: rng.range(0, 9) as f64,
            },
        });
    }
    steps
}

/// A rejected element: the step and why.
type Rejections = Vec<(usize, ElementError)>;

fn apply(op: &mut Op, i: usize, step: &Step, out: &mut Out, rejected: &mut Rejections) {
    match *step {
        Step::Element { key, ts, value } => {
            if let Err(r) = op.process_element(format!("k{key}"), value, ts, out) {
                rejected.push((i, r.error));
            }
        }
        Step::Watermark(w) => {
            op.process_watermark(w, out);
        }
        Step::Clock(t) => op.advance_wall_clock(t, out),
    }
}

/// The end of input: the final watermark, and the clock past every window of the case (not to
/// `i64::MAX`: a continuous trigger would fire every interval up to there).
fn finish(op: &mut Op, out: &mut Out) {
    op.process_watermark(i64::MAX, out);
    op.advance_wall_clock(300, out);
}

/// What an operator shows of itself besides its output. The next processing-time timer may
/// be one deleted since; a `TimerService` lists only its live timers, so a restored one may
/// name a later time (`MarkedTimers` keep even the deleted entries).
fn observe(case: &Case, op: &Op) -> impl PartialEq + std::fmt::Debug {
    (
        op.metrics(),
        op.live_state(),
        op.current_watermark(),
        op.next_processing_time_timer()
            .filter(|_| !case.plain_timers),
    )
}

/// A fresh operator of `case`, loaded from a snapshot of `op`.
fn snapshot_and_restore(seed: u64, case: &Case, op: &Op) -> Op {
    let mut bytes = Vec::new();
    op.snapshot(&mut bytes).unwrap();
    let mut fresh = build(case).unwrap();
    fresh
        .restore(&bytes)
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    assert_eq!(
        observe(case, &fresh),
        observe(case, op),
        "seed {seed}: restored state differs"
    );
    fresh
}

/// Runs `steps` uninterrupted and cut at `cuts`; both must give the same everything.
fn compare(seed: u64, case: &Case, steps: &[Step], cuts: &[usize]) -> usize {
    let mut op = build(case).unwrap();
    let (mut expected, mut expected_rejected) = (Out::new(), Rejections::new());
    for (i, s) in steps.iter().enumerate() {
        apply(&mut op, i, s, &mut expected, &mut expected_rejected);
    }
    finish(&mut op, &mut expected);

    let mut cut = build(case).unwrap();
    let (mut got, mut got_rejected) = (Out::new(), Rejections::new());
    for (i, s) in steps.iter().enumerate() {
        if cuts.contains(&i) {
            cut = snapshot_and_restore(seed, case, &cut);
        }
        apply(&mut cut, i, s, &mut got, &mut got_rejected);
    }
    finish(&mut cut, &mut got);
    assert_eq!(
        got, expected,
        "seed {seed}: records differ\n{case:?}\ncuts {cuts:?}\n{steps:?}"
    );
    assert_eq!(got_rejected, expected_rejected, "seed {seed}: rejections");
    assert_eq!(
        observe(case, &cut),
        observe(case, &op),
        "seed {seed}: end state"
    );
    // And after the end.
    let restored = snapshot_and_restore(seed, case, &cut);
    assert_eq!(
        observe(case, &restored),
        observe(case, &op),
        "seed {seed}: after the end"
    );
    expected.len()
}

#[test]
fn a_job_cut_by_snapshots_emits_what_the_uninterrupted_job_emits() {
    let (mut records, mut compared) = (0, 0);
    let mut late = 0;
    for seed in 1..=CASES {
        let mut rng = Rng::new(seed);
        let mut case = gen_case(&mut rng);
        // Session windows refuse triggers that cannot merge: take the domain's default.
        if build(&case).is_none() {
            case.trigger = match case.domain {
                TimeDomain::EventTime => AnyTrigger::EventTime,
                TimeDomain::ProcessingTime => AnyTrigger::ProcessingTime,
            };
        }
        let steps = gen_steps(&mut rng);
        let mut cuts: Vec<usize> = (0..rng.range(1, 4))
            .map(|_| rng.range(0, steps.len() as i64) as usize)
            .collect();
        cuts.sort_unstable();
        if std::env::var_os("SNAPSHOT_TRACE").is_some() {
            eprintln!("seed {seed}: {case:?}\ncuts {cuts:?}\n{steps:?}");
        }
        records += compare(seed, &case, &steps, &cuts);
        compared += 1;
        let mut op = build(&case).unwrap();
        let mut out = Out::new();
        steps.iter().enumerate().for_each(|(i, s)| {
            apply(&mut op, i, s, &mut out, &mut Vec::new());
        });
        late += out
            .iter()
            .filter(|e| matches!(e, Emitted::Late { .. }))
            .count();
    }
    assert_eq!(compared, CASES);
    assert!(records > 10 * CASES as usize, "only {records} records");
    assert!(late > 100, "only {late} late elements on the side output");
}

/// The steps of `case` from `from` on, and the end, into a fresh output.
fn run_rest(op: &mut Op, steps: &[Step], from: usize) -> (Out, Rejections) {
    let (mut out, mut rejected) = (Out::new(), Rejections::new());
    for (i, s) in steps.iter().enumerate().skip(from) {
        apply(op, i, s, &mut out, &mut rejected);
    }
    finish(op, &mut out);
    (out, rejected)
}

fn expect_invalid(r: Result<(), SnapshotError>, what: &str) -> String {
    match r {
        Err(SnapshotError::Invalid(why)) => why,
        other => panic!("{what}: {other:?}"),
    }
}

#[test]
fn torn_garbled_and_foreign_bytes_are_refused_and_change_nothing() {
    let mut garbled_loaded = 0;
    for seed in 1..=60 {
        let mut rng = Rng::new(seed);
        let case = gen_case(&mut rng);
        let Some(mut op) = build(&case) else { continue };
        let steps = gen_steps(&mut rng);
        let half = steps.len() / 2;
        let mut out = Out::new();
        for (i, s) in steps.iter().enumerate().take(half) {
            apply(&mut op, i, s, &mut out, &mut Vec::new());
        }
        let mut bytes = Vec::new();
        op.snapshot(&mut bytes).unwrap();
        // The uninterrupted rest, from an operator restored cleanly.
        let mut clean = build(&case).unwrap();
        clean.restore(&bytes).unwrap();
        let expected = run_rest(&mut clean, &steps, half);
        // Every torn snapshot, trailing bytes, bytes of nothing.
        for len in 0..bytes.len() {
            expect_invalid(
                op.restore(&bytes[..len]),
                &format!("seed {seed}: torn at {len}"),
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        let why = expect_invalid(op.restore(&longer), "trailing byte");
        assert!(why.contains("1 bytes after the end"), "{why}");
        for n in [1, 3, 8, 40, 300] {
            let junk: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
            expect_invalid(op.restore(&junk), &format!("seed {seed}: {n} random bytes"));
        }
        // A changed byte may still decode (a timestamp, say): never a panic, and refused
        // bytes leave the operator as it was (a fresh one here, so that a loaded one goes).
        for _ in 0..20 {
            let mut garbled = bytes.clone();
            let i = rng.range(0, bytes.len() as i64 - 1) as usize;
            garbled[i] ^= 1 << rng.range(0, 7);
            match op.restore(&garbled) {
                Ok(()) => {
                    garbled_loaded += 1;
                    op = build(&case).unwrap();
                    op.restore(&bytes).unwrap();
                }
                Err(e) => assert!(matches!(e, SnapshotError::Invalid(_)), "{e:?}"),
            }
        }
        // The operator is unchanged by all that: it goes on as the clean one.
        assert_eq!(run_rest(&mut op, &steps, half), expected, "seed {seed}");
    }
    assert!(
        garbled_loaded > 0,
        "no garbled snapshot decoded: the test is weak"
    );
}

/// The operator of `case` after a few elements, and its snapshot.
fn snapshot_of(case: &Case) -> (Op, Vec<u8>) {
    let mut op = build(case).unwrap();
    let mut out = Out::new();
    // A clock that is set: at i64::MIN no processing-time window fits in i64.
    op.advance_wall_clock(0, &mut out);
    for (k, ts) in [(0, 1), (1, 4), (0, 12), (2, -7)] {
        op.process_element(format!("k{k}"), 1.0, ts, &mut out)
            .unwrap();
    }
    op.process_watermark(3, &mut out);
    let mut bytes = Vec::new();
    op.snapshot(&mut bytes).unwrap();
    (op, bytes)
}

#[test]
fn a_snapshot_of_another_configuration_is_refused_naming_the_difference() {
    let tumbling = Case {
        assigner: Assigner::Tumbling {
            size: 10,
            offset: 0,
        },
        domain: TimeDomain::EventTime,
        trigger: AnyTrigger::EventTime,
        aggregate: Some(NumericAggregate::Sum),
        evictor: None,
        config: OperatorConfig {
            allowed_lateness: 5,
            late_data: LateDataPolicy::SideOutput,
        },
        plain_timers: false,
    };
    let (_, bytes) = snapshot_of(&tumbling);
    let others = [
        (
            Case {
                assigner: Assigner::Session { gap: 10 },
                ..tumbling.clone()
            },
            "window assigner tumbling(10 ms, offset 0 ms), this one has session(gap 10 ms)",
        ),
        (
            Case {
                domain: TimeDomain::ProcessingTime,
                ..tumbling.clone()
            },
            "time domain event-time, this one has processing-time",
        ),
        (
            Case {
                trigger: AnyTrigger::Count(CountTrigger::of(2).unwrap()),
                ..tumbling.clone()
            },
            "trigger EventTimeTrigger, this one has CountTrigger(2)",
        ),
        (
            Case {
                config: OperatorConfig {
                    allowed_lateness: 0,
                    ..tumbling.config
                },
                ..tumbling.clone()
            },
            "allowed lateness (ms) 5, this one has 0",
        ),
        (
            Case {
                config: OperatorConfig {
                    late_data: LateDataPolicy::Drop,
                    ..tumbling.config
                },
                ..tumbling.clone()
            },
            "late side output true, this one has false",
        ),
        (
            Case {
                plain_timers: true,
                ..tumbling.clone()
            },
            "timer store MarkedTimers, this one has TimerService",
        ),
    ];
    for (other, difference) in others {
        let (mut op, own) = snapshot_of(&other);
        let why = expect_invalid(op.restore(&bytes), difference);
        assert!(why.contains(difference), "{why}");
        // Unchanged: its snapshot is what it was.
        let mut again = Vec::new();
        op.snapshot(&mut again).unwrap();
        assert_eq!(again, own);
    }
    // Bytes of another kind of computation.
    let foreign = postcard::to_stdvec(&("keywindow", 1_u8, 2_u8)).unwrap();
    let (mut op, _) = snapshot_of(&tumbling);
    let why = expect_invalid(op.restore(&foreign), "foreign");
    assert!(
        why.contains("a snapshot of keywindow, not of flink-window-operator"),
        "{why}"
    );
}

#[test]
fn an_operator_made_without_snapshots_says_it_cannot() {
    let a = TumblingWindows::new(10, 0, TimeDomain::EventTime).unwrap();
    let mut op = WindowOperator::new(
        a,
        AnyTrigger::EventTime,
        Incremental(NumericAggregate::Sum),
        OperatorConfig::default(),
    )
    .unwrap();
    let mut out = Vec::new();
    op.process_element("a".to_owned(), 1.0, 3, &mut out)
        .unwrap();
    let mut bytes = Vec::new();
    let e = op.snapshot(&mut bytes).unwrap_err();
    assert!(
        matches!(&e, SnapshotError::Unsupported(w) if w.contains("with_snapshots")),
        "{e:?}"
    );
    assert!(bytes.is_empty());
    assert!(matches!(
        op.restore(&[]),
        Err(SnapshotError::Unsupported(_))
    ));
}
