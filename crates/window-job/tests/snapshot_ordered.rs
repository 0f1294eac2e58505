//! Snapshots of the key-window and sliced-window jobs `window_job::build` makes
//! (`--strategy keywindow`, `sliced`, `sliced:changes`), in event time and processing time: a
//! seeded random run cut by snapshots at random steps, each restored into a computation freshly
//! built from the same `JobSpec`, must emit exactly what the uninterrupted run emits, in the
//! same order, and end with the same counters and live state. A snapshot of one job restored
//! into a job of another strategy, slide or lateness is refused, the computation unchanged.

use keywindow::EmitMode;
use window_core::Number;
use window_core::{AnyWindow, Emitted, LateDataPolicy, SnapshotError, Timestamp};
use window_job::{build, Computation, JobAggregate, JobResult, JobSpec, Strategy, WindowSpec};

type Out = Vec<Emitted<String, AnyWindow, Number, JobResult>>;

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
}

#[derive(Clone, Debug)]
enum Op {
    Element(String, f64, Timestamp),
    Watermark(Timestamp),
    Clock(Timestamp),
}

const STRATEGIES: [Strategy; 3] = [
    Strategy::KeyWindow,
    Strategy::Sliced(EmitMode::AllWindows),
    Strategy::Sliced(EmitMode::Changes),
];

fn spec(strategy: Strategy, size: i64, slide: i64, aggregate: &str, event_time: bool) -> JobSpec {
    let window = WindowSpec::Sliding {
        size,
        slide,
        offset: 0,
    };
    let mut spec = JobSpec::new(window, aggregate.parse::<JobAggregate>().unwrap());
    spec.strategy = strategy;
    if !event_time {
        spec.time = window_assigners::TimeDomain::ProcessingTime;
    }
    spec
}

fn make(spec: &JobSpec) -> Computation<String> {
    build::<String>(spec).expect("valid job")
}

/// Random input over keys that come and go; late and out-of-order elements in event time.
fn input(rng: &mut Rng, spec: &JobSpec, n: usize) -> Vec<Op> {
    let WindowSpec::Sliding { size, slide, .. } = spec.window else {
        unreachable!("sliding jobs")
    };
    let event_time = spec.time == window_assigners::TimeDomain::EventTime;
    let mut ops = vec![Op::Clock(0)];
    let (mut t, mut watermark, mut hot) = (0_i64, i64::MIN, 0_u64);
    for i in 0..n {
        if i % 50 == 0 {
            hot = rng.below(30);
        }
        let key = match rng.below(4) {
            0 | 1 => format!("k{}", hot + rng.below(4)),
            2 => format!("k{}", rng.below(40)),
            _ => "hot".to_owned(),
        };
        let value = rng.range(-300, 300) as f64 / 8.0;
        t += rng.range(0, slide / 3 + 1);
        if rng.below(100) == 0 {
            t += rng.range(size, 3 * size); // every key goes idle
        }
        if event_time {
            let at = match rng.below(8) {
                0 if watermark > i64::MIN => watermark - rng.range(0, size), // late
                1 | 2 => t - rng.range(0, size),                             // out of order
                _ => t,
            };
            ops.push(Op::Element(key, value, at));
            if rng.below(3) == 0 {
                watermark = watermark.max(t - rng.range(0, slide));
                ops.push(Op::Watermark(watermark));
            }
        } else {
            if rng.below(3) == 0 {
                ops.push(Op::Clock(t));
            }
            ops.push(Op::Element(key, value, 0));
        }
    }
    ops.push(if event_time {
        Op::Watermark(Timestamp::MAX)
    } else {
        Op::Clock(t + 10 * size)
    });
    ops
}

fn apply(c: &mut Computation<String>, op: &Op, out: &mut Out) {
    match op {
        Op::Element(key, value, t) => c
            .process_element(key.clone(), Number::from(*value), *t, out)
            .expect("in range"),
        Op::Watermark(w) => {
            c.process_watermark(*w, out);
        }
        Op::Clock(now) => c.advance_wall_clock(*now, out),
    }
}

fn snapshot_of(c: &Computation<String>) -> Vec<u8> {
    let mut bytes = Vec::new();
    c.snapshot(&mut bytes).expect("snapshot");
    bytes
}

fn check(spec: &JobSpec, seed: u64) {
    let mut rng = Rng(seed);
    let ops = input(&mut rng, spec, 1200);
    let mut whole = make(spec);
    let mut expected = Out::new();
    for op in &ops {
        apply(&mut whole, op, &mut expected);
    }
    let mut at: Vec<usize> = (0..5)
        .map(|_| rng.below(ops.len() as u64) as usize)
        .collect();
    at.sort_unstable();
    let mut current = make(spec);
    let mut got = Out::new();
    for (i, op) in ops.iter().enumerate() {
        for _ in at.iter().filter(|&&a| a == i) {
            let bytes = snapshot_of(&current);
            let mut fresh = make(spec);
            fresh
                .restore(&bytes)
                .unwrap_or_else(|e| panic!("{spec:?}: step {i}: {e}"));
            assert_eq!(snapshot_of(&fresh), bytes, "{:?}", spec.strategy);
            current = fresh;
        }
        apply(&mut current, op, &mut got);
    }
    assert_eq!(got.len(), expected.len(), "{spec:?}");
    for (k, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g, e, "{spec:?}: output {k}");
    }
    assert_eq!(current.metrics(), whole.metrics(), "{spec:?}");
    assert_eq!(current.live_state(), whole.live_state(), "{spec:?}");
    assert!(expected.len() > 100, "{spec:?}: {} results", expected.len());
    if spec.time == window_assigners::TimeDomain::EventTime {
        assert!(
            whole.metrics().late_elements > 0,
            "{spec:?}: no late element"
        );
    }
}

#[test]
fn ordered_jobs_continue_exactly_after_restore() {
    let mut seed = 0x0b5e_55ed;
    for strategy in STRATEGIES {
        for (size, slide, aggregate) in [(40, 10, "sum"), (20, 20, "max"), (30, 10, "min")] {
            for event_time in [true, false] {
                let mut s = spec(strategy, size, slide, aggregate, event_time);
                if event_time && slide == 10 {
                    s.allowed_lateness = 5;
                    s.late_data = LateDataPolicy::SideOutput;
                }
                seed += 1;
                check(&s, seed);
            }
        }
    }
}

#[test]
fn window_all_jobs_continue_exactly_after_restore() {
    for strategy in STRATEGIES {
        let mut s = spec(strategy, 40, 10, "mean", true);
        s.window_all = true;
        check(&s, 77);
    }
}

#[test]
fn a_snapshot_of_another_job_is_invalid_and_changes_nothing() {
    let all = spec(Strategy::Sliced(EmitMode::AllWindows), 40, 10, "sum", true);
    let mut rng = Rng(5);
    let ops = input(&mut rng, &all, 200);
    let mut source = make(&all);
    let mut sink = Out::new();
    for op in &ops[..100] {
        apply(&mut source, op, &mut sink);
    }
    let bytes = snapshot_of(&source);
    let mut lateness = all.clone();
    lateness.allowed_lateness = 7;
    let others = [
        spec(Strategy::Sliced(EmitMode::Changes), 40, 10, "sum", true),
        spec(Strategy::Sliced(EmitMode::AllWindows), 40, 20, "sum", true),
        spec(Strategy::KeyWindow, 40, 10, "sum", true),
        spec(Strategy::Sliced(EmitMode::AllWindows), 40, 10, "sum", false),
        lateness,
    ];
    for other in others {
        let mut target = make(&other);
        let mut twin = make(&other);
        let (mut a, mut b) = (Out::new(), Out::new());
        for op in &ops[..50] {
            apply(&mut target, op, &mut a);
            apply(&mut twin, op, &mut b);
        }
        let before = snapshot_of(&target);
        assert!(
            matches!(target.restore(&bytes), Err(SnapshotError::Invalid(_))),
            "{other:?}"
        );
        assert_eq!(snapshot_of(&target), before, "{other:?}");
        for op in &ops[50..] {
            apply(&mut target, op, &mut a);
            apply(&mut twin, op, &mut b);
        }
        assert_eq!(a, b, "{other:?}");
        // Torn and garbage bytes too.
        for torn in [&bytes[..bytes.len() / 2], &[0xff; 9][..], &[][..]] {
            assert!(matches!(
                target.restore(torn),
                Err(SnapshotError::Invalid(_))
            ));
        }
    }
}
