//! Unit tests of `KeyWindows` (the contract's worked examples).

use super::test_output::{KeyWindowResult, Rows};
use super::*;
use window_core::NumericAggregate;

type Out = Rows<&'static str, Option<f64>>;

#[test]
fn worked_example_of_the_contract() {
    // docs/keywindow.md (the paper's figures 3 to 5): p = 4, k = 1, one key, elements at 0,
    // 5, 10, 11. Native windows: 13. Key windows: 8.
    let mut kw = KeyWindows::new(
        SlidingGeometry::new(4, 1, 0).unwrap(),
        NumericAggregate::Count,
    );
    let mut out: Out = Rows::new();
    for t in [0, 5, 10, 11] {
        kw.process("a", 1.0, t, &mut out).unwrap();
    }
    kw.advance_time(i64::MAX, &mut out);
    let v = |n: f64| KeyWindowResult::Value(Some(n));
    let expected = vec![
        ("a", TimeWindow::new(-3, 1), v(1.0)),                  // L(0)
        ("a", TimeWindow::new(1, 5), KeyWindowResult::Empty),   // R(0), empty
        ("a", TimeWindow::new(2, 6), v(1.0)),                   // L(5)
        ("a", TimeWindow::new(6, 10), KeyWindowResult::Empty),  // R(5), empty
        ("a", TimeWindow::new(7, 11), v(1.0)),                  // L(10)
        ("a", TimeWindow::new(8, 12), v(2.0)),                  // L(11): 10 and 11
        ("a", TimeWindow::new(11, 15), v(1.0)),                 // R(10): 11
        ("a", TimeWindow::new(12, 16), KeyWindowResult::Empty), // R(11), empty
    ];
    assert_eq!(out.0, expected);
    let m = kw.metrics();
    assert_eq!(
        (m.key_windows_created, m.native_windows, m.results_emitted),
        (8, 13, 8)
    );
    assert_eq!(m.empty_results, 3);
    assert_eq!(kw.live_windows(), 0, "everything fired and retired");
    assert_eq!(kw.live_keys(), 0);
}

#[test]
fn left_window_inherits_from_an_already_fired_window() {
    // docs/keywindow.md step 4: elements at 0 and 2, p = 4, k = 1: L(2) = [-1, 3) inherits
    // {0} from L(0) = [-3, 1), which fired at 0 (its max timestamp).
    let mut kw = KeyWindows::new(
        SlidingGeometry::new(4, 1, 0).unwrap(),
        NumericAggregate::Sum,
    );
    let mut out: Out = Rows::new();
    kw.process("a", 5.0, 0, &mut out).unwrap();
    kw.process("a", 7.0, 2, &mut out).unwrap();
    assert_eq!(
        out.0,
        vec![(
            "a",
            TimeWindow::new(-3, 1),
            KeyWindowResult::Value(Some(5.0))
        )]
    );
    kw.advance_time(2, &mut out);
    assert_eq!(
        out.0.last().unwrap(),
        &(
            "a",
            TimeWindow::new(-1, 3),
            KeyWindowResult::Value(Some(12.0))
        )
    );
    assert_eq!(kw.metrics().inherited, 1);
}

#[test]
fn out_of_order_elements_are_refused() {
    let mut kw = KeyWindows::new(
        SlidingGeometry::new(4, 1, 0).unwrap(),
        NumericAggregate::Sum,
    );
    let mut out: Out = Rows::new();
    kw.process("a", 1.0, 10, &mut out).unwrap();
    assert_eq!(
        kw.process("a", 1.0, 9, &mut out),
        Err(KeyWindowError::OutOfOrder {
            timestamp: 9,
            current: 10
        })
    );
    assert!(SlidingGeometry::new(10, 5, 5).is_err());
}

#[test]
fn the_windows_held_are_counted_as_a_scan_counts_them() {
    // Random in-order elements over 5 keys; after every call the counter equals a scan of the
    // keys' windows, and a restored snapshot gives the same count.
    let mut kw = KeyWindows::new(
        SlidingGeometry::new(20, 5, 0).unwrap(),
        NumericAggregate::Sum,
    );
    let scan = |kw: &KeyWindows<u32, f64, NumericAggregate>| -> usize {
        kw.keys.states().map(|k| k.windows.len()).sum()
    };
    let mut out: Rows<u32, Option<f64>> = Rows::new();
    let (mut seed, mut t, mut most) = (16_u64, 0_i64, 0);
    for step in 0..2000 {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        t += ((seed >> 33) % 7) as i64;
        if step % 10 == 9 {
            kw.advance_time(t, &mut out);
        } else {
            kw.process(((seed >> 40) % 5) as u32, 1.0, t, &mut out)
                .unwrap();
        }
        assert_eq!(kw.held().windows, scan(&kw));
        assert_eq!(kw.live_windows(), scan(&kw));
        most = most.max(kw.held().windows);
        if step % 500 == 0 {
            let mut bytes = Vec::new();
            InOrderSnapshot::snapshot(&kw, &mut bytes).unwrap();
            let mut fresh: KeyWindows<u32, f64, _> =
                KeyWindows::new(kw.geometry(), NumericAggregate::Sum);
            InOrderSnapshot::restore(&mut fresh, &bytes).unwrap();
            assert_eq!(fresh.held(), kw.held());
        }
    }
    assert!(most > 5, "{most}");
    kw.advance_time(i64::MAX, &mut out);
    assert_eq!(kw.held(), HeldState::default());
}
