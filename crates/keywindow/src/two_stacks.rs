//! The two-stacks FIFO aggregator that holds each key's closed slices in
//! [`crate::sliced`]: amortised O(1) push, evict and query of the aggregate of all entries,
//! with `merge` only (no retraction) for in-order slices; elements behind the watermark into
//! the older part use `retract` where it is exact ([`front_late`]). Its own file because it is
//! a data structure with its own invariant and test, independent of slicing and firing.

use std::collections::VecDeque;

mod front_late;
use front_late::FrontLate;

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
    /// What elements behind the watermark added to the front since it was built (running sums
    /// or a segment tree, [`FrontLate`]), `None` (no cost) while the stream is in order; see
    /// [`Self::add_at`]. Last, past the inline part a
    /// firing reads.
    late: Option<Box<FrontLate<A>>>,
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
            late: None,
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
        self.late = None;
    }

    /// Number of slices held.
    pub(crate) fn len(&self) -> usize {
        self.items.len() + self.late.as_ref().map_or(0, |l| l.added_len())
    }

    /// No slice (a late slice of the front is only held while the front is not empty, so the
    /// buffer's length, in the struct beside the inline part, says it).
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

    /// The start of the oldest slice held, `i64::MAX` if there is none.
    pub(crate) fn oldest(&self) -> i64 {
        self.oldest
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
        let mut evicted = self
            .late
            .as_mut()
            .map_or(0, |l| l.evict_added_before(f, start, &self.items));
        while self.items.front().is_some_and(|e| e.0 < start) {
            if self.front == 0 {
                // Every late slice of the old front started before its newest entry, now gone.
                self.late = None;
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
            if let Some(late) = self.late.as_mut() {
                late.pop_entry(f, &self.items);
            }
        }
        if self.front == 0 {
            self.late = None;
        }
        self.refresh_ends();
        self.front_agg = self.items.front().filter(|_| self.front > 0).map(|e| {
            let mut agg = e.1.clone();
            if let Some(late) = &self.late {
                late.merge_from_oldest(f, e.0, &mut agg);
            }
            agg
        });
        evicted
    }

    /// Recomputes the inline starts of the oldest and newest slice (the oldest may be a late
    /// slice of the front, which is not among `items`).
    fn refresh_ends(&mut self) {
        let oldest_entry = self.items.front().map_or(i64::MAX, |e| e.0);
        self.oldest = self
            .late
            .as_ref()
            .and_then(|l| l.oldest_added())
            .map_or(oldest_entry, |a| a.min(oldest_entry));
        self.newest = self.items.back().map_or(i64::MIN, |e| e.0);
    }

    /// Adds `value` to the slice starting at `start`, making that slice if there is none (an
    /// element behind the watermark, `crate::sliced`'s late path); returns whether it was made.
    /// `add` is applied out of time order, so the aggregate must be commutative (every
    /// `NumericAggregate` is).
    ///
    /// Cost, for `n` slices: a binary search, then
    /// - a slice of the back stack (the newer part, where a slightly late element usually
    ///   lands): two `add`s; a new one is inserted into the buffer, which moves the entries on
    ///   the shorter side of it (a `VecDeque` insert: a move of plain values, no `add`);
    /// - a slice of the front stack, existing or new: into [`FrontLate`], the late
    ///   contributions to the front kept apart, and one `add` into the front's inline aggregate;
    ///   a new slice is kept in its map (a `BTreeMap` insert, comparisons), not inserted into
    ///   the buffer, so nothing moves. The front's stored suffix aggregates are not touched.
    ///   For an aggregate that retracts exactly ([`AggregateFunction::retract`]: a count, an
    ///   integer sum or mean) that is three calls (two `add`s, one `retract` that checks the
    ///   total stays exact): four in all, whatever the front's length; otherwise (min, max, a
    ///   float sum) O(log n) `add`s into a segment tree over the front's positions.
    ///
    /// While that part exists, each eviction rereads the front's aggregate: the oldest stored
    /// suffix merged with the running total of late contributions (one `merge`, and one
    /// `retract` per evicted slice that had late contributions), or with a range of the tree
    /// (O(log n) merges). It is made (O(front length) empty places, no `add`) at the first late
    /// element of a front and dropped when that front is gone; an in-order stream never makes
    /// one. The first float value into a front's late part turns it into the tree (built once
    /// from the contributions, O(front length) merges), so results equal the tree's.
    pub(crate) fn add_at<T, F: AggregateFunction<T, Acc = A>>(
        &mut self,
        f: &F,
        start: i64,
        value: &T,
    ) -> bool {
        let front = self.front;
        let inserted = match self.items.binary_search_by_key(&start, |e| e.0) {
            Ok(i) if i >= front => {
                f.add(&mut self.items[i].1, value);
                if let Some(agg) = self.back_agg.as_mut() {
                    f.add(agg, value);
                }
                false
            }
            Ok(k) => {
                let late = self
                    .late
                    .get_or_insert_with(|| Box::new(FrontLate::new(f, front, &self.items[0].1)));
                late.add_to_entry(f, k, value, &self.items);
                false
            }
            Err(k) if k < front => {
                let late = self
                    .late
                    .get_or_insert_with(|| Box::new(FrontLate::new(f, front, &self.items[0].1)));
                late.add_to_gap(f, k, start, value, &self.items)
            }
            Err(i) => {
                let mut acc = f.create_accumulator();
                f.add(&mut acc, value);
                match self.back_agg.as_mut() {
                    Some(agg) => f.add(agg, value),
                    None => self.back_agg = Some(acc.clone()),
                }
                self.items.insert(i, (start, acc));
                true
            }
        };
        if front > 0 && start <= self.items[front - 1].0 {
            // A slice of the front: the front's inline aggregate takes the value too.
            if let Some(agg) = self.front_agg.as_mut() {
                f.add(agg, value);
            }
        }
        self.refresh_ends();
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
    /// The late contributions to the front and the front's aggregate with them (which only
    /// an `AggregateFunction` could recompute).
    late: Option<(&'a FrontLate<A>, &'a A)>,
}

#[derive(Deserialize)]
struct PartsOwned<A> {
    items: VecDeque<(i64, A)>,
    front: usize,
    back_agg: Option<A>,
    late: Option<(Box<FrontLate<A>>, A)>,
}

impl<A: Serialize> Serialize for TwoStacks<A> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        PartsRef {
            items: &self.items,
            front: self.front,
            back_agg: &self.back_agg,
            late: self.late.as_deref().zip(self.front_agg.as_ref()),
        }
        .serialize(serializer)
    }
}

impl<'de, A: Deserialize<'de> + Clone> Deserialize<'de> for TwoStacks<A> {
    /// Refuses a front longer than the entries, a back aggregate without a back (or the
    /// reverse), starts out of order, and late contributions that do not fit the front.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let PartsOwned {
            items,
            front,
            back_agg,
            late,
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
        let (late, late_front_agg) = late.unzip();
        if let Some(l) = &late {
            let starts: Vec<i64> = items.iter().take(front).map(|e| e.0).collect();
            if !l.fits(front, starts.last().copied().unwrap_or(i64::MIN), &starts) {
                return Err(D::Error::custom("late contributions to closed slices torn"));
            }
        }
        let mut s = Self {
            oldest: i64::MAX,
            newest: i64::MIN,
            front_agg: None,
            back_agg,
            front,
            items,
            late,
        };
        s.refresh_ends();
        s.front_agg = late_front_agg.or_else(|| {
            (s.front > 0)
                .then(|| s.items.front().map(|e| e.1.clone()))
                .flatten()
        });
        Ok(s)
    }
}

#[cfg(test)]
mod tests;
