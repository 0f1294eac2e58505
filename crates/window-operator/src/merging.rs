//! Session windows: Flink's `MergingWindowSet.addWindow` and the operator's merge function.
//! A new element's window is merged with every window of its key it touches; the merged window
//! inherits the contents (`merge`) and the trigger state (`on_merge`), and the merged-away
//! windows' timers are deleted.

use std::hash::Hash;

use window_assigners::{Merges, WindowAssigner};
use window_core::{ElementError, TimeDomain, Timestamp, Window};
use window_triggers::Trigger;

use crate::function::WindowFunction;
use crate::keys::KeyId;
use crate::operator::{Ctx, WindowOperator, WindowState};
use crate::timers::TimerStore;

/// Buffers of the session-merging path, kept between elements for their capacity.
#[derive(Debug)]
pub(crate) struct MergeScratch<W, S, A> {
    pub(crate) windows: Vec<W>,
    pub(crate) merges: Merges<W>,
    pub(crate) members: Vec<W>,
    pub(crate) taken: Vec<(W, WindowState<S, A>)>,
    pub(crate) trigger_states: Vec<S>,
}

impl<W, S, A> Default for MergeScratch<W, S, A> {
    fn default() -> Self {
        Self {
            windows: Vec::new(),
            merges: Merges::default(),
            members: Vec::new(),
            taken: Vec::new(),
            trigger_states: Vec::new(),
        }
    }
}

impl<K, T, A, Tr, F, S> WindowOperator<K, T, A, Tr, F, S>
where
    K: Hash + Eq + Clone,
    A: WindowAssigner<T>,
    Tr: Trigger<T, A::Window>,
    F: WindowFunction<T>,
    S: TimerStore<A::Window>,
{
    /// Adds `new` to the key's merging window set, merging it with every window it touches
    /// (Flink's `MergingWindowSet.addWindow` with the operator's merge function). Returns the
    /// window the element belongs to.
    pub(crate) fn add_merging_window(
        &mut self,
        id: KeyId,
        new: A::Window,
    ) -> Result<A::Window, ElementError> {
        // Scratch buffers, reused: merging allocates nothing per element once they have grown.
        let mut all = std::mem::take(&mut self.merge_scratch.windows);
        let mut merges = std::mem::take(&mut self.merge_scratch.merges);
        let mut members = std::mem::take(&mut self.merge_scratch.members);
        all.clear();
        merges.clear();
        all.extend_from_slice(self.keys.sessions(id));
        all.push(new);
        self.assigner.merge_windows(&mut all, &mut merges);
        // Check every merge before changing anything, so that an error leaves the state as it
        // was (Flink fails the job here; a caller of ours may go on).
        for (merge_result, group) in merges.iter() {
            let existing = group.iter().filter(|w| **w != new);
            let only_itself = existing.clone().all(|w| *w == merge_result);
            if existing.count() > 0 && !only_itself {
                self.check_merge_not_behind_time(&merge_result)?;
            }
        }
        let mut result_window = new;
        let mut merged_new = false;
        for (merge_result, group) in merges.iter() {
            members.clear();
            members.extend_from_slice(group);
            if let Some(pos) = members.iter().position(|w| *w == new) {
                members.remove(pos);
                merged_new = true;
                result_window = merge_result;
            }
            let sessions = &mut self.keys.sessions_mut(id);
            sessions.retain(|w| !members.contains(w));
            sessions.push(merge_result);
            // A new window inside one existing window, without extending it: nothing to merge.
            if !(members.is_empty() || members.len() == 1 && members[0] == merge_result) {
                self.merge_window_states(id, merge_result, &members);
            }
        }
        if result_window == new && !merged_new {
            let sessions = &mut self.keys.sessions_mut(id);
            if !sessions.contains(&new) {
                sessions.push(new);
            }
        }
        self.merge_scratch.windows = all;
        self.merge_scratch.merges = merges;
        self.merge_scratch.members = members;
        Ok(result_window)
    }

    /// Flink's check in its merge function: a merge must not produce a window that is already
    /// behind the watermark (event time) or the clock (processing time).
    fn check_merge_not_behind_time(&self, result: &A::Window) -> Result<(), ElementError> {
        let (domain, current, behind) = if self.event_time {
            let wm = self.timers.watermark();
            (TimeDomain::EventTime, wm, self.cleanup_time(result) <= wm)
        } else {
            let now = self.processing_time;
            (
                TimeDomain::ProcessingTime,
                now,
                result.max_timestamp() <= now,
            )
        };
        if behind {
            let (start, end) = result.bounds().unwrap_or((Timestamp::MIN, Timestamp::MAX));
            return Err(ElementError::MergeBehindTime {
                domain,
                current,
                start,
                end,
            });
        }
        Ok(())
    }

    /// Flink's merge function after the check: merge trigger state (`on_merge`), clear the
    /// merged-away windows' triggers and cleanup timers, and merge their contents into the
    /// result.
    fn merge_window_states(&mut self, id: KeyId, result: A::Window, merged: &[A::Window]) {
        let mut taken = std::mem::take(&mut self.merge_scratch.taken);
        let mut states = std::mem::take(&mut self.merge_scratch.trigger_states);
        taken.clear();
        states.clear();
        for m in merged {
            if let Some(s) = self.windows.remove(id, m) {
                self.keys.slot_mut(id).windows -= 1;
                taken.push((*m, s));
            }
        }
        states.extend(taken.iter().map(|(_, s)| s.trigger.clone()));
        let mut merged_state = WindowState::new();
        // The result window's timers so far (when it was one of the merged windows) stay its
        // timers: one set of marks per window.
        if let Some((_, s)) = taken.iter_mut().find(|(m, _)| *m == result) {
            merged_state.marks = std::mem::take(&mut s.marks);
        }
        let processing_time = self.processing_time;
        let mut ctx = Ctx {
            timers: &mut self.timers,
            marks: Some(&mut merged_state.marks),
            key: id,
            window: result,
            processing_time,
        };
        self.trigger
            .on_merge(&result, &states, &mut merged_state.trigger, &mut ctx);
        taken.sort_by_key(|(w, _)| *w);
        for (m, mut s) in taken.drain(..) {
            let is_result = m == result;
            let (trigger, marks) = if is_result {
                (&mut merged_state.trigger, &mut merged_state.marks)
            } else {
                (&mut s.trigger, &mut s.marks)
            };
            let mut ctx = Ctx {
                timers: &mut self.timers,
                marks: Some(&mut *marks),
                key: id,
                window: m,
                processing_time,
            };
            self.trigger.clear(&m, trigger, &mut ctx);
            self.delete_cleanup_timer(id, m, Some(marks));
            if !is_result {
                // Timers its trigger did not delete still fire (and find no session).
                self.timers.adopt(id, m, &mut s.marks);
            }
            if let Some(acc) = s.contents {
                match merged_state.contents.as_mut() {
                    Some(into) => self.function.merge(into, acc),
                    None => merged_state.contents = Some(acc),
                }
            }
        }
        match self.windows.insert(id, result, merged_state) {
            None => self.keys.slot_mut(id).windows += 1,
            // Not one of the merged windows, yet there: its timers stay live, now as orphans.
            Some(mut old) => {
                let held = Self::held_in(&self.function, &old.contents);
                self.held_elements = self.held_elements.saturating_sub(held);
                self.timers.adopt(id, result, &mut old.marks);
            }
        }
        states.clear();
        self.merge_scratch.taken = taken;
        self.merge_scratch.trigger_states = states;
    }
}
