//! Black-box tests of the event sources (`window_io::source`): the bundled
//! data, every kind of bad record with its exact location, JSON lines, gzip,
//! sockets, the reader's order of events and errors, and the error policy.

use std::io::{Cursor, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use window_io::source::{
    open_source, CsvHeader, DeadLetterWriter, ErrorPolicy, Event, EventReader, FieldNames,
    InputErrorKind, InputFormat, InputSpec, Number, OnError, OpenError,
};
use window_io::InputError;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data")
        .join(name)
}

fn temp_path(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("engine-io-source-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn reader(text: &[u8], format: InputFormat) -> EventReader {
    EventReader::new(
        Cursor::new(text.to_vec()),
        "t.csv",
        format,
        FieldNames::default(),
    )
}

fn read_all(text: &[u8], format: InputFormat) -> Vec<Result<Event, InputError>> {
    reader(text, format).collect()
}

/// Line, field, kind and display text of an expected error.
type ExpectedError = (u64, Option<&'static str>, InputErrorKind, &'static str);

fn ev(timestamp: i64, key: &str, value: f64) -> Event {
    Event {
        timestamp,
        key: key.to_owned(),
        value: Number::Float(value),
        line: 0,
    }
}

#[test]
fn bundled_tiny_csv_first_rows_and_count() {
    let path = data("nycflights13_tailnum_tiny.csv");
    let len = std::fs::metadata(&path).unwrap().len();
    let mut reader = open_source(
        &InputSpec::File(path.clone()),
        InputFormat::Csv,
        FieldNames::default(),
    )
    .unwrap();
    assert_eq!(reader.total_bytes(), Some(len));
    assert_eq!(
        reader.next().unwrap().unwrap(),
        ev(1_357_035_300_000, "N14228", 2.0)
    );
    assert_eq!(
        reader.next().unwrap().unwrap(),
        ev(1_357_036_140_000, "N24211", 4.0)
    );
    let mut count = 2;
    for item in reader.by_ref() {
        item.unwrap();
        count += 1;
    }
    assert_eq!(count, 1_771);
    assert_eq!(reader.bytes_read(), len);
    assert_eq!(reader.lines_read(), 1_772);
}

#[test]
fn bundled_gzip_counts_all_events() {
    let path = data("nycflights13_dest.csv.gz");
    let len = std::fs::metadata(&path).unwrap().len();
    let reader = open_source(
        &InputSpec::parse(path.to_str().unwrap()),
        InputFormat::from_path(&path),
        FieldNames::default(),
    )
    .unwrap();
    assert_eq!(reader.total_bytes(), Some(len));
    let progress = reader.progress();
    let mut first = None;
    let mut count = 0u64;
    for item in reader {
        let event = item.unwrap();
        first.get_or_insert(event);
        count += 1;
    }
    assert_eq!(count, 328_521);
    assert_eq!(first, Some(ev(1_357_035_300_000, "IAH", 2.0)));
    // The compressed stream was read in full.
    assert_eq!(progress.bytes_read(), len);
}

#[test]
fn every_csv_error_kind_with_its_location() {
    let text = b"event_time_ms,key,value\n\
1,a,1\n\
2,b\n\
3,c,abc\n\
4,d,NaN\n\
5,e,-inf\n\
1.5,f,1\n\
99999999999999999999,g,1\n\
,h,1\n\
10,,1\n\
\xff\xfe,i,1\n\
12,\"k,1\",3\n\
\n\
13,m,\" 4.5 \"\n\
14,n,1,extra\n";
    let items = read_all(text, InputFormat::Csv);
    let expected: Vec<Result<Event, ExpectedError>> = vec![
        Ok(ev(1, "a", 1.0)),
        // A short line names the first field it lacks.
        Err((
            3,
            Some("value"),
            InputErrorKind::Malformed,
            "t.csv:3: field 'value': missing: the line has 2 fields, not 3",
        )),
        Err((
            4,
            Some("value"),
            InputErrorKind::InvalidValue,
            "t.csv:4: field 'value': \"abc\" is not a number",
        )),
        Err((
            5,
            Some("value"),
            InputErrorKind::InvalidValue,
            "t.csv:5: field 'value': \"NaN\" is not a finite number",
        )),
        Err((
            6,
            Some("value"),
            InputErrorKind::InvalidValue,
            "t.csv:6: field 'value': \"-inf\" is not a finite number",
        )),
        Err((
            7,
            Some("event_time_ms"),
            InputErrorKind::InvalidTimestamp,
            "t.csv:7: field 'event_time_ms': \"1.5\" is not an integer number of milliseconds",
        )),
        Err((
            8,
            Some("event_time_ms"),
            InputErrorKind::InvalidTimestamp,
            "t.csv:8: field 'event_time_ms': \"99999999999999999999\" is out of range for a 64-bit millisecond timestamp",
        )),
        Err((
            9,
            Some("event_time_ms"),
            InputErrorKind::MissingField,
            "t.csv:9: field 'event_time_ms': missing (empty)",
        )),
        Err((
            10,
            Some("key"),
            InputErrorKind::MissingField,
            "t.csv:10: field 'key': missing (empty)",
        )),
        Err((
            11,
            None,
            InputErrorKind::Malformed,
            "t.csv:11: line is not valid UTF-8 (invalid byte at column 1)",
        )),
        Ok(ev(12, "k,1", 3.0)),
        Ok(ev(13, "m", 4.5)),
        // A long line says how a field holds a comma.
        Err((
            15,
            None,
            InputErrorKind::Malformed,
            "t.csv:15: expected 3 fields, found 4; a field that holds ',' must be in double quotes",
        )),
    ];
    assert_eq!(items.len(), expected.len());
    for (item, want) in items.iter().zip(&expected) {
        match (item, want) {
            (Ok(got), Ok(want)) => assert_eq!(got, want),
            (Err(err), Err((line, field, kind, display))) => {
                assert_eq!(err.line, *line, "{err}");
                assert_eq!(err.field.as_deref(), *field, "{err}");
                assert_eq!(err.kind, *kind, "{err}");
                assert_eq!(err.source_name, "t.csv");
                assert_eq!(err.to_string(), *display);
                assert!(!err.is_fatal());
            }
            (got, want) => panic!("got {got:?}, want {want:?}"),
        }
    }
    // The bytes of the line are kept as read (not UTF-8 too), without terminator.
    let raw: Vec<&[u8]> = items
        .iter()
        .filter_map(|i| i.as_ref().err())
        .map(|e| &e.raw[..])
        .collect();
    assert_eq!(raw[0], b"2,b");
    assert_eq!(raw[1], b"3,c,abc");
    assert_eq!(raw[8], b"\xff\xfe,i,1");
    assert_eq!(raw[9], b"14,n,1,extra");
}

#[test]
fn csv_header_without_a_configured_field_is_fatal() {
    let mut reader = reader(b"time,key,value\n1,a,2\n", InputFormat::Csv);
    let err = reader.next().unwrap().unwrap_err();
    assert_eq!(err.kind, InputErrorKind::Header);
    assert!(err.is_fatal());
    assert_eq!(err.line, 1);
    assert_eq!(err.field.as_deref(), Some("event_time_ms"));
    assert_eq!(err.raw, b"time,key,value");
    assert!(
        err.to_string().starts_with(
            "t.csv:1: field 'event_time_ms': no such column in the CSV header (columns: \"time\", \"key\", \"value\")"
        ),
        "{err}"
    );
    assert!(reader.next().is_none());
    // Skipping does not apply to a fatal error.
    let mut policy = ErrorPolicy::new(OnError::Skip);
    assert_eq!(policy.handle(err.clone()), Err(err));
}

#[test]
fn csv_custom_field_names_reordered_and_extra_columns() {
    let fields = FieldNames {
        time: "ts".into(),
        key: "sensor".into(),
        value: "temp".into(),
    };
    let text = "id, temp ,ts,sensor\n7,21.5,1000,s1\n8,-3,2000,s2\n9,x,3000,s3\n";
    let items: Vec<_> =
        EventReader::new(Cursor::new(text), "custom.csv", InputFormat::Csv, fields).collect();
    assert_eq!(items[0].as_ref().unwrap(), &ev(1000, "s1", 21.5));
    assert_eq!(items[1].as_ref().unwrap(), &ev(2000, "s2", -3.0));
    assert_eq!(
        items[2].as_ref().unwrap_err().to_string(),
        "custom.csv:4: field 'temp': \"x\" is not a number"
    );
}

#[test]
fn csv_header_detection_for_headerless_streams() {
    let headerless = reader(b"1,a,2\n3,b,4\n", InputFormat::Csv).with_csv_header(CsvHeader::Detect);
    let events: Vec<Event> = headerless.map(Result::unwrap).collect();
    assert_eq!(events, vec![ev(1, "a", 2.0), ev(3, "b", 4.0)]);

    let with_header = reader(b"key,value,event_time_ms\na,2,1\n", InputFormat::Csv)
        .with_csv_header(CsvHeader::Detect);
    let events: Vec<Event> = with_header.map(Result::unwrap).collect();
    assert_eq!(events, vec![ev(1, "a", 2.0)]);

    // Required (the default): a headerless first line is taken as a header.
    let err = reader(b"1,a,2\n", InputFormat::Csv)
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(err.kind, InputErrorKind::Header);
}

#[test]
fn jsonl_variants() {
    let text = br#"{"event_time_ms": 1357035300000, "key": "N14228", "value": 2}

{"event_time_ms": "-5", "key": 42, "value": "2.5", "extra": [1, 2]}
   
{"value": 1e3, "key": 1.5, "event_time_ms": 0}
{"event_time_ms": 1, "key": 12345678901234567890123, "value": 1}
{"event_time_ms": 2, "key": 12345678901234567890124, "value": 1}
{"event_time_ms": 3, "key": 1.50, "value": 1}
"#;
    let events: Vec<Event> = read_all(text, InputFormat::Jsonl)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        events,
        vec![
            ev(1_357_035_300_000, "N14228", 2.0),
            ev(-5, "42", 2.5),
            ev(0, "1.5", 1000.0),
            // A number key keeps its text: two keys beyond f64 precision stay two keys.
            ev(1, "12345678901234567890123", 1.0),
            ev(2, "12345678901234567890124", 1.0),
            ev(3, "1.50", 1.0),
        ]
    );
}

#[test]
fn every_jsonl_error_kind_with_its_location() {
    let lines = [
        (
            r#"{"event_time_ms": 1, "key": "a", "value": 1"#,
            InputErrorKind::Malformed,
            None,
            "invalid JSON: EOF while parsing an object at column 43",
        ),
        (
            r#"[1, "a", 1]"#,
            InputErrorKind::Malformed,
            None,
            "expected a JSON object, found an array",
        ),
        (
            r#"{"key": "a", "value": 1}"#,
            InputErrorKind::MissingField,
            Some("event_time_ms"),
            "missing",
        ),
        (
            r#"{"event_time_ms": 1, "key": null, "value": 1}"#,
            InputErrorKind::MissingField,
            Some("key"),
            "missing (null)",
        ),
        (
            r#"{"event_time_ms": 1, "key": "a"}"#,
            InputErrorKind::MissingField,
            Some("value"),
            "missing",
        ),
        (
            r#"{"event_time_ms": 1.5, "key": "a", "value": 1}"#,
            InputErrorKind::InvalidTimestamp,
            Some("event_time_ms"),
            "1.5 is not an integer number of milliseconds",
        ),
        (
            // Quoted as written, not as serde_json prints it (`1.5e+3`).
            r#"{"event_time_ms": 1.5e3, "key": "a", "value": 1}"#,
            InputErrorKind::InvalidTimestamp,
            Some("event_time_ms"),
            "1.5e3 is not an integer number of milliseconds",
        ),
        (
            r#"{"event_time_ms": 1, "key": "a", "value": 1E400}"#,
            InputErrorKind::InvalidValue,
            Some("value"),
            "1E400 is not a finite number",
        ),
        (
            r#"{"event_time_ms": 1000.0, "key": "a", "value": 1}"#,
            InputErrorKind::InvalidTimestamp,
            Some("event_time_ms"),
            "1000.0 is not an integer number of milliseconds",
        ),
        (
            r#"{"event_time_ms": 9223372036854775808, "key": "a", "value": 1}"#,
            InputErrorKind::InvalidTimestamp,
            Some("event_time_ms"),
            "9223372036854775808 is out of range for a 64-bit millisecond timestamp",
        ),
        (
            r#"{"event_time_ms": "12:00", "key": "a", "value": 1}"#,
            InputErrorKind::InvalidTimestamp,
            Some("event_time_ms"),
            "\"12:00\" is not an integer number of milliseconds",
        ),
        (
            r#"{"event_time_ms": true, "key": "a", "value": 1}"#,
            InputErrorKind::InvalidTimestamp,
            Some("event_time_ms"),
            "true is not an integer number of milliseconds",
        ),
        (
            r#"{"event_time_ms": 1, "key": ["a"], "value": 1}"#,
            InputErrorKind::InvalidKey,
            Some("key"),
            "[\"a\"] is not a string or a number",
        ),
        (
            r#"{"event_time_ms": 1, "key": "", "value": 1}"#,
            InputErrorKind::MissingField,
            Some("key"),
            "missing (empty)",
        ),
        (
            r#"{"event_time_ms": 1, "key": "a", "value": "abc"}"#,
            InputErrorKind::InvalidValue,
            Some("value"),
            "\"abc\" is not a number",
        ),
        (
            r#"{"event_time_ms": 1, "key": "a", "value": "NaN"}"#,
            InputErrorKind::InvalidValue,
            Some("value"),
            "\"NaN\" is not a finite number",
        ),
        (
            r#"{"event_time_ms": 1, "key": "a", "value": {"v": 1}}"#,
            InputErrorKind::InvalidValue,
            Some("value"),
            "{\"v\":1} is not a number",
        ),
    ];
    let mut text = Vec::new();
    for (line, ..) in &lines {
        text.extend_from_slice(line.as_bytes());
        text.push(b'\n');
    }
    text.extend_from_slice(b"{\"key\": \"\xc3\x28\"}\n");
    text.extend_from_slice(br#"{"event_time_ms": 2, "key": "ok", "value": -1}"#);
    let items = read_all(&text, InputFormat::Jsonl);
    assert_eq!(items.len(), lines.len() + 2);
    for (i, (line, kind, field, message)) in lines.iter().enumerate() {
        let err = items[i].as_ref().unwrap_err();
        assert_eq!(err.line, i as u64 + 1, "{err}");
        assert_eq!(err.kind, *kind, "{err}");
        assert_eq!(err.field.as_deref(), *field, "{err}");
        assert_eq!(err.message, *message);
        assert_eq!(err.raw, line.as_bytes());
        let prefix = match field {
            Some(f) => format!("t.csv:{}: field '{f}': ", i + 1),
            None => format!("t.csv:{}: ", i + 1),
        };
        assert_eq!(err.to_string(), format!("{prefix}{message}"));
    }
    let utf8 = items[lines.len()].as_ref().unwrap_err();
    assert_eq!(utf8.kind, InputErrorKind::Malformed);
    assert_eq!(utf8.line, lines.len() as u64 + 1);
    assert_eq!(
        utf8.message,
        "line is not valid UTF-8 (invalid byte at column 10)"
    );
    assert_eq!(items.last().unwrap().as_ref().unwrap(), &ev(2, "ok", -1.0));
}

#[test]
fn never_panics_on_garbage() {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let alphabet = b"0123456789,\"\n\r{}[]:.-eE \xff\xc3abkeyvalue_time";
    for round in 0..300 {
        let mut text = Vec::new();
        if round % 2 == 0 {
            text.extend_from_slice(b"event_time_ms,key,value\n");
        }
        for _ in 0..(round % 97) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            text.push(alphabet[(state % alphabet.len() as u64) as usize]);
        }
        for format in [InputFormat::Csv, InputFormat::Jsonl] {
            for item in reader(&text, format) {
                if let Err(err) = item {
                    assert!(err.line >= 1);
                    let _ = err.to_string();
                }
            }
        }
    }
}

#[test]
fn open_errors_name_the_input() {
    let missing = temp_path("does-not-exist.csv");
    let err = open_source(
        &InputSpec::File(missing.clone()),
        InputFormat::Csv,
        FieldNames::default(),
    )
    .unwrap_err();
    assert!(matches!(err, OpenError::Open { .. }));
    assert!(
        err.to_string().starts_with(&format!(
            "cannot open input file {:?}: ",
            missing.display().to_string()
        )),
        "{err}"
    );

    // A port that was just free: the connection is refused.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let err = open_source(
        &InputSpec::parse(&addr),
        InputFormat::Csv,
        FieldNames::default(),
    )
    .unwrap_err();
    assert!(matches!(err, OpenError::Connect { .. }));
    assert!(
        err.to_string()
            .starts_with(&format!("cannot connect to socket {addr}: ")),
        "{err}"
    );
}

#[test]
fn corrupt_gzip_is_a_fatal_io_error() {
    let path = temp_path("corrupt.csv.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    writeln!(encoder, "event_time_ms,key,value").unwrap();
    for i in 0..5_000 {
        writeln!(encoder, "{i},key{},{}", i % 7, i % 11).unwrap();
    }
    let compressed = encoder.finish().unwrap();
    // A truncated stream: the decoder fails with an I/O error.
    std::fs::write(&path, &compressed[..compressed.len() / 2]).unwrap();

    let mut reader = open_source(
        &InputSpec::File(path.clone()),
        InputFormat::Csv,
        FieldNames::default(),
    )
    .unwrap();
    let mut events = 0;
    let io = loop {
        match reader.next().expect("an I/O error before the end") {
            Ok(_) => events += 1,
            Err(err) if err.kind == InputErrorKind::Io => break err.to_string(),
            Err(other) => panic!("unexpected {other:?}"),
        }
    };
    assert!(events > 0 && events < 5_000, "{events}");
    assert!(
        io.starts_with(&format!("{}:{}: read error: ", path.display(), events + 2)),
        "{io}"
    );
    // Nothing follows an I/O failure.
    assert!(reader.next().is_none());
    let _ = std::fs::remove_file(&path);
}

#[test]
fn socket_source_without_header_keeps_the_clock_running() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let server = thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        conn.write_all(b"1000,a,1\n2000,b,2.5\n").unwrap();
        conn.flush().unwrap();
        thread::sleep(Duration::from_millis(400));
        conn.write_all(b"3000,a,x\n4000,c,").unwrap();
        conn.flush().unwrap();
        thread::sleep(Duration::from_millis(100));
        conn.write_all(b"4\n").unwrap();
        // Dropping the connection ends the stream.
    });

    let spec = InputSpec::parse(&addr);
    assert_eq!(spec, InputSpec::Socket(addr.clone()));
    let reader = open_source(&spec, InputFormat::Csv, FieldNames::default()).unwrap();
    assert_eq!(reader.source_name(), format!("socket {addr}"));
    assert_eq!(reader.total_bytes(), None);
    let progress = reader.progress();
    // The test's own reading thread, as the engine's runtime reads a source: every record is
    // handed over as soon as its line is complete, and the channel closes at the end.
    let (tx, rx) = mpsc::channel();
    let reading = thread::spawn(move || {
        for item in reader {
            if tx.send(item).is_err() {
                return;
            }
        }
    });

    let deadline = Instant::now() + Duration::from_secs(20);
    let mut messages = Vec::new();
    let mut timeouts_after_second_event = 0;
    loop {
        assert!(
            Instant::now() < deadline,
            "socket test timed out: {messages:?}"
        );
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(message) => messages.push(message),
            Err(RecvTimeoutError::Timeout) => {
                if messages.len() == 2 {
                    timeouts_after_second_event += 1;
                }
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    reading.join().unwrap();
    server.join().unwrap();
    assert!(
        timeouts_after_second_event >= 2,
        "{timeouts_after_second_event}"
    );
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert_eq!(messages[0], Ok(ev(1000, "a", 1.0)));
    assert_eq!(messages[1], Ok(ev(2000, "b", 2.5)));
    match &messages[2] {
        Err(err) => assert_eq!(
            err.to_string(),
            format!("socket {addr}:3: field 'value': \"x\" is not a number")
        ),
        other => panic!("expected an error, got {other:?}"),
    }
    assert_eq!(messages[3], Ok(ev(4000, "c", 4.0)));
    assert_eq!(progress.bytes_read(), 38);
}

#[test]
fn socket_source_with_header_and_jsonl() {
    for (format, payload) in [
        (InputFormat::Csv, "key,event_time_ms,value\nk,5,6\n"),
        (
            InputFormat::Jsonl,
            "{\"event_time_ms\":5,\"key\":\"k\",\"value\":6}\n",
        ),
    ] {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = format!("tcp://{}", listener.local_addr().unwrap());
        let server = thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            conn.write_all(payload.as_bytes()).unwrap();
        });
        let reader = open_source(&InputSpec::parse(&addr), format, FieldNames::default()).unwrap();
        let events: Vec<Event> = reader.map(Result::unwrap).collect();
        server.join().unwrap();
        assert_eq!(events, vec![ev(5, "k", 6.0)], "{format}");
    }
}

#[test]
fn reader_delivers_everything_then_end() {
    let text = "event_time_ms,key,value\n".to_owned()
        + &(0..10_000)
            .map(|i| format!("{i},k{},{i}\n", i % 3))
            .collect::<String>()
        + "bad,k,1\n";
    let mut reader = EventReader::new(
        Cursor::new(text),
        "mem",
        InputFormat::Csv,
        FieldNames::default(),
    );
    let mut next_ts = 0;
    let mut errors = 0;
    for item in reader.by_ref() {
        match item {
            Ok(e) => {
                assert_eq!(e.timestamp, next_ts);
                next_ts += 1;
            }
            Err(err) if err.kind == InputErrorKind::Io => panic!("{err}"),
            Err(err) => {
                assert_eq!(next_ts, 10_000);
                assert_eq!(err.line, 10_002);
                assert_eq!(err.kind, InputErrorKind::InvalidTimestamp);
                errors += 1;
            }
        }
    }
    assert_eq!(next_ts, 10_000);
    assert_eq!(errors, 1);
    assert!(reader.next().is_none(), "the reader stays ended");
}

#[test]
fn skip_policy_writes_quoted_dead_letters_and_appends() {
    let path = temp_path("dead.csv");
    let text = b"event_time_ms,key,value\n1,a,1\n2,\"b,\"\"q\"\"\",oops\n3,c\n4,d,4\n";
    let mut policy =
        ErrorPolicy::new(OnError::Skip).with_dead_letter(DeadLetterWriter::create(&path).unwrap());
    let mut events = Vec::new();
    for item in reader(text, InputFormat::Csv) {
        match item {
            Ok(e) => events.push(e),
            Err(err) => policy.handle(err).unwrap(),
        }
    }
    assert_eq!(events, vec![ev(1, "a", 1.0), ev(4, "d", 4.0)]);
    assert_eq!(policy.skipped, 2);
    drop(policy);

    // A second writer appends without a second header.
    let mut again = DeadLetterWriter::create(&path).unwrap();
    let err = reader(b"event_time_ms,key,value\nx,y,z\n", InputFormat::Csv)
        .next()
        .unwrap()
        .unwrap_err();
    again.write(&err).unwrap();
    drop(again);

    let mut rdr = csv::Reader::from_path(&path).unwrap();
    assert_eq!(
        rdr.headers().unwrap(),
        vec!["source", "line", "field", "error", "raw"]
    );
    let rows: Vec<Vec<String>> = rdr
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    assert_eq!(
        rows,
        vec![
            vec![
                "t.csv",
                "3",
                "value",
                "\"oops\" is not a number",
                "2,\"b,\"\"q\"\"\",oops"
            ],
            vec![
                "t.csv",
                "4",
                "value",
                "missing: the line has 2 fields, not 3",
                "3,c"
            ],
            vec![
                "t.csv",
                "2",
                "event_time_ms",
                "\"x\" is not an integer number of milliseconds",
                "x,y,z"
            ],
        ]
    );
    let _ = std::fs::remove_file(&path);

    // Fail policy: the first bad record stops.
    let mut fail = ErrorPolicy::new(OnError::Fail);
    let err = reader(b"event_time_ms,key,value\n1,a\n", InputFormat::Csv)
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(fail.handle(err.clone()), Err(err));
    assert_eq!(fail.skipped, 0);
}

#[test]
fn policy_and_format_names_parse() {
    assert_eq!("skip".parse::<OnError>(), Ok(OnError::Skip));
    assert_eq!("FAIL".parse::<OnError>(), Ok(OnError::Fail));
    assert_eq!(
        "ignore".parse::<OnError>(),
        Err("unknown error policy \"ignore\" (expected fail or skip)".to_owned())
    );
    assert_eq!("csv".parse::<InputFormat>(), Ok(InputFormat::Csv));
    assert_eq!(InputFormat::from_path("x.jsonl.gz"), InputFormat::Jsonl);
    assert_eq!(InputSpec::parse("-"), InputSpec::Stdin);
    assert_eq!(InputSpec::Stdin.source_name(), "stdin");
}

/// Values written as integers are read exactly, beyond 2^53 too (an `f64` would read
/// `9007199254740993` as `9007199254740992`), in CSV, JSON numbers and JSON strings; other
/// values are floats.
#[test]
fn integer_values_are_read_exactly() {
    let csv = "event_time_ms,key,value\n1,a,9007199254740993\n2,a,-9223372036854775808\n3,a,2.5\n4,a,1e3\n";
    let json = concat!(
        "{\"event_time_ms\":1,\"key\":\"a\",\"value\":9007199254740993}\n",
        "{\"event_time_ms\":2,\"key\":\"a\",\"value\":\"-9223372036854775808\"}\n",
        "{\"event_time_ms\":3,\"key\":\"a\",\"value\":2.5}\n",
        "{\"event_time_ms\":4,\"key\":\"a\",\"value\":1e3}\n",
    );
    for (text, format) in [(csv, InputFormat::Csv), (json, InputFormat::Jsonl)] {
        let values: Vec<String> = read_all(text.as_bytes(), format)
            .into_iter()
            .map(|e| format!("{:?}", e.unwrap().value))
            .collect();
        assert_eq!(
            values,
            [
                "Int(9007199254740993)",
                "Int(-9223372036854775808)",
                "Float(2.5)",
                "Float(1000.0)"
            ],
            "{format}"
        );
    }
}

/// A zero-byte `.gz` file is an empty input, as an empty `.csv` is (a fresh-user trial: it
/// failed with "read error: unexpected end of file"); a `.gz` that is not gzip is still refused.
#[test]
fn a_zero_byte_gz_file_is_an_empty_input() {
    let path = temp_path("empty.csv.gz");
    std::fs::write(&path, b"").expect("written");
    let mut reader = open_source(
        &InputSpec::File(path.clone()),
        InputFormat::Csv,
        FieldNames::default(),
    )
    .expect("opens");
    assert!(reader.next().is_none(), "no record, no error");
    std::fs::write(&path, b"t,k,v\n").expect("written");
    let refused = open_source(
        &InputSpec::File(path.clone()),
        InputFormat::Csv,
        FieldNames::default(),
    );
    assert!(matches!(refused, Err(OpenError::NotGzip { .. })));
    let _ = std::fs::remove_file(&path);
}
