//! Event sources of `windowctl run`: turns a CSV or JSON-lines stream (a file,
//! a gzipped file, stdin or a TCP socket) into [`Event`]s, reporting every bad
//! record with its exact location instead of panicking or silently dropping it.
//!
//! # Record format
//!
//! Each event has a timestamp (integer milliseconds since the epoch; another
//! unit with [`EventReader::with_time_unit`]; or an RFC 3339 date-time with an
//! offset, `2013-01-01T05:15:00Z`, in any unit: see [`crate::TimeUnit`]), a key
//! (a string) and a value (a finite number: an integer of the `i64` range exactly, as
//! [`Number::Int`], any other number as an `f64`); the names of the three fields are
//! configurable ([`FieldNames`], default `event_time_ms`, `key`, `value`, the
//! header of the bundled data).
//!
//! * **CSV** ([`InputFormat::Csv`]): the first non-blank line is a header, and
//!   fields are looked up by header name (extra columns are ignored), or by
//!   column number from 1 for a number no column is named; without a header
//!   ([`CsvHeader::Absent`]) every field is a column number. Fields are
//!   separated by commas, or another byte ([`EventReader::with_delimiter`]). Quoted
//!   fields (`"a,b"`, `"say ""hi"""`) are handled by the `csv` crate. A
//!   record is one physical line, except that a quoted field may hold line
//!   breaks (RFC 4180; what the CSV writers write for a key with one): its
//!   record then takes the following lines up to the closing quote, and errors
//!   about it name its first line. A quote opens a quoted field only at the
//!   start of a field (`a"b` is three characters), as the `csv` crate reads
//!   it; a quoted field still open at the end of the input, or a record longer
//!   than [`MAX_LINE_BYTES`], is a malformed record. Blank lines are skipped.
//!   For a **socket** source the header is optional:
//!   if the first line has a field equal to the time field name it is the
//!   header, otherwise the columns are `time,key,value` in that order and the
//!   first line is data ([`CsvHeader::Detect`]).
//! * **JSON lines** ([`InputFormat::Jsonl`]): one JSON object per line. The
//!   timestamp is a JSON integer or a string holding one; the key is a string
//!   or a number (its text as written: `1e2`, `1E2` and `100` are three keys,
//!   as they would be in CSV); the value is a JSON number or a numeric string.
//!   Blank lines are skipped.
//!
//! Empty keys are rejected in both formats, as are `NaN` and infinite values.
//! Several key fields (`FieldNames::key` = `a,b`) key by the tuple
//! ([`crate::join_key_parts`]); a job without keys or values reads less
//! ([`FieldUse`]). `docs/input-fields.md` has the rules.
//!
//! # Errors
//!
//! A bad record yields an [`InputError`] naming the source, the 1-based
//! physical line, the field and the offending text, and carrying the line's
//! bytes as read (up to [`MAX_RAW_BYTES`]; a dead-letter file keeps them);
//! reading then continues with the next line. Two kinds are fatal and end the
//! stream: a CSV header lacking a configured field, and an I/O failure
//! ([`InputErrorKind::is_fatal`]). What to do with the non-fatal ones is the
//! caller's choice ([`ErrorPolicy`]).

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub use super::error::{InputError, InputErrorKind, OpenError};
pub use crate::policy::{DeadLetterWriter, ErrorPolicy, OnError, DEAD_LETTER_HEADER};
pub use crate::reader::{EventReader, ReadPosition};
pub use window_core::Number;

/// Lines longer than this many bytes (without terminator) are rejected as
/// malformed (a CSV record whose quoted field spans lines, too: its lines together).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The most bytes of one rejected line kept in [`InputError::raw`] (for a dead-letter file):
/// 64 MiB. A line up to this long is kept whole, a longer one cut (`raw_cut`, said in the
/// error's message), so that a peer that never sends a newline cannot exhaust memory.
pub const MAX_RAW_BYTES: usize = 64 << 20;

/// Read buffer size for files, stdin and sockets.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// One input record: a key, a value and an event timestamp; by default a text key and a
/// [`Number`] (an exact integer or an `f64`), as the CSV and JSON-lines readers produce them.
///
/// Equality compares timestamp, key and value only: `line` says where the event was read, not
/// what it is.
#[derive(Debug, Clone)]
pub struct Event<K = String, V = Number> {
    /// Event time, in milliseconds since the Unix epoch.
    pub timestamp: i64,
    /// The key the stream is partitioned by.
    pub key: K,
    /// The measured value (always finite for the readers of this crate, except NaN for a
    /// record without one where the value is optional, [`FieldUse::value`]).
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

impl FieldNames {
    /// The key fields: [`FieldNames::key`] cut at commas, each trimmed. One field (`key`) keys
    /// events by its text; several (`carrier,dest`) key them by the tuple, as Flink's `keyBy`
    /// on several fields (a field whose name holds a comma cannot be named).
    #[must_use]
    pub fn key_fields(&self) -> Vec<&str> {
        self.key.split(',').map(str::trim).collect()
    }
}

/// Which fields of a record a job reads besides its time, for a job that needs no key
/// (Flink's `windowAll`) or no value (a count).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldUse {
    /// Whether the key is read. When not, every event has the empty key and the key fields
    /// need not exist (they are not looked at).
    pub key: bool,
    /// Whether every record must have a value. When not, the value is optional: read where it
    /// is there (a bad one is still an error), and NaN for a record without one (no such
    /// column or member, an empty field, JSON `null`).
    pub value: bool,
}

impl Default for FieldUse {
    /// Both read and required, as every job did before.
    fn default() -> Self {
        FieldUse {
            key: true,
            value: true,
        }
    }
}

/// Whether a CSV stream must start with a header row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CsvHeader {
    /// The first non-blank line is the header (files and stdin). A field named by a number
    /// (`2`) that no header column has as its name is the column at that position, counted
    /// from 1.
    #[default]
    Required,
    /// The first non-blank line is the header if one of its fields equals the
    /// time field name (for a time field given as a column number: if that column does not
    /// hold a timestamp); otherwise the columns are time, key, value in that
    /// order (the fields' column numbers, if they are all numbers) and the line is data
    /// (sockets, where a producer such as `nc -lk` usually sends data only).
    Detect,
    /// There is no header: every line is data, and every field is named by its column number,
    /// counted from 1 as `cut -f` and awk's `$1` count (`1`, `2`). Every record has as many
    /// fields as the first one.
    Absent,
}

/// Where events are read from, as written on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputSpec {
    /// Standard input (`-`); decompressed with gzip if it starts with gzip's magic number.
    Stdin,
    /// A file; decompressed with gzip if its name ends with `.gz` or it starts with gzip's
    /// magic number.
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
/// read in full), and so are stdin and files of any other name that start with
/// gzip's magic number (`1f 8b`; `--input - < data.csv.gz`). A socket is connected to as a client; in CSV format its
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

/// The bytes of an input as [`open_source`] would read them (a `.gz` file, or anything starting
/// with gzip's magic number, decompressed), with a handle on the bytes read: for a runtime that
/// cuts an input into chunks of lines and parses them on several threads (`window-timely`).
/// For stdin the handle's count stays at 0.
///
/// # Errors
/// As [`open_source`].
pub fn open_bytes(spec: &InputSpec) -> Result<(Box<dyn BufRead + Send>, Progress), OpenError> {
    let opened = open_input(spec)?;
    Ok((opened.input, opened.progress))
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
            input: Box::new(MaybeGzip::new(io::stdin())),
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
    let gz_name = path
        .extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("gz"));
    if !gz_name && !metadata.is_file() {
        // A pipe or a device (`<(zcat ...)`, /dev/stdin) cannot be rewound: looked at lazily.
        let progress = Progress::new(None);
        let counted = CountingReader {
            inner: file,
            bytes: Arc::clone(&progress.bytes),
        };
        return Ok(Opened {
            input: Box::new(MaybeGzip::new(counted)),
            progress,
            count_lines: false,
        });
    }
    // A file of any name is gzip when it starts with gzip's magic number; a `.gz` that does
    // not gets a clear error, instead of "unexpected end of file" from the decoder.
    let magic = metadata.is_file() && starts_with_gzip_magic(&mut file).map_err(open_error)?;
    if gz_name && total > 0 && !magic {
        return Err(OpenError::NotGzip {
            path: path.display().to_string(),
        });
    }
    // A zero-byte `.gz` is an empty input, as an empty `.csv` is (the decoder would call it
    // an unexpected end of file).
    let gzipped = (gz_name && total > 0) || magic;
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

/// The two bytes every gzip member starts with (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether a regular file starts with [`GZIP_MAGIC`]; leaves it at its start.
fn starts_with_gzip_magic(file: &mut File) -> io::Result<bool> {
    let mut magic = [0_u8; 2];
    let mut read = 0;
    while read < 2 {
        match io::Read::read(file, &mut magic[read..]) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    io::Seek::rewind(file)?;
    Ok(read == 2 && magic == GZIP_MAGIC)
}

/// A stream that cannot be rewound (stdin, a pipe), gzip-decompressed if it starts with
/// [`GZIP_MAGIC`]: decided at the first read (not when opened, so that opening stdin does not
/// wait for input). A stream whose first read brings the single byte `0x1f` is taken as gzip
/// too (no text record starts with that control character; if it is not gzip, the decoder's
/// error says so).
enum MaybeGzip<R: Read> {
    /// Nothing read yet.
    Undecided(BufReader<R>),
    /// Text.
    Plain(BufReader<R>),
    /// Gzip, decompressed.
    Gzip(BufReader<flate2::bufread::MultiGzDecoder<BufReader<R>>>),
    /// Only while deciding.
    Deciding,
}

impl<R: Read> MaybeGzip<R> {
    fn new(inner: R) -> Self {
        MaybeGzip::Undecided(BufReader::with_capacity(READ_BUFFER_BYTES, inner))
    }

    /// Looks at the first bytes, once.
    fn decide(&mut self) -> io::Result<()> {
        let MaybeGzip::Undecided(reader) = self else {
            return Ok(());
        };
        let gzip = loop {
            match reader.fill_buf() {
                Ok(buf) => break buf.starts_with(&GZIP_MAGIC) || buf == [GZIP_MAGIC[0]],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        };
        let MaybeGzip::Undecided(reader) = std::mem::replace(self, MaybeGzip::Deciding) else {
            return Ok(());
        };
        *self = if gzip {
            MaybeGzip::Gzip(BufReader::with_capacity(
                READ_BUFFER_BYTES,
                flate2::bufread::MultiGzDecoder::new(reader),
            ))
        } else {
            MaybeGzip::Plain(reader)
        };
        Ok(())
    }
}

impl<R: Read> Read for MaybeGzip<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.decide()?;
        match self {
            MaybeGzip::Plain(r) => r.read(buf),
            MaybeGzip::Gzip(r) => r.read(buf),
            MaybeGzip::Undecided(_) | MaybeGzip::Deciding => Ok(0),
        }
    }
}

impl<R: Read> BufRead for MaybeGzip<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.decide()?;
        match self {
            MaybeGzip::Plain(r) => r.fill_buf(),
            MaybeGzip::Gzip(r) => r.fill_buf(),
            MaybeGzip::Undecided(_) | MaybeGzip::Deciding => Ok(&[]),
        }
    }

    fn consume(&mut self, amt: usize) {
        match self {
            MaybeGzip::Plain(r) => r.consume(amt),
            MaybeGzip::Gzip(r) => r.consume(amt),
            MaybeGzip::Undecided(_) | MaybeGzip::Deciding => {}
        }
    }
}

/// A cloneable, thread-safe view of how far a reader has got, for a progress
/// bar that keeps working after the reader moved to its own thread.
#[derive(Debug, Clone)]
pub struct Progress {
    /// Bytes read so far, also counted by an [`EventReader`] that reads a plain `BufRead`.
    pub(crate) bytes: Arc<AtomicU64>,
    total: Option<u64>,
}

impl Progress {
    /// A handle at 0 bytes read, of `total` bytes if known.
    pub(crate) fn new(total: Option<u64>) -> Progress {
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

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Reads one byte per call: the least a pipe may bring.
    struct Trickle(std::io::Cursor<Vec<u8>>);

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(1);
            self.0.read(&mut buf[..n])
        }
    }

    /// Stdin and pipes are decompressed when they start with gzip's magic number, however
    /// their first read is cut.
    #[test]
    fn streams_starting_with_the_gzip_magic_are_decompressed() {
        let text = b"event_time_ms,key,value\n1,a,2\n".to_vec();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        io::Write::write_all(&mut gz, &text).unwrap();
        let gz = gz.finish().unwrap();
        for (input, trickle) in [(&gz, false), (&gz, true), (&text, false), (&text, true)] {
            let cursor = std::io::Cursor::new(input.clone());
            let mut out = Vec::new();
            if trickle {
                MaybeGzip::new(Trickle(cursor))
                    .read_to_end(&mut out)
                    .unwrap();
            } else {
                MaybeGzip::new(cursor).read_to_end(&mut out).unwrap();
            }
            assert_eq!(out, text, "gzip {}, trickle {trickle}", input == &gz);
        }
        let mut empty = MaybeGzip::new(std::io::Cursor::new(Vec::new()));
        assert_eq!(empty.fill_buf().unwrap(), b"");
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
}
