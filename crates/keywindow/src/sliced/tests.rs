//! Unit tests of `SlicedWindows` that need its private parts (layout, batch folding).

use super::*;
use crate::test_output::{KeyWindowResult, Rows};
use crate::InOrderWindows;
use window_core::NumericAggregate;

/// The layout `SliceKey`'s documentation describes, for a numeric aggregate: the firing's
/// fields first, the closed slices' inline part from byte 64, their buffer last.
#[test]
fn slice_key_layout_is_as_documented() {
    type Key = SliceKey<u32, window_core::NumericAcc>;
    assert_eq!(std::mem::offset_of!(Key, closed), 64);
    assert_eq!(
        std::mem::size_of::<TwoStacks<window_core::NumericAcc>>(),
        128
    );
    assert_eq!(std::mem::size_of::<Key>(), 216);
}

#[test]
fn slices_longer_than_the_batch_limit_keep_every_element() {
    // One slice of 10 s holding far more elements than a batch: folding in several batches
    // must give the plain sums, in both modes.
    let g = SlidingGeometry::new(20_000, 10_000, 0).unwrap();
    for emit in [EmitMode::AllWindows, EmitMode::Changes] {
        let mut s = SlicedWindows::new(g, NumericAggregate::Sum, emit);
        let mut out = Rows::<u32, Option<f64>>::new();
        let n = 3 * BATCH_LIMIT as i64 + 17;
        for i in 0..n {
            s.process((i % 3) as u32, i as f64, i, &mut out).unwrap();
        }
        s.advance_time(i64::MAX, &mut out);
        for key in 0..3_u32 {
            let expected: f64 = (0..n).filter(|i| i % 3 == i64::from(key)).sum::<i64>() as f64;
            let first = out.0.iter().find(|o| o.0 == key).expect("a result per key");
            assert_eq!(first.1, TimeWindow::new(-10_000, 10_000), "{emit:?}");
            assert_eq!(first.2, KeyWindowResult::Value(Some(expected)), "{emit:?}");
        }
        assert_eq!(s.metrics().elements, n as u64);
    }
}

#[test]
fn changes_mode_gives_the_worked_example_of_key_windows() {
    // docs/keywindow.md: p = 4, k = 1, elements at 0, 5, 10, 11: the same 8 results.
    let g = SlidingGeometry::new(4, 1, 0).unwrap();
    let mut s = SlicedWindows::new(g, NumericAggregate::Count, EmitMode::Changes);
    let mut out = Rows::<&str, Option<f64>>::new();
    for t in [0, 5, 10, 11] {
        s.process("a", 1.0, t, &mut out).unwrap();
    }
    s.advance_time(i64::MAX, &mut out);
    let starts: Vec<i64> = out.0.iter().map(|o| o.1.start()).collect();
    assert_eq!(starts, [-3, 1, 2, 6, 7, 8, 11, 12]);
    assert_eq!(out.0[5].2, KeyWindowResult::Value(Some(2.0)));
    assert_eq!(s.metrics().empty_results, 3);
    assert_eq!(s.live_keys(), 0);
    assert_eq!(s.live_slices(), 0);
}

#[test]
fn batched_elements_count_in_the_live_slices_and_the_counters() {
    // Issue #16, item 7: in processing time a batch may wait until the end of input, where
    // sliced reported 0 live slices (no "windows still open" warning) and 0 slices created.
    // The live state and the counters must be those of a processor that folds every element
    // at once, after every element (seeded; keys and times random, times in order).
    let g = SlidingGeometry::new(600, 60, 0).unwrap();
    for emit in [EmitMode::AllWindows, EmitMode::Changes] {
        let mut batched = SlicedWindows::new(g, NumericAggregate::Count, emit);
        let mut folded = SlicedWindows::new(g, NumericAggregate::Count, emit);
        folded.set_batch_limit(1);
        let (mut a, mut b) = (Rows::<u32, Option<f64>>::new(), Rows::new());
        let mut seed: u64 = 16;
        let mut next = move |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) % n
        };
        let mut t = 0;
        for _ in 0..2_000 {
            t += next(4) as i64;
            let key = next(7) as u32;
            batched.process(key, 1.0, t, &mut a).unwrap();
            folded.process(key, 1.0, t, &mut b).unwrap();
            assert_eq!(
                batched.live_slices(),
                folded.live_slices(),
                "{emit:?} at {t}"
            );
            assert_eq!(batched.metrics(), folded.metrics(), "{emit:?} at {t}");
        }
        assert!(
            !batched.batch.is_empty(),
            "the test must end with a batch waiting"
        );
        assert!(batched.live_slices() > 0);
        assert_eq!(a.0, b.0);
    }
    // Two elements and no firing: the case.
    let mut s = SlicedWindows::new(g, NumericAggregate::Count, EmitMode::AllWindows);
    let mut out = Rows::<&str, Option<f64>>::new();
    s.process("a", 1.0, 1, &mut out).unwrap();
    s.process("b", 1.0, 2, &mut out).unwrap();
    assert_eq!(s.live_slices(), 2);
    assert_eq!(InOrderWindows::<&str, f64>::live_windows(&s), 2);
    assert_eq!(s.metrics().key_windows_created, 2);
    assert_eq!(s.metrics().native_windows, 20);
}
