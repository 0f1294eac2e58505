//! Windows and trigger results.
//!
//! A window is identified by its bounds; the engine keeps state per (key, window). Two window
//! types exist, as in Flink: [`TimeWindow`], a half-open interval `[start, end)` of event or
//! processing time, and [`GlobalWindow`], the single window that holds everything. Every window
//! has a *max timestamp*, the last millisecond that belongs to it: an event-time trigger fires a
//! window when the watermark reaches it, and cleanup happens at `max_timestamp + allowed
//! lateness`.

use std::fmt::Debug;
use std::hash::Hash;

use crate::time::Timestamp;

/// A window: a bucket of elements evaluated together (Flink's `Window`).
///
/// Implementors are small values (`Copy` in practice) that identify the window; state lives
/// elsewhere, keyed by `(key, window)`.
pub trait Window: Copy + Eq + Hash + Ord + Debug {
    /// The largest timestamp (ms) that still belongs to this window. For a [`TimeWindow`] it is
    /// `end - 1`; for the [`GlobalWindow`] it is `i64::MAX`.
    fn max_timestamp(&self) -> Timestamp;

    /// `[start, end)` in ms for a time window, `None` for the global window. Used by sinks to
    /// print `window_start` and `window_end`.
    fn bounds(&self) -> Option<(Timestamp, Timestamp)>;
}

/// A half-open time interval `[start, end)` in milliseconds (Flink's `TimeWindow`).
///
/// # Examples
/// ```
/// use window_core::{TimeWindow, Window};
/// let w = TimeWindow::new(0, 10);
/// assert_eq!(w.max_timestamp(), 9);
/// assert!(w.intersects(&TimeWindow::new(10, 20))); // touching windows intersect, as in Flink
/// assert_eq!(w.cover(&TimeWindow::new(5, 15)), TimeWindow::new(0, 15));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TimeWindow {
    start: Timestamp,
    end: Timestamp,
}

impl TimeWindow {
    /// The window `[start, end)`. `end` is exclusive.
    #[must_use]
    pub const fn new(start: Timestamp, end: Timestamp) -> Self {
        Self { start, end }
    }

    /// Inclusive start in ms.
    #[must_use]
    pub const fn start(&self) -> Timestamp {
        self.start
    }

    /// Exclusive end in ms.
    #[must_use]
    pub const fn end(&self) -> Timestamp {
        self.end
    }

    /// Whether the two windows overlap or touch (`[0,5)` and `[5,10)` intersect), which is the
    /// condition under which session windows merge (Flink's `TimeWindow.intersects`).
    #[must_use]
    pub fn intersects(&self, other: &TimeWindow) -> bool {
        self.start <= other.end && self.end >= other.start
    }

    /// The smallest window that contains both (Flink's `TimeWindow.cover`).
    #[must_use]
    pub fn cover(&self, other: &TimeWindow) -> TimeWindow {
        TimeWindow::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// The start of the window of length `size` that contains `timestamp`, for windows aligned to
    /// `offset` (Flink's `TimeWindow.getWindowStartWithOffset`).
    ///
    /// The result is the largest `s <= timestamp` with `s ≡ offset (mod size)`. It is right for
    /// negative timestamps and negative offsets (floor, not truncation) and never overflows: a
    /// start that would fall below `i64::MIN` is clamped to `i64::MIN`.
    ///
    /// # Panics
    /// Panics if `size <= 0`; assigners validate their size at construction.
    ///
    /// # Examples
    /// ```
    /// use window_core::TimeWindow;
    /// assert_eq!(TimeWindow::window_start_with_offset(7, 0, 5), 5);
    /// assert_eq!(TimeWindow::window_start_with_offset(-1, 0, 5), -5);
    /// assert_eq!(TimeWindow::window_start_with_offset(6, -3, 10), -3);
    /// ```
    #[must_use]
    pub fn window_start_with_offset(timestamp: Timestamp, offset: i64, size: i64) -> Timestamp {
        assert!(size > 0, "window size must be positive, got {size}");
        // Fast path in i64; 128-bit arithmetic only where i64 would overflow.
        if let Some(shifted) = timestamp.checked_sub(offset) {
            if let Some(start) = timestamp.checked_sub(shifted.rem_euclid(size)) {
                return start;
            }
        }
        let ts = i128::from(timestamp);
        let remainder = (ts - i128::from(offset)).rem_euclid(i128::from(size));
        clamp_i64(ts - remainder)
    }
}

/// Clamps an `i128` into the `i64` range.
fn clamp_i64(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

impl Window for TimeWindow {
    fn max_timestamp(&self) -> Timestamp {
        self.end.saturating_sub(1)
    }

    fn bounds(&self) -> Option<(Timestamp, Timestamp)> {
        Some((self.start, self.end))
    }
}

/// The single window that holds every element of a key (Flink's `GlobalWindow`).
///
/// Its max timestamp is `i64::MAX`, so it is never cleaned up and an event-time trigger fires it
/// only at the final `i64::MAX` watermark.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GlobalWindow;

impl Window for GlobalWindow {
    fn max_timestamp(&self) -> Timestamp {
        Timestamp::MAX
    }

    fn bounds(&self) -> Option<(Timestamp, Timestamp)> {
        None
    }
}

/// A time window or the global window: the window type of code that chooses the window
/// assigner at run time (a job read from a command line or a file), so that results of either
/// kind have one type.
///
/// # Examples
/// ```
/// use window_core::{AnyWindow, GlobalWindow, TimeWindow, Window};
/// assert_eq!(AnyWindow::from(TimeWindow::new(0, 10)).bounds(), Some((0, 10)));
/// assert_eq!(AnyWindow::from(GlobalWindow).max_timestamp(), i64::MAX);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum AnyWindow {
    /// A [`TimeWindow`].
    Time(TimeWindow),
    /// The [`GlobalWindow`].
    Global,
}

impl Window for AnyWindow {
    fn max_timestamp(&self) -> Timestamp {
        match self {
            AnyWindow::Time(w) => w.max_timestamp(),
            AnyWindow::Global => GlobalWindow.max_timestamp(),
        }
    }

    fn bounds(&self) -> Option<(Timestamp, Timestamp)> {
        match self {
            AnyWindow::Time(w) => w.bounds(),
            AnyWindow::Global => None,
        }
    }
}

impl From<TimeWindow> for AnyWindow {
    fn from(w: TimeWindow) -> Self {
        AnyWindow::Time(w)
    }
}

impl From<GlobalWindow> for AnyWindow {
    fn from(_: GlobalWindow) -> Self {
        AnyWindow::Global
    }
}

/// What a trigger tells the window operator to do with a window (Flink's `TriggerResult`).
///
/// *Fire* evaluates the window function on the current contents and emits the result; *purge*
/// clears the contents (not the trigger's own state).
#[must_use]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum TriggerResult {
    /// Do nothing.
    Continue,
    /// Emit the window's result and keep its contents.
    Fire,
    /// Clear the window's contents without emitting.
    Purge,
    /// Emit the window's result, then clear its contents.
    FireAndPurge,
}

impl TriggerResult {
    /// Whether the window is to be evaluated and emitted.
    #[must_use]
    pub const fn is_fire(self) -> bool {
        matches!(self, TriggerResult::Fire | TriggerResult::FireAndPurge)
    }

    /// Whether the window's contents are to be cleared.
    #[must_use]
    pub const fn is_purge(self) -> bool {
        matches!(self, TriggerResult::Purge | TriggerResult::FireAndPurge)
    }

    /// The result with both flags set from `fire` and `purge`.
    pub const fn from_flags(fire: bool, purge: bool) -> Self {
        match (fire, purge) {
            (false, false) => TriggerResult::Continue,
            (true, false) => TriggerResult::Fire,
            (false, true) => TriggerResult::Purge,
            (true, true) => TriggerResult::FireAndPurge,
        }
    }
}

/// A value with its event timestamp in ms (Flink's `TimestampedValue`): what a full-window
/// function and an evictor see.
#[derive(Clone, Copy, PartialEq, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TimestampedValue<T> {
    /// Event timestamp in ms.
    pub timestamp: Timestamp,
    /// The element.
    pub value: T,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_start_floors_negative_timestamps_and_offsets() {
        // Flink scenario B03: tumbling size 10 offset -3.
        assert_eq!(TimeWindow::window_start_with_offset(0, -3, 10), -3);
        assert_eq!(TimeWindow::window_start_with_offset(6, -3, 10), -3);
        assert_eq!(TimeWindow::window_start_with_offset(7, -3, 10), 7);
        assert_eq!(TimeWindow::window_start_with_offset(-1, 0, 10), -10);
        assert_eq!(TimeWindow::window_start_with_offset(-10, 0, 10), -10);
        assert_eq!(TimeWindow::window_start_with_offset(-11, 2, 10), -18);
        assert_eq!(
            TimeWindow::window_start_with_offset(i64::MIN, 0, 10),
            i64::MIN
        );
        assert_eq!(
            TimeWindow::window_start_with_offset(i64::MAX, 0, 10),
            i64::MAX - 7
        );
    }

    #[test]
    fn intersects_counts_touching_and_cover_spans_both() {
        let a = TimeWindow::new(0, 10);
        assert!(a.intersects(&TimeWindow::new(10, 20)));
        assert!(!a.intersects(&TimeWindow::new(11, 20)));
        assert!(a.intersects(&TimeWindow::new(-5, 0)));
        assert_eq!(a.cover(&TimeWindow::new(-5, 3)), TimeWindow::new(-5, 10));
    }

    #[test]
    fn max_timestamp_saturates() {
        assert_eq!(TimeWindow::new(0, 10).max_timestamp(), 9);
        assert_eq!(
            TimeWindow::new(i64::MIN, i64::MIN).max_timestamp(),
            i64::MIN
        );
        assert_eq!(GlobalWindow.max_timestamp(), i64::MAX);
        assert_eq!(GlobalWindow.bounds(), None);
    }

    #[test]
    fn trigger_result_flags() {
        assert!(TriggerResult::Fire.is_fire() && !TriggerResult::Fire.is_purge());
        assert!(TriggerResult::FireAndPurge.is_fire() && TriggerResult::FireAndPurge.is_purge());
        assert!(!TriggerResult::Purge.is_fire() && TriggerResult::Purge.is_purge());
        assert!(!TriggerResult::Continue.is_fire() && !TriggerResult::Continue.is_purge());
        assert_eq!(
            TriggerResult::from_flags(true, true),
            TriggerResult::FireAndPurge
        );
    }
}
