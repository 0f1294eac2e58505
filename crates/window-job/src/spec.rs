//! What a job is, as data: windows, trigger, evictor, aggregate, time domain, lateness, late
//! data and strategy, and the text grammar of each (`tumbling:1h:-8h`, `purging:count:3` ...),
//! parsed with [`std::str::FromStr`] so that the command line and the tests share one grammar.

use std::str::FromStr;
use std::sync::Arc;

use keywindow::EmitMode;
use window_assigners::{AssignerError, TimeDomain};
use window_core::{LateDataPolicy, NumericAggregate};
use window_operator::{
    AnyEvictor, CountEvictor, DeltaEvictor, EvictMoment, OperatorError, TimeEvictor,
};
use window_triggers::{
    AnyTrigger, ContinuousEventTimeTrigger, ContinuousProcessingTimeTrigger, CountTrigger,
    DeltaFunction, DeltaTrigger,
};

use crate::duration::{parse_duration, parse_signed_duration};

/// A job configuration error: the option text and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// A window, trigger or aggregate description that does not parse.
    #[error("invalid {what} '{text}': {reason}")]
    Syntax {
        /// `window`, `trigger`, `aggregate`.
        what: &'static str,
        /// The text given.
        text: String,
        /// What is wrong, with the accepted forms.
        reason: String,
    },
    /// Parameters the assigner rejects (size, slide, offset, gap).
    #[error(transparent)]
    Assigner(#[from] AssignerError),
    /// A combination the operator rejects (session windows with a non-merging trigger ...).
    #[error(transparent)]
    Operator(#[from] OperatorError),
}

pub(crate) fn syntax(what: &'static str, text: &str, reason: impl Into<String>) -> SpecError {
    SpecError::Syntax {
        what,
        text: text.to_owned(),
        reason: reason.into(),
    }
}

/// Which windows: the assigner of a job, in ms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowSpec {
    /// `tumbling:SIZE[:OFFSET]`.
    Tumbling {
        /// Size in ms.
        size: i64,
        /// Offset in ms (may be negative).
        offset: i64,
    },
    /// `sliding:SIZE:SLIDE[:OFFSET]`.
    Sliding {
        /// Size in ms.
        size: i64,
        /// Slide in ms.
        slide: i64,
        /// Offset in ms.
        offset: i64,
    },
    /// `session:GAP`.
    Session {
        /// Gap in ms.
        gap: i64,
    },
    /// `session:value`: the gap of each element is its value in ms (Flink's dynamic gap).
    DynamicSession,
    /// `global`: one window per key, default trigger never fires.
    Global,
    /// `global:end-of-stream`: one window per key, fired once at the end of a bounded input.
    GlobalEndOfStream,
    /// `count:SIZE[:SLIDE]`: Flink's `countWindow(size)` (global windows + purging count
    /// trigger) or `countWindow(size, slide)` (global windows + count evictor of `size` + count
    /// trigger of `slide`).
    Count {
        /// Elements per window.
        size: u64,
        /// Elements between firings of a sliding count window.
        slide: Option<u64>,
    },
}

impl FromStr for WindowSpec {
    type Err = SpecError;

    /// Parses `tumbling:SIZE[:OFFSET]`, `sliding:SIZE:SLIDE[:OFFSET]`, `session:GAP`,
    /// `session:value`, `global`, `global:end-of-stream`, `count:SIZE[:SLIDE]`; durations take
    /// units (`5min`).
    fn from_str(s: &str) -> Result<Self, SpecError> {
        const FORMS: &str = "expected tumbling:SIZE[:OFFSET], sliding:SIZE:SLIDE[:OFFSET], session:GAP, session:value, global, global:end-of-stream or count:SIZE[:SLIDE]";
        let count = |p: &str| match p.parse::<u64>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(syntax(
                "window",
                s,
                format!("count '{p}' must be a whole number >= 1"),
            )),
        };
        let parts: Vec<&str> = s.split(':').collect();
        let dur = |p: &str| parse_duration(p).map_err(|e| syntax("window", s, e.to_string()));
        let signed =
            |p: &str| parse_signed_duration(p).map_err(|e| syntax("window", s, e.to_string()));
        match parts.as_slice() {
            ["tumbling", size] => Ok(WindowSpec::Tumbling {
                size: dur(size)?,
                offset: 0,
            }),
            ["tumbling", size, offset] => Ok(WindowSpec::Tumbling {
                size: dur(size)?,
                offset: signed(offset)?,
            }),
            ["sliding", size, slide] => Ok(WindowSpec::Sliding {
                size: dur(size)?,
                slide: dur(slide)?,
                offset: 0,
            }),
            ["sliding", size, slide, offset] => Ok(WindowSpec::Sliding {
                size: dur(size)?,
                slide: dur(slide)?,
                offset: signed(offset)?,
            }),
            ["session", "value"] => Ok(WindowSpec::DynamicSession),
            ["session", gap] => Ok(WindowSpec::Session { gap: dur(gap)? }),
            ["global"] => Ok(WindowSpec::Global),
            ["count", size] => Ok(WindowSpec::Count {
                size: count(size)?,
                slide: None,
            }),
            ["count", size, slide] => Ok(WindowSpec::Count {
                size: count(size)?,
                slide: Some(count(slide)?),
            }),
            ["global", "end-of-stream"] => Ok(WindowSpec::GlobalEndOfStream),
            _ => Err(syntax("window", s, FORMS)),
        }
    }
}

/// The distance function of a delta trigger over `f64` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeltaSpec {
    /// `|new - old|`.
    AbsDiff,
    /// `new - old`.
    Diff,
}

impl DeltaSpec {
    /// The function `delta(old, new)`.
    #[must_use]
    pub fn function(self) -> DeltaFunction<f64> {
        match self {
            DeltaSpec::AbsDiff => Arc::new(|old: &f64, new: &f64| (new - old).abs()),
            DeltaSpec::Diff => Arc::new(|old: &f64, new: &f64| new - old),
        }
    }
}

/// Which evictor: `count:N[:after]`, `time:D[:after]`, `delta:X[:abs|diff][:after]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EvictorSpec {
    /// Keep the last `N` elements (Flink's `CountEvictor`).
    Count {
        /// Elements kept.
        max_count: usize,
        /// Before or after the window function.
        moment: EvictMoment,
    },
    /// Keep elements within `size` ms of the newest (Flink's `TimeEvictor`).
    Time {
        /// Window of time kept, in ms.
        size: i64,
        /// Before or after the window function.
        moment: EvictMoment,
    },
    /// Evict elements whose delta to the last element is `>= threshold` (Flink's
    /// `DeltaEvictor`).
    Delta {
        /// The threshold.
        threshold: f64,
        /// The distance function.
        function: DeltaSpec,
        /// Before or after the window function.
        moment: EvictMoment,
    },
}

impl FromStr for EvictorSpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, SpecError> {
        const FORMS: &str =
            "expected count:N[:after], time:DURATION[:after] or delta:THRESHOLD[:abs|diff][:after]";
        let mut parts: Vec<&str> = s.split(':').collect();
        let moment = if parts.len() > 2 && parts.last() == Some(&"after") {
            parts.pop();
            EvictMoment::After
        } else {
            EvictMoment::Before
        };
        match parts.as_slice() {
            ["count", n] => match n.parse::<usize>() {
                Ok(max_count) => Ok(EvictorSpec::Count { max_count, moment }),
                Err(_) => Err(syntax(
                    "evictor",
                    s,
                    "count needs a whole number of elements",
                )),
            },
            ["time", d] => Ok(EvictorSpec::Time {
                size: parse_duration(d).map_err(|e| syntax("evictor", s, e.to_string()))?,
                moment,
            }),
            ["delta", x, rest @ ..] => {
                let function = match rest {
                    [] | ["abs"] => DeltaSpec::AbsDiff,
                    ["diff"] => DeltaSpec::Diff,
                    _ => return Err(syntax("evictor", s, FORMS)),
                };
                match x.parse::<f64>() {
                    Ok(threshold) if threshold.is_finite() => Ok(EvictorSpec::Delta {
                        threshold,
                        function,
                        moment,
                    }),
                    _ => Err(syntax(
                        "evictor",
                        s,
                        "delta threshold must be a finite number",
                    )),
                }
            }
            _ => Err(syntax("evictor", s, FORMS)),
        }
    }
}

impl EvictorSpec {
    /// The evictor.
    #[must_use]
    pub fn build(&self) -> AnyEvictor<f64> {
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

/// Which trigger: the assigner's default or one of the built-in triggers.
#[derive(Clone, Debug, PartialEq)]
pub enum TriggerSpec {
    /// `default`: the assigner's default trigger.
    Default,
    /// `event-time`.
    EventTime,
    /// `processing-time`.
    ProcessingTime,
    /// `count:N`.
    Count(u64),
    /// `purging:SPEC`.
    Purging(Box<TriggerSpec>),
    /// `never`.
    Never,
    /// `continuous:INTERVAL`: in the job's time domain.
    Continuous(i64),
    /// `continuous-event-time:INTERVAL`.
    ContinuousEventTime(i64),
    /// `continuous-processing-time:INTERVAL`.
    ContinuousProcessingTime(i64),
    /// `delta:THRESHOLD[:abs|diff]` over the element values.
    Delta {
        /// The threshold the delta must exceed.
        threshold: f64,
        /// The distance function.
        function: DeltaSpec,
    },
}

impl FromStr for TriggerSpec {
    type Err = SpecError;

    /// Parses `default`, `event-time`, `processing-time`, `count:N`, `purging:SPEC`, `never`,
    /// `continuous:INTERVAL`, `continuous-event-time:INTERVAL`,
    /// `continuous-processing-time:INTERVAL`, `delta:THRESHOLD[:abs|diff]`.
    fn from_str(s: &str) -> Result<Self, SpecError> {
        const FORMS: &str = "expected default, event-time, processing-time, count:N, purging:TRIGGER, never, continuous:INTERVAL, continuous-event-time:INTERVAL, continuous-processing-time:INTERVAL or delta:THRESHOLD[:abs|diff]";
        let (head, rest) = match s.split_once(':') {
            Some((h, r)) => (h, Some(r)),
            None => (s, None),
        };
        let dur = |p: &str| match parse_duration(p) {
            Ok(0) => Err(syntax("trigger", s, "the interval must be positive")),
            Ok(d) => Ok(d),
            Err(e) => Err(syntax("trigger", s, e.to_string())),
        };
        match (head, rest) {
            ("default", None) => Ok(TriggerSpec::Default),
            ("event-time", None) => Ok(TriggerSpec::EventTime),
            ("processing-time", None) => Ok(TriggerSpec::ProcessingTime),
            ("never", None) => Ok(TriggerSpec::Never),
            ("count", Some(n)) => match n.parse::<u64>() {
                Ok(n) if n > 0 => Ok(TriggerSpec::Count(n)),
                _ => Err(syntax(
                    "trigger",
                    s,
                    "count needs a whole number of elements >= 1",
                )),
            },
            ("purging", Some(inner)) => Ok(TriggerSpec::Purging(Box::new(inner.parse()?))),
            ("continuous", Some(i)) => Ok(TriggerSpec::Continuous(dur(i)?)),
            ("continuous-event-time", Some(i)) => Ok(TriggerSpec::ContinuousEventTime(dur(i)?)),
            ("continuous-processing-time", Some(i)) => {
                Ok(TriggerSpec::ContinuousProcessingTime(dur(i)?))
            }
            ("delta", Some(rest)) => {
                let (t, f) = match rest.split_once(':') {
                    Some((t, "abs")) => (t, DeltaSpec::AbsDiff),
                    Some((t, "diff")) => (t, DeltaSpec::Diff),
                    Some(_) => {
                        return Err(syntax("trigger", s, "delta function must be abs or diff"))
                    }
                    None => (rest, DeltaSpec::AbsDiff),
                };
                match t.parse::<f64>() {
                    Ok(threshold) if threshold.is_finite() => Ok(TriggerSpec::Delta {
                        threshold,
                        function: f,
                    }),
                    _ => Err(syntax(
                        "trigger",
                        s,
                        "delta threshold must be a finite number",
                    )),
                }
            }
            _ => Err(syntax("trigger", s, FORMS)),
        }
    }
}

impl TriggerSpec {
    /// The trigger, given the assigner's default and the job's time domain.
    ///
    /// # Errors
    /// A non-positive continuous interval.
    pub fn build(
        &self,
        default: AnyTrigger<f64>,
        domain: TimeDomain,
    ) -> Result<AnyTrigger<f64>, SpecError> {
        let err = |reason: String| syntax("trigger", &format!("{self:?}"), reason);
        Ok(match self {
            TriggerSpec::Default => default,
            TriggerSpec::EventTime => AnyTrigger::EventTime,
            TriggerSpec::ProcessingTime => AnyTrigger::ProcessingTime,
            TriggerSpec::Never => AnyTrigger::Never,
            TriggerSpec::Count(n) => AnyTrigger::Count(CountTrigger::of(*n).map_err(err)?),
            TriggerSpec::Purging(inner) => inner.build(default, domain)?.purging(),
            TriggerSpec::Continuous(i) => match domain {
                TimeDomain::EventTime => {
                    TriggerSpec::ContinuousEventTime(*i).build(default, domain)?
                }
                TimeDomain::ProcessingTime => {
                    TriggerSpec::ContinuousProcessingTime(*i).build(default, domain)?
                }
            },
            TriggerSpec::ContinuousEventTime(i) => {
                AnyTrigger::ContinuousEventTime(ContinuousEventTimeTrigger::of(*i).map_err(err)?)
            }
            TriggerSpec::ContinuousProcessingTime(i) => AnyTrigger::ContinuousProcessingTime(
                ContinuousProcessingTimeTrigger::of(*i).map_err(err)?,
            ),
            TriggerSpec::Delta {
                threshold,
                function,
            } => AnyTrigger::Delta(DeltaTrigger::of(*threshold, function.function())),
        })
    }
}

/// What a window computes: a numeric aggregate (incremental) or its contents (kept in full).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobAggregate {
    /// `count`, `sum`, `min`, `max`, `mean`: incremental, one accumulator per window.
    Numeric(NumericAggregate),
    /// `list`: the values in the window's order (arrival order).
    List,
    /// `elements`: `(timestamp, value)` pairs in the window's order.
    Elements,
}

impl FromStr for JobAggregate {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, SpecError> {
        Ok(match s {
            "count" => JobAggregate::Numeric(NumericAggregate::Count),
            "sum" => JobAggregate::Numeric(NumericAggregate::Sum),
            "min" => JobAggregate::Numeric(NumericAggregate::Min),
            "max" => JobAggregate::Numeric(NumericAggregate::Max),
            "mean" | "avg" => JobAggregate::Numeric(NumericAggregate::Mean),
            "list" => JobAggregate::List,
            "elements" => JobAggregate::Elements,
            _ => {
                return Err(syntax(
                    "aggregate",
                    s,
                    "expected count, sum, min, max, mean, list or elements",
                ))
            }
        })
    }
}

/// A complete job description.
#[derive(Clone, Debug)]
pub struct JobSpec {
    /// The windows.
    pub window: WindowSpec,
    /// The trigger.
    pub trigger: TriggerSpec,
    /// Event time or processing time.
    pub time: TimeDomain,
    /// Allowed lateness in ms.
    pub allowed_lateness: i64,
    /// Whether late elements go to the side output.
    pub late_data: LateDataPolicy,
    /// What each window computes.
    pub aggregate: JobAggregate,
    /// An evictor; with one, windows keep their elements (no pre-aggregation).
    pub evictor: Option<EvictorSpec>,
    /// How sliding windows are computed.
    pub strategy: Strategy,
    /// Flink's `windowAll`: every element under one key (the default key, empty for text).
    pub window_all: bool,
    /// Refuse elements that would bring the native operator over this many window states
    /// (see `WindowOperator::set_max_window_states`); `None` for no limit.
    pub max_window_states: Option<usize>,
}

impl JobSpec {
    /// A job computing `aggregate` over `window` with everything else at its default: the
    /// assigner's trigger, event time, no lateness, late elements dropped, no evictor, the native
    /// operator, keyed, no limit on window states.
    #[must_use]
    pub fn new(window: WindowSpec, aggregate: JobAggregate) -> Self {
        Self {
            window,
            trigger: TriggerSpec::Default,
            time: TimeDomain::EventTime,
            allowed_lateness: 0,
            late_data: LateDataPolicy::Drop,
            aggregate,
            evictor: None,
            strategy: Strategy::Native,
            window_all: false,
            max_window_states: None,
        }
    }
}

/// How sliding windows are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Strategy {
    /// Flink's operator: every window of every element is materialised.
    #[default]
    Native,
    /// Key windows (`docs/keywindow.md`): two windows per element, output on change, an empty
    /// result when a key's window becomes empty. Sliding windows with numeric aggregates and
    /// the default trigger only.
    KeyWindow,
    /// Sliced windows: per key, partial aggregates of non-empty slices in a two-stacks
    /// aggregator; every non-empty window ([`EmitMode::AllWindows`], the native output) or only
    /// changes ([`EmitMode::Changes`], the key-window output). Same restrictions as key windows.
    Sliced(EmitMode),
}

impl Strategy {
    /// Every strategy, in the order tables list them.
    pub const ALL: [Strategy; 4] = [
        Strategy::Native,
        Strategy::KeyWindow,
        Strategy::Sliced(EmitMode::AllWindows),
        Strategy::Sliced(EmitMode::Changes),
    ];

    /// The strategy as `--strategy` spells it: `native`, `keywindow`, `sliced` or
    /// `sliced:changes` (the inverse of [`FromStr`]).
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Strategy::Sliced(EmitMode::Changes) => "sliced:changes",
            other => other.name(),
        }
    }

    /// The strategy's name on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Native => "native",
            Strategy::KeyWindow => "keywindow",
            Strategy::Sliced(_) => "sliced",
        }
    }

    /// The key-window or sliced strategy, `None` for the native operator.
    #[must_use]
    pub fn ordered(self) -> Option<OrderedKind> {
        match self {
            Strategy::Native => None,
            Strategy::KeyWindow => Some(OrderedKind::KeyWindows),
            Strategy::Sliced(emit) => Some(OrderedKind::Sliced(emit)),
        }
    }

    /// Whether results carry the `empty` flag (key windows, and sliced windows emitting changes).
    #[must_use]
    pub fn emits_empty_results(self) -> bool {
        matches!(
            self,
            Strategy::KeyWindow | Strategy::Sliced(EmitMode::Changes)
        )
    }
}

impl FromStr for Strategy {
    type Err = SpecError;

    /// `native`, `keywindow`, `sliced` (every window) or `sliced:changes`.
    fn from_str(s: &str) -> Result<Self, SpecError> {
        match s {
            "native" => Ok(Strategy::Native),
            "keywindow" => Ok(Strategy::KeyWindow),
            "sliced" | "sliced:all" => Ok(Strategy::Sliced(EmitMode::AllWindows)),
            "sliced:changes" => Ok(Strategy::Sliced(EmitMode::Changes)),
            _ => Err(syntax(
                "strategy",
                s,
                "expected native, keywindow, sliced or sliced:changes",
            )),
        }
    }
}

/// The sliding-window strategies that take elements in time order (behind a reordering buffer
/// in event time): key windows, and sliced windows with what they emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderedKind {
    /// Key windows (`keywindow::KeyWindows`).
    KeyWindows,
    /// Sliced windows (`keywindow::SlicedWindows`).
    Sliced(EmitMode),
}
