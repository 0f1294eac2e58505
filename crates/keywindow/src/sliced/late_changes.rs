//! Elements behind the watermark in [`SlicedWindows`] emitting changes (`sliced:changes`, event
//! time, issue #15 item 2): the key-window contract's rule (`docs/keywindow.md`, "Event time"),
//! as [`crate::KeyWindows`] follows it. An element is taken when a window holding it is not
//! cleaned up; it emits the changes it causes to the fired windows, and its slice makes the key
//! fire where the result changes in the windows that have not fired.
//!
//! - **Fired windows.** With allowed lateness, each key keeps the results it emitted (its
//!   changes: window start and accumulator, `None` for an empty result) from the latest one at
//!   or before the first window not cleaned up onwards: the content of any fired window not
//!   cleaned up is that of the latest change at or before it. A late element makes its *entry
//!   window* (the first window holding it not cleaned up) a change, is added to every kept
//!   change from there up to the last fired window holding it, and makes the window after its
//!   last one (where it leaves) a change if it was not; each of these is emitted, in window
//!   order, at the watermark.
//! - **Windows not fired.** The element joins its slice (open, closed or new). The key fires at
//!   the first of its windows not fired when no fired window not cleaned up holds it (there the
//!   result changes), and at the window after its last one; these firings go in the firing
//!   schedule, which the all-windows mode uses and the changes mode otherwise leaves empty, and
//!   are merged with the slice log window by window (a key fires once per window).
//!
//! Cost: besides the slice (`late`), a scan of the key's kept changes (about `allowed lateness
//! / slide` at most) and one result per change it causes.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

use window_core::{time, AggregateFunction, TimeWindow, Timestamp, Window, WindowOutput};

use super::SlicedWindows;
use crate::{count_new_windows, SlidingGeometry};

/// The changes one key emitted for fired windows, kept for late elements: (window start,
/// accumulator, `None` for an empty result), by start.
pub(super) type Changes<A> = VecDeque<(i64, Option<A>)>;

/// The kept changes, per key slot.
pub(super) type ChangesByKey<A> = HashMap<u32, Changes<A>, ahash::RandomState>;

/// The start of the first window not cleaned up at `now` (max timestamp + `lateness` > now).
fn first_uncleaned(g: &SlidingGeometry, now: Timestamp, lateness: i64) -> i64 {
    g.left_start(time::sub(now, lateness).saturating_add(1))
}

/// Drops the changes no window not cleaned up needs: those before the latest one at or before
/// `uncleaned`, and that one too when it is empty (as good as none) and cleaned up. Returns how
/// many went.
fn prune<A>(changes: &mut Changes<A>, uncleaned: i64) -> usize {
    let before = changes.len();
    while let Some(front) = changes.front() {
        let superseded = changes.get(1).is_some_and(|next| next.0 <= uncleaned);
        if superseded || (front.0 < uncleaned && front.1.is_none()) {
            changes.pop_front();
        } else {
            break;
        }
    }
    before - changes.len()
}

/// The content of window `start` as the key's changes say: that of the latest change at or
/// before it.
fn content_at<A: Clone>(changes: &Changes<A>, start: i64) -> Option<A> {
    (changes.iter().rev().find(|c| c.0 <= start)).and_then(|c| c.1.clone())
}

/// Inserts a change at `start` (none there yet) with `content`, in order; returns its place.
fn insert<A>(changes: &mut Changes<A>, start: i64, content: Option<A>) -> usize {
    let i = changes.partition_point(|c| c.0 < start);
    changes.insert(i, (start, content));
    i
}

impl<K, T, F> SlicedWindows<K, T, F>
where
    K: Hash + Eq + Clone,
    F: AggregateFunction<T>,
{
    /// An element behind the watermark, not late, of the key in `slot` (see the module docs).
    pub(super) fn changes_behind<O>(
        &mut self,
        slot: u32,
        value: T,
        time: Timestamp,
        lateness: i64,
        out: &mut O,
    ) where
        O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized,
    {
        let (g, now) = (self.geometry, self.time);
        let (left, last) = (g.left_start(time), g.slot(time));
        let entry = left.max(first_uncleaned(&g, now, lateness));
        let unfired = g.left_start(now.saturating_add(1));
        let fired_last = last.min(unfired.saturating_sub(g.slide()));
        let fired_part = entry <= fired_last;
        if fired_part {
            self.late_changes(slot, &value, entry, fired_last, last, out);
        }
        if last >= unfired {
            self.add_to_slice(slot, value, time);
            if !fired_part {
                // No fired window holds it: the result changes at its first window.
                self.schedule_change(slot, entry);
            }
        }
        let right = last.saturating_add(g.slide());
        if right >= unfired {
            // It leaves there: the result changes (even with no slice left, an empty result).
            self.schedule_change(slot, right);
        }
        if let Some(state) = self.keys.get_mut(slot) {
            self.metrics.native_windows +=
                count_new_windows(&mut state.native_covered, g.index(entry), g.index(last));
        }
    }

    /// The key in `slot` fires at window `start` (not fired yet). With allowed lateness, until it
    /// has, its `next` (not used otherwise in changes mode) holds the latest such window, so that
    /// the key is not idle and no sweep forgets it (`fire_change_retaining` clears it); without,
    /// the element's slice keeps the key until its last scheduled window.
    fn schedule_change(&mut self, slot: u32, start: i64) {
        if let (Some(state), Some(_)) = (self.keys.get_mut(slot), self.lateness.filter(|l| *l > 0))
        {
            state.next = state.next.max(Some(start));
        }
        self.fire.push(self.geometry.index(start), (slot, start));
        self.wake = self.wake.min(self.geometry.window(start).max_timestamp());
    }

    /// The fired part of a late element: its entry window `entry` and the kept changes up to
    /// `fired_last` take it, and the window after `last` becomes a change if it has fired.
    fn late_changes<O>(
        &mut self,
        slot: u32,
        value: &T,
        entry: i64,
        fired_last: i64,
        last: i64,
        out: &mut O,
    ) where
        O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized,
    {
        let (g, f, now) = (self.geometry, &self.function, self.time);
        let Some(state) = self.keys.get(slot) else {
            return;
        };
        let changes = self.changes.entry(slot).or_default();
        let right = last.saturating_add(g.slide());
        let has = |c: &Changes<F::Acc>, s: i64| c.binary_search_by_key(&s, |c| c.0).is_ok();
        // Where it leaves, if fired and not a change yet: its content before the element.
        let leave = (g.window(right).max_timestamp() <= now && !has(changes, right))
            .then(|| content_at(changes, right));
        let from = match changes.binary_search_by_key(&entry, |c| c.0) {
            Ok(i) => i,
            Err(_) => {
                self.retained_windows += 1;
                let content = content_at(changes, entry);
                insert(changes, entry, content)
            }
        };
        for (start, acc) in changes.range_mut(from..) {
            if *start > fired_last {
                break;
            }
            let acc = acc.get_or_insert_with(|| f.create_accumulator());
            f.add(acc, value);
            self.metrics.results_emitted += 1;
            out.result(&state.key, &g.window(*start), f.get_result(acc), now);
        }
        if let Some(content) = leave {
            self.metrics.results_emitted += 1;
            match &content {
                Some(acc) => out.result(&state.key, &g.window(right), f.get_result(acc), now),
                None => {
                    self.metrics.empty_results += 1;
                    out.emptied(&state.key, &g.window(right), now);
                }
            }
            self.retained_windows += 1;
            insert(changes, right, content);
        }
    }

    /// `fire_change` with allowed lateness: the same firing, and the change kept for late
    /// elements. Apart, so that the firing without lateness stays as it was.
    #[inline(never)]
    pub(super) fn fire_change_retaining<O>(
        &mut self,
        slot: u32,
        start: i64,
        lateness: i64,
        out: &mut O,
    ) where
        O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized,
    {
        let (g, f) = (self.geometry, &self.function);
        let Some(state) = self.keys.get_mut(slot) else {
            return; // forgotten earlier in this round
        };
        if state.round == self.round {
            return;
        }
        state.round = self.round;
        if state.next.is_some_and(|n| n <= start) {
            state.next = None; // the last scheduled firing (`schedule_change`)
        }
        self.live_slices -= state.evict_before(f, start);
        let window = g.window(start);
        self.metrics.results_emitted += 1;
        let at = window.max_timestamp();
        let content = state.aggregate_acc(f);
        match &content {
            Some(acc) => out.result(&state.key, &window, f.get_result(acc), at),
            None => {
                self.metrics.empty_results += 1;
                out.emptied(&state.key, &window, at);
                self.idle.push(slot);
            }
        }
        let changes = self.changes.entry(slot).or_default();
        self.retained_windows -= prune(changes, first_uncleaned(&g, self.time, lateness));
        changes.push_back((start, content));
        self.retained_windows += 1;
    }

    /// Whether the key in `slot` still keeps changes a late element may need.
    pub(super) fn still_retains_changes(&mut self, slot: u32, lateness: i64) -> bool {
        let Some(changes) = self.changes.get_mut(&slot) else {
            return false;
        };
        let uncleaned = first_uncleaned(&self.geometry, self.time, lateness);
        self.retained_windows -= prune(changes, uncleaned);
        if changes.is_empty() {
            self.changes.remove(&slot);
            return false;
        }
        true
    }

    /// Changes mode with late firings scheduled: fires, window by window in index order, the
    /// keys of the slice log and of the firing schedule, each key once per window.
    pub(super) fn fire_changes_merged<O>(&mut self, time: Timestamp, out: &mut O)
    where
        O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized,
    {
        let g = self.geometry;
        let mut firing = std::mem::take(&mut self.firing);
        let mut taken: Option<(i64, Vec<(u32, i64)>)> = None;
        loop {
            if taken.is_none() {
                taken = self.fire.take_due(self.due_index);
            }
            let log = self.log.next_window().filter(|(i, _)| *i <= self.due_index);
            let scheduled = taken.as_ref().map(|(i, _)| (*i, g.start_of(*i)));
            let (index, start) = match (log, scheduled) {
                (Some(l), Some(s)) => l.min(s),
                (Some(w), None) | (None, Some(w)) => w,
                (None, None) => break,
            };
            if g.window(start).max_timestamp() > time {
                break; // only at the ends of time, where starts saturate
            }
            self.round += 1;
            firing.clear();
            if log.is_some_and(|l| l.0 == index) {
                self.log.take_window(index, &mut firing);
            }
            if scheduled.is_some_and(|s| s.0 == index) {
                let (_, entries) = taken.take().expect("scheduled");
                firing.extend(entries.iter().map(|e| e.0));
                self.fire.recycle(entries);
            }
            for &slot in &firing {
                self.fire_change(slot, start, out);
            }
        }
        if let Some((index, entries)) = taken {
            for e in entries {
                self.fire.push(index, e);
            }
        }
        firing.clear();
        self.firing = firing;
    }
}
