//! A window job as data, and the computation it describes.
//!
//! A [`JobSpec`] names the windows ([`WindowSpec`]), the trigger ([`TriggerSpec`]), the
//! evictor ([`EvictorSpec`]), the time domain, the allowed lateness, the late-data policy, the
//! aggregate ([`JobAggregate`]) and the strategy ([`Strategy`]): the native operator, key
//! windows or sliced windows. [`build`] validates it and builds the computation, whose window
//! kind and strategy are chosen at run time, as one trait object ([`Computation`]): elements are
//! `(key, f64 value, timestamp)`, results are [`JobResult`]s.
//!
//! The textual forms (`tumbling:1h:-8h`, `purging:count:3` ...) are parsed here with
//! [`std::str::FromStr`], so the command line and the tests share one grammar.
#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod build;
pub mod duration;
mod fields;
mod grammar;
mod parts;
mod spec;

pub use build::{
    build, build_with, ordered_computation, ordered_with, Boxing, Computation, JobKey, JobResult,
    OrderedComputation, OrderedParts, Visitor,
};
pub use parts::{DeltaSpec, EvictorSpec, TriggerSpec, WindowSpec};
pub use spec::{IoSpec, JobAggregate, JobSpec, OrderedKind, SpecError, Strategy, WatermarkSpec};

/// Reads a time domain as job files spell it: `event` (also `event_time`, `event-time`) or
/// `processing` (also `processing_time`, `processing-time`), so that `windowctl run --time` and
/// a job file's `time` take the same words.
///
/// # Errors
/// Any other text, with a message that names what was expected.
pub fn parse_time_domain(text: &str) -> Result<window_core::TimeDomain, String> {
    fields::time_domain::parse(text)
}

#[cfg(test)]
mod tests;
