//! [`EventReader`]: physical lines in, one [`Event`] or one located [`InputError`] per record
//! out (the record format is described in [`crate::source`]; the rules of one record are in
//! `parse.rs`).
//!
//! A line is parsed where it lies in the input's buffer when it fits there (nearly always), and
//! copied only when it crosses the end of the buffer (or, in CSV, when a quoted field holds a line
//! break: the record's lines are joined in a buffer of their own). A line that is rejected keeps
//! its bytes, up to [`MAX_RAW_BYTES`], for the dead letters. The key reaches the caller as a slice of
//! the line: [`EventReader::next_event`] turns it into a `String` for the iterator, and
//! [`EventReader::next_keyed`] into a [`crate::KeyId`] (or anything else) without allocating.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, BufRead};
use std::sync::atomic::Ordering;

use crate::error::{InputError, InputErrorKind};
use crate::parse::Parser;
use crate::source::{
    CsvHeader, Event, FieldNames, FieldUse, InputFormat, Progress, MAX_LINE_BYTES, MAX_RAW_BYTES,
};
use crate::time::{EventTimes, TimeUnit};

mod block;

/// How far an [`EventReader`] has read: what a checkpoint records, so that a restarted job
/// continues with the next record ([`EventReader::skip_to`]).
///
/// Plays the role of a Flink source split's offset (`FileSourceSplit` keeps a byte offset
/// and the records to skip after it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReadPosition {
    /// Bytes of the stream consumed through the last record handed out (with its line
    /// terminator); for a `.gz` file, bytes of the decompressed stream.
    pub offset: u64,
    /// Physical lines read through that record (the next record's line is counted from here).
    pub line: u64,
}

/// One physical line, without its terminator.
enum Line<'a> {
    /// End of input.
    Eof,
    /// A complete line.
    Whole(&'a [u8]),
    /// A line longer than [`MAX_LINE_BYTES`]: its bytes, at most [`MAX_RAW_BYTES`] of them (the
    /// rest was discarded), and its length in bytes.
    TooLong { kept: &'a [u8], len: u64 },
}

/// The bytes of a stream, line by line: the input, what of its buffer the last line took, and
/// a buffer for lines that cross the end of the input's buffer.
struct Lines {
    input: Box<dyn BufRead + Send>,
    /// Bytes of `input`'s buffer the line handed out last took, consumed at the next read.
    pending: usize,
    /// A line copied out of the input (it crossed the end of its buffer, or is too long).
    copied: Vec<u8>,
    /// Bytes in `input`'s buffer after the `pending` ones, as of the last read of it; 0 when
    /// not known. A lower bound: what [`Lines::has_whole_line`] may take without reading.
    left: usize,
}

/// `fill_buf`, retried when interrupted.
fn fill(input: &mut dyn BufRead) -> io::Result<&[u8]> {
    loop {
        match input.fill_buf() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
            // At the end: no second read (stdin on a terminal would wait for more).
            Ok([]) => return Ok(&[]),
            Ok(_) => break,
        }
    }
    // Filled and not consumed: the same bytes again, without reading.
    input.fill_buf()
}

impl Lines {
    /// The next line and the bytes it took from the input (with its terminator).
    fn next_line(&mut self) -> io::Result<(Line<'_>, usize)> {
        self.input.consume(std::mem::take(&mut self.pending));
        self.left = 0;
        if self.copied.capacity() > 4 * MAX_LINE_BYTES {
            // The copy of a too-long line is not held on to.
            self.copied = Vec::new();
        }
        let (len, newline) = {
            let buf = fill(&mut *self.input)?;
            (buf.len(), memchr::memchr(b'\n', buf))
        };
        if len == 0 {
            return Ok((Line::Eof, 0));
        }
        match newline {
            Some(end) if end <= MAX_LINE_BYTES => {
                self.pending = end + 1;
                self.left = len - (end + 1);
                // The buffer was not consumed: the same bytes, without reading again.
                let buf = fill(&mut *self.input)?;
                Ok((Line::Whole(strip_cr(&buf[..end])), end + 1))
            }
            _ => self.copy_line(),
        }
    }

    /// A line that crosses the end of the input's buffer (or is too long): copied, keeping at
    /// most [`MAX_RAW_BYTES`] bytes of it.
    fn copy_line(&mut self) -> io::Result<(Line<'_>, usize)> {
        self.copied.clear();
        let mut consumed = 0;
        // The line's length without its `\n`, and its last byte.
        let (mut len, mut last) = (0_u64, None);
        let mut ended = false;
        while !ended {
            let buf = fill(&mut *self.input)?;
            if buf.is_empty() {
                break;
            }
            let (take, line_part) = match memchr::memchr(b'\n', buf) {
                Some(i) => {
                    ended = true;
                    (i + 1, &buf[..i])
                }
                None => (buf.len(), buf),
            };
            let room = MAX_RAW_BYTES.saturating_sub(self.copied.len());
            self.copied
                .extend_from_slice(&line_part[..line_part.len().min(room)]);
            len += line_part.len() as u64;
            last = line_part.last().copied().or(last);
            self.left = buf.len() - take;
            self.input.consume(take);
            consumed += take;
        }
        if ended && last == Some(b'\r') {
            // The `\r` of a `\r\n`.
            len -= 1;
            self.copied.truncate(self.copied.len().min(len as usize));
        }
        if len > MAX_LINE_BYTES as u64 {
            return Ok((
                Line::TooLong {
                    kept: &self.copied,
                    len,
                },
                consumed,
            ));
        }
        Ok((Line::Whole(&self.copied), consumed))
    }
}

/// Whether a line holds nothing but spaces and tabs (or nothing), `keep` aside: the CSV
/// delimiter, when it is one of them, makes fields (a tab-separated line of empty fields is a
/// record, with its error, not a blank line).
fn is_blank(line: &[u8], keep: u8) -> bool {
    line.iter().all(|&b| (b == b' ' || b == b'\t') && b != keep)
}

/// A line ended by `\n` without the `\r` of a `\r\n`.
fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Reads [`Event`]s from a CSV or JSON-lines stream, one
/// `Result<Event, InputError>` per record (blank lines and the CSV header
/// yield nothing).
///
/// After a fatal error (see [`InputErrorKind::is_fatal`]) the iterator ends.
/// Never panics, whatever the input.
pub struct EventReader {
    lines: Lines,
    parser: Parser,
    progress: Progress,
    /// Whether consumed line bytes are added to `progress` here (true when no
    /// counting reader sits below the `BufRead`).
    count_lines: bool,
    done: bool,
    /// Bytes of the stream consumed so far (see [`ReadPosition::offset`]).
    offset: u64,
    /// Physical lines read so far (see [`ReadPosition::line`]); the parser's line is the
    /// current record's first.
    physical: u64,
    /// The physical lines of a CSV record whose quoted field spans lines, joined.
    joined: Vec<u8>,
    /// The range of the event times handed out, shared ([`EventReader::event_times`]).
    times: EventTimes,
    /// The reader's own copy of `times`' range.
    seen: (i64, i64),
    /// The byte [`is_blank`] does not take as blank: the CSV delimiter (0 for JSON lines).
    delimiter: u8,
}

impl fmt::Debug for EventReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventReader")
            .field("source_name", &self.parser.source_name)
            .field("format", &self.parser.format)
            .field("fields", &self.parser.fields)
            .field("header_mode", &self.parser.header_mode)
            .field("line", &self.physical)
            .field("bytes_read", &self.progress.bytes_read())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl EventReader {
    /// Reads events from any buffered reader. `source_name` is used in error
    /// messages. A CSV stream must start with a header ([`CsvHeader::Required`];
    /// change it with [`EventReader::with_csv_header`]). Progress counts the
    /// bytes consumed; the total is unknown.
    pub fn new<R: BufRead + Send + 'static>(
        input: R,
        source_name: impl Into<String>,
        format: InputFormat,
        fields: FieldNames,
    ) -> EventReader {
        EventReader::from_parts(
            Box::new(input),
            source_name.into(),
            format,
            fields,
            Progress::new(None),
            true,
        )
    }

    /// A reader over an opened input, with the progress handle the opening made; `count_lines`
    /// says whether consumed line bytes are added to `progress` here (no counting reader below).
    pub(crate) fn from_parts(
        input: Box<dyn BufRead + Send>,
        source_name: String,
        format: InputFormat,
        fields: FieldNames,
        progress: Progress,
        count_lines: bool,
    ) -> EventReader {
        EventReader {
            lines: Lines {
                input,
                pending: 0,
                copied: Vec::new(),
                left: 0,
            },
            parser: Parser::new(source_name, format, fields),
            progress,
            count_lines,
            done: false,
            offset: 0,
            physical: 0,
            joined: Vec::new(),
            times: EventTimes::default(),
            seen: (i64::MAX, i64::MIN),
            delimiter: if format == InputFormat::Csv { b',' } else { 0 },
        }
    }

    /// Reads numeric timestamps as `unit` (milliseconds unless set), converted to the engine's
    /// milliseconds (see [`TimeUnit`]); RFC 3339 text is read in any unit.
    pub fn with_time_unit(mut self, unit: TimeUnit) -> EventReader {
        self.parser.time_unit = unit;
        self
    }

    /// Splits CSV fields at `delimiter` (a comma unless set; ignored for JSON lines).
    pub fn with_delimiter(mut self, delimiter: crate::Delimiter) -> EventReader {
        if self.parser.format == InputFormat::Csv {
            self.delimiter = delimiter.byte();
            self.parser.set_delimiter(delimiter.byte());
        }
        self
    }

    /// A handle on the range of event times this reader has handed out so far, readable from
    /// any thread (for [`EventTimes::unit_hint`]).
    pub fn event_times(&self) -> EventTimes {
        self.times.clone()
    }

    /// Sets how a CSV header is recognised (ignored for JSON lines).
    pub fn with_csv_header(mut self, mode: CsvHeader) -> EventReader {
        self.parser.header_mode = mode;
        self
    }

    /// For a CSV stream without a header ([`CsvHeader::Absent`]) that is a part of a longer
    /// input (a chunk of it, `window-timely`): takes the columns (the field count, and where the
    /// time, key and value are) from `first_record`, the input's first record (one line, line
    /// end optional), as a reader of the whole input takes them, instead of from this stream's
    /// own first record. Call it after the other settings, before the first record. Does
    /// nothing where the line gives no columns (not UTF-8, not CSV, too few fields): the
    /// stream's first record gives them then, as before.
    #[must_use]
    pub fn with_csv_columns_from(mut self, first_record: &[u8]) -> EventReader {
        if self.parser.format == InputFormat::Csv && self.parser.header_pending() {
            let line = first_record.strip_suffix(b"\n").unwrap_or(first_record);
            let line = strip_cr(line);
            let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
            // The record itself is not handed out, nor its error: only the columns stay.
            let _ = self.parser.parse(line);
        }
        self
    }

    /// Reads only what `uses` says of each record besides its time: no key (every event has
    /// the empty key), or an optional value (NaN where a record has none). Call it before the
    /// first record.
    pub fn reading(mut self, uses: FieldUse) -> EventReader {
        self.parser.set_uses(uses);
        self
    }

    /// The name used in error messages.
    pub fn source_name(&self) -> &str {
        &self.parser.source_name
    }

    /// The format being parsed.
    pub fn format(&self) -> InputFormat {
        self.parser.format
    }

    /// The number of physical lines read so far.
    pub fn lines_read(&self) -> u64 {
        self.physical
    }

    /// Bytes read so far (see [`Progress::bytes_read`]).
    pub fn bytes_read(&self) -> u64 {
        self.progress.bytes_read()
    }

    /// The total input size in bytes if known (see [`Progress::total_bytes`]).
    pub fn total_bytes(&self) -> Option<u64> {
        self.progress.total_bytes()
    }

    /// A handle that reports progress from any thread, e.g. after the reader
    /// was moved to a source thread of the engine's runtime.
    pub fn progress(&self) -> Progress {
        self.progress.clone()
    }

    /// How far the reader has read: through the last record (or rejected line) it handed out.
    pub fn read_position(&self) -> ReadPosition {
        ReadPosition {
            offset: self.offset,
            line: self.physical,
        }
    }

    /// Moves a reader that has read nothing yet to `position` of an earlier reader of the same
    /// stream (a job restarted from a checkpoint): reads the lines before it without parsing
    /// them, except the CSV header, so that the next record is the one the earlier reader would
    /// have read next, with the same line numbers. Costs one read of those bytes (for a `.gz`
    /// file, decompressing them: a gzip stream has no other way in).
    ///
    /// # Errors
    /// An [`InputErrorKind::Io`] error when the stream cannot be read, ends before `position`,
    /// or `position` is not at the end of a line there (the input is not the one the
    /// checkpoint read); a header error as reading would give it.
    pub fn skip_to(&mut self, position: ReadPosition) -> Result<(), InputError> {
        let changed = |r: &Self, what: &str| {
            let mut e = r.parser.error(
                InputErrorKind::Io,
                None,
                format!(
                    "cannot continue at byte {} (line {}) where the checkpoint left this input: {what}; \
                     the input is not the one the checkpoint read",
                    position.offset, position.line
                ),
                b"",
            );
            e.line = r.physical;
            e
        };
        let mut ended = false;
        while self.offset < position.offset {
            let (line, consumed) = match self.lines.next_line() {
                Ok(read) => read,
                Err(e) => {
                    let what = format!("read error: {e}");
                    return Err(changed(self, &what));
                }
            };
            self.offset += consumed as u64;
            if self.count_lines {
                self.progress
                    .bytes
                    .fetch_add(consumed as u64, Ordering::Relaxed);
            }
            let raw = match line {
                Line::Eof => {
                    ended = true;
                    break;
                }
                Line::TooLong { .. } => {
                    self.physical += 1;
                    continue;
                }
                Line::Whole(raw) => raw,
            };
            self.physical += 1;
            let terminator = consumed - raw.len();
            let raw = match raw.strip_prefix(b"\xEF\xBB\xBF") {
                Some(rest) if self.physical == 1 => rest,
                _ => raw,
            };
            if is_blank(raw, self.delimiter) || !self.parser.header_pending() {
                continue;
            }
            // A bad line before the position was reported by the earlier reader, which went
            // on after it; only an error that stops reading stops here too.
            self.parser.line_no = self.physical;
            let raw = if quote_open(raw, self.delimiter) {
                self.joined.clear();
                self.joined.extend_from_slice(raw);
                push_terminator(&mut self.joined, terminator);
                match self.join_rest() {
                    Ok(()) => &self.joined[..],
                    Err(err) if err.is_fatal() => return Err(err),
                    Err(_) => continue,
                }
            } else {
                raw
            };
            match self.parser.parse(raw) {
                Err(err) if err.is_fatal() => {
                    self.done = true;
                    return Err(err);
                }
                _ => {}
            }
        }
        if ended {
            return Err(changed(self, "it ends before"));
        }
        if self.offset != position.offset {
            return Err(changed(self, "no line ends there"));
        }
        if self.physical != position.line {
            return Err(changed(
                self,
                &format!("it is line {} there", self.physical),
            ));
        }
        Ok(())
    }

    /// Reads the physical lines after a CSV line whose quoted field is still open at its end (in
    /// `joined`, with its terminator) into `joined`, each with its terminator but the last, until
    /// the quote closes: a quoted field may hold line breaks (RFC 4180, as the csv crate reads
    /// it). The record keeps the number of its first line (the parser's).
    ///
    /// # Errors
    /// A read error (fatal: the reader ends); the input ends with the quote open, or the record
    /// grows longer than [`MAX_LINE_BYTES`] (malformed: reading goes on after the lines read).
    fn join_rest(&mut self) -> Result<(), InputError> {
        let mut state = scan_quotes(Scan::FieldStart, &self.joined, self.delimiter);
        loop {
            let (line, consumed) = match self.lines.next_line() {
                Ok(read) => read,
                Err(e) => return Err(self.read_failed(&e)),
            };
            self.offset += consumed as u64;
            if self.count_lines {
                self.progress
                    .bytes
                    .fetch_add(consumed as u64, Ordering::Relaxed);
            }
            let line = match line {
                Line::Eof => {
                    let message = "a quoted field opened on this line is not closed before the \
                                   end of the input";
                    return Err(self.unclosed(message.to_owned(), false));
                }
                Line::TooLong { kept, len } => {
                    self.physical += 1;
                    self.joined.extend_from_slice(kept);
                    let cut = (kept.len() as u64) < len;
                    return Err(self.unclosed(self.too_long_record(), cut));
                }
                Line::Whole(line) => line,
            };
            self.physical += 1;
            state = scan_quotes(state, line, self.delimiter);
            self.joined.extend_from_slice(line);
            if state != Scan::Quoted {
                return Ok(());
            }
            push_terminator(&mut self.joined, consumed - line.len());
            if self.joined.len() > MAX_LINE_BYTES {
                return Err(self.unclosed(self.too_long_record(), false));
            }
        }
    }

    /// A read error (fatal: the reader ends), on the line after the last complete one.
    fn read_failed(&mut self, e: &std::io::Error) -> InputError {
        self.done = true;
        let mut err = self
            .parser
            .error(InputErrorKind::Io, None, format!("read error: {e}"), b"");
        err.line = self.physical + 1;
        err
    }

    /// The message for a record whose quoted field does not close within [`MAX_LINE_BYTES`].
    fn too_long_record(&self) -> String {
        format!(
            "the record starting on this line is longer than {MAX_LINE_BYTES} bytes: a quoted \
             field opened on it is not closed within that (its {} lines are skipped)",
            self.physical + 1 - self.parser.line_no
        )
    }

    /// A malformed-record error about the joined lines, `cut` when not all their bytes are kept.
    fn unclosed(&self, message: String, cut: bool) -> InputError {
        let mut err = self
            .parser
            .error(InputErrorKind::Malformed, None, message, &self.joined);
        err.raw_cut = cut;
        err
    }

    /// The next record as an event with a `String` key (what the iterator yields).
    pub fn next_event(&mut self) -> Option<Result<Event, InputError>> {
        self.next_keyed(|key: Cow<'_, str>| key.into_owned())
    }

    /// The next record, its key made by `key` from the key's text (borrowed from the input
    /// where the text needs no unescaping): a [`crate::KeyCache`] id, or an owned `String`.
    /// `None` at the end of the input, or after a fatal error.
    #[inline]
    pub fn next_keyed<K>(
        &mut self,
        mut key: impl FnMut(Cow<'_, str>) -> K,
    ) -> Option<Result<Event<K>, InputError>> {
        while !self.done {
            let (line, consumed) = match self.lines.next_line() {
                Ok(read) => read,
                Err(e) => return Some(Err(self.read_failed(&e))),
            };
            self.offset += consumed as u64;
            if self.count_lines {
                self.progress
                    .bytes
                    .fetch_add(consumed as u64, Ordering::Relaxed);
            }
            let raw = match line {
                Line::Eof => {
                    self.done = true;
                    return None;
                }
                Line::TooLong { kept, len } => {
                    self.physical += 1;
                    self.parser.line_no = self.physical;
                    return Some(Err(too_long(&self.parser, kept, len)));
                }
                Line::Whole(raw) => raw,
            };
            self.physical += 1;
            self.parser.line_no = self.physical;
            let terminator = consumed - raw.len();
            let raw = match raw.strip_prefix(b"\xEF\xBB\xBF") {
                Some(rest) if self.physical == 1 => rest,
                _ => raw,
            };
            // A blank line (empty, or only spaces and tabs) holds no record, in either format.
            if is_blank(raw, self.delimiter) {
                continue;
            }
            let raw = if self.parser.format == InputFormat::Csv && quote_open(raw, self.delimiter) {
                self.joined.clear();
                self.joined.extend_from_slice(raw);
                push_terminator(&mut self.joined, terminator);
                if let Err(err) = self.join_rest() {
                    return Some(Err(err));
                }
                &self.joined[..]
            } else {
                raw
            };
            match self.parser.parse(raw) {
                Ok(Some(r)) => {
                    self.times.see(&mut self.seen, r.timestamp);
                    return Some(Ok(Event {
                        timestamp: r.timestamp,
                        key: key(r.key),
                        value: r.value,
                        line: self.parser.line_no,
                    }));
                }
                Ok(None) => {}
                Err(err) => {
                    if err.is_fatal() {
                        self.done = true;
                    }
                    return Some(Err(err));
                }
            }
        }
        None
    }
}

/// The error for a line longer than [`MAX_LINE_BYTES`], with the bytes `kept` of its `len`.
fn too_long(parser: &Parser, kept: &[u8], len: u64) -> InputError {
    let cut = (kept.len() as u64) < len;
    let kept_note = if cut {
        format!("; only its first {} bytes are kept", kept.len())
    } else {
        String::new()
    };
    let mut err = parser.error(
        InputErrorKind::Malformed,
        None,
        format!("line is longer than {MAX_LINE_BYTES} bytes ({len} bytes{kept_note})"),
        kept,
    );
    err.raw_cut = cut;
    err
}

/// Where a CSV scan is, as the csv crate reads a line: at the start of a field, in an unquoted
/// one, in a quoted one, or just after a quote in a quoted one (which closes it unless another
/// quote follows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scan {
    FieldStart,
    Unquoted,
    Quoted,
    AfterQuote,
}

/// The state after reading `bytes` from `state`, with csv-core's rules: a quote opens a quoted
/// field only at the start of a field, `""` in one is a quote, and outside quotes the
/// `delimiter`, `\r` or `\n` ends the field.
fn scan_quotes(mut state: Scan, bytes: &[u8], delimiter: u8) -> Scan {
    for &b in bytes {
        state = match (state, b) {
            (Scan::Quoted, b'"') => Scan::AfterQuote,
            (Scan::Quoted, _) => Scan::Quoted,
            (Scan::AfterQuote, b'"') | (Scan::FieldStart, b'"') => Scan::Quoted,
            (_, b'\r' | b'\n') => Scan::FieldStart,
            (_, b) if b == delimiter => Scan::FieldStart,
            _ => Scan::Unquoted,
        };
    }
    state
}

/// Where a CSV byte stream stands with respect to quoted fields, by the rule this crate's CSV
/// reader joins lines with (csv-core's: a quote opens a quoted field only at the start of a
/// field, `""` in one is a quote): for a runtime that cuts an input into chunks of lines and
/// must not cut inside a record (`window-timely`).
#[derive(Clone, Copy, Debug)]
pub struct CsvQuotes {
    state: Scan,
    delimiter: u8,
}

impl CsvQuotes {
    /// At the start of a stream whose fields are split at `delimiter`.
    #[must_use]
    pub fn new(delimiter: u8) -> Self {
        Self {
            state: Scan::FieldStart,
            delimiter,
        }
    }

    /// Reads `bytes` (a whole line with its terminator, or any part of the stream).
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.state == Scan::FieldStart && memchr::memchr(b'"', bytes).is_none() {
            return;
        }
        self.state = scan_quotes(self.state, bytes, self.delimiter);
    }

    /// Whether the stream read so far ends inside a quoted field: a line end there is not the
    /// end of a record.
    #[must_use]
    pub fn in_quotes(&self) -> bool {
        self.state == Scan::Quoted
    }
}

/// Whether a CSV line ends inside a quoted field (its record goes on on the next line).
#[inline]
fn quote_open(line: &[u8], delimiter: u8) -> bool {
    memchr::memchr(b'"', line).is_some()
        && scan_quotes(Scan::FieldStart, line, delimiter) == Scan::Quoted
}

/// Appends a line's terminator, of `len` bytes (`\n`, `\r\n`, or none at the end of input).
fn push_terminator(joined: &mut Vec<u8>, len: usize) {
    joined.extend_from_slice(&b"\r\n"[2 - len.min(2)..]);
}

impl Iterator for EventReader {
    type Item = Result<Event, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_event()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;
    use window_core::Number;

    fn read_all(text: &str, format: InputFormat) -> Vec<Result<Event, InputError>> {
        EventReader::new(
            Cursor::new(text.as_bytes().to_vec()),
            "t",
            format,
            FieldNames::default(),
        )
        .collect()
    }

    /// Issue 16, item 11: a line of only spaces or tabs is blank, as an empty one is (it was an
    /// error "too few fields" in CSV and a JSON syntax error).
    #[test]
    fn whitespace_only_lines_are_blank_in_both_formats() {
        for (text, format) in [
            ("event_time_ms,key,value\n  \n1,a,2\n\t \r\n3,b,4\n", InputFormat::Csv),
            (
                "  \n{\"event_time_ms\":1,\"key\":\"a\",\"value\":2}\n\t\n{\"event_time_ms\":3,\"key\":\"b\",\"value\":4}\n",
                InputFormat::Jsonl,
            ),
        ] {
            let items = read_all(text, format);
            let got: Vec<(i64, u64)> = items
                .into_iter()
                .map(|i| i.map(|e| (e.timestamp, e.line)).expect("no error"))
                .collect();
            let lines = if format == InputFormat::Csv { [3, 5] } else { [2, 4] };
            assert_eq!(got, vec![(1, lines[0]), (3, lines[1])], "{format}");
        }
    }

    #[test]
    fn crlf_bom_and_blank_lines() {
        let items = read_all(
            "\u{feff}event_time_ms,key,value\r\n\r\n1,a,2\r\n\n3,b,4",
            InputFormat::Csv,
        );
        let events: Vec<Event> = items.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            events,
            vec![
                Event {
                    timestamp: 1,
                    key: "a".into(),
                    value: Number::Float(2.0),
                    line: 3,
                },
                Event {
                    timestamp: 3,
                    key: "b".into(),
                    value: Number::Float(4.0),
                    line: 5,
                },
            ]
        );
    }

    #[test]
    fn overlong_line_is_one_error_and_reading_goes_on() {
        let long = "9".repeat(MAX_LINE_BYTES + 10);
        let text = format!("event_time_ms,key,value\n1,{long},3\n2,b,4\n");
        let items = read_all(&text, InputFormat::Csv);
        assert_eq!(items.len(), 2);
        let err = items[0].as_ref().unwrap_err();
        assert_eq!(err.line, 2);
        assert_eq!(err.kind, InputErrorKind::Malformed);
        assert!(err.message.contains("longer than"), "{err}");
        assert_eq!(items[1].as_ref().unwrap().timestamp, 2);
    }
}
