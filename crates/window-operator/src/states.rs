//! The operator's window states by (key, window): for sliding windows, a ring per key indexed by
//! the window's place on the grid of window starts; a hash map for the rest (tumbling, sessions,
//! global windows) and for whatever a ring cannot hold.
//!
//! A sliding window of size/slide `n` puts each element into `n` windows of its key, and each
//! window is created, looked up at its firing and removed at its cleanup: with one hash map over
//! all (key, window) pairs that is several hash lookups per window, the operator's largest cost
//! on the default job. A key's live windows are a run of consecutive grid places (from the
//! oldest not yet cleaned up to the newest), so a ring of slots from a base place reaches any of
//! them by a subtraction (the place of a window is `max_timestamp.div_euclid(slide)`: sliding
//! windows have one size and start every `slide` ms). Each slot keeps its window beside the state
//! and every lookup compares it, so a window that is not where the grid says (none is) is merely
//! kept in the map: correctness never rests on the grid.
//!
//! Tumbling windows stay in the map: with one window per element, a map that holds only the live
//! windows is denser than a ring per key when keys are many and sparse (tumbling 10 ms over 100 k
//! keys with allowed lateness 1000 ms ran 2.8 times slower with rings). But without rings each
//! key may have one *front* window: the first of its windows while it lives (a key's only
//! window, for tumbling windows in time order and for most sessions); its other windows go to
//! the map. The fronts lie in one dense list (a removed front's place is taken by the last one),
//! found by a `u32` per key slot index: a look-up is two indexings and a comparison, with no hash
//! and no control byte; keys met in order walk the list in memory order; and the list holds only
//! live windows, as dense as the map (a front per key slot itself, 104 bytes per key, made the
//! lateness row 1.4 times slower: 100k keys, of which only a few thousand have a live window).
//! (The map's look-up was a cache miss per element on the 10,000 keys of the Flink workload: 80 %
//! of the operator thread's largest function, `rustc_entry`.)
//!
//! A ring is not grown past [`MAX_RING`] slots, nor to more than [`SPARSE_SLACK`] plus four
//! slots per state it holds (a key whose few windows lie far apart, as with a long watermark
//! delay and sparse keys): such a window goes to the map, so memory follows the states held.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

use ahash::RandomState;
use window_core::Window;

use crate::keys::KeyId;

/// Slots a key's ring may span at most.
pub(crate) const MAX_RING: usize = 4096;

/// Slots a ring may have beyond four per state it holds.
pub(crate) const SPARSE_SLACK: usize = 16;

/// The `front` of a key slot index without a front window.
const NO_FRONT: u32 = u32::MAX;

/// One key's windows on the grid: `slots[i]` holds the window at place `base + i`.
#[derive(Debug)]
struct Ring<W, V> {
    /// The key whose windows these are (its generation included: a freed key's slot index is
    /// reused, and its ring is empty by then).
    owner: KeyId,
    base: i64,
    /// Slots holding a state.
    live: usize,
    slots: VecDeque<Option<(W, V)>>,
}

impl<W, V> Ring<W, V> {
    /// Whether the ring may grow to `len` slots (see the module documentation).
    fn may_span(&self, len: usize) -> bool {
        len <= MAX_RING && len <= SPARSE_SLACK + 4 * (self.live + 1)
    }
}

/// Window states `V` by (key, window `W`). See the module documentation.
#[derive(Debug)]
pub(crate) struct WindowStates<W, V> {
    /// The grid period (the slide) in ms; `None`: map only.
    period: Option<i64>,
    /// By key slot index.
    rings: Vec<Ring<W, V>>,
    map: HashMap<(KeyId, W), V, RandomState>,
    /// Without rings: by key slot index, the place in `fronts` of the key's front window, or
    /// [`NO_FRONT`] (see the module documentation).
    front: Vec<u32>,
    /// The front windows, dense.
    fronts: Vec<(KeyId, W, V)>,
    /// By key slot index: states in the map of keys with that index (any generation), so that
    /// a key with none in the map is never looked up there.
    mapped: Vec<u32>,
    /// States held, in rings and map.
    len: usize,
}

impl<W: Window + Copy + Eq + Hash, V> WindowStates<W, V> {
    /// States for windows that start every `period` ms (`None`, or a period below 1: map only).
    pub(crate) fn new(period: Option<i64>) -> Self {
        Self {
            period: period.filter(|p| *p > 0),
            rings: Vec::new(),
            map: HashMap::default(),
            front: Vec::new(),
            fronts: Vec::new(),
            mapped: Vec::new(),
            len: 0,
        }
    }

    /// States held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The period the states were made for (see [`WindowStates::new`]).
    pub(crate) fn period(&self) -> Option<i64> {
        self.period
    }

    /// Every state with its key and window: rings, fronts, then the map (a hash's order).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (KeyId, W, &V)> + '_ {
        let rings = self
            .rings
            .iter()
            .flat_map(|r| r.slots.iter().flatten().map(move |(w, v)| (r.owner, *w, v)));
        let fronts = self.fronts.iter().map(|(k, w, v)| (*k, *w, v));
        rings
            .chain(fronts)
            .chain(self.map.iter().map(|((k, w), v)| (*k, *w, v)))
    }

    /// The place in `fronts` of `(id, w)`, if it is `id`'s front window.
    #[inline]
    fn front_pos(&self, id: KeyId, w: &W) -> Option<usize> {
        let i = *self.front.get(id.index())? as usize;
        matches!(self.fronts.get(i), Some((k, x, _)) if *k == id && x == w).then_some(i)
    }

    /// Whether the front of `id`'s key slot index is free.
    #[inline]
    fn front_free(&self, id: KeyId) -> bool {
        self.front.get(id.index()).is_none_or(|&i| i == NO_FRONT)
    }

    fn place(&self, w: &W) -> Option<i64> {
        self.period.map(|p| w.max_timestamp().div_euclid(p))
    }

    /// The slot of `(id, w)` in `id`'s ring, if it is there.
    fn ring_pos(&self, id: KeyId, w: &W) -> Option<usize> {
        let place = self.place(w)?;
        let ring = self.rings.get(id.index()).filter(|r| r.owner == id)?;
        let i = usize::try_from(place.checked_sub(ring.base)?).ok()?;
        matches!(ring.slots.get(i), Some(Some((x, _))) if x == w).then_some(i)
    }

    /// Whether keys with `id`'s slot index have states in the map (else it is not probed).
    fn mapped(&self, id: KeyId) -> bool {
        self.mapped.get(id.index()).is_some_and(|n| *n > 0)
    }

    /// The state of `(id, w)`.
    pub(crate) fn get(&self, id: KeyId, w: &W) -> Option<&V> {
        if let Some(i) = self.ring_pos(id, w) {
            return self.rings[id.index()].slots[i].as_ref().map(|(_, v)| v);
        }
        if let Some(i) = self.front_pos(id, w) {
            return Some(&self.fronts[i].2);
        }
        if self.mapped(id) {
            self.map.get(&(id, *w))
        } else {
            None
        }
    }

    /// The state of `(id, w)`, to change.
    pub(crate) fn get_mut(&mut self, id: KeyId, w: &W) -> Option<&mut V> {
        if let Some(i) = self.ring_pos(id, w) {
            return self.rings[id.index()].slots[i].as_mut().map(|(_, v)| v);
        }
        if let Some(i) = self.front_pos(id, w) {
            return Some(&mut self.fronts[i].2);
        }
        if self.mapped(id) {
            self.map.get_mut(&(id, *w))
        } else {
            None
        }
    }

    /// The state of `(id, w)`, made by `make` if there is none; whether it was made. A key with
    /// no state in the map is not looked up there; a new state goes into the ring when it can.
    pub(crate) fn get_or_insert_with(
        &mut self,
        id: KeyId,
        w: W,
        make: impl FnOnce() -> V,
    ) -> (&mut V, bool) {
        if self.period.is_none() {
            // No rings (tumbling, sessions, global): the front, else one probe of the map.
            let index = id.index();
            if let Some(i) = self.front_pos(id, &w) {
                return (&mut self.fronts[i].2, false);
            }
            if !self.mapped(id) && self.front_free(id) {
                return (self.insert_new(id, w, make()), true);
            }
            return match self.map.entry((id, w)) {
                Entry::Occupied(e) => (e.into_mut(), false),
                Entry::Vacant(e) => {
                    self.len += 1;
                    if self.mapped.len() <= index {
                        self.mapped.resize(index + 1, 0);
                    }
                    self.mapped[index] += 1;
                    (e.insert(make()), true)
                }
            };
        }
        if let Some(i) = self.ring_pos(id, &w) {
            let v = self.rings[id.index()].slots[i].as_mut().map(|(_, v)| v);
            return (v.expect("found above"), false);
        }
        if self.mapped(id) && self.map.contains_key(&(id, w)) {
            // A window the ring could not take (rare): a second probe to reach it.
            return (self.map.get_mut(&(id, w)).expect("found above"), false);
        }
        (self.insert_new(id, w, make()), true)
    }

    /// Puts `v` as the state of `(id, w)`; the state it replaces, if any.
    pub(crate) fn insert(&mut self, id: KeyId, w: W, v: V) -> Option<V> {
        if let Some(i) = self.ring_pos(id, &w) {
            let slot = self.rings[id.index()].slots[i].as_mut().map(|(_, old)| old);
            return slot.map(|old| std::mem::replace(old, v));
        }
        if let Some(i) = self.front_pos(id, &w) {
            return Some(std::mem::replace(&mut self.fronts[i].2, v));
        }
        if self.mapped(id) {
            if let Some(old) = self.map.get_mut(&(id, w)) {
                return Some(std::mem::replace(old, v));
            }
        }
        self.insert_new(id, w, v);
        None
    }

    /// Takes the state of `(id, w)` out.
    pub(crate) fn remove(&mut self, id: KeyId, w: &W) -> Option<V> {
        let v = if let Some(i) = self.ring_pos(id, w) {
            let ring = &mut self.rings[id.index()];
            let v = ring.slots[i].take().map(|(_, v)| v);
            ring.live -= 1;
            while ring.slots.front().is_some_and(Option::is_none) {
                ring.slots.pop_front();
                ring.base += 1;
            }
            while ring.slots.back().is_some_and(Option::is_none) {
                ring.slots.pop_back();
            }
            v
        } else if let Some(i) = self.front_pos(id, w) {
            // The last front takes the removed one's place.
            let (_, _, v) = self.fronts.swap_remove(i);
            self.front[id.index()] = NO_FRONT;
            if let Some((moved, _, _)) = self.fronts.get(i) {
                self.front[moved.index()] = i as u32;
            }
            Some(v)
        } else if self.mapped(id) {
            let v = self.map.remove(&(id, *w));
            if v.is_some() {
                self.mapped[id.index()] -= 1;
            }
            v
        } else {
            None
        };
        if v.is_some() {
            self.len -= 1;
        }
        v
    }

    /// Adds a state that is not held: in the key's ring if it can take it, else (without rings)
    /// in its front if that is free, else in the map.
    fn insert_new(&mut self, id: KeyId, w: W, v: V) -> &mut V {
        self.len += 1;
        if let Some(i) = self.place(&w).and_then(|place| self.ring_slot(id, place)) {
            let ring = &mut self.rings[id.index()];
            ring.live += 1;
            return &mut ring.slots[i].insert((w, v)).1;
        }
        let index = id.index();
        if self.period.is_none() && self.front_free(id) {
            if let Ok(place) = u32::try_from(self.fronts.len()) {
                if self.front.len() <= index {
                    self.front.resize(index + 1, NO_FRONT);
                }
                self.front[index] = place;
                self.fronts.push((id, w, v));
                return &mut self.fronts[place as usize].2;
            }
        }
        if self.mapped.len() <= index {
            self.mapped.resize(index + 1, 0);
        }
        self.mapped[index] += 1;
        self.map.entry((id, w)).or_insert(v)
    }

    /// Makes room for grid place `place` in `id`'s ring; its slot index, or `None` where the
    /// ring cannot take it (too long, taken by another window, another key's).
    fn ring_slot(&mut self, id: KeyId, place: i64) -> Option<usize> {
        let index = id.index();
        if self.rings.len() <= index {
            self.rings.resize_with(index + 1, || Ring {
                owner: id,
                base: 0,
                live: 0,
                slots: VecDeque::new(),
            });
        }
        let ring = &mut self.rings[index];
        if ring.slots.is_empty() {
            ring.owner = id;
            ring.base = place;
            ring.slots.push_back(None);
            return Some(0);
        }
        if ring.owner != id {
            return None;
        }
        let len = ring.slots.len();
        if place < ring.base {
            let more = usize::try_from(ring.base.checked_sub(place)?).ok()?;
            if !ring.may_span(more.checked_add(len)?) {
                return None;
            }
            for _ in 0..more {
                ring.slots.push_front(None);
            }
            ring.base = place;
            return Some(0);
        }
        let i = usize::try_from(place.checked_sub(ring.base)?).ok()?;
        if i >= len && !ring.may_span(i + 1) {
            return None;
        }
        if i >= len {
            ring.slots.resize_with(i + 1, || None);
        }
        ring.slots[i].is_none().then_some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeyTable;
    use window_core::TimeWindow;

    /// Randomized against a plain `HashMap`: windows on the grid and off it (their places
    /// collide with grid windows), places far apart (past `MAX_RING`), keys freed and
    /// interned again (a reused slot index with a new generation).
    #[test]
    fn window_states_match_a_plain_map() {
        // Rings on a 5 ms grid, and the map alone (tumbling windows, sessions).
        for period in [Some(5), None] {
            window_states_match_a_plain_map_with(period);
        }
    }

    fn window_states_match_a_plain_map_with(period: Option<i64>) {
        let mut next = crate::xorshift(0x9E37_79B9_7F4A_7C15_u64);
        let mut keys = KeyTable::<u32, TimeWindow>::new();
        let mut ids: Vec<KeyId> = (0..4).map(|k| keys.intern(&k)).collect();
        let mut states: WindowStates<TimeWindow, u64> = WindowStates::new(period);
        let mut plain: HashMap<(KeyId, TimeWindow), u64> = HashMap::new();
        let mut freed = Vec::new();
        for step in 0..50_000_u64 {
            let k = usize::try_from(next() % 4).unwrap_or(0);
            let id = ids[k];
            let start = match next() % 10 {
                0 => i64::try_from(next() % 100_000).unwrap_or(0) * 5, // far: past MAX_RING
                1 => i64::try_from(next() % 40).unwrap_or(0) * 5 + 2,  // off the grid
                _ => i64::try_from(next() % 40).unwrap_or(0) * 5,
            };
            let w = TimeWindow::new(start, start + 20);
            match next() % 6 {
                0 => assert_eq!(states.insert(id, w, step), plain.insert((id, w), step)),
                1 | 2 => assert_eq!(states.remove(id, &w), plain.remove(&(id, w))),
                3 => {
                    let (v, made) = states.get_or_insert_with(id, w, || step);
                    let had = plain.contains_key(&(id, w));
                    let p = plain.entry((id, w)).or_insert(step);
                    assert_eq!((*v, made), (*p, !had));
                    *v += 1;
                    *p += 1;
                }
                4 => {
                    assert_eq!(states.get(id, &w), plain.get(&(id, w)));
                    // A freed key's id (a timer left behind) reaches no state of the key that
                    // has its slot now.
                    if let Some(&old) = freed.get(step as usize % freed.len().max(1)) {
                        assert_eq!(states.get(old, &w), None);
                    }
                }
                _ => {
                    // A key with no state left is freed; its slot comes back as another key.
                    if plain.keys().all(|(i, _)| *i != id) {
                        keys.release_if_empty(id);
                        freed.push(id);
                        ids[k] = keys.intern(&(u32::try_from(step).unwrap_or(0) + 10));
                        assert!(states.get(ids[k], &w).is_none());
                    }
                }
            }
            assert_eq!(states.len(), plain.len());
        }
        for ((id, w), v) in &plain {
            assert_eq!(states.get(*id, w), Some(v));
        }
        for (i, n) in states.mapped.iter().enumerate() {
            let actual = states.map.keys().filter(|(id, _)| id.index() == i).count();
            assert_eq!(*n as usize, actual, "slot index {i}");
        }
        // Without rings, fronts and map both hold states; each front is its own key's, found
        // from its key slot index, and only live windows are in the list.
        if period.is_none() {
            assert!(!states.map.is_empty() && !states.fronts.is_empty());
        }
        for (place, (id, w, v)) in states.fronts.iter().enumerate() {
            assert_eq!(states.front[id.index()] as usize, place);
            assert_eq!(plain.get(&(*id, *w)), Some(v));
        }
        for (index, &place) in states.front.iter().enumerate() {
            if place != NO_FRONT {
                assert_eq!(states.fronts[place as usize].0.index(), index);
            }
        }
        // Memory follows the states held: no ring has more slots than its bound.
        for r in &states.rings {
            assert!(
                r.slots.len() <= SPARSE_SLACK + 4 * (r.live + 1),
                "{} slots",
                r.slots.len()
            );
            assert_eq!(r.live, r.slots.iter().flatten().count());
        }
    }

    /// Two windows of one key far apart on the grid: the second goes to the map, not into a ring
    /// of thousands of empty slots; a run of neighbouring windows stays in the ring.
    #[test]
    fn sparse_windows_do_not_grow_a_ring() {
        let mut keys = KeyTable::<u32, TimeWindow>::new();
        let id = keys.intern(&0);
        let mut states: WindowStates<TimeWindow, u64> = WindowStates::new(Some(5));
        let w = |s: i64| TimeWindow::new(s, s + 20);
        states.insert(id, w(0), 1);
        states.insert(id, w(3000 * 5), 2);
        assert_eq!(
            (states.rings[id.index()].slots.len(), states.map.len()),
            (1, 1)
        );
        for i in 1..12 {
            states.insert(id, w(i * 5), 3);
        }
        assert_eq!(
            (states.rings[id.index()].slots.len(), states.map.len()),
            (12, 1)
        );
        assert_eq!(states.get(id, &w(3000 * 5)), Some(&2));
        assert_eq!(states.len(), 13);
    }
}
