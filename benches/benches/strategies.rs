//! The sliding-window strategies (`native`, `keywindow`, `sliced`, `sliced:changes`) on the
//! issue-6 target workload: keyed sliding sum over 100k Zipf keys, window 60 s, size/slide 2,
//! 120 and 1200. Criterion keeps history, so a change to a strategy shows up as a regression or
//! improvement against the last run.
//!
//! Throughput is in events per second. Native inputs are capped at `CAP` window assignments so
//! an iteration stays short (flat sampling: 10 iterations at least); `BENCH_QUICK=1` (from `cargo xtask bench --quick`) shrinks both.

use std::hint::black_box;

use benches::keyed::{KeyDistribution, KeyedStream};
use benches::strategy::{run_workload, SlidingSpec, Tally, PER_ELEMENT};
use benches::GeneratedEvent;
use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use engine::core::NumericAggregate;
use engine::job::Strategy;

fn run(strategy: Strategy, spec: SlidingSpec, events: &[GeneratedEvent]) -> u64 {
    let mut out = Tally::default();
    run_workload(strategy, &spec, events, &mut out).expect("valid spec");
    out.results
}

fn strategies(c: &mut Criterion) {
    let quick = std::env::var_os("BENCH_QUICK").is_some();
    let (n, cap) = if quick {
        (10_000, 60_000)
    } else {
        (200_000, 3_000_000)
    };
    let events = KeyedStream {
        keys: 100_000,
        distribution: KeyDistribution::Zipf { exponent: 1.0 },
        events_per_ms: 1,
        seed: 0x5EED_0000 + 200_001,
    }
    .generate(n);
    let mut group = c.benchmark_group("strategies");
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    for ratio in [2_i64, 120, 1200] {
        let spec = SlidingSpec {
            size: 60_000,
            slide: 60_000 / ratio,
            aggregate: NumericAggregate::Sum,
            out_of_orderness: 0,
            watermark_every: PER_ELEMENT,
            allowed_lateness: 0,
        };
        for kind in Strategy::ALL {
            let used = if kind == Strategy::Native {
                n.min(cap / ratio as usize)
            } else {
                n
            };
            let input = &events[..used];
            group.throughput(Throughput::Elements(used as u64));
            group.bench_function(
                BenchmarkId::new(kind.label(), format!("sum 100k zipf r={ratio}")),
                |b| b.iter(|| run(kind, spec, black_box(input))),
            );
        }
    }
    group.finish();
}

criterion_group!(benches, strategies);
criterion_main!(benches);
