//! Key windows for dense sliding windows over sparse keys.
//!
//! A sliding window of size `p` and slide `k` puts every element into `p / k` windows. When a key
//! is sparse (fewer than one element per window), almost all of those windows hold the same
//! elements and emit the same result: a conventional operator materialises, fires and cleans up
//! every one of them. The key-window scheme (the paper in `docs/keywindow.md`, section 4) keeps
//! per key only the windows where the result *changes*:
//!
//! - the **left key window** `L(e)` of an element `e` at `t`: the earliest-ending window that
//!   contains `t`, where `e` enters the result;
//! - the **right key window** `R(e)`: the first window after the last one that contains `t`,
//!   where `e` leaves the result (empty when no later element is in it).
//!
//! Windows are created by data, not by the clock. A new `L(e)` must start with the state of the
//! elements already in its range; it takes it, by `merge`, from an existing window whose content
//! is exactly that: the previous element's left key window when nothing lies between the two
//! window starts, otherwise the most recent right key window at or before `L(e)`'s start. Every
//! element is then added to each live window that covers it; a window fires once, when time
//! passes its end, and is kept (fired) only while a later left key window may still inherit from
//! it. Only `create_accumulator`, `add`, `merge` and `get_result` are used: no raw elements, no
//! retraction, so `max` and `min` work as well as `sum`.
//!
//! The output is the native sliding-window output restricted to the key windows, plus one
//! *empty* result whenever a key's window becomes empty, so that a downstream store can expire
//! the key ([`WindowOutput::emptied`]). At most `2n` windows exist for `n` elements, against up
//! to `n * p / k` native ones; both counts are kept ([`KeyWindowMetrics`]).
//!
//! [`KeyWindows`] needs its elements in time order, which processing time gives by construction
//! (the paper's setting). [`EventTimeKeyWindows`] goes beyond the paper: it buffers elements by
//! event time and releases them in order as the watermark passes them; an element behind the
//! watermark is taken while a window holding it is not cleaned up, and emits the changes it
//! causes (`docs/keywindow.md`, "Event time").
#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

mod event_time;
mod key_late;
mod key_snapshot;
mod keys;
mod processing_time;
mod schedule;
mod slice_log;
pub mod sliced;
mod snapshot;
mod two_stacks;

use keys::KeySlots;

pub use event_time::{EventTime, EventTimeKeyWindows, EventTimeSlicedWindows};
pub use processing_time::{ProcessingTime, ProcessingTimeKeyWindows, ProcessingTimeSlicedWindows};
pub use sliced::{EmitMode, SlicedWindows};
pub use snapshot::InOrderSnapshot;

use std::collections::BTreeMap;
use std::hash::Hash;

use timer_service::TimerQueue;
use window_core::{
    AggregateFunction, ElementError, HeldState, TimeWindow, Timestamp, Window, WindowMetrics,
    WindowOutput, MAP_ENTRY_OVERHEAD,
};

/// Errors of this crate.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyWindowError {
    /// A size or slide that is not positive, or `abs(offset) >= slide`.
    InvalidParameters {
        /// Size in ms.
        size: i64,
        /// Slide in ms.
        slide: i64,
        /// Offset in ms.
        offset: i64,
    },
    /// An element older than the current time reached the in-order processor.
    OutOfOrder {
        /// The element's time.
        timestamp: Timestamp,
        /// The processor's current time.
        current: Timestamp,
    },
}

impl std::fmt::Display for KeyWindowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyWindowError::InvalidParameters { size, slide, offset } => write!(
                f,
                "key windows need size > 0, slide > 0 and abs(offset) < slide: size {size} ms, slide {slide} ms, offset {offset} ms"
            ),
            KeyWindowError::OutOfOrder { timestamp, current } => write!(
                f,
                "key windows need elements in time order: element at {timestamp} after time {current}"
            ),
        }
    }
}

impl std::error::Error for KeyWindowError {}

/// Counters of a key-window processor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KeyWindowMetrics {
    /// Elements processed (in order).
    pub elements: u64,
    /// Key windows created (left and right, each counted once).
    pub key_windows_created: u64,
    /// Windows the native sliding-window operator would have created for the same elements: the
    /// distinct (key, window) pairs that hold at least one element.
    pub native_windows: u64,
    /// Results emitted, empty ones included.
    pub results_emitted: u64,
    /// Empty results emitted.
    pub empty_results: u64,
    /// Left key windows that inherited state by `merge`.
    pub inherited: u64,
    /// Elements that fell in a gap between windows (`slide > size`): in no window, dropped as
    /// Flink drops them, and counted here.
    pub in_no_window: u64,
}

impl From<KeyWindowMetrics> for WindowMetrics {
    /// The common counters: key windows (or slices) as windows created, results (empty ones
    /// included) as windows fired. Late elements are the event-time wrapper's to count.
    fn from(m: KeyWindowMetrics) -> Self {
        WindowMetrics {
            elements: m.elements,
            windows_created: m.key_windows_created,
            native_windows: m.native_windows,
            windows_fired: m.results_emitted,
            empty_results: m.empty_results,
            late_elements: 0,
            late_side_output: 0,
            elements_in_no_window: m.in_no_window,
        }
    }
}

/// Key windows and sliced windows track windows up to one window (size + slide) after an
/// element: refuse elements whose windows would not fit in `i64`, and `i64::MIN`, Flink's "no
/// timestamp".
pub(crate) fn check_timestamp(g: SlidingGeometry, t: Timestamp) -> Result<(), ElementError> {
    if t == Timestamp::MIN {
        return Err(ElementError::MissingTimestamp);
    }
    // One window (size + slide) from either end: windows there would start before i64::MIN or
    // end after i64::MAX, which key windows and sliced windows cannot represent as Flink would.
    let margin = g.size().saturating_add(g.slide());
    if t > Timestamp::MAX - margin || t < Timestamp::MIN + margin {
        return Err(ElementError::TimestampOutOfRange {
            timestamp: t,
            size: g.size(),
        });
    }
    Ok(())
}

/// A sliding-window processor that takes its elements in time order ([`KeyWindows`],
/// [`SlicedWindows`]); [`EventTime`] puts a reordering buffer in front of one.
pub trait InOrderWindows<K, T> {
    /// What a window emits.
    type Out;

    /// Processes an element of `key` at `time` (ms), first firing every window whose max
    /// timestamp is before `time`.
    ///
    /// # Errors
    /// [`KeyWindowError::OutOfOrder`] if `time` is before the current time (nothing changes).
    fn process<O: WindowOutput<K, TimeWindow, T, Self::Out> + ?Sized>(
        &mut self,
        key: K,
        value: T,
        time: Timestamp,
        out: &mut O,
    ) -> Result<(), KeyWindowError>;

    /// Moves time to `time` (never back), firing every window whose max timestamp is `<= time`.
    fn advance_time<O: WindowOutput<K, TimeWindow, T, Self::Out> + ?Sized>(
        &mut self,
        time: Timestamp,
        out: &mut O,
    );

    /// The counters so far.
    fn metrics(&self) -> KeyWindowMetrics;

    /// Windows (or slices) currently held.
    fn live_windows(&self) -> usize;

    /// Keys currently holding state.
    fn live_keys(&self) -> usize;

    /// Windows (or slices), elements batched and keys held, with an estimate of their bytes:
    /// what a memory bound counts ([`window_core::WindowComputation::held_state`]), asked at
    /// every batch boundary. [`KeyWindows`] and [`SlicedWindows`] answer from counters (O(1));
    /// the default asks [`InOrderWindows::live_windows`] and [`InOrderWindows::live_keys`],
    /// without a byte estimate.
    fn held(&self) -> HeldState {
        HeldState {
            windows: self.live_windows(),
            elements: 0,
            keys: self.live_keys(),
            bytes: 0,
        }
    }

    /// The window geometry.
    fn geometry(&self) -> SlidingGeometry;

    /// The current time.
    fn current_time(&self) -> Timestamp;

    /// A lower bound on the time at which [`InOrderWindows::advance_time`] (or
    /// [`InOrderWindows::process`], which first advances to just before its element) fires
    /// anything; `None` when nothing would. What
    /// [`window_core::WindowComputation::next_event_time_timer`] of [`EventTime`] is made of.
    /// `Some(i64::MIN)`, the default: it cannot tell.
    fn next_fire(&self) -> Option<Timestamp> {
        Some(Timestamp::MIN)
    }

    /// Asks the processor to take elements behind its time, as Flink's window operator does
    /// ([`InOrderWindows::process_behind`]), with `allowed_lateness` ms (at least 0) of late
    /// firings; returns whether it does. [`EventTime`] asks once: a processor that does gets
    /// its time moved to the watermark itself and every element behind it; one that does not
    /// (the default) gets time `watermark - allowed_lateness`, and elements behind that are
    /// late.
    fn accept_behind(&mut self, allowed_lateness: i64) -> bool {
        let _ = allowed_lateness;
        false
    }

    /// Tells a processor that took [`InOrderWindows::accept_behind`] the watermark that the
    /// elements released next and the time advanced next belong to, so that the windows they
    /// fire report it, as Flink's operator reports its current watermark (the default ignores
    /// it: windows report their max timestamp).
    fn announce_watermark(&mut self, watermark: Timestamp) {
        let _ = watermark;
    }

    /// Processes an element at `time` at or before the current time (the watermark), once
    /// [`InOrderWindows::accept_behind`] said yes: it joins every window holding `time` that has
    /// not been cleaned up (max timestamp + allowed lateness after the current time); a window
    /// that has fired fires again at once (a late firing, Flink's `EventTimeTrigger` on an
    /// element behind the watermark), or, for the key-window output, the fired windows whose
    /// result the element changes are emitted (`docs/keywindow.md`, "Event time"). Returns the element when every window holding it is
    /// cleaned up (or, in a gap between windows, when `time + allowed_lateness <= current
    /// time`): it is late. The default returns every element. Elements are added out of time
    /// order: the aggregate must be commutative (every `NumericAggregate` is).
    fn process_behind<O: WindowOutput<K, TimeWindow, T, Self::Out> + ?Sized>(
        &mut self,
        key: K,
        value: T,
        time: Timestamp,
        out: &mut O,
    ) -> Option<(K, T)> {
        let _ = (time, out);
        Some((key, value))
    }
}

/// Sliding-window geometry: size, slide and offset in ms, aligned as Flink aligns them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlidingGeometry {
    size: i64,
    slide: i64,
    offset: i64,
}

impl SlidingGeometry {
    /// Windows of `size` ms every `slide` ms, shifted by `offset` ms.
    ///
    /// # Errors
    /// `size <= 0`, `slide <= 0` or `abs(offset) >= slide`.
    pub fn new(size: i64, slide: i64, offset: i64) -> Result<Self, KeyWindowError> {
        if size <= 0 || slide <= 0 || offset.unsigned_abs() >= slide.unsigned_abs() {
            return Err(KeyWindowError::InvalidParameters {
                size,
                slide,
                offset,
            });
        }
        Ok(Self {
            size,
            slide,
            offset,
        })
    }

    /// Size in ms.
    #[must_use]
    pub fn size(&self) -> i64 {
        self.size
    }

    /// Slide in ms.
    #[must_use]
    pub fn slide(&self) -> i64 {
        self.slide
    }

    /// Offset in ms.
    #[must_use]
    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// Start of the slide interval holding `t` (the last window start `<= t`).
    pub(crate) fn slot(&self, t: Timestamp) -> i64 {
        TimeWindow::window_start_with_offset(t, self.offset, self.slide)
    }

    /// Start of the left key window of an element at `t`: the first window start `> t - size`.
    pub(crate) fn left_start(&self, t: Timestamp) -> i64 {
        self.slot(t.saturating_sub(self.size))
            .saturating_add(self.slide)
    }

    pub(crate) fn window(&self, start: i64) -> TimeWindow {
        TimeWindow::new(start, start.saturating_add(self.size))
    }

    /// Index of a window start on the slide grid: `floor((start - offset) / slide)` (exact for
    /// every `start`; a start clamped at `i64::MIN` gets the index of the grid start below it).
    pub(crate) fn index(&self, start: i64) -> i64 {
        match start.checked_sub(self.offset) {
            Some(shifted) => shifted.div_euclid(self.slide),
            // |offset| < slide, so the quotient fits an i64.
            None => {
                (i128::from(start) - i128::from(self.offset)).div_euclid(i128::from(self.slide))
                    as i64
            }
        }
    }

    /// Start of the window with grid index `index`, clamped into the `i64` range.
    pub(crate) fn start_of(&self, index: i64) -> i64 {
        let start = i128::from(index) * i128::from(self.slide) + i128::from(self.offset);
        start.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }

    /// The largest grid index whose window fires at or before `time` (max timestamp `<=
    /// time`), and the time at which the next index becomes due.
    pub(crate) fn due_index(&self, time: Timestamp) -> (i64, Timestamp) {
        let to_index = |v: i128| v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
        let (offset, slide) = (i128::from(self.offset), i128::from(self.slide));
        if time >= Timestamp::MAX - 1 {
            // Every window: those ending past i64::MAX saturate to max timestamp MAX - 1.
            return (
                to_index((i128::from(i64::MAX) - offset).div_euclid(slide)),
                Timestamp::MAX,
            );
        }
        // Windows with start + size - 1 <= time < MAX - 1: their ends do not saturate, so this
        // is exact. (Starts clamped at i64::MIN fire later than their grid index says; callers
        // check each window's own max timestamp.)
        let latest_start = i128::from(time) - i128::from(self.size) + 1;
        let index = to_index((latest_start - offset).div_euclid(slide));
        let next = index.checked_add(1).map_or(Timestamp::MAX, |i| {
            self.window(self.start_of(i)).max_timestamp()
        });
        (index, next)
    }
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct KeyWin<A> {
    acc: A,
    /// Elements added (and inherited): 0 means the window is empty.
    elements: u64,
    left: bool,
    right: bool,
    fired: bool,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct KeyState<K, A> {
    key: K,
    /// Windows of this key by start.
    windows: BTreeMap<i64, KeyWin<A>>,
    /// Time of the key's previous element.
    last: Option<Timestamp>,
    /// Highest native window index already counted for this key.
    native_covered: Option<i64>,
}

/// Key windows over elements that arrive in time order (processing time, or event time after a
/// reordering buffer): the paper's mechanism.
///
/// # Examples
/// The contract's worked example: `p = 4`, `k = 1`, elements at 0, 5, 10, 11.
/// ```
/// use keywindow::{KeyWindows, SlidingGeometry};
/// use window_core::NumericAggregate;
/// let mut kw = KeyWindows::new(SlidingGeometry::new(4, 1, 0)?, NumericAggregate::Count);
/// let mut out = Vec::new();
/// for t in [0, 5, 10, 11] {
///     kw.process("a", 1.0, t, &mut out)?;
/// }
/// kw.advance_time(i64::MAX, &mut out);
/// assert_eq!(kw.metrics().key_windows_created, 8);
/// assert_eq!(kw.metrics().native_windows, 13);
/// # Ok::<(), keywindow::KeyWindowError>(())
/// ```
pub struct KeyWindows<K, T, F: AggregateFunction<T>> {
    geometry: SlidingGeometry,
    function: F,
    keys: KeySlots<K, KeyState<K, F::Acc>>,
    /// Firing timers at window max timestamps: (time, key slot, window start).
    fire: TimerQueue<u32, i64>,
    /// Retention timers: a fired window is dropped when time reaches `end + size`.
    retire: TimerQueue<u32, i64>,
    time: Timestamp,
    /// Windows held, all keys (kept as they come and go, so that counting costs nothing).
    windows_held: usize,
    /// In event time, once elements behind the watermark are taken
    /// ([`InOrderWindows::accept_behind`]): the allowed lateness (`key_late`).
    lateness: Option<i64>,
    metrics: KeyWindowMetrics,
    _element: std::marker::PhantomData<fn(&T)>,
}

impl<K, T, F: AggregateFunction<T>> std::fmt::Debug for KeyWindows<K, T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyWindows")
            .field("geometry", &self.geometry)
            .field("time", &self.time)
            .field("live_keys", &self.keys.len())
            .field("metrics", &self.metrics)
            .finish_non_exhaustive()
    }
}

impl<K, T, F> KeyWindows<K, T, F>
where
    K: Hash + Eq + Clone,
    F: AggregateFunction<T>,
{
    /// A processor for `geometry` aggregating with `function`.
    pub fn new(geometry: SlidingGeometry, function: F) -> Self {
        Self {
            geometry,
            function,
            keys: KeySlots::new(),
            fire: TimerQueue::new(),
            retire: TimerQueue::new(),
            time: Timestamp::MIN,
            windows_held: 0,
            lateness: None,
            metrics: KeyWindowMetrics::default(),
            _element: std::marker::PhantomData,
        }
    }

    /// The geometry.
    pub fn geometry(&self) -> SlidingGeometry {
        self.geometry
    }

    /// The counters so far.
    pub fn metrics(&self) -> KeyWindowMetrics {
        self.metrics
    }

    /// Windows currently held (fired ones kept for inheritance included).
    pub fn live_windows(&self) -> usize {
        self.windows_held
    }

    /// Key windows and keys held; bytes: per key its state, its slot and one tree node (a
    /// `BTreeMap` allocates a node of 11 entries for its first), per window beyond the first
    /// node its entry, per window two timers (firing, retention).
    pub fn held(&self) -> HeldState {
        let entry = size_of::<(i64, KeyWin<F::Acc>)>();
        let key = size_of::<KeyState<K, F::Acc>>()
            + size_of::<(K, u32)>()
            + 11 * entry
            + 3 * MAP_ENTRY_OVERHEAD;
        let timer = size_of::<(Timestamp, u32, i64)>() + MAP_ENTRY_OVERHEAD;
        let (windows, keys) = (self.windows_held, self.keys.len());
        let beyond = windows.saturating_sub(keys * 11);
        HeldState {
            windows,
            elements: 0,
            keys,
            bytes: keys * key + beyond * (entry + MAP_ENTRY_OVERHEAD) + windows * 2 * timer,
        }
    }

    /// Keys currently holding windows.
    pub fn live_keys(&self) -> usize {
        self.keys.len()
    }

    /// The current time: the latest element time or `advance_time` argument.
    pub fn current_time(&self) -> Timestamp {
        self.time
    }

    /// Processes an element of `key` at `time` (ms). First fires every window whose max
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
        let g = self.geometry;
        // Each a division: computed once per element.
        let (left, slot_start) = (g.left_start(time), g.slot(time));
        if left > slot_start {
            // In a gap between windows (slide > size): in no window, as in Flink.
            self.metrics.in_no_window += 1;
            return Ok(());
        }
        self.metrics.elements += 1;
        let slot = self.intern(&key);
        let state = self.keys.get_mut(slot).expect("interned key");

        self.metrics.native_windows += count_new_windows(
            &mut state.native_covered,
            g.index(left),
            g.index(slot_start),
        );

        // 1. The right key window, empty, if it does not exist.
        let right = slot_start.saturating_add(g.slide);
        let mut created = [None; 2];
        state
            .windows
            .entry(right)
            .or_insert_with(|| {
                created[0] = Some(right);
                KeyWin {
                    acc: self.function.create_accumulator(),
                    elements: 0,
                    left: false,
                    right: false,
                    fired: false,
                }
            })
            .right = true;

        // 2. The left key window, inheriting the state of the elements already in its range.
        if let Some(w) = state.windows.get_mut(&left) {
            w.left = true;
        } else {
            let mut win = KeyWin {
                acc: self.function.create_accumulator(),
                elements: 0,
                left: true,
                right: false,
                fired: false,
            };
            if let Some(source) = inheritance_source(&g, state, left) {
                let src = &state.windows[&source];
                self.function.merge(&mut win.acc, src.acc.clone());
                win.elements = src.elements;
                self.metrics.inherited += 1;
            }
            state.windows.insert(left, win);
            created[1] = Some(left);
        }
        for start in created.into_iter().flatten() {
            self.metrics.key_windows_created += 1;
            self.windows_held += 1;
            let end = g.window(start).max_timestamp();
            self.fire.register(end, slot, start);
        }

        // 3. Add the element to every live window that covers it: starts in (t - p, t].
        for (_, w) in state.windows.range_mut(left..=slot_start) {
            self.function.add(&mut w.acc, &value);
            w.elements += 1;
        }
        state.last = Some(time);
        Ok(())
    }

    /// Moves time to `time` (ms; never back): fires every window whose max timestamp is
    /// `<= time`, in time order, and drops fired windows no later left key window can inherit
    /// from.
    pub fn advance_time<O>(&mut self, time: Timestamp, out: &mut O)
    where
        O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized,
    {
        self.time = self.time.max(time);
        // Only timers up to `time`: after an element at t, windows ending at t may still get
        // elements at t, so `process` fires up to t - 1 even when the time already is t.
        loop {
            let next_fire = self.fire.peek_timestamp().filter(|t| *t <= time);
            let next_retire = self.retire.peek_timestamp().filter(|t| *t <= time);
            match (next_fire, next_retire) {
                (None, None) => break,
                // Fire first at equal times: a window is never dropped before it fired.
                (Some(f), r) if r.is_none_or(|r| f <= r) => {
                    let timer = self.fire.pop_due(f).expect("peeked");
                    self.fire_window(timer.key, timer.namespace, out);
                }
                _ => {
                    let timer = self.retire.pop_due(time).expect("peeked");
                    self.retire_window(timer.key, timer.namespace);
                }
            }
        }
    }

    fn fire_window<O>(&mut self, slot: u32, start: i64, out: &mut O)
    where
        O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized,
    {
        let g = self.geometry;
        let Some(state) = self.keys.get_mut(slot) else {
            return;
        };
        let Some(w) = state.windows.get_mut(&start) else {
            return;
        };
        w.fired = true;
        let window = g.window(start);
        // Key windows fire when time passes their end; the watermark is not tracked per result.
        let at = window.max_timestamp();
        if w.elements == 0 {
            self.metrics.empty_results += 1;
            out.emptied(&state.key, &window, at);
        } else {
            out.result(&state.key, &window, self.function.get_result(&w.acc), at);
        }
        self.metrics.results_emitted += 1;
        // A left key window created at time t may inherit from this one while t < end + size;
        // an element behind the watermark, within the allowed lateness after that (`key_late`).
        let drop_at = (g.window(start).end().saturating_add(g.size))
            .saturating_add(self.lateness.unwrap_or(0));
        self.retire.register(drop_at, slot, start);
    }

    fn retire_window(&mut self, slot: u32, start: i64) {
        let Some(state) = self.keys.get_mut(slot) else {
            return;
        };
        if state.windows.remove(&start).is_some() {
            self.windows_held -= 1;
        }
        if state.windows.is_empty() {
            self.keys.release_with(slot, |s| &s.key);
        }
    }

    fn intern(&mut self, key: &K) -> u32 {
        self.keys.intern(key, || KeyState {
            key: key.clone(),
            windows: BTreeMap::new(),
            last: None,
            native_covered: None,
        })
    }
}

impl<K, T, F> InOrderWindows<K, T> for KeyWindows<K, T, F>
where
    K: Hash + Eq + Clone,
    F: AggregateFunction<T>,
{
    type Out = F::Out;

    fn process<O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized>(
        &mut self,
        key: K,
        value: T,
        time: Timestamp,
        out: &mut O,
    ) -> Result<(), KeyWindowError> {
        KeyWindows::process(self, key, value, time, out)
    }

    fn advance_time<O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized>(
        &mut self,
        time: Timestamp,
        out: &mut O,
    ) {
        KeyWindows::advance_time(self, time, out);
    }

    fn metrics(&self) -> KeyWindowMetrics {
        KeyWindows::metrics(self)
    }

    fn live_windows(&self) -> usize {
        KeyWindows::live_windows(self)
    }

    fn live_keys(&self) -> usize {
        KeyWindows::live_keys(self)
    }

    fn held(&self) -> HeldState {
        KeyWindows::held(self)
    }

    fn geometry(&self) -> SlidingGeometry {
        KeyWindows::geometry(self)
    }

    fn current_time(&self) -> Timestamp {
        KeyWindows::current_time(self)
    }

    /// The earliest firing or retirement timer (possibly of a window gone since).
    fn next_fire(&self) -> Option<Timestamp> {
        match (self.fire.peek_timestamp(), self.retire.peek_timestamp()) {
            (Some(f), Some(r)) => Some(f.min(r)),
            (f, r) => f.or(r),
        }
    }

    fn accept_behind(&mut self, allowed_lateness: i64) -> bool {
        self.lateness = Some(allowed_lateness.max(0));
        true
    }

    fn process_behind<O: WindowOutput<K, TimeWindow, T, F::Out> + ?Sized>(
        &mut self,
        key: K,
        value: T,
        time: Timestamp,
        out: &mut O,
    ) -> Option<(K, T)> {
        self.behind(key, value, time, out)
    }
}

/// Windows the native (Flink) operator would create for a key's new element (or slice) whose
/// windows have grid indices `first..=last`, that it has not created for the key's earlier ones:
/// the indices beyond `covered`, the highest counted so far (elements come in time order).
/// Moves `covered` up to `last`.
#[inline]
pub(crate) fn count_new_windows(covered: &mut Option<i64>, first: i64, last: i64) -> u64 {
    let from = match *covered {
        None => first,
        Some(c) => match c.checked_add(1) {
            Some(next) => first.max(next),
            None => return 0, // everything up to the last index there is was counted
        },
    };
    *covered = Some(covered.map_or(last, |c| c.max(last)));
    if last >= from {
        (i128::from(last) - i128::from(from) + 1) as u64
    } else {
        0
    }
}

/// Which existing window holds exactly the elements already in the new left key window
/// starting at `left` (section 4.2 of the paper; `docs/keywindow.md`, step 2), if any.
fn inheritance_source<K, A>(g: &SlidingGeometry, state: &KeyState<K, A>, left: i64) -> Option<i64> {
    let prev = state.last?;
    let prev_left = g.left_start(prev);
    if left >= prev_left.saturating_add(g.size) {
        return None; // L(y) does not overlap L(e): nothing of the past is in range
    }
    // The most recent right key window at or before `left`: R(z) for the last element z before
    // `left`. Its start lies in (L(y).start, left] exactly when an element lies in
    // [L(y).start, left), the part of L(y) that L(e) does not cover.
    let latest_right = state
        .windows
        .range(..=left)
        .rev()
        .find(|(_, w)| w.right)
        .map(|(s, _)| *s);
    match latest_right {
        Some(r) if r > prev_left => Some(r),
        _ => state.windows.contains_key(&prev_left).then_some(prev_left),
    }
}

/// A collecting output for the unit tests: key-window results as the contract states them.
#[cfg(test)]
pub(crate) mod test_output;

#[cfg(test)]
mod tests;
