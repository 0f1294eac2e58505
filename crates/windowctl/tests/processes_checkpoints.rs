//! Issue #14 item 4 across processes: `--checkpoint-dir` with `--processes`. Process 0 holds the
//! checkpoints (with the outputs): every worker of every process sends its key groups' parts of
//! a cut to process 0's writer, keys by text. A cluster stopped right after a chosen checkpoint
//! resumes as a cluster, or as one process with another worker count, and one process's
//! checkpoint resumes as a cluster: the results, late output and dead letters end byte-identical
//! to an uninterrupted one-process run's. A rerun of a finished job ends every process at once;
//! a process started without the checkpoint flags is refused, naming them.

mod common;

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::ckpt::{self, assert_same, input, outputs};
use common::{run_in, stderr, strings, wait, Reaper, Rng};

/// A random job with its outputs, bad lines skipped to the dead letters.
fn job(rng: &mut Rng) -> Vec<String> {
    let mut a = ckpt::job(rng);
    a.extend(strings(&["--on-error", "skip"]));
    for (flag, file) in [
        ("--output", "out.csv"),
        ("--late-output", "late.csv"),
        ("--dead-letter", "dead.csv"),
    ] {
        a.extend(strings(&[flag, file]));
    }
    a
}

fn with(job: &[String], more: &[&str]) -> Vec<String> {
    let mut a = job.to_vec();
    a.extend(strings(more));
    a
}

const CHECKPOINTS: [&str; 4] = ["--checkpoint-dir", "ckpt", "--checkpoint-interval", "1ms"];

/// `job` with checkpoints, run as one process of `workers` workers in `dir` up to its
/// checkpoint `n`, where it crashes (exit 86); returns the checkpointed job.
fn checkpointed_then_crashed(dir: &Path, job: &[String], workers: &str, n: u64) -> Vec<String> {
    let ckpt = with(job, &CHECKPOINTS);
    let one = run_in(dir, &with(&ckpt, &["--workers", workers]), &env(Some(n)));
    assert_eq!(code(&one), Some(86), "{}", stderr(&one));
    ckpt
}

fn env(crash_after: Option<u64>) -> Vec<(&'static str, String)> {
    let mut e = vec![
        ("WINDOWCTL_CHUNK_BYTES", "600".to_string()),
        // Rows in pieces (process 0), with the cut's parts in each chunk's last block.
        ("WINDOWCTL_ROWS_AHEAD", "20".to_string()),
        ("WINDOWCTL_CONNECT_TIMEOUT_MS", "30000".to_string()),
    ];
    if let Some(n) = crash_after {
        e.push(("WINDOWCTL_CRASH_AFTER_CHECKPOINTS", n.to_string()));
    }
    e
}

/// A hostfile of two free loopback ports in `dir`.
fn hostfile(dir: &Path) -> PathBuf {
    let port = || {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let path = dir.join("hosts.txt");
    fs::write(
        &path,
        format!("127.0.0.1:{}\n127.0.0.1:{}\n", port(), port()),
    )
    .expect("hosts");
    path
}

/// Runs `args` as processes 0 (in `dirs[0]`, with `crash_after` for it) and 1 (in `dirs[1]`)
/// of a cluster, `workers` each; returns both outputs.
fn cluster(dirs: [&Path; 2], args: &[String], workers: u32, crash: Option<u64>) -> [Output; 2] {
    let args = with(args, &["--workers", &workers.to_string()]);
    cluster_of([&args, &args], dirs, crash)
}

/// Runs processes 0 and 1 of a cluster, each with its own `args` in its own directory (process
/// 0 with `crash_after`); returns both outputs.
fn cluster_of(args: [&[String]; 2], dirs: [&Path; 2], crash: Option<u64>) -> [Output; 2] {
    let hosts = hostfile(dirs[0]);
    let mut reaper = Reaper(Vec::new());
    for process in [1usize, 0] {
        let mut all = with(args[process], &["--no-progress", "--processes", "2"]);
        all.extend(strings(&["--process", &process.to_string()]));
        all.extend(["--hostfile".to_string(), hosts.display().to_string()]);
        let mut c = Command::new(env!("CARGO_BIN_EXE_windowctl"));
        c.current_dir(dirs[process]).arg("run").args(&all);
        for (k, v) in env(if process == 0 { crash } else { None }) {
            c.env(k, v);
        }
        let child = c
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        reaper.0.push(child);
    }
    let p0 = wait(reaper.0.pop().expect("p0"), 120);
    let p1 = wait(reaper.0.pop().expect("p1"), 120);
    [p0, p1]
}

/// Fresh directories for process 0 and process 1, each with the input.
fn dirs(name: &str, text: &str) -> [PathBuf; 2] {
    [0, 1].map(|p| {
        let d = common::scratch_dir("procs-ckpt", &format!("{name}-p{p}"));
        fs::write(d.join("in.csv"), text).expect("input");
        d
    })
}

fn code(o: &Output) -> Option<i32> {
    o.status.code()
}

#[test]
fn a_cluster_stopped_after_a_checkpoint_resumes_with_any_layout_and_writes_the_same_bytes() {
    let mut rng = Rng(0x5eed_c1a5);
    for round in 0..4 {
        let (lines, keys) = (1500 + rng.below(1500) as usize, 2 + rng.below(40));
        let text = input(&mut rng, lines, keys);
        let mut job = job(&mut rng);
        let [d0, d1] = dirs(&format!("r{round}"), &text);
        // The uninterrupted one-process run.
        let base_dir = common::scratch_dir("procs-ckpt", &format!("r{round}-base"));
        fs::write(base_dir.join("in.csv"), &text).expect("input");
        if round == 3 {
            // Two inputs, merged in event time: the cut holds where each stands.
            let second = input(&mut rng, 1200, keys);
            for d in [&d0, &d1, &base_dir] {
                fs::write(d.join("in2.csv"), &second).expect("input");
            }
            job.extend(strings(&["--input", "in2.csv"]));
        }
        let base = run_in(&base_dir, &with(&job, &["--workers", "1"]), &env(None));
        assert_eq!(code(&base), Some(0), "{job:?}: {}", stderr(&base));
        let base = outputs(&base_dir);
        assert!(!base[0].is_empty(), "{job:?}: no results");

        // A cluster with checkpoints, process 0 gone right after checkpoint `n`.
        let n = 2 + rng.below(4);
        let ckpt = with(&job, &CHECKPOINTS);
        let workers = 1 + rng.below(2) as u32;
        let [p0, p1] = cluster([&d0, &d1], &ckpt, workers, Some(n));
        assert_eq!(code(&p0), Some(86), "{job:?}: process 0: {}", stderr(&p0));
        assert_ne!(code(&p1), Some(0), "{job:?}: process 1 went on alone");
        assert!(
            !fs::exists(d1.join("ckpt")).unwrap_or(false)
                || fs::read_dir(d1.join("ckpt")).unwrap().next().is_none(),
            "process 1 wrote checkpoints"
        );

        // Resumed: as a cluster (other workers), or as one process with 3 workers.
        if round % 2 == 0 {
            let [p0, p1] = cluster([&d0, &d1], &ckpt, 3 - workers, None);
            assert_eq!(code(&p0), Some(0), "{job:?}: process 0: {}", stderr(&p0));
            assert_eq!(code(&p1), Some(0), "{job:?}: process 1: {}", stderr(&p1));
            assert!(stderr(&p0).contains("resum"), "{}", stderr(&p0));
        } else {
            let o = run_in(&d0, &with(&ckpt, &["--workers", "3"]), &env(None));
            assert_eq!(code(&o), Some(0), "{job:?}: {}", stderr(&o));
        }
        assert_same(&format!("round {round}, {job:?}"), &outputs(&d0), &base);
    }
}

#[test]
fn one_process_checkpoint_resumes_as_a_cluster_and_a_finished_job_ends_every_process() {
    let mut rng = Rng(0x0c1a_5e42);
    let text = input(&mut rng, 2500, 25);
    let job = job(&mut rng);
    let [d0, d1] = dirs("one-to-two", &text);
    let base_dir = common::scratch_dir("procs-ckpt", "one-to-two-base");
    fs::write(base_dir.join("in.csv"), &text).expect("input");
    let base = run_in(&base_dir, &with(&job, &["--workers", "2"]), &env(None));
    assert_eq!(code(&base), Some(0), "{}", stderr(&base));
    let base = outputs(&base_dir);

    let ckpt = checkpointed_then_crashed(&d0, &job, "2", 3);
    let [p0, p1] = cluster([&d0, &d1], &ckpt, 1, None);
    assert_eq!(code(&p0), Some(0), "process 0: {}", stderr(&p0));
    assert_eq!(code(&p1), Some(0), "process 1: {}", stderr(&p1));
    assert_same(&format!("{job:?}"), &outputs(&d0), &base);

    // Run again: the job finished; both processes end at once, process 1 saying so.
    let [p0, p1] = cluster([&d0, &d1], &ckpt, 1, None);
    assert_eq!(code(&p0), Some(0), "process 0: {}", stderr(&p0));
    assert_eq!(code(&p1), Some(0), "process 1: {}", stderr(&p1));
    assert!(
        stderr(&p1).contains("ran to its end; nothing to do"),
        "{}",
        stderr(&p1)
    );
    assert_same("after the rerun", &outputs(&d0), &base);
}

#[test]
fn a_process_without_the_checkpoint_flags_is_refused_naming_them() {
    let mut rng = Rng(0xf1a9);
    let text = input(&mut rng, 300, 5);
    let job = job(&mut rng);
    let [d0, d1] = dirs("flags", &text);
    // Process 1 without the checkpoint flags, process 0 with them.
    let plain = with(&job, &["--workers", "1"]);
    let checkpointed = with(&plain, &CHECKPOINTS);
    let [p0, p1] = cluster_of([&checkpointed, &plain], [&d0, &d1], None);
    for (p, o) in [(0, &p0), (1, &p1)] {
        assert_ne!(code(o), Some(0), "process {p} ran: {}", stderr(o));
    }
    let both = format!("{}\n{}", stderr(&p0), stderr(&p1));
    assert!(
        both.contains("checkpoints (--checkpoint-dir, --checkpoint-interval)"),
        "{both}"
    );
}

#[test]
fn process_0_that_cannot_resume_tells_the_others_why() {
    let mut rng = Rng(0x0dd_10b5);
    let text = input(&mut rng, 1500, 10);
    let job = job(&mut rng);
    let [d0, d1] = dirs("refusal", &text);
    let ckpt = checkpointed_then_crashed(&d0, &job, "1", 2);
    // Another job on the same directory: process 0 refuses it, and process 1 (waiting to hear
    // where the job starts) fails at once with process 0's reason, not at its connect timeout.
    let at = ckpt.iter().position(|a| a == "--window").expect("window") + 1;
    let mut other = ckpt.clone();
    other[at] = "tumbling:999ms".into();
    let started = std::time::Instant::now();
    let [p0, p1] = cluster([&d0, &d1], &other, 1, None);
    assert_eq!(code(&p0), Some(2), "process 0: {}", stderr(&p0));
    assert!(stderr(&p0).contains("is of another job"), "{}", stderr(&p0));
    assert_eq!(code(&p1), Some(1), "process 1: {}", stderr(&p1));
    assert!(
        stderr(&p1).contains("process 0 stopped the job") && stderr(&p1).contains("another job"),
        "{}",
        stderr(&p1)
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(25),
        "{:?}",
        started.elapsed()
    );
}
