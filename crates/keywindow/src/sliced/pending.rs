//! What the batch of a [`SlicedWindows`] holds before it is folded: the slices and native
//! windows its elements make once folded, counted without folding, so that the live state and
//! the counters tell of them while they wait (a batch folds only when a window holding it is
//! due, which in processing time may never come before the end of input).

use std::collections::HashSet;
use std::hash::Hash;

use window_core::AggregateFunction;

use super::SlicedWindows;
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
}
