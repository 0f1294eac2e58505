//! Snapshots of [`KeyWindows`]: the keys in their slots, each with its windows (accumulator,
//! element count, left/right marks, fired) and the time of its last element; the firing and
//! retention timers in firing order; the time and the counters (see [`crate::snapshot`]).

use std::hash::Hash;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use window_core::{AggregateFunction, SnapshotError, Timestamp};

use crate::keys::{KeySlots, Keyed};
use crate::snapshot::{self, Header, TimerList};
use crate::{InOrderSnapshot, KeyState, KeyWindowMetrics, KeyWindows};

const KIND: &str = "keywindow::KeyWindows";

impl<K, A> Keyed<K> for KeyState<K, A> {
    fn key(&self) -> &K {
        &self.key
    }
}

#[derive(Serialize)]
struct StateRef<'a, K, A> {
    keys: &'a KeySlots<K, KeyState<K, A>>,
    fire: TimerList,
    retire: TimerList,
    time: Timestamp,
    metrics: KeyWindowMetrics,
}

#[derive(Deserialize)]
#[serde(bound(deserialize = "K: Deserialize<'de> + Hash + Eq + Clone, A: Deserialize<'de>"))]
struct StateOwned<K, A> {
    keys: KeySlots<K, KeyState<K, A>>,
    fire: TimerList,
    retire: TimerList,
    time: Timestamp,
    metrics: KeyWindowMetrics,
}

impl<K, T, F> KeyWindows<K, T, F>
where
    K: Hash + Eq + Clone,
    F: AggregateFunction<T>,
{
    fn header(&self) -> Header {
        Header::new(KIND, snapshot::geometry_text(self.geometry))
    }
}

impl<K, T, F> InOrderSnapshot<K, T> for KeyWindows<K, T, F>
where
    K: Hash + Eq + Clone + Serialize + DeserializeOwned,
    F: AggregateFunction<T>,
    F::Acc: Serialize + DeserializeOwned,
{
    fn snapshot(&self, out: &mut Vec<u8>) -> Result<(), SnapshotError> {
        let state = StateRef {
            keys: &self.keys,
            fire: snapshot::timers_of(&self.fire),
            retire: snapshot::timers_of(&self.retire),
            time: self.time,
            metrics: self.metrics,
        };
        snapshot::write(out, &self.header(), &state)
    }

    fn restore(&mut self, bytes: &[u8]) -> Result<(), SnapshotError> {
        let (state, rest): (StateOwned<K, F::Acc>, _) = snapshot::read(bytes, &self.header())?;
        snapshot::at_end(rest, KIND)?;
        self.windows_held = state.keys.states().map(|k| k.windows.len()).sum();
        self.keys = state.keys;
        self.fire = snapshot::queue_of(&state.fire);
        self.retire = snapshot::queue_of(&state.retire);
        self.time = state.time;
        self.metrics = state.metrics;
        Ok(())
    }
}
