//! Flink cases: build the job the case describes, replay its input as the Flink harness did,
//! and compare our records with the ones real Flink 2.3 emitted.
//!
//! Replay (from `tests/conformance/flink/README.md`): elements in arrival order; with
//! `bounded` watermarks, after every element the watermark `max_ts - D - 1`; `{"watermark": W}`
//! markers advance the watermark if `W` is larger; after the last event the watermark
//! `i64::MAX`. `global_end_of_stream` jobs get their input sorted by timestamp (stable), as
//! Flink's batch-style execution of that trigger does.
//!
//! Comparison: records of one key must match in order; across keys, only the order between
//! different (watermark, timestamp) groups matters (Flink emits timers of equal timestamp in
//! unspecified heap order). Lists of merged session windows compare as multisets (Flink's
//! choice of state window follows Java hash-set order). Errors compare by meaning: the job must
//! be rejected when it is built, as Flink rejects it, with the error that means what Flink's
//! exception says ([`same_rejection`]).

use engine::assigners::TimeDomain;
use engine::core::{AnyWindow, Window, WindowOutput};
use engine::job::{
    EvictorSpec, JobAggregate, JobResult, JobSpec, SpecError, TriggerSpec, WindowSpec,
};
use engine::operator::{EvictMoment, LateDataPolicy, OperatorError};
use serde_json::{json, Value};

use super::Outcome;

/// Collects records in the cases' JSON shape.
#[derive(Default)]
struct Recorder {
    records: Vec<Value>,
}

impl WindowOutput<String, AnyWindow, f64, JobResult> for Recorder {
    fn result(&mut self, key: &String, window: &AnyWindow, result: JobResult, watermark: i64) {
        let (start, end) = match window.bounds() {
            Some((s, e)) => (json!(s), json!(e)),
            None => (Value::Null, Value::Null),
        };
        self.records.push(json!({
            "key": key,
            "window_start": start,
            "window_end": end,
            "result": result_json(&result),
            "ts": window.max_timestamp(),
            "wm": watermark,
        }));
    }

    fn late(&mut self, key: String, timestamp: i64, value: f64, watermark: i64) {
        self.records.push(json!({
            "late": {"ts": timestamp, "key": key, "value": number(value)},
            "wm": watermark,
        }));
    }
}

fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        json!(v as i64)
    } else {
        json!(v)
    }
}

fn result_json(r: &JobResult) -> Value {
    match r {
        JobResult::Number(None) => Value::Null,
        JobResult::Number(Some(v)) => number(*v),
        JobResult::List(vs) => Value::Array(vs.iter().map(|v| number(*v)).collect()),
        JobResult::Elements(es) => {
            Value::Array(es.iter().map(|(t, v)| json!([t, number(*v)])).collect())
        }
    }
}

fn int(v: &Value, field: &str) -> Result<i64, String> {
    v.get(field)
        .and_then(Value::as_i64)
        .ok_or_else(|| format!("field '{field}' missing or not an integer in {v}"))
}

fn float(v: &Value, field: &str) -> Result<f64, String> {
    v.get(field)
        .and_then(Value::as_f64)
        .ok_or_else(|| format!("field '{field}' missing or not a number in {v}"))
}

fn delta_fn(v: &Value) -> Result<engine::job::DeltaSpec, String> {
    match v.get("delta_fn").and_then(Value::as_str) {
        Some("abs_diff") => Ok(engine::job::DeltaSpec::AbsDiff),
        Some("diff") => Ok(engine::job::DeltaSpec::Diff),
        other => Err(format!("unknown delta_fn {other:?}")),
    }
}

fn trigger_spec(t: &Value) -> Result<TriggerSpec, String> {
    Ok(match t["type"].as_str() {
        Some("event_time") | Some("end_of_stream") => TriggerSpec::EventTime,
        Some("processing_time") => TriggerSpec::ProcessingTime,
        Some("never") => TriggerSpec::Never,
        Some("count") => {
            TriggerSpec::Count(int(t, "count")?.try_into().map_err(|_| "negative count")?)
        }
        Some("purging") => TriggerSpec::Purging(Box::new(trigger_spec(&t["inner"])?)),
        Some("continuous_event_time") => TriggerSpec::ContinuousEventTime(int(t, "interval")?),
        Some("continuous_processing_time") => {
            TriggerSpec::ContinuousProcessingTime(int(t, "interval")?)
        }
        Some("delta") => TriggerSpec::Delta {
            threshold: float(t, "threshold")?,
            function: delta_fn(t)?,
        },
        other => return Err(format!("unknown trigger type {other:?}")),
    })
}

/// The job a case describes.
fn setup(input: &Value) -> Result<JobSpec, String> {
    let evictor = match input.get("evictor") {
        Some(e) if !e.is_null() => Some(evictor_spec(e)?),
        _ => None,
    };
    let a = &input["assigner"];
    let offset = a.get("offset").and_then(Value::as_i64).unwrap_or(0);
    let trigger = match input.get("trigger") {
        Some(t) if !t.is_null() => trigger_spec(t)?,
        _ => TriggerSpec::Default,
    };
    let window = match a["type"].as_str() {
        Some("tumbling") => WindowSpec::Tumbling {
            size: int(a, "size")?,
            offset,
        },
        Some("sliding") => WindowSpec::Sliding {
            size: int(a, "size")?,
            slide: int(a, "slide")?,
            offset,
        },
        Some("session") => WindowSpec::Session {
            gap: int(a, "gap")?,
        },
        Some("dynamic_session") => WindowSpec::DynamicSession,
        Some("global") => WindowSpec::Global,
        Some("global_end_of_stream") => WindowSpec::GlobalEndOfStream,
        Some("count") => {
            let count = |f: &str| -> Result<u64, String> {
                int(a, f)?
                    .try_into()
                    .map_err(|_| format!("negative count window {f}"))
            };
            WindowSpec::Count {
                size: count("size")?,
                slide: if a.get("slide").is_some() {
                    Some(count("slide")?)
                } else {
                    None
                },
            }
        }
        other => return Err(format!("unknown assigner type {other:?}")),
    };
    let aggregate: JobAggregate = input["aggregate"]
        .as_str()
        .ok_or("aggregate missing")?
        .parse()
        .map_err(|e: engine::job::SpecError| e.to_string())?;
    let late_data = if input["late_side_output"].as_bool().unwrap_or(false) {
        LateDataPolicy::SideOutput
    } else {
        LateDataPolicy::Drop
    };
    let mut spec = JobSpec::new(window, aggregate);
    spec.trigger = trigger;
    spec.time = TimeDomain::EventTime;
    spec.allowed_lateness = input
        .get("allowed_lateness")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    spec.late_data = late_data;
    spec.evictor = evictor;
    Ok(spec)
}

fn evictor_spec(e: &Value) -> Result<EvictorSpec, String> {
    let moment = if e
        .get("evict_after")
        .and_then(Value::as_bool)
        .unwrap_or(false)
    {
        EvictMoment::After
    } else {
        EvictMoment::Before
    };
    Ok(match e["type"].as_str() {
        Some("count") => EvictorSpec::Count {
            max_count: int(e, "count")?
                .try_into()
                .map_err(|_| "negative evictor count")?,
            moment,
        },
        Some("time") => EvictorSpec::Time {
            size: int(e, "size")?,
            moment,
        },
        Some("delta") => EvictorSpec::Delta {
            threshold: float(e, "threshold")?,
            function: delta_fn(e)?,
            moment,
        },
        other => return Err(format!("unknown evictor type {other:?}")),
    })
}

/// Whether our rejection `ours` means what Flink's exception `flink` says. Every Flink error
/// the cases hold is listed; an unknown one fails, so a new case must be mapped here.
fn same_rejection(flink: &str, ours: &SpecError) -> bool {
    if flink.contains(
        "merging window assigner cannot be used with a trigger that does not support merging",
    ) {
        return matches!(
            ours,
            SpecError::Operator(OperatorError::TriggerCannotMerge { .. })
        );
    }
    false
}

/// Runs one Flink case.
pub(super) fn run(case: &Value) -> Outcome {
    match run_inner(case) {
        Ok(o) => o,
        Err(e) => Outcome::Fail(e),
    }
}

fn run_inner(case: &Value) -> Result<Outcome, String> {
    let input = &case["input"];
    let expected = case["expected"]
        .as_array()
        .ok_or("expected is not an array")?;
    let spec = setup(input)?;
    let expected_error = (expected.len() == 1)
        .then(|| expected[0]["error"].as_str())
        .flatten();
    let mut op = match (engine::job::build::<String>(&spec), expected_error) {
        (Ok(op), None) => op,
        // Rejected when the job is built, as Flink rejects it, and for the same reason.
        (Err(e), Some(flink)) => {
            return Ok(if same_rejection(flink, &e) {
                Outcome::Pass
            } else {
                Outcome::Fail(format!(
                    "Flink: {flink}; we rejected it for another reason: {e}"
                ))
            });
        }
        (Ok(_), Some(flink)) => {
            return Ok(Outcome::Fail(format!(
                "Flink rejected the job ({flink}); we accepted it"
            )))
        }
        (Err(e), None) => return Ok(Outcome::Fail(format!("job rejected: {e}"))),
    };
    let mut events: Vec<Value> = input["events"].as_array().ok_or("events missing")?.clone();
    if spec.window == WindowSpec::GlobalEndOfStream {
        // Batch-style sorted input: elements by timestamp (stable), markers dropped.
        events.retain(|e| e.get("watermark").is_none());
        events.sort_by_key(|e| e["ts"].as_i64().unwrap_or(i64::MIN));
    }
    let bounded = match input["watermarks"]["type"].as_str() {
        Some("bounded") => Some(int(&input["watermarks"], "max_out_of_orderness")?),
        Some("explicit") => None,
        other => return Err(format!("unknown watermarks type {other:?}")),
    };
    let mut rec = Recorder::default();
    let mut max_ts: Option<i64> = None;
    for e in &events {
        if let Some(w) = e.get("watermark") {
            let w = w.as_i64().ok_or("watermark marker not an integer")?;
            op.process_watermark(w, &mut rec);
            continue;
        }
        let ts = int(e, "ts")?;
        let key = e["key"].as_str().ok_or("key not a string")?.to_owned();
        let value = float(e, "value")?;
        if let Err(err) = op.process_element(key, value, ts, &mut rec) {
            rec.records.push(json!({"error": err.to_string()}));
            break;
        }
        if let Some(d) = bounded {
            if spec.window != WindowSpec::GlobalEndOfStream {
                let m = max_ts.map_or(ts, |m| m.max(ts));
                max_ts = Some(m);
                op.process_watermark(m.saturating_sub(d).saturating_sub(1), &mut rec);
            }
        }
    }
    op.process_watermark(i64::MAX, &mut rec);
    let merging = matches!(
        spec.window,
        WindowSpec::Session { .. } | WindowSpec::DynamicSession
    );
    Ok(match compare(expected, &rec.records, merging) {
        None => Outcome::Pass,
        Some(diff) => Outcome::Fail(diff),
    })
}

fn key_of(r: &Value) -> &str {
    r.get("key")
        .or_else(|| r.get("late").and_then(|l| l.get("key")))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Numbers compare by value (`6` equals `6.0`); lists of merged sessions as multisets.
fn same(a: &Value, b: &Value, multiset_lists: bool) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return false;
            }
            if multiset_lists {
                let mut used = vec![false; y.len()];
                x.iter().all(|xe| {
                    let found = y
                        .iter()
                        .enumerate()
                        .find(|(i, ye)| !used[*i] && same(xe, ye, false));
                    found.map(|(i, _)| used[i] = true).is_some()
                })
            } else {
                x.iter().zip(y).all(|(p, q)| same(p, q, false))
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same(v, w, multiset_lists)))
        }
        _ => a == b,
    }
}

/// Sorts records inside each run of equal (wm, ts) by key, so that the order of timers with the
/// same timestamp across keys does not matter.
fn canonical(records: &[Value]) -> Vec<Value> {
    let group = |r: &Value| {
        let ts = r
            .get("ts")
            .or_else(|| r.get("late").and_then(|l| l.get("ts")))
            .cloned();
        (r.get("wm").cloned(), ts)
    };
    let mut out: Vec<Value> = Vec::with_capacity(records.len());
    let mut start = 0;
    for i in 1..=records.len() {
        if i == records.len() || group(&records[i]) != group(&records[start]) {
            let mut run = records[start..i].to_vec();
            run.sort_by(|a, b| key_of(a).cmp(key_of(b)));
            out.extend(run);
            start = i;
        }
    }
    out
}

/// The first difference between expected and actual records, if any.
fn compare(expected: &[Value], actual: &[Value], merging: bool) -> Option<String> {
    let mut keys: Vec<&str> = expected.iter().chain(actual).map(key_of).collect();
    keys.sort_unstable();
    keys.dedup();
    for k in keys {
        let e: Vec<&Value> = expected.iter().filter(|r| key_of(r) == k).collect();
        let a: Vec<&Value> = actual.iter().filter(|r| key_of(r) == k).collect();
        for i in 0..e.len().max(a.len()) {
            match (e.get(i), a.get(i)) {
                (Some(x), Some(y)) if same(x, y, merging) => {}
                (Some(x), Some(y)) => {
                    return Some(format!("key {k} record {i}: expected {x}, got {y}"))
                }
                (Some(x), None) => {
                    return Some(format!("key {k} record {i}: expected {x}, got nothing"))
                }
                (None, Some(y)) => return Some(format!("key {k} record {i}: unexpected {y}")),
                (None, None) => {}
            }
        }
    }
    let (e, a) = (canonical(expected), canonical(actual));
    for (i, (x, y)) in e.iter().zip(&a).enumerate() {
        if !same(x, y, merging) {
            return Some(format!(
                "order across keys at record {i}: expected {x}, got {y}"
            ));
        }
    }
    None
}
