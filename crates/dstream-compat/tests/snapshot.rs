//! Snapshots of a running `StreamingContext` (`snapshot`, `restore`): a seeded random graph
//! (windows, plain and incremental `reduceByKeyAndWindow` with and without a filter, unions,
//! filters, maps, the counting and grouping windows, slices between batches) runs on random
//! keyed batches, is snapshotted after random batches and rebuilt from the snapshot; every
//! output stream's batches, every slice and every batch result must equal those of the run
//! without a restart, order included. The errors are in `snapshot_errors.rs`.

use dstream_compat::{
    BatchCollector, ContextState, DStream, Error, InverseReduce, Partitions, QueueInput, Retention,
    StreamingContext,
};

type Rec = (u32, i64);
type Batches = Vec<(i64, Vec<Rec>)>;

/// xorshift64*, seeded.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// One derived stream of the graph, built from earlier streams (by index).
#[derive(Debug, Clone)]
enum Op {
    Filter {
        from: usize,
        modulus: i64,
    },
    MapKeys {
        from: usize,
        modulus: u32,
    },
    Union {
        a: usize,
        b: usize,
    },
    Window {
        from: usize,
        w: i64,
        s: i64,
    },
    Reduce {
        from: usize,
        w: i64,
        s: i64,
    },
    ReduceInv {
        from: usize,
        w: i64,
        s: i64,
        filter: bool,
    },
    CountByValue {
        from: usize,
        w: i64,
        s: i64,
    },
    GroupByKey {
        from: usize,
        w: i64,
        s: i64,
    },
    CountByWindow {
        from: usize,
        w: i64,
        s: i64,
    },
    ReduceByWindowInv {
        from: usize,
        w: i64,
        s: i64,
    },
    ReduceByWindow {
        from: usize,
        w: i64,
        s: i64,
    },
}

/// A slice of an output stream after a batch: the batches from `now - back - len` to
/// `now - back` batch intervals, the lower bound maybe unaligned.
#[derive(Debug, Clone)]
struct Slice {
    after: usize,
    output: usize,
    back: i64,
    len: i64,
    unaligned: bool,
}

#[derive(Debug, Clone)]
struct Spec {
    interval: i64,
    clock: i64,
    inputs: Vec<(Retention, Vec<Vec<Rec>>)>,
    ops: Vec<Op>,
    /// Stream indices with an output operation, in registration order.
    outputs: Vec<usize>,
    remember: Option<i64>,
    checkpoint: Option<(usize, i64)>,
    /// All batches pushed when the graph is built, or each just before its batch runs.
    upfront: bool,
    batches: usize,
    slices: Vec<Slice>,
}

/// A window and slide over a parent of slide `p`, keeping slides bounded.
fn durations(rng: &mut Rng, p: i64, interval: i64) -> (i64, i64) {
    let w = p * rng.below(5) as i64;
    let s = if p >= 4 * interval {
        p
    } else {
        p * (1 + rng.below(3) as i64)
    };
    (w, s)
}

fn random_op(rng: &mut Rng, slides: &[i64], interval: i64) -> (Op, i64) {
    let from = rng.index(slides.len());
    let p = slides[from];
    let (w, s) = durations(rng, p, interval);
    let op = match rng.index(11) {
        0 => Op::Filter {
            from,
            modulus: 2 + rng.below(3) as i64,
        },
        1 => Op::MapKeys {
            from,
            modulus: 1 + rng.below(3) as u32,
        },
        2 => {
            let same: Vec<usize> = (0..slides.len()).filter(|&i| slides[i] == p).collect();
            Op::Union {
                a: from,
                b: same[rng.index(same.len())],
            }
        }
        3 => Op::Window { from, w, s },
        4 => Op::Reduce { from, w, s },
        5 | 6 => Op::ReduceInv {
            from,
            w,
            s,
            filter: rng.chance(50),
        },
        7 => Op::CountByValue { from, w, s },
        8 => Op::GroupByKey { from, w, s },
        9 if rng.chance(50) => Op::CountByWindow { from, w, s },
        9 => Op::ReduceByWindowInv { from, w, s },
        _ => Op::ReduceByWindow { from, w, s },
    };
    let slide = match op {
        Op::Filter { .. } | Op::MapKeys { .. } | Op::Union { .. } => p,
        _ => s,
    };
    (op, slide)
}

fn random_input(rng: &mut Rng, batches: usize, keys: u32, negative: bool) -> Vec<Vec<Rec>> {
    (0..batches)
        .map(|_| {
            (0..rng.index(5))
                .map(|_| {
                    let v = if negative {
                        rng.below(15) as i64 - 5
                    } else {
                        1 + rng.below(9) as i64
                    };
                    (rng.below(u64::from(keys)) as u32, v)
                })
                .collect()
        })
        .collect()
}

fn random_spec(seed: u64) -> Spec {
    let mut rng = Rng::new(seed);
    let interval = [1000, 500, 2000][rng.index(3)];
    let batches = 20 + rng.index(20);
    let negative = rng.chance(30);
    let keys = 1 + rng.below(6) as u32;
    let n_inputs = 1 + rng.index(2);
    let inputs: Vec<_> = (0..n_inputs)
        .map(|_| {
            let retention = if rng.chance(50) {
                Retention::KeepAll
            } else {
                Retention::UntilForgotten
            };
            (retention, random_input(&mut rng, batches, keys, negative))
        })
        .collect();
    let mut slides: Vec<i64> = vec![interval; n_inputs];
    let mut ops = Vec::new();
    for _ in 0..1 + rng.index(6) {
        let (op, slide) = random_op(&mut rng, &slides, interval);
        slides.push(slide);
        ops.push(op);
    }
    let total = slides.len();
    let mut outputs = vec![total - 1];
    outputs.extend((n_inputs..total - 1).filter(|_| rng.chance(50)));
    if rng.chance(30) {
        outputs.push(rng.index(n_inputs));
    }
    let remember = rng.chance(20).then(|| interval * (1 + rng.below(8) as i64));
    let checkpoint = rng.chance(20).then(|| {
        let i = rng.index(total);
        (i, slides[i] * (1 + rng.below(3) as i64))
    });
    let slices = (0..rng.index(6))
        .map(|_| Slice {
            after: rng.index(batches),
            output: rng.index(outputs.len()),
            back: rng.below(4) as i64,
            len: rng.below(4) as i64,
            unaligned: rng.chance(30),
        })
        .collect();
    Spec {
        interval,
        clock: interval * rng.below(5) as i64 + rng.below(interval as u64) as i64,
        inputs,
        ops,
        outputs,
        remember,
        checkpoint,
        upfront: rng.chance(40),
        batches,
        slices,
    }
}

/// The program: the graph of `spec` on a new context.
struct Job {
    ssc: StreamingContext,
    queues: Vec<QueueInput<Rec>>,
    outputs: Vec<(DStream<Rec>, BatchCollector<Rec>)>,
}

fn keyed(stream: DStream<i64>, key: u32) -> DStream<Rec> {
    stream.map(move |v| (key, *v))
}

fn build_op(op: &Op, streams: &[DStream<Rec>]) -> Result<DStream<Rec>, Error> {
    let sum = |a: &i64, b: &i64| a + b;
    let minus = |a: &i64, b: &i64| a - b;
    Ok(match *op {
        Op::Filter { from, modulus } => streams[from].filter(move |(_, v)| v % modulus != 0),
        Op::MapKeys { from, modulus } => streams[from].map(move |(k, v)| (k % modulus, *v)),
        Op::Union { a, b } => streams[a].union(&streams[b])?,
        Op::Window { from, w, s } => streams[from].window(w, s)?,
        Op::Reduce { from, w, s } => {
            streams[from].reduce_by_key_and_window(sum, w, s, Partitions::Default)?
        }
        Op::ReduceInv { from, w, s, filter } => {
            let mut spec = InverseReduce::new(sum, minus);
            if filter {
                spec = spec.with_filter(|_, v| *v != 0);
            }
            streams[from].reduce_by_key_and_window_inv(spec, w, s)?
        }
        Op::CountByValue { from, w, s } => streams[from]
            .map(|(k, _)| *k)
            .count_by_value_and_window(w, s, Partitions::fixed(3)?)?,
        Op::GroupByKey { from, w, s } => streams[from]
            .group_by_key_and_window(w, s, Partitions::Default)?
            .map(|(k, vs)| {
                let folded = vs.iter().fold(0_i64, |acc, v| acc.wrapping_mul(7) + v);
                (*k, folded)
            }),
        Op::CountByWindow { from, w, s } => keyed(streams[from].count_by_window(w, s)?, 1000),
        Op::ReduceByWindowInv { from, w, s } => keyed(
            streams[from]
                .map(|(_, v)| *v)
                .reduce_by_window_inv(sum, minus, w, s)?,
            1001,
        ),
        Op::ReduceByWindow { from, w, s } => keyed(
            streams[from].map(|(_, v)| *v).reduce_by_window(sum, w, s)?,
            1002,
        ),
    })
}

fn build(spec: &Spec) -> Job {
    let ssc = StreamingContext::new(spec.interval).unwrap();
    ssc.register_snapshot_type::<Rec>();
    let mut queues = Vec::new();
    let mut streams = Vec::new();
    for (retention, data) in &spec.inputs {
        let (queue, stream) = ssc.queue_input_with::<Rec>(*retention);
        if spec.upfront {
            for batch in data {
                queue.push(batch.clone());
            }
        }
        queues.push(queue);
        streams.push(stream);
    }
    for op in &spec.ops {
        let stream = build_op(op, &streams).unwrap_or_else(|e| panic!("{op:?}: {e}"));
        streams.push(stream);
    }
    if let Some((i, interval)) = spec.checkpoint {
        streams[i].checkpoint(interval).unwrap();
    }
    if let Some(d) = spec.remember {
        ssc.remember(d).unwrap();
    }
    let outputs = spec
        .outputs
        .iter()
        .map(|&i| (streams[i].clone(), streams[i].collect_batches().unwrap()))
        .collect();
    Job {
        ssc,
        queues,
        outputs,
    }
}

/// Everything a run shows: each batch's result, each slice, each output's batches.
#[derive(Debug, Default, PartialEq)]
struct Trace {
    results: Vec<Result<i64, Error>>,
    slices: Vec<Result<Vec<Vec<Rec>>, Error>>,
    outputs: Vec<Batches>,
}

impl Trace {
    fn collect(&mut self, job: &Job) {
        self.outputs.resize(job.outputs.len(), Vec::new());
        for (out, (_, collector)) in self.outputs.iter_mut().zip(&job.outputs) {
            out.extend(collector.take().into_iter().map(|(t, b)| (t, b.into_vec())));
        }
    }
}

/// Runs batches `from..to` (pushing their input first unless it was given up front), with the
/// slices after each; false once a batch failed.
fn run(job: &Job, spec: &Spec, from: usize, to: usize, trace: &mut Trace) -> bool {
    for i in from..to {
        if !spec.upfront {
            for (queue, (_, data)) in job.queues.iter().zip(&spec.inputs) {
                queue.push(data[i].clone());
            }
        }
        let result = job.ssc.run_batch();
        let failed = result.is_err();
        trace.results.push(result);
        if failed {
            return false;
        }
        let now = job.ssc.current_time().unwrap();
        for s in spec.slices.iter().filter(|s| s.after == i) {
            let to = now - s.back * spec.interval;
            let mut from = to - s.len * spec.interval;
            if s.unaligned {
                from += spec.interval / 2;
            }
            let got = job.outputs[s.output]
                .0
                .slice(from, to)
                .map(|bs| bs.into_iter().map(|b| b.into_vec()).collect());
            trace.slices.push(got);
        }
    }
    true
}

/// The run without a restart.
fn uninterrupted(spec: &Spec) -> Trace {
    let job = build(spec);
    job.ssc.start_at(spec.clock).unwrap();
    let mut trace = Trace::default();
    run(&job, spec, 0, spec.batches, &mut trace);
    trace.collect(&job);
    trace
}

/// The run snapshotted after each of `points` batches (ascending) and rebuilt from each
/// snapshot by the same program.
fn restarted(spec: &Spec, points: &[usize]) -> Trace {
    let mut job = build(spec);
    job.ssc.start_at(spec.clock).unwrap();
    let mut trace = Trace::default();
    let mut done = 0;
    for &point in points {
        assert!(
            run(&job, spec, done, point, &mut trace),
            "failed before {point}"
        );
        done = point;
        trace.collect(&job);
        let bytes = job.ssc.snapshot().unwrap();
        drop(job);
        job = build(spec);
        job.ssc.restore(&bytes).unwrap();
        assert_eq!(job.ssc.state(), ContextState::Active);
        // The restored context's snapshot is the same bytes: nothing was lost or added.
        assert_eq!(job.ssc.snapshot().unwrap(), bytes, "snapshot after restore");
    }
    run(&job, spec, done, spec.batches, &mut trace);
    trace.collect(&job);
    trace
}

#[test]
fn restored_runs_equal_the_uninterrupted_run() {
    let mut failures = 0;
    let mut incremental = 0;
    for seed in 0..160 {
        let spec = random_spec(seed);
        let expected = uninterrupted(&spec);
        // Snapshots only between batches that ran: up to the failing batch, if any.
        let ok = expected.results.iter().take_while(|r| r.is_ok()).count();
        failures += usize::from(ok < spec.batches);
        incremental += usize::from(
            spec.ops
                .iter()
                .any(|op| matches!(op, Op::ReduceInv { .. } | Op::CountByValue { .. })),
        );
        let mut rng = Rng::new(seed ^ 0xDEAD_BEEF);
        let mut points: Vec<usize> = (0..1 + rng.index(2)).map(|_| rng.index(ok + 1)).collect();
        points.sort_unstable();
        let got = restarted(&spec, &points);
        assert_eq!(
            got, expected,
            "seed {seed}, snapshots after {points:?}: {spec:#?}"
        );
    }
    // The seeds cover the incremental windows, and runs that fail (a filter removing live
    // state), whose failure a restored run reproduces.
    assert!(incremental > 40, "{incremental}");
    assert!(failures > 0, "{failures}");
}
