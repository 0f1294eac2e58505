//! Sliced sliding windows: per key, one partial aggregate per non-empty slice, combined with a
//! two-stacks FIFO aggregator.
//!
//! Key windows make a sparse key cheap but still add each element of a hot key to the `p / k`
//! windows that cover it. Slicing removes that cost for every key. Time is cut into *slices*
//! (panes) of `gcd(size, slide)` ms, aligned like the windows, so every window is exactly a run of
//! consecutive slices. Per key we keep the partial aggregate of each **non-empty** slice only, in
//! time order, in a FIFO aggregator with two stacks (Tangwongsan, Hirzel, Schneider:
//! "Low-latency sliding-window aggregation in worst-case constant time", the two-stacks
//! baseline): the newest slice is open and takes `add`s; closed slices are pushed on the back
//! stack, which keeps a running aggregate; the front stack keeps suffix aggregates and is refilled
//! from the back when it runs empty. Evicting the oldest slice and querying the aggregate of all
//! slices are amortised O(1) `merge`s, whatever `size / slide` is.
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

use std::collections::BTreeMap;
use std::hash::Hash;

use window_core::{AggregateFunction, TimeWindow, Timestamp, Window};

use crate::keys::KeySlots;
use crate::{
    count_native_windows, InOrderWindows, KeyWindowError, KeyWindowMetrics, KeyWindowOutput,
    KeyWindowResult, SlidingGeometry,
};

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

/// A FIFO of (slice start, partial aggregate) with amortised O(1) push, evict and query.
#[derive(Clone, Debug)]
struct TwoStacks<A> {
    /// Oldest slice on top (last); each entry carries the aggregate of itself and every entry
    /// below it (all newer slices of the front stack).
    front: Vec<(i64, A, A)>,
    /// Newest slice last.
    back: Vec<(i64, A)>,
    /// Aggregate of the whole back stack.
    back_agg: Option<A>,
}

impl<A: Clone> TwoStacks<A> {
    fn new() -> Self {
        Self {
            front: Vec::new(),
            back: Vec::new(),
            back_agg: None,
        }
    }

    fn len(&self) -> usize {
        self.front.len() + self.back.len()
    }

    fn push<T, F: AggregateFunction<T, Acc = A>>(&mut self, f: &F, start: i64, acc: A) {
        match self.back_agg.as_mut() {
            Some(agg) => f.merge(agg, acc.clone()),
            None => self.back_agg = Some(acc.clone()),
        }
        self.back.push((start, acc));
    }

    fn oldest_start(&self) -> Option<i64> {
        self.front
            .last()
            .map(|e| e.0)
            .or_else(|| self.back.first().map(|e| e.0))
    }

    /// Drops every slice starting before `start`.
    fn evict_before<T, F: AggregateFunction<T, Acc = A>>(&mut self, f: &F, start: i64) {
        loop {
            if self.front.is_empty() {
                if self.back.first().is_none_or(|e| e.0 >= start) {
                    return;
                }
                // Flip: move the back stack onto the front, newest first, with suffix aggregates.
                let mut running: Option<A> = None;
                for (s, acc) in self.back.drain(..).rev() {
                    let agg = match running.take() {
                        None => acc.clone(),
                        Some(mut r) => {
                            f.merge(&mut r, acc.clone());
                            r
                        }
                    };
                    running = Some(agg.clone());
                    self.front.push((s, acc, agg));
                }
                self.back_agg = None;
            }
            match self.front.last() {
                Some(e) if e.0 < start => {
                    self.front.pop();
                }
                _ => return,
            }
        }
    }

    /// The aggregate of every slice, merged into `into`.
    fn merge_into<T, F: AggregateFunction<T, Acc = A>>(&self, f: &F, into: &mut A) {
        if let Some(e) = self.front.last() {
            f.merge(into, e.2.clone());
        }
        if let Some(b) = &self.back_agg {
            f.merge(into, b.clone());
        }
    }
}

#[derive(Debug)]
struct SliceKey<K, A> {
    key: K,
    /// Closed slices; boxed and created on demand, so that a sparse key (one open slice) stays
    /// small and the key table stays cache-friendly.
    closed: Option<Box<TwoStacks<A>>>,
    /// The newest slice, still taking elements: (start, partial aggregate).
    open: Option<(i64, A)>,
    /// The next window (start) this key fires, if any.
    next: Option<i64>,
    native_covered: Option<i64>,
}

impl<K, A: Clone> SliceKey<K, A> {
    fn is_idle(&self) -> bool {
        self.open.is_none() && self.closed_len() == 0 && self.next.is_none()
    }

    fn closed_len(&self) -> usize {
        self.closed.as_ref().map_or(0, |c| c.len())
    }

    fn oldest_start(&self) -> Option<i64> {
        self.closed
            .as_ref()
            .and_then(|c| c.oldest_start())
            .or(self.open.as_ref().map(|o| o.0))
    }

    fn newest_start(&self) -> Option<i64> {
        self.open.as_ref().map(|o| o.0).or_else(|| {
            let c = self.closed.as_ref()?;
            c.back
                .last()
                .map(|e| e.0)
                .or_else(|| c.front.first().map(|e| e.0))
        })
    }
}

/// Sliced sliding windows over elements in time order (see the module docs).
///
/// # Examples
/// ```
/// use keywindow::{EmitMode, KeyWindowResult, SlicedWindows, SlidingGeometry};
/// use window_core::{NumericAggregate, TimeWindow};
/// let g = SlidingGeometry::new(4, 1, 0)?;
/// let mut all = SlicedWindows::new(g, NumericAggregate::Sum, EmitMode::AllWindows);
/// let mut out = Vec::new();
/// all.process("a", 2.0, 0, &mut out)?;
/// all.advance_time(i64::MAX, &mut out);
/// assert_eq!(out.len(), 4); // [-3,1), [-2,2), [-1,3), [0,4): every window holding the element
/// assert_eq!(out[3], ("a", TimeWindow::new(0, 4), KeyWindowResult::Value(Some(2.0))));
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
    keys: KeySlots<K, SliceKey<K, F::Acc>>,
    /// Firing times: window max timestamp -> (key slot, window start) pairs. A key has one live
    /// timer, the one matching its `next`; entries that no longer match are stale and skipped,
    /// so moving a key's timer is a push, with no delete and no dedup set.
    fire: BTreeMap<Timestamp, Vec<(u32, i64)>>,
    time: Timestamp,
    live_slices: usize,
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
            .field("live_keys", &self.keys.len())
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
            keys: KeySlots::new(),
            fire: BTreeMap::new(),
            time: Timestamp::MIN,
            live_slices: 0,
            metrics: KeyWindowMetrics::default(),
            _element: std::marker::PhantomData,
        }
    }

    /// The window geometry.
    pub fn geometry(&self) -> SlidingGeometry {
        self.geometry
    }

    /// The counters so far; `key_windows_created` counts slices (partial aggregates) created.
    pub fn metrics(&self) -> KeyWindowMetrics {
        self.metrics
    }

    /// Slices (partial aggregates) currently held, open ones included.
    pub fn live_slices(&self) -> usize {
        self.live_slices
    }

    /// Keys currently holding state.
    pub fn live_keys(&self) -> usize {
        self.keys.len()
    }

    /// The current time.
    pub fn current_time(&self) -> Timestamp {
        self.time
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
    pub fn process<O>(
        &mut self,
        key: K,
        value: T,
        time: Timestamp,
        out: &mut O,
    ) -> Result<(), KeyWindowError>
    where
        O: KeyWindowOutput<K, F::Out>,
    {
        if time < self.time {
            return Err(KeyWindowError::OutOfOrder {
                timestamp: time,
                current: self.time,
            });
        }
        self.advance_time(time.saturating_sub(1), out);
        self.time = time;
        let g = self.geometry;
        let left = g.left_start(time);
        if left > g.slot(time) {
            // In a gap between windows (slide > size): in no window, as in Flink.
            self.metrics.in_no_window += 1;
            return Ok(());
        }
        self.metrics.elements += 1;
        let slice_start = TimeWindow::window_start_with_offset(time, self.slice_offset, self.slice);
        let slot = self.intern(&key);
        let state = self.keys.get_mut(slot).expect("interned key");
        self.metrics.native_windows += count_native_windows(&g, &mut state.native_covered, time);
        match state.open.as_mut() {
            Some((start, acc)) if *start == slice_start => self.function.add(acc, &value),
            _ => {
                if let Some((start, acc)) = state.open.take() {
                    state
                        .closed
                        .get_or_insert_with(|| Box::new(TwoStacks::new()))
                        .push(&self.function, start, acc);
                }
                let mut acc = self.function.create_accumulator();
                self.function.add(&mut acc, &value);
                state.open = Some((slice_start, acc));
                self.live_slices += 1;
                self.metrics.key_windows_created += 1;
            }
        }
        // The element enters the result at its left key window.
        if state.next.is_none_or(|n| left < n) {
            // The old entry, if any, goes stale: `next` no longer matches it.
            state.next = Some(left);
            self.fire
                .entry(g.window(left).max_timestamp())
                .or_default()
                .push((slot, left));
        }
        Ok(())
    }

    /// Moves time to `time` (ms; never back): fires every window whose max timestamp is
    /// `<= time`, in time order.
    pub fn advance_time<O>(&mut self, time: Timestamp, out: &mut O)
    where
        O: KeyWindowOutput<K, F::Out>,
    {
        self.time = self.time.max(time);
        while let Some(entry) = self.fire.first_entry() {
            if *entry.key() > time {
                break;
            }
            for (slot, start) in entry.remove() {
                // Skip stale entries: the key's timer moved, or the slot was reused.
                let live = self.keys.get(slot).is_some_and(|k| k.next == Some(start));
                if live {
                    self.fire_window(slot, start, out);
                }
            }
        }
    }

    fn fire_window<O>(&mut self, slot: u32, start: i64, out: &mut O)
    where
        O: KeyWindowOutput<K, F::Out>,
    {
        let g = self.geometry;
        let f = &self.function;
        let Some(state) = self.keys.get_mut(slot) else {
            return;
        };
        // Drop the slices that left: those before the window's start.
        let mut evicted = 0;
        if let Some(closed) = state.closed.as_mut() {
            let before = closed.len();
            closed.evict_before(f, start);
            evicted = before - closed.len();
            if closed.len() == 0 {
                state.closed = None;
            }
        }
        if state.open.as_ref().is_some_and(|o| o.0 < start) {
            state.open = None;
            evicted += 1;
        }
        self.live_slices -= evicted;
        let window = g.window(start);
        let result = if state.oldest_start().is_some() {
            let mut acc = f.create_accumulator();
            if let Some(closed) = &state.closed {
                closed.merge_into(f, &mut acc);
            }
            if let Some((_, open)) = &state.open {
                f.merge(&mut acc, open.clone());
            }
            Some(f.get_result(&acc))
        } else {
            None
        };
        state.next = match self.emit {
            EmitMode::AllWindows => {
                // The next window holds a slice iff the newest slice is still in it.
                let next = start.saturating_add(g.slide());
                state.newest_start().filter(|n| *n >= next).map(|_| next)
            }
            // The next change: the window where the oldest slice leaves.
            EmitMode::Changes => state.oldest_start().map(|o| g.right_start(o)),
        };
        match (result, self.emit) {
            (Some(r), _) => {
                self.metrics.results_emitted += 1;
                out.result(&state.key, window, KeyWindowResult::Value(r));
            }
            (None, EmitMode::Changes) => {
                self.metrics.results_emitted += 1;
                self.metrics.empty_results += 1;
                out.result(&state.key, window, KeyWindowResult::Empty);
            }
            (None, EmitMode::AllWindows) => {}
        }
        if let Some(n) = state.next {
            self.fire
                .entry(g.window(n).max_timestamp())
                .or_default()
                .push((slot, n));
        } else {
            // No later window holds any of the remaining slices: drop them.
            self.live_slices -= state.closed_len() + usize::from(state.open.is_some());
            state.closed = None;
            state.open = None;
        }
        if state.is_idle() {
            let key = state.key.clone();
            self.keys.release(slot, &key);
        }
    }

    fn intern(&mut self, key: &K) -> u32 {
        self.keys.intern(key, || SliceKey {
            key: key.clone(),
            closed: None,
            open: None,
            next: None,
            native_covered: None,
        })
    }
}

impl<K, T, F> InOrderWindows<K, T> for SlicedWindows<K, T, F>
where
    K: Hash + Eq + Clone,
    F: AggregateFunction<T>,
{
    type Out = F::Out;

    fn process<O: KeyWindowOutput<K, F::Out>>(
        &mut self,
        key: K,
        value: T,
        time: Timestamp,
        out: &mut O,
    ) -> Result<(), KeyWindowError> {
        SlicedWindows::process(self, key, value, time, out)
    }

    fn advance_time<O: KeyWindowOutput<K, F::Out>>(&mut self, time: Timestamp, out: &mut O) {
        SlicedWindows::advance_time(self, time, out);
    }

    fn metrics(&self) -> KeyWindowMetrics {
        SlicedWindows::metrics(self)
    }

    fn live_windows(&self) -> usize {
        self.live_slices
    }

    fn current_time(&self) -> Timestamp {
        self.time
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use window_core::NumericAggregate;

    #[test]
    fn two_stacks_matches_a_plain_fifo() {
        let f = NumericAggregate::Max;
        let mut s = TwoStacks::new();
        let mut fifo: Vec<(i64, f64)> = Vec::new();
        let mut seed = 12345_u64;
        for step in 0..5000_i64 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            if seed % 3 != 0 {
                let v = (seed % 1000) as f64;
                let mut acc = AggregateFunction::<f64>::create_accumulator(&f);
                AggregateFunction::<f64>::add(&f, &mut acc, &v);
                s.push(&f, step, acc);
                fifo.push((step, v));
            } else {
                let cut = step - (seed % 20) as i64;
                s.evict_before(&f, cut);
                fifo.retain(|e| e.0 >= cut);
            }
            let mut acc = AggregateFunction::<f64>::create_accumulator(&f);
            s.merge_into(&f, &mut acc);
            let expected = fifo
                .iter()
                .map(|e| e.1)
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
            assert_eq!(AggregateFunction::<f64>::get_result(&f, &acc), expected);
            assert_eq!(s.len(), fifo.len());
        }
    }

    #[test]
    fn changes_mode_gives_the_worked_example_of_key_windows() {
        // docs/keywindow.md: p = 4, k = 1, elements at 0, 5, 10, 11: the same 8 results.
        let g = SlidingGeometry::new(4, 1, 0).unwrap();
        let mut s = SlicedWindows::new(g, NumericAggregate::Count, EmitMode::Changes);
        let mut out: Vec<(&str, TimeWindow, KeyWindowResult<Option<f64>>)> = Vec::new();
        for t in [0, 5, 10, 11] {
            s.process("a", 1.0, t, &mut out).unwrap();
        }
        s.advance_time(i64::MAX, &mut out);
        let starts: Vec<i64> = out.iter().map(|o| o.1.start()).collect();
        assert_eq!(starts, [-3, 1, 2, 6, 7, 8, 11, 12]);
        assert_eq!(out[5].2, KeyWindowResult::Value(Some(2.0)));
        assert_eq!(s.metrics().empty_results, 3);
        assert_eq!(s.live_keys(), 0);
        assert_eq!(s.live_slices(), 0);
    }
}
