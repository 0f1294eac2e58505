//! The one error type of the crate: every way a DStream program can be rejected or fail, at the
//! stage where Spark Streaming rejects or fails it (building a stream, `start()`, running a batch,
//! slicing), each message naming the offending durations in milliseconds as Spark does (`1500 ms`).

use std::fmt::Write as _;

/// A `Result` whose error is this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a DStream program was rejected or failed.
///
/// The variants follow Spark Streaming's checks (the Spark class or method is named on each).
/// Stage: *construct* errors come from the call that builds a stream (`window`,
/// `reduce_by_key_and_window`, `union`, ...); *start* errors from
/// [`StreamingContext::start`](crate::StreamingContext::start); *run* errors from
/// [`StreamingContext::run_batch`](crate::StreamingContext::run_batch); *slice* errors from
/// [`DStream::slice`](crate::DStream::slice). All durations and times are milliseconds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Construct: a batch interval that is not positive (`StreamingContext(batchDuration)`).
    #[error("the batch interval must be positive, got {interval} ms")]
    InvalidBatchInterval {
        /// The rejected interval, in ms.
        interval: i64,
    },
    /// Construct: a negative window or slide duration. Spark accepts these and then computes
    /// windows that are always empty (or never ends, for an incremental window); we reject
    /// them (see `docs/dstream.md`).
    #[error("the {what} duration of {stream} must not be negative, got {duration} ms")]
    NegativeDuration {
        /// Spark's class of the stream being built (`WindowedDStream`, `ReducedWindowedDStream`).
        stream: &'static str,
        /// `window` or `slide`.
        what: &'static str,
        /// The rejected duration, in ms.
        duration: i64,
    },
    /// Construct: a window duration that is not a multiple of the parent stream's slide
    /// (`WindowedDStream`: Spark's `java.lang.Exception`; `ReducedWindowedDStream`: Spark's
    /// `require`, an `IllegalArgumentException`).
    #[error("the window duration of {stream} ({window} ms) must be a multiple of the slide duration of parent DStream ({parent_slide} ms)")]
    WindowNotMultiple {
        /// Spark's class of the stream being built: `WindowedDStream` (the plain windows, which
        /// Spark builds on `window`) or `ReducedWindowedDStream` (the incremental ones).
        stream: &'static str,
        /// The window duration, in ms.
        window: i64,
        /// The parent stream's slide duration, in ms.
        parent_slide: i64,
    },
    /// Construct: a slide duration that is not a multiple of the parent stream's slide (same
    /// two forms as [`Error::WindowNotMultiple`]).
    #[error("the slide duration of {stream} ({slide} ms) must be a multiple of the slide duration of parent DStream ({parent_slide} ms)")]
    SlideNotMultiple {
        /// Spark's class of the stream being built.
        stream: &'static str,
        /// The slide duration, in ms.
        slide: i64,
        /// The parent stream's slide duration, in ms.
        parent_slide: i64,
    },
    /// Construct: `union` of streams whose slide durations differ (`UnionDStream`).
    #[error("some of the DStreams have different slide durations ({})", list_ms(.slides))]
    DifferentSlideDurations {
        /// The slide durations of the streams, in the order given, in ms.
        slides: Vec<i64>,
    },
    /// Construct: `union` of streams of different streaming contexts (`UnionDStream`).
    #[error("some of the DStreams have different contexts")]
    DifferentContexts,
    /// Construct: `union` of no stream (`UnionDStream`).
    #[error("the list of DStreams to union is empty")]
    EmptyUnion,
    /// Construct: a number of partitions of 0 (Spark's `HashPartitioner` fails on it at run
    /// time; we reject it when it is given).
    #[error("the number of partitions must be positive, got {partitions}")]
    InvalidPartitions {
        /// The rejected number.
        partitions: usize,
    },
    /// A computation divided by a slide duration of 0 ms. Spark accepts a zero slide when the
    /// stream is built (0 is a multiple of anything) and fails with
    /// `java.lang.ArithmeticException: / by zero` where it first needs the batch times of the
    /// stream: at the first batch for a window, at `start()` for an incremental window (its
    /// checkpoint interval check), at construction for a window over it.
    #[error("the slide duration of {stream} is 0 ms, so its batch times cannot be found (division by zero)")]
    ZeroSlide {
        /// Spark's class of the stream whose slide is zero.
        stream: &'static str,
    },
    /// Start: a checkpoint interval shorter than the stream's slide (`DStream.validateAtStart`).
    #[error("the checkpoint interval for {stream} has been set to {interval} ms which is lower than its slide time ({slide} ms); please set it to at least {slide} ms")]
    CheckpointIntervalTooShort {
        /// Spark's class of the stream.
        stream: &'static str,
        /// The checkpoint interval, in ms.
        interval: i64,
        /// The stream's slide duration, in ms.
        slide: i64,
    },
    /// Start: a checkpoint interval that is not a multiple of the stream's slide
    /// (`DStream.validateAtStart`).
    #[error("the checkpoint interval for {stream} has been set to {interval} ms which is not a multiple of its slide time ({slide} ms); please set it to a multiple of {slide} ms")]
    CheckpointIntervalNotMultiple {
        /// Spark's class of the stream.
        stream: &'static str,
        /// The checkpoint interval, in ms.
        interval: i64,
        /// The stream's slide duration, in ms.
        slide: i64,
    },
    /// Start: no output operation was registered (`DStreamGraph.validate`).
    #[error("no output operations registered, so nothing to execute")]
    NoOutputOperations,
    /// Start, construct: the context was already started (Spark's
    /// `IllegalStateException`/`UnsupportedOperationException` for registering an output,
    /// setting a checkpoint interval or a remember duration after `start()`).
    #[error("the streaming context has already been started")]
    AlreadyStarted,
    /// Run: a batch was asked for before `start()`.
    #[error("the streaming context has not been started")]
    NotStarted,
    /// Run: the context stopped (a failed `start()` or a failed batch) and runs no more batches.
    #[error("the streaming context has stopped after an earlier error")]
    Stopped,
    /// Start, run: a time that an `i64` of milliseconds cannot hold: the zero time of a clock
    /// near `i64::MIN` (the clock floored to the batch interval is before `i64::MIN`), or the
    /// next batch time after a batch near `i64::MAX`. Spark's `Time` is a Java `long` and would
    /// wrap around; we refuse (`docs/dstream.md`). Nothing runs, and the context stays as it
    /// was (not started, or at its last batch).
    #[error("the {what} would be {time} ms, outside the times an i64 of milliseconds can hold ({} ms to {} ms)", i64::MIN, i64::MAX)]
    TimeOutOfRange {
        /// `zero time` or `next batch time`.
        what: &'static str,
        /// The time that does not fit, in ms.
        time: i128,
    },
    /// Run: `run_batch` was called from inside an output operation of a running batch.
    #[error("a batch is running: an output operation cannot run batches")]
    BatchInProgress,
    /// Slice: the stream has no zero time yet: the context is not started, or the stream is
    /// not connected to an output operation (Spark's `SparkException: ... has not been
    /// initialized`).
    #[error("{stream} has not been initialized (start the context, and register an output operation on it or a stream built from it)")]
    NotInitialized {
        /// The stream, as `Class#id`.
        stream: String,
    },
    /// Run: the incremental `reduce_by_key_and_window` found a key with values leaving the
    /// window but neither a previous window value nor new values. This happens when the filter
    /// function removed the key from the state while its values were still in the window
    /// (Spark's `ReducedWindowedDStream` fails with the same condition).
    #[error("neither previous window has value for key, nor new values found, in the window at {time} ms (the filter function removed a key whose values were still in the window)")]
    MissingPreviousWindowValue {
        /// The batch time of the window being computed, in ms.
        time: i64,
    },
    /// Snapshot, restore: the state of a stream cannot be written or read: its records (a
    /// queue input's, an incremental window's) have no snapshot encoding
    /// ([`StreamingContext::register_snapshot_type`](crate::StreamingContext::register_snapshot_type)),
    /// or encoding them failed. Spark likewise needs serializable records to checkpoint.
    #[error("{stream} cannot be snapshotted or restored: {reason}")]
    SnapshotUnsupported {
        /// The stream, as `Class#id`.
        stream: String,
        /// What is missing or failed, naming the record type.
        reason: String,
    },
    /// Restore: bytes that are not a whole snapshot of a context (garbage, truncated, another
    /// kind), or a snapshot of another graph, naming the first difference (batch interval,
    /// number of streams, a stream's class, slide, window, ...). The context is unchanged.
    #[error("invalid snapshot: {reason}")]
    InvalidSnapshot {
        /// What is wrong, or the difference between the snapshot's graph and this one.
        reason: String,
    },
}

impl Error {
    /// Whether the error is a failure of the data of one output operation (Spark fails the job
    /// while running it, after the earlier output operations of the batch ran) rather than of
    /// generating the batch's jobs.
    pub(crate) fn is_job_failure(&self) -> bool {
        matches!(self, Error::MissingPreviousWindowValue { .. })
    }
}

fn list_ms(slides: &[i64]) -> String {
    let mut out = String::new();
    for (i, s) in slides.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{s} ms");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_durations() {
        let e = Error::WindowNotMultiple {
            stream: "WindowedDStream",
            window: 1500,
            parent_slide: 1000,
        };
        assert_eq!(
            e.to_string(),
            "the window duration of WindowedDStream (1500 ms) must be a multiple of the slide \
             duration of parent DStream (1000 ms)"
        );
        let e = Error::DifferentSlideDurations {
            slides: vec![1000, 2000],
        };
        assert_eq!(
            e.to_string(),
            "some of the DStreams have different slide durations (1000 ms, 2000 ms)"
        );
    }
}
