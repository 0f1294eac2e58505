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
use crate::worker::{FinalSteps, WindowWorker};
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
}

/// A worker's counters at its end.
pub(crate) fn worker_end<C>(window: &WindowWorker<C>) -> WorkerEnd
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
        halted: None,
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
        let mut held: BTreeMap<u64, Vec<Element>> = BTreeMap::new();
        let mut known: BTreeMap<u64, Summary> = BTreeMap::new();
        let mut next: u64 = ctx.first;
        let mut last: cut::LastChunk = None;
        // The process that stopped the job at a chunk on its own, and why.
        let mut halted: Option<(u32, String)> = None;
        let mut unwritten = sink::Unwritten::new(FINAL_ROWS_AHEAD / scope.peers());
        move |(elements, f1), (summaries, f2), output| {
            elements.for_each(|cap, data| {
                if let Some(&t) = cap.least() {
                    hold(held.entry(t).or_default(), data);
                }
            });
            summaries.for_each(|_time, data| {
                for s in data.drain(..) {
                    known.insert(s.chunk, s);
                }
            });
            let Some(c) = cap.as_mut() else { return };
            while !f1.less_equal(&next) && !f2.less_equal(&next) {
                let Some(s) = known.remove(&next) else { break };
                let mut mine = held.remove(&next).unwrap_or_default();
                if !window.stopped && halted.is_none() {
                    halted.clone_from(&s.halt);
                }
                window.chunk(&s, &mut mine);
                ctx.timers
                    .0
                    .post(ctx.timers.1, window.next_processing_time_timer(), next);
                ctx.pool.give(mine);
                ctx.stop.fetch_or(window.stopped, Ordering::Relaxed);
                // With the chunk's rows, before the capability passes the chunk: the writer
                // finds every part.
                let part = cut::part(ctx.cuts.is_some(), &s, &window);
                last = Some((next, s.end, part.is_some()));
                if part.is_some() || !window.out.rows.is_empty() {
                    let mut rows = window.out.take_rows();
                    rows.cut = part;
                    output.session(&c.delayed(&next)).give(rows);
                }
                next += 1;
            }
            if f1.is_empty() && f2.is_empty() {
                // One step of the final watermark per activation, and only while the rows of
                // the steps the writer has not written yet are few.
                if unwritten.too_many(&ctx.written) {
                    // Looked at again shortly; the worker parks meanwhile.
                    activator.activate_after(PARK);
                    return;
                }
                if ctx.interrupted.load(Ordering::Relaxed) || ctx.parts.interrupted() {
                    ctx.interrupted.store(true, Ordering::Relaxed);
                    // A last checkpoint where the job stops (once: `last` is then left).
                    cut::leave_at_stop(ctx.cuts.as_deref(), last.take(), &window);
                    // Stopped by a signal: no final watermark, as on one thread.
                    window.stopped = true;
                }
                let more = window.finish_step(ctx.steps);
                if !window.out.rows.is_empty() {
                    unwritten.given(step, window.out.rows.len());
                    output
                        .session(&c.delayed(&step))
                        .give(window.out.take_rows());
                }
                if more {
                    step += 1;
                    c.downgrade(&step);
                    activator.activate();
                    return;
                }
                *ctx.end.lock() = WorkerEnd {
                    halted: halted.take(),
                    ..worker_end(&window)
                };
                cap = None;
            } else {
                c.downgrade(&next);
            }
        }
    })
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
