//! Parsing one chunk: its elements, and the chunk's summary, which every worker gets.
//!
//! The summary holds what the watermark needs beyond the chunk's own elements: where in the
//! chunk the maximum event time rises (a bounded-out-of-orderness watermark rises only there),
//! its line count (so that a line number in a message is the input's, not the chunk's) and its
//! bad records, at the place where they were read.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use window_core::Number;
use window_io::batch::{Read, ReaderSource, Source};
use window_io::{Event, EventReader, InputError, KeyCache, KeyDictionary, KeyId};

use crate::chunks::Chunk;

/// An element of a chunk, as it travels to the worker of its key.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub(crate) struct Element {
    /// Its place among the chunk's elements, from 0.
    pub(crate) idx: u32,
    /// Its event time, in ms.
    pub(crate) timestamp: i64,
    /// Its key (as its text across processes: [`crate::wire`]).
    #[serde(with = "crate::wire::key_text")]
    pub(crate) key: KeyId,
    /// Its value.
    pub(crate) value: Number,
    /// Its line in the chunk as parsed (header line included), from 1.
    pub(crate) line: u64,
}

/// A record a chunk could not read, or a failed read.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum ChunkError {
    /// A record the reader rejected; its line is the chunk's until the worker that reports it
    /// makes it the input's.
    Record(Box<InputError>),
    /// Reading failed (the message names the place); nothing follows.
    Failed(String),
    /// Reading the input failed after the chunks before this one (the message is the I/O
    /// error's); the worker that reports it names the line, as the one-reader runtime does.
    ReadFailed(String),
}

/// What every worker learns about a chunk.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Summary {
    /// The chunk's index.
    pub(crate) chunk: u64,
    /// `(idx, t)`: element `idx` raised the chunk's maximum event time to `t`, in order.
    pub(crate) rises: Vec<(u32, i64)>,
    /// The chunk's physical lines, without the header line put in front.
    pub(crate) lines: u64,
    /// Lines put in front of the chunk's own (the CSV header): 0 or 1.
    pub(crate) prepended: u64,
    /// The chunk's elements.
    pub(crate) elements: u32,
    /// Bad records, each with the number of elements read before it.
    pub(crate) errors: Vec<(u32, ChunkError)>,
    /// Whether the job stops at the chunk's last error (a fatal one, or any one when the job
    /// fails on bad input): no element after it, and no later chunk, counts.
    pub(crate) stop: bool,
    /// Set when a checkpoint follows the chunk ([`crate::cut`]).
    pub(crate) cut: Option<crate::cut::ChunkEnd>,
    /// Bytes of the input through the end of the chunk.
    pub(crate) end: u64,
    /// With periodic watermarks: whether the watermark is emitted after the chunk
    /// ([`crate::chunks::Chunker::with_watermarks`]).
    pub(crate) watermark: bool,
    /// Its processing time, in ms ([`crate::clock`]).
    pub(crate) clock: i64,
    /// The input it is of ([`crate::merge`]).
    pub(crate) input: u32,
    /// Inputs that ended before it, having no chunk (each told once).
    pub(crate) ended_before: Vec<u32>,
    /// Whether its input ends after it (several inputs).
    pub(crate) last: bool,
    /// Inputs that went idle before it ([`crate::arrive`]).
    pub(crate) idle: Vec<u32>,
    /// In a cluster: a process stopped here on its own (its output failed, a signal), with
    /// its index and why. The chunk has nothing else; every worker of every process stops at it
    /// as at a failed chunk, so that none waits for chunks that process will not send.
    pub(crate) halt: Option<(u32, String)>,
}

/// Builds a reader over a chunk's bytes (header line in front), as the job reads the chunk's
/// input (its index, the bytes): format, fields, time unit, delimiter
/// ([`crate::JobParts::reader`]).
pub(crate) type MakeReader<'a> = dyn Fn(usize, Vec<u8>) -> EventReader + 'a;

/// Parses `chunk` with a reader of `make`, its keys interned in `dictionary` through the
/// worker's cache `keys`, into `elements` (an emptied buffer); `fail` when the first bad record
/// stops the job.
pub(crate) fn parse(
    chunk: Chunk,
    mut elements: Vec<Element>,
    make: &MakeReader<'_>,
    dictionary: &Arc<KeyDictionary>,
    keys: &mut KeyCache,
    fail: bool,
) -> (Vec<Element>, Summary) {
    let prepended = u64::from(!chunk.header.is_empty());
    let input = chunk.input as usize;
    let lines = physical_lines(&chunk.lines);
    let mut bytes = chunk.header;
    bytes.extend_from_slice(&chunk.lines);
    let cache = std::mem::replace(keys, KeyCache::new(Arc::clone(dictionary)));
    let mut reader = make(input, bytes);
    if !chunk.columns_from.is_empty() {
        reader = reader.with_csv_columns_from(&chunk.columns_from);
    }
    let mut source = ReaderSource::with_cache(reader, cache);
    let mut summary = Summary {
        chunk: chunk.index,
        rises: Vec::new(),
        lines: 0,
        prepended,
        elements: 0,
        errors: Vec::new(),
        stop: false,
        cut: chunk.cut,
        end: chunk.end,
        watermark: chunk.watermark,
        clock: chunk.clock,
        input: chunk.input,
        ended_before: chunk.ended_before,
        last: chunk.last,
        idle: chunk.idle,
        halt: None,
    };
    elements.clear();
    let mut batch: Vec<Event<KeyId>> = Vec::with_capacity(window_io::batch::MAX_BATCH);
    let mut max = i64::MIN;
    loop {
        batch.clear();
        let read = source.read_batch(&mut batch, window_io::batch::MAX_BATCH);
        for e in batch.drain(..) {
            let idx = elements.len() as u32;
            if e.timestamp > max || idx == 0 {
                max = max.max(e.timestamp);
                summary.rises.push((idx, max));
            }
            elements.push(Element {
                idx,
                timestamp: e.timestamp,
                key: e.key,
                value: e.value,
                line: e.line,
            });
        }
        let at = elements.len() as u32;
        match read {
            Read::More => {}
            Read::End => break,
            Read::Rejected(err) => {
                let stop = fail || err.is_fatal();
                summary.errors.push((at, ChunkError::Record(Box::new(err))));
                if stop {
                    summary.stop = true;
                    break;
                }
            }
            Read::Failed(message) => {
                summary.errors.push((at, ChunkError::Failed(message)));
                summary.stop = true;
                break;
            }
        }
    }
    summary.elements = elements.len() as u32;
    *keys = source.into_cache();
    summary.lines = lines;
    (elements, summary)
}

/// The physical lines of `bytes` as the readers count them: one per `\n`, and a last one
/// without a line end.
fn physical_lines(bytes: &[u8]) -> u64 {
    // memchr's count is vectorized (a filter and count over the bytes was not: 4.5
    // instructions a byte, 5 % of the tumbling job's with `--workers 1`, cachegrind).
    let ends = memchr::memchr_iter(b'\n', bytes).count() as u64;
    ends + u64::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// The summary of chunk `chunk`, where reading input `input` failed.
pub(crate) fn failed_summary(chunk: u64, input: u32, message: String) -> Summary {
    Summary {
        chunk,
        rises: Vec::new(),
        lines: 0,
        prepended: 0,
        elements: 0,
        errors: vec![(0, ChunkError::ReadFailed(message))],
        stop: true,
        cut: None,
        end: 0,
        watermark: false,
        clock: i64::MIN,
        input,
        ended_before: Vec::new(),
        last: false,
        idle: Vec::new(),
        halt: None,
    }
}

/// The summary of chunk `chunk`, where `process` stopped the job on its own (`why`): nothing
/// but the stop.
pub(crate) fn halt_summary(chunk: u64, process: u32, why: String) -> Summary {
    Summary {
        errors: Vec::new(),
        halt: Some((process, why)),
        ..failed_summary(chunk, 0, String::new())
    }
}
