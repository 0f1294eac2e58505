//! One record of text to one event: the CSV and JSON-lines rules of [`crate::source`], applied
//! to a line that [`crate::EventReader`] found, with the key left as a slice of the line.
//!
//! A CSV line without quotes or carriage returns (nearly every line of real data) is split on
//! commas directly, with the csv crate's result; any other line, and the header, goes through
//! the csv crate. Values written as integers of the `i64` range are read exactly
//! ([`Number::Int`], the short ones without the general parser); every other value is an `f64`.

use std::borrow::Cow;
use std::io::{Cursor, SeekFrom};

use serde_json::Value;
use window_core::Number;

use crate::error::{InputError, InputErrorKind};
use crate::fields::{self, Columns, Selection, NOT_READ};
use crate::keys::push_key_part;
use crate::source::{CsvHeader, FieldNames, FieldUse, InputFormat};
use crate::time::{quote, TimeUnit};

mod plain;

use plain::{split_plain, PlainFields};

/// The value of a record without one, where the value is optional (a count): NaN.
const NO_VALUE: Number = Number::Float(f64::NAN);

/// Offending values longer than this many characters are shortened in messages.
const MAX_QUOTED_CHARS: usize = 64;

/// An event as parsed: the key still borrows the line where it can.
#[derive(Debug)]
pub(crate) struct Record<'a> {
    pub(crate) timestamp: i64,
    pub(crate) key: Cow<'a, str>,
    pub(crate) value: Number,
}

/// The parsing state of a stream: its format, field names, the CSV columns once the header was
/// read, the number of the current line, and the csv crate's reader for the lines that need it.
pub(crate) struct Parser {
    pub(crate) source_name: String,
    pub(crate) format: InputFormat,
    pub(crate) fields: FieldNames,
    pub(crate) header_mode: CsvHeader,
    /// The unit of numeric timestamps.
    pub(crate) time_unit: TimeUnit,
    /// The CSV field separator.
    delimiter: u8,
    /// What the job reads of each record besides its time.
    uses: FieldUse,
    /// The fields as messages name them, and a composite key's further columns.
    selection: Selection,
    columns: Option<Columns>,
    /// Physical lines read so far (the number of the current line).
    pub(crate) line_no: u64,
    /// Parses one CSV line at a time (a line with a quote or a carriage return); its cursor is
    /// refilled for each line. Built at the first such line: building one costs about as much
    /// as parsing a thousand plain lines, and a reader is made per chunk of an input under
    /// `window-timely`.
    csv: Option<csv::Reader<Cursor<Vec<u8>>>>,
    record: csv::ByteRecord,
}

impl Parser {
    pub(crate) fn new(source_name: String, format: InputFormat, fields: FieldNames) -> Self {
        Self {
            source_name,
            format,
            selection: Selection::named(&fields, FieldUse::default()),
            fields,
            header_mode: CsvHeader::Required,
            time_unit: TimeUnit::Millis,
            delimiter: b',',
            uses: FieldUse::default(),
            columns: None,
            line_no: 0,
            csv: None,
            record: csv::ByteRecord::new(),
        }
    }

    /// Splits CSV fields at `delimiter` instead of commas.
    pub(crate) fn set_delimiter(&mut self, delimiter: u8) {
        self.delimiter = delimiter;
        self.csv = None;
    }

    /// Reads only what `uses` says of each record (before the first line).
    pub(crate) fn set_uses(&mut self, uses: FieldUse) {
        self.uses = uses;
        self.selection = Selection::named(&self.fields, uses);
    }

    /// Whether a CSV header is still to come (it is read before any record), or the columns
    /// of a headerless stream are still to be found (at its first record).
    pub(crate) fn header_pending(&self) -> bool {
        self.format == InputFormat::Csv && self.columns.is_none()
    }

    /// An error about the current line, `raw`.
    pub(crate) fn error(
        &self,
        kind: InputErrorKind,
        field: Option<&str>,
        message: String,
        raw: &[u8],
    ) -> InputError {
        InputError {
            source_name: self.source_name.clone(),
            line: self.line_no,
            field: field.map(str::to_owned),
            message,
            raw: raw.to_vec(),
            raw_cut: false,
            kind,
        }
    }

    /// Parses one line (without terminator or byte-order mark, not empty). `Ok(None)` for the
    /// CSV header and blank JSON lines.
    pub(crate) fn parse<'a>(&mut self, raw: &'a [u8]) -> Result<Option<Record<'a>>, InputError> {
        let text = match std::str::from_utf8(raw) {
            Ok(text) => text,
            Err(e) => {
                // A header that cannot be read is fatal, also when bad lines are skipped: the
                // next line would be taken as the header instead.
                let header = self.header_pending() && self.header_mode == CsvHeader::Required;
                let (kind, what) = if header {
                    (InputErrorKind::Header, "the CSV header")
                } else {
                    (InputErrorKind::Malformed, "line")
                };
                return Err(self.error(
                    kind,
                    None,
                    format!(
                        "{what} is not valid UTF-8 (invalid byte at column {})",
                        e.valid_up_to() + 1
                    ),
                    raw,
                ));
            }
        };
        match self.format {
            InputFormat::Jsonl if text.trim().is_empty() => Ok(None),
            // The fast path reads one key field, by its name as given: not a composite key.
            InputFormat::Jsonl => match self
                .selection
                .keys
                .iter()
                .all(|k| *k == self.fields.key)
                .then(|| {
                    crate::json::fast_record(
                        text,
                        &self.fields,
                        |t| parse_timestamp_text(t, self.time_unit).ok(),
                        |v| parse_value_text(v).ok(),
                    )
                })
                .flatten()
            {
                Some((timestamp, key, value)) => Ok(Some(Record {
                    timestamp,
                    key: if self.uses.key {
                        key
                    } else {
                        Cow::Borrowed("")
                    },
                    value,
                })),
                // Not read exactly by the fast path: the slow path reads it or names the error.
                None => self.parse_json(text).map(Some),
            },
            InputFormat::Csv => match self.columns {
                Some(columns) => match split_plain(text, columns, self.delimiter) {
                    Some(fields) => self.plain_csv(text, columns, fields).map(Some),
                    None => self.parse_csv(text),
                },
                None => self.parse_csv(text),
            },
        }
    }

    /// A CSV record on one line of text already known to be UTF-8, once the columns are
    /// known: `None` where the line needs [`Parser::parse`] (the header is still to come, the
    /// line holds a quote or a carriage return, or it is not a record: then `parse` gives its
    /// error). The reader's block path ([`crate::EventReader`]) takes this for nearly every
    /// line, so that a block of lines is checked for UTF-8 once, not line by line.
    #[inline]
    pub(crate) fn parse_plain<'a>(&self, text: &'a str) -> Option<Record<'a>> {
        let columns = self.columns.filter(|_| self.format == InputFormat::Csv)?;
        let fields = split_plain(text, columns, self.delimiter)?;
        self.plain_csv(text, columns, fields).ok()
    }

    /// A CSV line without quotes or carriage returns, split by [`split_plain`].
    fn plain_csv<'a>(
        &self,
        text: &'a str,
        columns: Columns,
        fields: PlainFields<'a>,
    ) -> Result<Record<'a>, InputError> {
        let PlainFields {
            time,
            key,
            value,
            count,
        } = fields;
        if self.selection.composite() {
            // Every field of the line: without quotes they are the text between delimiters (a
            // field found by splitting again, so that a line allocates nothing).
            let delimiter = char::from(self.delimiter);
            let field = |i: usize| text.split(delimiter).nth(i);
            return self.fields_to_record(columns, count, field, text);
        }
        let field = |i: usize| match i {
            _ if i == columns.time => Some(time),
            _ if i == columns.key => Some(key),
            _ => Some(value),
        };
        self.fields_to_record(columns, count, field, text)
    }

    /// Any CSV line, through the csv crate; `Ok(None)` for the header.
    fn parse_csv(&mut self, text: &str) -> Result<Option<Record<'static>>, InputError> {
        let delimiter = self.delimiter;
        if !text.is_empty() && !text.bytes().any(|b| b == b'"' || b == b'\r') {
            // Without quotes and carriage returns the csv crate's fields are the text between
            // delimiters (a header line takes this path: no reader is built for it).
            let mut record = std::mem::take(&mut self.record);
            record.clear();
            for field in text.split(char::from(delimiter)) {
                record.push_field(field.as_bytes());
            }
            let result = self.csv_record(&record, text);
            self.record = record;
            return result;
        }
        let csv = self.csv.get_or_insert_with(|| csv_reader(delimiter));
        let cursor = csv.get_mut().get_mut();
        cursor.clear();
        cursor.extend_from_slice(text.as_bytes());
        let parsed = csv
            .seek_raw(SeekFrom::Start(0), csv::Position::new())
            .and_then(|()| csv.read_byte_record(&mut self.record));
        match parsed {
            // The csv crate ends a record at a bare carriage return too; what follows one in
            // the line would be lost unread, so the line is refused instead (whole, by the
            // error policy: counted, and kept by --dead-letter).
            Ok(true) if (csv.position().byte() as usize) < text.len() => {
                return Err(self.error(
                    InputErrorKind::Malformed,
                    None,
                    "a carriage return (\\r) inside the line, outside quotes, ends a CSV record \
                     before the line's end; quote the field or remove the \\r"
                        .to_owned(),
                    text.as_bytes(),
                ))
            }
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(e) => {
                return Err(self.error(
                    InputErrorKind::Malformed,
                    None,
                    format!("cannot parse the line as CSV: {e}"),
                    text.as_bytes(),
                ))
            }
        }
        let record = std::mem::take(&mut self.record);
        let result = self.csv_record(&record, text);
        self.record = record;
        result
    }

    fn csv_record(
        &mut self,
        record: &csv::ByteRecord,
        text: &str,
    ) -> Result<Option<Record<'static>>, InputError> {
        // The line is UTF-8 (checked by `parse`), and the csv crate cuts and unquotes it at ASCII
        // bytes only, so every field is UTF-8 too.
        let field = |i: usize| record.get(i).and_then(|raw| std::str::from_utf8(raw).ok());
        let columns = match self.columns {
            Some(columns) => columns,
            None => {
                let cells: Vec<&str> = (0..record.len()).filter_map(field).collect();
                match self.find_columns(&cells, text)? {
                    Some(columns) => columns,
                    None => return Ok(None),
                }
            }
        };
        self.fields_to_record(columns, record.len(), field, text)
            .map(|r| {
                Some(Record {
                    key: Cow::Owned(r.key.into_owned()),
                    ..r
                })
            })
    }

    /// The columns of the stream, found at its first line, cut into `cells` ([`crate::fields`]);
    /// `None` when that line is the header.
    fn find_columns(&mut self, cells: &[&str], text: &str) -> Result<Option<Columns>, InputError> {
        let unit = self.time_unit;
        let is_timestamp = |t: &str| parse_timestamp_text(t, unit).is_ok();
        let (columns, selection, is_header) = fields::find(
            &self.fields,
            self.uses,
            self.header_mode,
            cells,
            is_timestamp,
        )
        .map_err(|e| self.error(e.kind, Some(&e.field), e.message, text.as_bytes()))?;
        self.columns = Some(columns);
        self.selection = selection;
        Ok((!is_header).then_some(columns))
    }

    /// Checks the field count, and reads the time, the key and the value from the fields that
    /// `field` gives by column.
    fn fields_to_record<'a>(
        &self,
        columns: Columns,
        count: usize,
        field: impl Fn(usize) -> Option<&'a str>,
        text: &str,
    ) -> Result<Record<'a>, InputError> {
        if count != columns.count {
            let (field, message) = self.selection.count_error(columns, count, self.delimiter);
            return Err(self.error(InputErrorKind::Malformed, field, message, text.as_bytes()));
        }
        let error = |name: &str, (kind, msg)| self.error(kind, Some(name), msg, text.as_bytes());
        let s = &self.selection;
        let timestamp =
            parse_timestamp_text(field(columns.time).unwrap_or_default(), self.time_unit)
                .map_err(|e| error(&s.time, e))?;
        let key = s
            .csv_key(columns, &field)
            .map_err(|(name, e)| error(name, e))?;
        let value = match columns.value {
            NOT_READ => NO_VALUE,
            i => match field(i).unwrap_or_default() {
                // An optional value: none here.
                v if !self.uses.value && v.trim().is_empty() => NO_VALUE,
                v => parse_value_text(v).map_err(|e| error(&s.value, e))?,
            },
        };
        Ok(Record {
            timestamp,
            key,
            value,
        })
    }

    /// Parses a line (valid UTF-8, not blank) as one JSON object.
    fn parse_json(&self, text: &str) -> Result<Record<'static>, InputError> {
        let error = |kind, field: Option<&str>, message: String| {
            self.error(kind, field, message, text.as_bytes())
        };
        let object = match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) => object,
            Ok(other) => {
                return Err(error(
                    InputErrorKind::Malformed,
                    None,
                    format!("expected a JSON object, found {}", json_type(&other)),
                ))
            }
            Err(e) => {
                return Err(error(InputErrorKind::Malformed, None, invalid_json(&e)));
            }
        };
        let names = &self.fields;
        let missing = |name: &str, value: Option<&Value>| {
            let message = if value.is_some() {
                "missing (null)"
            } else {
                "missing"
            };
            error(InputErrorKind::MissingField, Some(name), message.to_owned())
        };

        let timestamp = match object.get(&names.time) {
            None | Some(Value::Null) => return Err(missing(&names.time, object.get(&names.time))),
            Some(Value::String(s)) => parse_timestamp_text(s, self.time_unit),
            Some(Value::Number(n)) => {
                json_timestamp(n, self.time_unit, || number_text(n, text, &names.time))
            }
            Some(other) => Err((
                InputErrorKind::InvalidTimestamp,
                crate::time::not_a_number(&json_text(other), self.time_unit),
            )),
        }
        .map_err(|(kind, msg)| error(kind, Some(&names.time), msg))?;

        let mut key = String::new();
        for (i, name) in self.selection.keys.iter().enumerate() {
            let part = match object.get(name) {
                // A number is its text as written (`1e2` stays `1e2`): see json::number_key.
                Some(Value::Number(n)) => number_text(n, text, name),
                member => fields::json_key(member, json_text)
                    .map_err(|(kind, msg)| error(kind, Some(name), msg))?,
            };
            match self.selection.composite() {
                true => push_key_part(&mut key, &part, i == 0),
                false => key = part,
            }
        }

        let value = match object.get(&names.value) {
            // An optional value: none here.
            None | Some(Value::Null) if !self.uses.value => Ok(NO_VALUE),
            Some(Value::String(s)) if !self.uses.value && s.trim().is_empty() => Ok(NO_VALUE),
            None | Some(Value::Null) => {
                return Err(missing(&names.value, object.get(&names.value)))
            }
            Some(Value::String(s)) => parse_value_text(s),
            Some(Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => Ok(Number::Int(i)),
                (None, Some(v)) if v.is_finite() => Ok(Number::Float(v)),
                _ => Err((
                    InputErrorKind::InvalidValue,
                    format!(
                        "{} is not a finite number",
                        number_text(n, text, &names.value)
                    ),
                )),
            },
            Some(other) => Err((
                InputErrorKind::InvalidValue,
                format!("{} is not a number", json_text(other)),
            )),
        }
        .map_err(|(kind, msg)| error(kind, Some(&names.value), msg))?;

        Ok(Record {
            timestamp,
            key: Cow::Owned(key),
            value,
        })
    }
}

/// The csv crate's reader of one line at a time, splitting at `delimiter`.
fn csv_reader(delimiter: u8) -> csv::Reader<Cursor<Vec<u8>>> {
    let mut csv = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .from_reader(Cursor::new(Vec::new()));
    // Explicit (empty) headers keep the csv crate from consuming a record
    // as its header when the cursor is rewound.
    csv.set_byte_headers(csv::ByteRecord::new());
    csv
}

/// The message for a line that is not JSON: serde's, its "at line 1 column N" said as "at
/// column N" (a JSON line is one line, whose number the error gives already).
fn invalid_json(e: &serde_json::Error) -> String {
    match e.to_string().rsplit_once(" at line ") {
        Some((message, _)) => format!("invalid JSON: {message} at column {}", e.column()),
        None => format!("invalid JSON: {e}"),
    }
}

/// Number `n`, member `name` of JSON line `text`, as the line writes it (`1e2` stays `1e2`, where
/// serde_json prints `1e+2`: see `json::number_key`): for a key's text and for messages.
fn number_text(n: &serde_json::Number, text: &str, name: &str) -> String {
    crate::json::number_key(text, name).map_or_else(|| n.to_string(), str::to_owned)
}

/// Parses a timestamp written as text (a CSV field or a JSON string): an integer of `unit`
/// (the common case, read here without allocating), else [`crate::time`]'s rules (a fraction
/// of a second, an RFC 3339 date-time, the error message).
#[inline]
fn parse_timestamp_text(text: &str, unit: TimeUnit) -> Result<i64, (InputErrorKind, String)> {
    if let Some(t) = small_i64(text).and_then(|t| unit.millis_of(t)) {
        return Ok(t);
    }
    crate::time::timestamp_text_slow(text, unit)
}

/// Checks a JSON number timestamp: a number of `unit` (an integer; in seconds a fraction too)
/// whose millisecond is in the `i64` range.
/// `written` gives the number's text for a message, as the input writes it (called on an
/// error only: it may read the line again).
pub(crate) fn json_timestamp(
    n: &serde_json::Number,
    unit: TimeUnit,
    written: impl FnOnce() -> String,
) -> Result<i64, (InputErrorKind, String)> {
    if let (Some(v), TimeUnit::Millis) = (n.as_i64(), unit) {
        return Ok(v);
    }
    crate::time::json_number_millis(n, unit, written)
}

/// The digits of an integer of at most `max_digits` digits with an optional `-`: (negative,
/// magnitude); `None` for any other text.
#[inline]
fn digits(text: &str, max_digits: usize) -> Option<(bool, i64)> {
    let bytes = text.as_bytes();
    let (negative, digits) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    if digits.is_empty() || digits.len() > max_digits {
        return None;
    }
    let mut n: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + i64::from(d - b'0');
    }
    Some((negative, n))
}

/// An integer of at most 18 digits with an optional `-`, as `str::parse::<i64>` reads it (18
/// digits cannot overflow); `None` for any other text.
#[inline]
fn small_i64(text: &str) -> Option<i64> {
    digits(text, 18).map(|(negative, n)| if negative { -n } else { n })
}

/// Parses a value written as text (a CSV field or a JSON string): an integer of the `i64`
/// range (`42`, `+7`, ` -3 `, `9007199254740993`) exactly, as [`Number::Int`]; any other
/// finite number as an `f64`. `-0` is the integer 0, as serde_json reads the JSON number `-0`
/// (so that the JSON fast and slow paths agree); `-0.0` is the float.
pub(crate) fn parse_value_text(text: &str) -> Result<Number, (InputErrorKind, String)> {
    if let Some(i) = small_i64(text) {
        return Ok(Number::Int(i));
    }
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err((InputErrorKind::MissingField, "missing (empty)".to_owned()));
    }
    if let Ok(i) = trimmed.parse::<i64>() {
        return Ok(Number::Int(i));
    }
    match trimmed.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Number::Float(v)),
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

    #[test]
    fn json_timestamp_ranges() {
        let ok = |s: &str| {
            json_timestamp(&serde_json::from_str(s).unwrap(), TimeUnit::Millis, || {
                s.to_owned()
            })
        };
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
    fn small_i64s_are_what_the_integer_parser_gives() {
        for text in [
            "0",
            "-0",
            "17",
            "-17",
            "007",
            "999999999999999999",
            "-999999999999999999",
        ] {
            assert_eq!(small_i64(text), text.parse::<i64>().ok(), "{text}");
        }
        for text in [
            "",
            "-",
            "+1",
            " 1",
            "1.0",
            "1000000000000000000",
            "9223372036854775807",
        ] {
            assert_eq!(small_i64(text), None, "{text:?}");
        }
    }

    #[test]
    fn integer_values_are_exact_and_others_are_the_floats_the_float_parser_gives() {
        let int = |t: &str| parse_value_text(t).unwrap();
        assert!(matches!(
            int("9007199254740993"),
            Number::Int(9_007_199_254_740_993)
        ));
        assert!(matches!(int("-9223372036854775808"), Number::Int(i64::MIN)));
        assert!(matches!(int(" +7 "), Number::Int(7)));
        assert!(matches!(int("007"), Number::Int(7)));
        assert!(matches!(int("-42"), Number::Int(-42)));
        // -0 is the integer 0, as serde_json reads the JSON number -0.
        assert!(matches!(int("-0"), Number::Int(0)));
        for text in [
            "1.5",
            "1e3",
            "9223372036854775808",
            " 2.50 ",
            "-0.0",
            "1E-3",
        ] {
            let Number::Float(fast) = int(text) else {
                panic!("{text} is not an i64")
            };
            let slow: f64 = text.trim().parse().unwrap();
            assert_eq!(fast.to_bits(), slow.to_bits(), "{text}");
        }
        for text in ["", " ", "--1", "0x10", "1e400", "NaN", "inf"] {
            assert!(parse_value_text(text).is_err(), "{text:?}");
        }
    }

    /// The JSON fast path reads every line it takes as the slow path does, keys of numbers as
    /// their text included, and leaves every line the slow path refuses to it.
    #[test]
    fn the_json_fast_path_agrees_with_serde_json_values() {
        let names = FieldNames::default();
        let slow = Parser::new("t".into(), InputFormat::Jsonl, FieldNames::default());
        let lines = [
            r#"{"event_time_ms": 5, "key": "a", "value": 1.5}"#,
            r#"{"value": 2, "key": "b\u00e9", "event_time_ms": "  7 ", "x": [1, {"y": null}]}"#,
            r#"{"event_time_ms": -3, "key": 1.50, "value": "2.5"}"#,
            r#"{"event_time_ms": 1, "key": 12345678901234567890123, "value": -0.0}"#,
            r#"{"event_time_ms": 1, "key": 1E+3, "value": 1e3}"#,
            r#"{"event_time_ms": 1, "key": -0, "value": 7}"#,
            r#"{"event_time_ms": 1, "key": "z", "value": -0}"#,
            r#"{"event_time_ms": 1, "key": "z", "value": 9223372036854775807}"#,
            r#"{"event_time_ms": 1, "key": "a", "key": "b", "value": 7}"#,
            r#"{"event_time_ms": 1, "k\u0065y": "esc", "value": 7}"#,
            r#"  {"event_time_ms": 9223372036854775807, "key": "m", "value": 1}  "#,
            // refused by both, or by the fast path only: the slow path decides
            r#"{"event_time_ms": 1e3, "key": "a", "value": 1}"#,
            r#"{"event_time_ms": 1.5, "key": "a", "value": 1}"#,
            r#"{"event_time_ms": null, "key": "a", "value": 1}"#,
            r#"{"event_time_ms": 1, "key": "", "value": 1}"#,
            r#"{"event_time_ms": 1, "key": true, "value": 1}"#,
            r#"{"event_time_ms": 1, "key": "a", "value": 1e400}"#,
            r#"{"event_time_ms": 1, "key": "a", "value": "x"}"#,
            r#"{"event_time_ms": 1, "key": "a"}"#,
            r#"{"event_time_ms": 1, "key": "a", "value": 1} x"#,
            r#"{"event_time_ms": 1, "key": "a", "value": 1"#,
            r#"[1, 2]"#,
            r#"{"event_time_ms": 9223372036854775808, "key": "a", "value": 1}"#,
            r#"{"event_time_ms": 1, "key": "a", "value": 1, "value": null}"#,
        ];
        for line in lines {
            let fast = crate::json::fast_record(
                line,
                &names,
                |t| parse_timestamp_text(t, TimeUnit::Millis).ok(),
                |v| parse_value_text(v).ok(),
            );
            let reference = slow.parse_json(line);
            match (fast, reference) {
                (Some((t, k, v)), Ok(r)) => {
                    assert_eq!(
                        (t, &*k, format!("{v:?}")),
                        (r.timestamp, &*r.key, format!("{:?}", r.value)),
                        "{line}"
                    );
                }
                (Some(f), Err(e)) => {
                    panic!("{line}: the fast path read {f:?}, the slow path refused: {e}")
                }
                (None, _) => {}
            }
        }
        // The lines of real data are all taken by the fast path.
        for line in lines[..9].iter() {
            assert!(
                crate::json::fast_record(
                    line,
                    &names,
                    |t| parse_timestamp_text(t, TimeUnit::Millis).ok(),
                    |v| parse_value_text(v).ok()
                )
                .is_some(),
                "{line}"
            );
        }
    }

    /// Every line a random generator makes of CSV's special characters splits the same way
    /// through the fast path as through the csv crate.
    #[test]
    fn the_fast_split_agrees_with_the_csv_crate() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let alphabet = [
            ",", "a", "1", "-", " ", ".", "é", "", "x1", "\"", "\r", "9", "+", ";", "\t",
        ];
        // A fast and a slow parser for each delimiter, taken in turn.
        let mut parsers: Vec<(u8, Parser, Parser)> = [b',', b';', b'\t']
            .into_iter()
            .map(|delimiter| {
                let parser = || {
                    let mut p = Parser::new("t".into(), InputFormat::Csv, FieldNames::default());
                    p.set_delimiter(delimiter);
                    p.columns = Some(Columns {
                        time: 0,
                        key: 1,
                        value: 2,
                        count: 3,
                    });
                    p
                };
                (delimiter, parser(), parser())
            })
            .collect();
        for round in 0..20_000 {
            let (delimiter, fast, slow) = &mut parsers[round % 3];
            let delimiter = *delimiter;
            let len = (next() % 12) as usize;
            let line: String = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            if line.is_empty() {
                continue;
            }
            let columns = fast.columns.unwrap();
            let Some(fields) = split_plain(&line, columns, delimiter) else {
                continue;
            };
            let a = fast
                .plain_csv(&line, columns, fields)
                .map(|r| (r.timestamp, r.key.into_owned(), format!("{:?}", r.value)));
            let b = slow.parse_csv(&line).map(|r| {
                let r = r.expect("not a header: the columns are set");
                (r.timestamp, r.key.into_owned(), format!("{:?}", r.value))
            });
            match (a, b) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{line:?}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{line:?}"),
                (a, b) => panic!("{line:?}: fast {a:?}, csv crate {b:?}"),
            }
        }
    }
}
