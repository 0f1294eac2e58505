//! A runtime for window jobs on timely dataflow: many worker threads, one output, the same
//! bytes for any number of workers.
//!
//! Flink scales a keyed window job by partitioning keys across parallel subtasks; the watermark
//! that drives event time everywhere is the minimum over all inputs. This crate does the same on
//! [timely dataflow](https://docs.rs/timely/0.32.0) (`timely` 0.32, pinned exactly):
//!
//! 1. **Chunks.** The input is cut into chunks of whole lines ([`TimelyConfig::chunk_bytes`]);
//!    worker `w` of `n` takes chunks `w`, `w + n`, `w + 2n` ... and parses them (a `.gz` input
//!    is decompressed by one reader and parsed by all). A chunk's index is its timely timestamp,
//!    so progress tracking sees one timestamp per chunk, not one per millisecond of event time.
//! 2. **Exchange.** Elements go to the worker that owns their key's group ([`groups`]: Flink's
//!    key groups), where one computation per key group holds them. Each chunk's summary (where its
//!    maximum event time rises, its lines, its bad records) is broadcast to every worker.
//! 3. **The window computation** runs on every worker over its keys. A chunk is processed once
//!    the operator's input frontier has passed it: every worker has sent its part, and every
//!    summary before it is in. Every worker applies every step of the watermark where the
//!    one-worker runtime applies it (a bounded-out-of-orderness watermark after every element),
//!    so each key's windows fire, take late elements and clean up exactly as with one worker.
//! 4. **One output.** Each worker tags its rows with the moment of the one-worker run that
//!    emitted them and sorts each watermark step's rows into the canonical order (by that
//!    moment; rows of one step by window end, then by the key's first appearance in the input,
//!    where Flink leaves the order of timers with one timestamp open). A chunk's rows move to
//!    worker 0 as one container per worker; once its frontier passes the chunk, it hands them to
//!    a writer thread, which merges the workers' runs and writes them, bad records to the error
//!    policy in their place. A chunk that fires many rows goes in pieces, written while it is
//!    windowed, with process 0's workers held to a budget of rows not yet written
//!    ([`TimelyConfig::rows_ahead`]; module `sink`).
//!
//! Output is therefore byte-identical for 1, 2 or any number of workers; it holds the rows of the
//! one-threaded runtime (`engine::Runtime`), in this canonical order within a watermark step.
//!
//! **Several processes** ([`TimelyConfig::cluster`]): each process reads the whole input and
//! parses its workers' chunks; keys cross processes as their text (module `wire`) and
//! are routed by a fixed hash of it; [`cluster`] makes the connections (each checked by a hello
//! of the same job) that timely's network threads then use; process 0 writes the output.
//! **Checkpoints** ([`run_checkpointed`], [`cut`]): a cut after a chunk, per key group (keys by
//! text), that a run with any number of workers and processes resumes from; in a cluster the
//! workers' parts travel to process 0, which keeps the checkpoints and tells the others where
//! to start. **Processing time** ([`clock`]): one clock reading per chunk, taken by the chunk
//! reader, drives every worker. `docs/scale-out.md` says what runs here.
//! **Several inputs** (module `merge`): files' chunks merged in event time, a live input's taken
//! as they arrive (module `arrive`, with idleness), the watermark the least of the inputs'.

#![forbid(unsafe_code)]

pub mod cluster;

mod arrive;
mod chunks;
pub mod clock;
pub mod cut;
mod end;
mod feed;
mod gather;
pub mod groups;
mod live;
mod merge;
mod operator;
mod parse;
mod rows;
mod sink;
mod tagger;
mod wire;
mod worker;

use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use timely::dataflow::operators::vec::{Broadcast, Input};
use timely::dataflow::operators::Probe;
use timely::dataflow::{InputHandleVec, ProbeHandle};
use window_core::{AnyWindow, HeldState, Number, WindowComputation, WindowMetrics, WindowOutput};
use window_io::{ErrorPolicy, InputError, KeyDictionary, KeyId};
use window_job::JobResult;

pub use chunks::{chunk_bytes_for_fan_out, DEFAULT_CHUNK_BYTES};
pub use cluster::Cluster;
pub use cut::{Checkpointing, Cut, GroupCut};
pub use gather::{tell_failed, tell_finished};
pub use worker::{Describe, FinalSteps};

use chunks::Share;
use end::{end_of_worker_run, outcome, send_halt, WorkerEnd};
use feed::{Feed, Part};
use groups::{GroupOf, KeyGroups};
use operator::{window_operator, OperatorContext};
use parse::Summary;
use rows::Rows as RowBlock;
use sink::{SinkState, SinkThread, ToSink};
use worker::WindowWorker;

/// The timestamp of the rows of the first step of the final watermark (step `k` at `FINAL + k`).
const FINAL: u64 = u64::MAX / 2;

/// How many rows of the final watermark's steps the workers may have fired that the writer has
/// not written yet (about 30 MB of rows), shared out among them: the end of a job with many
/// windows open stays flat in memory (the rows are written as the steps fire), and the steps
/// do not wait for the writer one by one.
const FINAL_ROWS_AHEAD: usize = 1 << 18;

/// How long a worker waiting for the others parks at most before it looks again.
const PARK: std::time::Duration = std::time::Duration::from_micros(200);

/// Timestamps of rows the writer thread may hold besides the one it writes.
const SINK_AHEAD: usize = 2;

/// Parsed chunks a worker's parser thread may hold ready.
const PARSED_AHEAD: usize = 2;

/// How many chunks a worker may read ahead of the slowest part of the dataflow: bounds the
/// memory of chunks read but not yet windowed and written.
const AHEAD_PER_WORKER: u64 = 2;

/// How a timely job runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimelyConfig {
    /// Worker threads (at least 1); per process in a cluster (the same in every process).
    pub workers: usize,
    /// Bounded out-of-orderness of the watermark in ms: watermark = max timestamp seen - delay
    /// - 1, after every element (Flink's `BoundedOutOfOrdernessWatermarks`; the one-worker
    ///   runtime's `watermark_interval` 0).
    pub out_of_orderness: i64,
    /// The size in bytes after which a chunk ends at the next line end (the last line of a chunk
    /// may make it longer). Output does not depend on it.
    pub chunk_bytes: usize,
    /// The other processes, when the job runs on several ([`Cluster`]): worker `w` of process
    /// `p` is the cluster's worker `p * workers + w`; process 0 writes the output. `None`: one
    /// process.
    pub cluster: Option<Cluster>,
    /// Key groups (Flink's max parallelism, [`groups`]): the units of state a checkpoint holds
    /// and a restore with any number of workers hands out; at least 1, and at least the total
    /// number of workers for every worker to get keys. The output does not depend on it.
    pub key_groups: u32,
    /// Periodic watermarks (Flink's `autoWatermarkInterval`, windowctl's
    /// `--watermark-interval`): the watermark is emitted after the first chunk cut once this
    /// much wall clock time has passed since the start or the last one (a live input that
    /// pauses gets an empty chunk for it), instead of after every element. `None`: after every
    /// element.
    pub watermark_interval: Option<std::time::Duration>,
    /// A processing-time job (`--time processing`): elements are at the processing time of
    /// their chunk, windows fire as the chunks' clock readings pass their ends, and nothing
    /// fires at the end of the input, as on one thread ([`clock`]). The summary's event times
    /// drive no watermark then.
    pub processing_time: bool,
    /// Where chunks get their processing time: the system clock, or for tests a fixed step
    /// per chunk ([`clock::ChunkClock`]).
    pub chunk_clock: clock::ChunkClock,
    /// Several inputs with a live one: an input that sent nothing for this long counts as idle
    /// (Flink's `withIdleness`) and holds the watermark back no more until it sends again.
    /// Files merged in event time are never idle.
    pub idle_timeout: Option<std::time::Duration>,
    /// How many fired rows the workers of process 0 may have given the writer that it has not
    /// written yet, shared out among all workers (at least 1): a worker over its share stops
    /// within its chunk, between watermark steps, until the writer catches up, and sends a
    /// chunk's rows in pieces of half its share, so that a chunk that fires many rows is not
    /// held whole. The default, 2^18 rows (about 8 MB), is the final watermark's budget too.
    /// The output does not depend on it.
    pub rows_ahead: usize,
}

impl TimelyConfig {
    /// `workers` threads, a watermark `out_of_orderness` ms behind, chunks of 64 KiB (the rows
    /// a chunk fires are held until every worker is past it: smaller chunks hold fewer, and
    /// [`chunk_bytes_for_fan_out`] fits the size to the window).
    #[must_use]
    pub fn new(workers: usize, out_of_orderness: i64) -> Self {
        Self {
            workers,
            out_of_orderness,
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            cluster: None,
            key_groups: groups::DEFAULT_KEY_GROUPS,
            watermark_interval: None,
            processing_time: false,
            chunk_clock: clock::ChunkClock::System,
            idle_timeout: None,
            rows_ahead: FINAL_ROWS_AHEAD,
        }
    }
}

/// Why a run stopped early (the shapes of the one-worker runtime's `RuntimeError`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TimelyError {
    /// A record the error policy did not skip (its message names source, line and field).
    #[error(transparent)]
    Input(InputError),
    /// The source failed to read; nothing follows from it.
    #[error("{}", window_io::source_failure(source_name, message))]
    Source {
        /// The source's name.
        source_name: String,
        /// What failed, with the place.
        message: String,
    },
    /// The computation cannot go on with an element (a merge behind the watermark, too many
    /// window states).
    #[error("{message}")]
    Element {
        /// Why.
        message: String,
        /// The source of the element.
        source_name: String,
        /// Its line in the source.
        line: u64,
    },
    /// Writing the output failed.
    #[error("writing output")]
    Output(#[source] std::io::Error),
    /// timely could not start its workers, or a worker panicked.
    #[error("the timely runtime failed: {0}")]
    Timely(String),
    /// The processes of a cluster could not connect (the message names the address and what
    /// was wrong: a stray connection, another job, a peer that did not come).
    #[error("--processes: {0}")]
    Cluster(String),
    /// Another process of the cluster stopped the job early (process 0's write error, a
    /// signal to that process); the message is its error, or why it stopped.
    #[error("process {process} stopped the job: {message}")]
    Peer {
        /// The process that stopped the job.
        process: usize,
        /// Its error, or why it stopped.
        message: String,
    },
    /// A checkpoint could not be taken, or the one to resume from could not be restored.
    #[error("checkpoint: {0}")]
    Checkpoint(String),
    /// No input was given.
    #[error("{0}")]
    Inputs(String),
}

/// What a job needs on every worker: its computation and how to read its input.
pub trait JobParts: Send + Sync + 'static {
    /// The job's computation.
    type Computation: WindowComputation<KeyId, Number, Window = AnyWindow, Output = JobResult>
        + 'static;
    /// A new computation of the job (one per worker).
    fn computation(&self) -> Self::Computation;
    /// A reader over the bytes of a chunk of input `input` (from 0, in the order the job gives
    /// them; a CSV header line in front where the input has one).
    fn reader(&self, input: usize, bytes: Vec<u8>) -> window_io::EventReader;
    /// How the worker reports an element the computation rejected.
    fn describe(&self) -> Describe;
    /// How the final watermark may go to `i64::MAX` in steps, so that the windows still open
    /// at the end are written as they fire instead of all held at once (the rows do not
    /// change); `None`, the default, goes there in one step.
    fn final_steps(&self) -> Option<FinalSteps> {
        None
    }
    /// The least stride in which a watermark step may go in sub-steps, so that a chunk's rows
    /// can go to the writer in pieces within a step (module `sink`). Only for a job whose steps
    /// fire each window at its end (Flink's `EventTimeTrigger`): a sub-step must fire no row of
    /// a window that ends after it, or the rows of one step would not come in window-end order.
    /// `None`, the default: every step goes whole.
    fn sub_steps(&self) -> Option<i64> {
        None
    }
    /// The most window states (and elements held) a worker may hold, checked after each chunk
    /// and each step of the final watermark; over it the job stops there with an error. `None`,
    /// the default: no limit.
    fn max_held(&self) -> Option<usize> {
        None
    }
    /// Called once per chunk parsed, with the range (min, max) of its records' event times
    /// (for a summary's hint about the time unit); the default does nothing.
    fn saw_event_times(&self, _range: (i64, i64)) {}
    /// Whether the job was asked to stop (SIGINT, SIGTERM): looked at between chunks; the job
    /// then stops as if its input ended there, without the final watermark.
    fn interrupted(&self) -> bool {
        false
    }
}

/// The input of a job.
pub struct TimelyInput {
    /// Its name in messages (a path, `stdin`).
    pub name: String,
    /// Its bytes (decompressed), as `window_io::open_bytes` gives them.
    pub bytes: Box<dyn BufRead + Send>,
    /// For CSV, its field delimiter (quoted fields may hold line breaks, where no chunk is
    /// cut); `None` for JSON lines.
    pub csv_delimiter: Option<u8>,
    /// Whether it is CSV with a header line (which every chunk but the first gets in front).
    pub csv_header: bool,
    /// Whether its bytes come as their writer sends them (stdin, a pipe; not a file): a chunk
    /// is then also cut once it holds whole lines and 100 ms have passed since its first byte
    /// came (Flink's default buffer timeout), so that a slow feed's lines are windowed as they
    /// come. Read on a thread of its own.
    pub live: bool,
}

impl std::fmt::Debug for TimelyInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimelyInput")
            .field("name", &self.name)
            .field("csv_header", &self.csv_header)
            .finish_non_exhaustive()
    }
}

/// What a finished run leaves: the output and policy (to finish and report on), the counters.
#[derive(Debug)]
pub struct Outcome<O> {
    /// The job's output, all rows handed to it (not yet finished or flushed).
    pub output: O,
    /// The error policy, with its skip count and dead letters.
    pub policy: ErrorPolicy,
    /// Events read.
    pub events: u64,
    /// Elements the computation rejected.
    pub rejected: u64,
    /// The workers' window metrics, summed.
    pub metrics: WindowMetrics,
    /// Window states open at the end: every worker's `live_state().windows` (of every process,
    /// on process 0 of a cluster), taken after its last chunk or final step. Stopped by a
    /// signal, no final watermark fired or dropped any: this is what every worker held at the
    /// stop (the cut after the last chunk every worker processed), the count the single-threaded
    /// runtime gives at the same point (`windowctl`'s `workers.rs` test pins it). It varies a
    /// lot with where the input stopped (native sliding windows are open for the size plus the
    /// watermark delay behind the newest event) and counts slices for sliced windows, not the
    /// elements their reordering buffer holds (often 0 with a large `--out-of-orderness`).
    pub live_windows: usize,
    /// The sum of every worker's peak state (the most it held after a chunk or a final step;
    /// of all processes, on process 0 of a cluster): an upper bound of the most the workers
    /// held at once, which the workers' peaks at different moments may not reach.
    pub peak_held: HeldState,
    /// Why the job stopped early, if it did (the output holds every row before that point).
    pub failure: Option<TimelyError>,
    /// Whether it stopped because [`JobParts::interrupted`] said so.
    pub interrupted: bool,
    /// A process other than 0 of a cluster with checkpoints: process 0's last checkpoint says
    /// the job ran to its end, so nothing ran (every count is 0).
    pub finished_already: bool,
}

/// Runs the job of `parts` over `inputs` (at least one; several are merged in event time,
/// module `merge`) on `config.workers` threads, writing to `output` on worker 0 with bad records to
/// `policy`; keys are interned in `keys` (shared by the workers, and by `output` for their
/// texts).
///
/// # Errors
/// [`TimelyError::Timely`] when the workers cannot start or one panicked; every other way a job
/// stops early is in [`Outcome::failure`], with the output written up to there.
pub fn run<P, O>(
    config: TimelyConfig,
    parts: Arc<P>,
    inputs: Vec<TimelyInput>,
    keys: Arc<KeyDictionary>,
    output: O,
    policy: ErrorPolicy,
) -> Result<Outcome<O>, TimelyError>
where
    P: JobParts,
    O: WindowOutput<KeyId, AnyWindow, Number, JobResult> + Send + 'static,
{
    run_checkpointed(config, parts, inputs, keys, output, policy, None)
}

/// [`run`], with checkpoints ([`cut`]): resumed from `checkpoints.resume` if given (the input
/// is read from the byte after the cut, each worker restores the key groups it owns; `keys`
/// must be the dictionary of the checkpoint, every key with its id of then), and a cut handed
/// to `checkpoints.write` every `checkpoints.interval`. One process; several inputs must be
/// files (each is read on from its own offset in the cut).
///
/// # Errors
/// As [`run`]; [`TimelyError::Checkpoint`] when the cut was taken with another number of key
/// groups or inputs, an input cannot be read up to it, or a live input is among several;
/// [`TimelyError::Inputs`] for no input.
pub fn run_checkpointed<P, O>(
    config: TimelyConfig,
    parts: Arc<P>,
    mut inputs: Vec<TimelyInput>,
    keys: Arc<KeyDictionary>,
    output: O,
    policy: ErrorPolicy,
    checkpoints: Option<Checkpointing<O>>,
) -> Result<Outcome<O>, TimelyError>
where
    P: JobParts,
    O: WindowOutput<KeyId, AnyWindow, Number, JobResult> + Send + 'static,
{
    let workers = config.workers.max(1);
    let (resume, interval, write) = match checkpoints {
        Some(c) => (c.resume, Some(c.interval), Some(c.write)),
        None => (None, None, None),
    };
    merge::check_inputs(&inputs, interval.is_some())?;
    let mut resume = resume;
    // A cluster connects first: with checkpoints, process 0 (which holds them) tells the others
    // where the job starts, before they read anything.
    let sockets = match &config.cluster {
        Some(cluster) => match gather::start(cluster, interval.is_some(), &mut resume)? {
            gather::Started::Connected(sockets) => Some(sockets),
            gather::Started::Finished => return Ok(Outcome::finished(output, policy)),
        },
        None => None,
    };
    let groups = config.key_groups.max(1);
    if let Some(cut) = &resume {
        cut::prepare_resume(cut, groups, parts.as_ref(), &mut inputs)?;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let fail = policy.on_error == window_io::OnError::Fail;
    let names: Vec<String> = inputs.iter().map(|i| i.name.clone()).collect();
    let mut state = SinkState::new(output, policy, names.clone(), Arc::clone(&stop));
    state.checkpoint = write;
    state.live = inputs.iter().any(|i| i.live);
    let backlog = state.pieces(&config);
    let pool = feed::Pools::default();
    let (to_sink, sink, sink_done) = SinkThread::start(state, Arc::clone(&pool.rows), workers)?;
    let share = config.cluster.as_ref().map_or(Share::ALL, |c| Share {
        threads: workers as u64,
        process: c.process as u64,
        processes: c.addresses.len() as u64,
    });
    let first_chunk = resume.as_ref().map_or(0, |c| c.chunk + 1);
    let timers = Arc::new(clock::Timers::new(workers));
    // In a cluster, every process hashes every byte it reads, compared at the end.
    let read = config
        .cluster
        .is_some()
        .then(|| Arc::new(Mutex::new((0u64, cluster::fnv1a(&[])))));
    let how = merge::How {
        config: &config,
        share,
        timers: &timers,
        read: read.as_ref(),
        interval,
        resume: resume.as_ref(),
    };
    let (chunks, cuts) = merge::chunks(inputs, &parts, &how);
    let names = names.iter().map(|n| Arc::from(n.as_str())).collect();
    let interrupted = Arc::new(AtomicBool::new(false));
    let shared = Arc::new(Shared {
        interrupted: Arc::clone(&interrupted),
        parts,
        chunks: Arc::new(chunks),
        keys,
        stop,
        to_sink: to_sink.clone(),
        pool,
        names,
        delay: config.out_of_orderness,
        periodic: config.watermark_interval.is_some(),
        processing: config.processing_time,
        timers,
        fail,
        cluster: config.cluster.is_some().then_some(workers),
        key_groups: config.key_groups.max(1),
        cuts,
        resume: resume.map(Arc::new),
        first_chunk,
        sink_done: Mutex::new(Some(sink_done)),
        read,
        backlog,
    });
    let ran = execute(&config, sockets, shared);
    // Every chunk handed over is written before the writer thread ends.
    let _ = to_sink.send(ToSink::Done);
    let me = config.cluster.as_ref().map(|c| c.process);
    outcome(ran, sink.join(), interrupted.load(Ordering::Relaxed), me)
}

/// Runs the workers of `shared` to their ends: `config.workers` threads of one process, or of
/// this process of a cluster, over `sockets` to the others.
///
/// # Errors
/// [`TimelyError::Timely`]: the workers cannot start; [`TimelyError::Cluster`]: the network
/// threads cannot. A worker that panicked is an `Err` among the ends.
fn execute<P: JobParts>(
    config: &TimelyConfig,
    sockets: Option<gather::Sockets>,
    shared: Arc<Shared<P>>,
) -> Result<Vec<Result<WorkerEnd, String>>, TimelyError> {
    let workers = config.workers.max(1);
    match &config.cluster {
        None => timely::execute(timely::Config::process(workers), move |worker| {
            run_worker(worker, &shared)
        }),
        Some(cluster) => {
            let sockets = sockets.unwrap_or_default();
            let (builders, guard) = gather::allocators(cluster, sockets, workers)?;
            timely::execute::execute_from(
                builders,
                guard,
                timely::WorkerConfig::default(),
                move |worker| run_worker(worker, &shared),
            )
        }
    }
    .map_err(TimelyError::Timely)
    .map(|guards| guards.join())
}

/// What every worker shares.
struct Shared<P> {
    /// Set once [`JobParts::interrupted`] said so.
    interrupted: Arc<AtomicBool>,
    parts: Arc<P>,
    chunks: Arc<merge::Chunks>,
    keys: Arc<KeyDictionary>,
    stop: Arc<AtomicBool>,
    /// To the writer thread (worker 0's writer sends).
    to_sink: crossbeam_channel::Sender<ToSink>,
    /// Row blocks the writer thread emptied, element buffers the workers did.
    pool: feed::Pools,
    /// The inputs' names in messages, by index.
    names: Vec<Arc<str>>,
    delay: i64,
    /// Periodic watermarks ([`TimelyConfig::watermark_interval`]).
    periodic: bool,
    /// A processing-time job ([`TimelyConfig::processing_time`]).
    processing: bool,
    /// This process's workers' earliest processing-time timers ([`clock::Timers`]).
    timers: Arc<clock::Timers>,
    fail: bool,
    /// In a cluster: the workers per process.
    cluster: Option<usize>,
    /// The number of key groups.
    key_groups: u32,
    /// Where the workers leave their parts of each cut, with checkpoints.
    cuts: Option<Arc<cut::Cuts>>,
    /// The cut the run resumes from.
    resume: Option<Arc<Cut>>,
    /// The first chunk of the run (after the cut it resumes from).
    first_chunk: u64,
    /// Where worker 0 of a cluster learns how the writer ended (taken once).
    sink_done: Mutex<Option<crossbeam_channel::Receiver<Option<String>>>>,
    /// In a cluster: the input's bytes read, and FNV-1a of them ([`HashRead`]).
    read: Option<Arc<Mutex<(u64, u64)>>>,
    /// On process 0: its workers' rows the writer has not written ([`sink::Backlog`]).
    backlog: Option<Arc<sink::Backlog>>,
}

/// One worker: builds the dataflow, feeds it its chunks, and runs it to the end.
fn run_worker<P>(worker: &mut timely::worker::Worker, shared: &Shared<P>) -> WorkerEnd
where
    P: JobParts,
{
    let index = worker.index();
    let peers = worker.peers() as u64;
    // Keys sent to or received from other processes are named by this process's dictionary.
    wire::use_dictionary(&shared.keys);
    let mut elements_in = InputHandleVec::<u64, Part>::new();
    let mut summaries_in = InputHandleVec::<u64, Summary>::new();
    let probe = ProbeHandle::new();
    let end = Arc::new(Mutex::new(WorkerEnd::default()));
    let window = window_worker(shared, index, peers);
    let sink = (index == 0).then(|| shared.to_sink.clone());
    let first = shared.first_chunk;
    let end_of_worker = Arc::clone(&end);
    worker.dataflow::<u64, _, _>(|scope| {
        let elements = scope.input_from(&mut elements_in);
        let summaries = scope.input_from(&mut summaries_in).broadcast();
        let steps = shared.parts.final_steps();
        let ctx = OperatorContext {
            steps,
            written: probe.clone(),
            interrupted: Arc::clone(&shared.interrupted),
            parts: Arc::clone(&shared.parts),
            end: end_of_worker,
            stop: Arc::clone(&shared.stop),
            cuts: shared.cuts.clone(),
            first,
            pool: shared.pool.elements.clone(),
            timers: (Arc::clone(&shared.timers), index),
            backlog: shared.backlog.clone(),
        };
        let rows = window_operator(elements, summaries, window, ctx);
        let cuts = shared.cuts.clone().filter(|_| index == 0);
        sink::writer(rows, sink, cuts).probe_with(&probe);
    });
    // This worker's chunks: `index`, `index + peers` ... from the run's first chunk on.
    let mut chunk = first + (index as u64 + peers - first % peers) % peers;
    elements_in.advance_to(chunk);
    summaries_in.advance_to(chunk);
    let mut feed = Feed::start(shared, chunk, peers);
    // Whether the summary of this worker's last chunk went out (one that stops the job).
    let mut ended = false;
    while !shared.stop.load(Ordering::Relaxed) {
        let idle = |wait| {
            worker.step_or_park(Some(wait));
        };
        let Some((elements, summary)) = feed.next(shared, idle) else {
            break;
        };
        let last = summary.stop;
        // The inputs stand at this chunk already (its parser takes every `peers`-th one).
        debug_assert_eq!(summary.chunk, chunk);
        elements_in.send_batch(&mut { elements });
        summaries_in.send(summary);
        if last {
            ended = true;
            break;
        }
        chunk += peers;
        elements_in.advance_to(chunk);
        summaries_in.advance_to(chunk);
        let behind = chunk.saturating_sub(AHEAD_PER_WORKER * peers);
        while probe.less_than(&behind) && !shared.stop.load(Ordering::Relaxed) {
            // Parks until a message or an activation comes (never spins).
            worker.step_or_park(Some(PARK));
        }
    }
    drop(feed);
    if !ended {
        send_halt(shared, &mut summaries_in, chunk, index);
    }
    drop(elements_in);
    drop(summaries_in);
    while worker.step_or_park(None) {}
    let own = std::mem::take(&mut *end.lock());
    end_of_worker_run(worker, shared, own)
}

/// Worker `index` of `peers`'s window computations (its key groups), as the job and the
/// cut it resumes from say.
fn window_worker<P: JobParts>(
    shared: &Shared<P>,
    index: usize,
    peers: u64,
) -> WindowWorker<P::Computation> {
    let groups = KeyGroups::new(
        || shared.parts.computation(),
        GroupOf::new(Arc::clone(&shared.keys), shared.key_groups),
        index as u32,
        peers as u32,
    );
    let mut window = WindowWorker::new(
        groups,
        shared.delay,
        shared.parts.describe(),
        shared.names.clone(),
        index as u32,
    );
    window.periodic = shared.periodic;
    window.processing = shared.processing;
    // A watermark step across a gap in the data may go in sub-steps.
    window.stride = shared.parts.sub_steps();
    // Each worker holds its share of the limit.
    window.max_held = shared.parts.max_held().map(|m| m.div_ceil(peers as usize));
    window.out.pool = Some(Arc::clone(&shared.pool.rows));
    if let Some(cut) = &shared.resume {
        if let Err(message) = window.resume(cut, &shared.keys) {
            // Checked before the workers started: not expected here.
            window.fail(message);
        }
    }
    window
}

type Elements<'s> = timely::dataflow::Stream<'s, u64, Vec<Part>>;
type Summaries<'s> = timely::dataflow::Stream<'s, u64, Vec<Summary>>;
/// Each element: one worker's rows of one timestamp, moved whole (never copied row by row).
type Rows<'s> = timely::dataflow::Stream<'s, u64, Vec<RowBlock>>;
