//! Windows that have fired at their end and only wait for their cleanup (allowed lateness), kept
//! apart from the live windows in a FIFO ordered by cleanup time.
//!
//! With allowed lateness `L`, Flink keeps every window's state until the watermark passes
//! `max_timestamp + L`, in case a late element comes. For short windows over many keys that
//! state is mostly windows that have fired and wait: tumbling 10 ms windows with `L` = 1 s hold
//! 100 times as many states as without lateness. In one hash map with the live windows, every
//! element's and every firing's lookup then misses the cache. Here a window whose end-of-window
//! firing left it with no timer but its cleanup timer moves out of the operator's map into this
//! FIFO: windows fire in timestamp order, so they arrive in cleanup-time order, and their cleanup
//! timers come due in that same order. Appending and cleaning up are then sequential, and the map
//! of live windows stays as small as without lateness.
//!
//! A window is looked up here only when it may have been retired: for a timer the map has no
//! state for, and for an element whose window ends at or behind the watermark and is not in the
//! map (a late element within the lateness). The lookup is O(1) when the window is at the front
//! (a cleanup in the order of firing, the usual). Anywhere else it is a binary search by cleanup
//! time and a scan of the windows with that cleanup time, which is one window per active key:
//! after [`INDEX_AFTER`] such scans (late elements keep coming) the FIFO builds a hash index by
//! (key, window) and keeps it, so each lookup is then one hash probe, at one hash insert and
//! removal per retired window. A window taken out leaves a tombstone, dropped when it reaches
//! either end.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

use ahash::RandomState;
use window_core::Timestamp;

use crate::keys::KeyId;

/// One retired window: `state` is `None` once taken out again (a tombstone).
#[derive(Debug)]
struct Entry<W, S> {
    cleanup: Timestamp,
    key: KeyId,
    window: W,
    state: Option<S>,
}

/// Lookups away from the front after which the FIFO indexes its windows (see the module
/// documentation).
pub(crate) const INDEX_AFTER: u64 = 256;

/// The FIFO of retired window states `S` of windows `W`, by cleanup time (ms).
#[derive(Debug)]
pub(crate) struct Retired<W, S> {
    entries: VecDeque<Entry<W, S>>,
    /// Entries with a state (not tombstones).
    live: usize,
    /// The sequence number of `entries[0]` (every entry pushed has the next one).
    front_seq: u64,
    /// Once built: the sequence number of every live entry, by (key, window).
    index: Option<HashMap<(KeyId, W), u64, RandomState>>,
    /// Lookups that scanned, and how many make the index.
    scans: u64,
    index_after: u64,
}

impl<W, S> Default for Retired<W, S> {
    fn default() -> Self {
        Self::with_index_after(INDEX_AFTER)
    }
}

impl<W, S> Retired<W, S> {
    /// A FIFO that builds its index after `scans` lookups away from the front.
    pub(crate) fn with_index_after(scans: u64) -> Self {
        Self {
            entries: VecDeque::new(),
            live: 0,
            front_seq: 0,
            index: None,
            scans: 0,
            index_after: scans,
        }
    }
}

impl<W: Copy + Eq + Hash, S> Retired<W, S> {
    /// Window states held.
    pub(crate) fn len(&self) -> usize {
        self.live
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The retired windows in FIFO order: (cleanup time, key, window, state).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Timestamp, KeyId, W, &S)> + '_ {
        self.entries
            .iter()
            .filter_map(|e| e.state.as_ref().map(|s| (e.cleanup, e.key, e.window, s)))
    }

    /// Whether [`Retired::push`] takes a window with cleanup time `cleanup` (ms): not earlier than
    /// the newest retired window's.
    pub(crate) fn accepts(&self, cleanup: Timestamp) -> bool {
        self.entries.back().is_none_or(|e| e.cleanup <= cleanup)
    }

    /// Retires the window with cleanup time `cleanup` (ms); gives the state back if `cleanup`
    /// is earlier than the newest retired window's (the FIFO stays ordered; the caller keeps
    /// the state).
    pub(crate) fn push(
        &mut self,
        cleanup: Timestamp,
        key: KeyId,
        window: W,
        state: S,
    ) -> Result<(), S> {
        if !self.accepts(cleanup) {
            return Err(state);
        }
        if let Some(index) = self.index.as_mut() {
            index.insert((key, window), self.front_seq + self.entries.len() as u64);
        }
        self.entries.push_back(Entry {
            cleanup,
            key,
            window,
            state: Some(state),
        });
        self.live += 1;
        Ok(())
    }

    /// Takes the state of `(key, window)`, whose cleanup time is `cleanup`, out, if retired.
    pub(crate) fn take(&mut self, cleanup: Timestamp, key: KeyId, window: &W) -> Option<S> {
        if self.live == 0 {
            return None;
        }
        let matches = |e: &Entry<W, S>| e.key == key && e.window == *window && e.state.is_some();
        let front = self.entries.front().is_some_and(matches);
        let state = if front {
            if let Some(index) = self.index.as_mut() {
                index.remove(&(key, *window));
            }
            self.front_seq += 1;
            self.entries.pop_front().and_then(|e| e.state)
        } else if let Some(index) = self.index.as_mut() {
            let seq = index.remove(&(key, *window))?;
            let i = usize::try_from(seq - self.front_seq).ok()?;
            self.entries.get_mut(i)?.state.take()
        } else {
            self.scans += 1;
            if self.scans >= self.index_after {
                self.build_index();
                return self.take(cleanup, key, window);
            }
            let first = self.entries.partition_point(|e| e.cleanup < cleanup);
            let found = (first..self.entries.len())
                .take_while(|&i| self.entries[i].cleanup == cleanup)
                .find(|&i| matches(&self.entries[i]))?;
            self.entries[found].state.take()
        };
        self.live -= 1;
        // Tombstones at either end go: the front is then always live, and so is the back, whose
        // cleanup time decides what `push` accepts.
        while self.entries.front().is_some_and(|e| e.state.is_none()) {
            self.entries.pop_front();
            self.front_seq += 1;
        }
        while self.entries.back().is_some_and(|e| e.state.is_none()) {
            self.entries.pop_back();
        }
        state
    }

    /// Indexes every live entry by (key, window).
    fn build_index(&mut self) {
        let index = self
            .entries
            .iter()
            .zip(self.front_seq..)
            .filter(|(e, _)| e.state.is_some())
            .map(|(e, seq)| ((e.key, e.window), seq))
            .collect();
        self.index = Some(index);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Randomized against a plain list: pushes in cleanup order (some refused out of order),
    /// takes at the front, in the middle, and of windows never retired.
    #[test]
    fn retired_matches_a_plain_list() {
        // Scans only; the index from the first scan on; the index built midway.
        for index_after in [u64::MAX, 0, 300] {
            retired_matches_a_plain_list_with(index_after);
        }
    }

    fn retired_matches_a_plain_list_with(index_after: u64) {
        let mut fifo: Retired<i64, u64> = Retired::with_index_after(index_after);
        let mut plain: Vec<(Timestamp, u32, i64, u64)> = Vec::new();
        let mut next = crate::xorshift(0x2545_F491_4F6C_DD1D_u64);
        let mut clock = 0_i64;
        let mut keys = crate::keys::KeyTable::<u32, i64>::new();
        let ids: Vec<KeyId> = (0..4).map(|k| keys.intern(&k)).collect();
        for step in 0..20_000_u64 {
            let r = next();
            if r.is_multiple_of(3) {
                // Time moves on (0, 1 or 2 ms a push), so the FIFO holds many cleanup times.
                clock += i64::try_from(next() % 3).unwrap_or(0);
                let cleanup = clock - i64::try_from(next() % 4 / 3).unwrap_or(0);
                let k = u32::try_from(next() % 4).unwrap_or(0);
                // As in the operator, a window's cleanup time is a function of the window.
                let w = cleanup * 2 + i64::try_from(next() % 2).unwrap_or(0);
                if plain.iter().any(|e| e.1 == k && e.2 == w && e.0 == cleanup) {
                    continue; // a window is retired once
                }
                let refused = plain.last().is_some_and(|e| e.0 > cleanup);
                let pushed = fifo.push(cleanup, ids[k as usize], w, step);
                assert_eq!(pushed.is_err(), refused);
                if !refused {
                    plain.push((cleanup, k, w, step));
                }
            } else {
                let pick = if plain.is_empty() || r.is_multiple_of(5) {
                    (clock, u32::try_from(next() % 4).unwrap_or(0), clock * 2 + 1)
                } else {
                    let i = usize::try_from(next()).unwrap_or(0) % plain.len().min(3);
                    (plain[i].0, plain[i].1, plain[i].2)
                };
                let expected = plain
                    .iter()
                    .position(|e| (e.0, e.1, e.2) == pick)
                    .map(|i| plain.remove(i).3);
                assert_eq!(fifo.take(pick.0, ids[pick.1 as usize], &pick.2), expected);
            }
            assert_eq!(fifo.len(), plain.len());
        }
    }
}
