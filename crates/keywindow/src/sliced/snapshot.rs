//! Snapshots of [`SlicedWindows`]: the keys in their slots, each with its open slice, its
//! closed slices (the two-stacks aggregator as it is), its next window and firing round; the
//! firing schedule (all windows) or the slice log (changes) in firing order; the elements still
//! batched; the time, the due-window cache, the wake time, the idle keys and the counters (see
//! [`crate::snapshot`]); with allowed lateness the fired windows kept for late firings (all windows) or the
//! changes kept for late elements (changes), by key slot. The live slice count is counted again from the keys.
//!
//! The cache, the wake time and the idle list decide *when* batches fold and idle keys are
//! forgotten, which decides which slot a returning key gets: they are kept so that the restored
//! processor does all of it at the same moments as the original.

use std::hash::Hash;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use window_core::{AggregateFunction, SnapshotError, Timestamp};

use super::late::{Retained, RetainedByKey};
use super::late_changes::{Changes, ChangesByKey};
use super::slots::SliceSlots;
use super::{EmitMode, SliceFacts, SliceKey, SlicedWindows};
use crate::keys::{KeySlots, Keyed};
use crate::schedule::FireSchedule;
use crate::slice_log::SliceLog;
use crate::snapshot::{self, Header};
use crate::{InOrderSnapshot, KeyWindowMetrics};

const KIND: &str = "keywindow::SlicedWindows";

impl<K, A> Keyed<K> for SliceKey<K, A> {
    fn key(&self) -> &K {
        &self.key
    }
}

#[derive(Serialize)]
#[serde(bound(serialize = "K: Serialize + Hash + Eq + Clone, T: Serialize, A: Serialize + Clone"))]
struct StateRef<'a, K, T, A> {
    /// Written as `KeySlots` (their `next` up to date), read back as one.
    keys: &'a SliceSlots<K, A>,
    fire: &'a FireSchedule,
    log: &'a SliceLog,
    round: u64,
    due_index: i64,
    due_until: Timestamp,
    due_until_from: Timestamp,
    wake: Timestamp,
    idle: &'a [u32],
    facts: Option<SliceFacts>,
    batch: &'a [(K, T)],
    time: Timestamp,
    metrics: KeyWindowMetrics,
    retained: Vec<(u32, &'a Retained<A>)>,
    changes: Vec<(u32, &'a Changes<A>)>,
    sweep_at: usize,
}

#[derive(Deserialize)]
#[serde(bound(deserialize = "K: Deserialize<'de> + Hash + Eq + Clone, \
                             T: Deserialize<'de>, A: Deserialize<'de> + Clone"))]
struct StateOwned<K, T, A> {
    keys: KeySlots<K, SliceKey<K, A>>,
    fire: FireSchedule,
    log: SliceLog,
    round: u64,
    due_index: i64,
    due_until: Timestamp,
    due_until_from: Timestamp,
    wake: Timestamp,
    idle: Vec<u32>,
    facts: Option<SliceFacts>,
    batch: Vec<(K, T)>,
    time: Timestamp,
    metrics: KeyWindowMetrics,
    retained: Vec<(u32, Retained<A>)>,
    changes: Vec<(u32, Changes<A>)>,
    sweep_at: usize,
}

impl<K, T, F> SlicedWindows<K, T, F>
where
    K: Hash + Eq + Clone,
    F: AggregateFunction<T>,
{
    fn header(&self) -> Header {
        let emit = match self.emit {
            EmitMode::AllWindows => "emit all windows",
            EmitMode::Changes => "emit changes",
        };
        Header::new(
            KIND,
            format!("{}, {emit}", snapshot::geometry_text(self.geometry)),
        )
    }
}

impl<K, T, F> InOrderSnapshot<K, T> for SlicedWindows<K, T, F>
where
    K: Hash + Eq + Clone + Serialize + DeserializeOwned,
    T: Serialize + DeserializeOwned,
    F: AggregateFunction<T>,
    F::Acc: Serialize + DeserializeOwned,
{
    fn snapshot(&self, out: &mut Vec<u8>) -> Result<(), SnapshotError> {
        let state = StateRef {
            keys: &self.keys,
            fire: &self.fire,
            log: &self.log,
            round: self.round,
            due_index: self.due_index,
            due_until: self.due_until,
            due_until_from: self.due_until_from,
            wake: self.wake,
            idle: &self.idle,
            facts: self.facts,
            batch: &self.batch,
            time: self.time,
            metrics: self.metrics,
            retained: {
                // By slot, so that equal states write equal bytes.
                let mut r: Vec<_> = self.retained.iter().map(|(s, w)| (*s, w)).collect();
                r.sort_unstable_by_key(|e| e.0);
                r
            },
            changes: {
                let mut c: Vec<_> = self.changes.iter().map(|(s, w)| (*s, w)).collect();
                c.sort_unstable_by_key(|e| e.0);
                c
            },
            sweep_at: self.sweep_at,
        };
        snapshot::write(out, &self.header(), &state)
    }

    fn restore(&mut self, bytes: &[u8]) -> Result<(), SnapshotError> {
        let (state, rest): (StateOwned<K, T, F::Acc>, _) = snapshot::read(bytes, &self.header())?;
        snapshot::at_end(rest, KIND)?;
        if !state.batch.is_empty() && state.facts.is_none() {
            return Err(SnapshotError::Invalid(format!(
                "{KIND} snapshot torn: batched elements without their slice"
            )));
        }
        let torn = state.retained.iter().any(|(slot, w)| {
            state.keys.get(*slot).is_none()
                || w.is_empty()
                || w.iter().zip(w.iter().skip(1)).any(|(a, b)| a.0 >= b.0)
        });
        let torn_changes = state.changes.iter().any(|(slot, c)| {
            state.keys.get(*slot).is_none()
                || c.is_empty()
                || c.iter().zip(c.iter().skip(1)).any(|(a, b)| a.0 >= b.0)
        });
        if torn || torn_changes {
            return Err(SnapshotError::Invalid(format!(
                "{KIND} snapshot torn: fired windows of no key or out of order"
            )));
        }
        self.live_slices = state
            .keys
            .states()
            .map(|k| k.closed_len() + usize::from(k.open.is_some()))
            .sum();
        self.keys = SliceSlots::of(state.keys, self.emit == EmitMode::AllWindows);
        self.fire = state.fire;
        self.log = state.log;
        self.round = state.round;
        self.firing.clear();
        self.due_index = state.due_index;
        self.due_until = state.due_until;
        self.due_until_from = state.due_until_from;
        self.wake = state.wake;
        self.idle = state.idle;
        self.facts = state.facts;
        self.batch = state.batch;
        self.batch_slots.clear();
        self.time = state.time;
        self.metrics = state.metrics;
        self.retained_windows = state.retained.iter().map(|(_, w)| w.len()).sum::<usize>()
            + state.changes.iter().map(|(_, c)| c.len()).sum::<usize>();
        self.changes = state.changes.into_iter().collect::<ChangesByKey<F::Acc>>();
        self.retained = state
            .retained
            .into_iter()
            .collect::<RetainedByKey<F::Acc>>();
        self.sweep_at = state.sweep_at;
        Ok(())
    }
}
