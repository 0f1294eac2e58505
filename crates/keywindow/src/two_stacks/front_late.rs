//! The late contributions to the front stack of a [`super::TwoStacks`]: what elements behind the
//! watermark added to slices of the front after it was built, kept apart from the front's
//! stored suffix aggregates so that a late element does not cost one `add` per suffix aggregate
//! that holds it: O(1) `add`s for an aggregate that retracts exactly (an integer sum or mean, a
//! count), O(log n) otherwise.

use std::collections::{BTreeMap, VecDeque};

use window_core::AggregateFunction;

/// The late contributions to a front stack of `len` entries, by position (oldest first, counted
/// from when this was made; the front's entry `k` sits at position `head + k`). Each position
/// `p` has a "gap" before entry `p` (slices that were not in the front and came in late, between
/// entry `p - 1` and entry `p`, kept one by one in `added`, as they can be evicted one by one)
/// and entry `p` itself (late elements added to it). Two forms ([`Form`]):
///
/// - **sums**, while the aggregate retracts exactly ([`AggregateFunction::retract`]: counts,
///   integer sums and means): the late contributions per entry and a running total of every late
///   contribution to the remaining front (entries and gap slices). A late element is three calls
///   (`add` to its slice's contribution and to the total, and a `retract` of nothing from the
///   total, which says whether the total can still be retracted from); an evicted slice's
///   contribution is retracted from the total (one call); the front's aggregate from its oldest
///   remaining entry is its stored suffix merged with the total (one `merge`). This is the
///   "subtract on evict" of invertible aggregates (Tangwongsan, Hirzel, Schneider, Wu, "General
///   incremental sliding-window aggregation", VLDB 2015; Scotty's invertible aggregates).
/// - **tree**, otherwise: a segment tree whose leaves are, for each position `p`, the gap
///   (`2p`) and the entry (`2p + 1`). The front's aggregate from its oldest remaining entry at
///   position `j` is then its stored suffix aggregate merged with what is left of gap `j` (in
///   `added`) and the leaves from `2j + 1` on: O(log n) merges, read once per eviction. Leaves
///   before the oldest position are stale (they still hold what was evicted) and never read:
///   the bottom-up query only reads nodes inside its range. An `add` updates a leaf and its
///   ancestors in place (the aggregate is commutative, as every late `add` already requires).
///   This is the idea of FiBA (Tangwongsan, Hirzel, Schneider, "Optimal and general
///   out-of-order sliding-window aggregation", VLDB 2019) and Scotty's slice store kept small.
///
/// A front starts as sums when its stored suffixes can be retracted from (a `retract` of
/// nothing from the whole front's: an integer sum, not a float one) and turns into the tree,
/// once, the first time a retraction fails (a float value came in): the tree is built from the
/// contributions (O(front length) merges) before that value is added, so the results are the
/// tree's whenever a float is involved, and equal to it (exact sums) before. In-order streams
/// make neither.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct FrontLate<A> {
    /// Front entries evicted since this was made: the front's entry `k` sits at position
    /// `head + k`.
    head: usize,
    /// The slices that came in late into a gap of the front, by start, each with its own
    /// partial aggregate (not a suffix).
    added: BTreeMap<i64, A>,
    form: Form<A>,
}

/// The two forms of [`FrontLate`].
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
enum Form<A> {
    /// The aggregate retracts: `total` is every late contribution to the remaining front,
    /// `entries[p]` what came in late to the entry at position `p` (`None`: nothing).
    Sums { total: A, entries: Vec<Option<A>> },
    /// Node `i` has children `2i` and `2i + 1`, leaf `l` is node `leaves + l`; `leaves` is twice
    /// the front's length when this was made.
    Tree { leaves: usize, tree: Vec<Option<A>> },
}

impl<A: Clone> FrontLate<A> {
    /// Nothing late yet, for a front of `len` entries whose whole aggregate (the oldest entry's
    /// suffix) is `front_agg`: sums if that can be retracted from, else the tree.
    pub(super) fn new<T, F: AggregateFunction<T, Acc = A>>(
        f: &F,
        len: usize,
        front_agg: &A,
    ) -> Self {
        let total = f.create_accumulator();
        let form = if f.retract(&mut front_agg.clone(), &total) {
            Form::Sums {
                total,
                entries: vec![None; len],
            }
        } else {
            Form::Tree {
                leaves: 2 * len,
                tree: vec![None; 4 * len],
            }
        };
        Self {
            head: 0,
            added: BTreeMap::new(),
            form,
        }
    }

    /// Whether this fits a front of `front` entries whose newest starts at `front_end`, the
    /// entry starts being `starts` (a snapshot's check): the size of the form, its positions,
    /// and every slice here inside the front but not one of its entries.
    pub(super) fn fits(&self, front: usize, front_end: i64, starts: &[i64]) -> bool {
        let positions = self.head + front;
        let form = match &self.form {
            Form::Sums { entries, .. } => entries.len() == positions,
            Form::Tree { leaves, tree } => tree.len() == 2 * leaves && *leaves == 2 * positions,
        };
        form && front > 0
            && self
                .added
                .keys()
                .all(|s| *s < front_end && starts.binary_search(s).is_err())
    }

    /// Whether this is the tree form (for tests).
    #[cfg(test)]
    pub(super) fn is_tree(&self) -> bool {
        matches!(self.form, Form::Tree { .. })
    }

    /// Drops the newest position of the form, as a torn snapshot could (for tests).
    #[cfg(test)]
    pub(super) fn tear(&mut self) {
        match &mut self.form {
            Form::Sums { entries, .. } => drop(entries.pop()),
            Form::Tree { tree, .. } => drop(tree.pop()),
        }
    }

    /// Number of slices that are only here (not entries of the front).
    pub(super) fn added_len(&self) -> usize {
        self.added.len()
    }

    /// Start of the oldest slice that is only here.
    pub(super) fn oldest_added(&self) -> Option<i64> {
        self.added.keys().next().copied()
    }

    /// Adds `value` to the total of the sums form and checks that it can still be retracted
    /// from; if not, turns this into the tree (before `value` is anywhere else). Returns whether
    /// this is (still) the sums form.
    fn add_to_total<T, F: AggregateFunction<T, Acc = A>>(
        &mut self,
        f: &F,
        value: &T,
        items: &VecDeque<(i64, A)>,
    ) -> bool {
        let Form::Sums { total, .. } = &mut self.form else {
            return false;
        };
        f.add(total, value);
        if f.retract(total, &f.create_accumulator()) {
            return true;
        }
        self.make_tree(f, items);
        false
    }

    /// Adds `value` to the front's entry `k` (0 = the oldest remaining) of `items`: three calls
    /// (sums) or O(log n) `add`s (tree).
    pub(super) fn add_to_entry<T, F: AggregateFunction<T, Acc = A>>(
        &mut self,
        f: &F,
        k: usize,
        value: &T,
        items: &VecDeque<(i64, A)>,
    ) {
        let p = self.head + k;
        if self.add_to_total(f, value, items) {
            if let Form::Sums { entries, .. } = &mut self.form {
                f.add(
                    entries[p].get_or_insert_with(|| f.create_accumulator()),
                    value,
                );
            }
        } else {
            self.add_leaf(f, 2 * p + 1, value);
        }
    }

    /// Adds `value` to the slice starting at `start`, which lies in the gap before the front's
    /// entry `k` of `items` (after entry `k - 1`), making the slice if it is not here; returns
    /// whether it was made. A `BTreeMap` lookup (comparisons) and three calls (sums) or O(log n)
    /// `add`s (tree).
    pub(super) fn add_to_gap<T, F: AggregateFunction<T, Acc = A>>(
        &mut self,
        f: &F,
        k: usize,
        start: i64,
        value: &T,
        items: &VecDeque<(i64, A)>,
    ) -> bool {
        let sums = self.add_to_total(f, value, items);
        let made = !self.added.contains_key(&start);
        f.add(
            self.added
                .entry(start)
                .or_insert_with(|| f.create_accumulator()),
            value,
        );
        if !sums {
            self.add_leaf(f, 2 * (self.head + k), value);
        }
        made
    }

    fn add_leaf<T, F: AggregateFunction<T, Acc = A>>(&mut self, f: &F, leaf: usize, value: &T) {
        let Form::Tree { leaves, tree } = &mut self.form else {
            unreachable!("a leaf of the tree form");
        };
        let mut node = *leaves + leaf;
        while node >= 1 {
            f.add(
                tree[node].get_or_insert_with(|| f.create_accumulator()),
                value,
            );
            node /= 2;
        }
    }

    /// Turns the sums form into the tree, from the contributions of the remaining front
    /// (`items`, the front first): O(front length) merges, once per front.
    #[cold]
    fn make_tree<T, F: AggregateFunction<T, Acc = A>>(
        &mut self,
        f: &F,
        items: &VecDeque<(i64, A)>,
    ) {
        let Form::Sums { entries, .. } = &mut self.form else {
            return;
        };
        let leaves = 2 * entries.len();
        let mut tree: Vec<Option<A>> = vec![None; 2 * leaves];
        for (p, c) in entries.iter_mut().enumerate().skip(self.head) {
            tree[leaves + 2 * p + 1] = c.take();
        }
        for (s, a) in &self.added {
            let leaf = leaves + 2 * (self.head + items.partition_point(|e| e.0 < *s));
            merge_into(f, &mut tree[leaf], a);
        }
        for i in (1..leaves).rev() {
            let (left, right) = (tree[2 * i].clone(), tree[2 * i + 1].clone());
            for child in [left, right].iter().flatten() {
                merge_into(f, &mut tree[i], child);
            }
        }
        self.form = Form::Tree { leaves, tree };
    }

    /// Drops the slices here that start before `start` (their contributions leave the total:
    /// one `retract` each); returns how many went. `items` are the front's entries before this
    /// eviction.
    pub(super) fn evict_added_before<T, F: AggregateFunction<T, Acc = A>>(
        &mut self,
        f: &F,
        start: i64,
        items: &VecDeque<(i64, A)>,
    ) -> usize {
        // One at a time from the oldest: no allocation (a `split_off` allocated a root and
        // freed the old map on every eviction while this exists, most of them of nothing).
        let (mut gone, mut exact) = (0, true);
        while let Some(e) = self.added.first_entry().filter(|e| *e.key() < start) {
            let a = e.remove();
            gone += 1;
            if let Form::Sums { total, .. } = &mut self.form {
                exact = exact && f.retract(total, &a);
            }
        }
        if !exact {
            self.make_tree(f, items);
        }
        gone
    }

    /// The front's oldest entry went (counted, so that positions stay put); its contribution
    /// leaves the total (one `retract`). `items` are the entries left, the front first.
    pub(super) fn pop_entry<T, F: AggregateFunction<T, Acc = A>>(
        &mut self,
        f: &F,
        items: &VecDeque<(i64, A)>,
    ) {
        self.head += 1;
        if let Form::Sums { total, entries } = &mut self.form {
            if let Some(c) = entries[self.head - 1].take() {
                if !f.retract(total, &c) {
                    self.make_tree(f, items);
                }
            }
        }
    }

    /// The late contributions to the front from its oldest remaining entry (starting at
    /// `oldest_entry`) on, merged into `into`: the total (one `merge`, sums), or what is left of
    /// that entry's gap and the leaves from the entry on (O(log n) merges plus one per slice
    /// left in the gap, tree).
    pub(super) fn merge_from_oldest<T, F: AggregateFunction<T, Acc = A>>(
        &self,
        f: &F,
        oldest_entry: i64,
        into: &mut A,
    ) {
        let (leaves, tree) = match &self.form {
            Form::Sums { total, .. } => return f.merge(into, total.clone()),
            Form::Tree { leaves, tree } => (*leaves, tree),
        };
        for a in self.added.range(..oldest_entry).map(|e| e.1) {
            f.merge(into, a.clone());
        }
        let (mut lo, mut hi) = (leaves + 2 * self.head + 1, 2 * leaves);
        while lo < hi {
            if lo % 2 == 1 {
                if let Some(a) = &tree[lo] {
                    f.merge(into, a.clone());
                }
                lo += 1;
            }
            if hi % 2 == 1 {
                hi -= 1;
                if let Some(a) = &tree[hi] {
                    f.merge(into, a.clone());
                }
            }
            lo /= 2;
            hi /= 2;
        }
    }
}

/// Merges `a` into `into`, or sets it.
fn merge_into<T, F: AggregateFunction<T>>(f: &F, into: &mut Option<F::Acc>, a: &F::Acc) {
    match into {
        Some(x) => f.merge(x, a.clone()),
        None => *into = Some(a.clone()),
    }
}
