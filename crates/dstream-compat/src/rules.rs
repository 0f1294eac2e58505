//! The checks Spark Streaming makes on DStream programs, as values: every error of this crate
//! that makes one of them names it ([`Error::rule`]), so that a test matches Spark's own
//! exception to ours by the check rather than by its text.
//!
//! Each rule knows the fixed part of Spark 4.3's message; rules about one stream also check that
//! Spark's message names the same stream class (Spark's `WindowedDStream` says "windowed
//! DStream").

use std::fmt;

use crate::Error;

/// A check of Spark Streaming's DStream windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SparkRule {
    /// A window duration is a multiple of the parent stream's slide (`WindowedDStream`,
    /// `ReducedWindowedDStream`).
    WindowMultipleOfParentSlide,
    /// A slide duration is a multiple of the parent stream's slide.
    SlideMultipleOfParentSlide,
    /// A checkpoint interval is not below the stream's slide (`DStream.validateAtStart`).
    CheckpointNotBelowSlide,
    /// A checkpoint interval is a multiple of the stream's slide (`DStream.validateAtStart`).
    CheckpointMultipleOfSlide,
    /// A slide of 0 fails where Spark divides by it (`/ by zero`).
    SlidePositive,
    /// A stream is sliced only after it was initialized (`DStream.slice`).
    SliceAfterStart,
    /// The incremental `reduceByKeyAndWindow` finds a value for every key still in the window
    /// (`ReducedWindowedDStream`).
    KeyValueInWindow,
    /// Streams of a `union` have one slide duration (`UnionDStream`).
    UnionSameSlide,
    /// A started context has an output operation (`DStreamGraph.validate`).
    OutputRequired,
}

impl SparkRule {
    /// The fixed part of Spark's message.
    #[must_use]
    pub const fn spark_message(self) -> &'static str {
        match self {
            SparkRule::WindowMultipleOfParentSlide => "The window duration of ",
            SparkRule::SlideMultipleOfParentSlide => "The slide duration of ",
            SparkRule::CheckpointNotBelowSlide => "which is lower than its slide time",
            SparkRule::CheckpointMultipleOfSlide => "not a multiple of its slide time",
            SparkRule::SlidePositive => "/ by zero",
            SparkRule::SliceAfterStart => "has not been initialized",
            SparkRule::KeyValueInWindow => "Neither previous window has value for key",
            SparkRule::UnionSameSlide => "different slide durations",
            SparkRule::OutputRequired => "No output operations registered",
        }
    }

    /// Whether Spark's message `text` (message and root cause) is this rule's, about the stream
    /// class `stream` where the rule is about one.
    ///
    /// # Examples
    /// ```
    /// use dstream_compat::SparkRule;
    /// let spark = "The window duration of windowed DStream (3000 ms) must be a multiple of the slide duration of parent DStream (2000 ms)";
    /// assert!(SparkRule::WindowMultipleOfParentSlide.matches(spark, Some("WindowedDStream")));
    /// assert!(!SparkRule::WindowMultipleOfParentSlide.matches(spark, Some("ReducedWindowedDStream")));
    /// ```
    #[must_use]
    pub fn matches(self, text: &str, stream: Option<&str>) -> bool {
        let fixed = self.spark_message();
        if !text.contains(fixed) {
            return false;
        }
        let named_after = match self {
            SparkRule::WindowMultipleOfParentSlide | SparkRule::SlideMultipleOfParentSlide => fixed,
            SparkRule::CheckpointNotBelowSlide | SparkRule::CheckpointMultipleOfSlide => {
                "The checkpoint interval for "
            }
            _ => return true,
        };
        stream.is_some_and(|s| spark_stream(text, named_after) == s)
    }
}

impl fmt::Display for SparkRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Spark's check \"{}\"", self.spark_message())
    }
}

/// The stream class a Spark message names after `after` (`windowed DStream` is
/// `WindowedDStream`).
fn spark_stream(text: &str, after: &str) -> String {
    let rest = text.split_once(after).map_or("", |(_, r)| r).trim_start();
    let name: String = rest.chars().take_while(|c| c.is_alphanumeric()).collect();
    if name == "windowed" {
        "WindowedDStream".into()
    } else {
        name
    }
}

impl Error {
    /// The Spark check this error makes, if it is one of Spark's (negative durations, zero
    /// partitions and the states of the context are this crate's own).
    #[must_use]
    pub fn rule(&self) -> Option<SparkRule> {
        Some(match self {
            Error::WindowNotMultiple { .. } => SparkRule::WindowMultipleOfParentSlide,
            Error::SlideNotMultiple { .. } => SparkRule::SlideMultipleOfParentSlide,
            Error::CheckpointIntervalTooShort { .. } => SparkRule::CheckpointNotBelowSlide,
            Error::CheckpointIntervalNotMultiple { .. } => SparkRule::CheckpointMultipleOfSlide,
            Error::ZeroSlide { .. } => SparkRule::SlidePositive,
            Error::NotInitialized { .. } => SparkRule::SliceAfterStart,
            Error::MissingPreviousWindowValue { .. } => SparkRule::KeyValueInWindow,
            Error::DifferentSlideDurations { .. } => SparkRule::UnionSameSlide,
            Error::NoOutputOperations => SparkRule::OutputRequired,
            _ => return None,
        })
    }

    /// Spark's class of the stream the error is about, where it names one.
    #[must_use]
    pub fn stream(&self) -> Option<&str> {
        match self {
            Error::WindowNotMultiple { stream, .. }
            | Error::SlideNotMultiple { stream, .. }
            | Error::CheckpointIntervalTooShort { stream, .. }
            | Error::CheckpointIntervalNotMultiple { stream, .. }
            | Error::ZeroSlide { stream }
            | Error::NegativeDuration { stream, .. } => Some(stream),
            _ => None,
        }
    }
}
