//! `windowctl run --workers N`: the job on timely dataflow ([`window_timely`]), keys partitioned
//! across N worker threads, the output byte-identical for any N (`docs/scale-out.md`); with
//! `--processes N --process I --hostfile FILE`, on N processes of such threads (a cluster).

use std::io::Cursor;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use engine::assigners::TimeDomain;
use engine::io::{
    open_bytes, CsvHeader, EventReader, EventTimes, FieldNames, FieldUse, InputFormat, InputSpec,
    KeyDictionary, TimeUnit,
};
use engine::job::{Computation, JobSpec};
use engine::runtime::{RunStats, RuntimeError};
use std::time::Duration;

use engine::core::{AnyWindow, Number, WindowOutput};
use engine::io::{ErrorPolicy, KeyId};
use engine::job::JobResult;
use window_timely::cluster::InputIdentity;
use window_timely::{
    Cluster, Describe, FinalSteps, JobParts, TimelyConfig, TimelyError, TimelyInput,
};

use crate::args::RunArgs;
use crate::output::stdin_was_closed;
use crate::plan::Plan;
use crate::run::{
    error_policy, job_error, open_sink, rejection_report, report_cut_dead_letters, AtStop,
};
use crate::scale_checkpoint;
use crate::summary::{summary, Facts};

/// What every worker needs of the job: its spec (for its computation), how to read a chunk,
/// how to report a rejected element.
struct Parts {
    spec: JobSpec,
    /// Each input's name, format and how a CSV chunk's header is told, in the job's order.
    inputs: Vec<PartInput>,
    fields: FieldNames,
    reads: FieldUse,
    time_unit: TimeUnit,
    delimiter: engine::io::Delimiter,
    /// Makes the reporter of rejected elements (the one-worker runtime's, per worker).
    describe: Box<dyn Fn() -> Describe + Send + Sync>,
    /// `--max-window-states`.
    max_held: Option<usize>,
    /// Whether SIGINT or SIGTERM came.
    interrupted: Box<dyn Fn() -> bool + Send + Sync>,
    /// The range of the event times read (this process's chunks), for the time unit's hint.
    times: EventTimes,
}

/// How one input of the job is read.
struct PartInput {
    name: String,
    format: InputFormat,
    /// How a CSV chunk's header is told: `--no-header` (absent), a socket's (detected: its
    /// first line is the header where it names the time field, as the one-reader runtime tells
    /// it), a file's (required).
    header: CsvHeader,
}

impl JobParts for Parts {
    type Computation = Computation<engine::io::KeyId>;

    fn computation(&self) -> Self::Computation {
        // The plan built this spec once already: it builds.
        engine::job::build(&self.spec).expect("the planned job builds")
    }

    fn reader(&self, input: usize, bytes: Vec<u8>) -> EventReader {
        let i = &self.inputs[input];
        let reader = EventReader::new(
            Cursor::new(bytes),
            i.name.clone(),
            i.format,
            self.fields.clone(),
        )
        .reading(self.reads)
        .with_time_unit(self.time_unit)
        .with_delimiter(self.delimiter);
        match i.header {
            CsvHeader::Required => reader,
            mode => reader.with_csv_header(mode),
        }
    }

    fn describe(&self) -> Describe {
        (self.describe)()
    }

    fn saw_event_times(&self, range: (i64, i64)) {
        self.times.include(range);
    }

    fn max_held(&self) -> Option<usize> {
        self.max_held
    }

    fn interrupted(&self) -> bool {
        (self.interrupted)()
    }

    /// Time windows end within a window size (a session gap) of the last element: the final
    /// watermark goes there a slide (a size, a gap) at a time.
    fn final_steps(&self) -> Option<FinalSteps> {
        use engine::job::WindowSpec;
        let (stride, horizon) = match self.spec.window {
            WindowSpec::Tumbling { size, .. } => (size, size),
            WindowSpec::Sliding { size, slide, .. } => (slide, size),
            WindowSpec::Session { gap } => (gap, gap),
            _ => return None,
        };
        Some(FinalSteps { stride, horizon })
    }

    /// The final steps' stride, where the trigger fires windows at their ends only (the
    /// default, `EventTimeTrigger`, purging or not; not a continuous one).
    fn sub_steps(&self) -> Option<i64> {
        use engine::job::TriggerSpec;
        let trigger = match &self.spec.trigger {
            TriggerSpec::Purging { inner } => inner.as_ref(),
            t => t,
        };
        let at_ends = matches!(trigger, TriggerSpec::Default | TriggerSpec::EventTime);
        self.final_steps().filter(|_| at_ends).map(|s| s.stride)
    }
}

/// Runs the planned job on `workers` timely worker threads (per process, with `--processes`);
/// as `run::run` otherwise.
///
/// # Errors
/// What the job cannot run with (see [`cluster_of`], usage errors), an input or
/// output that cannot be opened, a cluster that cannot connect, and every way a job stops
/// early, as the single-threaded runtime reports it.
pub(crate) fn run_timely(
    args: &RunArgs,
    plan: &Plan,
    workers: usize,
    signal: Box<dyn Fn() -> Option<i32> + Send + Sync>,
) -> Result<()> {
    let signal: Arc<dyn Fn() -> Option<i32> + Send + Sync> = Arc::from(signal);
    let asked = Arc::clone(&signal);
    let interrupted: Box<dyn Fn() -> bool + Send + Sync> = Box::new(move || asked().is_some());
    // `--checkpoint-interval` with `--checkpoint-dir`: process 0 takes checkpoints that often;
    // the other processes of a cluster only need to know that it does (and compare it).
    let every = (args.checkpoint_dir.as_ref())
        .map(|_| crate::run::checkpoint_interval(&args.checkpoint_interval))
        .transpose()
        .map_err(crate::run::Usage::from)?;
    let config = config_of(args, plan, workers, every)?;
    let peer = config.cluster.as_ref().is_some_and(|c| c.process != 0);
    let mut resumable = match &args.checkpoint_dir {
        // Process 0 of a cluster holds the checkpoints (with the outputs); the others hear
        // from it where the job starts, and their --checkpoint-dir is not used.
        Some(_) if peer => None,
        Some(dir) => match told(
            &config,
            scale_checkpoint::open(plan, dir, &args.checkpoint_interval),
        )? {
            Some(r) => Some(r),
            // The job ran to the end already: nothing to do (the other processes are told).
            None => {
                if let Some(cluster) = &config.cluster {
                    window_timely::tell_finished(cluster).map_err(|e| anyhow!("{e}"))?;
                }
                return Ok(());
            }
        },
        None => None,
    };
    // A resume interns the keys of the cut (by text) in it.
    let keys = KeyDictionary::shared();
    let checkpointing = args.checkpoint_dir.is_some();
    let opened = open_inputs(plan);
    let (inputs, read_by, progress) = if checkpointing {
        told(&config, opened)
    } else {
        opened
    }?;
    let describe_plan = Arc::new(plan.clone());
    let describe_keys = Arc::clone(&keys);
    let parts = Arc::new(Parts {
        spec: plan.spec.clone(),
        inputs: read_by,
        fields: plan.fields.clone(),
        reads: plan.reads,
        time_unit: plan.time_unit,
        delimiter: plan.delimiter,
        describe: Box::new(move || rejection_report(&describe_plan, Arc::clone(&describe_keys))),
        max_held: plan.spec.max_window_states,
        interrupted,
        times: EventTimes::default(),
    });
    let started = Instant::now();
    if peer {
        // Its workers leave parts of each cut (process 0 marks the chunks, keeps the
        // checkpoints and says where to resume): no resume or writer here.
        let checkpoints = every.map(|interval| window_timely::Checkpointing {
            resume: None,
            interval,
            write: Box::new(|_: &mut NoOutput, _: &mut ErrorPolicy, _| Ok(())),
        });
        let run = Peer {
            plan,
            config,
            parts,
            inputs,
            keys,
        };
        return run_peer(run, checkpoints, signal.as_ref());
    }
    let state_line = match &config.cluster {
        None => format!("workers: {workers} (timely dataflow, one process)"),
        Some(c) => format!(
            "workers: {workers} per process, {} processes (timely dataflow; counts of all \
             processes)",
            c.addresses.len()
        ),
    };
    let run = Run {
        plan,
        config,
        parts,
        inputs,
        keys,
        started,
        state_line,
        progress: crate::progress::Ticker::for_inputs(args.no_progress, progress),
    };
    run_writer(run, resumable.as_mut(), signal.as_ref())
}

/// Process 0 of a cluster with checkpoints that cannot run the job (`result` an error): says
/// so, then tells the other processes, which wait to hear from it where the job starts, so
/// that they fail with its error instead of at their connect timeout; `result` as it was.
fn told<T>(config: &TimelyConfig, result: Result<T>) -> Result<T> {
    if let (Err(e), Some(cluster)) = (&result, &config.cluster) {
        if cluster.process == 0 {
            eprintln!("windowctl: process 0 cannot run the job; telling the other processes");
            if let Err(t) = window_timely::tell_failed(cluster, format!("{e:#}")) {
                eprintln!("windowctl: {t}");
            }
        }
    }
    result
}

/// Opens the job's inputs: each one's bytes for the runtime, how its chunks are read, and its
/// progress handle.
///
/// # Errors
/// A closed stdin; an input that cannot be opened.
fn open_inputs(
    plan: &Plan,
) -> Result<(Vec<TimelyInput>, Vec<PartInput>, Vec<engine::io::Progress>)> {
    let (mut inputs, mut read_by, mut progress) = (Vec::new(), Vec::new(), Vec::new());
    for (spec, format) in &plan.inputs {
        if matches!(spec, InputSpec::Stdin) && stdin_was_closed() {
            bail!(
                "--input -: standard input is closed (the job was started with <&-), which \
                 would read as an empty input; give --input FILE or redirect a file"
            );
        }
        let (bytes, handle) = open_bytes(spec)?;
        let header = if plan.no_header {
            CsvHeader::Absent
        } else if matches!(spec, InputSpec::Socket(_)) {
            CsvHeader::Detect
        } else {
            CsvHeader::Required
        };
        let name = spec.source_name();
        inputs.push(TimelyInput {
            name: name.clone(),
            bytes,
            csv_delimiter: (*format == InputFormat::Csv).then(|| plan.delimiter.byte()),
            // A socket's first line, header or not, goes to every later chunk's reader, which
            // tells it as the first chunk's reader does and takes its columns from it.
            csv_header: *format == InputFormat::Csv && header == CsvHeader::Required,
            // stdin, a pipe: of unknown size (a file's is known, also a `.gz` one's).
            live: handle.total_bytes().is_none(),
        });
        read_by.push(PartInput {
            name,
            format: *format,
            header,
        });
        progress.push(handle);
    }
    Ok((inputs, read_by, progress))
}

/// The timely runtime's settings for the job: its watermark, chunks, cluster and key groups
/// (`every`: the checkpoint interval, compared across a cluster).
///
/// # Errors
/// A bad `WINDOWCTL_CHUNK_BYTES`; a cluster that `--processes`, `--process` and `--hostfile`
/// do not describe ([`cluster_of`], a usage error).
fn config_of(
    args: &RunArgs,
    plan: &Plan,
    workers: usize,
    every: Option<Duration>,
) -> Result<TimelyConfig> {
    let mut config = TimelyConfig::new(workers, plan.out_of_orderness);
    // Fewer rows held per chunk on fine sliding windows (window_timely::chunk_bytes_for_fan_out).
    config.chunk_bytes = window_timely::chunk_bytes_for_fan_out(fan_out(&plan.spec.window));
    // `--idle-timeout` counts with several inputs among which a live one (taken as they come);
    // one input idle alone still gives the watermark (Flink's StatusWatermarkValve), and files
    // merged in event time are never idle behind the others.
    config.idle_timeout = plan
        .idle_timeout
        .and_then(|ms| u64::try_from(ms).ok())
        .map(Duration::from_millis);
    config.watermark_interval = u64::try_from(plan.watermark_interval)
        .ok()
        .filter(|&ms| ms > 0)
        .map(Duration::from_millis);
    config.processing_time = plan.spec.time == TimeDomain::ProcessingTime;
    if let Ok(step) = std::env::var("WINDOWCTL_CHUNK_CLOCK_MS") {
        // For tests: chunk `c` at `c * step` ms of processing time, whatever the clock says.
        let step = step
            .parse()
            .map_err(|e| anyhow!("WINDOWCTL_CHUNK_CLOCK_MS: {e}"))?;
        config.chunk_clock = window_timely::clock::ChunkClock::PerChunk(step);
    }
    if let Ok(rows) = std::env::var("WINDOWCTL_ROWS_AHEAD") {
        // For tests: a small budget cuts every chunk's rows into pieces.
        config.rows_ahead = rows
            .parse()
            .map_err(|e| anyhow!("WINDOWCTL_ROWS_AHEAD: {e}"))?;
    }
    if let Ok(bytes) = std::env::var("WINDOWCTL_CHUNK_BYTES") {
        // For tests: small chunks make many chunk boundaries in a small input.
        config.chunk_bytes = bytes
            .parse()
            .map_err(|e| anyhow!("WINDOWCTL_CHUNK_BYTES: {e}"))?;
    }
    config.cluster = cluster_of(args, plan, &config, every).map_err(crate::run::Usage::from)?;
    if let Some(c) = &config.cluster {
        // A peer that dies mid-run: one error line naming it, not timely's panics.
        crate::lost_peer::install(c.addresses.clone(), c.process);
    }
    if args.checkpoint_dir.is_none() {
        // No state is handed to another worker count: one key group per worker, one
        // computation each (G = 128 cost 1.7-2.2x the CPU time with one worker); with
        // checkpoints, Flink's default max parallelism, which a resume with any count needs.
        let processes = config.cluster.as_ref().map_or(1, |c| c.addresses.len());
        config.key_groups = u32::try_from(workers.saturating_mul(processes)).unwrap_or(u32::MAX);
    }
    Ok(config)
}

/// How many windows an element falls into: a sliding window's
/// [`engine::assigners::windows_per_element`]; 1 for the other windows.
fn fan_out(window: &engine::job::WindowSpec) -> u64 {
    match *window {
        engine::job::WindowSpec::Sliding { size, slide, .. } if size > 0 && slide > 0 => {
            u64::try_from(engine::assigners::windows_per_element(size, slide)).unwrap_or(1)
        }
        _ => 1,
    }
}

/// What [`run_writer`] runs.
struct Run<'p> {
    plan: &'p Plan,
    config: TimelyConfig,
    parts: Arc<Parts>,
    inputs: Vec<TimelyInput>,
    keys: Arc<KeyDictionary>,
    started: Instant,
    /// The summary's line about the workers.
    state_line: String,
    /// The progress bar, stopped and cleared before the summary is printed.
    progress: Option<crate::progress::Ticker>,
}

/// The process that writes the output (the only one, or process 0 of a cluster): runs the job,
/// with checkpoints when `resumable` is given, and prints the summary.
///
/// # Errors
/// An output that cannot be opened, a checkpoint that cannot be taken, and every way a job
/// stops early.
fn run_writer(
    run: Run<'_>,
    mut resumable: Option<&mut scale_checkpoint::Resumable>,
    signal: &(dyn Fn() -> Option<i32> + Send + Sync),
) -> Result<()> {
    let Run {
        plan,
        config,
        parts,
        inputs,
        keys,
        started,
        state_line,
        progress,
    } = run;
    let all_workers = config.workers * config.cluster.as_ref().map_or(1, |c| c.addresses.len());
    let cluster = config.cluster.is_some();
    let times = parts.times.clone();
    let marks = resumable.as_ref().and_then(|r| r.marks);
    let mut sink = open_sink(plan, &keys, resumable.is_some(), marks.as_ref())?;
    let mut policy = error_policy(plan, marks.as_ref())?;
    let mut checkpointing = None;
    if let Some(r) = resumable.as_deref_mut() {
        policy.skipped = r.skipped;
        if marks.is_none() {
            // A first checkpoint before anything is read, as without --workers: a run killed
            // before the next one resumes from the start with the outputs as they were.
            scale_checkpoint::take(&r.checkpoints, &mut sink, &mut policy, None, false)?;
        }
        checkpointing = Some(scale_checkpoint::checkpointing(r));
    }
    let outcome = window_timely::run_checkpointed(
        config,
        parts,
        inputs,
        Arc::clone(&keys),
        sink,
        policy,
        checkpointing,
    );
    drop(progress);
    let outcome = outcome.map_err(|e| anyhow!("{e}"))?;
    let (mut sink, mut policy) = (outcome.output, outcome.policy);
    if let Some(failure) = outcome.failure {
        sink.finish().ok();
        return Err(failure_error(failure));
    }
    if let Some(r) = resumable.as_deref().filter(|_| !outcome.interrupted) {
        // The end: a rerun says the job is done.
        scale_checkpoint::take(&r.checkpoints, &mut sink, &mut policy, None, true)?;
    }
    sink.finish()?;
    let facts = Facts {
        source_name: (plan.inputs.iter())
            .map(|(s, _)| s.source_name())
            .collect::<Vec<_>>()
            .join(", "),
        stats: RunStats {
            events: outcome.events,
            rejected: outcome.rejected,
            skipped: policy.skipped,
        },
        metrics: outcome.metrics,
        live_windows: outcome.live_windows,
        state_lines: vec![
            peak_line(plan, outcome.peak_held, all_workers, &keys),
            state_line,
        ],
    };
    let stopped = outcome.interrupted;
    let written = sink.records_written();
    summary(plan, &facts, written, started.elapsed(), stopped, &[times]);
    report_cut_dead_letters(&policy);
    if let Some(r) = resumable.as_ref() {
        r.checkpoints
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .report();
    }
    // Stopped by a signal, one process with one input took a last checkpoint where it stopped.
    // With several processes or inputs, no checkpoint is taken where the job stopped.
    let several = cluster || plan.inputs.len() > 1;
    let at_stop = match (resumable.is_some(), several) {
        (false, _) => AtStop::Nothing,
        (true, false) => AtStop::Checkpoint,
        (true, true) => AtStop::LastPeriodic,
    };
    stopped_by(signal, stopped, at_stop)
}

/// The summary's `peak state` line under `--workers`: the sum of the `workers` workers' peaks
/// (`peak`; each worker's most held after a chunk), an upper bound of the most they held at
/// once (each peaks at its own moment); each worker's share of the limit; the key dictionary.
fn peak_line(
    plan: &Plan,
    peak: engine::core::HeldState,
    workers: usize,
    keys: &KeyDictionary,
) -> String {
    let limit = plan.spec.max_window_states;
    let share = limit.map_or_else(String::new, |l| {
        format!(
            "; each worker's share of the limit: {}",
            indicatif::HumanCount(l.div_ceil(workers.max(1)) as u64)
        )
    });
    let whose = if workers == 1 {
        "the one worker's peak".to_owned()
    } else {
        format!(
            "the sum of the {} workers' peaks: an upper bound of the most held at once",
            indicatif::HumanCount(workers as u64)
        )
    };
    let peak = format!(
        "{} ({whose}{share})",
        crate::bound::describe(peak, plan.spec.strategy)
    );
    crate::bound::peak_line(&peak, limit, keys.len().saturating_sub(1))
}

/// Whether the job runs on timely: `--workers`, or any of the cluster flags (checked there).
pub(crate) fn wanted(args: &RunArgs) -> bool {
    args.workers.is_some()
        || args.processes.is_some()
        || args.process.is_some()
        || args.hostfile.is_some()
}

/// What [`run_peer`] runs.
struct Peer<'p> {
    plan: &'p Plan,
    config: TimelyConfig,
    parts: Arc<Parts>,
    inputs: Vec<TimelyInput>,
    keys: Arc<KeyDictionary>,
}

/// A process other than 0 of a cluster: no output, late output or dead letters are created
/// here (process 0 writes them); one line of its own part at the end. With checkpoints
/// (`checkpoints`: only their interval), it takes its workers' parts of each cut to process 0
/// and resumes where process 0 says.
fn run_peer(
    run: Peer<'_>,
    checkpoints: Option<window_timely::Checkpointing<NoOutput>>,
    signal: &(dyn Fn() -> Option<i32> + Send + Sync),
) -> Result<()> {
    let Peer {
        plan,
        config,
        parts,
        inputs,
        keys,
    } = run;
    let started = Instant::now();
    let (workers, c) = (config.workers, config.cluster.as_ref());
    let (process, processes) = c.map_or((0, 1), |c| (c.process, c.addresses.len()));
    let policy = ErrorPolicy::new(plan.outputs.on_error);
    let outcome =
        window_timely::run_checkpointed(config, parts, inputs, keys, NoOutput, policy, checkpoints)
            .map_err(|e| anyhow!("{e}"))?;
    if let Some(failure) = outcome.failure {
        return Err(failure_error(failure));
    }
    if outcome.finished_already {
        eprintln!(
            "windowctl: process {process} of {processes}: process 0's last checkpoint says the \
             job ran to its end; nothing to do"
        );
        return Ok(());
    }
    let workers = match workers {
        1 => "its worker".to_owned(),
        n => format!("its {n} workers"),
    };
    eprintln!(
        "windowctl: process {process} of {processes} done: {workers} processed {} \
         elements and fired {} windows in {:.1} s; process 0 writes the output and the summary",
        outcome.metrics.elements,
        outcome.metrics.windows_fired,
        started.elapsed().as_secs_f64()
    );
    stopped_by(signal, outcome.interrupted, AtStop::Peer)
}

/// As on one thread: stopped by a signal, the outputs hold every row up to there.
fn stopped_by(
    signal: &(dyn Fn() -> Option<i32> + Send + Sync),
    stopped: bool,
    checkpointed: AtStop,
) -> Result<()> {
    match signal().filter(|_| stopped) {
        Some(signal) => Err(crate::run::Stopped {
            signal,
            checkpointed,
        }
        .into()),
        None => Ok(()),
    }
}

/// The output of a process other than 0 of a cluster: it gets no rows (worker 0 writes them).
struct NoOutput;

impl WindowOutput<KeyId, AnyWindow, Number, JobResult> for NoOutput {
    fn result(&mut self, _: &KeyId, _: &AnyWindow, _: JobResult, _: i64) {}
    fn late(&mut self, _: KeyId, _: i64, _: Number, _: i64) {}
}

/// How long a process of a cluster waits for the others (`WINDOWCTL_CONNECT_TIMEOUT_MS`
/// changes it, for tests).
fn connect_timeout() -> Result<Duration> {
    match std::env::var("WINDOWCTL_CONNECT_TIMEOUT_MS") {
        Ok(ms) => {
            Ok(Duration::from_millis(ms.parse().map_err(|e| {
                anyhow!("WINDOWCTL_CONNECT_TIMEOUT_MS: {e}")
            })?))
        }
        Err(_) => Ok(window_timely::cluster::DEFAULT_CONNECT_TIMEOUT),
    }
}

/// The cluster `--processes`, `--process` and `--hostfile` describe, checked, its processes'
/// job including the checkpoint interval `every`; `None` for one process.
///
/// # Errors
/// A flag without the others, an index out of range, stdin as the input, a hostfile that cannot
/// be read, has another number of addresses than `--processes` or a line that is no
/// `host:port` (named by its line).
fn cluster_of(
    args: &RunArgs,
    plan: &Plan,
    config: &TimelyConfig,
    every: Option<Duration>,
) -> Result<Option<Cluster>> {
    let processes = usize::from(args.processes.unwrap_or(1));
    let Some(path) = &args.hostfile else {
        if processes > 1 {
            bail!("--processes {processes} needs --hostfile FILE (one host:port per process)");
        }
        if args.process.is_some_and(|p| p > 0) {
            bail!("--process needs --processes N and --hostfile FILE");
        }
        return Ok(None);
    };
    let Some(process) = args.process else {
        bail!("--hostfile needs --process I (this process's index, from 0) and --processes N");
    };
    let process = usize::from(process);
    if process >= processes {
        bail!(
            "--process {process}: out of range for --processes {processes} (0 to {})",
            processes - 1
        );
    }
    for (spec, _) in plan.inputs.iter().filter(|_| processes > 1) {
        match spec {
            InputSpec::Stdin => bail!("--processes: every process reads the whole input, so it cannot be stdin; give --input FILE (the same file on every machine)"),
            spec @ InputSpec::Socket(_) => bail!("--processes: every process reads the whole input, so it cannot be {} (each process would get a stream of its own); give --input FILE (the same file on every machine), or run one process with --workers N", spec.source_name()),
            InputSpec::File(_) => {}
        }
    }
    let text =
        std::fs::read_to_string(path).map_err(|e| anyhow!("--hostfile {}: {e}", path.display()))?;
    let mut addresses = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let port = line
            .rsplit_once(':')
            .map(|(host, port)| (host, port.parse::<u16>()));
        if !matches!(port, Some((host, Ok(_))) if !host.is_empty()) {
            bail!(
                "--hostfile {}: line {}: `{line}` is not host:port",
                path.display(),
                i + 1
            );
        }
        addresses.push(line.to_string());
    }
    if addresses.len() != processes {
        bail!(
            "--hostfile {}: {} addresses for --processes {processes} (one host:port per process, \
             blank and # lines skipped)",
            path.display(),
            addresses.len()
        );
    }
    if processes == 1 {
        return Ok(None);
    }
    let job = job_parts(plan, config, processes, every);
    // Every input's size and first bytes, in order (files: stdin and sockets are refused
    // above); one that cannot be read is reported when the job opens it. (Every byte read is
    // compared at the end.)
    let each: Vec<InputIdentity> = (plan.inputs.iter())
        .map(|(spec, _)| match spec {
            InputSpec::File(path) => InputIdentity::of_file(path).unwrap_or_default(),
            _ => InputIdentity::default(),
        })
        .collect();
    let input = InputIdentity::combined(&each);
    Ok(Some(Cluster {
        process,
        addresses,
        fingerprint: fingerprint(&job),
        job,
        input,
        connect_timeout: connect_timeout()?,
    }))
}

/// What every process of a cluster must agree on, part by part (the hello sends them, so that
/// a refusal names the part that differs): the job, whether late elements go to a side output
/// (the other processes' workers fire the late rows process 0 writes), how its input is read (a
/// process reading it otherwise would cut or parse other chunks), the error policy (it decides
/// where the job stops), the chunk size, the workers per process, the process count and the
/// checkpoints' interval (`checkpoints`; process 0 tells the others where to start only when
/// they expect it). Not the input's path, which may differ between machines, nor the output
/// files or the checkpoint directory, which only process 0 opens.
fn job_parts(
    plan: &Plan,
    config: &TimelyConfig,
    processes: usize,
    checkpoints: Option<Duration>,
) -> Vec<(String, String)> {
    let checkpoints = checkpoints.map_or_else(
        || "none".to_owned(),
        |d| format!("every {} ms", d.as_millis()),
    );
    let formats: Vec<InputFormat> = plan.inputs.iter().map(|(_, f)| *f).collect();
    let mut spec = plan.spec.clone();
    let late = format!("{:?}", spec.late_data);
    spec.late_data = engine::core::LateDataPolicy::Drop;
    [
        ("late elements (--late-output)", late),
        ("job", format!("{spec:?}")),
        ("input formats", format!("{formats:?}")),
        ("fields", format!("{:?}", plan.fields)),
        ("fields read", format!("{:?}", plan.reads)),
        ("--time-unit", format!("{:?}", plan.time_unit)),
        ("--delimiter", format!("{:?}", plan.delimiter)),
        ("--no-header", plan.no_header.to_string()),
        ("--out-of-orderness", plan.out_of_orderness.to_string()),
        ("--on-error", format!("{:?}", plan.outputs.on_error)),
        ("chunk bytes", config.chunk_bytes.to_string()),
        ("--workers", config.workers.to_string()),
        ("--processes", processes.to_string()),
        (
            "checkpoints (--checkpoint-dir, --checkpoint-interval)",
            checkpoints,
        ),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_string(), value))
    .collect()
}

/// A hash of [`job_parts`] (FNV-1a: the same on every machine and build).
fn fingerprint(parts: &[(String, String)]) -> u64 {
    let text: String = parts.iter().map(|(n, v)| format!("{n}={v}|")).collect();
    window_timely::cluster::fnv1a(text.as_bytes())
}

/// A failure of the timely runtime as the single-threaded runtime's would be reported.
fn failure_error(e: TimelyError) -> anyhow::Error {
    match e {
        TimelyError::Input(e) => job_error(RuntimeError::Input(e)),
        TimelyError::Source {
            source_name,
            message,
        } => job_error(RuntimeError::Source {
            source_name,
            message,
        }),
        TimelyError::Output(e) => job_error(RuntimeError::Output(e)),
        other => anyhow!("{other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::fan_out;
    use engine::job::WindowSpec;

    #[test]
    fn fan_out_is_windows_per_element() {
        let sliding = |size, slide| WindowSpec::Sliding {
            size,
            slide,
            offset: 0,
        };
        // Flink's SlidingEventTimeWindows: ceil(size / slide) windows per element.
        assert_eq!(fan_out(&sliding(60_000, 500)), 120);
        assert_eq!(fan_out(&sliding(86_400_000, 1_000)), 86_400);
        assert_eq!(fan_out(&sliding(1_000, 300)), 4);
        assert_eq!(fan_out(&sliding(300, 1_000)), 1);
        let tumbling = WindowSpec::Tumbling {
            size: 1_000,
            offset: 0,
        };
        assert_eq!(fan_out(&tumbling), 1);
        assert_eq!(fan_out(&WindowSpec::Session { gap: 10 }), 1);
    }
}
