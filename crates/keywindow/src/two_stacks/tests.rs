//! Tests of the two-stacks aggregator and its late part, against plain references.

use super::*;
use window_core::NumericAggregate;

#[test]
fn two_stacks_matches_a_plain_fifo() {
    let f = NumericAggregate::Max;
    let mut s = TwoStacks::new();
    let mut fifo: Vec<(i64, f64)> = Vec::new();
    let mut seed = 12345_u64;
    for step in 0..5000_i64 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        if !seed.is_multiple_of(3) {
            let v = (seed % 1000) as f64;
            let mut acc = AggregateFunction::<f64>::create_accumulator(&f);
            AggregateFunction::<f64>::add(&f, &mut acc, &v);
            s.push(&f, step, acc);
            fifo.push((step, v));
        } else if seed.is_multiple_of(97) {
            s.clear();
            fifo.clear();
        } else {
            let cut = step - (seed % 20) as i64;
            let before = fifo.len();
            fifo.retain(|e| e.0 >= cut);
            assert_eq!(s.evict_before(&f, cut), before - fifo.len());
        }
        let mut acc = AggregateFunction::<f64>::create_accumulator(&f);
        s.merge_into(&f, &mut acc);
        let expected = fifo
            .iter()
            .map(|e| e.1)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        assert_eq!(AggregateFunction::<f64>::get_result(&f, &acc), expected);
        assert_eq!(s.len(), fifo.len());
        assert_eq!(s.is_empty(), fifo.is_empty());
        assert_eq!(s.newest_start(), fifo.last().map(|e| e.0));
    }
}

/// One step of a seeded xorshift.
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// A numeric aggregate without its inverse: the late part of a front is always the tree.
#[derive(Debug)]
struct NoRetract(NumericAggregate);

impl AggregateFunction<f64> for NoRetract {
    type Acc = window_core::NumericAcc;
    type Out = Option<f64>;
    fn create_accumulator(&self) -> Self::Acc {
        self.0.create_accumulator()
    }
    fn add(&self, acc: &mut Self::Acc, value: &f64) {
        self.0.add(acc, value);
    }
    fn merge(&self, acc: &mut Self::Acc, other: Self::Acc) {
        self.0.merge(acc, other);
    }
    fn get_result(&self, acc: &Self::Acc) -> Option<f64> {
        self.0.get_result(acc)
    }
}

/// The form of `s`'s late part: `None`, `Some(false)` (sums), `Some(true)` (tree).
fn form<A: Clone>(s: &TwoStacks<A>) -> Option<bool> {
    s.late.as_ref().map(|l| l.is_tree())
}

#[test]
fn out_of_order_adds_match_a_plain_map_of_slices() {
    // Pushes in order, evictions, and adds at random earlier starts (existing or new
    // slices, in the front or the back, below the oldest too), for every numeric
    // aggregate; now and then a snapshot round trip. Values are integers, with halves mixed in
    // from step 1500 to 3000 and from 4500 on (a float sum then, exact still at these
    // magnitudes, so any order gives the same sum). Two references: a plain map of slices,
    // aggregated afresh, and a twin over the same aggregate without its inverse (the tree
    // path), whose accumulators must be the same bit for bit.
    use NumericAggregate::{Count, Max, Mean, Min, Sum};
    for (f, seed0) in [(Sum, 99_u64), (Min, 7), (Max, 1234), (Count, 5), (Mean, 42)] {
        let g = NoRetract(f);
        let (mut s, mut t) = (TwoStacks::new(), TwoStacks::new());
        let mut slices: std::collections::BTreeMap<i64, Vec<f64>> = Default::default();
        let mut seed = seed0;
        let (mut inserted, mut in_front, mut new_in_front) = (0, 0, 0);
        let (mut to_tree, mut snap_sums, mut snap_tree) = (0, 0, 0);
        for step in 0..6000_i64 {
            let r = next(&mut seed);
            let half = (step / 1500) % 2 == 1 && r.is_multiple_of(5);
            let v = (r % 1000) as f64 + if half { 0.5 } else { 0.0 };
            match r % 11 {
                0..=3 => {
                    let mut acc = AggregateFunction::<f64>::create_accumulator(&f);
                    AggregateFunction::<f64>::add(&f, &mut acc, &v);
                    s.push(&f, 2 * step, acc);
                    t.push(&g, 2 * step, acc);
                    slices.insert(2 * step, vec![v]);
                }
                4..=7 => {
                    let start = 2 * step - (next(&mut seed) % 80) as i64;
                    let front_end = s.front.checked_sub(1).map(|k| s.items[k].0);
                    let new = !slices.contains_key(&start);
                    let front = front_end.is_some_and(|e| start <= e);
                    in_front += usize::from(front);
                    new_in_front += usize::from(front && new);
                    let before = form(&s);
                    assert_eq!(s.add_at(&f, start, &v), new, "step {step}");
                    assert_eq!(t.add_at(&g, start, &v), new, "step {step}");
                    to_tree += usize::from(before == Some(false) && form(&s) == Some(true));
                    inserted += usize::from(new);
                    slices.entry(start).or_default().push(v);
                }
                8 if r.is_multiple_of(7) => {
                    snap_sums += usize::from(form(&s) == Some(false));
                    snap_tree += usize::from(form(&s) == Some(true));
                    let mut bytes = Vec::new();
                    postcard::to_io(&s, &mut bytes).unwrap();
                    s = postcard::from_bytes(&bytes).unwrap();
                    bytes.clear();
                    postcard::to_io(&t, &mut bytes).unwrap();
                    t = postcard::from_bytes(&bytes).unwrap();
                }
                _ => {
                    let cut = 2 * step - (next(&mut seed) % 70) as i64;
                    let before = slices.len();
                    slices.retain(|k, _| *k >= cut);
                    assert_eq!(s.evict_before(&f, cut), before - slices.len());
                    assert_eq!(t.evict_before(&g, cut), before - slices.len());
                }
            }
            let mut acc = AggregateFunction::<f64>::create_accumulator(&f);
            s.merge_into(&f, &mut acc);
            let mut expected = AggregateFunction::<f64>::create_accumulator(&f);
            for v in slices.values().flatten() {
                AggregateFunction::<f64>::add(&f, &mut expected, v);
            }
            assert_eq!(
                AggregateFunction::<f64>::get_result(&f, &acc),
                AggregateFunction::<f64>::get_result(&f, &expected),
                "{f:?} step {step}"
            );
            assert_eq!(
                (&s.front_agg, &s.back_agg),
                (&t.front_agg, &t.back_agg),
                "{f:?} step {step}: as the tree path"
            );
            assert_eq!(s.len(), slices.len());
            assert_eq!(s.is_empty(), slices.is_empty());
            assert_eq!(s.newest_start(), slices.keys().next_back().copied());
            assert_eq!(s.oldest, slices.keys().next().copied().unwrap_or(i64::MAX));
        }
        assert!(
            inserted > 500 && in_front > 500 && new_in_front > 100,
            "{inserted} {in_front} {new_in_front}"
        );
        // Both forms were snapshotted (a count is never a tree); halves turned a sum's sums
        // into a tree mid-front.
        let retracts = matches!(f, Sum | Mean | Count);
        assert_eq!(snap_sums > 3, retracts, "{f:?} {snap_sums}");
        assert_eq!(snap_tree > 3, f != Count, "{f:?} {snap_tree}");
        assert_eq!(to_tree > 3, matches!(f, Sum | Mean), "{f:?} {to_tree}");
    }
}

/// Counts the `add`s and `merge`s of a sum.
#[derive(Default)]
struct Counting(std::cell::Cell<usize>, std::cell::Cell<usize>);

impl AggregateFunction<f64> for Counting {
    type Acc = f64;
    type Out = f64;
    fn create_accumulator(&self) -> f64 {
        0.0
    }
    fn add(&self, acc: &mut f64, value: &f64) {
        self.0.set(self.0.get() + 1);
        *acc += value;
    }
    fn merge(&self, acc: &mut f64, other: f64) {
        self.1.set(self.1.get() + 1);
        *acc += other;
    }
    fn get_result(&self, acc: &f64) -> f64 {
        *acc
    }
}

#[test]
fn a_late_element_in_the_front_costs_a_logarithm_of_its_length() {
    // A front of 4096 slices (pushed, then flipped by evicting the oldest), then a late
    // element into each 97th of its slices, newest first (the worst case of plain suffix
    // aggregates: one `add` per older slice), and new slices between them.
    let f = Counting::default();
    let mut s = TwoStacks::new();
    for i in 0..4097 {
        s.push(&f, 10 * i, 1.0);
    }
    assert_eq!(s.evict_before(&f, 1), 1);
    assert_eq!(s.front, 4096);
    for i in (1..4097).rev().step_by(97) {
        let (adds, merges) = (f.0.get(), f.1.get());
        assert!(!s.add_at(&f, 10 * i, &2.0));
        assert!(s.add_at(&f, 10 * i - 5, &3.0));
        // Two leaves of a tree of 16384 nodes (depth 15) and the inline aggregate, twice.
        assert!(f.0.get() - adds <= 2 * 16, "{}", f.0.get() - adds);
        assert_eq!(f.1.get(), merges);
    }
    let mut total = 0.0;
    s.merge_into(&f, &mut total);
    assert_eq!(total, 4096.0 + 43.0 * 5.0);
    // An eviction reads the front's aggregate back: a range of the tree.
    let merges = f.1.get();
    assert_eq!(s.evict_before(&f, 10 * 2000), 1999 + 21);
    assert!(f.1.get() - merges <= 2 * 15 + 1, "{}", f.1.get() - merges);
    let mut total = 0.0;
    s.merge_into(&f, &mut total);
    let late_left = (1..4097).rev().step_by(97).filter(|i| *i >= 2000).count() as f64;
    assert_eq!(total, 2097.0 + late_left * 5.0);
}

/// Counts the `add`s, `merge`s and `retract`s of an integer sum (which retracts exactly).
#[derive(Default)]
struct CountingExact {
    calls: std::cell::Cell<usize>,
}

impl CountingExact {
    fn tick(&self) {
        self.calls.set(self.calls.get() + 1);
    }
}

impl AggregateFunction<i64> for CountingExact {
    type Acc = i64;
    type Out = i64;
    fn create_accumulator(&self) -> i64 {
        0
    }
    fn add(&self, acc: &mut i64, value: &i64) {
        self.tick();
        *acc += value;
    }
    fn merge(&self, acc: &mut i64, other: i64) {
        self.tick();
        *acc += other;
    }
    fn get_result(&self, acc: &i64) -> i64 {
        *acc
    }
    fn retract(&self, acc: &mut i64, other: &i64) -> bool {
        self.tick();
        *acc -= other;
        true
    }
}

#[test]
fn a_late_element_in_the_front_of_an_exact_sum_costs_a_constant() {
    // As above, with a sum that retracts: a front of 4096 slices, a late element into each
    // 97th of its slices and a new slice beside each, newest first; then evictions one slice at
    // a time. Each late element is at most 4 calls (two adds and a retract into the late part,
    // one add into the front's aggregate), each eviction at most 2 (a retract of what leaves,
    // one merge for the front's aggregate), whatever the front's length.
    let f = CountingExact::default();
    let mut s = TwoStacks::new();
    for i in 0..4097 {
        s.push(&f, 10 * i, 1);
    }
    assert_eq!(s.evict_before(&f, 1), 1);
    assert_eq!(s.front, 4096);
    let mut late_total = 0;
    for i in (1..4097).rev().step_by(97) {
        let calls = f.calls.get();
        let first = s.late.is_none();
        assert!(!s.add_at(&f, 10 * i, &2));
        // The front's first late element also asks, once, whether the front retracts.
        let most = 4 + usize::from(first);
        assert!(f.calls.get() - calls <= most, "{}", f.calls.get() - calls);
        let calls = f.calls.get();
        assert!(s.add_at(&f, 10 * i - 5, &3));
        assert!(f.calls.get() - calls <= 4, "{}", f.calls.get() - calls);
        late_total += 5;
    }
    assert_eq!(form(&s), Some(false), "the sums form");
    let mut total = 0;
    s.merge_into(&f, &mut total);
    assert_eq!(total, 4096 + late_total);
    // Evict slice by slice up to 20000 (2000 entries and the late slices among them).
    let mut left = 4096 + 43;
    for cut in (11..=20_000).step_by(5) {
        let calls = f.calls.get();
        let gone = s.evict_before(&f, cut);
        assert!(gone <= 1);
        assert!(
            f.calls.get() - calls <= 2,
            "cut {cut}: {}",
            f.calls.get() - calls
        );
        left -= gone;
    }
    let late_left = (1..4097).rev().step_by(97).filter(|i| *i >= 2000).count() as i64;
    assert_eq!(s.len(), left);
    let mut total = 0;
    s.merge_into(&f, &mut total);
    assert_eq!(total, 2097 + late_left * 5);
}

#[test]
fn torn_late_contributions_of_either_form_are_refused() {
    // A front of 8 slices with late contributions as sums (a count) and as the tree (a max);
    // a round trip keeps them (the same aggregate after further evictions), and one position
    // fewer in the form is refused by name.
    for f in [NumericAggregate::Count, NumericAggregate::Max] {
        let mut s = TwoStacks::new();
        for i in 0..9 {
            let mut acc = AggregateFunction::<f64>::create_accumulator(&f);
            AggregateFunction::<f64>::add(&f, &mut acc, &(i as f64));
            s.push(&f, 10 * i, acc);
        }
        s.evict_before(&f, 1);
        assert!(s.add_at(&f, 25, &100.0));
        assert!(!s.add_at(&f, 40, &50.0));
        assert_eq!(form(&s), Some(f == NumericAggregate::Max));
        let mut bytes = Vec::new();
        postcard::to_io(&s, &mut bytes).unwrap();
        let mut back: TwoStacks<window_core::NumericAcc> = postcard::from_bytes(&bytes).unwrap();
        for t in [&mut s, &mut back] {
            assert_eq!(t.evict_before(&f, 30), 3, "10, 20, 25");
        }
        let result = |t: &TwoStacks<_>| {
            let mut acc = AggregateFunction::<f64>::create_accumulator(&f);
            t.merge_into(&f, &mut acc);
            AggregateFunction::<f64>::get_result(&f, &acc)
        };
        let want = if f == NumericAggregate::Count {
            6.0 + 1.0
        } else {
            50.0
        };
        assert_eq!(
            (result(&s), result(&back)),
            (Some(want), Some(want)),
            "{f:?}"
        );
        s.late.as_mut().unwrap().tear();
        bytes.clear();
        postcard::to_io(&s, &mut bytes).unwrap();
        // postcard keeps no message; the check is `FrontLate::fits`.
        assert!(postcard::from_bytes::<TwoStacks<window_core::NumericAcc>>(&bytes).is_err());
        let starts: Vec<i64> = s.items.iter().take(s.front).map(|e| e.0).collect();
        let late = s.late.as_ref().unwrap();
        assert!(
            !late.fits(s.front, *starts.last().unwrap(), &starts),
            "{f:?}"
        );
    }
}
