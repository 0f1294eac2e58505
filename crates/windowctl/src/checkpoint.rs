//! Checkpoints of `windowctl run` (`--checkpoint-dir DIR`): files that let a killed job resume
//! with byte-identical outputs.
//!
//! A checkpoint is taken between two batches of the runtime, every `--checkpoint-interval` of
//! processing time, at the end of the job, and when SIGINT or SIGTERM stops it. It holds the
//! runtime's state ([`engine::runtime::RuntimeSnapshot`]: each input's position and watermark
//! generator, the watermark combiner, the counters, the computation's snapshot), the job's key
//! dictionary (the state names keys by id), and the length of every output after it was
//! flushed and synced. Resuming cuts each output back to its recorded length and continues
//! every input from its recorded position, so what was written after the checkpoint is written
//! again, once (Flink's checkpoint plus a sink that truncates to the checkpointed length on
//! recovery, `docs/checkpoints.md`).
//!
//! **The file.** `DIR/checkpoint-NNNNNNNNNN.wcp`, NNNN the sequence number: the magic
//! `WCTLCKPT`, the format version (u32 little-endian), the body's length (u64) and CRC-32
//! (u32), then the body (postcard). It is written to a temporary name, synced, renamed over
//! the final name, and the directory synced; the newest [`RETAINED`] are kept. A file whose
//! magic, version, length or checksum is wrong is damaged: resuming falls back to the one
//! before (and says so), and stops with an error when none is valid, never resuming from bad
//! state.
//!
//! **The job's identity.** Every checkpoint carries the facts that define the job (window,
//! trigger, evictor, aggregate, strategy, time, lateness, watermarks, fields, each input's
//! path, size and modification time, the outputs); resuming with a checkpoint of another job
//! is refused with the first fact that differs, before anything is written.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use engine::io::InputSpec;
use engine::runtime::RuntimeSnapshot;
use serde::{Deserialize, Serialize};

use crate::output::OutputMarks;
use crate::plan::Plan;

/// The first bytes of a checkpoint file.
const MAGIC: &[u8; 8] = b"WCTLCKPT";
/// The format version this build writes and reads. 3: element values are `Number`s (exact
/// integers) and the min/max accumulators keep the extreme as one. 4: sliced windows emitting
/// changes keep the changes of fired windows for late updates (#15). 5: a key's closed slices
/// carry the late contributions to their front stack (#15). 6: those contributions are one of
/// two forms, running sums (an exact inverse) or the segment tree (#15). Older files are
/// refused. 7: the state is the single-threaded runtime's or a cut of a `--workers` run, per
/// key group (issue #14). 8: a cut's key ranks by key id, not by key text. 9: a cut holds
/// where each of several inputs stands. 10: a cut names keys by text again (each key group's
/// snapshot carries its keys' texts, `window_io::portable`), so that processes with
/// dictionaries of their own take and resume it.
pub(crate) const FORMAT_VERSION: u32 = 10;
/// Checkpoints kept in the directory (the newest); older ones are deleted after a new one is
/// in place (Flink's `state.checkpoints.num-retained`, here 3 so that two damaged files still
/// leave one to resume from).
pub(crate) const RETAINED: usize = 3;
/// Magic, version, length, checksum.
const HEADER_BYTES: usize = 8 + 4 + 8 + 4;

/// The facts that define a job, as `(name, value)` in a fixed order: what a resume compares.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct JobIdentity(pub(crate) Vec<(String, String)>);

impl JobIdentity {
    /// The identity of the job `plan` describes.
    ///
    /// # Errors
    /// An input file whose size or modification time cannot be read.
    pub(crate) fn of(plan: &Plan) -> Result<Self> {
        let mut facts: Vec<(String, String)> = Vec::new();
        let mut fact = |name: &str, value: String| facts.push((name.to_owned(), value));
        let job = serde_json::to_value(&plan.spec).context("describing the job")?;
        if let serde_json::Value::Object(members) = job {
            for (name, value) in members {
                fact(&name, value.to_string());
            }
        }
        fact("out-of-orderness", format!("{} ms", plan.out_of_orderness));
        fact(
            "watermark interval",
            format!("{} ms", plan.watermark_interval),
        );
        fact("idle timeout", format!("{:?}", plan.idle_timeout));
        let f = &plan.fields;
        fact("fields", format!("{},{},{}", f.time, f.key, f.value));
        if plan.no_header {
            // Only then: the checkpoints of jobs with a header keep their identity.
            fact("header", "none (--no-header)".to_owned());
        }
        // Only when not the default: a checkpoint of a job from before these settings resumes.
        if plan.time_unit != engine::io::TimeUnit::Millis {
            fact("time unit", plan.time_unit.to_string());
        }
        if plan.delimiter != engine::io::Delimiter::COMMA {
            fact("delimiter", plan.delimiter.to_string());
        }
        for (i, (spec, format)) in plan.inputs.iter().enumerate() {
            fact(&format!("input {}", i + 1), describe_input(spec, *format)?);
        }
        let o = &plan.outputs;
        let output = o.output.as_deref().map(Path::new);
        fact(
            "output",
            format!("{} ({:?})", resolved(output), o.output_format),
        );
        fact("late output", resolved(o.late_output.as_deref()));
        fact("on error", format!("{:?}", o.on_error).to_lowercase());
        fact("dead letters", resolved(o.dead_letter.as_deref()));
        Ok(Self(facts))
    }

    /// The first fact in which `self` (the checkpoint's) differs from `now` (this run's), as
    /// a sentence; `None` when they are the same job.
    pub(crate) fn difference(&self, now: &JobIdentity) -> Option<String> {
        for (name, value) in &now.0 {
            match self.0.iter().find(|(n, _)| n == name) {
                Some((_, was)) if was == value => {}
                Some((_, was)) => {
                    return Some(format!("its {name} is {was}, this run's is {value}"));
                }
                None => return Some(format!("it has no {name}, this run's is {value}")),
            }
        }
        self.0
            .iter()
            .find(|(n, _)| !now.0.iter().any(|(m, _)| m == n))
            .map(|(name, was)| format!("its {name} is {was}, this run has none"))
    }
}

/// An output path as the identity names it: absolute, its folder's symbolic links resolved (so
/// that the same command run from another folder, or `./out.csv` for `out.csv`, is told
/// apart, or not, by the file it writes); `none` when there is none.
fn resolved(path: Option<&Path>) -> String {
    let Some(path) = path else {
        return "none".to_owned();
    };
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let canonical = match (absolute.parent(), absolute.file_name()) {
        (Some(dir), Some(name)) => dir.canonicalize().map(|d| d.join(name)).ok(),
        _ => None,
    };
    canonical.unwrap_or(absolute).display().to_string()
}

/// An input file as its identity names it: format, canonical path, size and modification time.
fn describe_input(spec: &InputSpec, format: engine::io::InputFormat) -> Result<String> {
    let InputSpec::File(path) = spec else {
        return Ok(format!("{} ({format})", spec.source_name()));
    };
    let meta = fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .unwrap_or_default();
    let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
    Ok(format!(
        "{} ({format}, {} bytes, modified at {}.{:09} s since the epoch)",
        canonical.display(),
        meta.len(),
        modified.as_secs(),
        modified.subsec_nanos()
    ))
}

/// What a checkpoint file holds.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct CheckpointBody {
    /// The job it belongs to.
    pub(crate) identity: JobIdentity,
    /// Its number: 1 for a job's first checkpoint, then counting up (across resumes).
    pub(crate) sequence: u64,
    /// Whether the job had run to the end of its inputs (a rerun then writes nothing).
    pub(crate) finished: bool,
    /// The outputs' lengths after flushing and syncing.
    pub(crate) outputs: OutputMarks,
    /// The key dictionary's texts, ids 1, 2 ... in order.
    pub(crate) keys: Vec<String>,
    /// The state: the runtime's with the computation, or a `--workers` run's.
    pub(crate) state: JobState,
}

/// The state a checkpoint holds, by the runtime that took it.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum JobState {
    /// The single-threaded runtime with the computation.
    Runtime(RuntimeSnapshot),
    /// A `--workers` run (any number of workers): its cut after a chunk, per key group
    /// ([`window_timely::Cut`]; `None` before the first chunk), and the records skipped by the
    /// error policy so far.
    Workers {
        /// The cut; `None`: nothing read yet.
        cut: Option<window_timely::Cut>,
        /// Bad records skipped so far.
        skipped: u64,
    },
}

/// The checkpoint directory of a run and its counters.
#[derive(Debug)]
pub(crate) struct Checkpointer {
    /// `DIR/lock`, locked (an advisory `flock`) while the run lasts: a second run of the job on
    /// the same directory is refused instead of writing the same outputs at once. The kernel
    /// releases the lock when the process ends, however it ends.
    _lock: File,
    dir: PathBuf,
    interval: Duration,
    next_sequence: u64,
    last: Instant,
    /// Checkpoints written by this run.
    pub(crate) taken: u64,
    /// Size of the last one, in bytes.
    pub(crate) last_bytes: u64,
    /// Time spent taking them (syncing the outputs, snapshotting, writing).
    pub(crate) time: Duration,
}

/// The name of checkpoint `sequence`.
fn file_name(sequence: u64) -> String {
    format!("checkpoint-{sequence:010}.wcp")
}

/// The sequence number in a checkpoint file's name.
fn sequence_of(name: &str) -> Option<u64> {
    name.strip_prefix("checkpoint-")?
        .strip_suffix(".wcp")?
        .parse()
        .ok()
}

impl Checkpointer {
    /// The checkpoints of `dir` (made if missing), taken every `interval`: the newest valid
    /// checkpoint, if any, checked against `identity`. Damaged newer files are reported on
    /// stderr and skipped.
    ///
    /// # Errors
    /// The directory cannot be made or read; checkpoint files exist but none is valid; the
    /// newest valid one is of another job (the error names the difference: a
    /// [`crate::run::Usage`] error, exit 2).
    pub(crate) fn open(
        dir: &Path,
        interval: Duration,
        identity: &JobIdentity,
    ) -> Result<(Self, Option<CheckpointBody>)> {
        if dir.exists() && !dir.is_dir() {
            bail!("--checkpoint-dir {}: it is not a directory", dir.display());
        }
        fs::create_dir_all(dir)
            .with_context(|| format!("--checkpoint-dir {}: cannot create it", dir.display()))?;
        let lock = lock(dir)?;
        let mut found = list(dir)?;
        found.sort_unstable_by_key(|f| std::cmp::Reverse(f.0));
        let mut damaged = Vec::new();
        let mut newest = None;
        for (sequence, path) in &found {
            match read_checkpoint(path) {
                Ok(body) if body.sequence == *sequence => {
                    newest = Some(body);
                    break;
                }
                Ok(body) => damaged.push(format!(
                    "{}: holds checkpoint {}, not {sequence}",
                    path.display(),
                    body.sequence
                )),
                Err(e) => damaged.push(format!("{}: {e:#}", path.display())),
            }
        }
        if newest.is_none() && !found.is_empty() {
            bail!(
                "--checkpoint-dir {}: no valid checkpoint to resume from ({}); remove the \
                 directory to start the job afresh",
                dir.display(),
                damaged.join("; ")
            );
        }
        for d in &damaged {
            eprintln!("windowctl: warning: damaged checkpoint skipped: {d}");
        }
        if let Some(body) = &newest {
            if let Some(diff) = body.identity.difference(identity) {
                // A usage error (exit 2), as the other ways the command does not fit the
                // directory's checkpoint are (with or without --workers).
                return Err(crate::run::Usage::from(anyhow::anyhow!(
                    "--checkpoint-dir {}: checkpoint {} is of another job: {diff}; nothing was \
                     written (use another directory, or remove this one to start afresh)",
                    dir.display(),
                    body.sequence
                ))
                .into());
            }
        }
        let next_sequence = newest.as_ref().map_or(1, |b| b.sequence + 1);
        Ok((
            Self {
                _lock: lock,
                dir: dir.to_owned(),
                interval,
                next_sequence,
                last: Instant::now(),
                taken: 0,
                last_bytes: 0,
                time: Duration::ZERO,
            },
            newest,
        ))
    }

    /// Whether the interval has passed since the last checkpoint (or the start).
    pub(crate) fn due(&self) -> bool {
        self.last.elapsed() >= self.interval
    }

    /// How often a checkpoint is taken.
    pub(crate) fn interval(&self) -> Duration {
        self.interval
    }

    /// The sequence number the next checkpoint gets.
    pub(crate) fn next_sequence(&self) -> u64 {
        self.next_sequence
    }

    /// Writes `body` atomically as the next checkpoint and deletes the ones beyond the newest
    /// [`RETAINED`]; `started` is when taking it began (for the time spent).
    ///
    /// # Errors
    /// Encoding, writing, syncing or renaming fails (the previous checkpoints stay valid).
    pub(crate) fn write(&mut self, body: &CheckpointBody, started: Instant) -> Result<()> {
        let encoded = postcard::to_stdvec(body).context("encoding the checkpoint")?;
        let mut bytes = Vec::with_capacity(HEADER_BYTES + encoded.len());
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        bytes.extend_from_slice(&(encoded.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&crc32fast::hash(&encoded).to_le_bytes());
        bytes.extend_from_slice(&encoded);
        let name = file_name(body.sequence);
        let tmp = self.dir.join(format!(".{name}.tmp"));
        let target = self.dir.join(&name);
        let context = || format!("writing checkpoint {}", target.display());
        {
            let mut f = File::create(&tmp).with_context(context)?;
            f.write_all(&bytes).with_context(context)?;
            f.sync_all().with_context(context)?;
        }
        fs::rename(&tmp, &target).with_context(context)?;
        File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .with_context(context)?;
        self.next_sequence = body.sequence + 1;
        self.taken += 1;
        self.last_bytes = bytes.len() as u64;
        self.last = Instant::now();
        self.time += started.elapsed();
        self.prune();
        Ok(())
    }

    /// Deletes all but the newest [`RETAINED`] checkpoints, and leftover temporary files.
    /// Failures are ignored: an extra old file does no harm.
    fn prune(&self) {
        let Ok(mut found) = list(&self.dir) else {
            return;
        };
        found.sort_unstable_by_key(|f| std::cmp::Reverse(f.0));
        for (_, path) in found.iter().skip(RETAINED) {
            let _ = fs::remove_file(path);
        }
        if let Ok(entries) = fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                let name = e.file_name();
                let name = name.to_string_lossy();
                if name.starts_with(".checkpoint-") && name.ends_with(".wcp.tmp") {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
    }
}

/// Takes the lock of `dir` (see [`Checkpointer`]).
///
/// # Errors
/// Another run holds it, or the lock file cannot be made.
fn lock(dir: &Path) -> Result<File> {
    let path = dir.join("lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| {
            format!(
                "--checkpoint-dir {}: cannot open {}",
                dir.display(),
                path.display()
            )
        })?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => bail!(
            "--checkpoint-dir {}: another windowctl run is using it (it holds {}); two runs of \
             one job would write the same outputs at once",
            dir.display(),
            path.display()
        ),
        Err(TryLockError::Error(e)) => {
            Err(anyhow::Error::new(e).context(format!("locking {}", path.display())))
        }
    }
}

/// The checkpoint files of `dir`, with their sequence numbers.
fn list(dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let entries = fs::read_dir(dir)
        .with_context(|| format!("--checkpoint-dir {}: cannot read it", dir.display()))?;
    Ok(entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            sequence_of(&name.to_string_lossy()).map(|s| (s, e.path()))
        })
        .collect())
}

/// Reads and checks one checkpoint file.
///
/// # Errors
/// It cannot be read, or its magic, version, length, checksum or body is wrong.
pub(crate) fn read_checkpoint(path: &Path) -> Result<CheckpointBody> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .context("cannot read it")?;
    if bytes.len() < HEADER_BYTES || &bytes[..8] != MAGIC {
        bail!("not a windowctl checkpoint (no WCTLCKPT header)");
    }
    let word = |at: usize, n: usize| -> u64 {
        bytes[at..at + n]
            .iter()
            .rev()
            .fold(0, |acc, &b| (acc << 8) | u64::from(b))
    };
    let version = word(8, 4);
    if version != u64::from(FORMAT_VERSION) {
        bail!("format version {version}, this windowctl reads version {FORMAT_VERSION}");
    }
    let len = word(12, 8);
    let crc = word(20, 4);
    let body = &bytes[HEADER_BYTES..];
    if body.len() as u64 != len {
        bail!(
            "torn: {} body bytes where the header says {len}",
            body.len()
        );
    }
    if u64::from(crc32fast::hash(body)) != crc {
        bail!("checksum mismatch");
    }
    match postcard::take_from_bytes(body) {
        Ok((checkpoint, [])) => Ok(checkpoint),
        Ok((_, rest)) => bail!("{} bytes after its body", rest.len()),
        Err(e) => bail!("cannot decode it: {e}"),
    }
}
