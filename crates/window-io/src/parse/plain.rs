//! The common CSV line, split in one pass: no quote and no carriage return, so that its fields
//! are the text between delimiters, as the csv crate reads them.

use crate::fields::Columns;

/// The three fields of a plain CSV line and its number of fields.
#[derive(Debug)]
pub(super) struct PlainFields<'a> {
    pub(super) time: &'a str,
    pub(super) key: &'a str,
    pub(super) value: &'a str,
    pub(super) count: usize,
}

/// The length up to which [`split_plain`] scans a line byte by byte (longer ones with memchr).
const SHORT_LINE: usize = 64;

/// Splits a line on `delimiter` (an ASCII byte, a comma by default) in one pass, if it has no
/// quote and no carriage return (then its fields are the text between delimiters, as the csv
/// crate reads them); `None` otherwise.
#[inline]
pub(super) fn split_plain<'a>(
    text: &'a str,
    columns: Columns,
    delimiter: u8,
) -> Option<PlainFields<'a>> {
    let bytes = text.as_bytes();
    let mut fields = PlainFields {
        time: "",
        key: "",
        value: "",
        count: 0,
    };
    let mut start = 0;
    let mut take = |fields: &mut PlainFields<'a>, end: usize| {
        let i = fields.count;
        // Cut at an ASCII delimiter: char boundaries.
        let field = text.get(start..end).unwrap_or_default();
        if i == columns.time {
            fields.time = field;
        }
        if i == columns.key {
            fields.key = field;
        }
        if i == columns.value {
            fields.value = field;
        }
        fields.count += 1;
        start = end + 1;
    };
    if bytes.len() <= SHORT_LINE {
        // A plain loop: memchr's search costs more to set up than a short line takes to scan.
        for (at, &b) in bytes.iter().enumerate() {
            if b == delimiter {
                take(&mut fields, at);
            } else if b == b'"' || b == b'\r' {
                return None;
            }
        }
    } else {
        for at in memchr::memchr3_iter(delimiter, b'"', b'\r', bytes) {
            if bytes[at] != delimiter {
                return None;
            }
            take(&mut fields, at);
        }
    }
    take(&mut fields, bytes.len());
    Some(fields)
}
