//! Flink's `DeltaTrigger`: fires when an element differs from the last fired one by more than a
//! threshold.

use std::fmt;
use std::sync::Arc;

use window_core::{Timestamp, TriggerResult, Window};

use crate::{Trigger, TriggerContext};

/// The distance between two elements, for [`DeltaTrigger`] and the delta evictor
/// (Flink's `DeltaFunction`): `delta(old, new)`.
pub type DeltaFunction<T> = Arc<dyn Fn(&T, &T) -> f64 + Send + Sync>;

/// Fires when an element's delta to the element of the last firing exceeds a threshold
/// (Flink's `DeltaTrigger`).
///
/// The first element of a window only becomes the reference. A later element fires when
/// `delta(reference, element) > threshold` (strictly) and becomes the new reference. It cannot
/// merge, so it is rejected with session windows.
#[derive(Clone)]
pub struct DeltaTrigger<T> {
    threshold: f64,
    delta: DeltaFunction<T>,
}

impl<T> fmt::Debug for DeltaTrigger<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeltaTrigger")
            .field("threshold", &self.threshold)
            .finish_non_exhaustive()
    }
}

impl<T> DeltaTrigger<T> {
    /// A delta trigger with `threshold` and the distance function `delta(old, new)`.
    #[must_use]
    pub fn of(threshold: f64, delta: DeltaFunction<T>) -> Self {
        Self { threshold, delta }
    }

    /// The threshold the delta must exceed.
    #[must_use]
    pub fn threshold(&self) -> f64 {
        self.threshold
    }
}

impl<T: Clone + fmt::Debug, W: Window> Trigger<T, W> for DeltaTrigger<T> {
    type State = Option<T>;

    fn on_element<C: TriggerContext>(
        &self,
        element: &T,
        _timestamp: Timestamp,
        _window: &W,
        last: &mut Option<T>,
        _ctx: &mut C,
    ) -> TriggerResult {
        match last {
            None => {
                *last = Some(element.clone());
                TriggerResult::Continue
            }
            Some(old) => {
                if (self.delta)(old, element) > self.threshold {
                    *last = Some(element.clone());
                    TriggerResult::Fire
                } else {
                    TriggerResult::Continue
                }
            }
        }
    }

    fn on_event_time<C: TriggerContext>(
        &self,
        _time: Timestamp,
        _window: &W,
        _last: &mut Option<T>,
        _ctx: &mut C,
    ) -> TriggerResult {
        TriggerResult::Continue
    }

    fn on_processing_time<C: TriggerContext>(
        &self,
        _time: Timestamp,
        _window: &W,
        _last: &mut Option<T>,
        _ctx: &mut C,
    ) -> TriggerResult {
        TriggerResult::Continue
    }

    fn clear<C: TriggerContext>(&self, _window: &W, last: &mut Option<T>, _ctx: &mut C) {
        *last = None;
    }

    fn describe(&self) -> String {
        format!("DeltaTrigger(threshold {})", self.threshold)
    }
}
