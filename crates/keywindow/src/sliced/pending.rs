//! What the batch of a [`SlicedWindows`] holds before it is folded: the slices and native
//! windows its elements make once folded, counted without folding, so that the live state and
//! the counters tell of them while they wait (a batch folds only when a window holding it is
//! due, which in processing time may never come before the end of input); and what a memory
//! bound counts of a [`SlicedWindows`], from counters ([`SlicedWindows::held`]).

use std::collections::HashSet;
use std::hash::Hash;

use window_core::{AggregateFunction, HeldState, Timestamp, MAP_ENTRY_OVERHEAD};

use super::{SliceKey, SlicedWindows};
use crate::count_new_windows;

impl<K, T, F> SlicedWindows<K, T, F>
where
    K: Hash + Eq + Clone,
    F: AggregateFunction<T>,
{
    /// Slices the batched elements open when folded (one per batched key whose open slice is
    /// not the batch's), and the native windows those slices count for the first time, as
    /// `fold` would count them. A scan of the batch (at most [`super::BATCH_LIMIT`] elements).
    pub(super) fn batched_counts(&self) -> (usize, u64) {
        let Some(facts) = self.facts.filter(|_| !self.batch.is_empty()) else {
            return (0, 0);
        };
        let mut seen: HashSet<&K> = HashSet::new();
        let (mut slices, mut native) = (0, 0);
        for (key, _) in &self.batch {
            if !seen.insert(key) {
                continue;
            }
            let state = self.keys.state_of(key);
            if state
                .and_then(|s| s.open.as_ref())
                .is_some_and(|(start, _)| *start == facts.start)
            {
                continue; // the element joins the key's open slice
            }
            slices += 1;
            let mut covered = state.and_then(|s| s.native_covered);
            native += count_new_windows(&mut covered, facts.left_index, facts.last_index);
        }
        (slices, native)
    }

    /// Slices held (folded ones) and fired windows kept for late firings, elements batched,
    /// keys held (idle ones a sweep has not forgotten yet included). Bytes: per key its state
    /// and slot, per slice two partial aggregates (the two-stacks keeps a suffix aggregate
    /// beside each) and a log or schedule entry, per kept window its accumulator, per batched
    /// element its size. O(1).
    pub fn held(&self) -> HeldState {
        let key = size_of::<SliceKey<K, F::Acc>>() + size_of::<(K, u32)>() + 2 * MAP_ENTRY_OVERHEAD;
        let slice = 2 * size_of::<(i64, F::Acc)>() + size_of::<(Timestamp, u32, i64)>();
        let (windows, elements, keys) = (self.live_slices, self.batch.len(), self.keys.len());
        // Fired windows kept for late firings (allowed lateness): an entry each, and a map
        // entry per key holding some.
        let retained = self.retained_windows * size_of::<(i64, F::Acc)>()
            + self.retained.len()
                * (size_of::<(u32, super::late::Retained<F::Acc>)>() + MAP_ENTRY_OVERHEAD)
            + self.changes.len()
                * (size_of::<(u32, super::late_changes::Changes<F::Acc>)>() + MAP_ENTRY_OVERHEAD);
        HeldState {
            windows: windows + self.retained_windows,
            elements,
            keys,
            bytes: keys * key + windows * slice + elements * size_of::<(K, T)>() + retained,
        }
    }
}
