//! The two-stacks FIFO aggregator that holds each key's closed slices in
//! [`crate::sliced`]: amortised O(1) push, evict and query of the aggregate of all entries,
//! with `merge` only (no retraction). Its own file because it is a data structure with its own
//! invariant and test, independent of slicing and firing.

use std::collections::VecDeque;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use window_core::AggregateFunction;

/// A FIFO of (slice start, partial aggregate) with amortised O(1) push, evict and query: the
/// "two-stacks lite" form of two-stacks (Tangwongsan, Hirzel, Schneider: "In-order
/// sliding-window aggregation in worst-case constant time", VLDB J. 2021), both stacks in one
/// ring buffer.
///
/// `items[..front]` is the front stack, oldest first; each of its entries holds the aggregate of
/// itself and every newer front entry (a suffix aggregate), so `items[0]` holds the whole front.
/// `items[front..]` is the back stack: plain partials, whose aggregate is `back_agg`. Evicting
/// pops the oldest entry; when the front runs empty, the back is turned into suffix aggregates
/// in place (a flip). One buffer, held inline by the key, so reaching a slice costs one hop.
///
/// The starts of the oldest and newest entry and the front's aggregate (`items[0]`'s) are
/// copied inline beside the buffer: a firing that evicts nothing (most of them, at
/// `size / slide` firings per slice) then reads only the key's own state, not the buffer, which
/// for many sparse keys is a cache miss of its own.
#[derive(Clone, Debug)]
#[repr(C)]
pub(crate) struct TwoStacks<A> {
    /// Start of the oldest entry; `i64::MAX` when empty (nothing starts before it).
    oldest: i64,
    /// Start of the newest entry; meaningless when empty.
    newest: i64,
    /// The aggregate of the whole front stack (`items[0].1`), `None` when the front is empty.
    front_agg: Option<A>,
    back_agg: Option<A>,
    front: usize,
    items: VecDeque<(i64, A)>,
}

impl<A: Clone> TwoStacks<A> {
    pub(crate) const fn new() -> Self {
        Self {
            oldest: i64::MAX,
            newest: i64::MIN,
            front_agg: None,
            back_agg: None,
            front: 0,
            items: VecDeque::new(),
        }
    }

    /// Drops every entry, keeping the buffer for the next pushes.
    pub(crate) fn clear(&mut self) {
        self.items.clear();
        self.oldest = i64::MAX;
        self.newest = i64::MIN;
        self.front_agg = None;
        self.back_agg = None;
        self.front = 0;
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// No entry (the buffer's length sits in the struct, beside the inline part).
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub(crate) fn push<T, F: AggregateFunction<T, Acc = A>>(&mut self, f: &F, start: i64, acc: A) {
        match self.back_agg.as_mut() {
            Some(agg) => f.merge(agg, acc.clone()),
            None => self.back_agg = Some(acc.clone()),
        }
        if self.items.is_empty() {
            self.oldest = start;
        }
        self.newest = start;
        self.items.push_back((start, acc));
    }

    pub(crate) fn newest_start(&self) -> Option<i64> {
        (!self.items.is_empty()).then_some(self.newest)
    }

    /// Drops every slice starting before `start`; returns how many went. The common case,
    /// nothing to drop, is one comparison, inlined into the firing; the eviction is not.
    #[inline(always)]
    pub(crate) fn evict_before<T, F: AggregateFunction<T, Acc = A>>(
        &mut self,
        f: &F,
        start: i64,
    ) -> usize {
        if self.oldest >= start {
            return 0; // the common case: the buffer is not touched
        }
        self.evict(f, start)
    }

    /// [`Self::evict_before`] when something goes.
    #[inline(never)]
    fn evict<T, F: AggregateFunction<T, Acc = A>>(&mut self, f: &F, start: i64) -> usize {
        let mut evicted = 0;
        while self.items.front().is_some_and(|e| e.0 < start) {
            if self.front == 0 {
                // Flip: the back becomes the front, as suffix aggregates, newest first.
                let mut newer: Option<A> = None;
                for e in self.items.iter_mut().rev() {
                    if let Some(n) = newer {
                        f.merge(&mut e.1, n);
                    }
                    newer = Some(e.1.clone());
                }
                self.front = self.items.len();
                self.back_agg = None;
            }
            self.items.pop_front();
            self.front -= 1;
            evicted += 1;
        }
        self.oldest = self.items.front().map_or(i64::MAX, |e| e.0);
        self.front_agg = if self.front > 0 {
            self.items.front().map(|e| e.1.clone())
        } else {
            None
        };
        evicted
    }

    /// Adds `value` to the entry starting at `start`, inserting that entry if there is none
    /// (an element behind the watermark, `crate::sliced`'s late path); returns whether it was
    /// inserted. `add` is applied out of time order, so the aggregate must be commutative (every
    /// `NumericAggregate` is).
    ///
    /// Cost: a binary search, then O(1) `add`s for an entry of the back stack (the newer
    /// part, where a slightly late element usually lands); for an entry of the front stack at
    /// position `i` (oldest first), `i + 1` `add`s, as every suffix aggregate from the oldest up
    /// to it holds it. An insert also moves the entries on one side of it (a `VecDeque`).
    pub(crate) fn add_at<T, F: AggregateFunction<T, Acc = A>>(
        &mut self,
        f: &F,
        start: i64,
        value: &T,
    ) -> bool {
        let found = self.items.binary_search_by_key(&start, |e| e.0);
        let inserted = match found {
            Ok(i) if i >= self.front => {
                f.add(&mut self.items[i].1, value);
                if let Some(agg) = self.back_agg.as_mut() {
                    f.add(agg, value);
                }
                false
            }
            Ok(i) => {
                for e in self.items.range_mut(..=i) {
                    f.add(&mut e.1, value);
                }
                false
            }
            Err(i) => {
                let mut acc = f.create_accumulator();
                f.add(&mut acc, value);
                if i >= self.front {
                    match self.back_agg.as_mut() {
                        Some(agg) => f.add(agg, value),
                        None => self.back_agg = Some(acc.clone()),
                    }
                } else {
                    // Its suffix aggregate: itself and every newer front entry, which the
                    // entry now at `i` holds; every older suffix takes the value too.
                    f.merge(&mut acc, self.items[i].1.clone());
                    for e in self.items.range_mut(..i) {
                        f.add(&mut e.1, value);
                    }
                    self.front += 1;
                }
                self.items.insert(i, (start, acc));
                true
            }
        };
        self.oldest = self.items.front().map_or(i64::MAX, |e| e.0);
        self.newest = self.items.back().map_or(i64::MIN, |e| e.0);
        if self.front > 0 {
            self.front_agg = self.items.front().map(|e| e.1.clone());
        }
        inserted
    }

    /// The aggregate of every slice, merged into `into`.
    pub(crate) fn merge_into<T, F: AggregateFunction<T, Acc = A>>(&self, f: &F, into: &mut A) {
        if let Some(a) = &self.front_agg {
            f.merge(into, a.clone());
        }
        if let Some(b) = &self.back_agg {
            f.merge(into, b.clone());
        }
    }
}

/// A snapshot of the aggregator as it is: the entries (the front's as suffix aggregates, the
/// back's as plain partials), where the front ends, and the back's aggregate. The per-slice
/// partials of the front are gone once folded, and re-folding the back in another order could
/// change an `f64` sum, so nothing is recomputed but the inline copies.
#[derive(Serialize)]
struct PartsRef<'a, A> {
    items: &'a VecDeque<(i64, A)>,
    front: usize,
    back_agg: &'a Option<A>,
}

#[derive(Deserialize)]
struct PartsOwned<A> {
    items: VecDeque<(i64, A)>,
    front: usize,
    back_agg: Option<A>,
}

impl<A: Serialize> Serialize for TwoStacks<A> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        PartsRef {
            items: &self.items,
            front: self.front,
            back_agg: &self.back_agg,
        }
        .serialize(serializer)
    }
}

impl<'de, A: Deserialize<'de> + Clone> Deserialize<'de> for TwoStacks<A> {
    /// Refuses a front longer than the entries, a back aggregate without a back (or the
    /// reverse), and starts out of order.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let PartsOwned {
            items,
            front,
            back_agg,
        } = PartsOwned::<A>::deserialize(deserializer)?;
        if front > items.len() || back_agg.is_some() != (front < items.len()) {
            return Err(D::Error::custom("closed slices torn"));
        }
        if items
            .iter()
            .zip(items.iter().skip(1))
            .any(|(a, b)| a.0 > b.0)
        {
            return Err(D::Error::custom("closed slices out of order"));
        }
        Ok(Self {
            oldest: items.front().map_or(i64::MAX, |e| e.0),
            newest: items.back().map_or(i64::MIN, |e| e.0),
            front_agg: if front > 0 {
                items.front().map(|e| e.1.clone())
            } else {
                None
            },
            back_agg,
            front,
            items,
        })
    }
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn out_of_order_adds_match_a_plain_map_of_slices() {
        // Pushes in order, evictions, and adds at random earlier starts (existing or new
        // entries, in the front or the back, below the oldest too), for max and an exact sum.
        for f in [NumericAggregate::Max, NumericAggregate::Sum] {
            let mut s = TwoStacks::new();
            let mut slices: std::collections::BTreeMap<i64, Vec<f64>> = Default::default();
            let mut seed = 99_u64;
            let mut next = move || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            let (mut inserted, mut in_front) = (0, 0);
            for step in 0..6000_i64 {
                let r = next();
                let v = (r % 1000) as f64;
                match r % 5 {
                    0 | 1 => {
                        let mut acc = AggregateFunction::<f64>::create_accumulator(&f);
                        AggregateFunction::<f64>::add(&f, &mut acc, &v);
                        s.push(&f, 2 * step, acc);
                        slices.insert(2 * step, vec![v]);
                    }
                    2 | 3 => {
                        let start = 2 * step - (next() % 60) as i64;
                        in_front += usize::from(
                            s.items
                                .iter()
                                .position(|e| e.0 >= start)
                                .unwrap_or(usize::MAX)
                                < s.front,
                        );
                        let new = !slices.contains_key(&start);
                        assert_eq!(s.add_at(&f, start, &v), new, "step {step}");
                        inserted += usize::from(new);
                        slices.entry(start).or_default().push(v);
                    }
                    _ => {
                        let cut = 2 * step - (next() % 50) as i64;
                        let before = slices.len();
                        slices.retain(|k, _| *k >= cut);
                        assert_eq!(s.evict_before(&f, cut), before - slices.len());
                    }
                }
                let mut acc = AggregateFunction::<f64>::create_accumulator(&f);
                s.merge_into(&f, &mut acc);
                let all = slices.values().flatten().copied();
                let expected = match f {
                    _ if slices.is_empty() => AggregateFunction::<f64>::get_result(
                        &f,
                        &AggregateFunction::<f64>::create_accumulator(&f),
                    ),
                    NumericAggregate::Max => all.reduce(f64::max),
                    _ => all.reduce(|a, b| a + b),
                };
                assert_eq!(AggregateFunction::<f64>::get_result(&f, &acc), expected);
                assert_eq!(s.len(), slices.len());
                assert_eq!(s.newest_start(), slices.keys().next_back().copied());
            }
            assert!(inserted > 500 && in_front > 500, "{inserted} {in_front}");
        }
    }
}
