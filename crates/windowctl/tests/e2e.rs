//! `windowctl run` end to end, on the bundled real data, against expected outputs computed
//! independently of this project's code by `tests/data/oracle.py` (a plain Python model of
//! Flink's tumbling event-time windows with a bounded-out-of-orderness watermark).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn windowctl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .arg("run")
        .args(args)
        .arg("--no-progress")
        .current_dir(repo())
        .output()
        .expect("windowctl starts")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 output")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("utf-8 stderr")
}

/// The oracle file: `# late=N`, then the CSV header and rows sorted.
fn expected(name: &str) -> (u64, Vec<String>) {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name),
    )
    .expect("oracle output exists");
    let mut lines = text.lines();
    let late = lines
        .next()
        .and_then(|l| l.strip_prefix("# late="))
        .and_then(|n| n.parse().ok())
        .expect("late count line");
    (late, lines.map(str::to_owned).collect())
}

fn sorted_output(o: &Output) -> Vec<String> {
    let out = stdout(o);
    let mut lines = out.lines();
    let header = lines.next().expect("header").to_owned();
    let mut rows: Vec<String> = lines.map(str::to_owned).collect();
    rows.sort();
    rows.insert(0, header);
    rows
}

fn late_dropped(o: &Output) -> u64 {
    let err = stderr(o);
    let line = err
        .lines()
        .find(|l| l.contains("late elements dropped:"))
        .unwrap_or_else(|| panic!("no summary in stderr: {err}"));
    line.split("late elements dropped: ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("count")
}

fn check_against_oracle(args: &[&str], oracle: &str) {
    let o = windowctl(args);
    assert!(o.status.success(), "windowctl failed: {}", stderr(&o));
    let (late, rows) = expected(oracle);
    let got = sorted_output(&o);
    assert_eq!(got.len(), rows.len(), "number of rows (with header)");
    for (g, e) in got.iter().zip(&rows) {
        assert_eq!(g, e);
    }
    assert_eq!(late_dropped(&o), late);
}

#[test]
fn quakes_hourly_max_with_one_hour_watermark_delay_matches_oracle() {
    // 1,707 real USGS events, heavy real lateness: the oracle drops 1,010 of them.
    check_against_oracle(
        &[
            "--input",
            "data/usgs_quakes_tiny.csv",
            "--window",
            "tumbling:1h",
            "--agg",
            "max",
            "--out-of-orderness",
            "1h",
        ],
        "quakes_1h_max_delay1h.csv",
    );
}

#[test]
fn quakes_daily_count_with_seven_day_delay_drops_nothing() {
    check_against_oracle(
        &[
            "--input",
            "data/usgs_quakes_tiny.csv",
            "--window",
            "tumbling:1d",
            "--agg",
            "count",
            "--out-of-orderness",
            "7d",
        ],
        "quakes_1d_count_delay7d.csv",
    );
}

#[test]
fn flights_hourly_sum_in_arrival_order_with_zero_delay_matches_oracle() {
    check_against_oracle(
        &[
            "--input",
            "data/nycflights13_tailnum_tiny.csv",
            "--window",
            "tumbling:1h",
            "--agg",
            "sum",
        ],
        "flights_tiny_1h_sum_delay0.csv",
    );
}

#[test]
fn late_output_file_holds_every_dropped_element() {
    let dir = std::env::temp_dir().join(format!("windowctl-late-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let late = dir.join("late.csv");
    let o = windowctl(&[
        "--input",
        "data/usgs_quakes_tiny.csv",
        "--window",
        "tumbling:1h",
        "--agg",
        "max",
        "--out-of-orderness",
        "1h",
        "--late-output",
        late.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&late).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("event_time_ms,key,value,watermark"));
    assert_eq!(
        lines.count() as u64,
        expected("quakes_1h_max_delay1h.csv").0
    );
}

#[test]
fn jsonl_output_has_the_four_fields() {
    let o = windowctl(&[
        "--input",
        "data/usgs_quakes_tiny.csv",
        "--window",
        "tumbling:1d",
        "--agg",
        "count",
        "--out-of-orderness",
        "7d",
        "--output-format",
        "jsonl",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let obj = first.as_object().unwrap();
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["key", "result", "window_end", "window_start"]);
    assert_eq!(
        out.lines().count(),
        expected("quakes_1d_count_delay7d.csv").1.len() - 1
    );
}

fn run_with_stdin(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .arg("run")
        .args(args)
        .args(["--input", "-", "--no-progress"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

const BAD_INPUT: &str =
    "event_time_ms,key,value\n1000,a,1\n2000,a,abc\n3000,a\nnot-a-time,a,5\n4000,a,2\n";

#[test]
fn bad_input_fails_with_line_and_field_by_default() {
    let o = run_with_stdin(&["--window", "tumbling:10s", "--agg", "sum"], BAD_INPUT);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("stdin:3"), "{err}");
    assert!(err.contains("value"), "{err}");
}

#[test]
fn bad_input_is_skipped_counted_and_dead_lettered_on_request() {
    let dir = std::env::temp_dir().join(format!("windowctl-dead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dead = dir.join("dead.csv");
    let _ = std::fs::remove_file(&dead);
    let o = run_with_stdin(
        &[
            "--window",
            "tumbling:10s",
            "--agg",
            "sum",
            "--on-error",
            "skip",
            "--dead-letter",
            dead.to_str().unwrap(),
        ],
        BAD_INPUT,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // 1000 and 4000 are both in [0, 10000): 1 + 2.
    assert_eq!(
        stdout(&o),
        "key,window_start,window_end,result\na,0,10000,3\n"
    );
    assert!(
        stderr(&o).contains("bad input lines skipped: 3"),
        "{}",
        stderr(&o)
    );
    let dead_text = std::fs::read_to_string(&dead).unwrap();
    assert_eq!(
        dead_text.lines().count(),
        4,
        "header and three rejected lines: {dead_text}"
    );
    assert!(dead_text.contains("abc") && dead_text.contains("not-a-time"));
}

#[test]
fn invalid_window_parameters_are_rejected_with_the_values() {
    let o = windowctl(&[
        "--input",
        "data/usgs_quakes_tiny.csv",
        "--window",
        "tumbling:10s:10s",
    ]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("offset 10000 ms") && err.contains("size 10000 ms"),
        "{err}"
    );
    let o = windowctl(&[
        "--input",
        "data/usgs_quakes_tiny.csv",
        "--window",
        "sliding:10000001ms:1ms",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("10000001 windows"), "{}", stderr(&o));
    let o = windowctl(&[
        "--input",
        "data/usgs_quakes_tiny.csv",
        "--window",
        "session:0s",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("session gap must be positive"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn help_explains_every_option() {
    let o = Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = stdout(&o);
    for flag in [
        "--input",
        "--socket",
        "--format",
        "--time-field",
        "--key-field",
        "--value-field",
        "--window",
        "--agg",
        "--time",
        "--out-of-orderness",
        "--allowed-lateness",
        "--trigger",
        "--late-output",
        "--output",
        "--on-error",
        "--dead-letter",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}");
    }
}

fn write_temp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("windowctl-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn window_all_ignores_the_key() {
    // Flink's windowAll: one window over every key. Hand-computed: [0,10s) holds 1+2+4.
    let p = write_temp(
        "all.csv",
        "event_time_ms,key,value\n1000,a,1\n2000,b,2\n3000,c,4\n12000,a,8\n",
    );
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--window",
        "tumbling:10s",
        "--agg",
        "sum",
        "--window-all",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "key,window_start,window_end,result\n,0,10000,7\n,10000,20000,8\n"
    );
}

#[test]
fn count_windows_and_evictors_from_the_command_line() {
    // count:2 = every 2 elements of a key (purging); count:3:1 = the last 3, on every element.
    let p = write_temp(
        "count.csv",
        "event_time_ms,key,value\n1,a,1\n2,a,2\n3,a,3\n4,a,4\n5,a,5\n",
    );
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--window",
        "count:2",
        "--agg",
        "sum",
    ]);
    assert_eq!(
        stdout(&o),
        "key,window_start,window_end,result\na,,,3\na,,,7\n"
    );
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--window",
        "count:3:1",
        "--agg",
        "sum",
    ]);
    assert_eq!(
        stdout(&o),
        "key,window_start,window_end,result\na,,,1\na,,,3\na,,,6\na,,,9\na,,,12\n"
    );
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--window",
        "tumbling:10ms",
        "--agg",
        "sum",
        "--evictor",
        "count:2",
    ]);
    assert_eq!(stdout(&o), "key,window_start,window_end,result\na,0,10,9\n");
}

#[test]
fn an_idle_input_stops_holding_the_watermark_back() {
    // Input 1 ends quickly; input 2 is a socket that sends one early element and stays silent.
    // Without --idle-timeout the [0,10s) window of input 1 can fire only when input 2 ends; with
    // it, it fires while input 2 is still open.
    use std::net::TcpListener;
    use std::time::{Duration, Instant};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        conn.write_all(b"500,b,1\n").unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        drop(conn);
    });
    let p = write_temp("idle.csv", "event_time_ms,key,value\n1000,a,1\n20000,a,2\n");
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .args([
            "run",
            "--input",
            p.to_str().unwrap(),
            "--socket",
            &addr,
            "--window",
            "tumbling:10s",
            "--agg",
            "sum",
        ])
        .args(["--idle-timeout", "200ms", "--no-progress"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first_line = String::new();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    use std::io::BufRead;
    out.read_line(&mut first_line).unwrap(); // header
    first_line.clear();
    out.read_line(&mut first_line).unwrap();
    let fired_after = started.elapsed();
    assert!(
        first_line.starts_with("a,0,10000,1") || first_line.starts_with("b,0,10000,1"),
        "{first_line}"
    );
    assert!(
        fired_after < Duration::from_millis(1400),
        "fired only after {fired_after:?}"
    );
    let o = child.wait_with_output().unwrap();
    server.join().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn processing_time_windows_fire_while_a_socket_job_runs() {
    // The socketTextStream job: processing-time tumbling windows of 200 ms over a socket that
    // sends 10 elements, waits, then closes. Every element is counted exactly once in the
    // windows that fire while the job runs.
    use std::net::TcpListener;
    use std::time::Duration;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        for i in 0..10 {
            writeln!(conn, "{i},k,1").unwrap();
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(700));
    });
    let o = Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .args([
            "run",
            "--socket",
            &addr,
            "--time",
            "processing",
            "--window",
            "tumbling:200ms",
            "--agg",
            "count",
        ])
        .arg("--no-progress")
        .output()
        .unwrap();
    server.join().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let total: f64 = stdout(&o)
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap().parse::<f64>().unwrap())
        .sum();
    assert_eq!(total, 10.0, "{}", stdout(&o));
}

#[test]
fn keywindow_strategy_prints_the_worked_example_with_an_empty_column() {
    // docs/keywindow.md worked example: p = 4, k = 1, elements at 0, 5, 10, 11 (count).
    let p = write_temp(
        "kw.csv",
        "event_time_ms,key,value\n0,a,1\n5,a,1\n10,a,1\n11,a,1\n",
    );
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--window",
        "sliding:4ms:1ms",
        "--agg",
        "count",
        "--strategy",
        "keywindow",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "key,window_start,window_end,result,empty\n\
         a,-3,1,1,false\na,1,5,,true\na,2,6,1,false\na,6,10,,true\n\
         a,7,11,1,false\na,8,12,2,false\na,11,15,1,false\na,12,16,,true\n"
    );
    assert!(
        stderr(&o).contains("key windows created: 8; the native operator would create: 13"),
        "{}",
        stderr(&o)
    );
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--window",
        "tumbling:4ms",
        "--strategy",
        "keywindow",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("sliding windows only"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn sliced_strategy_gives_the_native_output_and_sliced_changes_the_keywindow_output() {
    let input = [
        "--input",
        "data/usgs_quakes_tiny.csv",
        "--window",
        "sliding:1h:5min",
        "--agg",
        "max",
        "--out-of-orderness",
        "7d",
    ];
    let run = |strategy: &str| {
        let mut args = input.to_vec();
        args.extend(["--strategy", strategy]);
        let o = windowctl(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        sorted_output(&o)
    };
    // With a 7 d delay nothing is late, so the native output is exactly reproduced.
    assert_eq!(run("sliced"), run("native"));
    assert_eq!(run("sliced:changes"), run("keywindow"));
    // `--emit changes` (the spelling) is the same as sliced:changes.
    let mut args = input.to_vec();
    args.extend(["--strategy", "sliced", "--emit", "changes"]);
    let o = windowctl(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(sorted_output(&o), run("keywindow"));
    // Contradictions are refused and named.
    for (strategy, emit) in [
        ("native", "changes"),
        ("keywindow", "all"),
        ("sliced:changes", "all"),
        ("sliced:all", "changes"),
    ] {
        let mut args = input.to_vec();
        args.extend(["--strategy", strategy, "--emit", emit]);
        let o = windowctl(&args);
        assert!(!o.status.success(), "{strategy} --emit {emit} was accepted");
        assert!(stderr(&o).contains("--emit"), "{}", stderr(&o));
    }
}

#[test]
fn refuses_outputs_that_would_overwrite_an_input_or_each_other() {
    let p = write_temp("same.csv", "event_time_ms,key,value\n1,a,1\n");
    let path = p.to_str().unwrap();
    let o = windowctl(&["--input", path, "--window", "tumbling:1s", "--output", path]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("is also an input"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        "event_time_ms,key,value\n1,a,1\n",
        "input intact"
    );
    let out = p.with_extension("out");
    let o = windowctl(&[
        "--input",
        path,
        "--window",
        "tumbling:1s",
        "--output",
        out.to_str().unwrap(),
        "--late-output",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("each output needs its own file"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn guards_against_configurations_that_would_exhaust_memory() {
    // Scenario B31 / FLINK-37512: 10,000,000 windows per element is allowed by the assigner, but
    // the native operator stops before holding more window states than --max-window-states.
    let p = write_temp(
        "dense.csv",
        "event_time_ms,key,value\n1,a,1\n2,b,1\n3,c,1\n",
    );
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--window",
        "sliding:10000000ms:1ms",
        "--agg",
        "count",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("more than the limit of 5000000"),
        "{}",
        stderr(&o)
    );
    // The sliced strategy handles it: 3 slices, each element's 10 M windows emitted in O(1) each
    // would be 30 M rows, so emit changes only.
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--window",
        "sliding:10000000ms:1ms",
        "--agg",
        "count",
        "--strategy",
        "sliced:changes",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Keys a, b, c: each key's count is 1 when its element enters and empty when it leaves.
    let results: Vec<String> = stdout(&o)
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(3).unwrap().to_owned())
        .collect();
    assert_eq!(results, ["1", "1", "1", "", "", ""]);
}

#[test]
fn element_errors_name_the_right_field_and_reject_fractional_gaps() {
    let p = write_temp("gaps.csv", "event_time_ms,key,value\n1000,a,1.5\n");
    let o = windowctl(&["--input", p.to_str().unwrap(), "--window", "session:value"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains(":2: field 'value'") && err.contains("value 1.5 is not a positive whole"),
        "{err}"
    );
    let p = write_temp(
        "nots.csv",
        "event_time_ms,key,value\n-9223372036854775808,a,1\n",
    );
    let o = windowctl(&["--input", p.to_str().unwrap(), "--window", "tumbling:1s"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("field 'event_time_ms'"),
        "{}",
        stderr(&o)
    );
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--window",
        "global:end-of-stream",
        "--time",
        "processing",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("never fires with --time processing"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn ordered_strategies_handle_gaps_and_the_ends_of_time() {
    // slide > size: elements in gaps are in no window, counted, for every strategy (no panic).
    let p = write_temp(
        "gaps2.csv",
        "event_time_ms,key,value\n1,a,1\n3,b,2\n7,a,3\n12,a,5\n14,b,1\n26,a,2\n",
    );
    for strategy in ["native", "keywindow", "sliced", "sliced:changes"] {
        let o = windowctl(&[
            "--input",
            p.to_str().unwrap(),
            "--window",
            "sliding:10ms:20ms",
            "--agg",
            "sum",
            "--strategy",
            strategy,
        ]);
        assert!(o.status.success(), "{strategy}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("elements in no window: 2"),
            "{strategy}: {}",
            stderr(&o)
        );
        assert!(
            stdout(&o).contains("a,0,10,4") && stdout(&o).contains("a,20,30,2"),
            "{strategy}: {}",
            stdout(&o)
        );
    }
    // Near i64::MAX the windows after an element do not fit: a clear error, not wrong results.
    let p = write_temp(
        "max.csv",
        "event_time_ms,key,value\n9223372036854775807,a,1\n",
    );
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--window",
        "sliding:10ms:5ms",
        "--strategy",
        "sliced",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("too close to the end of the i64 range"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn zero_idle_timeout_and_runaway_dstream_jobs_are_refused() {
    let p = write_temp("z.csv", "event_time_ms,key,value\n1,a,1\n");
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--window",
        "tumbling:10ms",
        "--idle-timeout",
        "0ms",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--idle-timeout must be positive"),
        "{}",
        stderr(&o)
    );
    let o = Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .args([
            "dstream",
            "--input",
            p.to_str().unwrap(),
            "--batch-interval",
            "1ms",
            "--window",
            "100000ms",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("use --inverse or a larger --batch-interval"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn fixes_from_the_third_fresh_user_trial() {
    // Sliced windows emitting every window refuse size/slide beyond the native cap (the output
    // would run away), and suggest --emit changes, which runs.
    let tiny = [
        "--input",
        "data/nycflights13_tailnum_tiny.csv",
        "--agg",
        "count",
    ];
    let run = |extra: &[&str]| {
        let mut args = tiny.to_vec();
        args.extend_from_slice(extra);
        windowctl(&args)
    };
    let o = run(&["--window", "sliding:1d:1ms", "--strategy", "sliced"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("86400000 results for each element"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("--emit changes"), "{}", stderr(&o));
    let o = run(&[
        "--window",
        "sliding:1d:1ms",
        "--strategy",
        "sliced",
        "--emit",
        "changes",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A window too large for the time range is a configuration error, not bad data.
    let o = run(&[
        "--window",
        "sliding:99999999999d:1d",
        "--strategy",
        "sliced:changes",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("do not fit the time range"),
        "{}",
        stderr(&o)
    );
    // Timestamps one window away from the ends of i64 are accepted by every strategy, with
    // the native operator's windows.
    let high = write_temp(
        "near_max.csv",
        "event_time_ms,key,value\n9223372036854750000,a,1\n",
    );
    let low = write_temp(
        "near_min.csv",
        "event_time_ms,key,value\n-9223372036854760000,a,1\n",
    );
    for file in [&high, &low] {
        let out = |strategy: &str| {
            let o = windowctl(&[
                "--input",
                file.to_str().unwrap(),
                "--window",
                "sliding:10s:5s",
                "--strategy",
                strategy,
            ]);
            assert!(o.status.success(), "{strategy} {file:?}: {}", stderr(&o));
            sorted_output(&o)
        };
        assert_eq!(out("sliced"), out("native"), "{file:?}");
    }
    // Negative durations reach our own message (not the argument parser's "unexpected
    // argument '-1'"), and a duration without a number says so.
    let o = windowctl(&["--out-of-orderness", "-1h"]);
    assert!(
        stderr(&o).contains("must not be negative"),
        "{}",
        stderr(&o)
    );
    let o = windowctl(&["--window", "sliding:1h:5min:bogus"]);
    assert!(
        stderr(&o).contains("does not start with a number"),
        "{}",
        stderr(&o)
    );
    // A .gz that is not gzip is named as such.
    let fake = write_temp("fake.csv.gz", "event_time_ms,key,value\n1,a,1\n");
    let o = windowctl(&["--input", fake.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("not gzip-compressed"), "{}", stderr(&o));
}

#[test]
fn fixes_from_the_fourth_fresh_user_trial() {
    // A directory as input is named as one when it is opened (it failed at "line 1" before).
    let dir = std::env::temp_dir().join(format!("windowctl-e2e-dir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let o = windowctl(&["--input", dir.to_str().unwrap(), "--window", "tumbling:1h"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("is a directory") && !stderr(&o).contains(":1:"),
        "{}",
        stderr(&o)
    );
    // JSON lines read as CSV (stdin has no extension to tell) get a hint.
    let o = run_with_stdin(
        &["--window", "tumbling:1h"],
        "{\"event_time_ms\":1000,\"key\":\"a\",\"value\":1}\n",
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--format jsonl"), "{}", stderr(&o));
    // The hint is only for JSON: a CSV header without the fields keeps the usual advice.
    let o = run_with_stdin(&["--window", "tumbling:1h"], "time,k,v\n1000,a,1\n");
    assert!(!o.status.success());
    assert!(
        !stderr(&o).contains("--format jsonl") && stderr(&o).contains("header row"),
        "{}",
        stderr(&o)
    );
    // --out-of-orderness delays the event-time watermark: with processing time it would do
    // nothing, and is refused instead of reported in the summary as if it applied.
    let o = windowctl(&[
        "--input",
        "data/nycflights13_tailnum_tiny.csv",
        "--window",
        "tumbling:1h",
        "--time",
        "processing",
        "--out-of-orderness",
        "1h",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--out-of-orderness"), "{}", stderr(&o));
}
