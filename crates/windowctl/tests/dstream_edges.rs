//! `windowctl dstream` at the edges (#16): events near the ends of `i64` time (each example of
//! the issue exactly as given, plus the last batches that do fit), JSON-lines output, and the
//! default input found from the current directory or the binary, not from the folder it was
//! built in.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("windowctl-dse-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// `BIN dstream ARGS` in `dir`.
fn dstream_with(bin: &Path, dir: &Path, args: &[&str]) -> Output {
    Command::new(bin)
        .arg("dstream")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("windowctl starts")
}

/// `windowctl dstream ARGS` in `dir`.
fn dstream(dir: &Path, args: &[&str]) -> Output {
    dstream_with(Path::new(env!("CARGO_BIN_EXE_windowctl")), dir, args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 output")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `windowctl dstream --input in.csv ARGS` over events at `times` (key `a`, value 1) in a
/// fresh directory.
fn over(name: &str, times: &[i64], args: &[&str]) -> (PathBuf, Output) {
    let dir = scratch(name);
    let mut text = String::from("event_time_ms,key,value\n");
    for t in times {
        text.push_str(&format!("{t},a,1\n"));
    }
    fs::write(dir.join("in.csv"), text).expect("input");
    let mut all = vec!["--input", "in.csv"];
    all.extend_from_slice(args);
    let o = dstream(&dir, &all);
    (dir, o)
}

/// A refused job: exit 1, nothing on stdout, no output file, the message on stderr.
fn refused(o: &Output, dir: &Path) -> String {
    assert_eq!(o.status.code(), Some(1), "{}", stderr(o));
    assert_eq!(stdout(o), "");
    assert!(!dir.join("out.csv").exists(), "no output file is created");
    stderr(o)
}

const DAY: &[&str] = &["--batch-interval", "1d", "--window", "1d"];

#[test]
fn events_spanning_too_many_batches_are_the_span_error() {
    // Was: panic "index out of bounds" (exit 101).
    let (dir, o) = over(
        "span",
        &[-1000, 9_223_372_036_854_775_000],
        &[DAY, &["--output", "out.csv"]].concat(),
    );
    assert_eq!(
        refused(&o, &dir),
        "windowctl: error: the events span 106751991169 batches of 86400000 ms (from -1000 ms \
         to 9223372036854775000 ms; more than 10000000); use a larger --batch-interval\n"
    );
}

#[test]
fn an_event_at_i64_max_is_refused_naming_the_batch_interval() {
    let expected = "windowctl: error: the latest event, at 9223372036854775807 ms, is in the \
                    batch [9223372036828800000, 9223372036915200000) ms of --batch-interval \
                    86400000 ms, whose batch time (its end) is after the times an i64 of \
                    milliseconds can hold (-9223372036854775808 ms to 9223372036854775807 ms): \
                    with this batch interval, events must be before 9223372036828800000 ms\n";
    // Was: endless loop at 100 % CPU.
    let (dir, o) = over(
        "max2d",
        &[i64::MAX],
        &[
            "--batch-interval",
            "1d",
            "--window",
            "2d",
            "--output",
            "out.csv",
        ],
    );
    assert_eq!(refused(&o, &dir), expected);
    // Was: 0 rows, exit 0.
    let (dir, o) = over(
        "max1d",
        &[i64::MAX],
        &[DAY, &["--operation", "window", "--output", "out.csv"]].concat(),
    );
    assert_eq!(refused(&o, &dir), expected);
}

#[test]
fn an_event_whose_zero_time_is_before_i64_min_is_refused() {
    // Was: a row at batch time 9223372036828800000 (the zero time overflowed).
    let (dir, o) = over(
        "min",
        &[-9_223_372_036_854_775_807],
        &[DAY, &["--operation", "window", "--output", "out.csv"]].concat(),
    );
    assert_eq!(
        refused(&o, &dir),
        "windowctl: error: the earliest event, at -9223372036854775807 ms, is in the batch \
         [-9223372036915200000, -9223372036828800000) ms of --batch-interval 86400000 ms, whose \
         start (the zero time of the batches) is before the times an i64 of milliseconds can \
         hold (-9223372036854775808 ms to 9223372036854775807 ms): with this batch interval, \
         events must be at or after -9223372036828800000 ms; use a smaller --batch-interval\n"
    );
}

#[test]
fn a_window_reaching_past_i64_max_is_refused_naming_window_and_slide() {
    let (dir, o) = over(
        "window",
        &[9_223_372_036_828_799_999],
        &[
            "--batch-interval",
            "1d",
            "--window",
            "2d",
            "--output",
            "out.csv",
        ],
    );
    let err = refused(&o, &dir);
    assert!(
        err.contains(
            "the last window holding the batch at 9223372036828800000 ms (the latest events) \
             would be output at 9223372036915200000 ms"
        ) && err.contains("--window 172800000 ms with --slide 86400000 ms"),
        "{err}"
    );
}

#[test]
fn the_last_and_first_batches_that_fit_give_their_rows() {
    // The last whole day before i64::MAX, and the first one after i64::MIN.
    let (_, o) = over(
        "lastday",
        &[9_223_372_036_828_799_999, 9_223_372_036_742_400_000],
        &[DAY, &["--operation", "window"]].concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "batch_time,key,result\n9223372036828800000,a,1\n9223372036828800000,a,1\n"
    );
    let (_, o) = over(
        "firstday",
        &[-9_223_372_036_828_800_000],
        &[DAY, &["--operation", "count-by-window"]].concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "batch_time,key,result\n-9223372036742400000,,1\n"
    );
    // 1 ms batches reach i64::MIN itself; a 2 ms window over events at MIN and MIN + 2.
    let (_, o) = over(
        "onems",
        &[i64::MIN, i64::MIN + 2],
        &["--batch-interval", "1ms", "--window", "2ms", "--agg", "sum"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "batch_time,key,result\n\
         -9223372036854775807,a,1\n\
         -9223372036854775806,a,1\n\
         -9223372036854775805,a,1\n\
         -9223372036854775804,a,1\n"
    );
    // And i64::MAX itself is the last batch time: an event at i64::MAX - 1.
    let (_, o) = over(
        "maxms",
        &[i64::MAX - 1],
        &["--batch-interval", "1ms", "--window", "1ms"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "batch_time,key,result\n9223372036854775807,a,1\n"
    );
}

#[test]
fn batches_further_from_a_negative_zero_than_i64_max() {
    // Batches of 10^18 ms from a zero of -10^18: the last batch, at 9 * 10^18, is 10^19 ms
    // after the zero time (more than i64::MAX), and still output.
    let (_, o) = over(
        "far",
        &[-1000, 8_500_000_000_000_000_000],
        &[
            "--batch-interval",
            "1000000000000000000ms",
            "--window",
            "1000000000000000000ms",
            "--operation",
            "count-by-window",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(rows.len(), 11, "{out}");
    assert_eq!(rows[1], "0,,1");
    assert_eq!(rows[2], "1000000000000000000,,0");
    assert_eq!(rows[9], "8000000000000000000,,0");
    assert_eq!(rows[10], "9000000000000000000,,1");
}

const EVENTS: &str = "event_time_ms,key,value\n500,a,2\n1500,b,1\n1200,a,4\n3100,a,8\n";

#[test]
fn json_lines_by_file_name_or_flag() {
    let dir = scratch("jsonl");
    fs::write(dir.join("in.csv"), EVENTS).expect("input");
    let args = [
        "--input",
        "in.csv",
        "--batch-interval",
        "1s",
        "--window",
        "2s",
        "--slide",
        "2s",
        "--operation",
        "group-by-key-and-window",
    ];
    let o = dstream(&dir, &[&args[..], &["--output", "out.jsonl"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let expected = "{\"batch_time\":2000,\"key\":\"a\",\"result\":[2,4]}\n\
                    {\"batch_time\":2000,\"key\":\"b\",\"result\":[1]}\n\
                    {\"batch_time\":4000,\"key\":\"a\",\"result\":[8]}\n";
    assert_eq!(fs::read_to_string(dir.join("out.jsonl")).unwrap(), expected);
    let o = dstream(&dir, &[&args[..], &["--output-format", "jsonl"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), expected);
    // Over all events: the key is null; --output-format csv wins over the file name.
    let count = [
        &args[..8],
        &["--operation", "count-by-window", "--output-format", "jsonl"],
    ]
    .concat();
    let o = dstream(&dir, &count);
    assert_eq!(
        stdout(&o),
        "{\"batch_time\":2000,\"key\":null,\"result\":3}\n\
         {\"batch_time\":4000,\"key\":null,\"result\":1}\n"
    );
    let o = dstream(
        &dir,
        &[
            &args[..],
            &["--output", "x.jsonl", "--output-format", "csv"],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(fs::read_to_string(dir.join("x.jsonl"))
        .unwrap()
        .starts_with("batch_time,key,result\n"));
    let o = dstream(&dir, &[&args[..], &["--output-format", "xml"]].concat());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown output format \"xml\""),
        "{}",
        stderr(&o)
    );
}

/// A link (or copy) of the windowctl binary at `to`.
fn place_binary(to: &Path) {
    fs::create_dir_all(to.parent().unwrap()).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_windowctl"));
    if fs::hard_link(bin, to).is_err() {
        fs::copy(bin, to).expect("binary copied");
    }
}

/// The repository's bundled data file.
fn bundled() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/nycflights13_dest.csv.gz")
}

#[test]
fn the_default_input_is_found_from_the_binary_or_the_current_directory() {
    let root = scratch("bundled");
    // A checkout elsewhere: its binary run from an unrelated directory finds its data.
    let checkout = root.join("checkout");
    let bin = checkout.join("target/release/windowctl");
    place_binary(&bin);
    fs::create_dir_all(checkout.join("data")).unwrap();
    let data = checkout.join("data/nycflights13_dest.csv.gz");
    if fs::hard_link(bundled(), &data).is_err() {
        fs::copy(bundled(), &data).unwrap();
    }
    let elsewhere = root.join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    let day = [
        "--batch-interval",
        "1d",
        "--window",
        "1d",
        "--operation",
        "count-by-window",
    ];
    let o = dstream_with(&bin, &elsewhere, &day);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).starts_with(&format!(
        "dstream: 328521 events read from {}",
        data.display()
    )));
    // A binary without data near it, run inside the checkout (a crate folder): found from
    // the current directory up.
    let lone = root.join("bin/windowctl");
    place_binary(&lone);
    let crate_dir = checkout.join("crates/windowctl");
    fs::create_dir_all(&crate_dir).unwrap();
    let o = dstream_with(&lone, &crate_dir, &day);
    assert!(o.status.success(), "{}", stderr(&o));

    // Neither: both commands say what was looked for, and where.
    let expected = format!(
        "windowctl: error: no input named, and the bundled data set \
         data/nycflights13_dest.csv.gz (the default input) was not found in the current \
         directory {} or a folder above it, nor in the folder of this binary {} or a folder \
         above it; name an input with --input (the data set is in the data/ folder of the \
         windowctl repository)\n",
        elsewhere.display(),
        root.join("bin").display()
    );
    let o = dstream_with(&lone, &elsewhere, &day);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), expected);
    let o = Command::new(&lone)
        .args(["run", "--no-progress"])
        .current_dir(&elsewhere)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), expected);
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn the_help_names_no_build_machine_path() {
    let build_dir = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for command in ["dstream", "run"] {
        let o = Command::new(env!("CARGO_BIN_EXE_windowctl"))
            .args([command, "--help"])
            .output()
            .unwrap();
        assert!(o.status.success());
        let help = stdout(&o);
        assert!(
            !help.contains(build_dir.to_str().unwrap()) && !help.contains("/../../"),
            "{help}"
        );
    }
    let o = Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .args(["dstream", "--help"])
        .output()
        .unwrap();
    assert!(stdout(&o).contains("data/nycflights13_dest.csv.gz"));
}

/// A failed write names its output as `windowctl run` does (a trial found `writing output: No
/// space left on device`, naming none): `--output PATH`, or stdout.
#[cfg(target_os = "linux")]
#[test]
fn a_failed_write_names_the_output() {
    let (dir, o) = over("full", &[0, 1000, 2000], &["--output", "/dev/full"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("writing output: --output /dev/full: No space left on device"),
        "{}",
        stderr(&o)
    );
    let full = fs::File::create("/dev/full").expect("/dev/full opens");
    let o = Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .args(["dstream", "--input", "in.csv"])
        .current_dir(&dir)
        .stdout(full)
        .output()
        .expect("windowctl starts");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("writing output: stdout: No space left on device"),
        "{}",
        stderr(&o)
    );
}
