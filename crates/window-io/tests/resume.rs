//! A reader moved to an earlier reader's position (`EventReader::skip_to`, what a job resumed
//! from a checkpoint does) hands out exactly the records, errors and line numbers the earlier
//! reader handed out after that position.

use std::io::{BufReader, Cursor};

use window_io::{Event, EventReader, FieldNames, InputError, InputFormat, ReadPosition};

fn reader(text: &str, format: InputFormat, buffer: usize) -> EventReader {
    let input = BufReader::with_capacity(buffer, Cursor::new(text.as_bytes().to_vec()));
    EventReader::new(input, "in.csv", format, FieldNames::default())
}

type Item = Result<Event, InputError>;

/// Every item of `r` to its end, with the position after each.
fn drain(r: &mut EventReader) -> Vec<(Item, ReadPosition)> {
    let mut out = Vec::new();
    while let Some(item) = r.next_event() {
        out.push((item, r.read_position()));
    }
    out
}

/// A random CSV or JSON-lines text: records, blank lines, CRLF ends, bad lines, a BOM.
fn random_text(seed: &mut u64, format: InputFormat) -> String {
    let mut next = || {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    };
    let mut text = String::new();
    if next() % 3 == 0 {
        text.push('\u{feff}');
    }
    if format == InputFormat::Csv {
        text.push_str("event_time_ms,key,value\n");
    }
    for i in 0..(next() % 40) {
        let r = next();
        let end = if r % 4 == 0 { "\r\n" } else { "\n" };
        match (r >> 8) % 7 {
            0 => text.push_str(end),
            1 => text.push_str(&format!("not a record {i}{end}")),
            _ if format == InputFormat::Csv => {
                text.push_str(&format!("{},k{},{}{end}", i * 10, r % 5, (r >> 20) % 100));
            }
            _ => text.push_str(&format!(
                "{{\"event_time_ms\":{},\"key\":\"k{}\",\"value\":{}}}{end}",
                i * 10,
                r % 5,
                (r >> 20) % 100
            )),
        }
    }
    if next() % 2 == 0 {
        text.push_str("99,last,1"); // no line end at the end
    }
    text
}

#[test]
fn a_reader_moved_to_a_position_continues_as_the_first_one_did() {
    let mut seed = 0x1234_5678_9ABC_DEF1_u64;
    for round in 0..300 {
        let format = if round % 2 == 0 {
            InputFormat::Csv
        } else {
            InputFormat::Jsonl
        };
        let text = random_text(&mut seed, format);
        let buffer = 5 + round % 40;
        let all = drain(&mut reader(&text, format, buffer));
        // From every position the first reader reached, and from the start.
        let starts = std::iter::once(ReadPosition::default()).chain(all.iter().map(|(_, p)| *p));
        for (k, position) in starts.enumerate() {
            let mut resumed = reader(&text, format, 64 - buffer % 50);
            resumed
                .skip_to(position)
                .unwrap_or_else(|e| panic!("round {round}, position {position:?}: {e}\n{text:?}"));
            assert_eq!(resumed.read_position(), position);
            let rest = drain(&mut resumed);
            let expected: Vec<_> = all[k..].to_vec();
            assert_eq!(rest, expected, "round {round}, from {position:?}\n{text:?}");
        }
    }
}

#[test]
fn a_position_the_input_does_not_have_is_an_error_naming_it() {
    let text = "event_time_ms,key,value\n1,a,1\n2,b,2\n";
    let mut r = reader(text, InputFormat::Csv, 64);
    let err = r
        .skip_to(ReadPosition {
            offset: 200,
            line: 9,
        })
        .unwrap_err();
    assert!(err.to_string().contains("ends before"), "{err}");
    assert!(err.to_string().contains("byte 200 (line 9)"), "{err}");
    // Inside a line.
    let mut r = reader(text, InputFormat::Csv, 64);
    let err = r
        .skip_to(ReadPosition {
            offset: 22,
            line: 2,
        })
        .unwrap_err();
    assert!(err.to_string().contains("no line ends there"), "{err}");
    // At a line end, with another line count (the file changed above the position).
    let mut r = reader(text, InputFormat::Csv, 64);
    let err = r
        .skip_to(ReadPosition {
            offset: 30,
            line: 3,
        })
        .unwrap_err();
    assert!(err.to_string().contains("it is line 2 there"), "{err}");
}

/// Found by the `csv_source` fuzz target: a header line that is not UTF-8. It stops the reader
/// (a header error: the next line must not be taken as the header, which an error policy that
/// skips bad lines did before), and moving past it stops there with the same error.
#[test]
fn a_header_that_is_not_utf8_stops_the_reader_and_a_skip_past_it_alike() {
    let text: &[u8] = b"event_ty,ey,\xe4\\\\value\n=\xc4,key,vue\nevent_time_ms,key,value\n1,a,1\n";
    let open = || {
        let input = BufReader::with_capacity(16, Cursor::new(text.to_vec()));
        EventReader::new(input, "in.csv", InputFormat::Csv, FieldNames::default())
    };
    let all = drain(&mut open());
    assert_eq!(all.len(), 1, "the header's error, then nothing: {all:?}");
    let Err(first) = &all[0].0 else {
        panic!("{all:?}")
    };
    assert!(first.is_fatal());
    assert_eq!(
        first.to_string(),
        "in.csv:1: the CSV header is not valid UTF-8 (invalid byte at column 13)"
    );
    let mut resumed = open();
    let err = resumed
        .skip_to(ReadPosition {
            offset: 40,
            line: 3,
        })
        .expect_err("the header stops the skip");
    assert_eq!(err.to_string(), first.to_string());
}
