//! Issue 16, item 12, end to end: `--time-unit s|ms|us|ns`, RFC 3339 timestamps, the summary's
//! hint when epoch seconds are read as milliseconds, gzip recognised on stdin and in files of
//! any name, and `--delimiter` (also as job-file fields).

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use common::{stderr, stdout, windowctl, write_temp};

/// The same four events, with the time field in milliseconds.
const MILLIS: &str = "event_time_ms,key,value\n\
                      1357016400000,a,1\n\
                      1357016400500,a,2\n\
                      1357020000250,b,3\n\
                      1357023599999,b,4\n";

/// The events of [`MILLIS`] in seconds, with fractions.
const SECONDS: &str = "event_time_ms,key,value\n\
                       1357016400,a,1\n\
                       1357016400.5,a,2\n\
                       1357020000.25,b,3\n\
                       1357023599.999,b,4\n";

/// Whole epoch seconds: what the hint is for.
const WHOLE_SECONDS: &str = "event_time_ms,key,value\n1357016400,a,1\n1357023599,b,4\n";

/// The events of [`MILLIS`] as RFC 3339 text, with offsets.
const RFC3339: &str = "event_time_ms,key,value\n\
                       2013-01-01T05:00:00Z,a,1\n\
                       2013-01-01T06:00:00.5+01:00,a,2\n\
                       2013-01-01T01:00:00.250-05:00,b,3\n\
                       2013-01-01 06:59:59.999Z,b,4\n";

/// The results of the job of [`job`] over those events: 1 h tumbling sums.
const EXPECTED: &str = "key,window_start,window_end,result\n\
                        a,1357016400000,1357020000000,3\n\
                        b,1357020000000,1357023600000,7\n";

/// The job's flags, on `input`, with `extra`.
fn job(input: &str, extra: &[&str]) -> Output {
    let mut args = vec!["--input", input, "--window", "tumbling:1h", "--agg", "sum"];
    args.extend_from_slice(extra);
    windowctl(&args)
}

fn path(name: &str, text: &str) -> String {
    write_temp(name, text).to_string_lossy().into_owned()
}

/// `windowctl run ARGS --input - --no-progress` with the bytes `input` on its stdin.
fn run_with_stdin_bytes(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .arg("run")
        .args(args)
        .args(["--input", "-", "--no-progress"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn gzip(text: &str) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap()
}

fn succeeds(o: &Output) -> String {
    assert!(o.status.success(), "windowctl failed: {}", stderr(o));
    stdout(o)
}

#[test]
fn every_unit_and_rfc3339_text_give_the_same_windows() {
    assert_eq!(succeeds(&job(&path("ms.csv", MILLIS), &[])), EXPECTED);
    let seconds = path("s.csv", SECONDS);
    assert_eq!(succeeds(&job(&seconds, &["--time-unit", "s"])), EXPECTED);
    // RFC 3339 text needs no flag, and is read the same in any unit.
    let rfc = path("rfc.csv", RFC3339);
    assert_eq!(succeeds(&job(&rfc, &[])), EXPECTED);
    assert_eq!(succeeds(&job(&rfc, &["--time-unit", "ns"])), EXPECTED);
    let micros = MILLIS.replace(",a,", "000,a,").replace(",b,", "000,b,");
    let micros = path("us.csv", &micros);
    assert_eq!(succeeds(&job(&micros, &["--time-unit", "us"])), EXPECTED);
    let nanos = MILLIS
        .replace(",a,", "000123,a,")
        .replace(",b,", "000999,b,");
    let nanos = path("ns.csv", &nanos);
    assert_eq!(succeeds(&job(&nanos, &["--time-unit", "ns"])), EXPECTED);
}

/// A timestamp whose milliseconds leave `i64`, or a bad date-time, is a bad line: it stops the
/// job with its line and field, or is skipped and counted with `--on-error skip`.
#[test]
fn overflowing_and_unparseable_timestamps_are_bad_lines() {
    let text = format!("{SECONDS}9300000000000000,c,1\n2013-01-01T05:00:00,c,1\n");
    let input = path("bad-s.csv", &text);
    let o = job(&input, &["--time-unit", "s"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "bad-s.csv:6: field 'event_time_ms': \"9300000000000000\" seconds is out of range \
             for a 64-bit millisecond timestamp"
        ),
        "{}",
        stderr(&o)
    );
    let o = job(&input, &["--time-unit", "s", "--on-error", "skip"]);
    assert_eq!(succeeds(&o), EXPECTED);
    assert!(
        stderr(&o).contains("bad input lines skipped: 2 "),
        "{}",
        stderr(&o)
    );
    let text = format!("{RFC3339}2013-01-01T05:00:00,c,1\n");
    let o = job(&path("bad-rfc.csv", &text), &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(
            "bad-rfc.csv:6: field 'event_time_ms': \"2013-01-01T05:00:00\" is not an RFC 3339 \
             date-time: no UTC offset"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_summary_hints_at_epoch_seconds_read_as_milliseconds() {
    let seconds = path("hint-s.csv", WHOLE_SECONDS);
    let o = job(&seconds, &[]);
    succeeds(&o);
    let hint = "if they are seconds, add --time-unit s";
    assert!(stderr(&o).contains(hint), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("hint: the event times (1357016400 .. 1357023599)"),
        "{}",
        stderr(&o)
    );
    // Read as seconds, or real milliseconds: no hint.
    let o = job(&seconds, &["--time-unit", "s"]);
    assert!(!stderr(&o).contains("hint:"), "{}", stderr(&o));
    let o = job(&path("hint-ms.csv", MILLIS), &[]);
    assert!(!stderr(&o).contains("hint:"), "{}", stderr(&o));
    // dstream says so too.
    let o = Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .args([
            "dstream",
            "--input",
            &seconds,
            "--batch-interval",
            "1s",
            "--window",
            "1s",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains(hint), "{}", stderr(&o));
}

/// `--input - < events.csv.gz` was read as text (a bad line of binary); it is decompressed, as
/// a gzip file without a `.gz` name is.
#[test]
fn gzip_on_stdin_and_in_a_file_of_any_name_is_decompressed() {
    let args = ["--window", "tumbling:1h", "--agg", "sum"];
    let o = run_with_stdin_bytes(&args, &gzip(MILLIS));
    assert_eq!(succeeds(&o), EXPECTED);
    let o = run_with_stdin_bytes(&args, MILLIS.as_bytes());
    assert_eq!(succeeds(&o), EXPECTED);
    let file = common::write_temp("gzipped.csv", "");
    std::fs::write(&file, gzip(MILLIS)).unwrap();
    assert_eq!(succeeds(&job(&file.to_string_lossy(), &[])), EXPECTED);
}

#[test]
fn semicolons_and_tabs_separate_fields_and_results_stay_commas() {
    let semicolons = path("semi.csv", &MILLIS.replace(',', ";"));
    assert_eq!(succeeds(&job(&semicolons, &["--delimiter", ";"])), EXPECTED);
    let tabs = path("tabs.tsv", &MILLIS.replace(',', "\t"));
    assert_eq!(succeeds(&job(&tabs, &["--delimiter", "tab"])), EXPECTED);
    assert_eq!(succeeds(&job(&tabs, &["--delimiter", "\t"])), EXPECTED);
    // Without the flag the header is one column, which names the problem.
    let o = job(&semicolons, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("\"event_time_ms;key;value\""),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_delimiters_and_units_are_usage_errors_naming_the_flag() {
    let input = path("usage.csv", MILLIS);
    for (flag, value, why) in [
        ("--delimiter", ";;", "one ASCII character"),
        ("--delimiter", "", "got none"),
        ("--delimiter", "§", "one ASCII character"),
        ("--delimiter", "\"", "double quote"),
        ("--time-unit", "sec", "expected s, ms, us or ns"),
    ] {
        let o = job(&input, &[flag, value]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains(flag) && err.contains(why),
            "{flag} {value:?}: {err}"
        );
    }
    let jsonl = common::write_temp("usage.jsonl", "");
    let o = Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .args([
            "dstream",
            "--input",
            &jsonl.to_string_lossy(),
            "--delimiter",
            ";",
        ])
        .output()
        .unwrap();
    assert!(
        stderr(&o).contains("--delimiter ;: the delimiter separates CSV fields"),
        "{}",
        stderr(&o)
    );
    let o = job(&jsonl.to_string_lossy(), &["--delimiter", ";"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--delimiter ;: the delimiter separates CSV fields"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn job_files_take_the_time_unit_and_the_delimiter() {
    let input = path("job-s.csv", &SECONDS.replace(',', ";"));
    let job_text = format!(
        "assigner = \"tumbling:1h\"\naggregate = \"sum\"\n[io]\ninput = [{input:?}]\n\
         time_unit = \"s\"\ndelimiter = \";\"\n"
    );
    let job_file = write_temp("units.toml", &job_text);
    let o = windowctl(&["--job", &job_file.to_string_lossy()]);
    assert_eq!(succeeds(&o), EXPECTED);
    // A flag overrides the file's value.
    let o = windowctl(&["--job", &job_file.to_string_lossy(), "--time-unit", "ms"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("\"1357016400.5\" is not an integer number of milliseconds"),
        "{}",
        stderr(&o)
    );
    let bad = write_temp("bad-units.toml", &job_text.replace("\"s\"", "\"seconds\""));
    let o = windowctl(&["--job", &bad.to_string_lossy()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("bad-units.toml: io.time_unit: unknown time unit \"seconds\""),
        "{}",
        stderr(&o)
    );
    let bad = write_temp("bad-delimiter.toml", &job_text.replace("\";\"", "\";;\""));
    let o = windowctl(&["--job", &bad.to_string_lossy()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("bad-delimiter.toml: io.delimiter: a delimiter is one ASCII"),
        "{}",
        stderr(&o)
    );
}
