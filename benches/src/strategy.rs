//! Every sliding-window strategy on every keyed sliding workload, through the one interface.
//!
//! A [`StrategyRun`] is the computation `window-job` builds for a strategy (the same as
//! `windowctl run --strategy ...` runs: [`window_job::build`]), driven as a [`WindowComputation`]
//! trait object: keyed events `(key, value, time)` in arrival order, a bounded-out-of-orderness
//! watermark after each element, results to any [`WindowOutput`]. The strategies
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

use engine::core::{AnyWindow, NumericAggregate, Timestamp, WindowComputation, WindowOutput};
use engine::job::{build, Computation, JobAggregate, JobResult, JobSpec, Strategy, WindowSpec};
use engine::watermark::BoundedOutOfOrderness;

/// What every bench output receives: the job's windows and results over `u32` keys.
pub type BenchOutput<'a> = dyn WindowOutput<u32, AnyWindow, f64, JobResult> + 'a;

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

impl<K, W, R: Into<Option<f64>>> WindowOutput<K, W, f64, R> for Tally {
    fn result(&mut self, _key: &K, _window: &W, result: R, _watermark: Timestamp) {
        self.add(result.into());
    }

    fn late(&mut self, _key: K, _timestamp: Timestamp, _value: f64, _watermark: Timestamp) {}

    fn emptied(&mut self, _key: &K, _window: &W, _watermark: Timestamp) {
        self.add(None);
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
}

/// Counters every strategy reports after a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Window states created: (key, window) states for `native`, key windows for `keywindow`,
    /// slices for the sliced strategies.
    pub windows_created: u64,
    /// Elements dropped as late.
    pub late: u64,
}

/// One strategy's computation for a sliding workload, behind a watermark after each element.
pub struct StrategyRun {
    op: Computation<u32>,
    watermark: BoundedOutOfOrderness,
}

impl std::fmt::Debug for StrategyRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StrategyRun")
            .field("metrics", &self.op.metrics())
            .field("watermark", &self.watermark)
            .finish()
    }
}

impl StrategyRun {
    /// `strategy` computing `spec`.
    ///
    /// # Errors
    /// Invalid window parameters.
    pub fn new(strategy: Strategy, spec: &SlidingSpec) -> Result<Self, String> {
        let window = WindowSpec::Sliding {
            size: spec.size,
            slide: spec.slide,
            offset: 0,
        };
        let mut job = JobSpec::new(window, JobAggregate::Numeric(spec.aggregate));
        job.strategy = strategy;
        Ok(Self {
            op: build(&job).map_err(|e| e.to_string())?,
            watermark: BoundedOutOfOrderness::new(spec.out_of_orderness),
        })
    }

    /// Processes one element, then advances the watermark past it (by the spec's delay).
    #[inline]
    pub fn process(&mut self, key: u32, value: f64, time: Timestamp, out: &mut BenchOutput<'_>) {
        let r = self.op.process_element(key, value, time, out);
        debug_assert!(r.is_ok(), "{r:?}");
        self.watermark.on_event(time);
        self.op.process_watermark(self.watermark.current(), out);
    }

    /// End of input: the watermark jumps to `i64::MAX` and every open window fires.
    pub fn finish(&mut self, out: &mut BenchOutput<'_>) {
        self.op.process_watermark(i64::MAX, out);
    }

    /// The counters so far.
    #[must_use]
    pub fn counters(&self) -> Counters {
        let m = self.op.metrics();
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

    impl WindowOutput<u32, AnyWindow, f64, JobResult> for Results {
        fn result(&mut self, key: &u32, window: &AnyWindow, result: JobResult, _: Timestamp) {
            let (start, end) = window.bounds().expect("time window");
            self.0
                .push((*key, TimeWindow::new(start, end), result.into()));
        }
        fn late(&mut self, _: u32, _: Timestamp, _: f64, _: Timestamp) {}
        fn emptied(&mut self, key: &u32, window: &AnyWindow, _: Timestamp) {
            let (start, end) = window.bounds().expect("time window");
            self.0.push((*key, TimeWindow::new(start, end), None));
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
        let mut st = StrategyRun::new(strategy, spec).unwrap();
        let mut out = Results::default();
        for &(t, k, v) in events {
            st.process(k, v, t, &mut out);
        }
        st.finish(&mut out);
        out.0
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
