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

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Instant;

use engine::core::NumericAggregate;
use engine::job::Strategy;
use serde::Serialize;

use crate::flights::{self, FlightsKey};
use crate::flink::{self, flink_events, flink_expected};
use crate::keyed::{KeyDistribution, KeyedStream};
use crate::nexmark::{self, BidKey, HotItems};
use crate::strategy::{run_workload, BenchSink, Emits, SlidingSpec, Tally};
use crate::GeneratedEvent;

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
struct Outcome {
    seconds: f64,
    windows_created: Option<u64>,
    results: Option<u64>,
    late: u64,
    checksum: f64,
}

/// Runs `f` once, or up to `max_runs` times while it is shorter than the plan's threshold;
/// returns the fastest outcome, the number of runs and the peak memory of the first run.
/// Runs of one row, at most, while runs are shorter than [`Plan::repeat_below_seconds`]; the
/// fastest is kept. The same for baselines and strategies, so that their ratio compares like
/// with like on a noisy machine.
const REPEATS: u32 = 5;

fn measure<P: MemoryProbe>(
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

/// Runs a sliding strategy over `events` into `sink`.
fn run_sliding<S: BenchSink>(
    strategy: Strategy,
    spec: SlidingSpec,
    events: &[GeneratedEvent],
    sink: &mut S,
) -> Outcome {
    let started = Instant::now();
    let c = run_workload(strategy, &spec, events, sink).expect("valid workload parameters");
    Outcome {
        seconds: started.elapsed().as_secs_f64(),
        windows_created: Some(c.windows_created),
        results: None,
        late: c.late,
        checksum: 0.0,
    }
}

/// What a group's workloads compute.
#[derive(Clone, Debug)]
enum Job {
    /// A keyed sliding aggregate on every strategy.
    Sliding {
        name: String,
        spec: SlidingSpec,
        /// Compare with Flink's expected output (windows, sum of sums).
        flink: bool,
    },
    /// Nexmark Q5: sliding count per auction on every strategy, then the max per window.
    HotItems { name: String, spec: SlidingSpec },
    /// Nexmark Q11 on the native operator.
    Sessions { name: String },
    /// Nexmark Q12 on the native operator.
    ProcessingTime { name: String },
}

impl Job {
    fn name(&self) -> &str {
        match self {
            Job::Sliding { name, .. }
            | Job::HotItems { name, .. }
            | Job::Sessions { name }
            | Job::ProcessingTime { name } => name,
        }
    }

    fn strategies(&self) -> Vec<Strategy> {
        match self {
            Job::Sliding { .. } | Job::HotItems { .. } => Strategy::ALL.to_vec(),
            Job::Sessions { .. } | Job::ProcessingTime { .. } => vec![Strategy::Native],
        }
    }

    /// Events a strategy may use out of `available`.
    fn events_for(&self, plan: &Plan, strategy: Strategy, available: usize) -> usize {
        match self {
            // Tumbling (size = slide) assigns one window per event: never capped.
            Job::Sliding { spec, .. } | Job::HotItems { spec, .. }
                if strategy == Strategy::Native && spec.size > spec.slide =>
            {
                let per_event = (spec.size / spec.slide).max(1) as u64;
                available.min((plan.native_assignments / per_event).max(1) as usize)
            }
            _ => available,
        }
    }
}

/// An input stream and the jobs on it.
struct Group {
    label: String,
    note: String,
    load: Box<dyn Fn() -> Result<Vec<GeneratedEvent>, String>>,
    jobs: Vec<Job>,
}

fn agg_name(a: NumericAggregate) -> &'static str {
    match a {
        NumericAggregate::Count => "count",
        NumericAggregate::Sum => "sum",
        NumericAggregate::Min => "min",
        NumericAggregate::Max => "max",
        NumericAggregate::Mean => "mean",
    }
}

fn key_label(k: u32) -> String {
    match k {
        k if k >= 1_000_000 && k % 1_000_000 == 0 => format!("{}M", k / 1_000_000),
        k if k >= 1_000 && k % 1_000 == 0 => format!("{}k", k / 1_000),
        k => k.to_string(),
    }
}

fn groups(plan: &Plan) -> Vec<Group> {
    let mut groups = Vec::new();
    for (d, distribution) in [
        KeyDistribution::Uniform,
        KeyDistribution::Zipf { exponent: 1.0 },
    ]
    .into_iter()
    .enumerate()
    {
        for &keys in &plan.key_counts {
            let stream = KeyedStream {
                keys,
                distribution,
                events_per_ms: 1,
                seed: 0x5EED_0000 + u64::from(keys) * 2 + d as u64,
            };
            let label = format!("keyed {} {}", key_label(keys), distribution.label());
            let mut jobs = Vec::new();
            for aggregate in [NumericAggregate::Sum, NumericAggregate::Max] {
                for &r in &plan.ratios {
                    jobs.push(Job::Sliding {
                        name: format!(
                            "sliding {} {} {} r={r}",
                            agg_name(aggregate),
                            key_label(keys),
                            distribution.label()
                        ),
                        spec: SlidingSpec {
                            size: KEYED_WINDOW_MS,
                            slide: KEYED_WINDOW_MS / r,
                            aggregate,
                            out_of_orderness: 0,
                        },
                        flink: false,
                    });
                }
            }
            let n = plan.keyed_events;
            groups.push(Group {
                label,
                note: format!(
                    "{keys} keys, {}, 1 event per ms in time order, values 0..1000, seed {:#x}; \
                     windows 60 s sliding every 60 s / r; watermark = max time - 1",
                    distribution.label(),
                    stream.seed
                ),
                load: Box::new(move || Ok(stream.generate(n))),
                jobs,
            });
        }
    }
    for key in [FlightsKey::TailNumber, FlightsKey::Destination] {
        let limit = plan.flights_events;
        groups.push(Group {
            label: format!("flights {} x{}", key.label(), flights::TIME_COMPRESSION),
            note: format!(
                "NYC flights 2013 keyed by {}, arrival order, event time compressed {}x; window \
                 60 s / 1 s = real 1 h / 1 min; watermark delay 360 s = real 6 h",
                match key {
                    FlightsKey::TailNumber => "tail number (4,037 sparse keys)",
                    FlightsKey::Destination => "destination (104 keys, some hot)",
                },
                flights::TIME_COMPRESSION
            ),
            load: Box::new(move || flights::load_flights(key, limit)),
            jobs: vec![Job::Sliding {
                name: format!("flights {} sliding mean r=60", key.label()),
                spec: SlidingSpec {
                    size: flights::WINDOW_SIZE_MS,
                    slide: flights::WINDOW_SLIDE_MS,
                    aggregate: NumericAggregate::Mean,
                    out_of_orderness: flights::WATERMARK_DELAY_MS,
                },
                flink: false,
            }],
        });
    }
    let (ns, nt) = (plan.flink_sliding_events, plan.flink_tumbling_events);
    groups.push(Group {
        label: "flink baseline sliding".to_owned(),
        note: "docs/flink-baseline.md: key g % 10000, time g / 100 ms, value g % 100; \
               Flink 2.3 p=1: 7.3 k events/s over 1 M events"
            .to_owned(),
        load: Box::new(move || Ok(flink_events(ns))),
        jobs: vec![Job::Sliding {
            name: "flink sliding sum 60s/500ms".to_owned(),
            spec: SlidingSpec {
                size: flink::FLINK_SIZE_MS,
                slide: flink::FLINK_SLIDE_MS,
                aggregate: NumericAggregate::Sum,
                out_of_orderness: 0,
            },
            flink: true,
        }],
    });
    groups.push(Group {
        label: "flink baseline tumbling".to_owned(),
        note: "the same events; Flink 2.3 p=1: 1.62 M events/s over 10 M events".to_owned(),
        load: Box::new(move || Ok(flink_events(nt))),
        jobs: vec![Job::Sliding {
            name: "flink tumbling sum 60s".to_owned(),
            spec: SlidingSpec {
                size: flink::FLINK_SIZE_MS,
                slide: flink::FLINK_SIZE_MS,
                aggregate: NumericAggregate::Sum,
                out_of_orderness: 0,
            },
            flink: true,
        }],
    });
    let nx = plan.nexmark_events;
    let nexmark_spec = |size, slide, aggregate| SlidingSpec {
        size,
        slide,
        aggregate,
        out_of_orderness: nexmark::WATERMARK_DELAY_MS,
    };
    groups.push(Group {
        label: "nexmark bids by auction".to_owned(),
        note: format!(
            "bids of {nx} Nexmark events (92 % bids, 10,000 events per s of event time, \
             seed 42) keyed by auction; watermark delay 4 s"
        ),
        load: Box::new(move || Ok(nexmark::bids(&nexmark::generate(nx, 42), BidKey::Auction))),
        jobs: vec![Job::HotItems {
            name: "nexmark q5 hot items 10s/2s".to_owned(),
            spec: nexmark_spec(
                nexmark::Q5_SIZE_MS,
                nexmark::Q5_SLIDE_MS,
                NumericAggregate::Count,
            ),
        }],
    });
    groups.push(Group {
        label: "nexmark bids".to_owned(),
        note: "the same bids, one key (a non-keyed window)".to_owned(),
        load: Box::new(move || Ok(nexmark::bids(&nexmark::generate(nx, 42), BidKey::None))),
        jobs: vec![Job::Sliding {
            name: "nexmark q7 highest bid 10s".to_owned(),
            spec: nexmark_spec(
                nexmark::WINDOW_MS,
                nexmark::WINDOW_MS,
                NumericAggregate::Max,
            ),
            flink: false,
        }],
    });
    groups.push(Group {
        label: "nexmark bids by bidder".to_owned(),
        note: "the same bids keyed by bidder; q12's processing time is a simulated clock, 100 \
               arrivals per ms"
            .to_owned(),
        load: Box::new(move || Ok(nexmark::bids(&nexmark::generate(nx, 42), BidKey::Bidder))),
        jobs: vec![
            Job::Sessions {
                name: "nexmark q11 sessions gap 10s".to_owned(),
            },
            Job::ProcessingTime {
                name: "nexmark q12 proc-time 10s".to_owned(),
            },
        ],
    });
    groups
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

fn run_job<P: MemoryProbe>(
    plan: &Plan,
    probe: &P,
    job: &Job,
    strategy: Strategy,
    input: &[GeneratedEvent],
) -> ((Outcome, u32, Option<u64>), String) {
    match job {
        Job::Sliding { spec, flink, .. } => {
            let result = measure(plan, probe, REPEATS, || {
                let mut tally = Tally::default();
                let mut o = run_sliding(strategy, *spec, input, &mut tally);
                o.results = Some(tally.results);
                o.checksum = tally.checksum;
                o
            });
            let note = if *flink {
                flink_note(spec, strategy, input.len(), &result.0)
            } else {
                String::new()
            };
            (result, note)
        }
        Job::HotItems { spec, .. } => {
            let mut reported = 0;
            let result = measure(plan, probe, REPEATS, || {
                let mut hot = HotItems::new(Emits::of(strategy));
                let mut o = run_sliding(strategy, *spec, input, &mut hot);
                hot.finish();
                o.results = Some(hot.window_results);
                o.checksum = hot.checksum;
                reported = hot.reported;
                o
            });
            let what = match Emits::of(strategy) {
                Emits::EveryWindow => "windows",
                Emits::Changes => "changes of the max",
            };
            (result, format!("hot items reported for {reported} {what}"))
        }
        Job::Sessions { .. } | Job::ProcessingTime { .. } => {
            let sessions = matches!(job, Job::Sessions { .. });
            let result = measure(plan, probe, REPEATS, || {
                let t = Instant::now();
                let q = if sessions {
                    nexmark::q11_sessions(input)
                } else {
                    nexmark::q12_processing_time(input)
                };
                Outcome {
                    seconds: t.elapsed().as_secs_f64(),
                    windows_created: Some(q.windows_created),
                    results: Some(q.tally.results),
                    late: q.late,
                    checksum: q.tally.checksum,
                }
            });
            let note = if sessions {
                "event-time sessions, count per bidder"
            } else {
                "simulated clock: 100 arrivals/ms"
            };
            (result, note.to_owned())
        }
    }
}

fn flink_note(spec: &SlidingSpec, strategy: Strategy, n: usize, o: &Outcome) -> String {
    let flink_rate = if spec.size == spec.slide {
        flink::FLINK_TUMBLING_EVENTS_PER_SEC
    } else {
        flink::FLINK_SLIDING_EVENTS_PER_SEC
    };
    let speed = n as f64 / o.seconds.max(1e-9) / flink_rate;
    let check = if Emits::of(strategy) == Emits::EveryWindow {
        let (windows, sum) = flink_expected(n as u64, spec.size, spec.slide);
        if o.results == Some(windows) && o.checksum == sum {
            format!(
                "output checked: {} windows, sum {} (Flink's output, closed form)",
                thousands(windows),
                thousands(sum as u64)
            )
        } else {
            format!(
                "MISMATCH: {:?} windows, sum {} (expected {windows}, {sum})",
                o.results, o.checksum
            )
        }
    } else {
        "emits changes only".to_owned()
    };
    format!("{speed:.1}x Flink p=1 ({}/s); {check}", si(flink_rate))
}

/// `1.23 M`-style figures.
#[must_use]
pub fn si(x: f64) -> String {
    let (v, unit) = if x >= 1e9 {
        (x / 1e9, " G")
    } else if x >= 1e6 {
        (x / 1e6, " M")
    } else if x >= 1e3 {
        (x / 1e3, " k")
    } else {
        (x, "")
    };
    if v >= 100.0 || unit.is_empty() {
        format!("{v:.0}{unit}")
    } else {
        format!("{v:.2}{unit}")
    }
}

/// A fraction as a percentage with three significant digits: `4.81 %`, `0.0362 %`.
#[must_use]
pub fn percent(f: f64) -> String {
    let p = f * 100.0;
    if p >= 100.0 || p <= 0.0 {
        format!("{p:.0} %")
    } else {
        let decimals = (2 - p.log10().floor() as i32).max(0) as usize;
        format!("{p:.decimals$} %")
    }
}

/// `1,234,567`.
#[must_use]
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `12.3 MiB`-style sizes.
#[must_use]
pub fn bytes(n: u64) -> String {
    let x = n as f64;
    if x >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2} GiB", x / (1024.0 * 1024.0 * 1024.0))
    } else if x >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", x / (1024.0 * 1024.0))
    } else if x >= 1024.0 {
        format!("{:.1} KiB", x / 1024.0)
    } else {
        format!("{n} B")
    }
}

impl Table {
    /// The table as Markdown, with a header saying how it was measured and, after it, the
    /// issue-6 target ratios that the rows allow to compute.
    #[must_use]
    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "mode {:?}; strategies {}; fraction = events/s / the group's baseline events/s",
            self.plan.mode,
            self.strategies.join(", ")
        );
        let _ = writeln!(s, "peak state memory: {}", self.memory_method);
        let _ = writeln!(
            s,
            "keyed streams: 1 event per ms, key 0 hottest under Zipf (s = 1); native sliding rows \
             capped at {} window assignments (events x size/slide): they run a prefix of the \
             stream (see `events`), so their windows, results and late counts are of that prefix \
             and compare with the other rows only per event\n",
            thousands(self.plan.native_assignments)
        );
        s.push_str(
            "| workload | strategy | events | events/s | of baseline | windows created | results \
             emitted | peak state memory | bytes/key | note |\n|---|---|---:|---:|---:|---:|---:|\
             ---:|---:|---|\n",
        );
        for r in &self.rows {
            let opt = |v: Option<u64>| v.map_or("-".to_owned(), thousands);
            let mut note = r.note.clone();
            if r.late > 0 {
                note = format!("{} late; {note}", thousands(r.late));
            }
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.workload,
                r.strategy,
                thousands(r.events),
                si(r.events_per_sec),
                r.fraction_of_baseline.map_or("-".to_owned(), percent),
                opt(r.windows_created),
                opt(r.results_emitted),
                r.peak_state_bytes.map_or("-".to_owned(), bytes),
                r.bytes_per_key
                    .map_or("-".to_owned(), |b| format!("{b:.0}")),
                note.trim_end_matches("; ")
            );
        }
        s.push_str("\ninput streams (each group's first row is its baseline):\n");
        for (group, note) in &self.groups {
            let _ = writeln!(s, "- {group}: {note}");
        }
        let targets = self.targets();
        if !targets.is_empty() {
            s.push_str("\nissue 6, item 4 (keyed sliding sum, 100k Zipf keys):\n");
            for t in targets {
                let _ = writeln!(s, "- {t}");
            }
        }
        let _ = writeln!(s, "\ntable wall time {:.1} s", self.seconds);
        s
    }

    /// The ratios of issue 6, item 4, from the rows of `sliding sum 100k zipf`.
    #[must_use]
    pub fn targets(&self) -> Vec<String> {
        let rate = |r: i64, strategy: &str| {
            self.rows
                .iter()
                .find(|x| {
                    x.workload == format!("sliding sum 100k zipf r={r}") && x.strategy == strategy
                })
                .map(|x| (x.events_per_sec, x))
        };
        let best = |r: i64| {
            Strategy::ALL
                .iter()
                .filter_map(|s| rate(r, s.label()).map(|(v, x)| (v, s.label(), x)))
                .max_by(|a, b| a.0.total_cmp(&b.0))
        };
        let mut out = Vec::new();
        if let (Some(b1200), Some(b2)) = (best(1200), best(2)) {
            let at2 = rate(2, b1200.1).map_or(b2.0, |x| x.0);
            let ratio = b1200.0 / at2;
            out.push(format!(
                "best at r=1200 ({}) / its own rate at r=2: {ratio:.3} (target >= 0.5: {})",
                b1200.1,
                if ratio >= 0.5 { "met" } else { "not met" }
            ));
        }
        if let (Some(b), Some((native, _))) = (best(120), rate(120, "native")) {
            let ratio = b.0 / native;
            out.push(format!(
                "best at r=120 ({}) / native: {ratio:.1}x (target >= 30x: {})",
                b.1,
                if ratio >= 30.0 { "met" } else { "not met" }
            ));
        }
        for r in [2, 120, 1200] {
            if let Some(b) = best(r) {
                let f = b.2.fraction_of_baseline.unwrap_or(0.0);
                out.push(format!(
                    "best at r={r} ({}) / hash-map baseline: {:.1} % (target >= 30 %: {})",
                    b.1,
                    f * 100.0,
                    if f >= 0.3 { "met" } else { "not met" }
                ));
            }
        }
        out
    }
}
