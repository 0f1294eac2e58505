//! Event time for the in-order sliding-window processors: a reordering buffer in front of them.
//!
//! Key windows and sliced windows need their elements in time order. In event time elements
//! arrive out of order, so [`EventTime`] holds them in a buffer ordered by event time and
//! releases them, in order, once the watermark (less the allowed lateness) passes them; then it
//! advances the processor's time to the same point, which fires every window whose max timestamp
//! it reached.
//!
//! A processor that takes elements behind the watermark ([`InOrderWindows::accept_behind`]:
//! key windows and sliced windows, in both output modes) gets its time moved to the watermark
//! itself, so windows fire on time, and every element behind it, at once: it adds each to the
//! windows that are not cleaned up and emits what changes (sliced windows emitting every window:
//! Flink's late firings; key windows and sliced windows emitting changes: the changes the element
//! causes, `docs/keywindow.md`, "Event time"), and hands back the late ones (every window holding
//! them cleaned up). Late elements are counted, and sent to the side output when late data goes
//! there ([`LateDataPolicy::SideOutput`]).
//!
//! A processor that does not (the trait's default) gets time `watermark - allowed_lateness`: an
//! element at or behind that point when it arrives (`timestamp + allowed_lateness <= watermark`,
//! Flink's element-lateness rule) is late, and its windows fire once when the watermark reaches
//! `max_timestamp + A`, with everything that arrived in time.

use std::collections::{BTreeMap, VecDeque};
use std::hash::Hash;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use window_core::{
    time, AggregateFunction, HeldState, LateDataPolicy, LiveState, Rejected, SnapshotError,
    TimeWindow, Timestamp, WindowComputation, WindowMetrics, WindowOutput, MAP_ENTRY_OVERHEAD,
};

use crate::sliced::{EmitMode, SlicedWindows};
use crate::snapshot::{self, Codec, Header};
use crate::{
    check_timestamp, InOrderSnapshot, InOrderWindows, KeyWindowMetrics, KeyWindows, SlidingGeometry,
};

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
    /// The processor takes elements behind the watermark ([`InOrderWindows::accept_behind`]):
    /// its time is the watermark, and only elements whose windows are all cleaned up are late.
    behind: bool,
    /// How the state is written to snapshots, once [`EventTime::with_snapshots`] chose it.
    codec: Option<Codec<Self>>,
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
    pub fn wrap(mut inner: P, allowed_lateness: i64) -> Self {
        let behind = inner.accept_behind(allowed_lateness.max(0));
        Self {
            inner,
            behind,
            in_order: VecDeque::new(),
            buffer: BTreeMap::new(),
            sequence: 0,
            watermark: Timestamp::MIN,
            allowed_lateness: allowed_lateness.max(0),
            late_data: LateDataPolicy::Drop,
            late_elements: 0,
            codec: None,
        }
    }

    /// Sends late elements to the side output ([`WindowOutput::late`]) or only counts them.
    #[must_use]
    pub fn with_late_data(mut self, late_data: LateDataPolicy) -> Self {
        self.late_data = late_data;
        self
    }

    /// Buffers an element, or counts it and returns it as late. A processor that takes
    /// elements behind the watermark gets those at once, and says which are late; otherwise an
    /// element is late when `timestamp + allowed_lateness <= watermark`.
    #[inline]
    fn offer<O>(&mut self, key: K, value: T, timestamp: Timestamp, out: &mut O) -> Option<(K, T)>
    where
        O: WindowOutput<K, TimeWindow, T, P::Out> + ?Sized,
    {
        if self.behind {
            if timestamp <= self.watermark {
                return self.offer_behind(key, value, timestamp, out);
            }
        } else if time::add(timestamp, self.allowed_lateness) <= self.watermark {
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

    /// An element behind the watermark, to a processor that takes those.
    #[inline(never)]
    fn offer_behind<O>(
        &mut self,
        key: K,
        value: T,
        timestamp: Timestamp,
        out: &mut O,
    ) -> Option<(K, T)>
    where
        O: WindowOutput<K, TimeWindow, T, P::Out> + ?Sized,
    {
        let late = self.inner.process_behind(key, value, timestamp, out);
        if late.is_some() {
            self.late_elements += 1;
        }
        late
    }

    /// [`WindowComputation::process_element`] to an output of any type.
    #[inline]
    fn element_to<O>(
        &mut self,
        key: K,
        element: T,
        timestamp: Timestamp,
        out: &mut O,
    ) -> Result<(), Rejected<K, T>>
    where
        O: WindowOutput<K, TimeWindow, T, P::Out> + ?Sized,
    {
        if let Err(e) = check_timestamp(self.inner.geometry(), timestamp) {
            return Err(Rejected::new(e, key, element));
        }
        if let Some((key, element)) = self.offer(key, element, timestamp, out) {
            if self.late_data == LateDataPolicy::SideOutput {
                out.late(key, timestamp, element, self.watermark);
            }
        }
        Ok(())
    }

    /// [`WindowComputation::process_watermark`] to an output of any type.
    #[inline]
    fn watermark_to<O>(&mut self, watermark: Timestamp, out: &mut O) -> bool
    where
        O: WindowOutput<K, TimeWindow, T, P::Out> + ?Sized,
    {
        if watermark > self.watermark {
            self.release(watermark, out);
            true
        } else {
            false
        }
    }

    /// Takes the later watermark `watermark`: releases what it passed and advances the
    /// processor's time (see [`EventTime::process_watermark`]).
    fn release<O>(&mut self, watermark: Timestamp, out: &mut O)
    where
        O: WindowOutput<K, TimeWindow, T, P::Out> + ?Sized,
    {
        self.watermark = watermark;
        let release_to = if self.behind {
            self.inner.announce_watermark(watermark);
            watermark
        } else {
            time::sub(watermark, self.allowed_lateness)
        };
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
        self.element_to(key, element, timestamp, out)
    }

    #[inline]
    fn process_watermark(
        &mut self,
        watermark: Timestamp,
        out: &mut dyn WindowOutput<K, TimeWindow, T, P::Out>,
    ) -> bool {
        self.watermark_to(watermark, out)
    }

    fn process_element_to<O>(
        &mut self,
        key: K,
        element: T,
        timestamp: Timestamp,
        out: &mut O,
    ) -> Result<(), Rejected<K, T>>
    where
        O: WindowOutput<K, TimeWindow, T, P::Out>,
    {
        self.element_to(key, element, timestamp, out)
    }

    fn process_watermark_to<O>(&mut self, watermark: Timestamp, out: &mut O) -> bool
    where
        O: WindowOutput<K, TimeWindow, T, P::Out>,
    {
        self.watermark_to(watermark, out)
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

    /// The earliest of the processor's next firing and the earliest buffered element (whose
    /// release may make a window due), as a watermark: the processor's time is the watermark,
    /// or the watermark less the allowed lateness.
    fn next_event_time_timer(&self) -> Option<Timestamp> {
        let buffered = match (self.in_order.front(), self.buffer.first_key_value()) {
            (Some(a), Some((b, _))) => Some(a.0.min(b.0)),
            (Some(a), None) => Some(a.0),
            (None, b) => b.map(|(b, _)| b.0),
        };
        let first = match (buffered, self.inner.next_fire()) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        if self.behind || first == Timestamp::MIN {
            Some(first)
        } else {
            Some(time::add(first, self.allowed_lateness))
        }
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

    /// The processor's, and the elements in the reordering buffer (bytes: each entry of the
    /// buffer with its map allowance).
    fn held_state(&self) -> HeldState {
        let mut held = self.inner.held();
        let buffered = self.buffered();
        let entry = size_of::<(Timestamp, u64, K, T)>() + MAP_ENTRY_OVERHEAD;
        held.elements += buffered;
        held.bytes += buffered * entry;
        held
    }

    /// Writes the buffered elements, the watermark and the late count, then the processor's
    /// state ([`EventTime::with_snapshots`]).
    ///
    /// # Errors
    /// [`SnapshotError::Unsupported`] when built without [`EventTime::with_snapshots`].
    fn snapshot(&self, out: &mut Vec<u8>) -> Result<(), SnapshotError> {
        match self.codec {
            Some(codec) => (codec.snapshot)(self, out),
            None => Err(snapshot::unsupported(KIND)),
        }
    }

    /// Loads a snapshot written by [`WindowComputation::snapshot`].
    ///
    /// # Errors
    /// [`SnapshotError::Invalid`] for torn bytes, a snapshot of another computation, or one
    /// of another lateness, late-data policy, processor, geometry or emit mode (nothing
    /// changes then); [`SnapshotError::Unsupported`] as for `snapshot`.
    fn restore(&mut self, snapshot: &[u8]) -> Result<(), SnapshotError> {
        match self.codec {
            Some(codec) => (codec.restore)(self, snapshot),
            None => Err(snapshot::unsupported(KIND)),
        }
    }
}

const KIND: &str = "keywindow::EventTime";

/// The wrapper's part of a snapshot: the buffered elements as they wait (both buffers, with
/// their arrival numbers), the next arrival number, the watermark and the late count.
#[derive(Serialize)]
struct BufferRef<'a, K, T> {
    in_order: &'a VecDeque<(Timestamp, u64, K, T)>,
    buffer: &'a BTreeMap<(Timestamp, u64), (K, T)>,
    sequence: u64,
    watermark: Timestamp,
    late_elements: u64,
}

#[derive(Deserialize)]
struct BufferOwned<K, T> {
    in_order: VecDeque<(Timestamp, u64, K, T)>,
    buffer: BTreeMap<(Timestamp, u64), (K, T)>,
    sequence: u64,
    watermark: Timestamp,
    late_elements: u64,
}

impl<P, K, T> EventTime<P, K, T>
where
    P: InOrderSnapshot<K, T>,
    K: Serialize + DeserializeOwned,
    T: Serialize + DeserializeOwned,
{
    /// Lets the computation write its state to snapshots and load it back
    /// ([`WindowComputation::snapshot`], [`WindowComputation::restore`]): the buffered
    /// elements, the watermark and the late count, then the processor's keys, windows or
    /// slices, timers and counters. Keys, elements and accumulators must be serde types, as
    /// Flink's checkpointed state needs serializers; without this call, snapshots are
    /// [`SnapshotError::Unsupported`].
    #[must_use]
    pub fn with_snapshots(mut self) -> Self {
        self.codec = Some(Codec {
            snapshot: Self::write_snapshot,
            restore: Self::read_snapshot,
        });
        self
    }

    fn header(&self) -> Header {
        let late = match self.late_data {
            LateDataPolicy::Drop => "dropped",
            LateDataPolicy::SideOutput => "to the side output",
        };
        Header::new(
            KIND,
            format!(
                "allowed lateness {} ms, late elements {late}",
                self.allowed_lateness
            ),
        )
    }

    fn write_snapshot(&self, out: &mut Vec<u8>) -> Result<(), SnapshotError> {
        let len = out.len();
        let state = BufferRef {
            in_order: &self.in_order,
            buffer: &self.buffer,
            sequence: self.sequence,
            watermark: self.watermark,
            late_elements: self.late_elements,
        };
        snapshot::write(out, &self.header(), &state)?;
        self.inner.snapshot(out).inspect_err(|_| out.truncate(len))
    }

    fn read_snapshot(&mut self, bytes: &[u8]) -> Result<(), SnapshotError> {
        let (state, rest): (BufferOwned<K, T>, _) = snapshot::read(bytes, &self.header())?;
        let ordered = state
            .in_order
            .iter()
            .zip(state.in_order.iter().skip(1))
            .all(|(a, b)| (a.0, a.1) < (b.0, b.1));
        let numbered = state
            .in_order
            .iter()
            .map(|e| e.1)
            .chain(state.buffer.keys().map(|k| k.1));
        if !ordered || numbered.into_iter().any(|n| n >= state.sequence) {
            return Err(SnapshotError::Invalid(format!(
                "{KIND} snapshot torn: buffered elements out of order"
            )));
        }
        // The processor's part last: it is loaded whole or not at all.
        self.inner.restore(rest)?;
        self.in_order = state.in_order;
        self.buffer = state.buffer;
        self.sequence = state.sequence;
        self.watermark = state.watermark;
        self.late_elements = state.late_elements;
        Ok(())
    }
}
