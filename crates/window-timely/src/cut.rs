//! Checkpoints under several workers: a consistent cut after a chunk, per key group, that a run
//! with any number of workers resumes from (Flink's aligned checkpoint barrier and key groups).
//!
//! The chunk reader marks a chunk when a checkpoint is due (by the wall clock); the mark reaches
//! every worker in the chunk's summary, which every worker gets. A worker that has processed a
//! marked chunk (and brought every key group to the watermark) leaves its part of the cut here:
//! each owned key group's snapshot (the group's computation's own `snapshot`), the ranks of its
//! keys (their first place in the input, for the canonical output order) and its counters. Once
//! the writer is past the chunk (every row up to it is handed to the output), the parts are
//! whole: the writer thread hands the [`Cut`] to [`Checkpointing::write`] (which syncs the
//! outputs and writes the file). A resume with `M` workers restores, on each, the key groups it
//! owns, and reads the input from the byte after the cut, numbering chunks on from it (chunk cuts
//! depend on the input only), so the output from there on is the same bytes.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use window_core::{AnyWindow, Number, WindowComputation};
use window_io::{ErrorPolicy, KeyId};
use window_job::JobResult;

use crate::chunks::Chunker;
use crate::parse::Summary;
use crate::worker::WindowWorker;
use crate::{JobParts, TimelyError, TimelyInput};

/// Where a marked chunk ends in the input, for the cut after it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct ChunkEnd {
    /// Bytes of the (decompressed) input through the end of the chunk.
    pub(crate) end: u64,
    /// The CSV header line, once read (a resumed reader puts it in front of every chunk).
    pub(crate) header: Option<Vec<u8>>,
    /// Several inputs: where each stands in the merge after the chunk (the workers' part of
    /// each, its lines and watermark, is filled in when the cut is whole); empty for one.
    pub(crate) inputs: Vec<InputCut>,
}

/// Where one of several inputs stands at a cut ([`crate::merge`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputCut {
    /// Bytes of the (decompressed) input through its last chunk merged before the cut: where a
    /// resume reads it on.
    pub offset: u64,
    /// Its CSV header line, if one was read by then.
    pub header: Option<Vec<u8>>,
    /// Its chunks merged before the cut.
    pub chunks: u64,
    /// Whether it ended before the cut (the workers were told).
    pub ended: bool,
    /// Its lines through the cut (for line numbers in messages).
    pub lines: u64,
    /// Its maximum event time so far, in ms.
    pub max: Option<i64>,
    /// The watermark it reported last, in ms.
    pub reported: i64,
}

/// A consistent cut of a job on several workers, after chunk [`Cut::chunk`]: what a checkpoint
/// holds besides the outputs' lengths and the key dictionary. It does not depend on the number
/// of workers (a group's snapshot is the same whichever worker held it).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cut {
    /// The last chunk processed (chunks are numbered from 0 from the input's start).
    pub chunk: u64,
    /// Bytes of the (decompressed) input through the end of that chunk: where a resume reads on.
    pub offset: u64,
    /// The CSV header line, if one was read by then.
    pub header: Option<Vec<u8>>,
    /// Lines of the input through the chunk (for line numbers in messages).
    pub lines: u64,
    /// The maximum event time so far, in ms.
    pub max: Option<i64>,
    /// The watermark so far, in ms.
    pub watermark: i64,
    /// Events read through the chunk.
    pub events: u64,
    /// Elements the computation rejected through the chunk.
    pub rejected: u64,
    /// The number of key groups (a resume must use the same).
    pub key_groups: u32,
    /// Each key group's snapshot, in group order.
    pub groups: Vec<GroupCut>,
    /// Each key's rank (its first element's place in the input, `chunk << 32 | place`), by its
    /// text (the processes of a cluster have dictionaries of their own), in rank order.
    pub ranks: Vec<(String, u64)>,
    /// Several inputs: where each stands (the fields above for the input are then input 0's,
    /// but for `offset` and `header`, which are unused); empty for one input.
    pub inputs: Vec<InputCut>,
}

/// One key group's snapshot (its computation's `snapshot`, written with key ids renumbered,
/// [`window_io::portable`]) and the texts of the keys it names, in their renumbered order: any
/// process restores it into its own dictionary, whichever process wrote it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupCut {
    /// The key group.
    pub group: u32,
    /// The texts of the keys the snapshot names: key number `n` in `bytes` is `keys[n]`.
    pub keys: Vec<String>,
    /// The snapshot.
    pub bytes: Vec<u8>,
}

/// Checkpoints of a run ([`crate::run_checkpointed`]).
pub struct Checkpointing<O> {
    /// The cut to resume from, if any.
    pub resume: Option<Cut>,
    /// How often a checkpoint is taken (wall clock; the first one an interval after the start).
    pub interval: Duration,
    /// Writes a checkpoint (syncs the output and the dead letters, writes the file); called on
    /// the writer thread once every row up to the cut is handed to the output. An error stops
    /// the job (`TimelyError::Checkpoint`).
    pub write: CheckpointWriter<O>,
}

/// What [`Checkpointing::write`] is.
pub type CheckpointWriter<O> =
    Box<dyn FnMut(&mut O, &mut ErrorPolicy, Cut) -> Result<(), String> + Send>;

impl<O> std::fmt::Debug for Checkpointing<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checkpointing")
            .field("resume", &self.resume.as_ref().map(|c| c.chunk))
            .field("interval", &self.interval)
            .finish_non_exhaustive()
    }
}

/// One worker's part of a cut. It goes to the writer (worker 0, process 0) with the worker's
/// rows of the chunk, so it crosses processes in a cluster: keys by text only.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Part {
    pub(crate) groups: Vec<GroupCut>,
    pub(crate) ranks: Vec<(String, u64)>,
    pub(crate) rejected: u64,
    /// The reporter's (worker 0's): events, lines, max, watermark.
    pub(crate) global: Option<(u64, u64, Option<i64>, i64)>,
    /// The reporter's, with several inputs: each input's lines, maximum, reported watermark.
    pub(crate) positions: Vec<(u64, Option<i64>, i64)>,
    /// A group that could not be snapshotted.
    pub(crate) error: Option<String>,
}

/// The parts of the cuts not yet whole, shared by the workers.
pub(crate) struct Cuts {
    /// The input's reader (for the header line of a cut where the job was stopped); `None`
    /// with several inputs and in a cluster (no cut where a signal stopped the job).
    chunker: Option<Arc<Chunker>>,
    /// The workers of the job (of every process).
    workers: usize,
    key_groups: u32,
    parts: Mutex<BTreeMap<u64, (ChunkEnd, Vec<Part>)>>,
}

impl Cuts {
    pub(crate) fn new(chunker: Option<Arc<Chunker>>, workers: usize, key_groups: u32) -> Self {
        Self {
            chunker,
            workers,
            key_groups,
            parts: Mutex::new(BTreeMap::new()),
        }
    }

    /// Leaves a worker's part of the cut after `chunk` (on the writer, as it comes, or at a
    /// stop).
    pub(crate) fn leave(&self, chunk: u64, end: &ChunkEnd, part: Part) {
        self.parts
            .lock()
            .entry(chunk)
            .or_insert_with(|| (end.clone(), Vec::new()))
            .1
            .push(part);
    }

    /// The first chunk with a cut for which `passed` holds (the writer is past it) and whose
    /// parts are all in, or will never be (`done`: every worker has ended). A periodic cut's
    /// parts are all in once the writer is past its chunk; a cut where a signal stopped the job
    /// is left after the workers passed the chunk, so it is waited for.
    pub(crate) fn first_passed(&self, passed: impl Fn(u64) -> bool, done: bool) -> Option<u64> {
        let parts = self.parts.lock();
        let (&c, (_, p)) = parts.first_key_value()?;
        (passed(c) && (done || p.len() >= self.workers)).then_some(c)
    }

    /// The whole cut after `chunk`, taken out; `Ok(None)` when a worker left no part (it
    /// stopped the job), `Err` when a part failed.
    pub(crate) fn take(&self, chunk: u64) -> Result<Option<Cut>, String> {
        let Some((end, parts)) = self.parts.lock().remove(&chunk) else {
            return Ok(None);
        };
        if parts.len() != self.workers {
            return Ok(None);
        }
        let mut cut = Cut {
            chunk,
            offset: end.end,
            header: end.header,
            lines: 0,
            max: None,
            watermark: i64::MIN,
            events: 0,
            rejected: 0,
            key_groups: self.key_groups,
            groups: Vec::new(),
            ranks: Vec::new(),
            inputs: end.inputs,
        };
        for p in parts {
            if let Some(e) = p.error {
                return Err(e);
            }
            cut.groups.extend(p.groups);
            cut.ranks.extend(p.ranks);
            cut.rejected += p.rejected;
            if let Some((events, lines, max, watermark)) = p.global {
                (cut.events, cut.lines, cut.max, cut.watermark) = (events, lines, max, watermark);
                for (input, (lines, max, reported)) in cut.inputs.iter_mut().zip(p.positions) {
                    (input.lines, input.max, input.reported) = (lines, max, reported);
                }
            }
        }
        cut.groups.sort_unstable_by_key(|g| g.group);
        cut.ranks.sort_unstable_by_key(|r| r.1);
        // Each key is one worker's (its group's owner), also after a resume.
        debug_assert!(
            cut.ranks.windows(2).all(|w| w[0].1 != w[1].1),
            "a key's rank in two workers' parts of a cut"
        );
        Ok(Some(cut))
    }
}

/// Checks `cut` before a resume (its key groups, each group's snapshot restored into a fresh
/// computation of `parts`) and moves `inputs` past it (each to its own offset, with several).
///
/// # Errors
/// [`TimelyError::Checkpoint`]: another number of key groups than `key_groups`, a snapshot the
/// computation refuses, an input shorter than the cut.
pub(crate) fn prepare_resume<P: JobParts>(
    cut: &Cut,
    key_groups: u32,
    parts: &P,
    inputs: &mut [TimelyInput],
) -> Result<(), TimelyError> {
    if cut.key_groups != key_groups {
        return Err(TimelyError::Checkpoint(format!(
            "the checkpoint has {} key groups, this run {key_groups}",
            cut.key_groups
        )));
    }
    // Every group restores (into a fresh computation) before anything is read or written.
    let keys = window_io::KeyDictionary::default();
    for g in &cut.groups {
        crate::groups::restore_group(&mut parts.computation(), g, &keys, key_groups)
            .map_err(|e| TimelyError::Checkpoint(format!("key group {}: {e}", g.group)))?;
    }
    let several = inputs.len() > 1;
    if several && cut.inputs.len() != inputs.len() {
        return Err(TimelyError::Checkpoint(format!(
            "the checkpoint has {} inputs, this run {}",
            cut.inputs.len().max(1),
            inputs.len()
        )));
    }
    for (i, input) in inputs.iter_mut().enumerate() {
        let offset = if several {
            cut.inputs[i].offset
        } else {
            cut.offset
        };
        skip(input, offset)?;
    }
    Ok(())
}

/// Reads `input` up to `offset` (where a resume reads it on).
///
/// # Errors
/// [`TimelyError::Checkpoint`]: it cannot be read, or is shorter.
fn skip(input: &mut TimelyInput, offset: u64) -> Result<(), TimelyError> {
    let mut head = std::io::Read::take(&mut input.bytes, offset);
    let skipped = std::io::copy(&mut head, &mut std::io::sink()).map_err(|e| {
        TimelyError::Checkpoint(format!("reading {} up to the checkpoint: {e}", input.name))
    })?;
    if skipped != offset {
        return Err(TimelyError::Checkpoint(format!(
            "{} has {skipped} bytes, fewer than the {offset} the checkpoint read",
            input.name
        )));
    }
    Ok(())
}

/// `chunker`, marking a chunk for a checkpoint every `interval`, and numbering chunks on after
/// `resume` (its input already moved past the cut).
pub(crate) fn chunker(
    chunker: Chunker,
    interval: Option<Duration>,
    resume: Option<&Cut>,
) -> Chunker {
    let chunker = match interval {
        Some(every) => chunker.with_checkpoints(every),
        None => chunker,
    };
    match resume {
        Some(cut) => chunker.resumed(cut.chunk + 1, cut.offset, cut.header.clone()),
        None => chunker,
    }
}

/// A worker's part of the cut after a chunk, with where the chunk ends, as it travels to the
/// writer with the worker's rows of the chunk ([`crate::rows::Rows::cut`]).
pub(crate) type Travelling = Box<(ChunkEnd, Part)>;

/// After a chunk (summary `s`), with checkpoints: the worker's part of the cut, if the chunk is
/// marked and the worker goes on (a worker that stopped the job leaves none: no checkpoint).
/// The writer leaves it in [`Cuts`] when the chunk's rows come.
pub(crate) fn part<C>(
    checkpoints: bool,
    s: &Summary,
    window: &WindowWorker<C>,
) -> Option<Travelling>
where
    C: WindowComputation<KeyId, Number, Window = AnyWindow, Output = JobResult>,
{
    let end = s.cut.as_ref().filter(|_| checkpoints && !window.stopped)?;
    Some(Box::new((end.clone(), window.cut_part())))
}

/// The last chunk a worker processed in this run: `(chunk, input bytes through it, whether its
/// cut was left already)`.
pub(crate) type LastChunk = Option<(u64, u64, bool)>;

/// When a signal stopped the job (no final watermark): leaves the worker's part of the cut after
/// the last chunk processed, which is the same on every worker (a worker processes chunk `c`
/// only once every worker has fed it), unless that chunk's cut was left already or none was
/// processed in this run (Flink's stop-with-savepoint).
pub(crate) fn leave_at_stop<C>(cuts: Option<&Cuts>, last: LastChunk, window: &WindowWorker<C>)
where
    C: WindowComputation<KeyId, Number, Window = AnyWindow, Output = JobResult>,
{
    let (Some(cuts), Some((chunk, end, false))) = (cuts, last) else {
        return;
    };
    if window.stopped {
        return;
    }
    // Several inputs: no cut where a signal stopped the job (the merge's positions after that
    // chunk are not kept); the last periodic one stands.
    let Some(chunker) = cuts.chunker.as_ref() else {
        return;
    };
    let end = ChunkEnd {
        end,
        header: chunker.header(),
        inputs: Vec::new(),
    };
    cuts.leave(chunk, &end, window.cut_part());
}
