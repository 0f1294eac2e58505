//! `windowctl run` on the runtime (`engine::runtime::Runtime`): the sources, the error policy,
//! the progress bar, and how errors about an element are reported. The output sink is in
//! [`crate::output`].

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, Context, Result};
use engine::core::ElementError;
use engine::io::{
    format_number, open_source, DeadLetterWriter, ErrorPolicy, InputError, InputErrorKind,
    InputSpec, KeyDictionary, KeyId, KeyTexts,
};
use engine::job::Computation;
use engine::runtime::{
    DescribeRejection, ReaderSource, Runtime, RuntimeConfig, RuntimeError, Step,
};

use crate::args::RunArgs;
use crate::output::OutputSink;
use crate::plan::{plan, Plan};
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
    let flushed = sink.finish();
    outcome.map_err(job_error)?;
    flushed?;
    summary(&plan, &rt, sink.records_written(), started.elapsed());
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
