//! Snapshots of a `StreamingContext` that cannot be taken or restored: garbage, truncated and
//! foreign bytes, snapshots of other graphs (refused naming the difference), record types
//! without an encoding, and the lifecycle errors. A failed restore leaves the context as it
//! was. The restored runs are in `snapshot.rs`.

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

    fn index(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
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
