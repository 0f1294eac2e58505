//! The computation a [`JobSpec`] describes, built and validated once.
//!
//! This is the one place that decides which concrete computation runs: Flink's window operator
//! for every window kind (with the assigner, trigger, evictor and window function the spec
//! names), or, for sliding windows, key windows or sliced windows in event or processing time
//! ([`ordered_computation`], also used by the fluent API). Whatever runs is returned as a
//! [`Computation`]: a trait object with one window type ([`AnyWindow`]) and one result type
//! ([`JobResult`]), so that a runtime, the command line and the conformance harness drive every
//! strategy the same way.

use std::hash::Hash;
use std::sync::Arc;

use keywindow::{EventTime, KeyWindows, ProcessingTime, SlicedWindows, SlidingGeometry};
use window_assigners::{
    DefaultTrigger, GlobalWindows, SessionWindows, SlidingWindows, TimeDomain, TumblingWindows,
    WindowAssigner,
};
use window_core::{
    AggregateFunction, AnyWindow, Converted, ElementError, LateDataPolicy, LiveState, NumericStats,
    TimeWindow, Timestamp, TimestampedValue, WindowComputation, WindowMetrics, WindowOutput,
};
use window_operator::{
    AnyEvictor, CountEvictor, EvictMoment, Evicting, Incremental, OperatorConfig, OperatorError,
    WindowFunction, WindowOperator,
};
use window_triggers::{AnyTrigger, CountTrigger};

use crate::spec::{syntax, JobAggregate, JobSpec, OrderedKind, SpecError, Strategy, WindowSpec};

/// A window's result in a job.
#[derive(Clone, Debug, PartialEq)]
pub enum JobResult {
    /// A numeric aggregate; `None` where it is undefined (min of no elements).
    Number(Option<f64>),
    /// The values, in the window's order.
    List(Vec<f64>),
    /// `(timestamp, value)` pairs, in the window's order.
    Elements(Vec<(Timestamp, f64)>),
}

impl From<JobResult> for Option<f64> {
    /// The number of a numeric result; `None` for lists and elements.
    fn from(r: JobResult) -> Self {
        match r {
            JobResult::Number(v) => v,
            JobResult::List(_) | JobResult::Elements(_) => None,
        }
    }
}

impl From<Option<f64>> for JobResult {
    fn from(v: Option<f64>) -> Self {
        JobResult::Number(v)
    }
}

/// The key type of a job: what a computation can key its state by.
pub trait JobKey: Hash + Eq + Clone + Default + Send + 'static {}

impl<K: Hash + Eq + Clone + Default + Send + 'static> JobKey for K {}

/// A job's computation: any strategy, any window kind, behind one trait object.
pub type Computation<K> =
    Box<dyn WindowComputation<K, f64, Window = AnyWindow, Output = JobResult> + Send>;

/// The sliding-window computations other than the native operator, behind one trait object.
pub type OrderedComputation<K, T, O> =
    Box<dyn WindowComputation<K, T, Window = TimeWindow, Output = O> + Send>;

/// Builds the computation `spec` describes, over keys of type `K` and `f64` values.
///
/// # Errors
/// Invalid window, trigger or evictor parameters, negative lateness, a trigger that cannot merge
/// on session windows, or a key-window or sliced strategy for a job they cannot run.
pub fn build<K: JobKey>(spec: &JobSpec) -> Result<Computation<K>, SpecError> {
    let computation = match spec.strategy.ordered() {
        None => native(spec)?,
        Some(kind) => ordered(spec, kind)?,
    };
    Ok(if spec.window_all {
        Box::new(AllOneKey(computation))
    } else {
        computation
    })
}

/// Boxes a computation with its windows and results converted to the job's types.
fn erase<K, C>(computation: C) -> Computation<K>
where
    C: WindowComputation<K, f64> + Send + 'static,
    AnyWindow: From<C::Window>,
    JobResult: From<C::Output>,
{
    Box::new(Converted::<C, AnyWindow, JobResult>::new(computation))
}

/// The dynamic session gap of an element: its value in ms when that is a whole number that fits
/// an `i64`, else 0 (which the assigner rejects for that element, naming the element).
fn gap_of_value(v: &f64) -> i64 {
    if v.fract() == 0.0 && v.abs() < 9.2e18 {
        *v as i64
    } else {
        0
    }
}

/// Flink's window operator for any window kind.
fn native<K: JobKey>(spec: &JobSpec) -> Result<Computation<K>, SpecError> {
    let domain = spec.time;
    let evictor = spec.evictor.map(|e| e.build());
    match spec.window {
        WindowSpec::Tumbling { size, offset } => {
            let a = TumblingWindows::new(size, offset, domain)?;
            let default = a.default_trigger().into();
            operator(spec, a, default, evictor)
        }
        WindowSpec::Sliding {
            size,
            slide,
            offset,
        } => {
            let a = SlidingWindows::new(size, slide, offset, domain)?;
            let default = a.default_trigger().into();
            operator(spec, a, default, evictor)
        }
        WindowSpec::Session { gap } => {
            let a = SessionWindows::with_gap(gap, domain)?;
            let default = a.default_trigger().into();
            operator(spec, a, default, evictor)
        }
        WindowSpec::DynamicSession => {
            let a = SessionWindows::with_dynamic_gap(Arc::new(gap_of_value), domain);
            let default = a.default_trigger().into();
            operator(spec, a, default, evictor)
        }
        WindowSpec::Global => {
            let a = GlobalWindows::create();
            let default = a.default_trigger().into();
            operator(spec, a, default, evictor)
        }
        WindowSpec::GlobalEndOfStream => {
            let a = GlobalWindows::with_end_of_stream_trigger();
            let default = a.default_trigger().into();
            operator(spec, a, default, evictor)
        }
        // Flink's KeyedStream.countWindow(size): global windows, a purging count trigger.
        WindowSpec::Count { size, slide: None } => {
            let trigger = CountTrigger::of(size)
                .map_err(|e| syntax("window", &format!("count:{size}"), e))?;
            operator(
                spec,
                GlobalWindows::create(),
                AnyTrigger::Count(trigger).purging(),
                evictor,
            )
        }
        // countWindow(size, slide): a count evictor of size, a count trigger of slide.
        WindowSpec::Count {
            size,
            slide: Some(slide),
        } => {
            let trigger = CountTrigger::of(slide)
                .map_err(|e| syntax("window", &format!("count:{size}:{slide}"), e))?;
            let size = usize::try_from(size).unwrap_or(usize::MAX);
            let evictor = evictor.or(Some(AnyEvictor::Count(CountEvictor::of(
                size,
                EvictMoment::Before,
            ))));
            operator(
                spec,
                GlobalWindows::create(),
                AnyTrigger::Count(trigger),
                evictor,
            )
        }
    }
}

/// The operator over `assigner`, with the spec's trigger (or `default`), and a window function
/// that aggregates incrementally, or keeps the elements (for `list` and `elements`, and with an
/// evictor, as Flink's `EvictingWindowOperator` buffers the elements of an evicting window).
fn operator<K, A>(
    spec: &JobSpec,
    assigner: A,
    default: AnyTrigger<f64>,
    evictor: Option<AnyEvictor<f64>>,
) -> Result<Computation<K>, SpecError>
where
    K: JobKey,
    A: WindowAssigner<f64> + Send + 'static,
    A::Window: Send,
    AnyWindow: From<A::Window>,
{
    let trigger = spec.trigger.build(default, spec.time)?;
    let config = OperatorConfig {
        allowed_lateness: spec.allowed_lateness,
        late_data: spec.late_data,
    };
    match (spec.aggregate, evictor) {
        (JobAggregate::Numeric(aggregate), None) => Ok(erase(limited(
            WindowOperator::new(assigner, trigger, Incremental(aggregate), config)?,
            spec,
        ))),
        (aggregate, evictor) => {
            let function = Evicting::new(evictor, move |elements: &[TimestampedValue<f64>]| {
                contents_result(aggregate, elements)
            });
            Ok(erase(limited(
                WindowOperator::new(assigner, trigger, function, config)?,
                spec,
            )))
        }
    }
}

/// The operator with the spec's limit on window states.
fn limited<K, A, F>(
    mut op: WindowOperator<K, f64, A, AnyTrigger<f64>, F>,
    spec: &JobSpec,
) -> WindowOperator<K, f64, A, AnyTrigger<f64>, F>
where
    K: JobKey,
    A: WindowAssigner<f64>,
    F: WindowFunction<f64>,
    F::Acc: std::fmt::Debug,
{
    op.set_max_window_states(spec.max_window_states);
    op
}

/// The result of a window that kept its elements.
fn contents_result(aggregate: JobAggregate, elements: &[TimestampedValue<f64>]) -> JobResult {
    match aggregate {
        JobAggregate::Numeric(a) => {
            let mut s = NumericStats::default();
            elements.iter().for_each(|e| s.add(e.value));
            JobResult::Number(a.of(&s))
        }
        JobAggregate::List => JobResult::List(elements.iter().map(|e| e.value).collect()),
        JobAggregate::Elements => {
            JobResult::Elements(elements.iter().map(|e| (e.timestamp, e.value)).collect())
        }
    }
}

/// Key windows or sliced windows for a sliding-window job.
fn ordered<K: JobKey>(spec: &JobSpec, kind: OrderedKind) -> Result<Computation<K>, SpecError> {
    let name = spec.strategy.name();
    let WindowSpec::Sliding {
        size,
        slide,
        offset,
    } = spec.window
    else {
        return Err(syntax(
            "strategy",
            name,
            "key windows and sliced windows apply to sliding windows only",
        ));
    };
    if spec.trigger != crate::spec::TriggerSpec::Default || spec.evictor.is_some() {
        return Err(syntax(
            "strategy",
            name,
            "key windows and sliced windows fire at the window end: no other trigger, no evictor",
        ));
    }
    let JobAggregate::Numeric(aggregate) = spec.aggregate else {
        return Err(syntax(
            "strategy",
            name,
            "key windows and sliced windows keep accumulators, not elements: use count, sum, min, max or mean",
        ));
    };
    if spec.allowed_lateness < 0 {
        return Err(OperatorError::NegativeLateness(spec.allowed_lateness).into());
    }
    let geometry = ordered_geometry(spec.strategy, size, slide, offset)?;
    let computation = ordered_computation(
        kind,
        geometry,
        spec.time,
        aggregate,
        spec.allowed_lateness,
        spec.late_data,
    )?;
    Ok(erase(computation))
}

/// The geometry of key windows or sliced windows, with the limits of what they can hold.
fn ordered_geometry(
    strategy: Strategy,
    size: i64,
    slide: i64,
    offset: i64,
) -> Result<SlidingGeometry, SpecError> {
    let name = strategy.name();
    // Not SlidingWindows::new: its cap on windows per element does not apply to what key
    // windows and sliced windows hold (at most two windows per element, or none)...
    let geometry = SlidingGeometry::new(size, slide, offset)
        .map_err(|e| syntax("strategy", name, e.to_string()))?;
    // ... but sliced windows emitting every window still write size / slide results per
    // element: the same cap as the native operator's, before the output runs away.
    let per_element = window_assigners::windows_per_element(size, slide);
    if strategy == Strategy::Sliced(keywindow::EmitMode::AllWindows)
        && per_element > window_assigners::MAX_WINDOWS_PER_ELEMENT
    {
        return Err(syntax(
            "strategy",
            "sliced",
            format!(
                "sliding windows of {size} ms every {slide} ms emit {per_element} results for \
                 each element; at most {} are allowed: use --emit changes (results only \
                 where they change) or a larger slide",
                window_assigners::MAX_WINDOWS_PER_ELEMENT
            ),
        ));
    }
    // Windows must fit the time range with room for a few of them at each end.
    if size.checked_add(slide).is_none_or(|w| w > i64::MAX / 8) {
        return Err(syntax(
            "strategy",
            name,
            format!(
                "sliding windows of {size} ms every {slide} ms do not fit the time range: \
                 size + slide must be below {} ms",
                i64::MAX / 8
            ),
        ));
    }
    Ok(geometry)
}

/// Key windows or sliced windows (`kind`) over `geometry` in `domain`, aggregating with
/// `function`: the one place that maps these strategies to their computations.
///
/// # Errors
/// Negative `allowed_lateness`.
pub fn ordered_computation<K, T, F>(
    kind: OrderedKind,
    geometry: SlidingGeometry,
    domain: TimeDomain,
    function: F,
    allowed_lateness: i64,
    late_data: LateDataPolicy,
) -> Result<OrderedComputation<K, T, F::Out>, SpecError>
where
    K: Hash + Eq + Clone + Send + 'static,
    T: Send + 'static,
    F: AggregateFunction<T> + Send + 'static,
    F::Acc: Send,
{
    if allowed_lateness < 0 {
        return Err(OperatorError::NegativeLateness(allowed_lateness).into());
    }
    Ok(match (kind, domain) {
        (OrderedKind::KeyWindows, TimeDomain::EventTime) => Box::new(
            EventTime::wrap(KeyWindows::new(geometry, function), allowed_lateness)
                .with_late_data(late_data),
        ),
        (OrderedKind::Sliced(emit), TimeDomain::EventTime) => Box::new(
            EventTime::wrap(
                SlicedWindows::new(geometry, function, emit),
                allowed_lateness,
            )
            .with_late_data(late_data),
        ),
        (OrderedKind::KeyWindows, TimeDomain::ProcessingTime) => {
            Box::new(ProcessingTime::wrap(KeyWindows::new(geometry, function)))
        }
        (OrderedKind::Sliced(emit), TimeDomain::ProcessingTime) => Box::new(ProcessingTime::wrap(
            SlicedWindows::new(geometry, function, emit),
        )),
    })
}

/// Flink's `windowAll`: every element under one key (`K::default()`, the empty string for
/// `String` keys), so results and late elements carry that key.
struct AllOneKey<K>(Computation<K>);

impl<K: JobKey> WindowComputation<K, f64> for AllOneKey<K> {
    type Window = AnyWindow;
    type Output = JobResult;

    fn process_element(
        &mut self,
        _key: K,
        element: f64,
        timestamp: Timestamp,
        out: &mut dyn WindowOutput<K, AnyWindow, f64, JobResult>,
    ) -> Result<(), ElementError> {
        self.0
            .process_element(K::default(), element, timestamp, out)
    }

    fn process_watermark(
        &mut self,
        watermark: Timestamp,
        out: &mut dyn WindowOutput<K, AnyWindow, f64, JobResult>,
    ) -> bool {
        self.0.process_watermark(watermark, out)
    }

    fn advance_wall_clock(
        &mut self,
        now: Timestamp,
        out: &mut dyn WindowOutput<K, AnyWindow, f64, JobResult>,
    ) {
        self.0.advance_wall_clock(now, out);
    }

    fn next_processing_time_timer(&self) -> Option<Timestamp> {
        self.0.next_processing_time_timer()
    }

    fn current_watermark(&self) -> Timestamp {
        self.0.current_watermark()
    }

    fn metrics(&self) -> WindowMetrics {
        self.0.metrics()
    }

    fn live_state(&self) -> LiveState {
        self.0.live_state()
    }
}
