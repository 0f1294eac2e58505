//! What a job is, as data: one [`JobSpec`] that `windowctl run`'s flags, a job file (JSON or
//! TOML) and the conformance cases' JSON all turn into, validated once, when it is built.
//!
//! The serialized form is the conformance cases' (`assigner`, `trigger`, `evictor`,
//! `allowed_lateness`, `late_side_output`, `aggregate`, `watermarks`), plus what `windowctl`
//! adds: the time domain, the strategy, `window_all`, a limit on window states, a name, and the
//! inputs and outputs (`io`). Durations are ms or text with units; parts are tagged objects or
//! text in `windowctl`'s grammar:
//!
//! ```toml
//! name = "delays"
//! assigner = "sliding:1h:5min"
//! aggregate = "mean"
//! strategy = "sliced"
//! watermarks = { type = "bounded", max_out_of_orderness = "6h" }
//! [io]
//! input = ["data/nycflights13_dest.csv.gz"]
//! ```

use keywindow::EmitMode;
use serde::{Deserialize, Serialize};
use window_assigners::{AssignerError, TimeDomain};
use window_core::{FlinkRule, LateDataPolicy, NumericAggregate, NumericAggregates};
use window_operator::OperatorError;

use crate::fields::{
    aggregate, ms, opt_ms, opt_text_or_object, side_output, text, text_or_object, time_domain,
};
use crate::parts::{EvictorSpec, TriggerSpec, WindowSpec};

/// A job that cannot run as described: the option or field, what is wrong, and the Flink rule
/// it breaks where it is one of Flink's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// A window, trigger, evictor, aggregate or strategy description that does not parse, or a
    /// combination this workspace does not run.
    #[error("invalid {what} '{text}': {reason}")]
    Syntax {
        /// `window`, `trigger`, `aggregate` ...
        what: &'static str,
        /// The text given.
        text: String,
        /// What is wrong, with the accepted forms.
        reason: String,
    },
    /// Parameters the assigner rejects (size, slide, offset, gap).
    #[error("{error}{}", rule_suffix(.error.rule()))]
    Assigner {
        /// What the assigner said.
        #[from]
        error: AssignerError,
    },
    /// A combination the operator rejects (session windows with a non-merging trigger ...).
    #[error("{error}{}", rule_suffix(.error.rule()))]
    Operator {
        /// What the operator said.
        #[from]
        error: OperatorError,
    },
    /// A job file or case that is not a job (a missing field, a bad value, an unknown key).
    #[error("{0}")]
    Format(String),
}

/// ` [Flink's rule ...]` for an error that enforces one.
fn rule_suffix(rule: Option<FlinkRule>) -> String {
    rule.map_or_else(String::new, |r| format!(" [{r}]"))
}

impl SpecError {
    /// The Flink rule the error enforces, if it is one of Flink's.
    #[must_use]
    pub fn rule(&self) -> Option<FlinkRule> {
        match self {
            SpecError::Assigner { error } => error.rule(),
            SpecError::Operator { error } => error.rule(),
            SpecError::Syntax { .. } | SpecError::Format(_) => None,
        }
    }
}

pub(crate) fn syntax(what: &'static str, text: &str, reason: impl Into<String>) -> SpecError {
    SpecError::Syntax {
        what,
        text: text.to_owned(),
        reason: reason.into(),
    }
}

/// What a window computes: a numeric aggregate (incremental), several of them, or its contents
/// (kept in full). As text: `count`, `sum`, `min`, `max`, `mean`, `list`, `elements`, or a
/// comma-separated list of distinct numeric aggregates (`count,sum,max`; in a job file also a
/// list of names). A list of one is that aggregate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobAggregate {
    /// `count`, `sum`, `min`, `max`, `mean`: incremental, one accumulator per window.
    Numeric(NumericAggregate),
    /// Several numeric aggregates (`count,sum,max`), at least two, in one accumulator per window;
    /// the result is [`crate::JobResult::Numbers`], one per aggregate in the list's order.
    Several(NumericAggregates),
    /// `list`: the values in the window's order (arrival order).
    List,
    /// `elements`: `(timestamp, value)` pairs in the window's order.
    Elements,
}

/// How a job's watermarks come: from a bounded-out-of-orderness generator per input, or as
/// markers in the input (the conformance cases' `explicit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum WatermarkSpec {
    /// Flink's `forBoundedOutOfOrderness`: watermark = max timestamp - delay - 1.
    Bounded {
        /// The delay in ms.
        #[serde(with = "ms")]
        max_out_of_orderness: i64,
        /// Emission interval in ms of processing time; 0 emits one after every element.
        #[serde(default, with = "ms")]
        interval: i64,
        /// Inputs silent for this long (ms of processing time) stop holding event time back.
        #[serde(default, with = "opt_ms", skip_serializing_if = "Option::is_none")]
        idle_timeout: Option<i64>,
    },
    /// Watermarks only where the input says (`{"watermark": W}` markers).
    Explicit,
}

impl Default for WatermarkSpec {
    fn default() -> Self {
        WatermarkSpec::Bounded {
            max_out_of_orderness: 0,
            interval: 0,
            idle_timeout: None,
        }
    }
}

/// Where a job reads and writes, as text for the I/O layer to interpret (`windowctl`'s
/// `--input`, `--output` ... flags); every field is optional.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IoSpec {
    /// Input files (`.gz` decompressed) or `-` for stdin.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub input: Vec<String>,
    /// TCP servers (`host:port`) to read from.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub socket: Vec<String>,
    /// `csv` or `jsonl`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// CSV inputs have no header line: every line is data, and the fields are column numbers
    /// counted from 1 (`windowctl run --no-header`).
    #[serde(skip_serializing_if = "is_false")]
    pub no_header: bool,
    /// The field holding the event time in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_field: Option<String>,
    /// The unit of numeric timestamps: `s`, `ms` (the default), `us` or `ns`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_unit: Option<String>,
    /// The CSV field separator: one ASCII character, or `tab` (a comma by default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<String>,
    /// The field holding the key; several, comma-separated (`carrier,dest`), key by the tuple.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_field: Option<String>,
    /// The field holding the value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_field: Option<String>,
    /// The results file (stdout without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// `csv` or `jsonl`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_format: Option<String>,
    /// The late-elements file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_output: Option<String>,
    /// `fail` or `skip` for bad input records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_error: Option<String>,
    /// Where skipped records go.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dead_letter: Option<String>,
}

/// A complete job description.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    /// A name for the job (summaries, and later checkpoints' compatibility checks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The windows.
    #[serde(rename = "assigner", alias = "window", with = "text_or_object")]
    pub window: WindowSpec,
    /// The trigger.
    #[serde(default, with = "text_or_object")]
    pub trigger: TriggerSpec,
    /// An evictor; with one, windows keep their elements (no pre-aggregation).
    #[serde(
        default,
        with = "opt_text_or_object",
        skip_serializing_if = "Option::is_none"
    )]
    pub evictor: Option<EvictorSpec>,
    /// What each window computes (text, or in a job file also a list of aggregate names).
    #[serde(with = "aggregate")]
    pub aggregate: JobAggregate,
    /// Event time or processing time.
    #[serde(default, with = "time_domain")]
    pub time: TimeDomain,
    /// Allowed lateness in ms.
    #[serde(default, with = "ms")]
    pub allowed_lateness: i64,
    /// Whether late elements go to the side output.
    #[serde(default, rename = "late_side_output", with = "side_output")]
    pub late_data: LateDataPolicy,
    /// How sliding windows are computed.
    #[serde(default, with = "text")]
    pub strategy: Strategy,
    /// Flink's `windowAll`: every element under one key (the default key, empty for text).
    #[serde(default)]
    pub window_all: bool,
    /// Refuse elements that would bring the native operator over this many window states
    /// (see `WindowOperator::set_max_window_states`); `None` for no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_window_states: Option<usize>,
    /// How watermarks come.
    #[serde(default)]
    pub watermarks: WatermarkSpec,
    /// Inputs and outputs.
    #[serde(default, skip_serializing_if = "is_default")]
    pub io: IoSpec,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_default(io: &IoSpec) -> bool {
    *io == IoSpec::default()
}

impl JobSpec {
    /// A job computing `aggregate` over `window` with everything else at its default: the
    /// assigner's trigger, event time, no lateness, late elements dropped, no evictor, the native
    /// operator, keyed, no limit on window states, a watermark after every element with no
    /// delay, no inputs or outputs named.
    #[must_use]
    pub fn new(window: WindowSpec, aggregate: JobAggregate) -> Self {
        Self {
            name: None,
            window,
            trigger: TriggerSpec::Default,
            evictor: None,
            aggregate,
            time: TimeDomain::EventTime,
            allowed_lateness: 0,
            late_data: LateDataPolicy::Drop,
            strategy: Strategy::Native,
            window_all: false,
            max_window_states: None,
            watermarks: WatermarkSpec::default(),
            io: IoSpec::default(),
        }
    }

    /// The strategy [`Strategy::Auto`] stands for in this job: sliced windows emitting every
    /// window (`docs/sliced.md`; the native operator's rows, at a cost per element that does not
    /// grow with size / slide) for sliding windows in event time with the default trigger, no
    /// evictor, an incremental aggregate (not `list` or `elements`), lateness of at least 0 and
    /// window parameters sliced windows take (valid, at most
    /// `window_assigners::MAX_WINDOWS_PER_ELEMENT` windows per element, size + slide below
    /// `i64::MAX / 8`, no more windows per element than `max_window_states`); the native
    /// operator for everything else
    /// (processing time included: its wall-clock firings are the operator's own). Any other
    /// strategy is returned as it is.
    #[must_use]
    pub fn auto_strategy(&self) -> Strategy {
        if self.strategy != Strategy::Auto {
            return self.strategy;
        }
        // Parameters sliced windows refuse go to the native operator, which names Flink's rule.
        let sliced = matches!(self.window, WindowSpec::Sliding { size, slide, offset }
        if keywindow::SlidingGeometry::new(size, slide, offset).is_ok()
            && size.checked_add(slide).is_some_and(|w| w <= i64::MAX / 8)
            && window_assigners::windows_per_element(size, slide)
                <= window_assigners::MAX_WINDOWS_PER_ELEMENT
            // One element's windows over the limit on window states: the native operator
            // refuses it, and so does auto (sliced windows would emit them all).
            && self.max_window_states.is_none_or(|limit| {
                u64::try_from(window_assigners::windows_per_element(size, slide))
                    .is_ok_and(|n| n <= limit as u64)
            }))
            && self.trigger.is_default_for(self.time)
            && self.evictor.is_none()
            && !matches!(self.aggregate, JobAggregate::List | JobAggregate::Elements)
            && self.time == TimeDomain::EventTime
            && self.allowed_lateness >= 0;
        if sliced {
            Strategy::Sliced(EmitMode::AllWindows)
        } else {
            Strategy::Native
        }
    }

    /// A job from JSON (a job file, or a conformance case's `input` without its events).
    ///
    /// # Errors
    /// [`SpecError::Format`] naming the field (and line and column) at fault.
    pub fn from_json(text: &str) -> Result<Self, SpecError> {
        serde_json::from_str(text).map_err(|e| SpecError::Format(e.to_string()))
    }

    /// A job from TOML (a job file).
    ///
    /// # Errors
    /// [`SpecError::Format`] naming the field (and line and column) at fault.
    pub fn from_toml(text: &str) -> Result<Self, SpecError> {
        toml::from_str(text).map_err(|e| SpecError::Format(e.to_string()))
    }

    /// The job as canonical JSON (fields in a fixed order, durations in ms, parts as tagged
    /// objects): two jobs are the same job exactly when these are equal (what a checkpoint
    /// compares).
    #[must_use]
    pub fn canonical(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// How sliding windows are computed. As text: `auto`, `native`, `keywindow`, `sliced` (also
/// `sliced:all`), `sliced:changes`. A job file without a strategy gets [`Strategy::Auto`]
/// (the default); [`JobSpec::new`] starts from [`Strategy::Native`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Strategy {
    /// The fastest strategy whose output is the native operator's ([`JobSpec::auto_strategy`]):
    /// sliced windows emitting every window for a sliding-window job in event time with the
    /// default trigger, no evictor and an incremental aggregate; the native operator otherwise.
    /// Resolved when the job is built.
    #[default]
    Auto,
    /// Flink's operator: every window of every element is materialised.
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
    /// `sliced:changes` (the inverse of [`std::str::FromStr`]).
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
            Strategy::Auto => "auto",
            Strategy::Native => "native",
            Strategy::KeyWindow => "keywindow",
            Strategy::Sliced(EmitMode::AllWindows) => "sliced",
            Strategy::Sliced(EmitMode::Changes) => "sliced:changes",
        }
    }

    /// The key-window or sliced strategy, `None` for the native operator (and for
    /// [`Strategy::Auto`], which a job resolves first: [`JobSpec::auto_strategy`]).
    #[must_use]
    pub fn ordered(self) -> Option<OrderedKind> {
        match self {
            Strategy::Auto | Strategy::Native => None,
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

/// The sliding-window strategies that take elements in time order (behind a reordering buffer
/// in event time): key windows, and sliced windows with what they emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderedKind {
    /// Key windows (`keywindow::KeyWindows`).
    KeyWindows,
    /// Sliced windows (`keywindow::SlicedWindows`).
    Sliced(EmitMode),
}
