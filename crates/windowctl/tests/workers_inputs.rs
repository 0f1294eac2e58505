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

use common::{run_in as windowctl, sorted_lines as sorted, strings, Rng};

fn scratch(name: &str) -> PathBuf {
    common::scratch_dir("workers-inputs", name)
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
    // is dropped as late), not behind a periodic one (an interval of 1 h, counted from the
    // start as Flink counts it, does not pass during the run: only the final watermark comes):
    // counted. Chunks of 61 bytes, so that there are many.
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

/// Runs `windowctl run ARGS --socket ADDR --output out.csv` over a socket that sends `parts`
/// (200 ms apart), then pauses until the job has written `lines` lines to `out.csv` (10 s at
/// most), then sends `rest` and closes. Returns what `out.csv` held during the pause and the
/// job's end.
fn during_pause(
    dir: &Path,
    args: &[&str],
    parts: &[&str],
    rest: &str,
    lines: usize,
) -> (String, Output) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let addr = listener.local_addr().expect("its address").to_string();
    let (go_on, resume) = std::sync::mpsc::channel::<()>();
    let parts: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
    let rest = rest.to_string();
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().expect("the job connects");
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                std::thread::sleep(Duration::from_millis(200));
            }
            conn.write_all(part.as_bytes()).expect("sent");
        }
        // Until the test has seen the rows (or given up).
        let _ = resume.recv_timeout(Duration::from_secs(20));
        let _ = conn.write_all(rest.as_bytes());
        std::thread::sleep(Duration::from_millis(300));
    });
    let child = Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .current_dir(dir)
        .args([
            "run",
            "--no-progress",
            "--socket",
            &addr,
            "--output",
            "out.csv",
        ])
        .args(args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("windowctl starts");
    let mut fired = String::new();
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(100));
        fired = fs::read_to_string(dir.join("out.csv")).unwrap_or_default();
        if fired.lines().count() == lines {
            break;
        }
    }
    let _ = go_on.send(());
    server.join().expect("the server ends");
    let o = child.wait_with_output().expect("windowctl ends");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (fired, o)
}

#[test]
fn a_live_socket_with_periodic_watermarks_fires_after_the_interval_while_the_input_pauses() {
    let dir = scratch("periodic-live");
    // Two writes, each cut into a chunk of its own where the input pauses after it, both
    // within the interval of the start (not marked): their watermark comes with an empty chunk
    // once the interval has passed while the input pauses, and fires [0, 10) and [10, 20).
    let line = |t: i32| format!("{t},k,1\n");
    let first: String = (0..16).map(line).collect();
    let second: String = (16..30).map(line).collect();
    let args = [
        "--window",
        "tumbling:10ms",
        "--agg",
        "count",
        "--workers",
        "2",
    ];
    let args = [&args[..], &["--watermark-interval", "1s"]].concat();
    let (fired, _) = during_pause(&dir, &args, &[&first, &second], "100,k,1\n", 3);
    assert_eq!(
        fired, "key,window_start,window_end,result\nk,0,10,10\nk,10,20,10\n",
        "before the input resumed"
    );
    let all = fs::read_to_string(dir.join("out.csv")).expect("output");
    assert_eq!(all, format!("{fired}k,20,30,10\nk,100,110,1\n"));
}

/// The chunks `windowctl --workers` cuts `text` into with chunks of `bytes` (the first line end
/// at or after `bytes` bytes): each line's chunk, for the lines after the header.
fn chunk_of_lines(text: &str, bytes: usize) -> Vec<u64> {
    let (mut chunk, mut filled) = (0u64, 0usize);
    let mut of = Vec::new();
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i > 0 {
            of.push(chunk);
        }
        filled += line.len();
        if filled >= bytes {
            chunk += 1;
            filled = 0;
        }
    }
    of
}

#[test]
fn processing_time_windows_under_workers_follow_each_chunks_clock() {
    // With the clock at 10 ms per chunk (a test hook), a processing-time job over a file is
    // the same on every run: each element is at its chunk's time, a window fires once a chunk's
    // clock reaches its end, and the windows still open at the end of the input do not fire
    // (as on one thread, and in Flink). A naive model of that gives the rows; 1, 2 and 3
    // workers give them, byte-identical.
    let dir = scratch("processing");
    let mut rng = Rng(0x9e0c);
    let mut text = String::from("event_time_ms,key,value\n");
    for i in 0..1500 {
        text.push_str(&format!("{i},k{},{}\n", rng.below(6), rng.below(50)));
    }
    fs::write(dir.join("in.csv"), &text).expect("input");
    let (bytes, step, size) = (300usize, 10i64, 50i64);
    let chunks = chunk_of_lines(&text, bytes);
    let last_clock = *chunks.last().expect("lines") as i64 * step;
    let mut model = std::collections::BTreeMap::<(String, i64), (i64, i64)>::new();
    for (line, &c) in text.lines().skip(1).zip(&chunks) {
        let f: Vec<&str> = line.split(',').collect();
        let start = c as i64 * step / size * size;
        if start + size <= last_clock {
            let e = model.entry((f[1].to_string(), start)).or_default();
            e.0 += f[2].parse::<i64>().expect("value");
            e.1 += 1;
        }
    }
    let mut want: Vec<String> = model
        .iter()
        .map(|((k, s), (sum, n))| format!("{k},{s},{},{sum},{n}", s + size))
        .collect();
    want.sort();
    assert!(want.len() > 50, "{want:?}");
    let mut first: Option<String> = None;
    for workers in ["1", "2", "3"] {
        let mut args = strings(&["--input", "in.csv", "--time", "processing"]);
        args.extend(strings(&[
            "--window",
            "tumbling:50ms",
            "--agg",
            "sum,count",
        ]));
        args.extend(strings(&["--workers", workers, "--output", "out.csv"]));
        let env = [
            ("WINDOWCTL_CHUNK_BYTES", bytes.to_string()),
            ("WINDOWCTL_CHUNK_CLOCK_MS", step.to_string()),
        ];
        let o = windowctl(&dir, &args, &env);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = fs::read_to_string(dir.join("out.csv")).expect("output");
        let mut rows: Vec<String> = out.lines().skip(1).map(str::to_owned).collect();
        rows.sort();
        assert_eq!(rows, want, "--workers {workers}");
        match &first {
            None => first = Some(out),
            Some(f) => assert_eq!(*f, out, "--workers {workers}: not byte-identical"),
        }
    }
}

#[test]
fn a_continuous_processing_time_trigger_fires_by_the_chunks_clock_on_any_workers() {
    // Event-time windows of 1 s whose continuous processing-time trigger fires every 20 ms of
    // processing time (10 ms per chunk here): a window's count as it grows (Flink's
    // ContinuousProcessingTimeTrigger fires only by its timers, not at the window's end), the
    // same bytes for 1, 2 and 3 workers.
    let dir = scratch("continuous");
    let mut rng = Rng(0xc0);
    let mut text = String::from("event_time_ms,key,value\n");
    for i in 0..800 {
        text.push_str(&format!("{},k{},1\n", i * 3, rng.below(4)));
    }
    fs::write(dir.join("in.csv"), &text).expect("input");
    let job = |extra: &[&str], out: &str| {
        let mut args = strings(&["--input", "in.csv", "--window", "tumbling:1s"]);
        args.extend(strings(&["--agg", "count", "--output", out]));
        args.extend(strings(extra));
        let env = [
            ("WINDOWCTL_CHUNK_BYTES", "200".to_string()),
            ("WINDOWCTL_CHUNK_CLOCK_MS", "10".to_string()),
        ];
        let o = windowctl(&dir, &args, &env);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        fs::read_to_string(dir.join(out)).expect("output")
    };
    let plain = job(&["--workers", "2"], "plain.csv");
    let mut first: Option<String> = None;
    for workers in ["1", "2", "3"] {
        let args = [
            "--trigger",
            "continuous-processing-time:20ms",
            "--workers",
            workers,
        ];
        let got = job(&args, &format!("w{workers}.csv"));
        // Each window's counts rise from firing to firing, up to at most its final count.
        let mut seen = std::collections::BTreeMap::<&str, f64>::new();
        for row in got.lines().skip(1) {
            let (window, count) = row.rsplit_once(',').expect("a row");
            let count: f64 = count.parse().expect("a count");
            let last = seen.insert(window, count).unwrap_or(0.0);
            assert!(count > last, "{row} after {last}: {got}");
            let fin = plain
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{window},")));
            assert!(
                count <= fin.expect("fired").parse::<f64>().expect("count"),
                "{row}"
            );
        }
        assert!(got.lines().count() > 2 * plain.lines().count(), "{got}");
        match &first {
            None => first = Some(got),
            Some(f) => assert_eq!(*f, got, "--workers {workers}: not byte-identical"),
        }
    }
}

#[test]
fn processing_time_windows_fire_while_a_live_socket_pauses_under_workers() {
    // The socketTextStream job on two workers: processing-time tumbling windows of 200 ms over
    // a socket that sends 10 elements, waits, then closes. The windows fire while the input
    // pauses (the reader cuts an empty chunk when a worker's timer is due), so every element is
    // counted exactly once in a window fired before the end.
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
    let dir = scratch("processing-live");
    let args = strings(&[
        "--socket",
        &addr,
        "--time",
        "processing",
        "--window",
        "tumbling:200ms",
        "--agg",
        "count",
        "--workers",
        "2",
    ]);
    let o = windowctl(&dir, &args, &[]);
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
    assert_eq!(total, 10.0, "{out}");
}

#[test]
fn a_processing_time_trigger_fires_a_past_window_while_a_live_input_pauses() {
    // Event-time windows long past (historical data) with the processing-time trigger: each
    // element's timer is in the past, set while its chunk is processed, and fires at the next
    // clock reading, as the single-threaded runtime fires it at its next batch; while the input
    // pauses, an empty chunk brings that reading (before the fix the windows waited for more
    // input, and the last ones before the end never fired). A fresh-user trial's finding.
    let dir = scratch("past-timers");
    let args = [
        "--window",
        "tumbling:1h",
        "--out-of-orderness",
        "1d",
        "--workers",
        "2",
    ];
    let args = [
        &args[..],
        &["--trigger", "processing-time", "--agg", "count"],
    ]
    .concat();
    let first = "event_time_ms,key,value\n1000,a,1\n2000,b,1\n";
    let (fired, _) = during_pause(&dir, &args, &[first], "3000,c,1\n", 3);
    assert_eq!(
        sorted(&fired),
        sorted("key,window_start,window_end,result\na,0,3600000,1\nb,0,3600000,1\n"),
        "before the input resumed"
    );
    let all = fs::read_to_string(dir.join("out.csv")).expect("output");
    assert!(
        all.ends_with("c,0,3600000,1\n"),
        "the last one fires too: {all}"
    );
}
