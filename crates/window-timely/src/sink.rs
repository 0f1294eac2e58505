//! The writer on worker 0: the rows of each chunk, once every worker is past it, sorted into the
//! canonical order and handed to the job's output; bad records to the error policy.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use window_core::{AnyWindow, Number, Window, WindowOutput};
use window_io::{ErrorPolicy, KeyDictionary, KeyId};
use window_job::JobResult;

use crate::parse::ChunkError;
use crate::worker::{Row, RowKind};
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
    /// Key texts by key id, as far as met.
    texts: Vec<Option<Arc<str>>>,
}

/// The key and window of a result or an empty result.
fn key_window(row: &Row) -> Option<(KeyId, AnyWindow)> {
    match &row.kind {
        RowKind::Result { key, window, .. } | RowKind::Emptied { key, window, .. } => {
            Some((*key, *window))
        }
        _ => None,
    }
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
            texts: Vec::new(),
        }
    }

    /// Makes sure the sink's copy of the dictionary's texts holds `key`'s.
    fn text(&mut self, key: KeyId) {
        let i = key.index();
        if i >= self.texts.len() {
            self.texts.resize(i + 1, None);
        }
        if self.texts[i].is_none() {
            self.texts[i] = Some(self.keys.text(key).unwrap_or_else(|| Arc::from("")));
        }
    }

    /// Sorts `rows` into the canonical order: by [`Order`] (each worker's rows come in that
    /// order, so this merges them); the rows of one watermark step by window end, then key text
    /// (Flink leaves the order of timers with one timestamp open); then each worker's emission
    /// order (rows of one key come from one worker, in the order it emitted them).
    fn sort(&mut self, rows: &mut [Row]) {
        rows.sort_by_key(|r| r.order);
        let mut i = 0;
        while i < rows.len() {
            let order = rows[i].order;
            let n = rows[i..].iter().take_while(|r| r.order == order).count();
            if order.phase == 0 && n > 1 {
                let group = &mut rows[i..i + n];
                for r in group.iter() {
                    if let Some((key, _)) = key_window(r) {
                        self.text(key);
                    }
                }
                let texts = &self.texts;
                // Stable: the emission order stays within a key's rows.
                group.sort_by_cached_key(|r| match key_window(r) {
                    Some((key, window)) => (window.max_timestamp(), texts[key.index()].clone()),
                    None => (i64::MIN, None),
                });
            }
            i += n;
        }
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
            self.sort(&mut rows);
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
