//! Several numeric aggregates of one value in one accumulator (`windowctl --agg count,sum,max`).

use std::fmt;

use super::{
    AggregateFunction, ExactNumeric, Number, NumericAggregate, NumericResult, NumericStats,
};

/// Several distinct [`NumericAggregate`]s of the same [`Number`] values, computed in one window
/// state: one [`NumericStats`] accumulator (count and sum as [`NumericAggregate::Sum`] keeps
/// them, minimum and maximum as [`NumericAggregate::Min`] and [`NumericAggregate::Max`] keep
/// them: exact over integers), and as result the listed aggregates' results in the order of the
/// list.
///
/// Each result is what the single aggregate gives ([`ExactNumeric`]) over the same values, adds
/// and merges: `--agg count,max` writes the `--agg count` and `--agg max` results side by side.
/// The accumulator is 72 bytes, where a single aggregate's [`super::NumericAcc`] is 24; a result
/// is a `Vec` (one allocation per firing). This is Flink's `AggregateFunction` with a composite
/// accumulator and a tuple result, as a user writes one to compute several statistics in one
/// pass.
///
/// # Examples
/// ```
/// use window_core::{AggregateFunction, Number, NumericAggregate, NumericAggregates, NumericResult};
/// let f = NumericAggregates::new(&[NumericAggregate::Count, NumericAggregate::Max]).unwrap();
/// let mut acc = f.create_accumulator();
/// for v in [3, 9, 4] { f.add(&mut acc, &Number::Int(v)); }
/// assert_eq!(
///     f.get_result(&acc),
///     vec![NumericResult::Float(Some(3.0)), NumericResult::Float(Some(9.0))]
/// );
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

/// Over [`Number`] values, each result as [`ExactNumeric`] gives it (exact integers beyond
/// 2^53).
impl AggregateFunction<Number> for NumericAggregates {
    type Acc = NumericStats;
    type Out = Vec<NumericResult>;

    fn create_accumulator(&self) -> NumericStats {
        NumericStats::default()
    }

    #[inline]
    fn add(&self, acc: &mut NumericStats, value: &Number) {
        acc.add_number(*value);
    }

    #[inline]
    fn merge(&self, acc: &mut NumericStats, other: NumericStats) {
        acc.merge(&other);
    }

    fn get_result(&self, acc: &NumericStats) -> Vec<NumericResult> {
        self.as_slice()
            .iter()
            .map(|&a| ExactNumeric(a).of(acc))
            .collect()
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

    /// A result as bits, so that NaN equals NaN.
    fn bits(r: NumericResult) -> (Option<u64>, Option<i128>) {
        match r {
            NumericResult::Float(f) => (f.map(f64::to_bits), None),
            NumericResult::Integer(i) => (None, Some(i)),
        }
    }

    /// Every column equals the single aggregate's result ([`ExactNumeric`]) over the same adds
    /// and merges, exact integers included, and an empty accumulator gives what single ones
    /// give.
    #[test]
    fn each_result_is_the_single_aggregates_result() {
        let all = [Count, Sum, Min, Max, Mean];
        let f = NumericAggregates::new(&all).unwrap();
        let values = [
            Number::Int(9_007_199_254_740_993),
            Number::Float(1.0),
            Number::Int(-4),
            Number::Float(2.5),
            Number::Float(f64::NAN),
            Number::Float(1e308),
            Number::Float(1e308),
        ];
        for end in [2, values.len()] {
            let values = &values[..end];
            for split in 0..=values.len() {
                let (a, b) = values.split_at(split);
                let mut left = f.create_accumulator();
                a.iter().for_each(|v| f.add(&mut left, v));
                let mut right = f.create_accumulator();
                b.iter().for_each(|v| f.add(&mut right, v));
                f.merge(&mut left, right);
                let got = f.get_result(&left);
                for (i, &single) in all.iter().enumerate() {
                    let single = ExactNumeric(single);
                    let mut sl = single.create_accumulator();
                    a.iter().for_each(|v| single.add(&mut sl, v));
                    let mut sr = single.create_accumulator();
                    b.iter().for_each(|v| single.add(&mut sr, v));
                    single.merge(&mut sl, sr);
                    let want = single.get_result(&sl);
                    assert_eq!(
                        bits(got[i]),
                        bits(want),
                        "{single:?} at split {split} of {end}"
                    );
                }
            }
        }
        // The first two values: the sum and the maximum are exact integers.
        let mut acc = f.create_accumulator();
        values[..2].iter().for_each(|v| f.add(&mut acc, v));
        assert_eq!(
            f.get_result(&acc),
            vec![
                NumericResult::Float(Some(2.0)),
                NumericResult::Integer(9_007_199_254_740_994),
                NumericResult::Float(Some(1.0)),
                NumericResult::Integer(9_007_199_254_740_993),
                NumericResult::Float(Some(4_503_599_627_370_497.0)),
            ]
        );
        assert_eq!(
            f.get_result(&f.create_accumulator()),
            vec![
                NumericResult::Float(Some(0.0)),
                NumericResult::Float(Some(0.0)),
                NumericResult::Float(None),
                NumericResult::Float(None),
                NumericResult::Float(None)
            ]
        );
    }
}
