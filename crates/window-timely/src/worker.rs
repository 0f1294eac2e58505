//! One worker's share of the window computation, and the order its output rows take.
//!
//! Every worker sees every chunk's [`Summary`] and applies every step of the watermark, exactly
//! where the one-worker runtime applies it (after the element that raised the maximum event
//! time); it processes only the elements of its own keys. A key's state therefore evolves as in
//! the one-worker runtime, so each row it emits is the one-worker runtime's row. Each row is
//! tagged with the moment of the one-worker run that emitted it ([`Order`]): the watermark
//! step that fired it, or the element (or bad record) that caused it. Sorting by that tag, and
//! rows of one watermark step by window end and key text, gives one order for any number of
//! workers.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use window_core::{
    time, AnyWindow, ElementError, HeldState, Number, Rejected, Timestamp, WindowComputation,
};
use window_io::{InputError, KeyId};
use window_job::JobResult;

use crate::cut::{Cut, Part};
use crate::groups::KeyGroups;
use crate::merge::Positions;
use crate::parse::{ChunkError, Element, Summary};
use crate::rows::Rare;
use crate::tagger::Tagger;

/// When, in the one-worker run, a row was emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct Order {
    /// The watermark at that moment.
    pub(crate) watermark: i64,
    /// 0: fired by the step of the watermark to `watermark`; 1: at an element or bad record.
    pub(crate) phase: u8,
    /// The element's place in the chunk (phase 1).
    pub(crate) pos: u32,
    /// 0: a bad record read before element `pos`; 1: element `pos` itself.
    pub(crate) sub: u8,
}

impl Default for Order {
    fn default() -> Self {
        Order {
            watermark: i64::MIN,
            phase: 0,
            pos: 0,
            sub: 0,
        }
    }
}

/// How the final watermark goes to `i64::MAX` in steps (see [`WindowWorker::finish_step`]):
/// steps of `stride` ms up to `horizon` ms past the maximum event time (a sliding window's slide
/// and size), then `i64::MAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FinalSteps {
    /// The step, in ms (positive; steps are made larger to keep their number bounded).
    pub stride: i64,
    /// How far past the maximum event time the last windows end, in ms.
    pub horizon: i64,
}

/// At most this many steps of the final watermark before `i64::MAX`.
const MAX_FINAL_STEPS: i64 = 4096;

/// Turns an element the computation rejected into the error the policy gets: the element, the
/// source's name, the line and the timestamp (the shape of the one-worker runtime's
/// `DescribeRejection`).
pub type Describe =
    Box<dyn FnMut(&Rejected<KeyId, Number>, &str, u64, Timestamp) -> InputError + Send>;

/// Where a worker stands in a chunk it has begun ([`WindowWorker::chunk`]): its next rise, bad
/// record and element.
#[derive(Debug, Default)]
pub(crate) struct InChunk {
    begun: bool,
    r: usize,
    b: usize,
    n: usize,
}

/// One worker's computations (one per key group it owns) and where it stands in the input.
pub(crate) struct WindowWorker<C> {
    comp: KeyGroups<C>,
    /// The maximum event time so far (of every worker's elements).
    max: Option<i64>,
    /// The watermark applied last.
    watermark: i64,
    /// Periodic watermarks: the watermark is emitted after a marked chunk only
    /// ([`Summary::watermark`]), not at every rise of the maximum event time.
    pub(crate) periodic: bool,
    /// A processing-time job: no watermark (the file's times are not event time), and no
    /// final watermark at the end, as on one thread; the clock of each chunk drives it.
    pub(crate) processing: bool,
    /// Where the worker stands in each input (lines, watermarks, ends).
    inputs: Positions,
    /// The input of the chunk processed last.
    last_input: u32,
    pub(crate) out: Tagger,
    describe: Describe,
    /// Whether this worker passes the chunks' bad records on (one worker does).
    reporter: bool,
    /// Whether the job stopped (a fatal error, or failing on bad input).
    pub(crate) stopped: bool,
    /// Elements the computation rejected.
    pub(crate) rejected: u64,
    /// Elements read (of every chunk done, counted once by the reporter).
    pub(crate) events: u64,
    /// The most states the worker may hold ([`crate::JobParts::max_held`]).
    pub(crate) max_held: Option<usize>,
    /// The most this worker held after a chunk or a final step (by [`HeldState::entries`]).
    pub(crate) peak: HeldState,
    /// The step in which a watermark step goes to its watermark (a sliding window's slide, a
    /// window size, a session gap: [`FinalSteps::stride`]); `None`: in one call.
    pub(crate) stride: Option<i64>,
    /// While a watermark step is under way in sub-steps: where the computations stand.
    stepping: Option<i64>,
    /// Rows per ms of watermark that the last sub-step which fired anything fired: sizes the
    /// next sub-steps to about a quarter of a piece.
    rate: Option<f64>,
}

impl<C> WindowWorker<C>
where
    C: WindowComputation<KeyId, Number, Window = AnyWindow, Output = JobResult>,
{
    /// A worker running the key groups `comp` over the inputs named `names`, each with a
    /// watermark `delay` ms behind its maximum event time.
    pub(crate) fn new(
        comp: KeyGroups<C>,
        delay: i64,
        describe: Describe,
        names: Vec<Arc<str>>,
        worker: u32,
    ) -> Self {
        let reporter = worker == 0;
        Self {
            comp,
            max: None,
            watermark: i64::MIN,
            periodic: false,
            processing: false,
            inputs: Positions::new(names, delay),
            last_input: 0,
            out: Tagger::new(worker),
            describe,
            reporter,
            stopped: false,
            rejected: 0,
            events: 0,
            max_held: None,
            peak: HeldState::default(),
            stride: None,
            stepping: None,
            rate: None,
        }
    }

    /// This worker's part of the cut after the chunk just processed ([`crate::cut`]): its key
    /// groups' snapshots (every group is at the watermark after a chunk), its keys' ranks by
    /// key id, its counters.
    pub(crate) fn cut_part(&self) -> Part {
        let (groups, error) = match self.comp.snapshot() {
            Ok(g) => (g, None),
            Err(e) => (Vec::new(), Some(format!("snapshotting a key group: {e}"))),
        };
        let keys = self.comp.keys();
        let ranks = (self.out.ranks.iter().enumerate())
            .filter(|(_, &r)| r != u64::MAX)
            .filter_map(|(i, &r)| Some((keys.text_at(i)?.to_string(), r)))
            .collect();
        Part {
            groups,
            ranks,
            rejected: self.rejected,
            global: self.reporter.then_some((
                self.events,
                self.inputs.lines_before(0),
                self.max,
                self.watermark,
            )),
            positions: self.inputs.snapshot(),
            error,
        }
    }

    /// Resumes from `cut`: the key groups this worker owns, the keys' ranks, where the input
    /// stands (the counters of the whole job go to worker 0).
    ///
    /// # Errors
    /// A group's snapshot its computation refuses (the message names the group).
    pub(crate) fn resume(
        &mut self,
        cut: &Cut,
        keys: &window_io::KeyDictionary,
    ) -> Result<(), String> {
        for g in &cut.groups {
            if self.comp.owns(g.group) {
                self.comp
                    .restore(g, cut.watermark)
                    .map_err(|e| format!("restoring key group {}: {e}", g.group))?;
            }
        }
        // The ranks of the keys this worker emits rows of (its groups'): each key's rank is
        // then in exactly one worker's part of the next cut.
        let groups = self.comp.group_count();
        for (text, rank) in &cut.ranks {
            if self.comp.owns(crate::groups::key_group(text, groups)) {
                self.out.set_rank(keys.intern(text).index(), *rank);
            }
        }
        self.max = cut.max;
        self.watermark = cut.watermark;
        self.inputs.set_lines_before(0, cut.lines);
        self.inputs.restore_first(cut.max, cut.watermark);
        self.inputs.restore(&cut.inputs);
        if self.reporter {
            self.events = cut.events;
            self.rejected = cut.rejected;
        }
        Ok(())
    }

    /// Stops the job here with `message` (written where the next rows go).
    pub(crate) fn fail(&mut self, message: String) {
        self.out.set_order(Order {
            watermark: self.watermark,
            phase: 1,
            pos: 0,
            sub: 0,
        });
        self.out.push_rare(Rare::ElementFailed {
            message,
            line: 0,
            input: 0,
        });
        self.stopped = true;
    }

    /// The key groups' computations (for their metrics at the end).
    pub(crate) fn computation(&self) -> &KeyGroups<C> {
        &self.comp
    }

    /// Raises input `input`'s maximum event time to `t`; with a watermark after every element,
    /// the input reports it (the step it makes is [`WindowWorker::step`]'s).
    fn rise(&mut self, input: u32, t: i64) {
        self.max = Some(self.max.map_or(t, |m| m.max(t)));
        self.inputs.rise(input, t);
        if !self.periodic && !self.processing {
            self.inputs.report(Some(input));
        }
    }

    /// Applies the step to the operator's watermark, if it rises, whole.
    fn emit_watermark(&mut self) {
        self.step(usize::MAX);
    }

    /// Applies the step to the operator's watermark, if it rises: the least watermark the
    /// inputs not ended reported ([`Positions::combined`]; with one input, its maximum event
    /// time less the delay, less 1: Flink's `BoundedOutOfOrdernessWatermarks`). With a `piece`
    /// (not `usize::MAX`), a step goes in sub-steps from the computations' next timer on, each
    /// firing the windows that end within it, so that the step's rows come in the canonical
    /// order (window end, then rank) as from one call: a sub-step spans about a quarter of a
    /// piece's rows at the rate the last one fired them (at least a stride, at most
    /// [`MAX_FINAL_STEPS`] of them). It stops between sub-steps once this worker holds `piece`
    /// rows, and returns whether the step is done (the next call goes on with it).
    fn step(&mut self, piece: usize) -> bool {
        if self.stepping.is_none() {
            let Some(w) = self.inputs.combined() else {
                return true;
            };
            if w <= self.watermark {
                return true;
            }
            self.stepping = Some(self.watermark);
            self.watermark = w;
        }
        let w = self.watermark;
        while let Some(at) = self.stepping {
            let next = match self.stride {
                Some(stride) if stride > 0 && piece < usize::MAX => {
                    let span = self.rate.map_or(stride, |per_ms| {
                        // At least 1: a rate of nothing spans the whole step.
                        ((piece / 4) as f64 / per_ms.max(1e-9)).min(i64::MAX as f64) as i64
                    });
                    let span = span
                        .max(stride)
                        .max(w.saturating_sub(at) / MAX_FINAL_STEPS + 1);
                    if w.saturating_sub(at) <= span {
                        w
                    } else {
                        match self.comp.next_event_time_timer() {
                            Some(due) if due <= w => time::add(at.max(due), span).min(w),
                            _ => w,
                        }
                    }
                }
                _ => w,
            };
            // The step's moment; ranked again after each sub-step's sort.
            self.out.set_order(Order {
                watermark: w,
                ..Order::default()
            });
            let from = self.out.rows.len();
            self.comp.process_watermark(next, &mut self.out);
            let fired = self.out.rows.len() - from;
            if fired > 0 && at > i64::MIN {
                self.rate = Some(fired as f64 / next.saturating_sub(at).max(1) as f64);
            }
            self.out.sort_step(from);
            self.stepping = (next < w).then_some(next);
            if self.stepping.is_some() && self.out.rows.len() >= piece {
                return false;
            }
        }
        true
    }

    /// The input's line of a chunk's line `local` (chunks before counted, header left out).
    fn line(&self, s: &Summary, local: u64) -> u64 {
        self.inputs.lines_before(s.input) + local.saturating_sub(s.prepended)
    }

    /// Passes bad record `error` at element place `pos` on (the reporter only).
    fn report(&mut self, s: &Summary, pos: u32, error: &ChunkError) {
        self.out.set_order(Order {
            watermark: self.watermark,
            phase: 1,
            pos,
            sub: 0,
        });
        let error = match error {
            ChunkError::Record(e) => {
                let mut e = e.clone();
                e.line = self.line(s, e.line);
                ChunkError::Record(e)
            }
            ChunkError::Failed(m) => ChunkError::Failed(m.clone()),
            // As the one-reader runtime's reader says it: on the line after the last one read.
            ChunkError::ReadFailed(m) => ChunkError::Failed(
                InputError {
                    source_name: self.inputs.name(s.input).to_string(),
                    line: self.inputs.lines_before(s.input) + 1,
                    field: None,
                    message: format!("read error: {m}"),
                    raw: Vec::new(),
                    raw_cut: false,
                    kind: window_io::InputErrorKind::Io,
                }
                .to_string(),
            ),
        };
        self.out.push_rare(Rare::Error(s.input, error));
    }

    /// Processes element `e` of chunk `s` (one of this worker's keys).
    fn element(&mut self, s: &Summary, e: &Element) {
        self.out.first_seen(e.key, s.chunk, e.idx);
        self.out.set_order(Order {
            watermark: self.watermark,
            phase: 1,
            pos: e.idx,
            sub: 1,
        });
        let Err(r) = self
            .comp
            .process_element(e.key, e.value, e.timestamp, &mut self.out)
        else {
            return;
        };
        let line = self.line(s, e.line);
        match r.error {
            ElementError::MissingTimestamp
            | ElementError::TimestampOutOfRange { .. }
            | ElementError::InvalidDynamicGap { .. } => {
                self.rejected += 1;
                let err = (self.describe)(&r, self.inputs.name(s.input), line, e.timestamp);
                self.out
                    .push_rare(Rare::Error(s.input, ChunkError::Record(Box::new(err))));
            }
            error => {
                self.out.push_rare(Rare::ElementFailed {
                    message: error.to_string(),
                    line,
                    input: s.input,
                });
                self.stopped = true;
            }
        }
    }

    /// Processes chunk `s` with this worker's `elements` of it (in place order): the watermark
    /// steps, bad records and elements in the order the one-worker runtime meets them, from
    /// where `at` stands. Returns `None` once the chunk is done; `Some(c)` when it stopped
    /// within the chunk because it holds `piece` rows or more: its rows so far are a piece of
    /// the chunk's ([`crate::rows::Rows::piece`]), every later row of the chunk comes after `c`
    /// ([`WindowWorker::covered`]), and the next call with the same `at` goes on from there.
    pub(crate) fn chunk(
        &mut self,
        s: &Summary,
        elements: &mut [Element],
        at: &mut InChunk,
        piece: usize,
    ) -> Option<(Order, i64)> {
        if self.stopped && !at.begun {
            return None;
        }
        if !at.begun {
            at.begun = true;
            self.begin(s, elements);
        }
        if self.items(s, elements, at, piece) {
            return Some(self.covered());
        }
        self.end(s);
        None
    }

    /// What comes before a chunk's items: its elements in place order, its clock reading, and
    /// the inputs it says ended or went idle.
    fn begin(&mut self, s: &Summary, elements: &mut [Element]) {
        // Mostly in order already (a chunk's part for one worker comes from one parser).
        if !elements.is_sorted_by_key(|e| e.idx) {
            elements.sort_unstable_by_key(|e| e.idx);
        }
        self.last_input = s.input;
        self.advance_clock(s.clock);
        for &i in &s.ended_before {
            self.inputs.end(i);
        }
        for &i in &s.idle {
            self.inputs.set_idle(i, true);
        }
        if s.lines > 0 {
            self.inputs.set_idle(s.input, false);
        }
        let told = !s.ended_before.is_empty() || !s.idle.is_empty();
        if told && !self.processing {
            self.emit_watermark();
        }
    }

    /// The chunk's bad records, elements and watermark steps from `at` on, merged in the
    /// one-worker order: a bad record read before element `i` is (i, 0), element `i` is
    /// (i, 1), the step element `i` makes is (i, 2). Returns whether it stopped before the end
    /// because this worker holds `piece` rows or more.
    fn items(&mut self, s: &Summary, elements: &[Element], at: &mut InChunk, piece: usize) -> bool {
        let no_errors: &[(u32, ChunkError)] = &[];
        let errors = if self.reporter {
            &s.errors[..]
        } else {
            no_errors
        };
        // Each as `place << 2 | kind` (`u64::MAX`: none left), so the least is the next.
        let key =
            |place: Option<u32>, kind: u64| place.map_or(u64::MAX, |p| u64::from(p) << 2 | kind);
        while !self.stopped {
            let next = key(errors.get(at.b).map(|x| x.0), 0)
                .min(key(elements.get(at.n).map(|e| e.idx), 1))
                .min(key(s.rises.get(at.r).map(|x| x.0), 2));
            if next == u64::MAX {
                break;
            }
            match next & 3 {
                0 => {
                    self.report(s, errors[at.b].0, &errors[at.b].1);
                    at.b += 1;
                }
                1 => {
                    self.element(s, &elements[at.n]);
                    at.n += 1;
                }
                _ => {
                    if self.stepping.is_none() {
                        self.rise(s.input, s.rises[at.r].1);
                    }
                    if !self.periodic && !self.processing && !self.step(piece) {
                        // Within the step: the rows so far go as a piece.
                        return true;
                    }
                    at.r += 1;
                }
            }
            if self.out.rows.len() >= piece && !self.stopped {
                return true;
            }
        }
        false
    }

    /// Where this worker's rows of the chunk under way are complete: every later row of it
    /// comes after this (moment, window end) in the canonical order.
    pub(crate) fn covered(&self) -> (Order, i64) {
        (self.out.order(), self.stepping.unwrap_or(i64::MAX))
    }

    /// What comes after a chunk's items: its input's end, a periodic watermark, the state's
    /// check, and the counts.
    fn end(&mut self, s: &Summary) {
        // Its input's end (several inputs), and a periodic watermark after a marked chunk: one
        // step, as the single-threaded runtime takes both after the batch.
        if s.last {
            self.inputs.end(s.input);
        }
        if !self.stopped && !self.processing {
            let mark = self.periodic && s.watermark;
            if mark {
                self.inputs.report(None);
            }
            if mark || s.last {
                self.emit_watermark();
            }
        }
        // Every group at the watermark (they emit nothing): exact state for the limit and for a
        // checkpoint after this chunk.
        let rows = self.out.rows.len();
        self.comp.catch_up(&mut self.out);
        debug_assert_eq!(rows, self.out.rows.len(), "a group fired while catching up");
        self.check_held();
        let lines = self.inputs.lines_before(s.input) + s.lines;
        self.inputs.set_lines_before(s.input, lines);
        if self.reporter {
            self.events += u64::from(s.elements);
        }
        self.stopped |= s.stop;
    }

    /// Sets processing time to the chunk's clock reading `clock` before its elements, firing
    /// the processing-time timers before it (processing-time windows, continuous
    /// processing-time triggers), as the single-threaded runtime sets it before each batch
    /// ([`crate::clock`]). Its rows are a step of their own, in the canonical order.
    fn advance_clock(&mut self, clock: i64) {
        self.out.set_order(Order {
            watermark: self.watermark,
            ..Order::default()
        });
        let from = self.out.rows.len();
        self.comp.advance_wall_clock(clock, &mut self.out);
        self.out.sort_step(from);
    }

    /// The earliest processing-time timer of this worker's key groups.
    pub(crate) fn next_processing_time_timer(&self) -> Option<i64> {
        self.comp.next_processing_time_timer()
    }

    /// Stops the job when the worker holds more than [`WindowWorker::max_held`] states (as
    /// `--max-window-states` stops the one-worker runtime at a batch boundary).
    /// Notes the peak first (with or without a limit).
    fn check_held(&mut self) {
        let held = self.comp.held_state();
        if held.entries() > self.peak.entries() {
            self.peak = held;
        }
        let Some(max) = self.max_held else { return };
        if held.entries() > max && !self.stopped {
            self.out.set_order(Order {
                watermark: self.watermark,
                phase: 1,
                pos: u32::MAX,
                sub: 1,
            });
            self.out.push_rare(Rare::ElementFailed {
                message: format!(
                    "too many window states: a worker holds {} ({} window states, {} elements) \
                     > {max}, its share of the limit on window states (windowctl's \
                     --max-window-states, divided among the workers); the job stopped at a chunk \
                     boundary (results up to there are written): raise the limit if the machine \
                     has the memory",
                    held.entries(),
                    held.windows,
                    held.elements
                ),
                line: self.inputs.lines_before(self.last_input),
                input: self.last_input,
            });
            self.stopped = true;
        }
    }

    /// One step of the end of the input: the final watermark, `i64::MAX`, fires every window
    /// left (event time). With `steps` it goes there in steps (the windows of one step at a
    /// time; the rows are the same, in the same order, as for one step to `i64::MAX`, since no
    /// element comes in between), so that the writer can write a step's rows before the next
    /// step fires. Returns whether another step follows.
    pub(crate) fn finish_step(&mut self, steps: Option<FinalSteps>) -> bool {
        if self.stopped || self.watermark == i64::MAX || self.processing {
            return false;
        }
        let w = match (steps, self.max) {
            (Some(s), Some(max)) if s.stride > 0 => {
                let until = time::add(max, s.horizon);
                // At most MAX_FINAL_STEPS steps, however small the stride.
                let span = until.saturating_sub(self.watermark).max(0);
                let stride = s.stride.max(span / MAX_FINAL_STEPS + 1);
                let next = time::add(self.watermark.max(time::sub(max, s.horizon)), stride);
                if next < until {
                    next
                } else {
                    i64::MAX
                }
            }
            _ => i64::MAX,
        };
        self.out.set_order(Order {
            watermark: w,
            ..Order::default()
        });
        self.watermark = w;
        let from = self.out.rows.len();
        self.comp.process_watermark(w, &mut self.out);
        self.out.sort_step(from);
        self.check_held();
        w != i64::MAX && !self.stopped
    }
}
