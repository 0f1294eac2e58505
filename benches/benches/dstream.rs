//! Spark's `reduceByKeyAndWindow` in `dstream-compat`: the plain form (every window recomputed
//! from its batches) against the incremental form (previous window + entering - leaving
//! batches), for a window of 60 batches sliding by one batch, the setting where Spark's docs
//! recommend the inverse function. Throughput is in input records per second.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use engine::dstream::workload::{run_sum_by_key_and_window, synthetic_batches, Form};

fn dstream(c: &mut Criterion) {
    let quick = std::env::var_os("BENCH_QUICK").is_some();
    let (batches, per_batch) = if quick { (120, 200) } else { (300, 1_000) };
    let input = synthetic_batches(42, batches, per_batch, 1_000);
    let mut group = c.benchmark_group("dstream_rbkw_window60");
    group.throughput(Throughput::Elements((batches * per_batch) as u64));
    group.sample_size(10);
    for (name, form) in [("plain", Form::Plain), ("incremental", Form::Incremental)] {
        group.bench_function(
            BenchmarkId::new(name, format!("{batches}x{per_batch}")),
            |b| {
                b.iter(|| {
                    run_sum_by_key_and_window(black_box(&input), 1_000, 60, 1, form)
                        .expect("valid job")
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, dstream);
criterion_main!(benches);
