//! Processing time for the in-order sliding-window processors: the wall clock stamps each
//! element, so elements arrive in time order by construction (the paper's setting).
//!
//! [`ProcessingTime`] keeps the clock's last reading; an element is processed at that time, and
//! advancing the clock fires every window whose max timestamp is before the new reading (as
//! Flink's system time service, which runs a timer at `t` once the clock has passed `t`).
//! Watermarks mean nothing here and are ignored.

use std::marker::PhantomData;

use window_core::{
    LiveState, Rejected, TimeWindow, Timestamp, WindowComputation, WindowMetrics, WindowOutput,
};

use crate::{check_timestamp, InOrderWindows, KeyWindows, SlicedWindows};

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
}
