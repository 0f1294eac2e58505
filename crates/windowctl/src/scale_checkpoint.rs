//! `windowctl run --workers N --checkpoint-dir DIR`: checkpoints of the timely runtime, per key
//! group, that a run with any number of workers resumes from (issue #14 item 4,
//! `docs/checkpoints.md`).
//!
//! The file is the single-threaded runtime's (`crate::checkpoint`: magic, version, CRC,
//! postcard body, written to a temporary name, synced and renamed; the newest three kept; the
//! job's identity, without the worker count) with a `--workers` state: the cut after a chunk
//! ([`window_timely::Cut`]: each key group's snapshot, the keys' ranks, where the input stands),
//! taken by the workers at a chunk the reader marked and written by the writer thread once every
//! row up to that chunk is written and the outputs are synced.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use anyhow::{anyhow, Context, Result};
use engine::core::WindowComputation;
use engine::io::ErrorPolicy;
use window_timely::{Checkpointing, Cut};

use crate::checkpoint::{CheckpointBody, JobState};
use crate::output::{OutputMarks, OutputSink};
use crate::plan::Plan;
use crate::run::{finished_already, Checkpoints, Usage};

/// The checkpoints of a `--workers` run, and the state it resumes from.
pub(crate) struct Resumable {
    /// The directory and its counters (the writer thread takes checkpoints through it).
    pub(crate) checkpoints: Arc<Mutex<Checkpoints>>,
    /// The outputs' lengths to cut back to, on a resume.
    pub(crate) marks: Option<OutputMarks>,
    /// The cut to resume from (`None`: from the start).
    pub(crate) cut: Option<Cut>,
    /// Bad records skipped before the checkpoint.
    pub(crate) skipped: u64,
}

/// Opens `dir` for the job of `plan`; `None` when the job ran to the end already (said on
/// stderr, nothing written).
///
/// # Errors
/// What `--checkpoint-dir` refuses (as without `--workers`), a computation that cannot be
/// snapshotted, a checkpoint of another job or of a run without `--workers`, a damaged key
/// dictionary.
pub(crate) fn open(plan: &Plan, dir: &Path, interval: &str) -> Result<Option<Resumable>> {
    // Before anything is opened: a computation that cannot be checkpointed says so now.
    engine::job::build::<engine::io::KeyId>(&plan.spec)?
        .snapshot(&mut Vec::new())
        .map_err(|e| anyhow!("--checkpoint-dir: {e}"))?;
    let mut checkpoints = Checkpoints::open(plan, dir, interval)?;
    let Some(body) = checkpoints.resume.take() else {
        return Ok(Some(Resumable {
            checkpoints: Arc::new(Mutex::new(checkpoints)),
            marks: None,
            cut: None,
            skipped: 0,
        }));
    };
    if body.finished {
        finished_already(plan, &body, Some(dir))?;
        return Ok(None);
    }
    let JobState::Workers { cut, skipped } = body.state else {
        return Err(Usage::from(anyhow!(
            "--checkpoint-dir {}: checkpoint {} was taken by a run without --workers (its rows \
             are in the single-threaded runtime's order); drop --workers to resume it, or use \
             another directory",
            dir.display(),
            body.sequence
        ))
        .into());
    };
    checkpoints.resumed_from = Some(body.sequence);
    Ok(Some(Resumable {
        checkpoints: Arc::new(Mutex::new(checkpoints)),
        marks: Some(body.outputs),
        cut,
        skipped,
    }))
}

/// Takes a checkpoint of a `--workers` run: syncs the outputs and the dead letters, writes the
/// file with `cut` (`None`: before the first chunk, or with `finished` at the end).
///
/// # Errors
/// Syncing an output or writing the file fails.
pub(crate) fn take(
    checkpoints: &Mutex<Checkpoints>,
    out: &mut OutputSink,
    policy: &mut ErrorPolicy,
    cut: Option<Cut>,
    finished: bool,
) -> Result<()> {
    let started = Instant::now();
    let mut outputs = out.sync()?;
    if let Some(d) = policy.dead_letter.as_mut() {
        outputs.dead_letters = d
            .sync()
            .with_context(|| format!("syncing the dead-letter file {}", d.name()))?;
    }
    let mut c = checkpoints.lock().unwrap_or_else(PoisonError::into_inner);
    let body = CheckpointBody {
        identity: c.identity.clone(),
        sequence: c.checkpointer.next_sequence(),
        finished,
        outputs,
        // The cut names keys by text (each key group's snapshot carries its keys' texts): no
        // dictionary.
        keys: Vec::new(),
        state: JobState::Workers {
            cut,
            skipped: policy.skipped,
        },
    };
    c.checkpointer.write(&body, started)?;
    if !finished && crash_after().is_some_and(|n| c.checkpointer.taken >= n) {
        // A crash right after a checkpoint, for tests: nothing is flushed or synced, as after
        // `kill -9`. Never after the last one: a job that has ended is not stopped partway.
        std::process::exit(CRASH_EXIT);
    }
    Ok(())
}

/// The exit code of the crash that `WINDOWCTL_CRASH_AFTER_CHECKPOINTS` asks for.
const CRASH_EXIT: i32 = 86;

/// For tests: `WINDOWCTL_CRASH_AFTER_CHECKPOINTS=N` ends the process at once after the N-th
/// checkpoint of the run (before the job would end), so that a test stops a `--workers` run
/// after a chosen cut as well as at a random moment.
fn crash_after() -> Option<u64> {
    std::env::var("WINDOWCTL_CRASH_AFTER_CHECKPOINTS")
        .ok()?
        .parse()
        .ok()
}

/// What the timely runtime needs to take checkpoints and to resume: the cut, the interval, and
/// the writer of checkpoints (on its writer thread).
pub(crate) fn checkpointing(r: &mut Resumable) -> Checkpointing<OutputSink> {
    let checkpoints = Arc::clone(&r.checkpoints);
    let interval = checkpoints
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .checkpointer
        .interval();
    Checkpointing {
        resume: r.cut.take(),
        interval,
        write: Box::new(move |out, policy, cut| {
            take(&checkpoints, out, policy, Some(cut), false).map_err(|e| format!("{e:#}"))
        }),
    }
}
