//! Issue #16, item 2: windows near `i64::MIN` and `i64::MAX`, every strategy against a naive
//! `i128` reference of the window bounds (seeded random geometries and elements near both ends).
//!
//! - The native operator (Flink's, with `TumblingWindows` when slide = size, else
//!   `SlidingWindows`) refuses exactly the elements one of whose aligned windows does not fit in
//!   `i64`, and gives, for the others, exactly the reference's windows and counts: no clamped
//!   window, no window that misses its element.
//! - Sliced windows and key windows refuse every element within one window and one slide of
//!   either end (they track the window after an element's last one): more than native, never
//!   less; over what they accept, sliced gives the reference's windows and counts, and key
//!   windows the reference's count at each window they emit (an emptied window holds nothing).

use std::collections::{BTreeMap, BTreeSet};

use keywindow::{EmitMode, EventTimeKeyWindows, EventTimeSlicedWindows, SlidingGeometry};
use window_assigners::{DefaultTrigger, SlidingWindows, TimeDomain, TumblingWindows};
use window_core::{
    ElementError, Emitted, NumericAggregate, TimeWindow, Timestamp, WindowComputation,
};
use window_operator::{Incremental, OperatorConfig, WindowOperator};

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
}

/// The windows `[s, s + size)` holding `t`, `s = offset + k * slide` for every integer `k`, in
/// `i128`: `None` when one of them does not fit in `i64`.
fn reference(case: Case, t: Timestamp) -> Option<Vec<(i64, i64)>> {
    let (t, size, slide, offset) = (
        i128::from(t),
        i128::from(case.size),
        i128::from(case.slide),
        i128::from(case.offset),
    );
    let (lo, hi) = (
        (t - size - offset).div_euclid(slide),
        (t - offset).div_euclid(slide),
    );
    let mut windows = Vec::new();
    for k in lo..=hi {
        let s = offset + k * slide;
        if s <= t && t < s + size {
            windows.push((i64::try_from(s).ok()?, i64::try_from(s + size).ok()?));
        }
    }
    Some(windows)
}

type Counts = BTreeMap<(u32, i64, i64), f64>;

/// The reference's counts per (key, window) over `accepted` elements.
fn expected(case: Case, accepted: &[(Timestamp, u32)]) -> Counts {
    let mut counts = Counts::new();
    for &(t, k) in accepted {
        for (s, e) in reference(case, t).expect("accepted elements fit") {
            *counts.entry((k, s, e)).or_default() += 1.0;
        }
    }
    counts
}

/// What a computation did with the elements: those it accepted, its results (values by key
/// and window, in emission order), and the windows it emptied.
struct Run {
    accepted: Vec<(Timestamp, u32)>,
    refused: BTreeSet<Timestamp>,
    results: Vec<((u32, i64, i64), f64)>,
    emptied: Vec<(u32, i64, i64)>,
}

fn run<C>(mut c: C, elements: &[(Timestamp, u32)]) -> Run
where
    C: WindowComputation<u32, f64, Window = TimeWindow, Output = Option<f64>>,
{
    let mut out: Vec<Emitted<u32, TimeWindow, f64, Option<f64>>> = Vec::new();
    let (mut accepted, mut refused) = (Vec::new(), BTreeSet::new());
    for &(t, k) in elements {
        match c.process_element(k, 1.0, t, &mut out) {
            Ok(()) => accepted.push((t, k)),
            Err(r) => {
                assert!(
                    matches!(r.error, ElementError::TimestampOutOfRange { timestamp, .. } if timestamp == t),
                    "{r:?}"
                );
                refused.insert(t);
            }
        }
        c.process_watermark(t.saturating_sub(1), &mut out);
    }
    c.process_watermark(Timestamp::MAX, &mut out);
    let (mut results, mut emptied) = (Vec::new(), Vec::new());
    for e in out {
        match e {
            Emitted::Result {
                key,
                window,
                result,
                ..
            } => results.push((
                (key, window.start(), window.end()),
                result.expect("a count"),
            )),
            Emitted::Emptied { key, window, .. } => {
                emptied.push((key, window.start(), window.end()));
            }
            Emitted::Late { .. } => panic!("nothing is late: elements come in time order"),
        }
    }
    Run {
        accepted,
        refused,
        results,
        emptied,
    }
}

fn native(case: Case, elements: &[(Timestamp, u32)]) -> Run {
    let config = OperatorConfig::default();
    let f = Incremental(NumericAggregate::Count);
    if case.slide == case.size {
        let a = TumblingWindows::new(case.size, case.offset, TimeDomain::EventTime).unwrap();
        let op = WindowOperator::new(a, a.default_trigger(), f, config).unwrap();
        run(op, elements)
    } else {
        let a =
            SlidingWindows::new(case.size, case.slide, case.offset, TimeDomain::EventTime).unwrap();
        let op = WindowOperator::new(a, a.default_trigger(), f, config).unwrap();
        run(op, elements)
    }
}

/// Every window emitted lies on the grid with the full size: none was clamped.
fn on_grid(case: Case, windows: impl Iterator<Item = (u32, i64, i64)>, what: &str) {
    for (_, s, e) in windows {
        assert_eq!(
            i128::from(e) - i128::from(s),
            i128::from(case.size),
            "{what}"
        );
        assert_eq!(
            (i128::from(s) - i128::from(case.offset)).rem_euclid(i128::from(case.slide)),
            0,
            "{what}: [{s}, {e})"
        );
    }
}

#[test]
fn every_strategy_near_both_ends_of_time_matches_the_i128_reference() {
    let mut rng = Rng(0x16_0002);
    let mut refused_by_native = 0;
    let mut refused_by_ordered_only = 0;
    for round in 0..400 {
        let size = rng.range(1, 40);
        let slide = match rng.range(0, 3) {
            0 => size,
            1 => rng.range(size, 2 * size + 3), // gaps
            _ => rng.range(1, size),
        };
        let offset = rng.range(-(slide - 1), slide - 1);
        let case = Case {
            size,
            slide,
            offset,
        };
        let reach = 3 * (size + slide) + 5;
        let near_min = round % 2 == 0;
        let mut times: Vec<Timestamp> = (0..rng.range(1, 30))
            .map(|_| {
                let r = rng.range(0, reach);
                if near_min {
                    Timestamp::MIN + 1 + r // i64::MIN itself is "no timestamp"
                } else {
                    Timestamp::MAX - r
                }
            })
            .collect();
        times.sort_unstable();
        let elements: Vec<(Timestamp, u32)> = times
            .into_iter()
            .map(|t| (t, rng.range(0, 2) as u32))
            .collect();
        let what = format!("round {round}: {case:?}, {elements:?}");

        let n = native(case, &elements);
        let unfit: BTreeSet<Timestamp> = elements
            .iter()
            .map(|e| e.0)
            .filter(|&t| reference(case, t).is_none())
            .collect();
        assert_eq!(n.refused, unfit, "native refusals: {what}");
        let mut native_counts = Counts::new();
        for (w, v) in &n.results {
            assert!(
                native_counts.insert(*w, *v).is_none(),
                "fired twice: {what}"
            );
        }
        assert_eq!(native_counts, expected(case, &n.accepted), "native: {what}");
        refused_by_native += n.refused.len();

        let g = SlidingGeometry::new(size, slide, offset).unwrap();
        let margin = i128::from(size + slide);
        let near_an_end = |t: Timestamp| {
            i128::from(t) < i128::from(Timestamp::MIN) + margin
                || i128::from(t) > i128::from(Timestamp::MAX) - margin
        };
        let sliced = run(
            EventTimeSlicedWindows::new(g, NumericAggregate::Count, EmitMode::AllWindows, 0),
            &elements,
        );
        assert!(sliced.refused.is_superset(&n.refused), "sliced: {what}");
        assert!(
            sliced.refused.iter().all(|&t| near_an_end(t)),
            "sliced: {what}"
        );
        let sliced_counts: Counts = sliced.results.iter().copied().collect();
        assert_eq!(sliced_counts.len(), sliced.results.len(), "{what}");
        assert_eq!(
            sliced_counts,
            expected(case, &sliced.accepted),
            "sliced: {what}"
        );
        on_grid(case, sliced.results.iter().map(|r| r.0), &what);
        refused_by_ordered_only += sliced.refused.len() - n.refused.len();

        let kw = run(
            EventTimeKeyWindows::new(g, NumericAggregate::Count, 0),
            &elements,
        );
        assert_eq!(kw.refused, sliced.refused, "key windows: {what}");
        let reference_counts = expected(case, &kw.accepted);
        for (w, v) in &kw.results {
            assert_eq!(
                reference_counts.get(w),
                Some(v),
                "key windows {w:?}: {what}"
            );
        }
        for w in &kw.emptied {
            assert!(!reference_counts.contains_key(w), "emptied {w:?}: {what}");
        }
        on_grid(
            case,
            kw.results
                .iter()
                .map(|r| r.0)
                .chain(kw.emptied.iter().copied()),
            &what,
        );
        on_grid(case, n.results.iter().map(|r| r.0), &what);
    }
    // The inputs reach both kinds of refusal, often.
    assert!(refused_by_native > 500, "{refused_by_native}");
    assert!(refused_by_ordered_only > 200, "{refused_by_ordered_only}");
}
