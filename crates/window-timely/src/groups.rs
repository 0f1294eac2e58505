//! Key groups: the unit of state that a checkpoint holds and a restore hands out (Flink's key
//! groups, bounded by the job's *max parallelism*; `KeyGroupRangeAssignment`).
//!
//! A key's group is a fixed hash of its text ([`crate::wire::route`], FNV-1a: the same in every
//! run, process and machine) modulo the number of groups `G`; group `g` is owned by worker
//! `g * W / G` of `W` (contiguous ranges, as Flink's `computeOperatorIndexForKeyGroup`). Each
//! worker holds one computation per group it owns ([`KeyGroups`]), so a group's state is that
//! computation's snapshot, and a job checkpointed with `N` workers restores with `M`: each
//! worker restores the groups it owns then.
//!
//! Stepping every group's computation at every watermark step (about one per element) would
//! cost `G / W` calls per step; [`KeyGroups`] steps only the groups whose
//! [`WindowComputation::next_event_time_timer`] the watermark reached, from a min-heap, and
//! brings the others to the watermark before their next element (where they emit nothing). A
//! worker with one group (no checkpoints) steps it at every watermark instead, as the
//! single-threaded runtime steps its computation.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use window_core::{
    HeldState, LiveState, Number, Rejected, SnapshotError, Timestamp, WindowComputation,
    WindowMetrics, WindowOutput,
};
use window_io::{KeyDictionary, KeyId};

use crate::cut::GroupCut;

/// The number of key groups when none is given: Flink's default max parallelism, 128.
pub const DEFAULT_KEY_GROUPS: u32 = 128;

/// The key group of a key's text among `groups` (at least 1).
#[must_use]
pub fn key_group(text: &str, groups: u32) -> u32 {
    (crate::wire::route(text) % u64::from(groups.max(1))) as u32
}

/// The worker that owns key group `group` of `groups` among `workers` (Flink's
/// `KeyGroupRangeAssignment.computeOperatorIndexForKeyGroup`: `group * workers / groups`).
#[must_use]
pub fn owner(group: u32, groups: u32, workers: u32) -> u32 {
    (u64::from(group) * u64::from(workers) / u64::from(groups.max(1))) as u32
}

/// Loads group `cut.group`'s snapshot into `comp` (built fresh from the job), its keys'
/// texts interned in `keys` first ([`window_io::portable::translated`]): the snapshot may come
/// from a process with another dictionary.
///
/// # Errors
/// A key that is not of the group (among `groups`), or bytes the computation refuses.
pub(crate) fn restore_group<C>(
    comp: &mut C,
    cut: &GroupCut,
    keys: &KeyDictionary,
    groups: u32,
) -> Result<(), SnapshotError>
where
    C: WindowComputation<KeyId, Number>,
{
    if let Some(k) = cut.keys.iter().find(|k| key_group(k, groups) != cut.group) {
        return Err(SnapshotError::Invalid(format!(
            "key {k:?} of key group {}'s snapshot is of group {}",
            cut.group,
            key_group(k, groups)
        )));
    }
    let ids = cut.keys.iter().map(|k| keys.intern(k)).collect();
    window_io::portable::translated(ids, || comp.restore(&cut.bytes))
}

/// The key group of each key id, computed from its text once (no hashing per element).
#[derive(Debug)]
pub(crate) struct GroupOf {
    keys: Arc<KeyDictionary>,
    groups: u32,
    cache: Vec<u32>,
}

/// A group not computed yet.
const UNKNOWN: u32 = u32::MAX;

impl GroupOf {
    /// Groups of the keys of `keys`, among `groups`.
    pub(crate) fn new(keys: Arc<KeyDictionary>, groups: u32) -> Self {
        Self {
            keys,
            groups: groups.max(1),
            cache: Vec::new(),
        }
    }

    /// The number of groups.
    pub(crate) fn groups(&self) -> u32 {
        self.groups
    }

    /// The group of `key` (a key without text, which the dictionary never gives, is in 0).
    #[inline]
    pub(crate) fn of(&mut self, key: KeyId) -> u32 {
        let i = key.index();
        if let Some(&g) = self.cache.get(i) {
            if g != UNKNOWN {
                return g;
            }
        } else {
            self.cache.resize(i + 1, UNKNOWN);
        }
        let g = self
            .keys
            .text(key)
            .map_or(0, |t| key_group(&t, self.groups));
        self.cache[i] = g;
        g
    }
}

/// One worker's computations, one per key group it owns, stepped by the watermark only where
/// something is due.
pub(crate) struct KeyGroups<C> {
    /// The first group owned; the owned groups are `first .. first + comps.len()`.
    first: u32,
    comps: Vec<C>,
    /// Each group's bound as queued in `heap` (an entry whose bound differs is stale); `None`:
    /// not queued.
    next: Vec<Option<Timestamp>>,
    heap: BinaryHeap<Reverse<(Timestamp, u32)>>,
    /// The watermark applied last.
    watermark: Timestamp,
    group_of: GroupOf,
    /// The groups to step at this watermark (reused).
    due: Vec<u32>,
}

impl<C> std::fmt::Debug for KeyGroups<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyGroups")
            .field("first", &self.first)
            .field("groups", &self.comps.len())
            .field("watermark", &self.watermark)
            .finish_non_exhaustive()
    }
}

impl<C> KeyGroups<C>
where
    C: WindowComputation<KeyId, Number>,
{
    /// The groups worker `worker` of `workers` owns (by [`owner`]), each with a computation of
    /// `make`; keys are grouped by `group_of`.
    pub(crate) fn new(make: impl Fn() -> C, group_of: GroupOf, worker: u32, workers: u32) -> Self {
        let groups = group_of.groups();
        let owned: Vec<u32> = (0..groups)
            .filter(|&g| owner(g, groups, workers) == worker)
            .collect();
        let first = owned.first().copied().unwrap_or(0);
        Self {
            first,
            comps: owned.iter().map(|_| make()).collect(),
            next: vec![None; owned.len()],
            heap: BinaryHeap::new(),
            watermark: Timestamp::MIN,
            group_of,
            due: Vec::new(),
        }
    }

    /// The number of key groups of the job.
    pub(crate) fn group_count(&self) -> u32 {
        self.group_of.groups()
    }

    /// Whether group `group` is this worker's.
    pub(crate) fn owns(&self, group: u32) -> bool {
        group >= self.first && ((group - self.first) as usize) < self.comps.len()
    }

    /// The index in `comps` of `key`'s group.
    #[inline]
    fn slot(&mut self, key: KeyId) -> usize {
        // One group (no checkpoints: one per worker): every key this worker gets is in it, and
        // the lookup of the key's group (a cache miss per element on many keys) is not needed.
        if self.comps.len() == 1 {
            return 0;
        }
        let g = self.group_of.of(key);
        debug_assert!(
            g >= self.first && ((g - self.first) as usize) < self.comps.len(),
            "key group {g} is not this worker's"
        );
        (g - self.first) as usize
    }

    /// Queues group `i` at its computation's bound, if that changed (not with one group: it is
    /// stepped at every watermark, see [`KeyGroups::process_watermark`]).
    #[inline]
    fn requeue(&mut self, i: usize) {
        if self.comps.len() == 1 {
            return;
        }
        let bound = self.comps[i].next_event_time_timer();
        if bound != self.next[i] {
            self.next[i] = bound;
            if let Some(t) = bound {
                self.heap.push(Reverse((t, i as u32)));
            }
        }
    }

    /// Processes an element of `key` with its group's computation, brought to the watermark
    /// first.
    ///
    /// # Errors
    /// As the computation's [`WindowComputation::process_element`].
    #[inline]
    pub(crate) fn process_element(
        &mut self,
        key: KeyId,
        element: Number,
        timestamp: Timestamp,
        out: &mut dyn WindowOutput<KeyId, C::Window, Number, C::Output>,
    ) -> Result<(), Rejected<KeyId, Number>> {
        if let [comp] = &mut self.comps[..] {
            // At the watermark already (stepped at every watermark).
            return comp.process_element(key, element, timestamp, out);
        }
        let i = self.slot(key);
        let comp = &mut self.comps[i];
        // Emits nothing: the group's bound is past the watermark, or it was stepped there.
        comp.process_watermark(self.watermark, out);
        let r = comp.process_element(key, element, timestamp, out);
        self.requeue(i);
        r
    }

    /// Advances the watermark to `watermark`: steps the groups whose bound it reached, in the
    /// order of their bounds. Returns whether it advanced. One group (one per worker, without
    /// checkpoints) is stepped at every watermark, as the single-threaded runtime steps its
    /// computation: then no element needs it brought to the watermark first, nor its bound
    /// asked after every element (two calls an element, 3 % of the instructions of the tumbling
    /// job with `--workers 1`).
    pub(crate) fn process_watermark(
        &mut self,
        watermark: Timestamp,
        out: &mut dyn WindowOutput<KeyId, C::Window, Number, C::Output>,
    ) -> bool {
        if watermark <= self.watermark {
            return false;
        }
        self.watermark = watermark;
        if let [comp] = &mut self.comps[..] {
            comp.process_watermark(watermark, out);
            return true;
        }
        let mut due = std::mem::take(&mut self.due);
        while let Some(&Reverse((t, i))) = self.heap.peek() {
            if t > watermark {
                break;
            }
            self.heap.pop();
            if self.next[i as usize] == Some(t) {
                self.next[i as usize] = None;
                due.push(i);
            }
        }
        for &i in &due {
            self.comps[i as usize].process_watermark(watermark, out);
            self.requeue(i as usize);
        }
        due.clear();
        self.due = due;
        if self.heap.len() > 4 * self.comps.len() + 64 {
            self.rebuild_heap();
        }
        true
    }

    /// Sets processing time to `now` in every group, firing their processing-time timers before
    /// it ([`WindowComputation::advance_wall_clock`]), in group order (the rows of one clock
    /// step are put in the canonical order afterwards, as a watermark step's).
    pub(crate) fn advance_wall_clock(
        &mut self,
        now: Timestamp,
        out: &mut dyn WindowOutput<KeyId, C::Window, Number, C::Output>,
    ) {
        for comp in &mut self.comps {
            comp.advance_wall_clock(now, out);
        }
    }

    /// A lower bound on the least watermark at which a group would emit anything
    /// ([`WindowComputation::next_event_time_timer`]); `None`: none would. With several groups,
    /// the heap's least entry (a stale one is lower than its group's bound: still a bound).
    pub(crate) fn next_event_time_timer(&self) -> Option<Timestamp> {
        match &self.comps[..] {
            [comp] => comp.next_event_time_timer(),
            _ => self.heap.peek().map(|r| r.0 .0),
        }
    }

    /// The earliest processing-time timer of any group.
    pub(crate) fn next_processing_time_timer(&self) -> Option<Timestamp> {
        self.comps
            .iter()
            .filter_map(WindowComputation::next_processing_time_timer)
            .min()
    }

    /// The heap again from `next`, without stale entries.
    fn rebuild_heap(&mut self) {
        self.heap.clear();
        for (i, b) in self.next.iter().enumerate() {
            if let Some(t) = b {
                self.heap.push(Reverse((*t, i as u32)));
            }
        }
    }

    /// Brings every group to the watermark (they emit nothing): their state, counters and
    /// snapshots are then as if each had been stepped at every step.
    pub(crate) fn catch_up(
        &mut self,
        out: &mut dyn WindowOutput<KeyId, C::Window, Number, C::Output>,
    ) {
        for i in 0..self.comps.len() {
            if self.comps[i].process_watermark(self.watermark, out) {
                self.requeue(i);
            }
        }
    }

    /// The counters of all groups, summed.
    pub(crate) fn metrics(&self) -> WindowMetrics {
        let mut m = WindowMetrics::default();
        for c in &self.comps {
            crate::end::add_metrics(&mut m, &c.metrics());
        }
        m
    }

    /// What all groups hold.
    pub(crate) fn live_state(&self) -> LiveState {
        let mut s = LiveState::default();
        for c in &self.comps {
            let l = c.live_state();
            s.keys += l.keys;
            s.windows += l.windows;
            s.buffered += l.buffered;
            s.timers += l.timers;
        }
        s
    }

    /// What all groups hold that grows with the input.
    pub(crate) fn held_state(&self) -> HeldState {
        let mut s = HeldState::default();
        for c in &self.comps {
            let h = c.held_state();
            s.windows += h.windows;
            s.elements += h.elements;
            s.keys += h.keys;
            s.bytes += h.bytes;
        }
        s
    }

    /// The dictionary the groups' keys are interned in.
    pub(crate) fn keys(&self) -> &KeyDictionary {
        &self.group_of.keys
    }

    /// Each owned group's snapshot, with its keys renumbered and their texts beside it
    /// ([`window_io::portable`]): a process with another dictionary restores it. Call after
    /// [`KeyGroups::catch_up`].
    ///
    /// # Errors
    /// A computation that cannot snapshot.
    pub(crate) fn snapshot(&self) -> Result<Vec<GroupCut>, SnapshotError> {
        self.comps
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut bytes = Vec::new();
                let (done, ids) = window_io::portable::renumbered(|| c.snapshot(&mut bytes));
                done?;
                let keys = ids
                    .into_iter()
                    .map(|id| self.group_of.keys.text(id).map(|t| t.to_string()))
                    .collect::<Option<Vec<String>>>()
                    .ok_or_else(|| {
                        SnapshotError::Invalid("a key id without text in the dictionary".into())
                    })?;
                Ok(GroupCut {
                    group: self.first + i as u32,
                    keys,
                    bytes,
                })
            })
            .collect()
    }

    /// Restores group `group` (one this worker owns) from its snapshot, and sets the
    /// watermark to `watermark` (the one at the snapshot).
    ///
    /// # Errors
    /// A group not owned here, or bytes its computation refuses.
    pub(crate) fn restore(
        &mut self,
        cut: &GroupCut,
        watermark: Timestamp,
    ) -> Result<(), SnapshotError> {
        let group = cut.group;
        let i = group
            .checked_sub(self.first)
            .map(|i| i as usize)
            .filter(|&i| i < self.comps.len())
            .ok_or_else(|| {
                SnapshotError::Invalid(format!("key group {group} is not this worker's"))
            })?;
        let groups = self.group_of.groups;
        restore_group(&mut self.comps[i], cut, &self.group_of.keys, groups)?;
        self.watermark = self.watermark.max(watermark);
        self.next[i] = None;
        self.requeue(i);
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! [`KeyGroups`] against one computation over all keys (the naive reference): the same
    //! rows at the same moments (each watermark step, each element), as multisets within a
    //! moment, for random jobs of every strategy, with disorder and allowed lateness; and the
    //! same after a snapshot of every group restored on two workers.

    use super::*;
    use window_core::Emitted;
    use window_job::{build, JobResult, JobSpec};

    type Rows = Vec<Emitted<KeyId, window_core::AnyWindow, Number, JobResult>>;
    /// Each moment's rows.
    type Log = Vec<(usize, Rows)>;

    /// A seeded generator (xorshift; also the writer's tests').
    pub(crate) struct Rng(pub(crate) u64);

    impl Rng {
        pub(crate) fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n.max(1)
        }
    }

    /// Each moment's rows, sorted (as text).
    fn moments(log: &[(usize, Rows)]) -> Vec<(usize, Vec<String>)> {
        log.iter()
            .map(|(m, rows)| {
                let mut t: Vec<String> = rows.iter().map(|r| format!("{r:?}")).collect();
                t.sort();
                (*m, t)
            })
            .filter(|(_, t)| !t.is_empty())
            .collect()
    }

    fn spec(rng: &mut Rng) -> JobSpec {
        let window = match rng.below(4) {
            0 => format!("tumbling:{}ms", 10 + rng.below(50)),
            1 => format!("session:{}ms", 3 + rng.below(30)),
            _ => {
                let slide = 3 + rng.below(20);
                format!("sliding:{}ms:{slide}ms", slide * (1 + rng.below(5)))
            }
        };
        let strategy = if window.starts_with("sliding") {
            ["native", "keywindow", "sliced", "sliced:changes"][rng.below(4) as usize]
        } else {
            "native"
        };
        let agg = ["sum", "count", "max", "mean"][rng.below(4) as usize];
        let mut spec = JobSpec::new(
            window.parse().expect("window"),
            agg.parse().expect("aggregate"),
        );
        spec.strategy = strategy.parse().expect("strategy");
        spec.allowed_lateness = (rng.below(3) * rng.below(40)) as i64;
        spec
    }

    #[test]
    fn key_groups_fire_what_one_computation_fires_at_the_same_moments() {
        for seed in 1..=40u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let spec = spec(&mut rng);
            let keys = KeyDictionary::shared();
            let ids: Vec<KeyId> = (0..1 + rng.below(30))
                .map(|k| keys.intern(&format!("k{k}")))
                .collect();
            let groups = [1, 3, 7, 128][rng.below(4) as usize];
            let make = || build(&spec).expect("builds");
            let mut one = make();
            let mut kg = KeyGroups::new(make, GroupOf::new(Arc::clone(&keys), groups), 0, 1);
            let (mut a, mut b): (Log, Log) = (vec![], vec![]);
            let (mut t, mut max, delay) = (0i64, i64::MIN, rng.below(20) as i64);
            let n = 200 + rng.below(600) as usize;
            let cut = rng.below(n as u64) as usize;
            // After `cut` elements: every group snapshotted, restored on worker 0 or 1 of 2.
            let mut halves: Option<[KeyGroups<_>; 2]> = None;
            for i in 0..n {
                t += rng.below(5) as i64;
                let at = t - if rng.below(6) == 0 {
                    rng.below(60) as i64
                } else {
                    0
                };
                let key = ids[rng.below(ids.len() as u64) as usize];
                let value = Number::from(rng.below(100) as f64);
                let (mut ra, mut rb) = (Rows::new(), Rows::new());
                let _ = one.process_element(key, value, at, &mut ra);
                let _ = match halves.as_mut() {
                    None => kg.process_element(key, value, at, &mut rb),
                    Some(h) => {
                        let w = owner(GroupOf::new(Arc::clone(&keys), groups).of(key), groups, 2);
                        h[w as usize].process_element(key, value, at, &mut rb)
                    }
                };
                a.push((2 * i, ra));
                b.push((2 * i, rb));
                max = max.max(at);
                let w = max - delay - 1;
                let (mut ra, mut rb) = (Rows::new(), Rows::new());
                one.process_watermark(w, &mut ra);
                match halves.as_mut() {
                    None => {
                        kg.process_watermark(w, &mut rb);
                    }
                    Some(h) => {
                        h[0].process_watermark(w, &mut rb);
                        h[1].process_watermark(w, &mut rb);
                    }
                }
                a.push((2 * i + 1, ra));
                b.push((2 * i + 1, rb));
                if i == cut {
                    let mut sink = Rows::new();
                    kg.catch_up(&mut sink);
                    assert!(sink.is_empty(), "seed {seed}: catching up fired");
                    let snaps = kg.snapshot().expect("snapshot");
                    let mut h = [0, 1].map(|w| {
                        KeyGroups::new(make, GroupOf::new(Arc::clone(&keys), groups), w, 2)
                    });
                    for g in &snaps {
                        let w = owner(g.group, groups, 2) as usize;
                        h[w].restore(g, w_of(&kg)).expect("restores");
                    }
                    halves = Some(h);
                }
            }
            let (mut ra, mut rb) = (Rows::new(), Rows::new());
            one.process_watermark(i64::MAX, &mut ra);
            for k in halves.iter_mut().flatten() {
                k.process_watermark(i64::MAX, &mut rb);
            }
            a.push((usize::MAX, ra));
            b.push((usize::MAX, rb));
            assert_eq!(moments(&a), moments(&b), "seed {seed}: {spec:?}");
            assert!(!moments(&a).is_empty(), "seed {seed}: no rows at all");
        }
    }

    fn w_of<C>(k: &KeyGroups<C>) -> Timestamp {
        k.watermark
    }
}
