//! Sources of batches of events: the [`Source`] trait a runtime reads its inputs through (a
//! file, a socket, an iterator), a source over an iterator, and one over an [`EventReader`] with
//! its keys interned.
//!
//! A runtime (the single-threaded `engine::runtime`, or a dataflow runtime) asks a source for a
//! batch of up to [`MAX_BATCH`] events at a time and learns from [`Read`] how the read ended: so
//! events move in batches, and a bad record or the end of input is seen between two batches.
//! Flink's counterpart is the `SourceReader` of FLIP-27, which also hands over records in
//! batches and reports the split's position for checkpoints.

use std::sync::Arc;

use crate::{
    Event, EventReader, InputError, InputErrorKind, InputFormat, KeyCache, KeyDictionary, KeyId,
    Number, Progress, ReadPosition,
};

/// Most events a source hands over at once.
pub const MAX_BATCH: usize = 1024;

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

/// A source of events for a runtime (`engine::runtime::Runtime`): a file, a socket, an iterator.
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

/// A source over one of this crate's readers (CSV or JSON lines from a file, stdin or a socket),
/// its keys interned: each event carries a [`KeyId`] of the job's [`KeyDictionary`] instead of
/// a `String`, so reading allocates nothing per event (a key's text is stored once, when it is
/// first met; sinks find it again with a [`crate::KeyTexts`]).
#[derive(Debug)]
pub struct ReaderSource {
    reader: EventReader,
    keys: KeyCache,
    live: bool,
}

impl ReaderSource {
    /// Reads `reader`, interning its keys in `dictionary` (shared by every source of a job); a
    /// `live` source (stdin, a pipe, a socket) hands over, in each batch, the CSV lines already
    /// read and never waits for more once it has one (JSON lines: one event per batch).
    pub fn new(reader: EventReader, live: bool, dictionary: Arc<KeyDictionary>) -> Self {
        Self {
            reader,
            keys: KeyCache::new(dictionary),
            live,
        }
    }

    /// A file source over `reader` that looks keys up in `keys`, a cache kept from an earlier
    /// source of the same dictionary (a runtime that reads an input in chunks, one reader per
    /// chunk, keeps one cache per thread: [`ReaderSource::into_cache`]).
    pub fn with_cache(reader: EventReader, keys: KeyCache) -> Self {
        Self {
            reader,
            keys,
            live: false,
        }
    }

    /// The source's key cache, for the next source of the same dictionary.
    pub fn into_cache(self) -> KeyCache {
        self.keys
    }
}

/// Takes the next record line by line into `batch`; `Some` of what ends the batch there: the
/// end of the input, a read error, or a rejected record.
fn take_keyed(
    reader: &mut EventReader,
    keys: &mut KeyCache,
    batch: &mut Vec<Event<KeyId>>,
) -> Option<Read> {
    match reader.next_keyed(|key| keys.id(&key)) {
        None => Some(Read::End),
        Some(Ok(e)) => {
            batch.push(e);
            None
        }
        Some(Err(err)) if err.kind == InputErrorKind::Io => Some(Read::Failed(err.to_string())),
        Some(Err(err)) => Some(Read::Rejected(err)),
    }
}

impl Source<KeyId, Number> for ReaderSource {
    fn name(&self) -> &str {
        self.reader.source_name()
    }

    fn read_batch(&mut self, batch: &mut Vec<Event<KeyId>>, max: usize) -> Read {
        let keys = &mut self.keys;
        if self.live {
            // A live source must not hold an event back waiting for the next one: it takes
            // the CSV lines already read a block at a time (waiting for the first only), or
            // line by line, the first line waiting and the next ones only while read already
            // (JSON lines, which the block path does not take).
            if self
                .reader
                .next_buffered_block(batch, max, |key| keys.id(&key))
                > 0
            {
                return Read::More;
            }
            let json = self.reader.format() == InputFormat::Jsonl;
            for taken in 1..=max.max(1) {
                if let Some(read) = take_keyed(&mut self.reader, keys, batch) {
                    return read;
                }
                if !json || taken == max || !self.reader.has_buffered_line() {
                    break;
                }
            }
            return Read::More;
        }
        let mut taken = 0;
        while taken < max {
            // The plain lines at the front of the buffer a block at a time, the next one (if
            // any is left) line by line.
            taken += self
                .reader
                .next_plain_block(batch, max - taken, |key| keys.id(&key));
            if taken == max {
                break;
            }
            taken += 1;
            if let Some(read) = take_keyed(&mut self.reader, keys, batch) {
                return read;
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
