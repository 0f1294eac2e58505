//! Unit tests of the aggregate functions.

use super::*;

#[test]
fn numeric_aggregates_over_values_and_merges() {
    let mut a = NumericStats::default();
    for v in [4.0, -2.0, 10.0] {
        a.add(v);
    }
    let mut b = NumericStats::default();
    b.add(7.0);
    a.merge(&b);
    assert_eq!(NumericAggregate::Count.of(&a), Some(4.0));
    assert_eq!(NumericAggregate::Sum.of(&a), Some(19.0));
    assert_eq!(NumericAggregate::Min.of(&a), Some(-2.0));
    assert_eq!(NumericAggregate::Max.of(&a), Some(10.0));
    assert_eq!(NumericAggregate::Mean.of(&a), Some(4.75));
    let mut huge = NumericStats::default();
    huge.add(1e308);
    huge.add(1e308);
    assert_eq!(
        NumericAggregate::Mean.of(&huge),
        Some(1e308),
        "no overflow in the mean"
    );
    let empty = NumericStats::default();
    assert_eq!(NumericAggregate::Min.of(&empty), None);
    assert_eq!(NumericAggregate::Count.of(&empty), Some(0.0));
}

#[test]
fn lean_accumulator_gives_the_numeric_stats_results() {
    // NumericAcc keeps less than NumericStats; every aggregate must still give what
    // `NumericAggregate::of` gives on the full statistics, over adds and merges in any split.
    let all = [
        NumericAggregate::Count,
        NumericAggregate::Sum,
        NumericAggregate::Min,
        NumericAggregate::Max,
        NumericAggregate::Mean,
    ];
    let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for case in 0..500 {
        let n = (next() % 12) as usize;
        let values: Vec<f64> = (0..n)
            .map(|_| match next() % 10 {
                0 if case % 7 == 0 => 1e308,
                1 if case % 11 == 0 => f64::NAN,
                _ => (next() % 2001) as f64 - 1000.0,
            })
            .collect();
        let cut = if n == 0 {
            0
        } else {
            (next() as usize) % (n + 1)
        };
        // The same split on the full statistics: the same float operations in the same order.
        let (mut stats, mut right_stats) = (NumericStats::default(), NumericStats::default());
        values[..cut].iter().for_each(|v| stats.add(*v));
        values[cut..].iter().for_each(|v| right_stats.add(*v));
        stats.merge(&right_stats);
        for agg in all {
            let (mut left, mut right) = (agg.create_accumulator(), agg.create_accumulator());
            values[..cut].iter().for_each(|v| agg.add(&mut left, v));
            values[cut..].iter().for_each(|v| agg.add(&mut right, v));
            agg.merge(&mut left, right);
            let (got, want) = (agg.get_result(&left), agg.of(&stats));
            let same = match (got, want) {
                (Some(g), Some(w)) => g == w || (g.is_nan() && w.is_nan()),
                (g, w) => g == w,
            };
            assert!(
                same,
                "{agg:?} of {values:?} split at {cut}: {got:?}, want {want:?}"
            );
            // And from the values directly, not through either accumulator (skipping NaN
            // inputs, where min and max follow f64::min/max and sums are NaN).
            if values.iter().any(|v| v.is_nan()) {
                continue;
            }
            let sum = values[..cut].iter().sum::<f64>() + values[cut..].iter().sum::<f64>();
            let direct = match agg {
                NumericAggregate::Count => Some(n as f64),
                NumericAggregate::Sum => Some(sum),
                _ if n == 0 => None,
                NumericAggregate::Min => values.iter().copied().reduce(f64::min),
                NumericAggregate::Max => values.iter().copied().reduce(f64::max),
                NumericAggregate::Mean if sum.is_finite() => Some(sum / n as f64),
                // An overflowing sum: the mean of the values, each divided first.
                NumericAggregate::Mean => {
                    let mean: f64 = values.iter().map(|v| v / n as f64).sum();
                    let g = got.expect("mean of a non-empty window");
                    assert!(
                        (g - mean).abs() <= mean.abs() * 1e-12,
                        "{values:?}: {g} vs {mean}"
                    );
                    continue;
                }
            };
            assert_eq!(got, direct, "{agg:?} of {values:?} split at {cut}");
        }
    }
    let mean = NumericAggregate::Mean;
    let mut acc = mean.create_accumulator();
    mean.add(&mut acc, &1e308);
    mean.add(&mut acc, &1e308);
    assert_eq!(
        mean.get_result(&acc),
        Some(1e308),
        "no overflow in the mean"
    );
    assert_eq!(
        NumericAggregate::Max.get_result(&NumericAcc::default()),
        None
    );
    assert_eq!(
        NumericAggregate::Sum.get_result(&NumericAcc::default()),
        Some(0.0)
    );
}

#[test]
fn reduce_aggregate_merges_partials() {
    let sum = ReduceAggregate::new(|a: i64, b: &i64| a + b);
    let mut x = sum.create_accumulator();
    sum.add(&mut x, &2);
    let mut y = sum.create_accumulator();
    sum.add(&mut y, &5);
    sum.merge(&mut x, y);
    sum.merge(&mut x, None);
    assert_eq!(sum.get_result(&x), Some(7));
}

/// A seeded xorshift generator for the randomized tests.
fn rng(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// `agg` over `values` added one by one, and over every split into two accumulators merged.
fn results_of_every_split(agg: NumericAggregate, values: &[f64]) -> Vec<Option<f64>> {
    (0..=values.len())
        .map(|cut| {
            let (mut left, mut right) = (agg.create_accumulator(), agg.create_accumulator());
            values[..cut].iter().for_each(|v| agg.add(&mut left, v));
            values[cut..].iter().for_each(|v| agg.add(&mut right, v));
            agg.merge(&mut left, right);
            agg.get_result(&left)
        })
        .collect()
}

/// Issue #16, item 6: partial sums that overflow where the sum does not. The plain `f64` sum
/// gives `-inf` for the first mean and NaN for the second.
#[test]
fn sums_and_means_do_not_overflow_in_between() {
    let third = [1e308, 1e308, -1e308];
    let zero = [1.7e308, 1.7e308, -1.7e308, -1.7e308];
    for (values, sum, mean) in [
        (&third[..], 1e308, 1e308 / 3.0),
        (&zero[..], 0.0, 0.0),
        // Overflowing for real: the sum is infinite, the mean is not.
        (&[1e308, 1e308][..], f64::INFINITY, 1e308),
        (
            &[-1.7e308, -1.7e308, -1.7e308][..],
            f64::NEG_INFINITY,
            -1.7e308,
        ),
    ] {
        for got in results_of_every_split(NumericAggregate::Sum, values) {
            assert_eq!(got, Some(sum), "sum of {values:?}");
        }
        for got in results_of_every_split(NumericAggregate::Mean, values) {
            let got = got.expect("a mean");
            if sum.is_finite() {
                assert_eq!(got, mean, "mean of {values:?}");
            } else {
                // Scaled sum / count, rounded twice: within two units in the last place.
                let ulps = (got - mean).abs() / (mean.abs() * f64::EPSILON);
                assert!(ulps <= 2.0, "mean of {values:?}: {got:e}, {ulps} ulps off");
            }
        }
        let mut stats = NumericStats::default();
        values.iter().for_each(|v| stats.add(*v));
        assert_eq!(NumericAggregate::Sum.of(&stats), Some(sum), "{values:?}");
        if sum.is_finite() {
            assert_eq!(NumericAggregate::Mean.of(&stats), Some(mean), "{values:?}");
        }
    }
    // Small values added after the sum was scaled are kept (above 2^-958). (Split elsewhere,
    // 0.5 and 0.25 are absorbed into an unscaled -1e308, as in any float sum.)
    for agg in [NumericAggregate::Sum, NumericAggregate::Mean] {
        let mut acc = agg.create_accumulator();
        for v in [1e308, 1e308, -1e308, -1e308, 0.5, 0.25] {
            agg.add(&mut acc, &v);
        }
        let want = if agg == NumericAggregate::Sum {
            0.75
        } else {
            0.125
        };
        assert_eq!(agg.get_result(&acc), Some(want));
    }
    // Infinite and NaN values behave as in the plain sum.
    for (values, sum) in [
        (&[1.0, f64::INFINITY][..], f64::INFINITY),
        (&[f64::INFINITY, f64::NEG_INFINITY][..], f64::NAN),
        (&[1e308, 1e308, f64::NEG_INFINITY][..], f64::NEG_INFINITY),
        (&[1.0, f64::NAN, 2.0][..], f64::NAN),
    ] {
        for got in results_of_every_split(NumericAggregate::Sum, values) {
            let got = got.expect("a sum");
            assert!(got.to_bits() == sum.to_bits() || got.is_nan() && sum.is_nan());
        }
    }
}

/// Issue #16, item 6: integers are summed exactly (Flink sums `Long` exactly); the plain `f64`
/// sum of `2^53, 1, 1` is `2^53`.
#[test]
fn integers_are_summed_exactly() {
    const TWO_53: f64 = 9_007_199_254_740_992.0;
    let sum = NumericAggregate::Sum;
    for got in results_of_every_split(sum, &[TWO_53, 1.0, 1.0]) {
        assert_eq!(got, Some(9_007_199_254_740_994.0));
    }
    let mut acc = sum.create_accumulator();
    for v in [TWO_53, 1.0] {
        sum.add(&mut acc, &v);
    }
    assert_eq!(acc.exact_sum(), Some(9_007_199_254_740_993));
    assert_eq!(sum.integer_result(&acc), Some(9_007_199_254_740_993));
    // The f64 result is the exact sum rounded once (to even).
    assert_eq!(sum.get_result(&acc), Some(TWO_53));
    // The mean divides the exact sum: (2^53 + 4) / 4, where the f64 sum gives 2^51 + 0.5.
    let mean = NumericAggregate::Mean;
    for got in results_of_every_split(mean, &[TWO_53, 1.0, 1.0, 2.0]) {
        assert_eq!(got, Some(2_251_799_813_685_249.0));
    }
    let mut acc = mean.create_accumulator();
    [TWO_53, 1.0, 1.0, 2.0]
        .iter()
        .for_each(|v| mean.add(&mut acc, v));
    assert_eq!(mean.integer_result(&acc), Some(2_251_799_813_685_249));
    mean.add(&mut acc, &0.0);
    assert_eq!(
        mean.integer_result(&acc),
        None,
        "(2^53 + 4) / 5 is no integer"
    );
    // Beyond the i64 range the sum stays exact (an i128), and coming back is exact too:
    // 2^62 + 2^62 - 1 is 2^63 - 1 (the trial of 2026-12-01 found i64::MAX + 1 - 2 printed as
    // 9.223372036854776e18 when the sum fell back to a float at the overflow).
    let big = 4_611_686_018_427_387_904.0; // 2^62
    for got in results_of_every_split(sum, &[big, big, -1.0]) {
        assert_eq!(got, Some(2.0 * big));
    }
    let mut acc = sum.create_accumulator();
    [big, big, -1.0].iter().for_each(|v| sum.add(&mut acc, v));
    assert_eq!(acc.exact_sum(), Some(i128::from(i64::MAX)));
    let mut acc = sum.create_accumulator();
    for v in [i64::MAX, i64::MAX, i64::MAX] {
        sum.add_number(&mut acc, Number::Int(v));
    }
    assert_eq!(acc.exact_sum(), Some(3 * i128::from(i64::MAX)));
    // -2^63 is an i64, 2^63 is not.
    let mut acc = sum.create_accumulator();
    sum.add(&mut acc, &-9_223_372_036_854_775_808.0);
    assert_eq!(acc.exact_sum(), Some(i128::from(i64::MIN)));
    let mut acc = sum.create_accumulator();
    sum.add(&mut acc, &9_223_372_036_854_775_808.0);
    assert_eq!(acc.exact_sum(), None);
    assert_eq!(sum.get_result(&acc), Some(9_223_372_036_854_775_808.0));
    // A fraction leaves the exact form; the sum goes on from the integer sum.
    let mut acc = sum.create_accumulator();
    [TWO_53, 1.0, 0.5, 1.5]
        .iter()
        .for_each(|v| sum.add(&mut acc, v));
    assert_eq!(acc.exact_sum(), None);
    assert_eq!(sum.integer_result(&acc), None);
    assert_eq!(sum.get_result(&acc), Some(TWO_53 + 1.0 + 0.5 + 1.5));
    // Count, min and max.
    let values = [TWO_53 * 512.0, -7.0, 3.0];
    let integer = |agg: NumericAggregate| {
        let mut acc = agg.create_accumulator();
        values.iter().for_each(|v| agg.add(&mut acc, v));
        agg.integer_result(&acc)
    };
    assert_eq!(integer(NumericAggregate::Count), Some(3));
    assert_eq!(integer(NumericAggregate::Max), Some(1 << 62));
    assert_eq!(integer(NumericAggregate::Min), Some(-7));
    assert_eq!(integer(NumericAggregate::Sum), Some((1 << 62) - 4));
    for agg in [
        NumericAggregate::Min,
        NumericAggregate::Max,
        NumericAggregate::Mean,
    ] {
        assert_eq!(agg.integer_result(&agg.create_accumulator()), None);
    }
    assert_eq!(sum.integer_result(&sum.create_accumulator()), Some(0));
    let mut acc = NumericAggregate::Max.create_accumulator();
    NumericAggregate::Max.add(&mut acc, &2.5);
    assert_eq!(NumericAggregate::Max.integer_result(&acc), None);
}

/// Random integers of every magnitude up to 2^62 in random splits: the sum is the exact
/// `i128` sum (rounded once to `f64`), whatever the partial sums are.
#[test]
fn integer_sums_equal_the_exact_sum_in_any_split() {
    let mut next = rng(0x5EED_0016_0006_0001);
    let sum = NumericAggregate::Sum;
    for _ in 0..2_000 {
        let n = (next() % 10) as usize;
        let values: Vec<i64> = (0..n)
            .map(|_| {
                let bits = next() % 63;
                let magnitude = (next() >> 1) & ((1_u64 << bits) - 1).max(1);
                let v = (magnitude >> (next() % 2 * 10)) as i64;
                if next().is_multiple_of(2) {
                    v
                } else {
                    -v
                }
            })
            .collect();
        // Integral f64s: the values rounded to f64 first (exact below 2^53).
        let floats: Vec<f64> = values.iter().map(|v| *v as f64).collect();
        let exact: i128 = floats.iter().map(|v| *v as i128).sum();
        let cut = (next() as usize) % (n + 1);
        let (mut left, mut right) = (sum.create_accumulator(), sum.create_accumulator());
        floats[..cut].iter().for_each(|v| sum.add(&mut left, v));
        floats[cut..].iter().for_each(|v| sum.add(&mut right, v));
        sum.merge(&mut left, right);
        let got = sum.get_result(&left).expect("a sum");
        assert_eq!(sum.integer_result(&left), Some(exact), "{floats:?}");
        assert_eq!(got, exact as f64, "{floats:?} split at {cut}");
    }
}

/// Ordinary fractional data: the sum and mean are the plain `f64` sum's, bit for bit, added
/// in order or merged from two parts (as before exact sums existed), so the strategies that
/// merge partial accumulators keep giving what they gave.
#[test]
fn fractional_sums_are_the_plain_float_sums() {
    let mut next = rng(0x5EED_0016_0006_0002);
    for _ in 0..2_000 {
        let n = 1 + (next() % 12) as usize;
        let values: Vec<f64> = (0..n)
            .map(|_| match next() % 3 {
                0 => (next() % 2001) as f64 - 1000.0,
                1 => ((next() % 200_001) as f64 - 100_000.0) / 100.0,
                _ => (next() % 1_000_000) as f64 * 1e-7,
            })
            .collect();
        let cut = (next() as usize) % (n + 1);
        let plain = values[..cut].iter().sum::<f64>() + values[cut..].iter().sum::<f64>();
        let sequential = values.iter().fold(0.0, |s, v| s + v);
        for agg in [NumericAggregate::Sum, NumericAggregate::Mean] {
            let want = |s: f64| match agg {
                NumericAggregate::Sum => s,
                _ => s / n as f64,
            };
            let mut one = agg.create_accumulator();
            values.iter().for_each(|v| agg.add(&mut one, v));
            assert_eq!(agg.get_result(&one), Some(want(sequential)), "{values:?}");
            let (mut left, mut right) = (agg.create_accumulator(), agg.create_accumulator());
            values[..cut].iter().for_each(|v| agg.add(&mut left, v));
            values[cut..].iter().for_each(|v| agg.add(&mut right, v));
            agg.merge(&mut left, right);
            assert_eq!(
                agg.get_result(&left),
                Some(want(plain)),
                "{values:?} at {cut}"
            );
        }
    }
}

/// The accumulator stays 24 bytes: sliced windows keep one per slice and key.
#[test]
fn the_accumulator_stays_three_words() {
    assert_eq!(std::mem::size_of::<NumericAcc>(), 24);
}

/// The accumulator of `values` under `agg`.
fn acc_of(agg: NumericAggregate, values: &[f64]) -> NumericAcc {
    let mut acc = agg.create_accumulator();
    for v in values {
        agg.add(&mut acc, v);
    }
    acc
}

#[test]
fn counts_and_exact_sums_retract_to_the_accumulator_of_what_remains() {
    use NumericAggregate::{Count, Max, Mean, Min, Sum};
    let big = i64::MAX as f64; // 2^63 rounds up: not in the i64 range, so a float
    let m = i64::MAX;
    // Sums beyond the i64 range stay exact: three times i64::MAX less one.
    let sum = ExactNumeric(Sum);
    let mut acc = sum.create_accumulator();
    let mut part = sum.create_accumulator();
    for v in [m, m, m, -5] {
        sum.add(&mut acc, &Number::Int(v));
    }
    sum.add(&mut part, &Number::Int(m));
    assert!(sum.retract(&mut acc, &part));
    assert_eq!(
        Sum.integer_result(&acc),
        Some(2 * i128::from(m) - 5),
        "2 * i64::MAX - 5"
    );
    let mut rest = sum.create_accumulator();
    for v in [m, -5, m] {
        sum.add(&mut rest, &Number::Int(v));
    }
    assert_eq!(acc, rest);
    assert!(sum.retract(&mut acc, &rest));
    assert_eq!(
        acc,
        NumericAcc::default(),
        "all of it: the empty accumulator"
    );
    assert_eq!(sum.get_result(&acc), NumericResult::Float(Some(0.0)));
    // Mean: from the exact sum and count of what remains.
    let mut acc = acc_of(Mean, &[1.0, 2.0, 6.0, 7.0]);
    assert!(Mean.retract(&mut acc, &acc_of(Mean, &[6.0, 2.0])));
    assert_eq!(Mean.get_result(&acc), Some(4.0));
    assert!(Mean.retract(&mut acc, &acc_of(Mean, &[1.0, 7.0])));
    assert_eq!((acc.count(), Mean.get_result(&acc)), (0, None), "count 0");
    // Count always, also over fractions.
    let mut acc = acc_of(Count, &[0.5, 1.5, f64::NAN, 3.0, big]);
    assert!(Count.retract(&mut acc, &acc_of(Count, &[0.5, f64::NAN])));
    assert_eq!(Count.get_result(&acc), Some(3.0));
    // Min and max never, not even nothing.
    for agg in [Min, Max] {
        let mut acc = acc_of(agg, &[1.0, 2.0]);
        let before = acc;
        assert!(!agg.retract(&mut acc, &acc_of(agg, &[2.0])));
        assert!(!agg.retract(&mut acc, &agg.create_accumulator()));
        assert_eq!(acc, before);
    }
    // Wrappers delegate; a reduce aggregate has no inverse.
    let mapped = MapAggregate::new(|v: &i32| f64::from(*v), Sum);
    let mut acc = mapped.create_accumulator();
    mapped.add(&mut acc, &3);
    mapped.add(&mut acc, &4);
    assert!(mapped.retract(&mut acc, &acc_of(Sum, &[3.0])));
    assert_eq!(mapped.get_result(&acc), Some(4.0));
    let max = ReduceAggregate::new(|a: i64, b: &i64| a + b);
    assert!(!max.retract(&mut Some(3), &Some(1)));
}

#[test]
fn float_sums_and_parts_that_are_not_parts_refuse_to_retract() {
    use NumericAggregate::{Count, Mean, Sum};
    for agg in [Sum, Mean] {
        // 1e17 then 1.5: the float sum absorbed the 1.5 (1e17 + 1.5 is 1e17 in f64, whose
        // step there is 16), and taking 1e17 back out would give 0, not 1.5.
        let mut acc = acc_of(agg, &[1e17, 1.5]);
        let before = acc;
        assert!(!agg.retract(&mut acc, &acc_of(agg, &[1e17])));
        assert!(!agg.retract(&mut acc, &agg.create_accumulator()), "float");
        assert_eq!(acc, before, "unchanged");
        // A float part out of an exact sum; a scaled sum.
        let mut exact = acc_of(agg, &[1.0, 2.0]);
        assert!(!agg.retract(&mut exact, &acc_of(agg, &[0.5])));
        let mut scaled = acc_of(agg, &[1e308, 1e308]);
        assert!(!agg.retract(&mut scaled, &acc_of(agg, &[1e308])));
        // More than is there, or a sum over no elements.
        let mut small = acc_of(agg, &[4.0]);
        assert!(!agg.retract(&mut small, &acc_of(agg, &[4.0, 0.0])));
        assert!(
            !agg.retract(&mut small, &acc_of(agg, &[3.0])),
            "a sum over no elements"
        );
        assert_eq!(small, acc_of(agg, &[4.0]));
        // Nothing from an exact sum: true, unchanged.
        assert!(agg.retract(&mut small, &agg.create_accumulator()));
        assert_eq!(small, acc_of(agg, &[4.0]));
    }
    let mut c = acc_of(Count, &[1.0]);
    assert!(!Count.retract(&mut c, &acc_of(Count, &[1.0, 2.0])));
    assert_eq!(c.count(), 1);
}

#[test]
fn exact_retractions_equal_merges_of_the_rest_in_random_splits() {
    // Seeded: integers up to +-2^62 (sums beyond the i64 range), split into a kept and a
    // retracted part at random; whole minus retracted equals the merge of the kept.
    let mut r = rng(0x5EED_0015);
    for agg in [
        NumericAggregate::Sum,
        NumericAggregate::Mean,
        NumericAggregate::Count,
    ] {
        for _ in 0..500 {
            let n = (r() % 12) as usize;
            let (mut whole, mut gone, mut kept) = (
                agg.create_accumulator(),
                agg.create_accumulator(),
                agg.create_accumulator(),
            );
            for _ in 0..n {
                let v = Number::Int((r() as i64) >> (1 + r() % 40));
                agg.add_number(&mut whole, v);
                let part = if r().is_multiple_of(2) {
                    &mut gone
                } else {
                    &mut kept
                };
                agg.add_number(part, v);
            }
            assert!(agg.retract(&mut whole, &gone));
            let mut merged = agg.create_accumulator();
            agg.merge(&mut merged, kept);
            assert_eq!(whole, merged, "{agg:?}");
        }
    }
}
