//! Session windows: one window per burst of activity, closed by a gap of inactivity.

use std::fmt;
use std::sync::Arc;

use window_core::{TimeWindow, Timestamp};
use window_triggers::TimeTrigger;

use crate::{
    domain_time, positive, time_trigger, DefaultTrigger, ElementError, Merges, Result, TimeDomain,
    WindowAssigner,
};

/// How long a session stays open after an element: fixed, or computed per element.
#[derive(Clone)]
pub enum SessionGap<T> {
    /// The same gap in ms for every element (Flink's `withGap`).
    Static(i64),
    /// A gap in ms computed from each element (Flink's `withDynamicGap`); a result that is not
    /// positive is an error for that element.
    Dynamic(Arc<dyn Fn(&T) -> i64 + Send + Sync>),
}

impl<T> fmt::Debug for SessionGap<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionGap::Static(g) => write!(f, "Static({g})"),
            SessionGap::Dynamic(_) => f.write_str("Dynamic(..)"),
        }
    }
}

/// Session windows (Flink's `EventTimeSessionWindows`, `ProcessingTimeSessionWindows` and their
/// dynamic-gap variants).
///
/// Each element at `t` first gets the window `[t, t + gap)`; the operator then merges every
/// windows of the key that intersect, touching included (`[1,6)` and `[6,11)` merge), into
/// their cover.
///
/// # Examples
/// ```
/// use window_assigners::{Merges, SessionWindows, TimeDomain, WindowAssigner};
/// use window_core::TimeWindow;
/// let s = SessionWindows::<f64>::with_gap(5, TimeDomain::EventTime)?;
/// let mut merges = Merges::new();
/// let mut windows = [TimeWindow::new(20, 25), TimeWindow::new(6, 11), TimeWindow::new(1, 6)];
/// s.merge_windows(&mut windows, &mut merges);
/// let groups: Vec<_> = merges.iter().collect();
/// assert_eq!(groups, [(TimeWindow::new(1, 11), &[TimeWindow::new(1, 6), TimeWindow::new(6, 11)][..])]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct SessionWindows<T> {
    gap: SessionGap<T>,
    domain: TimeDomain,
}

impl<T> SessionWindows<T> {
    /// Sessions with a fixed gap in ms.
    ///
    /// # Errors
    /// A gap that is not positive.
    pub fn with_gap(gap: i64, domain: TimeDomain) -> Result<Self> {
        positive("session", "session gap", gap)?;
        Ok(Self {
            gap: SessionGap::Static(gap),
            domain,
        })
    }

    /// Sessions whose gap is computed from each element, in ms.
    #[must_use]
    pub fn with_dynamic_gap(gap: Arc<dyn Fn(&T) -> i64 + Send + Sync>, domain: TimeDomain) -> Self {
        Self {
            gap: SessionGap::Dynamic(gap),
            domain,
        }
    }
}

impl<T> DefaultTrigger for SessionWindows<T> {
    type Trigger = TimeTrigger;

    /// [`TimeTrigger`] of the assigner's domain (Flink's `EventTimeTrigger` or
    /// `ProcessingTimeTrigger`).
    fn default_trigger(&self) -> TimeTrigger {
        time_trigger(self.domain)
    }
}

impl<T> WindowAssigner<T> for SessionWindows<T> {
    type Window = TimeWindow;

    fn assign_windows(
        &self,
        element: &T,
        timestamp: Timestamp,
        processing_time: Timestamp,
        out: &mut Vec<TimeWindow>,
    ) -> std::result::Result<(), ElementError> {
        let t = domain_time(self.domain, timestamp, processing_time)?;
        let gap = match &self.gap {
            SessionGap::Static(g) => *g,
            SessionGap::Dynamic(f) => {
                let g = f(element);
                if g <= 0 {
                    return Err(ElementError::InvalidDynamicGap {
                        gap: g,
                        timestamp: t,
                    });
                }
                g
            }
        };
        // A session's end is its last element plus the gap; one that does not fit in i64 would
        // be an empty window that cannot hold its own element.
        let Some(end) = t.checked_add(gap) else {
            return Err(ElementError::TimestampOutOfRange {
                timestamp: t,
                size: gap,
            });
        };
        out.push(TimeWindow::new(t, end));
        Ok(())
    }

    fn is_event_time(&self) -> bool {
        self.domain == TimeDomain::EventTime
    }

    fn is_merging(&self) -> bool {
        true
    }

    /// Flink's `TimeWindow.mergeWindows`: sort by start, sweep, and group windows that
    /// intersect the running cover.
    fn merge_windows(&self, windows: &mut [TimeWindow], out: &mut Merges<TimeWindow>) {
        // Flink's TimeWindow.mergeWindows: sort by start, fold intersecting (touching included)
        // windows into their cover, report every cover of two windows or more.
        windows.sort_unstable();
        let mut group: Option<(usize, TimeWindow, TimeWindow)> = None; // (start, cover, last)
        for &w in windows.iter() {
            match &mut group {
                Some((_, cover, last)) if cover.intersects(&w) => {
                    *cover = cover.cover(&w);
                    // Sorted, so a duplicate follows its twin: each window counts once.
                    if *last != w {
                        out.push_member(w);
                        *last = w;
                    }
                }
                _ => {
                    if let Some((start, cover, _)) = group.take() {
                        out.finish_group(start, cover);
                    }
                    let start = out.start_group();
                    out.push_member(w);
                    group = Some((start, w, w));
                }
            }
        }
        if let Some((start, cover, _)) = group {
            out.finish_group(start, cover);
        }
    }

    fn describe(&self) -> String {
        match &self.gap {
            SessionGap::Static(g) => format!("session(gap {g} ms)"),
            SessionGap::Dynamic(_) => "session(dynamic gap)".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b17_touching_sessions_merge_and_separated_do_not() {
        // Scenario B17 (Flink TimeWindow.intersects).
        let s = SessionWindows::<f64>::with_gap(10, TimeDomain::EventTime).unwrap();
        let mut out = Merges::new();
        s.merge_windows(
            &mut [TimeWindow::new(0, 10), TimeWindow::new(10, 20)],
            &mut out,
        );
        assert_eq!(out.len(), 1);
        assert_eq!(out.get(0).map(|g| g.0), Some(TimeWindow::new(0, 20)));
        out.clear();
        s.merge_windows(
            &mut [TimeWindow::new(0, 10), TimeWindow::new(11, 21)],
            &mut out,
        );
        assert!(out.is_empty());
        // Duplicates count once; separate groups are reported in order.
        s.merge_windows(
            &mut [
                TimeWindow::new(30, 40),
                TimeWindow::new(0, 10),
                TimeWindow::new(35, 45),
                TimeWindow::new(0, 10),
                TimeWindow::new(5, 15),
            ],
            &mut out,
        );
        let groups: Vec<_> = out.iter().map(|(r, m)| (r, m.to_vec())).collect();
        assert_eq!(
            groups,
            [
                (
                    TimeWindow::new(0, 15),
                    vec![TimeWindow::new(0, 10), TimeWindow::new(5, 15)]
                ),
                (
                    TimeWindow::new(30, 45),
                    vec![TimeWindow::new(30, 40), TimeWindow::new(35, 45)]
                ),
            ]
        );
    }

    #[test]
    fn b45_zero_gaps_are_rejected() {
        // Scenario B45: a zero static gap at construction, a zero dynamic gap per element.
        assert!(SessionWindows::<f64>::with_gap(0, TimeDomain::EventTime).is_err());
        let s = SessionWindows::<f64>::with_dynamic_gap(
            Arc::new(|v: &f64| *v as i64),
            TimeDomain::EventTime,
        );
        let mut out = Vec::new();
        assert_eq!(
            s.assign_windows(&0.0, 5, 0, &mut out),
            Err(ElementError::InvalidDynamicGap {
                gap: 0,
                timestamp: 5
            })
        );
        s.assign_windows(&3.0, 5, 0, &mut out).unwrap();
        assert_eq!(out, [TimeWindow::new(5, 8)]);
    }

    /// Issue 16: a session window at i64::MAX came out as `[MAX, MAX)`, empty and without its
    /// element; it is refused as tumbling and sliding windows are.
    #[test]
    fn a_session_past_the_end_of_time_is_refused() {
        let s = SessionWindows::<f64>::with_gap(3_600_000, TimeDomain::EventTime).expect("a gap");
        let mut out = Vec::new();
        let err = s.assign_windows(&1.0, i64::MAX, 0, &mut out).unwrap_err();
        assert_eq!(
            err,
            ElementError::TimestampOutOfRange {
                timestamp: i64::MAX,
                size: 3_600_000
            }
        );
        assert!(out.is_empty());
        s.assign_windows(&1.0, i64::MAX - 3_600_000, 0, &mut out)
            .expect("the last session that fits");
        assert_eq!(out, [TimeWindow::new(i64::MAX - 3_600_000, i64::MAX)]);
    }
}
