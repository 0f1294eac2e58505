//! The runtime's part of a checkpoint: each input's watermark generator and read position, the
//! watermark combiner, the counters, and the computation's snapshot. Flink's checkpoint holds
//! the same (source split offsets, watermark state, operator state) at one barrier; here the
//! barrier is the point between two [`super::Runtime::step`]s, where each input's position is
//! the end of its last processed batch (what reader threads read beyond is read again after a
//! restore). The outputs are the caller's: it syncs them and records their lengths.

use serde::{Deserialize, Serialize};
use window_core::{SnapshotError, Timestamp, WindowComputation};
use window_io::ReadPosition;
use window_operator::watermark::{BoundedOutOfOrderness, WatermarkCombiner};

use super::source::Feed;
use super::{RunStats, Runtime};

/// One input's state in a [`RuntimeSnapshot`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InputSnapshot {
    /// The source's name (a restore checks it: the inputs must be the same, in order).
    pub name: String,
    /// The input's watermark generator.
    pub generator: BoundedOutOfOrderness,
    /// Its watermark last handed to the combiner.
    pub reported: Timestamp,
    /// Whether the input had ended.
    pub done: bool,
    /// Where reading continues: the end of the last batch the runtime processed; `None` for a
    /// source that cannot tell (an iterator), or before its first batch.
    pub position: Option<ReadPosition>,
}

/// Everything a [`Runtime`] needs to continue a run after a restart, taken between two batches
/// by [`Runtime::snapshot`] and loaded by [`Runtime::restore`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuntimeSnapshot {
    /// The inputs, in the order they were added.
    pub inputs: Vec<InputSnapshot>,
    /// The watermark combiner over them.
    pub combiner: WatermarkCombiner,
    /// The counters so far.
    pub stats: RunStats,
    /// The input a runtime that reads its sources in turn on its own thread (not
    /// [started](Runtime::start)) reads next, so that a restored run interleaves the inputs as
    /// the original would have; 0 for a started runtime (its reader threads interleave as
    /// they come).
    pub next_input: usize,
    /// Processing time (ms) of the last periodic watermark emission; `None` when the run had
    /// not begun.
    pub last_emit: Option<Timestamp>,
    /// The computation's snapshot ([`WindowComputation::snapshot`]).
    pub computation: Vec<u8>,
}

impl RuntimeSnapshot {
    /// Where each input continues, in the order the inputs were added (what a caller must open
    /// the sources at before [`Runtime::restore`]: see `window_io::EventReader::skip_to`).
    #[must_use]
    pub fn positions(&self) -> Vec<Option<ReadPosition>> {
        self.inputs.iter().map(|i| i.position).collect()
    }
}

impl<K, V, C> Runtime<K, V, C>
where
    K: Send + 'static,
    V: Send + 'static,
    C: WindowComputation<K, V> + ?Sized,
{
    /// The runtime's state now: call it between two [`Runtime::step`]s (after any of them,
    /// including the one that returned `Finished`).
    ///
    /// # Errors
    /// The computation cannot snapshot its state ([`SnapshotError::Unsupported`]).
    pub fn snapshot(&self) -> Result<RuntimeSnapshot, SnapshotError> {
        let mut computation = Vec::new();
        self.computation.snapshot(&mut computation)?;
        // Before the run began, the combiner is made at its start: a fresh one for the inputs.
        let combiner = match &self.feed {
            Some(_) => self.combiner.clone(),
            None => WatermarkCombiner::new(self.inputs.len(), self.config.idle_timeout),
        };
        Ok(RuntimeSnapshot {
            inputs: self.inputs.iter().map(|i| i.state.clone()).collect(),
            combiner,
            stats: self.stats,
            next_input: match &self.feed {
                Some(Feed::Inline { next, .. }) => *next,
                _ => 0,
            },
            last_emit: self.last_emit,
            computation,
        })
    }

    /// Continues from `snapshot`: call it on a runtime built with the same computation and
    /// configuration, after adding the same sources (each opened at its position in the
    /// snapshot, [`RuntimeSnapshot::positions`]) and before the first [`Runtime::step`] or
    /// [`Runtime::start`].
    ///
    /// # Errors
    /// [`SnapshotError::Invalid`] naming what does not fit (the inputs' number or names, the
    /// watermark delay or idle timeout, the computation's snapshot); nothing changed then.
    pub fn restore(&mut self, snapshot: RuntimeSnapshot) -> Result<(), SnapshotError> {
        let (n, idle) = (self.inputs.len(), self.config.idle_timeout);
        let delay = self.config.out_of_orderness.max(0);
        let mismatch = if self.feed.is_some() {
            Some("the runtime has started already".to_owned())
        } else if snapshot.inputs.len() != n || snapshot.combiner.shape() != (n, idle) {
            let (m, was) = snapshot.combiner.shape();
            Some(format!(
                "the checkpoint has {m} inputs, this run {n} (idle timeout {was:?}, now {idle:?})"
            ))
        } else {
            let mine = self.inputs.iter().map(|i| &i.state);
            let mut pairs = snapshot.inputs.iter().zip(mine).enumerate();
            pairs.find_map(|(i, (s, m))| input_mismatch(i, s, m, delay))
        };
        if let Some(what) = mismatch {
            return Err(SnapshotError::Invalid(what));
        }
        self.computation.restore(&snapshot.computation)?;
        for (s, mine) in snapshot.inputs.into_iter().zip(&mut self.inputs) {
            mine.state = s;
        }
        self.combiner = snapshot.combiner;
        self.stats = snapshot.stats;
        self.policy.skipped = snapshot.stats.skipped;
        self.next_input = snapshot.next_input % self.inputs.len().max(1);
        self.last_emit = snapshot.last_emit;
        // A snapshot taken before the run began (no emission yet) begins like a fresh run.
        self.restored = snapshot.last_emit.is_some();
        Ok(())
    }
}

/// How input `i` of a snapshot (`s`) differs from this run's (`m`, watermark delay `delay`).
fn input_mismatch(i: usize, s: &InputSnapshot, m: &InputSnapshot, delay: i64) -> Option<String> {
    let (name, d) = (&s.name, s.generator.delay());
    if *name != m.name {
        Some(format!(
            "input {} was {name:?}, this run reads {:?}",
            i + 1,
            m.name
        ))
    } else if d != delay {
        Some(format!(
            "the watermark delay was {d} ms, this run has {delay} ms"
        ))
    } else {
        None
    }
}
