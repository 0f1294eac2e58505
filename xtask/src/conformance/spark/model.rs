//! Deliberate difference (b): an incremental window shorter than its slide. A plain model of
//! the incremental window over relative times tells what Spark's slicing and the corrected
//! slicing give, so that such a case passes when Spark's output is the one its slicing gives and
//! ours the corrected one. Split from the harness (`mod.rs`), which only asks whether a case is
//! one.

use engine::dstream::Error;
use serde_json::{json, Value};

use super::compare::compare_outputs;
use super::program::{Execution, Phase};
use super::{int_field, is_inverse_op, op_name, Case, Filter, Func, Item};

/// The parameters of an incremental window shorter than its slide, the case of deliberate
/// difference (b), if the case is one.
pub(crate) struct InverseModel {
    /// `(key, value)` per input batch after the operation's own mapping.
    batches: Vec<Vec<(Value, i64)>>,
    window: i64,
    slide: i64,
    reduce: Func,
    inverse: Func,
    filter: Option<Filter>,
    /// The operation outputs values only (`reduceByWindow`, `countByWindow`).
    values_only: bool,
}

/// The model of the case's incremental window if it is shorter than its slide (deliberate
/// difference (b)), `None` if the case has no such window.
///
/// # Errors
/// Such a window inside a chain of operations, or a record the model cannot read.
pub(crate) fn window_shorter_than_slide(case: &Case<'_>) -> Result<Option<InverseModel>, String> {
    let Some(position) = case.ops.iter().position(|op| {
        is_inverse_op(op)
            && match (
                int_field(op, "windowDurationMs"),
                int_field(op, "slideDurationMs"),
            ) {
                (Ok(Some(w)), Ok(s)) => w < s.unwrap_or(case.batch),
                _ => false,
            }
    }) else {
        return Ok(None);
    };
    if case.ops.len() != 1 || position != 0 {
        return Err("an incremental window shorter than its slide inside a chain of operations is not supported by this runner".into());
    }
    let op = case.ops[0];
    let window = int_field(op, "windowDurationMs")?.unwrap_or(0);
    let slide = int_field(op, "slideDurationMs")?.unwrap_or(case.batch);
    let mut reduce = Func::parse(op.get("reduceFunc").and_then(Value::as_str), Func::Sum)?;
    let mut inverse = Func::parse(op.get("invReduceFunc").and_then(Value::as_str), Func::Sub)?;
    let mut filter = op
        .get("filterFunc")
        .and_then(Value::as_str)
        .map(Filter::parse)
        .transpose()?;
    let name = op_name(op);
    let record = |item: &Item| -> Result<(Value, i64), String> {
        Ok(match name {
            "reduceByKeyAndWindow" => match item {
                Item::List(kv) if kv.len() == 2 => match &kv[1] {
                    Item::Int(v) => (kv[0].to_json(), *v),
                    other => return Err(format!("non-integer value {other:?}")),
                },
                other => return Err(format!("non-pair record {other:?}")),
            },
            "reduceByWindow" => match item {
                Item::Int(v) => (json!(1), *v),
                other => return Err(format!("non-integer record {other:?}")),
            },
            "countByWindow" => (json!(1), 1),
            _ => (item.to_json(), 1),
        })
    };
    if matches!(name, "countByWindow" | "countByValueAndWindow") {
        reduce = Func::Sum;
        inverse = Func::Sub;
        filter = (name == "countByValueAndWindow").then_some(Filter::NonZero);
    }
    let batches = case
        .batches
        .iter()
        .map(|b| b.iter().map(record).collect::<Result<Vec<_>, _>>())
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(InverseModel {
        batches,
        window,
        slide,
        reduce,
        inverse,
        filter,
        values_only: matches!(name, "reduceByWindow" | "countByWindow"),
    }))
}

/// Which batches count as leaving and entering the incremental window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slicing {
    /// Spark's: `[prev_begin, cur_begin - p]` and `[prev_end + p, cur_end]`.
    Spark,
    /// Ours: the same, clamped to the previous and the current window.
    Corrected,
}

/// A key's value per key, in first-appearance order.
type Reduced = Vec<(Value, i64)>;

/// Reduces `records` into `out` with `f`, keeping keys in first-appearance order.
fn reduce_into(out: &mut Reduced, records: &[(Value, i64)], f: Func) {
    for (k, v) in records {
        match out.iter_mut().find(|(key, _)| key == k) {
            Some((_, acc)) => *acc = f.apply(*acc, *v),
            None => out.push((k.clone(), *v)),
        }
    }
}

/// The value of key `k` in `list`, if it is there.
fn find(list: &[(Value, i64)], k: &Value) -> Option<i64> {
    list.iter().find(|(key, _)| key == k).map(|(_, v)| *v)
}

/// The model's input: each batch reduced per key, and the batch duration.
struct Batches {
    reduced: Vec<Reduced>,
    batch: i64,
}

impl Batches {
    /// The reduced batch at relative time `t` (batch `i` is at `(i + 1) · batch`); empty at a
    /// time that is no batch's.
    fn at(&self, t: i64) -> &[(Value, i64)] {
        let p = self.batch;
        if t <= 0 || t % p != 0 {
            return &[];
        }
        usize::try_from(t / p - 1)
            .ok()
            .and_then(|i| self.reduced.get(i))
            .map_or(&[], Vec::as_slice)
    }

    /// The batches from `from` to `to` (both included, none before the first), reduced with
    /// `f`.
    fn fold(&self, from: i64, to: i64, f: Func) -> Reduced {
        let mut out = Vec::new();
        let mut t = from.max(self.batch);
        while t <= to {
            reduce_into(&mut out, self.at(t), f);
            t += self.batch;
        }
        out
    }
}

/// A plain re-statement of the incremental window over relative times, to tell what Spark's
/// slicing and the corrected slicing give. Returns the outputs, and the time of a failure.
fn model_inverse(
    model: &InverseModel,
    case: &Case<'_>,
    slicing: Slicing,
) -> (Vec<(i64, Vec<Value>)>, Option<i64>) {
    let p = case.batch;
    // Per-batch reduction, keys in first-appearance order.
    let batches = Batches {
        reduced: model
            .batches
            .iter()
            .map(|b| {
                let mut out = Vec::new();
                reduce_into(&mut out, b, model.reduce);
                out
            })
            .collect(),
        batch: p,
    };
    let last = i64::try_from(case.num_batches).unwrap_or(0) * p;
    let mut outputs = Vec::new();
    let mut previous: Option<Reduced> = None;
    let mut t = model.slide;
    while model.slide > 0 && t <= last {
        let cur_begin = t - model.window + p;
        let prev_begin = cur_begin - model.slide;
        let prev_end = t - model.slide;
        let (leaving_end, entering_begin) = match slicing {
            Slicing::Spark => (cur_begin - p, prev_end + p),
            Slicing::Corrected => ((cur_begin - p).min(prev_end), (prev_end + p).max(cur_begin)),
        };
        let leaving = batches.fold(prev_begin, leaving_end, model.reduce);
        let entering = batches.fold(entering_begin, t, model.reduce);
        let Some(state) = next_state(model, previous.as_deref(), &leaving, &entering) else {
            return (outputs, Some(t));
        };
        let records = state
            .iter()
            .map(|(k, v)| {
                if model.values_only {
                    json!(v)
                } else {
                    json!([k, v])
                }
            })
            .collect();
        outputs.push((t, records));
        previous = Some(state);
        t += model.slide;
    }
    (outputs, None)
}

/// One step of the incremental window: the previous window's values, minus what leaves (with
/// the inverse function), plus what enters, filtered. `None` when a key has no previous value
/// and does not enter either: Spark's failure (its previous window value is missing).
fn next_state(
    model: &InverseModel,
    previous: Option<&[(Value, i64)]>,
    leaving: &[(Value, i64)],
    entering: &[(Value, i64)],
) -> Option<Reduced> {
    let mut keys: Vec<Value> = previous
        .into_iter()
        .flatten()
        .map(|(k, _)| k.clone())
        .collect();
    for (k, _) in leaving.iter().chain(entering) {
        if !keys.contains(k) {
            keys.push(k.clone());
        }
    }
    let mut state = Vec::new();
    for k in keys {
        let value = match previous.and_then(|prev| find(prev, &k)) {
            None => find(entering, &k)?,
            Some(mut v) => {
                if let Some(old) = find(leaving, &k) {
                    v = model.inverse.apply(v, old);
                }
                if let Some(new) = find(entering, &k) {
                    v = model.reduce.apply(v, new);
                }
                v
            }
        };
        if model.filter.is_none_or(|f| f.keep(value)) {
            state.push((k, value));
        }
    }
    Some(state)
}

/// Deliberate difference (b): Spark's expected output must be what Spark's slicing gives, and
/// ours what the corrected slicing gives.
pub(crate) fn check_corrected_inverse(
    case: &Case<'_>,
    expected: &Value,
    exec: &Execution,
    model: &InverseModel,
) -> Result<(), String> {
    let (spark, spark_failure) = model_inverse(model, case, Slicing::Spark);
    compare_outputs(expected.get("outputs"), &spark).map_err(|e| {
        format!("incremental window shorter than its slide: Spark's output is not the one its slicing gives ({e})")
    })?;
    let spark_failed = expected.get("error").is_some();
    if spark_failed != spark_failure.is_some() {
        return Err("incremental window shorter than its slide: Spark's failure is not the one its slicing gives".into());
    }
    let (corrected, failure) = model_inverse(model, case, Slicing::Corrected);
    match (&exec.error, failure) {
        (None, None) | (Some((Phase::Run, Error::MissingPreviousWindowValue { .. })), Some(_)) => {}
        (got, want) => {
            return Err(format!(
                "corrected incremental window: expected failure at {want:?}, got {got:?}"
            ))
        }
    }
    compare_outputs(
        Some(&json!(corrected
            .iter()
            .map(|(t, r)| json!({"time": t, "records": r}))
            .collect::<Vec<_>>())),
        &exec.outputs,
    )
    .map_err(|e| format!("corrected incremental window: {e}"))
}
