//! The key slots of sliced windows, with a dense *unchanged-firing* cache beside them.
//!
//! Emitting every window, a key fires once per slide for as long as any of its slices is in a
//! window: `size / slide` firings per slice. Most of those firings change nothing: no slice
//! entered since the key's last firing (it had no element in the newest slide) and none leaves
//! (its oldest slice is still in the window), so the result is the last one again. For many
//! sparse keys (100k Zipf keys: most keys have an element every few windows at most) such
//! firings are most of the output, and each read the key's state (about 200 bytes, a cache
//! miss of its own for keys that do not fit the cache) to find that out.
//!
//! So the slots keep, per key, a small entry in a dense vector: the key, and, after a firing
//! that left its next window to fire, what the next firing needs to repeat the result without
//! the state (the next window, the oldest and newest slice starts, the aggregate of every
//! slice held). A firing of the entry's window then reads the entry only
//! ([`SliceSlots::fire_unchanged`]). Every mutable borrow of a key's state
//! ([`SliceSlots::get_mut`]) drops the entry first and writes its next window back into the
//! state, so an entry exists only while the state is exactly as the entry says, with its next
//! window moved on by the unchanged firings since; the state's own `next` is then behind, which
//! readers of `next` take into account ([`SliceSlots::next_of`], the snapshot's view).
//!
//! A bit per slot says whether its entry holds an unchanged firing, so that the many changes
//! of keys whose entry holds none (every element folded in) look at a small bit set, not at
//! the entries.
//!
//! The cache is on only when emitting every window; a key's entry costs about 64 bytes beside
//! its state (and a second copy of the key: a clone per new key, none per firing).

use std::hash::Hash;

use serde::{Serialize, Serializer};

use super::SliceKey;
use crate::keys::{KeySlots, SlotView};
use crate::two_stacks::TwoStacks;

/// What an unchanged firing of a key needs, valid while the key's state is not borrowed
/// mutably (see the module docs).
#[derive(Debug, Clone)]
pub(super) struct Unchanged<A> {
    /// The next window (start) the key fires: the state's `next`, moved on.
    pub(super) next: i64,
    /// The oldest slice's start: a window starting after it evicts something.
    pub(super) oldest: i64,
    /// The newest slice's start: the key fires a window starting after it no more.
    pub(super) newest: i64,
    /// The aggregate of every slice held.
    pub(super) acc: A,
}

#[derive(Debug)]
struct Entry<K, A> {
    key: K,
    unchanged: Option<Unchanged<A>>,
}

/// [`KeySlots`] of [`SliceKey`]s and the dense unchanged-firing entries (module docs).
#[derive(Debug)]
pub(super) struct SliceSlots<K, A> {
    keys: KeySlots<K, SliceKey<K, A>>,
    /// By slot: `None` for a free slot; empty when the cache is off.
    entries: Vec<Option<Entry<K, A>>>,
    /// By slot, a bit: whether its entry holds an unchanged firing. Every change to a key's
    /// state looks here first (an element folded in: per element), and the bits of 100k keys
    /// take 12.5 KiB, where the entries take 6 MiB.
    held: Vec<u64>,
    on: bool,
}

/// Whether bit `slot` is set in `bits`.
#[inline]
fn bit(bits: &[u64], slot: u32) -> bool {
    bits.get(slot as usize / 64)
        .is_some_and(|w| (w >> (slot % 64)) & 1 == 1)
}

impl<K, A> SliceSlots<K, A> {
    /// Keys held.
    pub(super) fn len(&self) -> usize {
        self.keys.len()
    }
}

impl<K: Hash + Eq + Clone, A> SliceSlots<K, A> {
    /// No key; the cache on (`cache`) or off.
    pub(super) fn new(cache: bool) -> Self {
        Self::of(KeySlots::new(), cache)
    }

    /// The slots `keys` (restored from a snapshot: no entry holds an unchanged firing).
    pub(super) fn of(keys: KeySlots<K, SliceKey<K, A>>, cache: bool) -> Self {
        let entries = if cache {
            (0..keys.slot_count())
                .map(|slot| {
                    keys.get(slot).map(|s| Entry {
                        key: s.key.clone(),
                        unchanged: None,
                    })
                })
                .collect()
        } else {
            Vec::new()
        };
        Self {
            keys,
            entries,
            held: Vec::new(),
            on: cache,
        }
    }

    /// The slot of `key`, creating its state with `init` if the key is new.
    #[inline]
    pub(super) fn intern(&mut self, key: &K, init: impl FnOnce() -> SliceKey<K, A>) -> u32 {
        let mut fresh = false;
        let slot = self.keys.intern(key, || {
            fresh = true;
            init()
        });
        if fresh && self.on {
            self.unhold(slot);
            let entry = Some(Entry {
                key: key.clone(),
                unchanged: None,
            });
            match self.entries.get_mut(slot as usize) {
                Some(e) => *e = entry,
                None => self.entries.push(entry),
            }
        }
        slot
    }

    /// The state in `slot`; its `next` may be behind ([`Self::next_of`]).
    #[inline]
    pub(super) fn get(&self, slot: u32) -> Option<&SliceKey<K, A>> {
        self.keys.get(slot)
    }

    /// The state in `slot`, to change: its unchanged-firing entry, if any, is dropped and its
    /// next window written back first.
    #[inline]
    pub(super) fn get_mut(&mut self, slot: u32) -> Option<&mut SliceKey<K, A>> {
        let state = self.keys.get_mut(slot)?;
        if bit(&self.held, slot) {
            if let Some(Some(entry)) = self.entries.get_mut(slot as usize) {
                if let Some(u) = entry.unchanged.take() {
                    state.next = Some(u.next);
                }
            }
            self.held[slot as usize / 64] &= !(1 << (slot % 64));
        }
        Some(state)
    }

    /// The next window (start) the key in `slot` fires, if any.
    #[inline]
    pub(super) fn next_of(&self, slot: u32) -> Option<i64> {
        let held = bit(&self.held, slot)
            .then(|| {
                self.entries
                    .get(slot as usize)?
                    .as_ref()?
                    .unchanged
                    .as_ref()
            })
            .flatten();
        match held {
            Some(u) => Some(u.next),
            None => self.keys.get(slot).and_then(|s| s.next),
        }
    }

    /// Keeps `unchanged` for the key in `slot` (after a firing, from its state as it is).
    #[inline]
    pub(super) fn keep_unchanged(&mut self, slot: u32, unchanged: Unchanged<A>) {
        if let Some(Some(entry)) = self.entries.get_mut(slot as usize) {
            entry.unchanged = Some(unchanged);
            let word = slot as usize / 64;
            if word >= self.held.len() {
                self.held.resize(word + 1, 0);
            }
            self.held[word] |= 1 << (slot % 64);
        }
    }

    /// Clears `slot`'s bit in `held`.
    fn unhold(&mut self, slot: u32) {
        if let Some(w) = self.held.get_mut(slot as usize / 64) {
            *w &= !(1 << (slot % 64));
        }
    }

    /// The key in `slot` and its unchanged firing, if it holds one for the window starting at
    /// `start`.
    #[inline]
    pub(super) fn fire_unchanged(
        &mut self,
        slot: u32,
        start: i64,
    ) -> Option<(&K, &mut Unchanged<A>)> {
        if !bit(&self.held, slot) {
            return None;
        }
        match self.entries.get_mut(slot as usize) {
            Some(Some(Entry {
                key,
                unchanged: Some(u),
            })) if u.next == start => Some((key, u)),
            _ => None,
        }
    }

    /// Forgets the key in `slot`.
    pub(super) fn release(&mut self, slot: u32) {
        self.keys.release_with(slot, |s| &s.key);
        self.unhold(slot);
        if let Some(e) = self.entries.get_mut(slot as usize) {
            *e = None;
        }
    }

    /// The state of `key`, if held; its `next` may be behind ([`Self::next_of`]).
    pub(super) fn state_of(&self, key: &K) -> Option<&SliceKey<K, A>> {
        self.keys.state_of(key)
    }

    /// Every state held; their `next` may be behind ([`Self::next_of`]).
    pub(super) fn states(&self) -> impl Iterator<Item = &SliceKey<K, A>> {
        self.keys.states()
    }
}

/// A key's state as a snapshot writes it: [`SliceKey`] with its `next` up to date. The same
/// fields in the same order, so its encoding is the state's (and reads back as one).
#[derive(Serialize)]
#[serde(rename = "SliceKey")]
struct StateView<'a, K, A> {
    next: Option<i64>,
    open: &'a Option<(i64, A)>,
    key: &'a K,
    closed: &'a TwoStacks<A>,
    round: u64,
    native_covered: Option<i64>,
}

/// Writes each state with its `next` up to date.
struct UpToDate<'a, K, A>(&'a SliceSlots<K, A>);

impl<K, A> SlotView<SliceKey<K, A>> for UpToDate<'_, K, A>
where
    K: Serialize + Hash + Eq + Clone,
    A: Serialize + Clone,
{
    fn serialize_slot<Se: Serializer>(
        &self,
        slot: u32,
        s: &SliceKey<K, A>,
        serializer: Se,
    ) -> Result<Se::Ok, Se::Error> {
        StateView {
            next: self.0.next_of(slot),
            open: &s.open,
            key: &s.key,
            closed: &s.closed,
            round: s.round,
            native_covered: s.native_covered,
        }
        .serialize(serializer)
    }
}

impl<K: Serialize + Hash + Eq + Clone, A: Serialize + Clone> Serialize for SliceSlots<K, A> {
    fn serialize<Se: Serializer>(&self, serializer: Se) -> Result<Se::Ok, Se::Error> {
        self.keys.serialize_with(serializer, &UpToDate(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(key: &str) -> SliceKey<String, u64> {
        SliceKey {
            next: Some(0),
            open: Some((0, 5)),
            key: key.to_owned(),
            closed: TwoStacks::new(),
            round: 0,
            native_covered: None,
        }
    }

    fn unchanged(next: i64) -> Unchanged<u64> {
        Unchanged {
            next,
            oldest: 0,
            newest: 0,
            acc: 5,
        }
    }

    #[test]
    fn an_unchanged_firing_moves_next_until_the_state_is_borrowed_to_change() {
        let mut slots = SliceSlots::new(true);
        let a = slots.intern(&"a".to_owned(), || state("a"));
        slots.keep_unchanged(a, unchanged(10));
        assert_eq!(slots.next_of(a), Some(10));
        assert!(slots.fire_unchanged(a, 20).is_none(), "not its window");
        let (key, u) = slots.fire_unchanged(a, 10).expect("its window");
        assert_eq!((key.as_str(), u.acc), ("a", 5));
        u.next = 20;
        // The state's own `next` is behind; readers of `next` see the entry's.
        assert_eq!(slots.get(a).and_then(|s| s.next), Some(0));
        assert_eq!(slots.next_of(a), Some(20));
        let snapshot = postcard::to_allocvec(&slots).expect("encodes");
        // A mutable borrow drops the entry and writes its next window back.
        assert_eq!(slots.get_mut(a).and_then(|s| s.next), Some(20));
        assert!(slots.fire_unchanged(a, 20).is_none());
        assert_eq!(slots.next_of(a), Some(20));
        // The snapshot taken before held the moved `next` too: it is the plain slots' encoding.
        assert_eq!(
            postcard::to_allocvec(&slots.keys).expect("encodes"),
            snapshot
        );
        let back: KeySlots<String, SliceKey<String, u64>> =
            postcard::from_bytes(&snapshot).expect("reads back as key slots");
        assert_eq!(back.get(a).and_then(|s| s.next), Some(20));
    }

    #[test]
    fn a_released_or_reused_slot_has_no_unchanged_firing_and_the_cache_can_be_off() {
        let mut slots = SliceSlots::new(true);
        let a = slots.intern(&"a".to_owned(), || state("a"));
        slots.keep_unchanged(a, unchanged(10));
        slots.release(a);
        assert_eq!(slots.next_of(a), None);
        let b = slots.intern(&"b".to_owned(), || state("b"));
        assert_eq!(b, a, "the slot is reused");
        assert!(slots.fire_unchanged(b, 10).is_none());
        assert_eq!(slots.next_of(b), Some(0));
        slots.keep_unchanged(b, unchanged(10));
        assert_eq!(
            slots.fire_unchanged(b, 10).map(|(k, _)| k.clone()),
            Some("b".to_owned())
        );

        let mut off = SliceSlots::new(false);
        let a = off.intern(&"a".to_owned(), || state("a"));
        off.keep_unchanged(a, unchanged(10));
        assert!(off.fire_unchanged(a, 10).is_none());
        assert_eq!(off.next_of(a), Some(0));
    }
}
