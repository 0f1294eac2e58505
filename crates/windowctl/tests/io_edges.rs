//! Issue 16, item 11 and a trial's findings, the output side: `-` as standard output for the
//! late output and the dead letters (and never two outputs there), the exit codes of
//! `windowctl dstream`, dead letters that keep a line's bytes, keys with a line break written as
//! CSV and read back, and numeric JSON keys.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("windowctl-io-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

const INPUT: &str = "event_time_ms,key,value\n1,a,1\n2,b,x\n3,a,2\n";

fn windowctl(dir: &Path, command: &str, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_windowctl"));
    c.arg(command).args(args).current_dir(dir);
    if command == "run" {
        c.arg("--no-progress");
    }
    c
}

/// `windowctl run ARGS --no-progress` in `dir`, to its end.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    windowctl(dir, "run", args)
        .stdin(Stdio::null())
        .output()
        .expect("windowctl starts")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A usage error: exit 2, nothing on stdout, the message names every part of `names`.
fn usage_error(o: &Output, names: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(stdout(o), "", "{err}");
    for name in names {
        assert!(err.contains(name), "{name:?} not in: {err}");
    }
}

const JOB: &[&str] = &[
    "--input",
    "in.csv",
    "--window",
    "tumbling:10ms",
    "--agg",
    "sum",
];

#[test]
fn dead_letters_to_dash_go_to_stdout_when_the_results_have_a_file() {
    let dir = scratch("dl-stdout");
    fs::write(dir.join("in.csv"), INPUT).expect("input");
    let o = run_in(
        &dir,
        &[
            JOB,
            &[
                "--on-error",
                "skip",
                "--dead-letter",
                "-",
                "--output",
                "o.csv",
            ],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "source,line,field,error,raw\nin.csv,3,value,\"\"\"x\"\" is not a number\",\"2,b,x\"\n"
    );
    assert!(!dir.join("-").exists(), "no file named -");
    assert_eq!(
        fs::read_to_string(dir.join("o.csv")).expect("results"),
        "key,window_start,window_end,result\na,0,10,3\n"
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn late_output_to_dash_goes_to_stdout_when_the_results_have_a_file() {
    let dir = scratch("late-stdout");
    fs::write(
        dir.join("in.csv"),
        "event_time_ms,key,value\n20,a,1\n1,a,5\n",
    )
    .expect("input");
    let o = run_in(
        &dir,
        &[JOB, &["--late-output", "-", "--output", "o.csv"]].concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "event_time_ms,key,value,watermark\n1,a,5,19\n");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn two_outputs_on_stdout_are_a_usage_error_naming_both() {
    let dir = scratch("two-stdout");
    fs::write(dir.join("in.csv"), INPUT).expect("input");
    let skip: &[&str] = &["--on-error", "skip"];
    // Was: a file named `-`.
    let o = run_in(&dir, &[JOB, skip, &["--dead-letter", "-"]].concat());
    usage_error(&o, &["--dead-letter -", "--output", "standard output"]);
    // Was: late rows mixed into the results on stdout.
    let o = run_in(&dir, &[JOB, &["--late-output", "-"]].concat());
    usage_error(&o, &["--late-output -", "--output"]);
    let o = run_in(
        &dir,
        &[JOB, &["--output", "-", "--late-output", "/dev/stdout"]].concat(),
    );
    usage_error(&o, &["--late-output", "--output -"]);
    let o = run_in(
        &dir,
        &[
            JOB,
            skip,
            &[
                "--output",
                "o.csv",
                "--late-output",
                "-",
                "--dead-letter",
                "-",
            ],
        ]
        .concat(),
    );
    usage_error(&o, &["--late-output -", "--dead-letter -"]);
    assert!(!dir.join("-").exists(), "no file named -");
    assert!(!dir.join("o.csv").exists(), "nothing written");
    // `--input -` reads stdin; the late output `-` is still stdout, where the results are.
    let o = windowctl(
        &dir,
        "run",
        &[
            "--input",
            "-",
            "--window",
            "tumbling:10ms",
            "--late-output",
            "-",
        ],
    )
    .stdin(fs::File::open(dir.join("in.csv")).expect("input"))
    .output()
    .expect("windowctl starts");
    usage_error(&o, &["--late-output -", "--output"]);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn stdout_redirected_to_an_input_is_refused_and_the_input_kept() {
    let dir = scratch("stdout-input");
    fs::write(dir.join("in.csv"), INPUT).expect("input");
    // `windowctl run --input in.csv >> in.csv`: the results would be appended to the input
    // while it is read (as `cat in.csv >> in.csv`, which cat refuses).
    let appended = fs::OpenOptions::new()
        .append(true)
        .open(dir.join("in.csv"))
        .expect("input");
    let o = windowctl(&dir, "run", &[JOB, &["--on-error", "skip"]].concat())
        .stdout(appended)
        .output()
        .expect("windowctl starts");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the same file as the input in.csv"),
        "{}",
        stderr(&o)
    );
    assert_eq!(fs::read_to_string(dir.join("in.csv")).unwrap(), INPUT);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn checkpointed_jobs_refuse_outputs_on_stdout() {
    let dir = scratch("cp-stdout");
    fs::write(dir.join("in.csv"), INPUT).expect("input");
    let o = run_in(
        &dir,
        &[
            JOB,
            &[
                "--on-error",
                "skip",
                "--output",
                "o.csv",
                "--dead-letter",
                "-",
                "--checkpoint-dir",
                "cp",
            ],
        ]
        .concat(),
    );
    usage_error(
        &o,
        &["--checkpoint-dir", "--dead-letter", "standard output"],
    );
    // Was: a file named `-` holding the late elements.
    let o = run_in(
        &dir,
        &[
            JOB,
            &[
                "--output",
                "o.csv",
                "--late-output",
                "-",
                "--checkpoint-dir",
                "cp",
            ],
        ]
        .concat(),
    );
    usage_error(
        &o,
        &["--checkpoint-dir", "--late-output", "standard output"],
    );
    assert!(!dir.join("-").exists(), "no file named -");
    let _ = fs::remove_dir_all(&dir);
}

/// `windowctl dstream ARGS` in `dir`.
fn dstream(dir: &Path, args: &[&str]) -> Output {
    windowctl(dir, "dstream", args)
        .stdin(Stdio::null())
        .output()
        .expect("windowctl starts")
}

#[test]
fn dstream_flag_errors_exit_2_and_run_time_failures_1() {
    let dir = scratch("dstream-codes");
    fs::write(
        dir.join("in.csv"),
        "event_time_ms,key,value\n1,a,1\n2,b,x\n",
    )
    .expect("input");
    let input: &[&str] = &["--input", "in.csv"];
    // Each was exit 1, where `run` and clap exit 2 for a bad flag.
    for (args, message) in [
        (
            &["--batch-interval", "0s"][..],
            "--batch-interval must be positive",
        ),
        (&["--slide", "0s"][..], "--slide must be positive"),
        (&["--window", "x"][..], "--window: invalid duration \"x\""),
        (
            &["--window", "90min"][..],
            "must be a multiple of the slide duration",
        ),
        (
            &["--inverse", "--operation", "window"][..],
            "--inverse applies to",
        ),
        (
            &["--batch-interval", "1ms", "--window", "2h"][..],
            "use --inverse or a larger --batch-interval",
        ),
        (&["--output", "in.csv"][..], "is also the input"),
    ] {
        let o = dstream(&dir, &[input, args].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
    }
    // clap's own.
    let o = dstream(&dir, &[input, &["--operation", "nope"]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // Run-time failures: a missing input, a bad record.
    let o = dstream(&dir, &["--input", "missing.csv"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot open input file"),
        "{}",
        stderr(&o)
    );
    let o = dstream(&dir, input);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("in.csv:3: field 'value'"),
        "{}",
        stderr(&o)
    );
    let _ = fs::remove_dir_all(&dir);
}

/// The rows of a CSV file as byte records (header included).
fn byte_rows(path: &Path) -> Vec<Vec<Vec<u8>>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .expect("a CSV file")
        .byte_records()
        .map(|r| r.expect("a CSV row").iter().map(<[u8]>::to_vec).collect())
        .collect()
}

#[test]
fn dead_letters_hold_the_bytes_of_each_line() {
    let dir = scratch("dl-bytes");
    // Not UTF-8; and 1 MiB + 10 bytes (with a comma and a quote): each was kept as text, with
    // U+FFFD for the bad bytes, and cut to 1 MiB.
    let bad: &[u8] = b"2,\xff\xc3(,1";
    let mut long = b"3,\"q\",".to_vec();
    long.resize((1 << 20) + 10, b'5');
    let mut text = b"event_time_ms,key,value\n1,a,1\n".to_vec();
    for line in [bad, &long[..]] {
        text.extend_from_slice(line);
        text.push(b'\n');
    }
    fs::write(dir.join("in.csv"), &text).expect("input");
    let o = run_in(
        &dir,
        &[
            JOB,
            &[
                "--on-error",
                "skip",
                "--dead-letter",
                "dl.csv",
                "--output",
                "o.csv",
            ],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = byte_rows(&dir.join("dl.csv"));
    assert_eq!(rows.len(), 3, "header and two rows");
    assert_eq!(rows[1][4], bad);
    assert_eq!(rows[2][4], long);
    assert_eq!(
        String::from_utf8_lossy(&rows[2][3]),
        format!("line is longer than 1048576 bytes ({} bytes)", long.len())
    );
    assert!(
        !stderr(&o).contains("dead letters hold only"),
        "{}",
        stderr(&o)
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_key_with_a_line_break_written_as_csv_is_read_back() {
    let dir = scratch("newline-key");
    fs::write(
        dir.join("in.jsonl"),
        "{\"event_time_ms\":1,\"key\":\"a\\nb\",\"value\":2}\n\
         {\"event_time_ms\":2,\"key\":\"c\\r\\n\\\"d\\\"\",\"value\":3}\n\
         {\"event_time_ms\":3,\"key\":\"a\\nb\",\"value\":4}\n",
    )
    .expect("input");
    let o = run_in(
        &dir,
        &[
            "--input",
            "in.jsonl",
            "--window",
            "tumbling:10ms",
            "--agg",
            "sum",
            "--output",
            "first.csv",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let first = fs::read_to_string(dir.join("first.csv")).expect("output");
    assert_eq!(
        first,
        "key,window_start,window_end,result\n\"a\nb\",0,10,6\n\"c\r\n\"\"d\"\"\",0,10,3\n"
    );
    // Was: "first.csv:2: expected 3 fields, found 1".
    let o = run_in(
        &dir,
        &[
            "--input",
            "first.csv",
            "--time-field",
            "window_start",
            "--value-field",
            "result",
            "--window",
            "tumbling:10ms",
            "--agg",
            "max",
            "--output",
            "second.jsonl",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let second = fs::read_to_string(dir.join("second.jsonl")).expect("output");
    let keys: Vec<String> = second
        .lines()
        .map(|l| {
            let row: serde_json::Value = serde_json::from_str(l).expect("a JSON row");
            row["key"].as_str().expect("a key").to_owned()
        })
        .collect();
    assert_eq!(keys, ["a\nb", "c\r\n\"d\""]);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn numeric_json_keys_keep_their_text() {
    let dir = scratch("number-keys");
    let mut text = String::new();
    for (t, key) in ["100", "1e2", "1.5", "100", "1E2"].iter().enumerate() {
        text.push_str(&format!(
            "{{\"event_time_ms\":{t},\"key\":{key},\"value\":1}}\n"
        ));
    }
    fs::write(dir.join("in.jsonl"), text).expect("input");
    let o = run_in(
        &dir,
        &[
            "--input",
            "in.jsonl",
            "--window",
            "tumbling:10ms",
            "--agg",
            "count",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Was: `1e+2` for both `1e2` and `1E2`.
    assert_eq!(
        stdout(&o),
        "key,window_start,window_end,result\n100,0,10,2\n1e2,0,10,1\n1.5,0,10,1\n1E2,0,10,1\n"
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_dead_letter_over_64_mib_is_cut_and_the_summary_counts_it() {
    use std::io::Write;
    let dir = scratch("dl-cut");
    let mut child = windowctl(
        &dir,
        "run",
        &[
            "--input",
            "-",
            "--window",
            "tumbling:10ms",
            "--on-error",
            "skip",
            "--dead-letter",
            "dl.csv",
            "--output",
            "o.csv",
        ],
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("windowctl starts");
    let len = (64 << 20) + 5;
    let mut stdin = child.stdin.take().expect("stdin");
    let feeder = std::thread::spawn(move || {
        stdin.write_all(b"event_time_ms,key,value\n")?;
        let chunk = vec![b'8'; 1 << 20];
        for _ in 0..64 {
            stdin.write_all(&chunk)?;
        }
        stdin.write_all(b"88888\n1,a,1\n")
    });
    let o = child.wait_with_output().expect("windowctl ends");
    feeder.join().expect("feeder").expect("input written");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("windowctl: 1 dead letters hold only the first 64 MiB of their line"),
        "{}",
        stderr(&o)
    );
    let rows = byte_rows(&dir.join("dl.csv"));
    assert_eq!(rows[1][4].len(), 64 << 20);
    assert_eq!(
        String::from_utf8_lossy(&rows[1][3]),
        format!(
            "line is longer than 1048576 bytes ({len} bytes; only its first {} bytes are kept)",
            64 << 20
        )
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn dead_letters_to_a_closed_stdout_fail_the_job() {
    let dir = scratch("dl-closed");
    fs::write(dir.join("in.csv"), INPUT).expect("input");
    let script = format!(
        "exec '{}' run --no-progress --input in.csv --window tumbling:10ms --output o.csv \
         --on-error skip --dead-letter - >&-",
        env!("CARGO_BIN_EXE_windowctl")
    );
    let o = Command::new("sh")
        .args(["-c", &script])
        .current_dir(&dir)
        .output()
        .expect("sh runs");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--dead-letter -: standard output is closed"),
        "{}",
        stderr(&o)
    );
    let _ = fs::remove_dir_all(&dir);
}

/// A command line clap refuses is said as every other error is (`windowctl: error: ...`), exit
/// 2, for both subcommands; help and version still print on stdout, exit 0.
#[test]
fn command_line_errors_start_like_every_other_error() {
    let bin = env!("CARGO_BIN_EXE_windowctl");
    let out = |args: &[&str]| {
        Command::new(bin)
            .args(args)
            .output()
            .expect("windowctl runs")
    };
    for args in [
        &["run", "--bogus"][..],
        &["run", "--workers", "-1"],
        &["run", "--window", "nope"],
        &["dstream", "--operation", "nope"],
        &["nope"],
    ] {
        let o = out(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.starts_with("windowctl: error: "), "{args:?}: {err}");
    }
    for args in [&["run", "--help"][..], &["--version"]] {
        let o = out(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert!(!o.stdout.is_empty() && o.stderr.is_empty(), "{args:?}");
    }
}
