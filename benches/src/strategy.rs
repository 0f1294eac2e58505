//! Every sliding-window strategy on every keyed sliding workload, through the one interface.
//!
//! [`run_workload`] runs the computation `window-job` builds for a strategy (the same as
//! `windowctl run --strategy ...` runs) through the one interface, [`WindowComputation`], by its
//! concrete type ([`engine::job::build_with`]: no virtual call per element, as a benchmark of the
//! strategy itself should have): keyed events `(key, value, time)` in arrival order, a
//! bounded-out-of-orderness watermark after each element or after each input batch
//! ([`SlidingSpec::watermark_every`]), results to a [`BenchSink`]. The strategies
//! ([`Strategy::ALL`]):
//!
//! - `native`: Flink's `WindowOperator` with sliding windows and the event-time trigger: one
//!   state, trigger timer and cleanup timer per (key, window); emits every non-empty window.
//! - `keywindow`: left and right key windows (`docs/keywindow.md`): emits where a key's result
//!   changes, plus an empty result when a key's window empties.
//! - `sliced`: per-key partial aggregates of non-empty slices in a two-stacks aggregator
//!   (`docs/sliced.md`), every non-empty window (the native output).
//! - `sliced:changes`: the same, emitting only changes (the key-window output).
//!
//! **Adding a strategy:** add it to `window_job::Strategy` (and its computation to
//! `window_job::build`); every table row of the sliding workloads picks it up.

use engine::core::{
    AnyWindow, Number, NumericAggregate, Timestamp, WindowComputation, WindowOutput,
};
use engine::job::{build_with, JobAggregate, JobResult, JobSpec, Strategy, Visitor, WindowSpec};
use engine::watermark::BoundedOutOfOrderness;

/// A bench output: it takes the results of any computation `window-job` builds (any window type
/// that converts to [`AnyWindow`], any result that converts to [`JobResult`]).
pub trait BenchSink {
    /// This sink as the output of a computation with windows `W` and results `R`.
    fn as_output<W, R>(&mut self) -> &mut dyn WindowOutput<u32, W, Number, R>
    where
        W: Copy,
        AnyWindow: From<W>,
        JobResult: From<R>;
}

/// A sink that counts results and sums their values (a checksum that also keeps the optimiser
/// from discarding the work). Empty results (key windows) count and add 0.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    /// Results received.
    pub results: u64,
    /// Sum of all result values (`None` counts 0).
    pub checksum: f64,
}

impl Tally {
    fn add(&mut self, value: Option<f64>) {
        self.results += 1;
        self.checksum += value.unwrap_or(0.0);
    }
}

impl<K, W, V, R> WindowOutput<K, W, V, R> for Tally
where
    JobResult: From<R>,
{
    fn result(&mut self, _key: &K, _window: &W, result: R, _watermark: Timestamp) {
        self.add(JobResult::from(result).into());
    }

    fn late(&mut self, _key: K, _timestamp: Timestamp, _value: V, _watermark: Timestamp) {}

    fn emptied(&mut self, _key: &K, _window: &W, _watermark: Timestamp) {
        self.add(None);
    }
}

impl BenchSink for Tally {
    fn as_output<W, R>(&mut self) -> &mut dyn WindowOutput<u32, W, Number, R>
    where
        W: Copy,
        AnyWindow: From<W>,
        JobResult: From<R>,
    {
        self
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

impl Emits {
    /// What `strategy` emits.
    #[must_use]
    pub fn of(strategy: Strategy) -> Self {
        if strategy.emits_empty_results() {
            Emits::Changes
        } else {
            Emits::EveryWindow
        }
    }
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
    /// Events between two watermarks: [`PER_ELEMENT`] (a watermark after every element, what
    /// `windowctl --watermark-interval 0` does) or [`PER_BATCH`] (after every input batch, as the
    /// runtime reads files; Flink emits periodically, every 200 ms of processing time by
    /// default, which at millions of events per second is far more than a batch).
    pub watermark_every: usize,
    /// Allowed lateness in ms (Flink's `allowedLateness`): how long a window's state is kept
    /// after it fired, for late elements.
    pub allowed_lateness: i64,
}

/// [`SlidingSpec::watermark_every`]: a watermark after every element.
pub const PER_ELEMENT: usize = 1;

/// [`SlidingSpec::watermark_every`]: a watermark after every input batch, the runtime's batch of
/// events read from a file (`engine::runtime::MAX_BATCH`).
pub const PER_BATCH: usize = engine::runtime::MAX_BATCH;

/// Counters every strategy reports after a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Window states created: (key, window) states for `native`, key windows for `keywindow`,
    /// slices for the sliced strategies.
    pub windows_created: u64,
    /// Elements dropped as late.
    pub late: u64,
}

/// Runs `strategy` computing `spec` over `events` (time, key, value) into `sink`, with a
/// watermark after every `spec.watermark_every` elements and the final `i64::MAX` watermark at
/// the end.
///
/// # Errors
/// Invalid window parameters.
pub fn run_workload<S: BenchSink>(
    strategy: Strategy,
    spec: &SlidingSpec,
    events: &[(Timestamp, u32, f64)],
    sink: &mut S,
) -> Result<Counters, String> {
    let window = WindowSpec::Sliding {
        size: spec.size,
        slide: spec.slide,
        offset: 0,
    };
    let mut job = JobSpec::new(window, JobAggregate::Numeric(spec.aggregate));
    job.strategy = strategy;
    job.allowed_lateness = spec.allowed_lateness;
    let run = Run {
        events,
        delay: spec.out_of_orderness,
        every: spec.watermark_every.max(1),
        sink,
    };
    build_with(&job, run).map_err(|e| e.to_string())
}

/// The bench loop, for the computation's concrete type.
struct Run<'a, S> {
    events: &'a [(Timestamp, u32, f64)],
    delay: i64,
    /// Events per watermark.
    every: usize,
    sink: &'a mut S,
}

impl<S: BenchSink> Visitor<u32, Number, AnyWindow, JobResult> for Run<'_, S> {
    type Output = Counters;

    fn visit<C>(self, mut op: C) -> Counters
    where
        C: WindowComputation<u32, Number> + Send + 'static,
        AnyWindow: From<C::Window>,
        JobResult: From<C::Output>,
    {
        let out = self.sink.as_output::<C::Window, C::Output>();
        let mut watermark = BoundedOutOfOrderness::new(self.delay);
        for batch in self.events.chunks(self.every) {
            for &(time, key, value) in batch {
                let r = op.process_element(key, Number::Float(value), time, out);
                debug_assert!(r.is_ok(), "{r:?}");
                watermark.on_event(time);
            }
            op.process_watermark(watermark.current(), out);
        }
        op.process_watermark(i64::MAX, out);
        let m = op.metrics();
        std::hint::black_box(op);
        Counters {
            windows_created: m.windows_created,
            late: m.late_elements,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::core::{TimeWindow, Window};

    #[derive(Default)]
    struct Results(Vec<(u32, TimeWindow, Option<f64>)>);

    impl Results {
        fn push<W: Copy>(&mut self, key: u32, window: W, value: Option<f64>)
        where
            AnyWindow: From<W>,
        {
            let (start, end) = AnyWindow::from(window).bounds().expect("time window");
            self.0.push((key, TimeWindow::new(start, end), value));
        }
    }

    impl<W: Copy, R> WindowOutput<u32, W, Number, R> for Results
    where
        AnyWindow: From<W>,
        JobResult: From<R>,
    {
        fn result(&mut self, key: &u32, window: &W, result: R, _: Timestamp) {
            self.push(*key, *window, JobResult::from(result).into());
        }
        fn late(&mut self, _: u32, _: Timestamp, _: Number, _: Timestamp) {}
        fn emptied(&mut self, key: &u32, window: &W, _: Timestamp) {
            self.push(*key, *window, None);
        }
    }

    impl BenchSink for Results {
        fn as_output<W, R>(&mut self) -> &mut dyn WindowOutput<u32, W, Number, R>
        where
            W: Copy,
            AnyWindow: From<W>,
            JobResult: From<R>,
        {
            self
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

    fn run(
        strategy: Strategy,
        spec: &SlidingSpec,
        events: &[(i64, u32, f64)],
    ) -> Vec<(u32, TimeWindow, Option<f64>)> {
        let mut out = Results::default();
        run_workload(strategy, spec, events, &mut out).unwrap();
        out.0
    }

    #[test]
    fn a_watermark_per_batch_gives_the_results_of_a_watermark_per_element() {
        // In time order nothing is late either way: the same (key, window, value) rows, only
        // fired later, for every strategy (those that emit changes too: every window end is
        // still reached in order).
        let mut events = out_of_order_stream();
        events.sort_by_key(|x| x.0);
        for strategy in Strategy::ALL {
            let spec = |every| SlidingSpec {
                size: 30,
                slide: 10,
                aggregate: NumericAggregate::Sum,
                out_of_orderness: 0,
                watermark_every: every,
                allowed_lateness: 0,
            };
            let sorted = |mut v: Vec<(u32, TimeWindow, Option<f64>)>| {
                v.sort_by_key(|x| (x.0, x.1, x.2.map(f64::to_bits)));
                v
            };
            let per_element = sorted(run(strategy, &spec(PER_ELEMENT), &events));
            let per_batch = sorted(run(strategy, &spec(PER_BATCH), &events));
            assert!(!per_element.is_empty());
            assert_eq!(per_element, per_batch, "{strategy:?}");
        }
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
            watermark_every: PER_ELEMENT,
            allowed_lateness: 0,
        };
        let events: Vec<_> = {
            let mut e = out_of_order_stream();
            e.sort_by_key(|x| x.0);
            e
        };
        let native = run(Strategy::Native, &spec, &events);
        let keyw = run(Strategy::KeyWindow, &spec, &events);
        let last = |r: &[(u32, TimeWindow, Option<f64>)]| {
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
