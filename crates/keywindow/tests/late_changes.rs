//! Key windows and `sliced:changes` under disorder and lateness (issue #15, item 2), against a
//! brute-force reference of the key-window contract in event time (`docs/keywindow.md`, "Event
//! time"):
//!
//! - an element is *accepted* when some window holding it is not cleaned up when it arrives
//!   (max timestamp + allowed lateness after the watermark); the others are late (counted, late
//!   output); in a gap between windows, Flink's rule (`timestamp + lateness <= watermark`);
//! - the content of window `i` is every accepted element of the key in its range that arrived
//!   before `i` was cleaned up (for a window not cleaned up: every accepted element in range);
//! - when the watermark passes a window's max timestamp, the window is emitted if its content
//!   differs from the previous window's (an empty result when it is empty), at its max timestamp;
//! - an accepted element behind the watermark emits, at the watermark and in window order, every
//!   fired window that is a change after it and was not one before or changed content.
//!
//! Compared per key in emission order (keys interleave freely), with the late output and count.

use std::collections::BTreeMap;

use keywindow::{EmitMode, EventTimeKeyWindows, EventTimeSlicedWindows, SlidingGeometry};
use window_core::{
    AggregateFunction, Emitted, LateDataPolicy, NumericAggregate, TimeWindow, WindowComputation,
};

type Out = Vec<Emitted<u32, TimeWindow, f64, Option<f64>>>;

/// One emitted row: window start, end, the result (`None`: an empty result), watermark.
type Row = (i64, i64, Option<Option<f64>>, i64);

/// Rows per key in emission order, and the late elements as a sorted multiset.
type Seen = (BTreeMap<u32, Vec<Row>>, Vec<(u32, i64, i64)>);

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

/// The contract, computed from scratch at every step.
struct Reference {
    c: Case,
    watermark: i64,
    /// Accepted elements: (key, time, value, watermark when it arrived).
    accepted: Vec<(u32, i64, f64, i64)>,
    rows: BTreeMap<u32, Vec<Row>>,
    late: Vec<(u32, i64, i64)>,
}

impl Reference {
    fn start(&self, i: i64) -> i64 {
        i * self.c.slide + self.c.offset
    }
    fn max_ts(&self, i: i64) -> i64 {
        self.start(i) + self.c.size - 1
    }
    /// Grid indices of the first and last window holding `t`.
    fn indices(&self, t: i64) -> (i64, i64) {
        let (s, o) = (self.c.slide, self.c.offset);
        (
            (t - self.c.size - o).div_euclid(s) + 1,
            (t - o).div_euclid(s),
        )
    }
    /// Content of window `i` of `key`: indices into `accepted`.
    fn content(&self, key: u32, i: i64) -> Vec<usize> {
        let (start, max_ts) = (self.start(i), self.max_ts(i));
        (self.accepted.iter().enumerate())
            .filter(|(_, e)| e.0 == key && e.1 >= start && e.1 <= max_ts)
            .filter(|(_, e)| max_ts.saturating_add(self.c.lateness) > e.3)
            .map(|(n, _)| n)
            .collect()
    }
    fn result(&self, content: &[usize]) -> Option<Option<f64>> {
        if content.is_empty() {
            return None;
        }
        let f = self.c.agg;
        let mut acc = AggregateFunction::<f64>::create_accumulator(&f);
        for n in content {
            AggregateFunction::<f64>::add(&f, &mut acc, &self.accepted[*n].2);
        }
        Some(AggregateFunction::<f64>::get_result(&f, &acc))
    }
    fn is_change(&self, key: u32, i: i64) -> bool {
        self.content(key, i) != self.content(key, i - 1)
    }
    fn element(&mut self, t: i64, key: u32, v: f64) {
        let w = self.watermark;
        if t > w {
            self.accepted.push((key, t, v, w));
            return;
        }
        let (first, last) = self.indices(t);
        let lateness = self.c.lateness;
        if first > last {
            if t.saturating_add(lateness) <= w {
                self.late.push((key, t, w));
            }
            return; // in no window
        }
        if self.max_ts(last).saturating_add(lateness) <= w {
            self.late.push((key, t, w));
            return;
        }
        let fired: Vec<i64> = (first..=last + 1)
            .filter(|i| self.max_ts(*i) <= w)
            .collect();
        let before: Vec<_> = (fired.iter())
            .map(|i| (self.content(key, *i), self.is_change(key, *i)))
            .collect();
        self.accepted.push((key, t, v, w));
        for (i, (content, was_change)) in fired.iter().zip(before) {
            let now = self.content(key, *i);
            let change = self.is_change(key, *i);
            assert!(change || !was_change, "a late element undid a change");
            if change && (!was_change || now != content) {
                let row = (
                    self.start(*i),
                    self.start(*i) + self.c.size,
                    self.result(&now),
                    w,
                );
                self.rows.entry(key).or_default().push(row);
            }
        }
    }
    fn watermark(&mut self, to: i64) {
        if to <= self.watermark {
            return;
        }
        let from = self.watermark;
        let keys: std::collections::BTreeSet<u32> = self.accepted.iter().map(|e| e.0).collect();
        for key in keys {
            let (mut lo, mut hi) = (i64::MAX, i64::MIN);
            for e in self.accepted.iter().filter(|e| e.0 == key) {
                let (a, b) = self.indices(e.1);
                (lo, hi) = (lo.min(a), hi.max(b + 1));
            }
            for i in lo..=hi {
                let m = self.max_ts(i);
                if m > from && m <= to && self.is_change(key, i) {
                    let content = self.content(key, i);
                    let row = (
                        self.start(i),
                        self.start(i) + self.c.size,
                        self.result(&content),
                        m,
                    );
                    self.rows.entry(key).or_default().push(row);
                }
            }
        }
        self.watermark = to;
    }
}

fn reference(c: Case, steps: &[Step]) -> Seen {
    let mut r = Reference {
        c,
        watermark: i64::MIN,
        accepted: Vec::new(),
        rows: BTreeMap::new(),
        late: Vec::new(),
    };
    for s in steps {
        match *s {
            Step::Element(t, k, v) => r.element(t, k, v),
            Step::Watermark(w) => r.watermark(w),
        }
    }
    r.watermark(i64::MAX);
    r.late.sort_unstable();
    (r.rows, r.late)
}

fn run(
    c: &mut dyn WindowComputation<u32, f64, Window = TimeWindow, Output = Option<f64>>,
    steps: &[Step],
) -> Seen {
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
    let (mut rows, mut late) = (BTreeMap::<u32, Vec<Row>>::new(), Vec::new());
    for e in out {
        match e {
            Emitted::Result {
                key,
                window,
                result,
                watermark,
            } => (rows.entry(key).or_default()).push((
                window.start(),
                window.end(),
                Some(result),
                watermark,
            )),
            Emitted::Emptied {
                key,
                window,
                watermark,
            } => {
                (rows.entry(key).or_default()).push((window.start(), window.end(), None, watermark))
            }
            Emitted::Late {
                key,
                timestamp,
                watermark,
                ..
            } => late.push((key, timestamp, watermark)),
        }
    }
    late.sort_unstable();
    (rows, late)
}

fn key_windows(c: Case, steps: &[Step]) -> (Seen, u64) {
    let g = SlidingGeometry::new(c.size, c.slide, c.offset).unwrap();
    let mut kw =
        EventTimeKeyWindows::new(g, c.agg, c.lateness).with_late_data(LateDataPolicy::SideOutput);
    let seen = run(&mut kw, steps);
    (seen, kw.late_elements())
}

fn sliced_changes(c: Case, steps: &[Step], batch: usize) -> (Seen, u64) {
    let g = SlidingGeometry::new(c.size, c.slide, c.offset).unwrap();
    let mut inner = keywindow::SlicedWindows::new(g, c.agg, EmitMode::Changes);
    inner.set_batch_limit(batch);
    let mut s =
        EventTimeSlicedWindows::wrap(inner, c.lateness).with_late_data(LateDataPolicy::SideOutput);
    let seen = run(&mut s, steps);
    (seen, s.late_elements())
}

fn random_case(rng: &mut Rng) -> Case {
    let slide = rng.range(1, 8);
    let size = match rng.range(0, 4) {
        0 => slide * rng.range(1, 6),
        1 => rng.range(1, slide), // slide >= size: gaps
        _ => rng.range(1, 40),
    };
    Case {
        size,
        slide,
        offset: rng.range(-(slide - 1), slide - 1),
        agg: AGGREGATES[rng.range(0, 4) as usize],
        lateness: match rng.range(0, 2) {
            0 => 0,
            _ => rng.range(1, 30),
        },
    }
}

/// Arrivals around a moving front, some behind the watermark (within the lateness and beyond
/// it), negative times; watermarks from a bounded delay, now and then.
fn random_steps(rng: &mut Rng, delay: i64) -> Vec<Step> {
    let mut steps = Vec::new();
    let n = rng.range(1, 80);
    let mut front = rng.range(-60, 20);
    let mut max = i64::MIN;
    let keys = rng.range(1, 3) as u64;
    for _ in 0..n {
        front += rng.range(0, 4);
        let t = match rng.range(0, 9) {
            0 | 1 => front - rng.range(0, 50),
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

fn same(case: Case, expected: &Seen, got: &Seen, label: &str) {
    assert_eq!(expected.1, got.1, "{label} {case:?}: late output");
    let keys = |s: &Seen| s.0.keys().copied().collect::<Vec<_>>();
    assert_eq!(keys(expected), keys(got), "{label} {case:?}: keys");
    for (key, rows) in &expected.0 {
        let other = &got.0[key];
        let close = |a: &Row, b: &Row| match (a.2, b.2) {
            (Some(Some(x)), Some(Some(y))) if case.agg == NumericAggregate::Mean => {
                (x - y).abs() <= 1e-9 * x.abs().max(1.0) && (a.0, a.1, a.3) == (b.0, b.1, b.3)
            }
            _ => a == b,
        };
        let equal = rows.len() == other.len() && rows.iter().zip(other).all(|(a, b)| close(a, b));
        assert!(
            equal,
            "{label} {case:?} key {key}:\n expected {rows:?}\n      got {other:?}"
        );
    }
}

#[test]
fn key_windows_follow_the_contract_under_disorder_and_lateness() {
    let mut rng = Rng(0x0015_0002);
    let mut late_rows = 0;
    for round in 0..3000 {
        let case = random_case(&mut rng);
        let delay = rng.range(0, 6);
        let steps = random_steps(&mut rng, delay);
        let expected = reference(case, &steps);
        let (got, late) = key_windows(case, &steps);
        same(case, &expected, &got, &format!("round {round}"));
        assert_eq!(late, expected.1.len() as u64, "round {round} {case:?}");
        late_rows += (expected.0.values().flatten())
            .filter(|r| r.3 < r.1 - 1 + case.lateness && r.3 != r.1 - 1)
            .count();
    }
    assert!(late_rows > 1000, "{late_rows} late updates");
}

#[test]
fn sliced_changes_follow_the_contract_under_disorder_and_lateness() {
    // The same inputs through sliced windows emitting changes, folding at once and in batches.
    let mut rng = Rng(0x0015_0002);
    for round in 0..3000 {
        let case = random_case(&mut rng);
        let delay = rng.range(0, 6);
        let steps = random_steps(&mut rng, delay);
        let expected = reference(case, &steps);
        for batch in [1, 256] {
            let (got, late) = sliced_changes(case, &steps, batch);
            same(
                case,
                &expected,
                &got,
                &format!("round {round} batch {batch}"),
            );
            assert_eq!(late, expected.1.len() as u64, "round {round} {case:?}");
        }
    }
}

fn both(c: Case, steps: &[Step]) -> [(Seen, u64); 3] {
    [
        key_windows(c, steps),
        sliced_changes(c, steps, 1),
        sliced_changes(c, steps, 256),
    ]
}

#[test]
fn the_issue_example_in_key_window_terms() {
    // Sliding 10 / 5, a@8=10, watermark 9 ([0,10) fires: 10), then a@7=100 behind it.
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
    // Lateness 0: [0,10) is cleaned up, [5,15) has not fired and takes it: there the result
    // changes (the user saw 10 for [0,10)), and it leaves at [10,20), which is empty.
    let rows = vec![
        (0, 10, Some(Some(10.0)), 9),
        (5, 15, Some(Some(110.0)), 14),
        (10, 20, None, 19),
    ];
    for (seen, late) in both(case, &steps) {
        assert_eq!((seen.0[&0].clone(), late), (rows.clone(), 0));
    }
    // Lateness 3: [0,10) fires again at once with it (at the watermark, 9); [5,15) then holds
    // what [0,10) holds and is no change.
    let case = Case {
        lateness: 3,
        ..case
    };
    let rows = vec![
        (0, 10, Some(Some(10.0)), 9),
        (0, 10, Some(Some(110.0)), 9),
        (10, 20, None, 19),
    ];
    for (seen, late) in both(case, &steps) {
        assert_eq!((seen.0[&0].clone(), late), (rows.clone(), 0));
    }
    assert_eq!(reference(case, &steps).0[&0], rows);
}

#[test]
fn keys_updated_late_are_forgotten_after_cleanup() {
    // Many keys, each with one element, then the same element again once its windows fired
    // (a late update within the lateness): their state goes once cleaned up.
    let case = Case {
        size: 4,
        slide: 2,
        offset: 0,
        agg: NumericAggregate::Count,
        lateness: 10,
    };
    let mut steps = Vec::new();
    for k in 0..10_000_u32 {
        let t = i64::from(k) * 3;
        steps.push(Step::Element(t, k, 1.0));
        steps.push(Step::Watermark(t + 5));
        steps.push(Step::Element(t, k, 1.0));
    }
    let g = SlidingGeometry::new(case.size, case.slide, case.offset).unwrap();
    let mut kw = EventTimeKeyWindows::new(g, case.agg, case.lateness);
    let mut sc = EventTimeSlicedWindows::new(g, case.agg, EmitMode::Changes, case.lateness);
    let computations: [&mut dyn WindowComputation<_, _, Window = _, Output = _>; 2] =
        [&mut kw, &mut sc];
    for c in computations {
        let mut out = Out::new();
        for st in &steps {
            match *st {
                Step::Element(t, k, v) => c.process_element(k, v, t, &mut out).unwrap(),
                Step::Watermark(w) => {
                    c.process_watermark(w, &mut out);
                }
            }
        }
        let live = c.live_state();
        assert!(live.keys < 9_000 && live.windows < 9_000, "{live:?}");
        assert_eq!(c.metrics().late_elements, 0);
    }
    // The first hundred keys against the reference (which is quadratic).
    let expected = reference(case, &steps[..300]);
    for (seen, _) in both(case, &steps[..300]) {
        same(case, &expected, &seen, "sparse keys");
    }
}

#[test]
fn a_snapshot_taken_with_late_state_restores_the_same_future() {
    // The kept windows or changes are state: a computation restored from a snapshot taken
    // mid-run emits what the original emits from there on.
    let mut rng = Rng(0x005A_FE02);
    for round in 0..200 {
        let mut case = random_case(&mut rng);
        case.lateness = rng.range(0, 30);
        let delay = rng.range(0, 6);
        let steps = random_steps(&mut rng, delay);
        let cut = rng.range(0, steps.len() as i64) as usize;
        let g = SlidingGeometry::new(case.size, case.slide, case.offset).unwrap();
        let pairs: [[Box<dyn WindowComputation<u32, f64, Window = _, Output = _>>; 2]; 2] = [
            std::array::from_fn(|_| {
                Box::new(
                    EventTimeKeyWindows::new(g, case.agg, case.lateness)
                        .with_late_data(LateDataPolicy::SideOutput)
                        .with_snapshots(),
                ) as Box<_>
            }),
            std::array::from_fn(|_| {
                Box::new(
                    EventTimeSlicedWindows::new(g, case.agg, EmitMode::Changes, case.lateness)
                        .with_late_data(LateDataPolicy::SideOutput)
                        .with_snapshots(),
                ) as Box<_>
            }),
        ];
        for [mut original, mut restored] in pairs {
            let mut before = Out::new();
            for s in &steps[..cut] {
                match *s {
                    Step::Element(t, k, v) => {
                        original.process_element(k, v, t, &mut before).unwrap();
                    }
                    Step::Watermark(w) => {
                        original.process_watermark(w, &mut before);
                    }
                }
            }
            let mut bytes = Vec::new();
            original.snapshot(&mut bytes).unwrap();
            restored.restore(&bytes).unwrap();
            let a = run(original.as_mut(), &steps[cut..]);
            let b = run(restored.as_mut(), &steps[cut..]);
            assert_eq!(a, b, "round {round} {case:?}");
        }
    }
}
