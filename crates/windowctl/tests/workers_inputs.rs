//! Issue #14: inputs and watermark settings of the single-threaded runtime that `--workers`
//! runs too: a socket (read by one reader, its CSV header detected as the single-threaded
//! runtime detects it), `--idle-timeout` on one input, and periodic watermarks
//! (`--watermark-interval`).

mod common;

use std::fs;
use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::thread::JoinHandle;
use std::time::Duration;

use common::Rng;

fn scratch(name: &str) -> PathBuf {
    common::scratch_dir("workers-inputs", name)
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

fn windowctl(dir: &Path, args: &[String], env: &[(&str, String)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_windowctl"));
    c.current_dir(dir)
        .arg("run")
        .arg("--no-progress")
        .args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("windowctl runs")
}

fn sorted(text: &str) -> Vec<String> {
    let mut rows: Vec<String> = text.lines().map(str::to_owned).collect();
    rows.sort();
    rows
}

/// A server on a free loopback port that sends `text` to its one client in `parts` writes,
/// 30 ms apart (so that a live reader cuts chunks where the writes end), then closes.
fn serve(text: &str, parts: usize) -> (String, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let addr = listener.local_addr().expect("its address").to_string();
    let bytes = text.as_bytes().to_vec();
    let server = std::thread::spawn(move || {
        // A job that fails before it connects must not leave the test waiting here.
        listener.set_nonblocking(true).expect("non-blocking accept");
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let mut conn = loop {
            match listener.accept() {
                Ok((conn, _)) => break conn,
                Err(_) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => panic!("no job connected: {e}"),
            }
        };
        conn.set_nonblocking(false).expect("blocking writes");
        let step = bytes.len().div_ceil(parts.max(1)).max(1);
        for piece in bytes.chunks(step) {
            // A job that stopped early has closed the connection: nothing more to send.
            if conn.write_all(piece).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(30));
        }
    });
    (addr, server)
}

/// Lines `time,key,value` in roughly increasing time, some behind, a bad line and a blank one.
fn lines(rng: &mut Rng, n: usize) -> String {
    let mut text = String::new();
    let mut t: i64 = 0;
    for i in 0..n {
        t += rng.below(9) as i64;
        let behind = if rng.below(8) == 0 {
            rng.below(60) as i64
        } else {
            0
        };
        text.push_str(&format!(
            "{},k{},{}\n",
            t - behind,
            rng.below(7),
            rng.below(100)
        ));
        if i == n / 3 {
            text.push_str("not-a-time,k1,5\n\n");
        }
    }
    text
}

/// The job over `addr` with `extra` arguments; its results, late output and dead letters.
fn run_socket(dir: &Path, text: &str, extra: &[String], tag: &str) -> (String, String, String) {
    let (addr, server) = serve(text, 7);
    let addr_arg = addr.clone();
    let mut args = strings(&["--socket", &addr_arg, "--window", "sliding:40ms:10ms"]);
    args.extend(strings(&["--agg", "sum", "--out-of-orderness", "20ms"]));
    args.extend(strings(&[
        "--allowed-lateness",
        "15ms",
        "--on-error",
        "skip",
    ]));
    for (flag, file) in [("--output", "out"), ("--late-output", "late")] {
        args.extend([flag.to_string(), format!("{file}-{tag}.csv")]);
    }
    args.extend(["--dead-letter".to_string(), format!("dead-{tag}.csv")]);
    args.extend(extra.iter().cloned());
    let o = windowctl(dir, &args, &[("WINDOWCTL_CHUNK_BYTES", "50".into())]);
    server.join().expect("the server ends");
    assert!(
        o.status.success(),
        "{tag}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let read = |f: &str| fs::read_to_string(dir.join(format!("{f}-{tag}.csv"))).expect(f);
    // The dead letters name the socket by its address, a new port each run.
    (
        read("out"),
        read("late"),
        read("dead").replace(&addr, "ADDR"),
    )
}

#[test]
fn a_socket_with_or_without_a_header_line_gives_the_single_threaded_rows_for_any_workers() {
    let dir = scratch("socket");
    let mut rng = Rng(0x50c4e7);
    let body = lines(&mut rng, 300);
    // With a header (detected: it names the time field), with one in another column order,
    // and without one (time, key, value in that order, as the single-threaded runtime reads a
    // headerless socket).
    let cases = [
        ("header", format!("event_time_ms,key,value\n{body}")),
        ("none", body.clone()),
        (
            "reordered",
            body.lines()
                .map(|l| {
                    let f: Vec<&str> = l.split(',').collect();
                    match f.as_slice() {
                        [t, k, v] => format!("{v},{k},{t}\n"),
                        _ => format!("{l}\n"),
                    }
                })
                .fold(String::from("value,key,event_time_ms\n"), |s, l| s + &l),
        ),
    ];
    for (what, text) in cases {
        let base = run_socket(&dir, &text, &[], &format!("{what}-base"));
        assert!(base.0.lines().count() > 50, "{what}: {}", base.0);
        // The bad line is dead-lettered at its line of the stream.
        let bad_line = text.lines().position(|l| l.contains("not-a-time")).unwrap() + 1;
        assert!(
            base.2.contains(&format!(",{bad_line},")),
            "{what}: {}",
            base.2
        );
        let mut first: Option<(String, String, String)> = None;
        for workers in ["1", "2", "3"] {
            let tag = format!("{what}-w{workers}");
            let got = run_socket(&dir, &text, &strings(&["--workers", workers]), &tag);
            assert_eq!(sorted(&got.0), sorted(&base.0), "{tag}: rows");
            assert_eq!(sorted(&got.1), sorted(&base.1), "{tag}: late rows");
            assert_eq!(got.2, base.2, "{tag}: dead letters");
            match &first {
                None => first = Some(got),
                Some(f) => assert!(*f == got, "{tag}: not byte-identical to --workers 1"),
            }
        }
    }
}

#[test]
fn a_socket_is_refused_with_several_processes() {
    let dir = scratch("socket-processes");
    fs::write(dir.join("hosts"), "127.0.0.1:1\n127.0.0.1:2\n").expect("hostfile");
    let args = strings(&[
        "--socket",
        "127.0.0.1:9",
        "--window",
        "tumbling:1s",
        "--workers",
        "1",
        "--processes",
        "2",
        "--process",
        "0",
        "--hostfile",
        "hosts",
    ]);
    let o = windowctl(&dir, &args, &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--processes") && err.contains("socket 127.0.0.1:9"),
        "{err}"
    );
}

/// A tumbling 10 ms count job over `text` in file `in.csv`, with `extra` arguments and chunks of
/// `chunk` bytes; its results.
fn counts(dir: &Path, text: &str, extra: &[&str], chunk: usize, tag: &str) -> String {
    fs::write(dir.join("in.csv"), text).expect("input");
    let mut args = strings(&["--input", "in.csv", "--window", "tumbling:10ms"]);
    args.extend(strings(&[
        "--agg",
        "count",
        "--output",
        &format!("{tag}.csv"),
    ]));
    args.extend(strings(extra));
    let o = windowctl(dir, &args, &[("WINDOWCTL_CHUNK_BYTES", chunk.to_string())]);
    assert!(
        o.status.success(),
        "{tag}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    fs::read_to_string(dir.join(format!("{tag}.csv"))).expect("output")
}

#[test]
fn periodic_watermarks_hold_event_time_back_between_marks_under_workers_too() {
    let dir = scratch("periodic");
    // Key a at 0..40 ms, then an element at 5 ms: behind a watermark after every element (it
    // is dropped as late), not behind a periodic one emitted after the first chunk only (an
    // interval of 1 h passes no more during the run): counted. Chunks of 61 bytes: the first
    // holds the elements up to 4 ms.
    let mut text = String::from("event_time_ms,key,value\n");
    for t in 0..40 {
        text.push_str(&format!("{t},a,1\n"));
    }
    text.push_str("5,a,1\n");
    let per_element = counts(&dir, &text, &[], 61, "single");
    assert!(per_element.contains("a,0,10,10\n"), "{per_element}");
    let single = counts(
        &dir,
        &text,
        &["--watermark-interval", "1h"],
        61,
        "single-1h",
    );
    assert!(single.contains("a,0,10,11\n"), "{single}");
    let mut first: Option<String> = None;
    for workers in ["1", "2", "3"] {
        let args = ["--watermark-interval", "1h", "--workers", workers];
        let got = counts(&dir, &text, &args, 61, &format!("w{workers}"));
        assert_eq!(sorted(&got), sorted(&single), "--workers {workers}");
        match &first {
            None => first = Some(got),
            Some(f) => assert_eq!(*f, got, "--workers {workers}: not byte-identical"),
        }
        let args = ["--workers", workers];
        let got = counts(&dir, &text, &args, 61, &format!("w{workers}-0"));
        assert_eq!(
            sorted(&got),
            sorted(&per_element),
            "--workers {workers}, per element"
        );
    }
}

#[test]
fn in_order_input_gives_the_same_rows_with_periodic_watermarks_and_an_idle_timeout() {
    let dir = scratch("in-order");
    // Nothing is behind: whenever the watermark comes, the rows are those of a watermark after
    // every element. An idle timeout changes nothing with one input.
    let mut rng = Rng(0x1d1e);
    let mut text = String::from("event_time_ms,key,value\n");
    let mut t = 0;
    for _ in 0..3000 {
        t += rng.below(3);
        text.push_str(&format!("{t},k{},1\n", rng.below(5)));
    }
    let base = counts(&dir, &text, &[], 200, "base");
    assert!(base.lines().count() > 100, "{base}");
    for extra in [
        &["--watermark-interval", "1ms", "--workers", "2"][..],
        &["--watermark-interval", "1ms", "--workers", "3"][..],
        &["--idle-timeout", "1ms", "--workers", "2"][..],
    ] {
        let got = counts(&dir, &text, extra, 200, "got");
        assert_eq!(sorted(&got), sorted(&base), "{extra:?}");
    }
}

#[test]
fn a_live_socket_with_periodic_watermarks_fires_after_the_interval_while_the_input_pauses() {
    let dir = scratch("periodic-live");
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let addr = listener.local_addr().expect("its address").to_string();
    let (go_on, resume) = std::sync::mpsc::channel::<()>();
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().expect("the job connects");
        // Two writes, each cut into a chunk of its own where the input pauses after it: the
        // first chunk is marked for a watermark as the first one; the second, cut 200 ms
        // later, within the interval, is not, and its watermark comes with an empty chunk
        // once the interval has passed while the input pauses.
        for t in 0..30 {
            writeln!(conn, "{t},k,1").expect("sent");
            if t == 15 {
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        // Until the test has seen the first windows (or given up).
        let _ = resume.recv_timeout(Duration::from_secs(20));
        let _ = conn.write_all(b"100,k,1\n");
    });
    let child = Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .current_dir(&dir)
        .args([
            "run",
            "--no-progress",
            "--socket",
            &addr,
            "--window",
            "tumbling:10ms",
        ])
        .args(["--agg", "count", "--output", "out.csv", "--workers", "2"])
        .args(["--watermark-interval", "1s"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("windowctl starts");
    // The window [10, 20) fires once the interval has passed, while the input pauses.
    let mut fired = String::new();
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(100));
        fired = fs::read_to_string(dir.join("out.csv")).unwrap_or_default();
        if fired.lines().count() == 3 {
            break;
        }
    }
    let _ = go_on.send(());
    server.join().expect("the server ends");
    let o = child.wait_with_output().expect("windowctl ends");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        fired, "key,window_start,window_end,result\nk,0,10,10\nk,10,20,10\n",
        "before the input resumed"
    );
    let all = fs::read_to_string(dir.join("out.csv")).expect("output");
    assert_eq!(all, format!("{fired}k,20,30,10\nk,100,110,1\n"));
}
