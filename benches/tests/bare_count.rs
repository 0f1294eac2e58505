//! The bare parse-and-count program of the end-to-end table counts right: the real binary on
//! tiny files of three keys (one quoted with a comma, one longer than the inline key), as CSV,
//! gzipped CSV and JSON lines, and a bad number fails naming its line.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A key kept on the heap, not inline.
const LONG: &str = "a key longer than twenty-two bytes";
/// Key `a`: 3 events (sum 4.75), `b,c`: 1 (sum -2), [`LONG`]: 2 (sum 1000.5).
const EXPECTED: &str = "keys 3 events 6 value_sum 1003.25";

/// A fresh folder for one test.
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("bare_count_{test}_{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn bare(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bare_count"))
        .args(args)
        .arg(file)
        .output()
        .expect("bare_count runs")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn csv() -> String {
    format!(
        "value,key,event_time_ms\n1.5,a,1000\n-2,\"b,c\",1001\n2.25,a,1002\n1e3,{LONG},1003\n\
         1,a,1004\n0.5,{LONG},1005\n"
    )
}

#[test]
fn csv_gzip_and_json_lines_count_alike() {
    let d = dir("alike");
    let plain = d.join("tiny.csv");
    std::fs::write(&plain, csv()).unwrap();
    let gz = d.join("tiny.csv.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(csv().as_bytes()).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let jsonl = d.join("tiny.jsonl");
    let lines: Vec<String> = csv()
        .lines()
        .skip(1)
        .map(|l| {
            let mut f = csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(l.as_bytes());
            let r = f.records().next().unwrap().unwrap();
            format!(
                r#"{{"event_time_ms":{},"key":{:?},"value":{},"other":[1,{{"x":null}}]}}"#,
                &r[2], &r[1], &r[0]
            )
        })
        .collect();
    std::fs::write(&jsonl, lines.join("\n") + "\n\n").unwrap();

    let a = stdout(&bare(&[], &plain));
    assert!(a.starts_with(EXPECTED), "{a}");
    assert_eq!(stdout(&bare(&[], &gz)), a);
    assert_eq!(stdout(&bare(&[], &jsonl)), a);
    assert_eq!(stdout(&bare(&["--jsonl"], &jsonl)), a);

    let lib = benches::e2e::count_csv(csv().as_bytes()).unwrap();
    let totals = |k: &str| lib.get(k.as_bytes()).map(|t| (t.events, t.sum));
    assert_eq!(totals("a"), Some((3, 4.75)));
    assert_eq!(totals("b,c"), Some((1, -2.0)));
    assert_eq!(totals(LONG), Some((2, 1000.5)));
    assert_eq!(totals("b"), None);
    assert_eq!(lib.summary(), a);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_bad_number_or_a_missing_column_fails() {
    let d = dir("bad");
    let bad = d.join("bad.csv");
    std::fs::write(&bad, "event_time_ms,key,value\n1,a,2\n2,a,two\n").unwrap();
    let out = bare(&[], &bad);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 3") && err.contains("\"two\""), "{err}");
    std::fs::write(&bad, "time,key,value\n1,a,2\n").unwrap();
    let err = String::from_utf8_lossy(&bare(&["--csv"], &bad).stderr).into_owned();
    assert!(err.contains("no column event_time_ms"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}
