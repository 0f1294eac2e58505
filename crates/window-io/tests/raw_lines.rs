//! Issue 16, item 11: dead letters keep the bytes of the line as read (not UTF-8, longer than
//! 1 MiB); a quoted CSV field may hold line breaks (what the CSV writers write for such a key);
//! a numeric JSON key is its text as written.

use std::io::{self, BufReader, Cursor, Read};

use window_io::source::{MAX_LINE_BYTES, MAX_RAW_BYTES};
use window_io::{
    DeadLetterWriter, ErrorPolicy, Event, EventReader, FieldNames, InputError, InputErrorKind,
    InputFormat, OnError,
};

fn reader(text: &[u8], format: InputFormat) -> EventReader {
    EventReader::new(
        Cursor::new(text.to_vec()),
        "t.csv",
        format,
        FieldNames::default(),
    )
}

fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("window-io-raw-{}-{name}", std::process::id()))
}

/// The rows of a dead-letter file, as byte records.
fn dead_letter_rows(path: &std::path::Path) -> Vec<Vec<Vec<u8>>> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_path(path)
        .expect("dead letters");
    rdr.byte_records()
        .map(|r| r.expect("a CSV row").iter().map(<[u8]>::to_vec).collect())
        .collect()
}

#[test]
fn dead_letters_keep_the_line_bytes_not_utf8_and_over_1_mib() {
    // A line that is not UTF-8 (with a comma and quotes the dead-letter CSV must quote), and
    // one of 1 MiB + 100 bytes ending in a non-UTF-8 byte: each was kept as text, the first
    // with U+FFFD for its bad bytes, the second cut to 1 MiB.
    let bad_utf8: &[u8] = b"1,\xff\xfe\"q\",\xc3";
    let mut long = b"2,k,".to_vec();
    long.resize(MAX_LINE_BYTES + 100, b'7');
    long.push(0xff);
    let mut text = b"event_time_ms,key,value\n".to_vec();
    for line in [bad_utf8, &long[..], b"3,a,1", b"4,b,x\r"] {
        text.extend_from_slice(line);
        text.push(b'\n');
    }
    let path = temp_path("bytes.csv");
    let _ = std::fs::remove_file(&path);
    let mut policy =
        ErrorPolicy::new(OnError::Skip).with_dead_letter(DeadLetterWriter::create(&path).unwrap());
    let mut events = Vec::new();
    for item in reader(&text, InputFormat::Csv) {
        match item {
            Ok(e) => events.push(e),
            Err(err) => policy.handle(err).unwrap(),
        }
    }
    assert_eq!(events.len(), 1);
    assert_eq!(policy.skipped, 3);
    assert_eq!(
        policy.dead_letter.as_ref().map(DeadLetterWriter::cut),
        Some(0)
    );
    drop(policy);
    let rows = dead_letter_rows(&path);
    let raw: Vec<&[u8]> = rows.iter().map(|r| &r[4][..]).collect();
    assert_eq!(raw, [bad_utf8, &long[..], b"4,b,x"]);
    let lines: Vec<&[u8]> = rows.iter().map(|r| &r[1][..]).collect();
    assert_eq!(lines, [&b"2"[..], b"3", b"5"]);
    assert_eq!(
        String::from_utf8_lossy(&rows[1][3]),
        format!(
            "line is longer than {MAX_LINE_BYTES} bytes ({} bytes)",
            MAX_LINE_BYTES + 101
        )
    );
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_line_over_the_raw_limit_keeps_its_first_bytes_and_says_so() {
    // MAX_RAW_BYTES + 10 bytes without a line break, made as they are read.
    let len = MAX_RAW_BYTES + 10;
    let input = Cursor::new(b"event_time_ms,key,value\n".to_vec())
        .chain(io::repeat(b'9').take(len as u64))
        .chain(Cursor::new(b"\n5,a,1\n".to_vec()));
    let mut r = EventReader::new(
        BufReader::new(input),
        "big",
        InputFormat::Csv,
        FieldNames::default(),
    );
    let err = r.next().expect("an item").expect_err("too long");
    assert_eq!((err.line, err.kind), (2, InputErrorKind::Malformed));
    assert!(err.raw_cut);
    assert_eq!(err.raw.len(), MAX_RAW_BYTES);
    assert!(err.raw.iter().all(|b| *b == b'9'));
    assert_eq!(
        err.message,
        format!(
            "line is longer than {MAX_LINE_BYTES} bytes ({len} bytes; only its first \
             {MAX_RAW_BYTES} bytes are kept)"
        )
    );
    let mut w = DeadLetterWriter::from_writer(Box::new(io::sink()), "sink", true).unwrap();
    w.write(&err).unwrap();
    assert_eq!(w.cut(), 1);
    let next = r.next().expect("reading goes on").expect("an event");
    assert_eq!((next.timestamp, next.line), (5, 3));
}

fn events(items: Vec<Result<Event, InputError>>) -> Vec<(u64, String)> {
    items
        .into_iter()
        .map(|i| i.map(|e| (e.line, e.key)).expect("no error"))
        .collect()
}

#[test]
fn a_quoted_field_may_span_lines() {
    // What windowctl's CSV writers write for keys with line breaks (the csv crate quotes them),
    // and CRLF lines; was: "expected 3 fields, found 2" for each part.
    let text = b"event_time_ms,key,value\n1,\"a\nb\",2\n2,\"x\"\"\r\n\r\ny\",3\r\n3,c,4\n";
    let items: Vec<_> = reader(text, InputFormat::Csv).collect();
    assert_eq!(
        events(items),
        [
            (2, "a\nb".to_owned()),
            (4, "x\"\r\n\r\ny".to_owned()),
            (7, "c".to_owned())
        ]
    );
    // A quote inside an unquoted field is a character, as the csv crate reads it.
    let items: Vec<_> = reader(
        b"event_time_ms,key,value\n1,a\"b,2\n2,\"c\"d\",3\n",
        InputFormat::Csv,
    )
    .collect();
    assert_eq!(
        events(items),
        [(2, "a\"b".to_owned()), (3, "cd\"".to_owned())]
    );
}

#[test]
fn errors_in_a_record_over_lines_name_its_first_line_and_keep_its_lines() {
    let text = b"event_time_ms,key,value\n1,\"a\nb\",x\n2,ok,1\n3,\"open,1\n4,b,1\n";
    let mut r = reader(text, InputFormat::Csv);
    let err = r.next().unwrap().unwrap_err();
    assert_eq!(
        err.to_string(),
        "t.csv:2: field 'value': \"x\" is not a number"
    );
    assert_eq!(err.raw, b"1,\"a\nb\",x");
    assert_eq!(r.read_position().line, 3);
    let ok = r.next().unwrap().unwrap();
    assert_eq!((ok.key.as_str(), ok.line), ("ok", 4));
    // Never closed: the error names the line it opened on, with the lines it took.
    let err = r.next().unwrap().unwrap_err();
    assert_eq!(
        err.to_string(),
        "t.csv:5: a quoted field opened on this line is not closed before the end of the input"
    );
    assert_eq!(err.raw, b"3,\"open,1\n4,b,1\n");
    assert!(r.next().is_none());
}

#[test]
fn a_quote_never_closed_ends_its_record_at_the_line_limit_and_reading_goes_on() {
    let mut text = b"event_time_ms,key,value\n1,\"never closed,1\n".to_vec();
    let filler = b"2,b,1\n".repeat(MAX_LINE_BYTES / 6 + 2);
    text.extend_from_slice(&filler);
    text.extend_from_slice(b"\"\n7,after,1\n");
    let mut r = reader(&text, InputFormat::Csv);
    let err = r.next().unwrap().unwrap_err();
    assert_eq!((err.line, err.kind), (2, InputErrorKind::Malformed));
    assert!(
        err.message.starts_with(&format!(
            "the record starting on this line is longer than {MAX_LINE_BYTES} bytes: a quoted \
             field opened on it is not closed within that"
        )),
        "{}",
        err.message
    );
    assert!(err.raw.len() > MAX_LINE_BYTES && !err.raw_cut);
    // Reading goes on with the line after those it took: more of the same lines, then the
    // closing quote opens a field that runs to the end, then the input ends.
    let next = r.next().unwrap().unwrap();
    assert_eq!(next.key, "b");
}

#[test]
fn a_restart_after_a_record_over_lines_continues_with_the_next_record() {
    let text = b"event_time_ms,\"key\nname\",value\n1,\"a\nb\",2\n2,c,3\n".to_vec();
    let fields = FieldNames {
        key: "key\nname".to_owned(),
        ..FieldNames::default()
    };
    let open = || {
        EventReader::new(
            Cursor::new(text.clone()),
            "t.csv",
            InputFormat::Csv,
            fields.clone(),
        )
    };
    let mut first = open();
    let a = first.next().unwrap().unwrap();
    assert_eq!((a.key.as_str(), a.line), ("a\nb", 3));
    let position = first.read_position();
    assert_eq!(position.line, 4);
    let mut again = open();
    again.skip_to(position).expect("the same input");
    let c = again.next().unwrap().unwrap();
    assert_eq!((c.key.as_str(), c.line), ("c", 5));
}

#[test]
fn numeric_json_keys_are_their_text_as_written() {
    // Was: `1e2`, `1E2` and `1e+2` all became the key `1e+2` (serde_json's printing).
    let keys = [
        "100", "1e2", "1E2", "1e+2", "1.5", "1.50", "-0", "100.0", "1.5e-3",
    ];
    let mut text = String::new();
    for (i, k) in keys.iter().enumerate() {
        text.push_str(&format!(
            "{{\"event_time_ms\": {i}, \"key\": {k}, \"value\": 1}}\n"
        ));
    }
    let items: Vec<_> = reader(text.as_bytes(), InputFormat::Jsonl).collect();
    let got: Vec<String> = events(items).into_iter().map(|(_, k)| k).collect();
    assert_eq!(got, keys);
}

#[test]
fn a_bare_carriage_return_outside_quotes_refuses_the_line_instead_of_dropping_its_rest() {
    // The csv crate ends a record at a bare `\r`: "1000,a,1\r2000,a,2" read as one record lost
    // the second one silently (a fresh-user trial). Now the line is refused, whole, and reading
    // goes on; a `\r` inside quotes and a CRLF line ending are still fine.
    let text = b"event_time_ms,key,value\n1000,a,1\r2000,a,2\n3000,\"b\rc\",3\r\n4000,d,4\n";
    let items: Vec<_> = reader(text, InputFormat::Csv).collect();
    assert_eq!(items.len(), 3);
    let err = items[0]
        .as_ref()
        .expect_err("the line with a bare \\r is refused");
    assert_eq!(err.line, 2);
    assert_eq!(err.kind, InputErrorKind::Malformed);
    assert_eq!(err.raw, b"1000,a,1\r2000,a,2");
    assert!(err.to_string().contains("carriage return"), "{err}");
    let rest: Vec<_> = items[1..]
        .iter()
        .map(|i| i.as_ref().map(|e| (e.line, e.key.clone())).unwrap())
        .collect();
    assert_eq!(rest, [(3, "b\rc".to_owned()), (4, "d".to_owned())]);
    // A file of bare `\r` line endings is one line: refused, not read as nothing.
    let items: Vec<_> = reader(b"event_time_ms,key,value\r1,a,1\r", InputFormat::Csv).collect();
    assert_eq!(items.len(), 1, "{items:?}");
    let err = items[0].as_ref().expect_err("the one line is refused");
    assert_eq!((err.line, err.kind), (1, InputErrorKind::Malformed));
    assert!(err.to_string().contains("carriage return"), "{err}");
}
