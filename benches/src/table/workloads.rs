//! What each row of the table runs: the input streams (groups) and their jobs, and one
//! measured run of a job on a strategy. Split from `table.rs`, which plans the table and
//! assembles its rows.

use std::time::Instant;

use engine::core::NumericAggregate;
use engine::job::Strategy;

use super::{measure, si, thousands, MemoryProbe, Outcome, Plan, KEYED_WINDOW_MS, REPEATS};
use crate::flights::{self, FlightsKey};
use crate::flink::{self, flink_events, flink_expected};
use crate::keyed::{KeyDistribution, KeyedStream};
use crate::nexmark::{self, BidKey, HotItems};
use crate::strategy::{run_workload, BenchSink, Emits, SlidingSpec, Tally, PER_BATCH, PER_ELEMENT};
use crate::GeneratedEvent;

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
pub(crate) enum Job {
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
    /// A keyed tumbling sum with allowed lateness, on the native operator (issue 12, item 6:
    /// lateness should not make it much slower).
    Lateness { name: String, spec: SlidingSpec },
}

impl Job {
    pub(crate) fn name(&self) -> &str {
        match self {
            Job::Sliding { name, .. }
            | Job::HotItems { name, .. }
            | Job::Sessions { name }
            | Job::ProcessingTime { name }
            | Job::Lateness { name, .. } => name,
        }
    }

    pub(crate) fn strategies(&self) -> Vec<Strategy> {
        match self {
            Job::Sliding { .. } | Job::HotItems { .. } => Strategy::ALL.to_vec(),
            Job::Sessions { .. } | Job::ProcessingTime { .. } | Job::Lateness { .. } => {
                vec![Strategy::Native]
            }
        }
    }

    /// Events a strategy may use out of `available`.
    pub(crate) fn events_for(&self, plan: &Plan, strategy: Strategy, available: usize) -> usize {
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
pub(crate) struct Group {
    /// The group's name, also its baseline row's workload.
    pub(crate) label: String,
    /// What the stream is, for the legend.
    pub(crate) note: String,
    /// Generates or reads the events.
    pub(crate) load: Box<dyn Fn() -> Result<Vec<GeneratedEvent>, String>>,
    /// What is computed on the stream.
    pub(crate) jobs: Vec<Job>,
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

/// Every input stream of the table with its jobs, in table order.
pub(crate) fn groups(plan: &Plan) -> Vec<Group> {
    let mut groups = Vec::new();
    keyed_groups(plan, &mut groups);
    disorder_group(plan, &mut groups);
    flights_groups(plan, &mut groups);
    flink_groups(plan, &mut groups);
    nexmark_groups(plan, &mut groups);
    lateness_group(plan, &mut groups);
    groups
}

/// Tumbling 10 ms windows over 100,000 uniform keys, 100 events per ms in time order, with
/// allowed lateness 0 and 1000 ms (the state held is 100 times larger with lateness).
fn lateness_group(plan: &Plan, groups: &mut Vec<Group>) {
    let stream = KeyedStream {
        keys: 100_000,
        distribution: KeyDistribution::Uniform,
        events_per_ms: 100,
        seed: 0x1A7E,
    };
    let n = plan.keyed_events;
    let jobs = [0, 1_000]
        .into_iter()
        .map(|lateness| Job::Lateness {
            name: format!("tumbling sum 10ms lateness {lateness}ms"),
            spec: SlidingSpec {
                size: 10,
                slide: 10,
                aggregate: NumericAggregate::Sum,
                out_of_orderness: 0,
                watermark_every: PER_ELEMENT,
                allowed_lateness: lateness,
            },
        })
        .collect();
    groups.push(Group {
        label: "keyed 100k uniform x100/ms".to_owned(),
        note: format!(
            "100000 uniform keys, 100 events per ms in time order, seed {:#x}; tumbling 10 ms \
             windows, allowed lateness 0 or 1000 ms, watermark = max time - 1 after each element",
            stream.seed
        ),
        load: Box::new(move || Ok(stream.generate(n))),
        jobs,
    });
}

/// The keyed sliding streams: uniform and Zipf keys, every key count of the plan, with a sum
/// and a max job per `size / slide` ratio.
fn keyed_groups(plan: &Plan, groups: &mut Vec<Group>) {
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
            // The sum with a watermark per element and per input batch (`wm/batch`), the max
            // per element.
            for (aggregate, every) in [
                (NumericAggregate::Sum, PER_ELEMENT),
                (NumericAggregate::Sum, PER_BATCH),
                (NumericAggregate::Max, PER_ELEMENT),
            ] {
                for &r in &plan.ratios {
                    jobs.push(Job::Sliding {
                        name: format!(
                            "sliding {} {} {} r={r}{}",
                            agg_name(aggregate),
                            key_label(keys),
                            distribution.label(),
                            if every == PER_BATCH { " wm/batch" } else { "" }
                        ),
                        spec: SlidingSpec {
                            size: KEYED_WINDOW_MS,
                            slide: KEYED_WINDOW_MS / r,
                            aggregate,
                            out_of_orderness: 0,
                            watermark_every: every,
                            allowed_lateness: 0,
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
                     windows 60 s sliding every 60 s / r; watermark = max time - 1, after every \
                     element, or after every batch of 1024 (wm/batch)",
                    distribution.label(),
                    stream.seed
                ),
                load: Box::new(move || Ok(stream.generate(n))),
                jobs,
            });
        }
    }
}

/// Elements moved back in time: every tenth element (seeded) by 1 to 2000 ms.
pub(crate) const DISORDER_MS: i64 = 2_000;

/// The keyed sliding sum over 100k Zipf keys with 10 % of elements out of order (issue #15,
/// item 4): within the watermark delay (delay 2 s: never behind the watermark), and behind the
/// watermark with allowed lateness (delay 0, lateness 5 s: each such element joins the windows
/// that have not fired and fires again those that have), for every strategy.
fn disorder_group(plan: &Plan, groups: &mut Vec<Group>) {
    let stream = KeyedStream {
        keys: 100_000,
        distribution: KeyDistribution::Zipf { exponent: 1.0 },
        events_per_ms: 1,
        seed: 0x15D1_5040,
    };
    let mut jobs = Vec::new();
    for r in [2, 60] {
        for (what, delay, lateness) in [("in delay", DISORDER_MS, 0), ("late 5s", 0, 5_000)] {
            jobs.push(Job::Sliding {
                name: format!("sliding sum 100k zipf r={r} 10% ooo {what}"),
                spec: SlidingSpec {
                    size: KEYED_WINDOW_MS,
                    slide: KEYED_WINDOW_MS / r,
                    aggregate: NumericAggregate::Sum,
                    out_of_orderness: delay,
                    watermark_every: PER_ELEMENT,
                    allowed_lateness: lateness,
                },
                flink: false,
            });
        }
    }
    let n = plan.keyed_events;
    groups.push(Group {
        label: "keyed 100k zipf 10% out of order".to_owned(),
        note: format!(
            "100000 Zipf keys, 1 event per ms, values 0..1000, seed {:#x}, then every tenth \
             element (seeded) moved back by 1..{DISORDER_MS} ms; windows 60 s sliding every \
             60 s / r; watermark = max time - delay - 1 after every element: delay {DISORDER_MS} \
             ms (in delay: nothing behind the watermark), or delay 0 with allowed lateness 5 s \
             (late 5s: the moved elements arrive behind the watermark, within the lateness)",
            stream.seed
        ),
        load: Box::new(move || Ok(displace(stream.generate(n), stream.seed))),
        jobs,
    });
}

/// Moves every tenth element (seeded) back by 1 to [`DISORDER_MS`] ms, in place.
fn displace(mut events: Vec<GeneratedEvent>, seed: u64) -> Vec<GeneratedEvent> {
    let mut rng = crate::rng::SplitMix64::new(seed ^ 0xD150);
    for e in &mut events {
        if rng.below(10) == 0 {
            e.0 -= 1 + rng.below(DISORDER_MS as u64) as i64;
        }
    }
    events
}

/// The flights replays, keyed by tail number and by destination.
fn flights_groups(plan: &Plan, groups: &mut Vec<Group>) {
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
                    watermark_every: PER_ELEMENT,
                    allowed_lateness: 0,
                },
                flink: false,
            }],
        });
    }
}

/// The workloads real Flink was measured on (`docs/flink-baseline.md`): sliding and tumbling.
fn flink_groups(plan: &Plan, groups: &mut Vec<Group>) {
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
                watermark_every: PER_ELEMENT,
                allowed_lateness: 0,
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
                watermark_every: PER_ELEMENT,
                allowed_lateness: 0,
            },
            flink: true,
        }],
    });
}

/// The Nexmark bid streams: by auction (Q5), unkeyed (Q7), by bidder (Q11, Q12).
fn nexmark_groups(plan: &Plan, groups: &mut Vec<Group>) {
    let nx = plan.nexmark_events;
    let nexmark_spec = |size, slide, aggregate| SlidingSpec {
        size,
        slide,
        aggregate,
        out_of_orderness: nexmark::WATERMARK_DELAY_MS,
        watermark_every: PER_ELEMENT,
        allowed_lateness: 0,
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
}

/// Runs one job on one strategy over `input`, measured; returns the measurement and the row's
/// note.
pub(crate) fn run_job<P: MemoryProbe>(
    plan: &Plan,
    probe: &P,
    job: &Job,
    strategy: Strategy,
    input: &[GeneratedEvent],
) -> ((Outcome, u32, Option<u64>), String) {
    match job {
        Job::Lateness { spec, .. } => {
            let result = measure(plan, probe, REPEATS, || {
                let mut tally = Tally::default();
                let mut o = run_sliding(strategy, *spec, input, &mut tally);
                o.results = Some(tally.results);
                o.checksum = tally.checksum;
                o
            });
            (
                result,
                format!("allowed lateness {} ms", spec.allowed_lateness),
            )
        }
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
