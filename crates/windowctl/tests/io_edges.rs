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
