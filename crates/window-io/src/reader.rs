//! The CSV and JSON-lines parser behind [`EventReader`]: physical lines in, one [`Event`] or
//! one located [`InputError`] per record out (the record format is described in
//! [`crate::source`]). Split from `source.rs`, which opens the inputs, so that each file holds
//! one concern.

use std::fmt;
use std::io::{self, BufRead, Cursor, Read, SeekFrom};
use std::num::IntErrorKind;
use std::sync::atomic::Ordering;

use serde_json::Value;

use crate::error::{InputError, InputErrorKind};
use crate::source::{CsvHeader, Event, FieldNames, InputFormat, Progress, MAX_LINE_BYTES};

/// Offending values longer than this many characters are shortened in messages.
const MAX_QUOTED_CHARS: usize = 64;

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
    /// was moved to a source thread of the engine's runtime.
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
}
