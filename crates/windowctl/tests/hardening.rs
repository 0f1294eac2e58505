//! Issue 16's edges, each as it was found: an output that is an input under another name (a
//! hard link, or standard input redirected from it) is refused and the input kept; a signal
//! stops a job at a row boundary with the summary.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("windowctl-hard-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

const INPUT: &str = "event_time_ms,key,value\n1,a,1\n2,b,2\n";

/// `windowctl run ARGS --no-progress` in `dir`, to its end.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    windowctl(dir)
        .args(args)
        .output()
        .expect("windowctl starts")
}

/// The standard error, as text.
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn windowctl(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_windowctl"));
    c.arg("run").arg("--no-progress").current_dir(dir);
    c
}

#[test]
fn an_output_hard_linked_to_the_input_is_refused_and_the_input_kept() {
    let dir = scratch("link");
    fs::write(dir.join("in.csv"), INPUT).expect("input");
    fs::hard_link(dir.join("in.csv"), dir.join("link.csv")).expect("hard link");
    let o = run_in(
        &dir,
        &[
            "--input",
            "in.csv",
            "--window",
            "tumbling:10ms",
            "--output",
            "link.csv",
        ],
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("same file as the input in.csv"), "{err}");
    assert_eq!(
        fs::read_to_string(dir.join("in.csv")).expect("input"),
        INPUT
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn an_output_that_standard_input_is_read_from_is_refused_and_kept() {
    let dir = scratch("stdin");
    fs::write(dir.join("o.csv"), INPUT).expect("input");
    let o = windowctl(&dir)
        .args([
            "--input",
            "-",
            "--window",
            "tumbling:10ms",
            "--output",
            "o.csv",
        ])
        .stdin(fs::File::open(dir.join("o.csv")).expect("open"))
        .output()
        .expect("runs");
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("standard input (--input -) is read from that file"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(dir.join("o.csv")).expect("kept"), INPUT);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn sigint_stops_a_job_at_a_row_boundary_with_the_summary() {
    let dir = scratch("sigint");
    let mut text = String::from("event_time_ms,key,value\n");
    for i in 0..400_000 {
        text.push_str(&format!("{i},k{},{}\n", i % 97, i % 13));
    }
    fs::write(dir.join("in.csv"), text).expect("input");
    let child = windowctl(&dir)
        .args([
            "--input",
            "in.csv",
            "--window",
            "sliding:50ms:1ms",
            "--output",
            "o.csv",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    std::thread::sleep(Duration::from_millis(300));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let o = child.wait_with_output().expect("ends");
    let err = stderr(&o);
    if o.status.code() == Some(130) {
        assert!(
            err.contains("stopped by SIGINT at a batch boundary"),
            "{err}"
        );
        assert!(err.contains("events read"), "the summary is printed: {err}");
        let out = fs::read_to_string(dir.join("o.csv")).expect("results");
        assert!(out.starts_with("key,window_start,window_end,result\n"));
        assert!(out.ends_with('\n'), "the last row is whole");
    } else {
        // Done before the signal came (a fast machine): a complete run.
        assert!(o.status.success(), "{err}");
    }
    let _ = fs::remove_dir_all(&dir);
}

/// Two SIGTERMs at once (GNU `timeout` signals the command and then its process group) are
/// one request: the job stops with its summary, exit 143, with and without `--workers`.
/// Before, the second one ended the process at once, without the summary (1 run in 4 of a
/// trial's `timeout 1 windowctl ... --workers 2`, 2 in 3 with two `kill -TERM`).
#[cfg(unix)]
#[test]
fn two_sigterms_at_once_stop_the_job_once_with_its_summary() {
    let dir = scratch("two-sigterms");
    for workers in [None, Some("2")] {
        for _ in 0..3 {
            let mut c = windowctl(&dir);
            c.args([
                "--input",
                "-",
                "--window",
                "tumbling:1s",
                "--output",
                "o.csv",
            ])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped());
            if let Some(w) = workers {
                c.args(["--workers", w]);
            }
            let mut child = c.spawn().expect("runs");
            let mut stdin = child.stdin.take().expect("stdin");
            std::io::Write::write_all(&mut stdin, b"event_time_ms,key,value\n1000,a,1\n")
                .expect("written");
            std::thread::sleep(Duration::from_millis(500));
            let id = child.id().to_string();
            let sent = Command::new("sh")
                .args(["-c", &format!("kill -TERM {id}; kill -TERM {id}")])
                .status()
                .expect("kill runs");
            assert!(sent.success());
            let o = child.wait_with_output().expect("ends");
            drop(stdin);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(143), "{workers:?}: {err}");
            assert!(err.contains("1 events read"), "{workers:?}: {err}");
            assert!(err.contains("stopped by SIGTERM"), "{workers:?}: {err}");
        }
    }
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_gz_output_is_gzip_that_windowctl_reads_back() {
    let dir = scratch("gz");
    fs::write(dir.join("in.csv"), INPUT).expect("input");
    let o = run_in(
        &dir,
        &[
            "--input",
            "in.csv",
            "--window",
            "tumbling:10ms",
            "--agg",
            "sum",
            "--output",
            "o.csv.gz",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = fs::read(dir.join("o.csv.gz")).expect("output");
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "gzip magic");
    // Read back: the results are the input of a second job.
    let o = run_in(
        &dir,
        &[
            "--input",
            "o.csv.gz",
            "--time-field",
            "window_start",
            "--value-field",
            "result",
            "--window",
            "tumbling:10ms",
            "--agg",
            "sum",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        out,
        "key,window_start,window_end,result\na,0,10,1\nb,0,10,2\n"
    );
    // A gzip output cannot be cut back to a checkpoint.
    let o = run_in(
        &dir,
        &[
            "--input",
            "in.csv",
            "--window",
            "tumbling:10ms",
            "--output",
            "c.csv.gz",
            "--checkpoint-dir",
            "ck",
        ],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("a gzip stream cannot be cut back"));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_closed_stdout_fails_the_job_instead_of_losing_the_results() {
    let dir = scratch("closed");
    fs::write(dir.join("in.csv"), INPUT).expect("input");
    let script = format!(
        "exec '{}' run --no-progress --input in.csv --window tumbling:10ms >&-",
        env!("CARGO_BIN_EXE_windowctl")
    );
    let o = Command::new("sh")
        .args(["-c", &script])
        .current_dir(&dir)
        .output()
        .expect("sh runs");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("standard output is closed"));
    // Redirected to /dev/null by the shell (write-only), the job runs.
    let script = script.replace(">&-", ">/dev/null");
    let o = Command::new("sh")
        .args(["-c", &script])
        .current_dir(&dir)
        .output()
        .expect("sh runs");
    assert!(o.status.success(), "{}", stderr(&o));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn usage_errors_exit_2_like_parser_errors() {
    let dir = scratch("usage");
    fs::write(dir.join("in.csv"), INPUT).expect("input");
    for args in [
        vec!["--input", "in.csv", "--window", "tumbling:0s"],
        vec!["--input", "in.csv", "--no-such-flag"],
        vec!["--input", "in.csv", "--checkpoint-interval", "1s"],
        vec![
            "--input",
            "in.csv",
            "--output",
            "o.csv",
            "--checkpoint-dir",
            "ck",
            "--checkpoint-interval",
            "0s",
        ],
        vec![
            "--input",
            "-",
            "--output",
            "o.csv",
            "--checkpoint-dir",
            "ck",
        ],
    ] {
        let o = run_in(&dir, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
    // A job that fails while running (a bad line) exits 1.
    fs::write(dir.join("bad.csv"), "event_time_ms,key,value\nx,a,1\n").expect("input");
    let o = run_in(&dir, &["--input", "bad.csv", "--window", "tumbling:10ms"]);
    assert_eq!(o.status.code(), Some(1));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn ineffective_lateness_and_many_late_elements_are_reported() {
    let dir = scratch("late");
    let mut text = String::from("event_time_ms,key,value\n");
    for i in 0..100 {
        // Every tenth element 50 ms behind: late with no watermark delay.
        let t = if i % 10 == 9 { i * 10 - 50 } else { i * 10 };
        text.push_str(&format!("{t},k,1\n"));
    }
    fs::write(dir.join("in.csv"), text).expect("input");
    let o = run_in(
        &dir,
        &[
            "--input",
            "in.csv",
            "--window",
            "tumbling:10ms",
            "--output",
            "o.csv",
        ],
    );
    let err = stderr(&o);
    assert!(err.contains("10.0 % of the elements were late"), "{err}");
    assert!(err.contains("--out-of-orderness 0 ms"), "{err}");
    for (window, time, why) in [
        ("count:3", "event", "global and count windows never end"),
        (
            "tumbling:10ms",
            "processing",
            "processing-time windows take no late elements",
        ),
    ] {
        let o = run_in(
            &dir,
            &[
                "--input",
                "in.csv",
                "--window",
                window,
                "--time",
                time,
                "--allowed-lateness",
                "1s",
                "--output",
                "o.csv",
            ],
        );
        let err = stderr(&o);
        assert!(
            err.contains("--allowed-lateness has no effect here") && err.contains(why),
            "{err}"
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn the_summary_counts_the_results_written() {
    let dir = scratch("count");
    fs::write(dir.join("in.csv"), INPUT).expect("input");
    let o = run_in(
        &dir,
        &[
            "--input",
            "in.csv",
            "--window",
            "tumbling:10ms",
            "--output",
            "o.csv",
        ],
    );
    let err = stderr(&o);
    assert!(
        err.contains("windows fired: 2 (2 results written)"),
        "{err}"
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn two_outputs_naming_one_new_file_are_refused() {
    let dir = scratch("samenew");
    fs::write(dir.join("in.csv"), INPUT).expect("input");
    let o = run_in(
        &dir,
        &[
            "--input",
            "in.csv",
            "--window",
            "tumbling:10ms",
            "--output",
            "z.csv",
            "--late-output",
            "./z.csv",
        ],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("is also given to --output"));
    assert!(!dir.join("z.csv").exists(), "nothing written");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn gz_outputs_keep_their_format_in_run_and_dstream() {
    let dir = scratch("gzformat");
    fs::write(dir.join("in.csv"), INPUT).expect("input");
    let o = run_in(
        &dir,
        &[
            "--input",
            "in.csv",
            "--window",
            "tumbling:10ms",
            "--output",
            "o.jsonl.gz",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run_in(
        &dir,
        &[
            "--input",
            "o.jsonl.gz",
            "--time-field",
            "window_start",
            "--value-field",
            "result",
            "--window",
            "tumbling:10ms",
        ],
    );
    assert!(
        o.status.success(),
        "read back as JSON lines: {}",
        stderr(&o)
    );
    let o = Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .args([
            "dstream",
            "--input",
            "in.csv",
            "--batch-interval",
            "10ms",
            "--window",
            "10ms",
        ])
        .args(["--output", "d.csv.gz"])
        .current_dir(&dir)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = fs::read(dir.join("d.csv.gz")).expect("dstream output");
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "dstream writes gzip too");
    let _ = fs::remove_dir_all(&dir);
}
