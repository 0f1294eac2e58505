//! Comparison of our run of a Spark case with what Spark produced: outputs as sorted multisets,
//! errors by meaning (stage, check, durations), the harness's JSON order, and deliberate
//! difference (a), the checkpoint directory Spark asks for and we do not need. Split from the
//! harness (`mod.rs`), which decides what to compare.

use std::cmp::Ordering;

use engine::dstream::Error;
use serde_json::{json, Value};

use super::program::{Execution, Phase};

/// A slice of the case with the records of each batch sorted, as ours are.
pub(crate) fn normalise_slice(mut slice: Value) -> Value {
    if let Some(rdds) = slice.get_mut("rdds").and_then(Value::as_array_mut) {
        for rdd in rdds {
            if let Some(records) = rdd.as_array_mut() {
                records.sort_by(cmp_json);
            }
        }
    }
    slice
}

/// Records as a sorted multiset, the values inside a group `[key, [values]]` sorted too.
fn sorted_records(records: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = records
        .iter()
        .map(|r| match r {
            // A group `[key, [values]]`: its values are a multiset.
            Value::Array(kv) if kv.len() == 2 && kv[1].is_array() => {
                let mut values = kv[1].as_array().cloned().unwrap_or_default();
                values.sort_by(cmp_json);
                json!([kv[0].clone(), values])
            }
            other => other.clone(),
        })
        .collect();
    out.sort_by(cmp_json);
    out
}

/// Compares the outputs: the same times, and at each the same records as multisets.
pub(crate) fn compare_outputs(
    expected: Option<&Value>,
    got: &[(i64, Vec<Value>)],
) -> Result<(), String> {
    let want: Vec<(i64, Vec<Value>)> = expected
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|o| {
            let time = o
                .get("time")
                .and_then(Value::as_i64)
                .ok_or_else(|| format!("output without time: {o}"))?;
            let records = o
                .get("records")
                .and_then(Value::as_array)
                .ok_or_else(|| format!("output without records: {o}"))?;
            Ok((time, sorted_records(records)))
        })
        .collect::<Result<_, String>>()?;
    let got: Vec<(i64, Vec<Value>)> = got.iter().map(|(t, r)| (*t, sorted_records(r))).collect();
    let want_times: Vec<i64> = want.iter().map(|(t, _)| *t).collect();
    let got_times: Vec<i64> = got.iter().map(|(t, _)| *t).collect();
    if want_times != got_times {
        return Err(format!(
            "output times differ: expected {want_times:?}, got {got_times:?}"
        ));
    }
    for ((t, w), (_, g)) in want.iter().zip(&got) {
        if w != g {
            return Err(format!(
                "records at {t} differ: expected {}, got {}",
                Value::Array(w.clone()),
                Value::Array(g.clone())
            ));
        }
    }
    Ok(())
}

/// Every `N ms` in a text, in order.
pub(crate) fn durations(text: &str) -> Vec<i64> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()) {
            let start = if i > 0 && bytes[i - 1] == b'-' {
                i - 1
            } else {
                i
            };
            let mut j = i;
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            if text[j..].starts_with(" ms") {
                if let Ok(n) = text[start..j].parse() {
                    out.push(n);
                }
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// Whether `needle` appears in `hay` in order (not necessarily contiguous).
fn is_subsequence(needle: &[i64], hay: &[i64]) -> bool {
    let mut it = hay.iter();
    needle.iter().all(|n| it.any(|h| h == n))
}

/// Compares the errors by meaning: the same stage, the same check, and every duration
/// Spark's message names in ours, in order.
pub(crate) fn compare_errors(
    expected: Option<&Value>,
    got: Option<&(Phase, Error)>,
) -> Result<(), String> {
    match (expected, got) {
        (None, None) => Ok(()),
        (None, Some((phase, e))) => Err(format!("unexpected error at {}: {e}", phase.name())),
        (Some(want), None) => Err(format!("expected an error, got none: {want}")),
        (Some(want), Some((phase, e))) => {
            let want_phase = want.get("phase").and_then(Value::as_str).unwrap_or("?");
            if want_phase != phase.name() {
                return Err(format!(
                    "error at {} instead of {want_phase}: {e}",
                    phase.name()
                ));
            }
            let message = want.get("message").and_then(Value::as_str).unwrap_or("");
            let root = want
                .pointer("/rootCause/message")
                .and_then(Value::as_str)
                .unwrap_or("");
            // The same Spark check: ours names it, and Spark's message is its message.
            let text = format!("{message} {root}");
            if !e.rule().is_some_and(|rule| rule.matches(&text, e.stream())) {
                return Err(format!(
                    "another check: Spark {want}, ours: {e} ({:?})",
                    e.rule()
                ));
            }
            let (spark_ms, our_ms) = (durations(message), durations(&e.to_string()));
            if !is_subsequence(&spark_ms, &our_ms) {
                return Err(format!(
                    "our message does not name Spark's durations {spark_ms:?}: {e}"
                ));
            }
            Ok(())
        }
    }
}

/// Whether Spark's error is the one for a missing checkpoint directory.
pub(crate) fn is_checkpoint_dir_error(error: &Value) -> bool {
    error
        .get("message")
        .and_then(Value::as_str)
        .is_some_and(|m| m.contains("checkpoint directory has not been set"))
}

/// Deliberate difference (a): Spark rejects at `start()` a graph with a stream to checkpoint
/// when no checkpoint directory is set; we need none.
pub(crate) fn check_no_checkpoint_dir_needed(exec: &Execution) -> Result<(), String> {
    match &exec.error {
        None => {}
        Some((
            Phase::Start,
            Error::CheckpointIntervalTooShort { .. } | Error::CheckpointIntervalNotMultiple { .. },
        )) => {}
        Some((phase, e)) => {
            return Err(format!(
            "Spark failed for lack of a checkpoint directory; we need none, but failed at {}: {e}",
            phase.name()
        ))
        }
    }
    let ssc = exec.ssc.as_ref().ok_or("no context")?;
    if !ssc.graph().iter().any(|s| s.checkpoint().is_some()) {
        return Err("Spark asked for a checkpoint directory, but no stream of our graph has a checkpoint interval".into());
    }
    Ok(())
}

/// The harness's order: numbers < strings < arrays, arrays element by element.
pub(crate) fn cmp_json(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Number(_) => 2,
            Value::String(_) => 3,
            Value::Array(_) => 4,
            Value::Object(_) => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => x
                .as_f64()
                .partial_cmp(&y.as_f64())
                .unwrap_or(Ordering::Equal),
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => x
            .iter()
            .zip(y)
            .map(|(p, q)| cmp_json(p, q))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| x.len().cmp(&y.len())),
        _ => rank(a)
            .cmp(&rank(b))
            .then_with(|| a.to_string().cmp(&b.to_string())),
    }
}
