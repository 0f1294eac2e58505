//! Event time for the in-order sliding-window processors: a reordering buffer in front of them.
//!
//! Key windows and sliced windows need their elements in time order. In event time elements
//! arrive out of order, so [`EventTime`] holds them in a buffer ordered by event time and
//! releases them, in order, once the watermark (less the allowed lateness) passes them; then it
//! advances the processor's time to the same point, which fires every window whose max timestamp
//! it reached.
//!
//! An element at or behind that point when it arrives (`timestamp + allowed_lateness <=
//! watermark`, Flink's element-lateness rule) is late: it is counted, and sent to the side output
//! when late data goes there ([`LateDataPolicy::SideOutput`]). With allowed lateness `A`, windows fire once when the
//! watermark reaches `max_timestamp + A`, with everything that arrived in time: the content of
//! Flink's last (late) firing, without the earlier partial firings.

use std::collections::{BTreeMap, VecDeque};
use std::hash::Hash;

use window_core::{
    time, AggregateFunction, LateDataPolicy, LiveState, Rejected, TimeWindow, Timestamp,
    WindowComputation, WindowMetrics, WindowOutput,
};

use crate::sliced::{EmitMode, SlicedWindows};
use crate::{check_timestamp, InOrderWindows, KeyWindowMetrics, KeyWindows, SlidingGeometry};

/// An in-order processor `P` driven by event time and watermarks.
pub struct EventTime<P, K, T> {
    inner: P,
    /// Elements that arrived in time order (each at or after the one before it), oldest first:
    /// the common case, a push and a pop per element.
    in_order: VecDeque<(Timestamp, u64, K, T)>,
    /// Elements that arrived before an element already in `in_order`, by (time, arrival).
    buffer: BTreeMap<(Timestamp, u64), (K, T)>,
    sequence: u64,
    watermark: Timestamp,
    allowed_lateness: i64,
    late_data: LateDataPolicy,
    late_elements: u64,
}

/// Key windows in event time (beyond the paper, which stops at processing time).
///
/// # Examples
/// ```
/// use keywindow::{EventTimeKeyWindows, SlidingGeometry};
/// use window_core::{Emitted, NumericAggregate, TimeWindow, WindowComputation};
/// let mut kw = EventTimeKeyWindows::new(SlidingGeometry::new(4, 1, 0)?, NumericAggregate::Max, 0);
/// let mut out = Vec::new();
/// kw.process_element("a", 3.0, 5, &mut out)?;
/// kw.process_element("a", 9.0, 2, &mut out)?; // out of order, buffered
/// kw.process_watermark(i64::MAX, &mut out);
/// let window = TimeWindow::new(-1, 3);
/// assert_eq!(out[0], Emitted::Result { key: "a", window, result: Some(9.0), watermark: 2 });
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub type EventTimeKeyWindows<K, T, F> = EventTime<KeyWindows<K, T, F>, K, T>;

/// Sliced windows in event time.
pub type EventTimeSlicedWindows<K, T, F> = EventTime<SlicedWindows<K, T, F>, K, T>;

impl<P: std::fmt::Debug, K, T> std::fmt::Debug for EventTime<P, K, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventTime")
            .field("inner", &self.inner)
            .field("buffered", &(self.in_order.len() + self.buffer.len()))
            .field("watermark", &self.watermark)
            .field("allowed_lateness", &self.allowed_lateness)
            .finish_non_exhaustive()
    }
}

impl<K, T, F> EventTime<KeyWindows<K, T, F>, K, T>
where
    K: Hash + Eq + Clone,
    F: AggregateFunction<T>,
{
    /// Event-time key windows for `geometry`, aggregating with `function`, with
    /// `allowed_lateness` ms (negative is treated as 0).
    pub fn new(geometry: SlidingGeometry, function: F, allowed_lateness: i64) -> Self {
        EventTime::wrap(KeyWindows::new(geometry, function), allowed_lateness)
    }
}

impl<K, T, F> EventTime<SlicedWindows<K, T, F>, K, T>
where
    K: Hash + Eq + Clone,
    F: AggregateFunction<T>,
{
    /// Event-time sliced windows for `geometry`, aggregating with `function`, emitting as
    /// `emit` says, with `allowed_lateness` ms (negative is treated as 0).
    pub fn new(
        geometry: SlidingGeometry,
        function: F,
        emit: EmitMode,
        allowed_lateness: i64,
    ) -> Self {
        EventTime::wrap(
            SlicedWindows::new(geometry, function, emit),
            allowed_lateness,
        )
    }
}

impl<P, K, T> EventTime<P, K, T>
where
    P: InOrderWindows<K, T>,
{
    /// Puts the reordering buffer in front of `inner`, with `allowed_lateness` ms (negative is
    /// treated as 0).
    pub fn wrap(inner: P, allowed_lateness: i64) -> Self {
        Self {
            inner,
            in_order: VecDeque::new(),
            buffer: BTreeMap::new(),
            sequence: 0,
            watermark: Timestamp::MIN,
            allowed_lateness: allowed_lateness.max(0),
            late_data: LateDataPolicy::Drop,
            late_elements: 0,
        }
    }

    /// Sends late elements to the side output ([`WindowOutput::late`]) or only counts them.
    #[must_use]
    pub fn with_late_data(mut self, late_data: LateDataPolicy) -> Self {
        self.late_data = late_data;
        self
    }

    /// Buffers an element, or counts it and returns it as late when `timestamp +
    /// allowed_lateness <= watermark`.
    #[inline]
    fn offer(&mut self, key: K, value: T, timestamp: Timestamp) -> Option<(K, T)> {
        if time::add(timestamp, self.allowed_lateness) <= self.watermark {
            self.late_elements += 1;
            return Some((key, value));
        }
        if self.in_order.back().is_none_or(|last| last.0 <= timestamp) {
            self.in_order
                .push_back((timestamp, self.sequence, key, value));
        } else {
            self.buffer.insert((timestamp, self.sequence), (key, value));
        }
        self.sequence += 1;
        None
    }

    /// Takes the later watermark `watermark`: releases what it passed and advances the
    /// processor's time (see [`EventTime::process_watermark`]).
    fn release<O>(&mut self, watermark: Timestamp, out: &mut O)
    where
        O: WindowOutput<K, TimeWindow, T, P::Out> + ?Sized,
    {
        self.watermark = watermark;
        let release_to = time::sub(watermark, self.allowed_lateness);
        while let Some((timestamp, key, value)) = self.next_released(release_to) {
            // Released in order and never behind the processor's time (later elements at or
            // behind `release_to` are refused as late), so this cannot fail.
            let r = self.inner.process(key, value, timestamp, out);
            debug_assert!(r.is_ok(), "released element out of order: {r:?}");
        }
        self.inner.advance_time(release_to, out);
    }

    /// The next buffered element at or before `release_to`, in (time, arrival) order: the
    /// front of whichever buffer holds the earlier one (the out-of-order buffer is empty in
    /// the common case).
    #[inline]
    fn next_released(&mut self, release_to: Timestamp) -> Option<(Timestamp, K, T)> {
        let from_in_order = match (self.in_order.front(), self.buffer.first_key_value()) {
            (Some(a), Some((b, _))) => (a.0, a.1) < *b,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        if from_in_order {
            if self.in_order.front().is_some_and(|e| e.0 <= release_to) {
                return self.in_order.pop_front().map(|(t, _, k, v)| (t, k, v));
            }
            return None;
        }
        let entry = self.buffer.first_entry()?;
        if entry.key().0 > release_to {
            return None;
        }
        let ((timestamp, _), (key, value)) = entry.remove_entry();
        Some((timestamp, key, value))
    }

    /// Elements waiting in the buffer.
    pub fn buffered(&self) -> usize {
        self.in_order.len() + self.buffer.len()
    }

    /// Late elements handed back so far.
    pub fn late_elements(&self) -> u64 {
        self.late_elements
    }

    /// The processor's own counters (key windows created, inheritance ...).
    pub fn key_window_metrics(&self) -> KeyWindowMetrics {
        self.inner.metrics()
    }

    /// The wrapped processor.
    pub fn inner(&self) -> &P {
        &self.inner
    }
}

impl<P, K, T> WindowComputation<K, T> for EventTime<P, K, T>
where
    P: InOrderWindows<K, T>,
{
    type Window = TimeWindow;
    type Output = P::Out;

    /// Buffers the element until the watermark passes it; a late element is counted and, with
    /// [`LateDataPolicy::SideOutput`], emitted at once.
    ///
    /// # Errors
    /// [`Rejected`] with [`window_core::ElementError::MissingTimestamp`] for `i64::MIN`, or
    /// [`window_core::ElementError::TimestampOutOfRange`] within one window (size + slide) of either end of
    /// `i64`.
    #[inline]
    fn process_element(
        &mut self,
        key: K,
        element: T,
        timestamp: Timestamp,
        out: &mut dyn WindowOutput<K, TimeWindow, T, P::Out>,
    ) -> Result<(), Rejected<K, T>> {
        if let Err(e) = check_timestamp(self.inner.geometry(), timestamp) {
            return Err(Rejected::new(e, key, element));
        }
        if let Some((key, element)) = self.offer(key, element, timestamp) {
            if self.late_data == LateDataPolicy::SideOutput {
                out.late(key, timestamp, element, self.watermark);
            }
        }
        Ok(())
    }

    #[inline]
    fn process_watermark(
        &mut self,
        watermark: Timestamp,
        out: &mut dyn WindowOutput<K, TimeWindow, T, P::Out>,
    ) -> bool {
        if watermark > self.watermark {
            self.release(watermark, out);
            true
        } else {
            false
        }
    }

    /// Event time: the wall clock changes nothing.
    fn advance_wall_clock(
        &mut self,
        _now: Timestamp,
        _out: &mut dyn WindowOutput<K, TimeWindow, T, P::Out>,
    ) {
    }

    fn next_processing_time_timer(&self) -> Option<Timestamp> {
        None
    }

    fn current_watermark(&self) -> Timestamp {
        self.watermark
    }

    fn metrics(&self) -> WindowMetrics {
        let m = self.inner.metrics();
        WindowMetrics {
            late_elements: self.late_elements,
            late_side_output: if self.late_data == LateDataPolicy::SideOutput {
                self.late_elements
            } else {
                0
            },
            ..m.into()
        }
    }

    fn live_state(&self) -> LiveState {
        LiveState {
            keys: self.inner.live_keys(),
            windows: self.inner.live_windows(),
            buffered: self.buffered(),
            timers: 0,
        }
    }
}
