//! Sliced sliding windows: per key, one partial aggregate per non-empty slice, combined with a
//! two-stacks FIFO aggregator.
//!
//! Key windows make a sparse key cheap but still add each element of a hot key to the `p / k`
//! windows that cover it. Slicing removes that cost for every key. Time is cut into *slices*
//! (panes) of `gcd(size, slide)` ms, aligned like the windows, so every window is exactly a run of
//! consecutive slices. Per key we keep the partial aggregate of each **non-empty** slice only, in
//! time order: the newest slice is open and takes `add`s; closed slices sit in a FIFO
//! aggregator, two-stacks lite (Tangwongsan, Hirzel, Schneider: "In-order sliding-window
//! aggregation in worst-case constant time"), whose front part keeps suffix aggregates and whose
//! back part keeps a running aggregate. Evicting the oldest slice and querying the aggregate of
//! all slices are amortised O(1) `merge`s, whatever `size / slide` is.
//!
//! Per element the work is a push into a batch; a batch is folded before any window fires, in two
//! tight loops: a hash probe per key, then an `add` per element into its key's open slice.
//! Firing follows a schedule by window index (all windows) or a time-ordered log of slices with
//! enter and leave cursors (changes). `docs/sliced.md` explains the choices and what each one measured.
//!
//! Two output modes ([`EmitMode`]):
//! - [`EmitMode::AllWindows`]: a result for every non-empty window, as the native operator emits
//!   (same windows, same results, same order per key).
//! - [`EmitMode::Changes`]: a result only for windows whose content differs from the previous
//!   window's, plus an empty result when a key's window becomes empty: the key-window output
//!   ([`crate::KeyWindows`]), computed in O(1) per element for hot keys too.
//!
//! Only `create_accumulator`, `add`, `merge` and `get_result` are used: no retraction, so `max`
//! and `min` work.

use std::hash::Hash;

use window_core::{AggregateFunction, TimeWindow, Timestamp, Window, WindowOutput};

use crate::schedule::FireSchedule;
use crate::slice_log::{SegmentWindows, SliceLog};
use crate::two_stacks::TwoStacks;
use crate::{count_new_windows, KeyWindowError, KeyWindowMetrics, SlidingGeometry};
use slots::SliceSlots;

/// Which windows a [`SlicedWindows`] emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EmitMode {
    /// Every non-empty window, as Flink's window operator.
    #[default]
    AllWindows,
    /// Only windows where the result changes, plus an empty result when a key's window becomes
    /// empty (the key-window output).
    Changes,
}

/// A key's state. `repr(C)` keeps the field order: what every firing touches comes first (the
/// next window, the open slice, which every element touches too, the key, then the closed
/// slices' inline part, also `repr(C)`), so that a firing that evicts nothing reads the first
/// 184 bytes of the state for a numeric aggregate (216 in all: about three cache lines, as the
/// slots are not line-aligned), and never the closed slices' buffer.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(bound(
    serialize = "K: serde::Serialize, A: serde::Serialize",
    deserialize = "K: serde::Deserialize<'de>, A: serde::Deserialize<'de> + Clone"
))]
#[repr(C)]
struct SliceKey<K, A> {
    /// All windows: the next window (start) this key fires, if any.
    next: Option<i64>,
    /// The newest slice, still taking elements: (start, partial aggregate).
    open: Option<(i64, A)>,
    key: K,
    /// Closed slices (no allocation while there are none).
    closed: TwoStacks<A>,
    /// Changes: the firing round this key last fired in (a key fires once per round).
    round: u64,
    native_covered: Option<i64>,
}

impl<K, A: Clone> SliceKey<K, A> {
    /// No slice, open or closed, and no window to fire.
    fn is_idle(&self) -> bool {
        self.open.is_none() && self.closed.is_empty() && self.next.is_none()
    }

    fn closed_len(&self) -> usize {
        self.closed.len()
    }

    /// Drops the slices that start before `start`; returns how many went. Always inlined
    /// (every firing calls it; three callers made the compiler keep it apart: cachegrind).
    #[inline(always)]
    fn evict_before<T, F: AggregateFunction<T, Acc = A>>(&mut self, f: &F, start: i64) -> usize {
        let mut evicted = self.closed.evict_before(f, start);
        if self.open.as_ref().is_some_and(|o| o.0 < start) {
            self.open = None;
            evicted += 1;
        }
        evicted
    }

    /// The start of the oldest slice held, `i64::MAX` if there is none.
    fn oldest_start(&self) -> i64 {
        let open = self.open.as_ref().map_or(i64::MAX, |o| o.0);
        self.closed.oldest().min(open)
    }

    /// The aggregate of every slice held, `None` if there is none.
    #[inline]
    fn aggregate<T, F: AggregateFunction<T, Acc = A>>(&self, f: &F) -> Option<F::Out> {
        match (self.closed.is_empty(), &self.open) {
            (true, None) => None,
            (true, Some((_, open))) => Some(f.get_result(open)),
            (false, open) => {
                let mut acc = f.create_accumulator();
                self.closed.merge_into(f, &mut acc);
                if let Some((_, open)) = open {
                    f.merge(&mut acc, open.clone());
                }
                Some(f.get_result(&acc))
            }
        }
    }

    fn newest_start(&self) -> Option<i64> {
        self.open
            .as_ref()
            .map(|o| o.0)
            .or_else(|| self.closed.newest_start())
    }
}

/// Idle keys remembered before a sweep forgets them, at least (see `forget_idle_keys`).
const IDLE_SWEEP: usize = 64;

/// Elements batched before they are folded, at most (see `fold_batch`).
const BATCH_LIMIT: usize = 256;

/// What holds for every time in one slice, computed once per slice instead of per element
/// (each costs a division).
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
struct SliceFacts {
    /// The slice: `[start, end)`.
    start: i64,
    end: i64,
    /// Start and grid index of the left window: the first window that holds the slice.
    left: i64,
    left_index: i64,
    /// Grid index of the last window that holds the slice.
    last_index: i64,
    /// Start and grid index of the right window: the first window past the slice.
    right: i64,
    right_index: i64,
    /// Max timestamp of the left window: when the slice is first needed.
    left_fire: Timestamp,
    /// The slice lies in a gap between windows (slide > size).
    in_gap: bool,
    /// False near the ends of time, where saturation may break "constant over the slice": the
    /// facts then hold for their own time only.
    whole_slice: bool,
}

impl SliceFacts {
    fn of(g: &SlidingGeometry, slice_offset: i64, slice: i64, time: Timestamp) -> Self {
        let start = TimeWindow::window_start_with_offset(time, slice_offset, slice);
        let left = g.left_start(time);
        let slot = g.slot(time);
        // Window starts and ends lie on the slice grid, so which windows hold `time` is the
        // same for every time of its slice (away from saturation).
        let margin = g.size().saturating_add(g.slide()).saturating_add(slice);
        let whole_slice =
            start.checked_sub(margin).is_some() && start.checked_add(margin).is_some();
        Self {
            start,
            end: start.saturating_add(slice),
            left,
            left_index: g.index(left),
            left_fire: g.window(left).max_timestamp(),
            last_index: g.index(slot),
            right: slot.saturating_add(g.slide()),
            right_index: g.index(slot.saturating_add(g.slide())),
            in_gap: left > slot,
            whole_slice,
        }
    }

    /// Where the slice enters and leaves, for the slice log.
    fn segment(&self) -> SegmentWindows {
        SegmentWindows {
            enter_index: self.left_index,
            enter_start: self.left,
            leave_index: self.right_index,
            leave_start: self.right,
        }
    }

    #[inline]
    fn holds(&self, time: Timestamp) -> bool {
        self.whole_slice && time >= self.start && time < self.end
    }
}

/// Sliced sliding windows over elements in time order (see the module docs).
///
/// # Examples
/// ```
/// use keywindow::{EmitMode, SlicedWindows, SlidingGeometry};
/// use window_core::{Emitted, NumericAggregate, TimeWindow};
/// let g = SlidingGeometry::new(4, 1, 0)?;
/// let mut all = SlicedWindows::new(g, NumericAggregate::Sum, EmitMode::AllWindows);
/// let mut out: Vec<Emitted<&str, TimeWindow, f64, Option<f64>>> = Vec::new();
/// all.process("a", 2.0, 0, &mut out)?;
/// all.advance_time(i64::MAX, &mut out);
/// assert_eq!(out.len(), 4); // [-3,1), [-2,2), [-1,3), [0,4): every window holding the element
/// let window = TimeWindow::new(0, 4);
/// assert_eq!(out[3], Emitted::Result { key: "a", window, result: Some(2.0), watermark: 3 });
/// # Ok::<(), keywindow::KeyWindowError>(())
/// ```
pub struct SlicedWindows<K, T, F: AggregateFunction<T>> {
    geometry: SlidingGeometry,
    /// Slice length: gcd(size, slide).
    slice: i64,
    /// Slice alignment: the offset modulo the slice length.
    slice_offset: i64,
    function: F,
    emit: EmitMode,
    /// The keys' states, with the unchanged-firing cache when emitting every window.
    keys: SliceSlots<K, F::Acc>,
    /// All windows: firings by window index, (key slot, window start). A key has one live
    /// entry, the one matching its `next`; entries that no longer match are stale and skipped,
    /// so moving a key's firing is a push, with no delete and no dedup set.
    fire: FireSchedule,
    /// Changes: every slice held, in time order, with its enter and leave windows.
    log: SliceLog,
    /// Changes: firing rounds so far (one per window fired); a key fires once per round.
    round: u64,
    /// The key slots of one firing round (kept for its capacity).
    firing: Vec<u32>,
    /// Every window with grid index `<= due_index` fires at or before `time`...
    due_index: i64,
    /// ... until time reaches this (when the next index becomes due).
    due_until: Timestamp,
    /// ... and since this time (the due index is computed for times in `[due_until_from,
    /// due_until)`).
    due_until_from: Timestamp,
    /// `advance_time` has nothing to do before this time (see `next_wake`).
    wake: Timestamp,
    /// Slots of keys that went idle since the last sweep (see `forget_idle_keys`).
    idle: Vec<u32>,
    /// Facts of the slice holding the latest element, valid for every time in it.
    facts: Option<SliceFacts>,
    /// Elements of that slice not yet folded into their keys' state: (key, element). Keys are
    /// looked up when the batch is folded, in one tight loop (see `fold_batch`).
    batch: Vec<(K, T)>,
    /// The batched keys' slots, while the batch is folded (kept for its capacity).
    batch_slots: Vec<u32>,
    /// Fold the batch once it holds this many elements ([`BATCH_LIMIT`] unless a test set it).
    batch_limit: usize,
    time: Timestamp,
    live_slices: usize,
    /// In event time, once elements behind the watermark are taken
    /// ([`crate::InOrderWindows::accept_behind`]): the allowed lateness (`late`).
    lateness: Option<i64>,
    /// In event time, once elements behind the watermark are taken: the watermark being
    /// advanced to, which the windows it fires report ([`crate::InOrderWindows::announce_watermark`]).
    watermark: Option<Timestamp>,
    /// With allowed lateness: the fired windows not cleaned up yet, per key (`late`).
    retained: late::RetainedByKey<F::Acc>,
    /// Changes mode with allowed lateness: the changes emitted for fired windows, per key
    /// (`late_changes`).
    changes: late_changes::ChangesByKey<F::Acc>,
    /// Windows in `retained` and `changes`.
    retained_windows: usize,
    /// Idle keys that make a sweep, at least (keys still holding fired windows stay listed).
    sweep_at: usize,
    metrics: KeyWindowMetrics,
    _element: std::marker::PhantomData<fn(&T)>,
}

impl<K, T, F: AggregateFunction<T>> std::fmt::Debug for SlicedWindows<K, T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlicedWindows")
            .field("geometry", &self.geometry)
            .field("slice", &self.slice)
            .field("emit", &self.emit)
            .field("time", &self.time)
            .field("keys_held", &self.keys.len())
            .field("metrics", &self.metrics)
            .finish_non_exhaustive()
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl<K, T, F> SlicedWindows<K, T, F>
where
    K: Hash + Eq + Clone,
    F: AggregateFunction<T>,
{
    /// Sliced windows for `geometry`, aggregating with `function`, emitting as `emit` says.
    pub fn new(geometry: SlidingGeometry, function: F, emit: EmitMode) -> Self {
        let slice = gcd(geometry.size(), geometry.slide());
        Self {
            geometry,
            slice,
            slice_offset: geometry.offset().rem_euclid(slice),
            function,
            emit,
            keys: SliceSlots::new(emit == EmitMode::AllWindows),
            // A key's next window is at most size / slide + 1 windows past the one firing.
            fire: FireSchedule::new(
                (geometry.size() / geometry.slide())
                    .unsigned_abs()
                    .saturating_add(2),
            ),
            log: SliceLog::default(),
            round: 0,
            firing: Vec::new(),
            due_index: i64::MIN,
            due_until: Timestamp::MIN,
            due_until_from: Timestamp::MAX,
            wake: Timestamp::MAX,
            idle: Vec::new(),
            facts: None,
            batch: Vec::new(),
            batch_slots: Vec::new(),
            batch_limit: BATCH_LIMIT,
            time: Timestamp::MIN,
            live_slices: 0,
            lateness: None,
            watermark: None,
            retained: late::RetainedByKey::default(),
            changes: late_changes::ChangesByKey::default(),
            retained_windows: 0,
            sweep_at: 0,
            metrics: KeyWindowMetrics::default(),
            _element: std::marker::PhantomData,
        }
    }

    /// The window geometry.
    pub fn geometry(&self) -> SlidingGeometry {
        self.geometry
    }

    /// The counters so far; `key_windows_created` counts slices (partial aggregates) created,
    /// those of elements still batched included.
    pub fn metrics(&self) -> KeyWindowMetrics {
        let (slices, native) = self.batched_counts();
        let mut m = self.metrics;
        m.key_windows_created += slices as u64;
        m.native_windows += native;
        m
    }

    /// Slices (partial aggregates) currently held, open ones and those of elements still
    /// batched included.
    pub fn live_slices(&self) -> usize {
        self.live_slices + self.batched_counts().0
    }

    /// Keys currently holding slices, fired windows within the allowed lateness or batched
    /// elements (keys without any may still be
    /// remembered for a while, see `forget_idle_keys`). Counts by a scan of the key table and
    /// the batch.
    pub fn live_keys(&self) -> usize {
        let live = self.keys.states().filter(|s| !s.is_idle()).count()
            + (self.retained.keys().chain(self.changes.keys()))
                .filter(|slot| self.keys.get(**slot).is_some_and(SliceKey::is_idle))
                .count();
        // Batched keys not counted above (no state yet, or idle) count too, each once.
        let batched: std::collections::HashSet<&K> = self
            .batch
            .iter()
            .map(|(key, _)| key)
            .filter(|key| self.keys.state_of(key).is_none_or(SliceKey::is_idle))
            .collect();
        live + batched.len()
    }

    /// The current time.
    pub fn current_time(&self) -> Timestamp {
        self.time
    }

    /// Folds batched elements into their keys' state once `limit` (at least 1) are batched,
    /// instead of the default 256. For tests: results must not depend on it (1 folds every
    /// element at once, as an unbatched processor would).
    #[doc(hidden)]
    pub fn set_batch_limit(&mut self, limit: usize) {
        self.batch_limit = limit.max(1);
    }

    /// The slice length in ms (`gcd(size, slide)`).
    pub fn slice_length(&self) -> i64 {
        self.slice
    }

    /// Processes an element of `key` at `time` (ms), first firing every window whose max
    /// timestamp is before `time`.
    ///
    /// # Errors
    /// [`KeyWindowError::OutOfOrder`] if `time` is before the current time (nothing changes).
    #[inline]
    pub fn process<O>(
        &mut self,
        key: K,
        value: T,
        time: Timestamp,
        out: &mut O,
    ) -> Result<(), KeyWindowError>
    where
        O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized,
    {
        if time < self.time {
            return Err(KeyWindowError::OutOfOrder {
                timestamp: time,
                current: self.time,
            });
        }
        self.advance_time(time.saturating_sub(1), out);
        self.time = time;
        // Two facts of the slice are needed here (read in place: the facts are 80 bytes).
        let (in_gap, left_fire) = match &self.facts {
            Some(f) if f.holds(time) => (f.in_gap, f.left_fire),
            _ => {
                let f = self.start_slice(time);
                (f.in_gap, f.left_fire)
            }
        };
        if in_gap {
            // In a gap between windows (slide > size): in no window, as in Flink.
            self.metrics.in_no_window += 1;
            return Ok(());
        }
        self.metrics.elements += 1;
        self.batch.push((key, value));
        // The slice's first window must fire on time, whether its elements are still batched
        // or already folded (then its key is in the slice log or the schedule).
        self.wake = self.wake.min(left_fire);
        if self.batch.len() >= self.batch_limit {
            // Folding early is always right (it is what an unbatched processor does); the
            // limit keeps the batch small however long a slice is.
            self.fold_batch();
        }
        Ok(())
    }

    /// The element at `time` is the first of its slice: folds the elements of the last one and
    /// computes the new slice's facts.
    #[inline(never)]
    fn start_slice(&mut self, time: Timestamp) -> SliceFacts {
        self.fold_batch();
        let f = SliceFacts::of(&self.geometry, self.slice_offset, self.slice, time);
        self.facts = Some(f);
        f
    }

    /// Folds the batched elements of the current slice into their keys' state.
    ///
    /// Elements are batched, up to [`BATCH_LIMIT`], not folded one by one, because each fold
    /// touches a key's state at a random place in memory: in a tight loop of independent folds
    /// the processor overlaps those cache misses, where one fold per call would wait for each
    /// in turn; for the same reason the batch's keys are looked up first, all in one loop.
    /// Folding waits at most until the first window holding the slice fires (windows due
    /// earlier do not hold it), and happens before any window fires.
    #[inline(never)]
    fn fold_batch(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let Some(facts) = self.facts else {
            return;
        };
        let mut batch = std::mem::take(&mut self.batch);
        let mut slots = std::mem::take(&mut self.batch_slots);
        slots.clear();
        for (key, _) in &batch {
            slots.push(self.intern(key));
        }
        for ((_, value), &slot) in batch.drain(..).zip(&slots) {
            self.fold(slot, value, &facts);
        }
        self.batch = batch;
        self.batch_slots = slots;
    }

    /// Adds one element of the slice `facts` to the state of the key in `slot`.
    #[inline]
    fn fold(&mut self, slot: u32, value: T, facts: &SliceFacts) {
        let Some(state) = self.keys.get_mut(slot) else {
            debug_assert!(false, "batched element of a released key");
            return;
        };
        match state.open.as_mut() {
            Some((start, acc)) if *start == facts.start => {
                self.function.add(acc, &value);
                return;
            }
            _ => {}
        }
        // The key's first element in this slice.
        self.metrics.native_windows += count_new_windows(
            &mut state.native_covered,
            facts.left_index,
            facts.last_index,
        );
        if let Some((start, acc)) = state.open.take() {
            state.closed.push(&self.function, start, acc);
        }
        let mut acc = self.function.create_accumulator();
        self.function.add(&mut acc, &value);
        state.open = Some((facts.start, acc));
        self.live_slices += 1;
        self.metrics.key_windows_created += 1;
        match self.emit {
            // The slice log knows where it enters and leaves.
            EmitMode::Changes => self.log.push(slot, facts.segment()),
            // The key fires from the slice's left window on.
            EmitMode::AllWindows => {
                if state.next.is_none_or(|n| facts.left < n) {
                    // The old entry, if any, goes stale: `next` no longer matches it.
                    state.next = Some(facts.left);
                    self.fire.push(facts.left_index, (slot, facts.left));
                }
            }
        }
    }

    /// Moves time to `time` (ms; never back): fires every window whose max timestamp is
    /// `<= time`, in time order.
    #[inline]
    pub fn advance_time<O>(&mut self, time: Timestamp, out: &mut O)
    where
        O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized,
    {
        self.time = self.time.max(time);
        if time >= self.wake {
            self.fire_due(time, out);
        }
        // Else nothing is due yet: the common case, one comparison per element (inlined; the
        // firing is not, so the caller stays small).
    }

    /// Fires what is due at `time` (at or after the wake time).
    #[inline(never)]
    fn fire_due<O>(&mut self, time: Timestamp, out: &mut O)
    where
        O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized,
    {
        if time >= self.due_until || time < self.due_until_from {
            (self.due_index, self.due_until) = self.geometry.due_index(time);
            self.due_until_from = time;
        }
        let due = self.due_index;
        if !self.batch.is_empty()
            && (self.fire.has_due(due)
                || self
                    .log
                    .next_window()
                    .is_some_and(|(index, _)| index <= due)
                || self.facts.is_some_and(|f| f.left_index <= due))
        {
            // Windows fire: fold the batch first (it may add firings that are due).
            self.fold_batch();
        }
        match self.emit {
            EmitMode::AllWindows => self.fire_all_windows(time, out),
            EmitMode::Changes => self.fire_changes(time, out),
        }
        if time == Timestamp::MAX {
            // The end of time: every window has fired. A slice within a slide of i64::MAX can
            // have no window after it to leave in; forget whatever remains.
            self.keys = SliceSlots::new(self.emit == EmitMode::AllWindows);
            self.idle.clear();
            self.log = SliceLog::default();
            self.fire = FireSchedule::new(1);
            self.live_slices = 0;
            self.retained.clear();
            self.changes.clear();
            self.retained_windows = 0;
        }
        let sweep = IDLE_SWEEP.max(self.keys.len() / 2).max(self.sweep_at);
        if self.batch.is_empty() && self.idle.len() >= sweep {
            self.forget_idle_keys();
        }
        self.wake = self.next_wake();
    }

    /// Forgets the keys that went idle (no slice left) and stayed so. Keys are not forgotten
    /// the moment they go idle: one that comes back soon then finds its entry, and the key table
    /// is spared a remove and an insert. At most about as many idle keys as live ones are kept.
    /// Only called with an empty batch, so a key with batched elements, about to come back, is
    /// not forgotten and inserted again.
    fn forget_idle_keys(&mut self) {
        let mut idle = std::mem::take(&mut self.idle);
        let mut kept = Vec::new();
        for slot in idle.drain(..) {
            // Still idle (not back since), and not forgotten already (a key may be listed twice).
            if self.keys.get(slot).is_some_and(SliceKey::is_idle) {
                if self.still_retains(slot) {
                    kept.push(slot); // fired windows within the lateness: a later sweep
                } else {
                    self.keys.release(slot);
                }
            }
        }
        self.sweep_at = 2 * kept.len();
        idle.append(&mut kept);
        self.idle = idle;
    }

    /// The earliest time at which something may be due: the next window of the slice log or
    /// the schedule, or the first window of the batched slice.
    fn next_wake(&self) -> Timestamp {
        let g = &self.geometry;
        let fire_time = |start: i64| g.window(start).max_timestamp();
        let mut wake = Timestamp::MAX;
        if let Some((_, start)) = self.log.next_window() {
            wake = wake.min(fire_time(start));
        }
        if let Some(index) = self.fire.lowest_index() {
            wake = wake.min(fire_time(g.start_of(index)));
        }
        if let (false, Some(f)) = (self.batch.is_empty(), self.facts) {
            wake = wake.min(fire_time(f.left));
        }
        wake
    }

    /// Changes: fires every key whose slices enter or leave at a due window, window by window.
    fn fire_changes<O>(&mut self, time: Timestamp, out: &mut O)
    where
        O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized,
    {
        if self.fire.lowest_index().is_some() {
            // Firings of elements behind the watermark (`late_changes`).
            self.fire_changes_merged(time, out);
            return;
        }
        let mut firing = std::mem::take(&mut self.firing);
        while let Some((index, start)) = self.log.next_window() {
            if index > self.due_index || self.geometry.window(start).max_timestamp() > time {
                break;
            }
            self.round += 1;
            firing.clear();
            self.log.take_window(index, &mut firing);
            for &slot in &firing {
                self.fire_change(slot, start, out);
            }
        }
        firing.clear();
        self.firing = firing;
    }

    /// Changes: the key in `slot` emits its window starting at `start`, unless it did in this
    /// round already; a key left without slices is forgotten.
    fn fire_change<O>(&mut self, slot: u32, start: i64, out: &mut O)
    where
        O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized,
    {
        if let Some(lateness) = self.retains() {
            // The change is kept for late elements (`late_changes`).
            self.fire_change_retaining(slot, start, lateness, out);
            return;
        }
        let f = &self.function;
        let Some(state) = self.keys.get_mut(slot) else {
            return; // forgotten earlier in this round
        };
        if state.round == self.round {
            return;
        }
        state.round = self.round;
        self.live_slices -= state.evict_before(f, start);
        let window = self.geometry.window(start);
        self.metrics.results_emitted += 1;
        let at = window.max_timestamp();
        match state.aggregate(f) {
            Some(r) => out.result(&state.key, &window, r, at),
            None => {
                self.metrics.empty_results += 1;
                out.emptied(&state.key, &window, at);
                self.idle.push(slot);
            }
        }
    }

    #[inline]
    fn intern(&mut self, key: &K) -> u32 {
        // The key is cloned only for a new entry: no allocation per element for `String` keys.
        self.keys.intern(key, || SliceKey {
            open: None,
            round: 0,
            key: key.clone(),
            closed: TwoStacks::new(),
            next: None,
            native_covered: None,
        })
    }
}

mod all_windows;
mod in_order;
mod late;
mod late_changes;
mod pending;
mod slots;
mod snapshot;
#[cfg(test)]
mod tests;
