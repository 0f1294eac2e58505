//! The continuous triggers: Flink's `ContinuousEventTimeTrigger` and
//! `ContinuousProcessingTimeTrigger`, which fire every interval while the window is open.

use window_core::{time, Timestamp, TriggerResult, Window};

use crate::{Trigger, TriggerContext};

/// The interval of a continuous trigger: positive, or an error naming the value.
fn positive_interval(interval: i64) -> Result<i64, String> {
    if interval <= 0 {
        return Err(format!(
            "continuous trigger interval must be positive, got {interval} ms"
        ));
    }
    Ok(interval)
}

/// The next fire time of a continuous trigger after `from`: one interval later, capped at the
/// window's max timestamp (both Flink continuous triggers), saturating at `i64::MAX`.
fn next_fire_time<W: Window>(from: Timestamp, interval: i64, window: &W) -> Timestamp {
    time::add(from, interval).min(window.max_timestamp())
}

/// The fire time a merged window inherits: the smallest pending one of the merged windows.
fn earliest_pending(merged: &[Option<Timestamp>]) -> Option<Timestamp> {
    merged.iter().flatten().copied().min()
}

/// Fires every `interval` ms of event time while the window is open, and at the window's end
/// (Flink's `ContinuousEventTimeTrigger`).
///
/// Fire times are aligned to the epoch with truncating remainder, as Flink computes them: the
/// first is `ts - ts % interval + interval` for the window's first element (so with negative
/// timestamps they are not floor-aligned), capped at the window's max timestamp. The pending
/// fire time is the trigger state; on merge the smallest pending one carries over.
#[derive(Clone, Copy, Debug)]
pub struct ContinuousEventTimeTrigger {
    interval: i64,
}

impl ContinuousEventTimeTrigger {
    /// A trigger firing every `interval` ms of event time.
    ///
    /// # Errors
    /// A non-positive interval is rejected, naming the value.
    pub fn of(interval: i64) -> Result<Self, String> {
        positive_interval(interval).map(|interval| Self { interval })
    }

    /// The interval in ms.
    #[must_use]
    pub fn interval(&self) -> i64 {
        self.interval
    }

    fn register_next<W: Window, C: TriggerContext>(
        &self,
        from: Timestamp,
        window: &W,
        next: &mut Option<Timestamp>,
        ctx: &mut C,
    ) {
        let t = next_fire_time(from, self.interval, window);
        *next = Some(t);
        ctx.register_event_time_timer(t);
    }
}

impl<T, W: Window> Trigger<T, W> for ContinuousEventTimeTrigger {
    type State = Option<Timestamp>;

    fn on_element<C: TriggerContext>(
        &self,
        _element: &T,
        timestamp: Timestamp,
        window: &W,
        next: &mut Option<Timestamp>,
        ctx: &mut C,
    ) -> TriggerResult {
        if window.max_timestamp() <= ctx.current_watermark() {
            return TriggerResult::Fire;
        }
        ctx.register_event_time_timer(window.max_timestamp());
        if next.is_none() {
            // Java's `%` truncates toward zero; Rust's `%` on i64 does the same.
            let start = timestamp - timestamp % self.interval;
            self.register_next(start, window, next, ctx);
        }
        TriggerResult::Continue
    }

    fn on_event_time<C: TriggerContext>(
        &self,
        time: Timestamp,
        window: &W,
        next: &mut Option<Timestamp>,
        ctx: &mut C,
    ) -> TriggerResult {
        if time == window.max_timestamp() {
            return TriggerResult::Fire;
        }
        if *next == Some(time) {
            if window.max_timestamp() == Timestamp::MAX && ctx.current_watermark() == Timestamp::MAX
            {
                // The final watermark on a window that never ends (the global window): Flink
                // would fire every interval up to i64::MAX and never finish. We leave the one
                // end-of-window firing (its timer at i64::MAX is pending) and stop here.
                *next = None;
                return TriggerResult::Continue;
            }
            self.register_next(time, window, next, ctx);
            return TriggerResult::Fire;
        }
        TriggerResult::Continue
    }

    fn on_processing_time<C: TriggerContext>(
        &self,
        _time: Timestamp,
        _window: &W,
        _next: &mut Option<Timestamp>,
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
        merged: &[Option<Timestamp>],
        next: &mut Option<Timestamp>,
        ctx: &mut C,
    ) {
        *next = earliest_pending(merged);
        if let Some(t) = *next {
            ctx.register_event_time_timer(t);
        }
    }

    fn clear<C: TriggerContext>(&self, _window: &W, next: &mut Option<Timestamp>, ctx: &mut C) {
        if let Some(t) = next.take() {
            ctx.delete_event_time_timer(t);
        }
    }

    fn describe(&self) -> String {
        format!("ContinuousEventTimeTrigger({} ms)", self.interval)
    }
}

/// Fires every `interval` ms of processing time, aligned to the epoch, and at the window's max
/// timestamp (Flink's `ContinuousProcessingTimeTrigger`).
///
/// The first fire time is `now - now % interval + interval` (truncating remainder, as Flink),
/// later ones `time + interval`, each capped at the window's max timestamp. Where that cap is
/// not after the fire time that just fired (an event-time window whose end the processing clock
/// has passed), Flink would register the same time again and fire it without end; this trigger
/// registers the interval boundary after the current processing time instead, so it fires at
/// most once per timer instant and once per clock advance, every interval while the window
/// lives (`docs/window-model.md`).
#[derive(Clone, Copy, Debug)]
pub struct ContinuousProcessingTimeTrigger {
    interval: i64,
}

impl ContinuousProcessingTimeTrigger {
    /// A trigger firing every `interval` ms of processing time.
    ///
    /// # Errors
    /// A non-positive interval is rejected, naming the value.
    pub fn of(interval: i64) -> Result<Self, String> {
        positive_interval(interval).map(|interval| Self { interval })
    }

    /// The interval in ms.
    #[must_use]
    pub fn interval(&self) -> i64 {
        self.interval
    }

    fn register_next<W: Window, C: TriggerContext>(
        &self,
        from: Timestamp,
        window: &W,
        next: &mut Option<Timestamp>,
        ctx: &mut C,
    ) {
        let t = next_fire_time(from, self.interval, window);
        *next = Some(t);
        ctx.register_processing_time_timer(t);
    }
}

impl<T, W: Window> Trigger<T, W> for ContinuousProcessingTimeTrigger {
    type State = Option<Timestamp>;

    fn on_element<C: TriggerContext>(
        &self,
        _element: &T,
        _timestamp: Timestamp,
        window: &W,
        next: &mut Option<Timestamp>,
        ctx: &mut C,
    ) -> TriggerResult {
        if next.is_none() {
            let now = ctx.current_processing_time();
            let start = now - now % self.interval;
            self.register_next(start, window, next, ctx);
        }
        TriggerResult::Continue
    }

    fn on_event_time<C: TriggerContext>(
        &self,
        _time: Timestamp,
        _window: &W,
        _next: &mut Option<Timestamp>,
        _ctx: &mut C,
    ) -> TriggerResult {
        TriggerResult::Continue
    }

    fn on_processing_time<C: TriggerContext>(
        &self,
        time: Timestamp,
        window: &W,
        next: &mut Option<Timestamp>,
        ctx: &mut C,
    ) -> TriggerResult {
        if *next == Some(time) {
            if next_fire_time(time, self.interval, window) > time {
                self.register_next(time, window, next, ctx);
            } else {
                // The window's end is not after this firing (an event-time window the clock
                // has passed): Flink's `min(time + interval, maxTimestamp)` would be this fire
                // time again, fired again at once, without end. The next fire is the interval
                // boundary after the current clock instead, as Flink's `onElement` aligns it.
                *next = None;
                let now = ctx.current_processing_time().max(time);
                let following = time::add(now - now % self.interval, self.interval);
                if following > now {
                    *next = Some(following);
                    ctx.register_processing_time_timer(following);
                }
            }
            return TriggerResult::Fire;
        }
        TriggerResult::Continue
    }

    fn can_merge(&self) -> bool {
        true
    }

    fn on_merge<C: TriggerContext>(
        &self,
        _window: &W,
        merged: &[Option<Timestamp>],
        next: &mut Option<Timestamp>,
        ctx: &mut C,
    ) {
        *next = earliest_pending(merged);
        if let Some(t) = *next {
            ctx.register_processing_time_timer(t);
        }
    }

    fn clear<C: TriggerContext>(&self, _window: &W, next: &mut Option<Timestamp>, ctx: &mut C) {
        if let Some(t) = next.take() {
            ctx.delete_processing_time_timer(t);
        }
    }

    fn describe(&self) -> String {
        format!("ContinuousProcessingTimeTrigger({} ms)", self.interval)
    }
}
