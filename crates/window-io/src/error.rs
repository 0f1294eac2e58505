//! Error types of the I/O layer, kept in one place so that the command line can
//! report every failure of `windowctl run` (a bad duration flag, an input that
//! cannot be opened, a bad record) with the offending value and its location.

use std::fmt;

/// The text of a source's failed read (`RuntimeError::Source` and its timely twin):
/// `reading SOURCE: MESSAGE`, or `MESSAGE` alone when it starts with the source's name already
/// (an [`InputError`]'s text, `file.csv:12: read error: ...`), so that the file is named once.
#[must_use]
pub fn source_failure(source_name: &str, message: &str) -> String {
    match message.strip_prefix(source_name) {
        Some(rest) if rest.starts_with(':') => message.to_owned(),
        _ => format!("reading {source_name}: {message}"),
    }
}

/// A source or sink that could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// An input file could not be opened for reading.
    #[error("cannot open input file {path:?}: {error}")]
    Open {
        /// The path as given.
        path: String,
        /// The operating system's reason.
        error: std::io::Error,
    },
    /// An output file (results, late elements, dead letters) could not be created.
    #[error("cannot create output file {path:?}: {error}")]
    Create {
        /// The path as given.
        path: String,
        /// The operating system's reason.
        error: std::io::Error,
    },
    /// An input file named `.gz` does not start with the gzip signature.
    #[error("input file {path:?} is named .gz but is not gzip-compressed (it does not start with the gzip signature 1f 8b); rename it or compress it")]
    NotGzip {
        /// The path as given.
        path: String,
    },
    /// The TCP connection to a socket source failed.
    #[error("cannot connect to socket {addr}: {error}{}", connect_hint(error))]
    Connect {
        /// The `HOST:PORT` address as given.
        addr: String,
        /// The operating system's reason.
        error: std::io::Error,
    },
}

/// A hint for a refused connection, the usual mistake with socket sources.
fn connect_hint(error: &std::io::Error) -> &'static str {
    if error.kind() == std::io::ErrorKind::ConnectionRefused {
        " (is a server listening, e.g. `nc -lk PORT`?)"
    } else {
        ""
    }
}

/// What is wrong with a rejected input record (or with the input as a whole).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum InputErrorKind {
    /// The line cannot be parsed at all: wrong number of CSV fields, invalid
    /// JSON, a JSON value that is not an object, invalid UTF-8, an overlong line.
    Malformed,
    /// A required field is absent, empty or JSON `null`.
    MissingField,
    /// The timestamp field is not a number of the time unit (integer
    /// milliseconds by default) nor an RFC 3339 date-time with an offset, or
    /// its milliseconds are out of the `i64` range.
    InvalidTimestamp,
    /// The key field is not a string or a number (JSON only).
    InvalidKey,
    /// The value field is not a finite number.
    InvalidValue,
    /// The CSV header lacks one of the configured field names. Fatal: no
    /// record of the input can be read.
    Header,
    /// Reading the input failed (connection reset, corrupt gzip stream, ...).
    /// Fatal: the source ends.
    Io,
}

impl InputErrorKind {
    /// Whether this error ends the source: `Header` and `Io` errors cannot be
    /// skipped, whatever the error policy.
    pub fn is_fatal(self) -> bool {
        matches!(self, InputErrorKind::Header | InputErrorKind::Io)
    }
}

/// A rejected input record, with its location and the raw text of the line.
///
/// Displays as `SOURCE:LINE: field 'NAME': MESSAGE`, e.g.
/// `data.csv:17: field 'value': "abc" is not a number`, or as
/// `SOURCE:LINE: MESSAGE` when no single field is at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("{}:{}: {}{}", .source_name, .line, FieldPrefix(.field.as_deref()), .message)]
pub struct InputError {
    /// Where the record came from: the file path as given, `stdin`, or
    /// `socket HOST:PORT`.
    pub source_name: String,
    /// The 1-based physical line number of the record (blank lines count); of its first line
    /// when a quoted CSV field spans lines.
    pub line: u64,
    /// The field at fault, by its configured name, if a single field is.
    pub field: Option<String>,
    /// What is wrong, naming the offending value (lowercase, no location).
    pub message: String,
    /// The bytes of the line as read (invalid UTF-8 too), without its line terminator; all the
    /// physical lines of a CSV record whose quoted field spans lines, with the line breaks
    /// between them. For a line longer than [`crate::source::MAX_RAW_BYTES`], its first
    /// [`crate::source::MAX_RAW_BYTES`] bytes (see `raw_cut`). Empty for errors about no line
    /// (a failed read).
    pub raw: Vec<u8>,
    /// Whether `raw` holds only the first bytes of the line (the message then says how long the
    /// line is).
    pub raw_cut: bool,
    /// The category of the error.
    pub kind: InputErrorKind,
}

impl InputError {
    /// Whether this error ends the source (see [`InputErrorKind::is_fatal`]).
    pub fn is_fatal(&self) -> bool {
        self.kind.is_fatal()
    }
}

/// Formats `field 'NAME': ` or nothing.
struct FieldPrefix<'a>(Option<&'a str>);

impl fmt::Display for FieldPrefix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(name) => write!(f, "field '{name}': "),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_read_names_its_source_once() {
        assert_eq!(
            source_failure(
                "f.csv.gz",
                "f.csv.gz:1: read error: incomplete deflate stream"
            ),
            "f.csv.gz:1: read error: incomplete deflate stream"
        );
        assert_eq!(
            source_failure("broken.csv", "line 3: disk on fire"),
            "reading broken.csv: line 3: disk on fire"
        );
        // A name that only starts the same is not the source's.
        assert_eq!(
            source_failure("f.csv", "f.csv.gz:1: x"),
            "reading f.csv: f.csv.gz:1: x"
        );
    }

    #[test]
    fn input_error_display_with_and_without_field() {
        let mut err = InputError {
            source_name: "data.csv".into(),
            line: 17,
            field: Some("value".into()),
            message: "\"abc\" is not a number".into(),
            raw: b"1,k,abc".to_vec(),
            raw_cut: false,
            kind: InputErrorKind::InvalidValue,
        };
        assert_eq!(
            err.to_string(),
            "data.csv:17: field 'value': \"abc\" is not a number"
        );
        err.field = None;
        err.message = "expected 3 fields, found 2".into();
        assert_eq!(err.to_string(), "data.csv:17: expected 3 fields, found 2");
    }

    #[test]
    fn fatal_kinds() {
        assert!(InputErrorKind::Io.is_fatal());
        assert!(InputErrorKind::Header.is_fatal());
        assert!(!InputErrorKind::InvalidValue.is_fatal());
        assert!(!InputErrorKind::Malformed.is_fatal());
    }
}
