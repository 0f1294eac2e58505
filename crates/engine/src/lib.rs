//! The windowing engine, wired from the micro-crates of this workspace.
//!
//! The crates are re-exported as modules so that one dependency on `engine` is enough:
//! [`core`] (windows, time, aggregate functions), [`assigners`], [`triggers`], [`timers`],
//! [`operator`] (Flink's window operator), [`watermark`], [`keywindow`], [`job`] (job
//! descriptions), [`io`] (sources and sinks) and [`dstream`].
#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

pub mod runtime;
pub mod stream;

pub use runtime::{Runtime, RuntimeConfig, RuntimeError};

/// The repository README's Rust example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
mod readme_doctests {}

pub use dstream_compat as dstream;
pub use keywindow;
pub use timer_service as timers;
pub use window_assigners as assigners;
pub use window_core as core;
pub use window_io as io;
pub use window_job as job;
pub use window_operator as operator;
pub use window_operator::watermark;
pub use window_triggers as triggers;
