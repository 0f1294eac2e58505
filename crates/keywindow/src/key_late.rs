//! Elements behind the watermark in [`KeyWindows`] (event time, issue #15 item 2): such an
//! element is taken when some window holding it is not cleaned up yet (max timestamp + allowed
//! lateness after the watermark), as Flink takes it, and it emits the changes it causes to the
//! results the user has seen (`docs/keywindow.md`, "Event time"); only an element whose every
//! window is cleaned up is late.
//!
//! The state keeps one invariant, whatever the arrival order: every window a key holds has the
//! accumulator of all the key's accepted elements in its range, and the windows held include
//! the left and right key windows of every accepted element (until retired, `end + size +
//! allowed lateness`). So the content of any window not cleaned up is the content of the latest
//! window held that starts at or before it: between the two no element enters or leaves. A late
//! element `e` at `t` (windows `L ..= last` by start, `R` the first after them):
//!
//! 1. creates, from the state before it, the windows it needs that are missing: `L(e)`, `R(e)`
//!    and its *entry window*, the first window holding it that is not cleaned up (it differs
//!    from `L(e)` when the older ones are: there the user saw their final results without `e`,
//!    so the result changes at the entry window);
//! 2. is added to every window held that covers `t`, fired and cleaned up ones included (they
//!    stay exact for later inheritance);
//! 3. emits, in window order, every fired window from its entry window to `last` that is held
//!    (each one's result changes), then `R(e)` if it was created and has fired (the window where
//!    `e` now leaves: its result, or an empty result). Windows it created that have not fired
//!    fire on time like any other.
//!
//! Cost: a few `BTreeMap` probes and, as for an element in order, one `add` per window held that
//! covers it; one result per fired window it changes.

use std::hash::Hash;

use window_core::{time, AggregateFunction, TimeWindow, Timestamp, Window, WindowOutput};

use crate::{count_new_windows, KeyWin, KeyWindows};

impl<K, T, F> KeyWindows<K, T, F>
where
    K: Hash + Eq + Clone,
    F: AggregateFunction<T>,
{
    /// [`crate::InOrderWindows::process_behind`] for key windows (see the module docs).
    pub(crate) fn behind<O>(
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
        let (g, now) = (self.geometry, self.time);
        let (left, last) = (g.left_start(time), g.slot(time));
        if left > last {
            // In a gap between windows: late as Flink counts it, or in no window.
            if time::add(time, lateness) <= now {
                return Some((key, value));
            }
            self.metrics.in_no_window += 1;
            return None;
        }
        if time::add(g.window(last).max_timestamp(), lateness) <= now {
            return Some((key, value)); // every window holding it is cleaned up
        }
        self.metrics.elements += 1;
        // The first window not cleaned up (max timestamp + lateness > now), and not fired.
        let uncleaned = g.left_start(time::sub(now, lateness).saturating_add(1));
        let unfired = g.left_start(now.saturating_add(1));
        let entry = left.max(uncleaned);
        let right = last.saturating_add(g.slide());
        let slot = self.intern(&key);
        let right_created = self.create_windows(slot, [left, entry, right]);
        let f = &self.function;
        let state = self.keys.get_mut(slot).expect("interned key");
        for (_, w) in state.windows.range_mut(left..=last) {
            f.add(&mut w.acc, &value);
            w.elements += 1;
        }
        // The fired windows whose results change, in window order (at the watermark).
        let fired_last = last.min(unfired.saturating_sub(g.slide()));
        for (start, w) in state.windows.range(entry..=fired_last.max(entry)) {
            if *start > fired_last {
                break;
            }
            self.metrics.results_emitted += 1;
            out.result(&state.key, &g.window(*start), f.get_result(&w.acc), now);
        }
        if right_created && right < unfired {
            let w = &state.windows[&right];
            self.metrics.results_emitted += 1;
            if w.elements == 0 {
                self.metrics.empty_results += 1;
                out.emptied(&state.key, &g.window(right), now);
            } else {
                out.result(&state.key, &g.window(right), f.get_result(&w.acc), now);
            }
        }
        state.last = state.last.max(Some(time));
        self.metrics.native_windows +=
            count_new_windows(&mut state.native_covered, g.index(entry), g.index(last));
        None
    }

    /// Creates the missing windows among `[left, entry, right]` of a late element for the key in
    /// `slot`, each with the content of the latest window held at or before its start (taken
    /// before any is created): the left one marked left, the right one marked right. Fired ones
    /// get a retention timer, the others a firing timer. Returns whether the right one was
    /// created.
    fn create_windows(&mut self, slot: u32, [left, entry, right]: [i64; 3]) -> bool {
        let (g, f) = (self.geometry, &self.function);
        let state = self.keys.get_mut(slot).expect("interned key");
        let mut new = Vec::with_capacity(3);
        for start in [left, entry, right] {
            if state.windows.contains_key(&start) || new.iter().any(|(s, _)| *s == start) {
                continue;
            }
            let (acc, elements) = match state.windows.range(..=start).next_back() {
                Some((_, w)) => (w.acc.clone(), w.elements),
                None => (f.create_accumulator(), 0),
            };
            if elements > 0 {
                self.metrics.inherited += 1;
            }
            let max_timestamp = g.window(start).max_timestamp();
            let win = KeyWin {
                acc,
                elements,
                left: false,
                right: false,
                fired: max_timestamp <= self.time,
            };
            new.push((start, win));
        }
        let right_created = new.iter().any(|(s, _)| *s == right);
        for (start, win) in new {
            self.metrics.key_windows_created += 1;
            self.windows_held += 1;
            let window = g.window(start);
            if win.fired {
                let drop_at = (window.end().saturating_add(g.size()))
                    .saturating_add(self.lateness.unwrap_or(0));
                self.retire.register(drop_at, slot, start);
            } else {
                self.fire.register(window.max_timestamp(), slot, start);
            }
            state.windows.insert(start, win);
        }
        if let Some(w) = state.windows.get_mut(&left) {
            w.left = true;
        }
        if let Some(w) = state.windows.get_mut(&right) {
            w.right = true;
        }
        right_created
    }
}
