//! Flink's assigner names, with typed durations: `SlidingEventTimeWindows::of(size, slide)`
//! reads as it does in Flink's DataStream API.
//!
//! Each name builds the assigner of its time domain from [`std::time::Duration`]s, converted to
//! whole milliseconds as Flink's `Duration.toMillis()` converts them (a fraction of a
//! millisecond is dropped). An offset may be negative: [`Offset::behind`].

use std::sync::Arc;
use std::time::Duration;

use crate::{AssignerError, Result, SessionWindows, SlidingWindows, TimeDomain, TumblingWindows};

/// A window offset: windows start this far after (or, [`Offset::behind`], before) the epoch's
/// alignment (Flink's `offset` parameter, e.g. `Duration.ofHours(-8)` for days starting at
/// 16:00 UTC).
///
/// # Examples
/// ```
/// use std::time::Duration;
/// use window_assigners::Offset;
/// assert_eq!(Offset::behind(Duration::from_secs(8 * 3600)).millis(), -28_800_000);
/// assert_eq!(Offset::from(Duration::from_millis(5)).millis(), 5);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offset {
    millis: i64,
    too_long: bool,
}

impl Offset {
    /// Windows start `d` after the alignment.
    #[must_use]
    pub fn ahead(d: Duration) -> Self {
        match millis("offset", d) {
            Ok(millis) => Self {
                millis,
                too_long: false,
            },
            Err(_) => Self {
                millis: i64::MAX,
                too_long: true,
            },
        }
    }

    /// Windows start `d` before the alignment (a negative offset).
    #[must_use]
    pub fn behind(d: Duration) -> Self {
        let ahead = Self::ahead(d);
        Self {
            millis: -ahead.millis,
            ..ahead
        }
    }

    /// The offset in ms.
    #[must_use]
    pub const fn millis(&self) -> i64 {
        self.millis
    }

    fn checked(self) -> Result<i64> {
        if self.too_long {
            return Err(AssignerError::TooLong {
                what: "offset",
                seconds: self.millis.unsigned_abs() / 1000,
            });
        }
        Ok(self.millis)
    }
}

impl From<Duration> for Offset {
    fn from(d: Duration) -> Self {
        Offset::ahead(d)
    }
}

/// `d` in whole ms, as Flink's `Duration.toMillis()`.
fn millis(what: &'static str, d: Duration) -> Result<i64> {
    i64::try_from(d.as_millis()).map_err(|_| AssignerError::TooLong {
        what,
        seconds: d.as_secs(),
    })
}

/// Flink's `TumblingEventTimeWindows`: [`TumblingWindows`] in event time.
#[derive(Clone, Copy, Debug)]
pub struct TumblingEventTimeWindows;

impl TumblingEventTimeWindows {
    /// Windows of `size`, aligned to the epoch.
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// use window_assigners::TumblingEventTimeWindows;
    /// let w = TumblingEventTimeWindows::of(Duration::from_secs(10))?;
    /// assert_eq!(w.size(), 10_000);
    /// # Ok::<(), window_assigners::AssignerError>(())
    /// ```
    ///
    /// # Errors
    /// A zero size (Flink: "TumblingEventTimeWindows parameters must satisfy abs(offset) <
    /// size"), a size beyond the `i64` ms range.
    pub fn of(size: Duration) -> Result<TumblingWindows> {
        Self::of_with_offset(size, Offset::default())
    }

    /// Windows of `size`, shifted by `offset`.
    ///
    /// # Errors
    /// As [`TumblingEventTimeWindows::of`], and `abs(offset) >= size`.
    pub fn of_with_offset(size: Duration, offset: Offset) -> Result<TumblingWindows> {
        TumblingWindows::new(
            millis("window size", size)?,
            offset.checked()?,
            TimeDomain::EventTime,
        )
    }
}

/// Flink's `TumblingProcessingTimeWindows`: [`TumblingWindows`] in processing time.
#[derive(Clone, Copy, Debug)]
pub struct TumblingProcessingTimeWindows;

impl TumblingProcessingTimeWindows {
    /// Windows of `size`, aligned to the epoch.
    ///
    /// # Errors
    /// As [`TumblingEventTimeWindows::of`].
    pub fn of(size: Duration) -> Result<TumblingWindows> {
        Self::of_with_offset(size, Offset::default())
    }

    /// Windows of `size`, shifted by `offset`.
    ///
    /// # Errors
    /// As [`TumblingEventTimeWindows::of_with_offset`].
    pub fn of_with_offset(size: Duration, offset: Offset) -> Result<TumblingWindows> {
        TumblingWindows::new(
            millis("window size", size)?,
            offset.checked()?,
            TimeDomain::ProcessingTime,
        )
    }
}

/// Flink's `SlidingEventTimeWindows`: [`SlidingWindows`] in event time.
#[derive(Clone, Copy, Debug)]
pub struct SlidingEventTimeWindows;

impl SlidingEventTimeWindows {
    /// Windows of `size` starting every `slide`.
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// use window_assigners::SlidingEventTimeWindows;
    /// let w = SlidingEventTimeWindows::of(Duration::from_secs(60), Duration::from_millis(500))?;
    /// assert_eq!((w.size(), w.slide()), (60_000, 500));
    /// # Ok::<(), window_assigners::AssignerError>(())
    /// ```
    ///
    /// # Errors
    /// A zero size or slide (Flink: "SlidingEventTimeWindows parameters must satisfy
    /// abs(offset) < slide and size > 0"), durations beyond the `i64` ms range, more than
    /// [`crate::MAX_WINDOWS_PER_ELEMENT`] windows per element.
    pub fn of(size: Duration, slide: Duration) -> Result<SlidingWindows> {
        Self::of_with_offset(size, slide, Offset::default())
    }

    /// Windows of `size` starting every `slide`, shifted by `offset`.
    ///
    /// # Errors
    /// As [`SlidingEventTimeWindows::of`], and `abs(offset) >= slide`.
    pub fn of_with_offset(
        size: Duration,
        slide: Duration,
        offset: Offset,
    ) -> Result<SlidingWindows> {
        SlidingWindows::new(
            millis("window size", size)?,
            millis("slide", slide)?,
            offset.checked()?,
            TimeDomain::EventTime,
        )
    }
}

/// Flink's `SlidingProcessingTimeWindows`: [`SlidingWindows`] in processing time.
#[derive(Clone, Copy, Debug)]
pub struct SlidingProcessingTimeWindows;

impl SlidingProcessingTimeWindows {
    /// Windows of `size` starting every `slide`.
    ///
    /// # Errors
    /// As [`SlidingEventTimeWindows::of`].
    pub fn of(size: Duration, slide: Duration) -> Result<SlidingWindows> {
        Self::of_with_offset(size, slide, Offset::default())
    }

    /// Windows of `size` starting every `slide`, shifted by `offset`.
    ///
    /// # Errors
    /// As [`SlidingEventTimeWindows::of_with_offset`].
    pub fn of_with_offset(
        size: Duration,
        slide: Duration,
        offset: Offset,
    ) -> Result<SlidingWindows> {
        SlidingWindows::new(
            millis("window size", size)?,
            millis("slide", slide)?,
            offset.checked()?,
            TimeDomain::ProcessingTime,
        )
    }
}

/// Flink's `EventTimeSessionWindows`: [`SessionWindows`] in event time.
#[derive(Clone, Copy, Debug)]
pub struct EventTimeSessionWindows;

impl EventTimeSessionWindows {
    /// Sessions closed by `gap` of inactivity.
    ///
    /// # Errors
    /// A zero gap (Flink: "EventTimeSessionWindows parameters must satisfy 0 < size"), a gap
    /// beyond the `i64` ms range.
    pub fn with_gap<T>(gap: Duration) -> Result<SessionWindows<T>> {
        SessionWindows::with_gap(millis("session gap", gap)?, TimeDomain::EventTime)
    }

    /// Sessions whose gap each element says (Flink's `withDynamicGap`); a zero gap rejects that
    /// element.
    pub fn with_dynamic_gap<T>(
        gap: impl Fn(&T) -> Duration + Send + Sync + 'static,
    ) -> SessionWindows<T> {
        let gap = move |e: &T| millis("session gap", gap(e)).unwrap_or(i64::MAX);
        SessionWindows::with_dynamic_gap(Arc::new(gap), TimeDomain::EventTime)
    }
}

/// Flink's `ProcessingTimeSessionWindows`: [`SessionWindows`] in processing time.
#[derive(Clone, Copy, Debug)]
pub struct ProcessingTimeSessionWindows;

impl ProcessingTimeSessionWindows {
    /// Sessions closed by `gap` of inactivity.
    ///
    /// # Errors
    /// As [`EventTimeSessionWindows::with_gap`].
    pub fn with_gap<T>(gap: Duration) -> Result<SessionWindows<T>> {
        SessionWindows::with_gap(millis("session gap", gap)?, TimeDomain::ProcessingTime)
    }
}
