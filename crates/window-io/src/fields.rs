//! Which fields of a record an event's time, key and value come from: CSV columns found by
//! header name, by column number (with or without a header), or in the fixed order of a
//! headerless socket; a composite key's several fields; a key or value the job does not read.
//!
//! A field is named by its text in [`FieldNames`]; a name made of digits only is also a column
//! number, counted from 1 (`cut -f`, awk's `$1`). With a header, a name is first looked for
//! among the header's names, and a number that is no header name is the column at that
//! position; without a header ([`CsvHeader::Absent`]) every field must be a number. Messages
//! name a field selected by number `column N`, any other by its name.

use std::borrow::Cow;

use serde_json::Value;

use crate::error::InputErrorKind;
use crate::keys::push_key_part;
use crate::source::{CsvHeader, FieldNames, FieldUse};

/// The column of a field that is not read (no key for `windowAll`, an optional value the input
/// does not have).
pub(crate) const NOT_READ: usize = usize::MAX;

/// Column positions (from 0) of the time, the (first) key and the value in a CSV stream.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Columns {
    pub(crate) time: usize,
    pub(crate) key: usize,
    pub(crate) value: usize,
    /// The number of fields every record must have.
    pub(crate) count: usize,
}

/// The fields of a stream as messages name them, and a composite key's further columns.
#[derive(Debug, Clone, Default)]
pub(crate) struct Selection {
    /// The time field.
    pub(crate) time: String,
    /// The key fields (JSON member names, or CSV fields as messages name them); empty when the
    /// key is not read.
    pub(crate) keys: Vec<String>,
    /// The value field.
    pub(crate) value: String,
    /// CSV: the columns of the second and later key fields.
    pub(crate) more_keys: Vec<usize>,
}

impl Selection {
    /// The fields by their names, as a JSON stream (and a CSV one before its columns are
    /// known) names them.
    pub(crate) fn named(names: &FieldNames, uses: FieldUse) -> Self {
        Self {
            time: names.time.clone(),
            keys: if uses.key {
                names.key_fields().into_iter().map(str::to_owned).collect()
            } else {
                Vec::new()
            },
            value: names.value.clone(),
            more_keys: Vec::new(),
        }
    }

    /// Whether the key is a tuple of several fields.
    pub(crate) fn composite(&self) -> bool {
        self.keys.len() > 1
    }

    /// What is wrong with a CSV line of `count` fields where `columns.count` are expected: the
    /// field at fault and the message. A short line names the first field of the job it lacks;
    /// a long one says how a field holds the delimiter (the usual cause: an unquoted comma in
    /// a key).
    pub(crate) fn count_error(
        &self,
        columns: Columns,
        count: usize,
        delimiter: u8,
    ) -> (Option<&str>, String) {
        let expected = columns.count;
        match self.first_missing(columns, count) {
            Some(name) => (
                Some(name),
                format!("missing: the line has {count} fields, not {expected}"),
            ),
            None if count > expected => (
                None,
                format!(
                    "expected {expected} fields, found {count}; a field that holds {:?} must be \
                     in double quotes",
                    char::from(delimiter)
                ),
            ),
            None => (None, format!("expected {expected} fields, found {count}")),
        }
    }

    /// The field read from the lowest column at or past `count`: the first one a CSV line of
    /// `count` fields lacks; `None` when it lacks none the job reads.
    pub(crate) fn first_missing(&self, columns: Columns, count: usize) -> Option<&str> {
        let keys = std::iter::once(columns.key).chain(self.more_keys.iter().copied());
        let named = [(columns.time, self.time.as_str())]
            .into_iter()
            .chain(keys.zip(self.keys.iter().map(String::as_str)))
            .chain([(columns.value, self.value.as_str())]);
        named
            .filter(|&(column, _)| column != NOT_READ && column >= count)
            .min_by_key(|&(column, _)| column)
            .map(|(_, name)| name)
    }

    /// The key of a CSV record whose fields `field` gives by column: empty when the key is not
    /// read, else its field's text (not empty), or a composite key's text ([`push_key_part`]);
    /// or the field at fault and what is wrong.
    pub(crate) fn csv_key<'a>(
        &self,
        columns: Columns,
        field: &impl Fn(usize) -> Option<&'a str>,
    ) -> Result<Cow<'a, str>, (&str, (InputErrorKind, String))> {
        let empty = |name| {
            (
                name,
                (InputErrorKind::MissingField, "missing (empty)".to_owned()),
            )
        };
        let first = match columns.key {
            NOT_READ => return Ok(Cow::Borrowed("")),
            column => field(column).unwrap_or_default(),
        };
        let mut names = self.keys.iter().map(String::as_str);
        if self.more_keys.is_empty() {
            return match first {
                "" => Err(empty(names.next().unwrap_or_default())),
                key => Ok(Cow::Borrowed(key)),
            };
        }
        let mut text = String::new();
        let columns = std::iter::once(columns.key).chain(self.more_keys.iter().copied());
        for (i, (column, name)) in columns.zip(names).enumerate() {
            let part = match i {
                0 => first,
                _ => field(column).unwrap_or_default(),
            };
            if part.is_empty() {
                return Err(empty(name));
            }
            push_key_part(&mut text, part, i == 0);
        }
        Ok(Cow::Owned(text))
    }
}

/// Why the columns of a stream cannot be found: the field, what is wrong, and whether it
/// ends the stream ([`InputErrorKind::Header`]) or only refuses this line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ColumnError {
    pub(crate) field: String,
    pub(crate) message: String,
    pub(crate) kind: InputErrorKind,
}

impl ColumnError {
    fn fatal(field: &str, message: String) -> Self {
        Self {
            field: field.to_owned(),
            message,
            kind: InputErrorKind::Header,
        }
    }
}

/// A field's name as a column number: `Some(Ok(index from 0))` for digits naming a column,
/// `Some(Err)` for `0`, `None` for a name that is not a number.
fn column_number(name: &str) -> Option<Result<usize, String>> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(match name.parse::<usize>() {
        Ok(0) => Err("column numbers count from 1 (as cut -f and awk's $1), not 0".to_owned()),
        Ok(n) => Ok(n - 1),
        Err(_) => Err(format!("column number {name} is too large")),
    })
}

/// The label of a field selected by number.
fn column_label(index: usize) -> String {
    format!("column {}", index + 1)
}

/// One field a stream reads: its name, and whether every record must have it.
struct Wanted<'a> {
    name: &'a str,
    required: bool,
}

/// The fields a stream reads, in the order their errors come: time, keys, value.
fn wanted<'a>(names: &'a FieldNames, uses: FieldUse) -> Vec<Wanted<'a>> {
    let mut fields = vec![Wanted {
        name: &names.time,
        required: true,
    }];
    if uses.key {
        fields.extend(names.key_fields().into_iter().map(|name| Wanted {
            name,
            required: true,
        }));
    }
    fields.push(Wanted {
        name: &names.value,
        required: uses.value,
    });
    fields
}

/// Columns and labels of the wanted fields (time, keys, value; [`NOT_READ`] where not found
/// and not required) as the columns and selection of a stream of `count` fields.
fn assemble(found: Vec<(usize, String)>, uses: FieldUse, count: usize) -> (Columns, Selection) {
    let mut found = found.into_iter();
    let (time, time_label) = found.next().unwrap_or((NOT_READ, String::new()));
    let (value, value_label) = found.next_back().unwrap_or((NOT_READ, String::new()));
    let keys: Vec<(usize, String)> = found.collect();
    let columns = Columns {
        time,
        key: keys.first().map_or(NOT_READ, |k| k.0),
        value,
        count,
    };
    debug_assert_eq!(keys.is_empty(), !uses.key);
    let selection = Selection {
        time: time_label,
        more_keys: keys.iter().skip(1).map(|k| k.0).collect(),
        keys: keys.into_iter().map(|k| k.1).collect(),
        value: value_label,
    };
    (columns, selection)
}

/// The columns of a CSV stream read as `mode` says, found at its first line, cut into `cells`:
/// the columns, the fields as messages name them, and whether the line is the header (a socket's
/// is told from data by `is_timestamp`, [`is_header`]).
///
/// # Errors
/// As [`from_header`] and [`from_numbers`].
pub(crate) fn find(
    names: &FieldNames,
    uses: FieldUse,
    mode: CsvHeader,
    cells: &[&str],
    is_timestamp: impl Fn(&str) -> bool,
) -> Result<(Columns, Selection, bool), ColumnError> {
    let is_header = match mode {
        CsvHeader::Required => true,
        CsvHeader::Detect => is_header(names, cells, is_timestamp),
        CsvHeader::Absent => false,
    };
    let (columns, selection) = if is_header {
        from_header(names, uses, cells)?
    } else if mode == CsvHeader::Absent || all_numbers(names, uses) {
        from_numbers(names, uses, cells.len())?
    } else {
        in_order(names, uses)
    };
    Ok((columns, selection, is_header))
}

/// A JSON key member's text: a string (not empty) as it is, a number as its text; or what is
/// wrong, naming the value by `json_text`.
pub(crate) fn json_key(
    value: Option<&Value>,
    json_text: fn(&Value) -> String,
) -> Result<String, (InputErrorKind, String)> {
    let missing = |what: &str| (InputErrorKind::MissingField, what.to_owned());
    match value {
        None => Err(missing("missing")),
        Some(Value::Null) => Err(missing("missing (null)")),
        Some(Value::String(s)) if s.is_empty() => Err(missing("missing (empty)")),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        Some(other) => Err((
            InputErrorKind::InvalidKey,
            format!("{} is not a string or a number", json_text(other)),
        )),
    }
}

/// The columns of a CSV stream whose header is `header`: each field by its name in the
/// header, else by its column number.
///
/// # Errors
/// A required field with no such column, a column number 0 or beyond the header (fatal).
pub(crate) fn from_header(
    names: &FieldNames,
    uses: FieldUse,
    header: &[&str],
) -> Result<(Columns, Selection), ColumnError> {
    let mut found = Vec::new();
    for field in wanted(names, uses) {
        if let Some(i) = header.iter().position(|h| h.trim() == field.name) {
            found.push((i, field.name.to_owned()));
            continue;
        }
        match column_number(field.name) {
            Some(Ok(i)) if i < header.len() => found.push((i, column_label(i))),
            Some(Ok(_)) if !field.required => found.push((NOT_READ, field.name.to_owned())),
            Some(Ok(i)) => {
                return Err(ColumnError::fatal(
                    field.name,
                    format!(
                        "no column {}: the CSV header has {} (columns: {})",
                        i + 1,
                        header.len(),
                        quoted(header)
                    ),
                ))
            }
            Some(Err(message)) => return Err(ColumnError::fatal(field.name, message)),
            None if !field.required => found.push((NOT_READ, field.name.to_owned())),
            None => {
                let json = header
                    .first()
                    .is_some_and(|h| h.trim_start().starts_with('{'));
                let hint = if json {
                    "; the input looks like JSON lines: read it as JSON lines \
                     (windowctl: --format jsonl)"
                } else {
                    "; a header row with the configured field names is required"
                };
                return Err(ColumnError::fatal(
                    field.name,
                    format!(
                        "no such column in the CSV header (columns: {}){hint}",
                        quoted(header)
                    ),
                ));
            }
        }
    }
    Ok(assemble(found, uses, header.len()))
}

/// The header's names, quoted, for a message.
fn quoted(header: &[&str]) -> String {
    let columns: Vec<String> = header.iter().map(|h| format!("{:?}", h.trim())).collect();
    columns.join(", ")
}

/// The columns of a headerless CSV stream whose first record has `count` fields: every field
/// is a column number.
///
/// # Errors
/// A field that is not a column number, or is 0 (fatal); a required column beyond `count`
/// (this record only: the next one is tried again).
pub(crate) fn from_numbers(
    names: &FieldNames,
    uses: FieldUse,
    count: usize,
) -> Result<(Columns, Selection), ColumnError> {
    let mut found = Vec::new();
    for field in wanted(names, uses) {
        match column_number(field.name) {
            Some(Ok(i)) if i < count => found.push((i, column_label(i))),
            Some(Ok(i)) if !field.required => found.push((NOT_READ, column_label(i))),
            Some(Ok(i)) => {
                return Err(ColumnError {
                    field: column_label(i),
                    message: format!("no such column: the line has {count} fields"),
                    kind: InputErrorKind::Malformed,
                })
            }
            Some(Err(message)) => return Err(ColumnError::fatal(field.name, message)),
            None => {
                return Err(ColumnError::fatal(
                    field.name,
                    format!(
                        "the input has no header line, so fields are column numbers counted \
                         from 1 (as cut -f), not names: got {:?}",
                        field.name
                    ),
                ))
            }
        }
    }
    Ok(assemble(found, uses, count))
}

/// Whether every field a stream reads is named by a column number.
fn all_numbers(names: &FieldNames, uses: FieldUse) -> bool {
    wanted(names, uses)
        .iter()
        .all(|f| column_number(f.name).is_some())
}

/// Whether the first line of a stream that may have a header ([`crate::CsvHeader::Detect`]),
/// cut into `fields`, is its header: one of its fields is the time field's name, or, for a time
/// field given as a column number, that column holds no timestamp (`is_timestamp`).
fn is_header(names: &FieldNames, fields: &[&str], is_timestamp: impl Fn(&str) -> bool) -> bool {
    match column_number(&names.time) {
        Some(Ok(i)) => !fields.get(i).is_some_and(|f| is_timestamp(f)),
        _ => fields.iter().any(|f| f.trim() == names.time),
    }
}

/// The columns of a headerless socket stream whose fields are names: time, the key fields and
/// the value in that order, and no other column.
fn in_order(names: &FieldNames, uses: FieldUse) -> (Columns, Selection) {
    let keys = names.key_fields().len();
    let mut found = vec![(0, names.time.clone())];
    if uses.key {
        found.extend(
            names
                .key_fields()
                .into_iter()
                .enumerate()
                .map(|(i, name)| (1 + i, name.to_owned())),
        );
    }
    found.push((1 + keys, names.value.clone()));
    assemble(found, uses, keys + 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(time: &str, key: &str, value: &str) -> FieldNames {
        FieldNames {
            time: time.into(),
            key: key.into(),
            value: value.into(),
        }
    }

    const ALL: FieldUse = FieldUse {
        key: true,
        value: true,
    };

    #[test]
    fn header_names_then_numbers_then_optional_fields() {
        let header = ["ts", "a", "b", "v"];
        let (c, s) = from_header(&names("ts", "b, a", "v"), ALL, &header).unwrap();
        assert_eq!((c.time, c.key, c.value, c.count), (0, 2, 3, 4));
        assert_eq!(s.more_keys, [1]);
        assert_eq!(s.keys, ["b", "a"]);
        // A number that is no header name is a position.
        let (c, s) = from_header(&names("1", "2,3", "4"), ALL, &header).unwrap();
        assert_eq!((c.time, c.key, c.value), (0, 1, 3));
        assert_eq!(
            (s.time.as_str(), s.value.as_str()),
            ("column 1", "column 4")
        );
        assert_eq!(s.keys, ["column 2", "column 3"]);
        // A header column named by digits is found by its name first.
        let (c, _) = from_header(&names("ts", "a", "1"), ALL, &["1", "ts", "a"]).unwrap();
        assert_eq!(c.value, 0);
        // An optional value need not be there; a required one must.
        let count = FieldUse {
            key: true,
            value: false,
        };
        let (c, _) = from_header(&names("ts", "a", "v"), count, &["ts", "a"]).unwrap();
        assert_eq!(c.value, NOT_READ);
        let e = from_header(&names("ts", "a", "v"), ALL, &["ts", "a"]).unwrap_err();
        assert_eq!((e.field.as_str(), e.kind), ("v", InputErrorKind::Header));
        // No key read: the key field need not be there.
        let all = FieldUse {
            key: false,
            value: true,
        };
        let (c, s) = from_header(&names("ts", "k", "v"), all, &["v", "ts"]).unwrap();
        assert_eq!((c.time, c.key, c.value), (1, NOT_READ, 0));
        assert!(s.keys.is_empty());
        let e = from_header(&names("ts", "a", "9"), ALL, &header).unwrap_err();
        assert!(
            e.message.starts_with("no column 9: the CSV header has 4"),
            "{e:?}"
        );
        let e = from_header(&names("0", "a", "v"), ALL, &header).unwrap_err();
        assert!(e.message.contains("count from 1"), "{e:?}");
    }

    #[test]
    fn headerless_fields_are_column_numbers() {
        let (c, s) = from_numbers(&names("3", "1,2", "4"), ALL, 4).unwrap();
        assert_eq!((c.time, c.key, c.value, c.count), (2, 0, 3, 4));
        assert_eq!(s.more_keys, [1]);
        let e = from_numbers(&names("event_time_ms", "2", "3"), ALL, 3).unwrap_err();
        assert_eq!(e.kind, InputErrorKind::Header);
        assert!(e.message.contains("column numbers"), "{e:?}");
        let e = from_numbers(&names("1", "2", "5"), ALL, 3).unwrap_err();
        assert_eq!(e.kind, InputErrorKind::Malformed);
        assert_eq!(e.field, "column 5");
        let e = from_numbers(&names("1", "0", "3"), ALL, 3).unwrap_err();
        assert_eq!((e.field.as_str(), e.kind), ("0", InputErrorKind::Header));
    }

    #[test]
    fn a_socket_header_is_told_from_data() {
        let ts = |t: &str| t.trim().parse::<i64>().is_ok();
        let default = FieldNames::default();
        assert!(is_header(&default, &["key", "event_time_ms"], ts));
        assert!(!is_header(&default, &["1", "a", "2"], ts));
        // By number: a data line holding "1" is not taken for a header.
        let numbered = names("1", "2", "3");
        assert!(!is_header(&numbered, &["1", "a", "2"], ts));
        assert!(is_header(&numbered, &["time", "key", "value"], ts));
        let (c, s) = in_order(&names("t", "a,b", "v"), ALL);
        assert_eq!((c.time, c.key, c.value, c.count), (0, 1, 3, 4));
        assert_eq!(s.more_keys, [2]);
    }
}
