//! The text grammar of a job's parts, as `windowctl run` takes them on the command line and a
//! job file may write them: `tumbling:1h:-8h`, `sliding:1h:5min`, `purging:count:3`,
//! `count:3:after`, `mean`, `sliced:changes`. Durations take units (`ms`, `s`, `min`, `h`, `d`).

use std::fmt;
use std::str::FromStr;

use keywindow::EmitMode;
use window_core::{NumericAggregate, NumericAggregates};
use window_operator::EvictMoment;

use crate::duration::{parse_duration, parse_signed_duration};
use crate::parts::{DeltaSpec, EvictorSpec, TriggerSpec, WindowSpec};
use crate::spec::{syntax, JobAggregate, SpecError, Strategy};

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
                Ok(n) if n > 0 => Ok(TriggerSpec::Count { count: n }),
                _ => Err(syntax(
                    "trigger",
                    s,
                    "count needs a whole number of elements >= 1",
                )),
            },
            ("purging", Some(inner)) => Ok(TriggerSpec::Purging {
                inner: Box::new(inner.parse()?),
            }),
            ("continuous", Some(i)) => Ok(TriggerSpec::Continuous { interval: dur(i)? }),
            ("continuous-event-time", Some(i)) => {
                Ok(TriggerSpec::ContinuousEventTime { interval: dur(i)? })
            }
            ("continuous-processing-time", Some(i)) => {
                Ok(TriggerSpec::ContinuousProcessingTime { interval: dur(i)? })
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

impl FromStr for JobAggregate {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, SpecError> {
        if s.contains(',') {
            return several_aggregates(s);
        }
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

/// A comma-separated list of distinct numeric aggregates (`count,sum,max`, spaces around the
/// names allowed); a list of one is that aggregate.
fn several_aggregates(s: &str) -> Result<JobAggregate, SpecError> {
    let mut list = Vec::new();
    for name in s.split(',').map(str::trim) {
        match name.parse() {
            Ok(JobAggregate::Numeric(a)) => list.push(a),
            Ok(_) => {
                return Err(syntax(
                    "aggregate",
                    s,
                    format!(
                        "{name} keeps the elements and cannot be listed with other aggregates: \
                         list count, sum, min, max or mean"
                    ),
                ))
            }
            Err(_) if name.is_empty() => {
                return Err(syntax(
                    "aggregate",
                    s,
                    "an empty name in the list: separate count, sum, min, max or mean by single commas",
                ))
            }
            Err(_) => {
                return Err(syntax(
                    "aggregate",
                    s,
                    format!("unknown aggregate '{name}' in the list: expected count, sum, min, max or mean, each once"),
                ))
            }
        }
    }
    match NumericAggregates::new(&list) {
        Ok(several) if several.len() == 1 => Ok(JobAggregate::Numeric(list[0])),
        Ok(several) => Ok(JobAggregate::Several(several)),
        Err(e) => Err(syntax("aggregate", s, e.to_string())),
    }
}

impl FromStr for Strategy {
    type Err = SpecError;

    /// `auto`, `native`, `keywindow`, `sliced` (every window) or `sliced:changes`.
    fn from_str(s: &str) -> Result<Self, SpecError> {
        match s {
            "auto" => Ok(Strategy::Auto),
            "native" => Ok(Strategy::Native),
            "keywindow" => Ok(Strategy::KeyWindow),
            "sliced" | "sliced:all" => Ok(Strategy::Sliced(EmitMode::AllWindows)),
            "sliced:changes" => Ok(Strategy::Sliced(EmitMode::Changes)),
            _ => Err(syntax(
                "strategy",
                s,
                "expected auto, native, keywindow, sliced or sliced:changes",
            )),
        }
    }
}

impl fmt::Display for JobAggregate {
    /// The aggregate as [`FromStr`] reads it (`mean`, `list` ...).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            JobAggregate::Several(several) => return several.fmt(f),
            JobAggregate::Numeric(NumericAggregate::Count) => "count",
            JobAggregate::Numeric(NumericAggregate::Sum) => "sum",
            JobAggregate::Numeric(NumericAggregate::Min) => "min",
            JobAggregate::Numeric(NumericAggregate::Max) => "max",
            JobAggregate::Numeric(NumericAggregate::Mean) => "mean",
            JobAggregate::List => "list",
            JobAggregate::Elements => "elements",
        })
    }
}

impl fmt::Display for Strategy {
    /// The strategy as [`FromStr`] reads it ([`Strategy::label`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}
