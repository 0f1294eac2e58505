//! The preconditions Flink enforces on window jobs, as values: every validation error of this
//! workspace that enforces one of them names it ([`FlinkRule`]), so that a user reads which Flink
//! rule their job broke, and a test can match Flink's own exception to ours by the rule rather
//! than by comparing texts.
//!
//! Each rule knows the Flink class that enforces it, the stage at which Flink rejects (when the
//! job is built, or when an element arrives), and the text of Flink's exception message
//! (Flink 2.3), whose fixed part [`FlinkRule::matches`] looks for.

use std::fmt;

/// When Flink enforces a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// When the job is built (`IllegalArgumentException` or `UnsupportedOperationException`
    /// from a constructor or builder).
    Build,
    /// When an element arrives (the job fails while running).
    Element,
}

/// A precondition of Flink's DataStream windowing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FlinkRule {
    /// Tumbling windows need `abs(offset) < size` (so a positive size).
    TumblingWindowParameters,
    /// Sliding windows need `abs(offset) < slide` and `size > 0` (so a positive slide).
    SlidingWindowParameters,
    /// Session windows need a positive gap.
    SessionGapPositive,
    /// A dynamic session gap must be positive for every element.
    DynamicSessionGapPositive,
    /// Merging assigners (sessions) need a trigger that can merge.
    MergingAssignerNeedsMergingTrigger,
    /// Allowed lateness must not be negative.
    AllowedLatenessNotNegative,
    /// A merge must not produce an event-time window already behind the watermark.
    MergeNotBehindWatermark,
    /// A merge must not produce a processing-time window already behind the clock.
    MergeNotBehindProcessingTime,
    /// Event-time windows need a timestamp on every element.
    TimestampRequired,
}

impl FlinkRule {
    /// Every rule.
    pub const ALL: [FlinkRule; 9] = [
        FlinkRule::TumblingWindowParameters,
        FlinkRule::SlidingWindowParameters,
        FlinkRule::SessionGapPositive,
        FlinkRule::DynamicSessionGapPositive,
        FlinkRule::MergingAssignerNeedsMergingTrigger,
        FlinkRule::AllowedLatenessNotNegative,
        FlinkRule::MergeNotBehindWatermark,
        FlinkRule::MergeNotBehindProcessingTime,
        FlinkRule::TimestampRequired,
    ];

    /// The rule's name (`tumbling-window-parameters`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            FlinkRule::TumblingWindowParameters => "tumbling-window-parameters",
            FlinkRule::SlidingWindowParameters => "sliding-window-parameters",
            FlinkRule::SessionGapPositive => "session-gap-positive",
            FlinkRule::DynamicSessionGapPositive => "dynamic-session-gap-positive",
            FlinkRule::MergingAssignerNeedsMergingTrigger => {
                "merging-assigner-needs-merging-trigger"
            }
            FlinkRule::AllowedLatenessNotNegative => "allowed-lateness-not-negative",
            FlinkRule::MergeNotBehindWatermark => "merge-not-behind-watermark",
            FlinkRule::MergeNotBehindProcessingTime => "merge-not-behind-processing-time",
            FlinkRule::TimestampRequired => "timestamp-required",
        }
    }

    /// The Flink class (and method) that enforces the rule.
    #[must_use]
    pub const fn enforced_by(self) -> &'static str {
        match self {
            FlinkRule::TumblingWindowParameters => {
                "TumblingEventTimeWindows / TumblingProcessingTimeWindows constructor"
            }
            FlinkRule::SlidingWindowParameters => {
                "SlidingEventTimeWindows / SlidingProcessingTimeWindows constructor"
            }
            FlinkRule::SessionGapPositive => {
                "EventTimeSessionWindows / ProcessingTimeSessionWindows constructor"
            }
            FlinkRule::DynamicSessionGapPositive => {
                "DynamicEventTimeSessionWindows / DynamicProcessingTimeSessionWindows.assignWindows"
            }
            FlinkRule::MergingAssignerNeedsMergingTrigger => "WindowOperatorBuilder.trigger",
            FlinkRule::AllowedLatenessNotNegative => "WindowedStream.allowedLateness",
            FlinkRule::MergeNotBehindWatermark | FlinkRule::MergeNotBehindProcessingTime => {
                "WindowOperator.processElement (merging window set)"
            }
            FlinkRule::TimestampRequired => {
                "TumblingEventTimeWindows.assignWindows (and the other event-time assigners)"
            }
        }
    }

    /// When Flink enforces it.
    #[must_use]
    pub const fn stage(self) -> Stage {
        match self {
            FlinkRule::DynamicSessionGapPositive
            | FlinkRule::MergeNotBehindWatermark
            | FlinkRule::MergeNotBehindProcessingTime
            | FlinkRule::TimestampRequired => Stage::Element,
            _ => Stage::Build,
        }
    }

    /// The fixed part of Flink's exception message (the part that does not name a class of one
    /// time domain or a value).
    #[must_use]
    pub const fn flink_message(self) -> &'static str {
        match self {
            FlinkRule::TumblingWindowParameters => "parameters must satisfy abs(offset) < size",
            FlinkRule::SlidingWindowParameters => {
                "parameters must satisfy abs(offset) < slide and size > 0"
            }
            FlinkRule::SessionGapPositive => "SessionWindows parameters must satisfy 0 < size",
            FlinkRule::DynamicSessionGapPositive => "Dynamic session time gap must satisfy 0 < gap",
            FlinkRule::MergingAssignerNeedsMergingTrigger => {
                "A merging window assigner cannot be used with a trigger that does not support merging."
            }
            FlinkRule::AllowedLatenessNotNegative => "The allowed lateness cannot be negative.",
            FlinkRule::MergeNotBehindWatermark => {
                "event-time window cannot become earlier than the current watermark by merging"
            }
            FlinkRule::MergeNotBehindProcessingTime => {
                "processing-time window cannot become earlier than the current processing time by merging"
            }
            FlinkRule::TimestampRequired => {
                "Record has Long.MIN_VALUE timestamp (= no timestamp marker)"
            }
        }
    }

    /// Whether Flink's exception message `message` is this rule's (the message as Flink prints
    /// it, with or without the exception class).
    ///
    /// # Examples
    /// ```
    /// use window_core::FlinkRule;
    /// let flink = "java.lang.IllegalArgumentException: TumblingEventTimeWindows parameters must satisfy abs(offset) < size";
    /// assert!(FlinkRule::TumblingWindowParameters.matches(flink));
    /// assert!(!FlinkRule::SlidingWindowParameters.matches(flink));
    /// ```
    #[must_use]
    pub fn matches(self, message: &str) -> bool {
        let fixed = self.flink_message();
        match self {
            // Both tumbling flavours share the text after the class name.
            FlinkRule::TumblingWindowParameters => {
                message.contains(fixed) && message.contains("Tumbling")
            }
            FlinkRule::SlidingWindowParameters => {
                message.contains(fixed) && message.contains("Sliding")
            }
            _ => message.contains(fixed),
        }
    }
}

impl fmt::Display for FlinkRule {
    /// `Flink's rule tumbling-window-parameters: TumblingEventTimeWindows / ... constructor,
    /// "parameters must satisfy abs(offset) < size"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Flink's rule {}: {}, \"{}\"",
            self.name(),
            self.enforced_by(),
            self.flink_message()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_matches_its_own_message_and_no_other() {
        let flink_texts = [
            "java.lang.IllegalArgumentException: TumblingEventTimeWindows parameters must satisfy abs(offset) < size",
            "java.lang.IllegalArgumentException: SlidingProcessingTimeWindows parameters must satisfy abs(offset) < slide and size > 0",
            "java.lang.IllegalArgumentException: EventTimeSessionWindows parameters must satisfy 0 < size",
            "java.lang.IllegalArgumentException: Dynamic session time gap must satisfy 0 < gap",
            "java.lang.UnsupportedOperationException: A merging window assigner cannot be used with a trigger that does not support merging.",
            "java.lang.IllegalArgumentException: The allowed lateness cannot be negative.",
            "java.lang.UnsupportedOperationException: The end timestamp of an event-time window cannot become earlier than the current watermark by merging. Current watermark: 3 window: TimeWindow{start=0, end=4}",
            "java.lang.UnsupportedOperationException: The end timestamp of a processing-time window cannot become earlier than the current processing time by merging. Current processing time: 3 window: TimeWindow{start=0, end=4}",
            "java.lang.RuntimeException: Record has Long.MIN_VALUE timestamp (= no timestamp marker). Did you forget to call 'DataStream.assignTimestampsAndWatermarks(...)'?",
        ];
        for (i, rule) in FlinkRule::ALL.iter().enumerate() {
            for (j, text) in flink_texts.iter().enumerate() {
                assert_eq!(rule.matches(text), i == j, "{rule:?} against {text}");
            }
        }
    }
}
