//! The parts of a job: which windows, which trigger, which evictor; each as plain data (read
//! from the command line's grammar, or from JSON or TOML as a tagged object) and the run-time
//! value it builds.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use window_assigners::TimeDomain;
use window_core::Number;
use window_operator::{AnyEvictor, CountEvictor, DeltaEvictor, EvictMoment, TimeEvictor};
use window_triggers::{
    AnyTrigger, ContinuousEventTimeTrigger, ContinuousProcessingTimeTrigger, CountTrigger,
    DeltaFunction, DeltaTrigger,
};

use crate::fields::{evict_after, float, ms, signed_ms};
use crate::spec::{syntax, SpecError};

/// Which windows: the assigner of a job, durations in ms.
///
/// As text (`windowctl run --window`): `tumbling:SIZE[:OFFSET]`, `sliding:SIZE:SLIDE[:OFFSET]`,
/// `session:GAP`, `session:value`, `global`, `global:end-of-stream`, `count:SIZE[:SLIDE]`. As
/// an object: `{"type": "sliding", "size": 3600000, "slide": "5min", "offset": 0}` (the
/// conformance cases' `assigner`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum WindowSpec {
    /// Flink's `TumblingEventTimeWindows.of(size, offset)` (or processing time).
    Tumbling {
        /// Size in ms.
        #[serde(with = "ms")]
        size: i64,
        /// Offset in ms (may be negative).
        #[serde(default, with = "signed_ms")]
        offset: i64,
    },
    /// Flink's `SlidingEventTimeWindows.of(size, slide, offset)` (or processing time).
    Sliding {
        /// Size in ms.
        #[serde(with = "ms")]
        size: i64,
        /// Slide in ms.
        #[serde(with = "ms")]
        slide: i64,
        /// Offset in ms.
        #[serde(default, with = "signed_ms")]
        offset: i64,
    },
    /// Flink's `EventTimeSessionWindows.withGap(gap)` (or processing time).
    Session {
        /// Gap in ms.
        #[serde(with = "ms")]
        gap: i64,
    },
    /// `session:value`: the gap of each element is its value in ms (Flink's
    /// `withDynamicGap`).
    DynamicSession,
    /// `global`: Flink's `GlobalWindows.create()`; its default trigger never fires.
    Global,
    /// `global:end-of-stream`: `GlobalWindows.createWithEndOfStreamTrigger()`, fired once at
    /// the end of a bounded input.
    GlobalEndOfStream,
    /// `count:SIZE[:SLIDE]`: Flink's `countWindow(size)` (global windows + purging count
    /// trigger) or `countWindow(size, slide)` (global windows + count evictor of `size` + count
    /// trigger of `slide`).
    Count {
        /// Elements per window.
        size: u64,
        /// Elements between firings of a sliding count window.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        slide: Option<u64>,
    },
}

/// The distance function of a delta trigger or evictor over `f64` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeltaSpec {
    /// `|new - old|` (`abs` in the grammar).
    #[default]
    #[serde(alias = "abs")]
    AbsDiff,
    /// `new - old`.
    Diff,
}

impl DeltaSpec {
    /// The function `delta(old, new)`.
    #[must_use]
    pub fn function(self) -> DeltaFunction<Number> {
        match self {
            DeltaSpec::AbsDiff => {
                Arc::new(|old: &Number, new: &Number| (new.as_f64() - old.as_f64()).abs())
            }
            DeltaSpec::Diff => Arc::new(|old: &Number, new: &Number| new.as_f64() - old.as_f64()),
        }
    }
}

/// Which evictor. As text: `count:N[:after]`, `time:D[:after]`, `delta:X[:abs|diff][:after]`;
/// as an object: `{"type": "count", "count": 3, "evict_after": false}` (the cases' spelling).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum EvictorSpec {
    /// Keep the last `N` elements (Flink's `CountEvictor`).
    Count {
        /// Elements kept.
        #[serde(rename = "count")]
        max_count: usize,
        /// Before or after the window function.
        #[serde(default, rename = "evict_after", with = "evict_after")]
        moment: EvictMoment,
    },
    /// Keep elements within `size` ms of the newest (Flink's `TimeEvictor`).
    Time {
        /// Window of time kept, in ms.
        #[serde(with = "ms")]
        size: i64,
        /// Before or after the window function.
        #[serde(default, rename = "evict_after", with = "evict_after")]
        moment: EvictMoment,
    },
    /// Evict elements whose delta to the last element is `>= threshold` (Flink's
    /// `DeltaEvictor`).
    Delta {
        /// The threshold.
        #[serde(with = "float")]
        threshold: f64,
        /// The distance function.
        #[serde(default, rename = "delta_fn")]
        function: DeltaSpec,
        /// Before or after the window function.
        #[serde(default, rename = "evict_after", with = "evict_after")]
        moment: EvictMoment,
    },
}

impl EvictorSpec {
    /// The evictor.
    #[must_use]
    pub fn build(&self) -> AnyEvictor<Number> {
        match *self {
            EvictorSpec::Count { max_count, moment } => {
                AnyEvictor::Count(CountEvictor::of(max_count, moment))
            }
            EvictorSpec::Time { size, moment } => AnyEvictor::Time(TimeEvictor::of(size, moment)),
            EvictorSpec::Delta {
                threshold,
                function,
                moment,
            } => AnyEvictor::Delta(DeltaEvictor::of(threshold, function.function(), moment)),
        }
    }
}

/// Which trigger: the assigner's default or one of Flink's built-in triggers. As text:
/// `default`, `event-time`, `processing-time`, `count:N`, `purging:TRIGGER`, `never`,
/// `continuous:INTERVAL`, `delta:THRESHOLD[:abs|diff]`; as an object: `{"type": "purging",
/// "inner": {"type": "count", "count": 3}}` (the cases' spelling).
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum TriggerSpec {
    /// The assigner's default trigger.
    #[default]
    Default,
    /// Flink's `EventTimeTrigger` (also `end_of_stream`: on global windows it is the
    /// end-of-stream trigger).
    #[serde(alias = "end_of_stream")]
    EventTime,
    /// `ProcessingTimeTrigger`.
    ProcessingTime,
    /// `CountTrigger.of(count)`.
    Count {
        /// Elements per firing.
        count: u64,
    },
    /// `PurgingTrigger.of(inner)`.
    Purging {
        /// The trigger that decides when to fire.
        inner: Box<TriggerSpec>,
    },
    /// `GlobalWindows.NeverTrigger`.
    Never,
    /// `continuous:INTERVAL`: a continuous trigger in the job's time domain.
    Continuous {
        /// Interval in ms.
        #[serde(with = "ms")]
        interval: i64,
    },
    /// `ContinuousEventTimeTrigger.of(interval)`.
    ContinuousEventTime {
        /// Interval in ms.
        #[serde(with = "ms")]
        interval: i64,
    },
    /// `ContinuousProcessingTimeTrigger.of(interval)`.
    ContinuousProcessingTime {
        /// Interval in ms.
        #[serde(with = "ms")]
        interval: i64,
    },
    /// `DeltaTrigger.of(threshold, f)` over the element values.
    Delta {
        /// The threshold the delta must exceed.
        #[serde(with = "float")]
        threshold: f64,
        /// The distance function.
        #[serde(default, rename = "delta_fn")]
        function: DeltaSpec,
    },
}

impl TriggerSpec {
    /// Whether this is the default trigger of time windows in `domain`: [`TriggerSpec::Default`],
    /// or Flink's `EventTimeTrigger` / `ProcessingTimeTrigger` named for their own domain (what
    /// `SlidingEventTimeWindows` and `SlidingProcessingTimeWindows` return as their default), so
    /// that key windows and sliced windows take a job that spells the default out.
    #[must_use]
    pub fn is_default_for(&self, domain: TimeDomain) -> bool {
        matches!(
            (self, domain),
            (TriggerSpec::Default, _)
                | (TriggerSpec::EventTime, TimeDomain::EventTime)
                | (TriggerSpec::ProcessingTime, TimeDomain::ProcessingTime)
        )
    }

    /// The trigger, given the assigner's default and the job's time domain.
    ///
    /// # Errors
    /// A count of 0, a non-positive continuous interval.
    pub fn build(
        &self,
        default: AnyTrigger<Number>,
        domain: TimeDomain,
    ) -> Result<AnyTrigger<Number>, SpecError> {
        let err = |reason: String| syntax("trigger", &format!("{self:?}"), reason);
        Ok(match self {
            TriggerSpec::Default => default,
            TriggerSpec::EventTime => AnyTrigger::EventTime,
            TriggerSpec::ProcessingTime => AnyTrigger::ProcessingTime,
            TriggerSpec::Never => AnyTrigger::Never,
            TriggerSpec::Count { count } => {
                AnyTrigger::Count(CountTrigger::of(*count).map_err(err)?)
            }
            TriggerSpec::Purging { inner } => inner.build(default, domain)?.purging(),
            TriggerSpec::Continuous { interval } => {
                let typed = match domain {
                    TimeDomain::EventTime => TriggerSpec::ContinuousEventTime {
                        interval: *interval,
                    },
                    TimeDomain::ProcessingTime => TriggerSpec::ContinuousProcessingTime {
                        interval: *interval,
                    },
                };
                typed.build(default, domain)?
            }
            TriggerSpec::ContinuousEventTime { interval } => AnyTrigger::ContinuousEventTime(
                ContinuousEventTimeTrigger::of(*interval).map_err(err)?,
            ),
            TriggerSpec::ContinuousProcessingTime { interval } => {
                AnyTrigger::ContinuousProcessingTime(
                    ContinuousProcessingTimeTrigger::of(*interval).map_err(err)?,
                )
            }
            TriggerSpec::Delta {
                threshold,
                function,
            } => AnyTrigger::Delta(DeltaTrigger::of(*threshold, function.function())),
        })
    }
}
