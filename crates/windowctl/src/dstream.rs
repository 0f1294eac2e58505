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
//! of its events has been output (the last valid window time at or before
//! `last batch time + window - I`).
//!
//! Every batch and window time must fit in an `i64` of milliseconds: an input whose zero time
//! would be before `i64::MIN`, whose last batch (the end of the latest event's batch) or last
//! window would be after `i64::MAX`, is refused up front, naming the event, the flags and the
//! limit, before anything is written ([`span`]).
//!
//! # Output
//!
//! CSV with the header `batch_time,key,result`, or JSON lines (`--output-format jsonl`, or an
//! `--output` named `.jsonl`, `.ndjson` or `.json`, as `windowctl run` chooses) with the same
//! members and `windowctl run`'s JSON rules ([`rows`]): one row per record of each output
//! batch (`batch_time` in ms since the epoch, the window's end). Rows of a batch are sorted by
//! key. `result` is a number (`format_number`), the event's value for `window`, or
//! `[v1;v2;...]` for `group-by-key-and-window` (a JSON array); `key` is empty (JSON `null`)
//! for the operations over all events (`count-by-window`, `reduce-by-window`). An empty window
//! writes no row. A summary goes to stderr.
//!
//! # Default input
//!
//! Without `--input`, the bundled flights data (`data/nycflights13_dest.csv.gz`), looked for
//! from the current directory up, then from the binary's folder up
//! ([`engine::io::find_bundled_data`]); an error names both places when it is not there.

use std::cell::RefCell;
use std::io::Write;
use std::path::Path;
use std::rc::Rc;
use std::time::Instant;

use engine::timers::{Clock, SystemClock};

use anyhow::{anyhow, bail, Context, Result};
use engine::dstream::{
    DStream, InverseReduce, Partitions, QueueInput, Retention, StreamingContext,
};

use engine::io::{
    find_bundled_data, open_source, same_file, CsvHeader, EventReader, EventTimes, InputFormat,
    InputSpec, OutputFormat,
};
use engine::job::duration::parse_duration;

use crate::args::InputArgs;
use crate::run::Usage;
use rows::{sort_batch, Row, RowSink, Value};
use span::{batch_time, event_batches, last_window, Durations};

mod held;
mod rows;
mod span;

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
    /// Input file (`.gz` is decompressed) or `-` for stdin. Default: the bundled flights data,
    /// data/nycflights13_dest.csv.gz under the current directory or a folder above it, else
    /// under the binary's folder or one above it.
    #[arg(long, value_name = "PATH|-")]
    pub input: Option<String>,

    /// The input format and field names.
    #[command(flatten)]
    pub input_args: InputArgs,

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

    /// Output format. Default: jsonl for a `.jsonl`/`.ndjson`/`.json` output file, else csv.
    #[arg(long, value_name = "csv|jsonl")]
    pub output_format: Option<OutputFormat>,

    /// Stop with an error (exit 1) once the job holds more records than this: events waiting
    /// for their batch (with --batches-by event the whole input is read first) and the records
    /// of the batches the streams remember for their windows, at every batch boundary. The
    /// results written up to there stay. Each record is a few dozen bytes.
    #[arg(long, default_value_t = crate::args::DEFAULT_MAX_WINDOW_STATES, value_name = "N")]
    pub max_window_states: usize,
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
    /// The most records held at a batch boundary ([`held`]).
    peak: usize,
}

/// A validated job.
#[derive(Debug, Clone, Copy)]
struct Plan {
    interval: i64,
    window: i64,
    slide: i64,
    format: OutputFormat,
    operation: DstreamOperation,
    agg: DstreamAgg,
    inverse: bool,
    batches_by: BatchesBy,
    /// `--max-window-states`: the most records the job may hold.
    max_records: usize,
}

/// A duration flag's value in ms; an error naming the flag.
fn duration(flag: &str, text: &str) -> Result<i64> {
    parse_duration(text).map_err(|e| anyhow!("--{flag}: {e}"))
}

/// The validated job of `args`: durations in ms, the operation and its options consistent,
/// and a window that does not make the job run away (see [`MAX_BATCHES`] and
/// [`MAX_PLAIN_WINDOW_BATCHES`]).
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
    let format = args.output_format.unwrap_or(match args.output.as_deref() {
        Some(p) => OutputFormat::from_path(p),
        None => OutputFormat::Csv,
    });
    Ok(Plan {
        interval,
        window,
        slide,
        format,
        operation: args.operation,
        agg: args.agg,
        inverse: args.inverse,
        batches_by: args.batches_by,
        max_records: args.max_window_states,
    })
}

/// Runs a DStream job as `windowctl dstream` does: reads the input, cuts it into batches,
/// runs the operation and writes CSV or JSON lines `batch_time,key,result` to stdout or
/// `--output`, with a summary on stderr. See the module documentation for batches and output.
///
/// # Errors
/// A bad option (duration, aggregate), a window or slide that is not a multiple of the batch
/// interval (Spark's message), no input named and the bundled data not found (naming where it
/// was looked for), an input that cannot be opened or a bad record (naming source, line and
/// field), an output that cannot be written, an input spanning more than [`MAX_BATCHES`]
/// batches, batch or window times outside `i64` (naming the event, flags and limit). The
/// errors of the flags themselves (the first two, and an `--output` that is the input) are
/// [`Usage`] errors (exit 2); the others exit with 1.
pub(crate) fn run_dstream(args: &DstreamArgs) -> Result<()> {
    // Flags that do not fit together are usage errors (exit 2), as `windowctl run`'s and clap's
    // own; what fails while the job runs (an input, the data's span) exits with 1.
    let usage = |e: anyhow::Error| anyhow::Error::from(Usage::from(e));
    let plan = plan(args).map_err(usage)?;
    let spec = match &args.input {
        Some(input) => InputSpec::parse(input),
        None => InputSpec::File(find_bundled_data()?),
    };
    if let (InputSpec::File(input), Some(output)) = (&spec, args.output.as_deref()) {
        if output != "-" && same_file(input, Path::new(output)) {
            return Err(usage(anyhow!(
                "--output {output} is also the input: writing it would destroy the input"
            )));
        }
    }
    let format = args.input_args.format.unwrap_or_else(|| match &spec {
        InputSpec::File(p) => InputFormat::from_path(p),
        _ => InputFormat::Csv,
    });
    let fields = args.input_args.field_names();
    if fields.key_fields().len() > 1 {
        return Err(usage(anyhow!(
            "--key-field {}: windowctl dstream keys by one field (Spark's pair DStreams have one \
             key); composite keys are for windowctl run",
            fields.key
        )));
    }
    if args.input_args.no_header && format == InputFormat::Jsonl {
        return Err(usage(anyhow!("--no-header: {} is JSON lines, whose fields are named by its members; --no-header and column numbers are for CSV", spec.source_name())));
    }
    let delimiter = args.input_args.delimiter;
    if format == InputFormat::Jsonl && delimiter != engine::io::Delimiter::COMMA {
        return Err(usage(anyhow!("--delimiter {delimiter}: the delimiter separates CSV fields, and the input is JSON lines")));
    }
    let mut reader = open_source(&spec, format, fields)?
        .with_time_unit(args.input_args.time_unit)
        .with_delimiter(delimiter);
    if args.input_args.no_header {
        reader = reader.with_csv_header(CsvHeader::Absent);
    }
    let target = args.output.as_deref().unwrap_or("-");
    // A `.gz` name is written gzip-compressed, as `windowctl run` writes it (the trailer is
    // written when the output is dropped at the end of the job).
    let open = || {
        Ok(std::io::BufWriter::new(NamedOutput {
            inner: crate::output::create_maybe_gzip(target)?,
            name: match target {
                "-" => "stdout".to_owned(),
                path => format!("--output {path}"),
            },
        }))
    };
    let started = Instant::now();
    let times = reader.event_times();
    let summary = run_on(reader, plan, open, || SystemClock.now_ms())?;
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
    eprintln!(
        "dstream: {}",
        held::summary_line(summary.peak, plan.max_records)
    );
    if plan.batches_by == BatchesBy::Event {
        if let Some(hint) = EventTimes::unit_hint(&[times], args.input_args.time_unit) {
            eprintln!("dstream: {hint}");
        }
    }
    Ok(())
}

/// The output, its write errors named as `windowctl run` names them (`--output PATH: ...`,
/// `stdout: ...`).
struct NamedOutput<W> {
    inner: W,
    name: String,
}

impl<W: Write> Write for NamedOutput<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf).map_err(|e| self.named(e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().map_err(|e| self.named(e))
    }
}

impl<W> NamedOutput<W> {
    fn named(&self, e: std::io::Error) -> std::io::Error {
        std::io::Error::new(e.kind(), format!("{}: {e}", self.name))
    }
}

/// The rows the outputs produced, shared with the output functions.
type Rows = Rc<RefCell<Vec<Row>>>;

/// The job on an open reader, writing to the output `open` opens, in the plan's format;
/// `clock` gives the wall clock in ms (for `--batches-by processing`). By event time the
/// output is opened after the input was read and its batch times checked, so a refused job
/// creates and writes nothing.
fn run_on<W: Write>(
    mut reader: EventReader,
    plan: Plan,
    open: impl FnOnce() -> Result<W>,
    clock: impl Fn() -> i64,
) -> Result<DstreamSummary> {
    let ssc = StreamingContext::new(plan.interval)?;
    let (queue, input) = ssc.queue_input_with::<(String, f64)>(Retention::UntilForgotten);
    let rows: Rows = Rc::new(RefCell::new(Vec::new()));
    let outputs = Rc::new(RefCell::new(0_u64));
    // Spark's checks of the window and slide against the batch interval: flags that do not fit.
    build(&input, plan, &rows, &outputs).map_err(|e| anyhow::Error::from(Usage::from(e)))?;

    let by_event = match plan.batches_by {
        BatchesBy::Event => Some(read_by_event_time(&mut reader, plan)?),
        BatchesBy::Processing => None,
    };
    let mut batches = Batches {
        ssc: &ssc,
        queue: &queue,
        rows: &rows,
        sink: RowSink::new(open()?, plan.format)?,
        summary: DstreamSummary {
            events: 0,
            zero_time: None,
            batches: 0,
            outputs: 0,
            rows: 0,
            peak: 0,
        },
        waiting: 0,
        max_records: plan.max_records,
    };
    let last_window = match by_event {
        Some(input) => by_event_time(input, plan, &mut batches)?,
        None => by_processing_time(&mut reader, plan, &mut batches, clock)?,
    };
    if let Some(last_window) = last_window {
        // Drain: run until the last window holding the last batch with events.
        while ssc.current_time().is_some_and(|now| now < last_window) {
            batches.run(None)?;
        }
    }
    batches.sink.flush()?;
    let mut summary = batches.summary;
    summary.outputs = *outputs.borrow();
    Ok(summary)
}

/// The running job: the streaming context and its queue input, the rows its outputs produce,
/// the output they go to, and the counts so far.
struct Batches<'a, W: Write> {
    /// The streaming context.
    ssc: &'a StreamingContext,
    /// The input the batches are pushed into.
    queue: &'a QueueInput<(String, f64)>,
    /// Rows the outputs produced and that are not written yet.
    rows: &'a Rows,
    /// The output.
    sink: RowSink<W>,
    /// The counts so far.
    summary: DstreamSummary,
    /// Events read and not yet pushed into a batch.
    waiting: usize,
    /// `--max-window-states`.
    max_records: usize,
}

impl<W: Write> Batches<'_, W> {
    /// Runs the next batch, with `events` pushed first (none: the queue's batch is empty),
    /// and writes the rows it produced.
    fn run(&mut self, events: Option<Vec<(String, f64)>>) -> Result<()> {
        if let Some(events) = events {
            self.queue.push(events);
        }
        self.ssc.run_batch()?;
        self.summary.batches += 1;
        {
            let mut pending = self.rows.borrow_mut();
            for row in pending.drain(..) {
                self.sink.write(row)?;
                self.summary.rows += 1;
            }
        }
        // A batch boundary: the memory bound, with the rows so far written out.
        let (waiting, retained) = (self.waiting, self.ssc.retained_records());
        self.summary.peak = self.summary.peak.max(waiting + retained);
        if let Err(e) = held::check(waiting, retained, self.max_records) {
            self.sink.flush()?;
            return Err(e);
        }
        Ok(())
    }
}

/// The durations that decide the window times of `plan`.
fn durations(plan: Plan) -> Durations {
    Durations {
        interval: plan.interval,
        window: plan.window,
        slide: plan.slide,
    }
}

/// The whole input of `--batches-by event`, cut into batches.
struct EventInput {
    /// Events read.
    events: u64,
    /// The batches; `None` without events.
    batches: Option<CutBatches>,
}

/// Events cut into the batches of an interval.
struct CutBatches {
    /// The zero time, in ms.
    zero: i64,
    /// The events of each batch from the first, in input order.
    by_batch: Vec<Vec<(String, f64)>>,
    /// The time of the last window holding an event, in ms.
    last_window: i64,
}

/// `--batches-by event`, before any batch runs: reads the whole input and cuts it into
/// batches of the interval from the earliest event's to the latest's.
///
/// # Errors
/// A bad record; batch or window times outside `i64`, or too many batches ([`span`]).
fn read_by_event_time(reader: &mut EventReader, plan: Plan) -> Result<EventInput> {
    let mut events = Vec::new();
    for event in reader.by_ref() {
        let event = event?;
        events.push((event.timestamp, event.key, event.value));
        held::check_whole_input(events.len(), plan.max_records)?;
    }
    let count = events.len() as u64;
    let Some(min) = events.iter().map(|e| e.0).min() else {
        return Ok(EventInput {
            events: 0,
            batches: None,
        });
    };
    let max = events.iter().map(|e| e.0).max().unwrap_or(min);
    let span = event_batches(min, max, plan.interval)?;
    let last = last_window(span.zero, span.last_batch, durations(plan))?;
    let mut by_batch: Vec<Vec<(String, f64)>> = vec![Vec::new(); span.count];
    for (t, key, value) in events {
        by_batch[span.index(t, plan.interval)].push((key, value.as_f64()));
    }
    Ok(EventInput {
        events: count,
        batches: Some(CutBatches {
            zero: span.zero,
            by_batch,
            last_window: last,
        }),
    })
}

/// `--batches-by event`: runs a batch per interval from the earliest event's to the latest's.
/// The time of the last window holding an event; `None` without events.
fn by_event_time<W: Write>(
    input: EventInput,
    plan: Plan,
    batches: &mut Batches<'_, W>,
) -> Result<Option<i64>> {
    batches.summary.events = input.events;
    let Some(CutBatches {
        zero,
        by_batch,
        last_window: last,
    }) = input.batches
    else {
        return Ok(None);
    };
    debug_assert_eq!(zero.rem_euclid(plan.interval), 0);
    batches.ssc.start_at(zero)?;
    batches.summary.zero_time = Some(zero);
    // Before the first batch the whole input is held.
    let mut waiting = usize::try_from(input.events).unwrap_or(usize::MAX);
    batches.summary.peak = waiting;
    for batch in by_batch {
        waiting -= batch.len();
        batches.waiting = waiting;
        batches.run(Some(batch))?;
    }
    Ok(Some(last))
}

/// `--batches-by processing`: each event goes to the batch of the wall-clock time it is read
/// at; a batch runs when the clock passed its end and the next event arrives, or at the end.
/// The time of the last window holding an event; `None` without events.
fn by_processing_time<W: Write>(
    reader: &mut EventReader,
    plan: Plan,
    batches: &mut Batches<'_, W>,
    clock: impl Fn() -> i64,
) -> Result<Option<i64>> {
    let started = clock();
    batches.ssc.start_at(started).with_context(|| {
        format!("--batches-by processing: the clock at the start, {started} ms")
    })?;
    let zero = batches.ssc.zero_time().unwrap_or(started);
    batches.summary.zero_time = Some(zero);
    let batch_end =
        |batches: &Batches<'_, W>| batch_time(zero, batches.summary.batches, plan.interval);
    let mut current: Vec<(String, f64)> = Vec::new();
    let mut last_with_events = None;
    for event in reader.by_ref() {
        let event = event?;
        batches.summary.events += 1;
        let now = clock();
        // Run every batch whose end has passed before this event arrived.
        while now >= batch_end(batches)? {
            if !current.is_empty() {
                last_with_events = Some(batch_end(batches)?);
            }
            batches.run(Some(std::mem::take(&mut current)))?;
        }
        current.push((event.key, event.value.as_f64()));
        if let Err(e) = held::check_current(current.len(), plan.max_records) {
            batches.sink.flush()?;
            return Err(e);
        }
    }
    if !current.is_empty() {
        last_with_events = Some(batch_end(batches)?);
        batches.run(Some(current))?;
    }
    last_with_events
        .map(|last| last_window(zero, last, durations(plan)))
        .transpose()
}

/// Registers an output that turns each output batch into rows (sorted, see
/// [`rows::sort_batch`]).
fn emit<T: Clone + 'static>(
    stream: &DStream<T>,
    rows: &Rows,
    outputs: &Rc<RefCell<u64>>,
    row: impl Fn(&T) -> (Option<String>, Value) + 'static,
) -> Result<()> {
    let rows = Rc::clone(rows);
    let outputs = Rc::clone(outputs);
    stream.foreach_batch(move |time, records| {
        *outputs.borrow_mut() += 1;
        let mut batch: Vec<(Option<String>, Value)> = records.iter().map(&row).collect();
        sort_batch(&mut batch);
        rows.borrow_mut().extend(
            batch
                .into_iter()
                .map(|(key, result)| Row { time, key, result }),
        );
    })?;
    Ok(())
}

/// The reduce function of `agg` (`count` sums ones).
fn reducer(agg: DstreamAgg) -> fn(&f64, &f64) -> f64 {
    match agg {
        DstreamAgg::Sum | DstreamAgg::Count => |a, b| a + b,
        DstreamAgg::Min => |a, b| a.min(*b),
        DstreamAgg::Max => |a, b| a.max(*b),
    }
}

/// Builds the DStream graph of `plan` over `input`, its outputs writing to `rows` and counting
/// into `outputs`.
fn build(
    input: &DStream<(String, f64)>,
    plan: Plan,
    rows: &Rows,
    outputs: &Rc<RefCell<u64>>,
) -> Result<()> {
    let (w, s) = (plan.window, plan.slide);
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
            emit(&stream, rows, outputs, |(k, v)| {
                (Some(k.clone()), Value::Num(*v))
            })
        }
        DstreamOperation::ReduceByWindow => {
            let all = values.map(|(_, v)| *v);
            let stream = if plan.inverse {
                all.reduce_by_window_inv(f, |a: &f64, b: &f64| a - b, w, s)?
            } else {
                all.reduce_by_window(f, w, s)?
            };
            emit(&stream, rows, outputs, |v| (None, Value::Num(*v)))
        }
        DstreamOperation::CountByWindow => {
            let stream = input.count_by_window(w, s)?;
            emit(&stream, rows, outputs, |n| (None, Value::Count(*n)))
        }
        DstreamOperation::CountByValueAndWindow => {
            let stream = input.map(|(k, _)| k.clone()).count_by_value_and_window(
                w,
                s,
                Partitions::Default,
            )?;
            emit(&stream, rows, outputs, |(k, n)| {
                (Some(k.clone()), Value::Count(*n))
            })
        }
        DstreamOperation::Window => {
            let stream = input.window(w, s)?;
            emit(&stream, rows, outputs, |(k, v)| {
                (Some(k.clone()), Value::Num(*v))
            })
        }
        DstreamOperation::GroupByKeyAndWindow => {
            let stream = input.group_by_key_and_window(w, s, Partitions::Default)?;
            emit(&stream, rows, outputs, |(k, vs)| {
                (Some(k.clone()), Value::List(vs.clone()))
            })
        }
    }
}

#[cfg(test)]
mod tests;
