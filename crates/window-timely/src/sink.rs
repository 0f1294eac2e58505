//! The writer thread's side: the rows of each chunk, once every worker is past it, merged from
//! the workers' runs (each already in the canonical order) and handed to the job's output; bad
//! records to the error policy.
//!
//! A chunk that fires many rows (a sliding window with a small slide over many keys, a
//! watermark step across a gap in the data) is not held whole: a worker of process 0 sends its
//! rows in pieces as its watermark steps fire ([`Backlog`]), and the chunk the writer is at
//! (the least its frontier holds) goes to the writer thread piece by piece. Each piece says up
//! to which moment its worker's rows are complete ([`Rows::piece`]), and every worker ends each
//! chunk with a last block, empty or not, so the writer thread writes the rows up to the least
//! of those moments while the chunk is still being windowed ([`Pending`]).

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use window_core::{AnyWindow, Number, WindowOutput};
use window_io::{ErrorPolicy, KeyId};
use window_job::JobResult;

use crate::parse::ChunkError;
use crate::rows::{Rare, Rows, Taken};
use crate::tagger::RowPool;
use crate::worker::Order;
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
    /// The pieces of the timestamp in progress not yet written.
    pending: Pending,
    /// Every worker of the job (of every process).
    workers: usize,
    /// Process 0's workers' rows not yet written.
    pub(crate) backlog: Option<Arc<Backlog>>,
}

/// Rows each worker of process 0 gave the writer and the writer has not written yet: a worker
/// over its share stops within its chunk and goes on once the writer has caught up, so that a
/// chunk's rows are not all held at once. The other processes' workers send a chunk's rows
/// whole (only process 0 sees this count).
#[derive(Debug)]
pub(crate) struct Backlog {
    rows: Vec<AtomicUsize>,
    /// The most rows a worker may have given and not seen written before it stops.
    budget: usize,
}

impl Backlog {
    /// A backlog of `workers` workers (this process's), `budget` rows each.
    pub(crate) fn new(workers: usize, budget: usize) -> Self {
        Self {
            rows: (0..workers).map(|_| AtomicUsize::new(0)).collect(),
            budget: budget.max(1),
        }
    }

    /// The rows at which a worker sends a piece of its chunk: half its budget, so that it
    /// stops after two pieces not yet written.
    pub(crate) fn piece_rows(&self) -> usize {
        (self.budget / 2).max(1)
    }

    /// Worker `worker` gave `rows` rows (a worker of another process: nothing).
    pub(crate) fn given(&self, worker: u32, rows: usize) {
        if let Some(n) = self.rows.get(worker as usize) {
            n.fetch_add(rows, Ordering::Relaxed);
        }
    }

    /// `rows` rows of worker `worker` are written (or dropped once the job failed).
    fn written(&self, worker: u32, rows: usize) {
        if let Some(n) = self.rows.get(worker as usize) {
            let _ = n.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |x| {
                Some(x.saturating_sub(rows))
            });
        }
    }

    /// Whether worker `worker` must wait for the writer.
    pub(crate) fn over(&self, worker: u32) -> bool {
        self.rows
            .get(worker as usize)
            .is_some_and(|n| n.load(Ordering::Relaxed) > self.budget)
    }
}

/// One worker's pieces of the timestamp in progress.
#[derive(Debug, Default)]
struct Run {
    /// Its blocks not yet written through, in order; `at`: the next row of the first.
    blocks: VecDeque<Rows>,
    at: usize,
    /// Its last block came: all its rows are here.
    last: bool,
    /// The moment and window end up to which its rows are here (its latest piece's).
    covered: Option<(Order, i64)>,
}

/// The pieces of the timestamp in progress, by worker.
#[derive(Debug, Default)]
struct Pending {
    runs: Vec<Run>,
    /// Whether a piece came since the timestamp began.
    any: bool,
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
            pending: Pending::default(),
            workers: 1,
            backlog: None,
        }
    }

    /// Sets the job's worker count (of every process) from `config` and, on process 0 (where
    /// the writer is, and its workers send a chunk's rows in pieces and wait for it), the
    /// backlog of its workers, which it returns.
    pub(crate) fn pieces(&mut self, config: &crate::TimelyConfig) -> Option<Arc<Backlog>> {
        let workers = config.workers.max(1);
        let processes = config.cluster.as_ref().map_or(1, |c| c.addresses.len());
        self.workers = workers * processes;
        self.backlog = config
            .cluster
            .as_ref()
            .is_none_or(|c| c.process == 0)
            .then(|| Arc::new(Backlog::new(workers, config.rows_ahead / self.workers)));
        self.backlog.clone()
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
    pub(crate) fn write(&mut self, runs: Vec<Rows>) -> Vec<Rows> {
        if self.pending.any {
            // The rest of the timestamp whose pieces came: all of it is here now.
            self.add(runs);
            let done = self.write_pending(true);
            self.pending = Pending::default();
            return done;
        }
        self.write_at_once(runs)
    }

    /// Writes every worker's rows of one timestamp, each worker's one block, merged.
    fn write_at_once(&mut self, mut runs: Vec<Rows>) -> Vec<Rows> {
        runs.retain(|r| !r.is_empty());
        // By worker, so that rows that tie (two workers over their share of the state limit at
        // one place) are written in one order, whichever worker's rows came first.
        runs.sort_by_key(|r| r.worker);
        if let [run] = &mut runs[..] {
            self.write_through(run, 0);
        } else {
            self.merge(&mut runs);
        }
        if let Some(b) = &self.backlog {
            for r in &runs {
                b.written(r.worker, r.len());
            }
        }
        self.look_at_output();
        runs
    }

    /// Writes blocks of the timestamp in progress, each worker's in order: the rows up to the
    /// least moment every worker's rows are complete to ([`Pending`]). Returns the blocks
    /// written through, to be used again.
    pub(crate) fn piece(&mut self, blocks: Vec<Rows>) -> Vec<Rows> {
        self.pending.any = true;
        self.add(blocks);
        self.write_pending(false)
    }

    /// Queues `blocks` under their workers.
    fn add(&mut self, blocks: Vec<Rows>) {
        let runs = &mut self.pending.runs;
        for block in blocks {
            let w = block.worker as usize;
            if runs.len() <= w {
                runs.resize_with(w + 1, Run::default);
            }
            let run = &mut runs[w];
            match block.piece {
                None => run.last = true,
                Some(o) => run.covered = Some(o),
            }
            run.blocks.push_back(block);
        }
    }

    /// The least moment up to which every worker's rows of the timestamp in progress are here
    /// (`Some(None)`: all of them); `None` while a worker has sent nothing of it.
    fn bound(&self) -> Option<Option<(Order, i64)>> {
        let mut bound: Option<(Order, i64)> = None;
        for w in 0..self.workers {
            let run = self.pending.runs.get(w)?;
            if run.last {
                continue;
            }
            let covered = run.covered?;
            bound = Some(bound.map_or(covered, |b| b.min(covered)));
        }
        Some(bound)
    }

    /// Writes the pending rows up to [`SinkState::bound`] (`all`: every one), merged; returns
    /// the blocks written through. Once the job failed, drops them all.
    fn write_pending(&mut self, all: bool) -> Vec<Rows> {
        let bound = if all { Some(None) } else { self.bound() };
        let whole = |r: &Run| r.at == 0 && r.blocks.len() <= 1;
        if bound == Some(None) && self.pending.runs.iter().all(whole) {
            // Every worker's rest in one block, none of it written yet (a pieced chunk whose
            // pieces are written, its last blocks left): merged as a timestamp that came at
            // once. The bound is everything, so every last block is here: it is complete.
            let runs = std::mem::take(&mut self.pending.runs);
            let blocks = runs.into_iter().flat_map(|r| r.blocks).collect();
            self.pending = Pending::default();
            return self.write_at_once(blocks);
        }
        let mut pending = std::mem::take(&mut self.pending);
        let mut done = Vec::new();
        if let Some(bound) = bound {
            if self.workers == 1 {
                // One worker: its rows are in order, and all of them within the bound.
                for run in &mut pending.runs {
                    while let Some(mut block) = run.blocks.pop_front() {
                        self.write_through(&mut block, run.at);
                        run.at = 0;
                        done.push(block);
                    }
                }
            } else {
                self.merge_pending(&mut pending.runs, bound, &mut done);
            }
        }
        if all || self.failure.is_some() {
            for run in &mut pending.runs {
                done.extend(run.blocks.drain(..));
                run.at = 0;
            }
        }
        let complete = (0..self.workers).all(|w| {
            pending
                .runs
                .get(w)
                .is_some_and(|r| r.last && r.blocks.is_empty())
        });
        if complete {
            // Every worker's last block came as a piece: the timestamp is written, and the
            // writer sends nothing more of it ([`writer`]).
            pending = Pending::default();
        }
        if let Some(b) = &self.backlog {
            for block in &done {
                b.written(block.worker, block.len());
            }
        }
        self.pending = pending;
        self.look_at_output();
        done
    }

    /// Writes the rows of `runs` up to (moment, window end) `bound` (`None`: all), the least
    /// first, the lowest worker on a tie (as [`SinkState::merge`]); the blocks written through
    /// go to `done`.
    fn merge_pending(
        &mut self,
        runs: &mut [Run],
        bound: Option<(Order, i64)>,
        done: &mut Vec<Rows>,
    ) {
        while self.failure.is_none() {
            let mut best: Option<(usize, (Order, i64, u64))> = None;
            for (w, run) in runs.iter_mut().enumerate() {
                while run.blocks.front().is_some_and(|b| run.at >= b.len()) {
                    done.extend(run.blocks.pop_front());
                    run.at = 0;
                }
                let Some(front) = run.blocks.front() else {
                    continue;
                };
                let key = front.canonical(run.at);
                if bound.is_some_and(|b| (key.0, key.1) > b) {
                    continue;
                }
                if best.is_none_or(|(_, k)| key < k) {
                    best = Some((w, key));
                }
            }
            let Some((w, _)) = best else { break };
            let run = &mut runs[w];
            let front = run.blocks.front_mut().expect("the run of the least row");
            self.write_row(front, run.at);
            run.at += 1;
        }
        for run in runs.iter_mut() {
            while run.blocks.front().is_some_and(|b| run.at >= b.len()) {
                done.extend(run.blocks.pop_front());
                run.at = 0;
            }
        }
    }

    /// Writes `run`'s rows from `from` on (one worker's, in order), up to a failure.
    fn write_through(&mut self, run: &mut Rows, from: usize) {
        let mut i = from;
        while i < run.len() && self.failure.is_none() {
            i = run.write_plain(i, &mut self.out);
            if i < run.len() {
                self.write_row(run, i);
                i += 1;
            }
        }
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
    /// order), or the rest of them once pieces of it came.
    Rows(Vec<Rows>),
    /// Blocks of the timestamp in progress, as they come ([`SinkState::piece`]).
    Piece(Vec<Rows>),
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
                        Ok(message @ (ToSink::Rows(_) | ToSink::Piece(_))) => {
                            let written = match message {
                                ToSink::Piece(rows) => state.piece(rows),
                                ToSink::Rows(rows) => state.write(rows),
                                _ => Vec::new(),
                            };
                            // Blocks without room (a chunk's empty last block) are not kept.
                            for mut buffer in written.into_iter().filter(|b| b.has_capacity()) {
                                buffer.clear();
                                buffer.shrink_to(crate::tagger::POOLED_ROWS);
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
    let peers = rows.scope().peers();
    rows.unary_frontier::<Nothing, _, _, _>(
        Exchange::new(|_: &Rows| 0u64),
        "Write",
        move |_cap, _info| {
            // Per timestamp: its capability, its blocks not handed over, and how many workers'
            // last blocks went over as pieces (`None` until a piece of it came).
            type Held = (Capability<u64>, Vec<Rows>, Option<usize>);
            let mut held: BTreeMap<u64, Held> = BTreeMap::new();
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
                        let entry = held.entry(t).or_insert_with(|| (c, Vec::new(), None));
                        if entry.2.is_none() && data.iter().any(|b| b.piece.is_some()) {
                            entry.2 = Some(0);
                        }
                        entry.1.append(data);
                    }
                });
                let passed = |t: &u64| !frontier.less_equal(t);
                // The rows of passed timestamps, and the cuts after them, in order.
                loop {
                    let rows = held.first_key_value().map(|(t, _)| *t).filter(passed);
                    let done = frontier.is_empty();
                    let cut = cuts
                        .as_ref()
                        .and_then(|c| c.first_passed(|t| passed(&t), done));
                    // A chunk's rows, then the cut after it.
                    let message = match (rows, cut) {
                        (Some(r), c) if c.is_none_or(|c| r <= c) => match held.pop_first() {
                            // Every worker's last block went over: the writer thread is done
                            // with it already.
                            Some((_, (_, rows, lasts)))
                                if lasts == Some(peers) && rows.is_empty() =>
                            {
                                continue
                            }
                            Some((_, (_cap, rows, _))) => ToSink::Rows(rows),
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
                // The blocks of the timestamp in progress (the least the frontier holds, every
                // one before it handed over), once a piece of it came, go as they come: pieces
                // of a chunk that fires many rows are written while the workers window the
                // rest of it. Its entry stays, with its capability, until it passes.
                let now = frontier.frontier().iter().next().copied();
                if let Some((_, blocks, Some(lasts))) = now.and_then(|t| held.get_mut(&t)) {
                    if !blocks.is_empty() {
                        let blocks = std::mem::take(blocks);
                        *lasts += blocks.iter().filter(|b| b.piece.is_none()).count();
                        if let Some(sink) = sink.as_ref() {
                            let _ = sink.send(ToSink::Piece(blocks));
                        }
                    }
                }
            }
        },
    )
}

#[cfg(test)]
mod tests;
