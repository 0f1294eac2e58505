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

use serde::de::DeserializeOwned;
use serde::Serialize;

use keywindow::{EventTime, KeyWindows, ProcessingTime, SlicedWindows, SlidingGeometry};
use window_assigners::{
    DefaultTrigger, GlobalWindows, SessionWindows, SlidingWindows, TimeDomain, TumblingWindows,
    WindowAssigner,
};
use window_core::{
    AggregateFunction, AnyWindow, Converted, ExactNumeric, HeldState, LateDataPolicy, LiveState,
    Number, NumericResult, Rejected, SnapshotError, TimeWindow, Timestamp, TimestampedValue,
    WindowComputation, WindowMetrics, WindowOutput,
};
use window_operator::{
    AnyEvictor, CountEvictor, EvictMoment, Evicting, Incremental, OperatorConfig, OperatorError,
    WindowFunction, WindowOperator,
};
use window_triggers::{AnyTrigger, CountTrigger, EventTimeTrigger, Trigger};

use crate::parts::WindowSpec;
use crate::spec::{syntax, JobAggregate, JobSpec, OrderedKind, SpecError, Strategy};

/// A window's result in a job (serde for the timely runtime, which moves results between
/// workers).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum JobResult {
    /// A numeric aggregate; `None` where it is undefined (min of no elements).
    Number(Option<f64>),
    /// A sum or mean of integers beyond 2^53, exactly ([`window_core::ExactNumeric`]), where
    /// [`JobResult::Number`] would round it.
    Integer(i128),
    /// Several numeric aggregates ([`JobAggregate::Several`]), in the job's order, each as
    /// [`window_core::ExactNumeric`] gives it.
    Numbers(Vec<NumericResult>),
    /// The values, in the window's order.
    List(Vec<Number>),
    /// `(timestamp, value)` pairs, in the window's order.
    Elements(Vec<(Timestamp, Number)>),
}

impl From<JobResult> for Option<f64> {
    /// The number of a numeric result; `None` for several numbers, lists and elements.
    fn from(r: JobResult) -> Self {
        match r {
            JobResult::Number(v) => v,
            JobResult::Integer(i) => Some(i as f64),
            JobResult::Numbers(_) | JobResult::List(_) | JobResult::Elements(_) => None,
        }
    }
}

impl From<Option<f64>> for JobResult {
    fn from(v: Option<f64>) -> Self {
        JobResult::Number(v)
    }
}

impl From<NumericResult> for JobResult {
    /// The result of [`window_core::ExactNumeric`]: a number, or an exact integer beyond 2^53.
    fn from(v: NumericResult) -> Self {
        match v {
            NumericResult::Float(v) => JobResult::Number(v),
            NumericResult::Integer(i) => JobResult::Integer(i),
        }
    }
}

impl From<Vec<NumericResult>> for JobResult {
    /// The results of [`window_core::NumericAggregates`].
    fn from(v: Vec<NumericResult>) -> Self {
        JobResult::Numbers(v)
    }
}

/// The key type of a job: what a computation can key its state by (and write to a snapshot:
/// serde, as Flink's keys need a serializer).
pub trait JobKey:
    Hash + Eq + Clone + Default + Send + Serialize + DeserializeOwned + 'static
{
}

impl<K> JobKey for K where
    K: Hash + Eq + Clone + Default + Send + Serialize + DeserializeOwned + 'static
{
}

/// A job's computation: any strategy, any window kind, behind one trait object.
pub type Computation<K> =
    Box<dyn WindowComputation<K, Number, Window = AnyWindow, Output = JobResult> + Send>;

/// The sliding-window computations other than the native operator, behind one trait object.
pub type OrderedComputation<K, T, O> =
    Box<dyn WindowComputation<K, T, Window = TimeWindow, Output = O> + Send>;

/// Receives the computation a builder chose, by its concrete type: code that wants static
/// dispatch (the benchmarks) runs it generically; [`Boxing`] makes it a trait object whose
/// windows are `W` and results `O`.
pub trait Visitor<K, T, W, O> {
    /// What the visit returns.
    type Output;

    /// Takes the computation.
    fn visit<C>(self, computation: C) -> Self::Output
    where
        C: WindowComputation<K, T> + Send + 'static,
        W: From<C::Window>,
        O: From<C::Output>;
}

/// The visitor that boxes the computation, with its windows and results converted to `W` and
/// `O` ([`Converted`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Boxing;

impl<K, T, W, O> Visitor<K, T, W, O> for Boxing
where
    K: 'static,
    T: 'static,
    W: window_core::Window + 'static,
    O: 'static,
{
    type Output = Box<dyn WindowComputation<K, T, Window = W, Output = O> + Send>;

    fn visit<C>(self, computation: C) -> Self::Output
    where
        C: WindowComputation<K, T> + Send + 'static,
        W: From<C::Window>,
        O: From<C::Output>,
    {
        Box::new(Converted::<C, W, O>::new(computation))
    }
}

/// Builds the computation `spec` describes, over keys of type `K` and `f64` values, as one
/// trait object.
///
/// # Errors
/// Invalid window, trigger or evictor parameters, negative lateness, a trigger that cannot merge
/// on session windows, or a key-window or sliced strategy for a job they cannot run.
pub fn build<K: JobKey>(spec: &JobSpec) -> Result<Computation<K>, SpecError> {
    build_with(spec, Boxing)
}

/// Builds the computation `spec` describes and hands it, by its concrete type, to `visitor`.
///
/// # Errors
/// As [`build`].
pub fn build_with<K, V>(spec: &JobSpec, visitor: V) -> Result<V::Output, SpecError>
where
    K: JobKey,
    V: Visitor<K, Number, AnyWindow, JobResult>,
{
    if spec.strategy == Strategy::Auto {
        // The fastest strategy with the native output, for this job.
        let mut resolved = spec.clone();
        resolved.strategy = spec.auto_strategy();
        return build_with(&resolved, visitor);
    }
    let visitor = KeyedOrAll {
        visitor,
        all: spec.window_all,
    };
    match spec.strategy.ordered() {
        None => native(spec, visitor),
        Some(kind) => ordered(spec, kind, visitor),
    }
}

/// Hands the computation on, behind [`AllOneKey`] for `windowAll` jobs.
struct KeyedOrAll<V> {
    visitor: V,
    all: bool,
}

impl<K, V> Visitor<K, Number, AnyWindow, JobResult> for KeyedOrAll<V>
where
    K: JobKey,
    V: Visitor<K, Number, AnyWindow, JobResult>,
{
    type Output = V::Output;

    fn visit<C>(self, computation: C) -> V::Output
    where
        C: WindowComputation<K, Number> + Send + 'static,
        AnyWindow: From<C::Window>,
        JobResult: From<C::Output>,
    {
        if self.all {
            self.visitor.visit(AllOneKey(computation))
        } else {
            self.visitor.visit(computation)
        }
    }
}

/// The dynamic session gap of an element: its value in ms when that is a whole number that fits
/// an `i64`, else 0 (which the assigner rejects for that element, naming the element).
fn gap_of_value(v: &Number) -> i64 {
    match *v {
        Number::Int(i) => i,
        Number::Float(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => f as i64,
        Number::Float(_) => 0,
    }
}

/// Flink's window operator for any window kind.
fn native<K, V>(spec: &JobSpec, visitor: V) -> Result<V::Output, SpecError>
where
    K: JobKey,
    V: Visitor<K, Number, AnyWindow, JobResult>,
{
    let domain = spec.time;
    let evictor = spec.evictor.map(|e| e.build());
    match spec.window {
        WindowSpec::Tumbling { size, offset } => {
            let a = TumblingWindows::new(size, offset, domain)?;
            let default = a.default_trigger().into();
            operator(spec, a, default, evictor, visitor)
        }
        WindowSpec::Sliding {
            size,
            slide,
            offset,
        } => {
            let a = SlidingWindows::new(size, slide, offset, domain)?;
            let default = a.default_trigger().into();
            operator(spec, a, default, evictor, visitor)
        }
        WindowSpec::Session { gap } => {
            let a = SessionWindows::with_gap(gap, domain)?;
            let default = a.default_trigger().into();
            operator(spec, a, default, evictor, visitor)
        }
        WindowSpec::DynamicSession => {
            let a = SessionWindows::with_dynamic_gap(Arc::new(gap_of_value), domain);
            let default = a.default_trigger().into();
            operator(spec, a, default, evictor, visitor)
        }
        WindowSpec::Global => {
            let a = GlobalWindows::create();
            let default = a.default_trigger().into();
            operator(spec, a, default, evictor, visitor)
        }
        WindowSpec::GlobalEndOfStream => {
            let a = GlobalWindows::with_end_of_stream_trigger();
            let default = a.default_trigger().into();
            operator(spec, a, default, evictor, visitor)
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
                visitor,
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
            let trigger = AnyTrigger::Count(trigger);
            operator(spec, GlobalWindows::create(), trigger, evictor, visitor)
        }
    }
}

/// The operator over `assigner`, with the spec's trigger (or `default`), and a window function
/// that aggregates incrementally, or keeps the elements (for `list` and `elements`, and with an
/// evictor, as Flink's `EvictingWindowOperator` buffers the elements of an evicting window).
fn operator<K, A, V>(
    spec: &JobSpec,
    assigner: A,
    default: AnyTrigger<Number>,
    evictor: Option<AnyEvictor<Number>>,
    visitor: V,
) -> Result<V::Output, SpecError>
where
    K: JobKey,
    A: WindowAssigner<Number> + Send + 'static,
    A::Window: Send + serde::Serialize + serde::de::DeserializeOwned,
    AnyWindow: From<A::Window>,
    V: Visitor<K, Number, AnyWindow, JobResult>,
{
    let trigger = spec.trigger.build(default, spec.time)?;
    let config = OperatorConfig {
        allowed_lateness: spec.allowed_lateness,
        late_data: spec.late_data,
    };
    match (spec.aggregate, evictor) {
        (JobAggregate::Numeric(aggregate), None) => {
            let exact = ExactNumeric(aggregate);
            incremental(spec, assigner, (trigger, config), exact, visitor)
        }
        (JobAggregate::Several(aggregates), None) => {
            incremental(spec, assigner, (trigger, config), aggregates, visitor)
        }
        (aggregate, evictor) => {
            let function =
                Evicting::new(evictor, move |elements: &[TimestampedValue<Number>]| {
                    contents_result(aggregate, elements)
                });
            Ok(visitor.visit(limited(
                WindowOperator::new(assigner, trigger, function, config)?,
                spec,
            )))
        }
    }
}

/// The operator over `assigner` with `trigger` and `config`, aggregating incrementally with
/// `function`.
fn incremental<K, A, F, V>(
    spec: &JobSpec,
    assigner: A,
    (trigger, config): (AnyTrigger<Number>, OperatorConfig),
    function: F,
    visitor: V,
) -> Result<V::Output, SpecError>
where
    K: JobKey,
    A: WindowAssigner<Number> + Send + 'static,
    A::Window: Send + serde::Serialize + serde::de::DeserializeOwned,
    AnyWindow: From<A::Window>,
    F: AggregateFunction<Number> + Send + 'static,
    F::Acc: Send + serde::Serialize + serde::de::DeserializeOwned,
    JobResult: From<F::Out>,
    V: Visitor<K, Number, AnyWindow, JobResult>,
{
    // The default event-time trigger by its own type: no dispatch, and no trigger state in
    // each window's state (`AnyTrigger`'s is the union of every built-in trigger's).
    if matches!(trigger, AnyTrigger::EventTime) {
        return Ok(visitor.visit(limited(
            WindowOperator::new(assigner, EventTimeTrigger, Incremental(function), config)?,
            spec,
        )));
    }
    Ok(visitor.visit(limited(
        WindowOperator::new(assigner, trigger, Incremental(function), config)?,
        spec,
    )))
}

/// The operator with the spec's limit on window states, able to write snapshots.
fn limited<K, A, Tr, F>(
    op: WindowOperator<K, Number, A, Tr, F>,
    spec: &JobSpec,
) -> WindowOperator<K, Number, A, Tr, F>
where
    K: JobKey,
    A: WindowAssigner<Number>,
    A::Window: serde::Serialize + serde::de::DeserializeOwned,
    Tr: Trigger<Number, A::Window>,
    Tr::State: serde::Serialize + serde::de::DeserializeOwned,
    F: WindowFunction<Number>,
    F::Acc: serde::Serialize + serde::de::DeserializeOwned,
{
    let mut op = op.with_snapshots();
    op.set_max_window_states(spec.max_window_states);
    op
}

/// The result of a window that kept its elements: numeric aggregates as [`ExactNumeric`] gives
/// them over the same values.
fn contents_result(aggregate: JobAggregate, elements: &[TimestampedValue<Number>]) -> JobResult {
    fn fold<F: AggregateFunction<Number>>(f: &F, elements: &[TimestampedValue<Number>]) -> F::Out {
        let mut acc = f.create_accumulator();
        elements.iter().for_each(|e| f.add(&mut acc, &e.value));
        f.get_result(&acc)
    }
    match aggregate {
        JobAggregate::Numeric(a) => fold(&ExactNumeric(a), elements).into(),
        JobAggregate::Several(several) => JobResult::Numbers(fold(&several, elements)),
        JobAggregate::List => JobResult::List(elements.iter().map(|e| e.value).collect()),
        JobAggregate::Elements => {
            JobResult::Elements(elements.iter().map(|e| (e.timestamp, e.value)).collect())
        }
    }
}

/// Key windows or sliced windows for a sliding-window job.
fn ordered<K, V>(spec: &JobSpec, kind: OrderedKind, visitor: V) -> Result<V::Output, SpecError>
where
    K: JobKey,
    V: Visitor<K, Number, AnyWindow, JobResult>,
{
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
    if !spec.trigger.is_default_for(spec.time) || spec.evictor.is_some() {
        return Err(syntax(
            "strategy",
            name,
            "key windows and sliced windows fire at the window end: no other trigger, no evictor \
             (strategy auto or native runs this job on the native operator)",
        ));
    }
    let keeps_elements = || {
        syntax(
            "strategy",
            name,
            "key windows and sliced windows keep accumulators, not elements: use count, sum, min, max or mean",
        )
    };
    if matches!(spec.aggregate, JobAggregate::List | JobAggregate::Elements) {
        return Err(keeps_elements());
    }
    if spec.allowed_lateness < 0 {
        return Err(OperatorError::NegativeLateness(spec.allowed_lateness).into());
    }
    let geometry = ordered_geometry(spec.strategy, size, slide, offset)?;
    let parts = OrderedParts {
        kind,
        geometry,
        domain: spec.time,
        allowed_lateness: spec.allowed_lateness,
        late_data: spec.late_data,
    };
    match spec.aggregate {
        JobAggregate::Several(aggregates) => ordered_snapshotting(parts, aggregates, visitor),
        JobAggregate::Numeric(aggregate) => {
            ordered_snapshotting(parts, ExactNumeric(aggregate), visitor)
        }
        JobAggregate::List | JobAggregate::Elements => Err(keeps_elements()),
    }
}

/// As [`ordered_with`], for keys, elements and accumulators that are serde types: the
/// computation can write its state to snapshots (`with_snapshots`).
fn ordered_snapshotting<K, T, F, W, O, V>(
    parts: OrderedParts,
    function: F,
    visitor: V,
) -> Result<V::Output, SpecError>
where
    K: Hash + Eq + Clone + Send + Serialize + DeserializeOwned + 'static,
    T: Send + Serialize + DeserializeOwned + 'static,
    F: AggregateFunction<T> + Send + 'static,
    F::Acc: Send + Serialize + DeserializeOwned,
    W: From<TimeWindow>,
    O: From<F::Out>,
    V: Visitor<K, T, W, O>,
{
    let OrderedParts {
        kind,
        geometry,
        domain,
        allowed_lateness,
        late_data,
    } = parts;
    if allowed_lateness < 0 {
        return Err(OperatorError::NegativeLateness(allowed_lateness).into());
    }
    Ok(match (kind, domain) {
        (OrderedKind::KeyWindows, TimeDomain::EventTime) => visitor.visit(
            EventTime::wrap(KeyWindows::new(geometry, function), allowed_lateness)
                .with_late_data(late_data)
                .with_snapshots(),
        ),
        (OrderedKind::Sliced(emit), TimeDomain::EventTime) => visitor.visit(
            EventTime::wrap(
                SlicedWindows::new(geometry, function, emit),
                allowed_lateness,
            )
            .with_late_data(late_data)
            .with_snapshots(),
        ),
        (OrderedKind::KeyWindows, TimeDomain::ProcessingTime) => visitor
            .visit(ProcessingTime::wrap(KeyWindows::new(geometry, function)).with_snapshots()),
        (OrderedKind::Sliced(emit), TimeDomain::ProcessingTime) => visitor.visit(
            ProcessingTime::wrap(SlicedWindows::new(geometry, function, emit)).with_snapshots(),
        ),
    })
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
/// `function`, as one trait object.
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
    F::Out: 'static,
{
    let parts = OrderedParts {
        kind,
        geometry,
        domain,
        allowed_lateness,
        late_data,
    };
    ordered_with(parts, function, Boxing)
}

/// What an ordered computation is made of, besides its aggregate function.
#[derive(Clone, Copy, Debug)]
pub struct OrderedParts {
    /// Key windows or sliced windows.
    pub kind: OrderedKind,
    /// Window size, slide and offset.
    pub geometry: SlidingGeometry,
    /// Event time or processing time.
    pub domain: TimeDomain,
    /// Allowed lateness in ms (event time).
    pub allowed_lateness: i64,
    /// Where late elements go (event time).
    pub late_data: LateDataPolicy,
}

/// Key windows or sliced windows as `parts` say, aggregating with `function`, handed to
/// `visitor`: the one place that maps these strategies to their computations.
///
/// # Errors
/// Negative allowed lateness.
pub fn ordered_with<K, T, F, W, O, V>(
    parts: OrderedParts,
    function: F,
    visitor: V,
) -> Result<V::Output, SpecError>
where
    K: Hash + Eq + Clone + Send + 'static,
    T: Send + 'static,
    F: AggregateFunction<T> + Send + 'static,
    F::Acc: Send,
    W: From<TimeWindow>,
    O: From<F::Out>,
    V: Visitor<K, T, W, O>,
{
    let OrderedParts {
        kind,
        geometry,
        domain,
        allowed_lateness,
        late_data,
    } = parts;
    if allowed_lateness < 0 {
        return Err(OperatorError::NegativeLateness(allowed_lateness).into());
    }
    Ok(match (kind, domain) {
        (OrderedKind::KeyWindows, TimeDomain::EventTime) => visitor.visit(
            EventTime::wrap(KeyWindows::new(geometry, function), allowed_lateness)
                .with_late_data(late_data),
        ),
        (OrderedKind::Sliced(emit), TimeDomain::EventTime) => visitor.visit(
            EventTime::wrap(
                SlicedWindows::new(geometry, function, emit),
                allowed_lateness,
            )
            .with_late_data(late_data),
        ),
        (OrderedKind::KeyWindows, TimeDomain::ProcessingTime) => {
            visitor.visit(ProcessingTime::wrap(KeyWindows::new(geometry, function)))
        }
        (OrderedKind::Sliced(emit), TimeDomain::ProcessingTime) => visitor.visit(
            ProcessingTime::wrap(SlicedWindows::new(geometry, function, emit)),
        ),
    })
}

/// Flink's `windowAll`: every element under one key (`K::default()`, the empty string for
/// `String` keys), so results and late elements carry that key.
struct AllOneKey<C>(C);

impl<K: Default, C: WindowComputation<K, Number>> WindowComputation<K, Number> for AllOneKey<C> {
    type Window = C::Window;
    type Output = C::Output;

    fn process_element(
        &mut self,
        key: K,
        element: Number,
        timestamp: Timestamp,
        out: &mut dyn WindowOutput<K, C::Window, Number, C::Output>,
    ) -> Result<(), Rejected<K, Number>> {
        // A rejected element goes back with its own key.
        self.0
            .process_element(K::default(), element, timestamp, out)
            .map_err(|r| Rejected::new(r.error, key, r.element))
    }

    fn process_watermark(
        &mut self,
        watermark: Timestamp,
        out: &mut dyn WindowOutput<K, C::Window, Number, C::Output>,
    ) -> bool {
        self.0.process_watermark(watermark, out)
    }

    fn advance_wall_clock(
        &mut self,
        now: Timestamp,
        out: &mut dyn WindowOutput<K, C::Window, Number, C::Output>,
    ) {
        self.0.advance_wall_clock(now, out);
    }

    fn next_processing_time_timer(&self) -> Option<Timestamp> {
        self.0.next_processing_time_timer()
    }

    fn next_event_time_timer(&self) -> Option<Timestamp> {
        self.0.next_event_time_timer()
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

    fn held_state(&self) -> HeldState {
        self.0.held_state()
    }

    fn snapshot(&self, out: &mut Vec<u8>) -> Result<(), SnapshotError> {
        self.0.snapshot(out)
    }

    fn restore(&mut self, snapshot: &[u8]) -> Result<(), SnapshotError> {
        self.0.restore(snapshot)
    }
}
