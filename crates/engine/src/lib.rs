//! The windowing engine: the keyed window operator, watermarks, sources and sinks, and the
//! `windowctl` command line, wired from the micro-crates of this workspace.
//!
//! A job reads events (CSV or JSON lines, from a file, stdin or a TCP socket), stamps
//! watermarks ([`watermark`]), runs them through a [`operator::WindowOperator`] built from a
//! window assigner ([`assigners`]), a trigger ([`triggers`]) and a window function, and writes
//! the results ([`io`]). [`job`] puts these together the way `windowctl run` does.
//!
//! The other crates are re-exported as modules so that one dependency on `engine` is enough:
//! [`core`] (windows, time, aggregate functions), [`assigners`], [`triggers`], [`timers`],
//! [`keywindow`] and [`dstream`].
//!
//! **Invariant:** only this crate starts threads or opens channels, files and sockets.
#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

pub mod dstream_job;
pub mod io;
pub mod job;
pub mod operator;
pub mod watermark;

/// The repository README's Rust example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
mod readme_doctests {}

pub use dstream_compat as dstream;
pub use keywindow;
pub use timer_service as timers;
pub use window_assigners as assigners;
pub use window_core as core;
pub use window_triggers as triggers;
