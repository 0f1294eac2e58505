//! The built-in triggers, each a faithful port of the behaviour of its Flink namesake.

use window_core::{TimeDomain, Timestamp, TriggerResult, Window};

use crate::{Trigger, TriggerContext};

/// Fires when the watermark passes the window's max timestamp (Flink's `EventTimeTrigger`, the
/// default trigger of event-time tumbling, sliding and session windows).
///
/// An element added to a window that is already behind the watermark (a late element within
/// the allowed lateness) fires the window at once.
#[derive(Clone, Copy, Debug, Default)]
pub struct EventTimeTrigger;

impl<T, W: Window> Trigger<T, W> for EventTimeTrigger {
    type State = ();

    fn on_element<C: TriggerContext>(
        &self,
        _element: &T,
        _timestamp: Timestamp,
        window: &W,
        _state: &mut (),
        ctx: &mut C,
    ) -> TriggerResult {
        if window.max_timestamp() <= ctx.current_watermark() {
            TriggerResult::Fire
        } else {
            ctx.register_event_time_timer(window.max_timestamp());
            TriggerResult::Continue
        }
    }

    fn on_event_time<C: TriggerContext>(
        &self,
        time: Timestamp,
        window: &W,
        _state: &mut (),
        _ctx: &mut C,
    ) -> TriggerResult {
        if time == window.max_timestamp() {
            TriggerResult::Fire
        } else {
            TriggerResult::Continue
        }
    }

    fn on_processing_time<C: TriggerContext>(
        &self,
        _time: Timestamp,
        _window: &W,
        _state: &mut (),
        _ctx: &mut C,
    ) -> TriggerResult {
        TriggerResult::Continue
    }

    fn can_merge(&self) -> bool {
        true
    }

    fn on_merge<C: TriggerContext>(
        &self,
        window: &W,
        _merged: &[()],
        _state: &mut (),
        ctx: &mut C,
    ) {
        // Only register a timer if the watermark is not yet past the end of the merged window:
        // otherwise the window would fire again, which Flink avoids here.
        if window.max_timestamp() > ctx.current_watermark() {
            ctx.register_event_time_timer(window.max_timestamp());
        }
    }

    fn clear<C: TriggerContext>(&self, window: &W, _state: &mut (), ctx: &mut C) {
        ctx.delete_event_time_timer(window.max_timestamp());
    }

    fn describe(&self) -> String {
        "EventTimeTrigger".to_owned()
    }
}

/// Fires when processing time reaches the window's max timestamp (Flink's
/// `ProcessingTimeTrigger`, the default trigger of processing-time windows).
#[derive(Clone, Copy, Debug, Default)]
pub struct ProcessingTimeTrigger;

impl<T, W: Window> Trigger<T, W> for ProcessingTimeTrigger {
    type State = ();

    fn on_element<C: TriggerContext>(
        &self,
        _element: &T,
        _timestamp: Timestamp,
        window: &W,
        _state: &mut (),
        ctx: &mut C,
    ) -> TriggerResult {
        ctx.register_processing_time_timer(window.max_timestamp());
        TriggerResult::Continue
    }

    fn on_event_time<C: TriggerContext>(
        &self,
        _time: Timestamp,
        _window: &W,
        _state: &mut (),
        _ctx: &mut C,
    ) -> TriggerResult {
        TriggerResult::Continue
    }

    fn on_processing_time<C: TriggerContext>(
        &self,
        _time: Timestamp,
        _window: &W,
        _state: &mut (),
        _ctx: &mut C,
    ) -> TriggerResult {
        TriggerResult::Fire
    }

    fn can_merge(&self) -> bool {
        true
    }

    fn on_merge<C: TriggerContext>(
        &self,
        window: &W,
        _merged: &[()],
        _state: &mut (),
        ctx: &mut C,
    ) {
        if window.max_timestamp() > ctx.current_processing_time() {
            ctx.register_processing_time_timer(window.max_timestamp());
        }
    }

    fn clear<C: TriggerContext>(&self, window: &W, _state: &mut (), ctx: &mut C) {
        ctx.delete_processing_time_timer(window.max_timestamp());
    }

    fn describe(&self) -> String {
        "ProcessingTimeTrigger".to_owned()
    }
}

/// Fires when time reaches the window's max timestamp in the given time domain: an
/// [`EventTimeTrigger`] in event time, a [`ProcessingTimeTrigger`] in processing time. It is
/// what Flink's time-window assigners return from `getDefaultTrigger` (the event-time flavours
/// an `EventTimeTrigger`, the processing-time flavours a `ProcessingTimeTrigger`), for assigners
/// whose domain is chosen at run time.
///
/// # Examples
/// ```
/// use window_core::TimeDomain;
/// use window_triggers::TimeTrigger;
/// assert_eq!(TimeTrigger::new(TimeDomain::EventTime).domain(), TimeDomain::EventTime);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimeTrigger {
    domain: TimeDomain,
}

impl TimeTrigger {
    /// The window-end trigger of `domain`.
    #[must_use]
    pub const fn new(domain: TimeDomain) -> Self {
        Self { domain }
    }

    /// The time domain it fires in.
    #[must_use]
    pub const fn domain(&self) -> TimeDomain {
        self.domain
    }
}

/// Calls `$call` with `$t` bound to the trigger of the domain.
macro_rules! by_domain {
    ($self:expr, |$t:ident| $call:expr) => {
        match $self.domain {
            TimeDomain::EventTime => {
                let $t = EventTimeTrigger;
                $call
            }
            TimeDomain::ProcessingTime => {
                let $t = ProcessingTimeTrigger;
                $call
            }
        }
    };
}

impl<T, W: Window> Trigger<T, W> for TimeTrigger {
    type State = ();

    fn on_element<C: TriggerContext>(
        &self,
        element: &T,
        timestamp: Timestamp,
        window: &W,
        state: &mut (),
        ctx: &mut C,
    ) -> TriggerResult {
        by_domain!(self, |t| t
            .on_element(element, timestamp, window, state, ctx))
    }

    fn on_event_time<C: TriggerContext>(
        &self,
        time: Timestamp,
        window: &W,
        state: &mut (),
        ctx: &mut C,
    ) -> TriggerResult {
        by_domain!(self, |t| Trigger::<T, W>::on_event_time(
            &t, time, window, state, ctx
        ))
    }

    fn on_processing_time<C: TriggerContext>(
        &self,
        time: Timestamp,
        window: &W,
        state: &mut (),
        ctx: &mut C,
    ) -> TriggerResult {
        by_domain!(self, |t| Trigger::<T, W>::on_processing_time(
            &t, time, window, state, ctx
        ))
    }

    fn can_merge(&self) -> bool {
        true
    }

    fn on_merge<C: TriggerContext>(&self, window: &W, merged: &[()], state: &mut (), ctx: &mut C) {
        by_domain!(self, |t| Trigger::<T, W>::on_merge(
            &t, window, merged, state, ctx
        ));
    }

    fn clear<C: TriggerContext>(&self, window: &W, state: &mut (), ctx: &mut C) {
        by_domain!(self, |t| Trigger::<T, W>::clear(&t, window, state, ctx));
    }

    fn describe(&self) -> String {
        by_domain!(self, |t| Trigger::<T, W>::describe(&t))
    }
}

/// The trigger of Flink's `GlobalWindows.createWithEndOfStreamTrigger()`: it fires the global
/// window once, at the final `i64::MAX` watermark of a bounded input. On the global window this
/// is exactly what an [`EventTimeTrigger`] does (its max timestamp is `i64::MAX`).
pub type EndOfStreamTrigger = EventTimeTrigger;

/// Fires once the window has received `count` elements since it last fired, and resets the
/// count (Flink's `CountTrigger`). It never fires on time: leftover elements of an event-time
/// window are discarded at cleanup. Counts of merged windows add up.
///
/// # Examples
/// ```
/// use window_triggers::CountTrigger;
/// assert!(CountTrigger::of(0).is_err());
/// let t = CountTrigger::of(3)?;
/// assert_eq!(t.max_count(), 3);
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct CountTrigger {
    max_count: u64,
}

impl CountTrigger {
    /// A trigger that fires every `max_count` elements.
    ///
    /// # Errors
    /// `max_count` of 0, which would never fire meaningfully, is rejected with a message.
    pub fn of(max_count: u64) -> Result<Self, String> {
        if max_count == 0 {
            return Err("count trigger needs a count of at least 1, got 0".to_owned());
        }
        Ok(Self { max_count })
    }

    /// The number of elements per firing.
    #[must_use]
    pub fn max_count(&self) -> u64 {
        self.max_count
    }
}

impl<T, W: Window> Trigger<T, W> for CountTrigger {
    type State = u64;

    fn on_element<C: TriggerContext>(
        &self,
        _element: &T,
        _timestamp: Timestamp,
        _window: &W,
        count: &mut u64,
        _ctx: &mut C,
    ) -> TriggerResult {
        *count += 1;
        if *count >= self.max_count {
            *count = 0;
            TriggerResult::Fire
        } else {
            TriggerResult::Continue
        }
    }

    fn on_event_time<C: TriggerContext>(
        &self,
        _time: Timestamp,
        _window: &W,
        _count: &mut u64,
        _ctx: &mut C,
    ) -> TriggerResult {
        TriggerResult::Continue
    }

    fn on_processing_time<C: TriggerContext>(
        &self,
        _time: Timestamp,
        _window: &W,
        _count: &mut u64,
        _ctx: &mut C,
    ) -> TriggerResult {
        TriggerResult::Continue
    }

    fn can_merge(&self) -> bool {
        true
    }

    fn on_merge<C: TriggerContext>(
        &self,
        _window: &W,
        merged: &[u64],
        count: &mut u64,
        _ctx: &mut C,
    ) {
        *count += merged.iter().sum::<u64>();
    }

    fn clear<C: TriggerContext>(&self, _window: &W, count: &mut u64, _ctx: &mut C) {
        *count = 0;
    }

    fn describe(&self) -> String {
        format!("CountTrigger({})", self.max_count)
    }
}

/// Turns every fire of the inner trigger into fire-and-purge (Flink's `PurgingTrigger`).
///
/// Only the window contents are purged; the inner trigger's state (a count, a delta reference
/// element) survives the purge, as in Flink.
#[derive(Clone, Debug)]
pub struct PurgingTrigger<Tr> {
    inner: Tr,
}

impl<Tr> PurgingTrigger<Tr> {
    /// Wraps `inner`.
    #[must_use]
    pub fn of(inner: Tr) -> Self {
        Self { inner }
    }

    /// The wrapped trigger.
    #[must_use]
    pub fn inner(&self) -> &Tr {
        &self.inner
    }
}

fn purging(r: TriggerResult) -> TriggerResult {
    if r.is_fire() {
        TriggerResult::FireAndPurge
    } else {
        r
    }
}

impl<T, W: Window, Tr: Trigger<T, W>> Trigger<T, W> for PurgingTrigger<Tr> {
    type State = Tr::State;

    fn on_element<C: TriggerContext>(
        &self,
        element: &T,
        timestamp: Timestamp,
        window: &W,
        state: &mut Self::State,
        ctx: &mut C,
    ) -> TriggerResult {
        purging(
            self.inner
                .on_element(element, timestamp, window, state, ctx),
        )
    }

    fn on_event_time<C: TriggerContext>(
        &self,
        time: Timestamp,
        window: &W,
        state: &mut Self::State,
        ctx: &mut C,
    ) -> TriggerResult {
        purging(self.inner.on_event_time(time, window, state, ctx))
    }

    fn on_processing_time<C: TriggerContext>(
        &self,
        time: Timestamp,
        window: &W,
        state: &mut Self::State,
        ctx: &mut C,
    ) -> TriggerResult {
        purging(self.inner.on_processing_time(time, window, state, ctx))
    }

    fn can_merge(&self) -> bool {
        self.inner.can_merge()
    }

    fn on_merge<C: TriggerContext>(
        &self,
        window: &W,
        merged: &[Self::State],
        state: &mut Self::State,
        ctx: &mut C,
    ) {
        self.inner.on_merge(window, merged, state, ctx);
    }

    fn clear<C: TriggerContext>(&self, window: &W, state: &mut Self::State, ctx: &mut C) {
        self.inner.clear(window, state, ctx);
    }

    fn describe(&self) -> String {
        format!("PurgingTrigger({})", self.inner.describe())
    }
}

/// Never fires (the default trigger of Flink's `GlobalWindows.create()`): a global window with
/// it emits nothing, not even at the end of input, unless another trigger is set.
#[derive(Clone, Copy, Debug, Default)]
pub struct NeverTrigger;

impl<T, W: Window> Trigger<T, W> for NeverTrigger {
    type State = ();

    fn on_element<C: TriggerContext>(
        &self,
        _element: &T,
        _timestamp: Timestamp,
        _window: &W,
        _state: &mut (),
        _ctx: &mut C,
    ) -> TriggerResult {
        TriggerResult::Continue
    }

    fn on_event_time<C: TriggerContext>(
        &self,
        _time: Timestamp,
        _window: &W,
        _state: &mut (),
        _ctx: &mut C,
    ) -> TriggerResult {
        TriggerResult::Continue
    }

    fn on_processing_time<C: TriggerContext>(
        &self,
        _time: Timestamp,
        _window: &W,
        _state: &mut (),
        _ctx: &mut C,
    ) -> TriggerResult {
        TriggerResult::Continue
    }

    fn clear<C: TriggerContext>(&self, _window: &W, _state: &mut (), _ctx: &mut C) {}

    fn describe(&self) -> String {
        "NeverTrigger".to_owned()
    }
}
