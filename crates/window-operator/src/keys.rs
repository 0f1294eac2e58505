//! Keys interned to small ids, so that timers are small `Copy` values and a freed key's old
//! timers never reach a new key: a slot index and a generation per key, the key's number of
//! window states, and its session windows (Flink's `MergingWindowSet`, one per key).

use std::collections::HashMap;
use std::hash::Hash;

use ahash::RandomState;

/// A key interned by the operator: slot index and generation (a freed slot gets a new
/// generation, so timers left for an old key never reach a new one).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct KeyId {
    index: u32,
    generation: u32,
}

impl KeyId {
    /// The slot index (a freed key's index is reused, with another generation).
    pub(crate) fn index(self) -> usize {
        self.index as usize
    }

    /// The `n`th id of a key that is gone, for the timers a restored operator still holds for
    /// keys freed before the snapshot: no slot has it (indices are allocated from 0 upwards),
    /// so it never reaches a live key, and distinct `n` stay distinct timers.
    pub(crate) fn gone(n: u32) -> KeyId {
        KeyId {
            index: u32::MAX - n,
            generation: u32::MAX,
        }
    }
}

#[derive(Debug)]
pub(crate) struct KeySlot<K> {
    pub(crate) key: Option<K>,
    generation: u32,
    /// Number of window states of this key.
    pub(crate) windows: u32,
}

/// The slots are kept small (16 bytes for a small key): a timer's firing reads its key's slot,
/// and with many keys the slots must stay in cache. The merging assigners' session lists live
/// beside them, by slot index, and only exist for merging assigners.
#[derive(Debug)]
pub(crate) struct KeyTable<K, W> {
    ids: HashMap<K, u32, RandomState>,
    slots: Vec<KeySlot<K>>,
    /// The key's current windows for merging assigners (Flink's `MergingWindowSet`), by slot
    /// index; shorter than `slots` (an index past its end has none).
    sessions: Vec<Vec<W>>,
    free: Vec<u32>,
}

impl<K: Hash + Eq + Clone, W> KeyTable<K, W> {
    pub(crate) fn new() -> Self {
        Self {
            ids: HashMap::default(),
            slots: Vec::new(),
            sessions: Vec::new(),
            free: Vec::new(),
        }
    }

    pub(crate) fn intern(&mut self, key: &K) -> KeyId {
        if let Some(&index) = self.ids.get(key) {
            return KeyId {
                index,
                generation: self.slots[index as usize].generation,
            };
        }
        let index = if let Some(i) = self.free.pop() {
            let slot = &mut self.slots[i as usize];
            slot.key = Some(key.clone());
            slot.generation = slot.generation.wrapping_add(1);
            i
        } else {
            let i = u32::try_from(self.slots.len()).expect("more than 2^32 live keys");
            self.slots.push(KeySlot {
                key: Some(key.clone()),
                generation: 0,
                windows: 0,
            });
            i
        };
        self.ids.insert(key.clone(), index);
        KeyId {
            index,
            generation: self.slots[index as usize].generation,
        }
    }

    pub(crate) fn slot(&self, id: KeyId) -> Option<&KeySlot<K>> {
        self.slots
            .get(id.index as usize)
            .filter(|s| s.generation == id.generation && s.key.is_some())
    }

    pub(crate) fn slot_mut(&mut self, id: KeyId) -> &mut KeySlot<K> {
        &mut self.slots[id.index as usize]
    }

    /// The key's session windows (merging assigners); empty for others.
    pub(crate) fn sessions(&self, id: KeyId) -> &[W] {
        self.sessions
            .get(id.index as usize)
            .map_or(&[], Vec::as_slice)
    }

    /// The key's session windows, to change.
    pub(crate) fn sessions_mut(&mut self, id: KeyId) -> &mut Vec<W> {
        let i = id.index as usize;
        if self.sessions.len() <= i {
            self.sessions.resize_with(i + 1, Vec::new);
        }
        &mut self.sessions[i]
    }

    /// Frees the slot if the key holds no window any more.
    pub(crate) fn release_if_empty(&mut self, id: KeyId) {
        let no_sessions = self.sessions(id).is_empty();
        let slot = &mut self.slots[id.index as usize];
        if slot.windows == 0 && no_sessions {
            if let Some(k) = slot.key.take() {
                self.ids.remove(&k);
                self.free.push(id.index);
            }
        }
    }

    pub(crate) fn live(&self) -> usize {
        self.ids.len()
    }

    /// The live keys with their ids, in slot order.
    pub(crate) fn live_keys(&self) -> impl Iterator<Item = (KeyId, &K)> + '_ {
        (0_u32..).zip(&self.slots).filter_map(|(index, slot)| {
            let id = KeyId {
                index,
                generation: slot.generation,
            };
            slot.key.as_ref().map(|k| (id, k))
        })
    }
}
