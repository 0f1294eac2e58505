//! The writer thread's side: the rows of each chunk, once every worker is past it, merged from
//! the workers' runs (each already in the canonical order) and handed to the job's output; bad
//! records to the error policy.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use window_core::{AnyWindow, Number, WindowOutput};
use window_io::{ErrorPolicy, KeyId};
use window_job::JobResult;

use crate::parse::ChunkError;
use crate::worker::{Row, RowKind};
use crate::TimelyError;

/// The job's output and error policy, and how the run ended.
pub(crate) struct SinkState<O> {
    pub(crate) out: O,
    pub(crate) policy: ErrorPolicy,
    source_name: String,
    /// Why the job stopped early, if it did; rows after that are not written.
    pub(crate) failure: Option<TimelyError>,
    /// Set when the job stops early, so that the workers stop reading.
    stop: Arc<AtomicBool>,
}

impl<O> SinkState<O>
where
    O: WindowOutput<KeyId, AnyWindow, Number, JobResult>,
{
    pub(crate) fn new(
        out: O,
        policy: ErrorPolicy,
        source_name: String,
        stop: Arc<AtomicBool>,
    ) -> Self {
        Self {
            out,
            policy,
            source_name,
            failure: None,
            stop,
        }
    }

    fn fail(&mut self, e: TimelyError) {
        self.failure = Some(e);
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Writes the rows of one chunk (every worker's rows of it: one container per worker, each
    /// in the canonical order), merged into the canonical order. Rows are written where they
    /// lie (a row is about 100 bytes; moving each into a merged buffer cost more than writing
    /// it).
    /// Returns the runs' buffers (their rows written or not), to be used again.
    pub(crate) fn write(&mut self, mut runs: Vec<Vec<Row>>) -> Vec<Vec<Row>> {
        runs.retain(|r| !r.is_empty());
        // By worker, so that rows that tie (two workers over their share of the state limit at
        // one place) are written in one order, whichever worker's rows came first.
        runs.sort_by_key(|r| r[0].worker);
        let mut at = vec![0usize; runs.len()];
        while self.failure.is_none() {
            // The run whose next row comes first (the lowest worker on a tie).
            let mut best: Option<usize> = None;
            for (i, run) in runs.iter().enumerate() {
                let Some(row) = run.get(at[i]) else { continue };
                if best.is_none_or(|b| row.canonical() < runs[b][at[b]].canonical()) {
                    best = Some(i);
                }
            }
            let Some(b) = best else { break };
            self.write_row(&mut runs[b][at[b]]);
            at[b] += 1;
        }
        if self.failure.is_none() {
            if let Some(e) = self.out.take_error() {
                self.fail(TimelyError::Output(e));
            }
        }
        runs
    }

    /// Writes one row (its parts are taken, not copied).
    fn write_row(&mut self, row: &mut Row) {
        match &mut row.kind {
            RowKind::Result {
                key,
                window,
                result,
                watermark,
            } => {
                let result = std::mem::replace(result, JobResult::Number(None));
                self.out.result(key, window, result, *watermark);
            }
            RowKind::Late {
                key,
                timestamp,
                value,
                watermark,
            } => self.out.late(*key, *timestamp, *value, *watermark),
            RowKind::Emptied {
                key,
                window,
                watermark,
            } => self.out.emptied(key, window, *watermark),
            // Rare rows: taken whole.
            _ => self.write_rare(std::mem::replace(
                &mut row.kind,
                RowKind::Error(ChunkError::Failed(String::new())),
            )),
        }
    }

    /// Writes a bad record, a failed read or a failed element.
    fn write_rare(&mut self, kind: RowKind) {
        match kind {
            RowKind::Error(ChunkError::Record(err)) => {
                if let Err(e) = self.policy.handle(*err) {
                    self.fail(TimelyError::Input(e));
                }
            }
            RowKind::Error(ChunkError::Failed(message) | ChunkError::ReadFailed(message)) => {
                let source_name = self.source_name.clone();
                self.fail(TimelyError::Source {
                    source_name,
                    message,
                });
            }
            RowKind::ElementFailed { message, line } => {
                let source_name = self.source_name.clone();
                self.fail(TimelyError::Element {
                    message,
                    source_name,
                    line,
                });
            }
            // Written by `write_row`, never taken.
            RowKind::Result { .. } | RowKind::Late { .. } | RowKind::Emptied { .. } => {}
        }
    }
}
