//! Spark Streaming's DStream windows, with Spark's exact results.
//!
//! Spark Streaming cuts a stream into batches of a fixed batch interval. A windowed stream of
//! window duration `w` and slide duration `s` (multiples of its parent's slide) emits, at every
//! `zero + k · s`, the union of the parent's batches in `(t - w, t]`, found by *slicing* the
//! batches the parent remembers. `reduceByKeyAndWindow` with an inverse function computes each
//! window from the previous one plus the entering batches minus the leaving ones.
//!
//! This crate reproduces Spark's `StreamingContext` (with a manual clock), `DStream`,
//! `WindowedDStream`, `ReducedWindowedDStream`, `UnionDStream` and `PairDStreamFunctions`:
//! [`StreamingContext`], [`DStream`] (per-batch operations, `window`, `slice`, `union`, the
//! windowed reductions), the keyed operations on `DStream<(K, V)>` ([`pair`]), and
//! [`Error`] for Spark's validation and run-time failures at the stage Spark reports them.
//! Every statement about Spark is checked by a case of `tests/conformance/spark/` (outputs of
//! real Spark 4.3). Two deliberate differences, and the model, are in `docs/dstream.md`.
//!
//! [`StreamingContext::snapshot`] and [`StreamingContext::restore`] are Spark's checkpoint and
//! `StreamingContext.getOrCreate`: between two batches, the batch time reached, the queued input
//! and the incremental windows' remembered windows are written under a header fingerprinting
//! the graph, and read back into a context rebuilt from the same program, which then continues
//! with exactly the batches the original would have output.
//!
//! [`workload`] runs a keyed sum over prepared batches in the plain or the incremental form,
//! for benchmarks and tests.
//!
//! All times and durations are `i64` milliseconds.
#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod batch;
mod codec;
mod context;
mod dstream;
mod error;
mod graph;
pub mod pair;
mod queue;
mod rules;
mod snapshot;
mod time;
pub mod workload;

pub use batch::Batch;
pub use context::{ContextState, StreamInfo, StreamingContext};
pub use dstream::{BatchCollector, DStream};
pub use error::{Error, Result};
pub use pair::InverseReduce;
pub use queue::{QueueInput, Retention};
pub use rules::SparkRule;

use std::num::NonZeroUsize;

/// The number of partitions of a keyed operation (Spark's `numPartitions` or its
/// `defaultParallelism`).
///
/// Spark hashes keys into that many partitions; here all records of a batch are one
/// collection, so the number is checked and recorded ([`StreamInfo::partitions`]) but changes
/// neither the results nor their order, as it changes no result in Spark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Partitions {
    /// Spark's default (`sc.defaultParallelism`).
    #[default]
    Default,
    /// A fixed number (see [`Partitions::fixed`]).
    Fixed(NonZeroUsize),
}

/// The examples of `docs/dstream.md`, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/dstream.md")]
struct DstreamGuide;
