//! The output a worker's computation writes to: rows tagged with the moment of the one-worker
//! run that emitted them ([`Order`]), each watermark step's rows sorted into the canonical order
//! as they are pushed (module `worker` says why that order gives one output for any number of
//! workers).

use std::sync::Arc;

use window_core::{AnyWindow, Number, Timestamp, Window, WindowOutput};
use window_io::KeyId;
use window_job::JobResult;

use crate::rows::{Dense, Kind, Rare, Rows};
use crate::worker::Order;

/// The most rows a fresh block has room for (1 MiB): a block is sent with the capacity it has,
/// and the blocks that wait for the writer (a piece, the chunks after it) would otherwise each
/// keep the room of the largest block before them (massif: 80 MB of mostly empty room on
/// `sliding:1d:1s` over 1,000 flights). A block that needs more grows.
const FRESH_ROWS: usize = 1 << 15;

/// The most rows a block keeps room for in the pool ([`RowPool`]).
pub(crate) const POOLED_ROWS: usize = 1 << 16;

/// Row blocks the writer thread has written and emptied, for the workers to fill again: a
/// fresh buffer for every chunk costs the page faults of its first use (perf: a few per cent of
/// a worker's time on a job of many rows). Bounded by the writer thread.
pub(crate) type RowPool = Arc<parking_lot::Mutex<Vec<Rows>>>;

/// The moment and window of the last result a [`Tagger`] pushed: the watermark and window of
/// its output call, their indices in the block, the window's end.
#[derive(Clone, Copy, Debug)]
struct Hot {
    watermark: i64,
    window: AnyWindow,
    at: u32,
    window_at: u32,
    end: i64,
}

/// The output a worker's computation writes to: rows tagged with the current [`Order`].
#[derive(Debug, Default)]
pub(crate) struct Tagger {
    /// The moment of the rows pushed next ([`Tagger::set_order`]).
    order: Order,
    /// The watermark of the last row pushed and its moment's index in `rows`, while `order`
    /// and the block stay the same: most rows of a moment share it, so they look nothing up.
    moment: Option<(i64, u32)>,
    /// The window of the last row pushed, its index in `rows` and its end (its
    /// `max_timestamp`), while the block stays the same: most rows of a step share it.
    window: Option<(AnyWindow, u32, i64)>,
    /// The moment and window of the last result pushed, while `order` and the block stay the
    /// same ([`Tagger::push`]).
    hot: Option<Hot>,
    /// Whether the rows pushed now are a watermark step's (ranked as they are pushed, see
    /// [`Tagger::sort_step`]).
    ranking: bool,
    /// The canonical place (window end, rank) of the step's last row pushed (`(i64::MIN, 0)`
    /// before its first).
    last: (i64, u64),
    /// Whether a row of the step came before the one pushed ahead of it (canonically).
    unsorted: bool,
    pub(crate) rows: Rows,
    worker: u32,
    /// Where each key (by id) first appears in the input: `chunk << 32 | place` of its first
    /// element; `u64::MAX` for a key not met yet.
    pub(crate) ranks: Vec<u64>,
    /// A bit per key (by id): whether it has a rank.
    seen: Vec<u64>,
    /// An unsorted step's rows as `(window end, rank, place in rows)`: what
    /// [`Tagger::sort_step`] sorts (kept for its capacity).
    step_keys: Vec<(i64, u64, u32)>,
    /// Where [`Tagger::sort_step`] gathers a step's rows (kept for its capacity).
    scratch: Vec<Dense>,
    /// Where [`Tagger::take_rows`] finds emptied buffers.
    pub(crate) pool: Option<RowPool>,
}

impl Tagger {
    pub(crate) fn new(worker: u32) -> Self {
        let mut rows = Rows::default();
        rows.worker = worker;
        Self {
            worker,
            rows,
            last: (i64::MIN, 0),
            ..Self::default()
        }
    }

    /// The moment of the rows pushed last (and next, until [`Tagger::set_order`]).
    pub(crate) fn order(&self) -> Order {
        self.order
    }

    /// A block with no rows, of this worker: the last block of a chunk that fired nothing.
    pub(crate) fn empty_block(&self) -> Rows {
        let mut rows = Rows::default();
        rows.worker = self.worker;
        rows
    }

    /// Makes `order` the moment of the rows pushed next; a watermark step's (phase 0) rows are
    /// ranked from here to [`Tagger::sort_step`].
    #[inline]
    pub(crate) fn set_order(&mut self, order: Order) {
        self.order = order;
        self.moment = None;
        self.hot = None;
        self.ranking = order.phase == 0;
    }

    /// The index in `rows` of the current moment with `watermark`.
    #[inline(always)]
    fn moment(&mut self, watermark: i64) -> u32 {
        match self.moment {
            Some((w, at)) if w == watermark => at,
            _ => self.new_moment(watermark),
        }
    }

    /// [`Tagger::moment`] when the moment changed (out of line: the rows' path stays short).
    #[inline(never)]
    fn new_moment(&mut self, watermark: i64) -> u32 {
        let at = self.rows.moment(self.order, watermark);
        self.moment = Some((watermark, at));
        at
    }

    /// The index in `rows` of `window`, and its end.
    #[inline(always)]
    fn window(&mut self, window: &AnyWindow) -> (u32, i64) {
        match self.window {
            Some((w, at, end)) if w == *window => (at, end),
            _ => self.new_window(window),
        }
    }

    /// [`Tagger::window`] when the window changed.
    #[inline(never)]
    fn new_window(&mut self, window: &AnyWindow) -> (u32, i64) {
        let at = self.rows.window(window);
        let end = window.max_timestamp();
        self.window = Some((*window, at, end));
        (at, end)
    }

    /// Notes a step's row at canonical place `here` (window end, rank).
    #[inline(always)]
    fn note(&mut self, here: (i64, u64)) {
        self.unsorted |= here < self.last;
        self.last = here;
    }

    /// Adds a result or an empty result: in a watermark step, ranked by its key. The path of
    /// a row with the last row's moment and window calls nothing (so it saves no registers).
    #[inline(always)]
    fn push(&mut self, key: KeyId, window: &AnyWindow, kind: Kind, value: u64, watermark: i64) {
        match self.hot {
            Some(h) if h.watermark == watermark && h.window == *window && self.rows.has_room() => {
                let rank = self.rank(key, h.end);
                self.rows.push(key, kind, value, h.window_at, h.at, rank);
            }
            _ => self.push_cold(key, window, kind, value, watermark),
        }
    }

    /// [`Tagger::push`] of a row with another moment or window than the last, or with no room
    /// left in the block.
    #[inline(never)]
    fn push_cold(
        &mut self,
        key: KeyId,
        window: &AnyWindow,
        kind: Kind,
        value: u64,
        watermark: i64,
    ) {
        let at = self.moment(watermark);
        let (window_at, end) = self.window(window);
        self.hot = Some(Hot {
            watermark,
            window: *window,
            at,
            window_at,
            end,
        });
        let rank = self.rank(key, end);
        self.rows.push(key, kind, value, window_at, at, rank);
    }

    /// The rank of a row of `key` whose window ends at `end`: in a watermark step, the key's
    /// (noted for the canonical order), else 0.
    #[inline(always)]
    fn rank(&mut self, key: KeyId, end: i64) -> u64 {
        if self.ranking {
            let rank = self.ranks.get(key.index()).copied().unwrap_or(u64::MAX);
            self.note((end, rank));
            rank
        } else {
            0
        }
    }

    /// [`WindowOutput::result`] for a result with no inline value of the common kinds.
    #[inline(never)]
    fn other_result(&mut self, key: KeyId, window: &AnyWindow, result: JobResult, watermark: i64) {
        let (kind, value) = self.rows.payload(result);
        self.push(key, window, kind, value, watermark);
    }

    /// Notes element `idx` of chunk `chunk`, of `key`: the key's rank is its first element's
    /// place in the input, which is the same whichever worker owns the key (all its elements
    /// go to that worker, in input order), so ordering by it is the same for any number of
    /// workers; it is also the order in which keys first appear, which a reader expects.
    /// Whether a key was met is looked up in a bit set (a bit per key, in the cache), not in
    /// the ranks (8 bytes per key, a cache miss per element on a job of many keys).
    #[inline]
    pub(crate) fn first_seen(&mut self, key: KeyId, chunk: u64, idx: u32) {
        let i = key.index();
        let (word, bit) = (i / 64, 1u64 << (i % 64));
        if self.seen.get(word).is_some_and(|w| w & bit != 0) {
            return;
        }
        self.set_rank(i, (chunk << 32) | u64::from(idx));
    }

    /// Gives key `i` rank `rank` (and notes it met) unless it has one.
    pub(crate) fn set_rank(&mut self, i: usize, rank: u64) {
        if i >= self.ranks.len() {
            self.ranks.resize(i + 1, u64::MAX);
            self.seen.resize(i / 64 + 1, 0);
        }
        if self.ranks[i] == u64::MAX {
            self.ranks[i] = rank;
            self.seen[i / 64] |= 1u64 << (i % 64);
        }
    }

    /// The rows so far, taken whole to be sent on; the next rows go to an emptied buffer from
    /// the pool, or a new one of the same capacity (a chunk's rows are about as many as the
    /// last chunk's), at most [`FRESH_ROWS`].
    pub(crate) fn take_rows(&mut self) -> Rows {
        let capacity = self.rows.len().min(FRESH_ROWS);
        let mut next = self
            .pool
            .as_ref()
            .and_then(|p| p.lock().pop())
            .unwrap_or_else(|| Rows::with_capacity(capacity));
        next.worker = self.worker;
        self.moment = None;
        self.window = None;
        self.hot = None;
        std::mem::replace(&mut self.rows, next)
    }

    /// Adds a bad record, a failed read or a failed element.
    pub(crate) fn push_rare(&mut self, rare: Rare) {
        if self.ranking {
            self.note((i64::MIN, 0));
        }
        let at = self.moment(i64::MIN);
        self.rows.push_rare(rare, at);
    }

    /// Sorts the rows from `from` on, the rows of one watermark step just fired (ranked as they
    /// were pushed: a key's rank does not change within a step, no element comes in it), into
    /// the canonical order ([`Rows::canonical`]; rows of one key keep their emission order), so
    /// that the writer only merges the workers' rows. A step already in order (one key group's
    /// computation fires a step's windows in the order its keys came) is left alone: whether it
    /// is was noted as its rows were pushed. Otherwise (rows of several key groups) the step's
    /// keys are sorted, with each row's place as the last key (so ties keep their order), and
    /// the rows (32 bytes each) gathered in that order. Every row of the step has the moment of
    /// the step (phase 0).
    pub(crate) fn sort_step(&mut self, from: usize) {
        self.ranking = false;
        self.last = (i64::MIN, 0);
        if std::mem::take(&mut self.unsorted) {
            let mut keys = std::mem::take(&mut self.step_keys);
            keys.clear();
            keys.extend((from..self.rows.len()).map(|i| {
                let (_, end, rank) = self.rows.canonical(i);
                (end, rank, i as u32)
            }));
            // Stable: driftsort finds the runs the key groups fired (each in order) and merges
            // them, where an unstable sort sorted from scratch (cachegrind: 3x the instructions).
            keys.sort();
            // Gathered in the sorted order: each key group's run is read in order (a few
            // sequential streams), the rows written in order.
            let places = keys.iter().map(|k| k.2 as usize);
            self.rows.permute(from, places, &mut self.scratch);
            self.step_keys = keys;
        }
    }
}

impl WindowOutput<KeyId, AnyWindow, Number, JobResult> for Tagger {
    #[inline]
    fn result(&mut self, key: &KeyId, window: &AnyWindow, result: JobResult, watermark: Timestamp) {
        let (kind, value) = match result {
            JobResult::Number(Some(v)) => (Kind::Number, v.to_bits()),
            JobResult::Integer(i) if i64::try_from(i).is_ok() => (Kind::Integer, i as i64 as u64),
            other => return self.other_result(*key, window, other, watermark),
        };
        self.push(*key, window, kind, value, watermark);
    }

    fn late(&mut self, key: KeyId, timestamp: Timestamp, value: Number, watermark: Timestamp) {
        if self.ranking {
            self.note((i64::MIN, 0));
        }
        let at = self.moment(watermark);
        self.rows.push_late(key, (timestamp, value), at);
    }

    fn emptied(&mut self, key: &KeyId, window: &AnyWindow, watermark: Timestamp) {
        self.push(*key, window, Kind::Emptied, 0, watermark);
    }
}
