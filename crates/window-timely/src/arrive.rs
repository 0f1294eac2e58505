//! Several inputs with a live one among them (stdin, a socket, a pipe): their chunks in the
//! order they arrive, with idleness as Flink's.
//!
//! Files are merged in event time ([`crate::merge`]), but a live input's next chunk comes when
//! its writer sends it: reading in event-time order would hold every input up while it pauses.
//! So, as the single-threaded runtime takes a live input's batches as they come, each input is
//! read by a thread of its own and the chunks are numbered as they arrive. Every worker sees
//! the same chunks in the same order (one reader numbers them), so the output is the same for
//! any number of workers given that order, which depends on the timing, as it does on one
//! thread.
//!
//! An input that ends is told at once, in an empty chunk, so that it stops holding the
//! watermark back while the others go on. With an idle timeout (`withIdleness`), an input that
//! sent nothing for that long is told idle in an empty chunk: the watermark no longer waits
//! for it (Flink's `StatusWatermarkValve`), until its next chunk makes it active again.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use parking_lot::Mutex;

use crate::chunks::{Chunk, Chunker, Take};
use crate::clock::{ChunkClock, Timers, LOOK_AGAIN};
use crate::merge::{take_numbered, Numbered};

/// Chunks read ahead by the inputs' threads, in all.
const AHEAD: usize = 8;

/// The chunks of several inputs as they arrive ([`Arrivals::take`]).
pub(crate) struct Arrivals {
    from: Receiver<(u32, Take)>,
    state: Mutex<State>,
    /// Held by the one worker taking the next chunk that arrives.
    reading: Mutex<()>,
    clock: ChunkClock,
    /// Periodic watermarks: their interval.
    periodic: Option<Duration>,
    /// How long an input that sent nothing is waited for before it counts as idle.
    idle_timeout: Option<Duration>,
    /// The workers' earliest processing-time timers: an empty chunk is cut when one is due
    /// ([`crate::clock`]; the inputs' own readers number their chunks otherwise).
    timers: Option<Arc<Timers>>,
}

struct State {
    /// The job's chunks numbered so far.
    n: Numbered,
    ended: Vec<bool>,
    /// When each input last sent a chunk (or the start), and whether it was told idle.
    active: Vec<(Instant, bool)>,
    /// When the last chunk was marked for a periodic watermark.
    marked: Instant,
    /// The last chunk numbered and its processing time.
    last_cut: Option<(u64, i64)>,
}

impl Arrivals {
    /// Starts reading `inputs` (each on a thread of its own); chunks get their processing time
    /// from `clock`, a periodic watermark every `periodic`, and an input that sent nothing for
    /// `idle_timeout` is told idle.
    pub(crate) fn start(
        inputs: Vec<Chunker>,
        clock: ChunkClock,
        periodic: Option<Duration>,
        idle_timeout: Option<Duration>,
        timers: Option<Arc<Timers>>,
    ) -> Self {
        let n = inputs.len();
        let (send, from) = crossbeam_channel::bounded(AHEAD);
        for (i, chunker) in inputs.into_iter().enumerate() {
            let to_merge = send.clone();
            // A thread that cannot start reads nothing: its input is told failed.
            let spawned = std::thread::Builder::new()
                .name(format!("input-{i}"))
                .spawn(move || {
                    for local in 0.. {
                        let taken = chunker.take(local);
                        let last = !matches!(taken, Take::Chunk(_));
                        if to_merge.send((i as u32, taken)).is_err() || last {
                            return;
                        }
                    }
                });
            if let Err(e) = spawned {
                let _ = send.try_send((i as u32, Take::Failed(format!("cannot start: {e}"))));
            }
        }
        let now = Instant::now();
        Self {
            from,
            state: Mutex::new(State {
                n: Numbered::default(),
                ended: vec![false; n],
                active: vec![(now, false); n],
                marked: now,
                last_cut: None,
            }),
            reading: Mutex::new(()),
            clock,
            periodic,
            idle_timeout,
            timers,
        }
    }

    /// Chunk `index` of the job, read now if no one has read it yet; each chunk is handed out
    /// once. A failed read is [`Take::Failed`] with the failing input.
    pub(crate) fn take(&self, index: u64) -> (Take, u32) {
        take_numbered(
            &self.state,
            &self.reading,
            index,
            |s| &mut s.n,
            || {
                self.arrive();
            },
        )
    }

    /// When the next input that sends nothing counts as idle, if any does.
    fn idle_at(&self, s: &State) -> Option<Instant> {
        let timeout = self.idle_timeout?;
        (0..s.ended.len())
            .filter(|&i| !s.ended[i] && !s.active[i].1)
            .map(|i| s.active[i].0 + timeout)
            .min()
    }

    /// Waits for the next chunk of any input (or an input's end, one going idle, a timer due)
    /// and numbers it as the job's next chunk.
    fn arrive(&self) {
        let (idle, timer) = {
            let s = self.state.lock();
            let timer = self.timers.as_ref().and_then(|t| t.due_at(s.last_cut));
            (self.idle_at(&s), timer)
        };
        // The timers are looked at again every so often (a worker may have set an earlier one).
        let look = self.timers.as_ref().map(|_| Instant::now() + LOOK_AGAIN);
        let deadline = [idle, timer, look].into_iter().flatten().min();
        let next = match deadline {
            Some(d) => self.from.recv_deadline(d),
            None => self.from.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        let mut s = self.state.lock();
        let now = Instant::now();
        let chunk = match next {
            Ok((i, Take::Chunk(chunk))) => {
                // Lines make an input active (an empty chunk of a live input's timers does not;
                // the workers make it active again at a chunk of its with lines).
                if !chunk.lines.is_empty() {
                    s.active[i as usize] = (now, false);
                }
                Some((i, chunk))
            }
            Ok((i, Take::End)) => {
                s.ended[i as usize] = true;
                if s.ended.iter().all(|&e| e) {
                    s.n.end = Some(s.n.next);
                    return;
                }
                // The others go on: its end is told at once.
                let mut empty = empty(i);
                empty.ended_before = vec![i];
                Some((i, empty))
            }
            Ok((i, Take::Failed(message))) => {
                s.n.failed = Some((s.n.next, i, message));
                return;
            }
            Err(RecvTimeoutError::Timeout) if timer.is_some_and(|t| t <= now) => {
                // A timer is due: an empty chunk takes the clock to every worker.
                Some((0, empty(0)))
            }
            Err(RecvTimeoutError::Timeout) => {
                let timeout = self.idle_timeout.unwrap_or(Duration::MAX);
                let gone: Vec<u32> = (0..s.ended.len())
                    .filter(|&i| !s.ended[i] && !s.active[i].1)
                    .filter(|&i| now.saturating_duration_since(s.active[i].0) >= timeout)
                    .map(|i| i as u32)
                    .collect();
                for &i in &gone {
                    s.active[i as usize].1 = true;
                }
                let Some(&first) = gone.first() else { return };
                let mut empty = empty(first);
                empty.idle = gone;
                Some((first, empty))
            }
            Err(RecvTimeoutError::Disconnected) => {
                s.n.end = Some(s.n.next);
                return;
            }
        };
        let Some((i, mut chunk)) = chunk else { return };
        let index = s.n.next;
        chunk.index = index;
        chunk.input = i;
        chunk.clock = self.clock.read(index);
        s.last_cut = Some((index, chunk.clock));
        chunk.cut = None;
        chunk.watermark = self.periodic.is_some_and(|every| {
            let due = s.marked.elapsed() >= every || (chunk.watermark && chunk.lines.is_empty());
            if due {
                s.marked = Instant::now();
            }
            due
        });
        s.n.pending.insert(index, chunk);
        s.n.next += 1;
    }
}

/// An empty chunk of input `input`, to tell the workers something (an end, idleness).
fn empty(input: u32) -> Chunk {
    Chunk {
        index: 0,
        header: Vec::new(),
        columns_from: Vec::new(),
        lines: Vec::new(),
        cut: None,
        end: 0,
        watermark: false,
        clock: 0,
        input,
        ended_before: Vec::new(),
        last: false,
        idle: Vec::new(),
    }
}
