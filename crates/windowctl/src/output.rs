//! The output side of `windowctl run`: the sink the computation writes its results and late
//! elements to.
//!
//! Rows are formatted on a thread of their own (a pipeline stage, as the reader threads are on
//! the input side), so that the operator's thread only hands over compact rows (key id, window
//! bounds, value; or a late element) in batches, and formatting uses the other core. One thread
//! writes both outputs, in the order the computation emitted the rows, through the same writers
//! as before: the bytes are the same, also where results and late elements share stdout.
//!
//! A write error stops that thread's writing and comes back to the operator's thread, which
//! reports it at its next look (`take_error`, between batches) or flush. `flush` hands over what
//! is pending and asks the writer to flush, without waiting (a live input flushes after every
//! element); [`OutputSink::finish`] waits until everything is written and flushed.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError};
use std::thread::JoinHandle;

use anyhow::{bail, Context, Result};
use engine::core::{AnyWindow, Number, Window, WindowOutput};
use engine::io::{KeyId, KeyTexts, LateWriter, OutputFormat, ResultWriter};
use engine::job::{JobAggregate, JobResult};
use serde::{Deserialize, Serialize};

use crate::plan::Outputs;

mod ahead;
mod batch;
mod gzip;

use ahead::SyncAhead;
use batch::{Batch, Kind, Late, ROWS_PER_BATCH};
pub(crate) use gzip::{create_maybe_gzip, is_gzip_name, stdin_was_closed, stdout_was_closed};
use gzip::{Out, Plain};

/// Batches in flight at most: the operator's thread waits when the writer is this far behind,
/// so memory stays bounded whatever the output's speed.
const BATCHES_IN_FLIGHT: usize = 8;

/// The result columns of a job's output: `result`, or one per aggregate of several
/// (`count,sum,max`), and the `empty` column of strategies that emit empty results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ResultColumns {
    /// The result columns' names.
    names: Vec<&'static str>,
    /// Whether there is an `empty` column.
    empty: bool,
}

impl ResultColumns {
    /// The columns of `spec`'s results.
    pub(crate) fn of(spec: &engine::job::JobSpec) -> Self {
        let names = match spec.aggregate {
            JobAggregate::Several(several) => several.as_slice().iter().map(|a| a.name()).collect(),
            _ => vec!["result"],
        };
        Self {
            names,
            empty: spec.strategy.emits_empty_results(),
        }
    }

    /// The result columns' names: `result`, or the aggregates' (`count`, `sum` ...).
    pub(crate) fn names(&self) -> &[&'static str] {
        &self.names
    }

    /// A results writer of these columns over `out`.
    fn writer(&self, out: Out, format: OutputFormat) -> ResultWriter<Out> {
        ResultWriter::with_result_columns(out, format, &self.names, self.empty)
    }
}

/// How far one output file had been written at a checkpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OutputMark {
    /// The file's length in bytes, after flushing and syncing.
    pub(crate) bytes: u64,
    /// The rows in those bytes (results, or late elements).
    pub(crate) records: u64,
}

/// The outputs' marks at a checkpoint: what a resumed job cuts its outputs back to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OutputMarks {
    /// The results file.
    pub(crate) results: OutputMark,
    /// The late-elements file, if the job has one.
    pub(crate) late: Option<OutputMark>,
    /// The dead-letter file's length, if the job has one.
    pub(crate) dead_letters: Option<u64>,
}

/// From the operator's thread to the writer thread.
enum ToWriter {
    Rows(Batch),
    /// Flush both writers.
    Flush,
    /// Flush both writers, sync their files and answer with their marks (a checkpoint).
    Sync(mpsc::Sender<Result<OutputMarks, (Which, io::Error)>>),
}

/// Which output a write error happened on.
#[derive(Clone, Copy, Debug)]
enum Which {
    Results,
    Late,
}

/// From the writer thread back.
enum Back {
    /// An emptied batch, to be filled again (no allocation per batch).
    Spare(Batch),
    /// The first write error; the writer writes nothing after it.
    Failed(Which, io::Error),
}

/// The writer thread: the writers and the keys' texts.
struct Writers {
    results: ResultWriter<Out>,
    late: Option<LateWriter<Out>>,
    keys: KeyTexts,
    /// The files under the writers, for syncing and measuring at a checkpoint (results, late);
    /// `None` when the outputs are not checkpointed.
    files: Option<(File, Option<File>)>,
    /// The background syncers of those files ([`ahead`]).
    ahead: Vec<(Which, SyncAhead)>,
}

impl Writers {
    /// Writes the rows of `batch` in order.
    fn write(&mut self, batch: &Batch) -> Result<(), (Which, io::Error)> {
        let mut window = None;
        let results = |e| (Which::Results, e);
        for row in &batch.rows {
            let (key, value) = (row.key, row.value);
            let keys = &mut self.keys;
            match row.kind {
                Kind::Window => window = batch.windows[value as usize],
                Kind::Number => self
                    .results
                    .write_interned_number(keys, key, window, f64::from_bits(value))
                    .map_err(results)?,
                Kind::NoValue => self
                    .results
                    .write_interned(keys, key, window, None, false)
                    .map_err(results)?,
                Kind::Emptied => self
                    .results
                    .write_interned(keys, key, window, None, true)
                    .map_err(results)?,
                Kind::Integer => {
                    let v = batch.integers[value as usize];
                    self.results
                        .write_interned_integer(keys, key, window, v, false)
                        .map_err(results)?;
                }
                Kind::Several => {
                    let values = &batch.several[value as usize];
                    self.results
                        .write_interned_values(keys, key, window, values, false)
                        .map_err(results)?;
                }
                Kind::Late => self.write_late(key, batch.late[value as usize])?,
            }
        }
        Ok(())
    }

    fn write_late(&mut self, key: KeyId, late: Late) -> Result<(), (Which, io::Error)> {
        let Some(w) = self.late.as_mut() else {
            return Ok(()); // no late output: the sink hands over no late rows then
        };
        let Some(text) = self.keys.get(key) else {
            let e = io::Error::other(format!("key id {} has no text", key.index()));
            return Err((Which::Late, e));
        };
        w.write_late_parts(late.timestamp, text, late.value, late.watermark)
            .map_err(|e| (Which::Late, e))
    }

    fn flush(&mut self) -> Result<(), (Which, io::Error)> {
        let results = self.results.flush().map_err(|e| (Which::Results, e));
        let late = match self.late.as_mut() {
            Some(l) => l.flush().map_err(|e| (Which::Late, e)),
            None => Ok(()),
        };
        results.and(late)
    }

    /// Flushes, syncs the files and measures them.
    fn sync(&mut self) -> Result<OutputMarks, (Which, io::Error)> {
        self.flush()?;
        for (which, a) in &self.ahead {
            if let Some(e) = a.take_error() {
                return Err((*which, e));
            }
        }
        let Some((results, late)) = &self.files else {
            let e = io::Error::other("the outputs are not files that a checkpoint can record");
            return Err((Which::Results, e));
        };
        let mark = |f: &File, records: u64| -> io::Result<OutputMark> {
            f.sync_data()?;
            Ok(OutputMark {
                bytes: f.metadata()?.len(),
                records,
            })
        };
        let results =
            mark(results, self.results.records_written()).map_err(|e| (Which::Results, e))?;
        let late = match (late, &self.late) {
            (Some(f), Some(w)) => Some(mark(f, w.records_written()).map_err(|e| (Which::Late, e))?),
            _ => None,
        };
        Ok(OutputMarks {
            results,
            late,
            dead_letters: None,
        })
    }

    /// Writes the rows it is given, in order, until the channel closes; flushes at the end;
    /// gives back the number of results written.
    fn run(mut self, rx: Receiver<ToWriter>, back: mpsc::Sender<Back>) -> u64 {
        let mut failed = false;
        // The operator's side may be gone already; then nobody is left to tell (`let _`).
        let fail = |failed: &mut bool, (which, e)| {
            *failed = true;
            let _ = back.send(Back::Failed(which, e));
        };
        for msg in rx {
            match msg {
                ToWriter::Rows(mut rows) => {
                    if !failed {
                        if let Err(e) = self.write(&rows) {
                            fail(&mut failed, e);
                        }
                        for (_, a) in &mut self.ahead {
                            a.wrote();
                        }
                    }
                    rows.clear();
                    let _ = back.send(Back::Spare(rows));
                }
                ToWriter::Flush => {
                    if !failed {
                        if let Err(e) = self.flush() {
                            fail(&mut failed, e);
                        }
                    }
                }
                ToWriter::Sync(reply) => {
                    let answer = if failed {
                        Err((Which::Results, io::Error::other("an earlier write failed")))
                    } else {
                        self.sync()
                    };
                    let _ = reply.send(answer);
                }
            }
        }
        // Counted before finishing, which hands the writers' outputs over.
        let written = self.results.records_written();
        if !failed {
            if let Err(e) = self.finish() {
                fail(&mut failed, e);
            }
        }
        written
    }

    /// Flushes both writers and finishes what is under them (a gzip stream's trailer).
    fn finish(&mut self) -> Result<(), (Which, io::Error)> {
        self.flush()?;
        let results = std::mem::replace(
            &mut self.results,
            ResultWriter::new(Box::new(Plain(Box::new(io::sink()))), OutputFormat::Csv),
        );
        let mut out = results.into_inner().map_err(|e| (Which::Results, e))?;
        out.finish().map_err(|e| (Which::Results, e))?;
        if let Some(late) = self.late.take() {
            let mut out = late.into_inner().map_err(|e| (Which::Late, e))?;
            out.finish().map_err(|e| (Which::Late, e))?;
        }
        Ok(())
    }
}

/// Writes results and late elements through the writer thread; keeps the first I/O error (the
/// sink trait cannot return it) and reports it at the next look or flush.
pub(crate) struct OutputSink {
    /// Rows gathered for the next hand-over.
    pending: Batch,
    /// Rows handed over since the last flush asked for.
    dirty: bool,
    /// Emptied batches back from the writer.
    spares: Vec<Batch>,
    to_writer: Option<SyncSender<ToWriter>>,
    back: Receiver<Back>,
    writer: Option<JoinHandle<u64>>,
    /// Results written, known once the writer thread has ended (see `finish`).
    written: u64,
    /// Whether there is a late output (else late elements are only counted).
    has_late: bool,
    /// The first write error and the output it happened on, reported at the next look or
    /// flush (named by [`OutputSink::named`]).
    error: Option<(Which, io::Error)>,
    /// The results output as errors name it: `stdout`, or `--output FILE`.
    results_name: String,
    /// The late output as errors name it: `--late-output FILE` (or the job file's key).
    late_name: String,
}

/// Opens `path` for a checkpointed job: created empty (no `mark`), or cut back to
/// `mark.bytes` and appended to; returns the writer and a second handle for syncing.
fn open_resumable(path: &Path, mark: Option<OutputMark>, name: &str) -> Result<(Out, File)> {
    let file = match mark {
        None => File::create(path).with_context(|| format!("{name}: cannot create it"))?,
        Some(m) => {
            let file = OpenOptions::new()
                .append(true)
                .open(path)
                .with_context(|| format!("{name}: cannot open it to resume"))?;
            let len = file.metadata().with_context(|| name.to_owned())?.len();
            if len < m.bytes {
                bail!(
                    "{name}: it has {len} bytes, fewer than the {} the checkpoint recorded: it \
                     was changed since, so the job cannot resume into it",
                    m.bytes
                );
            }
            file.set_len(m.bytes)
                .with_context(|| format!("{name}: cannot cut it back to the checkpoint"))?;
            file
        }
    };
    let handle = file.try_clone().with_context(|| name.to_owned())?;
    Ok((Box::new(Plain(Box::new(file))), handle))
}

/// The background syncers of a checkpointed job's results and late output.
///
/// # Errors
/// A syncer cannot start.
fn sync_ahead(results: &File, late: Option<&File>) -> Result<Vec<(Which, SyncAhead)>> {
    let mut ahead = vec![(
        Which::Results,
        SyncAhead::start(results).context("starting the output's syncer")?,
    )];
    if let Some(l) = late {
        let a = SyncAhead::start(l).context("starting the late output's syncer")?;
        ahead.push((Which::Late, a));
    }
    Ok(ahead)
}

/// The error of a sink whose writer thread is gone.
fn writer_gone() -> io::Error {
    io::Error::other("the output thread ended early")
}

impl OutputSink {
    /// The results writer (`--output`, with the `empty` column for strategies that emit empty
    /// results) and the late-element writer (`--late-output`), on their own thread; `keys` is a
    /// view of the job's key dictionary.
    ///
    /// # Errors
    /// An output that cannot be created (named in the error); the writer thread cannot start.
    pub(crate) fn create(
        outputs: &Outputs,
        columns: &ResultColumns,
        keys: KeyTexts,
    ) -> Result<Self> {
        let output_target = outputs.output.as_deref().unwrap_or("-");
        let late_to_stdout = outputs.late_output.as_deref() == Some(Path::new("-"));
        if (output_target == "-" || late_to_stdout) && stdout_was_closed() {
            let (what, flag) = match output_target {
                "-" => ("the results", "--output FILE"),
                _ => ("the late elements (--late-output -)", "--late-output FILE"),
            };
            bail!(
                "standard output is closed (the job was started with >&-): {what} would be \
                 lost; give {flag}"
            );
        }
        let late = match &outputs.late_output {
            Some(p) => {
                let w = create_maybe_gzip(&p.display().to_string())
                    .context(outputs.late_output_name.clone())?;
                Some(
                    LateWriter::new(w, OutputFormat::from_path(p))
                        .with_key_columns(&outputs.key_columns),
                )
            }
            None => None,
        };
        let out = create_maybe_gzip(output_target)?;
        let results = columns
            .writer(out, outputs.output_format)
            .with_key_columns(&outputs.key_columns);
        Self::start(
            outputs,
            Writers {
                results,
                late,
                keys,
                files: None,
                ahead: Vec::new(),
            },
        )
    }

    /// As [`OutputSink::create`], for a job with checkpoints: the outputs must be files; with
    /// `resume`, each is cut back to the length the checkpoint recorded and continued (no
    /// second header), else created empty.
    ///
    /// # Errors
    /// An output is stdout (it cannot be cut back on a resume); a file cannot be opened or
    /// cut; a file is shorter than the checkpoint recorded (it was changed since).
    pub(crate) fn create_checkpointed(
        outputs: &Outputs,
        columns: &ResultColumns,
        keys: KeyTexts,
        resume: Option<&OutputMarks>,
    ) -> Result<Self> {
        let Some(path) = outputs.output.as_deref().filter(|p| *p != "-") else {
            bail!(
                "--checkpoint-dir needs the results in a file ({} FILE): stdout cannot be cut \
                 back to a checkpoint when the job resumes",
                outputs.output_name
            );
        };
        let name = format!("{} {path}", outputs.output_name);
        let mark = resume.map(|m| m.results);
        let (file, handle) = open_resumable(Path::new(path), mark, &name)?;
        let results = columns
            .writer(file, outputs.output_format)
            .with_key_columns(&outputs.key_columns);
        let results = match mark {
            Some(m) if m.bytes > 0 => results.continuing(m.records),
            _ => results,
        };
        let (late, late_handle) = match &outputs.late_output {
            Some(p) => {
                let name = format!("{} {}", outputs.late_output_name, p.display());
                let mark = resume.and_then(|m| m.late);
                if resume.is_some() && mark.is_none() {
                    bail!("{name}: the checkpoint has no late output to continue");
                }
                let (file, handle) = open_resumable(p, mark, &name)?;
                let w = LateWriter::new(file, OutputFormat::from_path(p))
                    .with_key_columns(&outputs.key_columns);
                let w = match mark {
                    Some(m) if m.bytes > 0 => w.continuing(m.records),
                    _ => w,
                };
                (Some(w), Some(handle))
            }
            None => (None, None),
        };
        Self::start(
            outputs,
            Writers {
                results,
                late,
                keys,
                ahead: sync_ahead(&handle, late_handle.as_ref())?,
                files: Some((handle, late_handle)),
            },
        )
    }

    /// Starts the writer thread over `writers`.
    fn start(outputs: &Outputs, writers: Writers) -> Result<Self> {
        let output_target = outputs.output.as_deref().unwrap_or("-");
        let results_name = match output_target {
            "-" => "stdout".to_owned(),
            file => format!("{} {file}", outputs.output_name),
        };
        let late_name = outputs.late_output.as_ref().map_or_else(String::new, |p| {
            format!("{} {}", outputs.late_output_name, p.display())
        });
        let has_late = writers.late.is_some();
        let (to_writer, rx) = mpsc::sync_channel(BATCHES_IN_FLIGHT);
        let (back_tx, back) = mpsc::channel();
        let writer = std::thread::Builder::new()
            .name("output".to_owned())
            .spawn(move || writers.run(rx, back_tx))
            .context("starting the output thread")?;
        Ok(Self {
            pending: Batch::with_capacity(ROWS_PER_BATCH),
            dirty: false,
            spares: Vec::new(),
            to_writer: Some(to_writer),
            back,
            writer: Some(writer),
            written: 0,
            has_late,
            error: None,
            results_name,
            late_name,
        })
    }

    /// Hands over what is pending, has the writer thread flush and sync the outputs, and
    /// returns their marks (without the dead letters, which the caller adds): the outputs'
    /// part of a checkpoint.
    ///
    /// # Errors
    /// A write, flush or sync failed (now or before), named by its output.
    pub(crate) fn sync(&mut self) -> Result<OutputMarks> {
        self.hand_over();
        let (tx, rx) = mpsc::channel();
        self.send(ToWriter::Sync(tx));
        self.dirty = false;
        let answer = rx.recv();
        self.drain_back();
        if let Some(e) = self.take_named_error() {
            return Err(anyhow::Error::new(e).context("writing output"));
        }
        match answer {
            Ok(Ok(marks)) => Ok(marks),
            Ok(Err((which, e))) => {
                Err(anyhow::Error::new(self.named(which, e)).context("syncing output"))
            }
            Err(_) => Err(anyhow::Error::new(writer_gone()).context("syncing output")),
        }
    }

    /// Results written to the results output; complete after [`OutputSink::finish`].
    pub(crate) fn records_written(&self) -> u64 {
        self.written
    }

    /// Hands over what is pending, waits until the writer thread has written and flushed
    /// everything and ends it, at the end (also after a failed run, to keep what was written).
    ///
    /// # Errors
    /// The first write error not reported yet, named by its output.
    pub(crate) fn finish(&mut self) -> Result<()> {
        self.hand_over();
        self.to_writer = None; // closes the channel: the writer writes the rest, flushes, ends
                               // Everything it sends back, until it has ended and dropped its end.
        while let Ok(msg) = self.back.recv() {
            self.on_back(msg);
        }
        if let Some(handle) = self.writer.take() {
            match handle.join() {
                Ok(written) => self.written = written,
                Err(_) => self.keep_error(Which::Results, writer_gone()),
            }
        }
        match self.error.take() {
            Some((which, e)) => {
                let context = match which {
                    Which::Results => "writing output",
                    Which::Late => "writing late output",
                };
                Err(anyhow::Error::new(self.named(which, e)).context(context))
            }
            None => Ok(()),
        }
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
            Back::Failed(which, e) => self.keep_error(which, e),
        }
    }

    /// Keeps `e` unless an earlier error is kept.
    fn keep_error(&mut self, which: Which, e: io::Error) {
        if self.error.is_none() {
            self.error = Some((which, e));
        }
    }

    /// `e` with the name of the output it happened on before its message.
    fn named(&self, which: Which, e: io::Error) -> io::Error {
        let name = match which {
            Which::Results => &self.results_name,
            Which::Late => &self.late_name,
        };
        io::Error::new(e.kind(), format!("{name}: {e}"))
    }

    /// The kept error, named, taken out.
    fn take_named_error(&mut self) -> Option<io::Error> {
        self.error.take().map(|(which, e)| self.named(which, e))
    }

    /// Sends `msg` to the writer thread; an error if it is gone.
    fn send(&mut self, msg: ToWriter) {
        let sent = self
            .to_writer
            .as_ref()
            .is_some_and(|tx| tx.send(msg).is_ok());
        if !sent {
            self.keep_error(Which::Results, writer_gone());
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
            .unwrap_or_else(|| Batch::with_capacity(ROWS_PER_BATCH));
        let rows = std::mem::replace(&mut self.pending, next);
        self.dirty = true;
        self.send(ToWriter::Rows(rows));
    }

    /// Queues one row by `push`, unless a write failed before.
    #[inline]
    fn push(&mut self, push: impl FnOnce(&mut Batch)) {
        if self.error.is_some() {
            return;
        }
        push(&mut self.pending);
        if self.pending.len() >= ROWS_PER_BATCH {
            self.hand_over();
        }
    }
}

impl WindowOutput<KeyId, AnyWindow, Number, JobResult> for OutputSink {
    fn result(&mut self, key: &KeyId, window: &AnyWindow, result: JobResult, _watermark: i64) {
        let (key, bounds) = (*key, window.bounds());
        match result {
            JobResult::Number(Some(v)) => {
                self.push(|b| b.push_result(key, bounds, Kind::Number, v.to_bits()));
            }
            JobResult::Integer(value) => self.push(|b| b.push_integer(key, bounds, value)),
            JobResult::Numbers(values) => self.push(|b| b.push_several(key, bounds, values)),
            // windowctl offers numeric aggregates only (the plan refuses the others).
            JobResult::Number(None) | JobResult::List(_) | JobResult::Elements(_) => {
                self.push(|b| b.push_result(key, bounds, Kind::NoValue, 0));
            }
        }
    }

    fn emptied(&mut self, key: &KeyId, window: &AnyWindow, _watermark: i64) {
        let (key, bounds) = (*key, window.bounds());
        self.push(|b| b.push_result(key, bounds, Kind::Emptied, 0));
    }

    fn take_error(&mut self) -> Option<io::Error> {
        self.drain_back();
        self.take_named_error()
    }

    /// Hands over what is pending and asks the writer to flush both outputs, if anything was
    /// handed over since the last flush; does not wait (see the module documentation).
    fn flush(&mut self) -> io::Result<()> {
        self.hand_over();
        if self.dirty {
            self.dirty = false;
            self.send(ToWriter::Flush);
        }
        self.drain_back();
        self.take_named_error().map_or(Ok(()), Err)
    }

    fn late(&mut self, key: KeyId, timestamp: i64, value: Number, watermark: i64) {
        if self.has_late {
            let late = Late {
                timestamp,
                value,
                watermark,
            };
            self.push(|b| b.push_late(key, late));
        }
    }
}
