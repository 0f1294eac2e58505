//! The operator itself: per element assign, add, trigger, fire/purge and register cleanup; per
//! timer ask the trigger again and clean up at `max_timestamp + allowed_lateness`.

use std::fmt::Debug;
use std::hash::Hash;

use window_assigners::WindowAssigner;
use window_core::{
    time, ElementError, HeldState, LateDataPolicy, LiveState, Rejected, SnapshotError, Timestamp,
    Window, WindowComputation, WindowMetrics, WindowOutput,
};
use window_triggers::{Trigger, TriggerContext};

use crate::function::{FireContext, WindowFunction};
use crate::keys::{KeyId, KeyTable};
use crate::merging::MergeScratch;
use crate::retired::Retired;
use crate::snapshot::{unsupported, Codec};
use crate::states::WindowStates;
use crate::timers::{Domain, MarkedTimers, Marks, TimerStore};
use crate::{OperatorConfig, OperatorError, Result};

#[derive(Clone, Debug)]
pub(crate) struct WindowState<S, A> {
    pub(crate) contents: Option<A>,
    pub(crate) trigger: S,
    /// The window's live timers, where the timer store keeps them ([`MarkedTimers`]).
    pub(crate) marks: Marks,
}

impl<S: Default, A> WindowState<S, A> {
    pub(crate) fn new() -> Self {
        Self {
            contents: None,
            trigger: S::default(),
            marks: Marks::default(),
        }
    }
}

/// A retired window's state: its contents and trigger state. Its timers are not kept: they are
/// its cleanup timer alone (that is what retires it), made again when it comes back.
#[derive(Debug)]
pub(crate) struct RetiredState<S, A> {
    pub(crate) contents: Option<A>,
    pub(crate) trigger: S,
}

impl<S, A> WindowState<S, A> {
    /// The retired form of a state whose only live timer is its cleanup timer.
    fn retire(self) -> RetiredState<S, A> {
        RetiredState {
            contents: self.contents,
            trigger: self.trigger,
        }
    }

    /// A retired state back, with its cleanup timer (event time, `cleanup`) live again.
    fn revive(r: RetiredState<S, A>, cleanup: Timestamp) -> Self {
        let mut marks = Marks::default();
        marks.insert(Domain::EventTime, cleanup);
        Self {
            contents: r.contents,
            trigger: r.trigger,
            marks,
        }
    }
}

/// The trigger context for one (key, window): its timers go to the store, with the window's
/// marks when it has a state.
pub(crate) struct Ctx<'a, W, S> {
    pub(crate) timers: &'a mut S,
    pub(crate) marks: Option<&'a mut Marks>,
    pub(crate) key: KeyId,
    pub(crate) window: W,
    pub(crate) processing_time: Timestamp,
}

impl<W: Window, S: TimerStore<W>> TriggerContext for Ctx<'_, W, S> {
    fn current_watermark(&self) -> Timestamp {
        self.timers.watermark()
    }

    fn current_processing_time(&self) -> Timestamp {
        self.processing_time
    }

    fn register_event_time_timer(&mut self, t: Timestamp) {
        let marks = self.marks.as_deref_mut();
        self.timers
            .register(Domain::EventTime, t, self.key, self.window, marks);
    }

    fn delete_event_time_timer(&mut self, t: Timestamp) {
        let marks = self.marks.as_deref_mut();
        self.timers
            .delete(Domain::EventTime, t, self.key, self.window, marks);
    }

    fn register_processing_time_timer(&mut self, t: Timestamp) {
        let marks = self.marks.as_deref_mut();
        self.timers
            .register(Domain::ProcessingTime, t, self.key, self.window, marks);
    }

    fn delete_processing_time_timer(&mut self, t: Timestamp) {
        let marks = self.marks.as_deref_mut();
        self.timers
            .delete(Domain::ProcessingTime, t, self.key, self.window, marks);
    }
}

/// The keyed window operator (Flink's `WindowOperator`).
///
/// `K` is the key, `T` the element, `A` the assigner, `Tr` the trigger, `F` the window function,
/// `S` where the timers are kept ([`MarkedTimers`]; [`timer_service::TimerService`] is the plain
/// reference the tests compare it with).
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
pub struct WindowOperator<K, T, A, Tr, F, S = MarkedTimers<<A as WindowAssigner<T>>::Window>>
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
    /// Window states by (key, window) (see [`crate::states`]).
    pub(crate) windows: WindowStates<A::Window, WindowState<Tr::State, F::Acc>>,
    /// Windows that fired at their end and only wait for cleanup (see [`crate::retired`]).
    pub(crate) retired: Retired<A::Window, RetiredState<Tr::State, F::Acc>>,
    /// Whether windows retire: event time, not merging, allowed lateness above 0.
    pub(crate) retiring: bool,
    pub(crate) timers: S,
    pub(crate) processing_time: Timestamp,
    pub(crate) assigned: Vec<A::Window>,
    pub(crate) merge_scratch: MergeScratch<A::Window, Tr::State, F::Acc>,
    pub(crate) max_window_states: Option<usize>,
    /// Elements kept in window contents, live and retired ([`WindowFunction::elements`]).
    pub(crate) held_elements: usize,
    pub(crate) metrics: WindowMetrics,
    /// How to write and load snapshots, once [`WindowOperator::with_snapshots`] set it.
    pub(crate) codec: Option<Codec<Self>>,
}

impl<K, T, A, Tr, F> WindowOperator<K, T, A, Tr, F>
where
    K: Hash + Eq + Clone,
    A: WindowAssigner<T>,
    Tr: Trigger<T, A::Window>,
    F: WindowFunction<T>,
{
    /// Builds the operator, its timers in [`MarkedTimers`].
    ///
    /// # Errors
    /// [`OperatorError::TriggerCannotMerge`] for a merging assigner with a trigger that cannot
    /// merge; [`OperatorError::NegativeLateness`].
    pub fn new(assigner: A, trigger: Tr, function: F, config: OperatorConfig) -> Result<Self> {
        Self::with_timer_store(assigner, trigger, function, config)
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
    /// Builds the operator with its timers in an `S` (name it:
    /// `WindowOperator::<_, _, _, _, _, TimerService<_, _>>::with_timer_store`).
    ///
    /// # Errors
    /// As [`WindowOperator::new`].
    pub fn with_timer_store(
        assigner: A,
        trigger: Tr,
        function: F,
        config: OperatorConfig,
    ) -> Result<Self> {
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
        let retiring = event_time && !assigner.is_merging() && config.allowed_lateness > 0;
        // Rings per key for sliding windows, where an element goes into several windows of its
        // key; one window per element (tumbling) is better served by a map of the live windows
        // alone, denser with many sparse keys (see `crate::states`).
        let period = assigner
            .sliding()
            .filter(|(size, slide, _)| slide < size)
            .map(|(_, slide, _)| slide);
        let windows = WindowStates::new(period);
        Ok(Self {
            assigner,
            trigger,
            function,
            config,
            event_time,
            keys: KeyTable::new(),
            windows,
            retired: Retired::default(),
            retiring,
            timers: S::default(),
            processing_time: Timestamp::MIN,
            assigned: Vec::new(),
            merge_scratch: MergeScratch::default(),
            max_window_states: None,
            held_elements: 0,
            metrics: WindowMetrics::default(),
            codec: None,
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
        self.window_states()
    }

    /// Window states held: live ones and retired ones.
    pub(crate) fn window_states(&self) -> usize {
        self.windows.len() + self.retired.len()
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
        self.event_time && self.cleanup_time(w) <= self.timers.watermark()
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
            let states = self.window_states().saturating_add(assigned.len());
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
            let wm = self.timers.watermark();
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
        let cleanup = self.cleanup_time(&window);
        let domain = self.domain();
        // A window ending at or behind the watermark may have fired and retired: a late element
        // within the lateness takes it back into the map.
        if !self.retired.is_empty()
            && window.max_timestamp() <= self.timers.watermark()
            && self.windows.get(id, &window).is_none()
        {
            if let Some(s) = self.retired.take(cleanup, id, &window) {
                self.windows
                    .insert(id, window, WindowState::revive(s, cleanup));
            }
        }
        let (state, created) = self
            .windows
            .get_or_insert_with(id, window, WindowState::new);
        if created {
            self.metrics.windows_created += 1;
            self.keys.slot_mut(id).windows += 1;
        }
        let acc = state.contents.get_or_insert_with(|| self.function.create());
        let before = self.function.elements(acc);
        self.function.add(acc, value, timestamp);
        let WindowState {
            contents,
            trigger,
            marks,
        } = state;
        let mut ctx = Ctx {
            timers: &mut self.timers,
            marks: Some(marks),
            key: id,
            window,
            processing_time: self.processing_time,
        };
        let r = self
            .trigger
            .on_element(value, timestamp, &window, trigger, &mut ctx);
        let fire_ctx = FireContext {
            watermark: self.timers.watermark(),
            processing_time: self.processing_time,
        };
        Self::apply(
            &self.function,
            &mut self.metrics,
            contents,
            r,
            key,
            &window,
            fire_ctx,
            out,
        );
        self.held_elements =
            (self.held_elements + Self::held_in(&self.function, contents)).saturating_sub(before);
        if cleanup != Timestamp::MAX {
            self.timers
                .register(domain, cleanup, id, window, Some(marks));
        }
    }

    /// The domain of the window's cleanup timer.
    pub(crate) fn domain(&self) -> Domain {
        if self.event_time {
            Domain::EventTime
        } else {
            Domain::ProcessingTime
        }
    }

    /// Fires and/or purges `state` as the trigger said.
    #[expect(
        clippy::too_many_arguments,
        reason = "the borrowed parts of the operator a firing needs"
    )]
    fn apply<O>(
        function: &F,
        metrics: &mut WindowMetrics,
        contents: &mut Option<F::Acc>,
        r: window_core::TriggerResult,
        key: &K,
        window: &A::Window,
        ctx: FireContext,
        out: &mut O,
    ) where
        O: WindowOutput<K, A::Window, T, F::Out> + ?Sized,
    {
        if r.is_fire() {
            if let Some(acc) = contents.as_mut() {
                let result = function.fire(acc, &ctx);
                if function.is_empty(acc) {
                    *contents = None;
                }
                metrics.windows_fired += 1;
                out.result(key, window, result, ctx.watermark);
            }
        }
        if r.is_purge() {
            *contents = None;
        }
    }

    /// Deletes the window's cleanup timer (`marks`: the window's, when it has a state).
    pub(crate) fn delete_cleanup_timer(
        &mut self,
        id: KeyId,
        window: A::Window,
        marks: Option<&mut Marks>,
    ) {
        let t = self.cleanup_time(&window);
        if t == Timestamp::MAX {
            return;
        }
        let d = self.domain();
        self.timers.delete(d, t, id, window, marks);
    }

    /// Removes the window's contents, trigger state, timers and merge-set entry.
    fn clear_all_state(&mut self, id: KeyId, window: A::Window) {
        let taken = self.windows.remove(id, &window);
        self.clear_taken_state(id, window, taken);
    }

    /// [`Self::clear_all_state`] for a state already out of the map (`None`: it has none).
    fn clear_taken_state(
        &mut self,
        id: KeyId,
        window: A::Window,
        taken: Option<WindowState<Tr::State, F::Acc>>,
    ) {
        if let Some(mut s) = taken {
            self.keys.slot_mut(id).windows -= 1;
            let held = Self::held_in(&self.function, &s.contents);
            self.held_elements = self.held_elements.saturating_sub(held);
            let mut ctx = Ctx {
                timers: &mut self.timers,
                marks: Some(&mut s.marks),
                key: id,
                window,
                processing_time: self.processing_time,
            };
            self.trigger.clear(&window, &mut s.trigger, &mut ctx);
            self.delete_cleanup_timer(id, window, Some(&mut s.marks));
            // Timers the trigger did not delete still fire, without the state.
            self.timers.adopt(id, window, &mut s.marks);
        } else {
            self.delete_cleanup_timer(id, window, None);
        }
        if self.assigner.is_merging() {
            self.keys.sessions_mut(id).retain(|w| *w != window);
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
        while let Some((t, id, window)) = self.timers.pop_due(Domain::EventTime, watermark) {
            self.on_timer(id, window, t, Domain::EventTime, out);
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
        while let Some((t, id, window)) = self.timers.pop_due(Domain::ProcessingTime, up_to) {
            self.on_timer(id, window, t, Domain::ProcessingTime, out);
        }
    }

    fn on_timer<O>(
        &mut self,
        id: KeyId,
        window: A::Window,
        time: Timestamp,
        domain: Domain,
        out: &mut O,
    ) where
        O: WindowOutput<K, A::Window, T, F::Out> + ?Sized,
    {
        let cleanup = domain == self.domain() && time == self.cleanup_time(&window);
        // A retired window's state, taken out of the FIFO: cleared below if this is its cleanup
        // timer, else back into the map.
        let mut taken = None;
        let mut state = self.windows.get_mut(id, &window);
        if state.is_none() && !self.retired.is_empty() {
            let c = self.cleanup_time(&window);
            taken = self
                .retired
                .take(c, id, &window)
                .map(|s| WindowState::revive(s, c));
            state = taken.as_mut();
        }
        // Only a timer still live (not deleted since it was registered) fires.
        let marks = state.as_deref_mut().map(|s| &mut s.marks);
        let live = self.timers.take_live(domain, time, id, window, marks);
        // Not live; a timer left by a key whose state is gone; a timer of a merged-away window
        // that its trigger did not delete.
        let slot = self.keys.slot(id).filter(|_| {
            live && (!self.assigner.is_merging() || self.keys.sessions(id).contains(&window))
        });
        let Some(slot) = slot else {
            if let Some(s) = taken {
                self.windows.insert(id, window, s);
            }
            return;
        };
        // Borrowed, not cloned: a String key would cost an allocation per firing.
        let key = slot.key.as_ref().expect("live slot has a key");
        let processing_time = self.processing_time;
        let wm = self.timers.watermark();
        let mut scratch = None;
        let has_state = state.is_some();
        let state = match state {
            Some(s) => s,
            None => scratch.insert(WindowState::new()),
        };
        let WindowState {
            contents,
            trigger,
            marks,
        } = state;
        let mut ctx = Ctx {
            timers: &mut self.timers,
            // Timers set while the window has no state are orphans, kept by the store.
            marks: has_state.then_some(marks),
            key: id,
            window,
            processing_time,
        };
        let r = match domain {
            Domain::EventTime => self.trigger.on_event_time(time, &window, trigger, &mut ctx),
            Domain::ProcessingTime => self
                .trigger
                .on_processing_time(time, &window, trigger, &mut ctx),
        };
        let fire_ctx = FireContext {
            watermark: wm,
            processing_time,
        };
        let before = Self::held_in(&self.function, contents);
        Self::apply(
            &self.function,
            &mut self.metrics,
            contents,
            r,
            key,
            &window,
            fire_ctx,
            out,
        );
        self.held_elements =
            (self.held_elements + Self::held_in(&self.function, contents)).saturating_sub(before);
        if cleanup {
            match taken {
                Some(s) => self.clear_taken_state(id, window, Some(s)),
                None => self.clear_all_state(id, window),
            }
            self.keys.release_if_empty(id);
        } else if let Some(s) = taken {
            self.windows.insert(id, window, s);
        } else if self.retiring && domain == Domain::EventTime && time == window.max_timestamp() {
            self.retire(id, window);
        }
    }

    /// Moves the window's state out of the map into the retired FIFO if its cleanup timer is
    /// all that is left of it (see [`crate::retired`]).
    fn retire(&mut self, id: KeyId, window: A::Window) {
        let cleanup = self.cleanup_time(&window);
        if !self.retired.accepts(cleanup) {
            return; // out of cleanup order: it stays
        }
        // One lookup: taken out, and put back in the rare case it still has other timers.
        let Some(s) = self.windows.remove(id, &window) else {
            return;
        };
        if self
            .timers
            .is_only_timer(&s.marks, Domain::EventTime, cleanup)
        {
            if let Err(s) = self.retired.push(cleanup, id, window, s.retire()) {
                self.windows
                    .insert(id, window, WindowState::revive(s, cleanup));
            }
        } else {
            self.windows.insert(id, window, s);
        }
    }
}

impl<K, T, A, Tr, F, S> WindowComputation<K, T> for WindowOperator<K, T, A, Tr, F, S>
where
    K: Hash + Eq + Clone,
    A: WindowAssigner<T>,
    Tr: Trigger<T, A::Window>,
    F: WindowFunction<T>,
    S: TimerStore<A::Window>,
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
        self.timers.next_processing_time()
    }

    /// The earliest event-time timer in the store (a window's end, a cleanup, a trigger's
    /// timer; retired windows keep their cleanup timer there too): only a timer fires.
    fn next_event_time_timer(&self) -> Option<Timestamp> {
        self.timers.next_event_time()
    }

    fn current_watermark(&self) -> Timestamp {
        self.timers.watermark()
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
            windows: self.window_states(),
            buffered: 0,
            timers: event + processing,
        }
    }

    /// Window states live and retired, elements kept in their contents, keys (see
    /// `crate::held` for the byte estimate).
    fn held_state(&self) -> HeldState {
        self.held()
    }

    /// The operator's whole state; only when made [`WindowOperator::with_snapshots`].
    fn snapshot(&self, out: &mut Vec<u8>) -> std::result::Result<(), SnapshotError> {
        (self.codec.as_ref().ok_or_else(unsupported)?.save)(self, out)
    }

    /// Into an operator built as the snapshotted one was, [`WindowOperator::with_snapshots`].
    fn restore(&mut self, snapshot: &[u8]) -> std::result::Result<(), SnapshotError> {
        (self.codec.as_ref().ok_or_else(unsupported)?.load)(self, snapshot)
    }
}
