//! Issue #14 item 4: checkpoints per key group under `--workers`. A job checkpointed with N
//! workers, stopped partway (a crash right after a chosen checkpoint, or `kill -9` at a random
//! moment), resumes with M != N workers (and another chunk size), and its results, late output
//! and dead letters end byte-identical to an uninterrupted run's. Random jobs of every strategy,
//! with disorder, allowed lateness and bad lines; and the checkpoints that must be refused.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::ckpt::{assert_same, input, job, outputs};
use common::Rng;

fn scratch(name: &str) -> PathBuf {
    common::scratch_dir("workers-ckpt", name)
}

fn command(dir: &Path, args: &[String], env: &[(&str, String)]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_windowctl"));
    c.current_dir(dir)
        .arg("run")
        .arg("--no-progress")
        .args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

fn run(dir: &Path, args: &[String], env: &[(&str, String)]) -> Output {
    command(dir, args, env).output().expect("windowctl runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The job's arguments with its outputs, `workers` and, with `dir`, checkpoints.
fn full(job: &[String], workers: u32, checkpoints: bool) -> Vec<String> {
    let mut a = job.to_vec();
    for (flag, file) in [
        ("--output", "out.csv"),
        ("--late-output", "late.csv"),
        ("--dead-letter", "dead.csv"),
    ] {
        a.extend([flag.to_string(), file.to_string()]);
    }
    a.extend(["--on-error".into(), "skip".into()]);
    a.extend(["--workers".into(), workers.to_string()]);
    if checkpoints {
        a.extend(["--checkpoint-dir".into(), "ckpt".into()]);
        a.extend(["--checkpoint-interval".into(), "1ms".into()]);
    }
    a
}

fn chunk(bytes: u64) -> Vec<(&'static str, String)> {
    // Rows in pieces, with the cut's parts in each chunk's last block.
    vec![
        ("WINDOWCTL_CHUNK_BYTES", bytes.to_string()),
        ("WINDOWCTL_ROWS_AHEAD", "20".to_string()),
    ]
}

#[test]
fn a_job_checkpointed_with_n_workers_resumes_with_m_and_writes_the_same_bytes() {
    let dir = scratch("resume");
    let mut resumed = 0;
    for (seed, (n, m)) in (0..9u64).zip([(1, 3), (2, 1), (3, 2)].into_iter().cycle()) {
        let mut rng = Rng(1000 + seed);
        let lines = 300 + rng.below(500) as usize;
        let keys = 1 + rng.below(20);
        fs::write(dir.join("in.csv"), input(&mut rng, lines, keys)).expect("input");
        let job = job(&mut rng);
        let what = format!("seed {seed} ({n} -> {m} workers): {}", job.join(" "));
        for f in ["out.csv", "late.csv", "dead.csv"] {
            let _ = fs::remove_file(dir.join(f));
        }
        let _ = fs::remove_dir_all(dir.join("ckpt"));
        let o = run(&dir, &full(&job, 1, false), &[]);
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        let base = outputs(&dir);
        // The dead-letter file is appended to (across runs, as without --workers): start afresh.
        fs::remove_file(dir.join("dead.csv")).expect("remove");
        // Stopped right after checkpoint k (the first one is taken before anything is read).
        let mut env = chunk(80 + rng.below(200));
        env.push((
            "WINDOWCTL_CRASH_AFTER_CHECKPOINTS",
            (2 + rng.below(12)).to_string(),
        ));
        let o = run(&dir, &full(&job, n, true), &env);
        let crashed = o.status.code() == Some(86);
        assert!(crashed || o.status.success(), "{what}: {}", stderr(&o));
        let resume_env = chunk(100 + rng.below(900));
        let what = format!("{what} (stopped with {env:?}, resumed with {resume_env:?})");
        let o = run(&dir, &full(&job, m, true), &resume_env);
        assert!(o.status.success(), "{what}: resume: {}", stderr(&o));
        if crashed {
            assert!(stderr(&o).contains("resumed from checkpoint"), "{what}");
            resumed += 1;
        }
        let got = outputs(&dir);
        assert_same(&what, &got, &base);
        // A rerun of the finished job writes nothing.
        let o = run(&dir, &full(&job, n, true), &[]);
        assert!(stderr(&o).contains("already ran to the end"), "{what}");
        assert!(outputs(&dir) == base, "{what}: rerun changed the outputs");
    }
    assert!(
        resumed >= 6,
        "only {resumed} runs resumed from a checkpoint"
    );
}

#[test]
fn a_job_killed_at_random_moments_resumes_with_other_worker_counts() {
    let dir = scratch("kill");
    let mut rng = Rng(77);
    fs::write(dir.join("in.csv"), input(&mut rng, 2500, 30)).expect("input");
    let job: Vec<String> = [
        "--input",
        "in.csv",
        "--window",
        "sliding:60ms:20ms",
        "--strategy",
        "sliced",
        "--agg",
        "sum",
        "--out-of-orderness",
        "15ms",
        "--allowed-lateness",
        "40ms",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = run(&dir, &full(&job, 2, false), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let base = outputs(&dir);
    for f in ["out.csv", "late.csv", "dead.csv"] {
        fs::remove_file(dir.join(f)).expect("remove");
    }
    // How long an uninterrupted checkpointed run takes, the shorter of two (in a directory of
    // its own): kills at fixed delays missed every run once the job got faster than them.
    let timing = dir.join("timing");
    fs::create_dir_all(&timing).expect("timing dir");
    fs::copy(dir.join("in.csv"), timing.join("in.csv")).expect("copy input");
    let mut whole = Duration::MAX;
    for _ in 0..2 {
        let _ = fs::remove_dir_all(timing.join("ckpt"));
        let started = Instant::now();
        let o = run(&timing, &full(&job, 3, true), &chunk(200));
        assert!(o.status.success(), "{}", stderr(&o));
        whole = whole.min(started.elapsed());
    }
    // Killed (SIGKILL) after a random part of that, then resumed with the next worker count,
    // until a run finishes.
    let mut kills = 0;
    for (round, workers) in [3, 1, 2, 3, 1, 2, 3, 1].into_iter().enumerate() {
        let mut child = command(&dir, &full(&job, workers, true), &chunk(200))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starts");
        let part = 0.1 + 0.6 * rng.below(1000) as f64 / 1000.0;
        std::thread::sleep(whole.mul_f64(part));
        if round < 6 && child.try_wait().expect("wait").is_none() {
            child.kill().expect("kill");
            kills += 1;
        }
        let status = child.wait().expect("wait");
        if status.success() {
            break;
        }
    }
    let o = run(&dir, &full(&job, 2, true), &[]);
    assert!(
        o.status.success() && stderr(&o).contains("already ran to the end"),
        "{}",
        stderr(&o)
    );
    assert!(kills >= 1, "no run was killed");
    assert!(outputs(&dir) == base, "outputs differ after {kills} kills");
}

#[test]
fn checkpoints_that_do_not_fit_are_refused() {
    let dir = scratch("refused");
    let mut rng = Rng(5);
    fs::write(dir.join("in.csv"), input(&mut rng, 400, 5)).expect("input");
    let job: Vec<String> = [
        "--input",
        "in.csv",
        "--window",
        "tumbling:50ms",
        "--agg",
        "sum",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let crash = vec![
        ("WINDOWCTL_CHUNK_BYTES", "100".to_string()),
        ("WINDOWCTL_CRASH_AFTER_CHECKPOINTS", "3".to_string()),
    ];
    assert_eq!(
        run(&dir, &full(&job, 2, true), &crash).status.code(),
        Some(86)
    );
    // Another job on the same directory.
    let mut other = job.clone();
    other[3] = "tumbling:60ms".into();
    let o = run(&dir, &full(&other, 2, true), &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is of another job"), "{}", stderr(&o));
    // A run without --workers cannot resume it.
    let mut single = full(&job, 1, true);
    let at = single.iter().position(|a| a == "--workers").expect("flag");
    single.drain(at..at + 2);
    let o = run(&dir, &single, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("add --workers"), "{}", stderr(&o));
    // Every checkpoint damaged: no resume from bad state.
    for e in fs::read_dir(dir.join("ckpt")).expect("dir").flatten() {
        if e.file_name().to_string_lossy().ends_with(".wcp") {
            let mut bytes = fs::read(e.path()).expect("read");
            let last = bytes.len() - 1;
            bytes[last] ^= 0xFF;
            fs::write(e.path(), bytes).expect("write");
        }
    }
    let o = run(&dir, &full(&job, 3, true), &[]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no valid checkpoint to resume from"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_signal_takes_a_last_checkpoint_that_another_worker_count_resumes() {
    let dir = scratch("signal");
    let mut rng = Rng(31);
    fs::write(dir.join("in.csv"), input(&mut rng, 6000, 40)).expect("input");
    let job: Vec<String> = [
        "--input",
        "in.csv",
        "--window",
        "sliding:80ms:20ms",
        "--agg",
        "mean",
        "--out-of-orderness",
        "10ms",
        "--allowed-lateness",
        "30ms",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = run(&dir, &full(&job, 1, false), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let base = outputs(&dir);
    fs::remove_file(dir.join("dead.csv")).expect("remove");
    // Only the first checkpoint (before anything is read) and the one at the signal: an
    // interval longer than the run.
    let mut args = full(&job, 2, true);
    let at = args.iter().position(|a| a == "1ms").expect("interval");
    args[at] = "1h".into();
    let child = command(&dir, &args, &chunk(150))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    // The signal handlers are in place once the first checkpoint is written.
    let first = dir.join("ckpt/checkpoint-0000000001.wcp");
    let started = std::time::Instant::now();
    while !first.exists() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(150));
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let o = child.wait_with_output().expect("output");
    let err = stderr(&o);
    if o.status.code() == Some(143) {
        assert!(
            err.contains("stopped by SIGTERM") && err.contains("checkpointed"),
            "{err}"
        );
        let o = run(&dir, &full(&job, 3, true), &chunk(700));
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("resumed from checkpoint 2"),
            "the checkpoint taken at the signal: {}",
            stderr(&o)
        );
    } else {
        // The job was done before the signal came (a fast machine).
        assert!(o.status.success(), "{err}");
    }
    assert!(outputs(&dir) == base, "outputs differ after the signal");
}

/// The test hook that stops a run after its N-th checkpoint never fires on the last one, which
/// marks the job as finished: a run whose N-th checkpoint is its last ends normally (exit 0), and
/// a rerun says the job already ran to the end. (CI once stopped a run there with exit 86 and the
/// resume, finding a finished job, did not resume.)
#[test]
fn the_crash_hook_never_stops_a_job_at_its_last_checkpoint() {
    let dir = scratch("last");
    let mut rng = Rng(5);
    fs::write(dir.join("in.csv"), input(&mut rng, 200, 5)).expect("input");
    let job: Vec<String> = ["--input", "in.csv", "--window", "tumbling:50ms"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    // One chunk holds the whole input and the interval is an hour: the first checkpoint (before
    // anything is read) and the last one (finished) are all there are.
    let mut args = full(&job, 2, true);
    *args.last_mut().expect("the interval") = "1h".into();
    let o = run(&dir, &args, &chunk(1 << 20));
    assert!(o.status.success(), "{}", stderr(&o));
    let taken = stderr(&o)
        .lines()
        .find_map(|l| l.strip_prefix("windowctl: checkpoints taken: "))
        .and_then(|l| l.split(' ').next())
        .map(|n| n.parse::<u64>().expect("a count"))
        .expect("the summary counts the checkpoints");
    let base = outputs(&dir);
    fs::remove_file(dir.join("dead.csv")).expect("remove");
    fs::remove_dir_all(dir.join("ckpt")).expect("remove");
    let mut env = chunk(1 << 20);
    env.push(("WINDOWCTL_CRASH_AFTER_CHECKPOINTS", taken.to_string()));
    let o = run(&dir, &args, &env);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(outputs(&dir) == base, "the outputs differ");
    let o = run(&dir, &args, &[]);
    assert!(
        stderr(&o).contains("already ran to the end"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_job_of_several_inputs_resumes_with_other_worker_counts() {
    // Two inputs merged in event time (each on its own time line, one of them later): a cut
    // holds where each stands in the merge, and a resume with another worker count reads each
    // on from there. The merge order depends on the chunk size: every run here uses the same.
    let dir = scratch("several");
    let mut resumed = 0;
    for (seed, (n, m)) in (0..6u64).zip([(2, 1), (1, 3), (3, 2)].into_iter().cycle()) {
        let mut rng = Rng(7000 + seed);
        let lines = 300 + rng.below(400) as usize;
        let (keys, other_keys) = (1 + rng.below(9), 1 + rng.below(9));
        fs::write(dir.join("in.csv"), input(&mut rng, lines, keys)).expect("in");
        let other = input(&mut rng, lines / 2, other_keys);
        // The second input starts later (its times shifted) on every other seed.
        let shift = if seed % 2 == 0 { 0 } else { 400 };
        let other: String = other
            .lines()
            .enumerate()
            .map(|(i, l)| match (i, l.split_once(',')) {
                (0, _) | (_, None) => format!("{l}\n"),
                (_, Some((t, rest))) => match t.parse::<i64>() {
                    Ok(t) => format!("{},{rest}\n", t + shift),
                    Err(_) => format!("{l}\n"),
                },
            })
            .collect();
        fs::write(dir.join("in2.csv"), other).expect("in2");
        let mut job = job(&mut rng);
        job.extend(["--input".to_string(), "in2.csv".to_string()]);
        let what = format!("seed {seed} ({n} -> {m} workers): {}", job.join(" "));
        for f in ["out.csv", "late.csv", "dead.csv"] {
            let _ = fs::remove_file(dir.join(f));
        }
        let _ = fs::remove_dir_all(dir.join("ckpt"));
        let env = chunk(80 + rng.below(200));
        let o = run(&dir, &full(&job, 1, false), &env);
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        let base = outputs(&dir);
        fs::remove_file(dir.join("dead.csv")).expect("remove");
        let mut crash = env.clone();
        let after = 2 + rng.below(10);
        crash.push(("WINDOWCTL_CRASH_AFTER_CHECKPOINTS", after.to_string()));
        let o = run(&dir, &full(&job, n, true), &crash);
        let crashed = o.status.code() == Some(86);
        assert!(crashed || o.status.success(), "{what}: {}", stderr(&o));
        let what = format!("{what} (stopped after checkpoint {after}, chunks {env:?})");
        let o = run(&dir, &full(&job, m, true), &env);
        assert!(o.status.success(), "{what}: resume: {}", stderr(&o));
        resumed += u32::from(crashed && stderr(&o).contains("resumed from checkpoint"));
        let got = outputs(&dir);
        assert_same(&what, &got, &base);
    }
    assert!(
        resumed >= 4,
        "only {resumed} runs resumed from a checkpoint"
    );
}

#[test]
fn a_cut_before_an_inputs_first_chunk_resumes_reading_its_header_as_a_header() {
    // A fresh-user trial: a checkpoint taken before input b's first chunk was merged (it was
    // read ahead, its header known) put that header in front of b's first chunk on the
    // resume, which then read b's own header line as a record (exit 1 on every rerun).
    let dir = scratch("header-cut");
    let mut a = String::from("event_time_ms,key,value\n");
    for i in 0..40_000 {
        a.push_str(&format!("{},k{},{}\n", i * 10, i % 200, i % 1000));
    }
    fs::write(dir.join("in.csv"), a).expect("a");
    fs::write(dir.join("b.csv"), "event_time_ms,key,value\n5,x,1\n").expect("b");
    fs::write(dir.join("c.csv"), "event_time_ms,key,value\n").expect("c");
    let job: Vec<String> = ["--input", "in.csv", "--input", "b.csv", "--input", "c.csv"]
        .iter()
        .chain(&["--window", "tumbling:10s", "--agg", "count"])
        .map(|s| s.to_string())
        .collect();
    let o = run(&dir, &full(&job, 1, false), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let base = outputs(&dir);
    fs::remove_file(dir.join("dead.csv")).expect("remove");
    let crash = [("WINDOWCTL_CRASH_AFTER_CHECKPOINTS", "2".to_string())];
    let o = run(&dir, &full(&job, 2, true), &crash);
    assert!(
        o.status.code() == Some(86) || o.status.success(),
        "{}",
        stderr(&o)
    );
    let o = run(&dir, &full(&job, 3, true), &[]);
    assert!(o.status.success(), "resume: {}", stderr(&o));
    assert!(outputs(&dir) == base, "outputs differ after the resume");
}
