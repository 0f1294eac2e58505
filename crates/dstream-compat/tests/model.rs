//! The streaming model: start-up and the zero time, compute-or-reuse and forgetting after the
//! remember duration, the checkpoint checks of `start()`, run-time failures, `union`, and the
//! per-batch operations. Expected values come from Spark's behaviour as recorded in
//! `tests/conformance/spark/NOTES.md` (section numbers below) and the cases it cites.

use std::cell::Cell;
use std::rc::Rc;

use dstream_compat::{ContextState, Error, InverseReduce, Partitions, StreamingContext};

fn times_and_records<T: Clone + Ord>(
    batches: Vec<(i64, dstream_compat::Batch<T>)>,
) -> Vec<(i64, Vec<T>)> {
    batches
        .into_iter()
        .map(|(t, b)| {
            let mut v = b.to_vec();
            v.sort();
            (t, v)
        })
        .collect()
}

/// NOTES.md 1 (#11): a clock at 2500 ms with 1 s batches gives zero 2000, first batch 3000.
#[test]
fn unaligned_clock_is_floored() -> Result<(), Error> {
    let ssc = StreamingContext::new(1000)?;
    let out = ssc
        .queue_stream(vec![vec![1], vec![2]])
        .window(2000, 1000)?
        .collect_batches()?;
    assert_eq!(ssc.state(), ContextState::Initialized);
    ssc.start_at(2500)?;
    assert_eq!(ssc.state(), ContextState::Active);
    assert_eq!(
        (ssc.zero_time(), ssc.current_time()),
        (Some(2000), Some(2000))
    );
    ssc.run_batches(3)?;
    assert_eq!(
        times_and_records(out.take()),
        [(3000, vec![1]), (4000, vec![1, 2]), (5000, vec![2])]
    );
    Ok(())
}

/// NOTES.md 6 (#02 graph): window(3 s, 1 s) remembers 1000 ms and makes its parent remember
/// 4000 ms. A batch is computed once and reused by every window that slices it while it is
/// remembered; after that it is forgotten, and computed again if asked for.
#[test]
fn batches_are_reused_while_remembered_then_forgotten() -> Result<(), Error> {
    let ssc = StreamingContext::new(1000)?;
    let computed = Rc::new(Cell::new(0));
    let counter = Rc::clone(&computed);
    let input = ssc.queue_stream((1..=6).map(|i| vec![i]));
    let mapped = input.map(move |x| {
        counter.set(counter.get() + 1);
        *x
    });
    let windows = mapped.window(3000, 1000)?.collect_batches()?;
    ssc.start()?;
    assert_eq!(mapped.remember_duration(), Some(4000));
    ssc.run_batches(6)?;
    assert_eq!(windows.len(), 6);
    // Six batches, each mapped once although each is in three windows.
    assert_eq!(computed.get(), 6);
    // At 6000 the mapped stream forgot the batches at times <= 6000 - 4000.
    let recent: Vec<Vec<i32>> = mapped
        .slice(3000, 6000)?
        .into_iter()
        .map(|b| b.to_vec())
        .collect();
    assert_eq!(recent, [vec![3], vec![4], vec![5], vec![6]]);
    assert_eq!(computed.get(), 6, "remembered batches are reused");
    let old: Vec<Vec<i32>> = mapped
        .slice(1000, 2000)?
        .into_iter()
        .map(|b| b.to_vec())
        .collect();
    assert_eq!(old, [vec![1], vec![2]]);
    assert_eq!(computed.get(), 8, "forgotten batches are computed again");
    Ok(())
}

/// NOTES.md 6 (#10, #25, #45): remember durations along a chain, Spark's default checkpoint
/// interval of the incremental window (10 s for a 1 s slide, so it remembers 20 s), and
/// `StreamingContext.remember`.
#[test]
fn remember_durations_follow_spark() -> Result<(), Error> {
    let ssc = StreamingContext::new(1000)?;
    let input = ssc.queue_stream(Vec::<Vec<(char, i64)>>::new());
    let w1 = input.window(2000, 2000)?;
    let w2 = w1.window(4000, 2000)?;
    w2.foreach_batch(|_, _| {})?;
    let sums = input.reduce_by_key_and_window_inv(
        InverseReduce::new(|a: &i64, b: &i64| a + b, |a: &i64, b: &i64| a - b),
        3000,
        1000,
    )?;
    sums.foreach_batch(|_, _| {})?;
    ssc.start()?;
    assert_eq!(w2.remember_duration(), Some(2000));
    assert_eq!(w1.remember_duration(), Some(6000));
    assert_eq!(sums.checkpoint_interval(), Some(10_000));
    assert_eq!(sums.remember_duration(), Some(20_000));
    // The input remembers the most any child asks: 20 s + 3 s through the reduced stream.
    assert_eq!(input.remember_duration(), Some(23_000));
    let graph = ssc.graph();
    let names: Vec<&str> = graph.iter().map(|s| s.name()).collect();
    assert_eq!(
        names,
        [
            "WindowedDStream",
            "WindowedDStream",
            "QueueInputDStream",
            "ReducedWindowedDStream",
            "ShuffledDStream",
            "QueueInputDStream"
        ]
    );
    assert!(graph[3].must_checkpoint());

    let ssc = StreamingContext::new(1000)?;
    let input = ssc.queue_stream(vec![vec![1]]);
    input.foreach_batch(|_, _| {})?;
    ssc.remember(60_000)?;
    ssc.start()?;
    assert_eq!(input.remember_duration(), Some(60_000));
    assert_eq!(ssc.remember(1), Err(Error::AlreadyStarted));
    Ok(())
}

/// NOTES.md 5 and 7 (#20, #46): checkpoint intervals are checked by `start()`; no checkpoint
/// directory is needed (deliberate difference).
#[test]
fn checkpoint_intervals_are_checked_at_start() -> Result<(), Error> {
    let spec = || InverseReduce::new(|a: &i64, b: &i64| a + b, |a: &i64, b: &i64| a - b);
    for (slide, interval, expected) in [
        (
            1000,
            1500,
            Some(Error::CheckpointIntervalNotMultiple {
                stream: "ReducedWindowedDStream",
                interval: 1500,
                slide: 1000,
            }),
        ),
        (
            2000,
            1000,
            Some(Error::CheckpointIntervalTooShort {
                stream: "ReducedWindowedDStream",
                interval: 1000,
                slide: 2000,
            }),
        ),
        (1000, 3000, None),
    ] {
        let ssc = StreamingContext::new(1000)?;
        let sums = ssc
            .queue_stream(vec![vec![('a', 1_i64)]])
            .reduce_by_key_and_window_inv(spec(), 4000, slide)?
            .checkpoint(interval)?;
        sums.foreach_batch(|_, _| {})?;
        match expected {
            Some(e) => {
                assert_eq!(ssc.start(), Err(e));
                assert_eq!(ssc.state(), ContextState::Stopped);
                assert_eq!(ssc.run_batch(), Err(Error::Stopped));
            }
            None => {
                ssc.start()?;
                // Twice the checkpoint interval (NOTES.md 6).
                assert_eq!(sums.remember_duration(), Some(6000));
            }
        }
    }
    Ok(())
}

/// NOTES.md 5 (#21): a zero slide passes construction and start, and fails at the first batch
/// with no output.
#[test]
fn zero_slide_fails_at_the_first_batch() -> Result<(), Error> {
    let ssc = StreamingContext::new(1000)?;
    let out = ssc
        .queue_stream(vec![vec![1], vec![2]])
        .window(2000, 0)?
        .collect_batches()?;
    ssc.start()?;
    assert_eq!(
        ssc.run_batch(),
        Err(Error::ZeroSlide {
            stream: "WindowedDStream"
        })
    );
    assert!(out.is_empty());
    assert_eq!(ssc.state(), ContextState::Stopped);
    Ok(())
}

/// NOTES.md 8 and 9.8 (#23): a filter that drops a key whose values are still in the window
/// makes the batch at 4000 fail; output operations registered before the failing one still
/// get that batch, as Spark runs the jobs of a batch in order.
#[test]
fn a_filter_that_edits_live_state_fails_later() -> Result<(), Error> {
    let ssc = StreamingContext::new(1000)?;
    let input = ssc.queue_stream(vec![vec![("a", 2_i64)], vec![("a", -2)], vec![], vec![]]);
    let raw = input.collect_batches()?;
    let spec = InverseReduce::new(|a: &i64, b: &i64| a + b, |a: &i64, b: &i64| a - b)
        .with_filter(|_, v| *v != 0);
    let sums = input
        .reduce_by_key_and_window_inv(spec, 3000, 1000)?
        .collect_batches()?;
    ssc.start()?;
    ssc.run_batches(3)?;
    assert_eq!(
        ssc.run_batch(),
        Err(Error::MissingPreviousWindowValue { time: 4000 })
    );
    assert_eq!(
        times_and_records(sums.take()),
        [(1000, vec![("a", 2)]), (2000, vec![]), (3000, vec![])]
    );
    assert_eq!(raw.len(), 4, "the earlier output operation ran at 4000");
    assert_eq!(ssc.run_batch(), Err(Error::Stopped));
    Ok(())
}

/// NOTES.md 4 (#22): slicing before start, or a stream no output depends on, fails.
#[test]
fn uninitialized_streams_cannot_be_sliced() -> Result<(), Error> {
    let ssc = StreamingContext::new(1000)?;
    let input = ssc.queue_stream(vec![vec![1]]);
    assert!(matches!(
        input.slice(0, 1000),
        Err(Error::NotInitialized { .. })
    ));
    let unused = input.map(|x| x + 1);
    input.foreach_batch(|_, _| {})?;
    assert_eq!(ssc.run_batch(), Err(Error::NotStarted));
    ssc.start()?;
    assert!(matches!(
        unused.slice(0, 1000),
        Err(Error::NotInitialized { .. })
    ));
    assert_eq!(input.foreach_batch(|_, _| {}), Err(Error::AlreadyStarted));
    assert_eq!(ssc.start(), Err(Error::AlreadyStarted));
    Ok(())
}

#[test]
fn lifecycle_errors() {
    assert_eq!(
        StreamingContext::new(0).unwrap_err(),
        Error::InvalidBatchInterval { interval: 0 }
    );
    let ssc = StreamingContext::new(1000).unwrap();
    assert_eq!(ssc.start(), Err(Error::NoOutputOperations));
    let input = ssc.queue_stream(vec![vec![1]]);
    assert!(matches!(
        input.window(-1000, 1000),
        Err(Error::NegativeDuration { what: "window", .. })
    ));
    assert_eq!(
        Partitions::fixed(0),
        Err(Error::InvalidPartitions { partitions: 0 })
    );
    let other = StreamingContext::new(1000).unwrap();
    let foreign = other.queue_stream(vec![vec![2]]);
    assert_eq!(input.union(&foreign).unwrap_err(), Error::DifferentContexts);
    assert_eq!(ssc.union::<i32>(&[]).unwrap_err(), Error::EmptyUnion);
}

/// Spark's `union` (same slide) and the per-batch operations, on a three-batch input.
#[test]
fn union_and_per_batch_operations() -> Result<(), Error> {
    let ssc = StreamingContext::new(1000)?;
    let words = ssc.queue_stream(vec![vec!["a b", "a"], vec![], vec!["c"]]);
    let more = ssc.queue_stream(vec![vec!["z"], vec!["y"]]);
    let both = words.union(&more)?.collect_batches()?;
    let split = words.flat_map(|line: &&str| line.split(' ').collect::<Vec<_>>());
    let counted = split.count().collect_batches()?;
    let by_value = split
        .count_by_value(Partitions::Default)
        .collect_batches()?;
    let grouped = split
        .map(|w| (w.len(), *w))
        .group_by_key(Partitions::fixed(2)?)
        .collect_batches()?;
    let longest = split
        .reduce(|a, b| if a.len() >= b.len() { a } else { b })
        .collect_batches()?;
    let stamped = split
        .filter(|w| *w != "b")
        .transform(|t, batch| batch.iter().map(|w| (t, *w)).collect())
        .collect_batches()?;
    ssc.start()?;
    ssc.run_batches(3)?;

    assert_eq!(
        times_and_records(both.take()),
        [
            (1000, vec!["a", "a b", "z"]),
            (2000, vec!["y"]),
            (3000, vec!["c"])
        ]
    );
    // count() gives 0 for an empty batch (Spark adds a zero record).
    assert_eq!(
        times_and_records(counted.take()),
        [(1000, vec![3]), (2000, vec![0]), (3000, vec![1])]
    );
    assert_eq!(
        times_and_records(by_value.take()),
        [
            (1000, vec![("a", 2), ("b", 1)]),
            (2000, vec![]),
            (3000, vec![("c", 1)])
        ]
    );
    assert_eq!(
        times_and_records(grouped.take()),
        [
            (1000, vec![(1, vec!["a", "b", "a"])]),
            (2000, vec![]),
            (3000, vec![(1, vec!["c"])])
        ]
    );
    // reduce() gives no record for an empty batch.
    assert_eq!(
        times_and_records(longest.take()),
        [(1000, vec!["a"]), (2000, vec![]), (3000, vec!["c"])]
    );
    assert_eq!(
        times_and_records(stamped.take()),
        [
            (1000, vec![(1000, "a"), (1000, "a")]),
            (2000, vec![]),
            (3000, vec![(3000, "c")])
        ]
    );
    Ok(())
}

/// NOTES.md 4 (#45): flooring, inclusive bounds, skipped times before zero, no upper bound
/// at the current time, and the slice trace.
#[test]
fn slicing_follows_spark() -> Result<(), Error> {
    let ssc = StreamingContext::new(1000)?;
    ssc.trace_slices();
    let input = ssc.queue_stream((1..=5).map(|i| vec![i]));
    input.foreach_batch(|_, _| {})?;
    ssc.start()?;
    ssc.run_batches(5)?;
    let sizes = |from, to| -> Result<Vec<Vec<i32>>, Error> {
        Ok(input
            .slice(from, to)?
            .into_iter()
            .map(|b| b.to_vec())
            .collect())
    };
    assert_eq!(sizes(2500, 2700)?, [vec![2]]);
    assert_eq!(sizes(4000, 2000)?, Vec::<Vec<i32>>::new());
    assert_eq!(
        sizes(-2000, 7000)?,
        [vec![1], vec![2], vec![3], vec![4], vec![5], vec![], vec![]]
    );
    assert_eq!(
        ssc.take_warnings(),
        [
            "toTime (2700 ms) is not a multiple of slideDuration (1000 ms)",
            "fromTime (2500 ms) is not a multiple of slideDuration (1000 ms)"
        ]
    );
    assert!(ssc.warnings().is_empty());
    assert_eq!(
        ssc.slice_log(),
        [
            "Slicing from 2500 ms to 2700 ms (aligned to 2000 ms and 2000 ms)",
            "Slicing from 4000 ms to 2000 ms (aligned to 4000 ms and 2000 ms)",
            "Slicing from -2000 ms to 7000 ms (aligned to -2000 ms and 7000 ms)"
        ]
    );
    Ok(())
}

/// The queue input's retention: by default a pushed batch is kept; with
/// `Retention::UntilForgotten` it is released with the stream's remember duration.
#[test]
fn queue_retention() -> Result<(), Error> {
    for (retention, expected) in [
        (dstream_compat::Retention::KeepAll, vec![1]),
        (dstream_compat::Retention::UntilForgotten, vec![]),
    ] {
        let ssc = StreamingContext::new(1000)?;
        let (queue, input) = ssc.queue_input_with(retention);
        input.foreach_batch(|_, _| {})?;
        ssc.start()?;
        for i in 1..=4 {
            queue.push(vec![i]);
            ssc.run_batch()?;
        }
        assert_eq!(queue.pushed(), 4);
        // The input remembers 1000 ms: at 4000 it has forgotten the batch at 1000.
        let first: Vec<i32> = input.slice(1000, 1000)?[0].to_vec();
        assert_eq!(first, expected, "{retention:?}");
    }
    Ok(())
}
