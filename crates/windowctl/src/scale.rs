//! `windowctl run --workers N`: the job on timely dataflow ([`window_timely`]), keys partitioned
//! across N worker threads, the output byte-identical for any N (`docs/scale-out.md`).

use std::io::Cursor;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use engine::assigners::TimeDomain;
use engine::io::{
    open_bytes, CsvHeader, EventReader, FieldNames, FieldUse, InputFormat, InputSpec,
    KeyDictionary, TimeUnit,
};
use engine::job::{Computation, JobSpec};
use engine::runtime::{RunStats, RuntimeError};
use window_timely::{Describe, FinalSteps, JobParts, TimelyConfig, TimelyError, TimelyInput};

use crate::args::RunArgs;
use crate::output::stdin_was_closed;
use crate::plan::Plan;
use crate::run::{error_policy, job_error, open_sink, rejection_report, report_cut_dead_letters};
use crate::summary::{summary, Facts};

/// What every worker needs of the job: its spec (for its computation), how to read a chunk,
/// how to report a rejected element.
struct Parts {
    spec: JobSpec,
    name: String,
    format: InputFormat,
    fields: FieldNames,
    reads: FieldUse,
    time_unit: TimeUnit,
    delimiter: engine::io::Delimiter,
    no_header: bool,
    /// Makes the reporter of rejected elements (the one-worker runtime's, per worker).
    describe: Box<dyn Fn() -> Describe + Send + Sync>,
    /// `--max-window-states`.
    max_held: Option<usize>,
    /// Whether SIGINT or SIGTERM came.
    interrupted: Box<dyn Fn() -> bool + Send + Sync>,
}

impl JobParts for Parts {
    type Computation = Computation<engine::io::KeyId>;

    fn computation(&self) -> Self::Computation {
        // The plan built this spec once already: it builds.
        engine::job::build(&self.spec).expect("the planned job builds")
    }

    fn reader(&self, bytes: Vec<u8>) -> EventReader {
        let reader = EventReader::new(
            Cursor::new(bytes),
            self.name.clone(),
            self.format,
            self.fields.clone(),
        )
        .reading(self.reads)
        .with_time_unit(self.time_unit)
        .with_delimiter(self.delimiter);
        if self.no_header {
            reader.with_csv_header(CsvHeader::Absent)
        } else {
            reader
        }
    }

    fn describe(&self) -> Describe {
        (self.describe)()
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
}

/// Whether a trigger fires by the wall clock.
fn uses_processing_time(t: &engine::job::TriggerSpec) -> bool {
    use engine::job::TriggerSpec;
    match t {
        TriggerSpec::ProcessingTime | TriggerSpec::ContinuousProcessingTime { .. } => true,
        TriggerSpec::Purging { inner } => uses_processing_time(inner),
        _ => false,
    }
}

/// Refuses what the timely runtime does not run yet, naming the flag.
fn check(args: &RunArgs, plan: &Plan) -> Result<()> {
    if plan.spec.time != TimeDomain::EventTime {
        bail!("--workers runs event-time jobs only (processing time is not reproducible across workers yet); drop --workers");
    }
    if plan.inputs.len() != 1 {
        bail!("--workers runs jobs of one input (several inputs are not aligned across workers yet); drop --workers or give one --input");
    }
    if matches!(plan.inputs[0].0, InputSpec::Socket(_)) {
        bail!("--workers reads files and stdin, not sockets (a live input is not reproducible across workers); drop --workers");
    }
    if uses_processing_time(&plan.spec.trigger) {
        bail!("--workers runs event-time triggers only (a processing-time trigger fires by the clock, which is not reproducible across workers); drop --workers or --trigger");
    }
    if plan.watermark_interval != 0 {
        bail!("--workers needs a watermark after every element (--watermark-interval 0, the default for files)");
    }
    if plan.idle_timeout.is_some() {
        bail!("--workers does not take --idle-timeout (one input is never idle behind another)");
    }
    if args.checkpoint_dir.is_some() {
        bail!("--workers does not take checkpoints yet; drop --checkpoint-dir or --workers");
    }
    Ok(())
}

/// Runs the planned job on `workers` timely worker threads; as `run::run` otherwise.
///
/// # Errors
/// What the job cannot run with (see [`check`], a usage error), an input or output that cannot
/// be opened, and every way a job stops early, as the single-threaded runtime reports it.
pub(crate) fn run_timely(
    args: &RunArgs,
    plan: &Plan,
    workers: usize,
    signal: Box<dyn Fn() -> Option<i32> + Send + Sync>,
) -> Result<()> {
    let signal: Arc<dyn Fn() -> Option<i32> + Send + Sync> = Arc::from(signal);
    let asked = Arc::clone(&signal);
    let interrupted: Box<dyn Fn() -> bool + Send + Sync> = Box::new(move || asked().is_some());
    check(args, plan).map_err(crate::run::Usage::from)?;
    let (spec, format) = &plan.inputs[0];
    if matches!(spec, InputSpec::Stdin) && stdin_was_closed() {
        bail!(
            "--input -: standard input is closed (the job was started with <&-); give --input FILE"
        );
    }
    let keys = KeyDictionary::shared();
    let (bytes, _progress) = open_bytes(spec)?;
    let name = spec.source_name();
    let input = TimelyInput {
        name: name.clone(),
        bytes,
        csv_delimiter: (*format == InputFormat::Csv).then(|| plan.delimiter.byte()),
        csv_header: *format == InputFormat::Csv && !plan.no_header,
    };
    let describe_plan = Arc::new(plan.clone());
    let describe_keys = Arc::clone(&keys);
    let parts = Arc::new(Parts {
        spec: plan.spec.clone(),
        name,
        format: *format,
        fields: plan.fields.clone(),
        reads: plan.reads,
        time_unit: plan.time_unit,
        delimiter: plan.delimiter,
        no_header: plan.no_header,
        describe: Box::new(move || rejection_report(&describe_plan, Arc::clone(&describe_keys))),
        max_held: plan.spec.max_window_states,
        interrupted,
    });
    let sink = open_sink(plan, &keys, false, None)?;
    let policy = error_policy(plan, None)?;
    let mut config = TimelyConfig::new(workers, plan.out_of_orderness);
    if let Ok(bytes) = std::env::var("WINDOWCTL_CHUNK_BYTES") {
        // For tests: small chunks make many chunk boundaries in a small input.
        config.chunk_bytes = bytes
            .parse()
            .map_err(|e| anyhow!("WINDOWCTL_CHUNK_BYTES: {e}"))?;
    }
    let started = Instant::now();
    let outcome = window_timely::run(config, parts, input, Arc::clone(&keys), sink, policy)
        .map_err(|e| anyhow!("{e}"))?;
    let mut sink = outcome.output;
    let flushed = sink.finish();
    if let Some(failure) = outcome.failure {
        flushed.ok();
        return Err(failure_error(failure));
    }
    flushed?;
    let facts = Facts {
        source_name: plan.inputs[0].0.source_name(),
        stats: RunStats {
            events: outcome.events,
            rejected: outcome.rejected,
            skipped: outcome.policy.skipped,
        },
        metrics: outcome.metrics,
        live_windows: outcome.live_windows,
        state_line: format!("workers: {workers} (timely dataflow, one process)"),
    };
    let stopped = outcome.interrupted;
    let written = sink.records_written();
    summary(plan, &facts, written, started.elapsed(), stopped, &[]);
    report_cut_dead_letters(&outcome.policy);
    match signal().filter(|_| stopped) {
        // As on one thread: the outputs hold every row up to where the job stopped.
        Some(signal) => Err(crate::run::Stopped {
            signal,
            checkpointed: false,
        }
        .into()),
        None => Ok(()),
    }
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
