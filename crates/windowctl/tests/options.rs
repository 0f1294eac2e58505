//! `windowctl run` end to end on its options: window kinds, evictors, `--window-all`, the
//! key-window and sliced strategies, `--help`, and the guards against jobs that could not run
//! (bad parameters, outputs over inputs, runaway window states, the ends of the time range).

mod common;

use std::process::Command;

use common::{assert_fails, sorted_output, stderr, stdout, windowctl, write_temp};

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
    assert_fails(
        &[
            "--input",
            "data/usgs_quakes_tiny.csv",
            "--window",
            "sliding:10000001ms:1ms",
        ],
        "10000001 windows",
    );
    assert_fails(
        &[
            "--input",
            "data/usgs_quakes_tiny.csv",
            "--window",
            "session:0s",
        ],
        "session gap must be positive",
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
        "--job",
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
    assert_fails(
        &[
            "--input",
            p.to_str().unwrap(),
            "--window",
            "tumbling:4ms",
            "--strategy",
            "keywindow",
        ],
        "sliding windows only",
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
    assert_fails(
        &["--input", path, "--window", "tumbling:1s", "--output", path],
        "is also an input",
    );
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        "event_time_ms,key,value\n1,a,1\n",
        "input intact"
    );
    let out = p.with_extension("out");
    assert_fails(
        &[
            "--input",
            path,
            "--window",
            "tumbling:1s",
            "--output",
            out.to_str().unwrap(),
            "--late-output",
            out.to_str().unwrap(),
        ],
        "each output needs its own file",
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
    assert_fails(
        &[
            "--input",
            p.to_str().unwrap(),
            "--window",
            "sliding:10000000ms:1ms",
            "--agg",
            "count",
        ],
        "more than the limit of 5000000",
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
    assert_fails(
        &[
            "--input",
            p.to_str().unwrap(),
            "--window",
            "sliding:10ms:5ms",
            "--strategy",
            "sliced",
        ],
        "too close to the end of the i64 range",
    );
}

#[test]
fn zero_idle_timeout_and_runaway_dstream_jobs_are_refused() {
    let p = write_temp("z.csv", "event_time_ms,key,value\n1,a,1\n");
    assert_fails(
        &[
            "--input",
            p.to_str().unwrap(),
            "--window",
            "tumbling:10ms",
            "--idle-timeout",
            "0ms",
        ],
        "--idle-timeout must be positive",
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
    assert_fails(&["--input", fake.to_str().unwrap()], "not gzip-compressed");
}

#[cfg(target_os = "linux")]
#[test]
fn a_failed_write_names_the_output_it_failed_on() {
    // /dev/full refuses every write (ENOSPC): the error names that output, not another one.
    let late = [
        "--input",
        "data/usgs_quakes_tiny.csv",
        "--output",
        "/dev/null",
        "--late-output",
        "/dev/full",
    ];
    let o = assert_fails(&late, "--late-output /dev/full: No space left on device");
    assert!(!stderr(&o).contains("--output"), "{}", stderr(&o));
    assert_fails(
        &[
            "--input",
            "data/usgs_quakes_tiny.csv",
            "--output",
            "/dev/full",
        ],
        "writing output: --output /dev/full: No space left on device",
    );
}

#[test]
fn a_socket_address_that_is_no_host_and_port_is_a_usage_error() {
    // A fresh-user trial: these failed as connections (exit 1, "invalid socket address").
    let bad = [
        "127.0.0.1",
        "127.0.0.1:99999",
        ":17999",
        "127.0.0.1:0",
        "localhost:+80",
    ];
    let more = [
        "[::1",
        "[abc]:80",
        "::1:7777",
        "a b:80",
        "ex/ample:80",
        "http://h:80",
    ];
    for addr in bad.into_iter().chain(more) {
        let o = windowctl(&["--socket", addr, "--window", "tumbling:1s"]);
        assert_eq!(o.status.code(), Some(2), "{addr}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("--socket {addr}: not HOST:PORT")),
            "{addr}: {}",
            stderr(&o)
        );
    }
}
