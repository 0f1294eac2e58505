//! The slice log of sliced windows in changes mode: every slice held, in time order, and the
//! windows where each enters and leaves its key's result.
//!
//! In changes mode a key's result changes exactly where one of its slices enters (the slice's
//! left window, the first window holding it) or leaves (its right window, the first window past
//! it). Both depend on the slice's place in time only, so they are the same for every slice of
//! one slice interval, and slices are created in time order. So one log serves every key: the
//! slots of new slices are appended in creation order, grouped in *segments* (one per run of slices
//! sharing their enter and leave windows), and two cursors walk it: one over the segments whose left window comes next, one
//! over the oldest segments, whose slices leave next. Firing a window reads a run of the log;
//! nothing is scheduled per key, so there is no far-ahead timer to write into cold memory and
//! no stale entry to skip. The caller fires each key once per window (a key may have slices in
//! several segments that enter or leave at the same window).

use std::collections::VecDeque;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Where slices enter and leave (window grid indices and starts): the same for every slice of
/// one slice interval, and for consecutive intervals between the same window boundaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SegmentWindows {
    /// The left window: the first window holding the slice.
    pub(crate) enter_index: i64,
    pub(crate) enter_start: i64,
    /// The right window: the first window past the slice.
    pub(crate) leave_index: i64,
    pub(crate) leave_start: i64,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Segment {
    windows: SegmentWindows,
    /// Slices (key slots) in this segment.
    len: usize,
}

/// Slices in time order with enter and leave cursors (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct SliceLog {
    /// Key slots of the slices held, in creation order.
    slots: VecDeque<u32>,
    segments: VecDeque<Segment>,
    /// `segments[..entered]` have had their left window fired.
    entered: usize,
    /// Slots in `segments[..entered]`.
    entered_slots: usize,
}

impl SliceLog {
    /// Slices held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Adds a slice of the key in `slot`, in the slice interval `windows` describes (never
    /// earlier than the last one added).
    #[inline]
    pub(crate) fn push(&mut self, slot: u32, windows: SegmentWindows) {
        let open = self.entered < self.segments.len();
        match self.segments.back_mut() {
            // The same interval, and its left window has not fired yet: join its segment.
            Some(last) if open && last.windows == windows => {
                last.len += 1;
            }
            _ => self.segments.push_back(Segment { windows, len: 1 }),
        }
        self.slots.push_back(slot);
    }

    /// The next window where a slice enters or leaves: (grid index, start).
    #[inline]
    pub(crate) fn next_window(&self) -> Option<(i64, i64)> {
        let enter = self
            .segments
            .get(self.entered)
            .map(|s| (s.windows.enter_index, s.windows.enter_start));
        let leave = (self.entered > 0)
            .then(|| self.segments.front())
            .flatten()
            .map(|s| (s.windows.leave_index, s.windows.leave_start));
        match (enter, leave) {
            (Some(e), Some(l)) => Some(if l.0 <= e.0 { l } else { e }),
            (e, l) => e.or(l),
        }
    }

    /// Moves the key slots of every slice that enters or leaves at window `index` into
    /// `into` (a key may appear more than once); forgets the slices that leave.
    pub(crate) fn take_window(&mut self, index: i64, into: &mut Vec<u32>) {
        // Slices leaving: the oldest segments (they entered before, at a smaller index).
        while self.entered > 0 {
            match self.segments.front() {
                Some(s) if s.windows.leave_index == index => {
                    let len = s.len;
                    self.segments.pop_front();
                    self.entered -= 1;
                    self.entered_slots -= len;
                    into.extend(self.slots.drain(..len));
                }
                _ => break,
            }
        }
        // Slices entering.
        while let Some(s) = self.segments.get(self.entered) {
            if s.windows.enter_index != index {
                break;
            }
            let (from, len) = (self.entered_slots, s.len);
            into.extend(self.slots.range(from..from + len));
            self.entered += 1;
            self.entered_slots += len;
        }
    }
}

/// A snapshot of the log: the slots in order, the segments, and how many have entered (the
/// slots of those are counted again on restore).
#[derive(Serialize)]
struct LogRef<'a> {
    slots: &'a VecDeque<u32>,
    segments: &'a VecDeque<Segment>,
    entered: usize,
}

#[derive(Deserialize)]
struct LogOwned {
    slots: VecDeque<u32>,
    segments: VecDeque<Segment>,
    entered: usize,
}

impl Serialize for SliceLog {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        LogRef {
            slots: &self.slots,
            segments: &self.segments,
            entered: self.entered,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SliceLog {
    /// Refuses segments that do not add up to the slots, and more entered segments than
    /// there are.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let LogOwned {
            slots,
            segments,
            entered,
        } = LogOwned::deserialize(deserializer)?;
        let total = segments
            .iter()
            .try_fold(0_usize, |n, s| n.checked_add(s.len));
        if total != Some(slots.len()) || entered > segments.len() {
            return Err(D::Error::custom("slice log torn"));
        }
        let entered_slots = segments.iter().take(entered).map(|s| s.len).sum();
        Ok(Self {
            slots,
            segments,
            entered,
            entered_slots,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows(enter: i64, leave: i64) -> SegmentWindows {
        SegmentWindows {
            enter_index: enter,
            enter_start: enter * 10,
            leave_index: leave,
            leave_start: leave * 10,
        }
    }

    #[test]
    fn enters_then_leaves_in_window_order() {
        // size 30, slide 10: a slice at 0 enters window index -2 ([-20, 10)) and leaves at 1.
        let mut log = SliceLog::default();
        log.push(7, windows(-2, 1));
        log.push(8, windows(-2, 1));
        log.push(9, windows(-1, 2));
        assert_eq!(log.next_window(), Some((-2, -20)));
        let mut fired = Vec::new();
        log.take_window(-2, &mut fired);
        assert_eq!(fired, [7, 8]);
        assert_eq!(log.next_window(), Some((-1, -10)));
        fired.clear();
        log.take_window(-1, &mut fired);
        assert_eq!(fired, [9]);
        // A slice of a later interval enters at 1, where the first segment leaves.
        log.push(7, windows(1, 4));
        assert_eq!(log.next_window(), Some((1, 10)));
        fired.clear();
        log.take_window(1, &mut fired);
        assert_eq!(
            fired,
            [7, 8, 7],
            "leaving first, then entering; the caller dedups"
        );
        assert_eq!(log.len(), 2);
        fired.clear();
        log.take_window(2, &mut fired);
        assert_eq!(fired, [9]);
        fired.clear();
        log.take_window(4, &mut fired);
        assert_eq!(fired, [7]);
        assert_eq!((log.len(), log.next_window()), (0, None));
    }

    #[test]
    fn a_slice_added_after_its_left_window_fired_starts_a_new_segment() {
        let mut log = SliceLog::default();
        log.push(1, windows(0, 2));
        let mut fired = Vec::new();
        log.take_window(0, &mut fired);
        log.push(2, windows(0, 2));
        // Its left window comes up again (late), then both leave together.
        assert_eq!(log.next_window(), Some((0, 0)));
        fired.clear();
        log.take_window(0, &mut fired);
        assert_eq!(fired, [2]);
        fired.clear();
        log.take_window(2, &mut fired);
        assert_eq!(fired, [1, 2]);
    }
}
