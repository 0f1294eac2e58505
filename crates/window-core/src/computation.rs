//! The one interface of a keyed windowed computation, and the one interface of its output.
//!
//! Every way this workspace computes windows (Flink's window operator, key windows, sliced
//! windows, in event time or processing time) is driven the same way: elements arrive with a key
//! and a timestamp, the watermark advances, the processing-time clock advances, and results and
//! late elements come out. [`WindowComputation`] is that contract; [`WindowOutput`] receives what
//! comes out. A runtime (the `engine` crate), the command line, the benchmarks and the
//! conformance harness drive every strategy through these two traits, as trait objects where the
//! strategy is chosen at run time (`Box<dyn WindowComputation<K, T, Window = W, Output = O>>`).
//!
//! The contract follows Flink's `OneInputStreamOperator` as the `WindowOperator` implements it:
//! `processElement`, `processWatermark` and the processing-time service's timer callbacks, with
//! the window operator's side output for late data and its counters.

use std::fmt;
use std::marker::PhantomData;

use crate::rules::FlinkRule;
use crate::snapshot::SnapshotError;
use crate::time::Timestamp;
use crate::window::Window;

/// Whether windows follow event time or processing time (Flink's `TimeCharacteristic`, as the
/// event-time and processing-time flavours of each window assigner choose it).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum TimeDomain {
    /// The element's own timestamp; windows close when the watermark passes them.
    #[default]
    EventTime,
    /// The operator's clock when the element arrives; windows close when the clock passes them.
    ProcessingTime,
}

impl TimeDomain {
    /// `event-time` or `processing-time`, as messages name the domain.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            TimeDomain::EventTime => "event-time",
            TimeDomain::ProcessingTime => "processing-time",
        }
    }
}

/// What happens to late elements, those whose every window is past its cleanup time.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum LateDataPolicy {
    /// Drop and count them.
    #[default]
    Drop,
    /// Count them and emit them through [`WindowOutput::late`] (Flink's
    /// `sideOutputLateData`).
    SideOutput,
}

/// Why one element could not be processed. Nothing changed in the computation's state; the
/// caller may report the element and go on.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ElementError {
    /// An element without a timestamp (`i64::MIN`, Flink's "no timestamp" marker) reached an
    /// event-time window assigner (Flink's `TumblingEventTimeWindows.assignWindows` throws here).
    MissingTimestamp,
    /// An element so close to `i64::MIN` or `i64::MAX` that its windows (and the windows after
    /// them that key windows and sliced windows track) cannot be represented.
    TimestampOutOfRange {
        /// The element's timestamp in ms.
        timestamp: Timestamp,
        /// The window size in ms.
        size: i64,
    },
    /// A dynamic session gap extractor returned a gap that is not positive for this element
    /// (Flink's `DynamicEventTimeSessionWindows`: "Dynamic session time gap must satisfy 0 <
    /// gap").
    InvalidDynamicGap {
        /// The gap returned, in ms.
        gap: i64,
        /// The element's timestamp in ms.
        timestamp: Timestamp,
    },
    /// A merge of session windows produced a window already behind the watermark (event time)
    /// or the clock (processing time); Flink's `WindowOperator` throws
    /// `UnsupportedOperationException` here.
    MergeBehindTime {
        /// The time domain of the windows.
        domain: TimeDomain,
        /// The watermark or processing time in ms.
        current: Timestamp,
        /// The merged window's start (`i64::MIN` for a window without bounds).
        start: Timestamp,
        /// The merged window's end.
        end: Timestamp,
    },
    /// Adding the element would bring the number of window states over the configured limit.
    TooManyWindowStates {
        /// Window states there would be.
        states: usize,
        /// The limit.
        limit: usize,
        /// The element's timestamp in ms.
        timestamp: Timestamp,
    },
}

impl fmt::Display for ElementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElementError::MissingTimestamp => f.write_str(
                "element has no timestamp (i64::MIN) but the window assigner uses event time; \
                 assign timestamps before windowing",
            ),
            ElementError::TimestampOutOfRange { timestamp, size } => write!(
                f,
                "timestamp {timestamp} is too close to the end of the i64 range for windows of \
                 {size} ms"
            ),
            ElementError::InvalidDynamicGap { gap, timestamp } => write!(
                f,
                "dynamic session gap must be a positive whole number of ms, got {gap} ms for the \
                 element at {timestamp}"
            ),
            ElementError::MergeBehindTime {
                domain,
                current,
                start,
                end,
            } => {
                let (d, clock) = match domain {
                    TimeDomain::EventTime => ("event-time", "watermark"),
                    TimeDomain::ProcessingTime => ("processing-time", "processing time"),
                };
                write!(
                    f,
                    "the end timestamp of a {d} window cannot become earlier than the current \
                     {clock} by merging: current {clock} {current}, window [{start}, {end})"
                )
            }
            ElementError::TooManyWindowStates {
                states,
                limit,
                timestamp,
            } => write!(
                f,
                "the element at {timestamp} would bring the window states to {states}, more than \
                 the limit of {limit}; each window of each key is one state (a sliding window \
                 makes size/slide of them per element, and fired windows are kept for their \
                 allowed lateness)"
            ),
        }
    }
}

impl std::error::Error for ElementError {}

impl ElementError {
    /// The Flink rule this error enforces, if it is one of Flink's (the `i64` range and the
    /// limit on window states are this workspace's own).
    #[must_use]
    pub fn rule(&self) -> Option<FlinkRule> {
        match self {
            ElementError::MissingTimestamp => Some(FlinkRule::TimestampRequired),
            ElementError::InvalidDynamicGap { .. } => Some(FlinkRule::DynamicSessionGapPositive),
            ElementError::MergeBehindTime {
                domain: TimeDomain::EventTime,
                ..
            } => Some(FlinkRule::MergeNotBehindWatermark),
            ElementError::MergeBehindTime {
                domain: TimeDomain::ProcessingTime,
                ..
            } => Some(FlinkRule::MergeNotBehindProcessingTime),
            ElementError::TimestampOutOfRange { .. } | ElementError::TooManyWindowStates { .. } => {
                None
            }
        }
    }
}

/// An element a computation could not process, handed back whole with the reason, so that the
/// caller can report it (a dead-letter file) and lose nothing.
#[derive(Clone, Debug, PartialEq)]
pub struct Rejected<K, T> {
    /// Why.
    pub error: ElementError,
    /// The element's key.
    pub key: K,
    /// The element.
    pub element: T,
}

impl<K, T> Rejected<K, T> {
    /// `key` and `element`, rejected for `error`.
    pub const fn new(error: ElementError, key: K, element: T) -> Self {
        Self {
            error,
            key,
            element,
        }
    }
}

impl<K, T> fmt::Display for Rejected<K, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl<K: fmt::Debug, T: fmt::Debug> std::error::Error for Rejected<K, T> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Receives what a [`WindowComputation`] emits: window results, late elements, and the news that
/// a key's window became empty. `K` is the key, `W` the window, `T` the element, `O` the result.
///
/// The methods cannot fail: an output that writes somewhere keeps its first error and reports it
/// from [`WindowOutput::take_error`] (and [`WindowOutput::flush`]), which a runtime calls
/// between batches, so that a failed write stops the job at the next consistent point.
pub trait WindowOutput<K, W, T, O> {
    /// A window fired. `watermark` is the computation's watermark at that moment (for
    /// element-driven firings, the one before the element's own watermark; key windows and
    /// sliced windows report the window's max timestamp). The record's timestamp is
    /// `window.max_timestamp()`.
    fn result(&mut self, key: &K, window: &W, result: O, watermark: Timestamp);

    /// A late element, when the computation sends late data to a side output
    /// ([`LateDataPolicy::SideOutput`]). `timestamp` is the element's, `watermark` the
    /// computation's when it was dropped.
    fn late(&mut self, key: K, timestamp: Timestamp, element: T, watermark: Timestamp);

    /// Key windows and sliced windows emitting changes only: `window` of `key` fired empty (its
    /// last element left), so a downstream store can expire the key. Flink's operator emits
    /// nothing there; the default does nothing.
    fn emptied(&mut self, key: &K, window: &W, watermark: Timestamp) {
        let _ = (key, window, watermark);
    }

    /// The first write error since the last call, if any (an output that cannot fail returns
    /// `None`, the default).
    fn take_error(&mut self) -> Option<std::io::Error> {
        None
    }

    /// Writes out what is buffered; an error if that, or an earlier write, failed.
    ///
    /// # Errors
    /// The first write error since the last call.
    fn flush(&mut self) -> std::io::Result<()> {
        self.take_error().map_or(Ok(()), Err)
    }
}

impl<K, W, T, O, S> WindowOutput<K, W, T, O> for &mut S
where
    S: WindowOutput<K, W, T, O> + ?Sized,
{
    #[inline]
    fn result(&mut self, key: &K, window: &W, result: O, watermark: Timestamp) {
        (**self).result(key, window, result, watermark);
    }

    fn late(&mut self, key: K, timestamp: Timestamp, element: T, watermark: Timestamp) {
        (**self).late(key, timestamp, element, watermark);
    }

    fn emptied(&mut self, key: &K, window: &W, watermark: Timestamp) {
        (**self).emptied(key, window, watermark);
    }

    fn take_error(&mut self) -> Option<std::io::Error> {
        (**self).take_error()
    }

    fn flush(&mut self) -> std::io::Result<()> {
        (**self).flush()
    }
}

/// One emitted record, for collecting output in a `Vec`.
#[derive(Clone, Debug, PartialEq)]
pub enum Emitted<K, W, T, O> {
    /// A window result.
    Result {
        /// The key.
        key: K,
        /// The window.
        window: W,
        /// The function's output.
        result: O,
        /// The computation's watermark when it was emitted.
        watermark: Timestamp,
    },
    /// A late element from the side output.
    Late {
        /// The key.
        key: K,
        /// The element's timestamp.
        timestamp: Timestamp,
        /// The element.
        value: T,
        /// The computation's watermark when it was dropped.
        watermark: Timestamp,
    },
    /// A key's window fired empty ([`WindowOutput::emptied`]).
    Emptied {
        /// The key.
        key: K,
        /// The window.
        window: W,
        /// The computation's watermark (or the window's max timestamp).
        watermark: Timestamp,
    },
}

impl<K: Clone, W: Copy, T, O> WindowOutput<K, W, T, O> for Vec<Emitted<K, W, T, O>> {
    fn result(&mut self, key: &K, window: &W, result: O, watermark: Timestamp) {
        self.push(Emitted::Result {
            key: key.clone(),
            window: *window,
            result,
            watermark,
        });
    }

    fn late(&mut self, key: K, timestamp: Timestamp, value: T, watermark: Timestamp) {
        self.push(Emitted::Late {
            key,
            timestamp,
            value,
            watermark,
        });
    }

    fn emptied(&mut self, key: &K, window: &W, watermark: Timestamp) {
        self.push(Emitted::Emptied {
            key: key.clone(),
            window: *window,
            watermark,
        });
    }
}

/// Counters of a [`WindowComputation`], the same for every strategy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowMetrics {
    /// Elements processed (late ones included, rejected ones not).
    pub elements: u64,
    /// Window states created: one per (key, window) that received an element for Flink's
    /// operator; key windows or slices (partial aggregates) for the other strategies.
    pub windows_created: u64,
    /// Windows Flink's operator would create for the same elements: the distinct (key, window)
    /// pairs that hold at least one element (equal to `windows_created` for the operator).
    pub native_windows: u64,
    /// Window results emitted, empty ones ([`WindowOutput::emptied`]) included.
    pub windows_fired: u64,
    /// Empty results emitted (key windows and sliced windows emitting changes).
    pub empty_results: u64,
    /// Late elements dropped, whether or not they went to the side output.
    pub late_elements: u64,
    /// Late elements emitted on the side output.
    pub late_side_output: u64,
    /// Elements that belonged to no window although not late (sliding windows with `slide >
    /// size` leave gaps); Flink drops these silently, every strategy here counts them.
    pub elements_in_no_window: u64,
}

/// What a [`WindowComputation`] holds right now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveState {
    /// Keys holding state.
    pub keys: usize,
    /// Window states (for key windows, key windows; for sliced windows, slices).
    pub windows: usize,
    /// Elements waiting in a reordering buffer for the watermark (key windows and sliced
    /// windows in event time).
    pub buffered: usize,
    /// Pending timers.
    pub timers: usize,
}

/// What a [`WindowComputation`] holds that grows with its input, counted as a memory bound counts
/// it (`windowctl --max-window-states`), and asked for at every batch boundary: every
/// implementation here answers from counters it keeps, in O(1).
///
/// One state *entry* is one window state or one element held ([`HeldState::entries`]): what one
/// entry is depends on the strategy (see the fields). Keys are counted apart, for the estimate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeldState {
    /// Window states: one per (key, window) for Flink's operator (retired windows waiting for
    /// their cleanup included), key windows for key windows (fired ones kept for inheritance
    /// included), slices (partial aggregates) for sliced windows.
    pub windows: usize,
    /// Elements held: kept in the contents of windows that keep their elements (an evictor, a
    /// list of elements: Flink's `ListState` of the `EvictingWindowOperator`), waiting in a
    /// reordering buffer for the watermark, or batched before they are folded into slices.
    pub elements: usize,
    /// Keys holding state.
    pub keys: usize,
    /// An estimate of the bytes all of it takes, in bytes: the counts times the sizes of their
    /// entries (`size_of` of the stored types plus an allowance for the maps that hold them).
    /// Not a measurement: allocator slack and key text are not seen.
    pub bytes: usize,
}

impl HeldState {
    /// Window states and elements held: what a bound on states counts.
    #[must_use]
    pub const fn entries(&self) -> usize {
        self.windows.saturating_add(self.elements)
    }
}

/// Bytes a hash map or tree spends per entry beyond the entry itself (control bytes, load
/// factor slack, node headers), for [`HeldState::bytes`] estimates.
pub const MAP_ENTRY_OVERHEAD: usize = 16;

/// A keyed windowed computation: elements in, watermark in, processing time in; window results
/// and late elements out, to a [`WindowOutput`].
///
/// `K` is the key, `T` the element. Implemented by Flink's window operator
/// (`window_operator::WindowOperator`), key windows and sliced windows in event and processing
/// time (`keywindow`), and by [`Converted`], which changes the window and result types of
/// another computation. Object safe: `Box<dyn WindowComputation<K, T, Window = W, Output = O>>`
/// holds any of them.
///
/// A computation reports its watermark-driven firings in timestamp order; for timers of several
/// keys with the same timestamp the order is the implementation's (as in Flink).
pub trait WindowComputation<K, T> {
    /// The window type of the results.
    type Window: Window;
    /// What a window emits.
    type Output;

    /// Processes one element of `key` with event timestamp `timestamp` (ms; in processing time
    /// it is only carried along). Firings the element causes (count triggers, late firings) go to
    /// `out`, as does the element itself when it is late and late data goes to the side output.
    ///
    /// # Errors
    /// [`Rejected`], with the element and the [`ElementError`], when the element cannot be
    /// processed; nothing changed then.
    fn process_element(
        &mut self,
        key: K,
        element: T,
        timestamp: Timestamp,
        out: &mut dyn WindowOutput<K, Self::Window, T, Self::Output>,
    ) -> Result<(), Rejected<K, T>>;

    /// Advances the event-time watermark to `watermark` (ms) and fires every window it reaches,
    /// in timestamp order. A watermark not later than the current one is ignored; returns
    /// whether it advanced.
    fn process_watermark(
        &mut self,
        watermark: Timestamp,
        out: &mut dyn WindowOutput<K, Self::Window, T, Self::Output>,
    ) -> bool;

    /// [`WindowComputation::process_element`] with an output of a type known where it is
    /// called: a computation whose firing is generic over its output overrides it, so that
    /// each result is a direct (inlinable) call instead of a virtual one. [`Converted`] calls
    /// it with its converting output. The default calls `process_element`. Not on trait
    /// objects (`Self: Sized`).
    ///
    /// # Errors
    /// As [`WindowComputation::process_element`].
    #[inline]
    fn process_element_to<O>(
        &mut self,
        key: K,
        element: T,
        timestamp: Timestamp,
        out: &mut O,
    ) -> Result<(), Rejected<K, T>>
    where
        Self: Sized,
        O: WindowOutput<K, Self::Window, T, Self::Output>,
    {
        self.process_element(key, element, timestamp, out)
    }

    /// [`WindowComputation::process_watermark`] with an output of a type known where it is
    /// called (see [`WindowComputation::process_element_to`]). The default calls
    /// `process_watermark`.
    #[inline]
    fn process_watermark_to<O>(&mut self, watermark: Timestamp, out: &mut O) -> bool
    where
        Self: Sized,
        O: WindowOutput<K, Self::Window, T, Self::Output>,
    {
        self.process_watermark(watermark, out)
    }

    /// Sets processing time to the wall-clock reading `now` (ms; it never moves back) and fires
    /// every processing-time timer *before* `now`: Flink's system time service runs a timer at
    /// `t` once the clock has passed `t`, so an element arriving during a window's last
    /// millisecond still joins it. Event-time computations without processing-time timers do
    /// nothing.
    fn advance_wall_clock(
        &mut self,
        now: Timestamp,
        out: &mut dyn WindowOutput<K, Self::Window, T, Self::Output>,
    );

    /// The earliest pending processing-time timer, so that a runtime knows when to call
    /// [`WindowComputation::advance_wall_clock`] next; `None` when there is none (or the
    /// computation cannot tell).
    fn next_processing_time_timer(&self) -> Option<Timestamp>;

    /// A lower bound on the smallest watermark at which
    /// [`WindowComputation::process_watermark`] would emit anything to its output (fire a
    /// window, emit an empty result), in ms; `None` when no watermark would (nothing is held).
    ///
    /// For a runtime that holds many computations, one per key group (Flink's key groups,
    /// `KeyGroupRangeAssignment`): it steps only those whose bound the watermark reached, and
    /// brings the others to the watermark before their next element, where they emit nothing.
    /// So the bound must never be later than a firing; an earlier one only costs a call. A
    /// computation that cannot tell returns `Some(i64::MIN)`, the default: always step it.
    fn next_event_time_timer(&self) -> Option<Timestamp> {
        Some(Timestamp::MIN)
    }

    /// The current event-time watermark in ms (`i64::MIN` before the first one).
    fn current_watermark(&self) -> Timestamp;

    /// The counters so far.
    fn metrics(&self) -> WindowMetrics;

    /// What the computation holds right now.
    fn live_state(&self) -> LiveState;

    /// What the computation holds that grows with its input, for a memory bound checked between
    /// batches; must be cheap (every computation here keeps counters for it). The default
    /// derives it from [`WindowComputation::live_state`] (window states, buffered elements and
    /// keys; no byte estimate).
    fn held_state(&self) -> HeldState {
        let live = self.live_state();
        HeldState {
            windows: live.windows,
            elements: live.buffered,
            keys: live.keys,
            bytes: 0,
        }
    }

    /// Appends the computation's whole state to `out` (see [`crate::snapshot`] for the
    /// contract). Called between two calls of the computation; changes nothing.
    ///
    /// # Errors
    /// [`SnapshotError::Unsupported`] from a computation that cannot snapshot its state (the
    /// default).
    fn snapshot(&self, out: &mut Vec<u8>) -> Result<(), SnapshotError> {
        let _ = out;
        Err(SnapshotError::Unsupported(
            std::any::type_name::<Self>().to_owned(),
        ))
    }

    /// Replaces the state of this computation, freshly built from the same configuration, by
    /// the state in `snapshot` (written by [`WindowComputation::snapshot`]). Afterwards it
    /// gives exactly the output the snapshotted computation would have given.
    ///
    /// # Errors
    /// [`SnapshotError::Invalid`] for bytes that are not a snapshot of this kind of computation
    /// (the computation is unchanged then); [`SnapshotError::Unsupported`] as for `snapshot`.
    fn restore(&mut self, snapshot: &[u8]) -> Result<(), SnapshotError> {
        let _ = snapshot;
        Err(SnapshotError::Unsupported(
            std::any::type_name::<Self>().to_owned(),
        ))
    }
}

impl<K, T, C> WindowComputation<K, T> for Box<C>
where
    C: WindowComputation<K, T> + ?Sized,
{
    type Window = C::Window;
    type Output = C::Output;

    fn process_element(
        &mut self,
        key: K,
        element: T,
        timestamp: Timestamp,
        out: &mut dyn WindowOutput<K, Self::Window, T, Self::Output>,
    ) -> Result<(), Rejected<K, T>> {
        (**self).process_element(key, element, timestamp, out)
    }

    fn process_watermark(
        &mut self,
        watermark: Timestamp,
        out: &mut dyn WindowOutput<K, Self::Window, T, Self::Output>,
    ) -> bool {
        (**self).process_watermark(watermark, out)
    }

    fn advance_wall_clock(
        &mut self,
        now: Timestamp,
        out: &mut dyn WindowOutput<K, Self::Window, T, Self::Output>,
    ) {
        (**self).advance_wall_clock(now, out);
    }

    fn next_processing_time_timer(&self) -> Option<Timestamp> {
        (**self).next_processing_time_timer()
    }

    fn next_event_time_timer(&self) -> Option<Timestamp> {
        (**self).next_event_time_timer()
    }

    fn current_watermark(&self) -> Timestamp {
        (**self).current_watermark()
    }

    fn metrics(&self) -> WindowMetrics {
        (**self).metrics()
    }

    fn live_state(&self) -> LiveState {
        (**self).live_state()
    }

    fn held_state(&self) -> HeldState {
        (**self).held_state()
    }

    fn snapshot(&self, out: &mut Vec<u8>) -> Result<(), SnapshotError> {
        (**self).snapshot(out)
    }

    fn restore(&mut self, snapshot: &[u8]) -> Result<(), SnapshotError> {
        (**self).restore(snapshot)
    }
}

/// Another computation with its windows and results converted by `From` (a time-window job and a
/// global-window job as one `Box<dyn WindowComputation<K, T, Window = AnyWindow, Output = O>>`,
/// say). The conversion happens per result; nothing else changes.
///
/// # Examples
/// ```
/// use window_core::{AnyWindow, Converted, WindowComputation};
/// fn erase<C>(c: C) -> Box<dyn WindowComputation<String, f64, Window = AnyWindow, Output = C::Output>>
/// where
///     C: WindowComputation<String, f64> + 'static,
///     AnyWindow: From<C::Window>,
/// {
///     Box::new(Converted::<C, AnyWindow, C::Output>::new(c))
/// }
/// ```
pub struct Converted<C, W, O> {
    inner: C,
    _types: PhantomData<fn() -> (W, O)>,
}

impl<C, W, O> Converted<C, W, O> {
    /// Wraps `inner`.
    pub const fn new(inner: C) -> Self {
        Self {
            inner,
            _types: PhantomData,
        }
    }

    /// The wrapped computation.
    pub const fn inner(&self) -> &C {
        &self.inner
    }
}

impl<C: fmt::Debug, W, O> fmt::Debug for Converted<C, W, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Converted").field(&self.inner).finish()
    }
}

/// The output a [`Converted`] computation hands to the computation it wraps.
struct ConvertingOutput<'a, K, W, T, O>(&'a mut dyn WindowOutput<K, W, T, O>);

impl<K, W, T, O, W2, O2> WindowOutput<K, W2, T, O2> for ConvertingOutput<'_, K, W, T, O>
where
    W: From<W2>,
    W2: Copy,
    O: From<O2>,
{
    #[inline]
    fn result(&mut self, key: &K, window: &W2, result: O2, watermark: Timestamp) {
        self.0
            .result(key, &W::from(*window), O::from(result), watermark);
    }

    fn late(&mut self, key: K, timestamp: Timestamp, element: T, watermark: Timestamp) {
        self.0.late(key, timestamp, element, watermark);
    }

    fn emptied(&mut self, key: &K, window: &W2, watermark: Timestamp) {
        self.0.emptied(key, &W::from(*window), watermark);
    }

    fn take_error(&mut self) -> Option<std::io::Error> {
        self.0.take_error()
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl<K, T, C, W, O> WindowComputation<K, T> for Converted<C, W, O>
where
    C: WindowComputation<K, T>,
    W: Window + From<C::Window>,
    O: From<C::Output>,
{
    type Window = W;
    type Output = O;

    fn process_element(
        &mut self,
        key: K,
        element: T,
        timestamp: Timestamp,
        out: &mut dyn WindowOutput<K, W, T, O>,
    ) -> Result<(), Rejected<K, T>> {
        // By the inner computation's concrete type: its results reach the converting output
        // by direct calls (one virtual call per result, to `out`, instead of two).
        self.inner
            .process_element_to(key, element, timestamp, &mut ConvertingOutput(out))
    }

    fn process_watermark(
        &mut self,
        watermark: Timestamp,
        out: &mut dyn WindowOutput<K, W, T, O>,
    ) -> bool {
        self.inner
            .process_watermark_to(watermark, &mut ConvertingOutput(out))
    }

    fn advance_wall_clock(&mut self, now: Timestamp, out: &mut dyn WindowOutput<K, W, T, O>) {
        self.inner
            .advance_wall_clock(now, &mut ConvertingOutput(out));
    }

    fn next_processing_time_timer(&self) -> Option<Timestamp> {
        self.inner.next_processing_time_timer()
    }

    fn next_event_time_timer(&self) -> Option<Timestamp> {
        self.inner.next_event_time_timer()
    }

    fn current_watermark(&self) -> Timestamp {
        self.inner.current_watermark()
    }

    fn metrics(&self) -> WindowMetrics {
        self.inner.metrics()
    }

    fn live_state(&self) -> LiveState {
        self.inner.live_state()
    }

    fn held_state(&self) -> HeldState {
        self.inner.held_state()
    }

    fn snapshot(&self, out: &mut Vec<u8>) -> Result<(), SnapshotError> {
        self.inner.snapshot(out)
    }

    fn restore(&mut self, snapshot: &[u8]) -> Result<(), SnapshotError> {
        self.inner.restore(snapshot)
    }
}
