//! The rows the operator's thread hands to the output thread, in batches: 16 bytes per result.
//!
//! Every row crosses from one core to the other: the operator's thread writes it into memory the
//! writer thread read last, so each cache line of a batch is a transfer between the cores, and on
//! the 100 k Zipf keys sliced job (10 M rows) those stores were the operator thread's largest
//! cost (perf: the stores into the batch and the stalls behind them). So a row holds only what
//! changes from row to row, the key, the value and what kind of row it is (16 bytes, four rows
//! per cache line; the enum of whole rows took 48). The window, which the rows of one firing
//! round share, goes into the batch once per change of window, and the rare rows (exact
//! integers, several aggregates, late elements) keep their payload in a side list of the batch.

use engine::core::{Number, NumericResult};
use engine::io::KeyId;

/// What a [`Row`] is, and where its payload lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A result, `value` the bits of its `f64`, in the current window.
    Number,
    /// A result without a value (the mean of nothing), in the current window.
    NoValue,
    /// A key's empty result (key windows), in the current window.
    Emptied,
    /// An exact integer result, `value` its index in [`Batch::integers`].
    Integer,
    /// A result of several aggregates, `value` its index in [`Batch::several`].
    Several,
    /// A late element, `value` its index in [`Batch::late`].
    Late,
    /// The rows after it are in the window at index `value` of [`Batch::windows`].
    Window,
}

/// One row: 16 bytes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Row {
    pub(super) key: KeyId,
    pub(super) kind: Kind,
    pub(super) value: u64,
}

/// A late element's parts besides its key.
#[derive(Clone, Copy, Debug)]
pub(super) struct Late {
    pub(super) timestamp: i64,
    pub(super) value: Number,
    pub(super) watermark: i64,
}

/// Rows handed over at once, in emission order, with their windows and rare payloads.
#[derive(Debug, Default)]
pub(super) struct Batch {
    pub(super) rows: Vec<Row>,
    /// The windows' bounds (`None`: the global window), in the order the rows switch to them.
    pub(super) windows: Vec<Option<(i64, i64)>>,
    pub(super) integers: Vec<i128>,
    pub(super) several: Vec<Vec<NumericResult>>,
    pub(super) late: Vec<Late>,
    /// The window of the last result row pushed, if it was pushed into this batch.
    current: Option<Option<(i64, i64)>>,
}

/// Whether a batch is full: rows (windows included) handed over at a time, large enough that
/// the channel and the wake-up of the writer cost nothing per row (4096 rows of the 48-byte
/// enum ran the 100 k Zipf sliced job and the default job 6-8 % faster than 1024; at 16 bytes
/// a batch of 8192 is 128 KiB, less than the 4096 old rows' 192 KiB).
pub(super) const ROWS_PER_BATCH: usize = 8192;

impl Batch {
    pub(super) fn with_capacity(rows: usize) -> Self {
        Self {
            rows: Vec::with_capacity(rows),
            ..Self::default()
        }
    }

    pub(super) fn len(&self) -> usize {
        self.rows.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Empties the batch, keeping its buffers.
    pub(super) fn clear(&mut self) {
        self.rows.clear();
        self.windows.clear();
        self.integers.clear();
        self.several.clear();
        self.late.clear();
        self.current = None;
    }

    /// Makes `window` the current window of the rows pushed next.
    #[inline]
    fn in_window(&mut self, key: KeyId, window: Option<(i64, i64)>) {
        if self.current != Some(window) {
            self.current = Some(window);
            let value = self.windows.len() as u64;
            self.windows.push(window);
            self.rows.push(Row {
                key,
                kind: Kind::Window,
                value,
            });
        }
    }

    /// A result row of `kind` (one of the current window's) in `window`.
    #[inline]
    pub(super) fn push_result(
        &mut self,
        key: KeyId,
        window: Option<(i64, i64)>,
        kind: Kind,
        value: u64,
    ) {
        self.in_window(key, window);
        self.rows.push(Row { key, kind, value });
    }

    pub(super) fn push_integer(&mut self, key: KeyId, window: Option<(i64, i64)>, value: i128) {
        let index = self.integers.len() as u64;
        self.integers.push(value);
        self.push_result(key, window, Kind::Integer, index);
    }

    pub(super) fn push_several(
        &mut self,
        key: KeyId,
        window: Option<(i64, i64)>,
        values: Vec<NumericResult>,
    ) {
        let index = self.several.len() as u64;
        self.several.push(values);
        self.push_result(key, window, Kind::Several, index);
    }

    pub(super) fn push_late(&mut self, key: KeyId, late: Late) {
        let value = self.late.len() as u64;
        self.late.push(late);
        self.rows.push(Row {
            key,
            kind: Kind::Late,
            value,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_16_bytes() {
        assert_eq!(std::mem::size_of::<Row>(), 16);
    }

    #[test]
    fn windows_go_in_once_per_change() {
        let k = |_: u32| KeyId::default();
        let mut b = Batch::with_capacity(8);
        b.push_result(k(0), Some((0, 10)), Kind::Number, 1);
        b.push_result(k(1), Some((0, 10)), Kind::NoValue, 0);
        b.push_late(
            k(2),
            Late {
                timestamp: 3,
                value: Number::Int(4),
                watermark: 5,
            },
        );
        b.push_result(k(3), Some((0, 10)), Kind::Emptied, 0);
        b.push_integer(k(4), None, 7);
        let kinds: Vec<Kind> = b.rows.iter().map(|r| r.kind).collect();
        let expected = [
            Kind::Window,
            Kind::Number,
            Kind::NoValue,
            Kind::Late,
            Kind::Emptied,
            Kind::Window,
            Kind::Integer,
        ];
        assert_eq!(kinds, expected);
        assert_eq!(b.windows, [Some((0, 10)), None]);
        assert_eq!(b.integers, [7]);
        b.clear();
        assert!(b.is_empty());
        // After a clear the window goes in again.
        b.push_result(k(0), None, Kind::Number, 1);
        assert_eq!(b.rows[0].kind, Kind::Window);
    }
}
