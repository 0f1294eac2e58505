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
/// Where that window does not fit in `i64` (within one window of either end of time) the
/// element is refused with [`ElementError::TimestampOutOfRange`]: a clamped window would overlap
/// its neighbour and miss its element.
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
        let start = aligned_start(t, self.offset, self.size);
        let window = fitting_window(start, self.size).ok_or(ElementError::TimestampOutOfRange {
            timestamp: t,
            size: self.size,
        })?;
        out.push(window);
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
/// some elements fall in a gap and get no window. An element one of whose windows does not fit
/// in `i64` is refused with [`ElementError::TimestampOutOfRange`].
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
        // In i128, so that windows near i64::MIN/MAX neither wrap nor clamp.
        let (size, slide) = (i128::from(self.size), i128::from(self.slide));
        let last_start = aligned_start(t, self.offset, self.slide);
        // The earliest start after t - size on the same grid.
        let first = i128::from(t) - size + 1;
        let first_start = first + (last_start - first).rem_euclid(slide);
        if first_start > last_start {
            return Ok(()); // in a gap between windows (slide > size)
        }
        // Every window of the element must fit in i64: the earliest starts lowest, the latest
        // ends highest. Otherwise the element is refused whole, before anything is pushed.
        let out_of_range = ElementError::TimestampOutOfRange {
            timestamp: t,
            size: self.size,
        };
        fitting_window(first_start, self.size).ok_or(out_of_range.clone())?;
        fitting_window(last_start, self.size).ok_or(out_of_range)?;
        let mut start = last_start;
        while start >= first_start {
            out.extend(fitting_window(start, self.size));
            start -= slide;
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

/// The start of the aligned window (or slide interval) of `period` ms holding `t`: `t - (t -
/// offset) mod period` (floor), as Flink's `TimeWindow.getWindowStartWithOffset` computes it, in
/// `i128` so that it is exact also where it lies before `i64::MIN`.
fn aligned_start(t: Timestamp, offset: i64, period: i64) -> i128 {
    // In `i64` where `t - offset` fits (all but the ends of time): the same value without the
    // `i128` division (a library call per element).
    if let Some(d) = t.checked_sub(offset) {
        return i128::from(t) - i128::from(d.rem_euclid(period));
    }
    let t = i128::from(t);
    t - (t - i128::from(offset)).rem_euclid(i128::from(period))
}

/// `[start, start + size)` if both ends fit in `i64`; `None` for a window that cannot be
/// represented (it would start before `i64::MIN` or end after `i64::MAX`).
fn fitting_window(start: i128, size: i64) -> Option<TimeWindow> {
    let s = i64::try_from(start).ok()?;
    let e = i64::try_from(start + i128::from(size)).ok()?;
    Some(TimeWindow::new(s, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_start_in_i64_equals_the_i128_formula() {
        let reference = |t: i64, offset: i64, period: i64| {
            let t = i128::from(t);
            t - (t - i128::from(offset)).rem_euclid(i128::from(period))
        };
        let mut x = 0x2545_F491_4F6C_DD1D_u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let edges = [i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX];
        for i in 0..20_000 {
            let pick = |r: u64, small: bool| match r % 4 {
                0 => edges[(r >> 8) as usize % edges.len()],
                1 if small => (r >> 8) as i64 % 1000,
                _ => (r >> 1) as i64 * if r.is_multiple_of(3) { -1 } else { 1 },
            };
            let t = pick(next(), true);
            let offset = pick(next(), true);
            let period = match next() % 3 {
                0 => 1 + (next() % 1000) as i64,
                1 => 1 + (next() >> 1) as i64 % i64::MAX,
                _ => i64::MAX,
            };
            assert_eq!(
                aligned_start(t, offset, period),
                reference(t, offset, period),
                "case {i}: t {t}, offset {offset}, period {period}"
            );
        }
    }

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
        // Windows that do not fit in i64 are refused, never clamped.
        let refused = |a: &SlidingWindows, t: i64| {
            let mut out = Vec::new();
            let r = WindowAssigner::<f64>::assign_windows(a, &0.0, t, 0, &mut out);
            assert!(out.is_empty(), "{out:?}");
            r == Err(ElementError::TimestampOutOfRange {
                timestamp: t,
                size: a.size(),
            })
        };
        assert!(refused(&w, i64::MAX));
        assert!(refused(&w, i64::MIN + 1));
        // MIN = -922..5808 = 5 * k - 3: the windows of MIN + 3 start at MIN + 3 and MIN - 2.
        assert!(refused(&w, i64::MIN + 3));
        assert_eq!(
            assign(&w, i64::MIN + 8),
            [
                TimeWindow::new(i64::MIN + 8, i64::MIN + 18),
                TimeWindow::new(i64::MIN + 3, i64::MIN + 13)
            ]
        );
        // MAX = 5 * k + 2: the last window that fits is [MAX - 12, MAX - 2) ... [MAX - 7, MAX + 3)
        // does not.
        assert_eq!(
            assign(&w, i64::MAX - 8),
            [
                TimeWindow::new(i64::MAX - 12, i64::MAX - 2),
                TimeWindow::new(i64::MAX - 17, i64::MAX - 7)
            ]
        );
        assert!(refused(&w, i64::MAX - 7));
        let w = SlidingWindows::new(86_400_000, 3_600_000, 0, TimeDomain::EventTime).unwrap();
        assert!(refused(&w, i64::MIN + 1));
        let mut out = Vec::new();
        let err = WindowAssigner::<f64>::assign_windows(&w, &0.0, i64::MIN, 0, &mut out);
        assert_eq!(err, Err(ElementError::MissingTimestamp));
    }

    #[test]
    fn tumbling_near_the_ends_of_time_is_aligned_or_refused() {
        // Issue #16, item 2: 10 s windows near i64::MIN came out as [MIN, MIN + 10000) (clamped,
        // not holding MIN + 1's aligned window) overlapping [-...770000, -...760000).
        let w = TumblingWindows::new(10_000, 0, TimeDomain::EventTime).unwrap();
        let mut out = Vec::new();
        let err = WindowAssigner::<f64>::assign_windows(&w, &0.0, i64::MIN + 1, 0, &mut out);
        assert_eq!(
            err,
            Err(ElementError::TimestampOutOfRange {
                timestamp: i64::MIN + 1,
                size: 10_000
            })
        );
        assert!(out.is_empty());
        assert_eq!(
            assign(&w, -9_223_372_036_854_769_000),
            [TimeWindow::new(
                -9_223_372_036_854_770_000,
                -9_223_372_036_854_760_000
            )]
        );
        assert_eq!(
            assign(&w, -9_223_372_036_854_760_000),
            [TimeWindow::new(
                -9_223_372_036_854_760_000,
                -9_223_372_036_854_750_000
            )]
        );
        // Near i64::MAX: the last whole window ends at ...770000; after it, refused.
        assert_eq!(
            assign(&w, 9_223_372_036_854_769_999),
            [TimeWindow::new(
                9_223_372_036_854_760_000,
                9_223_372_036_854_770_000
            )]
        );
        for t in [9_223_372_036_854_770_000, i64::MAX] {
            let r = WindowAssigner::<f64>::assign_windows(&w, &0.0, t, 0, &mut out);
            assert!(
                matches!(r, Err(ElementError::TimestampOutOfRange { .. })),
                "{t}"
            );
        }
        // Processing time: the clock is the timestamp refused.
        let w = TumblingWindows::new(10, 0, TimeDomain::ProcessingTime).unwrap();
        let r = WindowAssigner::<f64>::assign_windows(&w, &0.0, 0, i64::MAX, &mut out);
        assert_eq!(
            r,
            Err(ElementError::TimestampOutOfRange {
                timestamp: i64::MAX,
                size: 10
            })
        );
        assert!(out.is_empty());
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
