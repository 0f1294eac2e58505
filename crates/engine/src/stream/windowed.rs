//! A windowed stream, its window function, and the job that runs it.

use std::fmt::Debug;
use std::hash::Hash;
use std::time::Duration;

use keywindow::SlidingGeometry;
use window_assigners::{SlidingWindows, WindowAssigner};
use window_core::{
    AggregateFunction, LateDataPolicy, ReduceAggregate, TimeDomain, TimeWindow, Timestamp,
    TimestampedValue, Window, WindowComputation, WindowMetrics, WindowOutput,
};
use window_job::{ordered_with, Boxing, OrderedParts, SpecError, Strategy};
use window_operator::{
    CountEvictor, EvictMoment, Evicting, Evictor, FullWindow, Incremental, OperatorConfig,
    WindowFunction, WindowOperator,
};
use window_triggers::{CountTrigger, TimeTrigger, Trigger};

use super::{millis, KeyedStream};
use crate::runtime::{RunStats, Runtime, RuntimeConfig, RuntimeError};

/// An evictor chosen for a windowed stream.
type BoxedEvictor<T> = Box<dyn Evictor<T> + Send>;

/// A boxed computation over keys `K` and elements `T`.
type Boxed<K, T, W, O> = Box<dyn WindowComputation<K, T, Window = W, Output = O> + Send>;

/// A keyed stream with windows (Flink's `WindowedStream`): assigner `A`, trigger `Tr`, and
/// optionally an evictor, allowed lateness and a side output for late data.
pub struct WindowedStream<K, T, A, Tr> {
    stream: KeyedStream<K, T>,
    assigner: A,
    trigger: Tr,
    evictor: Option<BoxedEvictor<T>>,
    allowed_lateness: i64,
    late_data: LateDataPolicy,
}

impl<K, T, A: Debug, Tr: Debug> Debug for WindowedStream<K, T, A, Tr> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WindowedStream")
            .field("assigner", &self.assigner)
            .field("trigger", &self.trigger)
            .field("evictor", &self.evictor.is_some())
            .field("allowed_lateness", &self.allowed_lateness)
            .field("late_data", &self.late_data)
            .finish_non_exhaustive()
    }
}

impl<K, T, A, Tr> WindowedStream<K, T, A, Tr> {
    pub(crate) fn new(stream: KeyedStream<K, T>, assigner: A, trigger: Tr) -> Self {
        Self {
            stream,
            assigner,
            trigger,
            evictor: None,
            allowed_lateness: 0,
            late_data: LateDataPolicy::Drop,
        }
    }

    /// Replaces the assigner's default trigger (Flink's `trigger`).
    pub fn trigger<Tr2>(self, trigger: Tr2) -> WindowedStream<K, T, A, Tr2> {
        WindowedStream {
            stream: self.stream,
            assigner: self.assigner,
            trigger,
            evictor: self.evictor,
            allowed_lateness: self.allowed_lateness,
            late_data: self.late_data,
        }
    }

    /// Removes elements from a firing window (Flink's `evictor`); windows then keep their
    /// elements, and an aggregate is applied to what is left when they fire.
    #[must_use]
    pub fn evictor(mut self, evictor: impl Evictor<T> + Send + 'static) -> Self {
        self.evictor = Some(Box::new(evictor));
        self
    }

    /// Windows accept late elements this long after their end, and fire again for each
    /// (Flink's `allowedLateness`).
    #[must_use]
    pub fn allowed_lateness(mut self, lateness: Duration) -> Self {
        self.allowed_lateness = millis(lateness);
        self
    }

    /// Late elements go to the job's side output ([`Collected::late`]; Flink's
    /// `sideOutputLateData`) instead of being only counted.
    #[must_use]
    pub fn side_output_late_data(mut self) -> Self {
        self.late_data = LateDataPolicy::SideOutput;
        self
    }
}

impl<K, T, A, Tr> WindowedStream<K, T, A, Tr>
where
    K: Hash + Eq + Clone + Send + 'static,
    T: Clone + Send + 'static,
    A: WindowAssigner<T> + Send + 'static,
    A::Window: Send,
    Tr: Trigger<T, A::Window> + Send + 'static,
    Tr::State: Send,
{
    /// Aggregates each window incrementally with `function` (Flink's `aggregate`); with an
    /// evictor, over the elements the evictor leaves when the window fires.
    ///
    /// # Errors
    /// What Flink rejects when the job is built: a merging assigner (sessions) with a trigger
    /// that cannot merge.
    pub fn aggregate<F>(self, function: F) -> Result<WindowJob<K, T, A::Window, F::Out>, SpecError>
    where
        F: AggregateFunction<T> + Send + 'static,
        F::Acc: Send,
        F::Out: 'static,
    {
        match self.evictor {
            None => {
                let parts = (self.stream, self.allowed_lateness, self.late_data);
                operator(parts, self.assigner, self.trigger, Incremental(function))
            }
            Some(evictor) => {
                let f = move |elements: &[TimestampedValue<T>]| {
                    let mut acc = function.create_accumulator();
                    elements
                        .iter()
                        .for_each(|e| function.add(&mut acc, &e.value));
                    function.get_result(&acc)
                };
                let parts = (self.stream, self.allowed_lateness, self.late_data);
                operator(
                    parts,
                    self.assigner,
                    self.trigger,
                    Evicting::new(evictor, f),
                )
            }
        }
    }

    /// Reduces each window's elements with `reduce` (Flink's `reduce`): `None` for a window an
    /// evictor emptied.
    ///
    /// # Errors
    /// As [`WindowedStream::aggregate`].
    pub fn reduce<R>(self, reduce: R) -> Result<WindowJob<K, T, A::Window, Option<T>>, SpecError>
    where
        R: Fn(T, &T) -> T + Send + 'static,
    {
        self.aggregate(ReduceAggregate::new(reduce))
    }

    /// Applies `f` to every element of a window when it fires (Flink's `process` with a
    /// `ProcessWindowFunction`): windows keep their elements.
    ///
    /// # Errors
    /// As [`WindowedStream::aggregate`].
    pub fn process<O, G>(self, f: G) -> Result<WindowJob<K, T, A::Window, O>, SpecError>
    where
        G: Fn(&[TimestampedValue<T>]) -> O + Send + 'static,
        O: 'static,
    {
        let parts = (self.stream, self.allowed_lateness, self.late_data);
        match self.evictor {
            None => operator(parts, self.assigner, self.trigger, FullWindow::new(f)),
            Some(e) => operator(parts, self.assigner, self.trigger, Evicting::new(e, f)),
        }
    }
}

impl<K, T: Clone> KeyedStream<K, T> {
    /// The last `size` elements per key, every `slide` elements (Flink's `countWindow(size,
    /// slide)`: global windows, a count evictor of `size`, a count trigger of `slide`).
    ///
    /// # Errors
    /// A slide of 0.
    pub fn count_window_sliding(
        self,
        size: usize,
        slide: u64,
    ) -> Result<
        WindowedStream<
            K,
            T,
            window_assigners::GlobalWindows<window_triggers::NeverTrigger>,
            CountTrigger,
        >,
        String,
    > {
        let trigger = CountTrigger::of(slide)?;
        Ok(
            WindowedStream::new(self, window_assigners::GlobalWindows::create(), trigger)
                .evictor(CountEvictor::of(size, EvictMoment::Before)),
        )
    }
}

/// Flink's window operator for a windowed stream's parts.
fn operator<K, T, A, Tr, F>(
    (stream, allowed_lateness, late_data): (KeyedStream<K, T>, i64, LateDataPolicy),
    assigner: A,
    trigger: Tr,
    function: F,
) -> Result<WindowJob<K, T, A::Window, F::Out>, SpecError>
where
    K: Hash + Eq + Clone + Send + 'static,
    T: Send + 'static,
    A: WindowAssigner<T> + Send + 'static,
    A::Window: Send,
    Tr: Trigger<T, A::Window> + Send + 'static,
    Tr::State: Send,
    F: WindowFunction<T> + Send + 'static,
    F::Acc: Send,
    F::Out: 'static,
{
    let domain = assigner.time_domain().unwrap_or(TimeDomain::EventTime);
    let config = OperatorConfig {
        allowed_lateness,
        late_data,
    };
    let op = WindowOperator::new(assigner, trigger, function, config)?;
    Ok(WindowJob::new(stream, domain, Box::new(op)))
}

impl<K, T> WindowedStream<K, T, SlidingWindows, TimeTrigger> {
    /// How the sliding windows are computed: Flink's operator ([`Strategy::Native`]), key
    /// windows, or sliced windows (`docs/keywindow.md`, `docs/sliced.md`); [`Strategy::Auto`]
    /// picks sliced windows in event time without an evictor, the operator otherwise. Only sliding windows
    /// with their default trigger and no evictor have the choice; the result is a stream that
    /// can only be aggregated.
    pub fn strategy(self, strategy: Strategy) -> StrategyStream<K, T> {
        StrategyStream {
            windowed: self,
            strategy,
        }
    }
}

/// Sliding windows with a chosen strategy (see [`WindowedStream::strategy`]).
pub struct StrategyStream<K, T> {
    windowed: WindowedStream<K, T, SlidingWindows, TimeTrigger>,
    strategy: Strategy,
}

impl<K, T> Debug for StrategyStream<K, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StrategyStream")
            .field("windowed", &self.windowed)
            .field("strategy", &self.strategy)
            .finish()
    }
}

impl<K, T> StrategyStream<K, T>
where
    K: Hash + Eq + Clone + Send + 'static,
    T: Clone + Send + 'static,
{
    /// Aggregates each window with `function`, computed by the strategy.
    ///
    /// # Errors
    /// An evictor (the strategies other than the native operator keep no elements).
    pub fn aggregate<F>(self, function: F) -> Result<WindowJob<K, T, TimeWindow, F::Out>, SpecError>
    where
        F: AggregateFunction<T> + Send + 'static,
        F::Acc: Send,
        F::Out: 'static,
    {
        let w = self.windowed;
        let event_time =
            WindowAssigner::<T>::time_domain(&w.assigner) != Some(TimeDomain::ProcessingTime);
        let strategy = match self.strategy {
            // As `JobSpec::auto_strategy`: sliced windows where they give the native output.
            Strategy::Auto if w.evictor.is_none() && event_time => {
                Strategy::Sliced(keywindow::EmitMode::AllWindows)
            }
            Strategy::Auto => Strategy::Native,
            s => s,
        };
        let Some(kind) = strategy.ordered() else {
            return w.aggregate(function);
        };
        if w.evictor.is_some() {
            return Err(SpecError::Syntax {
                what: "strategy",
                text: self.strategy.label().to_owned(),
                reason:
                    "key windows and sliced windows keep accumulators, not elements: no evictor"
                        .to_owned(),
            });
        }
        let (size, slide, offset) =
            WindowAssigner::<T>::sliding(&w.assigner).expect("sliding windows");
        let geometry =
            SlidingGeometry::new(size, slide, offset).map_err(|e| SpecError::Syntax {
                what: "strategy",
                text: self.strategy.label().to_owned(),
                reason: e.to_string(),
            })?;
        let domain = WindowAssigner::<T>::time_domain(&w.assigner).unwrap_or(TimeDomain::EventTime);
        let parts = OrderedParts {
            kind,
            geometry,
            domain,
            allowed_lateness: w.allowed_lateness,
            late_data: w.late_data,
        };
        let op = ordered_with(parts, function, Boxing)?;
        Ok(WindowJob::new(w.stream, domain, op))
    }
}

/// A window result.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowResult<K, W, R> {
    /// The key.
    pub key: K,
    /// The window.
    pub window: W,
    /// What the window function gave.
    pub value: R,
    /// The watermark when the window fired.
    pub watermark: Timestamp,
}

/// A late element from the side output.
#[derive(Clone, Debug, PartialEq)]
pub struct LateElement<K, T> {
    /// The key.
    pub key: K,
    /// The element.
    pub element: T,
    /// Its event timestamp.
    pub timestamp: Timestamp,
    /// The watermark when it was dropped.
    pub watermark: Timestamp,
}

/// Everything a job emitted, collected: results in firing order, the late-data side output, the
/// windows that became empty (key windows and sliced windows emitting changes), and the
/// computation's counters.
#[derive(Clone, Debug, PartialEq)]
pub struct Collected<K, W, T, R> {
    /// Window results, in firing order.
    pub results: Vec<WindowResult<K, W, R>>,
    /// Late elements (with [`WindowedStream::side_output_late_data`]).
    pub late: Vec<LateElement<K, T>>,
    /// `(key, window)` of windows that fired empty.
    pub emptied: Vec<(K, W)>,
    /// The computation's counters at the end.
    pub metrics: WindowMetrics,
}

impl<K: Clone, W: Copy, T, R> WindowOutput<K, W, T, R> for Collected<K, W, T, R> {
    fn result(&mut self, key: &K, window: &W, value: R, watermark: Timestamp) {
        self.results.push(WindowResult {
            key: key.clone(),
            window: *window,
            value,
            watermark,
        });
    }

    fn late(&mut self, key: K, timestamp: Timestamp, element: T, watermark: Timestamp) {
        self.late.push(LateElement {
            key,
            element,
            timestamp,
            watermark,
        });
    }

    fn emptied(&mut self, key: &K, window: &W, _watermark: Timestamp) {
        self.emptied.push((key.clone(), *window));
    }
}

/// A windowed job, ready to run on the [`Runtime`].
pub struct WindowJob<K, T, W, R> {
    runtime: Runtime<K, T, Boxed<K, T, W, R>>,
    live: bool,
}

impl<K, T, W, R> Debug for WindowJob<K, T, W, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WindowJob")
            .field("runtime", &self.runtime)
            .finish()
    }
}

impl<K, T, W, R> WindowJob<K, T, W, R>
where
    K: Clone + Send + 'static,
    T: Send + 'static,
    W: Window,
{
    fn new(stream: KeyedStream<K, T>, time: TimeDomain, computation: Boxed<K, T, W, R>) -> Self {
        let config = RuntimeConfig {
            time,
            out_of_orderness: stream.out_of_orderness,
            watermark_interval: stream.interval,
            idle_timeout: stream.idleness,
        };
        let sources = stream.sources;
        let live = sources.iter().any(|s| s.is_live());
        let mut runtime = Runtime::new(computation, config);
        for s in sources {
            runtime.add_source(s);
        }
        Self { runtime, live }
    }

    /// Runs the job to the end of its input and collects what it emitted.
    ///
    /// # Errors
    /// [`RuntimeError`]: an element the computation rejects (an element without a timestamp in
    /// event time ...), a failed source.
    pub fn collect(self) -> Result<Collected<K, W, T, R>, RuntimeError> {
        let mut out = Collected {
            results: Vec::new(),
            late: Vec::new(),
            emptied: Vec::new(),
            metrics: WindowMetrics::default(),
        };
        let mut runtime = self.start();
        runtime.run(&mut out)?;
        out.metrics = runtime.computation().metrics();
        Ok(out)
    }

    /// Runs the job to the end of its input, writing to `out`.
    ///
    /// # Errors
    /// As [`WindowJob::collect`], and a failed write.
    pub fn run(self, out: &mut dyn WindowOutput<K, W, T, R>) -> Result<RunStats, RuntimeError> {
        let mut runtime = self.start();
        runtime.run(out)?;
        Ok(runtime.stats())
    }

    /// The runtime, to step through the job ([`Runtime::step`]) or change its clock or error
    /// policy.
    pub fn into_runtime(self) -> Runtime<K, T, Boxed<K, T, W, R>> {
        self.runtime
    }

    /// The runtime, reading on threads when a source is live (a socket must not block the
    /// job).
    fn start(self) -> Runtime<K, T, Boxed<K, T, W, R>> {
        let mut runtime = self.runtime;
        if self.live {
            runtime.start();
        }
        runtime
    }
}
