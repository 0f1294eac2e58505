//! The writer thread's side: the rows of each chunk, once every worker is past it, merged from
//! the workers' runs (each already in the canonical order) and handed to the job's output; bad
//! records to the error policy.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use window_core::{AnyWindow, Number, WindowOutput};
use window_io::{ErrorPolicy, KeyId};
use window_job::JobResult;

use crate::parse::ChunkError;
use crate::rows::{Rare, Rows, Taken};
use crate::tagger::RowPool;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::Capability;
use timely::dataflow::ProbeHandle;

use crate::{TimelyError, SINK_AHEAD};

/// The job's output and error policy, and how the run ended.
pub(crate) struct SinkState<O> {
    pub(crate) out: O,
    pub(crate) policy: ErrorPolicy,
    /// The inputs' names in messages, by index.
    source_names: Vec<String>,
    /// Why the job stopped early, if it did; rows after that are not written.
    pub(crate) failure: Option<TimelyError>,
    /// Set when the job stops early, so that the workers stop reading.
    stop: Arc<AtomicBool>,
    /// Writes a checkpoint once its cut's rows are written ([`crate::cut`]).
    pub(crate) checkpoint: Option<crate::cut::CheckpointWriter<O>>,
    /// For a live input: the output is flushed whenever the writer has caught up with the
    /// workers, so that results come out as the input's lines come in.
    pub(crate) live: bool,
}

impl<O> SinkState<O>
where
    O: WindowOutput<KeyId, AnyWindow, Number, JobResult>,
{
    pub(crate) fn new(
        out: O,
        policy: ErrorPolicy,
        source_names: Vec<String>,
        stop: Arc<AtomicBool>,
    ) -> Self {
        Self {
            out,
            policy,
            source_names,
            failure: None,
            stop,
            checkpoint: None,
            live: false,
        }
    }

    /// Input `input`'s name in messages.
    fn source_name(&self, input: u32) -> String {
        self.source_names
            .get(input as usize)
            .cloned()
            .unwrap_or_default()
    }

    fn fail(&mut self, e: TimelyError) {
        self.failure = Some(e);
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Writes the rows of one chunk (every worker's rows of it: one block per worker, each in
    /// the canonical order), merged into the canonical order; one worker's rows are written as
    /// they are. Returns the blocks (their rows written or not), to be used again.
    pub(crate) fn write(&mut self, mut runs: Vec<Rows>) -> Vec<Rows> {
        runs.retain(|r| !r.is_empty());
        // By worker, so that rows that tie (two workers over their share of the state limit at
        // one place) are written in one order, whichever worker's rows came first.
        runs.sort_by_key(|r| r.worker);
        if let [run] = &mut runs[..] {
            let mut i = 0;
            while i < run.len() && self.failure.is_none() {
                i = run.write_plain(i, &mut self.out);
                if i < run.len() {
                    self.write_row(run, i);
                    i += 1;
                }
            }
        } else {
            self.merge(&mut runs);
        }
        self.look_at_output();
        runs
    }

    /// Stops the job if the output failed (the job's output may write on a thread of its own
    /// and report a failure only when asked).
    fn look_at_output(&mut self) {
        if self.failure.is_none() {
            if let Some(e) = self.out.take_error() {
                self.fail(TimelyError::Output(e));
            }
        }
    }

    /// Flushes the output (a live input's results as they come); a failure stops the job.
    fn flush(&mut self) {
        if self.failure.is_none() {
            if let Err(e) = self.out.flush() {
                self.fail(TimelyError::Output(e));
            }
        }
    }

    /// Writes several workers' rows, merged: the run whose next row comes first, the lowest
    /// worker on a tie (each run's next place in the order kept, not looked up again).
    fn merge(&mut self, runs: &mut [Rows]) {
        let mut at = vec![0usize; runs.len()];
        let mut heads: Vec<Option<_>> = runs.iter().map(|r| Some(r.canonical(0))).collect();
        while self.failure.is_none() {
            let mut best: Option<(usize, _)> = None;
            for (i, head) in heads.iter().enumerate() {
                let Some(head) = head else { continue };
                if best.is_none_or(|(_, b)| head < b) {
                    best = Some((i, head));
                }
            }
            let Some((b, _)) = best else { break };
            self.write_row(&mut runs[b], at[b]);
            at[b] += 1;
            heads[b] = (at[b] < runs[b].len()).then(|| runs[b].canonical(at[b]));
        }
    }

    /// Writes the checkpoint of `cut`, every row before it written (nothing once the job
    /// failed, or for a cut with a part missing).
    fn checkpoint(&mut self, cut: Result<Option<crate::cut::Cut>, String>) {
        if self.failure.is_some() {
            return;
        }
        let written = match cut {
            Ok(None) => return,
            Ok(Some(cut)) => match self.checkpoint.as_mut() {
                Some(write) => write(&mut self.out, &mut self.policy, cut),
                None => return,
            },
            Err(e) => Err(e),
        };
        if let Err(e) = written {
            self.fail(TimelyError::Checkpoint(e));
        }
    }

    /// Writes row `i` of `run` (its payload is taken, not copied).
    #[inline]
    fn write_row(&mut self, run: &mut Rows, i: usize) {
        match run.take(i) {
            Taken::Result(key, window, result, watermark) => {
                self.out.result(&key, window, result, watermark);
            }
            Taken::Emptied(key, window, watermark) => self.out.emptied(&key, window, watermark),
            Taken::Late(key, timestamp, value, watermark) => {
                self.out.late(key, timestamp, value, watermark);
            }
            Taken::Rare(rare) => self.write_rare(rare),
        }
    }

    /// Writes a bad record, a failed read or a failed element.
    fn write_rare(&mut self, rare: Rare) {
        match rare {
            Rare::Error(_, ChunkError::Record(err)) => {
                if let Err(e) = self.policy.handle(*err) {
                    self.fail(TimelyError::Input(e));
                }
            }
            Rare::Error(input, ChunkError::Failed(message) | ChunkError::ReadFailed(message)) => {
                let source_name = self.source_name(input);
                self.fail(TimelyError::Source {
                    source_name,
                    message,
                });
            }
            Rare::ElementFailed {
                message,
                line,
                input,
            } => {
                let source_name = self.source_name(input);
                self.fail(TimelyError::Element {
                    message,
                    source_name,
                    line,
                });
            }
        }
    }
}

/// What worker 0's writer hands to the writer thread.
pub(crate) enum ToSink {
    /// Every worker's rows of one timestamp (one block per worker, each in the canonical
    /// order).
    Rows(Vec<Rows>),
    /// The cut after the rows before it: a checkpoint to write (`Ok(None)`: a part is missing,
    /// the job stopped on a worker; `Err`: a part failed).
    Cut(Result<Option<crate::cut::Cut>, String>),
    /// Nothing follows.
    Done,
}

/// The thread that merges the workers' rows and writes them to the job's output (which
/// formats them on a thread of its own), so that worker 0 windows its keys as fast as the
/// other workers instead of also writing every row.
pub(crate) struct SinkThread<O> {
    thread: std::thread::JoinHandle<SinkState<O>>,
}

impl<O> SinkThread<O>
where
    O: WindowOutput<KeyId, AnyWindow, Number, JobResult> + Send + 'static,
{
    /// Starts the thread over `state`; the sender takes rows, at most [`SINK_AHEAD`] timestamps
    /// ahead of what the thread has written (a full channel holds worker 0's writer back).
    /// The third part says, once everything is written, why the job stopped early, if it did.
    /// Written buffers go back to `pool`, at most two per worker (about what is in flight).
    pub(crate) fn start(
        mut state: SinkState<O>,
        pool: RowPool,
        workers: usize,
    ) -> Result<SinkStarted<O>, TimelyError> {
        let (tx, rx) = crossbeam_channel::bounded::<ToSink>(SINK_AHEAD);
        let (done_tx, done) = crossbeam_channel::bounded(1);
        let thread = std::thread::Builder::new()
            .name("merge".into())
            .spawn(move || {
                loop {
                    let next = if state.live {
                        // A live input may pause for long: an output that failed meanwhile
                        // (a closed pipe) stops the job then, not at the next rows.
                        match rx.recv_timeout(crate::live::FLUSH_AFTER) {
                            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                                state.look_at_output();
                                continue;
                            }
                            next => next.map_err(|_| crossbeam_channel::RecvError),
                        }
                    } else {
                        rx.recv()
                    };
                    match next {
                        Ok(ToSink::Rows(rows)) => {
                            for mut buffer in state.write(rows) {
                                buffer.clear();
                                let mut pool = pool.lock();
                                if pool.len() < 2 * workers {
                                    pool.push(buffer);
                                }
                            }
                            if state.live && rx.is_empty() {
                                state.flush();
                            }
                        }
                        Ok(ToSink::Cut(cut)) => state.checkpoint(cut),
                        Ok(ToSink::Done) | Err(_) => break,
                    }
                }
                let _ = done_tx.send(state.failure.as_ref().map(failure_text));
                state
            })
            .map_err(|e| TimelyError::Timely(format!("starting the writer thread: {e}")))?;
        Ok((tx, Self { thread }, done))
    }

    /// The state once everything sent is written.
    pub(crate) fn join(self) -> Result<SinkState<O>, TimelyError> {
        self.thread
            .join()
            .map_err(|_| TimelyError::Timely("the writer thread panicked".into()))
    }
}

/// The writer thread's channel, the thread, and where it says how the job ended.
pub(crate) type SinkStarted<O> = (
    crossbeam_channel::Sender<ToSink>,
    SinkThread<O>,
    crossbeam_channel::Receiver<Option<String>>,
);

/// A failure as the other processes of a cluster report it (an error with its causes).
fn failure_text(e: &TimelyError) -> String {
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}

/// The steps of the final watermark a worker gave to the writer that may not be written yet:
/// a step's rows are written as the next steps fire, so that they are not all held at once,
/// without a round trip to the writer for every step (which cost more than the steps).
pub(crate) struct Unwritten {
    /// (step, rows), oldest first.
    steps: std::collections::VecDeque<(u64, usize)>,
    /// The most rows not yet written before the next step waits.
    budget: usize,
}

impl Unwritten {
    pub(crate) fn new(budget: usize) -> Self {
        Self {
            steps: std::collections::VecDeque::new(),
            budget,
        }
    }

    /// Notes that step `t`'s `rows` rows went to the writer.
    pub(crate) fn given(&mut self, t: u64, rows: usize) {
        self.steps.push_back((t, rows));
    }

    /// Whether the next step must wait: the rows of the steps not yet past `written` (the
    /// probe after the writer) are over the budget.
    pub(crate) fn too_many(&mut self, written: &ProbeHandle<u64>) -> bool {
        while self
            .steps
            .front()
            .is_some_and(|(t, _)| !written.less_equal(t))
        {
            self.steps.pop_front();
        }
        self.steps.iter().map(|s| s.1).sum::<usize>() > self.budget
    }
}

/// The writer: on worker 0, each chunk's (each final step's) rows once the frontier has passed
/// it, handed to the writer thread, and after a marked chunk's rows its cut ([`cut`]); it holds
/// a capability for what it has not handed over, so that a probe after it tells what is handed
/// over (the thread's channel is bounded, so that is at most [`SINK_AHEAD`] timestamps ahead of
/// what is written).
pub(crate) fn writer<'s>(
    rows: crate::Rows<'s>,
    sink: Option<crossbeam_channel::Sender<ToSink>>,
    cuts: Option<Arc<crate::cut::Cuts>>,
) -> timely::dataflow::Stream<'s, u64, Vec<()>> {
    type Nothing = timely::container::CapacityContainerBuilder<Vec<()>>;
    rows.unary_frontier::<Nothing, _, _, _>(
        Exchange::new(|_: &Rows| 0u64),
        "Write",
        move |_cap, _info| {
            let mut held: BTreeMap<u64, (Capability<u64>, Vec<Rows>)> = BTreeMap::new();
            move |(input, frontier), output| {
                input.for_each(|cap, data| {
                    if let (Some(&t), Some(cuts)) = (cap.least(), cuts.as_ref()) {
                        // The workers' parts of the cut after chunk `t` come with their rows.
                        for block in data.iter_mut() {
                            if let Some(part) = block.cut.take() {
                                let (end, part) = *part;
                                cuts.leave(t, &end, part);
                            }
                        }
                    }
                    if let (Some(&t), Some(c)) =
                        (cap.least(), cap.retain_least(output.output_index()))
                    {
                        held.entry(t)
                            .or_insert_with(|| (c, Vec::new()))
                            .1
                            .append(data);
                    }
                });
                let passed = |t: &u64| !frontier.less_equal(t);
                loop {
                    let rows = held.first_key_value().map(|(t, _)| *t).filter(passed);
                    let done = frontier.is_empty();
                    let cut = cuts
                        .as_ref()
                        .and_then(|c| c.first_passed(|t| passed(&t), done));
                    // A chunk's rows, then the cut after it.
                    let message = match (rows, cut) {
                        (Some(r), c) if c.is_none_or(|c| r <= c) => match held.pop_first() {
                            Some((_, (_cap, rows))) => ToSink::Rows(rows),
                            None => break,
                        },
                        (_, Some(c)) => match cuts.as_ref().map(|cuts| cuts.take(c)) {
                            Some(taken) => ToSink::Cut(taken),
                            None => break,
                        },
                        _ => break,
                    };
                    // Worker 0 writes; the others receive nothing. A writer thread gone (it
                    // panicked) is reported when the run ends.
                    if let Some(sink) = sink.as_ref() {
                        let _ = sink.send(message);
                    }
                }
            }
        },
    )
}
