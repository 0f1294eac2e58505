//! The incremental `reduce_by_key_and_window_inv` (and the plain form) against a naive
//! recomputation from the raw batches, for random batches, windows and slides (proptest).
//!
//! The reference is the definition in `docs/dstream.md` (NOTES.md of the Spark cases, section
//! 3 and 8): the window at `t = k · slide` holds the batches at times in `(t - window, t]`
//! after the zero time; the plain form has a record per key with values there; the incremental
//! form without a filter keeps every key that has been in an earlier window, with 0 once its
//! values are gone; with the filter `v != 0` over positive values it equals the plain form.
//! Windows shorter than the slide are included: there our result is the correct one (Spark's
//! differs, see the docs).

use std::collections::BTreeMap;

use dstream_compat::{InverseReduce, Partitions, StreamingContext};
use proptest::prelude::*;

type Batches = Vec<Vec<(u8, i64)>>;

/// Per output time, the window's values per key (only keys with values in the window).
fn window_sums(
    batches: &Batches,
    interval: i64,
    window: i64,
    slide: i64,
    runs: usize,
    fold: fn(i64, i64) -> i64,
) -> Vec<(i64, BTreeMap<u8, i64>)> {
    let last = interval * runs as i64;
    let mut out = Vec::new();
    let mut t = slide;
    while t <= last {
        let mut sums = BTreeMap::new();
        for (i, batch) in batches.iter().enumerate() {
            let time = interval * (i as i64 + 1);
            if time > t - window && time <= t {
                for &(k, v) in batch {
                    sums.entry(k).and_modify(|s| *s = fold(*s, v)).or_insert(v);
                }
            }
        }
        out.push((t, sums));
        t += slide;
    }
    out
}

enum Form {
    Plain(fn(&i64, &i64) -> i64, Partitions),
    Incremental(InverseReduce<u8, i64>),
}

fn run(
    batches: &Batches,
    interval: i64,
    window: i64,
    slide: i64,
    runs: usize,
    form: Form,
) -> Vec<(i64, BTreeMap<u8, i64>)> {
    let ssc = StreamingContext::new(interval).unwrap();
    let input = ssc.queue_stream(batches.clone());
    let out = match form {
        Form::Plain(f, partitions) => input
            .reduce_by_key_and_window(f, window, slide, partitions)
            .unwrap(),
        Form::Incremental(spec) => input
            .reduce_by_key_and_window_inv(spec, window, slide)
            .unwrap(),
    };
    let collected = out.collect_batches().unwrap();
    ssc.start().unwrap();
    ssc.run_batches(runs).unwrap();
    collected
        .take()
        .into_iter()
        .map(|(t, batch)| {
            let map: BTreeMap<u8, i64> = batch.iter().copied().collect();
            assert_eq!(map.len(), batch.len(), "one record per key at {t}");
            (t, map)
        })
        .collect()
}

fn add_sub() -> InverseReduce<u8, i64> {
    InverseReduce::new(|a: &i64, b: &i64| a + b, |a: &i64, b: &i64| a - b)
}

fn batches(values: std::ops::RangeInclusive<i64>) -> impl Strategy<Value = Batches> {
    prop::collection::vec(prop::collection::vec((0u8..6, values), 0..5), 0..14)
}

fn shape() -> impl Strategy<Value = (i64, i64, i64, usize)> {
    // interval, window (0..=6 intervals), slide (1..=4 intervals), extra empty batches run.
    (
        prop::sample::select(vec![500_i64, 1000, 2000]),
        0i64..=6,
        1i64..=4,
        0usize..8,
    )
        .prop_map(|(i, w, s, extra)| (i, i * w, i * s, extra))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Without a filter: every key ever in a window stays, with its window sum (0 when gone).
    #[test]
    fn incremental_equals_recomputation(b in batches(-5..=9), (interval, window, slide, extra) in shape()) {
        let runs = b.len() + extra;
        let reference = window_sums(&b, interval, window, slide, runs, |a, v| a + v);
        let mut seen = BTreeMap::new();
        let expected: Vec<_> = reference
            .into_iter()
            .map(|(t, sums)| {
                for k in seen.keys().copied().collect::<Vec<_>>() {
                    seen.insert(k, 0);
                }
                seen.extend(sums);
                (t, seen.clone())
            })
            .collect();
        let got = run(&b, interval, window, slide, runs, Form::Incremental(add_sub()));
        prop_assert_eq!(got, expected);
    }

    /// With the filter `v != 0` and positive values, the incremental form is the plain one.
    #[test]
    fn filtered_incremental_equals_plain(b in batches(1..=9), (interval, window, slide, extra) in shape(), parts in 1usize..4) {
        let runs = b.len() + extra;
        let expected = window_sums(&b, interval, window, slide, runs, |a, v| a + v);
        let spec = add_sub()
            .with_filter(|_, v| *v != 0)
            .with_partitions(Partitions::fixed(parts).unwrap());
        let incremental = run(&b, interval, window, slide, runs, Form::Incremental(spec));
        prop_assert_eq!(&incremental, &expected);
        let plain = run(&b, interval, window, slide, runs, Form::Plain(|a, b| a + b, Partitions::Default));
        prop_assert_eq!(&plain, &expected);
    }

    /// The plain form with a non-invertible function, and any number of partitions.
    #[test]
    fn plain_max_equals_recomputation(b in batches(-5..=9), (interval, window, slide, extra) in shape(), parts in 1usize..4) {
        let runs = b.len() + extra;
        let expected = window_sums(&b, interval, window, slide, runs, i64::max);
        let got = run(&b, interval, window, slide, runs, Form::Plain(|a, b| *a.max(b), Partitions::fixed(parts).unwrap()));
        prop_assert_eq!(got, expected);
    }
}
