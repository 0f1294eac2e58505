//! Window assigners: which windows an element belongs to.
//!
//! An assigner maps an element (and its timestamp) to zero or more windows. Tumbling windows
//! give exactly one, sliding windows give `size / slide` overlapping ones (descending start, as
//! Flink lists them), session windows give one window `[t, t + gap)` per element that the
//! operator then merges with every window it touches, and global windows give the one
//! [`GlobalWindow`]. Each assigner works in event time (the element's timestamp) or processing
//! time (the operator's clock when the element arrives), and names the trigger that windows get
//! when the user sets none (Flink's `getDefaultTrigger`).
//!
//! Parameters are validated when the assigner is built ([`AssignerError`]), never per element,
//! except what only an element can tell: a missing timestamp, or a dynamic session gap that is
//! not positive.
//!
//! The assigners follow Flink's `TumblingEventTimeWindows`, `SlidingEventTimeWindows`,
//! `EventTimeSessionWindows` (and their processing-time twins), `DynamicEventTimeSessionWindows`
//! and `GlobalWindows`. Time model: windows are aligned to the Unix epoch plus an offset in ms,
//! with no calendar or time-zone logic: a 1 d window with offset `-8h` starts at 16:00 UTC every
//! day, also across daylight-saving switches (which is what Flink does).
#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod named;
mod session;
mod time_windows;

pub use named::{
    EventTimeSessionWindows, Offset, ProcessingTimeSessionWindows, SlidingEventTimeWindows,
    SlidingProcessingTimeWindows, TumblingEventTimeWindows, TumblingProcessingTimeWindows,
};
pub use session::{SessionGap, SessionWindows};
pub use time_windows::{SlidingWindows, TumblingWindows};

use std::fmt::Debug;

pub use window_core::{ElementError, TimeDomain};

use window_core::{FlinkRule, GlobalWindow, Timestamp, Window};
use window_triggers::{EndOfStreamTrigger, NeverTrigger, TimeTrigger};

/// Most windows one element may be assigned to (`size / slide` of a sliding window). Larger
/// configurations are rejected at construction instead of exhausting memory per element
/// (the cap Flink's FLINK-37512 proposes).
pub const MAX_WINDOWS_PER_ELEMENT: i64 = 10_000_000;

/// How many sliding windows of `size` ms every `slide` ms hold one element: `ceil(size /
/// slide)` (both positive).
///
/// # Examples
/// ```
/// assert_eq!(window_assigners::windows_per_element(10, 5), 2);
/// assert_eq!(window_assigners::windows_per_element(10, 3), 4);
/// ```
#[must_use]
pub fn windows_per_element(size: i64, slide: i64) -> i64 {
    size / slide + i64::from(size % slide != 0)
}

/// Errors of this crate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssignerError {
    /// A size, slide or gap that is zero or negative.
    #[error("{what} must be positive, got {value} ms")]
    NotPositive {
        /// Which assigner (`tumbling`, `sliding`, `session`).
        assigner: &'static str,
        /// Which parameter (`window size`, `slide`, `session gap`).
        what: &'static str,
        /// The offending value in ms.
        value: i64,
    },
    /// An offset whose absolute value is not smaller than the size (tumbling) or slide (sliding).
    #[error("{kind} windows need abs(offset) < {bound_name}: offset {offset} ms, {bound_name} {bound} ms")]
    OffsetOutOfRange {
        /// `tumbling` or `sliding`.
        kind: &'static str,
        /// The offset in ms.
        offset: i64,
        /// `size` or `slide`.
        bound_name: &'static str,
        /// The size or slide in ms.
        bound: i64,
    },
    /// A duration longer than `i64::MAX` ms.
    #[error(
        "{what} of {seconds} s is longer than the time range of {} ms",
        i64::MAX
    )]
    TooLong {
        /// Which parameter.
        what: &'static str,
        /// The duration in whole seconds.
        seconds: u64,
    },
    /// A sliding window configuration that would put too many windows on one element.
    #[error("sliding windows of size {size} ms and slide {slide} ms put {per_element} windows on each element; at most {MAX_WINDOWS_PER_ELEMENT} are allowed")]
    TooManyWindows {
        /// Size in ms.
        size: i64,
        /// Slide in ms.
        slide: i64,
        /// `ceil(size / slide)`.
        per_element: i64,
    },
}

impl AssignerError {
    /// The Flink rule this error enforces, if it is one of Flink's (the cap on windows per
    /// element and the `i64` range are this workspace's own limits).
    #[must_use]
    pub fn rule(&self) -> Option<FlinkRule> {
        let of = |assigner: &str| match assigner {
            "tumbling" => Some(FlinkRule::TumblingWindowParameters),
            "sliding" => Some(FlinkRule::SlidingWindowParameters),
            "session" => Some(FlinkRule::SessionGapPositive),
            _ => None,
        };
        match self {
            AssignerError::NotPositive { assigner, .. } => of(assigner),
            AssignerError::OffsetOutOfRange { kind, .. } => of(kind),
            AssignerError::TooLong { .. } | AssignerError::TooManyWindows { .. } => None,
        }
    }
}

/// This crate's result type.
pub type Result<T> = std::result::Result<T, AssignerError>;

/// Groups of windows to merge, as a merging assigner reports them: for each group, the window
/// it becomes and its members (Flink's `MergingWindowAssigner.MergeCallback#merge(toBeMerged,
/// mergeResult)`, collected). All members sit in one buffer and [`Merges::clear`] keeps the
/// capacity, so a caller that reuses one `Merges` allocates nothing per element.
///
/// # Examples
/// ```
/// use window_assigners::Merges;
/// use window_core::TimeWindow;
/// let mut m = Merges::new();
/// m.push(TimeWindow::new(0, 20), &[TimeWindow::new(0, 10), TimeWindow::new(10, 20)]);
/// let (result, members) = m.get(0).unwrap();
/// assert_eq!((result, members.len()), (TimeWindow::new(0, 20), 2));
/// m.clear();
/// assert!(m.is_empty());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merges<W> {
    /// (result, end of its members in `members`).
    groups: Vec<(W, usize)>,
    members: Vec<W>,
}

impl<W> Default for Merges<W> {
    fn default() -> Self {
        Self {
            groups: Vec::new(),
            members: Vec::new(),
        }
    }
}

impl<W: Copy> Merges<W> {
    /// No merges.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets every group, keeping the buffers.
    pub fn clear(&mut self) {
        self.groups.clear();
        self.members.clear();
    }

    /// Reports that `members` become `result`.
    pub fn push(&mut self, result: W, members: &[W]) {
        self.members.extend_from_slice(members);
        self.groups.push((result, self.members.len()));
    }

    /// Starts a group becoming `result`; add its members with [`Merges::push_member`] and close
    /// it with [`Merges::finish_group`].
    pub(crate) fn start_group(&mut self) -> usize {
        self.members.len()
    }

    pub(crate) fn push_member(&mut self, w: W) {
        self.members.push(w);
    }

    /// Keeps the group started at `start` if it has at least two members, as `result`.
    pub(crate) fn finish_group(&mut self, start: usize, result: W) {
        if self.members.len() - start > 1 {
            self.groups.push((result, self.members.len()));
        } else {
            self.members.truncate(start);
        }
    }

    /// Groups reported.
    #[must_use]
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// Whether no group was reported.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Group `i`: its result and its members.
    #[must_use]
    pub fn get(&self, i: usize) -> Option<(W, &[W])> {
        let (result, end) = *self.groups.get(i)?;
        let start = if i == 0 { 0 } else { self.groups[i - 1].1 };
        Some((result, &self.members[start..end]))
    }

    /// Every group, in the order reported.
    pub fn iter(&self) -> impl Iterator<Item = (W, &[W])> + '_ {
        (0..self.groups.len()).filter_map(|i| self.get(i))
    }
}

/// Assigns elements to windows (Flink's `WindowAssigner`, with `MergingWindowAssigner` folded
/// in through [`WindowAssigner::is_merging`] and [`WindowAssigner::merge_windows`]).
pub trait WindowAssigner<T> {
    /// The window type.
    type Window: Window;

    /// Appends the windows of `element` to `out` (which the caller owns and clears, so that the
    /// hot path does not allocate). `timestamp` is the element's event time, `processing_time`
    /// the operator's clock, both in ms.
    ///
    /// # Errors
    /// [`ElementError::MissingTimestamp`] for an element at `i64::MIN` in event time;
    /// [`ElementError::TimestampOutOfRange`] for an element (or a processing-time clock) whose
    /// aligned tumbling or sliding windows would start before `i64::MIN` or end after `i64::MAX`
    /// (nothing is appended then: no window is clamped into the range);
    /// [`ElementError::InvalidDynamicGap`] for a dynamic gap that is not positive.
    fn assign_windows(
        &self,
        element: &T,
        timestamp: Timestamp,
        processing_time: Timestamp,
        out: &mut Vec<Self::Window>,
    ) -> std::result::Result<(), ElementError>;

    /// Whether windows close by the watermark (`true`) or by the processing-time clock.
    fn is_event_time(&self) -> bool;

    /// The time domain of a time-window assigner; `None` for assigners whose windows are not
    /// bound to time (global windows), which run in whatever domain the job runs.
    fn time_domain(&self) -> Option<TimeDomain> {
        Some(if self.is_event_time() {
            TimeDomain::EventTime
        } else {
            TimeDomain::ProcessingTime
        })
    }

    /// Size, slide and offset in ms, for sliding windows (the strategies other than Flink's
    /// operator need them); `None` for other assigners.
    fn sliding(&self) -> Option<(i64, i64, i64)> {
        None
    }

    /// Whether windows of this assigner merge (sessions). Merging assigners implement
    /// [`WindowAssigner::merge_windows`].
    fn is_merging(&self) -> bool {
        false
    }

    /// For merging assigners: given every window of a key (which it may reorder), reports each
    /// group of windows that must become one, with its result, in `out` (Flink's
    /// `mergeWindows` with its `MergeCallback`); every group has at least two members. `out` is
    /// the caller's, appended to, so that merging allocates nothing once its buffers have grown.
    /// Non-merging assigners report nothing.
    fn merge_windows(&self, windows: &mut [Self::Window], out: &mut Merges<Self::Window>) {
        let _ = (windows, out);
    }

    /// A short description for messages and summaries (`sliding(3600000 ms, 300000 ms)`).
    fn describe(&self) -> String;
}

/// The trigger an assigner's windows get when the user sets none (Flink's
/// `WindowAssigner.getDefaultTrigger`).
///
/// A trait of its own, not generic over the element type, so that `assigner.default_trigger()`
/// needs no annotation, and typed: each assigner names the trigger it gives.
///
/// # Examples
/// ```
/// use window_assigners::{DefaultTrigger, GlobalWindows, TimeDomain, TumblingWindows};
/// use window_core::TimeDomain as Domain;
/// let tumbling = TumblingWindows::new(10, 0, TimeDomain::EventTime)?;
/// assert_eq!(tumbling.default_trigger().domain(), Domain::EventTime);
/// let _never: window_triggers::NeverTrigger = GlobalWindows::create().default_trigger();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait DefaultTrigger {
    /// The trigger's type.
    type Trigger;

    /// The trigger used when the user sets none.
    fn default_trigger(&self) -> Self::Trigger;
}

/// One global window for everything (Flink's `GlobalWindows`). Not an event-time assigner, so
/// nothing is ever late and nothing is cleaned up. The default trigger never fires, unless the
/// assigner was made with [`GlobalWindows::with_end_of_stream_trigger`].
#[derive(Clone, Copy, Debug, Default)]
pub struct GlobalWindows<Tr = NeverTrigger> {
    trigger: Tr,
}

impl GlobalWindows {
    /// Global windows with the never-firing default trigger (`GlobalWindows.create()`).
    #[must_use]
    pub fn create() -> GlobalWindows<NeverTrigger> {
        GlobalWindows {
            trigger: NeverTrigger,
        }
    }

    /// Global windows whose default trigger fires once at the end of a bounded input
    /// (`GlobalWindows.createWithEndOfStreamTrigger()`).
    #[must_use]
    pub fn with_end_of_stream_trigger() -> GlobalWindows<EndOfStreamTrigger> {
        GlobalWindows {
            trigger: EndOfStreamTrigger::default(),
        }
    }
}

impl<Tr: Clone> DefaultTrigger for GlobalWindows<Tr> {
    type Trigger = Tr;

    fn default_trigger(&self) -> Tr {
        self.trigger.clone()
    }
}

impl<T, Tr> WindowAssigner<T> for GlobalWindows<Tr> {
    type Window = GlobalWindow;

    fn assign_windows(
        &self,
        _element: &T,
        _timestamp: Timestamp,
        _processing_time: Timestamp,
        out: &mut Vec<GlobalWindow>,
    ) -> std::result::Result<(), ElementError> {
        out.push(GlobalWindow);
        Ok(())
    }

    fn is_event_time(&self) -> bool {
        false
    }

    fn time_domain(&self) -> Option<TimeDomain> {
        None
    }

    fn describe(&self) -> String {
        "global".to_owned()
    }
}

/// The default trigger of a time-window assigner: the window end in its domain.
fn time_trigger(domain: TimeDomain) -> TimeTrigger {
    TimeTrigger::new(domain)
}

/// The timestamp a time-domain assigner windows by.
fn domain_time(
    domain: TimeDomain,
    timestamp: Timestamp,
    processing_time: Timestamp,
) -> std::result::Result<Timestamp, ElementError> {
    match domain {
        TimeDomain::EventTime if timestamp == Timestamp::MIN => Err(ElementError::MissingTimestamp),
        TimeDomain::EventTime => Ok(timestamp),
        TimeDomain::ProcessingTime => Ok(processing_time),
    }
}

fn positive(assigner: &'static str, what: &'static str, value: i64) -> Result<i64> {
    if value <= 0 {
        Err(AssignerError::NotPositive {
            assigner,
            what,
            value,
        })
    } else {
        Ok(value)
    }
}
