//! Snapshots of a running `StreamingContext` (`snapshot`, `restore`): a seeded random graph
//! (windows, plain and incremental `reduceByKeyAndWindow` with and without a filter, unions,
//! filters, maps, the counting and grouping windows, slices between batches) runs on random
//! keyed batches, is snapshotted after random batches and rebuilt from the snapshot; every
//! output stream's batches, every slice and every batch result must equal those of the run
//! without a restart, order included. Then: garbage and truncated bytes, snapshots of other
//! graphs, record types without an encoding, and the lifecycle errors.

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

/// A fixed graph with every kind of state: two queue inputs (both retentions), an incremental
/// window with a filter over their union, a plain window over it.
fn fixed_graph(ssc: &StreamingContext) -> (Vec<QueueInput<Rec>>, BatchCollector<Rec>) {
    let (qa, a) = ssc.queue_input_with::<Rec>(Retention::KeepAll);
    let (qb, b) = ssc.queue_input_with::<Rec>(Retention::UntilForgotten);
    let spec = sum_spec().with_filter(|_, v| *v != 0);
    let sums = a
        .union(&b)
        .unwrap()
        .reduce_by_key_and_window_inv(spec, 3000, 1000)
        .unwrap();
    let out = sums.window(2000, 2000).unwrap().collect_batches().unwrap();
    (vec![qa, qb], out)
}

fn sum_spec() -> InverseReduce<u32, i64> {
    InverseReduce::new(|x: &i64, y: &i64| x + y, |x: &i64, y: &i64| x - y)
}

/// The fixed graph's snapshot after 5 batches.
fn fixed_snapshot() -> Vec<u8> {
    let ssc = StreamingContext::new(1000).unwrap();
    let (queues, _out) = fixed_graph(&ssc);
    ssc.start().unwrap();
    for i in 0..5 {
        queues[0].push(vec![(i, 1), (i + 1, 2)]);
        queues[1].push(vec![(i, 3)]);
        ssc.run_batch().unwrap();
    }
    ssc.snapshot().unwrap()
}

fn invalid_reason(result: Result<(), Error>) -> String {
    match result {
        Err(Error::InvalidSnapshot { reason }) => reason,
        other => panic!("expected InvalidSnapshot, got {other:?}"),
    }
}

#[test]
fn garbage_and_truncated_bytes_are_errors() {
    let good = fixed_snapshot();
    let fresh = || {
        let ssc = StreamingContext::new(1000).unwrap();
        let graph = fixed_graph(&ssc);
        (ssc, graph)
    };
    // Every truncation (nothing at all included), and a byte after the end.
    for len in 0..good.len() {
        let (ssc, _graph) = fresh();
        invalid_reason(ssc.restore(&good[..len]));
        assert_eq!(ssc.state(), ContextState::Initialized, "prefix of {len}");
    }
    let (ssc, _graph) = fresh();
    let mut longer = good.clone();
    longer.push(0);
    assert_eq!(
        invalid_reason(ssc.restore(&longer)),
        "1 bytes after the end of the snapshot"
    );
    // Random bytes, and random bytes after a valid kind tag.
    let mut rng = Rng::new(7);
    for round in 0..300 {
        let mut bytes: Vec<u8> = (0..rng.index(200)).map(|_| rng.next() as u8).collect();
        if round % 2 == 1 {
            let mut tagged = postcard::to_allocvec("dstream-compat StreamingContext").unwrap();
            tagged.append(&mut bytes);
            bytes = tagged;
        }
        let (ssc, _graph) = fresh();
        invalid_reason(ssc.restore(&bytes));
        assert_eq!(ssc.state(), ContextState::Initialized);
    }
    // Flipped bytes: an error, or (a record's value changed) a restore; never a panic.
    for i in 0..good.len() {
        let mut bytes = good.clone();
        bytes[i] ^= 0x5a;
        let (ssc, _graph) = fresh();
        if ssc.restore(&bytes).is_err() {
            assert_eq!(ssc.state(), ContextState::Initialized);
        }
    }
    // After refusing garbage, the context takes the good snapshot and runs on.
    let (ssc, (queues, out)) = fresh();
    invalid_reason(ssc.restore(b"not a snapshot"));
    ssc.restore(&good).unwrap();
    assert_eq!(ssc.current_time(), Some(5000));
    queues[0].push(vec![(9, 4)]);
    queues[1].push(vec![]);
    ssc.run_batch().unwrap();
    let got: Batches = out
        .take()
        .into_iter()
        .map(|(t, b)| (t, b.into_vec()))
        .collect();
    // At 6000: the sums at 5000 ((2, 5] holds batches 3..=5) and at 6000 ((3, 6]).
    let at_5000 = vec![(2, 4), (3, 6), (4, 6), (5, 2)];
    let at_6000 = vec![(3, 4), (4, 6), (5, 2), (9, 4)];
    let mut expected: Vec<Rec> = at_5000.into_iter().chain(at_6000).collect();
    let mut records = got[0].1.clone();
    records.sort_unstable();
    expected.sort_unstable();
    assert_eq!((got.len(), got[0].0), (1, 6000));
    assert_eq!(records, expected);
}

#[test]
fn another_kind_of_snapshot_is_refused() {
    let ssc = StreamingContext::new(1000).unwrap();
    let _graph = fixed_graph(&ssc);
    let mut foreign = postcard::to_allocvec("window-operator WindowOperator").unwrap();
    foreign.extend_from_slice(&[1, 2, 3]);
    assert_eq!(
        invalid_reason(ssc.restore(&foreign)),
        "a snapshot of kind `window-operator WindowOperator`, not of a dstream-compat StreamingContext"
    );
}

/// Restores the fixed snapshot into the graph `build` makes; why it is refused.
fn refusal(interval: i64, build: impl FnOnce(&StreamingContext)) -> String {
    let ssc = StreamingContext::new(interval).unwrap();
    build(&ssc);
    let reason = invalid_reason(ssc.restore(&fixed_snapshot()));
    assert_eq!(ssc.state(), ContextState::Initialized);
    reason
}

/// The fixed graph with other durations, filter, retention, outputs.
fn variant(ssc: &StreamingContext, inner: i64, filter: bool, outer: (i64, i64)) -> DStream<Rec> {
    let (_, a) = ssc.queue_input_with::<Rec>(Retention::KeepAll);
    let (_, b) = ssc.queue_input_with::<Rec>(Retention::UntilForgotten);
    let spec = if filter {
        sum_spec().with_filter(|_, v| *v != 0)
    } else {
        sum_spec()
    };
    let sums = a
        .union(&b)
        .unwrap()
        .reduce_by_key_and_window_inv(spec, inner, 1000);
    let out = sums.unwrap().window(outer.0, outer.1).unwrap();
    out.collect_batches().unwrap();
    out
}

#[test]
fn a_snapshot_of_another_graph_is_refused_naming_the_difference() {
    // The same graph restores.
    let ssc = StreamingContext::new(1000).unwrap();
    let _graph = variant(&ssc, 3000, true, (2000, 2000));
    ssc.restore(&fixed_snapshot()).unwrap();

    assert_eq!(
        refusal(2000, |ssc| {
            let input = ssc.queue_stream(Vec::<Vec<Rec>>::new());
            input.collect_batches().unwrap();
        }),
        "the batch interval is 1000 ms in the snapshot, 2000 ms in this context"
    );
    assert_eq!(
        refusal(1000, |ssc| {
            ssc.remember(60_000).unwrap();
            drop(fixed_graph(ssc));
        }),
        "the context's remember duration is none in the snapshot, 60000 ms in this context"
    );
    assert_eq!(
        refusal(1000, |ssc| drop(variant(ssc, 3000, true, (4000, 2000)))),
        "stream 0 (WindowedDStream): window 2000 ms in the snapshot, 4000 ms in this context"
    );
    assert_eq!(
        refusal(1000, |ssc| drop(variant(ssc, 3000, true, (2000, 1000)))),
        "stream 0 (WindowedDStream): slide 2000 ms in the snapshot, 1000 ms in this context"
    );
    assert_eq!(
        refusal(1000, |ssc| drop(variant(ssc, 4000, true, (2000, 2000)))),
        "stream 1 (ReducedWindowedDStream): window 3000 ms in the snapshot, 4000 ms in this context"
    );
    assert_eq!(
        refusal(1000, |ssc| drop(variant(ssc, 3000, false, (2000, 2000)))),
        "stream 1 (ReducedWindowedDStream): operation `with a filter` in the snapshot, `without a filter` in this context"
    );
    assert_eq!(
        refusal(1000, |ssc| {
            let (_, a) = ssc.queue_input_with::<Rec>(Retention::KeepAll);
            let (_, b) = ssc.queue_input_with::<Rec>(Retention::UntilForgotten);
            let sums = a.union(&b).unwrap().reduce_by_key_and_window(
                |x, y| x + y,
                3000,
                1000,
                Partitions::Default,
            );
            let out = sums.unwrap().window(2000, 2000).unwrap();
            out.collect_batches().unwrap();
        }),
        "stream 1 is a ReducedWindowedDStream in the snapshot, a ShuffledDStream in this context"
    );
    assert_eq!(
        refusal(1000, |ssc| {
            let (_, a) = ssc.queue_input_with::<Rec>(Retention::KeepAll);
            let (_, b) = ssc.queue_input_with::<Rec>(Retention::KeepAll);
            let spec = sum_spec().with_filter(|_, v| *v != 0);
            let sums = a.union(&b).unwrap().reduce_by_key_and_window_inv(spec, 3000, 1000);
            let out = sums.unwrap().window(2000, 2000).unwrap();
            out.collect_batches().unwrap();
        }),
        "stream 5 (QueueInputDStream): operation `keeping batches until forgotten` in the snapshot, `keeping all batches` in this context"
    );
    assert_eq!(
        refusal(1000, |ssc| {
            let out = variant(ssc, 3000, true, (2000, 2000));
            out.collect_batches().unwrap();
        }),
        "the snapshot's graph has 1 output operations, this context's 2"
    );
    assert_eq!(
        refusal(1000, |ssc| {
            let out = variant(ssc, 3000, true, (2000, 2000));
            out.filter(|_| true).collect_batches().unwrap();
        }),
        "the snapshot's graph has 6 streams, this context's 7"
    );
    assert_eq!(
        refusal(1000, |ssc| {
            let (_, a) = ssc.queue_input_with::<Rec>(Retention::KeepAll);
            let spec = sum_spec().with_filter(|_, v| *v != 0);
            let sums = a.reduce_by_key_and_window_inv(spec, 3000, 1000);
            sums.unwrap()
                .window(2000, 2000)
                .unwrap()
                .collect_batches()
                .unwrap();
        }),
        "stream 3 is a UnionDStream in the snapshot, a QueueInputDStream in this context"
    );
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Event {
    key: u32,
    value: i64,
}

#[test]
fn records_without_an_encoding_are_refused() {
    // A queue input of a type that is not registered.
    let program = |register: bool| {
        let ssc = StreamingContext::new(1000).unwrap();
        let (queue, input) = ssc.queue_input::<Event>();
        if register {
            ssc.register_snapshot_type::<Event>();
        }
        let out = input
            .map(|e| (e.key, e.value))
            .window(2000, 1000)
            .unwrap()
            .collect_batches()
            .unwrap();
        (ssc, queue, out)
    };
    let (ssc, queue, _) = program(false);
    ssc.start().unwrap();
    queue.push(vec![Event { key: 1, value: 5 }]);
    ssc.run_batch().unwrap();
    match ssc.snapshot() {
        Err(Error::SnapshotUnsupported { stream, reason }) => {
            assert_eq!(stream, "QueueInputDStream#0");
            assert!(reason.contains("Event`"), "{reason}");
            assert!(reason.contains("register_snapshot_type"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let (ssc, queue, _) = program(true);
    ssc.start().unwrap();
    queue.push(vec![Event { key: 1, value: 5 }]);
    ssc.run_batch().unwrap();
    let bytes = ssc.snapshot().unwrap();
    // A restoring program that does not register the type refuses, unchanged ...
    let (ssc, _, _) = program(false);
    assert!(matches!(
        ssc.restore(&bytes),
        Err(Error::SnapshotUnsupported { .. })
    ));
    assert_eq!(ssc.state(), ContextState::Initialized);
    // ... and one that does restores the queued event.
    let (ssc, queue, out) = program(true);
    ssc.restore(&bytes).unwrap();
    queue.push(vec![Event { key: 2, value: 6 }]);
    ssc.run_batch().unwrap();
    let got: Batches = out
        .take()
        .into_iter()
        .map(|(t, b)| (t, b.into_vec()))
        .collect();
    assert_eq!(got, [(2000, vec![(1, 5), (2, 6)])]);

    // `&'static str` keys of an incremental window: the pair needs an encoding of `&str`.
    let ssc = StreamingContext::new(1000).unwrap();
    let pairs = ssc.queue_stream(vec![vec![("a", 1_i64)]]);
    let sums = pairs.reduce_by_key_and_window_inv(
        InverseReduce::new(|a: &i64, b: &i64| a + b, |a: &i64, b: &i64| a - b),
        2000,
        1000,
    );
    sums.unwrap().collect_batches().unwrap();
    ssc.start().unwrap();
    match ssc.snapshot() {
        Err(Error::SnapshotUnsupported { stream, reason }) => {
            assert_eq!(stream, "ReducedWindowedDStream#2");
            assert!(reason.contains("`&str`"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn snapshots_are_taken_between_batches_of_an_active_context() {
    let ssc = StreamingContext::new(1000).unwrap();
    let input = ssc.queue_stream(vec![vec![1_i64], vec![2]]);
    assert_eq!(ssc.snapshot(), Err(Error::NotStarted));
    let inner = ssc.clone();
    let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let sink = std::rc::Rc::clone(&seen);
    input
        .foreach_batch(move |_, _| sink.borrow_mut().push(inner.snapshot().map(|_| ())))
        .unwrap();
    ssc.start().unwrap();
    ssc.run_batch().unwrap();
    assert_eq!(*seen.borrow(), [Err(Error::BatchInProgress)]);
    let bytes = ssc.snapshot().unwrap();
    assert_eq!(ssc.restore(&bytes), Err(Error::AlreadyStarted));

    // A context without output operations is not restored; a stopped one not snapshotted.
    let empty = StreamingContext::new(1000).unwrap();
    assert_eq!(empty.restore(&bytes), Err(Error::NoOutputOperations));
    let failing = StreamingContext::new(1000).unwrap();
    failing
        .queue_stream(vec![vec![1_i64]])
        .window(1000, 0)
        .unwrap()
        .collect_batches()
        .unwrap();
    failing.start().unwrap();
    assert!(failing.run_batch().is_err());
    assert_eq!(failing.snapshot(), Err(Error::Stopped));
}
