//! [`TimeBuckets`]: items kept by timestamp and taken back earliest first, first in first out
//! within a timestamp. The time-ordered index under [`crate::TimerQueue`] and the window
//! operator's timers; it neither deduplicates nor deletes (its users decide whether an item
//! taken back is still wanted).
//!
//! Layout: a min-heap of the timestamps that have a bucket, a bucket per timestamp (a ring
//! buffer, in slots that are reused once emptied), a hash map from timestamp to slot, and in
//! front of it a small direct-mapped cache of recently used timestamps: runs of pushes at a few
//! timestamps (every window of a tumbling or sliding assigner ends at one of a few) and the
//! draining of one bucket find their slot without hashing.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use crate::Timestamp;

/// Entries of the slot cache (a power of two).
const CACHE: usize = 16;

/// Items by timestamp, earliest first, FIFO within a timestamp.
///
/// # Examples
/// ```
/// use timer_service::TimeBuckets;
/// let mut b = TimeBuckets::new();
/// b.push(10, "late");
/// b.push(5, "first");
/// b.push(5, "second");
/// assert_eq!(b.peek_timestamp(), Some(5));
/// assert_eq!(b.pop_due(7), Some((5, "first")));
/// assert_eq!(b.pop_due(7), Some((5, "second")));
/// assert_eq!(b.pop_due(7), None);
/// assert_eq!(b.len(), 1);
/// ```
#[derive(Clone, Debug)]
pub struct TimeBuckets<T> {
    /// Timestamps with a bucket, earliest on top; each appears once.
    times: BinaryHeap<Reverse<Timestamp>>,
    /// Timestamp to slot, for every bucket.
    index: HashMap<Timestamp, u32, ahash::RandomState>,
    /// The buckets; a slot listed in `free` is empty and unused.
    slots: Vec<VecDeque<T>>,
    free: Vec<u32>,
    /// Recently used (timestamp, slot) pairs, by a hash of the timestamp; `None` when unused.
    cache: [Option<(Timestamp, u32)>; CACHE],
    len: usize,
}

impl<T> Default for TimeBuckets<T> {
    fn default() -> Self {
        Self {
            times: BinaryHeap::new(),
            index: HashMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
            cache: [None; CACHE],
            len: 0,
        }
    }
}

/// The cache entry of `t`.
#[inline]
fn cache_line(t: Timestamp) -> usize {
    // Fibonacci hashing: the top bits of a multiply spread timestamps that are multiples of a
    // slide over the lines.
    ((t as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - CACHE.trailing_zeros())) as usize
}

impl<T> TimeBuckets<T> {
    /// No items.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The slot of `t`'s bucket, if it has one.
    #[inline]
    fn slot(&mut self, t: Timestamp) -> Option<u32> {
        let line = cache_line(t);
        if let Some((ct, slot)) = self.cache[line] {
            if ct == t {
                return Some(slot);
            }
        }
        let slot = *self.index.get(&t)?;
        self.cache[line] = Some((t, slot));
        Some(slot)
    }

    /// Adds `item` at `t`, after the items already there.
    ///
    /// # Panics
    /// With more than 2^32 timestamps holding items at once.
    #[inline]
    pub fn push(&mut self, t: Timestamp, item: T) {
        let slot = match self.slot(t) {
            Some(slot) => slot,
            None => self.new_bucket(t),
        };
        self.slots[slot as usize].push_back(item);
        self.len += 1;
    }

    #[cold]
    fn new_bucket(&mut self, t: Timestamp) -> u32 {
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(VecDeque::new());
            u32::try_from(self.slots.len() - 1).expect("more than 2^32 timestamps with items")
        });
        self.index.insert(t, slot);
        self.times.push(Reverse(t));
        self.cache[cache_line(t)] = Some((t, slot));
        slot
    }

    /// Removes and returns the earliest item at or before `up_to` (the first pushed of its
    /// timestamp), with its timestamp.
    pub fn pop_due(&mut self, up_to: Timestamp) -> Option<(Timestamp, T)> {
        loop {
            let Reverse(t) = *self.times.peek()?;
            if t > up_to {
                return None;
            }
            // Every timestamp in the heap has its bucket: both are added and removed together.
            let slot = self.slot(t)?;
            let bucket = &mut self.slots[slot as usize];
            let item = bucket.pop_front();
            if bucket.is_empty() {
                self.times.pop();
                self.index.remove(&t);
                self.cache[cache_line(t)] = None;
                self.free.push(slot);
            }
            if let Some(item) = item {
                self.len -= 1;
                return Some((t, item));
            }
        }
    }

    /// The earliest timestamp holding an item.
    #[must_use]
    pub fn peek_timestamp(&self) -> Option<Timestamp> {
        self.times.peek().map(|Reverse(t)| *t)
    }

    /// Every item in the order [`TimeBuckets::pop_due`] would return them: by timestamp, and in
    /// push order within one. What a snapshot writes: pushing them in this order into an empty
    /// `TimeBuckets` gives one that pops the same items in the same order.
    pub fn iter_in_order(&self) -> impl Iterator<Item = (Timestamp, &T)> + '_ {
        let mut times: Vec<Timestamp> = self.times.iter().map(|Reverse(t)| *t).collect();
        times.sort_unstable();
        times.into_iter().flat_map(move |t| {
            // Every timestamp in the heap has its bucket.
            let bucket = self.index.get(&t).map(|&slot| &self.slots[slot as usize]);
            bucket.into_iter().flatten().map(move |item| (t, item))
        })
    }

    /// The number of items held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no item is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a naive model: a list of (timestamp, push number, item), taken by smallest
    /// (timestamp, push number); pushes while draining included.
    #[test]
    fn matches_a_sorted_list_under_random_operations() {
        let mut seed: u64 = 0xD1B5_4A32_D192_ED03;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut b: TimeBuckets<u32> = TimeBuckets::new();
        let mut model: Vec<(i64, u64, u32)> = Vec::new();
        let mut pushes = 0_u64;
        let mut up_to = -50_i64;
        for step in 0..40_000_u32 {
            let r = next();
            // Timestamps near the current time (many items share one; some are already due)
            // and, now and then, multiples of a large slide.
            let t = if r % 16 != 0 {
                up_to + (r >> 8) as i64 % 60 - 10
            } else {
                ((r >> 8) % 8) as i64 * 300_000
            };
            if (r >> 40) % 3 != 0 {
                b.push(t, step);
                model.push((t, pushes, step));
                pushes += 1;
            } else {
                up_to += (r >> 44) as i64 % 7;
                for _ in 0..(r >> 50) % 9 {
                    let expected = model
                        .iter()
                        .enumerate()
                        .filter(|(_, m)| m.0 <= up_to)
                        .min_by_key(|(_, m)| (m.0, m.1))
                        .map(|(i, _)| i);
                    let got = b.pop_due(up_to);
                    match expected {
                        Some(i) => {
                            let m = model.remove(i);
                            assert_eq!(got, Some((m.0, m.2)), "step {step}");
                        }
                        None => assert_eq!(got, None, "step {step}"),
                    }
                }
            }
            assert_eq!(b.len(), model.len());
            assert_eq!(b.peek_timestamp(), model.iter().map(|m| m.0).min());
            if step % 997 == 0 {
                let mut sorted = model.clone();
                sorted.sort_by_key(|m| (m.0, m.1));
                let listed: Vec<(i64, u32)> = b.iter_in_order().map(|(t, &i)| (t, i)).collect();
                let expected: Vec<(i64, u32)> = sorted.iter().map(|m| (m.0, m.2)).collect();
                assert_eq!(listed, expected, "step {step}");
            }
        }
    }
}
