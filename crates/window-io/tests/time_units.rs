//! Issue 16, item 12: timestamps in seconds, microseconds and nanoseconds
//! (`EventReader::with_time_unit`), RFC 3339 text, other CSV delimiters
//! (`EventReader::with_delimiter`), gzip recognised by its magic number whatever the file's
//! name, and the range of event times a reader shares for the summary's hint.

use std::io::{Cursor, Write};
use std::path::PathBuf;

use window_io::source::{
    open_source, Event, EventReader, FieldNames, InputErrorKind, InputFormat, InputSpec,
};
use window_io::{Delimiter, EventTimes, InputError, TimeUnit};

fn reader(text: &str, format: InputFormat) -> EventReader {
    EventReader::new(
        Cursor::new(text.as_bytes().to_vec()),
        "t.csv",
        format,
        FieldNames::default(),
    )
}

/// Each record as `(timestamp, key)` or the error's text.
fn read(reader: EventReader) -> Vec<Result<(i64, String), String>> {
    reader
        .map(|r: Result<Event, InputError>| {
            r.map(|e| (e.timestamp, e.key)).map_err(|e| e.to_string())
        })
        .collect()
}

fn ok(t: i64, key: &str) -> Result<(i64, String), String> {
    Ok((t, key.to_owned()))
}

#[test]
fn seconds_with_and_without_fractions_are_milliseconds() {
    let text = "event_time_ms,key,value\n\
                1357016400,a,1\n\
                1357016400.5,b,1\n\
                1357016400.123456,c,1\n\
                -0.0005,d,1\n\
                9300000000000000,e,1\n\
                1.3e9,f,1\n\
                2013-01-01T05:15:00Z,g,1\n";
    let got = read(reader(text, InputFormat::Csv).with_time_unit(TimeUnit::Seconds));
    assert_eq!(
        got,
        vec![
            ok(1_357_016_400_000, "a"),
            ok(1_357_016_400_500, "b"),
            ok(1_357_016_400_123, "c"),
            ok(-1, "d"),
            Err(
                "t.csv:6: field 'event_time_ms': \"9300000000000000\" seconds is out of range \
                 for a 64-bit millisecond timestamp"
                    .to_owned()
            ),
            Err(
                "t.csv:7: field 'event_time_ms': \"1.3e9\" is not a number of seconds (an \
                 integer, or a decimal fraction as 1357016400.5)"
                    .to_owned()
            ),
            ok(1_357_017_300_000, "g"),
        ]
    );
}

#[test]
fn microseconds_and_nanoseconds_are_floored_to_milliseconds() {
    let text = "event_time_ms,key,value\n1357016400123456,a,1\n-1,b,1\n1.5,c,1\n";
    assert_eq!(
        read(reader(text, InputFormat::Csv).with_time_unit(TimeUnit::Micros)),
        vec![
            ok(1_357_016_400_123, "a"),
            ok(-1, "b"),
            Err(
                "t.csv:4: field 'event_time_ms': \"1.5\" is not an integer number of microseconds"
                    .to_owned()
            ),
        ]
    );
    let text = "event_time_ms,key,value\n1357016400123456789,a,1\n-1000001,b,1\n";
    assert_eq!(
        read(reader(text, InputFormat::Csv).with_time_unit(TimeUnit::Nanos)),
        vec![ok(1_357_016_400_123, "a"), ok(-2, "b")]
    );
}

#[test]
fn json_lines_take_units_and_date_times_too() {
    let text = concat!(
        r#"{"event_time_ms": 1357016400.25, "key": "a", "value": 1}"#,
        "\n",
        r#"{"event_time_ms": "1357016400", "key": "b", "value": 1}"#,
        "\n",
        r#"{"event_time_ms": "2013-01-01T06:15:00.5+01:00", "key": "c", "value": 1}"#,
        "\n",
        r#"{"event_time_ms": 1e30, "key": "d", "value": 1}"#,
        "\n",
        r#"{"event_time_ms": true, "key": "e", "value": 1}"#,
        "\n",
    );
    assert_eq!(
        read(reader(text, InputFormat::Jsonl).with_time_unit(TimeUnit::Seconds)),
        vec![
            ok(1_357_016_400_250, "a"),
            ok(1_357_016_400_000, "b"),
            ok(1_357_017_300_500, "c"),
            Err(
                // As the line writes it (was serde_json's `1e+30`).
                "t.csv:4: field 'event_time_ms': 1e30 seconds is out of range for a 64-bit \
                 millisecond timestamp"
                    .to_owned()
            ),
            Err(
                "t.csv:5: field 'event_time_ms': true is not a number of seconds (an \
                 integer, or a decimal fraction as 1357016400.5)"
                    .to_owned()
            ),
        ]
    );
}

/// With the default unit, a time field that is not a number but an RFC 3339 date-time is
/// read as one; a bad one is an error naming line, field and what is wrong.
#[test]
fn rfc3339_text_is_read_in_the_default_unit() {
    let text = "event_time_ms,key,value\n\
                2013-01-01T00:00:00Z,a,1\n\
                2013-01-01 05:15:00.250-02:00,b,1\n\
                1356998400000,c,1\n\
                2013-01-01T05:15:00,d,1\n\
                2013-02-30T00:00:00Z,e,1\n";
    let got = read(reader(text, InputFormat::Csv));
    assert_eq!(
        got[..3],
        [
            ok(1_356_998_400_000, "a"),
            ok(1_357_024_500_250, "b"),
            ok(1_356_998_400_000, "c"),
        ]
    );
    let errors: Vec<&str> = got[3..]
        .iter()
        .map(|r| r.as_ref().unwrap_err().as_str())
        .collect();
    assert!(errors[0].starts_with(
        "t.csv:5: field 'event_time_ms': \"2013-01-01T05:15:00\" is not an RFC 3339 date-time: \
         no UTC offset (add Z for UTC"
    ), "{}", errors[0]);
    assert_eq!(
        errors[1],
        "t.csv:6: field 'event_time_ms': \"2013-02-30T00:00:00Z\" is not an RFC 3339 \
         date-time: invalid date, expected day between 01 and 28"
    );
    let kinds: Vec<InputErrorKind> = reader(text, InputFormat::Csv)
        .filter_map(Result::err)
        .map(|e| e.kind)
        .collect();
    assert_eq!(kinds, [InputErrorKind::InvalidTimestamp; 2]);
}

#[test]
fn semicolons_and_tabs_separate_fields() {
    let text = "event_time_ms;key;value\n1;a;1.5\n2;\"b;c\";2\n3;d,e;3\n";
    let got = read(reader(text, InputFormat::Csv).with_delimiter(";".parse().unwrap()));
    assert_eq!(got, vec![ok(1, "a"), ok(2, "b;c"), ok(3, "d,e")]);
    // Tabs; a line of tabs only is a record of empty fields (an error), not a blank line.
    let text = "event_time_ms\tkey\tvalue\n1\ta\t1\n\t\t\n   \n2\tb,c\t2\n";
    let got = read(reader(text, InputFormat::Csv).with_delimiter("tab".parse().unwrap()));
    assert_eq!(
        got,
        vec![
            ok(1, "a"),
            Err("t.csv:3: field 'event_time_ms': missing (empty)".to_owned()),
            ok(2, "b,c"),
        ]
    );
    // A comma file read with another delimiter: the header names one column.
    let text = "event_time_ms,key,value\n1,a,1\n";
    let err = reader(text, InputFormat::Csv)
        .with_delimiter(";".parse::<Delimiter>().unwrap())
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(err.kind, InputErrorKind::Header);
    assert!(
        err.to_string().contains("\"event_time_ms,key,value\""),
        "{err}"
    );
}

fn temp_path(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("window-io-time-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// A gzip file whose name does not say so is decompressed, as a `.gz` one (it was read as
/// text, a bad line of binary).
#[test]
fn gzip_is_recognised_by_its_magic_number() {
    let text = "event_time_ms,key,value\n1,a,1\n2,b,2\n";
    let path = temp_path("events.csv");
    std::fs::write(&path, gzip(text.as_bytes())).unwrap();
    let reader = open_source(
        &InputSpec::File(path.clone()),
        InputFormat::Csv,
        FieldNames::default(),
    )
    .unwrap();
    assert_eq!(
        reader.total_bytes(),
        Some(std::fs::metadata(&path).unwrap().len())
    );
    assert_eq!(read(reader), vec![ok(1, "a"), ok(2, "b")]);
    // Plain text of one byte, and an empty file, are text.
    std::fs::write(&path, "x").unwrap();
    let reader = open_source(
        &InputSpec::File(path.clone()),
        InputFormat::Csv,
        FieldNames::default(),
    );
    assert_eq!(read(reader.unwrap()).len(), 1);
    std::fs::write(&path, "").unwrap();
    let reader = open_source(
        &InputSpec::File(path.clone()),
        InputFormat::Csv,
        FieldNames::default(),
    );
    assert!(read(reader.unwrap()).is_empty());
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn the_reader_shares_the_range_of_its_event_times() {
    let text = "event_time_ms,key,value\n1357016400,a,1\nx,b,1\n1357000000,c,1\n1357020000,d,1\n";
    let mut reader = reader(text, InputFormat::Csv);
    let times = reader.event_times();
    assert_eq!(times.range(), None);
    reader.next();
    assert_eq!(times.range(), Some((1_357_016_400, 1_357_016_400)));
    reader.by_ref().for_each(drop);
    assert_eq!(times.range(), Some((1_357_000_000, 1_357_020_000)));
    let hint = EventTimes::unit_hint(&[times], TimeUnit::Millis).unwrap();
    assert!(hint.contains("--time-unit s"), "{hint}");
}
