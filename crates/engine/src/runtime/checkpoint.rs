//! The runtime's part of a checkpoint: what it holds between two batches besides the
//! computation (each input's watermark generator and read position, the watermark combiner,
//! the counters), and the computation's own snapshot ([`WindowComputation::snapshot`]).
//!
//! Flink's checkpoint of a job holds the same: the source readers' positions (split offsets),
//! their watermark state, and every operator's state, all at one barrier. Here the barrier is
//! the point between two [`super::Runtime::step`]s, where the computation has processed
//! exactly the batches delivered so far and each input's position is the end of its last
//! delivered batch (reader threads read ahead; what they read beyond is read again after a
//! restore). The outputs are the caller's: it flushes them and records their lengths with the
//! snapshot.

use serde::{Deserialize, Serialize};
use window_core::{SnapshotError, Timestamp, WindowComputation};
use window_io::ReadPosition;
use window_operator::watermark::{BoundedOutOfOrderness, WatermarkCombiner};

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
        Ok(RuntimeSnapshot {
            inputs: self
                .inputs
                .iter()
                .map(|i| InputSnapshot {
                    name: i.name.clone(),
                    generator: i.generator,
                    reported: i.reported,
                    done: i.done,
                    position: i.position,
                })
                .collect(),
            combiner: self.combiner.clone(),
            stats: self.stats,
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
        let invalid = |what: String| Err(SnapshotError::Invalid(what));
        if self.feed.is_some() {
            return invalid("the runtime has started already".to_owned());
        }
        if snapshot.inputs.len() != self.inputs.len() {
            return invalid(format!(
                "the checkpoint has {} inputs, this run {}",
                snapshot.inputs.len(),
                self.inputs.len()
            ));
        }
        for (i, (s, mine)) in snapshot.inputs.iter().zip(&self.inputs).enumerate() {
            if s.name != mine.name {
                return invalid(format!(
                    "input {} was {:?}, this run reads {:?}",
                    i + 1,
                    s.name,
                    mine.name
                ));
            }
            if s.generator.delay() != self.config.out_of_orderness.max(0) {
                return invalid(format!(
                    "the watermark delay was {} ms, this run has {} ms",
                    s.generator.delay(),
                    self.config.out_of_orderness
                ));
            }
        }
        let (inputs, idle) = snapshot.combiner.shape();
        if inputs != self.inputs.len() || idle != self.config.idle_timeout {
            return invalid(format!(
                "the watermark combiner had {inputs} inputs and idle timeout {idle:?}, this run \
                 {} and {:?}",
                self.inputs.len(),
                self.config.idle_timeout
            ));
        }
        self.computation.restore(&snapshot.computation)?;
        for (s, mine) in snapshot.inputs.into_iter().zip(&mut self.inputs) {
            mine.generator = s.generator;
            mine.reported = s.reported;
            mine.done = s.done;
            mine.position = s.position;
        }
        self.combiner = snapshot.combiner;
        self.stats = snapshot.stats;
        self.policy.skipped = snapshot.stats.skipped;
        self.restored = true;
        Ok(())
    }
}
