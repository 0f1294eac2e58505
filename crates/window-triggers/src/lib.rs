//! Triggers decide when a window is evaluated (fired) and when its contents are purged.
//!
//! The window operator consults a trigger on every element added to a window, and whenever a
//! timer the trigger registered goes off, in event time (the watermark passed it) or processing
//! time (the wall clock passed it). The trigger answers with a [`TriggerResult`]. Between calls,
//! a trigger keeps per-(key, window) state of its own ([`Trigger::State`]: a count, the next fire
//! time, the last element it fired on ...) that the operator stores beside the window and hands
//! back on every call; and it can register and delete timers through the [`TriggerContext`].
//!
//! This follows Flink's `org.apache.flink.streaming.api.windowing.triggers` package, trigger by
//! trigger, including the merging behaviour (`canMerge`/`onMerge`) that session windows need.
//!
//! | trigger | Flink class | fires |
//! |---|---|---|
//! | [`EventTimeTrigger`] | `EventTimeTrigger` | when the watermark reaches the window's max timestamp |
//! | [`ProcessingTimeTrigger`] | `ProcessingTimeTrigger` | when the clock reaches the window's max timestamp |
//! | [`TimeTrigger`] | the time-window assigners' `getDefaultTrigger` | either of the two above, by time domain |
//! | [`CountTrigger`] | `CountTrigger` | every N elements |
//! | [`PurgingTrigger`] | `PurgingTrigger` | when its inner trigger fires, and purges |
//! | [`NeverTrigger`] | `GlobalWindows.NeverTrigger` | never |
//! | [`ContinuousEventTimeTrigger`] | `ContinuousEventTimeTrigger` | every interval of event time, and at the end |
//! | [`ContinuousProcessingTimeTrigger`] | `ContinuousProcessingTimeTrigger` | every interval of processing time |
//! | [`DeltaTrigger`] | `DeltaTrigger` | when an element differs from the last fired one by more than a threshold |
//!
//! [`AnyTrigger`] is a closed enum over all of them, for configurations chosen at run time (the
//! command line, the conformance harness). A user-written trigger implements [`Trigger`] directly.
#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod any;
mod builtin;
mod continuous;
mod delta;

pub use any::{AnyTrigger, AnyTriggerState};
pub use builtin::{
    CountTrigger, EndOfStreamTrigger, EventTimeTrigger, NeverTrigger, ProcessingTimeTrigger,
    PurgingTrigger, TimeTrigger,
};
pub use continuous::{ContinuousEventTimeTrigger, ContinuousProcessingTimeTrigger};
pub use delta::{DeltaFunction, DeltaTrigger};
pub use window_core::TriggerResult;

use std::fmt::Debug;
use window_core::{Timestamp, Window};

/// What a trigger may see and do while it handles one (key, window): read the clocks, and
/// register or delete timers for this key and window (Flink's `Trigger.TriggerContext`).
///
/// Timers are deduplicated: registering the same time twice for one (key, window) gives one timer.
pub trait TriggerContext {
    /// The operator's current event-time watermark in ms (`i64::MIN` before the first one).
    fn current_watermark(&self) -> Timestamp;
    /// The operator's current processing time in ms.
    fn current_processing_time(&self) -> Timestamp;
    /// Asks for [`Trigger::on_event_time`] when the watermark reaches `time`.
    fn register_event_time_timer(&mut self, time: Timestamp);
    /// Deletes an event-time timer registered earlier; a no-op if there is none.
    fn delete_event_time_timer(&mut self, time: Timestamp);
    /// Asks for [`Trigger::on_processing_time`] when processing time reaches `time`.
    fn register_processing_time_timer(&mut self, time: Timestamp);
    /// Deletes a processing-time timer registered earlier; a no-op if there is none.
    fn delete_processing_time_timer(&mut self, time: Timestamp);
}

/// Decides when a window fires and purges (Flink's `Trigger<T, W>`).
///
/// `T` is the element type, `W` the window type. Every method receives the window it is about
/// and the trigger's own state for that (key, window) ([`Self::State`], created with `Default`
/// the first time). Triggers are shared by all keys and windows: keep nothing in `self` that
/// changes.
pub trait Trigger<T, W: Window> {
    /// Per-(key, window) state of the trigger: `()` when it needs none. A window operator
    /// writes it to its snapshots when it is `serde::Serialize` and `serde::Deserialize` (every
    /// built-in trigger's is: `()`, a count, the next fire time, the last element, or
    /// [`AnyTriggerState`]), as Flink checkpoints a trigger's partitioned state.
    type State: Default + Clone + Debug;

    /// Called for every element added to `window`, after the element was added to the window's
    /// contents. `timestamp` is the element's event timestamp in ms.
    fn on_element<C: TriggerContext>(
        &self,
        element: &T,
        timestamp: Timestamp,
        window: &W,
        state: &mut Self::State,
        ctx: &mut C,
    ) -> TriggerResult;

    /// Called when an event-time timer registered for this (key, window) at `time` goes off.
    fn on_event_time<C: TriggerContext>(
        &self,
        time: Timestamp,
        window: &W,
        state: &mut Self::State,
        ctx: &mut C,
    ) -> TriggerResult;

    /// Called when a processing-time timer registered for this (key, window) at `time` goes off.
    fn on_processing_time<C: TriggerContext>(
        &self,
        time: Timestamp,
        window: &W,
        state: &mut Self::State,
        ctx: &mut C,
    ) -> TriggerResult;

    /// Whether this trigger supports merging windows (session windows). A merging assigner with
    /// a trigger that returns `false` is rejected when the operator is built, as in Flink.
    fn can_merge(&self) -> bool {
        false
    }

    /// Called when windows merge into `window`: `merged` holds the states of the windows that
    /// were merged away, `state` is the (fresh) state of the resulting window. The trigger
    /// combines the states and re-registers the timers the merged window needs (Flink's
    /// `onMerge` with `mergePartitionedState`). The merged-away windows are cleared afterwards.
    fn on_merge<C: TriggerContext>(
        &self,
        window: &W,
        merged: &[Self::State],
        state: &mut Self::State,
        ctx: &mut C,
    ) {
        let _ = (window, merged, state, ctx);
    }

    /// Called when the window is removed (cleanup, or merged away): delete the timers this
    /// trigger registered and reset its state.
    fn clear<C: TriggerContext>(&self, window: &W, state: &mut Self::State, ctx: &mut C);

    /// A short human-readable name, used in error messages (`CountTrigger(3)`).
    fn describe(&self) -> String;
}
