//! The `dstream` rows of `tests/conformance/scenarios.md` as tests (B40, B43). The expected
//! values are the ones written in those rows, which cite Spark's documentation and bug reports.

use dstream_compat::{Error, InverseReduce, Partitions, StreamingContext};

fn sorted<T: Ord + Clone>(batch: &[T]) -> Vec<T> {
    let mut v = batch.to_vec();
    v.sort();
    v
}

/// B40: batch 1 s, window 3 s, slide 1 s, count per key with inverse = subtract; batches t1
/// {a,a,b}, t2 {a}, t3..t5 empty. Without a filter the zero keys linger (t4 {a:1,b:0},
/// t5 {a:0,b:0}); with a filter value > 0, or with countByValueAndWindow, t4 {a:1}, t5 {}.
#[test]
fn b40_inverse_count_keeps_zero_keys_unless_filtered() -> Result<(), Error> {
    let batches = vec![vec!["a", "a", "b"], vec!["a"], vec![], vec![], vec![]];
    let ssc = StreamingContext::new(1000)?;
    let input = ssc.queue_stream(batches);
    let ones = input.map(|k| (*k, 1_i64));
    let add_sub = || InverseReduce::new(|a: &i64, b: &i64| a + b, |a: &i64, b: &i64| a - b);
    let unfiltered = ones
        .reduce_by_key_and_window_inv(add_sub(), 3000, 1000)?
        .collect_batches()?;
    let filtered = ones
        .reduce_by_key_and_window_inv(add_sub().with_filter(|_, v| *v > 0), 3000, 1000)?
        .collect_batches()?;
    let by_value = input
        .count_by_value_and_window(3000, 1000, Partitions::Default)?
        .collect_batches()?;
    ssc.start()?;
    ssc.run_batches(5)?;

    let unfiltered: Vec<_> = unfiltered
        .take()
        .into_iter()
        .map(|(t, b)| (t, sorted(&b)))
        .collect();
    assert_eq!(
        unfiltered,
        [
            (1000, vec![("a", 2), ("b", 1)]),
            (2000, vec![("a", 3), ("b", 1)]),
            (3000, vec![("a", 3), ("b", 1)]),
            (4000, vec![("a", 1), ("b", 0)]),
            (5000, vec![("a", 0), ("b", 0)]),
        ]
    );
    let expected_filtered = [
        (1000, vec![("a", 2), ("b", 1)]),
        (2000, vec![("a", 3), ("b", 1)]),
        (3000, vec![("a", 3), ("b", 1)]),
        (4000, vec![("a", 1)]),
        (5000, vec![]),
    ];
    for collector in [filtered, by_value] {
        let got: Vec<_> = collector
            .take()
            .into_iter()
            .map(|(t, b)| (t, sorted(&b)))
            .collect();
        assert_eq!(got, expected_filtered);
    }
    Ok(())
}

/// B43: batch 1 s. window(2.5 s, 1 s) and window(3 s, 1.5 s) are rejected (not multiples of
/// the parent's slide); window(2 s, 4 s) is allowed and every 4 s emits the last 2 batches,
/// never seeing the ones in between; the union of the raw stream (slide 1 s) with a windowed
/// stream (slide 2 s) is rejected because the slides differ.
#[test]
fn b43_window_validation_gaps_and_union() -> Result<(), Error> {
    let ssc = StreamingContext::new(1000)?;
    let input = ssc.queue_stream((1..=8).map(|i| vec![i]));

    assert_eq!(
        input.window(2500, 1000).unwrap_err(),
        Error::WindowNotMultiple {
            stream: "WindowedDStream",
            window: 2500,
            parent_slide: 1000
        }
    );
    assert_eq!(
        input.window(3000, 1500).unwrap_err(),
        Error::SlideNotMultiple {
            stream: "WindowedDStream",
            slide: 1500,
            parent_slide: 1000
        }
    );
    let every_two = input.window(2000, 2000)?;
    let err = input.union(&every_two).unwrap_err();
    assert_eq!(
        err,
        Error::DifferentSlideDurations {
            slides: vec![1000, 2000]
        }
    );
    assert_eq!(
        err.to_string(),
        "some of the DStreams have different slide durations (1000 ms, 2000 ms)"
    );

    let gaps = input.window(2000, 4000)?.collect_batches()?;
    ssc.start()?;
    ssc.run_batches(8)?;
    let got: Vec<_> = gaps
        .take()
        .into_iter()
        .map(|(t, b)| (t, sorted(&b)))
        .collect();
    // Batches 1, 2, 5, 6 (at 1000, 2000, 5000, 6000) are in no window.
    assert_eq!(got, [(4000, vec![3, 4]), (8000, vec![7, 8])]);
    Ok(())
}
