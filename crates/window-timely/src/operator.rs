//! The window operator: each worker's computations over the chunks in order, its rows to the
//! writer at the chunk's timestamp, and at the end the final watermark in steps.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use timely::dataflow::channels::pact::{Exchange, Pipeline};
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::ProbeHandle;
use window_core::{AnyWindow, Number, WindowComputation};
use window_io::KeyId;
use window_job::JobResult;

use crate::end::WorkerEnd;
use crate::feed::{self, Part};
use crate::parse::{Element, Summary};
use crate::rows::Rows as RowBlock;
use crate::worker::{FinalSteps, InChunk, WindowWorker};
use crate::{clock, cut, sink, Elements, JobParts, Rows, Summaries, FINAL, FINAL_ROWS_AHEAD, PARK};

/// What the window operator needs besides its inputs and its computation.
pub(crate) struct OperatorContext<P> {
    /// How the final watermark goes in steps.
    pub(crate) steps: Option<FinalSteps>,
    /// The probe after the writer: what is written.
    pub(crate) written: ProbeHandle<u64>,
    /// Set when the job is interrupted.
    pub(crate) interrupted: Arc<AtomicBool>,
    /// The job's parts (asked whether the job is interrupted).
    pub(crate) parts: Arc<P>,
    /// Where the worker's counters go at its end.
    pub(crate) end: Arc<Mutex<WorkerEnd>>,
    /// Set when the worker's computation stops the job (a bad record with `--on-error fail`, a
    /// failed read, a failed element), so that this process stops reading too: in a cluster
    /// the other processes learn it from the chunk's summary, not from the writer.
    pub(crate) stop: Arc<AtomicBool>,
    /// Where the worker leaves its part of a cut after a marked chunk, with checkpoints.
    pub(crate) cuts: Option<Arc<cut::Cuts>>,
    /// The run's first chunk.
    pub(crate) first: u64,
    /// Where a chunk's element buffer goes once processed.
    pub(crate) pool: feed::ElementPool,
    /// Where the worker posts its earliest processing-time timer after each chunk, and its
    /// index.
    pub(crate) timers: (Arc<clock::Timers>, usize),
    /// On process 0: the rows each of its workers gave the writer that it has not written.
    pub(crate) backlog: Option<Arc<sink::Backlog>>,
}

/// A worker's counters at its end, and the process that stopped the job on its own (`halted`).
pub(crate) fn worker_end<C>(window: &WindowWorker<C>, halted: Option<(u32, String)>) -> WorkerEnd
where
    C: WindowComputation<KeyId, Number, Window = AnyWindow, Output = JobResult>,
{
    let comp = window.computation();
    WorkerEnd {
        events: window.events,
        rejected: window.rejected,
        metrics: comp.metrics(),
        live_windows: comp.live_state().windows,
        peak: window.peak,
        peer_failure: None,
        halted,
        input_differs: None,
    }
}

/// The window operator: elements by key, summaries from every worker; rows out at the chunk's
/// timestamp (at [`FINAL`] for the final watermark's).
pub(crate) fn window_operator<'s, P, C>(
    elements: Elements<'s>,
    summaries: Summaries<'s>,
    mut window: WindowWorker<C>,
    ctx: OperatorContext<P>,
) -> Rows<'s>
where
    P: JobParts<Computation = C>,
    C: WindowComputation<KeyId, Number, Window = AnyWindow, Output = JobResult> + 'static,
{
    // Elements come cut into one part per worker (`Parser::cut`): each part is moved whole.
    let by_key = Exchange::new(|p: &Part| u64::from(p.0));
    let scope = elements.scope();
    elements.binary_frontier(summaries, by_key, Pipeline, "Window", move |cap, info| {
        let activator = scope.activator_for(info.address);
        let mut cap = Some(cap);
        let mut step = FINAL;
        let mut at = InOrder::new(ctx.first);
        let mut unwritten = sink::Unwritten::new(FINAL_ROWS_AHEAD / scope.peers());
        // Rows of a chunk go to the writer in pieces of this many (process 0's workers, whose
        // backlog the writer keeps); the others send a chunk's rows whole.
        let piece = ctx.backlog.as_ref().map_or(usize::MAX, |b| b.piece_rows());
        let me = scope.index() as u32;
        move |(elements, f1), (summaries, f2), output| {
            elements.for_each(|cap, data| {
                if let Some(&t) = cap.least() {
                    hold(at.held.entry(t).or_default(), data);
                }
            });
            summaries.for_each(|_time, data| {
                for s in data.drain(..) {
                    at.known.insert(s.chunk, s);
                }
            });
            let Some(c) = cap.as_mut() else { return };
            while !f1.less_equal(&at.next) && !f2.less_equal(&at.next) {
                let next = at.next;
                if at.waits(&ctx, me) {
                    // Goes on once the writer (on worker 0: this worker must not wait inside the
                    // operator) has caught up; the capability at this chunk puts the writer at it.
                    c.downgrade(&next);
                    activator.activate_after(PARK);
                    return;
                }
                let Some((s, mut mine, mut place)) = at.take(&window) else {
                    break;
                };
                if let Some(covered) = window.chunk(&s, &mut mine, &mut place, piece) {
                    // A piece: the writer may write it before the chunk ends, so that a chunk
                    // that fires many rows does not hold them all.
                    let mut rows = block(&mut window, ctx.backlog.as_deref(), me);
                    rows.piece = Some(covered);
                    output.session(&c.delayed(&next)).give(rows);
                    (at.current, at.pieced) = (Some((s, mine, place)), true);
                    // Back at once: the writer (maybe on this thread) takes the piece meanwhile.
                    c.downgrade(&next);
                    activator.activate();
                    return;
                }
                // With the chunk's rows, before the capability passes the chunk: the writer
                // finds every part of a cut. Always a last block, empty or not: the writer learns
                // that this worker is past the chunk, and writes the others' pieces of it.
                let rows = chunk_done(&mut window, &ctx, &mut at, &s, mine, me);
                output.session(&c.delayed(&next)).give(rows);
                at.next += 1;
                if std::mem::take(&mut at.pieced) {
                    // The chunk's rest goes to the writer now, not after the chunks after it.
                    c.downgrade(&at.next);
                    activator.activate();
                    return;
                }
            }
            if f1.is_empty() && f2.is_empty() {
                // One step of the final watermark per activation, and only while the rows of
                // the steps the writer has not written yet are few (else parks a while).
                if unwritten.too_many(&ctx.written) {
                    activator.activate_after(PARK);
                    return;
                }
                let (rows, more) = final_step(&mut window, &ctx, &mut at, me);
                if let Some(rows) = rows {
                    unwritten.given(step, rows.len());
                    output.session(&c.delayed(&step)).give(rows);
                }
                if more {
                    step += 1;
                    c.downgrade(&step);
                    activator.activate();
                    return;
                }
                *ctx.end.lock() = worker_end(&window, at.halted.take());
                cap = None;
            } else {
                c.downgrade(&at.next);
            }
        }
    })
}

/// Where a worker stands in the chunks: the elements and summaries it holds, the next chunk,
/// the one under way.
struct InOrder {
    held: BTreeMap<u64, Vec<Element>>,
    known: BTreeMap<u64, Summary>,
    next: u64,
    /// The last chunk done ([`cut::leave_at_stop`]).
    last: cut::LastChunk,
    /// The process that stopped the job at a chunk on its own, and why.
    halted: Option<(u32, String)>,
    /// The chunk this worker is in the middle of: its summary, its elements, where it is.
    current: Option<(Summary, Vec<Element>, InChunk)>,
    /// Whether the chunk under way went out in pieces.
    pieced: bool,
}

impl InOrder {
    fn new(first: u64) -> Self {
        Self {
            held: BTreeMap::new(),
            known: BTreeMap::new(),
            next: first,
            last: None,
            halted: None,
            current: None,
            pieced: false,
        }
    }

    /// Whether the worker, in a chunk, is over its share of rows the writer has not written
    /// (and the job goes on).
    fn waits<P>(&self, ctx: &OperatorContext<P>, me: u32) -> bool {
        self.current.is_some()
            && ctx.backlog.as_ref().is_some_and(|b| b.over(me))
            && !ctx.stop.load(Ordering::Relaxed)
    }

    /// The chunk to go on with: the one under way, or the next one once its summary is in.
    fn take<C>(&mut self, window: &WindowWorker<C>) -> Option<(Summary, Vec<Element>, InChunk)>
    where
        C: WindowComputation<KeyId, Number, Window = AnyWindow, Output = JobResult>,
    {
        if let Some(going_on) = self.current.take() {
            return Some(going_on);
        }
        let s = self.known.remove(&self.next)?;
        let mine = self.held.remove(&self.next).unwrap_or_default();
        if !window.stopped && self.halted.is_none() {
            self.halted.clone_from(&s.halt);
        }
        Some((s, mine, InChunk::default()))
    }
}

/// What follows chunk `s` once done (`mine`: its elements): the worker's earliest timer
/// posted, the buffer back, a stop shared; its last block, with the worker's part of a cut
/// after it.
fn chunk_done<P, C>(
    window: &mut WindowWorker<C>,
    ctx: &OperatorContext<P>,
    at: &mut InOrder,
    s: &Summary,
    mine: Vec<Element>,
    me: u32,
) -> RowBlock
where
    P: JobParts<Computation = C>,
    C: WindowComputation<KeyId, Number, Window = AnyWindow, Output = JobResult>,
{
    ctx.timers
        .0
        .post(ctx.timers.1, window.next_processing_time_timer(), at.next);
    ctx.pool.give(mine);
    ctx.stop.fetch_or(window.stopped, Ordering::Relaxed);
    let part = cut::part(ctx.cuts.is_some(), s, window);
    at.last = Some((at.next, s.end, part.is_some()));
    let mut rows = block(window, ctx.backlog.as_deref(), me);
    rows.cut = part;
    rows
}

/// The final watermark's next step, after the last chunk: its rows, if any, and whether another
/// step follows. Stopped by a signal, no final watermark (as on one thread): a last checkpoint
/// where the job stops instead (once: `last` is then left).
fn final_step<P, C>(
    window: &mut WindowWorker<C>,
    ctx: &OperatorContext<P>,
    at: &mut InOrder,
    me: u32,
) -> (Option<RowBlock>, bool)
where
    P: JobParts<Computation = C>,
    C: WindowComputation<KeyId, Number, Window = AnyWindow, Output = JobResult>,
{
    if ctx.interrupted.load(Ordering::Relaxed) || ctx.parts.interrupted() {
        ctx.interrupted.store(true, Ordering::Relaxed);
        cut::leave_at_stop(ctx.cuts.as_deref(), at.last.take(), window);
        window.stopped = true;
    }
    let more = window.finish_step(ctx.steps);
    let rows = (!window.out.rows.is_empty()).then(|| block(window, ctx.backlog.as_deref(), me));
    (rows, more)
}

/// The worker's rows so far as a block for the writer (an empty one if there are none),
/// counted in process 0's backlog.
fn block<C>(window: &mut WindowWorker<C>, backlog: Option<&sink::Backlog>, me: u32) -> RowBlock
where
    C: WindowComputation<KeyId, Number, Window = AnyWindow, Output = JobResult>,
{
    let rows = if window.out.rows.is_empty() {
        window.out.empty_block()
    } else {
        window.out.take_rows()
    };
    if let Some(b) = backlog {
        b.given(me, rows.len());
    }
    rows
}

/// Adds the parts in `data` (this worker's elements of one chunk) to `mine`.
fn hold(mine: &mut Vec<Element>, data: &mut Vec<Part>) {
    for (_, mut part) in data.drain(..) {
        if mine.is_empty() {
            // The usual case, one part per chunk: kept, not copied.
            std::mem::swap(mine, &mut part);
        } else {
            mine.append(&mut part);
        }
    }
}
