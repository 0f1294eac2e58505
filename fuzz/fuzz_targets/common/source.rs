//! The source check shared by the CSV and JSON-lines targets.

use std::io::{BufReader, Cursor};

use engine::io::{EventReader, FieldNames, InputFormat, ReadPosition};

/// Reads `data` (a small buffer, so lines cross it) to the end, then again from a position in
/// the middle, and checks the two agree.
pub fn windowing_fuzz_source(data: &[u8], format: InputFormat) {
    let open = || {
        let input = BufReader::with_capacity(16, Cursor::new(data.to_vec()));
        EventReader::new(input, "fuzz", format, FieldNames::default())
    };
    let mut reader = open();
    let mut items = Vec::new();
    let mut last_line = 0;
    while let Some(item) = reader.next_event() {
        let position = reader.read_position();
        let line = match &item {
            Ok(e) => e.line,
            Err(e) => e.line,
        };
        assert!(
            line >= last_line,
            "line numbers go back: {line} after {last_line}"
        );
        last_line = line;
        items.push((item, position));
    }
    if items.is_empty() {
        return;
    }
    let (_, middle) = items[items.len() / 2].clone();
    let mut resumed = open();
    if resumed.skip_to(middle).is_err() {
        // A fatal header error before the middle is allowed to stop both readers alike.
        assert!(items[..=items.len() / 2]
            .iter()
            .any(|(i, _)| i.as_ref().is_err_and(|e| e.is_fatal())));
        return;
    }
    assert_eq!(resumed.read_position(), middle);
    let mut rest = Vec::new();
    while let Some(item) = resumed.next_event() {
        rest.push((item, resumed.read_position()));
    }
    assert_eq!(rest, items[items.len() / 2 + 1..].to_vec());
    let _: ReadPosition = middle;
}
