//! Processing time for the in-order sliding-window processors: the wall clock stamps each
//! element, so elements arrive in time order by construction (the paper's setting).
//!
//! [`ProcessingTime`] keeps the clock's last reading; an element is processed at that time, and
//! advancing the clock fires every window whose max timestamp is before the new reading (as
//! Flink's system time service, which runs a timer at `t` once the clock has passed `t`).
//! Watermarks mean nothing here and are ignored.

use std::marker::PhantomData;

use window_core::{
    HeldState, LiveState, Rejected, SnapshotError, TimeWindow, Timestamp, WindowComputation,
    WindowMetrics, WindowOutput,
};

use crate::snapshot::{self, Codec, Header};
use crate::{check_timestamp, InOrderSnapshot, InOrderWindows, KeyWindows, SlicedWindows};

/// An in-order processor `P` driven by the processing-time clock.
///
/// # Examples
/// ```
/// use keywindow::{ProcessingTime, SlicedWindows, EmitMode, SlidingGeometry};
/// use window_core::{NumericAggregate, WindowComputation};
/// let sliced = SlicedWindows::new(SlidingGeometry::new(10, 5, 0)?, NumericAggregate::Sum, EmitMode::AllWindows);
/// let mut op = ProcessingTime::wrap(sliced);
/// let mut out = Vec::new();
/// op.advance_wall_clock(3, &mut out);
/// op.process_element("a", 2.0, 0, &mut out)?; // at processing time 3
/// op.advance_wall_clock(10, &mut out); // the clock passed 9: [0, 10) fires
/// assert_eq!(out.len(), 2); // [-5, 5) and [0, 10)
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ProcessingTime<P, K, T> {
    inner: P,
    clock: Timestamp,
    /// How the state is written to snapshots, once [`ProcessingTime::with_snapshots`] chose it.
    codec: Option<Codec<Self>>,
    _types: PhantomData<fn(K, T)>,
}

/// Key windows in processing time (the paper's setting).
pub type ProcessingTimeKeyWindows<K, T, F> = ProcessingTime<KeyWindows<K, T, F>, K, T>;

/// Sliced windows in processing time.
pub type ProcessingTimeSlicedWindows<K, T, F> = ProcessingTime<SlicedWindows<K, T, F>, K, T>;

impl<P: std::fmt::Debug, K, T> std::fmt::Debug for ProcessingTime<P, K, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessingTime")
            .field("inner", &self.inner)
            .field("clock", &self.clock)
            .finish()
    }
}

impl<P, K, T> ProcessingTime<P, K, T>
where
    P: InOrderWindows<K, T>,
{
    /// Drives `inner` by the wall clock, starting before the first reading.
    pub fn wrap(inner: P) -> Self {
        Self {
            inner,
            clock: Timestamp::MIN,
            codec: None,
            _types: PhantomData,
        }
    }

    /// The wrapped processor.
    pub fn inner(&self) -> &P {
        &self.inner
    }
}

impl<P, K, T> WindowComputation<K, T> for ProcessingTime<P, K, T>
where
    P: InOrderWindows<K, T>,
{
    type Window = TimeWindow;
    type Output = P::Out;

    /// Processes the element at the clock's last reading; `timestamp` is not used.
    ///
    /// # Errors
    /// [`Rejected`] with [`window_core::ElementError::TimestampOutOfRange`] when the clock itself is within
    /// one window of the ends of `i64` (and [`window_core::ElementError::MissingTimestamp`] before the first
    /// reading).
    fn process_element(
        &mut self,
        key: K,
        element: T,
        _timestamp: Timestamp,
        out: &mut dyn WindowOutput<K, TimeWindow, T, P::Out>,
    ) -> Result<(), Rejected<K, T>> {
        if let Err(e) = check_timestamp(self.inner.geometry(), self.clock) {
            return Err(Rejected::new(e, key, element));
        }
        // The clock never goes back and the processor's time never passes it: in order.
        let r = self.inner.process(key, element, self.clock, out);
        debug_assert!(r.is_ok(), "processing-time element out of order: {r:?}");
        Ok(())
    }

    /// Processing time: watermarks are ignored.
    fn process_watermark(
        &mut self,
        _watermark: Timestamp,
        _out: &mut dyn WindowOutput<K, TimeWindow, T, P::Out>,
    ) -> bool {
        false
    }

    fn advance_wall_clock(
        &mut self,
        now: Timestamp,
        out: &mut dyn WindowOutput<K, TimeWindow, T, P::Out>,
    ) {
        self.clock = self.clock.max(now);
        self.inner.advance_time(self.clock.saturating_sub(1), out);
    }

    fn next_processing_time_timer(&self) -> Option<Timestamp> {
        None
    }

    fn current_watermark(&self) -> Timestamp {
        Timestamp::MIN
    }

    fn metrics(&self) -> WindowMetrics {
        self.inner.metrics().into()
    }

    fn live_state(&self) -> LiveState {
        LiveState {
            keys: self.inner.live_keys(),
            windows: self.inner.live_windows(),
            buffered: 0,
            timers: 0,
        }
    }

    fn held_state(&self) -> HeldState {
        self.inner.held()
    }

    /// Writes the clock's last reading, then the processor's state
    /// ([`ProcessingTime::with_snapshots`]).
    ///
    /// # Errors
    /// [`SnapshotError::Unsupported`] when built without [`ProcessingTime::with_snapshots`].
    fn snapshot(&self, out: &mut Vec<u8>) -> Result<(), SnapshotError> {
        match self.codec {
            Some(codec) => (codec.snapshot)(self, out),
            None => Err(snapshot::unsupported(KIND)),
        }
    }

    /// Loads a snapshot written by [`WindowComputation::snapshot`].
    ///
    /// # Errors
    /// [`SnapshotError::Invalid`] for torn bytes, a snapshot of another computation, or of
    /// another processor, geometry or emit mode (nothing changes then);
    /// [`SnapshotError::Unsupported`] as for `snapshot`.
    fn restore(&mut self, snapshot: &[u8]) -> Result<(), SnapshotError> {
        match self.codec {
            Some(codec) => (codec.restore)(self, snapshot),
            None => Err(snapshot::unsupported(KIND)),
        }
    }
}

const KIND: &str = "keywindow::ProcessingTime";

impl<P, K, T> ProcessingTime<P, K, T>
where
    P: InOrderSnapshot<K, T>,
{
    /// Lets the computation write its state to snapshots and load it back
    /// ([`WindowComputation::snapshot`], [`WindowComputation::restore`]): the clock's last
    /// reading, then the processor's keys, windows or slices, timers and counters (keys,
    /// elements and accumulators are serde types where `P` implements [`InOrderSnapshot`]).
    /// Without this call, snapshots are [`SnapshotError::Unsupported`].
    #[must_use]
    pub fn with_snapshots(mut self) -> Self {
        self.codec = Some(Codec {
            snapshot: Self::write_snapshot,
            restore: Self::read_snapshot,
        });
        self
    }

    fn write_snapshot(&self, out: &mut Vec<u8>) -> Result<(), SnapshotError> {
        let len = out.len();
        snapshot::write(out, &Header::new(KIND, String::new()), &self.clock)?;
        self.inner.snapshot(out).inspect_err(|_| out.truncate(len))
    }

    fn read_snapshot(&mut self, bytes: &[u8]) -> Result<(), SnapshotError> {
        let (clock, rest): (Timestamp, _) =
            snapshot::read(bytes, &Header::new(KIND, String::new()))?;
        // The processor's part last: it is loaded whole or not at all.
        self.inner.restore(rest)?;
        self.clock = clock;
        Ok(())
    }
}
