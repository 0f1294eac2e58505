//! The late contributions to the front stack of a [`super::TwoStacks`]: what elements behind the
//! watermark added to slices of the front after it was built, kept apart from the front's
//! stored suffix aggregates so that a late element costs O(log n) `add`s instead of one `add` per
//! suffix aggregate that holds it.

use std::collections::BTreeMap;

use window_core::AggregateFunction;

/// The late contributions to a front stack of `len` entries, by position: a segment tree whose
/// leaves are, for each front position `p` (oldest first, counted from when this was made), the
/// "gap" before entry `p` (`2p`: slices that were not in the front and came in late, between entry
/// `p - 1` and entry `p`) and entry `p` itself (`2p + 1`: late elements added to it). The slices
/// of the gaps are kept one by one in `added`, as they can be evicted one by one.
///
/// The front's aggregate from its oldest remaining entry at position `j` is then its stored
/// suffix aggregate merged with what is left of gap `j` (in `added`) and the leaves from
/// `2j + 1` on: O(log n) merges, read once per eviction. Leaves before the oldest position are
/// stale (they still hold what was evicted) and never read: the bottom-up query only reads nodes
/// inside its range. An `add` updates a leaf and its ancestors in place (the aggregate is
/// commutative, as every late `add` already requires), so nothing is recomputed from children.
///
/// This is the idea of FiBA (Tangwongsan, Hirzel, Schneider, "Optimal and general out-of-order
/// sliding-window aggregation", VLDB 2019) and Scotty's slice store kept small: only the late
/// part is a tree; in-order streams never make one.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct FrontLate<A> {
    /// Front entries evicted since this was made: the front's entry `k` sits at position
    /// `head + k`.
    head: usize,
    /// Number of leaves (`2 * len`); node `i` has children `2i` and `2i + 1`, leaf `l` is node
    /// `leaves + l`.
    leaves: usize,
    tree: Vec<Option<A>>,
    /// The slices that came in late into a gap of the front, by start, each with its own
    /// partial aggregate (not a suffix).
    added: BTreeMap<i64, A>,
}

impl<A: Clone> FrontLate<A> {
    /// Nothing late yet, for a front of `len` entries.
    pub(super) fn new(len: usize) -> Self {
        let leaves = 2 * len;
        Self {
            head: 0,
            leaves,
            tree: vec![None; 2 * leaves],
            added: BTreeMap::new(),
        }
    }

    /// Whether this fits a front of `front` entries whose newest starts at `front_end`, the
    /// entry starts being `starts` (a snapshot's check): the tree's size, its positions, and
    /// every slice here inside the front but not one of its entries.
    pub(super) fn fits(&self, front: usize, front_end: i64, starts: &[i64]) -> bool {
        self.tree.len() == 2 * self.leaves
            && self.leaves == 2 * (self.head + front)
            && front > 0
            && self
                .added
                .keys()
                .all(|s| *s < front_end && starts.binary_search(s).is_err())
    }

    /// Number of slices that are only here (not entries of the front).
    pub(super) fn added_len(&self) -> usize {
        self.added.len()
    }

    /// Start of the oldest slice that is only here.
    pub(super) fn oldest_added(&self) -> Option<i64> {
        self.added.keys().next().copied()
    }

    /// Adds `value` to the front's entry `k` (0 = the oldest remaining): O(log n) `add`s.
    pub(super) fn add_to_entry<T, F: AggregateFunction<T, Acc = A>>(
        &mut self,
        f: &F,
        k: usize,
        value: &T,
    ) {
        self.add_leaf(f, 2 * (self.head + k) + 1, value);
    }

    /// Adds `value` to the slice starting at `start`, which lies in the gap before the front's
    /// entry `k` (after entry `k - 1`), making the slice if it is not here; returns whether it
    /// was made. O(log n) `add`s and a `BTreeMap` lookup.
    pub(super) fn add_to_gap<T, F: AggregateFunction<T, Acc = A>>(
        &mut self,
        f: &F,
        k: usize,
        start: i64,
        value: &T,
    ) -> bool {
        let made = !self.added.contains_key(&start);
        f.add(
            self.added
                .entry(start)
                .or_insert_with(|| f.create_accumulator()),
            value,
        );
        self.add_leaf(f, 2 * (self.head + k), value);
        made
    }

    fn add_leaf<T, F: AggregateFunction<T, Acc = A>>(&mut self, f: &F, leaf: usize, value: &T) {
        let mut node = self.leaves + leaf;
        while node >= 1 {
            f.add(
                self.tree[node].get_or_insert_with(|| f.create_accumulator()),
                value,
            );
            node /= 2;
        }
    }

    /// Drops the slices here that start before `start`; returns how many went.
    pub(super) fn evict_added_before(&mut self, start: i64) -> usize {
        let kept = self.added.split_off(&start);
        let gone = self.added.len();
        self.added = kept;
        gone
    }

    /// The front's oldest entry went (counted, so that positions stay put).
    pub(super) fn pop_entry(&mut self) {
        self.head += 1;
    }

    /// The late contributions to the front from its oldest remaining entry (starting at
    /// `oldest_entry`) on, merged into `into`: what is left of that entry's gap and the leaves
    /// from the entry on. O(log n) merges plus one per slice left in the gap.
    pub(super) fn merge_from_oldest<T, F: AggregateFunction<T, Acc = A>>(
        &self,
        f: &F,
        oldest_entry: i64,
        into: &mut A,
    ) {
        for a in self.added.range(..oldest_entry).map(|e| e.1) {
            f.merge(into, a.clone());
        }
        let (mut lo, mut hi) = (self.leaves + 2 * self.head + 1, 2 * self.leaves);
        while lo < hi {
            if lo % 2 == 1 {
                if let Some(a) = &self.tree[lo] {
                    f.merge(into, a.clone());
                }
                lo += 1;
            }
            if hi % 2 == 1 {
                hi -= 1;
                if let Some(a) = &self.tree[hi] {
                    f.merge(into, a.clone());
                }
            }
            lo /= 2;
            hi /= 2;
        }
    }
}
