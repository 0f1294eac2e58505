//! Where a runtime's events come from: the [`Source`] trait, sources over iterators and over
//! `window-io`'s readers, and the feed that brings their batches to the runtime, pulled inline
//! or pushed by one reader thread per source.

use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use window_io::{
    Event, EventReader, InputError, InputErrorKind, KeyCache, KeyDictionary, KeyId, Progress,
    ReadPosition,
};

/// Most events a source hands over at once.
pub const MAX_BATCH: usize = 1024;

/// Capacity, in batches, of the channel the reader threads write to.
const CHANNEL_BATCHES: usize = 64;

/// How a [`Source::read_batch`] call ended.
#[derive(Debug)]
pub enum Read {
    /// The batch holds what was read; more may follow.
    More,
    /// A record after the events of the batch was rejected (hand it to the error policy); more
    /// may follow, unless the error is fatal.
    Rejected(InputError),
    /// The batch holds the last events; the source is exhausted.
    End,
    /// Reading failed after the events of the batch; nothing follows. The text names the source
    /// and the place.
    Failed(String),
}

/// A source of events for a [`crate::Runtime`]: a file, a socket, an iterator.
///
/// A source is read in batches; a runtime that was started reads each source on a thread of its
/// own, so a source may block.
pub trait Source<K, V>: Send {
    /// The name errors and summaries use (a path, `stdin`, `host:port`).
    fn name(&self) -> &str;

    /// Appends up to `max` events to `batch` (which the caller clears) and tells how it ended.
    fn read_batch(&mut self, batch: &mut Vec<Event<K, V>>, max: usize) -> Read;

    /// Whether the source is live (a socket, stdin): its results are flushed after every batch,
    /// so that they appear as they fire.
    fn is_live(&self) -> bool {
        false
    }

    /// A handle reporting the bytes read, for progress bars; `None` when not known.
    fn progress(&self) -> Option<Progress> {
        None
    }

    /// Where the source stands after the last [`Source::read_batch`]: what a checkpoint
    /// records so that a restarted run continues there; `None` for a source that cannot tell
    /// (an iterator).
    fn read_position(&self) -> Option<ReadPosition> {
        None
    }
}

/// A source over an iterator of events: the fluent API's `from_collection`, and tests.
#[derive(Debug)]
pub struct IterSource<I> {
    name: String,
    events: I,
}

impl<I> IterSource<I> {
    /// The events of `events`, named `name` in messages.
    pub fn new(name: impl Into<String>, events: I) -> Self {
        Self {
            name: name.into(),
            events,
        }
    }
}

impl<K, V, I> Source<K, V> for IterSource<I>
where
    I: Iterator<Item = Event<K, V>> + Send,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn read_batch(&mut self, batch: &mut Vec<Event<K, V>>, max: usize) -> Read {
        for _ in 0..max {
            match self.events.next() {
                Some(e) => batch.push(e),
                None => return Read::End,
            }
        }
        Read::More
    }
}

/// A source over one of `window-io`'s readers (CSV or JSON lines from a file, stdin or a socket),
/// its keys interned: each event carries a [`KeyId`] of the job's [`KeyDictionary`] instead of
/// a `String`, so reading allocates nothing per event (a key's text is stored once, when it is
/// first met; sinks find it again with a [`window_io::KeyTexts`]).
#[derive(Debug)]
pub struct ReaderSource {
    reader: EventReader,
    keys: KeyCache,
    live: bool,
}

impl ReaderSource {
    /// Reads `reader`, interning its keys in `dictionary` (shared by every source of a job); a
    /// `live` source (stdin, a socket) hands over each event as it comes.
    pub fn new(reader: EventReader, live: bool, dictionary: Arc<KeyDictionary>) -> Self {
        Self {
            reader,
            keys: KeyCache::new(dictionary),
            live,
        }
    }
}

impl Source<KeyId, f64> for ReaderSource {
    fn name(&self) -> &str {
        self.reader.source_name()
    }

    fn read_batch(&mut self, batch: &mut Vec<Event<KeyId>>, max: usize) -> Read {
        // A live source must not hold an event back waiting for the next one.
        let max = if self.live { 1 } else { max };
        let keys = &mut self.keys;
        for _ in 0..max {
            match self.reader.next_keyed(|key| keys.id(&key)) {
                None => return Read::End,
                Some(Ok(e)) => batch.push(e),
                Some(Err(err)) if err.kind == InputErrorKind::Io => {
                    return Read::Failed(err.to_string())
                }
                Some(Err(err)) => return Read::Rejected(err),
            }
        }
        Read::More
    }

    fn is_live(&self) -> bool {
        self.live
    }

    fn progress(&self) -> Option<Progress> {
        Some(self.reader.progress())
    }

    fn read_position(&self) -> Option<ReadPosition> {
        Some(self.reader.read_position())
    }
}

/// What the feed brings: a batch of input `input`, and how its read ended.
pub(crate) struct Delivery<K, V> {
    pub(crate) input: usize,
    pub(crate) events: Vec<Event<K, V>>,
    pub(crate) read: Read,
    /// The source's position after this batch.
    pub(crate) position: Option<ReadPosition>,
}

/// How batches reach the runtime: pulled from the sources in turn (a runtime that was not
/// started), or received from one reader thread per source.
pub(crate) enum Feed<K, V> {
    Inline {
        sources: Vec<Option<Box<dyn Source<K, V>>>>,
        next: usize,
    },
    Threaded {
        rx: Receiver<Delivery<K, V>>,
        /// Batches handed back for reuse by the reader threads.
        spare: Sender<Vec<Event<K, V>>>,
    },
}

impl<K: Send + 'static, V: Send + 'static> Feed<K, V> {
    /// Starts a reader thread per source. A thread that cannot be started reports the failure
    /// as its source's last read.
    pub(crate) fn start(sources: Vec<Box<dyn Source<K, V>>>) -> Self {
        let (tx, rx) = crossbeam_channel::bounded(CHANNEL_BATCHES);
        let (spare, spares) = crossbeam_channel::unbounded::<Vec<Event<K, V>>>();
        let spares = Arc::new(spares);
        for (input, source) in sources.into_iter().enumerate() {
            let name = source.name().to_owned();
            let (tx, spares) = (tx.clone(), Arc::clone(&spares));
            let fallback = tx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("source-{input}"))
                .spawn(move || read_all(input, source, &tx, &spares));
            if let Err(e) = spawned {
                let _ = fallback.send(Delivery {
                    input,
                    events: Vec::new(),
                    read: Read::Failed(format!("{name}: cannot start the reader thread: {e}")),
                    position: None,
                });
            }
        }
        Feed::Threaded { rx, spare }
    }
}

/// A reader thread: batches until the source ends or the runtime hangs up.
fn read_all<K, V>(
    input: usize,
    mut source: Box<dyn Source<K, V>>,
    tx: &Sender<Delivery<K, V>>,
    spares: &Receiver<Vec<Event<K, V>>>,
) {
    loop {
        let mut events = spares.try_recv().unwrap_or_default();
        events.clear();
        let read = source.read_batch(&mut events, MAX_BATCH);
        let last = matches!(read, Read::End | Read::Failed(_))
            || matches!(&read, Read::Rejected(e) if e.is_fatal());
        let position = source.read_position();
        if tx
            .send(Delivery {
                input,
                events,
                read,
                position,
            })
            .is_err()
            || last
        {
            return;
        }
    }
}

/// What [`Feed::next`] found.
pub(crate) enum Next<K, V> {
    /// A batch.
    Batch(Delivery<K, V>),
    /// Nothing within the wait.
    Timeout,
    /// No source is left (a reader thread that died without a last read counts as ended).
    Closed,
}

impl<K, V> Feed<K, V> {
    /// The next batch: the next open source's (inline), or whatever arrives within `wait`
    /// (threaded). `batch` is an emptied batch to reuse.
    pub(crate) fn next(&mut self, wait: Duration, batch: Vec<Event<K, V>>) -> Next<K, V> {
        match self {
            Feed::Inline { sources, next } => {
                let n = sources.len();
                let Some(input) = (0..n)
                    .map(|i| (*next + i) % n)
                    .find(|&i| sources[i].is_some())
                else {
                    return Next::Closed;
                };
                *next = (input + 1) % n;
                let mut events = batch;
                events.clear();
                let Some(source) = sources[input].as_mut() else {
                    return Next::Closed;
                };
                let read = source.read_batch(&mut events, MAX_BATCH);
                let position = source.read_position();
                let last = matches!(read, Read::End | Read::Failed(_))
                    || matches!(&read, Read::Rejected(e) if e.is_fatal());
                if last {
                    sources[input] = None;
                }
                Next::Batch(Delivery {
                    input,
                    events,
                    read,
                    position,
                })
            }
            Feed::Threaded { rx, spare } => {
                let _ = spare.send(batch);
                match rx.recv_timeout(wait) {
                    Ok(d) => Next::Batch(d),
                    Err(RecvTimeoutError::Timeout) => Next::Timeout,
                    Err(RecvTimeoutError::Disconnected) => Next::Closed,
                }
            }
        }
    }
}
