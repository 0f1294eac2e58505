//! The writer on worker 0: the rows of each chunk, once every worker is past it, sorted into the
//! canonical order and handed to the job's output; bad records to the error policy.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use window_core::{AnyWindow, Number, WindowOutput};
use window_io::{ErrorPolicy, KeyDictionary, KeyId};
use window_job::JobResult;

use crate::parse::ChunkError;
use crate::worker::{canonical, Row, RowKind};
use crate::TimelyError;

/// The job's output and error policy, and how the run ended.
pub(crate) struct SinkState<O> {
    pub(crate) out: O,
    pub(crate) policy: ErrorPolicy,
    keys: Arc<KeyDictionary>,
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
        keys: Arc<KeyDictionary>,
        source_name: String,
        stop: Arc<AtomicBool>,
    ) -> Self {
        Self {
            out,
            policy,
            keys,
            source_name,
            failure: None,
            stop,
        }
    }

    /// The rows of one chunk, in the canonical order: each worker's rows come in it (its
    /// containers in the order it sent them), so this merges the workers' runs.
    fn merged(&self, containers: Vec<Vec<Row>>) -> Vec<Row> {
        let mut runs: Vec<(u32, Vec<Row>)> = Vec::new();
        for c in containers {
            let Some(worker) = c.first().map(|r| r.worker) else {
                continue;
            };
            match runs.iter_mut().find(|(w, _)| *w == worker) {
                Some((_, run)) if run.is_empty() => *run = c,
                Some((_, run)) => run.extend(c),
                None => runs.push((worker, c)),
            }
        }
        if runs.len() <= 1 {
            return runs.pop().map(|(_, r)| r).unwrap_or_default();
        }
        let total = runs.iter().map(|(_, r)| r.len()).sum();
        let mut out = Vec::with_capacity(total);
        let mut heads: Vec<std::vec::IntoIter<Row>> =
            runs.into_iter().map(|(_, r)| r.into_iter()).collect();
        loop {
            let mut best: Option<usize> = None;
            for i in 0..heads.len() {
                let Some(row) = heads[i].as_slice().first() else {
                    continue;
                };
                let better = match best.and_then(|b| heads[b].as_slice().first()) {
                    None => true,
                    Some(b) => canonical(row, b, &self.keys) == std::cmp::Ordering::Less,
                };
                if better {
                    best = Some(i);
                }
            }
            match best.and_then(|b| heads[b].next()) {
                Some(row) => out.push(row),
                None => return out,
            }
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
        for row in self.merged(containers) {
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
                RowKind::Error(ChunkError::Failed(message)) => {
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
