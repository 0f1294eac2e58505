//! All-windows mode of [`SlicedWindows`]: firing the schedule's due entries, each from the
//! key's unchanged-firing entry when it holds one (`slots`), else from the key's state.

use std::hash::Hash;

use window_core::{AggregateFunction, TimeWindow, Timestamp, Window, WindowOutput};

use super::slots::Unchanged;
use super::SlicedWindows;
use crate::schedule::Entry;

impl<K, T, F> SlicedWindows<K, T, F>
where
    K: Hash + Eq + Clone,
    F: AggregateFunction<T>,
{
    /// All windows: fires the due entries of the schedule.
    pub(super) fn fire_all_windows<O>(&mut self, time: Timestamp, out: &mut O)
    where
        O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized,
    {
        // Fired windows kept for late elements take the slow path (`late`).
        let unchanged = self.retains().is_none();
        while let Some((index, mut entries)) = self.fire.take_due(self.due_index) {
            // Most keys fire the next window too. Their entries for it are written back over
            // the bucket just read, in the order they would be pushed (the cache lines are
            // warm; a push each went to a bucket not touched since it last fired), and go to
            // the next bucket as one run, after the entries already there.
            let next_index = index.checked_add(1);
            let mut kept = 0;
            for i in 0..entries.len() {
                let (slot, start) = entries[i];
                let from_entry = match unchanged {
                    true => self.fire_unchanged(slot, index, start, time, out),
                    false => None,
                };
                let scheduled = match from_entry {
                    Some(s) => s,
                    // Skip stale entries: the key's next window moved, or the slot was reused.
                    None if self.keys.next_of(slot) != Some(start) => continue,
                    None if self.geometry.window(start).max_timestamp() > time => {
                        // Only at the ends of time, where starts saturate: not due yet.
                        (index.saturating_add(1), (slot, start))
                    }
                    None => match self.fire_window(slot, index, start, out) {
                        Some(s) => s,
                        None => continue,
                    },
                };
                match scheduled {
                    (at, entry) if Some(at) == next_index => {
                        entries[kept] = entry;
                        kept += 1;
                    }
                    (at, entry) => self.fire.push(at, entry),
                }
            }
            entries.truncate(kept);
            match next_index {
                Some(next) => self.fire.push_run(next, entries),
                None => self.fire.recycle(entries),
            }
        }
    }

    /// All windows: fires the window starting at `start` (grid index `index`) of the key in
    /// `slot` from the key's unchanged-firing entry (`slots`), if it holds one for that window
    /// and the window holds the slices of the key's last firing (none leaves; none entered,
    /// or the entry would be gone) and the next window still holds one; returns the key's next
    /// firing (window index, entry) to schedule if it did. Then the result is the last one
    /// again, and the key's state is not read.
    #[inline]
    fn fire_unchanged<O>(
        &mut self,
        slot: u32,
        index: i64,
        start: i64,
        time: Timestamp,
        out: &mut O,
    ) -> Option<(i64, Entry)>
    where
        O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized,
    {
        let g = self.geometry;
        let (key, u) = self.keys.fire_unchanged(slot, start)?;
        let window = g.window(start);
        let next = start.checked_add(g.slide())?;
        if u.oldest < start || u.newest < next || window.max_timestamp() > time {
            return None;
        }
        self.metrics.results_emitted += 1;
        let at = self.watermark.unwrap_or_else(|| window.max_timestamp());
        out.result(key, &window, self.function.get_result(&u.acc), at);
        u.next = next;
        Some((index + 1, (slot, next)))
    }

    /// Fires the window starting at `start` (grid index `index`) of the key in `slot` from its
    /// state, then keeps what later firings need: with allowed lateness the window's
    /// accumulator for late firings (`late`), else the key's unchanged-firing entry (`slots`).
    /// Returns the key's next firing (window index, entry) to schedule, if any.
    fn fire_window<O>(
        &mut self,
        slot: u32,
        index: i64,
        start: i64,
        out: &mut O,
    ) -> Option<(i64, Entry)>
    where
        O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized,
    {
        let fired = self.fire_from_state(slot, index, start, out)?;
        let scheduled = fired.scheduled;
        match (self.retains(), fired) {
            (Some(lateness), Fired { acc: Some(acc), .. }) => {
                self.retain(slot, start, acc, lateness);
            }
            (
                None,
                Fired {
                    acc: Some(acc),
                    scheduled: Some((_, (_, next))),
                    oldest,
                    newest,
                },
            ) => {
                // The next firing may repeat this one without reading the state.
                let unchanged = Unchanged {
                    next,
                    oldest,
                    newest,
                    acc,
                };
                self.keys.keep_unchanged(slot, unchanged);
            }
            _ => {}
        }
        scheduled
    }

    /// [`Self::fire_window`]'s firing: drops the slices that left, emits the window's result,
    /// gives the key's next window to schedule or drops its slices when no later window holds
    /// one. `None` if the slot holds no key.
    #[inline]
    fn fire_from_state<O>(
        &mut self,
        slot: u32,
        index: i64,
        start: i64,
        out: &mut O,
    ) -> Option<Fired<F::Acc>>
    where
        O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized,
    {
        let g = self.geometry;
        let f = &self.function;
        let state = self.keys.get_mut(slot)?;
        // Drop the slices that left: those before the window's start.
        self.live_slices -= state.evict_before(f, start);
        let window = g.window(start);
        // The next window holds a slice iff the newest slice is still in it (there is no next
        // window past the end of time).
        let newest = state.newest_start().unwrap_or(i64::MIN);
        state.next = start.checked_add(g.slide()).filter(|next| newest >= *next);
        let acc = state.aggregate_acc(f);
        if let Some(acc) = &acc {
            self.metrics.results_emitted += 1;
            // In event time the watermark that fires it, as Flink reports it.
            let at = self.watermark.unwrap_or_else(|| window.max_timestamp());
            out.result(&state.key, &window, f.get_result(acc), at);
        }
        let scheduled = state.next.map(|n| {
            let next_index = if start.checked_add(g.slide()) == Some(n) {
                index + 1
            } else {
                g.index(n)
            };
            (next_index, (slot, n))
        });
        if scheduled.is_none() {
            // No later window holds any of the remaining slices: drop them.
            self.live_slices -= state.closed_len() + usize::from(state.open.is_some());
            state.closed.clear();
            state.open = None;
            if state.is_idle() {
                self.idle.push(slot);
            }
        }
        Some(Fired {
            acc,
            scheduled,
            oldest: state.oldest_start(),
            newest,
        })
    }
}

/// What a firing from a key's state leaves for the firings after it.
struct Fired<A> {
    /// The window's accumulator; `None` if the key held no slice.
    acc: Option<A>,
    /// The key's next firing to schedule, (window index, (slot, window start)), if a later
    /// window holds one of its slices.
    scheduled: Option<(i64, Entry)>,
    /// The starts of the oldest and newest slice held (`i64::MAX` / `i64::MIN` with none).
    oldest: i64,
    newest: i64,
}
