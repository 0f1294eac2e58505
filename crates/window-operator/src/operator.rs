//! The operator itself: per element assign, add, trigger, fire/purge and register cleanup; per
//! timer ask the trigger again and clean up at `max_timestamp + allowed_lateness`.

use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::Hash;

use ahash::RandomState;
use timer_service::TimerService;
use window_assigners::{Merges, WindowAssigner};
use window_core::{
    time, ElementError, LateDataPolicy, LiveState, Rejected, Timestamp, Window, WindowComputation,
    WindowMetrics, WindowOutput,
};
use window_triggers::{Trigger, TriggerContext};

use crate::function::{FireContext, WindowFunction};
use crate::keys::{KeyId, KeyTable};
use crate::{OperatorConfig, OperatorError, Result};

/// Per-(key, window) map of window states.
type WindowMap<W, S, A> = HashMap<(KeyId, W), WindowState<S, A>, RandomState>;

#[derive(Clone, Debug)]
pub(crate) struct WindowState<S, A> {
    pub(crate) contents: Option<A>,
    pub(crate) trigger: S,
}

/// The trigger context for one (key, window).
pub(crate) struct Ctx<'a, W> {
    pub(crate) timers: &'a mut TimerService<KeyId, W>,
    pub(crate) key: KeyId,
    pub(crate) window: W,
    pub(crate) processing_time: Timestamp,
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
/// It is a [`WindowComputation`]: drive it with `process_element`, `process_watermark` and
/// `advance_wall_clock` (or [`WindowOperator::advance_processing_time`], the test harness's
/// clock); results go to a [`WindowOutput`].
///
/// # Examples
/// ```
/// use window_operator::{Emitted, Incremental, OperatorConfig, WindowComputation, WindowOperator};
/// use window_assigners::{DefaultTrigger, TimeDomain, TumblingWindows};
/// use window_core::{NumericAggregate, TimeWindow};
///
/// let assigner = TumblingWindows::new(10, 0, TimeDomain::EventTime)?;
/// let trigger = assigner.default_trigger();
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
    pub(crate) assigner: A,
    pub(crate) trigger: Tr,
    pub(crate) function: F,
    pub(crate) config: OperatorConfig,
    pub(crate) event_time: bool,
    pub(crate) keys: KeyTable<K, A::Window>,
    pub(crate) windows: WindowMap<A::Window, Tr::State, F::Acc>,
    pub(crate) timers: TimerService<KeyId, A::Window>,
    pub(crate) processing_time: Timestamp,
    pub(crate) assigned: Vec<A::Window>,
    pub(crate) merge_scratch: MergeScratch<A::Window, Tr::State, F::Acc>,
    pub(crate) max_window_states: Option<usize>,
    pub(crate) metrics: WindowMetrics,
}

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

impl<K, T, A, Tr, F> WindowOperator<K, T, A, Tr, F>
where
    K: Hash + Eq + Clone,
    A: WindowAssigner<T>,
    Tr: Trigger<T, A::Window>,
    F: WindowFunction<T>,
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
            metrics: WindowMetrics::default(),
        })
    }

    /// Refuses elements that would bring the number of window states over `limit` (a guard
    /// against configurations that would exhaust memory, such as 10,000,000 windows per element
    /// over many keys). `None` (the default) means no limit.
    pub fn set_max_window_states(&mut self, limit: Option<usize>) {
        self.max_window_states = limit;
    }

    /// The current processing time (ms) as last set by [`Self::advance_processing_time`].
    pub fn current_processing_time(&self) -> Timestamp {
        self.processing_time
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

    pub(crate) fn cleanup_time(&self, w: &A::Window) -> Timestamp {
        if self.event_time {
            time::add(w.max_timestamp(), self.config.allowed_lateness)
        } else {
            w.max_timestamp()
        }
    }

    fn is_window_late(&self, w: &A::Window) -> bool {
        self.event_time && self.cleanup_time(w) <= self.timers.current_watermark()
    }

    /// [`WindowComputation::process_element`].
    fn element<O>(
        &mut self,
        key: K,
        value: T,
        timestamp: Timestamp,
        out: &mut O,
    ) -> std::result::Result<(), Rejected<K, T>>
    where
        O: WindowOutput<K, A::Window, T, F::Out> + ?Sized,
    {
        let mut assigned = std::mem::take(&mut self.assigned);
        assigned.clear();
        let r =
            self.assigner
                .assign_windows(&value, timestamp, self.processing_time, &mut assigned);
        if let Err(e) = r {
            self.assigned = assigned;
            return Err(Rejected::new(e, key, value));
        }
        if let Some(limit) = self.max_window_states {
            let states = self.windows.len().saturating_add(assigned.len());
            if states > limit {
                self.assigned = assigned;
                let error = ElementError::TooManyWindowStates {
                    states,
                    limit,
                    timestamp,
                };
                return Err(Rejected::new(error, key, value));
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
        if let Err(e) = result {
            return Err(Rejected::new(e, key, value));
        }
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
        O: WindowOutput<K, A::Window, T, F::Out> + ?Sized,
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
    #[expect(
        clippy::too_many_arguments,
        reason = "the borrowed parts of the operator a firing needs"
    )]
    fn apply<O>(
        function: &F,
        metrics: &mut WindowMetrics,
        state: &mut WindowState<Tr::State, F::Acc>,
        r: window_core::TriggerResult,
        key: &K,
        window: &A::Window,
        ctx: FireContext,
        out: &mut O,
    ) where
        O: WindowOutput<K, A::Window, T, F::Out> + ?Sized,
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

    pub(crate) fn delete_cleanup_timer(&mut self, id: KeyId, window: A::Window) {
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

    /// [`WindowComputation::process_watermark`].
    fn watermark<O>(&mut self, watermark: Timestamp, out: &mut O) -> bool
    where
        O: WindowOutput<K, A::Window, T, F::Out> + ?Sized,
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
    pub fn advance_processing_time(
        &mut self,
        now: Timestamp,
        out: &mut dyn WindowOutput<K, A::Window, T, F::Out>,
    ) {
        self.processing_time = self.processing_time.max(now);
        self.fire_processing_timers(self.processing_time, out);
    }

    /// [`WindowComputation::advance_wall_clock`]: Flink's system time service runs a timer at
    /// `t` once the clock has passed `t` (it schedules it 1 ms late), so elements that arrive
    /// during the window's last millisecond still join the window instead of re-creating it
    /// after it fired.
    fn wall_clock<O>(&mut self, now: Timestamp, out: &mut O)
    where
        O: WindowOutput<K, A::Window, T, F::Out> + ?Sized,
    {
        self.processing_time = self.processing_time.max(now);
        self.fire_processing_timers(self.processing_time.saturating_sub(1), out);
    }

    fn fire_processing_timers<O>(&mut self, up_to: Timestamp, out: &mut O)
    where
        O: WindowOutput<K, A::Window, T, F::Out> + ?Sized,
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
        O: WindowOutput<K, A::Window, T, F::Out> + ?Sized,
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

impl<K, T, A, Tr, F> WindowComputation<K, T> for WindowOperator<K, T, A, Tr, F>
where
    K: Hash + Eq + Clone,
    A: WindowAssigner<T>,
    Tr: Trigger<T, A::Window>,
    F: WindowFunction<T>,
{
    type Window = A::Window;
    type Output = F::Out;

    /// Flink's `WindowOperator.processElement`.
    ///
    /// # Errors
    /// [`Rejected`] when the assigner rejects the element (no timestamp, a bad dynamic gap),
    /// when a merge would produce a window already behind the watermark, or when the element
    /// would exceed [`WindowOperator::set_max_window_states`]; nothing changed then.
    fn process_element(
        &mut self,
        key: K,
        element: T,
        timestamp: Timestamp,
        out: &mut dyn WindowOutput<K, A::Window, T, F::Out>,
    ) -> std::result::Result<(), Rejected<K, T>> {
        self.element(key, element, timestamp, out)
    }

    fn process_watermark(
        &mut self,
        watermark: Timestamp,
        out: &mut dyn WindowOutput<K, A::Window, T, F::Out>,
    ) -> bool {
        self.watermark(watermark, out)
    }

    fn advance_wall_clock(
        &mut self,
        now: Timestamp,
        out: &mut dyn WindowOutput<K, A::Window, T, F::Out>,
    ) {
        self.wall_clock(now, out);
    }

    fn next_processing_time_timer(&self) -> Option<Timestamp> {
        self.timers.next_processing_time_timer()
    }

    fn current_watermark(&self) -> Timestamp {
        self.timers.current_watermark()
    }

    fn metrics(&self) -> WindowMetrics {
        WindowMetrics {
            native_windows: self.metrics.windows_created,
            ..self.metrics
        }
    }

    fn live_state(&self) -> LiveState {
        let (event, processing) = self.timers.pending();
        LiveState {
            keys: self.keys.live(),
            windows: self.windows.len(),
            buffered: 0,
            timers: event + processing,
        }
    }
}
