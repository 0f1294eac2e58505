//! Snapshots of key windows and sliced windows, in event time and processing time: a run cut
//! by snapshots at random steps, each restored into a freshly built computation of the same
//! configuration that carries on, must emit exactly what the uninterrupted run emits (order
//! included) and end with the same counters and live state. Plus torn, foreign and mismatched
//! snapshots, which must be refused with the computation unchanged.

use keywindow::{EmitMode, EventTime, KeyWindows, ProcessingTime, SlicedWindows, SlidingGeometry};
use window_core::{
    Emitted, LateDataPolicy, NumericAggregate, SnapshotError, TimeWindow, Timestamp,
    WindowComputation, WindowMetrics,
};

type Out = Vec<Emitted<u32, TimeWindow, f64, Option<f64>>>;
type Computation = Box<dyn WindowComputation<u32, f64, Window = TimeWindow, Output = Option<f64>>>;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    KeyWindows,
    Sliced(EmitMode),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Domain {
    Event { lateness: i64, late: LateDataPolicy },
    Processing,
}

#[derive(Clone, Copy, Debug)]
struct Config {
    kind: Kind,
    domain: Domain,
    geometry: SlidingGeometry,
    agg: NumericAggregate,
    /// Sliced windows: elements batched before they are folded.
    batch_limit: usize,
}

fn build(c: Config) -> Computation {
    let sliced = |emit| {
        let mut s = SlicedWindows::new(c.geometry, c.agg, emit);
        s.set_batch_limit(c.batch_limit);
        s
    };
    match (c.kind, c.domain) {
        (Kind::KeyWindows, Domain::Event { lateness, late }) => Box::new(
            EventTime::wrap(KeyWindows::new(c.geometry, c.agg), lateness)
                .with_late_data(late)
                .with_snapshots(),
        ),
        (Kind::Sliced(emit), Domain::Event { lateness, late }) => Box::new(
            EventTime::wrap(sliced(emit), lateness)
                .with_late_data(late)
                .with_snapshots(),
        ),
        (Kind::KeyWindows, Domain::Processing) => {
            Box::new(ProcessingTime::wrap(KeyWindows::new(c.geometry, c.agg)).with_snapshots())
        }
        (Kind::Sliced(emit), Domain::Processing) => {
            Box::new(ProcessingTime::wrap(sliced(emit)).with_snapshots())
        }
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Element(u32, f64, Timestamp),
    Watermark(Timestamp),
    Clock(Timestamp),
}

/// Random input: keys drawn from a set that drifts (keys go idle for a while and come back),
/// values with fractions (so that a changed merge order would show in sums and means), event
/// times around a frontier with out-of-order and late elements, or wall-clock steps.
fn input(rng: &mut Rng, c: Config, n: usize) -> Vec<Op> {
    let span = c.geometry.size() + c.geometry.slide();
    let slice = gcd(c.geometry.size(), c.geometry.slide());
    let mut ops = Vec::with_capacity(n + n / 4);
    let mut frontier = rng.range(-3 * span, 3 * span);
    let mut watermark = i64::MIN;
    let mut hot = 0_u32;
    let mut clock = frontier;
    ops.push(Op::Clock(clock));
    for i in 0..n {
        if i % 40 == 0 {
            hot = rng.below(40) as u32; // the active keys move: some go idle, others return
        }
        let key = match rng.below(10) {
            0..=4 => hot + rng.below(4) as u32,
            5..=6 => rng.below(60) as u32,
            _ => 1000 + rng.below(3) as u32, // a few hot keys throughout
        };
        let value = rng.range(-500, 500) as f64 / 7.0;
        match c.domain {
            Domain::Event { .. } => {
                // Slow time mostly (hot keys hold many slices), sometimes faster (sparse keys).
                frontier += if i % 200 < 100 {
                    rng.range(0, slice / 4 + 1)
                } else {
                    rng.range(0, span / 3 + 1)
                };
                if rng.below(150) == 0 {
                    frontier += rng.range(span, 4 * span); // a gap: windows fire, keys idle
                }
                let jitter = rng.range(0, span);
                let t = match rng.below(10) {
                    0 if watermark > i64::MIN => watermark - rng.range(0, span), // late
                    1..=3 => frontier - jitter,                                  // out of order
                    _ => frontier,
                };
                ops.push(Op::Element(key, value, t));
                if rng.below(4) == 0 {
                    watermark = watermark.max(frontier - rng.range(0, span));
                    ops.push(Op::Watermark(watermark));
                }
            }
            Domain::Processing => {
                if rng.below(3) == 0 {
                    clock += if i % 200 < 100 {
                        rng.range(0, slice / 2 + 1)
                    } else {
                        rng.range(0, span / 2 + 1)
                    };
                    if rng.below(150) == 0 {
                        clock += rng.range(span, 4 * span);
                    }
                    ops.push(Op::Clock(clock));
                }
                ops.push(Op::Element(key, value, rng.range(-span, span)));
            }
        }
    }
    ops.push(match c.domain {
        Domain::Event { .. } => Op::Watermark(Timestamp::MAX),
        Domain::Processing => Op::Clock(clock + 10 * span),
    });
    ops
}

fn apply(
    c: &mut dyn WindowComputation<u32, f64, Window = TimeWindow, Output = Option<f64>>,
    op: Op,
    out: &mut Out,
) {
    match op {
        Op::Element(key, value, t) => c.process_element(key, value, t, out).expect("in range"),
        Op::Watermark(w) => {
            c.process_watermark(w, out);
        }
        Op::Clock(now) => c.advance_wall_clock(now, out),
    }
}

fn snapshot_of(c: &Computation) -> Vec<u8> {
    let mut bytes = vec![0xAB]; // snapshots append: something before them stays
    c.snapshot(&mut bytes).expect("snapshot");
    assert_eq!(bytes[0], 0xAB);
    bytes.remove(0);
    bytes
}

/// Snapshots `current`, restores the snapshot into a fresh computation of the same
/// configuration and checks that it holds the same state; returns the fresh one.
fn cut_over(c: Config, current: &Computation, step: usize) -> Computation {
    let bytes = snapshot_of(current);
    let mut fresh = build(c);
    fresh
        .restore(&bytes)
        .unwrap_or_else(|e| panic!("{c:?}: restore at {step}: {e}"));
    // Everything the snapshot holds came back (a restored one snapshots the same bytes).
    assert_eq!(snapshot_of(&fresh), bytes, "{c:?}: step {step}");
    assert_eq!(fresh.metrics(), current.metrics(), "{c:?}");
    assert_eq!(fresh.live_state(), current.live_state(), "{c:?}");
    assert_eq!(fresh.current_watermark(), current.current_watermark());
    fresh
}

/// Runs `ops` whole, then again cut at `cuts` random steps (the end included) by snapshot and
/// restore into a fresh computation; the outputs, counters and live state must be equal.
/// Returns the uninterrupted run's output and counters.
fn check_run(c: Config, ops: &[Op], rng: &mut Rng, cuts: usize) -> (Out, WindowMetrics) {
    let mut whole = build(c);
    let mut expected = Out::new();
    for &op in ops {
        apply(whole.as_mut(), op, &mut expected);
    }

    let mut at: Vec<usize> = (0..cuts)
        .map(|_| rng.below(ops.len() as u64 + 1) as usize)
        .collect();
    at.sort_unstable();
    let mut current = build(c);
    let mut got = Out::new();
    let mut cut = at.iter().peekable();
    for (i, &op) in ops.iter().enumerate() {
        while cut.next_if_eq(&&i).is_some() {
            current = cut_over(c, &current, i);
        }
        apply(current.as_mut(), op, &mut got);
    }
    while cut.next().is_some() {
        current = cut_over(c, &current, ops.len());
    }
    assert_eq!(got.len(), expected.len(), "{c:?}: output length");
    for (k, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g, e, "{c:?}: output {k} of {}", expected.len());
    }
    assert_eq!(current.metrics(), whole.metrics(), "{c:?}: metrics");
    assert_eq!(
        current.live_state(),
        whole.live_state(),
        "{c:?}: live state"
    );
    assert!(!expected.is_empty(), "{c:?}: the run emits something");
    if let Domain::Event { .. } = c.domain {
        assert!(whole.metrics().late_elements > 0, "{c:?}: no late element");
    }
    (expected, whole.metrics())
}

const AGGREGATES: [NumericAggregate; 5] = [
    NumericAggregate::Sum,
    NumericAggregate::Max,
    NumericAggregate::Min,
    NumericAggregate::Mean,
    NumericAggregate::Count,
];

fn geometries() -> Vec<SlidingGeometry> {
    [
        (40, 10, 3),  // sliding, 4 windows per element, offset
        (30, 20, 0),  // sliding, slices of 10 not aligned with the slide
        (20, 20, -5), // tumbling
        (7, 7, 0),    // tumbling, short
        (10, 15, 2),  // gaps between windows: elements in no window
        (100, 5, 0),  // many windows per element
    ]
    .into_iter()
    .map(|(size, slide, offset)| SlidingGeometry::new(size, slide, offset).expect("valid"))
    .collect()
}

fn run_all(kinds: &[Kind], seed: u64) {
    let mut rng = Rng(seed);
    for &kind in kinds {
        for (g, geometry) in geometries().into_iter().enumerate() {
            for round in 0..3 {
                let agg = AGGREGATES[(g + round) % AGGREGATES.len()];
                let domain = match round {
                    0 => Domain::Processing,
                    1 => Domain::Event {
                        lateness: 0,
                        late: LateDataPolicy::SideOutput,
                    },
                    _ => Domain::Event {
                        lateness: geometry.slide(),
                        late: LateDataPolicy::Drop,
                    },
                };
                let c = Config {
                    kind,
                    domain,
                    geometry,
                    agg,
                    batch_limit: [1, 3, 256][(g + round) % 3],
                };
                let ops = input(&mut rng, c, 1500);
                let cuts = 2 + rng.below(7) as usize;
                let (_, m) = check_run(c, &ops, &mut rng, cuts);
                if geometry.slide() > geometry.size() {
                    assert!(m.elements_in_no_window > 0, "{c:?}: no element in a gap");
                }
            }
        }
    }
}

#[test]
fn key_windows_continue_exactly_after_restore() {
    run_all(&[Kind::KeyWindows], 0x5eed_0001);
}

#[test]
fn sliced_all_windows_continue_exactly_after_restore() {
    run_all(&[Kind::Sliced(EmitMode::AllWindows)], 0x5eed_0002);
}

#[test]
fn sliced_changes_continue_exactly_after_restore() {
    run_all(&[Kind::Sliced(EmitMode::Changes)], 0x5eed_0003);
}

#[test]
fn a_snapshot_after_every_step_changes_nothing() {
    // Snapshot and restore between every two calls, for every kind, in both domains.
    let mut rng = Rng(0x5eed_0004);
    let geometry = SlidingGeometry::new(30, 10, 0).unwrap();
    for kind in [
        Kind::KeyWindows,
        Kind::Sliced(EmitMode::AllWindows),
        Kind::Sliced(EmitMode::Changes),
    ] {
        for domain in [
            Domain::Processing,
            Domain::Event {
                lateness: 5,
                late: LateDataPolicy::SideOutput,
            },
        ] {
            let c = Config {
                kind,
                domain,
                geometry,
                agg: NumericAggregate::Max,
                batch_limit: 256,
            };
            let ops = input(&mut rng, c, 1500);
            let cuts = ops.len() + 1;
            // `cuts` random steps, with repeats: most steps are cut, some several times.
            check_run(c, &ops, &mut rng, cuts);
        }
    }
}

#[test]
fn many_sparse_keys_that_go_idle_and_come_back() {
    // Thousands of keys, each seen now and then: sliced windows forget idle keys in sweeps
    // (once thousands are idle) and give returning keys new slots; key windows free and reuse
    // slots. Snapshots fall before and after sweeps.
    let mut rng = Rng(0x5eed_0005);
    let geometry = SlidingGeometry::new(60, 20, 0).unwrap();
    for kind in [
        Kind::KeyWindows,
        Kind::Sliced(EmitMode::AllWindows),
        Kind::Sliced(EmitMode::Changes),
    ] {
        let c = Config {
            kind,
            domain: Domain::Event {
                lateness: 10,
                late: LateDataPolicy::SideOutput,
            },
            geometry,
            agg: NumericAggregate::Sum,
            batch_limit: 256,
        };
        let mut ops = Vec::new();
        let mut t = 0;
        for i in 0..12_000_u64 {
            t += rng.range(0, 1);
            let key = if i % 5 == 0 {
                rng.below(3)
            } else {
                rng.below(9000)
            } as u32;
            let late = rng.below(50) == 0;
            let at = if late { t - 200 } else { t - rng.range(0, 15) };
            ops.push(Op::Element(key, rng.range(0, 100) as f64 / 4.0, at));
            if i % 8 == 0 {
                ops.push(Op::Watermark(t - 20));
            }
        }
        ops.push(Op::Watermark(Timestamp::MAX));
        let (out, m) = check_run(c, &ops, &mut rng, 6);
        assert!(m.late_elements > 0 && out.len() > 10_000, "{c:?}: {m:?}");
    }
}

/// A computation with some state of its own, and the run that continues it.
fn with_state(c: Config, seed: u64) -> (Computation, Vec<Op>) {
    let mut rng = Rng(seed);
    let ops = input(&mut rng, c, 1500);
    let (head, tail) = ops.split_at(60);
    let mut comp = build(c);
    let mut out = Out::new();
    for &op in head {
        apply(comp.as_mut(), op, &mut out);
    }
    (comp, tail.to_vec())
}

/// `c` refuses `bytes` as Invalid and is unchanged: same snapshot, same output afterwards.
fn assert_refused(c: Config, bytes: &[u8], what: &str) -> String {
    let (mut comp, tail) = with_state(c, 99);
    let (mut twin, _) = with_state(c, 99);
    let before = snapshot_of(&comp);
    let err = match comp.restore(bytes) {
        Err(SnapshotError::Invalid(e)) => e,
        other => panic!("{c:?}: {what}: expected Invalid, got {other:?}"),
    };
    assert_eq!(snapshot_of(&comp), before, "{c:?}: {what}: changed");
    let (mut a, mut b) = (Out::new(), Out::new());
    for &op in &tail {
        apply(comp.as_mut(), op, &mut a);
        apply(twin.as_mut(), op, &mut b);
    }
    assert_eq!(a, b, "{c:?}: {what}: output changed");
    err
}

fn config(kind: Kind, domain: Domain) -> Config {
    Config {
        kind,
        domain,
        geometry: SlidingGeometry::new(40, 10, 0).unwrap(),
        agg: NumericAggregate::Sum,
        batch_limit: 256,
    }
}

const EVENT: Domain = Domain::Event {
    lateness: 0,
    late: LateDataPolicy::Drop,
};

#[test]
fn torn_and_garbage_snapshots_are_invalid_and_change_nothing() {
    for kind in [
        Kind::KeyWindows,
        Kind::Sliced(EmitMode::AllWindows),
        Kind::Sliced(EmitMode::Changes),
    ] {
        for domain in [EVENT, Domain::Processing] {
            let c = config(kind, domain);
            let (source, _) = with_state(c, 7);
            let bytes = snapshot_of(&source);
            assert!(bytes.len() > 50, "{c:?}: a snapshot with state");
            // Every cut of the snapshot (a torn write), a few of them checked in full.
            for len in 0..bytes.len() {
                let mut fresh = build(c);
                let r = fresh.restore(&bytes[..len]);
                assert!(
                    matches!(r, Err(SnapshotError::Invalid(_))),
                    "{c:?}: cut at {len}: {r:?}"
                );
                if len % 37 == 0 {
                    assert_refused(c, &bytes[..len], "torn");
                }
            }
            // Trailing bytes.
            let mut longer = bytes.clone();
            longer.push(0);
            let e = assert_refused(c, &longer, "trailing byte");
            assert!(e.contains("after the end"), "{e}");
            // Random bytes.
            let mut rng = Rng(0xbad);
            for n in [1, 2, 8, 64, 1000] {
                let garbage: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                assert_refused(c, &garbage, "garbage");
            }
        }
    }
}

#[test]
fn snapshots_of_another_configuration_or_kind_are_invalid() {
    let all = config(Kind::Sliced(EmitMode::AllWindows), EVENT);
    let (source, _) = with_state(all, 3);
    let bytes = snapshot_of(&source);
    // All windows into changes.
    let e = assert_refused(
        config(Kind::Sliced(EmitMode::Changes), EVENT),
        &bytes,
        "changes",
    );
    assert!(
        e.contains("emit all windows") && e.contains("emit changes"),
        "{e}"
    );
    // Another slide.
    let mut other_slide = all;
    other_slide.geometry = SlidingGeometry::new(40, 20, 0).unwrap();
    let e = assert_refused(other_slide, &bytes, "slide");
    assert!(
        e.contains("slide 10 ms") && e.contains("slide 20 ms"),
        "{e}"
    );
    // Key windows.
    let e = assert_refused(config(Kind::KeyWindows, EVENT), &bytes, "key windows");
    assert!(
        e.contains("keywindow::SlicedWindows") && e.contains("keywindow::KeyWindows"),
        "{e}"
    );
    // Processing time.
    let e = assert_refused(
        config(Kind::Sliced(EmitMode::AllWindows), Domain::Processing),
        &bytes,
        "processing time",
    );
    assert!(e.contains("keywindow::EventTime"), "{e}");
    // Another lateness, another late-data policy.
    for domain in [
        Domain::Event {
            lateness: 5,
            late: LateDataPolicy::Drop,
        },
        Domain::Event {
            lateness: 0,
            late: LateDataPolicy::SideOutput,
        },
    ] {
        assert_refused(
            config(Kind::Sliced(EmitMode::AllWindows), domain),
            &bytes,
            "lateness",
        );
    }
    // Key windows' snapshot into sliced windows, in processing time.
    let kw = config(Kind::KeyWindows, Domain::Processing);
    let (source, _) = with_state(kw, 4);
    let bytes = snapshot_of(&source);
    assert_refused(
        config(Kind::Sliced(EmitMode::Changes), Domain::Processing),
        &bytes,
        "sliced",
    );
}

#[test]
fn without_with_snapshots_a_wrapper_is_unsupported() {
    let g = SlidingGeometry::new(10, 5, 0).unwrap();
    let mut plain = EventTime::wrap(KeyWindows::new(g, NumericAggregate::Sum), 0);
    let mut out = Out::new();
    plain.process_element(1, 2.0, 3, &mut out).unwrap();
    let mut bytes = Vec::new();
    assert!(matches!(
        plain.snapshot(&mut bytes),
        Err(SnapshotError::Unsupported(_))
    ));
    assert!(bytes.is_empty());
    assert!(matches!(
        plain.restore(&[]),
        Err(SnapshotError::Unsupported(_))
    ));
    let mut pt = ProcessingTime::wrap(SlicedWindows::new(
        g,
        NumericAggregate::Sum,
        EmitMode::Changes,
    ));
    assert!(matches!(
        WindowComputation::<u32, f64>::snapshot(&pt, &mut bytes),
        Err(SnapshotError::Unsupported(_))
    ));
    assert!(matches!(
        WindowComputation::<u32, f64>::restore(&mut pt, &[]),
        Err(SnapshotError::Unsupported(_))
    ));
}

#[test]
fn string_keys_and_a_snapshot_mid_batch_restore_exactly() {
    // Text keys, elements still batched (a long slice) at the snapshot.
    let g = SlidingGeometry::new(1000, 500, 0).unwrap();
    let make = || {
        EventTime::wrap(
            SlicedWindows::new(g, NumericAggregate::Mean, EmitMode::Changes),
            0,
        )
        .with_snapshots()
    };
    let keys = ["alpha", "beta", "gamma"];
    let mut whole = make();
    let mut cut = make();
    let (mut expected, mut got) = (Vec::new(), Vec::new());
    for i in 0..40_i64 {
        let key = keys[(i % 3) as usize].to_owned();
        whole
            .process_element(key.clone(), i as f64 / 3.0, i * 20, &mut expected)
            .unwrap();
        whole.process_watermark(i * 20 - 1, &mut expected);
        cut.process_element(key, i as f64 / 3.0, i * 20, &mut got)
            .unwrap();
        cut.process_watermark(i * 20 - 1, &mut got);
        if i % 7 == 3 {
            let mut bytes = Vec::new();
            WindowComputation::snapshot(&cut, &mut bytes).unwrap();
            cut = make();
            WindowComputation::restore(&mut cut, &bytes).unwrap();
        }
    }
    whole.process_watermark(Timestamp::MAX, &mut expected);
    cut.process_watermark(Timestamp::MAX, &mut got);
    assert_eq!(got, expected);
    assert_eq!(expected.len(), 12, "{expected:?}");
    // alpha holds i = 0, 3, ..., 39 at 20 i ms: in [0, 1000), the values 0 to 13.
    let window = TimeWindow::new(0, 1000);
    assert!(expected.contains(&Emitted::Result {
        key: "alpha".to_owned(),
        window,
        result: Some(6.5),
        watermark: 999
    }));
    assert_eq!(cut.metrics(), whole.metrics());
}
