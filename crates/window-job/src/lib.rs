//! A window job configured at run time: the bridge between `windowctl`'s options (or a test
//! case) and the statically typed [`WindowOperator`].
//!
//! Elements are `(key: String, value: f64, timestamp)`. A [`JobSpec`] names the window
//! ([`WindowSpec`]), the trigger ([`TriggerSpec`]), the time domain, the allowed lateness, the
//! late-data policy and the aggregate ([`JobAggregate`]); [`JobOperator::new`] validates it and
//! builds one operator whose window type (time window or global window) is chosen at run time.
//! Results reach a [`JobSink`] with the window bounds already unpacked.
//!
//! The textual forms (`tumbling:1h:-8h`, `purging:count:3` ...) are parsed here with
//! [`std::str::FromStr`], so the command line and the tests share one grammar.

#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use keywindow::{
    EmitMode, EventTime, InOrderWindows, KeyWindowError, KeyWindowMetrics, KeyWindowOutput,
    KeyWindowResult, KeyWindows, SlicedWindows, SlidingGeometry,
};
use window_assigners::{
    AssignerError, GlobalWindows, Merges, SessionWindows, SlidingWindows, TimeDomain,
    TumblingWindows, WindowAssigner,
};
use window_core::{
    AggregateFunction, GlobalWindow, NumericAcc, NumericAggregate, NumericStats, TimeWindow,
    Timestamp, TimestampedValue, Window,
};
use window_triggers::{
    AnyTrigger, ContinuousEventTimeTrigger, ContinuousProcessingTimeTrigger, CountTrigger,
    DeltaFunction, DeltaTrigger,
};

pub mod duration;

use crate::duration::{parse_duration, parse_signed_duration};
use window_operator::{
    AnyEvictor, CountEvictor, DeltaEvictor, EvictMoment, Evictor, FireContext, LateDataPolicy,
    OperatorConfig, OperatorError, OperatorMetrics, TimeEvictor, WindowFunction, WindowOperator,
    WindowOutput,
};

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

fn syntax(what: &'static str, text: &str, reason: impl Into<String>) -> SpecError {
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

/// A window's result in a job.
#[derive(Clone, Debug, PartialEq)]
pub enum JobResult {
    /// Key windows only: the key's window became empty (its last element left).
    Empty,
    /// A numeric aggregate; `None` where it is undefined (min of no elements).
    Number(Option<f64>),
    /// The values.
    List(Vec<f64>),
    /// `(timestamp, value)` pairs.
    Elements(Vec<(Timestamp, f64)>),
}

impl fmt::Display for JobResult {
    /// Numbers as `windowctl` prints them (integral values without `.0`, empty for `None`);
    /// lists as `[a;b;c]`, elements as `[t@v;...]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use window_io::format_number as n;
        match self {
            JobResult::Number(None) | JobResult::Empty => Ok(()),
            JobResult::Number(Some(v)) => f.write_str(&n(*v)),
            JobResult::List(vs) => f.write_str(&window_io::format_list(vs)),
            JobResult::Elements(es) => {
                let items: Vec<String> = es.iter().map(|(t, v)| format!("{t}@{}", n(*v))).collect();
                write!(f, "[{}]", items.join(";"))
            }
        }
    }
}

/// The window state of a job: an accumulator, or the elements.
#[derive(Clone, Debug)]
pub enum JobAcc {
    /// The running aggregate of the values so far (what the job's numeric aggregate needs).
    Numeric(NumericAcc),
    /// The elements in arrival order.
    Elements(Vec<TimestampedValue<f64>>),
}

/// The [`WindowFunction`] of a job: incremental for numeric aggregates, full contents for
/// `list` and `elements` or when an evictor is set (as Flink, which buffers the elements of an
/// evicting window and aggregates them when it fires).
#[derive(Clone, Debug)]
pub struct JobFunction {
    aggregate: JobAggregate,
    evictor: Option<AnyEvictor<f64>>,
}

impl JobFunction {
    /// The function computing `aggregate`, with an optional evictor.
    #[must_use]
    pub fn new(aggregate: JobAggregate, evictor: Option<AnyEvictor<f64>>) -> Self {
        Self { aggregate, evictor }
    }
}

impl WindowFunction<f64> for JobFunction {
    type Acc = JobAcc;
    type Out = JobResult;

    fn create(&self) -> JobAcc {
        match self.aggregate {
            JobAggregate::Numeric(_) if self.evictor.is_none() => {
                JobAcc::Numeric(NumericAcc::default())
            }
            _ => JobAcc::Elements(Vec::new()),
        }
    }

    fn add(&self, acc: &mut JobAcc, value: &f64, timestamp: Timestamp) {
        match acc {
            JobAcc::Numeric(acc) => {
                if let JobAggregate::Numeric(a) = self.aggregate {
                    a.add(acc, value);
                }
            }
            JobAcc::Elements(v) => v.push(TimestampedValue {
                timestamp,
                value: *value,
            }),
        }
    }

    fn merge(&self, acc: &mut JobAcc, other: JobAcc) {
        match (acc, other) {
            (JobAcc::Numeric(acc), JobAcc::Numeric(other)) => {
                if let JobAggregate::Numeric(a) = self.aggregate {
                    a.merge(acc, other);
                }
            }
            (JobAcc::Elements(a), JobAcc::Elements(mut b)) => a.append(&mut b),
            _ => unreachable!("one job keeps one kind of window state"),
        }
    }

    fn fire(&self, acc: &mut JobAcc, ctx: &FireContext) -> JobResult {
        if let (Some(evictor), JobAcc::Elements(elements)) = (&self.evictor, &mut *acc) {
            evictor.evict(elements, EvictMoment::Before, ctx);
            let result = self.result(acc);
            if let JobAcc::Elements(elements) = acc {
                evictor.evict(elements, EvictMoment::After, ctx);
            }
            return result;
        }
        self.result(acc)
    }

    fn is_empty(&self, acc: &JobAcc) -> bool {
        matches!(acc, JobAcc::Elements(v) if v.is_empty())
    }
}

impl JobFunction {
    fn result(&self, acc: &JobAcc) -> JobResult {
        match (self.aggregate, acc) {
            (JobAggregate::Numeric(a), JobAcc::Numeric(acc)) => {
                JobResult::Number(a.get_result(acc))
            }
            (JobAggregate::Numeric(a), JobAcc::Elements(v)) => {
                let mut s = NumericStats::default();
                v.iter().for_each(|e| s.add(e.value));
                JobResult::Number(a.of(&s))
            }
            (JobAggregate::List, JobAcc::Elements(v)) => {
                JobResult::List(v.iter().map(|e| e.value).collect())
            }
            (JobAggregate::Elements, JobAcc::Elements(v)) => {
                JobResult::Elements(v.iter().map(|e| (e.timestamp, e.value)).collect())
            }
            _ => unreachable!("list and elements keep elements"),
        }
    }
}

/// The dynamic session gap of an element: its value in ms when that is a whole number that fits
/// an `i64`, else 0 (which the assigner rejects for that element, naming the element).
fn gap_of_value(v: &f64) -> i64 {
    if v.fract() == 0.0 && v.abs() < 9.2e18 {
        *v as i64
    } else {
        0
    }
}

/// The time-window assigners of a job behind one type.
#[derive(Clone, Debug)]
pub enum TimeWindowAssigner {
    /// Tumbling windows.
    Tumbling(TumblingWindows),
    /// Sliding windows.
    Sliding(SlidingWindows),
    /// Session windows (static or dynamic gap).
    Session(SessionWindows<f64>),
}

macro_rules! each_assigner {
    ($self:expr, |$a:ident| $e:expr) => {
        match $self {
            TimeWindowAssigner::Tumbling($a) => $e,
            TimeWindowAssigner::Sliding($a) => $e,
            TimeWindowAssigner::Session($a) => $e,
        }
    };
}

impl WindowAssigner<f64> for TimeWindowAssigner {
    type Window = TimeWindow;

    fn assign_windows(
        &self,
        element: &f64,
        timestamp: Timestamp,
        processing_time: Timestamp,
        out: &mut Vec<TimeWindow>,
    ) -> window_assigners::Result<()> {
        each_assigner!(self, |a| a.assign_windows(
            element,
            timestamp,
            processing_time,
            out
        ))
    }

    fn default_trigger(&self) -> AnyTrigger<f64> {
        each_assigner!(self, |a| WindowAssigner::<f64>::default_trigger(a))
    }

    fn is_event_time(&self) -> bool {
        each_assigner!(self, |a| WindowAssigner::<f64>::is_event_time(a))
    }

    fn is_merging(&self) -> bool {
        each_assigner!(self, |a| WindowAssigner::<f64>::is_merging(a))
    }

    fn merge_windows(&self, windows: &mut [TimeWindow], out: &mut Merges<TimeWindow>) {
        each_assigner!(self, |a| WindowAssigner::<f64>::merge_windows(
            a, windows, out
        ));
    }

    fn describe(&self) -> String {
        each_assigner!(self, |a| WindowAssigner::<f64>::describe(a))
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
}

/// Receives a job's output with window bounds unpacked.
pub trait JobSink {
    /// A window fired: `window` is `[start, end)` or `None` for the global window; `watermark`
    /// is the operator's watermark at emission.
    fn result(
        &mut self,
        key: &str,
        window: Option<(Timestamp, Timestamp)>,
        result: JobResult,
        watermark: Timestamp,
    );
    /// A late element (only with the late side output).
    fn late(&mut self, key: String, timestamp: Timestamp, value: f64, watermark: Timestamp);
}

struct SinkAdapter<'a, S: ?Sized>(&'a mut S);

impl<W: Window, S: JobSink + ?Sized> WindowOutput<String, W, f64, JobResult>
    for SinkAdapter<'_, S>
{
    fn result(&mut self, key: &String, window: &W, result: JobResult, watermark: Timestamp) {
        self.0.result(key, window.bounds(), result, watermark);
    }

    fn late(&mut self, key: String, timestamp: Timestamp, value: f64, watermark: Timestamp) {
        self.0.late(key, timestamp, value, watermark);
    }
}

type TimeOp = WindowOperator<String, f64, TimeWindowAssigner, AnyTrigger<f64>, JobFunction>;
type GlobalOp = WindowOperator<String, f64, GlobalWindows, AnyTrigger<f64>, JobFunction>;

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
    /// The strategy's name on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Native => "native",
            Strategy::KeyWindow => "keywindow",
            Strategy::Sliced(_) => "sliced",
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

/// Key windows and sliced windows track windows up to two sizes after an element: refuse
/// elements whose windows would not fit in `i64` (and `i64::MIN`, Flink's "no timestamp").
fn check_ordered_timestamp(g: SlidingGeometry, t: Timestamp) -> Result<(), OperatorError> {
    if t == Timestamp::MIN {
        return Err(AssignerError::MissingTimestamp.into());
    }
    // One window (size + slide) from either end: windows there would start before i64::MIN or
    // end after i64::MAX, which key windows and sliced windows cannot represent as Flink would.
    let margin = g.size().saturating_add(g.slide());
    if t > Timestamp::MAX - margin || t < Timestamp::MIN + margin {
        return Err(AssignerError::TimestampOutOfRange {
            timestamp: t,
            size: g.size(),
        }
        .into());
    }
    Ok(())
}

/// The in-order sliding-window processors behind one type.
#[derive(Debug)]
pub enum Ordered {
    /// Key windows.
    Key(KeyWindows<String, f64, NumericAggregate>),
    /// Sliced windows.
    Sliced(SlicedWindows<String, f64, NumericAggregate>),
}

impl Ordered {
    /// The window geometry.
    #[must_use]
    pub fn geometry(&self) -> SlidingGeometry {
        match self {
            Ordered::Key(k) => k.geometry(),
            Ordered::Sliced(s) => s.geometry(),
        }
    }
}

impl InOrderWindows<String, f64> for Ordered {
    type Out = Option<f64>;

    fn process<O: KeyWindowOutput<String, Option<f64>>>(
        &mut self,
        key: String,
        value: f64,
        time: Timestamp,
        out: &mut O,
    ) -> Result<(), KeyWindowError> {
        match self {
            Ordered::Key(k) => k.process(key, value, time, out),
            Ordered::Sliced(s) => s.process(key, value, time, out),
        }
    }

    fn advance_time<O: KeyWindowOutput<String, Option<f64>>>(
        &mut self,
        time: Timestamp,
        out: &mut O,
    ) {
        match self {
            Ordered::Key(k) => k.advance_time(time, out),
            Ordered::Sliced(s) => s.advance_time(time, out),
        }
    }

    fn metrics(&self) -> KeyWindowMetrics {
        match self {
            Ordered::Key(k) => k.metrics(),
            Ordered::Sliced(s) => s.metrics(),
        }
    }

    fn live_windows(&self) -> usize {
        match self {
            Ordered::Key(k) => k.live_windows(),
            Ordered::Sliced(s) => s.live_slices(),
        }
    }

    fn current_time(&self) -> Timestamp {
        match self {
            Ordered::Key(k) => k.current_time(),
            Ordered::Sliced(s) => s.current_time(),
        }
    }
}

/// The native window operator over time windows or the global window.
#[derive(Debug)]
pub enum NativeOperator {
    /// Tumbling, sliding or session windows.
    Time(Box<TimeOp>),
    /// Global windows.
    Global(Box<GlobalOp>),
}

/// A job's operator: the native one, or key windows for sliding windows.
#[derive(Debug)]
pub enum JobOperator {
    /// Flink's window operator.
    Native(NativeOperator),
    /// Key windows or sliced windows in event time, and where their late elements go.
    OrderedEventTime(Box<EventTime<Ordered, String, f64>>, LateDataPolicy),
    /// Key windows or sliced windows in processing time, with the wall clock's last reading.
    OrderedProcessingTime(Box<Ordered>, Timestamp),
}

macro_rules! each_native {
    ($op:expr, |$o:ident| $e:expr) => {
        match $op {
            NativeOperator::Time($o) => $e,
            NativeOperator::Global($o) => $e,
        }
    };
}

struct KeyWindowAdapter<'a, S: ?Sized>(&'a mut S);

impl<S: JobSink + ?Sized> KeyWindowOutput<String, Option<f64>> for KeyWindowAdapter<'_, S> {
    fn result(&mut self, key: &String, window: TimeWindow, result: KeyWindowResult<Option<f64>>) {
        let r = match result {
            KeyWindowResult::Value(v) => JobResult::Number(v),
            KeyWindowResult::Empty => JobResult::Empty,
        };
        // Key windows fire when time passes their end; the watermark is not tracked per result.
        self.0
            .result(key, window.bounds(), r, window.max_timestamp());
    }
}

impl JobOperator {
    /// Builds the operator of `spec`.
    ///
    /// # Errors
    /// Invalid window parameters, trigger parameters, negative lateness, a trigger that
    /// cannot merge on session windows, or a key-window job that is not a plain sliding window.
    pub fn new(spec: &JobSpec) -> Result<Self, SpecError> {
        if spec.strategy != Strategy::Native {
            return Self::ordered(spec);
        }
        let config = OperatorConfig {
            allowed_lateness: spec.allowed_lateness,
            late_data: spec.late_data,
        };
        let evictor = spec.evictor.map(|e| e.build());
        let domain = spec.time;
        let time_assigner = match spec.window {
            WindowSpec::Tumbling { size, offset } => {
                TimeWindowAssigner::Tumbling(TumblingWindows::new(size, offset, domain)?)
            }
            WindowSpec::Sliding {
                size,
                slide,
                offset,
            } => TimeWindowAssigner::Sliding(SlidingWindows::new(size, slide, offset, domain)?),
            WindowSpec::Session { gap } => {
                TimeWindowAssigner::Session(SessionWindows::with_gap(gap, domain)?)
            }
            WindowSpec::DynamicSession => TimeWindowAssigner::Session(
                SessionWindows::with_dynamic_gap(Arc::new(gap_of_value), domain),
            ),
            WindowSpec::Global | WindowSpec::GlobalEndOfStream | WindowSpec::Count { .. } => {
                let assigner = if spec.window == WindowSpec::GlobalEndOfStream {
                    GlobalWindows::with_end_of_stream_trigger()
                } else {
                    GlobalWindows::create()
                };
                let (default, evictor) =
                    match spec.window {
                        // Flink's KeyedStream.countWindow(size): a purging count trigger.
                        WindowSpec::Count { size, slide: None } => (
                            AnyTrigger::Count(
                                CountTrigger::of(size)
                                    .map_err(|e| syntax("window", &format!("count:{size}"), e))?,
                            )
                            .purging(),
                            evictor,
                        ),
                        // countWindow(size, slide): count evictor of size, count trigger of slide.
                        WindowSpec::Count {
                            size,
                            slide: Some(slide),
                        } => (
                            AnyTrigger::Count(CountTrigger::of(slide).map_err(|e| {
                                syntax("window", &format!("count:{size}:{slide}"), e)
                            })?),
                            evictor.or(Some(AnyEvictor::Count(CountEvictor::of(
                                usize::try_from(size).unwrap_or(usize::MAX),
                                EvictMoment::Before,
                            )))),
                        ),
                        _ => (WindowAssigner::<f64>::default_trigger(&assigner), evictor),
                    };
                let trigger = spec.trigger.build(default, domain)?;
                let function = JobFunction::new(spec.aggregate, evictor);
                return Ok(JobOperator::Native(NativeOperator::Global(Box::new(
                    WindowOperator::new(assigner, trigger, function, config)?,
                ))));
            }
        };
        let function = JobFunction::new(spec.aggregate, evictor);
        let trigger = spec
            .trigger
            .build(time_assigner.default_trigger(), domain)?;
        Ok(JobOperator::Native(NativeOperator::Time(Box::new(
            WindowOperator::new(time_assigner, trigger, function, config)?,
        ))))
    }

    /// Key windows or sliced windows for a sliding-window job.
    fn ordered(spec: &JobSpec) -> Result<Self, SpecError> {
        let what = "strategy";
        let WindowSpec::Sliding {
            size,
            slide,
            offset,
        } = spec.window
        else {
            return Err(syntax(
                what,
                spec.strategy.name(),
                "key windows and sliced windows apply to sliding windows only",
            ));
        };
        if spec.trigger != TriggerSpec::Default || spec.evictor.is_some() {
            return Err(syntax(
                what,
                spec.strategy.name(),
                "key windows and sliced windows fire at the window end: no other trigger, no evictor",
            ));
        }
        let JobAggregate::Numeric(aggregate) = spec.aggregate else {
            return Err(syntax(
                what,
                spec.strategy.name(),
                "key windows and sliced windows keep accumulators, not elements: use count, sum, min, max or mean",
            ));
        };
        if spec.allowed_lateness < 0 {
            return Err(OperatorError::NegativeLateness(spec.allowed_lateness).into());
        }
        // Not SlidingWindows::new: its cap on windows per element does not apply to what key
        // windows and sliced windows hold (at most two windows per element, or none)...
        let geometry = SlidingGeometry::new(size, slide, offset)
            .map_err(|e| syntax(what, spec.strategy.name(), e.to_string()))?;
        // ... but sliced windows emitting every window still write size / slide results per
        // element: the same cap as the native operator's, before the output runs away.
        let per_element = window_assigners::windows_per_element(size, slide);
        if spec.strategy == Strategy::Sliced(EmitMode::AllWindows)
            && per_element > window_assigners::MAX_WINDOWS_PER_ELEMENT
        {
            return Err(syntax(
                what,
                "sliced",
                format!(
                    "sliding windows of {size} ms every {slide} ms emit {per_element} results for \
                     each element; at most {} are allowed: use --emit changes (results only \
                     where they change) or a larger slide",
                    window_assigners::MAX_WINDOWS_PER_ELEMENT
                ),
            ));
        }
        // Windows must fit the time range with room for a few of them at each end.
        if size.checked_add(slide).is_none_or(|w| w > i64::MAX / 8) {
            return Err(syntax(
                what,
                spec.strategy.name(),
                format!(
                    "sliding windows of {size} ms every {slide} ms do not fit the time range: \
                     size + slide must be below {} ms",
                    i64::MAX / 8
                ),
            ));
        }
        let ordered = match spec.strategy {
            Strategy::Sliced(emit) => {
                Ordered::Sliced(SlicedWindows::new(geometry, aggregate, emit))
            }
            _ => Ordered::Key(KeyWindows::new(geometry, aggregate)),
        };
        Ok(match spec.time {
            TimeDomain::EventTime => JobOperator::OrderedEventTime(
                Box::new(EventTime::wrap(ordered, spec.allowed_lateness)),
                spec.late_data,
            ),
            TimeDomain::ProcessingTime => {
                JobOperator::OrderedProcessingTime(Box::new(ordered), Timestamp::MIN)
            }
        })
    }

    /// Processes one element.
    ///
    /// # Errors
    /// See [`WindowOperator::process_element`].
    pub fn process_element<S: JobSink + ?Sized>(
        &mut self,
        key: String,
        value: f64,
        timestamp: Timestamp,
        sink: &mut S,
    ) -> Result<(), OperatorError> {
        match self {
            JobOperator::Native(op) => each_native!(op, |o| o.process_element(
                key,
                value,
                timestamp,
                &mut SinkAdapter(sink)
            )),
            JobOperator::OrderedEventTime(kw, late_data) => {
                check_ordered_timestamp(kw.inner().geometry(), timestamp)?;
                if let Some(late) = kw.process_element(key, value, timestamp) {
                    if *late_data == LateDataPolicy::SideOutput {
                        sink.late(late.key, late.timestamp, late.value, late.watermark);
                    }
                }
                Ok(())
            }
            JobOperator::OrderedProcessingTime(kw, clock) => {
                check_ordered_timestamp(kw.geometry(), *clock)?;
                kw.process(key, value, *clock, &mut KeyWindowAdapter(sink))
                    .expect("the clock reading never goes back");
                Ok(())
            }
        }
    }

    /// Advances the watermark; returns whether it moved.
    pub fn process_watermark<S: JobSink + ?Sized>(
        &mut self,
        watermark: Timestamp,
        sink: &mut S,
    ) -> bool {
        match self {
            JobOperator::Native(op) => {
                each_native!(op, |o| o
                    .process_watermark(watermark, &mut SinkAdapter(sink)))
            }
            JobOperator::OrderedEventTime(kw, _) => {
                let moved = watermark > kw.current_watermark();
                kw.process_watermark(watermark, &mut KeyWindowAdapter(sink));
                moved
            }
            JobOperator::OrderedProcessingTime(..) => false,
        }
    }

    /// Advances processing time to the wall-clock reading `now` (ms). As Flink's system time
    /// service (which runs a timer at `t` once the clock has passed `t`), a window fires once
    /// the clock is past its end, for every strategy: elements that arrive during a window's
    /// last millisecond still join it.
    pub fn advance_processing_time<S: JobSink + ?Sized>(&mut self, now: Timestamp, sink: &mut S) {
        match self {
            JobOperator::Native(op) => {
                each_native!(op, |o| o.advance_wall_clock(now, &mut SinkAdapter(sink)));
            }
            JobOperator::OrderedEventTime(..) => {}
            JobOperator::OrderedProcessingTime(kw, clock) => {
                *clock = (*clock).max(now);
                kw.advance_time(clock.saturating_sub(1), &mut KeyWindowAdapter(sink));
            }
        }
    }

    /// The operator's counters (for key windows: elements, key windows created as windows
    /// created, results emitted as windows fired, late elements).
    #[must_use]
    pub fn metrics(&self) -> OperatorMetrics {
        match self {
            JobOperator::Native(op) => each_native!(op, |o| o.metrics()),
            JobOperator::OrderedEventTime(kw, late_data) => {
                let m = kw.metrics();
                OperatorMetrics {
                    elements: m.elements,
                    windows_created: m.key_windows_created,
                    windows_fired: m.results_emitted,
                    late_elements: kw.late_elements(),
                    late_side_output: if *late_data == LateDataPolicy::SideOutput {
                        kw.late_elements()
                    } else {
                        0
                    },
                    elements_in_no_window: m.in_no_window,
                }
            }
            JobOperator::OrderedProcessingTime(kw, _) => {
                let m = kw.metrics();
                OperatorMetrics {
                    elements: m.elements,
                    windows_created: m.key_windows_created,
                    windows_fired: m.results_emitted,
                    elements_in_no_window: m.in_no_window,
                    ..OperatorMetrics::default()
                }
            }
        }
    }

    /// Limits the native operator's window states (see
    /// [`WindowOperator::set_max_window_states`]); key windows and slices need no limit.
    pub fn set_max_window_states(&mut self, limit: Option<usize>) {
        if let JobOperator::Native(op) = self {
            each_native!(op, |o| o.set_max_window_states(limit));
        }
    }

    /// The key-window counters, for a key-window job.
    #[must_use]
    pub fn key_window_metrics(&self) -> Option<KeyWindowMetrics> {
        match self {
            JobOperator::Native(_) => None,
            JobOperator::OrderedEventTime(kw, _) => Some(kw.metrics()),
            JobOperator::OrderedProcessingTime(kw, _) => Some(kw.metrics()),
        }
    }

    /// The earliest pending processing-time timer.
    #[must_use]
    pub fn next_processing_time_timer(&self) -> Option<Timestamp> {
        match self {
            JobOperator::Native(op) => each_native!(op, |o| o.next_processing_time_timer()),
            _ => None,
        }
    }

    /// Window states currently held.
    #[must_use]
    pub fn live_windows(&self) -> usize {
        match self {
            JobOperator::Native(op) => each_native!(op, |o| o.live_windows()),
            JobOperator::OrderedEventTime(kw, _) => kw.live_windows(),
            JobOperator::OrderedProcessingTime(kw, _) => kw.live_windows(),
        }
    }

    /// Max timestamp of a window given by its bounds (`i64::MAX` for the global window).
    #[must_use]
    pub fn max_timestamp(window: Option<(Timestamp, Timestamp)>) -> Timestamp {
        window.map_or(GlobalWindow.max_timestamp(), |(s, e)| {
            TimeWindow::new(s, e).max_timestamp()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_specs_parse_with_units_and_reject_garbage() {
        assert_eq!(
            "sliding:1h:5min".parse::<WindowSpec>().unwrap(),
            WindowSpec::Sliding {
                size: 3_600_000,
                slide: 300_000,
                offset: 0
            }
        );
        assert_eq!(
            "tumbling:1d:-8h".parse::<WindowSpec>().unwrap(),
            WindowSpec::Tumbling {
                size: 86_400_000,
                offset: -28_800_000
            }
        );
        assert_eq!(
            "session:value".parse::<WindowSpec>().unwrap(),
            WindowSpec::DynamicSession
        );
        let e = "hopping:1h".parse::<WindowSpec>().unwrap_err().to_string();
        assert!(e.contains("'hopping:1h'"), "{e}");
        assert!("tumbling:1x".parse::<WindowSpec>().is_err());
    }

    #[test]
    fn trigger_specs_parse_nested() {
        assert_eq!(
            "purging:count:3".parse::<TriggerSpec>().unwrap(),
            TriggerSpec::Purging(Box::new(TriggerSpec::Count(3)))
        );
        assert!("count:0".parse::<TriggerSpec>().is_err());
        assert_eq!(
            "delta:5:diff".parse::<TriggerSpec>().unwrap(),
            TriggerSpec::Delta {
                threshold: 5.0,
                function: DeltaSpec::Diff
            }
        );
    }

    /// A result as (key, window, value).
    type Row = (String, Option<(Timestamp, Timestamp)>, Option<f64>);

    #[derive(Default)]
    struct Collected(Vec<Row>);

    impl JobSink for Collected {
        fn result(
            &mut self,
            key: &str,
            window: Option<(Timestamp, Timestamp)>,
            result: JobResult,
            _watermark: Timestamp,
        ) {
            if let JobResult::Number(v) = result {
                self.0.push((key.to_owned(), window, v));
            }
        }
        fn late(&mut self, _: String, _: Timestamp, _: f64, _: Timestamp) {}
    }

    #[test]
    fn processing_time_windows_fire_once_the_clock_passed_their_end_for_every_strategy() {
        // The wall clock reads 9 when an element arrives and the job advances processing time
        // to 9: window [0, 10) must not fire yet (Flink fires it once the clock passed 9), so
        // a second element arriving at 9 joins it, and it fires once, with both.
        for strategy in [Strategy::Native, Strategy::Sliced(EmitMode::AllWindows)] {
            let spec = JobSpec {
                window: WindowSpec::Sliding {
                    size: 10,
                    slide: 5,
                    offset: 0,
                },
                trigger: TriggerSpec::Default,
                time: TimeDomain::ProcessingTime,
                allowed_lateness: 0,
                late_data: LateDataPolicy::Drop,
                aggregate: "sum".parse().unwrap(),
                evictor: None,
                strategy,
            };
            let mut op = JobOperator::new(&spec).unwrap();
            let mut out = Collected::default();
            for value in [1.0, 2.0] {
                op.advance_processing_time(9, &mut out);
                op.process_element("a".to_owned(), value, 9, &mut out)
                    .unwrap();
            }
            op.advance_processing_time(9, &mut out);
            assert!(out.0.is_empty(), "{strategy:?}: fired at 9: {:?}", out.0);
            op.advance_processing_time(10, &mut out);
            assert_eq!(
                out.0,
                [("a".to_owned(), Some((0, 10)), Some(3.0))],
                "{strategy:?}"
            );
        }
    }

    #[test]
    fn b46_session_with_delta_trigger_is_rejected_at_build() {
        // Scenario B46 (Flink WindowedStream check for merging assigners).
        let spec = JobSpec {
            window: WindowSpec::Session { gap: 5 },
            trigger: "delta:1".parse().unwrap(),
            time: TimeDomain::EventTime,
            allowed_lateness: 0,
            late_data: LateDataPolicy::Drop,
            aggregate: "sum".parse().unwrap(),
            evictor: None,
            strategy: Strategy::Native,
        };
        let err = JobOperator::new(&spec).unwrap_err().to_string();
        assert!(
            err.contains("cannot be used with a trigger that does not support merging"),
            "{err}"
        );
        assert!(err.contains("DeltaTrigger"), "{err}");
    }
}
