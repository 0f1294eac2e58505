//! The vocabulary every other crate of the windowing engine speaks.
//!
//! A stream element carries an event timestamp; a *window* is a bucket of elements that is
//! evaluated as a whole. This crate defines what a window is ([`Window`], [`TimeWindow`],
//! [`GlobalWindow`]), what a trigger decides ([`TriggerResult`]), how time arithmetic behaves at
//! the edges of `i64` ([`time`]), and how elements are folded into a result
//! ([`AggregateFunction`], [`ReduceFunction`]), and the one interface every windowed computation
//! offers and the one interface its results go to ([`WindowComputation`], [`WindowOutput`]).
//!
//! It follows Flink's `org.apache.flink.streaming.api.windowing.windows` package and
//! `org.apache.flink.api.common.functions.AggregateFunction`. All timestamps and durations are
//! milliseconds as `i64` ([`Timestamp`]) unless a type says otherwise.
//!
//! **Invariant:** this crate depends on nothing but optional `serde`.
#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

pub mod aggregate;
pub mod computation;
pub mod rules;
pub mod snapshot;
pub mod time;
pub mod window;

pub use aggregate::{
    AggregateFunction, AggregateListError, ExactNumeric, MapAggregate, Number, NumericAcc,
    NumericAggregate, NumericAggregates, NumericResult, NumericStats, ReduceAggregate,
    ReduceFunction,
};
pub use computation::{
    Converted, ElementError, Emitted, HeldState, LateDataPolicy, LiveState, Rejected, TimeDomain,
    WindowComputation, WindowMetrics, WindowOutput, MAP_ENTRY_OVERHEAD,
};
pub use rules::{FlinkRule, Stage};
pub use snapshot::SnapshotError;
pub use time::{Timestamp, MAX_WATERMARK, MIN_WATERMARK};
pub use window::{AnyWindow, GlobalWindow, TimeWindow, TimestampedValue, TriggerResult, Window};
