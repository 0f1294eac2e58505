//! Event sources of `windowctl run`: turns a CSV or JSON-lines stream (a file,
//! a gzipped file, stdin or a TCP socket) into [`Event`]s, reporting every bad
//! record with its exact location instead of panicking or silently dropping it.
//!
//! # Record format
//!
//! Each event has a timestamp (integer milliseconds since the epoch), a key
//! (a string) and a value (a finite number); the names of the three fields are
//! configurable ([`FieldNames`], default `event_time_ms`, `key`, `value`, the
//! header of the bundled data).
//!
//! * **CSV** ([`InputFormat::Csv`]): the first non-blank line is a header, and
//!   fields are looked up by header name (extra columns are ignored). Quoted
//!   fields (`"a,b"`, `"say ""hi"""`) are handled by the `csv` crate. One
//!   record is one physical line: a quoted field cannot contain a line break.
//!   Blank lines are skipped. For a **socket** source the header is optional:
//!   if the first line has a field equal to the time field name it is the
//!   header, otherwise the columns are `time,key,value` in that order and the
//!   first line is data ([`CsvHeader::Detect`]).
//! * **JSON lines** ([`InputFormat::Jsonl`]): one JSON object per line. The
//!   timestamp is a JSON integer or a string holding one; the key is a string
//!   or a number (converted to its text); the value is a JSON number or a
//!   numeric string. Blank lines are skipped.
//!
//! Empty keys are rejected in both formats, as are `NaN` and infinite values.
//!
//! # Errors
//!
//! A bad record yields an [`InputError`] naming the source, the 1-based
//! physical line, the field and the offending text, and carrying the raw line;
//! reading then continues with the next line. Two kinds are fatal and end the
//! stream: a CSV header lacking a configured field, and an I/O failure
//! ([`InputErrorKind::is_fatal`]). What to do with the non-fatal ones is the
//! caller's choice ([`ErrorPolicy`]).

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Cursor, Read, SeekFrom, Write};
use std::net::TcpStream;
use std::num::IntErrorKind;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

use crossbeam_channel::{Receiver, Sender};
use serde_json::Value;

pub use super::error::{InputError, InputErrorKind, OpenError};

/// Lines longer than this many bytes (without terminator) are rejected as
/// malformed, so that a peer that never sends a newline cannot exhaust memory.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Capacity, in messages, of the channel returned by [`spawn_reader`].
pub const SOURCE_CHANNEL_CAPACITY: usize = 4096;

/// Read buffer size for files, stdin and sockets.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// Offending values longer than this many characters are shortened in messages.
const MAX_QUOTED_CHARS: usize = 64;

/// One input record: a key, a value and an event timestamp; by default a text key and a
/// number, as the CSV and JSON-lines readers produce them.
///
/// Equality compares timestamp, key and value only: `line` says where the event was read, not
/// what it is.
#[derive(Debug, Clone)]
pub struct Event<K = String, V = f64> {
    /// Event time, in milliseconds since the Unix epoch.
    pub timestamp: i64,
    /// The key the stream is partitioned by.
    pub key: K,
    /// The measured value (always finite for the readers of this crate).
    pub value: V,
    /// The 1-based physical line of the input it came from, for error reports about it
    /// (the position in the stream, from 1, for sources that are not line-oriented; 0 when
    /// unknown).
    pub line: u64,
}

impl<K: PartialEq, V: PartialEq> PartialEq for Event<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.timestamp == other.timestamp && self.key == other.key && self.value == other.value
    }
}

/// The text format of an input stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum InputFormat {
    /// Comma-separated values with a header row.
    #[default]
    Csv,
    /// One JSON object per line.
    Jsonl,
}

impl InputFormat {
    /// Guesses the format from a file name: `.jsonl`, `.ndjson` or `.json`
    /// (optionally followed by `.gz`) mean JSON lines, anything else CSV.
    pub fn from_path(path: impl AsRef<Path>) -> InputFormat {
        let name = path.as_ref().to_string_lossy().to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        if [".jsonl", ".ndjson", ".json"]
            .iter()
            .any(|ext| name.ends_with(ext))
        {
            InputFormat::Jsonl
        } else {
            InputFormat::Csv
        }
    }
}

impl fmt::Display for InputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InputFormat::Csv => "csv",
            InputFormat::Jsonl => "jsonl",
        })
    }
}

impl FromStr for InputFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "csv" => Ok(InputFormat::Csv),
            "jsonl" | "ndjson" | "json" => Ok(InputFormat::Jsonl),
            _ => Err(format!(
                "unknown input format {s:?} (expected csv or jsonl)"
            )),
        }
    }
}

/// The names of the three fields of an event, as they appear in the CSV
/// header or as JSON object keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldNames {
    /// Name of the timestamp field (integer milliseconds).
    pub time: String,
    /// Name of the key field.
    pub key: String,
    /// Name of the value field.
    pub value: String,
}

impl Default for FieldNames {
    /// `event_time_ms`, `key`, `value`: the header of the bundled data.
    fn default() -> Self {
        FieldNames {
            time: "event_time_ms".to_owned(),
            key: "key".to_owned(),
            value: "value".to_owned(),
        }
    }
}

/// Whether a CSV stream must start with a header row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CsvHeader {
    /// The first non-blank line is the header (files and stdin).
    #[default]
    Required,
    /// The first non-blank line is the header if one of its fields equals the
    /// time field name; otherwise the columns are time, key, value in that
    /// order and the line is data (sockets, where a producer such as
    /// `nc -lk` usually sends data only).
    Detect,
}

/// Where events are read from, as written on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputSpec {
    /// Standard input (`-`).
    Stdin,
    /// A file; decompressed with gzip if its name ends with `.gz`.
    File(PathBuf),
    /// A TCP server at `HOST:PORT` that this process connects to as a client,
    /// like Flink's `socketTextStream`.
    Socket(String),
}

impl InputSpec {
    /// Interprets a command-line input argument: `-` is stdin, `tcp://HOST:PORT`
    /// is a socket, an existing path is a file, `HOST:PORT` (a numeric port,
    /// no path separator in the host) is a socket, anything else is a file.
    pub fn parse(s: &str) -> InputSpec {
        if s == "-" {
            return InputSpec::Stdin;
        }
        if let Some(addr) = s.strip_prefix("tcp://") {
            return InputSpec::Socket(addr.to_owned());
        }
        if !Path::new(s).exists() && looks_like_host_port(s) {
            return InputSpec::Socket(s.to_owned());
        }
        InputSpec::File(PathBuf::from(s))
    }

    /// The name used in error messages: the path as given, `stdin`, or
    /// `socket HOST:PORT`.
    pub fn source_name(&self) -> String {
        match self {
            InputSpec::Stdin => "stdin".to_owned(),
            InputSpec::File(path) => path.display().to_string(),
            InputSpec::Socket(addr) => format!("socket {addr}"),
        }
    }
}

impl FromStr for InputSpec {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(InputSpec::parse(s))
    }
}

impl fmt::Display for InputSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source_name())
    }
}

fn looks_like_host_port(s: &str) -> bool {
    match s.rsplit_once(':') {
        Some((host, port)) => {
            !host.is_empty()
                && !host.contains(['/', '\\'])
                && port.parse::<u16>().is_ok_and(|p| p != 0)
        }
        None => false,
    }
}

/// Opens an input and returns a reader of its events.
///
/// Files ending in `.gz` are decompressed (concatenated gzip members are
/// read in full). A socket is connected to as a client; in CSV format its
/// header is optional ([`CsvHeader::Detect`]).
///
/// # Errors
///
/// [`OpenError::Open`] if the file cannot be opened, [`OpenError::Connect`] if
/// the connection fails. Bad content is reported later, per record.
pub fn open_source(
    spec: &InputSpec,
    format: InputFormat,
    fields: FieldNames,
) -> Result<EventReader, OpenError> {
    let opened = open_input(spec)?;
    let reader = EventReader::from_parts(
        opened.input,
        spec.source_name(),
        format,
        fields,
        opened.progress,
        opened.count_lines,
    );
    Ok(if matches!(spec, InputSpec::Socket(_)) {
        reader.with_csv_header(CsvHeader::Detect)
    } else {
        reader
    })
}

/// An opened input: its bytes, and how far they have been read.
pub(crate) struct Opened {
    pub(crate) input: Box<dyn BufRead + Send>,
    pub(crate) progress: Progress,
    /// Whether the reader counts consumed bytes itself (no counting reader below).
    pub(crate) count_lines: bool,
}

/// Opens the bytes of an input: a file (`.gz` decompressed), stdin, or a TCP connection.
///
/// # Errors
/// As [`open_source`].
pub(crate) fn open_input(spec: &InputSpec) -> Result<Opened, OpenError> {
    match spec {
        InputSpec::Stdin => Ok(Opened {
            input: Box::new(BufReader::with_capacity(READ_BUFFER_BYTES, io::stdin())),
            progress: Progress::new(None),
            count_lines: true,
        }),
        InputSpec::File(path) => open_file(path),
        InputSpec::Socket(addr) => {
            let stream = TcpStream::connect(addr.as_str()).map_err(|error| OpenError::Connect {
                addr: addr.clone(),
                error,
            })?;
            let progress = Progress::new(None);
            let counted = CountingReader {
                inner: stream,
                bytes: Arc::clone(&progress.bytes),
            };
            Ok(Opened {
                input: Box::new(BufReader::with_capacity(READ_BUFFER_BYTES, counted)),
                progress,
                count_lines: false,
            })
        }
    }
}

fn open_file(path: &Path) -> Result<Opened, OpenError> {
    let open_error = |error| OpenError::Open {
        path: path.display().to_string(),
        error,
    };
    let mut file = File::open(path).map_err(open_error)?;
    let metadata = file.metadata().map_err(open_error)?;
    if metadata.is_dir() {
        // Opening a directory succeeds on Unix; reading it fails later, at "line 1".
        return Err(open_error(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory",
        )));
    }
    let total = metadata.len();
    let gzipped = path
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("gz"));
    if gzipped && total > 0 {
        // A clear error for a `.gz` that is not gzip, instead of "unexpected end of
        // file" from the decoder.
        let mut magic = [0_u8; 2];
        let read = io::Read::read(&mut file, &mut magic).map_err(open_error)?;
        if read < 2 || magic != [0x1f, 0x8b] {
            return Err(OpenError::NotGzip {
                path: path.display().to_string(),
            });
        }
        io::Seek::rewind(&mut file).map_err(open_error)?;
    }
    let progress = Progress::new(Some(total));
    let counted = CountingReader {
        inner: file,
        bytes: Arc::clone(&progress.bytes),
    };
    let input: Box<dyn BufRead + Send> = if gzipped {
        Box::new(BufReader::with_capacity(
            READ_BUFFER_BYTES,
            flate2::read::MultiGzDecoder::new(counted),
        ))
    } else {
        Box::new(BufReader::with_capacity(READ_BUFFER_BYTES, counted))
    };
    Ok(Opened {
        input,
        progress,
        count_lines: false,
    })
}

/// A cloneable, thread-safe view of how far a reader has got, for a progress
/// bar that keeps working after the reader moved to its own thread.
#[derive(Debug, Clone)]
pub struct Progress {
    bytes: Arc<AtomicU64>,
    total: Option<u64>,
}

impl Progress {
    fn new(total: Option<u64>) -> Progress {
        Progress {
            bytes: Arc::new(AtomicU64::new(0)),
            total,
        }
    }

    /// Bytes read so far. For a gzipped file these are compressed bytes, so
    /// that they compare with [`Progress::total_bytes`].
    pub fn bytes_read(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// The total number of bytes if known: the file length (compressed length
    /// for `.gz`); `None` for stdin, sockets and readers built from a `BufRead`.
    pub fn total_bytes(&self) -> Option<u64> {
        self.total
    }
}

/// Counts the bytes that pass through a reader.
struct CountingReader<R> {
    inner: R,
    bytes: Arc<AtomicU64>,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Column positions of the three fields in a CSV stream.
#[derive(Debug, Clone, Copy)]
struct Columns {
    time: usize,
    key: usize,
    value: usize,
    /// The number of fields every record must have.
    count: usize,
}

/// Result of reading one physical line.
enum LineRead {
    /// End of input.
    Eof,
    /// A line, in `EventReader::line` without its terminator.
    Line,
    /// A line longer than [`MAX_LINE_BYTES`]; its first bytes are in
    /// `EventReader::line`, the rest was discarded.
    TooLong,
}

/// Reads [`Event`]s from a CSV or JSON-lines stream, one
/// `Result<Event, InputError>` per record (blank lines and the CSV header
/// yield nothing).
///
/// After a fatal error (see [`InputErrorKind::is_fatal`]) the iterator ends.
/// Never panics, whatever the input.
pub struct EventReader {
    input: Box<dyn BufRead + Send>,
    source_name: String,
    format: InputFormat,
    fields: FieldNames,
    header_mode: CsvHeader,
    columns: Option<Columns>,
    /// Physical lines read so far (the number of the current line).
    line_no: u64,
    /// The current line, without terminator.
    line: Vec<u8>,
    /// Parses one CSV line at a time; its cursor is refilled for each line.
    csv: csv::Reader<Cursor<Vec<u8>>>,
    record: csv::ByteRecord,
    progress: Progress,
    /// Whether consumed line bytes are added to `progress` here (true when no
    /// counting reader sits below the `BufRead`).
    count_lines: bool,
    done: bool,
}

impl fmt::Debug for EventReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventReader")
            .field("source_name", &self.source_name)
            .field("format", &self.format)
            .field("fields", &self.fields)
            .field("header_mode", &self.header_mode)
            .field("line", &self.line_no)
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

    fn from_parts(
        input: Box<dyn BufRead + Send>,
        source_name: String,
        format: InputFormat,
        fields: FieldNames,
        progress: Progress,
        count_lines: bool,
    ) -> EventReader {
        let mut csv = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(Cursor::new(Vec::new()));
        // Explicit (empty) headers keep the csv crate from consuming a record
        // as its header when the cursor is rewound.
        csv.set_byte_headers(csv::ByteRecord::new());
        EventReader {
            input,
            source_name,
            format,
            fields,
            header_mode: CsvHeader::Required,
            columns: None,
            line_no: 0,
            line: Vec::new(),
            csv,
            record: csv::ByteRecord::new(),
            progress,
            count_lines,
            done: false,
        }
    }

    /// Sets how a CSV header is recognised (ignored for JSON lines).
    pub fn with_csv_header(mut self, mode: CsvHeader) -> EventReader {
        self.header_mode = mode;
        self
    }

    /// The name used in error messages.
    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// The format being parsed.
    pub fn format(&self) -> InputFormat {
        self.format
    }

    /// The number of physical lines read so far.
    pub fn lines_read(&self) -> u64 {
        self.line_no
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
    /// was moved into [`spawn_reader`].
    pub fn progress(&self) -> Progress {
        self.progress.clone()
    }

    /// Reads the next physical line into `self.line`, without its terminator.
    fn read_line(&mut self) -> io::Result<LineRead> {
        self.line.clear();
        let limit = MAX_LINE_BYTES as u64 + 1;
        let mut consumed = (&mut self.input)
            .take(limit)
            .read_until(b'\n', &mut self.line)?;
        if consumed == 0 {
            return Ok(LineRead::Eof);
        }
        self.line_no += 1;
        let mut result = LineRead::Line;
        if self.line.last() == Some(&b'\n') {
            self.line.pop();
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
        } else if self.line.len() > MAX_LINE_BYTES {
            self.line.truncate(MAX_LINE_BYTES);
            result = LineRead::TooLong;
            consumed += self.skip_rest_of_line()?;
        }
        if self.count_lines {
            self.progress
                .bytes
                .fetch_add(consumed as u64, Ordering::Relaxed);
        }
        Ok(result)
    }

    /// Discards input up to and including the next newline.
    fn skip_rest_of_line(&mut self) -> io::Result<usize> {
        let mut skipped = 0;
        loop {
            let buf = match self.input.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok(skipped);
            }
            let (n, found) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            self.input.consume(n);
            skipped += n;
            if found {
                return Ok(skipped);
            }
        }
    }

    fn error(&self, kind: InputErrorKind, field: Option<&str>, message: String) -> InputError {
        InputError {
            source_name: self.source_name.clone(),
            line: self.line_no,
            field: field.map(str::to_owned),
            message,
            raw: String::from_utf8_lossy(&self.line).into_owned(),
            kind,
        }
    }

    /// Parses `self.line` (valid UTF-8, not blank) as CSV. `Ok(None)` for a
    /// header line.
    fn parse_csv_line(&mut self) -> Result<Option<Event>, InputError> {
        // Hand the line to the csv parser, rewound to its start.
        std::mem::swap(self.csv.get_mut().get_mut(), &mut self.line);
        let parsed = self
            .csv
            .seek_raw(SeekFrom::Start(0), csv::Position::new())
            .and_then(|()| self.csv.read_byte_record(&mut self.record));
        std::mem::swap(self.csv.get_mut().get_mut(), &mut self.line);
        match parsed {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(e) => {
                return Err(self.error(
                    InputErrorKind::Malformed,
                    None,
                    format!("cannot parse the line as CSV: {e}"),
                ))
            }
        }
        let record = std::mem::take(&mut self.record);
        let result = self.csv_record_to_event(&record);
        self.record = record;
        result
    }

    fn csv_record_to_event(
        &mut self,
        record: &csv::ByteRecord,
    ) -> Result<Option<Event>, InputError> {
        if record.iter().any(|raw| std::str::from_utf8(raw).is_err()) {
            return Err(self.error(
                InputErrorKind::Malformed,
                None,
                "line is not valid UTF-8".to_owned(),
            ));
        }
        // Every field is UTF-8 (checked above); rows read three of them, no vector per line.
        let field = |i: usize| record.get(i).and_then(|raw| std::str::from_utf8(raw).ok());
        let columns = match self.columns {
            Some(columns) => columns,
            None => {
                let fields: Vec<&str> = (0..record.len()).filter_map(field).collect();
                let is_header = match self.header_mode {
                    CsvHeader::Required => true,
                    CsvHeader::Detect => fields.iter().any(|f| f.trim() == self.fields.time),
                };
                if is_header {
                    let columns = self.resolve_header(&fields)?;
                    self.columns = Some(columns);
                    return Ok(None);
                }
                let columns = Columns {
                    time: 0,
                    key: 1,
                    value: 2,
                    count: 3,
                };
                self.columns = Some(columns);
                columns
            }
        };
        if record.len() != columns.count {
            return Err(self.error(
                InputErrorKind::Malformed,
                None,
                format!("expected {} fields, found {}", columns.count, record.len()),
            ));
        }
        let (time, key, value) = (
            field(columns.time).unwrap_or_default(),
            field(columns.key).unwrap_or_default(),
            field(columns.value).unwrap_or_default(),
        );
        let timestamp = parse_timestamp_text(time)
            .map_err(|(kind, msg)| self.error(kind, Some(&self.fields.time), msg))?;
        if key.is_empty() {
            return Err(self.error(
                InputErrorKind::MissingField,
                Some(&self.fields.key),
                "missing (empty)".to_owned(),
            ));
        }
        let value = parse_value_text(value)
            .map_err(|(kind, msg)| self.error(kind, Some(&self.fields.value), msg))?;
        Ok(Some(Event {
            timestamp,
            key: key.to_owned(),
            value,
            line: self.line_no,
        }))
    }

    fn resolve_header(&self, header: &[&str]) -> Result<Columns, InputError> {
        let find = |name: &str| header.iter().position(|h| h.trim() == name);
        let mut positions = [0; 3];
        for (slot, name) in
            positions
                .iter_mut()
                .zip([&self.fields.time, &self.fields.key, &self.fields.value])
        {
            match find(name) {
                Some(i) => *slot = i,
                None => {
                    let columns: Vec<String> =
                        header.iter().map(|h| format!("{:?}", h.trim())).collect();
                    let json = header
                        .first()
                        .is_some_and(|h| h.trim_start().starts_with('{'));
                    let hint = if json {
                        "; the input looks like JSON lines: read it as JSON lines \
                         (windowctl: --format jsonl)"
                    } else {
                        "; a header row with the configured field names is required"
                    };
                    return Err(self.error(
                        InputErrorKind::Header,
                        Some(name),
                        format!(
                            "no such column in the CSV header (columns: {}){hint}",
                            columns.join(", ")
                        ),
                    ));
                }
            }
        }
        Ok(Columns {
            time: positions[0],
            key: positions[1],
            value: positions[2],
            count: header.len(),
        })
    }

    /// Parses `self.line` (valid UTF-8, not blank) as one JSON object.
    fn parse_json_line(&self, text: &str) -> Result<Event, InputError> {
        let object = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) => object,
            Ok(other) => {
                return Err(self.error(
                    InputErrorKind::Malformed,
                    None,
                    format!("expected a JSON object, found {}", json_type(&other)),
                ))
            }
            Err(e) => {
                return Err(self.error(
                    InputErrorKind::Malformed,
                    None,
                    format!("invalid JSON: {e}"),
                ))
            }
        };
        let names = &self.fields;
        let missing = |name: &str, value: Option<&Value>| {
            let message = if value.is_some() {
                "missing (null)"
            } else {
                "missing"
            };
            self.error(InputErrorKind::MissingField, Some(name), message.to_owned())
        };

        let timestamp = match object.get(&names.time) {
            None | Some(Value::Null) => return Err(missing(&names.time, object.get(&names.time))),
            Some(Value::String(s)) => parse_timestamp_text(s),
            Some(Value::Number(n)) => json_timestamp(n),
            Some(other) => Err((
                InputErrorKind::InvalidTimestamp,
                format!(
                    "{} is not an integer number of milliseconds",
                    json_text(other)
                ),
            )),
        }
        .map_err(|(kind, msg)| self.error(kind, Some(&names.time), msg))?;

        let key = match object.get(&names.key) {
            None | Some(Value::Null) => return Err(missing(&names.key, object.get(&names.key))),
            Some(Value::String(s)) if s.is_empty() => {
                return Err(self.error(
                    InputErrorKind::MissingField,
                    Some(&names.key),
                    "missing (empty)".to_owned(),
                ))
            }
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            Some(other) => {
                return Err(self.error(
                    InputErrorKind::InvalidKey,
                    Some(&names.key),
                    format!("{} is not a string or a number", json_text(other)),
                ))
            }
        };

        let value = match object.get(&names.value) {
            None | Some(Value::Null) => {
                return Err(missing(&names.value, object.get(&names.value)))
            }
            Some(Value::String(s)) => parse_value_text(s),
            Some(Value::Number(n)) => match n.as_f64() {
                Some(v) if v.is_finite() => Ok(v),
                _ => Err((
                    InputErrorKind::InvalidValue,
                    format!("{n} is not a finite number"),
                )),
            },
            Some(other) => Err((
                InputErrorKind::InvalidValue,
                format!("{} is not a number", json_text(other)),
            )),
        }
        .map_err(|(kind, msg)| self.error(kind, Some(&names.value), msg))?;

        Ok(Event {
            timestamp,
            key,
            value,
            line: self.line_no,
        })
    }
}

impl Iterator for EventReader {
    type Item = Result<Event, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let read = match self.read_line() {
                Ok(read) => read,
                Err(e) => {
                    self.done = true;
                    // The failing line is the one after the last complete one.
                    let mut err = self.error(InputErrorKind::Io, None, format!("read error: {e}"));
                    err.line = self.line_no + 1;
                    return Some(Err(err));
                }
            };
            match read {
                LineRead::Eof => {
                    self.done = true;
                    return None;
                }
                LineRead::TooLong => {
                    return Some(Err(self.error(
                        InputErrorKind::Malformed,
                        None,
                        format!("line is longer than {MAX_LINE_BYTES} bytes"),
                    )))
                }
                LineRead::Line => {}
            }
            if self.line_no == 1 && self.line.starts_with(b"\xEF\xBB\xBF") {
                self.line.drain(..3);
            }
            if self.line.is_empty() {
                continue;
            }
            let text = match std::str::from_utf8(&self.line) {
                Ok(text) => text,
                Err(e) => {
                    return Some(Err(self.error(
                        InputErrorKind::Malformed,
                        None,
                        format!(
                            "line is not valid UTF-8 (invalid byte at column {})",
                            e.valid_up_to() + 1
                        ),
                    )))
                }
            };
            let result = match self.format {
                InputFormat::Jsonl => {
                    if text.trim().is_empty() {
                        continue;
                    }
                    self.parse_json_line(text).map(Some)
                }
                InputFormat::Csv => self.parse_csv_line(),
            };
            match result {
                Ok(Some(event)) => return Some(Ok(event)),
                Ok(None) => continue,
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

/// Shortens and quotes an offending value for a message.
fn quote(text: &str) -> String {
    if text.chars().count() <= MAX_QUOTED_CHARS {
        format!("{text:?}")
    } else {
        let prefix: String = text.chars().take(MAX_QUOTED_CHARS).collect();
        format!("{prefix:?}...")
    }
}

/// Parses a timestamp written as text (a CSV field or a JSON string).
fn parse_timestamp_text(text: &str) -> Result<i64, (InputErrorKind, String)> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err((InputErrorKind::MissingField, "missing (empty)".to_owned()));
    }
    trimmed.parse::<i64>().map_err(|e| {
        let message = match e.kind() {
            IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => format!(
                "{} is out of range for a 64-bit millisecond timestamp",
                quote(text)
            ),
            _ => format!("{} is not an integer number of milliseconds", quote(text)),
        };
        (InputErrorKind::InvalidTimestamp, message)
    })
}

/// Checks a JSON number timestamp: it must be an integer in the `i64` range.
fn json_timestamp(n: &serde_json::Number) -> Result<i64, (InputErrorKind, String)> {
    if let Some(v) = n.as_i64() {
        return Ok(v);
    }
    /// 2^63, the first integer above the `i64` range.
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    let out_of_range = n.is_u64()
        || n.as_f64()
            .is_some_and(|f| f.fract() == 0.0 && !(-TWO_POW_63..TWO_POW_63).contains(&f));
    let message = if out_of_range {
        format!("{n} is out of range for a 64-bit millisecond timestamp")
    } else {
        format!("{n} is not an integer number of milliseconds")
    };
    Err((InputErrorKind::InvalidTimestamp, message))
}

/// Parses a value written as text (a CSV field or a JSON string).
fn parse_value_text(text: &str) -> Result<f64, (InputErrorKind, String)> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err((InputErrorKind::MissingField, "missing (empty)".to_owned()));
    }
    match trimmed.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err((
            InputErrorKind::InvalidValue,
            format!("{} is not a finite number", quote(text)),
        )),
        Err(_) => Err((
            InputErrorKind::InvalidValue,
            format!("{} is not a number", quote(text)),
        )),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The JSON text of a value, shortened for a message.
fn json_text(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= MAX_QUOTED_CHARS {
        text
    } else {
        let prefix: String = text.chars().take(MAX_QUOTED_CHARS).collect();
        format!("{prefix}...")
    }
}

/// A message from a reader thread started by [`spawn_reader`].
#[derive(Debug, Clone, PartialEq)]
pub enum SourceMessage {
    /// A parsed event.
    Event(Event),
    /// A rejected record (hand it to an [`ErrorPolicy`]). A CSV header error
    /// also arrives here; it is fatal and is followed by [`SourceMessage::End`].
    Error(InputError),
    /// Reading failed; the source has ended and nothing follows. The text
    /// names the source and line.
    Io(String),
    /// The input is exhausted; nothing follows.
    End,
}

/// Runs `reader` on its own thread and returns the receiving end of a bounded
/// channel ([`SOURCE_CHANNEL_CAPACITY`] messages) carrying its events and
/// errors, ended by [`SourceMessage::End`] or [`SourceMessage::Io`].
///
/// Receive with `recv_timeout` to keep a processing-time clock running while
/// the source is silent. Dropping the receiver stops the thread at its next
/// send (a thread blocked reading a silent socket stays blocked until data,
/// end of stream or process exit).
pub fn spawn_reader(reader: EventReader) -> Receiver<SourceMessage> {
    let (tx, rx) = crossbeam_channel::bounded(SOURCE_CHANNEL_CAPACITY);
    let fallback = tx.clone();
    let name = reader.source_name.clone();
    let spawned = thread::Builder::new()
        .name("windowctl-source".to_owned())
        .spawn(move || run_reader(reader, &tx));
    if let Err(e) = spawned {
        let _ = fallback.try_send(SourceMessage::Io(format!(
            "{name}: cannot start the reader thread: {e}"
        )));
    }
    rx
}

fn run_reader(reader: EventReader, tx: &Sender<SourceMessage>) {
    for item in reader {
        let message = match item {
            Ok(event) => SourceMessage::Event(event),
            Err(err) if err.kind == InputErrorKind::Io => {
                let _ = tx.send(SourceMessage::Io(err.to_string()));
                return;
            }
            Err(err) => SourceMessage::Error(err),
        };
        if tx.send(message).is_err() {
            return;
        }
    }
    let _ = tx.send(SourceMessage::End);
}

/// What to do with a rejected (non-fatal) input record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OnError {
    /// Stop the job with the error.
    #[default]
    Fail,
    /// Drop the record (writing it to the dead-letter file, if any) and go on.
    Skip,
}

impl fmt::Display for OnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OnError::Fail => "fail",
            OnError::Skip => "skip",
        })
    }
}

impl FromStr for OnError {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "fail" => Ok(OnError::Fail),
            "skip" => Ok(OnError::Skip),
            _ => Err(format!(
                "unknown error policy {s:?} (expected fail or skip)"
            )),
        }
    }
}

/// Appends rejected records to a CSV file with columns
/// `source,line,field,error,raw` (`field` empty when no single field is at
/// fault; `error` is the message without location). The header is written
/// only when the file is new or empty. Every record is flushed at once.
pub struct DeadLetterWriter {
    name: String,
    writer: csv::Writer<Box<dyn Write + Send>>,
}

impl fmt::Debug for DeadLetterWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeadLetterWriter")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The header of a dead-letter file.
pub const DEAD_LETTER_HEADER: [&str; 5] = ["source", "line", "field", "error", "raw"];

impl DeadLetterWriter {
    /// Opens (creating if needed) `path` for appending.
    ///
    /// # Errors
    ///
    /// [`OpenError::Create`] if the file cannot be opened or its header
    /// cannot be written.
    pub fn create(path: impl AsRef<Path>) -> Result<DeadLetterWriter, OpenError> {
        let path = path.as_ref();
        let create_error = |error| OpenError::Create {
            path: path.display().to_string(),
            error,
        };
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(create_error)?;
        let is_empty = file.metadata().map_err(create_error)?.len() == 0;
        DeadLetterWriter::from_writer(Box::new(file), path.display().to_string(), is_empty)
            .map_err(create_error)
    }

    /// Writes dead letters to any writer; `name` is used in error messages.
    ///
    /// # Errors
    ///
    /// Fails if the header cannot be written.
    pub fn from_writer(
        writer: Box<dyn Write + Send>,
        name: impl Into<String>,
        write_header: bool,
    ) -> io::Result<DeadLetterWriter> {
        let mut writer = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(writer);
        if write_header {
            writer.write_record(DEAD_LETTER_HEADER)?;
            writer.flush()?;
        }
        Ok(DeadLetterWriter {
            name: name.into(),
            writer,
        })
    }

    /// The file name used in error messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Appends one rejected record and flushes.
    ///
    /// # Errors
    ///
    /// Fails if writing fails.
    pub fn write(&mut self, err: &InputError) -> io::Result<()> {
        let line = err.line.to_string();
        self.writer.write_record([
            err.source_name.as_str(),
            line.as_str(),
            err.field.as_deref().unwrap_or(""),
            err.message.as_str(),
            err.raw.as_str(),
        ])?;
        self.writer.flush()
    }
}

/// The caller's handling of rejected records: fail, or skip and count them,
/// optionally keeping them in a dead-letter file.
#[derive(Debug, Default)]
pub struct ErrorPolicy {
    /// Fail or skip.
    pub on_error: OnError,
    /// Where skipped records are kept, if anywhere.
    pub dead_letter: Option<DeadLetterWriter>,
    /// The number of records skipped so far.
    pub skipped: u64,
}

impl ErrorPolicy {
    /// A policy without dead-letter file.
    pub fn new(on_error: OnError) -> ErrorPolicy {
        ErrorPolicy {
            on_error,
            dead_letter: None,
            skipped: 0,
        }
    }

    /// Adds a dead-letter file for skipped records.
    pub fn with_dead_letter(mut self, writer: DeadLetterWriter) -> ErrorPolicy {
        self.dead_letter = Some(writer);
        self
    }

    /// Handles a rejected record: with [`OnError::Fail`], or for a fatal error
    /// (CSV header, I/O), returns it; with [`OnError::Skip`], writes it to the
    /// dead-letter file, counts it in `skipped` and returns `Ok`.
    ///
    /// # Errors
    ///
    /// The error itself as described, or an [`InputErrorKind::Io`] error at the
    /// record's location if the dead-letter file cannot be written.
    pub fn handle(&mut self, err: InputError) -> Result<(), InputError> {
        if self.on_error == OnError::Fail || err.is_fatal() {
            return Err(err);
        }
        if let Some(dead_letter) = &mut self.dead_letter {
            if let Err(e) = dead_letter.write(&err) {
                return Err(InputError {
                    field: None,
                    message: format!(
                        "cannot write the rejected record to the dead-letter file {:?}: {e}",
                        dead_letter.name()
                    ),
                    kind: InputErrorKind::Io,
                    ..err
                });
            }
        }
        self.skipped += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(text: &str, format: InputFormat) -> Vec<Result<Event, InputError>> {
        EventReader::new(
            Cursor::new(text.as_bytes().to_vec()),
            "t",
            format,
            FieldNames::default(),
        )
        .collect()
    }

    #[test]
    fn host_port_detection() {
        assert_eq!(InputSpec::parse("-"), InputSpec::Stdin);
        assert_eq!(
            InputSpec::parse("localhost:7777"),
            InputSpec::Socket("localhost:7777".into())
        );
        assert_eq!(
            InputSpec::parse("tcp://10.0.0.1:9"),
            InputSpec::Socket("10.0.0.1:9".into())
        );
        assert_eq!(
            InputSpec::parse("[::1]:7777"),
            InputSpec::Socket("[::1]:7777".into())
        );
        assert_eq!(
            InputSpec::parse("data/x.csv"),
            InputSpec::File("data/x.csv".into())
        );
        assert_eq!(
            InputSpec::parse("dir/host:7777"),
            InputSpec::File("dir/host:7777".into())
        );
        assert_eq!(InputSpec::parse("x:0"), InputSpec::File("x:0".into()));
        assert_eq!(InputSpec::parse("x:y"), InputSpec::File("x:y".into()));
        assert_eq!(
            InputSpec::parse("localhost:7777").source_name(),
            "socket localhost:7777"
        );
    }

    #[test]
    fn format_from_path() {
        assert_eq!(InputFormat::from_path("a.csv.gz"), InputFormat::Csv);
        assert_eq!(InputFormat::from_path("a.JSONL"), InputFormat::Jsonl);
        assert_eq!(InputFormat::from_path("a.ndjson.gz"), InputFormat::Jsonl);
        assert_eq!("jsonl".parse::<InputFormat>(), Ok(InputFormat::Jsonl));
        assert!("xml"
            .parse::<InputFormat>()
            .unwrap_err()
            .contains("\"xml\""));
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
                    value: 2.0,
                    line: 3,
                },
                Event {
                    timestamp: 3,
                    key: "b".into(),
                    value: 4.0,
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

    #[test]
    fn json_timestamp_ranges() {
        let ok = |s: &str| json_timestamp(&serde_json::from_str(s).unwrap());
        assert_eq!(ok("-5"), Ok(-5));
        assert_eq!(ok("9223372036854775807"), Ok(i64::MAX));
        assert!(ok("9223372036854775808")
            .unwrap_err()
            .1
            .contains("out of range"));
        assert!(ok("1e30").unwrap_err().1.contains("out of range"));
        assert!(ok("-1e30").unwrap_err().1.contains("out of range"));
        assert!(ok("1.5").unwrap_err().1.contains("not an integer"));
        assert!(ok("1000.0").unwrap_err().1.contains("not an integer"));
    }

    #[test]
    fn error_policy() {
        let err = InputError {
            source_name: "s".into(),
            line: 3,
            field: None,
            message: "bad".into(),
            raw: "x".into(),
            kind: InputErrorKind::Malformed,
        };
        let mut fail = ErrorPolicy::new(OnError::Fail);
        assert_eq!(fail.handle(err.clone()), Err(err.clone()));
        let mut skip = ErrorPolicy::new(OnError::Skip);
        assert_eq!(skip.handle(err.clone()), Ok(()));
        assert_eq!(skip.skipped, 1);
        let fatal = InputError {
            kind: InputErrorKind::Header,
            ..err
        };
        assert_eq!(skip.handle(fatal.clone()), Err(fatal));
        assert_eq!(skip.skipped, 1);
    }
}
