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
//! output is set; we count every late element ([`WindowMetrics::late_elements`]) and, apart,
//! those routed to the side output.
//!
//! Non-keyed windows (Flink's `windowAll`) are the same operator with `()` as the key.
//!
//! The operator is a [`WindowComputation`]: drive it with `process_element`, `process_watermark`
//! and `advance_wall_clock` (or, as Flink's test harness sets processing time,
//! [`WindowOperator::advance_processing_time`]); results go to a [`WindowOutput`].
//!
//! Window states live in `states.rs`: for sliding windows a ring per key indexed by the window's
//! place on the grid of starts, a hash map keyed by `(key id, window)` (ahash) for the rest;
//! with allowed lateness, windows that only wait for their cleanup retire into a FIFO
//! (`retired.rs`). Keys are interned to small ids ([`KeyId`]) so that timers are cheap to store
//! and compare. A window's live timers
//! are kept in its state ([`Marks`], by [`MarkedTimers`]), so registering, deleting and firing
//! them need no lookup besides the window's own. The hot path allocates nothing per element
//! once a window exists: assigned windows go into a reused buffer.
//!
//! What the operator holds for a memory bound ([`WindowComputation::held_state`]: window
//! states, the elements kept by functions that keep them, keys, a byte estimate) comes from
//! counters kept as states and elements come and go (`held.rs`), so that asking costs nothing.
//!
//! An operator made [`WindowOperator::with_snapshots`] writes its whole state to a snapshot
//! and loads one into a freshly built operator of the same configuration
//! ([`WindowComputation::snapshot`], [`WindowComputation::restore`]; `snapshot.rs`): a logical
//! listing of its keys, window states, retired windows, timers in firing order, clocks and
//! counters, from which restore rebuilds the structures above, so that the restored operator
//! emits exactly what the original would have.

#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod evictor;
mod function;
mod held;
mod keys;
mod merging;
mod operator;
mod retired;
mod snapshot;
mod states;
mod timers;
pub mod watermark;

pub use evictor::{
    AnyEvictor, CountEvictor, DeltaEvictor, EvictMoment, Evicting, Evictor, TimeEvictor,
};
pub use function::{FireContext, FullWindow, Incremental, WindowFunction};
pub use keys::KeyId;
pub use operator::WindowOperator;
pub use timers::{Domain, MarkedTimers, Marks, TimerListing, TimerStore};
use window_core::FlinkRule;

pub use window_core::{
    ElementError, Emitted, LateDataPolicy, LiveState, Rejected, WindowComputation, WindowMetrics,
    WindowOutput,
};

/// Errors of the window operator when it is built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OperatorError {
    /// A merging assigner (sessions) with a trigger that cannot merge (Flink's
    /// `WindowOperatorBuilder.trigger` rejects this when the job is built).
    #[error("a merging window assigner ({assigner}) cannot be used with a trigger that does not support merging ({trigger})")]
    TriggerCannotMerge {
        /// The assigner's description.
        assigner: String,
        /// The trigger's description.
        trigger: String,
    },
    /// Negative allowed lateness (Flink's `WindowedStream.allowedLateness`: "The allowed lateness
    /// cannot be negative.").
    #[error("allowed lateness must not be negative, got {0} ms")]
    NegativeLateness(i64),
}

impl OperatorError {
    /// The Flink rule this error enforces.
    #[must_use]
    pub fn rule(&self) -> Option<FlinkRule> {
        Some(match self {
            OperatorError::TriggerCannotMerge { .. } => {
                FlinkRule::MergingAssignerNeedsMergingTrigger
            }
            OperatorError::NegativeLateness(_) => FlinkRule::AllowedLatenessNotNegative,
        })
    }
}

/// This crate's result type.
pub type Result<T> = std::result::Result<T, OperatorError>;

/// Configuration of a [`WindowOperator`] besides assigner, trigger and function.
#[derive(Clone, Copy, Debug, Default)]
pub struct OperatorConfig {
    /// How long after a window's end (in ms of event time) it still accepts late elements and
    /// re-fires; 0 by default (Flink's `allowedLateness`).
    pub allowed_lateness: i64,
    /// Whether late elements go to a side output.
    pub late_data: LateDataPolicy,
}

/// The seeded xorshift64 generator of this crate's randomized unit tests (each failure names
/// nothing but its seed, so a run can be repeated).
#[cfg(test)]
pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}
