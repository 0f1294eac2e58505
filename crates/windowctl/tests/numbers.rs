//! Issue 16, item 6, end to end: sums and means that overflow only in between, integer sums
//! beyond 2^53, and NaN/infinite results in JSON, through every sliding-window strategy.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("windowctl-num-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// In time order, so that no strategy drops anything as late.
const INPUT: &str = "event_time_ms,key,value
1,a,1e308
1,b,1.7e308
1,c,9007199254740992
2,a,1e308
2,b,1.7e308
2,c,1
3,a,-1e308
3,b,-1.7e308
3,c,1
4,b,-1.7e308
12,a,0.5
12,c,-9007199254740992
12,d,1e308
13,d,1e308
";

/// The rows of a run, sorted, without the header and the key-window strategies' `empty`
/// results (which have no `result`), and without their `empty` column.
/// Runs `windowctl` in `dir` with `args`, which must succeed.
fn run_ok(dir: &PathBuf, args: &[&str]) {
    let o = Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn rows(dir: &PathBuf, agg: &str, strategy: &str, output: &str) -> Vec<String> {
    let o = Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .current_dir(dir)
        .args(["run", "--no-progress", "--input", "in.csv"])
        .args(["--window", "sliding:20ms:10ms", "--strategy", strategy])
        .args(["--agg", agg, "--output", output])
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = fs::read_to_string(dir.join(output)).expect("output");
    let mut rows: Vec<String> = text
        .lines()
        .filter(|l| {
            !l.starts_with("key,") && !l.ends_with(",true") && !l.contains("\"empty\":true")
        })
        .map(|l| l.trim_end_matches(",false").replace(",\"empty\":false", ""))
        .collect();
    rows.sort();
    rows
}

#[test]
fn sums_and_means_are_exact_and_do_not_overflow_in_between_in_every_strategy() {
    let dir = scratch("agg");
    fs::write(dir.join("in.csv"), INPUT).expect("input");
    // The plain f64 sums gave: a 1e308 then inf / -inf means; b NaN; c 9007199254740992 and 0.
    let sum = [
        "a,-10,10,1e308",
        "a,0,20,1e308",
        "a,10,30,0.5",
        "b,-10,10,0",
        "b,0,20,0",
        "c,-10,10,9007199254740994",
        "c,0,20,2",
        "c,10,30,-9007199254740992",
        "d,0,20,inf",
        "d,10,30,inf",
    ];
    let mean = [
        "a,-10,10,3.333333333333333e307",
        "a,0,20,2.5e307",
        "a,10,30,0.5",
        "b,-10,10,0",
        "b,0,20,0",
        "c,-10,10,3002399751580331.5",
        "c,0,20,0.5",
        "c,10,30,-9007199254740992",
        "d,0,20,1e308",
        "d,10,30,1e308",
    ];
    for strategy in ["native", "keywindow", "sliced", "sliced:changes"] {
        let changes = |want: &[&str]| -> Vec<String> {
            // Key windows and changes emit a key's result only where it changed: b's and d's
            // second windows repeat their first.
            let repeats = ["b,0,20,0", "d,10,30,inf", "d,10,30,1e308"];
            want.iter()
                .filter(|r| strategy == "native" || strategy == "sliced" || !repeats.contains(r))
                .map(|r| (*r).to_owned())
                .collect()
        };
        assert_eq!(
            rows(&dir, "sum", strategy, "sum.csv"),
            changes(&sum),
            "{strategy}"
        );
        assert_eq!(
            rows(&dir, "mean", strategy, "mean.csv"),
            changes(&mean),
            "{strategy}"
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn infinite_results_are_json_strings_not_null() {
    let dir = scratch("json");
    fs::write(dir.join("in.csv"), INPUT).expect("input");
    let rows = rows(&dir, "sum", "native", "sum.jsonl");
    let d: Vec<&String> = rows.iter().filter(|r| r.contains("\"d\"")).collect();
    assert_eq!(
        d,
        [
            "{\"key\":\"d\",\"window_start\":0,\"window_end\":20,\"result\":\"inf\"}",
            "{\"key\":\"d\",\"window_start\":10,\"window_end\":30,\"result\":\"inf\"}",
        ]
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn integer_sums_beyond_2_pow_53_print_exactly_in_every_strategy() {
    // Issue 16, item 6: the exact i64 sum was printed through an f64, so 2^53 + 1 came out as
    // 9007199254740992 (Flink sums a Long field exactly: 9007199254740993).
    let dir = scratch("exact");
    let input = "event_time_ms,key,value\n1,a,9007199254740992\n2,a,1\n3,b,9007199254740994\n4,b,9007199254740996\n";
    fs::write(dir.join("in.csv"), input).expect("input");
    for strategy in ["native", "keywindow", "sliced", "sliced:changes"] {
        let sum = rows(&dir, "sum", strategy, "sum.csv");
        assert!(
            sum.contains(&"a,-10,10,9007199254740993".to_owned()),
            "{strategy}: {sum:?}"
        );
        // (2^53 + 2 + 2^53 + 4) / 2 = 2^53 + 3.
        let mean = rows(&dir, "mean", strategy, "mean.csv");
        assert!(
            mean.contains(&"b,-10,10,9007199254740995".to_owned()),
            "{strategy}: {mean:?}"
        );
        let json = rows(&dir, "sum", strategy, "sum.jsonl");
        assert!(
            json.iter().any(|r| r.contains("\"window_start\":-10")
                && r.ends_with("\"result\":9007199254740993}")),
            "{strategy}: {json:?}"
        );
    }
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn integer_values_beyond_2_pow_53_are_read_exactly_in_every_strategy() {
    // Issue 16, item 6, the input half: values were read as f64, so 9007199254740993 became
    // 9007199254740992 before it was summed. The example: 9007199254740993 + 1 gives
    // 9007199254740994, as Flink's Long sum does; the maximum of 9007199254740993 and
    // 9007199254740992 is the first (their f64s are equal).
    let dir = scratch("exact-input");
    let input = "event_time_ms,key,value\n1,a,9007199254740993\n2,a,1\n3,b,9007199254740993\n4,b,9007199254740992\n";
    fs::write(dir.join("in.csv"), input).expect("input");
    for strategy in ["native", "keywindow", "sliced", "sliced:changes"] {
        let sum = rows(&dir, "sum", strategy, "sum.csv");
        assert!(
            sum.contains(&"a,-10,10,9007199254740994".to_owned()),
            "{strategy}: {sum:?}"
        );
        let max = rows(&dir, "max", strategy, "max.csv");
        assert!(
            max.contains(&"b,-10,10,9007199254740993".to_owned()),
            "{strategy}: {max:?}"
        );
        let min = rows(&dir, "min", strategy, "min.csv");
        assert!(
            min.contains(&"b,-10,10,9007199254740992".to_owned()),
            "{strategy}: {min:?}"
        );
        // Several aggregates print exact integers too.
        let several = rows(&dir, "count,sum,max", strategy, "several.csv");
        assert!(
            several.contains(&"a,-10,10,2,9007199254740994,9007199254740993".to_owned()),
            "{strategy}: {several:?}"
        );
    }
    // JSON lines: a number member and a string member.
    let json = concat!(
        "{\"event_time_ms\":1,\"key\":\"a\",\"value\":9007199254740993}\n",
        "{\"event_time_ms\":2,\"key\":\"a\",\"value\":\"1\"}\n",
    );
    fs::write(dir.join("in.jsonl"), json).expect("input");
    run_ok(
        &dir,
        &[
            "run",
            "--no-progress",
            "--input",
            "in.jsonl",
            "--window",
            "tumbling:10ms",
            "--agg",
            "sum",
            "--output",
            "json.csv",
        ],
    );
    let text = fs::read_to_string(dir.join("json.csv")).expect("output");
    assert!(text.contains("a,0,10,9007199254740994"), "{text}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn late_elements_and_evicting_windows_keep_exact_integers() {
    // The late output writes the value as read; a window with an evictor (which keeps its
    // elements) sums them exactly too.
    let dir = scratch("exact-late");
    let input = "event_time_ms,key,value\n100,a,1\n1,a,9007199254740993\n";
    fs::write(dir.join("in.csv"), input).expect("input");
    run_ok(
        &dir,
        &[
            "run",
            "--no-progress",
            "--input",
            "in.csv",
            "--window",
            "tumbling:10ms",
            "--out-of-orderness",
            "0",
            "--agg",
            "sum",
            "--output",
            "o.csv",
            "--late-output",
            "late.csv",
        ],
    );
    let late = fs::read_to_string(dir.join("late.csv")).expect("late output");
    assert!(late.contains("1,a,9007199254740993,"), "{late}");
    let input = "event_time_ms,key,value\n1,a,9007199254740993\n2,a,1\n";
    fs::write(dir.join("in.csv"), input).expect("input");
    run_ok(
        &dir,
        &[
            "run",
            "--no-progress",
            "--input",
            "in.csv",
            "--window",
            "tumbling:10ms",
            "--evictor",
            "count:5",
            "--agg",
            "sum",
            "--output",
            "e.csv",
        ],
    );
    let text = fs::read_to_string(dir.join("e.csv")).expect("output");
    assert!(text.contains("a,0,10,9007199254740994"), "{text}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn integer_sums_and_means_stay_exact_through_the_i64_range_in_every_strategy() {
    // The trial of 2026-12-01: a sum that left the i64 range on the way fell back to a float
    // for good (i64::MAX + 1 - 2 printed 9.223372036854776e18), so the result depended on the
    // order of the elements and native and sliced disagreed; the mean divided a rounded sum
    // (5 + 9007199254740993 + 1 over 3 printed 3002399751580333.5). The sum is an i128 now and
    // the mean is taken from it: exact, and the same in any order.
    let dir = scratch("exact-range");
    let max = i64::MAX;
    let input = format!(
        "event_time_ms,key,value\n1,a,{max}\n1,b,5\n1,c,{max}\n1,d,9000000000000000000\n2,a,1\n2,b,9007199254740993\n2,c,{max}\n2,d,9000000000000000000\n3,a,-2\n3,b,1\n3,c,{max}\n"
    );
    fs::write(dir.join("in.csv"), input).expect("input");
    for strategy in ["native", "keywindow", "sliced", "sliced:changes"] {
        let rows = rows(&dir, "sum,mean,min", strategy, "o.csv");
        for want in [
            "a,-10,10,9223372036854775806,3074457345618258602,-2",
            "b,-10,10,9007199254740999,3002399751580333,1",
            // Beyond the i64 range: exact digits (no Flink Long holds them).
            "c,-10,10,27670116110564327421,9223372036854775807,9223372036854775807",
            "d,-10,10,18000000000000000000,9000000000000000000,9000000000000000000",
        ] {
            assert!(
                rows.contains(&want.to_owned()),
                "{strategy}: {want} not in {rows:?}"
            );
        }
    }
    // A float result beyond 2^53 prints with an exponent, so plain digits there are exact.
    let input = "event_time_ms,key,value\n1,a,9007199254740993\n2,a,0.5\n3,a,-0.5\n";
    fs::write(dir.join("in.csv"), input).expect("input");
    let rows = rows(&dir, "sum", "native", "f.csv");
    assert!(
        rows.contains(&"a,-10,10,9.007199254740992e15".to_owned()),
        "{rows:?}"
    );
    let _ = fs::remove_dir_all(&dir);
}
