//! Issue 16, items 11-13: which fields a record's time, key and value come from. CSV without a
//! header (fields as column numbers), column numbers with a header, composite keys (several key
//! fields, keyed by the tuple), and jobs that read no key (`windowAll`) or need no value
//! (`count`).

use std::io::{BufReader, Cursor};

use window_io::{
    split_key_parts, CsvHeader, Event, EventReader, FieldNames, FieldUse, InputError,
    InputErrorKind, InputFormat, Number, ReadPosition,
};

fn names(time: &str, key: &str, value: &str) -> FieldNames {
    FieldNames {
        time: time.into(),
        key: key.into(),
        value: value.into(),
    }
}

fn reader(text: &str, format: InputFormat, fields: FieldNames) -> EventReader {
    EventReader::new(
        Cursor::new(text.as_bytes().to_vec()),
        "t.csv",
        format,
        fields,
    )
}

/// An event as (time, key parts, value), or an error's text.
type Read = Result<(i64, Vec<String>, f64), String>;

/// Each item of `r`.
fn read(r: EventReader) -> Vec<Read> {
    r.map(|item| {
        item.map(|e| {
            let parts = split_key_parts(&e.key)
                .into_iter()
                .map(|p| p.into_owned())
                .collect();
            (e.timestamp, parts, e.value.as_f64())
        })
        .map_err(|e| e.to_string())
    })
    .collect()
}

fn ok(t: i64, key: &[&str], v: f64) -> Read {
    Ok((t, key.iter().map(|k| (*k).to_owned()).collect(), v))
}

const COUNT: FieldUse = FieldUse {
    key: true,
    value: false,
};

const WINDOW_ALL: FieldUse = FieldUse {
    key: false,
    value: true,
};

#[test]
fn without_a_header_fields_are_column_numbers() {
    let text = "a,5,1000,x\nb,6,2000,y\nc,7\n\nd,8,4000,z\n";
    let r = reader(text, InputFormat::Csv, names("3", "1", "2")).with_csv_header(CsvHeader::Absent);
    assert_eq!(
        read(r),
        [
            ok(1000, &["a"], 5.0),
            ok(2000, &["b"], 6.0),
            // The time field (column 3) is the first one the short line lacks.
            Err("t.csv:3: field 'column 3': missing: the line has 2 fields, not 4".to_owned()),
            ok(4000, &["d"], 8.0),
        ]
    );
    // Names where numbers are needed: an error naming the field, which ends the input.
    let mut r = reader("1,a,2\n", InputFormat::Csv, FieldNames::default())
        .with_csv_header(CsvHeader::Absent);
    let err = r.next().unwrap().unwrap_err();
    assert_eq!(err.kind, InputErrorKind::Header);
    assert_eq!(err.field.as_deref(), Some("event_time_ms"));
    assert!(
        err.message.contains("column numbers counted from 1"),
        "{err}"
    );
    assert!(r.next().is_none());
    // A first line too short for the columns is a bad line; the next one sets the count.
    let r = reader("1,a\n2,b,3\n", InputFormat::Csv, names("1", "2", "3"))
        .with_csv_header(CsvHeader::Absent);
    assert_eq!(
        read(r),
        [
            Err("t.csv:1: field 'column 3': no such column: the line has 2 fields".to_owned()),
            ok(2, &["b"], 3.0),
        ]
    );
    // Bad fields are named by their column.
    let r = reader("x,a,1\n", InputFormat::Csv, names("1", "2", "3"))
        .with_csv_header(CsvHeader::Absent);
    let items = read(r);
    assert!(
        items[0]
            .as_ref()
            .unwrap_err()
            .starts_with("t.csv:1: field 'column 1': \"x\" is not"),
        "{items:?}"
    );
}

#[test]
fn with_a_header_a_number_is_a_name_first_then_a_position() {
    let text = "ts,k,v\n1000,a,5\n";
    let r = reader(text, InputFormat::Csv, names("1", "k", "3"));
    assert_eq!(read(r), [ok(1000, &["a"], 5.0)]);
    let r = reader(
        "ts,k,2\n1000,a,5\n",
        InputFormat::Csv,
        names("ts", "k", "2"),
    );
    assert_eq!(read(r), [ok(1000, &["a"], 5.0)], "the column named 2");
    let mut r = reader(text, InputFormat::Csv, names("ts", "k", "4"));
    let err = r.next().unwrap().unwrap_err();
    assert_eq!(err.kind, InputErrorKind::Header);
    assert_eq!(
        err.to_string(),
        "t.csv:1: field '4': no column 4: the CSV header has 3 (columns: \"ts\", \"k\", \"v\")"
    );
}

#[test]
fn a_socket_without_header_by_column_numbers() {
    // The time field as a number: a data line holding that number is not a header.
    let r = reader("1,a,2\n3,b,4\n", InputFormat::Csv, names("1", "2", "3"))
        .with_csv_header(CsvHeader::Detect);
    assert_eq!(read(r), [ok(1, &["a"], 2.0), ok(3, &["b"], 4.0)]);
    let r = reader("t,k,v\n3,b,4\n", InputFormat::Csv, names("1", "2", "3"))
        .with_csv_header(CsvHeader::Detect);
    assert_eq!(read(r), [ok(3, &["b"], 4.0)]);
    // Names, no header: time, the key fields, value in that order.
    let r = reader("1,a,b,2\n", InputFormat::Csv, names("t", "x,y", "v"))
        .with_csv_header(CsvHeader::Detect);
    assert_eq!(read(r), [ok(1, &["a", "b"], 2.0)]);
}

#[test]
fn a_composite_key_is_the_tuple_of_its_fields() {
    let text = "ts,a,b,v\n\
                1,x,y,1\n\
                2,\"x,y\",z,2\n\
                3,x,\"y,z\",3\n\
                4,\"q\"\"\",y,4\n\
                5,x,,5\n";
    let r = reader(text, InputFormat::Csv, names("ts", "a, b", "v"));
    let items = read(r);
    assert_eq!(
        items,
        [
            ok(1, &["x", "y"], 1.0),
            ok(2, &["x,y", "z"], 2.0),
            ok(3, &["x", "y,z"], 3.0),
            ok(4, &["q\"", "y"], 4.0),
            Err("t.csv:6: field 'b': missing (empty)".to_owned()),
        ]
    );
    // ("x,y", "z") and ("x", "y,z") are two keys: their texts differ.
    let keys: Vec<String> = reader(text, InputFormat::Csv, names("ts", "a,b", "v"))
        .filter_map(Result::ok)
        .map(|e| e.key)
        .collect();
    assert_ne!(keys[1], keys[2]);
    // A plain line (the fast path) and a quoted one (the csv crate) make the same text.
    let quoted = reader(
        "ts,a,b,v\n1,x,y,1\n2,\"x\",y,1\n",
        InputFormat::Csv,
        names("ts", "a,b", "v"),
    );
    let keys: Vec<String> = quoted.map(|e| e.unwrap().key).collect();
    assert_eq!(keys[0], keys[1]);
    // Without a header, by column numbers; a missing key column is named.
    let r = reader("1,x,y,2\n", InputFormat::Csv, names("1", "3,2", "4"))
        .with_csv_header(CsvHeader::Absent);
    assert_eq!(read(r), [ok(1, &["y", "x"], 2.0)]);
    let mut r = reader("ts,a,v\n1,x,2\n", InputFormat::Csv, names("ts", "a,b", "v"));
    let err = r.next().unwrap().unwrap_err();
    assert_eq!(
        (err.kind, err.field.as_deref()),
        (InputErrorKind::Header, Some("b"))
    );
}

#[test]
fn a_composite_json_key_names_a_missing_member() {
    let text = "{\"t\": 1, \"a\": \"x\", \"b\": 7, \"v\": 1}\n\
                {\"t\": 2, \"a\": \"x\", \"v\": 1}\n\
                {\"t\": 3, \"a\": \"x\", \"b\": null, \"v\": 1}\n\
                {\"t\": 4, \"a\": \"x\", \"b\": \"\", \"v\": 1}\n\
                {\"t\": 5, \"a,b\": \"whole\", \"a\": \"p\", \"b\": \"q\", \"v\": 1}\n";
    let r = reader(text, InputFormat::Jsonl, names("t", "a,b", "v"));
    assert_eq!(
        read(r),
        [
            ok(1, &["x", "7"], 1.0),
            Err("t.csv:2: field 'b': missing".to_owned()),
            Err("t.csv:3: field 'b': missing (null)".to_owned()),
            Err("t.csv:4: field 'b': missing (empty)".to_owned()),
            ok(5, &["p", "q"], 1.0),
        ]
    );
}

#[test]
fn a_count_needs_no_value_column() {
    // No value column at all.
    let r = reader("ts,k\n1,a\n2,b\n", InputFormat::Csv, names("ts", "k", "v")).reading(COUNT);
    let events: Vec<Event> = r.map(Result::unwrap).collect();
    assert_eq!(events.len(), 2);
    assert!(events.iter().all(|e| e.value.is_nan()));
    assert_eq!((events[1].timestamp, events[1].key.as_str()), (2, "b"));
    // A value column: read where there is a value, still checked where there is one.
    let r = reader(
        "ts,k,v\n1,a,3\n2,b,\n3,c,x\n",
        InputFormat::Csv,
        names("ts", "k", "v"),
    )
    .reading(COUNT);
    let items = read(r);
    assert_eq!(items[0], ok(1, &["a"], 3.0));
    assert!(matches!(&items[1], Ok((2, _, v)) if v.is_nan()));
    assert_eq!(
        items[2],
        Err("t.csv:4: field 'v': \"x\" is not a number".to_owned())
    );
    // Required (the default): the value column must be there.
    let err = reader("ts,k\n1,a\n", InputFormat::Csv, names("ts", "k", "v"))
        .next()
        .unwrap()
        .unwrap_err();
    assert_eq!(
        (err.kind, err.field.as_deref()),
        (InputErrorKind::Header, Some("v"))
    );
    // JSON lines: no member, or null.
    let text = "{\"t\": 1, \"k\": \"a\"}\n{\"t\": 2, \"k\": \"b\", \"v\": null}\n{\"t\": 3, \"k\": \"c\", \"v\": 4}\n";
    let items = read(reader(text, InputFormat::Jsonl, names("t", "k", "v")).reading(COUNT));
    assert!(
        matches!(&items[0], Ok((1, _, v)) if v.is_nan()),
        "{items:?}"
    );
    assert!(
        matches!(&items[1], Ok((2, _, v)) if v.is_nan()),
        "{items:?}"
    );
    assert_eq!(items[2], ok(3, &["c"], 4.0));
    let items = read(reader(text, InputFormat::Jsonl, names("t", "k", "v")));
    assert_eq!(items[0], Err("t.csv:1: field 'v': missing".to_owned()));
    // Headerless: a value column beyond the first record is not read.
    let r = reader("1,a\n2,b\n", InputFormat::Csv, names("1", "2", "3"))
        .with_csv_header(CsvHeader::Absent)
        .reading(COUNT);
    assert_eq!(r.filter(|e| e.as_ref().unwrap().value.is_nan()).count(), 2);
}

#[test]
fn window_all_reads_no_key() {
    let r = reader(
        "ts,value\n1,2\n",
        InputFormat::Csv,
        FieldNames::default().with_time("ts"),
    )
    .reading(WINDOW_ALL);
    let events: Vec<Event> = r.map(Result::unwrap).collect();
    assert_eq!(
        (
            events[0].timestamp,
            events[0].key.as_str(),
            events[0].value.as_f64()
        ),
        (1, "", 2.0)
    );
    // A key column is not looked at: an empty one is no error.
    let r = reader(
        "event_time_ms,key,value\n1,,2\n",
        InputFormat::Csv,
        FieldNames::default(),
    )
    .reading(WINDOW_ALL);
    assert_eq!(read(r), [ok(1, &[""], 2.0)]);
    let text = "{\"event_time_ms\": 1, \"value\": 2}\n{\"event_time_ms\": 2, \"key\": \"k\", \"value\": 3}\n{\"event_time_ms\": 3, \"key\": true, \"value\": 4}\n";
    let r = reader(text, InputFormat::Jsonl, FieldNames::default()).reading(WINDOW_ALL);
    assert_eq!(
        read(r),
        [ok(1, &[""], 2.0), ok(2, &[""], 3.0), ok(3, &[""], 4.0)]
    );
    // Required (the default): the key column must be there.
    let err = reader(
        "ts,v\n1,2\n",
        InputFormat::Csv,
        FieldNames::default().with_time("ts"),
    )
    .next()
    .unwrap()
    .unwrap_err();
    assert_eq!(err.field.as_deref(), Some("key"));
}

trait WithTime {
    fn with_time(self, time: &str) -> Self;
}

impl WithTime for FieldNames {
    fn with_time(mut self, time: &str) -> Self {
        self.time = time.to_owned();
        self
    }
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

/// A job resumed from a checkpoint over a headerless input with a composite key: the reader
/// moved to any position of an earlier one hands out what that one handed out after it (the
/// columns of a headerless input are found at its first record, also when moving past it).
#[test]
fn a_headerless_input_resumes_where_it_was() {
    let mut seed = 0x0bad_cafe_1234_5679_u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..200 {
        let mut text = String::new();
        for i in 0..(next() % 30) {
            let r = next();
            match r % 6 {
                0 => text.push('\n'),
                1 => text.push_str(&format!("{i},short\n")),
                2 => text.push_str(&format!("x{i},k,j,1\n")),
                _ => text.push_str(&format!(
                    "{},k{},\"j,{}\",{}\n",
                    i * 10,
                    r % 3,
                    r % 2,
                    r % 50
                )),
            }
        }
        let open = |buffer: usize| {
            let input = BufReader::with_capacity(buffer, Cursor::new(text.clone().into_bytes()));
            EventReader::new(input, "in.csv", InputFormat::Csv, names("1", "2,3", "4"))
                .with_csv_header(CsvHeader::Absent)
        };
        let all = drain(&mut open(7 + round % 30));
        let starts = std::iter::once(ReadPosition::default()).chain(all.iter().map(|(_, p)| *p));
        for (k, position) in starts.enumerate() {
            let mut resumed = open(64);
            resumed
                .skip_to(position)
                .unwrap_or_else(|e| panic!("round {round}, {position:?}: {e}\n{text:?}"));
            assert_eq!(
                drain(&mut resumed),
                all[k..].to_vec(),
                "round {round}\n{text:?}"
            );
        }
    }
}

/// A composite key's results and late rows have one column per key field, named by it, in CSV
/// and JSON; a tuple whose fields hold commas and quotes is written back as its fields; a late
/// element without a value has an empty value.
#[test]
fn a_composite_key_is_written_as_one_column_per_field() {
    use window_io::{
        join_key_parts, KeyDictionary, KeyTexts, LateWriter, OutputFormat, ResultWriter,
    };
    let dictionary = KeyDictionary::shared();
    let ab = dictionary.intern(&join_key_parts(&["x,y", "z"]));
    let quoted = dictionary.intern(&join_key_parts(&["q\"", "w"]));
    let columns = ["carrier".to_owned(), "dest".to_owned()];
    let mut texts = KeyTexts::new(dictionary.clone());
    let mut csv = ResultWriter::new(Vec::new(), OutputFormat::Csv).with_key_columns(&columns);
    let mut json = ResultWriter::new(Vec::new(), OutputFormat::Jsonl).with_key_columns(&columns);
    for w in [&mut csv, &mut json] {
        w.write_interned(&mut texts, ab, Some((0, 10)), Some(2.0), false)
            .unwrap();
        w.write_interned(&mut texts, quoted, Some((0, 10)), Some(1.0), false)
            .unwrap();
        w.write_interned(&mut texts, ab, Some((10, 20)), Some(3.0), false)
            .unwrap();
    }
    let csv_text = String::from_utf8(csv.into_inner().unwrap()).unwrap();
    assert_eq!(
        csv_text,
        "carrier,dest,window_start,window_end,result\n\
         \"x,y\",z,0,10,2\n\
         \"q\"\"\",w,0,10,1\n\
         \"x,y\",z,10,20,3\n"
    );
    // The CSV reads back into the same fields.
    let rows: Vec<Vec<String>> = csv::Reader::from_reader(csv_text.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    assert_eq!(rows[0], ["x,y", "z", "0", "10", "2"]);
    assert_eq!(rows[1], ["q\"", "w", "0", "10", "1"]);
    assert_eq!(
        String::from_utf8(json.into_inner().unwrap()).unwrap(),
        "{\"carrier\":\"x,y\",\"dest\":\"z\",\"window_start\":0,\"window_end\":10,\"result\":2}\n\
         {\"carrier\":\"q\\\"\",\"dest\":\"w\",\"window_start\":0,\"window_end\":10,\"result\":1}\n\
         {\"carrier\":\"x,y\",\"dest\":\"z\",\"window_start\":10,\"window_end\":20,\"result\":3}\n"
    );
    let mut late = LateWriter::new(Vec::new(), OutputFormat::Csv).with_key_columns(&columns);
    let text = join_key_parts(&["x,y", "z"]);
    late.write_late_parts(5, &text, Number::Float(1.5), 20)
        .unwrap();
    late.write_late_parts(6, &text, Number::Float(f64::NAN), 20)
        .unwrap();
    assert_eq!(
        String::from_utf8(late.into_inner().unwrap()).unwrap(),
        "event_time_ms,carrier,dest,value,watermark\n5,\"x,y\",z,1.5,20\n6,\"x,y\",z,,20\n"
    );
    let mut late = LateWriter::new(Vec::new(), OutputFormat::Jsonl).with_key_columns(&columns);
    late.write_late_parts(6, &text, Number::Float(f64::NAN), 20)
        .unwrap();
    assert_eq!(
        String::from_utf8(late.into_inner().unwrap()).unwrap(),
        "{\"event_time_ms\":6,\"carrier\":\"x,y\",\"dest\":\"z\",\"value\":null,\"watermark\":20}\n"
    );
    // One key field: the `key` column, as before.
    let mut one = ResultWriter::new(Vec::new(), OutputFormat::Csv).with_key_columns(&columns[..1]);
    one.write_interned(&mut texts, ab, None, None, false)
        .unwrap();
    let out = String::from_utf8(one.into_inner().unwrap()).unwrap();
    assert!(
        out.starts_with("key,window_start,window_end,result\n"),
        "{out}"
    );
}

/// A line with too few fields names the first field of the job it lacks (by column: a
/// composite key's second field before the value); one that lacks only fields the job does not
/// read says how many it has; one with too many says how a field holds the delimiter.
#[test]
fn a_line_with_the_wrong_field_count_names_what_it_lacks() {
    let text = "ts,v,a,b,note\n\
                1,5,x,y,n\n\
                2,6,x\n\
                3,7\n\
                4,8,x,y\n\
                5,9,x,y,n,m\n";
    let r = reader(text, InputFormat::Csv, names("ts", "a,b", "v"));
    assert_eq!(
        read(r),
        [
            ok(1, &["x", "y"], 5.0),
            Err("t.csv:3: field 'b': missing: the line has 3 fields, not 5".to_owned()),
            Err("t.csv:4: field 'a': missing: the line has 2 fields, not 5".to_owned()),
            Err("t.csv:5: expected 5 fields, found 4".to_owned()),
            Err(
                "t.csv:6: expected 5 fields, found 6; a field that holds ',' must be in double \
                 quotes"
                    .to_owned()
            ),
        ]
    );
    // Another delimiter is the one the hint names.
    let r = reader("ts;k;v\n1;a;2;3\n", InputFormat::Csv, names("ts", "k", "v"))
        .with_delimiter(";".parse().unwrap());
    assert_eq!(
        read(r),
        [Err(
            "t.csv:2: expected 3 fields, found 4; a field that holds ';' must be in double quotes"
                .to_owned()
        )]
    );
}
