//! `windowctl run --checkpoint-dir`: a job killed with SIGKILL at many moments and run again
//! until it completes ends with outputs byte for byte those of an uninterrupted run; damaged
//! checkpoints are skipped or refused, a checkpoint of another job is refused without writing,
//! a finished job is not run twice, SIGTERM stops at a batch boundary with a checkpoint.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("windowctl-ckpt-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// A CSV of `n` events over 40 keys, mostly in time order with some disorder (some beyond a
/// 50 ms watermark delay, so that there are late elements), and a bad line now and then.
fn write_input(path: &Path, n: u64) {
    let mut text = String::from("event_time_ms,key,value\n");
    let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
    for i in 0..n {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let jitter = seed % 100;
        let t = (i * 3).saturating_sub(if seed.is_multiple_of(10) {
            jitter * 3
        } else {
            0
        });
        if i % 5_000 == 4_999 {
            text.push_str("not,a,number\n");
        }
        text.push_str(&format!(
            "{t},k{},{}\n",
            (seed >> 8) % 40,
            (seed >> 20) % 1000
        ));
    }
    fs::write(path, text).expect("input written");
}

/// `windowctl run` with `args` in `dir`.
fn command(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_windowctl"));
    c.arg("run")
        .args(args)
        .arg("--no-progress")
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

fn run(dir: &Path, args: &[&str]) -> Output {
    command(dir, args).output().expect("windowctl starts")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The job's flags: input, outputs, dead letters, window (with `extra`).
fn job<'a>(outputs: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "--input",
        "in.csv",
        "--out-of-orderness",
        "50ms",
        "--on-error",
        "skip",
    ];
    let (out, late, dead) = match outputs {
        "a" => ("a.csv", "a-late.csv", "a-dead.csv"),
        _ => ("b.csv", "b-late.csv", "b-dead.csv"),
    };
    args.extend([
        "--output",
        out,
        "--late-output",
        late,
        "--dead-letter",
        dead,
    ]);
    args.extend_from_slice(extra);
    args
}

fn outputs(dir: &Path, which: &str) -> Vec<Vec<u8>> {
    ["", "-late", "-dead"]
        .iter()
        .map(|s| fs::read(dir.join(format!("{which}{s}.csv"))).unwrap_or_default())
        .collect()
}

/// Runs the job of `extra` uninterrupted (outputs `a`), then with checkpoints (outputs `b`),
/// killed after growing delays until a run completes; returns the kills that hit a running
/// job. The two sets of outputs must be identical.
fn killed_until_done(name: &str, extra: &[&str]) -> u32 {
    let dir = scratch(name);
    write_input(&dir.join("in.csv"), 60_000);
    if extra.contains(&"in2.csv") {
        write_input(&dir.join("in2.csv"), 20_000);
    }
    // The uninterrupted run's time, the shorter of two: a run slowed by a loaded machine would
    // put every kill after the end (CI once saw 1 kill in 40 attempts).
    let mut full = Duration::MAX;
    for _ in 0..2 {
        // Dead letters are appended to: each run starts without them.
        let _ = fs::remove_file(dir.join("a-dead.csv"));
        let started = Instant::now();
        let plain = run(&dir, &job("a", extra));
        assert!(plain.status.success(), "{}", stderr(&plain));
        full = full.min(started.elapsed());
    }
    let full = full.max(Duration::from_millis(50));
    let mut args = job("b", extra);
    args.extend(["--checkpoint-dir", "ckpt", "--checkpoint-interval", "20ms"]);
    let mut kills = 0;
    for attempt in 0_u32..40 {
        let mut child = command(&dir, &args).spawn().expect("windowctl starts");
        // Kill at a fraction of an uninterrupted run, later each time: many moments, and a
        // run that gets to the end within the attempts.
        let fraction = 0.15 + 0.1 * f64::from(attempt % 9);
        std::thread::sleep(full.mul_f64(fraction));
        match child.try_wait().expect("wait") {
            Some(status) => {
                let o = child.wait_with_output().expect("output");
                assert!(status.success(), "attempt {attempt}: {}", stderr(&o));
                break;
            }
            None => {
                child.kill().expect("SIGKILL");
                let _ = child.wait();
                kills += 1;
            }
        }
        if attempt == 39 {
            let o = run(&dir, &args);
            assert!(o.status.success(), "{}", stderr(&o));
        }
    }
    // A last run to make sure the job completed (it says so when it did already).
    let last = run(&dir, &args);
    assert!(last.status.success(), "{}", stderr(&last));
    assert!(
        stderr(&last).contains("already ran to the end"),
        "{}",
        stderr(&last)
    );
    let (a, b) = (outputs(&dir, "a"), outputs(&dir, "b"));
    assert!(!a[0].is_empty() && !a[1].is_empty() && !a[2].is_empty());
    for (i, what) in ["results", "late output", "dead letters"]
        .iter()
        .enumerate()
    {
        assert!(
            a[i] == b[i],
            "{name}: {what} differ after {kills} kills ({} vs {} bytes)",
            a[i].len(),
            b[i].len()
        );
    }
    let _ = fs::remove_dir_all(&dir);
    kills
}

#[test]
fn killed_native_sliding_job_resumes_to_identical_outputs() {
    let kills = killed_until_done(
        "native",
        &["--window", "sliding:600ms:100ms", "--agg", "sum"],
    );
    assert!(kills >= 2, "only {kills} kills hit a running job");
}

#[test]
fn killed_session_job_resumes_to_identical_outputs() {
    let kills = killed_until_done(
        "session",
        &[
            "--window",
            "session:20ms",
            "--agg",
            "max",
            "--allowed-lateness",
            "30ms",
        ],
    );
    assert!(kills >= 2, "only {kills} kills hit a running job");
}

#[test]
fn killed_job_over_two_inputs_resumes_to_identical_outputs() {
    // Two files are aligned by their watermarks (issue #16, item 8), so that the job's output
    // depends only on the data, and a resumed run ends as an uninterrupted one.
    let kills = killed_until_done(
        "two-inputs",
        &[
            "--input",
            "in2.csv",
            "--window",
            "sliding:300ms:100ms",
            "--agg",
            "count",
        ],
    );
    assert!(kills >= 2, "only {kills} kills hit a running job");
}

#[test]
fn killed_sliced_job_resumes_to_identical_outputs() {
    let kills = killed_until_done(
        "sliced",
        &[
            "--window",
            "sliding:900ms:30ms",
            "--agg",
            "mean",
            "--strategy",
            "sliced",
        ],
    );
    assert!(kills >= 2, "only {kills} kills hit a running job");
}

/// A job run to the end with checkpoints, in a fresh directory: (dir, args).
fn finished_job(name: &str) -> (PathBuf, Vec<String>) {
    let dir = scratch(name);
    write_input(&dir.join("in.csv"), 3_000);
    let mut args: Vec<String> = job("b", &["--window", "tumbling:50ms"])
        .into_iter()
        .map(str::to_owned)
        .collect();
    args.extend(["--checkpoint-dir", "ckpt", "--checkpoint-interval", "1ms"].map(String::from));
    let o = run(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("checkpoints taken:"), "{}", stderr(&o));
    (dir, args)
}

fn checkpoint_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir.join("ckpt"))
        .expect("checkpoint dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "wcp"))
        .collect();
    files.sort();
    files
}

#[test]
fn a_checkpoint_of_another_job_is_refused_and_nothing_is_written() {
    let (dir, mut args) = finished_job("other");
    let before = outputs(&dir, "b");
    let window = args
        .iter()
        .position(|a| a == "tumbling:50ms")
        .expect("window");
    args[window] = "tumbling:70ms".to_owned();
    let o = run(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>());
    // A usage error, as a resume without --workers of a --workers checkpoint is.
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("is of another job") && err.contains("assigner"),
        "{err}"
    );
    assert!(err.contains("50") && err.contains("70"), "{err}");
    assert_eq!(outputs(&dir, "b"), before, "nothing may be written");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_finished_job_is_not_run_twice() {
    let (dir, args) = finished_job("finished");
    let before = outputs(&dir, "b");
    let o = run(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("already ran to the end"),
        "{}",
        stderr(&o)
    );
    assert_eq!(outputs(&dir, "b"), before);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn damaged_checkpoints_are_skipped_or_refused_never_used() {
    let (dir, args) = finished_job("damaged");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let files = checkpoint_files(&dir);
    assert_eq!(files.len(), 3, "the newest three are kept: {files:?}");
    // The newest (the finished one) torn: the one before it is used, and the job runs its
    // tail again to the same outputs.
    let expected = outputs(&dir, "b");
    let newest = files.last().expect("a checkpoint");
    let bytes = fs::read(newest).expect("read");
    fs::write(newest, &bytes[..bytes.len() / 2]).expect("tear");
    let o = run(&dir, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("damaged checkpoint skipped") && err.contains("torn"),
        "{err}"
    );
    assert_eq!(outputs(&dir, "b"), expected);
    // Every checkpoint with a flipped byte: refused, nothing written.
    for f in checkpoint_files(&dir) {
        let mut bytes = fs::read(&f).expect("read");
        let at = bytes.len() - 3;
        bytes[at] ^= 0x40;
        fs::write(&f, bytes).expect("flip");
    }
    let o = run(&dir, &args);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("no valid checkpoint") && err.contains("checksum mismatch"),
        "{err}"
    );
    assert_eq!(outputs(&dir, "b"), expected);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn sigterm_stops_at_a_batch_boundary_with_a_checkpoint_and_the_job_resumes() {
    let dir = scratch("sigterm");
    write_input(&dir.join("in.csv"), 60_000);
    let extra = ["--window", "sliding:600ms:100ms"];
    let plain = run(&dir, &job("a", &extra));
    assert!(plain.status.success(), "{}", stderr(&plain));
    let mut args = job("b", &extra);
    args.extend(["--checkpoint-dir", "ckpt", "--checkpoint-interval", "1h"]);
    let child = command(&dir, &args).spawn().expect("windowctl starts");
    // Once the first checkpoint is written the signal handlers are in place (they are
    // registered first): a signal sent before could find the process still starting.
    let first = dir.join("ckpt/checkpoint-0000000001.wcp");
    let started = Instant::now();
    while !first.exists() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(30));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let o = child.wait_with_output().expect("output");
    let err = stderr(&o);
    if o.status.code() == Some(143) {
        assert!(
            err.contains("stopped by SIGTERM") && err.contains("checkpoints taken: 2"),
            "{err}"
        );
        assert!(err.contains("events read"), "the summary is printed: {err}");
        let results = fs::read_to_string(dir.join("b.csv")).expect("results");
        assert!(results.ends_with('\n'), "the last row is whole");
        let o = run(&dir, &args);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("resumed from checkpoint 2"),
            "{}",
            stderr(&o)
        );
    } else {
        // The job was done before the signal came (a fast machine).
        assert!(o.status.success(), "{err}");
    }
    assert_eq!(outputs(&dir, "a"), outputs(&dir, "b"));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn stdin_and_stdout_are_refused_with_checkpoints() {
    let dir = scratch("refused");
    write_input(&dir.join("in.csv"), 10);
    let o = run(
        &dir,
        &["--input", "-", "--output", "o.csv", "--checkpoint-dir", "c"],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("stdin cannot be replayed"),
        "{}",
        stderr(&o)
    );
    // A FIFO named as a path is read once, as stdin: refused before it is opened (no writer
    // here: opening it would wait).
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("fifo"))
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let o = run(
        &dir,
        &[
            "--input",
            "fifo",
            "--output",
            "o.csv",
            "--checkpoint-dir",
            "c",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("fifo is not a regular file (a pipe or a FIFO)"),
        "{}",
        stderr(&o)
    );
    let o = run(&dir, &["--input", "in.csv", "--checkpoint-dir", "c"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("stdout cannot be cut back"),
        "{}",
        stderr(&o)
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_second_run_on_a_directory_in_use_is_refused() {
    let (dir, args) = finished_job("locked");
    let before = outputs(&dir, "b");
    // Hold the directory's lock as a running job does.
    let lock = fs::File::open(dir.join("ckpt/lock")).expect("the lock file exists");
    lock.try_lock().expect("not held by anyone now");
    let o = run(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("another windowctl run is using it"),
        "{}",
        stderr(&o)
    );
    assert_eq!(outputs(&dir, "b"), before);
    drop(lock);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn the_same_command_from_another_folder_is_another_job() {
    let (dir, args) = finished_job("elsewhere");
    let ckpt = dir.join("ckpt").display().to_string();
    let input = dir.join("in.csv").display().to_string();
    let elsewhere = dir.join("elsewhere");
    fs::create_dir_all(&elsewhere).expect("folder");
    let mut args: Vec<String> = args;
    for (from, to) in [("ckpt", ckpt.as_str()), ("in.csv", input.as_str())] {
        let at = args.iter().position(|a| a == from).expect("argument");
        args[at] = to.to_owned();
    }
    let o = run(
        &elsewhere,
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("is of another job: its output is"), "{err}");
    assert!(!elsewhere.join("b.csv").exists(), "nothing written there");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_finished_job_whose_output_was_removed_says_so() {
    let (dir, args) = finished_job("removed");
    fs::remove_file(dir.join("b.csv")).expect("remove");
    let o = run(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("already ran to the end") && err.contains("b.csv cannot be read"),
        "{err}"
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_checkpoint_with_bytes_after_its_body_is_damaged() {
    let (dir, args) = finished_job("trailing");
    let newest = checkpoint_files(&dir).pop().expect("a checkpoint");
    let mut bytes = fs::read(&newest).expect("read");
    bytes.push(0);
    let body_len = (bytes.len() - 24) as u64;
    bytes[12..20].copy_from_slice(&body_len.to_le_bytes());
    let crc = crc32fast::hash(&bytes[24..]);
    bytes[20..24].copy_from_slice(&crc.to_le_bytes());
    fs::write(&newest, bytes).expect("write");
    let o = run(&dir, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 bytes after its body"),
        "{}",
        stderr(&o)
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn devices_and_an_interval_without_a_directory_are_refused() {
    let dir = scratch("device");
    write_input(&dir.join("in.csv"), 10);
    let o = run(
        &dir,
        &[
            "--input",
            "in.csv",
            "--output",
            "/dev/null",
            "--checkpoint-dir",
            "c",
        ],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("/dev/null is not a regular file"),
        "{}",
        stderr(&o)
    );
    let o = run(
        &dir,
        &[
            "--input",
            "in.csv",
            "--output",
            "o.csv",
            "--checkpoint-interval",
            "1s",
        ],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--checkpoint-interval needs --checkpoint-dir"),
        "{}",
        stderr(&o)
    );
    let _ = fs::remove_dir_all(&dir);
}
