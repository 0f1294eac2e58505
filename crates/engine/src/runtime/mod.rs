//! The runtime: runs one windowed computation over its sources, to one output.
//!
//! The data path, top to bottom: [`Source`]s deliver batches of events (pulled in turn, or read
//! on one thread per source once the runtime is [started](Runtime::start)); each input has its
//! own bounded-out-of-orderness watermark generator (Flink's `WatermarkStrategy.
//! forBoundedOutOfOrderness`), emitted after every element or periodically by processing time
//! (Flink's `autoWatermarkInterval`); a [`WatermarkCombiner`] makes the computation's watermark
//! the minimum over the inputs, leaving out idle ones (`withIdleness`) and ended ones; the
//! computation ([`WindowComputation`]) gets the elements, the watermark and the wall clock, and
//! writes results and late elements to the output ([`WindowOutput`]). A record a source
//! rejects, or an element the computation rejects, goes to the error policy (fail, or skip with
//! a dead letter). At the end of bounded input an event-time job gets the final `i64::MAX`
//! watermark, which fires every window still open.
//!
//! Several bounded inputs in event time are aligned: the next batch is always the one of the
//! input whose watermark is lowest, so that no input runs ahead and the output depends only on
//! the data ([`Runtime::step`]).
//!
//! The runtime moves events in batches and stops between batches ([`Runtime::step`]): there the
//! computation, the watermarks and the outputs are consistent with the input read so far, which
//! is where a checkpoint can be taken. Processing time comes from a [`Clock`]: the system clock,
//! or a [`timer_service::ManualClock`] in tests.

mod checkpoint;
mod source;

pub use checkpoint::{InputSnapshot, RuntimeSnapshot};
pub use window_io::batch::{IterSource, Read, ReaderSource, Source, MAX_BATCH};

use std::sync::Arc;
use std::time::Duration;

use timer_service::{Clock, SystemClock};
use window_core::{ElementError, Rejected, TimeDomain, Timestamp, WindowComputation, WindowOutput};
use window_io::{ErrorPolicy, Event, InputError, InputErrorKind, Progress};
use window_operator::watermark::{BoundedOutOfOrderness, WatermarkCombiner};

use source::{Delivery, Feed, Next};

/// How long a started runtime waits for input before it looks at the clock again (processing
/// time, idleness, periodic watermarks), in ms.
const MAX_WAIT_MS: u64 = 100;

/// How a [`Runtime`] stamps time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RuntimeConfig {
    /// Event time (the elements' timestamps and watermarks) or processing time (the clock).
    pub time: TimeDomain,
    /// Bounded out-of-orderness of each input's watermark in ms: watermark = max timestamp seen
    /// - delay - 1 (Flink's `BoundedOutOfOrdernessWatermarks`).
    pub out_of_orderness: i64,
    /// How often watermarks are emitted, in ms of processing time; 0 emits one after every
    /// element, which makes runs over files reproducible (Flink's default is 200 ms).
    pub watermark_interval: i64,
    /// An input without elements for this long (ms of processing time) stops holding the
    /// watermark back until it produces again (Flink's `withIdleness`).
    pub idle_timeout: Option<i64>,
}

/// Why a run stopped early.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// A record the error policy did not skip (its message names source, line and field).
    #[error(transparent)]
    Input(InputError),
    /// A source failed to read; nothing follows from it.
    #[error("{}", window_io::source_failure(source_name, message))]
    Source {
        /// The source's name.
        source_name: String,
        /// What failed, with the place.
        message: String,
    },
    /// The computation cannot go on with this element (a merge behind the watermark, too many
    /// window states).
    #[error("{error}")]
    Element {
        /// Why.
        error: ElementError,
        /// The source of the element.
        source_name: String,
        /// Its line in the source.
        line: u64,
    },
    /// Writing the output failed.
    #[error("writing output")]
    Output(#[source] std::io::Error),
}

/// What one [`Runtime::step`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A batch (or the end of a source) was processed.
    Batch,
    /// No input arrived within the wait; the clock was looked at.
    Idle,
    /// Every source ended and the run is complete; nothing more happens.
    Finished,
}

/// Counters of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunStats {
    /// Events read from the sources.
    pub events: u64,
    /// Elements the computation rejected (no timestamp, a bad dynamic gap ...).
    pub rejected: u64,
    /// Records the error policy skipped (rejected elements included).
    pub skipped: u64,
}

/// Turns an element the computation rejected into the input error the policy gets: the
/// element, the source's name and line, and the reason.
pub type DescribeRejection<K, V> =
    Box<dyn FnMut(&Rejected<K, V>, &str, u64, Timestamp) -> InputError + Send>;

/// One input: its state (name, watermark generator, watermark last handed to the combiner,
/// whether it ended, its position: what a checkpoint keeps), whether it is live, its progress.
struct Input {
    state: InputSnapshot,
    live: bool,
    progress: Option<Progress>,
}

/// Runs a [`WindowComputation`] `C` over sources of `Event<K, V>`.
///
/// # Examples
/// A tumbling count over an in-memory source, with a manual clock:
/// ```
/// use std::sync::Arc;
/// use engine::runtime::{IterSource, Runtime, RuntimeConfig};
/// use engine::io::Event;
/// use engine::job::{build, JobSpec, WindowSpec};
/// use engine::core::{AnyWindow, Emitted, Number};
/// use engine::timers::ManualClock;
///
/// let spec = JobSpec::new(WindowSpec::Tumbling { size: 10, offset: 0 }, "count".parse()?);
/// let mut rt = Runtime::new(build::<String>(&spec)?, RuntimeConfig::default());
/// rt.set_clock(Arc::new(ManualClock::new(0)));
/// let value = Number::Int(1);
/// let events = (0..25).map(move |t| Event { timestamp: t, key: "a".to_owned(), value, line: 0 });
/// rt.add_source(Box::new(IterSource::new("numbers", events)));
/// let mut out: Vec<Emitted<String, AnyWindow, Number, _>> = Vec::new();
/// rt.run(&mut out)?;
/// assert_eq!(out.len(), 3); // [0, 10), [10, 20), [20, 30) at the end of input
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Runtime<K, V, C: ?Sized> {
    config: RuntimeConfig,
    clock: Arc<dyn Clock>,
    inputs: Vec<Input>,
    pending: Vec<Box<dyn Source<K, V>>>,
    feed: Option<Feed<K, V>>,
    combiner: WatermarkCombiner,
    /// Clock reading of the last periodic watermark emission.
    last_emit: Option<Timestamp>,
    policy: ErrorPolicy,
    describe: DescribeRejection<K, V>,
    stats: RunStats,
    spare: Vec<Event<K, V>>,
    finished: bool,
    /// Restored from a checkpoint ([`Runtime::restore`]): the combiner is the checkpoint's.
    restored: bool,
    /// The source an inline feed reads first (a restored run's, else 0).
    next_input: usize,
    computation: C,
}

impl<K, V, C: ?Sized> std::fmt::Debug for Runtime<K, V, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("config", &self.config)
            .field("inputs", &self.inputs.len())
            .field("stats", &self.stats)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl<K, V, C> Runtime<K, V, C>
where
    K: Send + 'static,
    V: Send + 'static,
    C: WindowComputation<K, V>,
{
    /// A runtime for `computation`, with no source yet, the system clock, and the error policy
    /// that fails on the first bad record.
    pub fn new(computation: C, config: RuntimeConfig) -> Self {
        Self {
            config,
            clock: Arc::new(SystemClock),
            inputs: Vec::new(),
            pending: Vec::new(),
            feed: None,
            combiner: WatermarkCombiner::new(0, config.idle_timeout),
            last_emit: None,
            policy: ErrorPolicy::default(),
            describe: Box::new(default_rejection),
            stats: RunStats::default(),
            spare: Vec::new(),
            finished: false,
            restored: false,
            next_input: 0,
            computation,
        }
    }
}

impl<K, V, C> Runtime<K, V, C>
where
    K: Send + 'static,
    V: Send + 'static,
    C: WindowComputation<K, V> + ?Sized,
{
    /// Processing time comes from `clock` (the system clock by default).
    pub fn set_clock(&mut self, clock: Arc<dyn Clock>) {
        self.clock = clock;
    }

    /// Bad records and rejected elements go to `policy` (fail on the first, by default).
    pub fn set_error_policy(&mut self, policy: ErrorPolicy) {
        self.policy = policy;
    }

    /// How a rejected element is reported to the error policy (the default names the reason
    /// only, without the element's text).
    pub fn set_rejection_report(&mut self, describe: DescribeRejection<K, V>) {
        self.describe = describe;
    }

    /// Adds a source. Sources added after [`Runtime::start`] or the first [`Runtime::step`] are
    /// not read.
    pub fn add_source(&mut self, source: Box<dyn Source<K, V>>) {
        self.inputs.push(Input {
            state: InputSnapshot {
                name: source.name().to_owned(),
                generator: BoundedOutOfOrderness::new(self.config.out_of_orderness),
                reported: Timestamp::MIN,
                done: false,
                position: None,
            },
            live: source.is_live(),
            progress: source.progress(),
        });
        self.pending.push(source);
    }

    /// Reads every source on a thread of its own from now on (without it, [`Runtime::step`]
    /// reads the sources in turn on the caller's thread, and a blocking source blocks it).
    pub fn start(&mut self) {
        if self.feed.is_none() {
            self.begin();
            self.feed = Some(Feed::start(std::mem::take(&mut self.pending)));
        }
    }

    fn begin(&mut self) {
        if self.restored {
            return; // the combiner and the last periodic emission are the checkpoint's
        }
        self.combiner = WatermarkCombiner::new(self.inputs.len(), self.config.idle_timeout);
        let now = self.clock.now_ms();
        self.combiner.on_processing_time(now);
        self.last_emit = Some(now);
    }

    /// Runs until every source ended, then flushes the output.
    ///
    /// # Errors
    /// [`RuntimeError`]: a bad record the policy does not skip, a failed source, an element the
    /// computation cannot take, a failed write. The output is flushed before the error returns.
    pub fn run(
        &mut self,
        out: &mut dyn WindowOutput<K, C::Window, V, C::Output>,
    ) -> Result<(), RuntimeError> {
        let outcome = loop {
            match self.step(out) {
                Ok(Step::Finished) => break Ok(()),
                Ok(_) => {}
                Err(e) => break Err(e),
            }
        };
        let flushed = out.flush().map_err(RuntimeError::Output);
        outcome.and(flushed)
    }

    /// Processes the next batch, or waits for one (up to 100 ms, less when a processing-time
    /// timer or a periodic watermark is due sooner), then stops at a consistent point.
    ///
    /// # Errors
    /// As [`Runtime::run`]; after an error the run cannot go on.
    pub fn step(
        &mut self,
        out: &mut dyn WindowOutput<K, C::Window, V, C::Output>,
    ) -> Result<Step, RuntimeError> {
        if self.finished {
            return Ok(Step::Finished);
        }
        if self.feed.is_none() {
            self.begin();
            let sources = std::mem::take(&mut self.pending);
            // An input that had ended before a restore is not read again.
            let sources = sources
                .into_iter()
                .zip(&self.inputs)
                .map(|(s, i)| (!i.state.done).then_some(s))
                .collect();
            self.feed = Some(Feed::Inline {
                sources,
                next: self.next_input,
            });
        }
        let now = self.now();
        self.advance_clock(out);
        check(out)?;
        let wait = self.wait(now);
        let batch = std::mem::take(&mut self.spare);
        let want = self.aligned_input();
        let feed = self.feed.as_mut().expect("set above");
        let step = match feed.next(wait, batch, want) {
            Next::Batch(d) => {
                let live = self.inputs[d.input].live;
                self.deliver(d, out)?;
                if live {
                    out.flush().map_err(RuntimeError::Output)?;
                }
                Step::Batch
            }
            Next::Timeout => {
                let now = self.now();
                self.advance_watermark(now, out);
                out.flush().map_err(RuntimeError::Output)?;
                Step::Idle
            }
            Next::Ended(input) => {
                self.end_input(input);
                Step::Batch
            }
            Next::Closed => {
                for i in 0..self.inputs.len() {
                    self.end_input(i);
                }
                Step::Batch
            }
        };
        check(out)?;
        if self.inputs.iter().all(|i| i.state.done) {
            self.finish(out);
            check(out)?;
            return Ok(Step::Finished);
        }
        Ok(step)
    }

    /// End of every input: in event time, the final watermark fires every window still open.
    fn finish(&mut self, out: &mut dyn WindowOutput<K, C::Window, V, C::Output>) {
        if self.config.time == TimeDomain::EventTime {
            self.computation.process_watermark(Timestamp::MAX, out);
        }
        self.finished = true;
    }

    /// The input to read next when the inputs are aligned: in event time, with several inputs,
    /// none of them live and no idle timeout (idleness is measured by the clock: with it, batches
    /// are taken as they come), the open input whose watermark is lowest (the first of equals). So no
    /// bounded input runs ahead of the others in event time (as Flink's watermark alignment,
    /// `withWatermarkAlignment`, with no drift allowed beyond a batch), the state held for
    /// windows the slowest input still holds back stays small, and the order in which batches
    /// of different inputs meet the computation depends only on the data: reruns, and resumed
    /// runs, give the same output. `None`: any input's batch will do.
    fn aligned_input(&self) -> Option<usize> {
        let aligned = self.config.time == TimeDomain::EventTime
            && self.inputs.len() > 1
            && self.config.idle_timeout.is_none()
            && !self.inputs.iter().any(|i| i.live);
        let open = self
            .inputs
            .iter()
            .enumerate()
            .filter(|(_, i)| !i.state.done);
        aligned
            .then(|| open.min_by_key(|(_, i)| i.state.generator.current()))
            .flatten()
            .map(|(n, _)| n)
    }

    /// Whether the clock is needed: processing time, idleness, periodic watermarks, or
    /// processing-time timers of an event-time computation.
    fn needs_clock(&self) -> bool {
        self.config.time == TimeDomain::ProcessingTime
            || self.config.idle_timeout.is_some()
            || self.config.watermark_interval > 0
            || self.computation.next_processing_time_timer().is_some()
    }

    /// The clock's reading where it is needed (reading it costs), else 0.
    fn now(&self) -> Timestamp {
        if self.needs_clock() {
            self.clock.now_ms()
        } else {
            0
        }
    }

    /// Processing time to the clock's reading, before every batch and in every domain: an
    /// element of an event-time job may register a processing-time timer (a continuous
    /// processing-time trigger), which must start from the clock's time, and fire by it.
    fn advance_clock(&mut self, out: &mut dyn WindowOutput<K, C::Window, V, C::Output>) {
        let now = self.clock.now_ms();
        self.computation.advance_wall_clock(now, out);
    }

    /// How long to wait for input: until the next processing-time timer or periodic watermark,
    /// at most [`MAX_WAIT_MS`].
    fn wait(&self, now: Timestamp) -> Duration {
        let mut wait = MAX_WAIT_MS;
        let until = |t: Timestamp| u64::try_from(t.saturating_sub(now)).unwrap_or(0);
        if let Some(t) = self.computation.next_processing_time_timer() {
            wait = wait.min(until(t));
        }
        if self.config.time == TimeDomain::EventTime && self.config.watermark_interval > 0 {
            let next = self
                .last_emit
                .map_or(now, |e| e.saturating_add(self.config.watermark_interval));
            wait = wait.min(until(next));
        }
        Duration::from_millis(wait)
    }

    /// Processes a delivered batch and how its read ended.
    fn deliver(
        &mut self,
        d: Delivery<K, V>,
        out: &mut dyn WindowOutput<K, C::Window, V, C::Output>,
    ) -> Result<(), RuntimeError> {
        let Delivery {
            input,
            mut events,
            read,
            position,
        } = d;
        let event_time = self.config.time == TimeDomain::EventTime;
        let per_element = event_time && self.config.watermark_interval == 0;
        let now = self.now();
        if !events.is_empty() {
            self.combiner.on_activity(input, now);
        }
        // With a watermark per element, the combined watermark can change only when this
        // input's watermark rises (the clock reading is the batch's): the combiner and the
        // computation are asked then, and after the batch's first element.
        let mut asked = false;
        for e in events.drain(..) {
            self.stats.events += 1;
            if event_time {
                self.inputs[input].state.generator.on_event(e.timestamp);
            }
            let (timestamp, line) = (e.timestamp, e.line);
            if let Err(rejected) = self
                .computation
                .process_element(e.key, e.value, timestamp, out)
            {
                self.reject(input, rejected, line, timestamp)?;
            }
            if per_element {
                let i = &self.inputs[input];
                if !asked || i.state.generator.current() > i.state.reported {
                    asked = true;
                    self.advance_watermark(now, out);
                }
            }
        }
        self.spare = events;
        if position.is_some() {
            self.inputs[input].state.position = position;
        }
        match read {
            Read::More => {}
            Read::Rejected(err) => self.handle(err)?,
            Read::End => self.end_input(input),
            Read::Failed(message) => {
                return Err(RuntimeError::Source {
                    source_name: self.inputs[input].state.name.clone(),
                    message,
                })
            }
        }
        if event_time {
            self.advance_watermark(now, out);
        }
        Ok(())
    }

    /// A rejected element: to the error policy when the element is at fault, else the end.
    fn reject(
        &mut self,
        input: usize,
        rejected: Rejected<K, V>,
        line: u64,
        timestamp: Timestamp,
    ) -> Result<(), RuntimeError> {
        let name = &self.inputs[input].state.name;
        match rejected.error {
            ElementError::MissingTimestamp
            | ElementError::TimestampOutOfRange { .. }
            | ElementError::InvalidDynamicGap { .. } => {
                self.stats.rejected += 1;
                let err = (self.describe)(&rejected, name, line, timestamp);
                self.handle(err)
            }
            error => Err(RuntimeError::Element {
                error,
                source_name: name.clone(),
                line,
            }),
        }
    }

    /// A bad record: skipped (and counted) or the end, as the policy says.
    fn handle(&mut self, err: InputError) -> Result<(), RuntimeError> {
        self.policy.handle(err).map_err(RuntimeError::Input)?;
        self.stats.skipped = self.policy.skipped;
        Ok(())
    }

    fn end_input(&mut self, input: usize) {
        let i = &mut self.inputs[input];
        if !i.state.done {
            i.state.done = true;
            if self.config.time == TimeDomain::EventTime {
                // An ended input no longer holds event time back.
                self.combiner.on_end(input);
            }
        }
    }

    /// Hands the inputs' watermarks to the combiner (after every element, or when the periodic
    /// interval passed) and the combined watermark to the computation.
    fn advance_watermark(
        &mut self,
        now: Timestamp,
        out: &mut dyn WindowOutput<K, C::Window, V, C::Output>,
    ) {
        if self.config.time != TimeDomain::EventTime {
            return;
        }
        let interval = self.config.watermark_interval;
        let due = interval == 0
            || self
                .last_emit
                .is_none_or(|e| now.saturating_sub(e) >= interval);
        if due {
            for (i, input) in self.inputs.iter_mut().enumerate() {
                let w = input.state.generator.current();
                if !input.state.done && w > input.state.reported {
                    input.state.reported = w;
                    self.combiner.on_watermark(i, w, now);
                }
            }
            if interval > 0 {
                self.last_emit = Some(now);
            }
        }
        let combined = self.combiner.on_processing_time(now);
        self.computation.process_watermark(combined, out);
    }

    /// The computation.
    pub fn computation(&self) -> &C {
        &self.computation
    }

    /// The counters so far.
    pub fn stats(&self) -> RunStats {
        self.stats
    }

    /// The error policy (with its dead-letter file, if any).
    pub fn error_policy(&mut self) -> &mut ErrorPolicy {
        &mut self.policy
    }

    /// The sources' names, in the order they were added.
    pub fn source_names(&self) -> Vec<&str> {
        self.inputs.iter().map(|i| i.state.name.as_str()).collect()
    }

    /// Bytes read from the sources so far and their total, where every source knows it.
    pub fn progress(&self) -> (u64, Option<u64>) {
        let read = self
            .inputs
            .iter()
            .filter_map(|i| i.progress.as_ref())
            .map(Progress::bytes_read)
            .sum();
        let total = self
            .inputs
            .iter()
            .map(|i| i.progress.as_ref().and_then(Progress::total_bytes))
            .sum();
        (read, total)
    }
}

/// The output's first write error since the last look, as a runtime error.
fn check<K, W, V, O>(out: &mut dyn WindowOutput<K, W, V, O>) -> Result<(), RuntimeError> {
    match out.take_error() {
        Some(e) => Err(RuntimeError::Output(e)),
        None => Ok(()),
    }
}

/// The default report of a rejected element: where, at what time, and why.
fn default_rejection<K, V>(
    rejected: &Rejected<K, V>,
    source: &str,
    line: u64,
    timestamp: Timestamp,
) -> InputError {
    InputError {
        source_name: source.to_owned(),
        line,
        field: None,
        message: format!("element at {timestamp} rejected: {}", rejected.error),
        raw: Vec::new(),
        raw_cut: false,
        kind: InputErrorKind::InvalidValue,
    }
}
