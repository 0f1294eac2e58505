//! The benchmark table: every workload × strategy once (best of up to three when a run is
//! short), with events per second, the fraction of a bare hash-map count over the same events,
//! windows created, results emitted and peak state memory.
//!
//! Run it with `cargo xtask bench [--quick] [FILTER]` (or `cargo bench -p benches --bench table
//! -- [--quick] [FILTER]`). The `table` bench target installs a counting allocator and passes it
//! in as a [`MemoryProbe`]; without one (plain `cargo test`) memory columns stay empty.
//!
//! **Event counts.** Each workload draws from one deterministic stream; a row uses a prefix of
//! it, shown in the `events` column. Native rows of sliding windows are capped at
//! [`Plan::native_assignments`] window assignments (`events * size / slide`), so `native` at
//! `size / slide = 1200` stays within seconds; other strategies use the whole stream.
//!
//! **Memory.** Peak state memory = the allocator's peak of live heap bytes during the run minus
//! the live bytes just before it (the input events are allocated before and excluded; the
//! strategy's state, timers, buffers and the query's own state are included). Bytes per key =
//! that peak / distinct keys in the row's events.

mod report;
mod workloads;

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

use engine::job::Strategy;
use serde::Serialize;

use crate::GeneratedEvent;
use workloads::{groups, run_job, Job};

pub use report::{bytes, percent, si, thousands};

/// Reads the process's heap usage (a counting global allocator).
pub trait MemoryProbe {
    /// Live heap bytes now.
    fn current(&self) -> usize;
    /// The highest live heap bytes since the last [`MemoryProbe::reset_peak`].
    fn peak(&self) -> usize;
    /// Starts a new peak at the current usage.
    fn reset_peak(&self);
}

/// The `peak_alloc` counting allocator: a binary that installs it as its global allocator
/// passes `&ALLOCATOR` as the probe.
impl MemoryProbe for peak_alloc::PeakAlloc {
    fn current(&self) -> usize {
        self.current_usage()
    }
    fn peak(&self) -> usize {
        self.peak_usage()
    }
    fn reset_peak(&self) {
        self.reset_peak_usage();
    }
}

/// No memory measurement (memory columns are left empty).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProbe;

impl MemoryProbe for NoProbe {
    fn current(&self) -> usize {
        0
    }
    fn peak(&self) -> usize {
        0
    }
    fn reset_peak(&self) {}
}

/// How much to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Seconds, even in a debug build: the smallest workloads of every kind (the harness test).
    Smoke,
    /// Every row, small streams: CI-style smoke runs (`--quick`).
    Quick,
    /// Every row, full streams.
    Full,
}

/// The sizes of one table run.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// The mode these sizes come from.
    pub mode: Mode,
    /// Key counts of the keyed sliding workloads.
    pub key_counts: Vec<u32>,
    /// `size / slide` ratios (size 60 s).
    pub ratios: Vec<i64>,
    /// Events per keyed stream (event time advances 1 ms per event).
    pub keyed_events: usize,
    /// Cap on `events * size / slide` for native rows with `size > slide`.
    pub native_assignments: u64,
    /// Events of each flights replay (`None`: all 328,521).
    pub flights_events: Option<usize>,
    /// Events of the Flink sliding workload.
    pub flink_sliding_events: usize,
    /// Events of the Flink tumbling workload.
    pub flink_tumbling_events: usize,
    /// Nexmark events (all kinds; 92 % are bids).
    pub nexmark_events: usize,
    /// A run shorter than this many seconds is repeated (up to 5 runs, best kept).
    pub repeat_below_seconds: f64,
    /// Only rows whose `workload strategy` contains this (case-insensitive).
    pub filter: Option<String>,
}

/// Window size of the keyed sliding workloads: 60 s, divisible by every ratio.
pub const KEYED_WINDOW_MS: i64 = 60_000;

impl Plan {
    /// The sizes for `mode`.
    #[must_use]
    pub fn new(mode: Mode) -> Self {
        let all_keys = vec![1_000, 100_000, 1_000_000];
        let all_ratios = vec![1, 2, 60, 120, 1200];
        match mode {
            Mode::Smoke => Self {
                mode,
                key_counts: vec![1_000],
                ratios: vec![2, 120],
                keyed_events: 3_000,
                native_assignments: 30_000,
                flights_events: Some(3_000),
                flink_sliding_events: 3_000,
                flink_tumbling_events: 20_000,
                nexmark_events: 10_000,
                repeat_below_seconds: 0.0,
                filter: None,
            },
            Mode::Quick => Self {
                mode,
                key_counts: all_keys,
                ratios: all_ratios,
                keyed_events: 100_000,
                native_assignments: 1_000_000,
                flights_events: Some(40_000),
                flink_sliding_events: 200_000,
                flink_tumbling_events: 1_000_000,
                nexmark_events: 200_000,
                repeat_below_seconds: 0.05,
                filter: None,
            },
            Mode::Full => Self {
                mode,
                key_counts: all_keys,
                ratios: all_ratios,
                keyed_events: 1_000_000,
                native_assignments: 5_000_000,
                flights_events: None,
                flink_sliding_events: 1_000_000,
                flink_tumbling_events: 10_000_000,
                nexmark_events: 2_000_000,
                repeat_below_seconds: 0.5,
                filter: None,
            },
        }
    }

    fn selects(&self, workload: &str, strategy: &str) -> bool {
        self.filter.as_ref().is_none_or(|f| {
            format!("{workload} {strategy}")
                .to_lowercase()
                .contains(&f.to_lowercase())
        })
    }
}

/// One row of the table.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The input stream the row reads (its baseline row has the same group).
    pub group: String,
    /// What is computed.
    pub workload: String,
    /// `baseline`, `native`, `keywindow`, ...
    pub strategy: String,
    /// Events processed.
    pub events: u64,
    /// Best run time in seconds.
    pub seconds: f64,
    /// Runs made.
    pub runs: u32,
    /// Events per second of the best run.
    pub events_per_sec: f64,
    /// `events_per_sec` / the group's baseline events per second.
    pub fraction_of_baseline: Option<f64>,
    /// Window states created (native: (key, window) states; keywindow: key windows).
    pub windows_created: Option<u64>,
    /// Window results emitted (keywindow: empty results included).
    pub results_emitted: Option<u64>,
    /// Late elements dropped.
    pub late: u64,
    /// Peak state memory in bytes (see the module docs).
    pub peak_state_bytes: Option<u64>,
    /// Distinct keys in the row's events.
    pub keys: u64,
    /// `peak_state_bytes / keys`.
    pub bytes_per_key: Option<f64>,
    /// A correctness check or comparison.
    pub note: String,
}

/// The table and what it was run with.
#[derive(Clone, Debug, Serialize)]
pub struct Table {
    /// The sizes.
    pub plan: Plan,
    /// Strategies compiled in.
    pub strategies: Vec<&'static str>,
    /// How memory was measured.
    pub memory_method: String,
    /// What each input stream is: `(group, description)`.
    pub groups: Vec<(String, String)>,
    /// The rows, baseline first in each group.
    pub rows: Vec<Row>,
    /// Total wall time of the table in seconds.
    pub seconds: f64,
}

/// What one measured run produced.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Outcome {
    /// Wall time of the run.
    pub(crate) seconds: f64,
    /// Window states created, if the run counts them.
    pub(crate) windows_created: Option<u64>,
    /// Window results emitted, if the run counts them.
    pub(crate) results: Option<u64>,
    /// Late elements dropped.
    pub(crate) late: u64,
    /// A figure of the output, for checks and to keep the work from being optimised away.
    pub(crate) checksum: f64,
}

/// Runs `f` once, or up to `max_runs` times while it is shorter than the plan's threshold;
/// returns the fastest outcome, the number of runs and the peak memory of the first run.
/// Runs of one row, at most, while runs are shorter than [`Plan::repeat_below_seconds`]; the
/// fastest is kept. The same for baselines and strategies, so that their ratio compares like
/// with like on a noisy machine.
pub(crate) const REPEATS: u32 = 5;

pub(crate) fn measure<P: MemoryProbe>(
    plan: &Plan,
    probe: &P,
    max_runs: u32,
    mut f: impl FnMut() -> Outcome,
) -> (Outcome, u32, Option<u64>) {
    let before = probe.current();
    probe.reset_peak();
    let mut best = f();
    let peak = probe.peak().saturating_sub(before) as u64;
    let mut runs = 1;
    while runs < max_runs && best.seconds < plan.repeat_below_seconds {
        let o = f();
        runs += 1;
        if o.seconds < best.seconds {
            best = o;
        }
    }
    let peak = (peak > 0 || probe.current() > 0).then_some(peak);
    (best, runs, peak)
}

/// The baseline: count events per key in an ahash map (no windows, no time).
///
/// # Examples
/// ```
/// assert_eq!(benches::table::hash_map_count(&[(0, 1, 0.0), (1, 2, 0.0), (2, 1, 0.0)]), 2);
/// ```
#[must_use]
pub fn hash_map_count(events: &[GeneratedEvent]) -> usize {
    let mut counts: HashMap<u32, u64, ahash::RandomState> = HashMap::default();
    for &(_, key, _) in events {
        *counts.entry(key).or_insert(0) += 1;
    }
    black_box(&counts).len()
}

fn distinct_keys(events: &[GeneratedEvent]) -> u64 {
    let mut seen: HashMap<u32, (), ahash::RandomState> = HashMap::default();
    for &(_, key, _) in events {
        seen.insert(key, ());
    }
    seen.len() as u64
}

/// Runs the plan: one baseline row per input stream, then one row per workload and strategy.
/// `progress` receives a line per finished row.
///
/// # Errors
/// A data file cannot be read.
pub fn run<P: MemoryProbe>(
    plan: &Plan,
    probe: &P,
    mut progress: impl FnMut(&Row),
) -> Result<Table, String> {
    let started = Instant::now();
    let mut rows = Vec::new();
    let mut legend = Vec::new();
    for group in groups(plan) {
        let selected: Vec<(Job, Vec<Strategy>)> = group
            .jobs
            .iter()
            .map(|j| {
                let s = j
                    .strategies()
                    .into_iter()
                    .filter(|s| plan.selects(j.name(), s.label()))
                    .collect::<Vec<_>>();
                (j.clone(), s)
            })
            .filter(|(_, s)| !s.is_empty())
            .collect();
        if selected.is_empty() {
            continue;
        }
        let events = (group.load)()?;
        legend.push((group.label.clone(), group.note.clone()));
        let mut keys_cache: HashMap<usize, u64> = HashMap::new();
        let mut keys_of = |n: usize| {
            *keys_cache
                .entry(n)
                .or_insert_with(|| distinct_keys(&events[..n]))
        };

        // The baseline over the whole stream.
        let (o, runs, peak) = measure(plan, probe, REPEATS, || {
            let t = Instant::now();
            let n = hash_map_count(&events);
            Outcome {
                seconds: t.elapsed().as_secs_f64(),
                checksum: n as f64,
                ..Outcome::default()
            }
        });
        let baseline_rate = events.len() as f64 / o.seconds.max(1e-9);
        let keys = keys_of(events.len());
        let baseline = row(
            &group.label,
            &group.label,
            "baseline",
            events.len(),
            (o, runs, peak),
            keys,
            baseline_rate,
            "ahash map count per key".to_owned(),
        );
        progress(&baseline);
        rows.push(baseline);

        for (job, strategies) in selected {
            for strategy in strategies {
                let n = job.events_for(plan, strategy, events.len());
                let input = &events[..n];
                let (result, note) = run_job(plan, probe, &job, strategy, input);
                let r = row(
                    &group.label,
                    job.name(),
                    strategy.label(),
                    n,
                    result,
                    keys_of(n),
                    baseline_rate,
                    note,
                );
                progress(&r);
                rows.push(r);
            }
        }
    }
    Ok(Table {
        plan: plan.clone(),
        strategies: Strategy::ALL.iter().map(|s| s.label()).collect(),
        memory_method: "peak live heap bytes during the run minus live bytes before it (counting \
                        global allocator, peak_alloc); bytes/key = that / distinct keys"
            .to_owned(),
        groups: legend,
        rows,
        seconds: started.elapsed().as_secs_f64(),
    })
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site that fills a flat record"
)]
fn row(
    group: &str,
    workload: &str,
    strategy: &str,
    events: usize,
    (o, runs, peak): (Outcome, u32, Option<u64>),
    keys: u64,
    baseline_rate: f64,
    note: String,
) -> Row {
    let rate = events as f64 / o.seconds.max(1e-9);
    Row {
        group: group.to_owned(),
        workload: workload.to_owned(),
        strategy: strategy.to_owned(),
        events: events as u64,
        seconds: o.seconds,
        runs,
        events_per_sec: rate,
        fraction_of_baseline: Some(rate / baseline_rate),
        windows_created: o.windows_created,
        results_emitted: o.results,
        late: o.late,
        peak_state_bytes: peak,
        keys,
        bytes_per_key: peak.filter(|_| keys > 1).map(|p| p as f64 / keys as f64),
        note,
    }
}
