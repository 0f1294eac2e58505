//! Unit tests of `SlicedWindows` that need its private parts (layout, batch folding).

use super::*;
use crate::test_output::{KeyWindowResult, Rows};
use window_core::NumericAggregate;

/// The layout `SliceKey`'s documentation describes, for a numeric aggregate: the firing's
/// fields first, the closed slices' inline part from byte 64, their buffer last.
#[test]
fn slice_key_layout_is_as_documented() {
    type Key = SliceKey<u32, window_core::NumericAcc>;
    assert_eq!(std::mem::offset_of!(Key, closed), 64);
    assert_eq!(
        std::mem::size_of::<TwoStacks<window_core::NumericAcc>>(),
        120
    );
    assert_eq!(std::mem::size_of::<Key>(), 208);
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
