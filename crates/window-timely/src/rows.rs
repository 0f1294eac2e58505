//! A worker's output rows, compactly: 32 bytes a row, in blocks.
//!
//! Every result a worker's computation emits crosses to the writer thread as a row, so the cost
//! of a row is paid some ten million times on a job of many keys and small slides. A row was an
//! enum of every kind of row with its window, its `JobResult` (an `i128` and vectors) and its
//! moment (about 120 bytes, dropped one by one). Here a row ([`Dense`]) holds only what changes
//! from row to row, in the spirit of windowctl's output batches: the key, the key's rank (the
//! canonical order's tie-break), what kind of row it is, a value inline (the bits of an `f64`
//! result, an integer result that fits in 64 bits) and the indices of its moment and window. The
//! block ([`Rows`]) stores each moment and each window once per change (the rows of one firing
//! round share them), and the rare payloads (several numbers, integers beyond 64 bits, late
//! elements, bad records, failures) in side lists.

use serde::{Deserialize, Serialize};
use window_core::{AnyWindow, Number, Window, WindowOutput};
use window_io::KeyId;
use window_job::JobResult;

use crate::parse::ChunkError;
use crate::worker::Order;

/// What a [`Dense`] row is, and where its payload lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Kind {
    /// A result, `value` the bits of its `f64`.
    Number,
    /// A result without a value (`JobResult::Number(None)`).
    NoValue,
    /// An integer result, `value` the bits of its `i64`.
    Integer,
    /// Another result, `value` its index in [`Rows::results`].
    Result,
    /// A key window or slice emitted empty.
    Emptied,
    /// A late element, `value` its index in [`Rows::lates`].
    Late,
    /// A bad record, a failed read or a failed element, `value` its index in [`Rows::rare`].
    Rare,
}

/// One row: 32 bytes.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub(crate) struct Dense {
    #[serde(with = "crate::wire::key_text")]
    key: KeyId,
    /// Index of its moment in [`Rows::moments`].
    moment: u32,
    /// Index of its window in [`Rows::windows`] (results and empty results).
    window: u32,
    kind: Kind,
    value: u64,
    /// For results and empty results fired by a watermark step: where the key first appears in
    /// the input; 0 for other rows.
    rank: u64,
}

/// A rare row's payload.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum Rare {
    /// A bad record or a rejected element of an input (its index), for the error policy; or
    /// a failed read.
    Error(u32, ChunkError),
    /// An element of input `input` the computation cannot go on with: the job stops here.
    ElementFailed {
        message: String,
        line: u64,
        input: u32,
    },
}

/// One worker's rows of one chunk (or final step), in the canonical order.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Rows {
    /// The worker that emitted them (the writer merges each worker's rows).
    pub(crate) worker: u32,
    rows: Vec<Dense>,
    /// The rows' moments with the watermark their output call gave, once per change.
    moments: Vec<(Order, i64)>,
    /// The rows' windows, once per change.
    windows: Vec<AnyWindow>,
    /// Results with no inline value.
    results: Vec<JobResult>,
    /// Late elements: timestamp and value.
    lates: Vec<(i64, Number)>,
    rare: Vec<Rare>,
    /// The worker's part of the cut after the chunk, if one is taken there: the writer takes
    /// it out ([`crate::cut`]).
    pub(crate) cut: Option<crate::cut::Travelling>,
    /// `None`: the worker's last block of its timestamp. `Some((o, e))`: a piece of a chunk
    /// the worker is still processing (module `operator`); its later rows of the chunk all
    /// come after moment `o` and window end `e` in the canonical order, so its rows up to there
    /// are all here or in earlier pieces.
    pub(crate) piece: Option<(Order, i64)>,
}

/// A row taken out of a block, as the job's output takes it.
pub(crate) enum Taken<'a> {
    /// A result.
    Result(KeyId, &'a AnyWindow, JobResult, i64),
    /// A key window or slice emitted empty.
    Emptied(KeyId, &'a AnyWindow, i64),
    /// A late element: key, timestamp, value, watermark.
    Late(KeyId, i64, Number, i64),
    /// A bad record, a failed read or a failed element.
    Rare(Rare),
}

impl Rows {
    /// An empty block with room for `rows` rows.
    pub(crate) fn with_capacity(rows: usize) -> Self {
        Self {
            rows: Vec::with_capacity(rows),
            ..Self::default()
        }
    }

    /// The number of rows.
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether a row fits without growing the block.
    #[inline(always)]
    pub(crate) fn has_room(&self) -> bool {
        self.rows.len() < self.rows.capacity()
    }

    /// Whether there are no rows.
    pub(crate) fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Whether it has room for any row.
    pub(crate) fn has_capacity(&self) -> bool {
        self.rows.capacity() > 0
    }

    /// Keeps room for at most `rows` rows (and as many moments and windows).
    pub(crate) fn shrink_to(&mut self, rows: usize) {
        self.rows.shrink_to(rows);
        self.moments.shrink_to(rows);
        self.windows.shrink_to(rows);
    }

    /// Empties the block, keeping its buffers.
    pub(crate) fn clear(&mut self) {
        self.rows.clear();
        self.moments.clear();
        self.windows.clear();
        self.results.clear();
        self.lates.clear();
        self.rare.clear();
        self.cut = None;
        self.piece = None;
    }

    /// The index of moment `(order, watermark)`: the last one's if it is the same.
    #[inline]
    pub(crate) fn moment(&mut self, order: Order, watermark: i64) -> u32 {
        if self.moments.last() != Some(&(order, watermark)) {
            self.moments.push((order, watermark));
        }
        (self.moments.len() - 1) as u32
    }

    /// The index of `window`: the last one's if it is the same.
    #[inline]
    pub(crate) fn window(&mut self, window: &AnyWindow) -> u32 {
        if self.windows.last() != Some(window) {
            self.windows.push(*window);
        }
        (self.windows.len() - 1) as u32
    }

    /// The kind and inline value of a result row for `result` (a payload with no inline value
    /// goes to [`Rows::results`]).
    pub(crate) fn payload(&mut self, result: JobResult) -> (Kind, u64) {
        match result {
            JobResult::Number(Some(v)) => (Kind::Number, v.to_bits()),
            JobResult::Number(None) => (Kind::NoValue, 0),
            JobResult::Integer(i) if i64::try_from(i).is_ok() => (Kind::Integer, i as i64 as u64),
            other => {
                self.results.push(other);
                (Kind::Result, (self.results.len() - 1) as u64)
            }
        }
    }

    /// Adds a late element.
    pub(crate) fn push_late(&mut self, key: KeyId, late: (i64, Number), at: u32) {
        self.lates.push(late);
        let value = (self.lates.len() - 1) as u64;
        self.push(key, Kind::Late, value, 0, at, 0);
    }

    /// Adds a bad record, a failed read or a failed element.
    pub(crate) fn push_rare(&mut self, rare: Rare, at: u32) {
        self.rare.push(rare);
        let value = (self.rare.len() - 1) as u64;
        self.push(KeyId::default(), Kind::Rare, value, 0, at, 0);
    }

    /// Adds a row: `window` and `at` are indices from [`Rows::window`] and [`Rows::moment`],
    /// `rank` the key's rank for a row fired by a watermark step (0 for other rows).
    #[inline(always)]
    pub(crate) fn push(
        &mut self,
        key: KeyId,
        kind: Kind,
        value: u64,
        window: u32,
        at: u32,
        rank: u64,
    ) {
        self.rows.push(Dense {
            key,
            moment: at,
            window,
            kind,
            value,
            rank,
        });
    }

    /// Puts the rows from `from` on in the order of `places` (each an index of one of them).
    pub(crate) fn permute(
        &mut self,
        from: usize,
        places: impl Iterator<Item = usize>,
        scratch: &mut Vec<Dense>,
    ) {
        scratch.clear();
        scratch.extend(places.map(|at| self.rows[at]));
        self.rows.truncate(from);
        self.rows.append(scratch);
    }

    /// Row `i`'s place in the canonical order: its moment, and within a watermark step its
    /// window end and its key's first appearance in the input. Rows that tie are of one key,
    /// from one worker: they keep the order it emitted them in.
    pub(crate) fn canonical(&self, i: usize) -> (Order, i64, u64) {
        let row = &self.rows[i];
        let end = match row.kind {
            Kind::Late | Kind::Rare => i64::MIN,
            _ => self.windows[row.window as usize].max_timestamp(),
        };
        (self.moments[row.moment as usize].0, end, row.rank)
    }

    /// Writes the rows from `from` on to `out`, up to the first rare row (bad records and
    /// failures go to the writer's error policy, not to `out`); returns that row's index, or
    /// the number of rows. One worker's rows are written here, in one loop: no row is taken
    /// out of the block on its own. (Not through [`Rows::take`] and its `Taken`: that cost
    /// +4.5 % instructions on the Zipf sliced job with `--workers 1`, cachegrind, 200k events.)
    pub(crate) fn write_plain<O>(&mut self, from: usize, out: &mut O) -> usize
    where
        O: WindowOutput<KeyId, AnyWindow, Number, JobResult>,
    {
        for i in from..self.rows.len() {
            let row = self.rows[i];
            let watermark = self.moments[row.moment as usize].1;
            let result = match row.kind {
                Kind::Number | Kind::NoValue | Kind::Integer | Kind::Result => {
                    self.take_result(row)
                }
                Kind::Emptied => {
                    out.emptied(&row.key, &self.windows[row.window as usize], watermark);
                    continue;
                }
                Kind::Late => {
                    let (timestamp, value) = self.lates[row.value as usize];
                    out.late(row.key, timestamp, value, watermark);
                    continue;
                }
                Kind::Rare => return i,
            };
            out.result(
                &row.key,
                &self.windows[row.window as usize],
                result,
                watermark,
            );
        }
        self.rows.len()
    }

    /// The result of a result row (kind `Number`, `NoValue`, `Integer` or `Result`), its payload
    /// taken out of the block.
    #[inline(always)]
    fn take_result(&mut self, row: Dense) -> JobResult {
        match row.kind {
            Kind::Number => JobResult::Number(Some(f64::from_bits(row.value))),
            Kind::Integer => JobResult::Integer(i128::from(row.value as i64)),
            Kind::Result => std::mem::replace(
                &mut self.results[row.value as usize],
                JobResult::Number(None),
            ),
            _ => JobResult::Number(None),
        }
    }

    /// Row `i`, its payload taken out of the block (a rare payload is left empty).
    #[inline]
    pub(crate) fn take(&mut self, i: usize) -> Taken<'_> {
        let row = self.rows[i];
        let watermark = self.moments[row.moment as usize].1;
        let result = match row.kind {
            Kind::Number | Kind::NoValue | Kind::Integer | Kind::Result => self.take_result(row),
            Kind::Emptied => {
                let window = &self.windows[row.window as usize];
                return Taken::Emptied(row.key, window, watermark);
            }
            Kind::Late => {
                let (timestamp, value) = self.lates[row.value as usize];
                return Taken::Late(row.key, timestamp, value, watermark);
            }
            Kind::Rare => {
                let empty = Rare::Error(0, ChunkError::Failed(String::new()));
                return Taken::Rare(std::mem::replace(&mut self.rare[row.value as usize], empty));
            }
        };
        Taken::Result(
            row.key,
            &self.windows[row.window as usize],
            result,
            watermark,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Dense>(), 32);
    }
}
