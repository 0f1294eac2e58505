//! A worker's chunks, parsed on a thread of their own and cut into one part per worker their
//! elements go to (by key group, [`crate::groups`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use window_io::KeyDictionary;

use crate::chunks::Take;
use crate::groups::{owner, GroupOf};
use crate::merge::Chunks;
use crate::parse::{self, Element, Summary};
use crate::{JobParts, Shared, PARSED_AHEAD};

/// The buffers the threads of a run hand back to be filled again: a fresh buffer for every
/// chunk costs its growth (copies) and the page faults of its first use (perf, the Flink job:
/// `clear_page_erms` and `memmove` on the parser's thread).
#[derive(Clone, Default)]
pub(crate) struct Pools {
    /// Row blocks the writer thread emptied.
    pub(crate) rows: crate::tagger::RowPool,
    /// Element buffers the workers emptied.
    pub(crate) elements: ElementPool,
}

/// Emptied element buffers, for the parsers to fill again.
#[derive(Clone, Default)]
pub(crate) struct ElementPool(Arc<parking_lot::Mutex<Vec<Vec<Element>>>>);

/// At most this many element buffers wait in the pool (about what is in flight).
const MAX_POOLED: usize = 16;

impl ElementPool {
    /// An emptied buffer, or a new one.
    pub(crate) fn take(&self) -> Vec<Element> {
        self.0.lock().pop().unwrap_or_default()
    }

    /// Gives `buffer` back, emptied (dropped if the pool is full).
    pub(crate) fn give(&self, mut buffer: Vec<Element>) {
        buffer.clear();
        let mut pool = self.0.lock();
        if pool.len() < MAX_POOLED && buffer.capacity() > 0 {
            pool.push(buffer);
        }
    }
}

/// A worker's parsed chunks: parsed on a thread of their own, a few chunks ahead, so that
/// parsing and windowing use two cores even with one worker (as the single-threaded runtime's
/// reader thread does); parsed in place if that thread cannot be started.
pub(crate) enum Feed<P: JobParts> {
    Thread {
        parsed: crossbeam_channel::Receiver<(Vec<Part>, Summary)>,
        thread: Option<std::thread::JoinHandle<()>>,
    },
    Inline(Parser<P>),
}

/// What parsing a worker's chunks needs.
pub(crate) struct Parser<P> {
    chunks: Arc<Chunks>,
    parts: Arc<P>,
    keys: Arc<KeyDictionary>,
    stop: Arc<AtomicBool>,
    fail: bool,
    cache: window_io::KeyCache,
    chunk: u64,
    peers: u64,
    done: bool,
    /// Each key's group, whose owner its elements go to.
    groups: GroupOf,
    /// Element buffers the workers emptied.
    pool: ElementPool,
}

impl<P: JobParts> Parser<P> {
    /// A parser of chunks `first`, `first + peers` ...
    fn new(shared: &Shared<P>, first: u64, peers: u64) -> Self {
        Self {
            chunks: Arc::clone(&shared.chunks),
            parts: Arc::clone(&shared.parts),
            keys: Arc::clone(&shared.keys),
            stop: Arc::clone(&shared.stop),
            fail: shared.fail,
            cache: window_io::KeyCache::new(Arc::clone(&shared.keys)),
            chunk: first,
            peers,
            done: false,
            groups: GroupOf::new(Arc::clone(&shared.keys), shared.key_groups),
            pool: shared.pool.elements.clone(),
        }
    }

    /// The next chunk of this worker, parsed, its elements cut into one part per worker they go
    /// to (here, on the parser's thread, so that the exchange moves a part whole instead of
    /// routing element by element on the worker's); `None` at the end (or once the job stops).
    fn next(&mut self) -> Option<(Vec<Part>, Summary)> {
        if self.done || self.stop.load(Ordering::Relaxed) {
            return None;
        }
        let (taken, input) = self.chunks.take(self.chunk);
        let parsed = match taken {
            Take::End => None,
            Take::Chunk(c) => {
                let parts = &self.parts;
                let times = std::cell::RefCell::new(None);
                let make = |input, bytes| {
                    let reader = parts.reader(input, bytes);
                    *times.borrow_mut() = Some(reader.event_times());
                    reader
                };
                let parsed = parse::parse(
                    c,
                    self.pool.take(),
                    &make,
                    &self.keys,
                    &mut self.cache,
                    self.fail,
                );
                if let Some(range) = times.into_inner().and_then(|t| t.range()) {
                    parts.saw_event_times(range);
                }
                Some(parsed)
            }
            Take::Failed(message) => Some((
                Vec::new(),
                parse::failed_summary(self.chunk, input, message),
            )),
        };
        self.chunk += self.peers;
        self.done = parsed.as_ref().is_none_or(|p| p.1.stop);
        parsed.map(|(elements, summary)| (self.cut(elements), summary))
    }

    /// `elements` as one part per worker that gets any (in input order within each).
    fn cut(&mut self, mut elements: Vec<Element>) -> Vec<Part> {
        if self.peers == 1 {
            return vec![(0, elements)];
        }
        let mut parts: Vec<Part> = (0..self.peers as u32)
            .map(|w| (w, self.pool.take()))
            .collect();
        for e in elements.drain(..) {
            let g = self.groups.of(e.key);
            let to = u64::from(owner(g, self.groups.groups(), self.peers as u32));
            parts[to as usize].1.push(e);
        }
        self.pool.give(elements);
        parts.retain(|p| !p.1.is_empty());
        parts
    }
}

impl<P: JobParts> Feed<P> {
    /// Starts parsing this worker's chunks, `first`, `first + peers` ..., on a thread of its
    /// own, which wakes the calling thread (the worker's, parked in timely) whenever a chunk is
    /// parsed.
    pub(crate) fn start(shared: &Shared<P>, first: u64, peers: u64) -> Self {
        let mut parser = Parser::new(shared, first, peers);
        let (to_worker, parsed) = crossbeam_channel::bounded(PARSED_AHEAD);
        let worker = std::thread::current();
        let spawned = std::thread::Builder::new()
            .name(format!("parse-{first}"))
            .spawn(move || {
                while let Some(p) = parser.next() {
                    if to_worker.send(p).is_err() {
                        break;
                    }
                    // timely parks a worker with nothing to do in `std::thread::park`.
                    worker.unpark();
                }
                worker.unpark();
            });
        match spawned {
            Ok(thread) => Feed::Thread {
                parsed,
                thread: Some(thread),
            },
            // The closure (and the parser in it) is gone with the failed spawn: start over.
            Err(_) => Feed::Inline(Parser::new(shared, first, peers)),
        }
    }

    /// The next parsed chunk; `None` at the end, or once the job is interrupted or stopped
    /// early. While the parser has none ready (a live input waits for its lines), `idle` runs:
    /// the worker steps its dataflow (the chunks other workers sent go on meanwhile) or parks
    /// until woken, at most [`IDLE_PARK`] (the interruption and the stop are looked at between).
    pub(crate) fn next(
        &mut self,
        shared: &Shared<P>,
        mut idle: impl FnMut(std::time::Duration),
    ) -> Option<(Vec<Part>, Summary)> {
        loop {
            if shared.parts.interrupted() {
                shared.interrupted.store(true, Ordering::Relaxed);
                shared.stop.store(true, Ordering::Relaxed);
                return None;
            }
            if shared.stop.load(Ordering::Relaxed) {
                // The job stopped early (a failure the writer met, a refused element): a
                // parser waiting on a live input that pauses is not waited for.
                return None;
            }
            match self {
                Feed::Thread { parsed, .. } => match parsed.try_recv() {
                    Ok(p) => return Some(p),
                    Err(crossbeam_channel::TryRecvError::Empty) => idle(IDLE_PARK),
                    Err(crossbeam_channel::TryRecvError::Disconnected) => return None,
                },
                Feed::Inline(p) => return p.next(),
            }
        }
    }
}

/// How long a worker waiting for its next parsed chunk parks at most before it looks whether
/// the job was interrupted (a parsed chunk wakes it at once).
const IDLE_PARK: std::time::Duration = std::time::Duration::from_millis(100);

impl<P: JobParts> Drop for Feed<P> {
    fn drop(&mut self) {
        if let Feed::Thread { parsed, thread } = self {
            // Dropping the receiver ends the parser at its next send; a parser blocked on its
            // input (stdin) is not waited for.
            let (_, closed) = crossbeam_channel::bounded(0);
            drop(std::mem::replace(parsed, closed));
            if let Some(t) = thread.take().filter(|t| t.is_finished()) {
                let _ = t.join();
            }
        }
    }
}

/// One worker's elements of a chunk: the worker, and the elements in input order.
pub(crate) type Part = (u32, Vec<Element>);
