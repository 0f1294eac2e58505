//! The window operator on keyed sliding and tumbling windows over many keys, in event time.
//!
//! Throughput is reported in elements (events) per second. With `BENCH_QUICK=1` (set by
//! `cargo xtask bench --quick`) the input is 100 times shorter. Flat sampling: the sliding
//! iterations are long, and criterion's default linear sampling would run at least 55 of them.

use std::hint::black_box;

use benches::uniform_events;
use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use engine::assigners::{
    DefaultTrigger, SlidingWindows, TimeDomain, TumblingWindows, WindowAssigner,
};
use engine::core::NumericAggregate;
use engine::operator::{Emitted, Incremental, OperatorConfig, WindowComputation, WindowOperator};
use engine::triggers::TimeTrigger;
use engine::watermark::BoundedOutOfOrderness;

const KEYS: u32 = 10_000;

fn events() -> usize {
    if std::env::var_os("BENCH_QUICK").is_some() {
        2_000
    } else {
        200_000
    }
}

fn run<A>(assigner: A, events: &[(i64, u32, f64)]) -> usize
where
    A: WindowAssigner<f64> + DefaultTrigger<Trigger = TimeTrigger>,
{
    let trigger = assigner.default_trigger();
    let mut op = WindowOperator::new(
        assigner,
        trigger,
        Incremental(NumericAggregate::Sum),
        OperatorConfig::default(),
    )
    .expect("valid operator");
    let mut out: Vec<Emitted<u32, A::Window, f64, Option<f64>>> = Vec::with_capacity(1 << 16);
    let mut wm = BoundedOutOfOrderness::new(100);
    let mut emitted = 0;
    for &(ts, key, value) in events {
        op.process_element(key, value, ts, &mut out)
            .expect("valid element");
        wm.on_event(ts);
        op.process_watermark(wm.current(), &mut out);
        emitted += out.len();
        out.clear();
    }
    op.process_watermark(i64::MAX, &mut out);
    emitted + out.len()
}

fn operator(c: &mut Criterion) {
    // 1 ms per event over 10k keys: a sparse key has ~one element per 10 s.
    let n = events();
    let events = uniform_events(n, KEYS, 1, 50, 7);
    let mut group = c.benchmark_group("operator");
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.bench_function(BenchmarkId::new("tumbling", "10s"), |b| {
        b.iter(|| {
            run(
                TumblingWindows::new(10_000, 0, TimeDomain::EventTime).unwrap(),
                black_box(&events),
            )
        })
    });
    for ratio in [2_i64, 10, 60] {
        group.bench_function(
            BenchmarkId::new("sliding_sum", format!("size/slide={ratio}")),
            |b| {
                b.iter(|| {
                    run(
                        SlidingWindows::new(10_000, 10_000 / ratio, 0, TimeDomain::EventTime)
                            .unwrap(),
                        black_box(&events),
                    )
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, operator);
criterion_main!(benches);
