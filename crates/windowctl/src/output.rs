//! The output side of `windowctl run`: the sink the computation writes its results and late
//! elements to.
//!
//! Result rows are formatted on a thread of their own (a pipeline stage, as the reader threads
//! are on the input side), so that the operator's thread only hands over compact rows (key id,
//! window bounds, value) in batches, and formatting uses the other core. The rows reach the file
//! in the order the computation emitted them: one thread writes them, from one channel. A write
//! error stops that thread's writing and comes back to the operator's thread, which reports it at
//! its next look (`take_error`) or flush, as a direct write would. `flush` waits until every row
//! handed over is written and flushed, so it is a consistent point as before.
//!
//! Late elements are rare and go to their own file; they are written on the operator's thread.

use std::io;
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError};
use std::thread::JoinHandle;

use anyhow::{Context, Result};
use engine::core::{AnyWindow, Window, WindowOutput};
use engine::io::{create_output, KeyId, KeyTexts, LateWriter, OutputFormat, ResultWriter};
use engine::job::JobResult;

use crate::plan::Outputs;

/// One result row as the operator's thread hands it over: what the row writer needs, no text.
#[derive(Clone, Copy, Debug)]
struct Row {
    key: KeyId,
    bounds: Option<(i64, i64)>,
    value: Option<f64>,
    empty: bool,
}

/// Rows handed over at a time: large enough that the channel costs nothing per row, small
/// enough (48 KiB) to stay in cache between the two threads.
const ROWS_PER_BATCH: usize = 1024;

/// Batches in flight at most: the operator's thread waits when the writer is this far behind,
/// so memory stays bounded whatever the output's speed.
const BATCHES_IN_FLIGHT: usize = 8;

/// From the operator's thread to the writer thread.
enum ToWriter {
    Rows(Vec<Row>),
    /// Flush the writer and answer with `Back::Flushed`.
    Flush,
}

/// From the writer thread back.
enum Back {
    /// An emptied batch, to be filled again (no allocation per batch).
    Spare(Vec<Row>),
    /// The first write error; the writer writes nothing after it.
    Failed(io::Error),
    /// The answer to `ToWriter::Flush`.
    Flushed(io::Result<()>),
}

/// The writer thread's end: writes the rows it is given, in order, until the channel closes;
/// gives its writer back (for the count of rows written).
fn write_rows(
    mut results: ResultWriter,
    mut keys: KeyTexts,
    rx: Receiver<ToWriter>,
    back: mpsc::Sender<Back>,
) -> ResultWriter {
    let mut failed = false;
    for msg in rx {
        match msg {
            ToWriter::Rows(mut rows) => {
                if !failed {
                    for r in &rows {
                        let written =
                            results.write_interned(&mut keys, r.key, r.bounds, r.value, r.empty);
                        if let Err(e) = written {
                            failed = true;
                            // The operator's side may be gone already; then nobody is left to tell.
                            let _ = back.send(Back::Failed(e));
                            break;
                        }
                    }
                }
                rows.clear();
                let _ = back.send(Back::Spare(rows));
            }
            ToWriter::Flush => {
                let flushed = if failed { Ok(()) } else { results.flush() };
                failed |= flushed.is_err();
                let _ = back.send(Back::Flushed(flushed));
            }
        }
    }
    results
}

/// Writes results (through the writer thread) and late elements; keeps the first I/O error
/// (the sink trait cannot return it) and reports it at the next look or flush.
pub(crate) struct OutputSink {
    /// Rows gathered for the next hand-over.
    pending: Vec<Row>,
    /// Emptied batches back from the writer.
    spares: Vec<Vec<Row>>,
    to_writer: Option<SyncSender<ToWriter>>,
    back: Receiver<Back>,
    writer: Option<JoinHandle<ResultWriter>>,
    /// Rows written, known once the writer thread has ended (see `finish`).
    written: u64,
    /// The late-elements writer, if there is a late output.
    late: Option<LateWriter>,
    /// The first write error, reported at the next look or flush; its message names the output.
    error: Option<io::Error>,
    /// The results output as errors name it: `stdout`, or `--output FILE`.
    results_name: String,
    /// The late output as errors name it: `--late-output FILE` (or the job file's key).
    late_name: String,
    /// The keys' texts, by id, for the late output.
    keys: KeyTexts,
}

/// `e` with `name` (the output it happened on) before its message.
fn on_output(name: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{name}: {e}"))
}

/// An id the job's dictionary did not make (a bug: every id comes from it).
fn unknown_key(id: KeyId) -> io::Error {
    io::Error::other(format!("key id {} has no text", id.index()))
}

impl OutputSink {
    /// The results writer (`--output`, with the `empty` column for strategies that emit empty
    /// results) on its own thread, and the late-element writer (`--late-output`). `results_keys`
    /// and `late_keys` are two views of the job's key dictionary.
    ///
    /// # Errors
    /// An output that cannot be created (named in the error); the writer thread cannot start.
    pub(crate) fn create(
        outputs: &Outputs,
        empty_column: bool,
        results_keys: KeyTexts,
        late_keys: KeyTexts,
    ) -> Result<Self> {
        let output_target = outputs.output.as_deref().unwrap_or("-");
        let late = match &outputs.late_output {
            Some(p) => {
                let w = create_output(&p.display().to_string())
                    .context(outputs.late_output_name.clone())?;
                Some(LateWriter::new(w, OutputFormat::from_path(p)))
            }
            None => None,
        };
        let out = create_output(output_target)?;
        let results_name = match output_target {
            "-" => "stdout".to_owned(),
            file => format!("--output {file}"),
        };
        let late_name = outputs.late_output.as_ref().map_or_else(String::new, |p| {
            format!("{} {}", outputs.late_output_name, p.display())
        });
        let results = if empty_column {
            ResultWriter::with_empty_column(out, outputs.output_format)
        } else {
            ResultWriter::new(out, outputs.output_format)
        };
        let (to_writer, rx) = mpsc::sync_channel(BATCHES_IN_FLIGHT);
        let (back_tx, back) = mpsc::channel();
        let writer = std::thread::Builder::new()
            .name("output".to_owned())
            .spawn(move || write_rows(results, results_keys, rx, back_tx))
            .context("starting the output thread")?;
        Ok(Self {
            pending: Vec::with_capacity(ROWS_PER_BATCH),
            spares: Vec::new(),
            to_writer: Some(to_writer),
            back,
            writer: Some(writer),
            written: 0,
            late,
            error: None,
            results_name,
            late_name,
            keys: late_keys,
        })
    }

    /// Rows written to the results output; complete after [`OutputSink::finish`].
    pub(crate) fn records_written(&self) -> u64 {
        self.written
    }

    /// Writes what is pending, flushes both writers and ends the writer thread, at the end
    /// (also after a failed run, to keep what was written).
    ///
    /// # Errors
    /// The first write error not reported yet, named by its output.
    pub(crate) fn finish(&mut self) -> Result<()> {
        let flushed = self.flush_results().context("writing output");
        self.to_writer = None; // closes the channel: the writer thread ends
        if let Some(handle) = self.writer.take() {
            match handle.join() {
                Ok(w) => self.written = w.records_written(),
                Err(_) => {
                    return Err(anyhow::anyhow!(
                        "{}: the output thread failed",
                        self.results_name
                    ))
                }
            }
        }
        if let Some(l) = self.late.as_mut() {
            l.flush()
                .map_err(|e| on_output(&self.late_name, e))
                .context("writing late output")?;
        }
        flushed
    }

    /// Takes what the writer thread sent back without waiting: spare batches, an error.
    fn drain_back(&mut self) {
        loop {
            match self.back.try_recv() {
                Ok(msg) => self.on_back(msg),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => return,
            }
        }
    }

    fn on_back(&mut self, msg: Back) {
        match msg {
            Back::Spare(rows) => self.spares.push(rows),
            Back::Failed(e) | Back::Flushed(Err(e)) => self.keep_error(e),
            Back::Flushed(Ok(())) => {}
        }
    }

    fn keep_error(&mut self, e: io::Error) {
        if self.error.is_none() {
            self.error = Some(on_output(&self.results_name, e));
        }
    }

    /// Hands the pending rows to the writer thread.
    fn hand_over(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        self.drain_back();
        let next = self
            .spares
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(ROWS_PER_BATCH));
        let rows = std::mem::replace(&mut self.pending, next);
        let sent = self
            .to_writer
            .as_ref()
            .is_some_and(|tx| tx.send(ToWriter::Rows(rows)).is_ok());
        if !sent {
            self.keep_error(io::Error::other("the output thread ended early"));
        }
    }

    /// Hands over what is pending and waits until the writer has written and flushed it.
    fn flush_results(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.hand_over();
        let sent = self
            .to_writer
            .as_ref()
            .is_some_and(|tx| tx.send(ToWriter::Flush).is_ok());
        if sent {
            loop {
                match self.back.recv() {
                    Ok(Back::Flushed(r)) => {
                        if let Err(e) = r {
                            self.keep_error(e);
                        }
                        break;
                    }
                    Ok(other) => self.on_back(other),
                    Err(_) => {
                        self.keep_error(io::Error::other("the output thread ended early"));
                        break;
                    }
                }
            }
        } else if self.to_writer.is_some() {
            self.keep_error(io::Error::other("the output thread ended early"));
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Queues one result row (or an `empty` one), unless a write failed before.
    fn write(&mut self, key: KeyId, window: &AnyWindow, value: Option<f64>, empty: bool) {
        if self.error.is_some() {
            return;
        }
        self.pending.push(Row {
            key,
            bounds: window.bounds(),
            value,
            empty,
        });
        if self.pending.len() >= ROWS_PER_BATCH {
            self.hand_over();
        }
    }
}

impl WindowOutput<KeyId, AnyWindow, f64, JobResult> for OutputSink {
    fn result(&mut self, key: &KeyId, window: &AnyWindow, result: JobResult, _watermark: i64) {
        let value = match result {
            JobResult::Number(v) => v,
            // windowctl offers numeric aggregates only (the plan refuses the others).
            JobResult::List(_) | JobResult::Elements(_) => None,
        };
        self.write(*key, window, value, false);
    }

    fn emptied(&mut self, key: &KeyId, window: &AnyWindow, _watermark: i64) {
        self.write(*key, window, None, true);
    }

    fn take_error(&mut self) -> Option<io::Error> {
        self.drain_back();
        self.error.take()
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flush_results()?;
        match self.late.as_mut() {
            Some(l) => l.flush().map_err(|e| on_output(&self.late_name, e)),
            None => Ok(()),
        }
    }

    fn late(&mut self, key: KeyId, timestamp: i64, value: f64, watermark: i64) {
        if self.error.is_some() {
            return;
        }
        if let Some(w) = self.late.as_mut() {
            let Some(text) = self.keys.get(key) else {
                self.error = Some(unknown_key(key));
                return;
            };
            if let Err(e) = w.write_late_parts(timestamp, text, value, watermark) {
                self.error = Some(on_output(&self.late_name, e));
            }
        }
    }
}
