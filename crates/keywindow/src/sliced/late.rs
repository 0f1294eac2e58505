//! Elements behind the watermark in [`SlicedWindows`] (all-windows mode, event time), as
//! Flink's window operator takes them (issue #15): such an element joins every window holding it
//! that has not fired, through its slice, and, with allowed lateness, every window holding it
//! that fired but is not cleaned up yet, which fires again at once (a late firing, as Flink's
//! `EventTimeTrigger` fires a window whose max timestamp is behind the watermark). Only an
//! element whose every window is cleaned up is late.
//!
//! - **Windows not fired yet** take the element through its slice: the key's open slice, a
//!   closed slice (in place, [`crate::two_stacks::TwoStacks::add_at`]) or a new slice inserted
//!   in time order; the key is scheduled to fire the first of those windows if it was not
//!   already. Every slice is at or after the start of the window the key fires next, so nothing
//!   evicted is ever needed again.
//! - **Fired windows within the lateness** keep their accumulators, per key, from their on-time
//!   firing until their cleanup time (`max timestamp + allowed lateness`), as Flink keeps their
//!   state: a late element is added to each of those holding it (or starts one, for a window
//!   that was empty when it fired), and each emits its result. That is O(1) per late firing,
//!   as for the native operator, and the same state for those windows as Flink's.
//!
//! `add` is applied out of time order, so the aggregate must be commutative (every
//! `NumericAggregate` is). Sums and means of decimals may differ from the native operator's in
//! the last digits (`docs/sliced.md`, "Lateness").

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

use window_core::{time, AggregateFunction, TimeWindow, Timestamp, Window, WindowOutput};

use super::{EmitMode, SliceKey, SlicedWindows};
use crate::{count_new_windows, SlidingGeometry};

/// Fired windows of one key kept for late firings: (window start, accumulator), by start.
pub(super) type Retained<A> = VecDeque<(i64, A)>;

/// The fired windows kept for late firings, per key slot.
pub(super) type RetainedByKey<A> = HashMap<u32, Retained<A>, ahash::RandomState>;

/// Drops the windows of `windows` cleaned up at `now` (max timestamp + `lateness` <= `now`);
/// returns how many went.
fn prune<A>(
    g: &SlidingGeometry,
    windows: &mut Retained<A>,
    now: Timestamp,
    lateness: i64,
) -> usize {
    let before = windows.len();
    while windows
        .front()
        .is_some_and(|w| time::add(g.window(w.0).max_timestamp(), lateness) <= now)
    {
        windows.pop_front();
    }
    before - windows.len()
}

impl<K, A: Clone> SliceKey<K, A> {
    /// The accumulator of every slice held, `None` if there is none.
    pub(super) fn aggregate_acc<T, F: AggregateFunction<T, Acc = A>>(&self, f: &F) -> Option<A> {
        match (self.closed.is_empty(), &self.open) {
            (true, None) => None,
            (true, Some((_, open))) => Some(open.clone()),
            (false, open) => {
                let mut acc = f.create_accumulator();
                self.closed.merge_into(f, &mut acc);
                if let Some((_, open)) = open {
                    f.merge(&mut acc, open.clone());
                }
                Some(acc)
            }
        }
    }
}

impl<K, T, F> SlicedWindows<K, T, F>
where
    K: Hash + Eq + Clone,
    F: AggregateFunction<T>,
{
    /// [`crate::InOrderWindows::accept_behind`]: yes, in both modes (changes: `late_changes`).
    pub(super) fn accept_behind(&mut self, allowed_lateness: i64) -> bool {
        self.lateness = Some(allowed_lateness.max(0));
        true
    }

    /// Allowed lateness when fired windows are kept for late firings (above 0).
    pub(super) fn retains(&self) -> Option<i64> {
        self.lateness.filter(|l| *l > 0)
    }

    /// [`crate::InOrderWindows::process_behind`] (see the module docs).
    pub(super) fn behind<O>(
        &mut self,
        key: K,
        value: T,
        time: Timestamp,
        out: &mut O,
    ) -> Option<(K, T)>
    where
        O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized,
    {
        let Some(lateness) = self.lateness else {
            return Some((key, value));
        };
        let g = self.geometry;
        let now = self.time;
        let (left, last) = (g.left_start(time), g.slot(time));
        if left > last {
            // In a gap between windows: late as Flink counts it, or in no window.
            if time::add(time, lateness) <= now {
                return Some((key, value));
            }
            self.metrics.in_no_window += 1;
            return None;
        }
        let last_fire = g.window(last).max_timestamp();
        if time::add(last_fire, lateness) <= now {
            return Some((key, value)); // every window holding it is cleaned up
        }
        self.metrics.elements += 1;
        let slice_start = TimeWindow::window_start_with_offset(time, self.slice_offset, self.slice);
        if self.facts.is_some_and(|f| f.start < slice_start) {
            // The batch's slice is older: fold it first, so that slices stay in time order.
            // (A batch of the element's slice or a newer one folds after it, as it would.)
            self.fold_batch();
        }
        // Not `self.intern`: a second caller made the compiler stop inlining it into
        // `fold_batch`, the per-element path (cachegrind); this closure is its own instance.
        let slot = self.keys.intern(&key, || SliceKey {
            next: None,
            open: None,
            key: key.clone(),
            closed: crate::two_stacks::TwoStacks::new(),
            round: 0,
            native_covered: None,
        });
        if self.emit == EmitMode::Changes {
            self.changes_behind(slot, value, time, lateness, out);
        } else {
            if lateness > 0 && g.window(left).max_timestamp() <= now {
                self.fire_late(slot, &value, left, last, lateness, out);
            }
            if last_fire > now {
                self.add_behind(slot, value, time, left);
            }
        }
        if self.keys.get(slot).is_some_and(SliceKey::is_idle) {
            self.idle.push(slot); // a new key holding only fired windows
        }
        None
    }

    /// Adds the element to the fired windows of the key in `slot` that hold it and are not
    /// cleaned up, and fires each again, latest first (the order of Flink's sliding assigner).
    fn fire_late<O>(
        &mut self,
        slot: u32,
        value: &T,
        left: i64,
        last: i64,
        lateness: i64,
        out: &mut O,
    ) where
        O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized,
    {
        let (g, f, now) = (self.geometry, &self.function, self.time);
        let Some(state) = self.keys.get(slot) else {
            return;
        };
        let windows = self.retained.entry(slot).or_default();
        self.retained_windows -= prune(&g, windows, now, lateness);
        // The latest fired window holding the element: max timestamp <= now.
        let mut start = last.min(g.slot(now.saturating_sub(g.size()).saturating_add(1)));
        while start >= left && time::add(g.window(start).max_timestamp(), lateness) > now {
            let i = match windows.binary_search_by_key(&start, |w| w.0) {
                Ok(i) => i,
                Err(i) => {
                    // Empty when it fired: the element starts it, as in Flink.
                    windows.insert(i, (start, f.create_accumulator()));
                    self.retained_windows += 1;
                    i
                }
            };
            f.add(&mut windows[i].1, value);
            self.metrics.results_emitted += 1;
            out.result(
                &state.key,
                &g.window(start),
                f.get_result(&windows[i].1),
                now,
            );
            match start.checked_sub(g.slide()) {
                Some(s) => start = s,
                None => break,
            }
        }
        if windows.is_empty() {
            self.retained.remove(&slot);
        }
    }

    /// Adds the element to its slice for the windows holding it that have not fired, and makes
    /// the key fire the first of them.
    fn add_behind(&mut self, slot: u32, value: T, time: Timestamp, left: i64) {
        let (g, now) = (self.geometry, self.time);
        self.add_to_slice(slot, value, time);
        let Some(state) = self.keys.get_mut(slot) else {
            return;
        };
        // The first window holding the element that has not fired (max timestamp > now).
        let first = left.max(g.left_start(now.saturating_add(1)));
        self.metrics.native_windows += count_new_windows(
            &mut state.native_covered,
            g.index(first),
            g.index(g.slot(time)),
        );
        if state.next.is_none_or(|n| first < n) {
            // The old entry, if any, goes stale: `next` no longer matches it.
            state.next = Some(first);
            self.fire.push(g.index(first), (slot, first));
            self.wake = self.wake.min(g.window(first).max_timestamp());
        }
    }

    /// Adds an element behind the watermark to its slice of the key in `slot`: the open slice, a
    /// closed one, or a new one (in time order).
    pub(super) fn add_to_slice(&mut self, slot: u32, value: T, time: Timestamp) {
        let f = &self.function;
        let start = TimeWindow::window_start_with_offset(time, self.slice_offset, self.slice);
        let Some(state) = self.keys.get_mut(slot) else {
            return;
        };
        let created = match state.open.as_mut() {
            Some((s, acc)) if *s == start => {
                f.add(acc, &value);
                false
            }
            Some((s, _)) if *s > start => state.closed.add_at(f, start, &value),
            _ => {
                // No slice yet, or only older ones: this one is the key's newest.
                let mut acc = f.create_accumulator();
                f.add(&mut acc, &value);
                if let Some((s, a)) = state.open.replace((start, acc)) {
                    state.closed.push(f, s, a);
                }
                true
            }
        };
        if created {
            self.live_slices += 1;
            self.metrics.key_windows_created += 1;
        }
    }

    /// On-time firing with allowed lateness: keeps the window's accumulator for late firings
    /// until its cleanup time, dropping those of the key's windows cleaned up by now.
    pub(super) fn retain(&mut self, slot: u32, start: i64, acc: F::Acc, lateness: i64) {
        let windows = self.retained.entry(slot).or_default();
        self.retained_windows -= prune(&self.geometry, windows, self.time, lateness);
        windows.push_back((start, acc));
        self.retained_windows += 1;
    }

    /// Whether the key in `slot` still holds fired windows within the lateness, once those
    /// cleaned up are dropped (idle keys are forgotten only without them).
    pub(super) fn still_retains(&mut self, slot: u32) -> bool {
        let Some(lateness) = self.retains() else {
            return false;
        };
        if self.emit == EmitMode::Changes {
            return self.still_retains_changes(slot, lateness);
        }
        let Some(windows) = self.retained.get_mut(&slot) else {
            return false;
        };
        self.retained_windows -= prune(&self.geometry, windows, self.time, lateness);
        if windows.is_empty() {
            self.retained.remove(&slot);
            return false;
        }
        true
    }
}
