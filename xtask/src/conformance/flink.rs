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

use engine::core::{AnyWindow, FlinkRule, Number, NumericResult, Stage, Window, WindowOutput};
use engine::job::{JobResult, JobSpec, WatermarkSpec, WindowSpec};
use serde_json::{json, Value};

use super::Outcome;

/// Collects records in the cases' JSON shape.
#[derive(Default)]
struct Recorder {
    records: Vec<Value>,
}

impl WindowOutput<String, AnyWindow, Number, JobResult> for Recorder {
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

    fn late(&mut self, key: String, timestamp: i64, value: Number, watermark: i64) {
        self.records.push(json!({
            "late": {"ts": timestamp, "key": key, "value": exact(value)},
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

/// An element value: an integer exactly (a `Long`), a float as [`number`].
fn exact(v: Number) -> Value {
    match v {
        Number::Int(i) => json!(i),
        Number::Float(f) => number(f),
    }
}

/// An exact integer result: a JSON number in the `i64` range (a Flink `Long`), else its digits
/// as a string (no Flink `Long` holds it).
fn wide(i: i128) -> Value {
    i64::try_from(i).map_or_else(|_| json!(i.to_string()), |v| json!(v))
}

fn result_json(r: &JobResult) -> Value {
    match r {
        JobResult::Number(None) => Value::Null,
        JobResult::Number(Some(v)) => number(*v),
        // A Long sum beyond 2^53, exactly as Flink prints it.
        JobResult::Integer(i) => wide(*i),
        JobResult::Numbers(vs) => Value::Array(
            vs.iter()
                .map(|v| match *v {
                    NumericResult::Float(v) => v.map_or(Value::Null, number),
                    NumericResult::Integer(i) => wide(i),
                })
                .collect(),
        ),
        JobResult::List(vs) => Value::Array(vs.iter().map(|v| exact(*v)).collect()),
        JobResult::Elements(es) => {
            Value::Array(es.iter().map(|(t, v)| json!([t, exact(*v)])).collect())
        }
    }
}

fn int(v: &Value, field: &str) -> Result<i64, String> {
    v.get(field)
        .and_then(Value::as_i64)
        .ok_or_else(|| format!("field '{field}' missing or not an integer in {v}"))
}

/// A number field: an integer exactly (as windowctl reads one), any other number as an `f64`.
fn value(v: &Value, field: &str) -> Result<Number, String> {
    let n = v.get(field);
    n.and_then(Value::as_i64)
        .map(Number::Int)
        .or_else(|| n.and_then(Value::as_f64).map(Number::Float))
        .ok_or_else(|| format!("field '{field}' missing or not a number in {v}"))
}

/// The job a case describes: its input without the events, read as a [`JobSpec`] (the case
/// format is the job spec's JSON form).
fn setup(input: &Value) -> Result<JobSpec, String> {
    let mut job = input.clone();
    if let Some(fields) = job.as_object_mut() {
        fields.remove("events");
    }
    JobSpec::from_json(&job.to_string()).map_err(|e| e.to_string())
}

/// Whether our rejection means what Flink's exception `flink` says: ours enforces the Flink
/// rule whose message Flink printed.
fn same_rule(flink: &str, ours: Option<FlinkRule>) -> bool {
    ours.is_some_and(|rule| rule.matches(flink))
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
        (Ok(op), _) => op,
        // Rejected when the job is built, as Flink rejects it, and for the same rule.
        (Err(e), Some(flink)) => return Ok(rejection(flink, e.rule(), Stage::Build, &e)),
        (Err(e), None) => return Ok(Outcome::Fail(format!("job rejected: {e}"))),
    };
    let mut events: Vec<Value> = input["events"].as_array().ok_or("events missing")?.clone();
    if spec.window == WindowSpec::GlobalEndOfStream {
        // Batch-style sorted input: elements by timestamp (stable), markers dropped.
        events.retain(|e| e.get("watermark").is_none());
        events.sort_by_key(|e| e["ts"].as_i64().unwrap_or(i64::MIN));
    }
    let bounded = match spec.watermarks {
        WatermarkSpec::Bounded {
            max_out_of_orderness,
            ..
        } => Some(max_out_of_orderness),
        WatermarkSpec::Explicit => None,
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
        let value = value(e, "value")?;
        if let Err(r) = op.process_element(key, value, ts, &mut rec) {
            // Flink fails the job when the element arrives.
            return Ok(match expected_error {
                Some(flink) => rejection(flink, r.error.rule(), Stage::Element, &r),
                None => Outcome::Fail(format!("element at {ts} rejected: {r}")),
            });
        }
        if let Some(d) = bounded {
            if spec.window != WindowSpec::GlobalEndOfStream {
                let m = max_ts.map_or(ts, |m| m.max(ts));
                max_ts = Some(m);
                op.process_watermark(m.saturating_sub(d).saturating_sub(1), &mut rec);
            }
        }
    }
    if let Some(flink) = expected_error {
        return Ok(Outcome::Fail(format!(
            "Flink rejected the job ({flink}); we ran it"
        )));
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

/// The verdict on a rejection of ours at `stage` where Flink threw `flink`: the same Flink rule,
/// enforced at the stage Flink enforces it.
fn rejection(
    flink: &str,
    ours: Option<FlinkRule>,
    stage: Stage,
    error: &dyn std::fmt::Display,
) -> Outcome {
    match ours {
        Some(rule) if same_rule(flink, Some(rule)) && rule.stage() == stage => Outcome::Pass,
        Some(rule) if same_rule(flink, Some(rule)) => Outcome::Fail(format!(
            "Flink: {flink} ({:?}); we rejected it for that rule at another stage ({stage:?}): {error}",
            rule.stage()
        )),
        _ => Outcome::Fail(format!(
            "Flink: {flink}; we rejected it for another reason: {error}"
        )),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-element case expecting Flink's error `error`.
    fn error_case(input: Value, error: &str) -> Value {
        json!({"name": "t", "input": input, "expected": [{"error": error}]})
    }

    fn input(assigner: Value, extra: Value) -> Value {
        let mut i = json!({
            "events": [{"ts": 1, "key": "a", "value": 0}, {"ts": 3, "key": "a", "value": 2}],
            "watermarks": {"type": "bounded", "max_out_of_orderness": 0},
            "assigner": assigner,
            "late_side_output": false,
            "aggregate": "sum"
        });
        for (k, v) in extra.as_object().unwrap() {
            i[k] = v.clone();
        }
        i
    }

    #[test]
    fn flink_errors_match_by_rule_for_every_rule_enforced_when_the_job_is_built() {
        let cases = [
            // The case the issue names: failed before only because its text was not listed.
            (
                json!({"type": "tumbling", "size": 10, "offset": 10}),
                json!({}),
                "java.lang.IllegalArgumentException: TumblingEventTimeWindows parameters must satisfy abs(offset) < size",
            ),
            (
                json!({"type": "sliding", "size": 10, "slide": 5, "offset": -5}),
                json!({}),
                "java.lang.IllegalArgumentException: SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and size > 0",
            ),
            (
                json!({"type": "session", "gap": 0}),
                json!({}),
                "java.lang.IllegalArgumentException: EventTimeSessionWindows parameters must satisfy 0 < size",
            ),
            (
                json!({"type": "tumbling", "size": 10}),
                json!({"allowed_lateness": -1}),
                "java.lang.IllegalArgumentException: The allowed lateness cannot be negative.",
            ),
        ];
        for (assigner, extra, flink) in cases {
            let case = error_case(input(assigner, extra), flink);
            assert_eq!(run(&case), Outcome::Pass, "{flink}");
        }
    }

    #[test]
    fn flink_errors_when_an_element_arrives_match_by_rule_at_that_stage() {
        // The dynamic gap is the element's value: 0 for the first element.
        let case = error_case(
            input(json!({"type": "dynamic_session"}), json!({})),
            "java.lang.IllegalArgumentException: Dynamic session time gap must satisfy 0 < gap",
        );
        assert_eq!(run(&case), Outcome::Pass);
    }

    #[test]
    fn another_rule_or_no_rejection_fails() {
        // Flink's sliding message for a tumbling job: another rule.
        let case = error_case(
            input(json!({"type": "tumbling", "size": 10, "offset": 10}), json!({})),
            "java.lang.IllegalArgumentException: SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and size > 0",
        );
        assert!(matches!(run(&case), Outcome::Fail(_)));
        // A valid job Flink is said to reject.
        let case = error_case(
            input(json!({"type": "tumbling", "size": 10}), json!({})),
            "java.lang.IllegalArgumentException: TumblingEventTimeWindows parameters must satisfy abs(offset) < size",
        );
        assert!(matches!(run(&case), Outcome::Fail(_)));
    }
}
