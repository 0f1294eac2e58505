//! The key-window contract (`docs/keywindow.md`, "What must hold") as randomized properties:
//! key windows against the native sliding-window operator (`WindowOperator` with
//! `SlidingWindows`, checked against real Flink by the conformance cases).
//!
//! - Equivalence: per key, every key-window value equals the native result of that window, and
//!   at every window start between two key-window outputs the native output equals the latest
//!   key-window output (an empty result standing for "native emits nothing").
//! - Count: key windows created `<= 2n` and `<= native + n`; exactly `2n` when no two elements of
//!   a key share a slide interval or lie exactly a multiple of the size apart on the grid (checked
//!   on inputs built that way); the native count reported equals the native operator's.

use std::collections::BTreeMap;

use keywindow::{
    EmitMode, EventTimeKeyWindows, EventTimeSlicedWindows, KeyWindows, SlicedWindows,
    SlidingGeometry,
};
use window_assigners::{DefaultTrigger, SlidingWindows, TimeDomain};
use window_core::{LateDataPolicy, NumericAggregate, TimeWindow, Timestamp, WindowOutput};
use window_operator::{Emitted, Incremental, OperatorConfig, WindowComputation, WindowOperator};

/// A key-window result as the contract states it: a value, or the window became empty.
#[derive(Clone, Debug, PartialEq)]
enum KeyWindowResult<O> {
    Value(O),
    Empty,
}

/// Collects key-window output in order, and late elements apart.
#[derive(Debug, Default)]
struct Keyed {
    rows: Vec<(u32, TimeWindow, KeyWindowResult<Option<f64>>)>,
    late: Vec<(u32, Timestamp, Timestamp)>,
}

impl Keyed {
    fn new() -> Self {
        Self::default()
    }
}

impl std::ops::Deref for Keyed {
    type Target = Vec<(u32, TimeWindow, KeyWindowResult<Option<f64>>)>;
    fn deref(&self) -> &Self::Target {
        &self.rows
    }
}

impl IntoIterator for Keyed {
    type Item = (u32, TimeWindow, KeyWindowResult<Option<f64>>);
    type IntoIter = std::vec::IntoIter<Self::Item>;
    fn into_iter(self) -> Self::IntoIter {
        self.rows.into_iter()
    }
}

impl<'a> IntoIterator for &'a Keyed {
    type Item = &'a (u32, TimeWindow, KeyWindowResult<Option<f64>>);
    type IntoIter = std::slice::Iter<'a, (u32, TimeWindow, KeyWindowResult<Option<f64>>)>;
    fn into_iter(self) -> Self::IntoIter {
        self.rows.iter()
    }
}

impl WindowOutput<u32, TimeWindow, f64, Option<f64>> for Keyed {
    fn result(&mut self, key: &u32, window: &TimeWindow, result: Option<f64>, _: Timestamp) {
        self.rows
            .push((*key, *window, KeyWindowResult::Value(result)));
    }
    fn late(&mut self, key: u32, timestamp: Timestamp, _: f64, watermark: Timestamp) {
        self.late.push((key, timestamp, watermark));
    }
    fn emptied(&mut self, key: &u32, window: &TimeWindow, _: Timestamp) {
        self.rows.push((*key, *window, KeyWindowResult::Empty));
    }
}

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
struct Case {
    size: i64,
    slide: i64,
    offset: i64,
    agg: NumericAggregate,
}

type Native = BTreeMap<(u32, i64), Option<f64>>;
type KeyedResult = (TimeWindow, KeyWindowResult<Option<f64>>);

/// The native operator's results per (key, window start); each window fires once (lateness 0,
/// nothing late in these inputs). Also returns the windows it created.
fn native(case: Case, arrivals: &[(i64, u32, f64)], delay: i64) -> (Native, u64) {
    let assigner =
        SlidingWindows::new(case.size, case.slide, case.offset, TimeDomain::EventTime).unwrap();
    let trigger = assigner.default_trigger();
    let mut op = WindowOperator::new(
        assigner,
        trigger,
        Incremental(case.agg),
        OperatorConfig::default(),
    )
    .unwrap();
    let mut out = Vec::new();
    let mut max = i64::MIN;
    for &(t, k, v) in arrivals {
        op.process_element(k, v, t, &mut out).unwrap();
        max = max.max(t);
        op.process_watermark(max - delay - 1, &mut out);
    }
    op.process_watermark(i64::MAX, &mut out);
    assert_eq!(
        op.metrics().late_elements,
        0,
        "the generator makes no late elements"
    );
    let mut results = Native::new();
    for e in out {
        if let Emitted::Result {
            key,
            window,
            result,
            ..
        } = e
        {
            assert!(
                results.insert((key, window.start()), result).is_none(),
                "native fired twice"
            );
        }
    }
    (results, op.metrics().windows_created)
}

fn check_equivalence(case: Case, native: &Native, keyed: &Keyed) {
    let mut per_key: BTreeMap<u32, BTreeMap<i64, Option<Option<f64>>>> = BTreeMap::new();
    for (k, w, r) in keyed {
        let value = match r {
            KeyWindowResult::Value(v) => Some(*v),
            KeyWindowResult::Empty => None,
        };
        assert!(
            per_key
                .entry(*k)
                .or_default()
                .insert(w.start(), value)
                .is_none(),
            "key window fired twice"
        );
        if let Some(v) = value {
            assert_eq!(
                native.get(&(*k, w.start())),
                Some(&v),
                "{case:?}: key {k} window {w:?} differs from native"
            );
        } else {
            assert!(
                !native.contains_key(&(*k, w.start())),
                "{case:?}: empty key window {w:?} but native fired it"
            );
        }
    }
    // Between key-window outputs the native output is constant.
    for (&(k, start), &v) in native {
        let latest = per_key
            .get(&k)
            .and_then(|m| m.range(..=start).next_back())
            .unwrap_or_else(|| {
                panic!("{case:?}: native window {start} of key {k} before any key window")
            });
        assert_eq!(
            *latest.1,
            Some(v),
            "{case:?}: native window {start} of key {k}, latest key window {}",
            latest.0
        );
    }
    // And where native emits nothing, the latest key window is empty.
    for (&k, m) in &per_key {
        let (first, last) = (*m.keys().next().unwrap(), *m.keys().next_back().unwrap());
        let mut s = first;
        while s <= last {
            if !native.contains_key(&(k, s)) {
                let latest = m.range(..=s).next_back().unwrap();
                assert_eq!(
                    *latest.1, None,
                    "{case:?}: key {k} start {s}: native silent, key window {} not empty",
                    latest.0
                );
            }
            s += case.slide;
        }
    }
}

fn random_case(rng: &mut Rng) -> Case {
    let slide = rng.range(1, 5);
    let size = slide * rng.range(1, 6)
        + if rng.next().is_multiple_of(3) {
            rng.range(0, slide - 1)
        } else {
            0
        };
    Case {
        size,
        slide,
        offset: rng.range(-(slide - 1), slide - 1),
        agg: [
            NumericAggregate::Sum,
            NumericAggregate::Count,
            NumericAggregate::Max,
        ][(rng.next() % 3) as usize],
    }
}

#[test]
fn in_order_key_windows_equal_native_sliding_windows() {
    // Processing time (the paper's setting): elements in time order.
    let mut rng = Rng(0x5EED_1234);
    for _ in 0..1500 {
        let case = random_case(&mut rng);
        let n = rng.range(1, 30) as usize;
        let mut t = rng.range(-40, 10);
        let mut arrivals = Vec::new();
        for _ in 0..n {
            t += rng.range(0, 2 * case.size);
            arrivals.push((t, (rng.next() % 3) as u32, rng.range(-5, 9) as f64));
        }
        let (native, native_created) = native(case, &arrivals, 0);
        let mut kw = KeyWindows::new(
            SlidingGeometry::new(case.size, case.slide, case.offset).unwrap(),
            case.agg,
        );
        let mut keyed = Keyed::new();
        for &(t, k, v) in &arrivals {
            kw.process(k, v, t, &mut keyed).unwrap();
        }
        kw.advance_time(i64::MAX, &mut keyed);
        check_equivalence(case, &native, &keyed);
        let m = kw.metrics();
        assert_eq!(m.native_windows, native_created, "{case:?}");
        assert!(m.key_windows_created <= 2 * n as u64, "{case:?}");
        assert!(
            m.key_windows_created <= native_created + n as u64,
            "{case:?}"
        );
        assert_eq!(m.results_emitted, keyed.len() as u64);
        assert_eq!(kw.live_windows(), 0);
    }
}

#[test]
fn event_time_key_windows_equal_native_with_out_of_order_input() {
    // Beyond the paper: out-of-order input within the watermark delay, negative times too.
    let mut rng = Rng(0xC0FF_EE00);
    for _ in 0..1500 {
        let case = random_case(&mut rng);
        let delay = rng.range(0, 12);
        let n = rng.range(1, 30) as usize;
        let mut base = rng.range(-60, 0);
        let mut arrivals = Vec::new();
        for _ in 0..n {
            base += rng.range(0, case.size);
            // Up to `delay` behind the latest so far: never behind the watermark.
            let t = base - rng.range(0, delay);
            arrivals.push((t, (rng.next() % 3) as u32, rng.range(-5, 9) as f64));
        }
        let mut max = i64::MIN;
        for a in &mut arrivals {
            a.0 = a.0.max(max.saturating_sub(delay));
            max = max.max(a.0);
        }
        let (native, native_created) = native(case, &arrivals, delay);
        let geometry = SlidingGeometry::new(case.size, case.slide, case.offset).unwrap();
        let mut kw = EventTimeKeyWindows::new(geometry, case.agg, 0);
        let mut keyed = Keyed::new();
        let mut max = i64::MIN;
        for &(t, k, v) in &arrivals {
            kw.process_element(k, v, t, &mut keyed).unwrap();
            max = max.max(t);
            kw.process_watermark(max - delay - 1, &mut keyed);
        }
        kw.process_watermark(i64::MAX, &mut keyed);
        check_equivalence(case, &native, &keyed);
        assert!(keyed.late.is_empty(), "{case:?}: late elements");
        assert_eq!(kw.metrics().native_windows, native_created, "{case:?}");
        assert!(kw.metrics().windows_created <= 2 * n as u64);
    }
}

#[test]
fn exactly_two_windows_per_element_for_keys_sparser_than_the_window() {
    // Elements of a key at least `size + slide` apart: 2n key windows against n * size / slide
    // native ones (the contract's counting property).
    let mut rng = Rng(77);
    for _ in 0..300 {
        let slide = rng.range(1, 10);
        let size = slide * rng.range(2, 50);
        let n = rng.range(1, 40);
        let mut kw = KeyWindows::new(
            SlidingGeometry::new(size, slide, 0).unwrap(),
            NumericAggregate::Sum,
        );
        let mut out = Keyed::new();
        let mut t = rng.range(-1000, 1000);
        for _ in 0..n {
            kw.process(0, 1.0, t, &mut out).unwrap();
            // At least size + slide apart: no shared slide interval, nothing exactly p apart.
            t += size + slide + rng.range(0, 3 * size);
        }
        kw.advance_time(i64::MAX, &mut out);
        let m = kw.metrics();
        assert_eq!(m.key_windows_created, 2 * n as u64);
        assert_eq!(m.native_windows, (n * size / slide) as u64);
        assert_eq!(m.empty_results, n as u64, "every right key window is empty");
    }
}

#[test]
fn late_elements_are_handed_back_in_event_time() {
    let geometry = SlidingGeometry::new(10, 5, 0).unwrap();
    let mut kw = EventTimeKeyWindows::new(geometry, NumericAggregate::Sum, 0)
        .with_late_data(LateDataPolicy::SideOutput);
    let mut out = Keyed::new();
    kw.process_element(0, 1.0, 100, &mut out).unwrap();
    kw.process_watermark(100, &mut out);
    assert!(out.late.is_empty());
    // Scenario B36: a@3 after WM 100 is late and creates no window state.
    kw.process_element(0, 1.0, 3, &mut out).unwrap();
    assert_eq!(out.late, [(0, 3, 100)]);
    assert_eq!(kw.late_elements(), 1);
    assert_eq!(kw.metrics().late_side_output, 1);
    kw.process_watermark(i64::MAX, &mut out);
    assert!(out.iter().all(|(_, w, _)| w.start() > 3));
}

/// Random in-order arrivals for `case`: mostly sparse, sometimes a burst in one slice (hot key).
fn random_arrivals(rng: &mut Rng, case: Case) -> Vec<(i64, u32, f64)> {
    let n = rng.range(1, 40) as usize;
    let mut t = rng.range(-40, 10);
    let mut arrivals = Vec::new();
    for _ in 0..n {
        t += if rng.next().is_multiple_of(4) {
            0
        } else {
            rng.range(0, 2 * case.size)
        };
        arrivals.push((t, (rng.next() % 3) as u32, rng.range(-5, 9) as f64));
    }
    arrivals
}

#[test]
fn sliced_windows_emit_the_native_results() {
    // The sliced strategy in AllWindows mode emits every non-empty window with the native result.
    let mut rng = Rng(0x0A11_5EED);
    for _ in 0..1500 {
        let case = random_case(&mut rng);
        let arrivals = random_arrivals(&mut rng, case);
        let (native, native_created) = native(case, &arrivals, 0);
        let geometry = SlidingGeometry::new(case.size, case.slide, case.offset).unwrap();
        let mut sliced = SlicedWindows::new(geometry, case.agg, EmitMode::AllWindows);
        // Half the cases fold every element at once: results must not depend on batching.
        if rng.next().is_multiple_of(2) {
            sliced.set_batch_limit(1);
        }
        let mut out = Keyed::new();
        for &(t, k, v) in &arrivals {
            sliced.process(k, v, t, &mut out).unwrap();
        }
        sliced.advance_time(i64::MAX, &mut out);
        let mut got = Native::new();
        for (k, w, r) in out {
            let KeyWindowResult::Value(v) = r else {
                panic!("{case:?}: empty result in AllWindows mode");
            };
            assert!(
                got.insert((k, w.start()), v).is_none(),
                "{case:?}: window fired twice"
            );
        }
        assert_eq!(got, native, "{case:?} {arrivals:?}");
        assert_eq!(sliced.metrics().native_windows, native_created);
        assert_eq!(sliced.live_slices(), 0);
        assert_eq!(sliced.live_keys(), 0);
    }
}

#[test]
fn sliced_windows_in_changes_mode_emit_the_key_window_results() {
    let mut rng = Rng(0x0C4A_76E5);
    for _ in 0..1500 {
        let case = random_case(&mut rng);
        let arrivals = random_arrivals(&mut rng, case);
        let geometry = SlidingGeometry::new(case.size, case.slide, case.offset).unwrap();
        let mut kw = KeyWindows::new(geometry, case.agg);
        let mut sliced = SlicedWindows::new(geometry, case.agg, EmitMode::Changes);
        if rng.next().is_multiple_of(2) {
            sliced.set_batch_limit(1);
        }
        let (mut a, mut b) = (Keyed::new(), Keyed::new());
        for &(t, k, v) in &arrivals {
            kw.process(k, v, t, &mut a).unwrap();
            sliced.process(k, v, t, &mut b).unwrap();
        }
        kw.advance_time(i64::MAX, &mut a);
        sliced.advance_time(i64::MAX, &mut b);
        for key in 0..3 {
            let of = |v: &Keyed| v.iter().filter(|r| r.0 == key).cloned().collect::<Vec<_>>();
            assert_eq!(of(&b), of(&a), "{case:?} key {key} {arrivals:?}");
        }
    }
}

#[test]
fn event_time_sliced_windows_equal_native_with_out_of_order_input() {
    let mut rng = Rng(0xE7E7);
    for _ in 0..800 {
        let case = random_case(&mut rng);
        let delay = rng.range(0, 12);
        let mut arrivals = random_arrivals(&mut rng, case);
        // Shuffle within the watermark delay: never behind the watermark.
        let mut max = i64::MIN;
        for a in &mut arrivals {
            a.0 -= rng.range(0, delay);
            a.0 = a.0.max(max.saturating_sub(delay));
            max = max.max(a.0);
        }
        let (native, _) = native(case, &arrivals, delay);
        let geometry = SlidingGeometry::new(case.size, case.slide, case.offset).unwrap();
        let mut sliced = EventTimeSlicedWindows::new(geometry, case.agg, EmitMode::AllWindows, 0);
        let mut out = Keyed::new();
        let mut max = i64::MIN;
        for &(t, k, v) in &arrivals {
            sliced.process_element(k, v, t, &mut out).unwrap();
            max = max.max(t);
            sliced.process_watermark(max - delay - 1, &mut out);
        }
        sliced.process_watermark(i64::MAX, &mut out);
        assert_eq!(sliced.late_elements(), 0, "{case:?}: late elements");
        let got: Native = out
            .into_iter()
            .map(|(k, w, r)| match r {
                KeyWindowResult::Value(v) => ((k, w.start()), v),
                KeyWindowResult::Empty => panic!("empty in AllWindows mode"),
            })
            .collect();
        assert_eq!(got, native, "{case:?}");
    }
}

#[test]
fn sliced_windows_at_the_ends_of_time_match_key_windows_and_keep_every_element() {
    // Window starts and ends saturate near i64::MIN and i64::MAX. The sliced strategy's window
    // indices, firing schedule and slice log must not overflow or loop there, must emit what key
    // windows emit in changes mode (away from the very ends, see below), fire each window once
    // in all-windows mode, and forget every key at the end.
    let mut rng = Rng(0xE1D5_0F71);
    for round in 0..600 {
        let case = random_case(&mut rng);
        // Near i64::MIN windows start clamped; near i64::MAX they end saturated. Within a window
        // of either end (`extreme`) windows cannot be what Flink's would be (they would start
        // before i64::MIN or end after i64::MAX) and key windows and sliced windows differ;
        // there only the invariants below are checked. A little further in, both must agree.
        let margin = 2 * (case.size + case.slide);
        let (base, extreme) = match round % 4 {
            0 => (i64::MIN + rng.range(0, 30), true),
            1 => (i64::MIN + margin + rng.range(0, 30), false),
            2 => (i64::MAX - margin - rng.range(30, 60), false),
            _ => (i64::MAX - rng.range(0, 30), true),
        };
        let mut t = base;
        let mut arrivals = Vec::new();
        for _ in 0..rng.range(1, 12) {
            arrivals.push((t, (rng.next() % 3) as u32, rng.range(1, 9) as f64));
            t = t.saturating_add(rng.range(0, 4));
        }
        let geometry = SlidingGeometry::new(case.size, case.slide, case.offset).unwrap();
        let run = three_ways(geometry, case.agg, &arrivals);
        let (a, b, c) = (&run.key_windows, &run.changes, &run.all_windows);
        for key in 0..3 {
            let of = |v: &Keyed| v.iter().filter(|r| r.0 == key).cloned().collect::<Vec<_>>();
            if !extreme {
                assert_eq!(of(b), of(a), "{case:?} key {key} {arrivals:?}");
            }
        }
        let mut seen = BTreeMap::new();
        for (k, w, r) in c {
            assert!(
                matches!(r, KeyWindowResult::Value(_)),
                "{case:?}: empty result"
            );
            // (At i64::MAX itself an element can come after the saturated windows holding it
            // fired; they fire again with it.)
            assert!(
                seen.insert((*k, w.start()), ()).is_none() || extreme,
                "{case:?} {arrivals:?}: window {w:?} of key {k} fired twice"
            );
        }
        assert_eq!(run.left_at_end, (0, 0, 0, 0), "{case:?} {arrivals:?}");
    }
}

#[test]
fn sliced_windows_that_forget_idle_keys_still_equal_key_windows_and_native() {
    // Idle keys are remembered until thousands have gathered, then swept (see
    // SlicedWindows::forget_idle_keys): 30,000 keys, each coming back after being idle for a
    // while, so that sweeps happen between its visits and slots are reused by other keys, and
    // keys coming back before the sweep that would forget them.
    let geometry = SlidingGeometry::new(10, 5, 0).unwrap();
    let case = Case {
        size: 10,
        slide: 5,
        offset: 0,
        agg: NumericAggregate::Sum,
    };
    // Even times: 30,000 keys coming back every 60 s (long forgotten by then); odd times: 1,500
    // keys coming back every 3 s, often while still listed idle and not yet swept.
    let arrivals: Vec<(i64, u32, f64)> = (0..90_000_i64)
        .map(|i| {
            let key = if i % 2 == 0 {
                (i / 2 * 7_919) % 30_000
            } else {
                30_000 + (i / 2) % 1_500
            };
            (i, key as u32, (i % 7) as f64)
        })
        .collect();
    let run = three_ways(geometry, case.agg, &arrivals);
    assert!(
        run.live_keys_before_end < 100,
        "only keys with slices in the window count as live: {}",
        run.live_keys_before_end
    );
    let (a, b, c) = (run.key_windows, run.changes, run.all_windows);
    let per_key = |v: &Keyed| {
        let mut m: BTreeMap<u32, Vec<KeyedResult>> = BTreeMap::new();
        for (k, w, r) in v {
            m.entry(*k).or_default().push((*w, r.clone()));
        }
        m
    };
    assert_eq!(per_key(&b), per_key(&a));
    let (native, _) = native(case, &arrivals, 0);
    let got: Native = c
        .into_iter()
        .map(|(k, w, r)| match r {
            KeyWindowResult::Value(v) => ((k, w.start()), v),
            KeyWindowResult::Empty => panic!("empty in AllWindows mode"),
        })
        .collect();
    assert_eq!(got, native);
}

/// Key windows and sliced windows in both modes over the same arrivals, to the end of time.
struct ThreeWays {
    key_windows: Keyed,
    changes: Keyed,
    all_windows: Keyed,
    /// Live keys of the changes-mode processor before the end.
    live_keys_before_end: usize,
    /// Slices and keys left at the end: (changes slices, all-windows slices, changes keys,
    /// all-windows keys).
    left_at_end: (usize, usize, usize, usize),
}

fn three_ways(
    geometry: SlidingGeometry,
    agg: NumericAggregate,
    arrivals: &[(i64, u32, f64)],
) -> ThreeWays {
    let mut kw = KeyWindows::new(geometry, agg);
    let mut changes = SlicedWindows::new(geometry, agg, EmitMode::Changes);
    let mut all = SlicedWindows::new(geometry, agg, EmitMode::AllWindows);
    let (mut a, mut b, mut c) = (Keyed::new(), Keyed::new(), Keyed::new());
    for &(t, k, v) in arrivals {
        kw.process(k, v, t, &mut a).unwrap();
        changes.process(k, v, t, &mut b).unwrap();
        all.process(k, v, t, &mut c).unwrap();
    }
    let live_keys_before_end = changes.live_keys();
    kw.advance_time(i64::MAX, &mut a);
    changes.advance_time(i64::MAX, &mut b);
    all.advance_time(i64::MAX, &mut c);
    ThreeWays {
        key_windows: a,
        changes: b,
        all_windows: c,
        live_keys_before_end,
        left_at_end: (
            changes.live_slices(),
            all.live_slices(),
            changes.live_keys(),
            all.live_keys(),
        ),
    }
}

#[test]
fn sliced_windows_at_scale_equal_native_and_key_windows_in_event_time() {
    // Many keys, thousands of elements, disorder within the watermark delay: batches fill and
    // fold early, idle keys are swept and their slots reused, the firing ring grows. Checked
    // against the native operator (all windows) and event-time key windows (changes).
    let mut rng = Rng(0x5CA1_AB1E);
    for round in 0..4 {
        // Round 3: slices of hundreds of ms, so one slice outgrows a batch.
        let slide = if round == 3 {
            rng.range(300, 500)
        } else {
            rng.range(1, 20)
        };
        let case = Case {
            size: slide * rng.range(1, 40)
                + if round % 2 == 0 {
                    rng.range(0, slide - 1)
                } else {
                    0
                },
            slide,
            offset: rng.range(-(slide - 1), slide - 1),
            agg: [NumericAggregate::Sum, NumericAggregate::Max][round % 2],
        };
        let delay = rng.range(0, 30);
        let keys = [50, 6_000, 9_000, 300][round];
        let mut max = i64::MIN;
        let arrivals: Vec<(i64, u32, f64)> = (0..12_000_i64)
            .map(|i| {
                let t = (i / 3 - rng.range(0, delay)).max(max.saturating_sub(delay));
                max = max.max(t);
                let key = (rng.next() % keys) as u32;
                (t, key, rng.range(0, 99) as f64)
            })
            .collect();
        let geometry = SlidingGeometry::new(case.size, case.slide, case.offset).unwrap();
        let drive = |emit: Option<EmitMode>| -> Keyed {
            let mut out = Keyed::new();
            let mut max = i64::MIN;
            match emit {
                Some(emit) => {
                    let mut s = EventTimeSlicedWindows::new(geometry, case.agg, emit, 0);
                    for &(t, k, v) in &arrivals {
                        s.process_element(k, v, t, &mut out).unwrap();
                        max = max.max(t);
                        s.process_watermark(max - delay - 1, &mut out);
                    }
                    s.process_watermark(i64::MAX, &mut out);
                    assert_eq!(s.late_elements(), 0, "late elements");
                }
                None => {
                    let mut s = EventTimeKeyWindows::new(geometry, case.agg, 0);
                    for &(t, k, v) in &arrivals {
                        s.process_element(k, v, t, &mut out).unwrap();
                        max = max.max(t);
                        s.process_watermark(max - delay - 1, &mut out);
                    }
                    s.process_watermark(i64::MAX, &mut out);
                    assert_eq!(s.late_elements(), 0, "late elements");
                }
            }
            out
        };
        let (native, _) = native(case, &arrivals, delay);
        let all: Native = drive(Some(EmitMode::AllWindows))
            .into_iter()
            .map(|(k, w, r)| match r {
                KeyWindowResult::Value(v) => ((k, w.start()), v),
                KeyWindowResult::Empty => panic!("empty in AllWindows mode"),
            })
            .collect();
        assert_eq!(all, native, "{case:?} keys {keys} delay {delay}");
        let per_key = |v: Keyed| {
            let mut m: BTreeMap<u32, Vec<KeyedResult>> = BTreeMap::new();
            for (k, w, r) in v {
                m.entry(k).or_default().push((w, r));
            }
            m
        };
        assert_eq!(
            per_key(drive(Some(EmitMode::Changes))),
            per_key(drive(None)),
            "{case:?} keys {keys} delay {delay}"
        );
    }
}
