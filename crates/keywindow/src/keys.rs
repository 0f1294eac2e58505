//! Keys interned to small slot numbers, so that timers name a key with a `u32`.

use std::collections::HashMap;
use std::hash::Hash;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Per-key state in slots: a hash map from key to slot, the states in a vector, and a free
/// list so that slots of forgotten keys are reused.
#[derive(Debug)]
pub(crate) struct KeySlots<K, S> {
    ids: HashMap<K, u32, ahash::RandomState>,
    slots: Vec<Option<S>>,
    free: Vec<u32>,
}

impl<K, S> KeySlots<K, S> {
    /// Keys held.
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }
}

impl<K: Hash + Eq + Clone, S> KeySlots<K, S> {
    pub(crate) fn new() -> Self {
        Self {
            ids: HashMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
        }
    }

    /// The slot of `key`, creating its state with `init` if the key is new.
    #[inline]
    pub(crate) fn intern(&mut self, key: &K, init: impl FnOnce() -> S) -> u32 {
        if let Some(&slot) = self.ids.get(key) {
            return slot;
        }
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(init());
                s
            }
            None => {
                self.slots.push(Some(init()));
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 live keys")
            }
        };
        self.ids.insert(key.clone(), slot);
        slot
    }

    /// The state of `key`, if held.
    pub(crate) fn state_of(&self, key: &K) -> Option<&S> {
        self.ids.get(key).and_then(|&slot| self.get(slot))
    }

    pub(crate) fn get(&self, slot: u32) -> Option<&S> {
        self.slots.get(slot as usize).and_then(Option::as_ref)
    }

    pub(crate) fn get_mut(&mut self, slot: u32) -> Option<&mut S> {
        self.slots.get_mut(slot as usize).and_then(Option::as_mut)
    }

    /// Forgets the key in `slot`, found in its state by `key_of`, dropping the state in place.
    pub(crate) fn release_with(&mut self, slot: u32, key_of: impl FnOnce(&S) -> &K) {
        let Some(Some(state)) = self.slots.get(slot as usize) else {
            return;
        };
        self.ids.remove(key_of(state));
        self.slots[slot as usize] = None;
        self.free.push(slot);
    }

    pub(crate) fn states(&self) -> impl Iterator<Item = &S> {
        self.slots.iter().flatten()
    }

    /// Slots in use or free: every slot number is below this.
    pub(crate) fn slot_count(&self) -> u32 {
        // Fits: `intern` makes no slot beyond `u32::MAX`, a snapshot none either.
        self.slots.len() as u32
    }
}

/// How [`KeySlots::serialize_with`] writes each state.
pub(crate) trait SlotView<S> {
    /// Writes `state`, held in `slot`, as `S` encodes.
    fn serialize_slot<Se: Serializer>(
        &self,
        slot: u32,
        state: &S,
        serializer: Se,
    ) -> Result<Se::Ok, Se::Error>;
}

impl<K, S> KeySlots<K, S> {
    /// Writes the slots as [`Serialize`] does, each state as `view` writes it: for a caller
    /// whose states are not all up to date in place. `view` must encode as the state does, for
    /// the snapshot to read back.
    pub(crate) fn serialize_with<Se: Serializer, V: SlotView<S>>(
        &self,
        serializer: Se,
        view: &V,
    ) -> Result<Se::Ok, Se::Error> {
        use serde::ser::SerializeStruct;
        struct One<'a, S, V> {
            slot: u32,
            state: &'a S,
            view: &'a V,
        }
        impl<S, V: SlotView<S>> Serialize for One<'_, S, V> {
            fn serialize<Se: Serializer>(&self, serializer: Se) -> Result<Se::Ok, Se::Error> {
                self.view.serialize_slot(self.slot, self.state, serializer)
            }
        }
        struct Viewed<'a, S, V> {
            slots: &'a [Option<S>],
            view: &'a V,
        }
        impl<S, V: SlotView<S>> Serialize for Viewed<'_, S, V> {
            fn serialize<Se: Serializer>(&self, serializer: Se) -> Result<Se::Ok, Se::Error> {
                // Slot numbers fit a `u32` (see `slot_count`).
                serializer.collect_seq(self.slots.iter().enumerate().map(|(slot, state)| {
                    state.as_ref().map(|state| One {
                        slot: slot as u32,
                        state,
                        view: self.view,
                    })
                }))
            }
        }
        // The shape of `SlotsRef`'s derived encoding.
        let mut s = serializer.serialize_struct("SlotsRef", 2)?;
        s.serialize_field(
            "slots",
            &Viewed {
                slots: &self.slots,
                view,
            },
        )?;
        s.serialize_field("free", &self.free)?;
        s.end()
    }
}

/// A per-key state that holds its key (to rebuild the key table from the states).
pub(crate) trait Keyed<K> {
    fn key(&self) -> &K;
}

/// A snapshot of the slots as they are: the states by slot number (`None` for a free slot) and
/// the free list in its order, since slot numbers name keys in timers and schedules.
#[derive(Serialize)]
struct SlotsRef<'a, S> {
    slots: &'a [Option<S>],
    free: &'a [u32],
}

#[derive(Deserialize)]
struct SlotsOwned<S> {
    slots: Vec<Option<S>>,
    free: Vec<u32>,
}

impl<K, S: Serialize> Serialize for KeySlots<K, S> {
    fn serialize<Se: Serializer>(&self, serializer: Se) -> Result<Se::Ok, Se::Error> {
        SlotsRef {
            slots: &self.slots,
            free: &self.free,
        }
        .serialize(serializer)
    }
}

impl<'de, K, S> Deserialize<'de> for KeySlots<K, S>
where
    K: Hash + Eq + Clone,
    S: Deserialize<'de> + Keyed<K>,
{
    /// Rebuilds the key table; refuses slots that do not fit a `u32`, a free list that is not
    /// exactly the free slots, and a key held twice.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let SlotsOwned { slots, free } = SlotsOwned::<S>::deserialize(deserializer)?;
        if u32::try_from(slots.len()).is_err() {
            return Err(D::Error::custom("more than 2^32 key slots"));
        }
        let mut is_free = vec![false; slots.len()];
        for &slot in &free {
            match slots.get(slot as usize) {
                Some(None) if !is_free[slot as usize] => is_free[slot as usize] = true,
                _ => return Err(D::Error::custom(format!("bad free key slot {slot}"))),
            }
        }
        if free.len() != slots.iter().filter(|s| s.is_none()).count() {
            return Err(D::Error::custom(
                "a free key slot missing from the free list",
            ));
        }
        let mut ids =
            HashMap::with_capacity_and_hasher(slots.len() - free.len(), Default::default());
        for (slot, state) in slots.iter().enumerate() {
            if let Some(state) = state {
                // Fits: checked above.
                if ids.insert(state.key().clone(), slot as u32).is_some() {
                    return Err(D::Error::custom("a key held in two slots"));
                }
            }
        }
        Ok(Self { ids, slots, free })
    }
}
