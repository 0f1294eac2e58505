//! The DStream program of a Spark case, built with `dstream-compat` from the case's chain of
//! operations, and its run on a manual clock: what the outputs, slices and errors were. Split
//! from the harness (`mod.rs`), which compares them with Spark's.

use std::cell::RefCell;
use std::rc::Rc;

use engine::dstream::{DStream, Error, InverseReduce, Partitions, StreamingContext};
use serde_json::{json, Value};

use super::compare::cmp_json;
use super::{int_field, op_name, Case, Filter, Func, Item};

/// The batches an output operation recorded: `(time, records as JSON)`.
type Recorded = Rc<RefCell<Vec<(i64, Vec<Value>)>>>;

/// Problems found inside operation functions (a sum over a string), reported after the run.
type Problems = Rc<RefCell<Vec<String>>>;

/// Values the reduce functions work on: the cases' integers, as `i64` or inside an [`Item`].
trait Arith: Clone + 'static {
    fn int(&self, problems: &Problems) -> i64;
    fn from_int(n: i64) -> Self;
}

impl Arith for i64 {
    fn int(&self, _: &Problems) -> i64 {
        *self
    }
    fn from_int(n: i64) -> Self {
        n
    }
}

impl Arith for Item {
    fn int(&self, problems: &Problems) -> i64 {
        match self {
            Item::Int(n) => *n,
            other => {
                problems
                    .borrow_mut()
                    .push(format!("reduce function applied to non-integer {other:?}"));
                0
            }
        }
    }
    fn from_int(n: i64) -> Self {
        Item::Int(n)
    }
}

fn reducer<V: Arith>(f: Func, problems: &Problems) -> impl Fn(&V, &V) -> V + 'static {
    let problems = Rc::clone(problems);
    move |a: &V, b: &V| V::from_int(f.apply(a.int(&problems), b.int(&problems)))
}

/// A stream of the chain, with the element type its operations produce.
#[derive(Clone)]
enum Stream {
    Plain(DStream<Item>),
    Pairs(DStream<(Item, Item)>),
    Longs(DStream<i64>),
    Counts(DStream<(Item, i64)>),
    Groups(DStream<(Item, Vec<Item>)>),
}

macro_rules! each_stream {
    ($stream:expr, $s:ident => $body:expr) => {
        match $stream {
            Stream::Plain($s) => Stream::Plain($body),
            Stream::Pairs($s) => Stream::Pairs($body),
            Stream::Longs($s) => Stream::Longs($body),
            Stream::Counts($s) => Stream::Counts($body),
            Stream::Groups($s) => Stream::Groups($body),
        }
    };
}

macro_rules! any_stream {
    ($stream:expr, $s:ident => $body:expr) => {
        match $stream {
            Stream::Plain($s) => $body,
            Stream::Pairs($s) => $body,
            Stream::Longs($s) => $body,
            Stream::Counts($s) => $body,
            Stream::Groups($s) => $body,
        }
    };
}

trait ToJson {
    fn json(&self) -> Value;
}

impl ToJson for Item {
    fn json(&self) -> Value {
        self.to_json()
    }
}

impl ToJson for i64 {
    fn json(&self) -> Value {
        json!(self)
    }
}

impl<A: ToJson, B: ToJson> ToJson for (A, B) {
    fn json(&self) -> Value {
        json!([self.0.json(), self.1.json()])
    }
}

impl<A: ToJson> ToJson for Vec<A> {
    fn json(&self) -> Value {
        let mut items: Vec<Value> = self.iter().map(ToJson::json).collect();
        items.sort_by(cmp_json);
        Value::Array(items)
    }
}

impl Stream {
    fn slide(&self) -> i64 {
        any_stream!(self, s => s.slide_duration())
    }

    fn as_plain(&self) -> DStream<Item> {
        match self {
            Stream::Plain(s) => s.clone(),
            Stream::Pairs(s) => s.map(|(k, v)| Item::List(vec![k.clone(), v.clone()])),
            Stream::Longs(s) => s.map(|n| Item::Int(*n)),
            Stream::Counts(s) => s.map(|(k, n)| Item::List(vec![k.clone(), Item::Int(*n)])),
            Stream::Groups(s) => {
                s.map(|(k, vs)| Item::List(vec![k.clone(), Item::List(vs.clone())]))
            }
        }
    }

    fn as_pairs(&self, problems: &Problems) -> DStream<(Item, Item)> {
        match self {
            Stream::Pairs(s) => s.clone(),
            other => {
                let problems = Rc::clone(problems);
                other.as_plain().map(move |item| match item {
                    Item::List(kv) if kv.len() == 2 => (kv[0].clone(), kv[1].clone()),
                    other => {
                        problems
                            .borrow_mut()
                            .push(format!("a keyed operation got the non-pair {other:?}"));
                        (other.clone(), Item::Int(0))
                    }
                })
            }
        }
    }

    fn collect(&self, out: &Recorded) -> Result<(), Error> {
        fn register<T: Clone + ToJson + 'static>(
            s: &DStream<T>,
            out: &Recorded,
        ) -> Result<(), Error> {
            let out = Rc::clone(out);
            s.foreach_batch(move |time, records| {
                let values = records.iter().map(ToJson::json).collect();
                out.borrow_mut().push((time, values));
            })
        }
        any_stream!(self, s => register(s, out))
    }
}

/// Where an error happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Construct,
    Start,
    Run,
    Slice,
}

impl Phase {
    /// The stage's name in the case files.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Phase::Construct => "construct",
            Phase::Start => "start",
            Phase::Run => "run",
            Phase::Slice => "slice",
        }
    }
}

/// What running a case with our library gave.
pub(crate) struct Execution {
    /// The context, once it could be built.
    pub(crate) ssc: Option<StreamingContext>,
    /// The batches the output operation got, at times relative to the zero time.
    pub(crate) outputs: Vec<(i64, Vec<Value>)>,
    /// The slices taken, as the case's `slices`.
    pub(crate) slices: Vec<Value>,
    /// Where and how the run failed, if it did.
    pub(crate) error: Option<(Phase, Error)>,
    /// Problems found inside operation functions.
    pub(crate) problems: Vec<String>,
}

/// The element type the input gets: that of the first operation that is not type-preserving.
fn input_is_pairs(ops: &[&Value]) -> bool {
    ops.iter()
        .map(|op| op_name(op))
        .find(|name| !matches!(*name, "window" | "slice"))
        .is_some_and(|name| matches!(name, "reduceByKeyAndWindow" | "groupByKeyAndWindow"))
}

fn partitions(op: &Value) -> Result<Partitions, String> {
    match int_field(op, "numPartitions")? {
        None => Ok(Partitions::Default),
        Some(n) => usize::try_from(n)
            .ok()
            .and_then(|n| Partitions::fixed(n).ok())
            .ok_or_else(|| format!("unsupported numPartitions {n}")),
    }
}

/// A failure to build one operation: `Ok(e)` is a library error (a construct-phase failure),
/// `Err(msg)` a case we cannot express.
type BuildError = Result<Error, String>;

/// The parameters an operation of the chain may carry, read before the operation is built.
struct OpParams {
    /// `windowDurationMs`, required by every windowed operation.
    window: Option<i64>,
    /// `slideDurationMs`, else the parent stream's slide.
    slide: i64,
    /// Whether the incremental (inverse-function) form is asked for.
    inverse: bool,
    /// `reduceFunc` (default sum).
    reduce: Func,
    /// `invReduceFunc` (default sub).
    inv: Func,
    /// `filterFunc`, if any.
    filter: Option<Filter>,
    /// `numPartitions`.
    parts: Partitions,
}

impl OpParams {
    /// Reads the parameters of `op`, applied to `stream`.
    fn parse(stream: &Stream, op: &Value) -> Result<OpParams, String> {
        let window = int_field(op, "windowDurationMs")?;
        let slide = int_field(op, "slideDurationMs")?.unwrap_or_else(|| stream.slide());
        let inverse = op.get("inverse").and_then(Value::as_bool).unwrap_or(false);
        let reduce = Func::parse(op.get("reduceFunc").and_then(Value::as_str), Func::Sum)?;
        let inv = Func::parse(op.get("invReduceFunc").and_then(Value::as_str), Func::Sub)?;
        let filter = match op.get("filterFunc").and_then(Value::as_str) {
            Some(f) => Some(Filter::parse(f)?),
            None => None,
        };
        let parts = partitions(op)?;
        Ok(OpParams {
            window,
            slide,
            inverse,
            reduce,
            inv,
            filter,
            parts,
        })
    }

    /// The window duration, which the operation needs.
    fn need_window(&self) -> Result<i64, BuildError> {
        self.window
            .ok_or_else(|| Err("windowDurationMs missing".to_string()))
    }
}

/// Applies one operation of the chain. `Err(Ok(e))` is a library error (a construct-phase
/// failure), `Err(Err(msg))` a case we cannot express.
fn apply(stream: &Stream, op: &Value, problems: &Problems) -> Result<Stream, BuildError> {
    let params = OpParams::parse(stream, op).map_err(Err)?;
    let slide = params.slide;
    let out = match op_name(op) {
        "window" => window(stream, params.need_window()?, slide)?,
        "reduceByKeyAndWindow" => reduce_by_key_and_window(stream, &params, problems)?,
        "reduceByWindow" => reduce_by_window(stream, &params, problems)?,
        "countByWindow" => {
            let w = params.need_window()?;
            Stream::Longs(any_stream!(stream, s => s.count_by_window(w, slide)).map_err(Ok)?)
        }
        "countByValueAndWindow" => {
            let w = params.need_window()?;
            match stream {
                Stream::Plain(s) => Stream::Counts(
                    s.count_by_value_and_window(w, slide, params.parts)
                        .map_err(Ok)?,
                ),
                other => Stream::Counts(
                    other
                        .as_plain()
                        .count_by_value_and_window(w, slide, params.parts)
                        .map_err(Ok)?,
                ),
            }
        }
        "groupByKeyAndWindow" => {
            let w = params.need_window()?;
            Stream::Groups(
                stream
                    .as_pairs(problems)
                    .group_by_key_and_window(w, slide, params.parts)
                    .map_err(Ok)?,
            )
        }
        other => return Err(Err(format!("unknown operation {other:?}"))),
    };
    if let Some(interval) = int_field(op, "checkpointIntervalMs").map_err(Err)? {
        let checkpointed = each_stream!(&out, s => s.checkpoint(interval).map_err(Ok)?);
        return Ok(checkpointed);
    }
    Ok(out)
}

/// `window`: the stream's own element type, windowed.
fn window(stream: &Stream, w: i64, slide: i64) -> Result<Stream, BuildError> {
    Ok(match stream {
        Stream::Plain(s) => Stream::Plain(s.window(w, slide).map_err(Ok)?),
        Stream::Pairs(s) => Stream::Pairs(s.window(w, slide).map_err(Ok)?),
        Stream::Longs(s) => Stream::Longs(s.window(w, slide).map_err(Ok)?),
        Stream::Counts(s) => Stream::Counts(s.window(w, slide).map_err(Ok)?),
        Stream::Groups(s) => Stream::Groups(s.window(w, slide).map_err(Ok)?),
    })
}

/// `reduceByKeyAndWindow`, plain or incremental (with its optional filter).
fn reduce_by_key_and_window(
    stream: &Stream,
    params: &OpParams,
    problems: &Problems,
) -> Result<Stream, BuildError> {
    let w = params.need_window()?;
    let (reduce, inv, slide) = (params.reduce, params.inv, params.slide);
    let pairs = stream.as_pairs(problems);
    if params.inverse {
        let mut spec = InverseReduce::new(
            reducer::<Item>(reduce, problems),
            reducer::<Item>(inv, problems),
        )
        .with_partitions(params.parts);
        if let Some(f) = params.filter {
            let problems = Rc::clone(problems);
            spec = spec.with_filter(move |_, v: &Item| f.keep(v.int(&problems)));
        }
        Ok(Stream::Pairs(
            pairs
                .reduce_by_key_and_window_inv(spec, w, slide)
                .map_err(Ok)?,
        ))
    } else {
        Ok(Stream::Pairs(
            pairs
                .reduce_by_key_and_window(reducer::<Item>(reduce, problems), w, slide, params.parts)
                .map_err(Ok)?,
        ))
    }
}

/// `reduceByWindow`, plain or incremental: over `i64`s when the stream has them, else over
/// the stream's records as [`Item`]s.
fn reduce_by_window(
    stream: &Stream,
    params: &OpParams,
    problems: &Problems,
) -> Result<Stream, BuildError> {
    let w = params.need_window()?;
    let (reduce, inv, slide) = (params.reduce, params.inv, params.slide);
    Ok(match stream {
        Stream::Longs(s) => Stream::Longs(
            if params.inverse {
                s.reduce_by_window_inv(
                    reducer::<i64>(reduce, problems),
                    reducer::<i64>(inv, problems),
                    w,
                    slide,
                )
            } else {
                s.reduce_by_window(reducer::<i64>(reduce, problems), w, slide)
            }
            .map_err(Ok)?,
        ),
        other => {
            let s = other.as_plain();
            Stream::Plain(
                if params.inverse {
                    s.reduce_by_window_inv(
                        reducer::<Item>(reduce, problems),
                        reducer::<Item>(inv, problems),
                        w,
                        slide,
                    )
                } else {
                    s.reduce_by_window(reducer::<Item>(reduce, problems), w, slide)
                }
                .map_err(Ok)?,
            )
        }
    })
}

/// Runs a case with our library.
pub(crate) fn execute(case: &Case<'_>) -> Result<Execution, String> {
    let mut exec = Execution {
        ssc: None,
        outputs: Vec::new(),
        slices: Vec::new(),
        error: None,
        problems: Vec::new(),
    };
    let ssc = match StreamingContext::new(case.batch) {
        Ok(ssc) => ssc,
        Err(e) => {
            exec.error = Some((Phase::Construct, e));
            return Ok(exec);
        }
    };
    exec.ssc = Some(ssc.clone());
    if let Some(r) = case.remember {
        ssc.remember(r).map_err(|e| e.to_string())?;
    }
    if case.trace {
        ssc.trace_slices();
    }
    let problems: Problems = Rc::new(RefCell::new(Vec::new()));
    let input = input_stream(&ssc, case)?;
    let (stream, slice_op) = match build_chain(&input, &case.ops, &problems) {
        Ok(built) => built,
        Err(Ok(e)) => {
            exec.error = Some((Phase::Construct, e));
            return Ok(exec);
        }
        Err(Err(msg)) => return Err(msg),
    };

    let before_start = slice_op
        .and_then(|op| op.get("beforeStart"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if before_start {
        let result = any_stream!(&input, s => s.slice(0, case.batch).map(|_| ()));
        if let Err(e) = result {
            exec.error = Some((Phase::Slice, e));
            return Ok(exec);
        }
    }

    let outputs = Rc::new(RefCell::new(Vec::new()));
    stream.collect(&outputs).map_err(|e| e.to_string())?;
    if let Err(e) = ssc.start_at(case.clock) {
        exec.error = Some((Phase::Start, e));
        return Ok(exec);
    }
    let zero = ssc.zero_time().unwrap_or(0);
    for _ in 0..case.num_batches {
        if let Err(e) = ssc.run_batch() {
            exec.error = Some((Phase::Run, e));
            break;
        }
    }
    exec.outputs = outputs
        .borrow()
        .iter()
        .map(|(t, records)| (t - zero, records.clone()))
        .collect();

    if let (Some(op), None) = (slice_op, &exec.error) {
        if !before_start {
            take_slices(&stream, op, zero, &mut exec)?;
        }
    }
    exec.problems = problems.borrow().clone();
    Ok(exec)
}

/// The case's input as a queue stream: of pairs if the first operation that is not
/// type-preserving is keyed, else of plain records.
fn input_stream(ssc: &StreamingContext, case: &Case<'_>) -> Result<Stream, String> {
    if input_is_pairs(&case.ops) {
        let batches = case
            .batches
            .iter()
            .map(|b| {
                b.iter()
                    .map(|item| match item {
                        Item::List(kv) if kv.len() == 2 => Ok((kv[0].clone(), kv[1].clone())),
                        other => Err(format!(
                            "a keyed operation's input has the non-pair {other:?}"
                        )),
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Stream::Pairs(ssc.queue_stream(batches)))
    } else {
        Ok(Stream::Plain(ssc.queue_stream(case.batches.clone())))
    }
}

/// Applies the chain's operations to `input`, except `slice`, which is returned to be taken
/// after the run (the last one, if several).
fn build_chain<'a>(
    input: &Stream,
    ops: &[&'a Value],
    problems: &Problems,
) -> Result<(Stream, Option<&'a Value>), BuildError> {
    let mut stream = input.clone();
    let mut slice_op = None;
    for op in ops {
        if op_name(op) == "slice" {
            slice_op = Some(*op);
            continue;
        }
        stream = apply(&stream, op, problems)?;
    }
    Ok((stream, slice_op))
}

/// Takes the slices the `slice` operation `op` asks for, after the run; a failing slice is the
/// execution's error and ends the slicing.
fn take_slices(stream: &Stream, op: &Value, zero: i64, exec: &mut Execution) -> Result<(), String> {
    for interval in op["intervals"].as_array().into_iter().flatten() {
        let bound = |i: usize| {
            interval
                .get(i)
                .and_then(Value::as_i64)
                .ok_or_else(|| format!("bad slice interval {interval}"))
        };
        let (from, to) = (bound(0)?, bound(1)?);
        let sliced = any_stream!(stream, s => s.slice(from + zero, to + zero).map(|batches| {
            batches
                .iter()
                .map(|b| {
                    let mut records: Vec<Value> = b.iter().map(ToJson::json).collect();
                    records.sort_by(cmp_json);
                    Value::Array(records)
                })
                .collect::<Vec<_>>()
        }));
        match sliced {
            Ok(rdds) => exec
                .slices
                .push(json!({"fromMs": from, "toMs": to, "rdds": rdds})),
            Err(e) => {
                exec.error = Some((Phase::Slice, e));
                break;
            }
        }
    }
    Ok(())
}
