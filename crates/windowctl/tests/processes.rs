//! Issue #14 items 2 and 7: `windowctl run --processes 2 --process I --hostfile FILE` on
//! 127.0.0.1. Process 0's results, late output and dead letters are byte-identical to the
//! one-process `--workers 1` run's; every process exits with the same code; the other process
//! creates no output file. A stray connection (garbage, or a hello of another job) makes process
//! 0 fail naming the remote address. The flags are refused when they do not fit.

mod common;

use std::fs;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn scratch(name: &str) -> PathBuf {
    common::scratch_dir("procs", name)
}

use common::{peak_states, wait, Reaper, Rng};

/// A CSV input with disorder, negative times, and (with `bad`) some bad lines.
fn input(rng: &mut Rng, lines: usize, keys: u64, bad: bool) -> String {
    let mut text = String::from("event_time_ms,key,value\n");
    let mut t: i64 = -300;
    for i in 0..lines {
        t += rng.below(7) as i64;
        let behind = match rng.below(10) {
            0 => rng.below(300) as i64,
            1 | 2 => rng.below(30) as i64,
            _ => 0,
        };
        if bad && rng.below(60) == 0 {
            text.push_str(&format!("{},k{},not-a-number{i}\n", t, rng.below(keys)));
            continue;
        }
        let value = rng.below(1000) as i64 - 300;
        text.push_str(&format!("{},k{},{value}\n", t - behind, rng.below(keys)));
    }
    text
}

/// A port free on 127.0.0.1 just now.
fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// A hostfile of `n` free loopback ports (with a comment and a blank line, which are skipped).
fn hostfile(dir: &Path, n: usize) -> (PathBuf, Vec<u16>) {
    let ports: Vec<u16> = (0..n).map(|_| free_port()).collect();
    let mut text = String::from("# the test's cluster\n");
    for p in &ports {
        text.push_str(&format!("127.0.0.1:{p}\n\n"));
    }
    let path = dir.join("hosts.txt");
    fs::write(&path, text).expect("hostfile");
    (path, ports)
}

fn command(dir: &Path, args: &[String]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_windowctl"));
    c.current_dir(dir)
        .arg("run")
        .arg("--no-progress")
        .args(args)
        .env("WINDOWCTL_CHUNK_BYTES", "700")
        // Process 0's workers send their chunks' rows in pieces; the other process's whole.
        .env("WINDOWCTL_ROWS_AHEAD", "20")
        .env("WINDOWCTL_CONNECT_TIMEOUT_MS", "30000");
    c
}

/// Runs `args` as two processes of `workers` workers each; every output under `tag`.
fn cluster(dir: &Path, args: &[String], workers: usize, tag: &str) -> [Output; 2] {
    let (hosts, _) = hostfile(dir, 2);
    let mut reaper = Reaper(Vec::new());
    for process in [1, 0] {
        let mut all = args.to_vec();
        all.extend(
            [
                "--output",
                &format!("out-{tag}-p{process}.csv"),
                "--late-output",
                &format!("late-{tag}-p{process}.csv"),
                "--workers",
                &workers.to_string(),
                "--processes",
                "2",
                "--process",
                &process.to_string(),
                "--hostfile",
            ]
            .map(String::from),
        );
        all.push(hosts.display().to_string());
        if args.iter().any(|a| a == "skip") {
            all.extend(["--dead-letter".into(), format!("dead-{tag}-p{process}.csv")]);
        }
        let child = command(dir, &all)
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

fn read(dir: &Path, name: &str) -> Option<String> {
    fs::read_to_string(dir.join(name)).ok()
}

#[test]
fn two_processes_write_the_one_process_output() {
    let dir = scratch("agree");
    let jobs: [&[&str]; 6] = [
        &[
            "--window",
            "sliding:60ms:20ms",
            "--strategy",
            "sliced",
            "--agg",
            "sum",
        ],
        &[
            "--window",
            "sliding:40ms:10ms",
            "--strategy",
            "native",
            "--agg",
            "max",
        ],
        &["--window", "session:15ms", "--agg", "count"],
        &[
            "--window",
            "tumbling:50ms",
            "--allowed-lateness",
            "40ms",
            "--agg",
            "mean",
        ],
        &[
            "--window",
            "tumbling:30ms",
            "--agg",
            "sum",
            "--on-error",
            "skip",
        ],
        // Two inputs, merged in event time by every process alike.
        &[
            "--input",
            "in2.csv",
            "--window",
            "tumbling:30ms",
            "--agg",
            "sum",
        ],
    ];
    for (seed, job) in jobs.iter().enumerate() {
        let mut rng = Rng(seed as u64 + 40);
        let bad = job.contains(&"skip");
        fs::write(dir.join("in.csv"), input(&mut rng, 1500, 23, bad)).expect("input");
        fs::write(dir.join("in2.csv"), input(&mut rng, 900, 7, false)).expect("input 2");
        let mut args: Vec<String> = ["--input", "in.csv", "--out-of-orderness", "8ms"]
            .map(String::from)
            .to_vec();
        args.extend(job.iter().map(|s| s.to_string()));
        let what = args.join(" ");
        let mut base = args.clone();
        base.extend(
            [
                "--workers",
                "1",
                "--output",
                "out-base.csv",
                "--late-output",
                "late-base.csv",
            ]
            .map(String::from),
        );
        let _ = fs::remove_file(dir.join("dead-base.csv"));
        if bad {
            base.extend(["--dead-letter".into(), "dead-base.csv".into()]);
        }
        let b = command(&dir, &base).output().expect("base runs");
        assert!(
            b.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&b.stderr)
        );
        for workers in [1, 2] {
            let tag = format!("j{seed}w{workers}");
            let [p0, p1] = cluster(&dir, &args, workers, &tag);
            for (p, o) in [(0, &p0), (1, &p1)] {
                assert!(
                    o.status.success(),
                    "{what} {tag} process {p}: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
            }
            for kind in ["out", "late", "dead"] {
                let base = read(&dir, &format!("{kind}-base.csv"));
                let got = read(&dir, &format!("{kind}-{tag}-p0.csv"));
                assert!(base == got, "{what} {tag}: {kind} differs");
                assert!(
                    read(&dir, &format!("{kind}-{tag}-p1.csv")).is_none(),
                    "{what} {tag}: process 1 made a {kind} file"
                );
            }
            let summary = String::from_utf8_lossy(&p0.stderr);
            assert!(
                summary.contains("events read") && summary.contains("2 processes"),
                "{summary}"
            );
            // The sum of every process's workers' peaks: at each chunk boundary the workers hold
            // together what one worker holds there, so the sum is at least one worker's peak,
            // and at most that times the workers.
            let all = 2 * workers as u64;
            let base_peak = peak_states(&String::from_utf8_lossy(&b.stderr)).expect("base peak");
            let peak = peak_states(&summary).expect("the peak state line");
            assert!(
                base_peak <= peak && peak <= all * base_peak && base_peak > 0,
                "{what} {tag}: {peak} against {base_peak}: {summary}"
            );
            assert!(
                summary.contains(&format!("the sum of the {all} workers' peaks")),
                "{summary}"
            );
        }
        assert!(
            read(&dir, "out-base.csv").is_some_and(|o| o.lines().count() > 20),
            "{what}: results"
        );
        if bad {
            assert!(
                read(&dir, "dead-base.csv").is_some_and(|o| o.lines().count() > 5),
                "{what}: dead letters"
            );
        }
    }
}

#[test]
fn a_failing_job_ends_every_process_with_the_same_code() {
    let dir = scratch("fail");
    let mut rng = Rng(5);
    let mut text = input(&mut rng, 1200, 9, false);
    // A bad line in the middle; --on-error fail (the default) stops the job there.
    let at = text.len() / 2;
    let cut = at + text[at..].find('\n').expect("a line end") + 1;
    text.insert_str(cut, "12,kx,oops\n");
    fs::write(dir.join("in.csv"), text).expect("input");
    let args: Vec<String> = [
        "--input",
        "in.csv",
        "--window",
        "tumbling:20ms",
        "--agg",
        "sum",
    ]
    .map(String::from)
    .to_vec();
    let mut base = args.clone();
    base.extend(["--workers", "1", "--output", "out-base.csv"].map(String::from));
    let b = command(&dir, &base).output().expect("base");
    assert_eq!(b.status.code(), Some(1));
    let [p0, p1] = cluster(&dir, &args, 2, "f");
    assert_eq!(
        p0.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&p0.stderr)
    );
    assert_eq!(
        p1.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&p1.stderr)
    );
    let e1 = String::from_utf8_lossy(&p1.stderr);
    assert!(
        e1.contains("process 0 stopped the job") && e1.contains("oops"),
        "{e1}"
    );
    assert_eq!(read(&dir, "out-base.csv"), read(&dir, "out-f-p0.csv"));
}

/// Starts process 0 of a two-process cluster and returns it with its port.
fn lone_process_0(dir: &Path) -> (Reaper, u16) {
    fs::write(dir.join("in.csv"), "event_time_ms,key,value\n1,a,1\n").expect("input");
    let (hosts, ports) = hostfile(dir, 2);
    let args: Vec<String> = [
        "--input",
        "in.csv",
        "--window",
        "tumbling:10ms",
        "--agg",
        "sum",
        "--output",
        "out.csv",
        "--processes",
        "2",
        "--process",
        "0",
        "--hostfile",
        &hosts.display().to_string(),
    ]
    .map(String::from)
    .to_vec();
    let child = command(dir, &args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    (Reaper(vec![child]), ports[0])
}

fn connect(port: u16) -> TcpStream {
    let start = Instant::now();
    loop {
        match TcpStream::connect(("127.0.0.1", port)) {
            Ok(s) => return s,
            Err(e) if start.elapsed() < Duration::from_secs(30) => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("process 0 does not listen: {e}"),
        }
    }
}

#[test]
fn a_stray_connection_fails_the_process_naming_the_address() {
    let dir = scratch("stray");
    let (mut reaper, port) = lone_process_0(&dir);
    let mut s = connect(port);
    s.write_all(b"GET / HTTP/1.1\r\n\r\n").expect("write");
    let local = s.local_addr().expect("addr");
    let out = wait(reaper.0.pop().expect("child"), 60);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("connection from {local}")), "{err}");
    assert!(err.contains("not a window-timely process"), "{err}");

    // A hello of the right shape, but of another job.
    let (mut reaper, port) = lone_process_0(&dir);
    let mut s = connect(port);
    let mut hello = b"wndtmly\x01".to_vec();
    // The protocol version (window_timely::cluster::PROTOCOL_VERSION).
    hello.extend(3u32.to_le_bytes());
    hello.extend(0xdead_beefu64.to_le_bytes());
    hello.extend(2u32.to_le_bytes());
    hello.extend(1u32.to_le_bytes());
    // The input's size and checksum (of in.csv: 31 bytes), an empty job text.
    let text = b"event_time_ms,key,value\n1,a,1\n";
    hello.extend((text.len() as u64).to_le_bytes());
    let head = text.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    hello.extend(head.to_le_bytes());
    hello.extend(0u32.to_le_bytes());
    s.write_all(&hello).expect("write");
    let out = wait(reaper.0.pop().expect("child"), 60);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("runs another job"), "{err}");
}

#[test]
fn cluster_flags_that_do_not_fit_are_refused() {
    let dir = scratch("refused");
    fs::write(dir.join("in.csv"), "event_time_ms,key,value\n1,a,1\n").expect("input");
    let (hosts, _) = hostfile(&dir, 2);
    fs::write(dir.join("bad.txt"), "127.0.0.1:1\nnot-an-address\n").expect("hostfile");
    let hosts = hosts.display().to_string();
    let job = [
        "--window",
        "tumbling:10ms",
        "--agg",
        "sum",
        "--output",
        "out.csv",
    ];
    let cases: [(&[&str], &str); 6] = [
        (
            &[
                "--input",
                "-",
                "--processes",
                "2",
                "--process",
                "0",
                "--hostfile",
                &hosts,
            ],
            "cannot be stdin",
        ),
        (
            &[
                "--input",
                "in.csv",
                "--processes",
                "3",
                "--process",
                "0",
                "--hostfile",
                &hosts,
            ],
            "2 addresses for --processes 3",
        ),
        (
            &[
                "--input",
                "in.csv",
                "--processes",
                "2",
                "--process",
                "2",
                "--hostfile",
                &hosts,
            ],
            "--process 2: out of range",
        ),
        (
            &[
                "--input",
                "in.csv",
                "--processes",
                "2",
                "--process",
                "0",
                "--hostfile",
                "nope.txt",
            ],
            "--hostfile nope.txt",
        ),
        (
            &["--input", "in.csv", "--processes", "2", "--process", "0"],
            "needs --hostfile",
        ),
        (
            &[
                "--input",
                "in.csv",
                "--processes",
                "2",
                "--process",
                "1",
                "--hostfile",
                "bad.txt",
            ],
            "line 2: `not-an-address` is not host:port",
        ),
    ];
    for (args, message) in cases {
        let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        all.extend(job.iter().map(|s| s.to_string()));
        let out = command(&dir, &all)
            .stdin(Stdio::null())
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(!dir.join("out.csv").exists(), "{args:?}: made the output");
    }
}

/// Spawns process 1 and then process 0 of a two-process cluster on the hostfile `hosts`, each
/// in its own directory with its own arguments (besides the cluster flags); stdout piped.
fn spawn_pair(dirs: [&Path; 2], args: [&[String]; 2], hosts: &Path) -> Reaper {
    let mut reaper = Reaper(Vec::new());
    for process in [1, 0] {
        let mut all = args[process].to_vec();
        all.extend(
            [
                "--processes",
                "2",
                "--process",
                &process.to_string(),
                "--hostfile",
            ]
            .map(String::from),
        );
        all.push(hosts.display().to_string());
        let child = command(dirs[process], &all)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        reaper.0.push(child);
    }
    reaper
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// Waits for both processes of `reaper` (process 0 last spawned) at most `secs` seconds each.
fn wait_pair(mut reaper: Reaper, secs: u64) -> [Output; 2] {
    let p0 = wait(reaper.0.pop().expect("p0"), secs);
    let p1 = wait(reaper.0.pop().expect("p1"), secs);
    [p0, p1]
}

#[test]
fn a_process_with_another_input_or_late_output_is_refused_saying_what_differs() {
    let root = scratch("other-input");
    let dirs = [root.join("p0"), root.join("p1")];
    for d in &dirs {
        fs::create_dir_all(d).expect("dir");
    }
    let mut rng = Rng(77);
    let text = input(&mut rng, 600, 7, false);
    let mut job = strings(&["--input", "in.csv", "--window", "tumbling:20ms"]);
    job.extend(strings(&["--agg", "count", "--output", "out.csv"]));
    // Another file of the same name on process 1: shorter, then as long but with other bytes.
    let shorter = text[..text.len() - 40].to_string();
    let same_size = text.replacen("k1,", "k2,", 1);
    assert_eq!(same_size.len(), text.len());
    for (other, what) in [
        (
            &shorter,
            format!(
                "{} bytes here, {} bytes at process",
                text.len(),
                shorter.len()
            ),
        ),
        (&same_size, "first 64 KiB are not the same".to_string()),
    ] {
        fs::write(dirs[0].join("in.csv"), &text).expect("input");
        fs::write(dirs[1].join("in.csv"), other).expect("input");
        let (hosts, _) = hostfile(&root, 2);
        let reaper = spawn_pair([&dirs[0], &dirs[1]], [&job, &job], &hosts);
        let [p0, p1] = wait_pair(reaper, 30);
        for (p, o) in [(0, &p0), (1, &p1)] {
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "process {p}: {err}");
            assert!(err.contains("the input differs"), "process {p}: {err}");
        }
        let err0 = String::from_utf8_lossy(&p0.stderr);
        assert!(err0.contains(&what), "{err0}");
        assert!(
            read(&dirs[0], "out.csv").is_none_or(|o| o.lines().count() <= 1),
            "process 0 wrote results"
        );
    }

    // Two inputs, in another order on process 1 (the hello compared the first one only).
    for d in &dirs {
        fs::write(d.join("in.csv"), &text).expect("input");
        fs::write(d.join("in2.csv"), &shorter).expect("input 2");
    }
    let two = [job.clone(), strings(&["--input", "in2.csv"])].concat();
    let swapped = [strings(&["--input", "in2.csv"]), job.clone()].concat();
    let (hosts, _) = hostfile(&root, 2);
    let reaper = spawn_pair([&dirs[0], &dirs[1]], [&two, &swapped], &hosts);
    for (p, o) in wait_pair(reaper, 30).iter().enumerate() {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.code() == Some(1) && err.contains("the input differs"),
            "{p}: {err}"
        );
    }

    // --late-output on process 0 only: process 1's workers would drop the late elements.
    fs::write(dirs[1].join("in.csv"), &text).expect("input");
    let mut late = job.clone();
    late.extend(strings(&["--late-output", "late.csv"]));
    let (hosts, _) = hostfile(&root, 2);
    let reaper = spawn_pair([&dirs[0], &dirs[1]], [&late, &job], &hosts);
    let [p0, p1] = wait_pair(reaper, 30);
    for (p, o) in [(0, &p0), (1, &p1)] {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "process {p}: {err}");
        assert!(
            err.contains("runs another job") && err.contains("late elements (--late-output)"),
            "process {p}: {err}"
        );
    }
}

/// A job whose output is much larger than a pipe's or a write buffer's, and whose input is in
/// many chunks: process 0's output fails long before the end.
fn big_job(dir: &Path) -> Vec<String> {
    let mut rng = Rng(91);
    fs::write(dir.join("in.csv"), input(&mut rng, 30_000, 50, false)).expect("input");
    strings(&[
        "--input",
        "in.csv",
        "--window",
        "sliding:40ms:5ms",
        "--agg",
        "count",
        "--out-of-orderness",
        "8ms",
        "--workers",
        "1",
    ])
}

#[test]
fn process_0_that_cannot_write_ends_every_process() {
    let dir = scratch("cannot-write");
    let job = big_job(&dir);

    // A full disk: process 0 fails as on one process, process 1 says why.
    let mut full = job.clone();
    full.extend(strings(&["--output", "/dev/full"]));
    let (hosts, _) = hostfile(&dir, 2);
    let reaper = spawn_pair([&dir, &dir], [&full, &job], &hosts);
    let [p0, p1] = wait_pair(reaper, 30);
    let (e0, e1) = (
        String::from_utf8_lossy(&p0.stderr),
        String::from_utf8_lossy(&p1.stderr),
    );
    assert_eq!(p0.status.code(), Some(1), "{e0}");
    assert!(e0.contains("No space left on device"), "{e0}");
    assert_eq!(p1.status.code(), Some(1), "{e1}");
    assert!(
        e1.contains("process 0 stopped the job") && e1.contains("No space left on device"),
        "{e1}"
    );

    // `| head -2`: process 0 ends quietly with 0 (as on one process), process 1 with 1.
    let (hosts, _) = hostfile(&dir, 2);
    let mut reaper = spawn_pair([&dir, &dir], [&job, &job], &hosts);
    let stdout = reaper.0[1].stdout.take().expect("stdout");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stdout));
    for _ in 0..2 {
        lines.next().expect("a line").expect("read");
    }
    drop(lines);
    let [p0, p1] = wait_pair(reaper, 30);
    let (e0, e1) = (
        String::from_utf8_lossy(&p0.stderr),
        String::from_utf8_lossy(&p1.stderr),
    );
    assert_eq!(p0.status.code(), Some(0), "{e0}");
    assert!(!e0.contains("error"), "{e0}");
    assert_eq!(p1.status.code(), Some(1), "{e1}");
    assert!(e1.contains("process 0 stopped the job"), "{e1}");
}

/// Whether process `pid` catches SIGTERM (its handlers are installed; read from /proc).
fn catches_sigterm(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .is_some_and(|m| m & (1 << (15 - 1)) != 0)
    })
}

/// Starts process `first` of a two-process cluster on `job`, sends it SIGTERM once it catches
/// it (before the other process is started: it stops at its first chunk), then starts the
/// other one; returns both outputs, by process.
fn sigterm_before_the_other_starts(dir: &Path, job: &[String], first: usize) -> [Output; 2] {
    let (hosts, _) = hostfile(dir, 2);
    let start = |process: usize| {
        let mut all = job.to_vec();
        all.extend(strings(&[
            "--processes",
            "2",
            "--process",
            &process.to_string(),
            "--hostfile",
        ]));
        all.push(hosts.display().to_string());
        command(dir, &all)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn")
    };
    let mut reaper = Reaper(vec![start(first)]);
    let pid = reaper.0[0].id();
    let since = Instant::now();
    while !catches_sigterm(pid) {
        assert!(
            since.elapsed() < Duration::from_secs(20),
            "no SIGTERM handler"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let killed = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    reaper.0.push(start(1 - first));
    let other = wait(reaper.0.pop().expect("other"), 30);
    let signalled = wait(reaper.0.pop().expect("signalled"), 30);
    if first == 0 {
        [signalled, other]
    } else {
        [other, signalled]
    }
}

#[test]
fn sigterm_to_one_process_stops_every_process() {
    let dir = scratch("sigterm");
    let mut job = big_job(&dir);
    job.extend(strings(&["--output", "out.csv"]));

    // To process 0: it stops as on one process, process 1 says why.
    let [p0, p1] = sigterm_before_the_other_starts(&dir, &job, 0);
    let (e0, e1) = (
        String::from_utf8_lossy(&p0.stderr),
        String::from_utf8_lossy(&p1.stderr),
    );
    assert_eq!(p0.status.code(), Some(143), "{e0}");
    assert!(e0.contains("SIGTERM"), "{e0}");
    assert_eq!(p1.status.code(), Some(1), "{e1}");
    assert!(
        e1.contains("process 0 stopped the job: it was stopped by a signal"),
        "{e1}"
    );

    // To process 1: it exits with 143, process 0 with 1 saying why.
    let [p0, p1] = sigterm_before_the_other_starts(&dir, &job, 1);
    let (e0, e1) = (
        String::from_utf8_lossy(&p0.stderr),
        String::from_utf8_lossy(&p1.stderr),
    );
    assert_eq!(p1.status.code(), Some(143), "{e1}");
    assert_eq!(p0.status.code(), Some(1), "{e0}");
    assert!(
        e0.contains("process 1 stopped the job: it was stopped by a signal"),
        "{e0}"
    );
}

#[test]
fn inputs_that_differ_after_their_first_64_kib_fail_the_job_at_its_end() {
    let root = scratch("differ-late");
    let dirs = [root.join("p0"), root.join("p1")];
    for d in &dirs {
        fs::create_dir_all(d).expect("dir");
    }
    let mut job = big_job(&dirs[0]);
    job.extend(strings(&["--output", "out.csv"]));
    let text = fs::read_to_string(dirs[0].join("in.csv")).expect("input");
    assert!(text.len() > 100 << 10);
    // The same size and first 64 KiB: the hello cannot tell them apart.
    let at = text.len() - 1000;
    let at = at + text[at..].find(",k1,").expect("a k1") + 1;
    let mut other = text.clone();
    other.replace_range(at..at + 2, "k2");
    fs::write(dirs[1].join("in.csv"), other).expect("input");
    let (hosts, _) = hostfile(&root, 2);
    let reaper = spawn_pair([&dirs[0], &dirs[1]], [&job, &job], &hosts);
    let [p0, p1] = wait_pair(reaper, 30);
    for (p, o) in [(0, &p0), (1, &p1)] {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "process {p}: {err}");
        assert!(err.contains("read other input bytes"), "process {p}: {err}");
    }
}

/// A process killed (SIGKILL) mid-run: the other one exits 1 with one error line naming the
/// lost process and its address, not timely's panics and backtraces (it panicked on each
/// thread before: "timely communication error: reading data: socket closed", exit 101).
#[test]
fn a_process_killed_mid_run_makes_the_other_exit_1_naming_it() {
    let dir = scratch("killed");
    let job = big_job(&dir);
    for victim in [1, 0] {
        let (hosts, ports) = hostfile(&dir, 2);
        let mut reaper = spawn_pair([&dir, &dir], [&job, &job], &hosts);
        // Process 0 writes rows to stdout (a pipe read no further: it stalls there, mid-run).
        let stdout = reaper.0[1].stdout.take().expect("stdout");
        let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stdout));
        lines.next().expect("a row").expect("read");
        let killed = if victim == 0 { 1 } else { 0 };
        reaper.0[killed].kill().expect("SIGKILL");
        let other = wait(reaper.0.remove(1 - killed), 30);
        let survivor = 1 - victim;
        let err = String::from_utf8_lossy(&other.stderr);
        assert_eq!(other.status.code(), Some(1), "survivor {survivor}: {err}");
        let says = format!(
            "windowctl: error: process {survivor} lost the connection to process {victim} \
             (127.0.0.1:{}): timely communication error",
            ports[victim]
        );
        assert!(err.starts_with(&says), "{says}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
