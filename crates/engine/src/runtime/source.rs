//! The feed that brings the sources' batches to the runtime: pulled inline, or pushed by one
//! reader thread per source.

use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use window_io::batch::{Read, Source, MAX_BATCH};
use window_io::{Event, ReadPosition};

/// Capacity, in batches, of the channel the reader threads write to.
const CHANNEL_BATCHES: usize = 64;

/// What the feed brings: a batch of input `input`, and how its read ended.
pub(crate) struct Delivery<K, V> {
    pub(crate) input: usize,
    pub(crate) events: Vec<Event<K, V>>,
    pub(crate) read: Read,
    /// The source's position after this batch.
    pub(crate) position: Option<ReadPosition>,
}

/// How batches reach the runtime: pulled from the sources in turn (a runtime that was not
/// started), or received from one reader thread per source, each with a channel of its own.
///
/// Either way the runtime may name the input it wants next ([`Feed::next`]): that is how it
/// aligns bounded inputs by their watermarks, so that the order in which batches of different
/// inputs meet the computation, and with it the output, depends only on the data.
pub(crate) enum Feed<K, V> {
    Inline {
        sources: Vec<Option<Box<dyn Source<K, V>>>>,
        next: usize,
    },
    Threaded {
        /// Per input, the channel of its reader thread; `None` once it has hung up.
        inputs: Vec<Option<Receiver<Delivery<K, V>>>>,
        /// Batches handed back for reuse by the reader threads.
        spare: Sender<Vec<Event<K, V>>>,
    },
}

impl<K: Send + 'static, V: Send + 'static> Feed<K, V> {
    /// Starts a reader thread per source, each reading ahead up to [`CHANNEL_BATCHES`] batches.
    /// A thread that cannot be started reports the failure as its source's last read.
    pub(crate) fn start(sources: Vec<Box<dyn Source<K, V>>>) -> Self {
        let (spare, spares) = crossbeam_channel::unbounded::<Vec<Event<K, V>>>();
        let spares = Arc::new(spares);
        let mut inputs = Vec::with_capacity(sources.len());
        for (input, source) in sources.into_iter().enumerate() {
            let (tx, rx) = crossbeam_channel::bounded(CHANNEL_BATCHES);
            inputs.push(Some(rx));
            let name = source.name().to_owned();
            let (fallback, spares) = (tx.clone(), Arc::clone(&spares));
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
        Feed::Threaded { inputs, spare }
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
        let last = is_last(&read);
        let position = source.read_position();
        let delivery = Delivery {
            input,
            events,
            read,
            position,
        };
        if tx.send(delivery).is_err() || last {
            return;
        }
    }
}

/// Whether nothing follows a read that ended so.
fn is_last(read: &Read) -> bool {
    matches!(read, Read::End | Read::Failed(_)) || matches!(read, Read::Rejected(e) if e.is_fatal())
}

/// What [`Feed::next`] found.
pub(crate) enum Next<K, V> {
    /// A batch.
    Batch(Delivery<K, V>),
    /// Nothing within the wait.
    Timeout,
    /// The reader thread of this input hung up without a last read (it died): the input
    /// counts as ended.
    Ended(usize),
    /// No source is left.
    Closed,
}

impl<K, V> Feed<K, V> {
    /// The next batch: input `want`'s when the runtime names one (waiting up to `wait` for it),
    /// else the next open source's in turn (inline) or whichever arrives first within `wait`
    /// (threaded). `batch` is an emptied batch to reuse.
    pub(crate) fn next(
        &mut self,
        wait: Duration,
        batch: Vec<Event<K, V>>,
        want: Option<usize>,
    ) -> Next<K, V> {
        match self {
            Feed::Inline { sources, next } => {
                let n = sources.len();
                let open = |i: usize| sources.get(i).is_some_and(Option::is_some);
                let Some(input) = want
                    .filter(|&i| open(i))
                    .or_else(|| (0..n).map(|i| (*next + i) % n).find(|&i| open(i)))
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
                if is_last(&read) {
                    sources[input] = None;
                }
                Next::Batch(Delivery {
                    input,
                    events,
                    read,
                    position,
                })
            }
            Feed::Threaded { inputs, spare } => {
                let _ = spare.send(batch);
                let open = |i: &usize| inputs.get(*i).is_some_and(Option::is_some);
                let mut open_inputs = (0..inputs.len()).filter(open);
                // With one input open, it is the one to wait for.
                let only = match (open_inputs.next(), open_inputs.next()) {
                    (Some(i), None) => Some(i),
                    _ => None,
                };
                let wanted = want.filter(open).or(only);
                let (input, got) = match wanted {
                    Some(i) => (i, inputs[i].as_ref().map(|rx| rx.recv_timeout(wait))),
                    None => match first_ready(inputs, wait) {
                        Some((i, got)) => (i, Some(got)),
                        None if inputs.iter().all(Option::is_none) => return Next::Closed,
                        None => return Next::Timeout,
                    },
                };
                match got {
                    Some(Ok(d)) => Next::Batch(d),
                    Some(Err(RecvTimeoutError::Timeout)) => Next::Timeout,
                    Some(Err(RecvTimeoutError::Disconnected)) | None => {
                        inputs[input] = None;
                        Next::Ended(input)
                    }
                }
            }
        }
    }
}

/// What a channel gave: a batch, or that it hung up.
type Received<K, V> = Result<Delivery<K, V>, RecvTimeoutError>;

/// Whichever open input's channel has a batch (or hung up) first within `wait`: its index and
/// what it gave; `None` on a timeout or when none is open.
fn first_ready<K, V>(
    inputs: &[Option<Receiver<Delivery<K, V>>>],
    wait: Duration,
) -> Option<(usize, Received<K, V>)> {
    let mut select = crossbeam_channel::Select::new();
    let mut index = Vec::new();
    for (i, rx) in inputs.iter().enumerate() {
        if let Some(rx) = rx {
            select.recv(rx);
            index.push(i);
        }
    }
    if index.is_empty() {
        return None;
    }
    let op = select.select_timeout(wait).ok()?;
    let input = index[op.index()];
    let rx = inputs[input].as_ref()?;
    let got = op.recv(rx).map_err(|_| RecvTimeoutError::Disconnected);
    Some((input, got))
}
