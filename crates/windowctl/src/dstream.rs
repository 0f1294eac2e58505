//! `windowctl dstream`: a Spark Streaming DStream job (the `dstream-compat` crate) over the
//! engine's sources, so that Spark's batch windows can be run on any input, the bundled flights
//! data by default.
//!
//! # Batches
//!
//! Events become the batches of a queue input stream in one of two ways (`--batches-by`):
//!
//! * **event** (default): by event time. The whole input is read first (the bundled file is
//!   not sorted by time; 328,521 events fit easily in memory), then each event goes to batch
//!   `floor((event_time - zero) / I)`, where `I` is the batch interval and `zero` the last
//!   multiple of `I` at or before the earliest event. Batch `i` runs at time
//!   `zero + (i + 1) · I` and holds the events of `[zero + i·I, zero + (i + 1)·I)`, in input
//!   order. Since every event is known before the first batch runs, no event is late and no
//!   watermark is needed (it is the watermark of an unbounded out-of-orderness bound).
//! * **processing**: by arrival, as Spark's receivers do. An event belongs to the batch of the
//!   wall-clock time at which it is read; `zero` is the clock at start floored to `I`. A batch
//!   runs when the clock has passed its end and the next event arrives, or at the end of the
//!   input (there is no timer thread: with a quiet `stdin` the batches wait for input).
//!
//! After the last batch with events, batches keep running until every window that holds one
//! of its events has been output (up to `last batch time + window - I`).
//!
//! # Output
//!
//! CSV with the header `batch_time,key,result`, one row per record of each output batch
//! (`batch_time` in ms since the epoch, the window's end). Rows of a batch are sorted by key.
//! `result` is a number (`format_number`), the event's value for `window`, or `[v1;v2;...]`
//! for `group-by-key-and-window`; `key` is empty for the operations over all events
//! (`count-by-window`, `reduce-by-window`). An empty window writes no row. A summary goes to
//! stderr.

use std::cell::RefCell;
use std::io::Write;
use std::path::Path;
use std::rc::Rc;
use std::time::Instant;

use engine::timers::{Clock, SystemClock};

use anyhow::{anyhow, bail, Context, Result};
use engine::dstream::{DStream, InverseReduce, Partitions, Retention, StreamingContext};

use engine::io::{
    create_output, format_list, format_number, open_source, same_file, EventReader, FieldNames,
    InputFormat, InputSpec, BUNDLED_DATA,
};
use engine::job::duration::parse_duration;

/// More batches than this between the earliest and the latest event is refused: the batch
/// interval is too small for the time span of the input.
pub(crate) const MAX_BATCHES: i64 = 10_000_000;

/// Most batches one window may span in the plain (non-incremental) form, which reads every batch
/// of every window: beyond this a job's cost explodes (`--inverse` has no such limit).
pub(crate) const MAX_PLAIN_WINDOW_BATCHES: i64 = 10_000;

/// The DStream operation of a job (Spark's method in parentheses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DstreamOperation {
    /// Per key, the aggregate of its values in the window (`reduceByKeyAndWindow`).
    ReduceByKeyAndWindow,
    /// The number of events in the window (`countByWindow`; always incremental in Spark).
    CountByWindow,
    /// Per key, its number of events in the window (`countByValueAndWindow` on the keys;
    /// always incremental in Spark).
    CountByValueAndWindow,
    /// Every event of the window (`window`).
    Window,
    /// Per key, all its values in the window (`groupByKeyAndWindow`).
    GroupByKeyAndWindow,
    /// The aggregate of all values in the window (`reduceByWindow`).
    ReduceByWindow,
}

/// The aggregate of `reduce-by-key-and-window` and `reduce-by-window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DstreamAgg {
    /// The sum of the values.
    Sum,
    /// The number of events.
    Count,
    /// The smallest value (not invertible).
    Min,
    /// The largest value (not invertible).
    Max,
}

/// How events are cut into batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum BatchesBy {
    /// By event time (the time field), after reading the whole input.
    Event,
    /// By the wall-clock time at which each event is read.
    Processing,
}

/// The options of `windowctl dstream`.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct DstreamArgs {
    /// Input file (`.gz` is decompressed) or `-` for stdin. Default: the bundled flights data.
    #[arg(long, value_name = "PATH|-", default_value = BUNDLED_DATA)]
    pub input: String,

    /// Input format. Default: jsonl for `.jsonl`/`.json` files, else csv.
    #[arg(long, value_name = "csv|jsonl")]
    pub format: Option<InputFormat>,

    /// Field holding the event time as integer milliseconds since the epoch.
    #[arg(long, default_value = "event_time_ms", value_name = "NAME")]
    pub time_field: String,

    /// Field holding the key.
    #[arg(long, default_value = "key", value_name = "NAME")]
    pub key_field: String,

    /// Field holding the numeric value.
    #[arg(long, default_value = "value", value_name = "NAME")]
    pub value_field: String,

    /// The batch interval (Spark's batchDuration); units ms, s, min, h, d.
    #[arg(long, default_value = "1h", value_name = "D")]
    pub batch_interval: String,

    /// The window duration: a multiple of the batch interval (0 gives empty windows).
    #[arg(long, default_value = "1d", value_name = "D")]
    pub window: String,

    /// The slide duration: a multiple of the batch interval. Default: the batch interval.
    #[arg(long, value_name = "D")]
    pub slide: Option<String>,

    /// The DStream operation.
    #[arg(long, value_enum, default_value = "reduce-by-key-and-window")]
    pub operation: DstreamOperation,

    /// The aggregate of reduce-by-key-and-window and reduce-by-window.
    #[arg(long, value_enum, default_value = "count")]
    pub agg: DstreamAgg,

    /// Compute reduce-by-key-and-window / reduce-by-window incrementally (previous window +
    /// entering batches - leaving batches; sum and count only). Keys whose values all left
    /// the window stay with 0, as in Spark.
    #[arg(long)]
    pub inverse: bool,

    /// Cut events into batches by event time (`event`) or by arrival (`processing`).
    #[arg(long, value_enum, default_value = "event")]
    pub batches_by: BatchesBy,

    /// Write the results to this file instead of stdout.
    #[arg(long, value_name = "PATH")]
    pub output: Option<String>,
}

/// What a run did, for the stderr summary and tests.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DstreamSummary {
    /// Events read.
    events: u64,
    /// The zero time of the context, in ms (`None` without events).
    zero_time: Option<i64>,
    /// Batches run.
    batches: u64,
    /// Output batches (windows) produced.
    outputs: u64,
    /// Rows written.
    rows: u64,
}

/// A validated job.
#[derive(Debug, Clone, Copy)]
struct Plan {
    interval: i64,
    window: i64,
    slide: i64,
    operation: DstreamOperation,
    agg: DstreamAgg,
    inverse: bool,
    batches_by: BatchesBy,
}

fn duration(flag: &str, text: &str) -> Result<i64> {
    parse_duration(text).map_err(|e| anyhow!("--{flag}: {e}"))
}

fn plan(args: &DstreamArgs) -> Result<Plan> {
    let interval = duration("batch-interval", &args.batch_interval)?;
    if interval == 0 {
        bail!("--batch-interval must be positive");
    }
    let window = duration("window", &args.window)?;
    let slide = match &args.slide {
        Some(s) => duration("slide", s)?,
        None => interval,
    };
    if slide == 0 {
        // Spark accepts a zero slide and fails at the first batch; say it up front.
        bail!("--slide must be positive");
    }
    let reduces = matches!(
        args.operation,
        DstreamOperation::ReduceByKeyAndWindow | DstreamOperation::ReduceByWindow
    );
    if !reduces && args.inverse {
        bail!("--inverse applies to reduce-by-key-and-window and reduce-by-window only");
    }
    if !reduces && args.agg != DstreamAgg::Count {
        bail!("--agg applies to reduce-by-key-and-window and reduce-by-window only; the other operations count or list");
    }
    if args.inverse
        && matches!(args.agg, DstreamAgg::Min | DstreamAgg::Max)
        && matches!(
            args.operation,
            DstreamOperation::ReduceByKeyAndWindow | DstreamOperation::ReduceByWindow
        )
    {
        bail!(
            "--inverse needs an invertible aggregate (sum or count), not {:?}",
            args.agg
        );
    }
    // Guards against jobs that would not finish: the drain after the last event runs a window
    // of batches, and the plain form reads every batch of every window.
    let window_batches = window / interval;
    if window_batches > MAX_BATCHES {
        bail!(
            "--window {window} ms is {window_batches} batches of {interval} ms (more than {MAX_BATCHES}); use a larger --batch-interval"
        );
    }
    let plain_window_work = if args.inverse {
        1
    } else {
        window_batches.max(1)
    };
    if plain_window_work > MAX_PLAIN_WINDOW_BATCHES {
        bail!(
            "--window {window} ms spans {window_batches} batches of {interval} ms: the plain form recomputes each window from all of them (more than {MAX_PLAIN_WINDOW_BATCHES}); use --inverse or a larger --batch-interval"
        );
    }
    Ok(Plan {
        interval,
        window,
        slide,
        operation: args.operation,
        agg: args.agg,
        inverse: args.inverse,
        batches_by: args.batches_by,
    })
}

/// Runs a DStream job as `windowctl dstream` does: reads the input, cuts it into batches,
/// runs the operation and writes CSV `batch_time,key,result` to stdout or `--output`, with a
/// summary on stderr. See the module documentation for batches and output.
///
/// # Errors
/// A bad option (duration, aggregate), a window or slide that is not a multiple of the batch
/// interval (Spark's message), an input that cannot be opened or a bad record (naming source,
/// line and field), an output that cannot be written, an input spanning more than
/// [`MAX_BATCHES`] batches.
pub(crate) fn run_dstream(args: &DstreamArgs) -> Result<()> {
    let plan = plan(args)?;
    let spec = InputSpec::parse(&args.input);
    if let (InputSpec::File(input), Some(output)) = (&spec, args.output.as_deref()) {
        if output != "-" && same_file(input, Path::new(output)) {
            bail!("--output {output} is also the input: writing it would destroy the input");
        }
    }
    let format = args.format.unwrap_or_else(|| match &spec {
        InputSpec::File(p) => InputFormat::from_path(p),
        _ => InputFormat::Csv,
    });
    let fields = FieldNames {
        time: args.time_field.clone(),
        key: args.key_field.clone(),
        value: args.value_field.clone(),
    };
    let reader = open_source(&spec, format, fields)?;
    let target = args.output.as_deref().unwrap_or("-");
    let out = create_output(target)?;
    let started = Instant::now();
    let summary = run_on(reader, plan, std::io::BufWriter::new(out), || {
        SystemClock.now_ms()
    })?;
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "dstream: {} events read from {}, {} batches of {} ms (zero time {}), {} windows output, {} rows written, {:.2} s ({:.0} events/s)",
        summary.events,
        spec.source_name(),
        summary.batches,
        plan.interval,
        summary.zero_time.map_or_else(|| "-".to_owned(), |z| z.to_string()),
        summary.outputs,
        summary.rows,
        secs,
        summary.events as f64 / secs.max(1e-9),
    );
    Ok(())
}

/// One output row.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    time: i64,
    key: String,
    result: String,
}

type Rows = Rc<RefCell<Vec<Row>>>;

/// The job on an open reader, writing CSV to `out`; `clock` gives the wall clock in ms (for
/// `--batches-by processing`).
fn run_on<W: Write>(
    mut reader: EventReader,
    plan: Plan,
    out: W,
    clock: impl Fn() -> i64,
) -> Result<DstreamSummary> {
    let ssc = StreamingContext::new(plan.interval)?;
    let (queue, input) = ssc.queue_input_with::<(String, f64)>(Retention::UntilForgotten);
    let rows: Rows = Rc::new(RefCell::new(Vec::new()));
    let outputs = Rc::new(RefCell::new(0_u64));
    build(&input, plan, &rows, &outputs)?;

    let mut csv = csv::Writer::from_writer(out);
    csv.write_record(["batch_time", "key", "result"])
        .context("writing output")?;
    let mut summary = DstreamSummary {
        events: 0,
        zero_time: None,
        batches: 0,
        outputs: 0,
        rows: 0,
    };
    let flush = |csv: &mut csv::Writer<W>, summary: &mut DstreamSummary| -> Result<()> {
        let mut pending = rows.borrow_mut();
        for row in pending.drain(..) {
            csv.write_record([row.time.to_string(), row.key, row.result])
                .context("writing output")?;
            summary.rows += 1;
        }
        Ok(())
    };

    let last_batch_time = match plan.batches_by {
        BatchesBy::Event => {
            let mut events = Vec::new();
            for event in reader.by_ref() {
                let event = event?;
                events.push((event.timestamp, event.key, event.value));
            }
            summary.events = events.len() as u64;
            let Some(min) = events.iter().map(|e| e.0).min() else {
                csv.flush().context("writing output")?;
                return Ok(summary);
            };
            let max = events.iter().map(|e| e.0).max().unwrap_or(min);
            let zero = min.div_euclid(plan.interval) * plan.interval;
            let count = (max - zero) / plan.interval + 1;
            if count > MAX_BATCHES {
                bail!(
                    "the events span {count} batches of {} ms (more than {MAX_BATCHES}); use a larger --batch-interval",
                    plan.interval
                );
            }
            let mut batches: Vec<Vec<(String, f64)>> =
                vec![Vec::new(); usize::try_from(count).unwrap_or(0)];
            for (t, key, value) in events {
                let index = usize::try_from((t - zero) / plan.interval).unwrap_or(0);
                batches[index].push((key, value));
            }
            ssc.start_at(zero)?;
            summary.zero_time = Some(zero);
            for batch in batches {
                queue.push(batch);
                ssc.run_batch()?;
                summary.batches += 1;
                flush(&mut csv, &mut summary)?;
            }
            zero + count * plan.interval
        }
        BatchesBy::Processing => {
            let zero = clock().div_euclid(plan.interval) * plan.interval;
            ssc.start_at(zero)?;
            summary.zero_time = Some(zero);
            let mut current: Vec<(String, f64)> = Vec::new();
            let mut last_with_events = zero;
            for event in reader.by_ref() {
                let event = event?;
                summary.events += 1;
                let now = clock();
                // Run every batch whose end has passed before this event arrived.
                while now >= zero + (summary.batches as i64 + 1) * plan.interval {
                    if !current.is_empty() {
                        last_with_events = zero + (summary.batches as i64 + 1) * plan.interval;
                    }
                    queue.push(std::mem::take(&mut current));
                    ssc.run_batch()?;
                    summary.batches += 1;
                    flush(&mut csv, &mut summary)?;
                }
                current.push((event.key, event.value));
            }
            if !current.is_empty() {
                last_with_events = zero + (summary.batches as i64 + 1) * plan.interval;
                queue.push(current);
                ssc.run_batch()?;
                summary.batches += 1;
                flush(&mut csv, &mut summary)?;
            }
            last_with_events
        }
    };
    // Drain: run until the last window holding the last batch with events.
    let end = last_batch_time + plan.window - plan.interval;
    while ssc
        .current_time()
        .is_some_and(|now| now + plan.interval <= end)
    {
        ssc.run_batch()?;
        summary.batches += 1;
        flush(&mut csv, &mut summary)?;
    }
    csv.flush().context("writing output")?;
    summary.outputs = *outputs.borrow();
    Ok(summary)
}

/// Registers an output that turns each output batch into rows.
fn emit<T: Clone + 'static>(
    stream: &DStream<T>,
    rows: &Rows,
    outputs: &Rc<RefCell<u64>>,
    row: impl Fn(&T) -> (String, String) + 'static,
) -> Result<()> {
    let rows = Rc::clone(rows);
    let outputs = Rc::clone(outputs);
    stream.foreach_batch(move |time, records| {
        *outputs.borrow_mut() += 1;
        let mut batch: Vec<(String, String)> = records.iter().map(&row).collect();
        batch.sort();
        rows.borrow_mut().extend(
            batch
                .into_iter()
                .map(|(key, result)| Row { time, key, result }),
        );
    })?;
    Ok(())
}

fn reducer(agg: DstreamAgg) -> fn(&f64, &f64) -> f64 {
    match agg {
        DstreamAgg::Sum | DstreamAgg::Count => |a, b| a + b,
        DstreamAgg::Min => |a, b| a.min(*b),
        DstreamAgg::Max => |a, b| a.max(*b),
    }
}

fn build(
    input: &DStream<(String, f64)>,
    plan: Plan,
    rows: &Rows,
    outputs: &Rc<RefCell<u64>>,
) -> Result<()> {
    let (w, s) = (plan.window, plan.slide);
    let number = |v: &f64| format_number(*v);
    // `count` counts events: each value becomes 1.
    let values = if plan.agg == DstreamAgg::Count {
        input.map(|(k, _)| (k.clone(), 1.0))
    } else {
        input.clone()
    };
    let f = reducer(plan.agg);
    match plan.operation {
        DstreamOperation::ReduceByKeyAndWindow => {
            let stream = if plan.inverse {
                values.reduce_by_key_and_window_inv(
                    InverseReduce::new(f, |a: &f64, b: &f64| a - b),
                    w,
                    s,
                )?
            } else {
                values.reduce_by_key_and_window(f, w, s, Partitions::Default)?
            };
            emit(&stream, rows, outputs, move |(k, v)| (k.clone(), number(v)))
        }
        DstreamOperation::ReduceByWindow => {
            let all = values.map(|(_, v)| *v);
            let stream = if plan.inverse {
                all.reduce_by_window_inv(f, |a: &f64, b: &f64| a - b, w, s)?
            } else {
                all.reduce_by_window(f, w, s)?
            };
            emit(&stream, rows, outputs, move |v| (String::new(), number(v)))
        }
        DstreamOperation::CountByWindow => {
            let stream = input.count_by_window(w, s)?;
            emit(&stream, rows, outputs, |n| (String::new(), n.to_string()))
        }
        DstreamOperation::CountByValueAndWindow => {
            let stream = input.map(|(k, _)| k.clone()).count_by_value_and_window(
                w,
                s,
                Partitions::Default,
            )?;
            emit(&stream, rows, outputs, |(k, n)| (k.clone(), n.to_string()))
        }
        DstreamOperation::Window => {
            let stream = input.window(w, s)?;
            emit(&stream, rows, outputs, move |(k, v)| (k.clone(), number(v)))
        }
        DstreamOperation::GroupByKeyAndWindow => {
            let stream = input.group_by_key_and_window(w, s, Partitions::Default)?;
            emit(&stream, rows, outputs, move |(k, vs)| {
                (k.clone(), format_list(vs))
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    fn args(extra: &[&str]) -> DstreamArgs {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: DstreamArgs,
        }
        let mut argv = vec!["windowctl-dstream"];
        argv.extend_from_slice(extra);
        Cli::parse_from(argv).args
    }

    fn run_csv(input: &str, extra: &[&str], clock: i64) -> (String, DstreamSummary) {
        let plan = plan(&args(extra)).unwrap();
        let reader = EventReader::new(
            Cursor::new(input.to_owned()),
            "test",
            InputFormat::Csv,
            FieldNames::default(),
        );
        let mut out = Vec::new();
        let summary = run_on(reader, plan, &mut out, move || clock).unwrap();
        (String::from_utf8(out).unwrap(), summary)
    }

    // Events (unsorted) at 500, 1500, 1200, 3100 ms; 1 s batches from zero 0: batch 1000
    // {a:2}, batch 2000 {b:1, a:4}, batch 3000 {}, batch 4000 {a:8}. The expected rows follow
    // from the window definition (docs/dstream.md): window 2 s at t holds batches t-1000, t.
    const EVENTS: &str = "event_time_ms,key,value\n500,a,2\n1500,b,1\n1200,a,4\n3100,a,8\n";

    #[test]
    fn sum_by_key_over_event_time_batches() {
        let (csv, summary) = run_csv(
            EVENTS,
            &["--batch-interval", "1s", "--window", "2s", "--agg", "sum"],
            0,
        );
        assert_eq!(
            csv,
            "batch_time,key,result\n\
             1000,a,2\n\
             2000,a,6\n2000,b,1\n\
             3000,a,4\n3000,b,1\n\
             4000,a,8\n\
             5000,a,8\n"
        );
        // Batches 1000..4000 with events, then 5000 (the last window holding batch 4000).
        assert_eq!(summary.batches, 5);
        assert_eq!(summary.outputs, 5);
        assert_eq!(summary.rows, 7);
        assert_eq!(summary.zero_time, Some(0));
    }

    #[test]
    fn inverse_count_keeps_zero_keys() {
        let (csv, _) = run_csv(
            EVENTS,
            &[
                "--batch-interval",
                "1s",
                "--window",
                "2s",
                "--agg",
                "count",
                "--inverse",
            ],
            0,
        );
        assert_eq!(
            csv,
            "batch_time,key,result\n\
             1000,a,1\n\
             2000,a,2\n2000,b,1\n\
             3000,a,1\n3000,b,1\n\
             4000,a,1\n4000,b,0\n\
             5000,a,1\n5000,b,0\n"
        );
    }

    #[test]
    fn other_operations() {
        let common = ["--batch-interval", "1s", "--window", "2s", "--slide", "2s"];
        let with = |op: &str| {
            let mut a = common.to_vec();
            a.extend(["--operation", op]);
            run_csv(EVENTS, &a, 0).0
        };
        // Windows at 2000 (batches 1000, 2000) and 4000 (batches 3000, 4000).
        assert_eq!(
            with("count-by-window"),
            "batch_time,key,result\n2000,,3\n4000,,1\n"
        );
        assert_eq!(
            with("count-by-value-and-window"),
            "batch_time,key,result\n2000,a,2\n2000,b,1\n4000,a,1\n"
        );
        assert_eq!(
            with("group-by-key-and-window"),
            "batch_time,key,result\n2000,a,[2;4]\n2000,b,[1]\n4000,a,[8]\n"
        );
        assert_eq!(
            with("window"),
            "batch_time,key,result\n2000,a,2\n2000,a,4\n2000,b,1\n4000,a,8\n"
        );
        let mut max = common.to_vec();
        max.extend(["--operation", "reduce-by-window", "--agg", "max"]);
        assert_eq!(
            run_csv(EVENTS, &max, 0).0,
            "batch_time,key,result\n2000,,4\n4000,,8\n"
        );
    }

    #[test]
    fn processing_time_puts_a_fast_file_in_one_batch() {
        // The clock stands at 10,500 ms while the file is read: every event is in the batch
        // at 11,000 whatever its event time.
        let (csv, summary) = run_csv(
            EVENTS,
            &[
                "--batch-interval",
                "1s",
                "--window",
                "1s",
                "--batches-by",
                "processing",
                "--agg",
                "sum",
            ],
            10_500,
        );
        assert_eq!(csv, "batch_time,key,result\n11000,a,14\n11000,b,1\n");
        assert_eq!(summary.zero_time, Some(10_000));
        assert_eq!(summary.events, 4);
    }

    #[test]
    fn spark_validation_and_option_errors() {
        let plan_ok = plan(&args(&["--batch-interval", "1s", "--window", "1500ms"])).unwrap();
        let reader = EventReader::new(
            Cursor::new(EVENTS.to_owned()),
            "test",
            InputFormat::Csv,
            FieldNames::default(),
        );
        let err = run_on(reader, plan_ok, Vec::new(), || 0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the window duration of WindowedDStream (1500 ms) must be a multiple of the slide \
             duration of parent DStream (1000 ms)"
        );
        let err = plan(&args(&["--inverse", "--agg", "max"])).unwrap_err();
        assert!(err.to_string().contains("invertible"), "{err}");
        assert!(plan(&args(&["--slide", "0"])).is_err());
    }

    fn run_bundled(extra: &[&str]) -> (String, DstreamSummary) {
        let plan = plan(&args(extra)).unwrap();
        let reader = open_source(
            &InputSpec::parse(BUNDLED_DATA),
            InputFormat::Csv,
            FieldNames::default(),
        )
        .unwrap();
        let mut out = Vec::new();
        let summary = run_on(reader, plan, &mut out, || 0).unwrap();
        (String::from_utf8(out).unwrap(), summary)
    }

    fn rows(csv: &str) -> Vec<(i64, String, String)> {
        csv.lines()
            .skip(1)
            .map(|l| {
                let mut f = l.splitn(3, ',');
                let t = f.next().unwrap().parse().unwrap();
                (
                    t,
                    f.next().unwrap().to_owned(),
                    f.next().unwrap().to_owned(),
                )
            })
            .collect()
    }

    /// The bundled data holds 328,521 departures (README.md, data/README.md): daily tumbling
    /// counts add up to that, and the plain and incremental weekly counts per destination agree
    /// except for the zero rows the incremental form keeps.
    #[test]
    fn bundled_flights_add_up() {
        let day = ["--batch-interval", "1d", "--window", "1d"];
        let (csv, summary) = run_bundled(&[&day[..], &["--operation", "count-by-window"]].concat());
        assert_eq!(summary.events, 328_521);
        let total: i64 = rows(&csv).iter().map(|r| r.2.parse::<i64>().unwrap()).sum();
        assert_eq!(total, 328_521);

        let week = ["--batch-interval", "1d", "--window", "7d", "--agg", "count"];
        let (plain, _) = run_bundled(&week);
        let (incremental, _) = run_bundled(&[&week[..], &["--inverse"]].concat());
        let incremental: Vec<_> = rows(&incremental)
            .into_iter()
            .filter(|r| r.2 != "0")
            .collect();
        assert_eq!(rows(&plain), incremental);
    }

    #[test]
    fn bad_records_name_the_line() {
        let plan = plan(&args(&["--batch-interval", "1s", "--window", "10s"])).unwrap();
        let reader = EventReader::new(
            Cursor::new("event_time_ms,key,value\n1,a,1\nx,a,1\n".to_owned()),
            "test",
            InputFormat::Csv,
            FieldNames::default(),
        );
        let err = run_on(reader, plan, Vec::new(), || 0).unwrap_err();
        assert!(
            err.to_string().starts_with("test:3: field 'event_time_ms'"),
            "{err}"
        );
    }
}
