//! Spark Streaming's DStream windows (planned, issue 5).
//!
//! Spark Streaming cuts a stream into batches of a fixed batch interval; a windowed stream of
//! window duration `w` and slide duration `s` (both multiples of the batch interval) emits, every
//! `s`, the union of the batches of the last `w`, found by *slicing* the parent stream's
//! remembered batches. `reduceByKeyAndWindow` with an inverse function computes each window from
//! the previous one plus the entering batches minus the leaving ones. This crate will reproduce
//! `DStream`, `WindowedDStream`, `ReducedWindowedDStream` and `PairDStreamFunctions` with Spark's
//! exact results; it holds no code yet.
#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
