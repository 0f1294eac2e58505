//! The writer on worker 0: the rows of each chunk, once every worker is past it, sorted into the
//! canonical order and handed to the job's output; bad records to the error policy.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use window_core::{AnyWindow, Number, Window, WindowOutput};
use window_io::{ErrorPolicy, KeyDictionary, KeyId};
use window_job::JobResult;

use crate::parse::ChunkError;
use crate::worker::{Order, Row, RowKind};
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

/// The canonical order of rows: by [`Order`]; rows of one watermark step by window end and key
/// text; then each worker's emission order (rows of one key come from one worker).
type SortKey = (Order, i64, Option<Arc<str>>, u64);

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

    fn sort_key(&self, row: &Row) -> SortKey {
        if row.order.phase != 0 {
            return (row.order, 0, None, row.seq);
        }
        let (key, window) = match &row.kind {
            RowKind::Result { key, window, .. } | RowKind::Emptied { key, window, .. } => {
                (*key, *window)
            }
            _ => return (row.order, 0, None, row.seq),
        };
        (
            row.order,
            window.max_timestamp(),
            self.keys.text(key),
            row.seq,
        )
    }

    fn fail(&mut self, e: TimelyError) {
        self.failure = Some(e);
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Writes the rows of one chunk (all workers' rows of it), in the canonical order.
    pub(crate) fn write(&mut self, mut rows: Vec<Row>) {
        if self.failure.is_some() {
            return;
        }
        if rows.len() > 1 {
            rows.sort_by_cached_key(|r| self.sort_key(r));
        }
        for row in rows {
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
