//! The keyed window operator: Flink's `WindowOperator`, element by element and timer by timer.
//!
//! For each element the operator asks the [`WindowAssigner`] for the element's windows, adds the
//! element to each window's state (via a [`WindowFunction`]), asks the [`Trigger`] whether to
//! fire or purge, and registers a *cleanup timer* at `max_timestamp + allowed_lateness`. When the
//! watermark or the processing-time clock passes a timer, the trigger is asked again; at the
//! cleanup time the window's contents, trigger state and timers are removed. An element whose
//! every window is already cleaned up is *late*: it is dropped, counted, and sent to the late
//! side output when one is configured. Session windows (a merging assigner) are merged as soon as
//! a new element's window touches existing ones; the merged window inherits the contents
//! (`merge`), the trigger state (`on_merge`), and the merged-away windows' timers are deleted.
//!
//! The behaviour follows Flink 2.3's `WindowOperator` and `MergingWindowSet` and is checked
//! against the outputs real Flink produced (`tests/conformance/flink`). One deliberate
//! difference: Flink counts a dropped late element in `numLateRecordsDropped` only when no side
//! output is set; we count every late element ([`OperatorMetrics::late_elements`]) and, apart,
//! those routed to the side output.
//!
//! Non-keyed windows (Flink's `windowAll`) are the same operator with `()` as the key.
//!
//! Per-key state lives in one hash map keyed by `(key id, window)` (ahash); keys are interned to
//! small ids ([`KeyId`]) so that timers are cheap to store and compare. The hot path allocates
//! nothing per element once a window exists: assigned windows go into a reused buffer.

#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod evictor;
mod function;
pub mod watermark;

pub use evictor::{
    AnyEvictor, CountEvictor, DeltaEvictor, EvictMoment, Evicting, Evictor, TimeEvictor,
};
pub use function::{FireContext, FullWindow, Incremental, WindowFunction};

use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::Hash;

use ahash::RandomState;
use timer_service::TimerService;
use window_assigners::{AssignerError, Merges, WindowAssigner};
use window_core::{time, Timestamp, Window};
use window_triggers::{Trigger, TriggerContext};

/// Errors of the window operator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OperatorError {
    /// A merging assigner (sessions) with a trigger that cannot merge (Flink rejects this when the
    /// job is built).
    #[error("a merging window assigner ({assigner}) cannot be used with a trigger that does not support merging ({trigger})")]
    TriggerCannotMerge {
        /// The assigner's description.
        assigner: String,
        /// The trigger's description.
        trigger: String,
    },
    /// Negative allowed lateness.
    #[error("allowed lateness must not be negative, got {0} ms")]
    NegativeLateness(i64),
    /// A merge produced a window that is already behind the watermark (event time) or the clock
    /// (processing time); Flink throws `UnsupportedOperationException` here.
    #[error("the end timestamp of a {domain} window cannot become earlier than the current {domain} by merging: current {domain} {current}, window [{start}, {end})")]
    MergeBehindTime {
        /// `event-time` or `processing-time`.
        domain: &'static str,
        /// The watermark or processing time.
        current: Timestamp,
        /// Merged window start (or `i64::MIN` for windows without bounds).
        start: Timestamp,
        /// Merged window end.
        end: Timestamp,
    },
    /// The assigner rejected an element (no timestamp, bad dynamic gap).
    #[error(transparent)]
    Assigner(#[from] AssignerError),
    /// Adding the element would exceed the configured number of window states
    /// ([`WindowOperator::set_max_window_states`]); the element was not added.
    #[error("the element at {timestamp} would bring the window states to {states}, more than the limit of {limit}; with sliding windows every element creates size/slide of them")]
    TooManyWindowStates {
        /// Window states there would be.
        states: usize,
        /// The limit.
        limit: usize,
        /// The element's timestamp.
        timestamp: Timestamp,
    },
}

/// This module's result type.
pub type Result<T> = std::result::Result<T, OperatorError>;

/// What happens to late elements (those whose every window is past its cleanup time).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum LateDataPolicy {
    /// Drop and count them.
    #[default]
    Drop,
    /// Count them and emit them through [`WindowOutput::late`] (Flink's
    /// `sideOutputLateData`).
    SideOutput,
}

/// Configuration of a [`WindowOperator`] besides assigner, trigger and function.
#[derive(Clone, Copy, Debug, Default)]
pub struct OperatorConfig {
    /// How long after a window's end (in ms of event time) it still accepts late elements and
    /// re-fires; 0 by default (Flink's `allowedLateness`).
    pub allowed_lateness: i64,
    /// Whether late elements go to a side output.
    pub late_data: LateDataPolicy,
}

/// Receives what the operator emits: window results and late elements.
pub trait WindowOutput<K, W, T, O> {
    /// A window fired. `watermark` is the operator's watermark at that moment (for
    /// element-driven firings: the one before the element's own watermark). The record's
    /// timestamp is `window.max_timestamp()`.
    fn result(&mut self, key: &K, window: &W, result: O, watermark: Timestamp);
    /// A late element, when the late side output is configured.
    fn late(&mut self, key: K, timestamp: Timestamp, value: T, watermark: Timestamp);
}

/// One emitted record, for collecting output in a `Vec`.
#[derive(Clone, Debug, PartialEq)]
pub enum Emitted<K, W, T, O> {
    /// A window result.
    Result {
        /// The key.
        key: K,
        /// The window.
        window: W,
        /// The function's output.
        result: O,
        /// The operator's watermark when it was emitted.
        watermark: Timestamp,
    },
    /// A late element from the side output.
    Late {
        /// The key.
        key: K,
        /// The element's timestamp.
        timestamp: Timestamp,
        /// The element.
        value: T,
        /// The operator's watermark when it was dropped.
        watermark: Timestamp,
    },
}

impl<K: Clone, W: Copy, T, O> WindowOutput<K, W, T, O> for Vec<Emitted<K, W, T, O>> {
    fn result(&mut self, key: &K, window: &W, result: O, watermark: Timestamp) {
        self.push(Emitted::Result {
            key: key.clone(),
            window: *window,
            result,
            watermark,
        });
    }

    fn late(&mut self, key: K, timestamp: Timestamp, value: T, watermark: Timestamp) {
        self.push(Emitted::Late {
            key,
            timestamp,
            value,
            watermark,
        });
    }
}

/// Counters of a [`WindowOperator`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OperatorMetrics {
    /// Elements processed.
    pub elements: u64,
    /// Window states created (one per (key, window) that received an element).
    pub windows_created: u64,
    /// Window results emitted.
    pub windows_fired: u64,
    /// Late elements dropped (all of them, whether or not they went to the side output).
    pub late_elements: u64,
    /// Late elements emitted on the side output.
    pub late_side_output: u64,
    /// Elements that belonged to no window although not late (sliding windows with
    /// `slide > size` leave gaps); Flink drops these silently, we count them.
    pub elements_in_no_window: u64,
}

/// A key interned by the operator: slot index and generation (a freed slot gets a new
/// generation, so timers left for an old key never reach a new one).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct KeyId {
    index: u32,
    generation: u32,
}

#[derive(Debug)]
struct KeySlot<K, W> {
    key: Option<K>,
    generation: u32,
    /// Number of window states of this key.
    windows: u32,
    /// The key's current windows for merging assigners (Flink's `MergingWindowSet`).
    sessions: Vec<W>,
}

#[derive(Debug)]
struct KeyTable<K, W> {
    ids: HashMap<K, u32, RandomState>,
    slots: Vec<KeySlot<K, W>>,
    free: Vec<u32>,
}

impl<K: Hash + Eq + Clone, W> KeyTable<K, W> {
    fn new() -> Self {
        Self {
            ids: HashMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
        }
    }

    fn intern(&mut self, key: &K) -> KeyId {
        if let Some(&index) = self.ids.get(key) {
            return KeyId {
                index,
                generation: self.slots[index as usize].generation,
            };
        }
        let index = if let Some(i) = self.free.pop() {
            let slot = &mut self.slots[i as usize];
            slot.key = Some(key.clone());
            slot.generation = slot.generation.wrapping_add(1);
            i
        } else {
            let i = u32::try_from(self.slots.len()).expect("more than 2^32 live keys");
            self.slots.push(KeySlot {
                key: Some(key.clone()),
                generation: 0,
                windows: 0,
                sessions: Vec::new(),
            });
            i
        };
        self.ids.insert(key.clone(), index);
        KeyId {
            index,
            generation: self.slots[index as usize].generation,
        }
    }

    fn slot(&self, id: KeyId) -> Option<&KeySlot<K, W>> {
        self.slots
            .get(id.index as usize)
            .filter(|s| s.generation == id.generation && s.key.is_some())
    }

    fn slot_mut(&mut self, id: KeyId) -> &mut KeySlot<K, W> {
        &mut self.slots[id.index as usize]
    }

    /// Frees the slot if the key holds no window any more.
    fn release_if_empty(&mut self, id: KeyId) {
        let slot = &mut self.slots[id.index as usize];
        if slot.windows == 0 && slot.sessions.is_empty() {
            if let Some(k) = slot.key.take() {
                self.ids.remove(&k);
                self.free.push(id.index);
            }
        }
    }

    fn live(&self) -> usize {
        self.ids.len()
    }
}

/// Per-(key, window) map of window states.
type WindowMap<W, S, A> = HashMap<(KeyId, W), WindowState<S, A>, RandomState>;

#[derive(Clone, Debug)]
struct WindowState<S, A> {
    contents: Option<A>,
    trigger: S,
}

/// The trigger context for one (key, window).
struct Ctx<'a, W> {
    timers: &'a mut TimerService<KeyId, W>,
    key: KeyId,
    window: W,
    processing_time: Timestamp,
}

impl<W: Window> TriggerContext for Ctx<'_, W> {
    fn current_watermark(&self) -> Timestamp {
        self.timers.current_watermark()
    }

    fn current_processing_time(&self) -> Timestamp {
        self.processing_time
    }

    fn register_event_time_timer(&mut self, t: Timestamp) {
        self.timers
            .register_event_time_timer(t, self.key, self.window);
    }

    fn delete_event_time_timer(&mut self, t: Timestamp) {
        self.timers
            .delete_event_time_timer(t, self.key, self.window);
    }

    fn register_processing_time_timer(&mut self, t: Timestamp) {
        self.timers
            .register_processing_time_timer(t, self.key, self.window);
    }

    fn delete_processing_time_timer(&mut self, t: Timestamp) {
        self.timers
            .delete_processing_time_timer(t, self.key, self.window);
    }
}

/// The keyed window operator (Flink's `WindowOperator`).
///
/// `K` is the key, `T` the element, `A` the assigner, `Tr` the trigger, `F` the window function.
/// Drive it with [`WindowOperator::process_element`], [`WindowOperator::process_watermark`] and
/// [`WindowOperator::advance_processing_time`]; results go to a [`WindowOutput`].
///
/// # Examples
/// ```
/// use window_operator::{Emitted, Incremental, OperatorConfig, WindowOperator};
/// use window_assigners::{TimeDomain, TumblingWindows, WindowAssigner};
/// use window_core::{NumericAggregate, TimeWindow};
///
/// let assigner = TumblingWindows::new(10, 0, TimeDomain::EventTime)?;
/// let trigger = WindowAssigner::<f64>::default_trigger(&assigner);
/// let mut op = WindowOperator::new(assigner, trigger, Incremental(NumericAggregate::Sum), OperatorConfig::default())?;
/// let mut out = Vec::new();
/// op.process_element("a", 1.0, 3, &mut out)?;
/// op.process_element("a", 2.0, 7, &mut out)?;
/// op.process_watermark(9, &mut out);
/// assert_eq!(out, [Emitted::Result { key: "a", window: TimeWindow::new(0, 10), result: Some(3.0), watermark: 9 }]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct WindowOperator<K, T, A, Tr, F>
where
    A: WindowAssigner<T>,
    Tr: Trigger<T, A::Window>,
    F: WindowFunction<T>,
{
    assigner: A,
    trigger: Tr,
    function: F,
    config: OperatorConfig,
    event_time: bool,
    keys: KeyTable<K, A::Window>,
    windows: WindowMap<A::Window, Tr::State, F::Acc>,
    timers: TimerService<KeyId, A::Window>,
    processing_time: Timestamp,
    assigned: Vec<A::Window>,
    merge_scratch: MergeScratch<A::Window, Tr::State, F::Acc>,
    max_window_states: Option<usize>,
    metrics: OperatorMetrics,
}

/// Buffers of the session-merging path, kept between elements for their capacity.
#[derive(Debug)]
struct MergeScratch<W, S, A> {
    windows: Vec<W>,
    merges: Merges<W>,
    members: Vec<W>,
    taken: Vec<(W, WindowState<S, A>)>,
    trigger_states: Vec<S>,
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

impl<K, T, A, Tr, F> WindowOperator<K, T, A, Tr, F>
where
    K: Hash + Eq + Clone,
    A: WindowAssigner<T>,
    Tr: Trigger<T, A::Window>,
    F: WindowFunction<T>,
    Tr::State: Debug,
    F::Acc: Debug,
{
    /// Builds the operator.
    ///
    /// # Errors
    /// [`OperatorError::TriggerCannotMerge`] for a merging assigner with a trigger that cannot
    /// merge; [`OperatorError::NegativeLateness`].
    pub fn new(assigner: A, trigger: Tr, function: F, config: OperatorConfig) -> Result<Self> {
        if assigner.is_merging() && !trigger.can_merge() {
            return Err(OperatorError::TriggerCannotMerge {
                assigner: assigner.describe(),
                trigger: trigger.describe(),
            });
        }
        if config.allowed_lateness < 0 {
            return Err(OperatorError::NegativeLateness(config.allowed_lateness));
        }
        let event_time = assigner.is_event_time();
        Ok(Self {
            assigner,
            trigger,
            function,
            config,
            event_time,
            keys: KeyTable::new(),
            windows: HashMap::default(),
            timers: TimerService::new(),
            processing_time: Timestamp::MIN,
            assigned: Vec::new(),
            merge_scratch: MergeScratch::default(),
            max_window_states: None,
            metrics: OperatorMetrics::default(),
        })
    }

    /// Refuses elements that would bring the number of window states over `limit` (a guard
    /// against configurations that would exhaust memory, such as 10,000,000 windows per element
    /// over many keys). `None` (the default) means no limit.
    pub fn set_max_window_states(&mut self, limit: Option<usize>) {
        self.max_window_states = limit;
    }

    /// The current event-time watermark (ms).
    pub fn current_watermark(&self) -> Timestamp {
        self.timers.current_watermark()
    }

    /// The current processing time (ms) as last set by [`Self::advance_processing_time`].
    pub fn current_processing_time(&self) -> Timestamp {
        self.processing_time
    }

    /// The counters so far.
    pub fn metrics(&self) -> OperatorMetrics {
        self.metrics
    }

    /// Window states currently held (all keys).
    pub fn live_windows(&self) -> usize {
        self.windows.len()
    }

    /// Keys currently holding state.
    pub fn live_keys(&self) -> usize {
        self.keys.live()
    }

    /// Pending timers: (event time, processing time).
    pub fn pending_timers(&self) -> (usize, usize) {
        self.timers.pending()
    }

    /// The earliest pending processing-time timer, so a driver knows when to call
    /// [`Self::advance_processing_time`] next.
    pub fn next_processing_time_timer(&self) -> Option<Timestamp> {
        self.timers.next_processing_time_timer()
    }

    fn cleanup_time(&self, w: &A::Window) -> Timestamp {
        if self.event_time {
            time::add(w.max_timestamp(), self.config.allowed_lateness)
        } else {
            w.max_timestamp()
        }
    }

    fn is_window_late(&self, w: &A::Window) -> bool {
        self.event_time && self.cleanup_time(w) <= self.timers.current_watermark()
    }

    /// Processes one element of `key` with event timestamp `timestamp` (ms); in processing time
    /// the timestamp is only carried along.
    ///
    /// # Errors
    /// [`OperatorError::Assigner`] when the assigner rejects the element (then nothing changed);
    /// [`OperatorError::MergeBehindTime`] when a merge would produce a window that is already
    /// behind the watermark.
    pub fn process_element<O>(
        &mut self,
        key: K,
        value: T,
        timestamp: Timestamp,
        out: &mut O,
    ) -> Result<()>
    where
        O: WindowOutput<K, A::Window, T, F::Out>,
    {
        let mut assigned = std::mem::take(&mut self.assigned);
        assigned.clear();
        let r =
            self.assigner
                .assign_windows(&value, timestamp, self.processing_time, &mut assigned);
        if let Err(e) = r {
            self.assigned = assigned;
            return Err(e.into());
        }
        if let Some(limit) = self.max_window_states {
            let states = self.windows.len().saturating_add(assigned.len());
            if states > limit {
                self.assigned = assigned;
                return Err(OperatorError::TooManyWindowStates {
                    states,
                    limit,
                    timestamp,
                });
            }
        }
        let mut skipped = true;
        let mut result = Ok(());
        let mut key_id = None;
        for &window in &assigned {
            let actual = if self.assigner.is_merging() {
                let id = *key_id.get_or_insert_with(|| self.keys.intern(&key));
                match self.add_merging_window(id, window) {
                    Ok(w) => w,
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
            } else {
                window
            };
            if self.is_window_late(&actual) {
                if self.assigner.is_merging() {
                    let id = key_id.expect("interned above");
                    self.clear_all_state(id, actual);
                }
                continue;
            }
            skipped = false;
            let id = *key_id.get_or_insert_with(|| self.keys.intern(&key));
            self.add_to_window(id, &key, actual, &value, timestamp, out);
        }
        self.assigned = assigned;
        if let Some(id) = key_id {
            self.keys.release_if_empty(id);
        }
        result?;
        self.metrics.elements += 1;
        if skipped {
            let wm = self.timers.current_watermark();
            if self.event_time && time::add(timestamp, self.config.allowed_lateness) <= wm {
                self.metrics.late_elements += 1;
                if self.config.late_data == LateDataPolicy::SideOutput {
                    self.metrics.late_side_output += 1;
                    out.late(key, timestamp, value, wm);
                }
            } else {
                self.metrics.elements_in_no_window += 1;
            }
        }
        Ok(())
    }

    fn add_to_window<O>(
        &mut self,
        id: KeyId,
        key: &K,
        window: A::Window,
        value: &T,
        timestamp: Timestamp,
        out: &mut O,
    ) where
        O: WindowOutput<K, A::Window, T, F::Out>,
    {
        let state = match self.windows.entry((id, window)) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                self.metrics.windows_created += 1;
                self.keys.slot_mut(id).windows += 1;
                e.insert(WindowState {
                    contents: None,
                    trigger: Tr::State::default(),
                })
            }
        };
        let acc = state.contents.get_or_insert_with(|| self.function.create());
        self.function.add(acc, value, timestamp);
        let mut ctx = Ctx {
            timers: &mut self.timers,
            key: id,
            window,
            processing_time: self.processing_time,
        };
        let r = self
            .trigger
            .on_element(value, timestamp, &window, &mut state.trigger, &mut ctx);
        let fire_ctx = FireContext {
            watermark: self.timers.current_watermark(),
            processing_time: self.processing_time,
        };
        Self::apply(
            &self.function,
            &mut self.metrics,
            state,
            r,
            key,
            &window,
            fire_ctx,
            out,
        );
        self.register_cleanup_timer(id, window);
    }

    /// Fires and/or purges `state` as the trigger said.
    #[allow(clippy::too_many_arguments)]
    fn apply<O>(
        function: &F,
        metrics: &mut OperatorMetrics,
        state: &mut WindowState<Tr::State, F::Acc>,
        r: window_core::TriggerResult,
        key: &K,
        window: &A::Window,
        ctx: FireContext,
        out: &mut O,
    ) where
        O: WindowOutput<K, A::Window, T, F::Out>,
    {
        if r.is_fire() {
            if let Some(acc) = state.contents.as_mut() {
                let result = function.fire(acc, &ctx);
                if function.is_empty(acc) {
                    state.contents = None;
                }
                metrics.windows_fired += 1;
                out.result(key, window, result, ctx.watermark);
            }
        }
        if r.is_purge() {
            state.contents = None;
        }
    }

    fn register_cleanup_timer(&mut self, id: KeyId, window: A::Window) {
        let t = self.cleanup_time(&window);
        if t == Timestamp::MAX {
            return;
        }
        if self.event_time {
            self.timers.register_event_time_timer(t, id, window);
        } else {
            self.timers.register_processing_time_timer(t, id, window);
        }
    }

    fn delete_cleanup_timer(&mut self, id: KeyId, window: A::Window) {
        let t = self.cleanup_time(&window);
        if t == Timestamp::MAX {
            return;
        }
        if self.event_time {
            self.timers.delete_event_time_timer(t, id, window);
        } else {
            self.timers.delete_processing_time_timer(t, id, window);
        }
    }

    /// Adds `new` to the key's merging window set, merging it with every window it touches
    /// (Flink's `MergingWindowSet.addWindow` with the operator's merge function). Returns the
    /// window the element belongs to.
    fn add_merging_window(&mut self, id: KeyId, new: A::Window) -> Result<A::Window> {
        // Scratch buffers, reused: merging allocates nothing per element once they have grown.
        let mut all = std::mem::take(&mut self.merge_scratch.windows);
        let mut merges = std::mem::take(&mut self.merge_scratch.merges);
        let mut members = std::mem::take(&mut self.merge_scratch.members);
        all.clear();
        merges.clear();
        all.extend_from_slice(&self.keys.slot_mut(id).sessions);
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
            let sessions = &mut self.keys.slot_mut(id).sessions;
            sessions.retain(|w| !members.contains(w));
            sessions.push(merge_result);
            // A new window inside one existing window, without extending it: nothing to merge.
            if !(members.is_empty() || members.len() == 1 && members[0] == merge_result) {
                self.merge_window_states(id, merge_result, &members);
            }
        }
        if result_window == new && !merged_new {
            let sessions = &mut self.keys.slot_mut(id).sessions;
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
    fn check_merge_not_behind_time(&self, result: &A::Window) -> Result<()> {
        let (domain, current, behind) = if self.event_time {
            let wm = self.timers.current_watermark();
            ("event-time", wm, self.cleanup_time(result) <= wm)
        } else {
            let now = self.processing_time;
            ("processing-time", now, result.max_timestamp() <= now)
        };
        if behind {
            let (start, end) = result.bounds().unwrap_or((Timestamp::MIN, Timestamp::MAX));
            return Err(OperatorError::MergeBehindTime {
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
            if let Some(s) = self.windows.remove(&(id, *m)) {
                self.keys.slot_mut(id).windows -= 1;
                taken.push((*m, s));
            }
        }
        states.extend(taken.iter().map(|(_, s)| s.trigger.clone()));
        let mut merged_state = WindowState {
            contents: None,
            trigger: Tr::State::default(),
        };
        let processing_time = self.processing_time;
        let mut ctx = Ctx {
            timers: &mut self.timers,
            key: id,
            window: result,
            processing_time,
        };
        self.trigger
            .on_merge(&result, &states, &mut merged_state.trigger, &mut ctx);
        taken.sort_by_key(|(w, _)| *w);
        for (m, mut s) in taken.drain(..) {
            let mut ctx = Ctx {
                timers: &mut self.timers,
                key: id,
                window: m,
                processing_time,
            };
            if m == result {
                self.trigger.clear(&m, &mut merged_state.trigger, &mut ctx);
            } else {
                self.trigger.clear(&m, &mut s.trigger, &mut ctx);
            }
            self.delete_cleanup_timer(id, m);
            if let Some(acc) = s.contents {
                match merged_state.contents.as_mut() {
                    Some(into) => self.function.merge(into, acc),
                    None => merged_state.contents = Some(acc),
                }
            }
        }
        if self.windows.insert((id, result), merged_state).is_none() {
            self.keys.slot_mut(id).windows += 1;
        }
        states.clear();
        self.merge_scratch.taken = taken;
        self.merge_scratch.trigger_states = states;
    }

    /// Removes the window's contents, trigger state, timers and merge-set entry.
    fn clear_all_state(&mut self, id: KeyId, window: A::Window) {
        if let Some(mut s) = self.windows.remove(&(id, window)) {
            self.keys.slot_mut(id).windows -= 1;
            let mut ctx = Ctx {
                timers: &mut self.timers,
                key: id,
                window,
                processing_time: self.processing_time,
            };
            self.trigger.clear(&window, &mut s.trigger, &mut ctx);
        }
        self.delete_cleanup_timer(id, window);
        if self.assigner.is_merging() {
            self.keys.slot_mut(id).sessions.retain(|w| *w != window);
        }
    }

    /// Advances the event-time watermark to `watermark` (ms) and fires every due event-time
    /// timer in timestamp order. A watermark not later than the current one is ignored; returns
    /// whether it advanced.
    pub fn process_watermark<O>(&mut self, watermark: Timestamp, out: &mut O) -> bool
    where
        O: WindowOutput<K, A::Window, T, F::Out>,
    {
        if !self.timers.advance_watermark(watermark) {
            return false;
        }
        while let Some(timer) = self.timers.pop_due_event_timer() {
            self.on_timer(timer.key, timer.namespace, timer.timestamp, true, out);
        }
        true
    }

    /// Sets processing time to `now` (ms; never moves back) and fires every processing-time
    /// timer at or before `now`, in timestamp order (Flink's `InternalTimerService` and its test
    /// harness: a timer at `t` fires when time is set to `t`).
    pub fn advance_processing_time<O>(&mut self, now: Timestamp, out: &mut O)
    where
        O: WindowOutput<K, A::Window, T, F::Out>,
    {
        self.processing_time = self.processing_time.max(now);
        self.fire_processing_timers(self.processing_time, out);
    }

    /// For a live wall clock: sets processing time to `now` but fires only the timers *before*
    /// `now`. Flink's system time service runs a timer at `t` once the clock has passed `t`
    /// (it schedules it 1 ms late), so elements that arrive during the window's last
    /// millisecond still join the window instead of re-creating it after it fired.
    pub fn advance_wall_clock<O>(&mut self, now: Timestamp, out: &mut O)
    where
        O: WindowOutput<K, A::Window, T, F::Out>,
    {
        self.processing_time = self.processing_time.max(now);
        self.fire_processing_timers(self.processing_time.saturating_sub(1), out);
    }

    fn fire_processing_timers<O>(&mut self, up_to: Timestamp, out: &mut O)
    where
        O: WindowOutput<K, A::Window, T, F::Out>,
    {
        while let Some(timer) = self.timers.pop_due_processing_timer(up_to) {
            self.on_timer(timer.key, timer.namespace, timer.timestamp, false, out);
        }
    }

    fn on_timer<O>(
        &mut self,
        id: KeyId,
        window: A::Window,
        time: Timestamp,
        event_time: bool,
        out: &mut O,
    ) where
        O: WindowOutput<K, A::Window, T, F::Out>,
    {
        let Some(slot) = self.keys.slot(id) else {
            return; // a timer left by a key whose state is gone
        };
        if self.assigner.is_merging() && !slot.sessions.contains(&window) {
            return; // a timer of a merged-away window that its trigger did not delete
        }
        // Borrowed, not cloned: a String key would cost an allocation per firing.
        let key = slot.key.as_ref().expect("live slot has a key");
        let processing_time = self.processing_time;
        let wm = self.timers.current_watermark();
        let mut scratch = None;
        let state = match self.windows.get_mut(&(id, window)) {
            Some(s) => s,
            None => scratch.insert(WindowState {
                contents: None,
                trigger: Tr::State::default(),
            }),
        };
        let mut ctx = Ctx {
            timers: &mut self.timers,
            key: id,
            window,
            processing_time,
        };
        let r = if event_time {
            self.trigger
                .on_event_time(time, &window, &mut state.trigger, &mut ctx)
        } else {
            self.trigger
                .on_processing_time(time, &window, &mut state.trigger, &mut ctx)
        };
        let fire_ctx = FireContext {
            watermark: wm,
            processing_time,
        };
        Self::apply(
            &self.function,
            &mut self.metrics,
            state,
            r,
            key,
            &window,
            fire_ctx,
            out,
        );
        if event_time == self.event_time && time == self.cleanup_time(&window) {
            self.clear_all_state(id, window);
            self.keys.release_if_empty(id);
        }
    }
}
