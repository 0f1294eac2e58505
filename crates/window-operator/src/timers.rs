//! How the operator keeps its timers ([`TimerStore`]): Flink's timer semantics, a timer per
//! `(time domain, timestamp, key, window)`, deduplicated, fired in timestamp order and, within a
//! timestamp, in the order of registration, a deleted timer never firing.
//!
//! [`MarkedTimers`] (the operator's default) keeps the set of live timers of a window *in the
//! window's state*, as [`Marks`]: nearly every timer belongs to a window that has state (the
//! trigger's timer at the window's end, the cleanup timer), and the operator holds that state in
//! hand whenever a timer is registered, deleted or due. Deduplicating, deleting and checking
//! that a due timer is still live then cost no lookup of their own, where a separate set of live
//! timers (Flink's `InternalTimerService`, and [`timer_service::TimerService`]) costs a hash
//! lookup each time, four or five per window. Timers of a window without state (a custom
//! trigger's, or timers its `clear` left behind) go to a hash set of orphans, as before. The
//! time order is a [`TimeBuckets`] per domain.
//!
//! [`timer_service::TimerService`] is also a [`TimerStore`]: the plain structure, which the
//! operator's randomized tests run beside [`MarkedTimers`] to check that both fire the same
//! timers in the same order.
//!
//! For snapshots a store lists its timers ([`TimerListing`]: each domain's in popping order)
//! and is rebuilt from such a listing: [`MarkedTimers`] lists its queue entries, deleted ones
//! included, and takes back whether each is live from the windows' marks the operator restores.

use std::collections::HashSet;
use std::fmt::Debug;
use std::hash::Hash;

use timer_service::{TimeBuckets, TimerService};
use window_core::{SnapshotError, Timestamp};

use crate::keys::KeyId;

/// A timer's time domain: an event-time timer fires when the watermark reaches its timestamp, a
/// processing-time timer when the processing clock does. The project's one time-domain type.
pub use window_core::TimeDomain as Domain;

/// The live timers of one window, `(domain, timestamp)`: two inline (a trigger timer and a
/// cleanup timer, the usual), more on the heap (boxed, so that a window without more pays one
/// pointer: 40 bytes in all).
#[derive(Clone, Debug, Default)]
pub struct Marks {
    inline: [Option<(Domain, Timestamp)>; 2],
    #[allow(
        clippy::box_collection,
        reason = "one pointer in every window's state, where a Vec would take three"
    )]
    more: Option<Box<Vec<(Domain, Timestamp)>>>,
}

impl Marks {
    /// Whether the timer is live.
    #[must_use]
    #[inline]
    pub fn contains(&self, d: Domain, t: Timestamp) -> bool {
        self.inline.contains(&Some((d, t)))
            || self.more.as_ref().is_some_and(|m| m.contains(&(d, t)))
    }

    /// Adds the timer; `false` if it was live already.
    #[inline]
    pub fn insert(&mut self, d: Domain, t: Timestamp) -> bool {
        if self.contains(d, t) {
            return false;
        }
        match self.inline.iter_mut().find(|m| m.is_none()) {
            Some(free) => *free = Some((d, t)),
            None => self.more.get_or_insert_default().push((d, t)),
        }
        true
    }

    /// Removes the timer; `false` if it was not live.
    #[inline]
    pub fn remove(&mut self, d: Domain, t: Timestamp) -> bool {
        if let Some(m) = self.inline.iter_mut().find(|m| **m == Some((d, t))) {
            *m = None;
            return true;
        }
        let Some(more) = self.more.as_mut() else {
            return false;
        };
        match more.iter().position(|m| *m == (d, t)) {
            Some(i) => {
                more.swap_remove(i);
                if more.is_empty() {
                    self.more = None;
                }
                true
            }
            None => false,
        }
    }

    /// Whether no timer is live.
    #[must_use]
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.inline.iter().all(Option::is_none) && self.more.is_none()
    }

    /// Whether `(d, t)` is the only live timer.
    #[must_use]
    #[inline]
    pub fn is_only(&self, d: Domain, t: Timestamp) -> bool {
        self.more.is_none()
            && matches!(self.inline, [Some(x), None] | [None, Some(x)] if x == (d, t))
    }

    /// The live timers, in no particular order (a snapshot lists them).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Domain, Timestamp)> + '_ {
        self.inline
            .iter()
            .flatten()
            .copied()
            .chain(self.more.iter().flat_map(|m| m.iter().copied()))
    }

    /// The live timers, taken out.
    fn take_all(&mut self) -> impl Iterator<Item = (Domain, Timestamp)> + '_ {
        self.inline
            .iter_mut()
            .filter_map(Option::take)
            .chain(self.more.take().into_iter().flat_map(|m| m.into_iter()))
    }
}

/// Where a [`crate::WindowOperator`] keeps its timers and the watermark. `marks` is the window's
/// own [`Marks`] when the window has a state (a store may keep them there), `None` otherwise.
pub trait TimerStore<W>: Debug + Default {
    /// The current watermark (`i64::MIN` at first).
    fn watermark(&self) -> Timestamp;

    /// Moves the watermark to `wm` if that is later; whether it moved.
    fn advance_watermark(&mut self, wm: Timestamp) -> bool;

    /// Registers a timer (deduplicated).
    fn register(&mut self, d: Domain, t: Timestamp, key: KeyId, w: W, marks: Option<&mut Marks>);

    /// Deletes a timer, if live.
    fn delete(&mut self, d: Domain, t: Timestamp, key: KeyId, w: W, marks: Option<&mut Marks>);

    /// The next timer of `d` due at or before `up_to`, in order; it may have been deleted:
    /// ask [`TimerStore::take_live`].
    fn pop_due(&mut self, d: Domain, up_to: Timestamp) -> Option<(Timestamp, KeyId, W)>;

    /// Whether the timer [`TimerStore::pop_due`] gave is live; it is no longer, after.
    fn take_live(
        &mut self,
        d: Domain,
        t: Timestamp,
        key: KeyId,
        w: W,
        marks: Option<&mut Marks>,
    ) -> bool;

    /// Keeps the timers left in `marks` when the window's state goes away.
    fn adopt(&mut self, key: KeyId, w: W, marks: &mut Marks);

    /// Whether `(d, t)` is known to be the only live timer of the window whose `marks` these
    /// are: `marks` hold exactly it and no window has an orphan timer. A store that does not
    /// keep timers in the marks answers `false`, the default (the operator then keeps every
    /// window in its map: see `crate::retired`).
    fn is_only_timer(&self, marks: &Marks, d: Domain, t: Timestamp) -> bool {
        let _ = (marks, d, t);
        false
    }

    /// The earliest processing-time timer (possibly deleted since).
    fn next_processing_time(&self) -> Option<Timestamp>;

    /// The earliest event-time timer (possibly deleted since): no watermark before it fires
    /// anything. `Some(i64::MIN)`, the default, for a store that cannot tell.
    fn next_event_time(&self) -> Option<Timestamp> {
        Some(Timestamp::MIN)
    }

    /// Live timers: (event time, processing time).
    fn pending(&self) -> (usize, usize);

    /// The timers and the watermark, as a snapshot of the operator lists them (see
    /// [`TimerListing`]).
    ///
    /// # Errors
    /// [`SnapshotError::Unsupported`] from a store that cannot list its timers (the default).
    fn listing(&self) -> Result<TimerListing<W>, SnapshotError> {
        Err(SnapshotError::Unsupported(
            std::any::type_name::<Self>().to_owned(),
        ))
    }

    /// A store holding what `listing` lists, to replace this fresh one. `in_marks` counts the
    /// live timers the operator put back into the windows' [`Marks`] (and, for the retired
    /// windows, their cleanup timers): (event time, processing time).
    ///
    /// # Errors
    /// [`SnapshotError::Invalid`] for a listing of another kind of store;
    /// [`SnapshotError::Unsupported`] as for [`TimerStore::listing`].
    fn from_listing(listing: TimerListing<W>, in_marks: [usize; 2]) -> Result<Self, SnapshotError>
    where
        Self: Sized,
    {
        let _ = (listing, in_marks);
        Err(SnapshotError::Unsupported(
            std::any::type_name::<Self>().to_owned(),
        ))
    }
}

/// The timers of a [`TimerStore`] and its watermark, as a snapshot of the operator holds them:
/// each domain's timers in the order [`TimerStore::pop_due`] gives them.
///
/// For [`MarkedTimers`] (`marked`) the lists are the store's queue entries, deleted timers
/// included (a deleted timer registered again fires at its first entry, and the earliest entry
/// is what [`TimerStore::next_processing_time`] reports), and whether a timer is live is in the
/// windows' [`Marks`] and in `orphans`; pushing the entries back in this order gives a store
/// that pops exactly what the original pops. For [`TimerService`] they are its live timers in
/// firing order ([`TimerService::event_timers_in_order`]) and `orphans` is empty: the entries
/// deleted timers leave are not listed, so a restored one reports a later
/// [`TimerStore::next_processing_time`] where the earliest entry was deleted, and a timer
/// deleted before the snapshot and registered again after it fires after the timers of its
/// timestamp registered in between, where the original fires it at its first entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimerListing<W> {
    /// Whether this is a listing of [`MarkedTimers`] (else of [`TimerService`]).
    pub marked: bool,
    /// The watermark in ms.
    pub watermark: Timestamp,
    /// Event-time timers: (timestamp, key, window), in popping order.
    pub event: Vec<(Timestamp, KeyId, W)>,
    /// Processing-time timers, likewise.
    pub processing: Vec<(Timestamp, KeyId, W)>,
    /// Live timers of windows without a state ([`MarkedTimers`] only), in no particular order.
    pub orphans: Vec<(Domain, Timestamp, KeyId, W)>,
}

/// The operator's timers: live timers in the windows' [`Marks`] (orphans in a set), time order
/// in [`TimeBuckets`]. See the module documentation.
#[derive(Debug)]
pub struct MarkedTimers<W> {
    event: TimeBuckets<(KeyId, W)>,
    processing: TimeBuckets<(KeyId, W)>,
    watermark: Timestamp,
    orphans: HashSet<(Domain, Timestamp, KeyId, W), ahash::RandomState>,
    /// Live timers: event time, processing time.
    live: [usize; 2],
}

impl<W> Default for MarkedTimers<W> {
    fn default() -> Self {
        Self {
            event: TimeBuckets::new(),
            processing: TimeBuckets::new(),
            watermark: Timestamp::MIN,
            orphans: HashSet::default(),
            live: [0; 2],
        }
    }
}

impl<W> MarkedTimers<W> {
    fn queue(&mut self, d: Domain) -> &mut TimeBuckets<(KeyId, W)> {
        match d {
            Domain::EventTime => &mut self.event,
            Domain::ProcessingTime => &mut self.processing,
        }
    }
}

fn slot(d: Domain) -> usize {
    match d {
        Domain::EventTime => 0,
        Domain::ProcessingTime => 1,
    }
}

impl<W: Copy + Eq + Hash + Debug> TimerStore<W> for MarkedTimers<W> {
    fn watermark(&self) -> Timestamp {
        self.watermark
    }

    fn advance_watermark(&mut self, wm: Timestamp) -> bool {
        if wm > self.watermark {
            self.watermark = wm;
            true
        } else {
            false
        }
    }

    #[inline]
    fn register(&mut self, d: Domain, t: Timestamp, key: KeyId, w: W, marks: Option<&mut Marks>) {
        let fresh = match marks {
            // A timer made while the window had no state is an orphan: still the same timer.
            Some(m) => {
                (self.orphans.is_empty() || !self.orphans.contains(&(d, t, key, w)))
                    && m.insert(d, t)
            }
            None => self.orphans.insert((d, t, key, w)),
        };
        if fresh {
            self.queue(d).push(t, (key, w));
            self.live[slot(d)] += 1;
        }
    }

    #[inline]
    fn delete(&mut self, d: Domain, t: Timestamp, key: KeyId, w: W, marks: Option<&mut Marks>) {
        self.remove_live(d, t, key, w, marks);
    }

    #[inline]
    fn pop_due(&mut self, d: Domain, up_to: Timestamp) -> Option<(Timestamp, KeyId, W)> {
        self.queue(d).pop_due(up_to).map(|(t, (k, w))| (t, k, w))
    }

    #[inline]
    fn take_live(
        &mut self,
        d: Domain,
        t: Timestamp,
        key: KeyId,
        w: W,
        marks: Option<&mut Marks>,
    ) -> bool {
        // Here, taking a due timer is deleting it.
        self.remove_live(d, t, key, w, marks)
    }

    fn adopt(&mut self, key: KeyId, w: W, marks: &mut Marks) {
        if marks.is_empty() {
            return; // the usual: the trigger and the cleanup deleted every timer
        }
        for (d, t) in marks.take_all() {
            self.orphans.insert((d, t, key, w));
        }
    }

    fn is_only_timer(&self, marks: &Marks, d: Domain, t: Timestamp) -> bool {
        self.orphans.is_empty() && marks.is_only(d, t)
    }

    fn next_processing_time(&self) -> Option<Timestamp> {
        self.processing.peek_timestamp()
    }

    fn next_event_time(&self) -> Option<Timestamp> {
        self.event.peek_timestamp()
    }

    fn pending(&self) -> (usize, usize) {
        (self.live[0], self.live[1])
    }

    fn listing(&self) -> Result<TimerListing<W>, SnapshotError> {
        let entries = |q: &TimeBuckets<(KeyId, W)>| {
            q.iter_in_order()
                .map(|(t, &(k, w))| (t, k, w))
                .collect::<Vec<_>>()
        };
        Ok(TimerListing {
            marked: true,
            watermark: self.watermark,
            event: entries(&self.event),
            processing: entries(&self.processing),
            orphans: self.orphans.iter().copied().collect(),
        })
    }

    fn from_listing(listing: TimerListing<W>, in_marks: [usize; 2]) -> Result<Self, SnapshotError> {
        if !listing.marked {
            return Err(SnapshotError::Invalid(
                "the snapshot's timers are a plain timer service's, this operator keeps them \
                 in its windows' states (MarkedTimers)"
                    .to_owned(),
            ));
        }
        let mut store = Self {
            watermark: listing.watermark,
            live: in_marks,
            ..Self::default()
        };
        for (t, k, w) in listing.event {
            store.event.push(t, (k, w));
        }
        for (t, k, w) in listing.processing {
            store.processing.push(t, (k, w));
        }
        for timer in listing.orphans {
            if store.orphans.insert(timer) {
                store.live[slot(timer.0)] += 1;
            }
        }
        Ok(store)
    }
}

impl<W: Copy + Eq + Hash + Debug> MarkedTimers<W> {
    /// Removes a live timer (from the window's marks, else the orphans); whether it was live.
    #[inline]
    fn remove_live(
        &mut self,
        d: Domain,
        t: Timestamp,
        key: KeyId,
        w: W,
        marks: Option<&mut Marks>,
    ) -> bool {
        let live = marks.is_some_and(|m| m.remove(d, t))
            || (!self.orphans.is_empty() && self.orphans.remove(&(d, t, key, w)));
        if live {
            self.live[slot(d)] -= 1;
        }
        live
    }
}

/// The plain structure: a set of live timers beside the time order (Flink's
/// `InternalTimerService`); it ignores the windows' marks. The reference the operator's tests
/// compare [`MarkedTimers`] with.
impl<W: Copy + Eq + Hash + Debug> TimerStore<W> for TimerService<KeyId, W> {
    fn watermark(&self) -> Timestamp {
        self.current_watermark()
    }

    fn advance_watermark(&mut self, wm: Timestamp) -> bool {
        TimerService::advance_watermark(self, wm)
    }

    fn register(&mut self, d: Domain, t: Timestamp, key: KeyId, w: W, _: Option<&mut Marks>) {
        match d {
            Domain::EventTime => self.register_event_time_timer(t, key, w),
            Domain::ProcessingTime => self.register_processing_time_timer(t, key, w),
        }
    }

    fn delete(&mut self, d: Domain, t: Timestamp, key: KeyId, w: W, _: Option<&mut Marks>) {
        match d {
            Domain::EventTime => self.delete_event_time_timer(t, key, w),
            Domain::ProcessingTime => self.delete_processing_time_timer(t, key, w),
        }
    }

    fn pop_due(&mut self, d: Domain, up_to: Timestamp) -> Option<(Timestamp, KeyId, W)> {
        let timer = match d {
            Domain::EventTime => {
                // The watermark bounds event-time timers here.
                debug_assert!(up_to <= self.current_watermark());
                self.pop_due_event_timer()
            }
            Domain::ProcessingTime => self.pop_due_processing_timer(up_to),
        }?;
        Some((timer.timestamp, timer.key, timer.namespace))
    }

    fn take_live(
        &mut self,
        _: Domain,
        _: Timestamp,
        _: KeyId,
        _: W,
        _: Option<&mut Marks>,
    ) -> bool {
        // Only live timers leave `pop_due`, and they leave the live set with it.
        true
    }

    fn adopt(&mut self, _: KeyId, _: W, _: &mut Marks) {}

    fn next_processing_time(&self) -> Option<Timestamp> {
        self.next_processing_time_timer()
    }

    fn next_event_time(&self) -> Option<Timestamp> {
        self.next_event_time_timer()
    }

    fn pending(&self) -> (usize, usize) {
        TimerService::pending(self)
    }

    fn listing(&self) -> Result<TimerListing<W>, SnapshotError> {
        let entries = |timers: Vec<timer_service::Timer<KeyId, W>>| {
            timers
                .into_iter()
                .map(|t| (t.timestamp, t.key, t.namespace))
                .collect()
        };
        Ok(TimerListing {
            marked: false,
            watermark: self.current_watermark(),
            event: entries(self.event_timers_in_order()),
            processing: entries(self.processing_timers_in_order()),
            orphans: Vec::new(),
        })
    }

    fn from_listing(listing: TimerListing<W>, _: [usize; 2]) -> Result<Self, SnapshotError> {
        if listing.marked || !listing.orphans.is_empty() {
            return Err(SnapshotError::Invalid(
                "the snapshot's timers are kept in window states (MarkedTimers), this operator \
                 keeps them in a plain timer service"
                    .to_owned(),
            ));
        }
        let mut store = Self::new();
        store.advance_watermark(listing.watermark);
        for (t, k, w) in listing.event {
            store.register_event_time_timer(t, k, w);
        }
        for (t, k, w) in listing.processing {
            store.register_processing_time_timer(t, k, w);
        }
        Ok(store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_small() {
        assert_eq!(std::mem::size_of::<Marks>(), 40);
    }

    #[test]
    fn marks_hold_a_set_of_timers() {
        let mut m = Marks::default();
        assert!(m.is_empty());
        assert!(m.insert(Domain::EventTime, 9));
        assert!(!m.insert(Domain::EventTime, 9));
        assert!(m.insert(Domain::ProcessingTime, 9));
        assert!(m.insert(Domain::EventTime, 19));
        assert!(m.insert(Domain::EventTime, 29));
        assert!(m.contains(Domain::EventTime, 19) && m.contains(Domain::ProcessingTime, 9));
        assert!(m.remove(Domain::EventTime, 9));
        assert!(!m.remove(Domain::EventTime, 9));
        assert!(
            m.insert(Domain::EventTime, 39),
            "a freed inline slot is reused"
        );
        let mut all: Vec<_> = m.take_all().collect();
        all.sort_by_key(|x| (x.1, x.0 == Domain::ProcessingTime));
        assert_eq!(
            all,
            [
                (Domain::ProcessingTime, 9),
                (Domain::EventTime, 19),
                (Domain::EventTime, 29),
                (Domain::EventTime, 39)
            ]
        );
        assert!(m.is_empty());
        assert!(m.insert(Domain::EventTime, 5));
        assert!(m.is_only(Domain::EventTime, 5));
        assert!(!m.is_only(Domain::ProcessingTime, 5));
        assert!(m.insert(Domain::EventTime, 6));
        assert!(!m.is_only(Domain::EventTime, 5));
        assert!(m.remove(Domain::EventTime, 5));
        assert!(
            m.is_only(Domain::EventTime, 6),
            "the second inline slot counts too"
        );
    }
}
