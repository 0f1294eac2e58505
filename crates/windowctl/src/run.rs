//! `windowctl run` on the runtime (`engine::runtime::Runtime`): the sources, the error policy,
//! the output sink the computation writes its results and late elements to, the progress bar,
//! and how errors about an element are reported.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, Context, Result};
use engine::core::{AnyWindow, ElementError, Window, WindowOutput};
use engine::io::{
    create_output, format_number, open_source, DeadLetterWriter, ErrorPolicy, InputError,
    InputErrorKind, InputSpec, KeyDictionary, KeyId, KeyTexts, LateWriter, OutputFormat,
    ResultWriter,
};
use engine::job::{Computation, JobResult};
use engine::runtime::{
    DescribeRejection, ReaderSource, Runtime, RuntimeConfig, RuntimeError, Step,
};

use crate::args::RunArgs;
use crate::plan::{plan, Outputs, Plan};
use crate::resolve::Given;
use crate::summary::summary;

/// Runs `windowctl run`: plans the job of `args` (of which `given` were given on the command
/// line), runs it to the end of its inputs, writes its results and prints the summary.
///
/// # Errors
/// A job that does not plan (see [`plan`]), an input or output that cannot be opened, a bad
/// input line (with `--on-error fail`), an element the job refuses, a write that fails.
pub(crate) fn run(args: &RunArgs, given: &Given) -> Result<()> {
    let (plan, op) = plan(args, given)?;
    let keys = KeyDictionary::shared();
    let readers = plan
        .inputs
        .iter()
        .map(|(spec, format)| {
            let live = !matches!(spec, InputSpec::File(_));
            open_source(spec, *format, plan.fields.clone())
                .map(|r| ReaderSource::new(r, live, Arc::clone(&keys)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut sink = OutputSink::create(
        &plan.outputs,
        plan.spec.strategy.emits_empty_results(),
        KeyTexts::new(Arc::clone(&keys)),
    )?;
    let mut policy = ErrorPolicy::new(plan.outputs.on_error);
    if let Some(p) = &plan.outputs.dead_letter {
        let writer = DeadLetterWriter::create(p).context(plan.outputs.dead_letter_name.clone())?;
        policy = policy.with_dead_letter(writer);
    }
    let config = RuntimeConfig {
        time: plan.spec.time,
        out_of_orderness: plan.out_of_orderness,
        watermark_interval: plan.watermark_interval,
        idle_timeout: plan.idle_timeout,
    };
    let mut rt = Runtime::new(op, config);
    rt.set_error_policy(policy);
    rt.set_rejection_report(rejection_report(&plan, keys));
    for r in readers {
        rt.add_source(Box::new(r));
    }
    let progress_bar = (!args.no_progress && std::io::stderr().is_terminal())
        .then(|| make_progress_bar(rt.progress().1));
    let started = Instant::now();
    let outcome = run_to_end(&mut rt, &mut sink, progress_bar.as_ref());
    let flushed = sink.flush_all();
    outcome.map_err(job_error)?;
    flushed?;
    summary(
        &plan,
        &rt,
        sink.results.records_written(),
        started.elapsed(),
    );
    Ok(())
}

/// Steps the runtime until its inputs end or it fails, showing its progress on `progress_bar`.
fn run_to_end(
    rt: &mut Runtime<KeyId, f64, Computation<KeyId>>,
    sink: &mut OutputSink,
    progress_bar: Option<&indicatif::ProgressBar>,
) -> Result<(), RuntimeError> {
    rt.start();
    let outcome = loop {
        match rt.step(sink) {
            Ok(Step::Finished) => break Ok(()),
            Ok(_) => {
                if let Some(pb) = progress_bar {
                    pb.set_position(rt.progress().0);
                }
            }
            Err(e) => break Err(e),
        }
    };
    if let Some(pb) = progress_bar {
        pb.finish_and_clear();
    }
    outcome
}

/// Writes results and late elements; keeps the first I/O error (the sink trait cannot return it).
struct OutputSink {
    /// The results writer.
    results: ResultWriter,
    /// The late-elements writer, if there is a late output.
    late: Option<LateWriter>,
    /// The first write error, reported at the next flush; its message names the output.
    error: Option<std::io::Error>,
    /// The results output as errors name it: `stdout`, or `--output FILE`.
    results_name: String,
    /// The late output as errors name it: `--late-output FILE` (or the job file's key).
    late_name: String,
    /// The keys' texts, by id.
    keys: KeyTexts,
}

/// `e` with `name` (the output it happened on) before its message.
fn on_output(name: &str, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{name}: {e}"))
}

impl OutputSink {
    /// The results writer (`--output`, with the `empty` column for strategies that emit empty
    /// results) and the late-element writer (`--late-output`).
    fn create(outputs: &Outputs, empty_column: bool, keys: KeyTexts) -> Result<Self> {
        let output_target = outputs.output.as_deref().unwrap_or("-");
        let late = match &outputs.late_output {
            Some(p) => {
                let w = create_output(&p.display().to_string())
                    .context(outputs.late_output_name.clone())?;
                Some(LateWriter::new(w, OutputFormat::from_path(p)))
            }
            None => None,
        };
        let out = create_output(output_target)?;
        let results_name = match output_target {
            "-" => "stdout".to_owned(),
            file => format!("--output {file}"),
        };
        let late_name = outputs.late_output.as_ref().map_or_else(String::new, |p| {
            format!("{} {}", outputs.late_output_name, p.display())
        });
        Ok(Self {
            results: if empty_column {
                ResultWriter::with_empty_column(out, outputs.output_format)
            } else {
                ResultWriter::new(out, outputs.output_format)
            },
            late,
            error: None,
            results_name,
            late_name,
            keys,
        })
    }

    /// Flushes both writers, at the end (also after a failed run, to keep what was written).
    fn flush_all(&mut self) -> Result<()> {
        let flushed = self
            .results
            .flush()
            .map_err(|e| on_output(&self.results_name, e))
            .context("writing output");
        if let Some(l) = self.late.as_mut() {
            l.flush()
                .map_err(|e| on_output(&self.late_name, e))
                .context("writing late output")?;
        }
        flushed
    }

    /// Writes one result row (or an `empty` one), unless a write failed before.
    fn write(&mut self, key: KeyId, window: &AnyWindow, value: Option<f64>, empty: bool) {
        if self.error.is_some() {
            return;
        }
        let written =
            self.results
                .write_interned(&mut self.keys, key, window.bounds(), value, empty);
        if let Err(e) = written {
            self.error = Some(on_output(&self.results_name, e));
        }
    }
}

/// An id the job's dictionary did not make (a bug: every id comes from it).
fn unknown_key(id: KeyId) -> std::io::Error {
    std::io::Error::other(format!("key id {} has no text", id.index()))
}

impl WindowOutput<KeyId, AnyWindow, f64, JobResult> for OutputSink {
    fn result(&mut self, key: &KeyId, window: &AnyWindow, result: JobResult, _watermark: i64) {
        let value = match result {
            JobResult::Number(v) => v,
            // windowctl offers numeric aggregates only (the plan refuses the others).
            JobResult::List(_) | JobResult::Elements(_) => None,
        };
        self.write(*key, window, value, false);
    }

    fn emptied(&mut self, key: &KeyId, window: &AnyWindow, _watermark: i64) {
        self.write(*key, window, None, true);
    }

    fn take_error(&mut self) -> Option<std::io::Error> {
        self.error.take()
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.results
            .flush()
            .map_err(|e| on_output(&self.results_name, e))?;
        match self.late.as_mut() {
            Some(l) => l.flush().map_err(|e| on_output(&self.late_name, e)),
            None => Ok(()),
        }
    }

    fn late(&mut self, key: KeyId, timestamp: i64, value: f64, watermark: i64) {
        if self.error.is_some() {
            return;
        }
        if let Some(w) = self.late.as_mut() {
            let Some(text) = self.keys.get(key) else {
                self.error = Some(unknown_key(key));
                return;
            };
            if let Err(e) = w.write_late_parts(timestamp, text, value, watermark) {
                self.error = Some(on_output(&self.late_name, e));
            }
        }
    }
}

/// A runtime error as windowctl reports it.
fn job_error(e: RuntimeError) -> anyhow::Error {
    match e {
        RuntimeError::Element {
            error: error @ ElementError::TooManyWindowStates { .. },
            ..
        } => anyhow!("{error} (--max-window-states): use --strategy sliced:changes or keywindow (results only where they change; --strategy sliced keeps few states but still writes every window), or raise the limit"),
        other => anyhow::Error::new(other),
    }
}

/// How an element the window assigner rejected is reported: the field at fault, by its name
/// in the input, and the element as a CSV line.
fn rejection_report(plan: &Plan, keys: Arc<KeyDictionary>) -> DescribeRejection<KeyId, f64> {
    let (time_field, value_field) = (plan.fields.time.clone(), plan.fields.value.clone());
    Box::new(move |r, source, line, timestamp| {
        let key = keys.text(r.key).unwrap_or_default();
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
            raw: format!("{timestamp},{key},{value}"),
            kind: InputErrorKind::InvalidValue,
        }
    })
}

/// The progress bar over the inputs' bytes (a spinner when their size is unknown).
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
