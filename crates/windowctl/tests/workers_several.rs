//! Issue #14: several inputs under `--workers`. Files are merged in event time (the same order
//! for any number of workers and processes); with a live input among them, chunks are taken as
//! they arrive, and `--idle-timeout` lets an idle input stop holding the watermark back.

mod common;

use std::fs;
use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{run_in as windowctl, sorted_lines as sorted, strings, Rng};

fn scratch(name: &str) -> PathBuf {
    common::scratch_dir("workers-several", name)
}

/// Lines `time,key,value` from `start` in roughly increasing time, none further behind than
/// 20 ms (so that no element is late behind its own input's watermark of 30 ms), keys of
/// `prefix`.
fn in_time(rng: &mut Rng, start: i64, n: usize, prefix: &str) -> String {
    let mut text = String::from("event_time_ms,key,value\n");
    let mut t = start;
    for _ in 0..n {
        t += rng.below(4) as i64;
        let behind = rng.below(20) as i64;
        text.push_str(&format!(
            "{},{prefix}{},{}\n",
            t - behind,
            rng.below(5),
            rng.below(100)
        ));
    }
    text
}

/// `windowctl run` over `inputs` (names in `dir`) with `extra`, chunks of `chunk` bytes; its
/// output and standard error.
fn several(
    dir: &Path,
    inputs: &[&str],
    extra: &[&str],
    chunk: usize,
    out: &str,
) -> (String, String) {
    let mut args = Vec::new();
    for i in inputs {
        args.extend(strings(&["--input", i]));
    }
    args.extend(strings(&["--window", "sliding:100ms:20ms", "--agg", "sum"]));
    args.extend(strings(&["--out-of-orderness", "30ms", "--output", out]));
    args.extend(strings(extra));
    let o = windowctl(dir, &args, &[("WINDOWCTL_CHUNK_BYTES", chunk.to_string())]);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{inputs:?} {extra:?}: {err}");
    (fs::read_to_string(dir.join(out)).expect("output"), err)
}

#[test]
fn several_inputs_are_merged_in_event_time_under_any_number_of_workers() {
    // Three inputs over the same time span (one of them JSON lines, one with its columns in
    // another order), and an empty one: no element is behind its own input's watermark, so
    // the rows are the single-threaded runtime's (as multisets) for any interleaving; 1, 2 and
    // 3 workers give the same bytes.
    let dir = scratch("several");
    let mut rng = Rng(0x5e7e);
    fs::write(dir.join("a.csv"), in_time(&mut rng, 0, 2000, "a")).expect("a");
    let b = in_time(&mut rng, 5, 1500, "b");
    let b: String = b
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            format!("{},{},{}\n", f[2], f[0], f[1])
        })
        .collect();
    fs::write(dir.join("b.csv"), b).expect("b");
    let c: String = in_time(&mut rng, 11, 1000, "a")
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            format!(
                "{{\"event_time_ms\":{},\"key\":\"{}\",\"value\":{}}}\n",
                f[0], f[1], f[2]
            )
        })
        .collect();
    fs::write(dir.join("c.jsonl"), c).expect("c");
    fs::write(dir.join("empty.csv"), "event_time_ms,key,value\n").expect("empty");
    let inputs = ["a.csv", "b.csv", "empty.csv", "c.jsonl"];
    let (single, _) = several(&dir, &inputs, &[], 300, "single.csv");
    assert!(single.lines().count() > 1000, "{single}");
    for chunk in [300, 5000] {
        let mut first: Option<String> = None;
        for workers in ["1", "2", "3"] {
            let tag = format!("w{workers}c{chunk}.csv");
            let (got, err) = several(&dir, &inputs, &["--workers", workers], chunk, &tag);
            assert!(
                err.contains("a.csv, b.csv, empty.csv, c.jsonl: 4500 events"),
                "{err}"
            );
            assert_eq!(sorted(&got), sorted(&single), "{tag}");
            match &first {
                None => first = Some(got),
                Some(f) => assert_eq!(*f, got, "{tag}: not byte-identical"),
            }
        }
    }
}

#[test]
fn inputs_of_different_times_are_read_in_time_order_not_side_by_side() {
    // Input a holds the first 6 s, input b 4 s later the next 6 s. Read side by side (or a
    // before b's first chunk), b's elements would all be held until a ends (the watermark is
    // the least of the inputs': 4,000 held); merged in event time, b's first chunk is read
    // (the single-threaded runtime reads a batch of each input first), then all of a, then
    // the rest of b: the state held peaks as for one input of both, with b's first chunk (at
    // most 2,000 bytes: 200 lines) besides.
    let dir = scratch("aligned");
    let mut rng = Rng(0xa119);
    let a = in_time(&mut rng, 0, 4000, "k");
    let b = in_time(&mut rng, 10_000, 4000, "k");
    fs::write(dir.join("a.csv"), &a).expect("a");
    fs::write(dir.join("b.csv"), &b).expect("b");
    fs::write(
        dir.join("ab.csv"),
        format!("{a}{}", b.split_once('\n').expect("header").1),
    )
    .expect("ab");
    let (one, one_err) = several(&dir, &["ab.csv"], &["--workers", "2"], 2000, "one.csv");
    let (two, two_err) = several(
        &dir,
        &["b.csv", "a.csv"],
        &["--workers", "2"],
        2000,
        "two.csv",
    );
    assert_eq!(sorted(&two), sorted(&one));
    let peak = |err: &str| common::peak_states(err).expect("a peak state line");
    assert!(
        peak(&two_err) <= peak(&one_err) + 200,
        "{two_err}\n{one_err}"
    );
}

#[test]
fn bad_lines_of_a_second_input_name_it_and_its_line() {
    let dir = scratch("several-bad");
    fs::write(
        dir.join("a.csv"),
        "event_time_ms,key,value\n1,a,1\n5,a,2\n9,a,3\n",
    )
    .expect("a");
    fs::write(
        dir.join("b.csv"),
        "event_time_ms,key,value\n2,b,1\n\nx,b,2\n8,b,3\n",
    )
    .expect("b");
    let job = |extra: &[&str]| {
        let mut args = strings(&["--input", "a.csv", "--input", "b.csv"]);
        args.extend(strings(&["--window", "tumbling:5ms", "--agg", "count"]));
        args.extend(strings(extra));
        windowctl(&dir, &args, &[("WINDOWCTL_CHUNK_BYTES", "10".into())])
    };
    let none: &[&str] = &[];
    for w in [none, &["--workers", "2"]] {
        let workers = w.last();
        let o = job(w);
        assert_eq!(o.status.code(), Some(1), "{workers:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("b.csv:4: field 'event_time_ms'"),
            "{workers:?}: {err}"
        );
        let mut skip = strings(&["--on-error", "skip", "--dead-letter", "dead.csv"]);
        skip.extend(w.iter().map(|s| s.to_string()));
        let skip: Vec<&str> = skip.iter().map(String::as_str).collect();
        let o = job(&skip);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let dead = fs::read_to_string(dir.join("dead.csv")).expect("dead letters");
        assert!(dead.contains("\nb.csv,4,event_time_ms,"), "{dead}");
    }
}

#[test]
fn an_idle_live_input_stops_holding_the_watermark_back_under_workers() {
    // Input 1 is a file that ends at once; input 2 a socket that sends one early element and
    // stays silent for 1.5 s. Without --idle-timeout the [0, 10 s) window of the file can fire
    // only when the socket ends; with it, the socket is told idle after 200 ms and the window
    // fires while it is still open (as the single-threaded runtime's test in inputs.rs).
    let dir = scratch("idle");
    fs::write(
        dir.join("idle.csv"),
        "event_time_ms,key,value\n1000,a,1\n20000,a,2\n",
    )
    .expect("input");
    for idle in [true, false] {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let addr = listener.local_addr().expect("its address").to_string();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().expect("the job connects");
            conn.write_all(b"500,b,1\n").expect("sent");
            std::thread::sleep(Duration::from_millis(1500));
        });
        let started = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_windowctl"))
            .current_dir(&dir)
            .args([
                "run",
                "--no-progress",
                "--input",
                "idle.csv",
                "--socket",
                &addr,
            ])
            .args(["--window", "tumbling:10s", "--agg", "sum", "--workers", "2"])
            .args(if idle {
                &["--idle-timeout", "200ms"][..]
            } else {
                &[][..]
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("windowctl starts");
        let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        use std::io::BufRead;
        out.read_line(&mut line).expect("header");
        line.clear();
        out.read_line(&mut line).expect("a row");
        let fired_after = started.elapsed();
        assert!(line.ends_with(",0,10000,1\n"), "{line}");
        let o = child.wait_with_output().expect("windowctl ends");
        server.join().expect("the server ends");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        if idle {
            assert!(
                fired_after < Duration::from_millis(1400),
                "fired after {fired_after:?}"
            );
        } else {
            assert!(
                fired_after >= Duration::from_millis(1400),
                "fired after {fired_after:?}"
            );
        }
    }
}

#[test]
fn a_live_input_among_files_is_taken_as_it_comes_under_workers() {
    // A file and stdin: the chunks are taken as they arrive, the rows are the single-threaded
    // runtime's (no element is behind its own input's watermark here).
    let dir = scratch("live-mix");
    let mut rng = Rng(0x11e);
    fs::write(dir.join("a.csv"), in_time(&mut rng, 0, 1500, "a")).expect("a");
    let live = in_time(&mut rng, 3, 800, "s");
    let run = |workers: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_windowctl"));
        c.current_dir(&dir)
            .args(["run", "--no-progress", "--input", "a.csv", "--input", "-"])
            .args(["--window", "sliding:100ms:20ms", "--agg", "sum"])
            .args(["--out-of-orderness", "30ms", "--output", "out.csv"])
            .args(workers.map_or(vec![], |w| vec!["--workers", w]))
            .stdin(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().expect("windowctl starts");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(live.as_bytes()).expect("written");
        drop(stdin);
        let o = child.wait_with_output().expect("windowctl ends");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        fs::read_to_string(dir.join("out.csv")).expect("output")
    };
    let single = run(None);
    assert!(single.lines().count() > 300, "{single}");
    for workers in ["1", "2", "3"] {
        assert_eq!(
            sorted(&run(Some(workers))),
            sorted(&single),
            "--workers {workers}"
        );
    }
}

#[test]
fn processing_time_windows_fire_while_a_socket_beside_a_file_pauses() {
    // A file of one element and a socket that sends 10 elements, waits, then closes:
    // processing-time windows of 200 ms fire while the socket pauses (the arrivals cut an
    // empty chunk when a worker's timer is due), so every element is counted once.
    let dir = scratch("processing");
    fs::write(dir.join("one.csv"), "event_time_ms,key,value\n1,f,1\n").expect("input");
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let addr = listener.local_addr().expect("its address").to_string();
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().expect("the job connects");
        for i in 0..10 {
            writeln!(conn, "{i},k,1").expect("sent");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(700));
    });
    let args = strings(&[
        "--input",
        "one.csv",
        "--socket",
        &addr,
        "--time",
        "processing",
    ]);
    let args = [
        args,
        strings(&["--window", "tumbling:200ms", "--agg", "count"]),
    ]
    .concat();
    let o = windowctl(&dir, &[args, strings(&["--workers", "2"])].concat(), &[]);
    server.join().expect("the server ends");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let total: f64 = out
        .lines()
        .skip(1)
        .map(|l| {
            l.rsplit(',')
                .next()
                .expect("count")
                .parse::<f64>()
                .expect("a number")
        })
        .sum();
    assert_eq!(total, 11.0, "{out}");
}
