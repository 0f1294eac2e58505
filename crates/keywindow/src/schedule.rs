//! The firing schedule of sliced windows: which keys fire which window, in window order.
//!
//! Every window of a sliding geometry has an *index* on the slide grid (`start = offset + index *
//! slide`), and windows fire in index order, since their max timestamps grow with it. A key has
//! at most one live entry (its next window); moving it pushes a new entry and leaves the old one
//! behind as *stale*, which the caller recognises and skips when the bucket fires. So scheduling is
//! a push, with no delete and no search.
//!
//! Entries wait in buckets, one per window index. While every pending entry lies within a
//! bounded span of indices, which holds for sliced windows (a key's next window is at most
//! `size / slide + 1` windows past the one firing), the buckets are a ring indexed by `index &
//! mask`: a push is a `Vec::push`, firing walks the ring, and the vectors of fired buckets go to a
//! small pool that the next empty buckets take from, so a steady stream allocates nothing and
//! memory follows the entries held. Where that span would need more than
//! [`MAX_RING_BUCKETS`] buckets (`size / slide` in the tens of thousands), the buckets live in a
//! `BTreeMap` instead, keyed by index, with emptied vectors pooled.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One scheduled firing: the key's slot and the window's start (ms).
pub(crate) type Entry = (u32, i64);

/// The largest ring; a span that needs more uses the tree.
pub(crate) const MAX_RING_BUCKETS: usize = 1 << 16;

/// How many emptied vectors the tree keeps for reuse.
const SPARE_VECTORS: usize = 64;

#[derive(Debug)]
enum Buckets {
    /// `ring[index & (ring.len() - 1)]`, for indices in `[low, low + ring.len())`.
    Ring(Vec<Vec<Entry>>),
    /// Buckets by index, for large spans.
    Tree(BTreeMap<i64, Vec<Entry>>),
}

impl Buckets {
    /// The bucket of `index`; one without room takes a vector from `spare`, if there is one.
    #[inline]
    fn at<'a>(&'a mut self, index: i64, spare: &mut Vec<Vec<Entry>>) -> &'a mut Vec<Entry> {
        match self {
            Buckets::Ring(ring) => {
                let mask = ring.len() - 1;
                let bucket = &mut ring[(index as usize) & mask];
                if bucket.capacity() == 0 {
                    if let Some(vector) = spare.pop() {
                        *bucket = vector;
                    }
                }
                bucket
            }
            Buckets::Tree(tree) => tree
                .entry(index)
                .or_insert_with(|| spare.pop().unwrap_or_default()),
        }
    }
}

/// Pending firings in buckets by window index (see the module docs).
#[derive(Debug)]
pub(crate) struct FireSchedule {
    buckets: Buckets,
    /// No pending entry has an index below `low` (ring: the bucket walk starts here).
    low: i64,
    /// No pending entry has an index above `high`.
    high: i64,
    /// Entries held, stale ones included.
    pending: usize,
    /// Emptied vectors, kept for their capacity.
    spare: Vec<Vec<Entry>>,
}

impl FireSchedule {
    /// A schedule for entries spread over at most `span` consecutive indices at a time
    /// (a hint: the ring grows if entries spread further).
    pub(crate) fn new(span: u64) -> Self {
        let buckets = match usize::try_from(span.saturating_add(1)) {
            Ok(n) if n <= MAX_RING_BUCKETS => {
                Buckets::Ring(vec![Vec::new(); n.next_power_of_two().max(2)])
            }
            _ => Buckets::Tree(BTreeMap::new()),
        };
        Self {
            buckets,
            low: 0,
            high: 0,
            pending: 0,
            spare: Vec::new(),
        }
    }

    /// Entries held, stale ones included.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.pending
    }

    /// Schedules `entry` at window `index`.
    #[inline]
    pub(crate) fn push(&mut self, index: i64, entry: Entry) {
        self.cover(index);
        self.pending += 1;
        self.place(index, entry);
    }

    /// Schedules the entries of `run`, in order, at window `index`, after those already there:
    /// the bucket takes `run`'s vector if it is empty, else a copy of its entries.
    pub(crate) fn push_run(&mut self, index: i64, mut run: Vec<Entry>) {
        if run.is_empty() {
            self.recycle(run);
            return;
        }
        self.cover(index);
        self.pending += run.len();
        let bucket = self.buckets.at(index, &mut self.spare);
        if bucket.is_empty() {
            std::mem::swap(bucket, &mut run);
        } else {
            bucket.extend_from_slice(&run);
        }
        self.recycle(run);
    }

    /// Makes the bounds cover `index`, before an entry is added there (the ring grows when the
    /// span of indices held would not fit it).
    #[inline]
    fn cover(&mut self, index: i64) {
        if self.pending == 0 {
            self.low = index;
            self.high = index;
        } else {
            let (low, high) = (self.low.min(index), self.high.max(index));
            if let Buckets::Ring(ring) = &self.buckets {
                let span = high.abs_diff(low);
                if span >= ring.len() as u64 {
                    self.grow(span);
                }
            }
            self.low = low;
            self.high = high;
        }
    }

    /// Puts `entry` in its bucket; the bounds and count are already updated.
    fn place(&mut self, index: i64, entry: Entry) {
        self.buckets.at(index, &mut self.spare).push(entry);
    }

    /// Makes room for `span + 1` consecutive indices: a larger ring, or the tree. The entries
    /// held lie in `[self.low, self.low + old ring length)`.
    #[cold]
    fn grow(&mut self, span: u64) {
        let Buckets::Ring(ring) = &mut self.buckets else {
            return;
        };
        let old = std::mem::take(ring);
        let old_mask = old.len() - 1;
        // Index of the entries in each old bucket: the one in the old window [low, low + len).
        let old_low = self.low;
        let index_of = |position: usize| {
            old_low.wrapping_add((position.wrapping_sub(old_low as usize) & old_mask) as i64)
        };
        let wanted = usize::try_from(span.saturating_add(1)).unwrap_or(usize::MAX);
        self.buckets = if wanted <= MAX_RING_BUCKETS {
            Buckets::Ring(vec![Vec::new(); wanted.next_power_of_two()])
        } else {
            Buckets::Tree(BTreeMap::new())
        };
        for (position, bucket) in old.into_iter().enumerate() {
            if !bucket.is_empty() {
                let index = index_of(position);
                for entry in bucket {
                    self.place(index, entry);
                }
            }
        }
    }

    /// A lower bound of the indices held (`None` when nothing is held).
    pub(crate) fn lowest_index(&self) -> Option<i64> {
        (self.pending > 0).then_some(self.low)
    }

    /// Whether an entry may be due at `due` (may say yes early, never no wrongly).
    #[inline]
    pub(crate) fn has_due(&self, due: i64) -> bool {
        self.pending > 0 && self.low <= due
    }

    /// Takes the lowest non-empty bucket if its index is `<= due` (`None` otherwise, or when
    /// nothing is pending). Hand the vector back with [`FireSchedule::recycle`] once drained.
    #[inline]
    pub(crate) fn take_due(&mut self, due: i64) -> Option<(i64, Vec<Entry>)> {
        if self.pending == 0 || self.low > due {
            return None;
        }
        match &mut self.buckets {
            Buckets::Ring(ring) => {
                let mask = ring.len() - 1;
                // Every pending entry lies in [low, high], a span shorter than the ring.
                while self.low <= due && self.low <= self.high {
                    let index = self.low;
                    let bucket = &mut ring[(index as usize) & mask];
                    match index.checked_add(1) {
                        Some(next) => self.low = next,
                        // The last index there is: nothing can be held beyond it.
                        None => self.high = i64::MIN,
                    }
                    if !bucket.is_empty() {
                        // An empty bucket holds no allocation: memory follows the entries
                        // held, not the ring's size times the largest bucket ever.
                        let taken = std::mem::take(bucket);
                        self.pending -= taken.len();
                        return Some((index, taken));
                    }
                }
                None
            }
            Buckets::Tree(tree) => {
                let entry = tree.first_entry()?;
                let index = *entry.key();
                if index > due {
                    self.low = index;
                    return None;
                }
                let taken = entry.remove();
                self.pending -= taken.len();
                self.low = tree.first_key_value().map_or(index, |(i, _)| *i);
                Some((index, taken))
            }
        }
    }

    /// Hands back a drained vector from [`FireSchedule::take_due`], for its capacity.
    pub(crate) fn recycle(&mut self, mut entries: Vec<Entry>) {
        entries.clear();
        if self.spare.len() < SPARE_VECTORS && entries.capacity() > 0 {
            self.spare.push(entries);
        }
    }
}

/// A snapshot of the schedule: every entry, stale ones included (a stale entry of a reused
/// slot fires where it stands), in firing order (index, then push order), with the bounds and
/// the kind of buckets, which decide when the caller looks for due entries.
#[derive(Serialize, Deserialize)]
struct ScheduleParts {
    /// Ring length, or `None` for the tree.
    ring: Option<u64>,
    low: i64,
    high: i64,
    entries: Vec<(i64, Entry)>,
}

impl FireSchedule {
    /// Every entry held, in firing order: (index, entry).
    fn entries_in_order(&self) -> Vec<(i64, Entry)> {
        let mut entries = Vec::with_capacity(self.pending);
        match &self.buckets {
            Buckets::Ring(ring) if self.pending > 0 => {
                let mask = ring.len() - 1;
                let mut index = self.low;
                while index <= self.high {
                    let bucket = &ring[(index as usize) & mask];
                    entries.extend(bucket.iter().map(|e| (index, *e)));
                    match index.checked_add(1) {
                        Some(next) => index = next,
                        None => break,
                    }
                }
            }
            Buckets::Ring(_) => {}
            Buckets::Tree(tree) => {
                for (&index, bucket) in tree {
                    entries.extend(bucket.iter().map(|e| (index, *e)));
                }
            }
        }
        entries
    }
}

impl Serialize for FireSchedule {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ScheduleParts {
            ring: match &self.buckets {
                Buckets::Ring(ring) => Some(ring.len() as u64),
                Buckets::Tree(_) => None,
            },
            low: self.low,
            high: self.high,
            entries: self.entries_in_order(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for FireSchedule {
    /// Refuses a ring that is not a power of two up to [`MAX_RING_BUCKETS`], and entries
    /// outside the bounds, out of order, or spread further than the ring.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let ScheduleParts {
            ring,
            low,
            high,
            entries,
        } = ScheduleParts::deserialize(deserializer)?;
        let buckets = match ring.map(usize::try_from) {
            None => Buckets::Tree(BTreeMap::new()),
            Some(Ok(n)) if (2..=MAX_RING_BUCKETS).contains(&n) && n.is_power_of_two() => {
                if !entries.is_empty() && high.abs_diff(low) >= n as u64 {
                    return Err(D::Error::custom("firing schedule wider than its ring"));
                }
                Buckets::Ring(vec![Vec::new(); n])
            }
            Some(_) => return Err(D::Error::custom("bad firing schedule ring")),
        };
        let in_order = entries
            .iter()
            .zip(entries.iter().skip(1))
            .all(|(a, b)| a.0 <= b.0);
        let in_bounds = entries.iter().all(|e| e.0 >= low && e.0 <= high);
        if !in_order || !in_bounds {
            return Err(D::Error::custom("firing schedule out of order"));
        }
        let mut schedule = Self {
            buckets,
            low,
            high,
            pending: entries.len(),
            spare: Vec::new(),
        };
        for (index, entry) in entries {
            schedule.place(index, entry);
        }
        Ok(schedule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drains everything due up to `due`, in the order fired.
    fn drain(s: &mut FireSchedule, due: i64) -> Vec<(i64, Entry)> {
        let mut fired = Vec::new();
        while let Some((index, entries)) = s.take_due(due) {
            fired.extend(entries.iter().map(|e| (index, *e)));
            s.recycle(entries);
        }
        fired
    }

    #[test]
    fn fires_in_index_order_then_push_order_and_only_when_due() {
        for span in [2, 8, u64::MAX] {
            let mut s = FireSchedule::new(span);
            s.push(5, (1, 50));
            s.push(3, (2, 30));
            s.push(5, (3, 50));
            assert_eq!(s.len(), 3);
            assert_eq!(drain(&mut s, 2), []);
            assert_eq!(drain(&mut s, 4), [(3, (2, 30))]);
            s.push(4, (4, 40));
            assert_eq!(
                drain(&mut s, 10),
                [(4, (4, 40)), (5, (1, 50)), (5, (3, 50))]
            );
            assert_eq!(s.len(), 0);
        }
    }

    #[test]
    fn matches_a_sorted_model_with_growth_and_negative_indices() {
        // Random pushes and runs around a moving frontier, spans beyond the hint (the ring
        // grows and finally turns into the tree), negative indices: the order must be (index,
        // push order), a run's entries pushed one by one in order.
        let mut seed = 77_u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for hint in [1, 4, 64] {
            let mut s = FireSchedule::new(hint);
            let mut model: Vec<(i64, u64, Entry)> = Vec::new();
            let mut frontier = -1_000_i64;
            let mut order = 0_u64;
            for round in 0..3_000 {
                let reach = if round % 500 == 0 { 200_000 } else { 40 };
                for _ in 0..next(4) {
                    let index = frontier + next(reach) as i64;
                    if next(3) == 0 {
                        // A run (empty ones too), into an empty bucket or after entries.
                        let mut run = Vec::new();
                        for _ in 0..next(5) {
                            let entry = (order as u32, index * 10);
                            run.push(entry);
                            model.push((index, order, entry));
                            order += 1;
                        }
                        s.push_run(index, run);
                        continue;
                    }
                    let entry = (order as u32, index * 10);
                    s.push(index, entry);
                    model.push((index, order, entry));
                    order += 1;
                }
                frontier += next(6) as i64;
                let fired = drain(&mut s, frontier - 1);
                model.sort_by_key(|m| (m.0, m.1));
                let due = model.partition_point(|m| m.0 < frontier);
                let expected: Vec<(i64, Entry)> = model.drain(..due).map(|m| (m.0, m.2)).collect();
                assert_eq!(fired, expected, "hint {hint} round {round}");
                assert_eq!(s.len(), model.len());
            }
        }
    }
}
