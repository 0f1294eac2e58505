//! Timers in event time and processing time, deduplicated and kept in time order.
//!
//! A window operator asks to be called back when the watermark (event time) or the wall clock
//! (processing time) reaches some timestamp, for a given key and namespace (for windows, the
//! namespace is the window). This crate keeps those requests: a timer is identified by
//! `(timestamp, key, namespace)`, so registering the same one twice keeps one timer, exactly as
//! Flink's `InternalTimerService` deduplicates. Timers sit in a time-ordered index
//! ([`TimeBuckets`]: a min-heap of the timestamps that have timers and a bucket per timestamp;
//! [`TimerQueue`] adds a hash set of the live timers), so advancing time touches only the timers
//! that are due, never every key, and a steady stream of timers allocates nothing once the
//! buffers have grown.
//!
//! [`TimerService`] pairs the two queues with the current watermark; [`Clock`] abstracts where
//! processing time comes from ([`SystemClock`] in production, [`ManualClock`] in tests).
//!
//! **Invariant:** this crate knows nothing about windows: keys and namespaces are opaque ordered
//! values.
#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod buckets;

pub use buckets::TimeBuckets;

use std::collections::HashSet;
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch.
pub type Timestamp = i64;

/// A timer: call back `key`/`namespace` at `timestamp` (ms).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Timer<K, N> {
    /// When the timer is due, in ms.
    pub timestamp: Timestamp,
    /// The key it belongs to.
    pub key: K,
    /// The namespace (for window operators: the window).
    pub namespace: N,
}

/// Timers of one time domain, deduplicated and fired in timestamp order.
///
/// Layout: the timers in [`TimeBuckets`] (a min-heap of timestamps, a bucket per timestamp in
/// registration order) and a hash set of the live timers. Many timers share a timestamp (every
/// window ending at `t`, across keys), so the heap stays small and registering is a hash-set
/// insert plus a push. Deleting only removes the timer from the live set; its bucket entry is
/// skipped when its time comes. Timers due at the same time fire in registration order. Once
/// the buffers have grown, registering and firing allocate nothing (a B-tree allocates and
/// frees nodes as timestamps come and go).
///
/// # Examples
/// ```
/// use timer_service::TimerQueue;
/// let mut q = TimerQueue::new();
/// assert!(q.register(10, "a", 1));
/// assert!(!q.register(10, "a", 1)); // deduplicated
/// q.register(5, "b", 1);
/// assert_eq!(q.pop_due(9).map(|t| t.timestamp), Some(5));
/// assert_eq!(q.pop_due(9), None);
/// assert_eq!(q.peek_timestamp(), Some(10));
/// ```
#[derive(Clone, Debug)]
pub struct TimerQueue<K, N> {
    buckets: TimeBuckets<(K, N)>,
    live: HashSet<(Timestamp, K, N), ahash::RandomState>,
}

impl<K: Hash + Eq, N: Hash + Eq> Default for TimerQueue<K, N> {
    fn default() -> Self {
        Self {
            buckets: TimeBuckets::new(),
            live: HashSet::default(),
        }
    }
}

impl<K: Hash + Eq + Clone, N: Hash + Eq + Clone> TimerQueue<K, N> {
    /// An empty queue.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a timer; returns `false` if the same `(timestamp, key, namespace)` was already there.
    pub fn register(&mut self, timestamp: Timestamp, key: K, namespace: N) -> bool {
        if !self
            .live
            .insert((timestamp, key.clone(), namespace.clone()))
        {
            return false;
        }
        self.buckets.push(timestamp, (key, namespace));
        true
    }

    /// Removes a timer; returns whether it was there.
    pub fn delete(&mut self, timestamp: Timestamp, key: K, namespace: N) -> bool {
        self.live.remove(&(timestamp, key, namespace))
    }

    /// Removes and returns the earliest live timer if it is due (`timestamp <= up_to`).
    pub fn pop_due(&mut self, up_to: Timestamp) -> Option<Timer<K, N>> {
        loop {
            let (timestamp, (key, namespace)) = self.buckets.pop_due(up_to)?;
            // Deleted timers stay in their bucket until here; only live ones fire.
            let probe = (timestamp, key, namespace);
            if self.live.remove(&probe) {
                let (timestamp, key, namespace) = probe;
                return Some(Timer {
                    timestamp,
                    key,
                    namespace,
                });
            }
        }
    }

    /// The earliest timestamp with a registered timer, if any. It may belong to a timer deleted
    /// since, so treat it as the earliest time anything *may* be due.
    #[must_use]
    pub fn peek_timestamp(&self) -> Option<Timestamp> {
        self.buckets.peek_timestamp()
    }

    /// Every live timer, in the order [`TimerQueue::pop_due`] would fire them (by timestamp,
    /// then registration order; a timer deleted and registered again keeps its first place, as
    /// `pop_due` gives it). Registering them in this order into an empty queue gives one that
    /// fires the same timers in the same order: what a snapshot of the queue holds.
    #[must_use]
    pub fn live_in_order(&self) -> Vec<Timer<K, N>> {
        let mut seen: HashSet<(Timestamp, &K, &N), ahash::RandomState> = HashSet::default();
        let mut timers = Vec::with_capacity(self.live.len());
        for (timestamp, (key, namespace)) in self.buckets.iter_in_order() {
            let probe = (timestamp, key.clone(), namespace.clone());
            if self.live.contains(&probe) && seen.insert((timestamp, key, namespace)) {
                timers.push(Timer {
                    timestamp,
                    key: probe.1,
                    namespace: probe.2,
                });
            }
        }
        timers
    }

    /// Number of live timers.
    #[must_use]
    pub fn len(&self) -> usize {
        self.live.len()
    }

    /// Whether no timer is live.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }
}

/// Event-time and processing-time timers together with the current watermark (Flink's
/// `InternalTimerService`, without the key context: keys are passed explicitly).
///
/// The watermark starts at `i64::MIN` and never goes back.
#[derive(Clone, Debug)]
pub struct TimerService<K, N> {
    event_time: TimerQueue<K, N>,
    processing_time: TimerQueue<K, N>,
    watermark: Timestamp,
}

impl<K: Hash + Eq + Clone, N: Hash + Eq + Clone> Default for TimerService<K, N> {
    fn default() -> Self {
        Self {
            event_time: TimerQueue::new(),
            processing_time: TimerQueue::new(),
            watermark: Timestamp::MIN,
        }
    }
}

impl<K: Hash + Eq + Clone, N: Hash + Eq + Clone> TimerService<K, N> {
    /// No timers, watermark `i64::MIN`.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The current event-time watermark in ms.
    #[must_use]
    pub fn current_watermark(&self) -> Timestamp {
        self.watermark
    }

    /// Moves the watermark to `watermark` if that is later; returns whether it moved. Due
    /// event-time timers are then taken with [`TimerService::pop_due_event_timer`].
    pub fn advance_watermark(&mut self, watermark: Timestamp) -> bool {
        if watermark > self.watermark {
            self.watermark = watermark;
            true
        } else {
            false
        }
    }

    /// Removes and returns the earliest event-time timer at or before the watermark. Timers
    /// registered while handling one are considered too, so calling this in a loop drains
    /// everything due, in timestamp order.
    pub fn pop_due_event_timer(&mut self) -> Option<Timer<K, N>> {
        self.event_time.pop_due(self.watermark)
    }

    /// Removes and returns the earliest processing-time timer at or before `now`.
    pub fn pop_due_processing_timer(&mut self, now: Timestamp) -> Option<Timer<K, N>> {
        self.processing_time.pop_due(now)
    }

    /// Registers an event-time timer (deduplicated).
    pub fn register_event_time_timer(&mut self, timestamp: Timestamp, key: K, namespace: N) {
        self.event_time.register(timestamp, key, namespace);
    }

    /// Deletes an event-time timer, if present.
    pub fn delete_event_time_timer(&mut self, timestamp: Timestamp, key: K, namespace: N) {
        self.event_time.delete(timestamp, key, namespace);
    }

    /// Registers a processing-time timer (deduplicated).
    pub fn register_processing_time_timer(&mut self, timestamp: Timestamp, key: K, namespace: N) {
        self.processing_time.register(timestamp, key, namespace);
    }

    /// Deletes a processing-time timer, if present.
    pub fn delete_processing_time_timer(&mut self, timestamp: Timestamp, key: K, namespace: N) {
        self.processing_time.delete(timestamp, key, namespace);
    }

    /// The live event-time timers in firing order ([`TimerQueue::live_in_order`]).
    #[must_use]
    pub fn event_timers_in_order(&self) -> Vec<Timer<K, N>> {
        self.event_time.live_in_order()
    }

    /// The live processing-time timers in firing order ([`TimerQueue::live_in_order`]).
    #[must_use]
    pub fn processing_timers_in_order(&self) -> Vec<Timer<K, N>> {
        self.processing_time.live_in_order()
    }

    /// The earliest pending event-time timer: no watermark before it fires anything.
    #[must_use]
    pub fn next_event_time_timer(&self) -> Option<Timestamp> {
        self.event_time.peek_timestamp()
    }

    /// The earliest pending processing-time timer, so a driver knows how long it may sleep.
    #[must_use]
    pub fn next_processing_time_timer(&self) -> Option<Timestamp> {
        self.processing_time.peek_timestamp()
    }

    /// Pending timers: (event time, processing time).
    #[must_use]
    pub fn pending(&self) -> (usize, usize) {
        (self.event_time.len(), self.processing_time.len())
    }
}

/// A source of processing time in ms since the epoch.
pub trait Clock: Send + Sync + Debug {
    /// The current time in ms.
    fn now_ms(&self) -> Timestamp;
}

/// The system's wall clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> Timestamp {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }
}

/// A clock that moves only when told to, for tests. Clones share the same time.
///
/// # Examples
/// ```
/// use timer_service::{Clock, ManualClock};
/// let c = ManualClock::new(1_000);
/// c.advance(500);
/// assert_eq!(c.now_ms(), 1_500);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ManualClock {
    now: Arc<AtomicI64>,
}

impl ManualClock {
    /// A clock reading `start` ms.
    #[must_use]
    pub fn new(start: Timestamp) -> Self {
        Self {
            now: Arc::new(AtomicI64::new(start)),
        }
    }

    /// Sets the time to `t` ms.
    pub fn set(&self, t: Timestamp) {
        self.now.store(t, Ordering::SeqCst);
    }

    /// Moves the time forward by `d` ms (saturating).
    pub fn advance(&self, d: i64) {
        let t = self.now.load(Ordering::SeqCst).saturating_add(d);
        self.now.store(t, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> Timestamp {
        self.now.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The timer service against a naive reference: a sorted, deduplicated list.
    #[test]
    fn matches_a_sorted_list_under_random_operations() {
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut svc: TimerService<u8, u8> = TimerService::new();
        let mut reference: Vec<(i64, u8, u8)> = Vec::new();
        for _ in 0..20_000 {
            let r = next();
            let (t, k, n) = ((r % 200) as i64, (r >> 8) as u8 % 4, (r >> 16) as u8 % 3);
            match (r >> 24) % 4 {
                0 | 1 => {
                    svc.register_event_time_timer(t, k, n);
                    if !reference.contains(&(t, k, n)) {
                        reference.push((t, k, n));
                    }
                }
                2 => {
                    svc.delete_event_time_timer(t, k, n);
                    reference.retain(|x| *x != (t, k, n));
                }
                _ => {
                    let wm = svc.current_watermark().max(0) + (r >> 32) as i64 % 5;
                    svc.advance_watermark(wm);
                    reference.sort_unstable();
                    let due: Vec<_> = reference.iter().copied().filter(|x| x.0 <= wm).collect();
                    reference.retain(|x| x.0 > wm);
                    let mut got = Vec::new();
                    while let Some(tm) = svc.pop_due_event_timer() {
                        got.push((tm.timestamp, tm.key, tm.namespace));
                    }
                    // Timestamps must come in order; within one timestamp the order is the
                    // queue's (registration order), so compare those groups as sets.
                    assert!(got.windows(2).all(|w| w[0].0 <= w[1].0), "{got:?}");
                    got.sort_unstable();
                    assert_eq!(got, due);
                }
            }
        }
    }

    #[test]
    fn watermark_never_goes_back_and_processing_timers_fire_by_clock() {
        let mut svc: TimerService<u8, u8> = TimerService::new();
        assert_eq!(svc.current_watermark(), i64::MIN);
        assert!(svc.advance_watermark(10));
        assert!(!svc.advance_watermark(5));
        assert_eq!(svc.current_watermark(), 10);
        svc.register_processing_time_timer(100, 1, 0);
        svc.register_processing_time_timer(50, 2, 0);
        assert_eq!(svc.next_processing_time_timer(), Some(50));
        assert_eq!(svc.pop_due_processing_timer(49), None);
        assert_eq!(svc.pop_due_processing_timer(100).map(|t| t.key), Some(2));
        assert_eq!(svc.pop_due_processing_timer(100).map(|t| t.key), Some(1));
        assert_eq!(svc.pending(), (0, 0));
    }
}

#[cfg(test)]
mod order_tests {
    use super::*;

    /// A queue rebuilt from `live_in_order` fires the same timers in the same order as the
    /// original, after random registrations, deletions and re-registrations (a deleted timer
    /// registered again fires at its first place, which the listing must keep).
    #[test]
    fn a_queue_rebuilt_from_its_listing_fires_in_the_same_order() {
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..200 {
            let mut q: TimerQueue<u8, u8> = TimerQueue::new();
            let mut up_to = 0_i64;
            for _ in 0..(next() % 300) {
                let r = next();
                let (t, k, n) = (
                    up_to + (r % 30) as i64,
                    (r >> 8) as u8 % 5,
                    (r >> 16) as u8 % 3,
                );
                match (r >> 24) % 5 {
                    0..=2 => {
                        q.register(t, k, n);
                    }
                    3 => {
                        q.delete(t, k, n);
                    }
                    _ => {
                        up_to += (r >> 32) as i64 % 4;
                        let _ = q.pop_due(up_to);
                    }
                }
            }
            let listing = q.live_in_order();
            assert_eq!(listing.len(), q.len(), "round {round}");
            let mut rebuilt: TimerQueue<u8, u8> = TimerQueue::new();
            for t in &listing {
                assert!(rebuilt.register(t.timestamp, t.key, t.namespace));
            }
            let drain = |q: &mut TimerQueue<u8, u8>| {
                let mut fired = Vec::new();
                while let Some(t) = q.pop_due(i64::MAX) {
                    fired.push(t);
                }
                fired
            };
            let original = drain(&mut q);
            assert_eq!(original, listing, "round {round}");
            assert_eq!(drain(&mut rebuilt), original, "round {round}");
        }
    }
}
