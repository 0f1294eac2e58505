//! `windowctl`: run Flink-style window jobs over CSV or JSON-lines events from a file, stdin or a
//! TCP socket, and print the window results.
//!
//! `windowctl run` with no options runs the default job on the bundled real data set (NYC
//! flights 2013 keyed by destination airport): the mean departure delay over a 1 h window
//! sliding every 5 min, in event time, with a 6 h watermark delay (the bundled profile shows
//! that 0.1 % of the flights arrive more than 5.3 h behind the latest event time seen).

mod dstream;

use std::io::{ErrorKind, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use engine::assigners::TimeDomain;
use engine::core::{AnyWindow, ElementError, Window, WindowOutput};
use engine::io::{
    create_output, format_number, open_source, same_file, DeadLetterWriter, ErrorPolicy, Event,
    FieldNames, InputError, InputErrorKind, InputFormat, InputSpec, LateWriter, OnError,
    OutputFormat, ResultRecord, ResultWriter, BUNDLED_DATA,
};
use engine::job::duration::parse_duration;
use engine::job::{
    Computation, EvictorSpec, JobAggregate, JobResult, JobSpec, Strategy, TriggerSpec, WindowSpec,
};
use engine::keywindow::EmitMode;
use engine::operator::LateDataPolicy;
use engine::runtime::{
    DescribeRejection, ReaderSource, Runtime, RuntimeConfig, RuntimeError, Step,
};

/// Watermark delay of the default job (see the module doc).
const BUNDLED_OUT_OF_ORDERNESS: &str = "6h";

#[derive(Parser, Debug)]
#[command(name = "windowctl", version, about = "Flink-style window jobs over event streams", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a window job and print its results (CSV header: key,window_start,window_end,result).
    ///
    /// Without options: the bundled NYC flights 2013 data keyed by destination, mean departure
    /// delay (minutes) over 1 h windows sliding every 5 min, event time, 6 h watermark delay.
    Run(Box<RunArgs>),
    /// Run a Spark-Streaming-style DStream job: events cut into batches, windowed by batch
    /// (window and slide are multiples of the batch interval), per-batch results as CSV
    /// batch_time,key,result. Without options: daily flight counts per destination airport
    /// from hourly batches of the bundled data.
    Dstream(crate::dstream::DstreamArgs),
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Input file (`.gz` is decompressed) or `-` for stdin; repeat for several inputs, whose
    /// watermarks are combined (the minimum). Default: the bundled flights data.
    #[arg(long, value_name = "PATH|-")]
    input: Vec<String>,

    /// Read from a TCP server at HOST:PORT (like Flink's socketTextStream), e.g. one started with
    /// `nc -lk 7777`; repeatable. In CSV the header line is optional.
    #[arg(long, value_name = "HOST:PORT")]
    socket: Vec<String>,

    /// With several inputs: an input without elements for this long stops holding the watermark
    /// back until it produces again (Flink's withIdleness). The watermark never goes back.
    #[arg(long, allow_hyphen_values = true, value_name = "D")]
    idle_timeout: Option<String>,

    /// Window all elements together, ignoring the key (Flink's windowAll); results have an
    /// empty key.
    #[arg(long)]
    window_all: bool,

    /// Input format. Default: jsonl for `.jsonl`/`.json` files, else csv.
    #[arg(long, value_name = "csv|jsonl")]
    format: Option<InputFormat>,

    /// Field holding the event time as integer milliseconds since the epoch.
    #[arg(long, default_value = "event_time_ms", value_name = "NAME")]
    time_field: String,

    /// Field holding the key.
    #[arg(long, default_value = "key", value_name = "NAME")]
    key_field: String,

    /// Field holding the numeric value.
    #[arg(long, default_value = "value", value_name = "NAME")]
    value_field: String,

    /// Windows: tumbling:SIZE[:OFFSET], sliding:SIZE:SLIDE[:OFFSET], session:GAP, session:value
    /// (gap = each element's value in ms), global, global:end-of-stream, count:N (every N
    /// elements of a key) or count:N:M (the last N elements, every M). Durations take units ms,
    /// s, min, h, d (e.g. sliding:1h:5min, tumbling:1d:-8h).
    #[arg(long, default_value = "sliding:1h:5min", value_name = "SPEC")]
    window: WindowSpec,

    /// Aggregate per window: count, sum, min, max, mean.
    #[arg(long, default_value = "mean", value_name = "AGG")]
    agg: String,

    /// Time domain of the windows: event (the time field) or processing (the wall clock when
    /// the element arrives).
    #[arg(long, default_value = "event", value_name = "event|processing")]
    time: String,

    /// Watermark delay for bounded out-of-orderness: watermark = max event time seen - D - 1 ms.
    /// Elements further behind are late. Default: 6h for the default job (no --input and no
    /// --socket), else 0; real data usually needs more (the bundled flights: 6h).
    #[arg(long, allow_hyphen_values = true, value_name = "D")]
    out_of_orderness: Option<String>,

    /// How often the watermark is emitted, in processing time; 0 (the default) emits it after
    /// every element, which makes runs over a file reproducible. Flink's default is 200ms.
    #[arg(
        long,
        allow_hyphen_values = true,
        default_value = "0",
        value_name = "D"
    )]
    watermark_interval: String,

    /// How long after its end a window still accepts late elements (and fires again for each).
    #[arg(
        long,
        allow_hyphen_values = true,
        default_value = "0",
        value_name = "D"
    )]
    allowed_lateness: String,

    /// Trigger replacing the window's default: default, event-time, processing-time, count:N,
    /// purging:TRIGGER, never, continuous:INTERVAL, delta:THRESHOLD[:abs|diff].
    #[arg(long, default_value = "default", value_name = "SPEC")]
    trigger: TriggerSpec,

    /// How sliding windows are computed: native (Flink's operator: every window of every
    /// element, a result per non-empty window); keywindow (two windows per element, a result
    /// only where it changes, plus one result with `empty` = true when a key's window becomes
    /// empty; output gets an `empty` column); sliced (per-key partial aggregates of non-empty
    /// slices: the native output's rows (sums and means may differ in the last digits: partial
    /// sums are added in another order), at a cost that does not grow with size/slide; rows of
    /// one watermark step may come in another order, as across keys in Flink); sliced:changes
    /// (sliced, with the keywindow output; also sliced --emit changes). sliced:all is sliced. keywindow and sliced need elements in time order:
    /// in event time an element behind the watermark is late for them (Flink would still add it
    /// to its windows that have not fired), so give --out-of-orderness enough room for the
    /// input's disorder. See docs/keywindow.md and docs/sliced.md.
    #[arg(
        long,
        default_value = "native",
        value_name = "native|keywindow|sliced|sliced:changes"
    )]
    strategy: StrategyArg,

    /// Which results --strategy sliced emits: all (every non-empty window, as Flink) or changes
    /// (only where a key's result changes, the keywindow output). `--strategy sliced --emit
    /// changes` is `--strategy sliced:changes`.
    #[arg(long, value_name = "all|changes")]
    emit: Option<EmitChoice>,

    /// Evictor: count:N[:after] (keep the last N elements), time:D[:after] (keep elements within D
    /// of the newest), delta:X[:abs|diff][:after] (drop elements whose delta to the last one is >=
    /// X). Runs before the aggregate unless `:after`; with an evictor windows keep their elements.
    #[arg(long, value_name = "SPEC")]
    evictor: Option<EvictorSpec>,

    /// Write late (dropped) elements to this file (CSV event_time_ms,key,value,watermark, or
    /// JSON lines for a .jsonl name). Without it late elements are only counted.
    #[arg(long, value_name = "PATH")]
    late_output: Option<PathBuf>,

    /// Write results to this file instead of stdout.
    #[arg(long, value_name = "PATH")]
    output: Option<String>,

    /// Output format. Default: jsonl for a `.jsonl`/`.json` output file, else csv.
    #[arg(long, value_name = "csv|jsonl")]
    output_format: Option<OutputFormat>,

    /// What to do with a bad input line (malformed, missing field, bad number or timestamp):
    /// fail (stop with an error naming file, line and field) or skip (count it and go on).
    #[arg(long, default_value = "fail", value_name = "fail|skip")]
    on_error: OnError,

    /// With --on-error skip: append every skipped line to this CSV file
    /// (source,line,field,error,raw).
    #[arg(long, value_name = "PATH")]
    dead_letter: Option<PathBuf>,

    /// Stop with an error before the native operator holds more window states than this (each
    /// window of each key is one, a few hundred bytes). Guards against configurations that would
    /// exhaust memory (a 10,000,000-window sliding window on a few keys); --strategy sliced and
    /// keywindow need far fewer states and are not limited.
    #[arg(long, default_value_t = 5_000_000, value_name = "N")]
    max_window_states: usize,

    /// Do not show a progress bar (it is shown only when stderr is a terminal).
    #[arg(long)]
    no_progress: bool,
}

/// `--emit`: which results the sliced strategy emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum EmitChoice {
    /// Every non-empty window.
    All,
    /// Only where a key's result changes.
    Changes,
}

/// `--strategy` as given: the strategy, and whether the sliced output was spelled out
/// (`sliced:all`, `sliced:changes`), so that `--emit` can contradict it.
#[derive(Clone, Copy, Debug)]
struct StrategyArg {
    strategy: Strategy,
    spelled_output: bool,
}

impl std::str::FromStr for StrategyArg {
    type Err = engine::job::SpecError;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        Ok(Self {
            strategy: s.parse()?,
            spelled_output: s.contains(':'),
        })
    }
}

/// Applies `--emit` to `--strategy`; an error where they contradict.
fn strategy_with_emit(arg: StrategyArg, emit: Option<EmitChoice>) -> Result<Strategy> {
    let strategy = arg.strategy;
    Ok(match (strategy, emit) {
        (s, None) => s,
        (Strategy::Sliced(EmitMode::AllWindows), Some(EmitChoice::Changes))
            if arg.spelled_output =>
        {
            bail!("--strategy sliced:all contradicts --emit changes; use --strategy sliced:changes")
        }
        (Strategy::Sliced(EmitMode::AllWindows), Some(EmitChoice::Changes)) => {
            Strategy::Sliced(EmitMode::Changes)
        }
        (Strategy::Sliced(EmitMode::AllWindows), Some(EmitChoice::All))
        | (Strategy::Native, Some(EmitChoice::All)) => strategy,
        (Strategy::Sliced(EmitMode::Changes) | Strategy::KeyWindow, Some(EmitChoice::Changes)) => {
            strategy
        }
        (Strategy::Native, Some(EmitChoice::Changes)) => bail!(
            "--emit changes needs --strategy sliced (sliding windows only); the native operator emits every window"
        ),
        (Strategy::KeyWindow, Some(EmitChoice::All)) => bail!(
            "--emit all does not apply to --strategy keywindow, which emits changes; use --strategy sliced for every window"
        ),
        (Strategy::Sliced(EmitMode::Changes), Some(EmitChoice::All)) => bail!(
            "--strategy sliced:changes contradicts --emit all; use --strategy sliced --emit all"
        ),
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Run(args) => run(*args),
        Command::Dstream(args) => crate::dstream::run_dstream(&args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("windowctl: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Whether the error is a closed stdout (`windowctl run | head`): then we stop quietly. The
/// CSV writer wraps I/O errors in `csv::Error` inside an `io::Error`, so look inside those too.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    fn io_is_broken_pipe(io: &std::io::Error) -> bool {
        io.kind() == ErrorKind::BrokenPipe
            || io.get_ref().and_then(|inner| inner.downcast_ref::<csv::Error>()).is_some_and(|c| {
                matches!(c.kind(), csv::ErrorKind::Io(inner) if inner.kind() == ErrorKind::BrokenPipe)
            })
    }
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(io_is_broken_pipe)
            || c.downcast_ref::<csv::Error>().is_some_and(
                |c| matches!(c.kind(), csv::ErrorKind::Io(io) if io_is_broken_pipe(io)),
            )
    })
}

/// Writes results and late elements; keeps the first I/O error (the sink trait cannot return it).
struct OutputSink {
    results: ResultWriter,
    late: Option<LateWriter>,
    error: Option<std::io::Error>,
}

impl OutputSink {
    /// The results writer (`--output`, with the `empty` column for strategies that emit empty
    /// results) and the late-element writer (`--late-output`).
    fn create(args: &RunArgs, empty_column: bool) -> Result<Self> {
        let output_target = args.output.clone().unwrap_or_else(|| "-".to_owned());
        let output_format = args.output_format.unwrap_or(match &args.output {
            Some(p) => OutputFormat::from_path(p),
            None => OutputFormat::Csv,
        });
        let late = match &args.late_output {
            Some(p) => {
                let w = create_output(&p.display().to_string()).context("--late-output")?;
                Some(LateWriter::new(w, OutputFormat::from_path(p)))
            }
            None => None,
        };
        let writer = create_output(&output_target)?;
        Ok(Self {
            results: if empty_column {
                ResultWriter::with_empty_column(writer, output_format)
            } else {
                ResultWriter::new(writer, output_format)
            },
            late,
            error: None,
        })
    }

    /// Flushes both writers, at the end (also after a failed run, to keep what was written).
    fn flush_all(&mut self) -> Result<()> {
        let flushed = self.results.flush().context("writing output");
        if let Some(l) = self.late.as_mut() {
            l.flush().context("writing late output")?;
        }
        flushed
    }

    fn write(&mut self, key: &str, window: &AnyWindow, value: Option<f64>, empty: bool) {
        if self.error.is_some() {
            return;
        }
        let bounds = window.bounds();
        let record = ResultRecord {
            key,
            window_start: bounds.map(|w| w.0),
            window_end: bounds.map(|w| w.1),
            result: value,
        };
        if let Err(e) = self.results.write_key_window_result(&record, empty) {
            self.error = Some(e);
        }
    }
}

impl WindowOutput<String, AnyWindow, f64, JobResult> for OutputSink {
    fn result(&mut self, key: &String, window: &AnyWindow, result: JobResult, _watermark: i64) {
        let value = match result {
            JobResult::Number(v) => v,
            // windowctl offers numeric aggregates only.
            JobResult::List(_) | JobResult::Elements(_) => None,
        };
        self.write(key, window, value, false);
    }

    fn emptied(&mut self, key: &String, window: &AnyWindow, _watermark: i64) {
        self.write(key, window, None, true);
    }

    fn take_error(&mut self) -> Option<std::io::Error> {
        self.error.take()
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.results.flush()?;
        match self.late.as_mut() {
            Some(l) => l.flush(),
            None => Ok(()),
        }
    }

    fn late(&mut self, key: String, timestamp: i64, value: f64, watermark: i64) {
        if self.error.is_some() {
            return;
        }
        if let Some(w) = self.late.as_mut() {
            let event = Event {
                timestamp,
                key,
                value,
                line: 0,
            };
            if let Err(e) = w.write_late(&event, watermark) {
                self.error = Some(e);
            }
        }
    }
}

fn duration(flag: &str, text: &str) -> Result<i64> {
    parse_duration(text).map_err(|e| anyhow!("--{flag}: {e}"))
}

/// The whole `run` configuration after validation.
struct Plan {
    inputs: Vec<(InputSpec, InputFormat)>,
    spec: JobSpec,
    out_of_orderness: i64,
    watermark_interval: i64,
    idle_timeout: Option<i64>,
    /// Field names, for error reports about an element.
    time_field: String,
    value_field: String,
}

/// The input files named on the command line.
fn specs_for_check(args: &RunArgs) -> Vec<PathBuf> {
    args.input
        .iter()
        .filter_map(|p| match InputSpec::parse(p) {
            InputSpec::File(f) => Some(f),
            _ => None,
        })
        .collect()
}

/// Refuses to write an output over an input or over another output: `--output data.csv
/// --input data.csv` would truncate the input before reading it.
fn check_distinct_files(args: &RunArgs, inputs: &[PathBuf]) -> Result<()> {
    let mut outputs: Vec<(&str, PathBuf)> = Vec::new();
    if let Some(o) = args.output.as_deref().filter(|o| *o != "-") {
        outputs.push(("--output", PathBuf::from(o)));
    }
    if let Some(p) = &args.late_output {
        outputs.push(("--late-output", p.clone()));
    }
    if let Some(p) = &args.dead_letter {
        outputs.push(("--dead-letter", p.clone()));
    }
    for (i, (flag, path)) in outputs.iter().enumerate() {
        if let Some(input) = inputs.iter().find(|input| same_file(input, path)) {
            bail!(
                "{flag} {} is also an input: writing it would destroy the input",
                input.display()
            );
        }
        if let Some((other, _)) = outputs[..i].iter().find(|(_, p)| same_file(p, path)) {
            bail!(
                "{flag} {} is also given to {other}: each output needs its own file",
                path.display()
            );
        }
    }
    Ok(())
}

fn plan(args: &RunArgs) -> Result<Plan> {
    let bundled = args.socket.is_empty() && args.input.is_empty();
    let mut specs: Vec<InputSpec> = args.input.iter().map(|p| InputSpec::parse(p)).collect();
    specs.extend(args.socket.iter().map(|a| InputSpec::Socket(a.clone())));
    if bundled {
        specs.push(InputSpec::File(PathBuf::from(BUNDLED_DATA)));
    }
    if specs.iter().filter(|s| **s == InputSpec::Stdin).count() > 1 {
        bail!("--input -: standard input can be read only once");
    }
    let inputs = specs
        .into_iter()
        .map(|spec| {
            let format = args.format.unwrap_or(match &spec {
                InputSpec::File(p) => InputFormat::from_path(p),
                _ => InputFormat::Csv,
            });
            (spec, format)
        })
        .collect();
    let time = match args.time.as_str() {
        "event" => TimeDomain::EventTime,
        "processing" => TimeDomain::ProcessingTime,
        other => bail!("--time: expected event or processing, got '{other}'"),
    };
    let aggregate = match args.agg.parse::<JobAggregate>() {
        Ok(a @ JobAggregate::Numeric(_)) => a,
        _ => bail!(
            "--agg: expected count, sum, min, max or mean, got '{}'",
            args.agg
        ),
    };
    if time == TimeDomain::ProcessingTime && args.window == WindowSpec::GlobalEndOfStream {
        bail!("--window global:end-of-stream fires at the end of a bounded input, in event time; it never fires with --time processing");
    }
    check_distinct_files(args, &specs_for_check(args))?;
    if time == TimeDomain::ProcessingTime && args.out_of_orderness.is_some() {
        bail!("--out-of-orderness delays the event-time watermark; with --time processing windows fire by the wall clock and it would do nothing");
    }
    let ooo_text = match &args.out_of_orderness {
        Some(t) => t.as_str(),
        None if bundled => BUNDLED_OUT_OF_ORDERNESS,
        None => "0",
    };
    if args.dead_letter.is_some() && args.on_error != OnError::Skip {
        bail!("--dead-letter needs --on-error skip (with fail, the first bad line stops the job)");
    }
    let spec = JobSpec {
        window: args.window,
        trigger: args.trigger.clone(),
        time,
        allowed_lateness: duration("allowed-lateness", &args.allowed_lateness)?,
        late_data: if args.late_output.is_some() {
            LateDataPolicy::SideOutput
        } else {
            LateDataPolicy::Drop
        },
        aggregate,
        evictor: args.evictor,
        strategy: strategy_with_emit(args.strategy, args.emit)?,
        window_all: args.window_all,
        max_window_states: Some(args.max_window_states),
        name: None,
        watermarks: Default::default(),
        io: Default::default(),
    };
    Ok(Plan {
        inputs,
        spec,
        out_of_orderness: duration("out-of-orderness", ooo_text)?,
        watermark_interval: duration("watermark-interval", &args.watermark_interval)?,
        idle_timeout: match args.idle_timeout.as_deref() {
            None => None,
            Some(t) => match duration("idle-timeout", t)? {
                0 => {
                    bail!("--idle-timeout must be positive (0 would mark every input idle at once)")
                }
                d => Some(d),
            },
        },
        time_field: args.time_field.clone(),
        value_field: args.value_field.clone(),
    })
}

fn run(args: RunArgs) -> Result<()> {
    let plan = plan(&args)?;
    let op: Computation<String> = engine::job::build(&plan.spec).map_err(|e| anyhow!("{e}"))?;
    let fields = FieldNames {
        time: args.time_field.clone(),
        key: args.key_field.clone(),
        value: args.value_field.clone(),
    };
    let readers = plan
        .inputs
        .iter()
        .map(|(spec, format)| {
            let live = !matches!(spec, InputSpec::File(_));
            open_source(spec, *format, fields.clone()).map(|r| ReaderSource::new(r, live))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut sink = OutputSink::create(&args, plan.spec.strategy.emits_empty_results())?;
    let mut policy = ErrorPolicy::new(args.on_error);
    if let Some(p) = &args.dead_letter {
        policy = policy.with_dead_letter(DeadLetterWriter::create(p).context("--dead-letter")?);
    }
    let config = RuntimeConfig {
        time: plan.spec.time,
        out_of_orderness: plan.out_of_orderness,
        watermark_interval: plan.watermark_interval,
        idle_timeout: plan.idle_timeout,
    };
    let mut rt = Runtime::new(op, config);
    rt.set_error_policy(policy);
    rt.set_rejection_report(rejection_report(&plan));
    for r in readers {
        rt.add_source(Box::new(r));
    }
    let progress_bar = (!args.no_progress && std::io::stderr().is_terminal())
        .then(|| make_progress_bar(rt.progress().1));
    let started = Instant::now();
    rt.start();
    let outcome = loop {
        match rt.step(&mut sink) {
            Ok(Step::Finished) => break Ok(()),
            Ok(_) => {
                if let Some(pb) = &progress_bar {
                    pb.set_position(rt.progress().0);
                }
            }
            Err(e) => break Err(e),
        }
    };
    if let Some(pb) = &progress_bar {
        pb.finish_and_clear();
    }
    let flushed = sink.flush_all();
    outcome.map_err(|e| job_error(e, &plan))?;
    flushed?;
    summary(
        &plan,
        &rt,
        sink.results.records_written(),
        started.elapsed(),
    );
    Ok(())
}

/// A runtime error as windowctl reports it.
fn job_error(e: RuntimeError, _plan: &Plan) -> anyhow::Error {
    match e {
        RuntimeError::Element {
            error: error @ ElementError::TooManyWindowStates { .. },
            ..
        } => anyhow!("{error} (--max-window-states): use --strategy sliced:changes or keywindow (results only where they change; --strategy sliced keeps few states but still writes every window), or raise the limit"),
        other => anyhow::Error::new(other),
    }
}

/// How an element the window assigner rejected is reported: the field at fault, by its name on
/// the command line, and the element as a CSV line.
fn rejection_report(plan: &Plan) -> DescribeRejection<String, f64> {
    let (time_field, value_field) = (plan.time_field.clone(), plan.value_field.clone());
    Box::new(move |r, source, line, timestamp| {
        let value = r.element;
        let field = match r.error {
            ElementError::MissingTimestamp | ElementError::TimestampOutOfRange { .. } => {
                &time_field
            }
            _ => &value_field,
        };
        InputError {
            source_name: source.to_owned(),
            line,
            field: Some(field.clone()),
            message: match r.error {
                // The gap is the value read as ms (0 when it is not whole).
                ElementError::InvalidDynamicGap { .. } => format!(
                    "value {} is not a positive whole number of ms, which --window session:value needs as the session gap",
                    format_number(value)
                ),
                ref err => format!(
                    "element ({timestamp}, value {}) rejected by the window assigner: {err}",
                    format_number(value)
                ),
            },
            raw: format!("{timestamp},{},{value}", r.key),
            kind: InputErrorKind::InvalidValue,
        }
    })
}

fn make_progress_bar(total: Option<u64>) -> indicatif::ProgressBar {
    let pb = match total {
        Some(t) => indicatif::ProgressBar::new(t),
        None => indicatif::ProgressBar::new_spinner(),
    };
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {bytes}/{total_bytes} {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    pb
}

/// The process's peak resident memory in KB (Linux `VmHWM`), if the platform tells.
fn peak_memory_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn summary(
    plan: &Plan,
    rt: &Runtime<String, f64, Computation<String>>,
    results: u64,
    elapsed: Duration,
) {
    let op = rt.computation();
    let stats = rt.stats();
    let source_name = rt.source_names().join(", ");
    let m = op.metrics();
    let secs = elapsed.as_secs_f64().max(1e-9);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "windowctl: {source_name}: {} events read in {secs:.3} s ({:.0} events/s)",
        stats.events,
        stats.events as f64 / secs
    );
    let _ = writeln!(
        err,
        "windowctl: windows fired: {} ({} results written); window states created: {}",
        m.windows_fired, results, m.windows_created
    );
    let _ = writeln!(
        err,
        "windowctl: late elements dropped: {} (to late output: {}); elements in no window: {}",
        m.late_elements, m.late_side_output, m.elements_in_no_window
    );
    if let Some(kb) = peak_memory_kb() {
        let _ = writeln!(err, "windowctl: peak memory (resident): {kb} KB");
    }
    let _ = writeln!(
        err,
        "windowctl: bad input lines skipped: {} (rejected by the assigner: {}); watermark delay {} ms",
        stats.skipped, stats.rejected, plan.out_of_orderness
    );
    if plan.spec.strategy != Strategy::Native {
        let k = m;
        let created = if plan.spec.strategy == Strategy::KeyWindow {
            "key windows"
        } else {
            "slices"
        };
        let _ = writeln!(
            err,
            "windowctl: {created} created: {}; the native operator would create: {} windows ({:.1}x); results emitted: {} ({} empty)",
            k.windows_created,
            k.native_windows,
            k.native_windows as f64 / (k.windows_created.max(1)) as f64,
            k.windows_fired,
            k.empty_results
        );
    }
    let live_windows = op.live_state().windows;
    if plan.spec.time == TimeDomain::EventTime && live_windows > 0 {
        let _ = writeln!(
            err,
            "windowctl: {} window states remain at end of input: global windows are never cleaned up, and elements added after their last firing were not emitted (as in Flink)",
            live_windows
        );
    }
    if plan.spec.time == TimeDomain::ProcessingTime && live_windows > 0 {
        let _ = writeln!(
            err,
            "windowctl: {} processing-time windows were still open at end of input and did not fire (as in Flink)",
            live_windows
        );
    }
}
