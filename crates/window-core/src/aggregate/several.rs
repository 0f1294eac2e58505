//! Several numeric aggregates of one value in one accumulator (`windowctl --agg count,sum,max`).

use std::fmt;

use super::{AggregateFunction, NumericAggregate, NumericStats};

/// Several distinct [`NumericAggregate`]s of the same `f64` values, computed in one window
/// state: one [`NumericStats`] accumulator (count and sum as [`NumericAggregate::Sum`] keeps
/// them, exact over integers; smallest and largest value), and as result the listed aggregates'
/// results in the order of the list.
///
/// Each result is what the single aggregate gives over the same values, adds and merges
/// (`NumericAggregate::of` on the statistics): `--agg count,max` writes the `--agg count` and
/// `--agg max` results side by side. The accumulator is 40 bytes, where a single aggregate's
/// [`super::NumericAcc`] is 24; a result is a `Vec` (one allocation per firing). This is
/// Flink's `AggregateFunction` with a composite accumulator and a tuple result, as a user
/// writes one to compute several statistics in one pass.
///
/// # Examples
/// ```
/// use window_core::{AggregateFunction, NumericAggregate, NumericAggregates};
/// let f = NumericAggregates::new(&[NumericAggregate::Count, NumericAggregate::Max]).unwrap();
/// let mut acc = f.create_accumulator();
/// for v in [3.0, 9.0, 4.0] { f.add(&mut acc, &v); }
/// assert_eq!(f.get_result(&acc), vec![Some(3.0), Some(9.0)]);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct NumericAggregates {
    /// The aggregates, the first `len` in use.
    list: [NumericAggregate; 5],
    /// How many are listed (1 to 5).
    len: u8,
}

/// A list of aggregates [`NumericAggregates::new`] refuses.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AggregateListError {
    /// No aggregate listed.
    Empty,
    /// An aggregate listed twice (it would give two columns of one name).
    Duplicate(NumericAggregate),
}

impl fmt::Display for AggregateListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AggregateListError::Empty => f.write_str("no aggregate listed"),
            AggregateListError::Duplicate(a) => {
                write!(f, "{} is listed twice (each aggregate once)", a.name())
            }
        }
    }
}

impl std::error::Error for AggregateListError {}

impl NumericAggregates {
    /// The aggregates of `list`, in its order.
    ///
    /// # Errors
    /// An empty list, or one that names an aggregate twice.
    pub fn new(list: &[NumericAggregate]) -> Result<Self, AggregateListError> {
        let mut kept = [NumericAggregate::Count; 5];
        let mut len = 0;
        for &a in list {
            if kept[..len].contains(&a) {
                return Err(AggregateListError::Duplicate(a));
            }
            // Five distinct aggregates exist: a sixth one is a duplicate, found above.
            kept[len] = a;
            len += 1;
        }
        if len == 0 {
            return Err(AggregateListError::Empty);
        }
        Ok(Self {
            list: kept,
            len: len as u8,
        })
    }

    /// The aggregates, in the order given.
    #[must_use]
    pub fn as_slice(&self) -> &[NumericAggregate] {
        &self.list[..usize::from(self.len)]
    }

    /// How many aggregates are listed (at least one).
    #[must_use]
    #[allow(clippy::len_without_is_empty)] // never empty
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }
}

impl fmt::Display for NumericAggregates {
    /// The names, comma-separated: `count,sum,max`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, a) in self.as_slice().iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str(a.name())?;
        }
        Ok(())
    }
}

impl AggregateFunction<f64> for NumericAggregates {
    type Acc = NumericStats;
    type Out = Vec<Option<f64>>;

    fn create_accumulator(&self) -> NumericStats {
        NumericStats::default()
    }

    #[inline]
    fn add(&self, acc: &mut NumericStats, value: &f64) {
        acc.add(*value);
    }

    #[inline]
    fn merge(&self, acc: &mut NumericStats, other: NumericStats) {
        acc.merge(&other);
    }

    /// The listed aggregates' results, in the list's order (`None` where the single aggregate
    /// gives `None`: min, max and mean of no elements).
    fn get_result(&self, acc: &NumericStats) -> Vec<Option<f64>> {
        self.as_slice().iter().map(|a| a.of(acc)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use NumericAggregate::{Count, Max, Mean, Min, Sum};

    #[test]
    fn lists_are_distinct_and_keep_their_order() {
        let f = NumericAggregates::new(&[Max, Count, Mean]).unwrap();
        assert_eq!(f.as_slice(), [Max, Count, Mean]);
        assert_eq!(f.to_string(), "max,count,mean");
        assert_eq!(
            NumericAggregates::new(&[Sum, Min, Sum]),
            Err(AggregateListError::Duplicate(Sum))
        );
        assert_eq!(
            NumericAggregates::new(&[Sum, Min, Sum])
                .unwrap_err()
                .to_string(),
            "sum is listed twice (each aggregate once)"
        );
        assert_eq!(NumericAggregates::new(&[]), Err(AggregateListError::Empty));
        assert_eq!(
            NumericAggregates::new(&[Count, Sum, Min, Max, Mean])
                .unwrap()
                .len(),
            5
        );
    }

    /// Every column equals the single aggregate's result over the same adds and merges,
    /// exact integer sums included, and an empty accumulator gives what single ones give.
    #[test]
    fn each_result_is_the_single_aggregates_result() {
        let all = [Count, Sum, Min, Max, Mean];
        let f = NumericAggregates::new(&all).unwrap();
        let values = [
            9_007_199_254_740_993.0,
            1.0,
            -4.0,
            2.5,
            f64::NAN,
            1e308,
            1e308,
        ];
        for split in 0..=values.len() {
            let (a, b) = values.split_at(split);
            let mut left = f.create_accumulator();
            a.iter().for_each(|v| f.add(&mut left, v));
            let mut right = f.create_accumulator();
            b.iter().for_each(|v| f.add(&mut right, v));
            f.merge(&mut left, right);
            let got = f.get_result(&left);
            for (i, single) in all.iter().enumerate() {
                let mut sl = single.create_accumulator();
                a.iter().for_each(|v| single.add(&mut sl, v));
                let mut sr = single.create_accumulator();
                b.iter().for_each(|v| single.add(&mut sr, v));
                single.merge(&mut sl, sr);
                let want = single.get_result(&sl);
                assert_eq!(
                    got[i].map(f64::to_bits),
                    want.map(f64::to_bits),
                    "{single:?} at split {split}"
                );
            }
        }
        assert_eq!(
            f.get_result(&f.create_accumulator()),
            vec![Some(0.0), Some(0.0), None, None, None]
        );
    }
}
