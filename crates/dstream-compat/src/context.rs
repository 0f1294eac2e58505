//! [`StreamingContext`]: Spark Streaming's context with a manual clock. It holds the batch
//! interval, the input streams and the output operations; `start()` fixes the zero time and
//! prepares the stream graph (zero time, remember durations, checkpoint checks), and every
//! [`run_batch`](StreamingContext::run_batch) advances the clock by one batch interval, runs
//! the output operations due at that time and forgets the batches no stream needs any more.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;

use crate::batch::Batch;
use crate::codec::Codecs;
use crate::dstream::DStream;
use crate::error::{Error, Result};
use crate::graph::{
    clear_metadata, initialize, names, remember, validate_at_start, AnyNode, Log, Meta, Node,
};
use crate::queue::{QueueInput, Retention};
use crate::Partitions;

/// Spark Streaming's `StreamingContext` driven by a manual clock: a batch interval, the input
/// streams built from it, the output operations registered on its streams, and the batch loop.
///
/// Lifecycle (Spark's `StreamingContextState`): build streams and register output operations
/// ([`DStream::foreach_batch`], [`DStream::collect_batches`]); [`start`](Self::start) or
/// [`start_at`](Self::start_at) fixes the zero time and checks the graph; each
/// [`run_batch`](Self::run_batch) runs the next batch time. A failed start or batch stops the
/// context. All times are milliseconds; batch `k` (k ≥ 1) is at `zero + k · batch interval`.
///
/// A context and its streams are single-threaded (`Rc` inside), like Spark's driver-side graph.
/// Cloning the context gives another handle to the same context.
///
/// # Examples
/// ```
/// use dstream_compat::StreamingContext;
///
/// let ssc = StreamingContext::new(1000)?;
/// let numbers = ssc.queue_stream(vec![vec![1, 2], vec![3], vec![4, 5]]);
/// let windows = numbers.window(2000, 1000)?.collect_batches()?;
/// ssc.start()?;
/// ssc.run_batches(3)?;
/// let got: Vec<(i64, Vec<i32>)> =
///     windows.take().into_iter().map(|(t, b)| (t, b.into_vec())).collect();
/// assert_eq!(got, [(1000, vec![1, 2]), (2000, vec![1, 2, 3]), (3000, vec![3, 4, 5])]);
/// # Ok::<(), dstream_compat::Error>(())
/// ```
#[derive(Clone)]
pub struct StreamingContext {
    pub(crate) inner: Rc<Ctx>,
}

/// Where a context is in its lifecycle (Spark's `StreamingContextState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContextState {
    /// Built, not started: streams and output operations can be added.
    Initialized,
    /// Started: batches can be run.
    Active,
    /// Stopped by a failed start or a failed batch.
    Stopped,
}

pub(crate) struct Ctx {
    batch_interval: i64,
    pub(crate) log: Rc<Log>,
    /// The encodings of records for snapshots (see `crate::codec`).
    pub(crate) codecs: Codecs,
    next_id: Cell<usize>,
    in_batch: Cell<bool>,
    state: RefCell<State>,
}

struct State {
    phase: Phase,
    /// `StreamingContext.remember(duration)`.
    remember: Option<i64>,
    outputs: Vec<Rc<dyn Output>>,
}

#[derive(Clone, Copy)]
enum Phase {
    Initialized,
    Active {
        zero: i64,
        time: i64,
    },
    Stopped {
        zero: Option<i64>,
        time: Option<i64>,
    },
}

impl fmt::Debug for StreamingContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamingContext")
            .field("batch_interval", &self.inner.batch_interval)
            .field("state", &self.state())
            .field("zero_time", &self.zero_time())
            .field("current_time", &self.current_time())
            .field("outputs", &self.inner.state.borrow().outputs.len())
            .finish_non_exhaustive()
    }
}

impl StreamingContext {
    /// A context whose batches are `batch_interval` milliseconds apart
    /// (`new StreamingContext(conf, batchDuration)`).
    ///
    /// # Errors
    /// [`Error::InvalidBatchInterval`] if `batch_interval <= 0`.
    pub fn new(batch_interval: i64) -> Result<StreamingContext> {
        if batch_interval <= 0 {
            return Err(Error::InvalidBatchInterval {
                interval: batch_interval,
            });
        }
        Ok(StreamingContext {
            inner: Rc::new(Ctx {
                batch_interval,
                log: Rc::new(Log::default()),
                codecs: Codecs::with_builtins(),
                next_id: Cell::new(0),
                in_batch: Cell::new(false),
                state: RefCell::new(State {
                    phase: Phase::Initialized,
                    remember: None,
                    outputs: Vec::new(),
                }),
            }),
        })
    }

    /// The batch interval, in ms.
    #[must_use]
    pub fn batch_interval(&self) -> i64 {
        self.inner.batch_interval
    }

    /// Makes every stream remember its batches for at least `duration` ms
    /// (`StreamingContext.remember`), e.g. to slice further back.
    ///
    /// # Errors
    /// [`Error::AlreadyStarted`] after `start()`.
    pub fn remember(&self, duration: i64) -> Result<()> {
        let mut st = self.inner.state.borrow_mut();
        if !matches!(st.phase, Phase::Initialized) {
            return Err(Error::AlreadyStarted);
        }
        st.remember = Some(duration);
        Ok(())
    }

    /// Starts recording Spark's INFO line `Slicing from A ms to B ms (aligned to A' ms and
    /// B' ms)` for every slice any stream of this context makes; read them with
    /// [`slice_log`](Self::slice_log). Off by default: a long job slices at every batch.
    pub fn trace_slices(&self) {
        self.inner.log.trace_slices();
    }

    /// An input stream of prepared batches: the `i`-th batch (0-based) is the stream's batch at
    /// time `zero + (i + 1) · batch interval`; later times get empty batches until more are
    /// pushed ([`queue_input`](Self::queue_input)). Like Spark's `queueStream`, but a batch
    /// belongs to a time (as in the input of the Spark harness that recorded the conformance
    /// cases), so slicing a time again, even one the stream forgot, gives the same batch.
    ///
    /// # Examples
    /// ```
    /// use dstream_compat::StreamingContext;
    ///
    /// let ssc = StreamingContext::new(500)?;
    /// let input = ssc.queue_stream(vec![vec!["a"], vec![], vec!["b", "c"]]);
    /// let seen = input.collect_batches()?;
    /// ssc.start()?;
    /// ssc.run_batches(4)?;
    /// let sizes: Vec<(i64, usize)> = seen.take().iter().map(|(t, b)| (*t, b.len())).collect();
    /// assert_eq!(sizes, [(500, 1), (1000, 0), (1500, 2), (2000, 0)]);
    /// # Ok::<(), dstream_compat::Error>(())
    /// ```
    pub fn queue_stream<T: Clone + 'static>(
        &self,
        batches: impl IntoIterator<Item = Vec<T>>,
    ) -> DStream<T> {
        let (queue, stream) = self.queue_input();
        for batch in batches {
            queue.push(batch);
        }
        stream
    }

    /// An input stream fed by pushing batches through the returned [`QueueInput`]: the `i`-th
    /// batch pushed (0-based, counting from the first) is the stream's batch at time
    /// `zero + (i + 1) · batch interval`. Push a batch before running its batch time; a time
    /// with no batch pushed yet gets an empty batch. Every batch pushed is kept
    /// ([`Retention::KeepAll`]); see [`queue_input_with`](Self::queue_input_with).
    pub fn queue_input<T: Clone + 'static>(&self) -> (QueueInput<T>, DStream<T>) {
        self.queue_input_with(Retention::KeepAll)
    }

    /// As [`queue_input`](Self::queue_input), with a choice of how long pushed batches are
    /// kept: all of them (slicing any past time gives its batch again, as the Spark harness's
    /// input does), or only until the stream forgets their time (its remember duration, see
    /// [`DStream::remember_duration`]), which bounds memory in a long job; slicing such an old
    /// time then gives an empty batch, as a Spark receiver input whose blocks were removed
    /// does.
    pub fn queue_input_with<T: Clone + 'static>(
        &self,
        retention: Retention,
    ) -> (QueueInput<T>, DStream<T>) {
        let (queue, op) = crate::queue::new_queue(self.inner.batch_interval, retention);
        let meta = self.new_meta(names::QUEUE_INPUT, self.inner.batch_interval);
        let stream = DStream::from_node(self.clone(), Node::new(meta, op));
        (queue, stream)
    }

    /// The union of several streams of the same slide duration: at each of their batch times,
    /// the records of all of them (`StreamingContext.union`, Spark's `UnionDStream`).
    ///
    /// # Errors
    /// [`Error::EmptyUnion`], [`Error::DifferentContexts`], or
    /// [`Error::DifferentSlideDurations`] naming every slide.
    pub fn union<T: Clone + 'static>(&self, streams: &[DStream<T>]) -> Result<DStream<T>> {
        let Some(first) = streams.first() else {
            return Err(Error::EmptyUnion);
        };
        if streams
            .iter()
            .any(|s| !Rc::ptr_eq(&s.ctx.inner, &self.inner))
        {
            return Err(Error::DifferentContexts);
        }
        let slide = first.slide_duration();
        if streams.iter().any(|s| s.slide_duration() != slide) {
            return Err(Error::DifferentSlideDurations {
                slides: streams.iter().map(DStream::slide_duration).collect(),
            });
        }
        let op = crate::dstream::UnionOp {
            parents: streams.iter().map(|s| Rc::clone(&s.node)).collect(),
        };
        let meta = self.new_meta(names::UNION, slide);
        Ok(DStream::from_node(self.clone(), Node::new(meta, op)))
    }

    /// Starts the context with the manual clock at 0: the zero time is 0 and the first batch is
    /// at one batch interval. See [`start_at`](Self::start_at).
    ///
    /// # Errors
    /// As [`start_at`](Self::start_at).
    pub fn start(&self) -> Result<()> {
        self.start_at(0)
    }

    /// Starts the context with the manual clock at `clock` ms (`StreamingContext.start()` with
    /// Spark's `ManualClock`): the first batch is at the next multiple of the batch interval
    /// after `clock`, and the zero time one interval before it (`floor(clock / batch) · batch`;
    /// a clock at 2500 with 1 s batches gives zero 2000 and the first batch at 3000).
    ///
    /// Then, as Spark's `DStreamGraph.start`: every stream reachable from an output operation
    /// gets the zero time, its default checkpoint interval if it must checkpoint (the
    /// incremental windows: the smallest multiple of the slide that is at least 10 s) and its
    /// remember duration (at least its slide, or twice its checkpoint interval; a windowed
    /// stream makes its parent remember its own remember duration plus its window;
    /// [`remember`](Self::remember) raises all of them); then the checkpoint intervals are
    /// checked. A checkpoint directory is not needed (see `docs/dstream.md`).
    ///
    /// # Errors
    /// [`Error::AlreadyStarted`], [`Error::NoOutputOperations`],
    /// [`Error::CheckpointIntervalTooShort`], [`Error::CheckpointIntervalNotMultiple`],
    /// [`Error::ZeroSlide`] (an incremental window with a zero slide). A failed start stops
    /// the context, except [`Error::TimeOutOfRange`]: a clock so close to `i64::MIN` that its
    /// zero time is before it (a clock of `i64::MIN + 1` with 1 s batches), which leaves the
    /// context unstarted.
    pub fn start_at(&self, clock: i64) -> Result<()> {
        self.startable()?;
        let interval = self.inner.batch_interval;
        let exact = i128::from(clock.div_euclid(interval)) * i128::from(interval);
        let zero = i64::try_from(exact).map_err(|_| Error::TimeOutOfRange {
            what: "zero time",
            time: exact,
        })?;
        self.start_graph(zero, zero)
    }

    /// Whether the context can start (or be restored): not started, with an output operation.
    pub(crate) fn startable(&self) -> Result<()> {
        let st = self.inner.state.borrow();
        match st.phase {
            Phase::Initialized if st.outputs.is_empty() => Err(Error::NoOutputOperations),
            Phase::Initialized => Ok(()),
            Phase::Active { .. } => Err(Error::AlreadyStarted),
            Phase::Stopped { .. } => Err(Error::Stopped),
        }
    }

    /// The steps of `start()` with the zero time `zero`; the context is then active with its
    /// last batch at `time` (`zero` for a fresh start, later for a restore), or stopped.
    pub(crate) fn start_graph(&self, zero: i64, time: i64) -> Result<()> {
        let (outputs, graph_remember) = {
            let st = self.inner.state.borrow();
            (st.outputs.clone(), st.remember)
        };
        let result = (|| {
            for out in &outputs {
                initialize(&*out.parent(), zero);
            }
            for out in &outputs {
                // The output stream (Spark's ForEachDStream) remembers its slide, or the
                // context's remember duration, and asks its parent for as much.
                let parent = out.parent();
                let slide = parent.meta().slide;
                let own = graph_remember.map_or(slide, |g| g.max(slide));
                remember(&*parent, Some(own));
            }
            for out in &outputs {
                validate_at_start(&*out.parent())?;
            }
            Ok(())
        })();
        let mut st = self.inner.state.borrow_mut();
        st.phase = match result {
            Ok(()) => Phase::Active { zero, time },
            Err(_) => Phase::Stopped {
                zero: Some(zero),
                time: None,
            },
        };
        result
    }

    /// The zero time and the last batch time of an active context between two batches, where
    /// a snapshot is consistent.
    pub(crate) fn between_batches(&self) -> Result<(i64, i64)> {
        if self.inner.in_batch.get() {
            return Err(Error::BatchInProgress);
        }
        match self.inner.state.borrow().phase {
            Phase::Initialized => Err(Error::NotStarted),
            Phase::Active { zero, time } => Ok((zero, time)),
            Phase::Stopped { .. } => Err(Error::Stopped),
        }
    }

    /// The streams of the output operations, in registration order, and the context's
    /// remember duration.
    pub(crate) fn output_streams(&self) -> (Vec<Rc<dyn AnyNode>>, Option<i64>) {
        let st = self.inner.state.borrow();
        (st.outputs.iter().map(|o| o.parent()).collect(), st.remember)
    }

    /// Where the context is in its lifecycle.
    #[must_use]
    pub fn state(&self) -> ContextState {
        match self.inner.state.borrow().phase {
            Phase::Initialized => ContextState::Initialized,
            Phase::Active { .. } => ContextState::Active,
            Phase::Stopped { .. } => ContextState::Stopped,
        }
    }

    /// The zero time fixed by `start()`, in ms (`None` before).
    #[must_use]
    pub fn zero_time(&self) -> Option<i64> {
        match self.inner.state.borrow().phase {
            Phase::Initialized => None,
            Phase::Active { zero, .. } => Some(zero),
            Phase::Stopped { zero, .. } => zero,
        }
    }

    /// The time of the last batch run, in ms: the zero time right after `start()`, `None`
    /// before it.
    #[must_use]
    pub fn current_time(&self) -> Option<i64> {
        match self.inner.state.borrow().phase {
            Phase::Initialized => None,
            Phase::Active { time, .. } => Some(time),
            Phase::Stopped { time, .. } => time,
        }
    }

    /// Runs the next batch: advances the clock by one batch interval to time `t`, computes the
    /// batch at `t` of every output stream for which `t` is a valid time (`t - zero` a
    /// multiple of its slide), calls the output operations in the order they were registered,
    /// then forgets every batch older than its stream's remember duration
    /// (Spark's `JobGenerator.generateJobs` and `clearMetadata`). Returns `t`.
    ///
    /// # Errors
    /// [`Error::NotStarted`], [`Error::Stopped`], [`Error::BatchInProgress`] (called from an
    /// output operation), and the run-time failures: [`Error::ZeroSlide`] (a window with a
    /// zero slide; no output operation runs) and [`Error::MissingPreviousWindowValue`] (the
    /// output operations registered before the failing one still run). Any of them stops the
    /// context. [`Error::TimeOutOfRange`] when `t` is after `i64::MAX`: then nothing runs and
    /// the context stays at its last batch.
    pub fn run_batch(&self) -> Result<i64> {
        if self.inner.in_batch.get() {
            return Err(Error::BatchInProgress);
        }
        let (zero, time, outputs) = {
            let st = self.inner.state.borrow();
            match st.phase {
                Phase::Initialized => return Err(Error::NotStarted),
                Phase::Stopped { .. } => return Err(Error::Stopped),
                Phase::Active { zero, time } => {
                    let interval = self.inner.batch_interval;
                    let Some(next) = time.checked_add(interval) else {
                        return Err(Error::TimeOutOfRange {
                            what: "next batch time",
                            time: i128::from(time) + i128::from(interval),
                        });
                    };
                    (zero, next, st.outputs.clone())
                }
            }
        };
        self.inner.in_batch.set(true);
        let result = Self::run_outputs(&outputs, time);
        self.inner.in_batch.set(false);
        let mut st = self.inner.state.borrow_mut();
        match result {
            Ok(()) => {
                st.phase = Phase::Active { zero, time };
                Ok(time)
            }
            Err(e) => {
                st.phase = Phase::Stopped {
                    zero: Some(zero),
                    time: Some(time),
                };
                Err(e)
            }
        }
    }

    fn run_outputs(outputs: &[Rc<dyn Output>], time: i64) -> Result<()> {
        for (i, out) in outputs.iter().enumerate() {
            if let Err(e) = out.generate(time) {
                if e.is_job_failure() {
                    for earlier in &outputs[..i] {
                        earlier.run(time);
                    }
                }
                for o in outputs {
                    o.discard();
                }
                return Err(e);
            }
        }
        for out in outputs {
            out.run(time);
        }
        for out in outputs {
            clear_metadata(&*out.parent(), time);
        }
        Ok(())
    }

    /// Runs `n` batches ([`run_batch`](Self::run_batch) `n` times).
    ///
    /// # Errors
    /// The first error of [`run_batch`](Self::run_batch).
    pub fn run_batches(&self, n: usize) -> Result<()> {
        for _ in 0..n {
            self.run_batch()?;
        }
        Ok(())
    }

    /// Runs batches while the next batch time is at most `time` (ms); a next batch time after
    /// `i64::MAX` is after every `time`, so `run_until(i64::MAX)` ends.
    ///
    /// # Errors
    /// The first error of [`run_batch`](Self::run_batch).
    pub fn run_until(&self, time: i64) -> Result<()> {
        loop {
            let next = match self.current_time() {
                Some(now) => now.checked_add(self.inner.batch_interval),
                None => return Err(Error::NotStarted),
            };
            if next.is_none_or(|next| next > time) {
                return Ok(());
            }
            self.run_batch()?;
        }
    }

    /// Spark's WARN lines about unaligned slice bounds, in the order they happened, with
    /// Spark's wording: `toTime (3500 ms) is not a multiple of slideDuration (1000 ms)`, then
    /// the same for `fromTime`.
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        self.inner.log.warnings()
    }

    /// Returns the warnings and clears them.
    pub fn take_warnings(&self) -> Vec<String> {
        self.inner.log.take_warnings()
    }

    /// The slice INFO lines recorded since [`trace_slices`](Self::trace_slices).
    #[must_use]
    pub fn slice_log(&self) -> Vec<String> {
        self.inner.log.slice_log()
    }

    /// Records the streams of the graph hold in the batches they remember (each stream once,
    /// its batches by their length; a queue input's pushed batches are its remembered ones):
    /// what grows with a job's input and window, for a memory bound between batches. Costs a
    /// walk of the graph and of each stream's remembered batches (their number, not their
    /// records). Spark keeps the same batches (as RDDs, cached when windows slice them).
    #[must_use]
    pub fn retained_records(&self) -> usize {
        let outputs = self.inner.state.borrow().outputs.clone();
        let mut stack: Vec<Rc<dyn AnyNode>> = outputs.iter().map(|o| o.parent()).collect();
        let mut seen = std::collections::HashSet::new();
        let mut records = 0;
        while let Some(node) = stack.pop() {
            if seen.insert(node.meta().id) {
                records += node.retained();
                stack.extend(node.dependencies());
            }
        }
        records
    }

    /// The stream graph as Spark describes it after `start()`: for each output operation in
    /// registration order, its stream and then, depth first, the streams it depends on, with
    /// their slide, remember duration and checkpoint interval.
    #[must_use]
    pub fn graph(&self) -> Vec<StreamInfo> {
        let outputs = self.inner.state.borrow().outputs.clone();
        let mut out = Vec::new();
        for o in &outputs {
            describe(&*o.parent(), 0, &mut out);
        }
        out
    }

    pub(crate) fn new_meta(&self, name: &'static str, slide: i64) -> Meta {
        let id = self.inner.next_id.get();
        self.inner.next_id.set(id + 1);
        Meta {
            id,
            name,
            slide,
            window: None,
            must_checkpoint: false,
            partitions: None,
            zero: std::cell::Cell::new(None),
            remember: std::cell::Cell::new(None),
            checkpoint: std::cell::Cell::new(None),
            log: Rc::clone(&self.inner.log),
        }
    }

    pub(crate) fn is_initialized_phase(&self) -> bool {
        matches!(self.inner.state.borrow().phase, Phase::Initialized)
    }

    pub(crate) fn register_output(&self, output: Rc<dyn Output>) -> Result<()> {
        let mut st = self.inner.state.borrow_mut();
        if !matches!(st.phase, Phase::Initialized) {
            return Err(Error::AlreadyStarted);
        }
        st.outputs.push(output);
        Ok(())
    }
}

fn describe(node: &dyn AnyNode, depth: usize, out: &mut Vec<StreamInfo>) {
    let m = node.meta();
    out.push(StreamInfo {
        name: m.name,
        id: m.id,
        depth,
        slide: m.slide,
        window: m.window,
        remember: m.remember.get(),
        checkpoint: m.checkpoint.get(),
        must_checkpoint: m.must_checkpoint,
        partitions: m.partitions,
    });
    for dep in node.dependencies() {
        describe(&*dep, depth + 1, out);
    }
}

/// One stream of the graph, as [`StreamingContext::graph`] lists it (the facts Spark keeps per
/// `DStream`). Durations in ms; the remember duration and checkpoint interval are known after
/// `start()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamInfo {
    name: &'static str,
    id: usize,
    depth: usize,
    slide: i64,
    window: Option<i64>,
    remember: Option<i64>,
    checkpoint: Option<i64>,
    must_checkpoint: bool,
    partitions: Option<Partitions>,
}

impl StreamInfo {
    /// Spark's class of the stream (`WindowedDStream`, `ShuffledDStream`, ...).
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The stream's number within its context.
    #[must_use]
    pub fn id(&self) -> usize {
        self.id
    }

    /// Distance from the output operation's stream (0) in the listing.
    #[must_use]
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The slide duration, in ms.
    #[must_use]
    pub fn slide(&self) -> i64 {
        self.slide
    }

    /// The window duration of a windowed stream, in ms.
    #[must_use]
    pub fn window(&self) -> Option<i64> {
        self.window
    }

    /// How long generated batches are kept, in ms (after `start()`).
    #[must_use]
    pub fn remember(&self) -> Option<i64> {
        self.remember
    }

    /// The checkpoint interval, in ms: set by [`DStream::checkpoint`], or by default for a
    /// stream that must checkpoint (after `start()`). Only checked and used for remember
    /// durations: nothing is written anywhere.
    #[must_use]
    pub fn checkpoint(&self) -> Option<i64> {
        self.checkpoint
    }

    /// Whether Spark always checkpoints this stream (`ReducedWindowedDStream`), which is why
    /// Spark requires a checkpoint directory for the incremental windows.
    #[must_use]
    pub fn must_checkpoint(&self) -> bool {
        self.must_checkpoint
    }

    /// The number of partitions asked for, where the operation takes one.
    #[must_use]
    pub fn partitions(&self) -> Option<Partitions> {
        self.partitions
    }
}

/// An output operation (Spark's `ForEachDStream`): generate the parent's batch, then run.
pub(crate) trait Output {
    fn parent(&self) -> Rc<dyn AnyNode>;
    /// Computes the parent's batch at `time` if `time` is valid for it, and keeps it for `run`.
    fn generate(&self, time: i64) -> Result<()>;
    /// Calls the function with the batch kept by `generate`, if any.
    fn run(&self, time: i64);
    fn discard(&self);
}

/// A batch callback registered by `foreach_batch`.
pub(crate) type BatchFn<T> = Box<dyn FnMut(i64, &[T])>;

pub(crate) struct ForEach<T> {
    pub(crate) parent: Rc<Node<T>>,
    pub(crate) func: RefCell<BatchFn<T>>,
    pub(crate) pending: RefCell<Option<Batch<T>>>,
}

impl<T: 'static> Output for ForEach<T> {
    fn parent(&self) -> Rc<dyn AnyNode> {
        Rc::clone(&self.parent) as Rc<dyn AnyNode>
    }

    fn generate(&self, time: i64) -> Result<()> {
        let batch = self.parent.get_or_compute(time)?;
        *self.pending.borrow_mut() = batch;
        Ok(())
    }

    fn run(&self, time: i64) {
        let batch = self.pending.borrow_mut().take();
        if let Some(batch) = batch {
            (self.func.borrow_mut())(time, &batch);
        }
    }

    fn discard(&self) {
        self.pending.borrow_mut().take();
    }
}
