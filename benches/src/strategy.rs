//! Sliding-window strategies behind one interface, so every keyed sliding workload runs on each.
//!
//! A [`SlidingStrategy`] takes keyed events `(key, value, time)` in arrival order, stamps a
//! bounded-out-of-orderness watermark after each element, and hands window results to a
//! [`ResultSink`]. The strategies:
//!
//! - [`Native`]: the engine's [`WindowOperator`] with [`SlidingWindows`] and the event-time
//!   trigger (Flink's `WindowOperator`): one state, trigger timer and cleanup timer per (key,
//!   window); emits every non-empty window.
//! - [`KeyWindow`]: [`EventTimeKeyWindows`](engine::keywindow::EventTimeKeyWindows) (left and right key windows, `docs/keywindow.md`):
//!   emits where a key's result changes, plus an empty result when a key's window empties.
//! - [`Sliced`]: [`EventTimeSlicedWindows`](engine::keywindow::EventTimeSlicedWindows) emitting every non-empty window (the native output):
//!   per-key partial aggregates of non-empty slices in a two-stacks aggregator
//!   (`docs/sliced.md`).
//! - [`SlicedChanges`]: the same, emitting only changes (the key-window output).
//!
//! The last three are one [`OrderedStrategy`] each: an in-order processor behind the event-time
//! buffer, told apart by an [`OrderedKind`].
//!
//! **Adding a strategy:** implement [`SlidingStrategy`] (or, for an in-order processor,
//! [`OrderedKind`]), add a variant to [`StrategyKind`] and its arm in [`StrategyKind::visit`];
//! every table row of the sliding workloads picks it up.

use engine::assigners::{SlidingWindows, TimeDomain};
use engine::core::{NumericAggregate, TimeWindow, Timestamp};
use engine::keywindow::{
    EmitMode, EventTime, InOrderWindows, KeyWindowOutput, KeyWindowResult, KeyWindows,
    SlicedWindows, SlidingGeometry,
};
use engine::operator::{Incremental, OperatorConfig, WindowOperator, WindowOutput};
use engine::triggers::EventTimeTrigger;
use engine::watermark::BoundedOutOfOrderness;

/// Receives window results: `value` is `None` for an empty result (key windows) or an undefined
/// aggregate (max of nothing).
pub trait ResultSink {
    /// The window `window` of `key` fired with `value`.
    fn result(&mut self, key: u32, window: TimeWindow, value: Option<f64>);
}

/// A sink that counts results and sums their values (a checksum that also keeps the optimiser
/// from discarding the work).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    /// Results received.
    pub results: u64,
    /// Sum of all result values (`None` counts 0).
    pub checksum: f64,
}

impl ResultSink for Tally {
    fn result(&mut self, _key: u32, _window: TimeWindow, value: Option<f64>) {
        self.results += 1;
        self.checksum += value.unwrap_or(0.0);
    }
}

/// Which results a strategy emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emits {
    /// Every non-empty (key, window), as Flink's operator.
    EveryWindow,
    /// Only windows where a key's result changes, and an empty result when it empties.
    Changes,
}

/// What a sliding workload computes: window geometry, aggregate and watermark delay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlidingSpec {
    /// Window size in ms.
    pub size: i64,
    /// Window slide in ms (`size == slide` is tumbling).
    pub slide: i64,
    /// The aggregate.
    pub aggregate: NumericAggregate,
    /// Bounded out-of-orderness of the watermark in ms (watermark = max time - delay - 1).
    pub out_of_orderness: i64,
}

/// Counters every strategy reports after a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Window states created: (key, window) states for `native`, key windows for `keywindow`.
    pub windows_created: u64,
    /// Elements dropped as late.
    pub late: u64,
}

/// A sliding-window strategy in event time.
pub trait SlidingStrategy: Sized {
    /// The name in the table.
    const NAME: &'static str;
    /// Which results it emits.
    const EMITS: Emits;

    /// A strategy for `spec`.
    ///
    /// # Errors
    /// Invalid window parameters.
    fn new(spec: &SlidingSpec) -> Result<Self, String>;

    /// Processes one element, then advances the watermark past it (by the spec's delay).
    fn process<S: ResultSink>(&mut self, key: u32, value: f64, time: Timestamp, out: &mut S);

    /// End of input: the watermark jumps to `i64::MAX` and every open window fires.
    fn finish<S: ResultSink>(&mut self, out: &mut S);

    /// The counters so far.
    fn counters(&self) -> Counters;
}

/// Calls a generic function with a concrete strategy type ([`StrategyKind::visit`]).
pub trait StrategyVisitor {
    /// What the visit returns.
    type Output;
    /// Runs with strategy `St`.
    fn visit<St: SlidingStrategy>(self) -> Self::Output;
}

/// The strategies the table runs, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StrategyKind {
    /// [`Native`].
    Native,
    /// [`KeyWindow`].
    KeyWindow,
    /// [`Sliced`].
    Sliced,
    /// [`SlicedChanges`].
    SlicedChanges,
}

impl StrategyKind {
    /// Every strategy compiled in, in table order.
    pub const ALL: &'static [StrategyKind] = &[
        StrategyKind::Native,
        StrategyKind::KeyWindow,
        StrategyKind::Sliced,
        StrategyKind::SlicedChanges,
    ];

    /// Calls `visitor` with this strategy's type.
    pub fn visit<V: StrategyVisitor>(self, visitor: V) -> V::Output {
        match self {
            StrategyKind::Native => visitor.visit::<Native>(),
            StrategyKind::KeyWindow => visitor.visit::<KeyWindow>(),
            StrategyKind::Sliced => visitor.visit::<Sliced>(),
            StrategyKind::SlicedChanges => visitor.visit::<SlicedChanges>(),
        }
    }

    /// The name in the table.
    #[must_use]
    pub fn name(self) -> &'static str {
        struct Name;
        impl StrategyVisitor for Name {
            type Output = &'static str;
            fn visit<St: SlidingStrategy>(self) -> &'static str {
                St::NAME
            }
        }
        self.visit(Name)
    }

    /// Which results it emits.
    #[must_use]
    pub fn emits(self) -> Emits {
        struct E;
        impl StrategyVisitor for E {
            type Output = Emits;
            fn visit<St: SlidingStrategy>(self) -> Emits {
                St::EMITS
            }
        }
        self.visit(E)
    }
}

/// Forwards [`WindowOperator`] results to a [`ResultSink`].
struct NativeOut<'a, S>(&'a mut S);

impl<S: ResultSink> WindowOutput<u32, TimeWindow, f64, Option<f64>> for NativeOut<'_, S> {
    fn result(&mut self, key: &u32, window: &TimeWindow, result: Option<f64>, _wm: Timestamp) {
        self.0.result(*key, *window, result);
    }

    fn late(&mut self, _key: u32, _timestamp: Timestamp, _value: f64, _watermark: Timestamp) {}
}

/// Forwards key-window results to a [`ResultSink`].
struct KeyOut<'a, S>(&'a mut S);

impl<S: ResultSink> KeyWindowOutput<u32, Option<f64>> for KeyOut<'_, S> {
    fn result(&mut self, key: &u32, window: TimeWindow, result: KeyWindowResult<Option<f64>>) {
        let value = match result {
            KeyWindowResult::Value(v) => v,
            KeyWindowResult::Empty => None,
        };
        self.0.result(*key, window, value);
    }
}

type NativeOperator =
    WindowOperator<u32, f64, SlidingWindows, EventTimeTrigger, Incremental<NumericAggregate>>;

/// The engine's window operator with sliding event-time windows (Flink's `WindowOperator`).
#[derive(Debug)]
pub struct Native {
    op: NativeOperator,
    watermark: BoundedOutOfOrderness,
}

impl SlidingStrategy for Native {
    const NAME: &'static str = "native";
    const EMITS: Emits = Emits::EveryWindow;

    fn new(spec: &SlidingSpec) -> Result<Self, String> {
        let assigner = SlidingWindows::new(spec.size, spec.slide, 0, TimeDomain::EventTime)
            .map_err(|e| e.to_string())?;
        let op = WindowOperator::new(
            assigner,
            EventTimeTrigger,
            Incremental(spec.aggregate),
            OperatorConfig::default(),
        )
        .map_err(|e| e.to_string())?;
        Ok(Self {
            op,
            watermark: BoundedOutOfOrderness::new(spec.out_of_orderness),
        })
    }

    fn process<S: ResultSink>(&mut self, key: u32, value: f64, time: Timestamp, out: &mut S) {
        let r = self
            .op
            .process_element(key, value, time, &mut NativeOut(out));
        debug_assert!(r.is_ok(), "{r:?}");
        self.watermark.on_event(time);
        self.op
            .process_watermark(self.watermark.current(), &mut NativeOut(out));
    }

    fn finish<S: ResultSink>(&mut self, out: &mut S) {
        self.op.process_watermark(i64::MAX, &mut NativeOut(out));
    }

    fn counters(&self) -> Counters {
        let m = self.op.metrics();
        Counters {
            windows_created: m.windows_created,
            late: m.late_elements,
        }
    }
}

/// What an ordered strategy runs: an in-order processor ([`KeyWindows`], [`SlicedWindows`]),
/// its name in the table and how it is built. The strategy ([`OrderedStrategy`]) puts the
/// event-time buffer and the watermark in front of it.
pub trait OrderedKind {
    /// The in-order processor.
    type Processor: InOrderWindows<u32, f64, Out = Option<f64>> + std::fmt::Debug;
    /// The name in the table.
    const NAME: &'static str;
    /// Which results it emits.
    const EMITS: Emits;

    /// The processor for `spec`.
    ///
    /// # Errors
    /// Invalid window parameters.
    fn build(spec: &SlidingSpec) -> Result<Self::Processor, String>;
}

/// An in-order processor behind the event-time buffer ([`EventTime`]), with a
/// bounded-out-of-orderness watermark after each element: every ordered strategy.
pub struct OrderedStrategy<Kd: OrderedKind> {
    inner: EventTime<Kd::Processor, u32, f64>,
    watermark: BoundedOutOfOrderness,
}

impl<Kd: OrderedKind> std::fmt::Debug for OrderedStrategy<Kd> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrderedStrategy")
            .field("name", &Kd::NAME)
            .field("inner", &self.inner)
            .field("watermark", &self.watermark)
            .finish()
    }
}

impl<Kd: OrderedKind> SlidingStrategy for OrderedStrategy<Kd> {
    const NAME: &'static str = Kd::NAME;
    const EMITS: Emits = Kd::EMITS;

    fn new(spec: &SlidingSpec) -> Result<Self, String> {
        Ok(Self {
            inner: EventTime::wrap(Kd::build(spec)?, 0),
            watermark: BoundedOutOfOrderness::new(spec.out_of_orderness),
        })
    }

    fn process<S: ResultSink>(&mut self, key: u32, value: f64, time: Timestamp, out: &mut S) {
        // A late element is handed back and counted by the processor; nothing else to do.
        let _late = self.inner.process_element(key, value, time);
        self.watermark.on_event(time);
        self.inner
            .process_watermark(self.watermark.current(), &mut KeyOut(out));
    }

    fn finish<S: ResultSink>(&mut self, out: &mut S) {
        self.inner.process_watermark(i64::MAX, &mut KeyOut(out));
    }

    /// Key windows (or, for sliced windows, slices: partial aggregates) created, and late
    /// elements.
    fn counters(&self) -> Counters {
        Counters {
            windows_created: self.inner.metrics().key_windows_created,
            late: self.inner.late_elements(),
        }
    }
}

fn geometry(spec: &SlidingSpec) -> Result<SlidingGeometry, String> {
    SlidingGeometry::new(spec.size, spec.slide, 0).map_err(|e| e.to_string())
}

/// [`OrderedKind`] of key windows.
#[derive(Debug)]
pub enum KeyWindowKind {}

impl OrderedKind for KeyWindowKind {
    type Processor = KeyWindows<u32, f64, NumericAggregate>;
    const NAME: &'static str = "keywindow";
    const EMITS: Emits = Emits::Changes;

    fn build(spec: &SlidingSpec) -> Result<Self::Processor, String> {
        Ok(KeyWindows::new(geometry(spec)?, spec.aggregate))
    }
}

/// [`OrderedKind`] of sliced windows, every window (`CHANGES = false`) or changes only.
#[derive(Debug)]
pub enum SlicedKind<const CHANGES: bool> {}

impl<const CHANGES: bool> OrderedKind for SlicedKind<CHANGES> {
    type Processor = SlicedWindows<u32, f64, NumericAggregate>;
    const NAME: &'static str = if CHANGES { "sliced:changes" } else { "sliced" };
    const EMITS: Emits = if CHANGES {
        Emits::Changes
    } else {
        Emits::EveryWindow
    };

    fn build(spec: &SlidingSpec) -> Result<Self::Processor, String> {
        let mode = if CHANGES {
            EmitMode::Changes
        } else {
            EmitMode::AllWindows
        };
        Ok(SlicedWindows::new(geometry(spec)?, spec.aggregate, mode))
    }
}

/// Key windows in event time ([`EventTimeKeyWindows`](engine::keywindow::EventTimeKeyWindows)).
pub type KeyWindow = OrderedStrategy<KeyWindowKind>;
/// `sliced`: sliced windows in event time
/// ([`EventTimeSlicedWindows`](engine::keywindow::EventTimeSlicedWindows)), every non-empty
/// window, as the native operator.
pub type Sliced = OrderedStrategy<SlicedKind<false>>;
/// `sliced:changes`: the same, with the key-window output.
pub type SlicedChanges = OrderedStrategy<SlicedKind<true>>;

#[cfg(test)]
mod tests {
    use super::*;

    type Results = Vec<(u32, TimeWindow, Option<f64>)>;

    impl ResultSink for Results {
        fn result(&mut self, key: u32, window: TimeWindow, value: Option<f64>) {
            self.push((key, window, value));
        }
    }

    fn out_of_order_stream() -> Vec<(i64, u32, f64)> {
        let mut rng = crate::rng::SplitMix64::new(11);
        (0..3_000)
            .map(|i| {
                let jitter = rng.below(40) as i64;
                (i / 3 - jitter, rng.below(7) as u32, rng.below(100) as f64)
            })
            .collect()
    }

    fn run<St: SlidingStrategy>(spec: &SlidingSpec, events: &[(i64, u32, f64)]) -> Results {
        let mut st = St::new(spec).unwrap();
        let mut out = Results::new();
        for &(t, k, v) in events {
            st.process(k, v, t, &mut out);
        }
        st.finish(&mut out);
        out
    }

    #[test]
    fn native_and_keywindow_agree_on_the_last_value_per_key_and_window_end() {
        // Key windows emit where native results change: replaying both into "latest value per
        // key" stores gives the same store after every window end (docs/keywindow.md, Output).
        let spec = SlidingSpec {
            size: 30,
            slide: 10,
            aggregate: NumericAggregate::Max,
            out_of_orderness: 0,
        };
        let events: Vec<_> = {
            let mut e = out_of_order_stream();
            e.sort_by_key(|x| x.0);
            e
        };
        let native = run::<Native>(&spec, &events);
        let keyw = run::<KeyWindow>(&spec, &events);
        let last = |r: &Results| {
            let mut m = std::collections::BTreeMap::new();
            for (k, w, v) in r {
                m.insert((w.end(), *k), *v);
            }
            m
        };
        let (n, k) = (last(&native), last(&keyw));
        // Every key-window value is the native result of its window...
        for ((end, key), v) in &k {
            if let Some(v) = v {
                assert_eq!(n.get(&(*end, *key)), Some(&Some(*v)), "key {key} end {end}");
            }
        }
        // ... and every native result is the key's latest key-window output at or before its
        // window's end (an empty key-window result means native emits nothing there).
        for ((end, key), v) in &n {
            let latest = k
                .range(..=(*end, u32::MAX))
                .rev()
                .find(|((_, kk), _)| kk == key)
                .map(|(_, v)| *v);
            assert_eq!(latest, Some(*v), "key {key} end {end}");
        }
        assert!(!native.is_empty() && !keyw.is_empty());
    }
}
