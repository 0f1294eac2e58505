//! The ends of `i64` time (#16): a zero time that does not fit is refused at start, a batch
//! after `i64::MAX` is refused without running or stopping, `run_until(i64::MAX)` ends, and
//! batch times far from a zero time before 0 (a distance beyond `i64::MAX`) are still found
//! valid, windowed and sliced exactly.

use dstream_compat::{ContextState, Error, InverseReduce, StreamingContext};

fn sorted<T: Clone + Ord>(batches: Vec<(i64, dstream_compat::Batch<T>)>) -> Vec<(i64, Vec<T>)> {
    batches
        .into_iter()
        .map(|(t, b)| {
            let mut v = b.to_vec();
            v.sort();
            (t, v)
        })
        .collect()
}

#[test]
fn a_zero_time_before_i64_min_is_refused_and_the_context_stays_unstarted() -> Result<(), Error> {
    let ssc = StreamingContext::new(1000)?;
    let _out = ssc.queue_stream(vec![vec![1]]).collect_batches()?;
    // floor(i64::MIN + 1, 1000) = -9223372036854776000, before i64::MIN.
    let e = ssc.start_at(i64::MIN + 1).unwrap_err();
    assert_eq!(
        e,
        Error::TimeOutOfRange {
            what: "zero time",
            time: -9_223_372_036_854_776_000
        }
    );
    assert_eq!(
        e.to_string(),
        "the zero time would be -9223372036854776000 ms, outside the times an i64 of \
         milliseconds can hold (-9223372036854775808 ms to 9223372036854775807 ms)"
    );
    assert_eq!(ssc.state(), ContextState::Initialized);
    // A clock that floors into range starts: i64::MIN is a multiple of 1 ms.
    let ssc = StreamingContext::new(1)?;
    let ones = ssc.queue_stream(vec![vec![1], vec![2]]).collect_batches()?;
    ssc.start_at(i64::MIN)?;
    ssc.run_batches(2)?;
    assert_eq!(
        sorted(ones.take()),
        [(i64::MIN + 1, vec![1]), (i64::MIN + 2, vec![2])]
    );
    Ok(())
}

#[test]
fn no_batch_after_i64_max_and_run_until_the_end_of_time_ends() -> Result<(), Error> {
    let ssc = StreamingContext::new(1000)?;
    let out = ssc
        .queue_stream(vec![vec![1], vec![2]])
        .window(2000, 1000)?
        .collect_batches()?;
    // Zero 9223372036854774000: one batch at 9223372036854775000 fits, the next does not.
    ssc.start_at(i64::MAX - 1000)?;
    assert_eq!(ssc.zero_time(), Some(9_223_372_036_854_774_000));
    // This looped forever (the next batch time saturated at i64::MAX, never after it).
    ssc.run_until(i64::MAX)?;
    assert_eq!(ssc.current_time(), Some(9_223_372_036_854_775_000));
    assert_eq!(sorted(out.take()), [(9_223_372_036_854_775_000, vec![1])]);
    assert_eq!(
        ssc.run_batch(),
        Err(Error::TimeOutOfRange {
            what: "next batch time",
            time: 9_223_372_036_854_776_000
        })
    );
    // Nothing ran, the context is where it was.
    assert_eq!(ssc.state(), ContextState::Active);
    assert_eq!(ssc.current_time(), Some(9_223_372_036_854_775_000));
    assert!(out.take().is_empty());
    Ok(())
}

#[test]
fn batch_times_further_from_zero_than_i64_max_are_valid() -> Result<(), Error> {
    // Batches of 10^18 ms from a zero of -10^18: the batch at 9 * 10^18 is 10^19 ms after the
    // zero time, more than i64::MAX. Its validity, window and slice were computed with a
    // saturated difference (i64::MAX % 10^18 != 0): no output at all for it.
    const I: i64 = 1_000_000_000_000_000_000;
    let ssc = StreamingContext::new(I)?;
    let input = ssc.queue_stream((1..=10).map(|i| vec![("k", i)]));
    let windows = input.window(2 * I, I)?.collect_batches()?;
    let sums = input
        .reduce_by_key_and_window_inv(
            InverseReduce::new(|a: &i64, b: &i64| a + b, |a: &i64, b: &i64| a - b),
            2 * I,
            I,
        )?
        .collect_batches()?;
    ssc.start_at(-I)?;
    ssc.run_until(i64::MAX)?;
    assert_eq!(ssc.current_time(), Some(9 * I));
    let got = sorted(windows.take());
    assert_eq!(got.len(), 10);
    assert_eq!(got[0], (0, vec![("k", 1)]));
    assert_eq!(got[9], (9 * I, vec![("k", 9), ("k", 10)]));
    let got = sorted(sums.take());
    assert_eq!(got.len(), 10);
    assert_eq!(got[9], (9 * I, vec![("k", 19)]));
    // A slice over the whole range, with an unaligned end floored exactly.
    let all = input.slice(i64::MIN, i64::MAX)?;
    assert_eq!(all.len(), 10);
    assert_eq!(all[9].to_vec(), [("k", 10)]);
    Ok(())
}
