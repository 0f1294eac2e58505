//! Event time for the in-order sliding-window processors: a reordering buffer in front of them.
//!
//! Key windows and sliced windows need their elements in time order. In event time elements
//! arrive out of order, so [`EventTime`] holds them in a buffer ordered by event time and
//! releases them, in order, once the watermark (less the allowed lateness) passes them; then it
//! advances the processor's time to the same point, which fires every window whose max timestamp
//! it reached.
//!
//! An element at or behind that point when it arrives (`timestamp + allowed_lateness <=
//! watermark`, Flink's element-lateness rule) is late: it is handed back to the caller, who counts
//! it and may send it to a side output. With allowed lateness `A`, windows fire once when the
//! watermark reaches `max_timestamp + A`, with everything that arrived in time: the content of
//! Flink's last (late) firing, without the earlier partial firings.

use std::collections::{BTreeMap, VecDeque};
use std::hash::Hash;

use window_core::{time, AggregateFunction, Timestamp};

use crate::sliced::{EmitMode, SlicedWindows};
use crate::{InOrderWindows, KeyWindowMetrics, KeyWindowOutput, KeyWindows, SlidingGeometry};

/// A late element handed back by [`EventTime::process_element`].
#[derive(Clone, Debug, PartialEq)]
pub struct LateElement<K, T> {
    /// The key.
    pub key: K,
    /// The element.
    pub value: T,
    /// Its event timestamp in ms.
    pub timestamp: Timestamp,
    /// The watermark when it arrived.
    pub watermark: Timestamp,
}

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
    late_elements: u64,
}

/// Key windows in event time (beyond the paper, which stops at processing time).
///
/// # Examples
/// ```
/// use keywindow::{EventTimeKeyWindows, KeyWindowResult, SlidingGeometry};
/// use window_core::{NumericAggregate, TimeWindow};
/// let mut kw = EventTimeKeyWindows::new(SlidingGeometry::new(4, 1, 0)?, NumericAggregate::Max, 0);
/// let mut out = Vec::new();
/// assert!(kw.process_element("a", 3.0, 5).is_none());
/// assert!(kw.process_element("a", 9.0, 2).is_none()); // out of order, buffered
/// kw.process_watermark(i64::MAX, &mut out);
/// assert_eq!(out[0], ("a", TimeWindow::new(-1, 3), KeyWindowResult::Value(Some(9.0))));
/// # Ok::<(), keywindow::KeyWindowError>(())
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
            late_elements: 0,
        }
    }

    /// Buffers an element; returns it back as late when `timestamp + allowed_lateness <=
    /// watermark`.
    #[inline]
    pub fn process_element(
        &mut self,
        key: K,
        value: T,
        timestamp: Timestamp,
    ) -> Option<LateElement<K, T>> {
        if time::add(timestamp, self.allowed_lateness) <= self.watermark {
            self.late_elements += 1;
            return Some(LateElement {
                key,
                value,
                timestamp,
                watermark: self.watermark,
            });
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

    /// Advances the watermark (ignored unless later than the current one): releases buffered
    /// elements up to `watermark - allowed_lateness` in event-time order (stable for equal
    /// timestamps) and fires the windows that time reached.
    #[inline]
    pub fn process_watermark<O>(&mut self, watermark: Timestamp, out: &mut O)
    where
        O: KeyWindowOutput<K, P::Out>,
    {
        if watermark > self.watermark {
            self.release(watermark, out);
        }
    }

    /// Takes the later watermark `watermark`: releases what it passed and advances the
    /// processor's time (see [`EventTime::process_watermark`]).
    fn release<O>(&mut self, watermark: Timestamp, out: &mut O)
    where
        O: KeyWindowOutput<K, P::Out>,
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

    /// The current watermark.
    pub fn current_watermark(&self) -> Timestamp {
        self.watermark
    }

    /// Elements waiting in the buffer.
    pub fn buffered(&self) -> usize {
        self.in_order.len() + self.buffer.len()
    }

    /// Late elements handed back so far.
    pub fn late_elements(&self) -> u64 {
        self.late_elements
    }

    /// The processor's counters.
    pub fn metrics(&self) -> KeyWindowMetrics {
        self.inner.metrics()
    }

    /// Windows (or slices) currently held.
    pub fn live_windows(&self) -> usize {
        self.inner.live_windows()
    }

    /// The wrapped processor.
    pub fn inner(&self) -> &P {
        &self.inner
    }
}
