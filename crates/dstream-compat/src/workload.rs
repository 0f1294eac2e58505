//! A ready-made keyed-sum job over prepared batches, in the plain or the incremental form of
//! `reduceByKeyAndWindow`, so that a benchmark (`benches/`, window of 60 batches) and the
//! tests can compare the two forms on the same input with one call.
//!
//! The two forms give the same sum for every key with values in the window; the incremental
//! one also keeps keys whose values left the window, with 0. So [`Summary::total`] and
//! [`Summary::nonzero_records`] agree between the forms (for non-zero values), while
//! [`Summary::records`] may not.

use crate::error::Result;
use crate::{InverseReduce, Partitions, StreamingContext};

/// Which `reduceByKeyAndWindow` computes the windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Form {
    /// `reduce_by_key_and_window`: every window recomputed from its batches.
    Plain,
    /// `reduce_by_key_and_window_inv` with `-`: previous window + entering − leaving batches.
    Incremental,
}

/// What a run produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    outputs: usize,
    records: usize,
    nonzero_records: usize,
    total: i64,
}

impl Summary {
    /// The number of windows output (one per slide).
    #[must_use]
    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// The number of `(key, sum)` records over all windows.
    #[must_use]
    pub fn records(&self) -> usize {
        self.records
    }

    /// The number of records whose sum is not 0.
    #[must_use]
    pub fn nonzero_records(&self) -> usize {
        self.nonzero_records
    }

    /// The sum of all window sums (wrapping).
    #[must_use]
    pub fn total(&self) -> i64 {
        self.total
    }
}

/// Sums per key over windows of `window_batches` batches sliding every `slide_batches`
/// batches, over `batches` (batch `i` at `(i + 1) · batch_interval` ms), in the given form;
/// runs until the last window that can hold a batch of the input.
///
/// # Errors
/// [`crate::Error::InvalidBatchInterval`] for a non-positive interval; a zero
/// `slide_batches` fails as a zero slide does ([`crate::Error::ZeroSlide`]).
///
/// # Examples
/// ```
/// use dstream_compat::workload::{run_sum_by_key_and_window, synthetic_batches, Form};
///
/// let batches = synthetic_batches(7, 200, 50, 1000);
/// let plain = run_sum_by_key_and_window(&batches, 1000, 60, 1, Form::Plain)?;
/// let incremental = run_sum_by_key_and_window(&batches, 1000, 60, 1, Form::Incremental)?;
/// assert_eq!(plain.total(), incremental.total());
/// assert_eq!(plain.nonzero_records(), incremental.nonzero_records());
/// assert_eq!(plain.outputs(), 259);
/// # Ok::<(), dstream_compat::Error>(())
/// ```
pub fn run_sum_by_key_and_window(
    batches: &[Vec<(u32, i64)>],
    batch_interval: i64,
    window_batches: u32,
    slide_batches: u32,
    form: Form,
) -> Result<Summary> {
    let ssc = StreamingContext::new(batch_interval)?;
    let input = ssc.queue_stream(batches.iter().cloned());
    let window = batch_interval.saturating_mul(i64::from(window_batches));
    let slide = batch_interval.saturating_mul(i64::from(slide_batches));
    let sums = match form {
        Form::Plain => {
            input.reduce_by_key_and_window(|a, b| a + b, window, slide, Partitions::Default)?
        }
        Form::Incremental => input.reduce_by_key_and_window_inv(
            InverseReduce::new(|a: &i64, b: &i64| a + b, |a: &i64, b: &i64| a - b),
            window,
            slide,
        )?,
    };
    let summary = std::rc::Rc::new(std::cell::Cell::new(Summary {
        outputs: 0,
        records: 0,
        nonzero_records: 0,
        total: 0,
    }));
    let sink = std::rc::Rc::clone(&summary);
    sums.foreach_batch(move |_, records| {
        let mut s = sink.get();
        s.outputs += 1;
        s.records += records.len();
        for (_, v) in records {
            s.total = s.total.wrapping_add(*v);
            s.nonzero_records += usize::from(*v != 0);
        }
        sink.set(s);
    })?;
    ssc.start()?;
    // The last batch leaves the last window that holds it at `last + window - interval`.
    let last = batch_interval.saturating_mul(i64::try_from(batches.len()).unwrap_or(i64::MAX));
    ssc.run_until(
        last.saturating_add(window)
            .saturating_sub(batch_interval)
            .max(last),
    )?;
    Ok(summary.get())
}

/// `batches` batches of `records_per_batch` records `(key, value)`, keys uniform in
/// `0..keys`, values in `1..=100`, from a fixed seed (SplitMix64), so runs are repeatable.
#[must_use]
pub fn synthetic_batches(
    seed: u64,
    batches: usize,
    records_per_batch: usize,
    keys: u32,
) -> Vec<Vec<(u32, i64)>> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let keys = u64::from(keys.max(1));
    (0..batches)
        .map(|_| {
            (0..records_per_batch)
                .map(|_| {
                    let key = u32::try_from(next() % keys).unwrap_or(0);
                    let value = i64::try_from(next() % 100).unwrap_or(0) + 1;
                    (key, value)
                })
                .collect()
        })
        .collect()
}
