//! [`SlicedWindows`] as an [`InOrderWindows`] processor, for the event-time and
//! processing-time wrappers.

use std::hash::Hash;

use window_core::{AggregateFunction, HeldState, TimeWindow, Timestamp, WindowOutput};

use super::SlicedWindows;
use crate::{InOrderWindows, KeyWindowError, KeyWindowMetrics, SlidingGeometry};

impl<K, T, F> InOrderWindows<K, T> for SlicedWindows<K, T, F>
where
    K: Hash + Eq + Clone,
    F: AggregateFunction<T>,
{
    type Out = F::Out;

    #[inline]
    fn process<O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized>(
        &mut self,
        key: K,
        value: T,
        time: Timestamp,
        out: &mut O,
    ) -> Result<(), KeyWindowError> {
        SlicedWindows::process(self, key, value, time, out)
    }

    #[inline]
    fn advance_time<O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized>(
        &mut self,
        time: Timestamp,
        out: &mut O,
    ) {
        SlicedWindows::advance_time(self, time, out);
    }

    fn metrics(&self) -> KeyWindowMetrics {
        SlicedWindows::metrics(self)
    }

    fn live_windows(&self) -> usize {
        SlicedWindows::live_slices(self) + self.retained_windows
    }

    fn live_keys(&self) -> usize {
        SlicedWindows::live_keys(self)
    }

    fn held(&self) -> HeldState {
        SlicedWindows::held(self)
    }

    fn geometry(&self) -> SlidingGeometry {
        self.geometry
    }

    fn current_time(&self) -> Timestamp {
        self.time
    }

    /// The wake time: `advance_time` does nothing before it (`i64::MAX`: nothing is due).
    fn next_fire(&self) -> Option<Timestamp> {
        Some(self.wake)
    }

    fn announce_watermark(&mut self, watermark: Timestamp) {
        if self.lateness.is_some() {
            self.watermark = Some(watermark);
        }
    }

    fn accept_behind(&mut self, allowed_lateness: i64) -> bool {
        SlicedWindows::accept_behind(self, allowed_lateness)
    }

    fn process_behind<O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized>(
        &mut self,
        key: K,
        value: T,
        time: Timestamp,
        out: &mut O,
    ) -> Option<(K, T)> {
        self.behind(key, value, time, out)
    }
}
