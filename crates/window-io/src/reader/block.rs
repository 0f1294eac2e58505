//! The block path of [`EventReader`]: the plain CSV lines of the input's buffer read a block at a
//! time. A block of the buffer is checked for UTF-8 once, its lines are cut at `\n` and parsed
//! where they lie ([`Parser::parse_plain`]), and the bookkeeping of each line (offset, line
//! number, progress) is what [`EventReader::next_keyed`] does for it. The first line the block
//! path cannot take (the header, a quote, a blank line, a bad record, a line crossing the end
//! of the buffer, anything else) is left where it is, for `next_keyed`: both paths hand out
//! the same events and errors in the same order.
//!
//! A live input (stdin, a pipe, a socket) takes the block path without reading once it has an
//! event ([`EventReader::next_buffered_block`]), and asks whether a whole line is buffered
//! before taking another line by line ([`EventReader::has_buffered_line`]): its reads wait for
//! the producer, and no event may wait for the next one.

use std::borrow::Cow;
use std::sync::atomic::Ordering;

use super::{fill, is_blank, EventReader, Lines};
use crate::source::{Event, InputFormat, MAX_LINE_BYTES};

/// Bytes of the buffer checked for UTF-8 at a time: a block holds a few hundred lines of a
/// typical CSV input, and no byte is checked twice but those of a line cut by the block's end.
const BLOCK_BYTES: usize = 16 * 1024;

// A line within a block is never too long: the line path alone meets those.
const _: () = assert!(BLOCK_BYTES <= MAX_LINE_BYTES);

impl EventReader {
    /// Appends to `batch` up to `max` events of the plain CSV lines at the front of the input's
    /// buffer (reading into the buffer when it is empty), their keys made by `key` as in
    /// [`EventReader::next_keyed`]; returns how many. Stops at the first line it does not take
    /// (see the module docs), which the next [`EventReader::next_keyed`] reads; 0 when the
    /// first one is such a line, at the end of the input or on a read error (which
    /// `next_keyed` then reports).
    #[inline]
    pub fn next_plain_block<K>(
        &mut self,
        batch: &mut Vec<Event<K>>,
        max: usize,
        key: impl FnMut(Cow<'_, str>) -> K,
    ) -> usize {
        self.plain_block(batch, max, key, true)
    }

    /// As [`EventReader::next_plain_block`], but once it has taken an event it stops where
    /// the input's buffer ends instead of reading more: for a live input (stdin, a pipe, a
    /// socket), whose next read waits for the producer. So every line that has come is taken
    /// at once, and none is held back waiting for the next. The first event may still wait
    /// (it reads when the buffer is empty, as `next_keyed` does).
    #[inline]
    pub fn next_buffered_block<K>(
        &mut self,
        batch: &mut Vec<Event<K>>,
        max: usize,
        key: impl FnMut(Cow<'_, str>) -> K,
    ) -> usize {
        self.plain_block(batch, max, key, false)
    }

    /// The block path; `wait`: read into an emptied buffer after events were taken.
    #[inline]
    fn plain_block<K>(
        &mut self,
        batch: &mut Vec<Event<K>>,
        max: usize,
        mut key: impl FnMut(Cow<'_, str>) -> K,
        wait: bool,
    ) -> usize {
        if self.done || self.parser.format != InputFormat::Csv || self.parser.header_pending() {
            return 0;
        }
        self.lines
            .input
            .consume(std::mem::take(&mut self.lines.pending));
        self.lines.left = 0;
        let mut taken = 0;
        while taken < max {
            let Ok(buf) = fill(&mut *self.lines.input) else {
                break;
            };
            let buffered = buf.len();
            let block = &buf[..buf.len().min(BLOCK_BYTES)];
            let text = match std::str::from_utf8(block) {
                Ok(text) => text,
                Err(e) => std::str::from_utf8(&block[..e.valid_up_to()]).unwrap_or_default(),
            };
            let (mut at, start_taken) = (0, taken);
            while taken < max {
                let rest = &text.as_bytes()[at..];
                let Some(end) = memchr::memchr(b'\n', rest) else {
                    break;
                };
                // Cut at `\n`, an ASCII byte: a char boundary.
                let line = text
                    .get(at..at + end)
                    .map(|l| l.strip_suffix('\r').unwrap_or(l));
                let Some(line) = line.filter(|l| !is_blank(l.as_bytes(), self.delimiter)) else {
                    break;
                };
                let Some(r) = self.parser.parse_plain(line) else {
                    break;
                };
                self.physical += 1;
                self.times.see(&mut self.seen, r.timestamp);
                batch.push(Event {
                    timestamp: r.timestamp,
                    key: key(r.key),
                    value: r.value,
                    line: self.physical,
                });
                at += end + 1;
                taken += 1;
            }
            self.parser.line_no = self.physical;
            self.offset += at as u64;
            if self.count_lines {
                self.progress.bytes.fetch_add(at as u64, Ordering::Relaxed);
            }
            self.lines.input.consume(at);
            self.lines.left = buffered - at;
            if taken == start_taken || (!wait && at == buffered) {
                // Nothing taken, or (not waiting) the buffer is used up: the next `fill` reads.
                break;
            }
        }
        taken
    }
}

impl EventReader {
    /// Whether a whole next line is already read into the input's buffer, found without
    /// reading: then [`EventReader::next_keyed`] reads nothing to take it (unless it is part
    /// of a CSV record with a quoted line break). For live inputs, whose reads wait.
    pub(crate) fn has_buffered_line(&mut self) -> bool {
        !self.done && self.lines.has_whole_line()
    }
}

impl Lines {
    /// Whether the input's buffer holds a whole next line, found without reading (a read of a
    /// live input waits for its producer): false when the buffer may be used up.
    fn has_whole_line(&mut self) -> bool {
        if self.left == 0 {
            return false;
        }
        self.input.consume(std::mem::take(&mut self.pending));
        // Bytes are buffered: `fill` hands them out without reading.
        fill(&mut *self.input).is_ok_and(|buf| memchr::memchr(b'\n', buf).is_some())
    }
}
