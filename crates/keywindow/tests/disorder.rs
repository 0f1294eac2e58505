//! Sliced windows under disorder and lateness (issue #15): in event time, `sliced` (all
//! windows) takes every element the native operator takes, an element behind the watermark
//! joins the windows that have not fired, and with allowed lateness fired windows not cleaned
//! up fire again. Against the native `WindowOperator` (checked against Flink by the
//! conformance cases): the rows and the late output are the same multisets, for random
//! geometries (gaps included), offsets, negative times, every aggregate, lateness 0 and above,
//! and inputs with elements behind the watermark, within the lateness and beyond it.

use keywindow::{EmitMode, EventTimeSlicedWindows, SlidingGeometry};
use window_assigners::{DefaultTrigger, SlidingWindows, TimeDomain};
use window_core::{
    Converted, Emitted, LateDataPolicy, NumericAggregate, TimeWindow, WindowComputation,
};
use window_operator::{Incremental, OperatorConfig, WindowOperator};

type Out = Vec<Emitted<u32, TimeWindow, f64, Option<f64>>>;

/// Results as (key, start, end, value bits, watermark when emitted), late elements as (key,
/// time, watermark).
type Multisets = (Vec<(u32, i64, i64, Option<u64>, i64)>, Vec<(u32, i64, i64)>);

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

/// What one run hands a computation: elements and watermarks, in arrival order.
#[derive(Clone, Copy, Debug)]
enum Step {
    Element(i64, u32, f64),
    Watermark(i64),
}

#[derive(Clone, Copy, Debug)]
struct Case {
    size: i64,
    slide: i64,
    offset: i64,
    agg: NumericAggregate,
    lateness: i64,
}

const AGGREGATES: [NumericAggregate; 5] = [
    NumericAggregate::Count,
    NumericAggregate::Sum,
    NumericAggregate::Min,
    NumericAggregate::Max,
    NumericAggregate::Mean,
];

fn run(
    c: &mut dyn WindowComputation<u32, f64, Window = TimeWindow, Output = Option<f64>>,
    steps: &[Step],
) -> Out {
    let mut out = Out::new();
    for s in steps {
        match *s {
            Step::Element(t, k, v) => c.process_element(k, v, t, &mut out).unwrap(),
            Step::Watermark(w) => {
                c.process_watermark(w, &mut out);
            }
        }
    }
    c.process_watermark(i64::MAX, &mut out);
    out
}

fn native(case: Case, steps: &[Step]) -> (Out, u64) {
    let assigner =
        SlidingWindows::new(case.size, case.slide, case.offset, TimeDomain::EventTime).unwrap();
    let trigger = assigner.default_trigger();
    let config = OperatorConfig {
        allowed_lateness: case.lateness,
        late_data: LateDataPolicy::SideOutput,
    };
    let mut op = WindowOperator::new(assigner, trigger, Incremental(case.agg), config).unwrap();
    let out = run(&mut op, steps);
    (out, op.metrics().late_elements)
}

fn sliced(case: Case, steps: &[Step]) -> (Out, u64) {
    let g = SlidingGeometry::new(case.size, case.slide, case.offset).unwrap();
    let mut s = EventTimeSlicedWindows::new(g, case.agg, EmitMode::AllWindows, case.lateness)
        .with_late_data(LateDataPolicy::SideOutput);
    let out = run(&mut s, steps);
    (out, s.late_elements())
}

/// [`sliced`] behind [`Converted`], which hands it its output by the output's type
/// (`process_element_to`, `process_watermark_to`: direct calls per result, not virtual ones).
fn sliced_converted(case: Case, steps: &[Step]) -> (Out, u64) {
    let g = SlidingGeometry::new(case.size, case.slide, case.offset).unwrap();
    let s = EventTimeSlicedWindows::new(g, case.agg, EmitMode::AllWindows, case.lateness)
        .with_late_data(LateDataPolicy::SideOutput);
    let mut c = Converted::<_, TimeWindow, Option<f64>>::new(s);
    let out = run(&mut c, steps);
    (out, c.inner().late_elements())
}

/// Rows as sortable tuples ([`Multisets`]).
fn multisets(out: &Out) -> Multisets {
    let mut rows = Vec::new();
    let mut late = Vec::new();
    for e in out {
        match e {
            Emitted::Result {
                key,
                window,
                result,
                watermark,
            } => rows.push((
                *key,
                window.start(),
                window.end(),
                result.map(f64::to_bits),
                *watermark,
            )),
            Emitted::Late {
                key,
                timestamp,
                watermark,
                ..
            } => late.push((*key, *timestamp, *watermark)),
            Emitted::Emptied { .. } => panic!("all-windows mode emits no empty results"),
        }
    }
    rows.sort_unstable();
    late.sort_unstable();
    (rows, late)
}

fn random_case(rng: &mut Rng) -> Case {
    let slide = rng.range(1, 8);
    let size = match rng.range(0, 4) {
        0 => slide * rng.range(1, 6),
        1 => rng.range(1, slide), // slide >= size: gaps
        _ => rng.range(1, 40),
    };
    let offset = rng.range(-(slide - 1), slide - 1);
    let agg = AGGREGATES[rng.range(0, 4) as usize];
    let lateness = match rng.range(0, 2) {
        0 => 0,
        _ => rng.range(1, 30),
    };
    Case {
        size,
        slide,
        offset,
        agg,
        lateness,
    }
}

/// Arrivals around a moving front with disorder: most near it, some behind the watermark
/// (within the lateness and beyond it); watermarks from a bounded delay, now and then.
fn random_steps(rng: &mut Rng, delay: i64) -> Vec<Step> {
    let mut steps = Vec::new();
    let n = rng.range(1, 120);
    let mut front = rng.range(-60, 20);
    let mut max = i64::MIN;
    let keys = rng.range(1, 4) as u64;
    for _ in 0..n {
        front += rng.range(0, 3);
        let t = match rng.range(0, 9) {
            0 | 1 => front - rng.range(0, 50), // far behind: late, or within the lateness
            2 | 3 => front - rng.range(0, delay + 5),
            _ => front,
        };
        // Integer values: sums, minima and maxima are exact in any order.
        let v = rng.range(-20, 100) as f64;
        steps.push(Step::Element(t, (rng.next() % keys) as u32, v));
        max = max.max(t);
        if rng.range(0, 2) > 0 {
            steps.push(Step::Watermark(max - delay - 1));
        }
    }
    steps
}

fn check(case: Case, steps: &[Step], label: &str) {
    let (n, n_late) = native(case, steps);
    let (s, s_late) = sliced(case, steps);
    // Through `Converted`'s typed path: the same rows and late elements, in the same order.
    let (c, c_late) = sliced_converted(case, steps);
    assert!(c == s, "{label} {case:?}: converted");
    assert_eq!(c_late, s_late, "{label} {case:?}: converted late count");
    let (nr, nl) = multisets(&n);
    let (sr, sl) = multisets(&s);
    if case.agg == NumericAggregate::Mean {
        // A running mean depends on the order of adds in its last bits.
        assert_eq!(nr.len(), sr.len(), "{label} {case:?}: rows");
        for (a, b) in nr.iter().zip(&sr) {
            assert_eq!(
                (a.0, a.1, a.2, a.4),
                (b.0, b.1, b.2, b.4),
                "{label} {case:?}"
            );
            let (x, y) = (f64::from_bits(a.3.unwrap()), f64::from_bits(b.3.unwrap()));
            assert!(
                (x - y).abs() <= 1e-9 * x.abs().max(1.0),
                "{label} {case:?}: {x} {y}"
            );
        }
    } else {
        assert_eq!(nr, sr, "{label} {case:?}: rows");
    }
    assert_eq!(nl, sl, "{label} {case:?}: late output");
    assert_eq!(n_late, s_late, "{label} {case:?}: late count");
}

#[test]
fn sliced_windows_take_what_the_native_operator_takes_under_disorder() {
    let mut rng = Rng(0x0015_1515);
    let mut behind = 0;
    for round in 0..3000 {
        let case = random_case(&mut rng);
        let delay = rng.range(0, 6);
        let steps = random_steps(&mut rng, delay);
        check(case, &steps, &format!("round {round}"));
        behind += usize::from(case.lateness > 0);
    }
    assert!(behind > 1000);
}

#[test]
fn the_issue_example_adds_a_late_element_to_the_window_that_has_not_fired() {
    // Sliding 10 / 5, watermark 9, then a@7=100: [5,15) holds it and emits 110 (Flink 2.3
    // agrees), [0,10) has fired and is cleaned up (lateness 0).
    let case = Case {
        size: 10,
        slide: 5,
        offset: 0,
        agg: NumericAggregate::Sum,
        lateness: 0,
    };
    let steps = [
        Step::Element(8, 0, 10.0),
        Step::Watermark(9),
        Step::Element(7, 0, 100.0),
    ];
    let (s, late) = sliced(case, &steps);
    let (rows, late_rows) = multisets(&s);
    let sum = |v: f64| Some(v.to_bits());
    let end = i64::MAX;
    assert_eq!(
        rows,
        [(0, 0, 10, sum(10.0), 9), (0, 5, 15, sum(110.0), end)]
    );
    assert!(late_rows.is_empty());
    assert_eq!(late, 0);
    check(case, &steps, "issue");
    // With lateness 3, [0,10) fires again at once with the element (late firing).
    let case = Case {
        lateness: 3,
        ..case
    };
    let (s, _) = sliced(case, &steps);
    let (rows, _) = multisets(&s);
    assert_eq!(
        rows,
        [
            (0, 0, 10, sum(10.0), 9),
            (0, 0, 10, sum(110.0), 9),
            (0, 5, 15, sum(110.0), end)
        ]
    );
    check(case, &steps, "issue, lateness 3");
}

#[test]
fn keys_holding_only_fired_windows_are_forgotten_after_cleanup() {
    // Many keys, each with one element and later one late element for a fired window only:
    // the keys' fired windows are dropped once cleaned up, and the keys forgotten.
    let case = Case {
        size: 4,
        slide: 2,
        offset: 0,
        agg: NumericAggregate::Count,
        lateness: 10,
    };
    let g = SlidingGeometry::new(case.size, case.slide, case.offset).unwrap();
    let mut s = EventTimeSlicedWindows::new(g, case.agg, EmitMode::AllWindows, case.lateness);
    let mut out = Out::new();
    let mut steps = Vec::new();
    for k in 0..10_000_u32 {
        let t = i64::from(k) * 3;
        steps.push(Step::Element(t, k, 1.0));
        steps.push(Step::Watermark(t + 5));
        steps.push(Step::Element(t, k, 1.0)); // behind: both its windows have fired
    }
    for st in &steps {
        match *st {
            Step::Element(t, k, v) => s.process_element(k, v, t, &mut out).unwrap(),
            Step::Watermark(w) => {
                s.process_watermark(w, &mut out);
            }
        }
    }
    let live = s.live_state();
    assert!(live.keys < 9_000, "{live:?}");
    assert!(live.windows < 9_000, "{live:?}");
    check(case, &steps, "sparse keys");
}

#[test]
fn a_snapshot_taken_with_fired_windows_kept_restores_the_same_future() {
    // With allowed lateness the fired windows kept for late firings are state: a computation
    // restored from a snapshot taken mid-run emits what the original emits from there on.
    let mut rng = Rng(0x005A_FE15);
    for round in 0..200 {
        let mut case = random_case(&mut rng);
        case.lateness = rng.range(1, 30);
        let delay = rng.range(0, 6);
        let steps = random_steps(&mut rng, delay);
        let cut = rng.range(0, steps.len() as i64) as usize;
        let g = SlidingGeometry::new(case.size, case.slide, case.offset).unwrap();
        let make = || {
            EventTimeSlicedWindows::new(g, case.agg, EmitMode::AllWindows, case.lateness)
                .with_late_data(LateDataPolicy::SideOutput)
                .with_snapshots()
        };
        let mut original = make();
        let mut before = Out::new();
        for s in &steps[..cut] {
            match *s {
                Step::Element(t, k, v) => original.process_element(k, v, t, &mut before).unwrap(),
                Step::Watermark(w) => {
                    original.process_watermark(w, &mut before);
                }
            }
        }
        let mut bytes = Vec::new();
        original.snapshot(&mut bytes).unwrap();
        let mut restored = make();
        restored.restore(&bytes).unwrap();
        let a = run(&mut original, &steps[cut..]);
        let b = run(&mut restored, &steps[cut..]);
        assert_eq!(a, b, "round {round} {case:?}");
    }
}
