//! The writer on worker 0: the rows of each chunk, once every worker is past it, merged from the
//! workers' runs (each already in the canonical order) and handed to the job's output; bad
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

    /// Writes the rows of one chunk (all workers' rows of it, as they came), in the canonical
    /// order.
    pub(crate) fn write(&mut self, containers: Vec<Vec<Row>>) {
        if self.failure.is_some() {
            return;
        }
        for row in merged(containers).into_iter().flatten() {
            match row.kind {
                RowKind::Result {
                    key,
                    window,
                    result,
                    watermark,
                } => self.out.result(&key, &window, result, watermark),
                RowKind::Late {
                    key,
                    timestamp,
                    value,
                    watermark,
                } => self.out.late(key, timestamp, value, watermark),
                RowKind::Emptied {
                    key,
                    window,
                    watermark,
                } => self.out.emptied(&key, &window, watermark),
                RowKind::Error(ChunkError::Record(err)) => {
                    if let Err(e) = self.policy.handle(err) {
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
            }
            if self.failure.is_some() {
                return;
            }
        }
        if let Some(e) = self.out.take_error() {
            self.fail(TimelyError::Output(e));
        }
    }
}

/// The rows of one chunk, in the canonical order: each worker's rows come in it (its
/// containers in the order it sent them), so this merges the workers' runs.
fn merged(containers: Vec<Vec<Row>>) -> Vec<Vec<Row>> {
    let mut runs: Vec<(u32, Vec<Vec<Row>>)> = Vec::new();
    for c in containers {
        let Some(worker) = c.first().map(|r| r.worker) else {
            continue;
        };
        match runs.iter_mut().find(|(w, _)| *w == worker) {
            Some((_, run)) => run.push(c),
            None => runs.push((worker, vec![c])),
        }
    }
    if runs.len() <= 1 {
        // One worker's rows: in order as they are.
        return runs.pop().map(|(_, r)| r).unwrap_or_default();
    }
    let total = runs.iter().flat_map(|(_, r)| r).map(Vec::len).sum();
    let mut out = Vec::with_capacity(total);
    let mut heads: Vec<std::iter::Flatten<std::vec::IntoIter<Vec<Row>>>> = runs
        .into_iter()
        .map(|(_, r)| r.into_iter().flatten())
        .collect();
    let mut next: Vec<Option<Row>> = heads.iter_mut().map(Iterator::next).collect();
    loop {
        let mut best: Option<usize> = None;
        for (i, row) in next.iter().enumerate() {
            let Some(row) = row else { continue };
            let better = match best.and_then(|b| next[b].as_ref()) {
                None => true,
                Some(b) => row.canonical() < b.canonical(),
            };
            if better {
                best = Some(i);
            }
        }
        let Some(b) = best else {
            return vec![out];
        };
        let row = std::mem::replace(&mut next[b], heads[b].next());
        out.extend(row);
    }
}
