//! Black-box tests of the result and late-element writers
//! (`window_io::sink`): exact CSV and JSON-lines bytes, quoting, number
//! formatting and file output.

use window_io::sink::{
    create_output, format_number, LateWriter, OutputFormat, ResultRecord, ResultWriter,
};
use window_io::source::{Event, Number};

fn results(format: OutputFormat, records: &[ResultRecord<'_>]) -> String {
    let mut writer = ResultWriter::new(Vec::new(), format);
    for r in records {
        writer.write_result(r).unwrap();
    }
    assert_eq!(writer.records_written(), records.len() as u64);
    String::from_utf8(writer.into_inner().unwrap()).unwrap()
}

fn sample() -> Vec<ResultRecord<'static>> {
    vec![
        ResultRecord {
            key: "N14228",
            window_start: Some(1_357_034_400_000),
            window_end: Some(1_357_038_000_000),
            result: Some(6.0),
        },
        ResultRecord {
            key: "a,\"b\"",
            window_start: Some(-1000),
            window_end: Some(0),
            result: Some(2.5),
        },
        ResultRecord {
            key: "global",
            window_start: None,
            window_end: None,
            result: None,
        },
        ResultRecord {
            key: "ünï\ncode",
            window_start: Some(0),
            window_end: Some(10),
            result: Some(-0.1),
        },
    ]
}

#[test]
fn csv_results_exact_bytes() {
    assert_eq!(
        results(OutputFormat::Csv, &sample()),
        "key,window_start,window_end,result\n\
N14228,1357034400000,1357038000000,6\n\
\"a,\"\"b\"\"\",-1000,0,2.5\n\
global,,,\n\
\"ünï\ncode\",0,10,-0.1\n"
    );
}

#[test]
fn csv_results_read_back_with_the_csv_crate() {
    let text = results(OutputFormat::Csv, &sample());
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let keys: Vec<String> = rdr.records().map(|r| r.unwrap()[0].to_owned()).collect();
    assert_eq!(keys, vec!["N14228", "a,\"b\"", "global", "ünï\ncode"]);
}

#[test]
fn jsonl_results_exact_bytes() {
    assert_eq!(
        results(OutputFormat::Jsonl, &sample()),
        "{\"key\":\"N14228\",\"window_start\":1357034400000,\"window_end\":1357038000000,\"result\":6}\n\
{\"key\":\"a,\\\"b\\\"\",\"window_start\":-1000,\"window_end\":0,\"result\":2.5}\n\
{\"key\":\"global\",\"window_start\":null,\"window_end\":null,\"result\":null}\n\
{\"key\":\"ünï\\ncode\",\"window_start\":0,\"window_end\":10,\"result\":-0.1}\n"
    );
    // Every line is a JSON object with exactly the four fields.
    for line in results(OutputFormat::Jsonl, &sample()).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 4);
    }
}

#[test]
fn empty_output_has_a_csv_header_and_no_json() {
    assert_eq!(
        results(OutputFormat::Csv, &[]),
        "key,window_start,window_end,result\n"
    );
    assert_eq!(results(OutputFormat::Jsonl, &[]), "");
    let mut writer = ResultWriter::new(Vec::new(), OutputFormat::Csv);
    writer.flush().unwrap();
    writer.flush().unwrap();
    assert_eq!(
        String::from_utf8(writer.into_inner().unwrap()).unwrap(),
        "key,window_start,window_end,result\n"
    );
}

#[test]
fn late_elements_csv_and_jsonl() {
    let events = [
        Event {
            timestamp: 1_357_035_300_000,
            key: "N14228".into(),
            value: Number::Float(2.0),
            line: 2,
        },
        Event {
            timestamp: -5,
            key: "x,y".into(),
            value: Number::Float(4.25),
            line: 3,
        },
    ];
    let mut csv_out = LateWriter::new(Vec::new(), OutputFormat::Csv);
    let mut json_out = LateWriter::new(Vec::new(), OutputFormat::Jsonl);
    for (e, wm) in events.iter().zip([1_357_035_999_999, i64::MIN]) {
        csv_out.write_late(e, wm).unwrap();
        json_out.write_late(e, wm).unwrap();
    }
    assert_eq!(csv_out.records_written(), 2);
    assert_eq!(
        String::from_utf8(csv_out.into_inner().unwrap()).unwrap(),
        "event_time_ms,key,value,watermark\n\
1357035300000,N14228,2,1357035999999\n\
-5,\"x,y\",4.25,-9223372036854775808\n"
    );
    assert_eq!(
        String::from_utf8(json_out.into_inner().unwrap()).unwrap(),
        "{\"event_time_ms\":1357035300000,\"key\":\"N14228\",\"value\":2,\"watermark\":1357035999999}\n\
{\"event_time_ms\":-5,\"key\":\"x,y\",\"value\":4.25,\"watermark\":-9223372036854775808}\n"
    );
}

#[test]
fn number_formatting_table() {
    let cases: [(f64, &str); 14] = [
        (6.0, "6"),
        (-6.0, "-6"),
        (0.0, "0"),
        (-0.0, "0"),
        (2.5, "2.5"),
        (1.0 / 3.0, "0.3333333333333333"),
        (1e-7, "1e-7"),
        (1e300, "1e300"),
        (1_357_035_300_000.0, "1357035300000"),
        (9_007_199_254_740_991.0, "9007199254740991"),
        (-9_007_199_254_740_991.0, "-9007199254740991"),
        (1e16, "1e16"),
        (123_456.789, "123456.789"),
        (f64::NAN, "NaN"),
    ];
    for (v, expected) in cases {
        assert_eq!(format_number(v), expected, "{v:?}");
        // Output round-trips.
        if v.is_finite() {
            assert_eq!(expected.parse::<f64>().unwrap(), v + 0.0);
        }
    }
}

#[test]
fn output_formats_parse() {
    assert_eq!("jsonl".parse::<OutputFormat>(), Ok(OutputFormat::Jsonl));
    assert_eq!(
        "tsv".parse::<OutputFormat>(),
        Err("unknown output format \"tsv\" (expected csv or jsonl)".to_owned())
    );
    assert_eq!(OutputFormat::from_path("out.ndjson"), OutputFormat::Jsonl);
    assert_eq!(OutputFormat::from_path("out.csv"), OutputFormat::Csv);
}

#[test]
fn file_output_and_create_errors() {
    let dir = std::env::temp_dir().join(format!("engine-io-sink-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("results.csv");
    let mut writer = ResultWriter::new(
        create_output(path.to_str().unwrap()).unwrap(),
        OutputFormat::Csv,
    );
    writer.write_result(&sample()[0]).unwrap();
    writer.flush().unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "key,window_start,window_end,result\nN14228,1357034400000,1357038000000,6\n"
    );
    let bad = dir.join("no-such-dir").join("x.csv");
    let Err(err) = create_output(bad.to_str().unwrap()) else {
        panic!("created a file in a missing directory");
    };
    assert!(
        err.to_string().starts_with(&format!(
            "cannot create output file {:?}: ",
            bad.to_str().unwrap()
        )),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Rows of interned keys (`write_interned`, whose CSV rows reuse the window's text from the row
/// before, and `write_interned_number`, which copies the key's and the window's text as fixed
/// blocks) are byte for byte the rows of the plain path (`write_key_window_result`), in both
/// formats, with and without the `empty` column, over random keys (quotes, commas, newlines,
/// lengths about the 32-byte block, quoted or not), windows (repeated, changing, none, at the
/// ends of `i64`) and results (none, integers, fractions, huge, tiny, -0).
#[test]
fn interned_rows_match_plain_rows() {
    use window_io::{KeyDictionary, KeyTexts};
    let (k31, k32, k33, k70) = (
        "k".repeat(31),
        "k".repeat(32),
        "k".repeat(33),
        "k".repeat(70),
    );
    // 30 bytes that quoting makes 32 (two quotes added) and 33 (a quote doubled too).
    let (q30, q31) = (
        format!("{},", "q".repeat(29)),
        format!("{}\"", "q".repeat(30)),
    );
    let keys = [
        "a", "N14228", "a,\"b\"", "", "x\ny", "ünï", &k31, &k32, &k33, &k70, &q30, &q31,
    ];
    let values = [
        None,
        Some(0.0),
        Some(-0.0),
        Some(6.0),
        Some(-2.5),
        Some(1e300),
        Some(3e-9),
        Some(765_806_926_036_679.3),
        Some(9_007_199_254_740_993.0),
    ];
    let mut seed = 0xDEAD_BEEF_u64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        usize::try_from(seed % n as u64).unwrap_or(0)
    };
    for format in [OutputFormat::Csv, OutputFormat::Jsonl] {
        for empty_column in [false, true] {
            let dictionary = KeyDictionary::shared();
            let mut texts = KeyTexts::new(dictionary.clone());
            let make = |w: Vec<u8>| {
                if empty_column {
                    ResultWriter::with_empty_column(w, format)
                } else {
                    ResultWriter::new(w, format)
                }
            };
            let (mut plain, mut interned) = (make(Vec::new()), make(Vec::new()));
            let mut window = Some((0_i64, 10_i64));
            for _ in 0..2_000 {
                window = match next(6) {
                    0 => None,
                    1 => Some((next(50) as i64 - 25, next(50) as i64 + 30)),
                    2 => Some((i64::MIN, i64::MAX)),
                    _ => window,
                };
                let key = keys[next(keys.len())];
                let result = values[next(values.len())];
                let empty = next(2) == 0;
                let record = ResultRecord {
                    key,
                    window_start: window.map(|w| w.0),
                    window_end: window.map(|w| w.1),
                    result,
                };
                plain.write_key_window_result(&record, empty).unwrap();
                let id = dictionary.intern(key);
                match result {
                    Some(v) if !empty && next(2) == 0 => interned
                        .write_interned_number(&mut texts, id, window, v)
                        .unwrap(),
                    _ => interned
                        .write_interned(&mut texts, id, window, result, empty)
                        .unwrap(),
                }
            }
            assert_eq!(plain.records_written(), interned.records_written());
            let (a, b) = (plain.into_inner().unwrap(), interned.into_inner().unwrap());
            assert_eq!(
                String::from_utf8(a).unwrap(),
                String::from_utf8(b).unwrap(),
                "{format:?}, empty column {empty_column}"
            );
        }
    }
}

/// Exact bytes of interned rows (not only the same bytes as the plain path): the CSV fast path
/// with a repeated window, a changed one, none, a quoted key, an empty result and the `empty`
/// column; the JSON-lines path with the same rows.
#[test]
fn interned_rows_exact_bytes() {
    use window_io::{KeyDictionary, KeyTexts};
    let dictionary = KeyDictionary::shared();
    let (a, quoted) = (dictionary.intern("a"), dictionary.intern("a,\"b\""));
    let rows = |format| {
        let mut texts = KeyTexts::new(dictionary.clone());
        let mut w = ResultWriter::with_empty_column(Vec::new(), format);
        w.write_interned(&mut texts, a, Some((0, 10)), Some(6.0), false)
            .unwrap();
        w.write_interned(&mut texts, quoted, Some((0, 10)), Some(-2.5), false)
            .unwrap();
        w.write_interned(&mut texts, a, Some((-5, 5)), None, true)
            .unwrap();
        w.write_interned(&mut texts, quoted, None, Some(1e300), false)
            .unwrap();
        String::from_utf8(w.into_inner().unwrap()).unwrap()
    };
    assert_eq!(
        rows(OutputFormat::Csv),
        "key,window_start,window_end,result,empty\n\
         a,0,10,6,false\n\
         \"a,\"\"b\"\"\",0,10,-2.5,false\n\
         a,-5,5,,true\n\
         \"a,\"\"b\"\"\",,,1e300,false\n"
    );
    assert_eq!(
        rows(OutputFormat::Jsonl),
        "{\"key\":\"a\",\"window_start\":0,\"window_end\":10,\"result\":6,\"empty\":false}\n\
         {\"key\":\"a,\\\"b\\\"\",\"window_start\":0,\"window_end\":10,\"result\":-2.5,\"empty\":false}\n\
         {\"key\":\"a\",\"window_start\":-5,\"window_end\":5,\"result\":null,\"empty\":true}\n\
         {\"key\":\"a,\\\"b\\\"\",\"window_start\":null,\"window_end\":null,\"result\":1e300,\"empty\":false}\n"
    );
}
