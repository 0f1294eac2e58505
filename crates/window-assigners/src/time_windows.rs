//! Tumbling and sliding windows: fixed-size windows aligned to the epoch plus an offset.

use window_core::{TimeWindow, Timestamp};
use window_triggers::TimeTrigger;

use crate::{
    domain_time, positive, time_trigger, AssignerError, DefaultTrigger, ElementError, Result,
    TimeDomain, WindowAssigner, MAX_WINDOWS_PER_ELEMENT,
};

/// Non-overlapping windows of a fixed size (Flink's `TumblingEventTimeWindows` and
/// `TumblingProcessingTimeWindows`).
///
/// An element at `t` goes to `[s, s + size)` with `s = t - (t - offset) mod size` (floor).
///
/// # Examples
/// ```
/// use window_assigners::{TimeDomain, TumblingWindows, WindowAssigner};
/// use window_core::TimeWindow;
/// let w = TumblingWindows::new(10, -3, TimeDomain::EventTime)?;
/// let mut out = Vec::new();
/// WindowAssigner::<f64>::assign_windows(&w, &0.0, 7, 0, &mut out)?;
/// assert_eq!(out, [TimeWindow::new(7, 17)]);
/// assert!(TumblingWindows::new(10, 10, TimeDomain::EventTime).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct TumblingWindows {
    size: i64,
    offset: i64,
    domain: TimeDomain,
}

impl TumblingWindows {
    /// Tumbling windows of `size` ms shifted by `offset` ms.
    ///
    /// # Errors
    /// `size <= 0`, or `abs(offset) >= size`.
    pub fn new(size: i64, offset: i64, domain: TimeDomain) -> Result<Self> {
        positive("tumbling", "window size", size)?;
        if offset.unsigned_abs() >= size.unsigned_abs() {
            return Err(AssignerError::OffsetOutOfRange {
                kind: "tumbling",
                offset,
                bound_name: "size",
                bound: size,
            });
        }
        Ok(Self {
            size,
            offset,
            domain,
        })
    }

    /// Size in ms.
    #[must_use]
    pub fn size(&self) -> i64 {
        self.size
    }

    /// Offset in ms.
    #[must_use]
    pub fn offset(&self) -> i64 {
        self.offset
    }
}

impl DefaultTrigger for TumblingWindows {
    type Trigger = TimeTrigger;

    /// [`TimeTrigger`] of the assigner's domain (Flink's `EventTimeTrigger` or
    /// `ProcessingTimeTrigger`).
    fn default_trigger(&self) -> TimeTrigger {
        time_trigger(self.domain)
    }
}

impl<T> WindowAssigner<T> for TumblingWindows {
    type Window = TimeWindow;

    fn assign_windows(
        &self,
        _element: &T,
        timestamp: Timestamp,
        processing_time: Timestamp,
        out: &mut Vec<TimeWindow>,
    ) -> std::result::Result<(), ElementError> {
        let t = domain_time(self.domain, timestamp, processing_time)?;
        let start = TimeWindow::window_start_with_offset(t, self.offset, self.size);
        out.push(TimeWindow::new(start, start.saturating_add(self.size)));
        Ok(())
    }

    fn is_event_time(&self) -> bool {
        self.domain == TimeDomain::EventTime
    }

    fn describe(&self) -> String {
        format!("tumbling({} ms, offset {} ms)", self.size, self.offset)
    }
}

/// Overlapping windows of a fixed size that start every `slide` ms (Flink's
/// `SlidingEventTimeWindows` and `SlidingProcessingTimeWindows`).
///
/// An element at `t` goes to every `[s, s + size)` with `s ≡ offset (mod slide)` and
/// `t - size < s <= t`, listed by descending start as Flink lists them. With `slide > size`
/// some elements fall in a gap and get no window.
///
/// # Examples
/// ```
/// use window_assigners::{SlidingWindows, TimeDomain, WindowAssigner};
/// use window_core::TimeWindow;
/// let w = SlidingWindows::new(10_000, 5_000, 0, TimeDomain::EventTime)?;
/// let mut out = Vec::new();
/// WindowAssigner::<f64>::assign_windows(&w, &0.0, 12_000, 0, &mut out)?;
/// assert_eq!(out, [TimeWindow::new(10_000, 20_000), TimeWindow::new(5_000, 15_000)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SlidingWindows {
    size: i64,
    slide: i64,
    offset: i64,
    domain: TimeDomain,
}

impl SlidingWindows {
    /// Sliding windows of `size` ms every `slide` ms, shifted by `offset` ms.
    ///
    /// # Errors
    /// `size <= 0`, `slide <= 0`, `abs(offset) >= slide`, or more than
    /// [`MAX_WINDOWS_PER_ELEMENT`] windows per element.
    pub fn new(size: i64, slide: i64, offset: i64, domain: TimeDomain) -> Result<Self> {
        positive("sliding", "window size", size)?;
        positive("sliding", "slide", slide)?;
        if offset.unsigned_abs() >= slide.unsigned_abs() {
            return Err(AssignerError::OffsetOutOfRange {
                kind: "sliding",
                offset,
                bound_name: "slide",
                bound: slide,
            });
        }
        let per_element = crate::windows_per_element(size, slide);
        if per_element > MAX_WINDOWS_PER_ELEMENT {
            return Err(AssignerError::TooManyWindows {
                size,
                slide,
                per_element,
            });
        }
        Ok(Self {
            size,
            slide,
            offset,
            domain,
        })
    }

    /// Size in ms.
    #[must_use]
    pub fn size(&self) -> i64 {
        self.size
    }

    /// Slide in ms.
    #[must_use]
    pub fn slide(&self) -> i64 {
        self.slide
    }

    /// Offset in ms.
    #[must_use]
    pub fn offset(&self) -> i64 {
        self.offset
    }
}

impl DefaultTrigger for SlidingWindows {
    type Trigger = TimeTrigger;

    /// [`TimeTrigger`] of the assigner's domain (Flink's `EventTimeTrigger` or
    /// `ProcessingTimeTrigger`).
    fn default_trigger(&self) -> TimeTrigger {
        time_trigger(self.domain)
    }
}

impl<T> WindowAssigner<T> for SlidingWindows {
    type Window = TimeWindow;

    fn assign_windows(
        &self,
        _element: &T,
        timestamp: Timestamp,
        processing_time: Timestamp,
        out: &mut Vec<TimeWindow>,
    ) -> std::result::Result<(), ElementError> {
        let t = domain_time(self.domain, timestamp, processing_time)?;
        let last_start = TimeWindow::window_start_with_offset(t, self.offset, self.slide);
        // Work in i128 so that windows near i64::MIN/MAX neither wrap nor loop forever.
        let lower = i128::from(t) - i128::from(self.size);
        let mut start = i128::from(last_start);
        while start > lower {
            // Windows that would start before i64::MIN cannot be represented: they are not
            // assigned (near i64::MIN only).
            let Ok(s) = i64::try_from(start) else {
                break;
            };
            out.push(TimeWindow::new(s, s.saturating_add(self.size)));
            start -= i128::from(self.slide);
        }
        Ok(())
    }

    fn sliding(&self) -> Option<(i64, i64, i64)> {
        Some((self.size, self.slide, self.offset))
    }

    fn is_event_time(&self) -> bool {
        self.domain == TimeDomain::EventTime
    }

    fn describe(&self) -> String {
        format!(
            "sliding({} ms, slide {} ms, offset {} ms)",
            self.size, self.slide, self.offset
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assign<A: WindowAssigner<f64, Window = TimeWindow>>(a: &A, t: i64) -> Vec<TimeWindow> {
        let mut out = Vec::new();
        a.assign_windows(&0.0, t, 0, &mut out).unwrap();
        out
    }

    #[test]
    fn b03_tumbling_negative_offset_and_validation() {
        // Scenario B03 (FLINK-10680, FLINK-11326).
        let w = TumblingWindows::new(10, -3, TimeDomain::EventTime).unwrap();
        assert_eq!(assign(&w, 0), [TimeWindow::new(-3, 7)]);
        assert_eq!(assign(&w, 6), [TimeWindow::new(-3, 7)]);
        assert_eq!(assign(&w, 7), [TimeWindow::new(7, 17)]);
        let day = 86_400_000;
        let hour = 3_600_000;
        let w = TumblingWindows::new(day, -8 * hour, TimeDomain::EventTime).unwrap();
        let start = assign(&w, 1_615_737_599_000)[0].start(); // 2021-03-14T15:59:59Z
        assert_eq!(start % day, 16 * hour);
        assert!(TumblingWindows::new(10, 10, TimeDomain::EventTime).is_err());
        assert!(TumblingWindows::new(10, -10, TimeDomain::EventTime).is_err());
        assert!(TumblingWindows::new(0, 0, TimeDomain::EventTime).is_err());
        let err = SlidingWindows::new(10, 5, 5, TimeDomain::EventTime).unwrap_err();
        assert_eq!(
            err.to_string(),
            "sliding windows need abs(offset) < slide: offset 5 ms, slide 5 ms"
        );
    }

    #[test]
    fn b44_daily_windows_with_offset_split_at_16_utc() {
        // Scenario B44 (a): 2021-03-14T15:59:59Z and 16:00:00Z fall in different days.
        let day = 86_400_000;
        let w = TumblingWindows::new(day, -8 * 3_600_000, TimeDomain::EventTime).unwrap();
        let a = assign(&w, 1_615_737_599_000);
        let b = assign(&w, 1_615_737_600_000);
        assert_eq!(a[0].end(), b[0].start());
        assert_eq!(b[0].start(), 1_615_737_600_000);
    }

    #[test]
    fn b33_sliding_never_assigns_future_windows() {
        // Scenario B33 (robinhood/faust#203): size 10 s, slide 5 s, element at 12 s.
        let w = SlidingWindows::new(10_000, 5_000, 0, TimeDomain::EventTime).unwrap();
        assert_eq!(
            assign(&w, 12_000),
            [
                TimeWindow::new(10_000, 20_000),
                TimeWindow::new(5_000, 15_000)
            ]
        );
    }

    #[test]
    fn b31_too_many_windows_per_element_is_rejected() {
        // Scenario B31 (FLINK-37512): size 10 000 001 ms, slide 1 ms.
        let err = SlidingWindows::new(10_000_001, 1, 0, TimeDomain::EventTime).unwrap_err();
        assert!(matches!(
            err,
            AssignerError::TooManyWindows {
                per_element: 10_000_001,
                ..
            }
        ));
        assert!(SlidingWindows::new(10_000_000, 1, 0, TimeDomain::EventTime).is_ok());
    }

    #[test]
    fn sliding_gaps_negative_times_and_extremes() {
        let w = SlidingWindows::new(5, 10, 0, TimeDomain::EventTime).unwrap();
        assert!(assign(&w, 7).is_empty());
        assert_eq!(assign(&w, 13), [TimeWindow::new(10, 15)]);
        let w = SlidingWindows::new(10, 5, 0, TimeDomain::EventTime).unwrap();
        assert_eq!(
            assign(&w, -1),
            [TimeWindow::new(-5, 5), TimeWindow::new(-10, 0)]
        );
        assert_eq!(assign(&w, i64::MAX).len(), 2);
        // Near i64::MIN the windows starting before it are not representable: never wrapped.
        let near_min = assign(&w, i64::MIN + 1);
        assert!(
            near_min
                .iter()
                .all(|x| x.start() <= i64::MIN + 1 && x.end() < 0),
            "{near_min:?}"
        );
        let w = SlidingWindows::new(86_400_000, 3_600_000, 0, TimeDomain::EventTime).unwrap();
        assert!(assign(&w, i64::MIN + 1).iter().all(|x| x.start() < 0));
        let mut out = Vec::new();
        let err = WindowAssigner::<f64>::assign_windows(&w, &0.0, i64::MIN, 0, &mut out);
        assert_eq!(err, Err(ElementError::MissingTimestamp));
    }

    #[test]
    fn processing_time_uses_the_clock() {
        let w = TumblingWindows::new(60_000, 0, TimeDomain::ProcessingTime).unwrap();
        let mut out = Vec::new();
        WindowAssigner::<f64>::assign_windows(&w, &0.0, i64::MIN, 65_000, &mut out).unwrap();
        assert_eq!(out, [TimeWindow::new(60_000, 120_000)]);
        assert!(!WindowAssigner::<f64>::is_event_time(&w));
    }
}
