//! `windowctl run` on the runtime (`engine::runtime::Runtime`): the sources, the error policy,
//! the progress bar, and how errors about an element are reported. The output sink is in
//! [`crate::output`].

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use engine::assigners::{SlidingWindows, WindowAssigner};
use engine::core::{ElementError, Number, TimeDomain};
use engine::io::{
    format_value, open_source, split_key_parts, CsvHeader, DeadLetterWriter, ErrorPolicy,
    EventTimes, InputError, InputErrorKind, InputSpec, KeyDictionary, KeyId, KeyTexts,
    ReadPosition,
};
use engine::job::duration::parse_duration;
use engine::job::Computation;
use engine::job::WindowSpec;
use engine::runtime::{
    DescribeRejection, ReaderSource, Runtime, RuntimeConfig, RuntimeError, Step,
};

use crate::args::RunArgs;
use crate::bound::Bounded;
use crate::checkpoint::{CheckpointBody, Checkpointer, JobIdentity, JobState};
use crate::output::{
    is_gzip_name, stdin_was_closed, stdout_was_closed, OutputMarks, OutputSink, ResultColumns,
};
use crate::plan::{plan, Plan};
use crate::resolve::Given;
use crate::summary::{summary, Facts};

/// The job's runtime, as `windowctl run` runs it: its computation held to the memory bound.
pub(crate) type JobRuntime = Runtime<KeyId, Number, Bounded>;

/// A job that cannot run as given (a flag or a job file's setting is wrong or does not fit the
/// others): the process exits with 2, as for a command line clap cannot parse, where a job that
/// fails while running exits with 1.
#[derive(Debug)]
pub(crate) struct Usage(anyhow::Error);

impl From<anyhow::Error> for Usage {
    fn from(e: anyhow::Error) -> Self {
        Self(e)
    }
}

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for Usage {}

/// A planning error as the process reports it: a usage error (exit 2), except that the bundled
/// data set not being found is a missing file, as an input that cannot be opened (exit 1).
pub(crate) fn usage_unless_missing_data(e: anyhow::Error) -> anyhow::Error {
    if e.chain().any(|c| c.is::<engine::io::BundledDataNotFound>()) {
        e
    } else {
        Usage::from(e).into()
    }
}

/// Allowed lateness that cannot apply: Flink keeps windows for late elements only in event
/// time and only for windows that end (a processing-time window, or a count or global window,
/// is cleaned up at its end or never), so the setting changes nothing there; say so instead of
/// ignoring it silently.
pub(crate) fn warn_about_lateness(plan: &Plan) {
    if plan.spec.allowed_lateness <= 0 {
        return;
    }
    let why = if plan.spec.time == engine::assigners::TimeDomain::ProcessingTime {
        "processing-time windows take no late elements (Flink applies allowed lateness in event time only)"
    } else if matches!(
        plan.spec.window,
        WindowSpec::Global | WindowSpec::GlobalEndOfStream | WindowSpec::Count { .. }
    ) {
        "global and count windows never end, so no element is late for them"
    } else {
        return;
    };
    eprintln!("windowctl: warning: --allowed-lateness has no effect here: {why}");
}

pub(crate) use crate::stopped::{AtStop, Stopped};

/// Runs `windowctl run`: plans the job of `args` (of which `given` were given on the command
/// line), runs it to the end of its inputs, writes its results and prints the summary; with
/// `--checkpoint-dir`, resumes from its newest checkpoint and takes new ones.
///
/// # Errors
/// A job that does not plan (see [`plan`]), an input or output that cannot be opened, a bad
/// input line (with `--on-error fail`), an element the job refuses, a write that fails, a
/// checkpoint that cannot be used or written; [`Stopped`] after SIGINT or SIGTERM.
pub(crate) fn run(args: &RunArgs, given: &Given) -> Result<()> {
    // First of all: a signal that comes while the job is planned, opened or restored stops it
    // at its first batch boundary too, instead of killing it there.
    let stop = StopSignals::register()?;
    let (plan, op) = plan(args, given).map_err(usage_unless_missing_data)?;
    if args.checkpoint_dir.is_none() && given.contains("checkpoint_interval") {
        return Err(Usage::from(anyhow!(
            "--checkpoint-interval needs --checkpoint-dir (where the checkpoints go)"
        ))
        .into());
    }
    warn_about_lateness(&plan);
    if crate::scale::wanted(args) {
        let signals = Arc::new(stop);
        let signal = Box::new(move || signals.received());
        let workers = args.workers.unwrap_or(1);
        return crate::scale::run_timely(args, &plan, workers.into(), signal);
    }
    if args.checkpoint_dir.is_some() {
        // Before anything is opened: a computation that cannot be checkpointed says so now.
        op.snapshot(&mut Vec::new())
            .map_err(|e| anyhow!("--checkpoint-dir: {e}"))?;
    }
    let mut checkpoints = match &args.checkpoint_dir {
        Some(dir) => Some(Checkpoints::open(&plan, dir, &args.checkpoint_interval)?),
        None => None,
    };
    let resume = checkpoints.as_mut().and_then(|c| c.resume.take());
    if let Some(body) = resume.as_ref().filter(|b| b.finished) {
        return finished_already(&plan, body, args.checkpoint_dir.as_deref());
    }
    let keys = match &resume {
        Some(b) => KeyDictionary::restored(b.keys.clone())
            .map_err(|e| anyhow!("the checkpoint's key dictionary: {e}"))?,
        None => KeyDictionary::shared(),
    };
    let resume = runtime_state(resume, args.checkpoint_dir.as_deref())?;
    let positions = resume.as_ref().map(|b| b.1.positions());
    let (readers, times) = open_readers(&plan, &keys, positions.as_deref())?;
    let mut rt = build_runtime(&plan, op, &keys, readers);
    let marks = resume.as_ref().map(|b| b.0.outputs);
    if let Some((body, runtime)) = resume {
        // Before any output is touched: a checkpoint that does not restore leaves them as
        // they are.
        rt.restore(runtime).map_err(|e| {
            anyhow!(
                "resuming from checkpoint {}: {e}; nothing was written (remove that checkpoint \
                 file to resume from the one before it)",
                body.sequence
            )
        })?;
        if let Some(c) = checkpoints.as_mut() {
            c.resumed_from = Some(body.sequence);
        }
    }
    let mut sink = open_sink(&plan, &keys, checkpoints.is_some(), marks.as_ref())?;
    let mut policy = error_policy(&plan, marks.as_ref())?;
    policy.skipped = rt.stats().skipped;
    rt.set_error_policy(policy);
    if let Some(c) = checkpoints.as_mut().filter(|c| c.resumed_from.is_none()) {
        // A first checkpoint before anything is read: a run killed before its next one
        // resumes from the start with the outputs as they were (the dead-letter file is
        // appended to, so its length at the start is what to cut back to).
        c.take(&mut rt, &mut sink, &keys, false)?;
    }
    let progress_bar =
        crate::progress::wanted(args.no_progress).then(|| crate::progress::bar(rt.progress().1));
    let started = Instant::now();
    let outcome = run_to_end(
        &mut rt,
        &mut sink,
        progress_bar.as_ref(),
        checkpoints.as_mut(),
        &keys,
        &stop,
    );
    let flushed = sink.finish();
    let stopped = outcome?;
    flushed?;
    summary(
        &plan,
        &Facts::of(&rt),
        sink.records_written(),
        started.elapsed(),
        stopped.is_some(),
        &times,
    );
    report_cut_dead_letters(rt.error_policy());
    if let Some(c) = &checkpoints {
        c.report();
    }
    match stopped {
        Some(signal) => Err(Stopped {
            signal,
            checkpointed: AtStop::checkpoint_if(checkpoints.is_some()),
        }
        .into()),
        None => Ok(()),
    }
}

/// The single-threaded runtime's state in `body`, if any.
///
/// # Errors
/// A checkpoint of a `--workers` run (which a run without `--workers` cannot resume).
fn runtime_state(
    body: Option<CheckpointBody>,
    dir: Option<&Path>,
) -> Result<Option<(CheckpointBody, engine::runtime::RuntimeSnapshot)>> {
    let Some(mut body) = body else {
        return Ok(None);
    };
    let state = std::mem::replace(
        &mut body.state,
        JobState::Workers {
            cut: None,
            skipped: 0,
        },
    );
    match state {
        JobState::Runtime(r) => Ok(Some((body, r))),
        JobState::Workers { .. } => Err(Usage::from(anyhow!(
            "--checkpoint-dir {}: checkpoint {} was taken by a run with --workers (its rows are \
             in the canonical order of the timely runtime); add --workers (any number) to \
             resume it, or use another directory",
            dir.unwrap_or_else(|| Path::new(".")).display(),
            body.sequence
        ))
        .into()),
    }
}

/// The job's output sink: with checkpoints, over files cut back to `marks` on a resume.
///
/// # Errors
/// As [`OutputSink::create`] and [`OutputSink::create_checkpointed`].
pub(crate) fn open_sink(
    plan: &Plan,
    keys: &Arc<KeyDictionary>,
    checkpointed: bool,
    marks: Option<&OutputMarks>,
) -> Result<OutputSink> {
    let columns = ResultColumns::of(&plan.spec);
    let texts = KeyTexts::new(Arc::clone(keys));
    if checkpointed {
        OutputSink::create_checkpointed(&plan.outputs, &columns, texts, marks)
    } else {
        OutputSink::create(&plan.outputs, &columns, texts)
    }
}

/// Opens the plan's inputs, each reader moved to its position of `positions` (a resume); with
/// a handle on each one's range of event times (for the summary).
fn open_readers(
    plan: &Plan,
    keys: &Arc<KeyDictionary>,
    positions: Option<&[Option<ReadPosition>]>,
) -> Result<(Vec<ReaderSource>, Vec<EventTimes>)> {
    plan.inputs
        .iter()
        .enumerate()
        .map(|(i, (spec, format))| {
            if matches!(spec, InputSpec::Stdin) && stdin_was_closed() {
                bail!(
                    "--input -: standard input is closed (the job was started with <&-), which \
                     would read as an empty input; give --input FILE or redirect a file"
                );
            }
            let mut reader = open_source(spec, *format, plan.fields.clone())?
                .reading(plan.reads)
                .with_time_unit(plan.time_unit)
                .with_delimiter(plan.delimiter);
            if plan.no_header {
                reader = reader.with_csv_header(CsvHeader::Absent);
            }
            if let Some(Some(p)) = positions.and_then(|p| p.get(i)) {
                reader.skip_to(*p)?;
            }
            let times = reader.event_times();
            // An input of unknown size is live (stdin, a socket, a path to a pipe: `<(cmd)`, a
            // FIFO, /dev/stdin), as for `--workers`: each event is handed over as it comes.
            let live = reader.total_bytes().is_none();
            Ok((ReaderSource::new(reader, live, Arc::clone(keys)), times))
        })
        .collect::<Result<Vec<_>>>()
        .map(|pairs| pairs.into_iter().unzip())
}

/// The runtime of the job: its configuration and sources (the error policy comes once the
/// outputs are open, [`error_policy`]).
fn build_runtime(
    plan: &Plan,
    op: Computation<KeyId>,
    keys: &Arc<KeyDictionary>,
    readers: Vec<ReaderSource>,
) -> JobRuntime {
    let config = RuntimeConfig {
        time: plan.spec.time,
        out_of_orderness: plan.out_of_orderness,
        watermark_interval: plan.watermark_interval,
        idle_timeout: plan.idle_timeout,
    };
    let op = Bounded::new(
        op,
        plan.spec.max_window_states,
        plan.spec.strategy,
        Arc::clone(keys),
    );
    let mut rt = Runtime::new(op, config);
    rt.set_rejection_report(rejection_report(plan, Arc::clone(keys)));
    for r in readers {
        rt.add_source(Box::new(r));
    }
    rt
}

/// Says on stderr how many dead letters hold only the first bytes of their line (the lines
/// longer than `MAX_RAW_BYTES`), if any.
pub(crate) fn report_cut_dead_letters(policy: &ErrorPolicy) {
    let cut = policy.dead_letter.as_ref().map_or(0, DeadLetterWriter::cut);
    if cut > 0 {
        eprintln!(
            "windowctl: {cut} dead letters hold only the first {} MiB of their line (longer \
             lines are cut there; their error column says how long the line is)",
            engine::io::source::MAX_RAW_BYTES >> 20
        );
    }
}

/// The job's error policy, with the dead-letter file (cut back to the checkpoint's length on a
/// resume, `marks`).
///
/// # Errors
/// The dead-letter file cannot be cut back or opened.
pub(crate) fn error_policy(plan: &Plan, marks: Option<&OutputMarks>) -> Result<ErrorPolicy> {
    let mut policy = ErrorPolicy::new(plan.outputs.on_error);
    if let Some(p) = &plan.outputs.dead_letter {
        let name = plan.outputs.dead_letter_name.clone();
        if p.as_os_str() == "-" {
            // Standard output (the plan made sure the results are not there).
            if stdout_was_closed() {
                bail!(
                    "{name} -: standard output is closed (the job was started with >&-): the \
                     dead letters would be lost; give {name} FILE"
                );
            }
            let writer = DeadLetterWriter::from_writer(Box::new(std::io::stdout()), "stdout", true)
                .with_context(|| format!("{name} -: writing its header to standard output"))?;
            return Ok(policy.with_dead_letter(writer));
        }
        if let Some(len) = marks.and_then(|m| m.dead_letters) {
            cut_back(p, len).context(name.clone())?;
        }
        let writer = DeadLetterWriter::create(p).context(name)?;
        policy = policy.with_dead_letter(writer);
    }
    Ok(policy)
}

/// A rerun of a job whose last checkpoint says it ran to the end: nothing to do, if its outputs
/// are as that checkpoint left them.
///
/// # Errors
/// An output is missing or has another length than the checkpoint recorded.
pub(crate) fn finished_already(
    plan: &Plan,
    body: &CheckpointBody,
    dir: Option<&Path>,
) -> Result<()> {
    let dir = dir.unwrap_or_else(|| Path::new(".")).display();
    let o = &plan.outputs;
    let files = [
        o.output
            .as_deref()
            .map(|p| (Path::new(p), Some(body.outputs.results.bytes))),
        o.late_output
            .as_deref()
            .map(|p| (p, body.outputs.late.map(|m| m.bytes))),
        o.dead_letter
            .as_deref()
            .map(|p| (p, body.outputs.dead_letters)),
    ];
    for (path, recorded) in files.into_iter().flatten() {
        let Some(recorded) = recorded else { continue };
        let now = std::fs::metadata(path).map(|m| m.len());
        if now.as_ref().ok() != Some(&recorded) {
            let now = now.map_or_else(
                |e| format!("cannot be read ({e})"),
                |n| format!("has {n} bytes"),
            );
            bail!(
                "the job already ran to the end (checkpoint {} in {dir}), but {} {now} where the \
                 checkpoint recorded {recorded}: it was changed since; remove {dir} to run the \
                 job again",
                body.sequence,
                path.display()
            );
        }
    }
    eprintln!(
        "windowctl: the job already ran to the end (checkpoint {} in {dir}); nothing was \
         written. Its outputs are as it left them; remove the directory to run it again",
        body.sequence
    );
    Ok(())
}

/// Cuts the file at `path` back to `len` bytes (a dead-letter file on a resume).
fn cut_back(path: &Path, len: u64) -> Result<()> {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .with_context(|| format!("{}: cannot open it to resume", path.display()))?;
    let now = f.metadata()?.len();
    if now < len {
        bail!(
            "{}: it has {now} bytes, fewer than the {len} the checkpoint recorded: it was \
             changed since",
            path.display()
        );
    }
    f.set_len(len)
        .with_context(|| format!("{}: cannot cut it back to the checkpoint", path.display()))
}

/// Steps the runtime until its inputs end, it fails or a signal stops it, showing its
/// progress on `progress_bar` and taking checkpoints when they are due, at the end and at a
/// stop. Returns the signal that stopped it, if one did.
fn run_to_end(
    rt: &mut JobRuntime,
    sink: &mut OutputSink,
    progress_bar: Option<&indicatif::ProgressBar>,
    mut checkpoints: Option<&mut Checkpoints>,
    keys: &KeyDictionary,
    stop: &StopSignals,
) -> Result<Option<i32>> {
    rt.start();
    let outcome = loop {
        let step = match rt.step(sink) {
            Ok(step) => step,
            Err(e) => break Err(job_error(e)),
        };
        // A batch boundary: the memory bound, before a checkpoint could keep the state.
        if let Err(e) = rt.computation().check() {
            break Err(e);
        }
        let stopped = stop.received();
        let finished = step == Step::Finished;
        if let Some(c) = checkpoints.as_deref_mut() {
            if finished || stopped.is_some() || c.checkpointer.due() {
                if let Err(e) = c.take(rt, sink, keys, finished) {
                    break Err(e);
                }
            }
        }
        if finished {
            break Ok(None);
        }
        if stopped.is_some() {
            break Ok(stopped);
        }
        if let Some(pb) = progress_bar {
            pb.set_position(rt.progress().0);
        }
    };
    if let Some(pb) = progress_bar {
        pb.finish_and_clear();
    }
    outcome
}

/// SIGINT and SIGTERM as flags the run loop looks at between batches. A second signal at
/// least [`REPEAT_AFTER`] after the first ends the process at once (exit 128 + its number),
/// for a job that does not reach a batch boundary; one sooner is the same request again (GNU
/// `timeout` signals the command and then its whole process group: two SIGTERMs within
/// microseconds, which ended a `--workers` job before its summary, 1 run in 4 of a trial).
struct StopSignals {
    int: Arc<AtomicBool>,
    term: Arc<AtomicBool>,
}

/// How long after a first SIGINT or SIGTERM a second one ends the process at once.
const REPEAT_AFTER: std::time::Duration = std::time::Duration::from_millis(500);

impl StopSignals {
    /// Starts a thread that takes the signals (signal-hook's iterator: no code of ours runs in
    /// a signal handler).
    ///
    /// # Errors
    /// The handlers cannot be registered, or the thread cannot be started.
    fn register() -> Result<Self> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let int = Arc::new(AtomicBool::new(false));
        let term = Arc::new(AtomicBool::new(false));
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
            .context("registering signal handlers")?;
        let flags = (Arc::clone(&int), Arc::clone(&term));
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                let mut first: Option<Instant> = None;
                for signal in signals.forever() {
                    match first {
                        None => {
                            let flag = if signal == SIGINT { &flags.0 } else { &flags.1 };
                            flag.store(true, Ordering::Relaxed);
                            first = Some(Instant::now());
                        }
                        Some(at) if at.elapsed() >= REPEAT_AFTER => {
                            std::process::exit(128 + signal);
                        }
                        Some(_) => {} // the same request again
                    }
                }
            })
            .context("starting the signal thread")?;
        Ok(Self { int, term })
    }

    /// The signal received, if any.
    fn received(&self) -> Option<i32> {
        if self.int.load(Ordering::Relaxed) {
            Some(signal_hook::consts::SIGINT)
        } else if self.term.load(Ordering::Relaxed) {
            Some(signal_hook::consts::SIGTERM)
        } else {
            None
        }
    }
}

/// The checkpoints of a run: the directory, the job's identity, the checkpoint to resume from.
pub(crate) struct Checkpoints {
    pub(crate) checkpointer: Checkpointer,
    pub(crate) identity: JobIdentity,
    /// The newest valid checkpoint, until the run takes it to resume.
    pub(crate) resume: Option<CheckpointBody>,
    /// The checkpoint the run resumed from.
    pub(crate) resumed_from: Option<u64>,
}

/// `--checkpoint-interval`, parsed.
///
/// # Errors
/// It does not parse as a duration, or is 0.
pub(crate) fn checkpoint_interval(interval: &str) -> Result<Duration> {
    let ms = parse_duration(interval).map_err(|e| anyhow!("--checkpoint-interval: {e}"))?;
    if ms <= 0 {
        bail!("--checkpoint-interval: must be more than 0, got {interval:?}");
    }
    Ok(Duration::from_millis(ms.unsigned_abs()))
}

impl Checkpoints {
    /// Whether the job of `plan` can be checkpointed (inputs that can be replayed, outputs
    /// that can be cut back) and its interval: the checks that make a usage error (exit 2).
    ///
    /// # Errors
    /// An input that cannot be replayed (stdin, a socket); an output that is gzip or not a
    /// regular file; an interval that does not parse or is 0.
    fn usable(plan: &Plan, interval: &str) -> Result<Duration> {
        if let Some((spec, _)) = plan
            .inputs
            .iter()
            .find(|(s, _)| !matches!(s, InputSpec::File(_)))
        {
            bail!(
                "--checkpoint-dir: {} cannot be replayed after a restart (Flink's socket source \
                 is not fault tolerant either); read from files to checkpoint",
                spec.source_name()
            );
        }
        for (spec, _) in &plan.inputs {
            if let InputSpec::File(path) = spec {
                // A pipe or FIFO named as a path (`<(cmd)`, `/dev/stdin`) is read once, as stdin.
                if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
                    bail!(
                        "--checkpoint-dir: {} is not a regular file (a pipe or a FIFO): it \
                         cannot be replayed after a restart; read from files to checkpoint",
                        path.display()
                    );
                }
            }
        }
        let o = &plan.outputs;
        if o.output.as_deref().is_none_or(|p| p == "-") {
            bail!(
                "--checkpoint-dir needs the results in a file ({} FILE): stdout cannot be cut \
                 back to a checkpoint when the job resumes",
                o.output_name
            );
        }
        let named = [
            (&o.late_output, &o.late_output_name),
            (&o.dead_letter, &o.dead_letter_name),
        ];
        if let Some((_, name)) = named
            .iter()
            .find(|(p, _)| p.as_deref() == Some(Path::new("-")))
        {
            bail!(
                "--checkpoint-dir needs {name} in a file: standard output (-) cannot be cut back \
                 to a checkpoint when the job resumes"
            );
        }
        let outputs = [
            o.output.as_deref().filter(|p| *p != "-").map(Path::new),
            o.late_output.as_deref(),
            o.dead_letter.as_deref(),
        ];
        for path in outputs.into_iter().flatten() {
            if is_gzip_name(&path.to_string_lossy()) {
                bail!(
                    "--checkpoint-dir: {} would be gzip-compressed, and a gzip stream cannot be \
                     cut back to a checkpoint; write it plain and compress it when the job is done",
                    path.display()
                );
            }
            if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
                bail!(
                    "--checkpoint-dir: {} is not a regular file (a device, a pipe or a folder), \
                     which a resumed job cannot cut back to its checkpoint; write to a file, or \
                     leave out --checkpoint-dir",
                    path.display()
                );
            }
        }
        if plan.watermark_interval > 0
            || plan.idle_timeout.is_some()
            || plan.spec.time == engine::assigners::TimeDomain::ProcessingTime
        {
            eprintln!(
                "windowctl: note: this job's output depends on timing (periodic watermarks, \
                 idleness or processing time), so two runs can differ; a resumed run \
                 loses and repeats nothing, but need not match any one uninterrupted run byte for \
                 byte"
            );
        }
        checkpoint_interval(interval)
    }

    /// The checkpoints of `dir` for the job of `plan`, every `interval`.
    ///
    /// # Errors
    /// [`Usage`] for what [`Checkpoints::usable`] refuses; a directory that cannot be used (see
    /// [`Checkpointer::open`]).
    pub(crate) fn open(plan: &Plan, dir: &Path, interval: &str) -> Result<Self> {
        let interval = Self::usable(plan, interval).map_err(Usage::from)?;
        let identity = JobIdentity::of(plan)?;
        let (checkpointer, resume) = Checkpointer::open(dir, interval, &identity)?;
        Ok(Self {
            checkpointer,
            identity,
            resume,
            resumed_from: None,
        })
    }

    /// Takes a checkpoint now: syncs the outputs, snapshots the runtime, writes the file.
    ///
    /// # Errors
    /// Syncing an output, snapshotting or writing fails.
    fn take(
        &mut self,
        rt: &mut JobRuntime,
        sink: &mut OutputSink,
        keys: &KeyDictionary,
        finished: bool,
    ) -> Result<()> {
        let started = Instant::now();
        let mut outputs = sink.sync()?;
        if let Some(d) = rt.error_policy().dead_letter.as_mut() {
            outputs.dead_letters = d
                .sync()
                .with_context(|| format!("syncing the dead-letter file {}", d.name()))?;
        }
        let runtime = rt
            .snapshot()
            .map_err(|e| anyhow!("taking a checkpoint: {e}"))?;
        let body = CheckpointBody {
            identity: self.identity.clone(),
            sequence: self.checkpointer.next_sequence(),
            finished,
            outputs,
            keys: keys.texts(),
            state: JobState::Runtime(runtime),
        };
        self.checkpointer.write(&body, started)
    }

    /// The summary's line about checkpoints.
    pub(crate) fn report(&self) {
        let c = &self.checkpointer;
        let resumed = self
            .resumed_from
            .map_or_else(String::new, |s| format!("; resumed from checkpoint {s}"));
        eprintln!(
            "windowctl: checkpoints taken: {} (last {} bytes), {:.3} s in all{resumed}",
            c.taken,
            c.last_bytes,
            c.time.as_secs_f64()
        );
    }
}

/// A runtime error as windowctl reports it.
pub(crate) fn job_error(e: RuntimeError) -> anyhow::Error {
    match e {
        RuntimeError::Element {
            error: error @ ElementError::TooManyWindowStates { .. },
            ..
        } => anyhow!("{error} (--max-window-states): use --strategy sliced:changes or keywindow (results only where they change; --strategy sliced keeps few states but still writes every window), or raise the limit"),
        other => anyhow::Error::new(other),
    }
}

/// Whether the native operator takes an element at `timestamp` of the job's tumbling or sliding
/// windows, in event time: all of its windows fit in `i64` (`SlidingWindows`). Near the ends of
/// `i64` it takes a few elements the ordered strategies refuse (docs/sliced.md, "Ends of time").
fn native_takes(window: WindowSpec, timestamp: i64) -> bool {
    let (size, slide, offset) = match window {
        WindowSpec::Sliding {
            size,
            slide,
            offset,
        } => (size, slide, offset),
        WindowSpec::Tumbling { size, offset } => (size, size, offset),
        _ => return false,
    };
    SlidingWindows::new(size, slide, offset, TimeDomain::EventTime).is_ok_and(|assigner| {
        WindowAssigner::<()>::assign_windows(&assigner, &(), timestamp, 0, &mut Vec::new()).is_ok()
    })
}

/// How an element the window assigner rejected is reported: the field at fault, by its name
/// in the input, and the element as a CSV line.
pub(crate) fn rejection_report(
    plan: &Plan,
    keys: Arc<KeyDictionary>,
) -> DescribeRejection<KeyId, Number> {
    let (time_field, value_field) = (plan.fields.time.clone(), plan.fields.value.clone());
    let composite = !plan.outputs.key_columns.is_empty();
    // Key windows and sliced windows refuse windows near the ends of time that the native
    // operator takes (docs/sliced.md, "Ends of time"): say which strategy refused and what runs it.
    // (`auto` is resolved by now: this is the strategy that runs.)
    let ordered = plan.spec.auto_strategy().ordered().is_some();
    let strategy = plan.spec.auto_strategy().name();
    let window = plan.spec.window;
    Box::new(move |r, source, line, timestamp| {
        let mut key = keys.text(r.key).unwrap_or_default().to_string();
        if composite {
            // The key fields, each a field of the line.
            key = split_key_parts(&key).join(",");
        }
        let value = r.element;
        // A count reads no value: NaN where the line has none.
        let (shown, raw_value) = match value.is_nan() {
            true => ("no value".to_owned(), String::new()),
            false => (format!("value {}", format_value(value)), value.to_string()),
        };
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
                    format_value(value)
                ),
                // Flink's "no timestamp" (Long.MIN_VALUE), read from the input.
                ElementError::MissingTimestamp => format!(
                    "element ({timestamp}, {shown}): timestamp {timestamp} is i64::MIN, which stands for \"no timestamp\" (Flink's Long.MIN_VALUE) and has no event-time window"
                ),
                ElementError::TimestampOutOfRange { .. } if ordered && native_takes(window, timestamp) => format!(
                    "element ({timestamp}, {shown}) rejected by the {strategy} strategy (--strategy, default auto): {}; it keeps every window of an element inside the i64 range, --strategy native takes this element",
                    r.error
                ),
                ElementError::TimestampOutOfRange { .. } if ordered => format!(
                    "element ({timestamp}, {shown}) rejected by the {strategy} strategy (--strategy, default auto): {}; the native operator refuses it too",
                    r.error
                ),
                ref err => format!(
                    "element ({timestamp}, {shown}) rejected by the window assigner: {err}"
                ),
            },
            raw: format!("{timestamp},{key},{raw_value}").into_bytes(),
            raw_cut: false,
            kind: InputErrorKind::InvalidValue,
        }
    })
}
