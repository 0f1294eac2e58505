//! Issue #16, items 2, 3 and 7 end to end: windows near the ends of `i64` time are aligned or
//! the element is refused naming its line; a processing-time trigger on event-time windows fires
//! in a `windowctl` job (the runtime advances processing time before every batch); and sliced
//! windows in processing time warn, as native and keywindow do, of windows still open at the
//! end of input.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("windowctl-ends-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn windowctl(dir: &PathBuf, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .arg("run")
        .arg("--no-progress")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn tumbling_windows_near_i64_min_are_aligned_or_the_element_refused() {
    // The events: 10 s windows came out as [-...775808, -...765808) (clamped at
    // i64::MIN, overlapping the next, without its element) and [-...770000, -...760000).
    let dir = scratch("min");
    fs::write(
        dir.join("in.csv"),
        "event_time_ms,key,value\n-9223372036854775807,a,1\n-9223372036854769000,a,1\n-9223372036854760000,a,1\n",
    )
    .expect("input");
    let o = windowctl(&dir, &["--input", "in.csv", "--window", "tumbling:10s"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("in.csv:2: field 'event_time_ms'")
            && err.contains("too close to the end of the i64 range for windows of 10000 ms"),
        "{err}"
    );
    let o = windowctl(
        &dir,
        &[
            "--input",
            "in.csv",
            "--window",
            "tumbling:10s",
            "--on-error",
            "skip",
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "key,window_start,window_end,result\n\
         a,-9223372036854770000,-9223372036854760000,1\n\
         a,-9223372036854760000,-9223372036854750000,1\n"
    );
    assert!(text(&o.stderr).contains("rejected by the assigner: 1"));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn sliding_windows_near_i64_max_end_where_they_fit() {
    let dir = scratch("max");
    fs::write(
        dir.join("in.csv"),
        "event_time_ms,key,value\n9223372036854760000,a,1\n9223372036854769999,a,1\n9223372036854770000,a,1\n9223372036854775807,a,1\n",
    )
    .expect("input");
    // The native operator's rule (`--strategy auto` picks sliced windows, which refuse every
    // element within size + slide of the end: docs/sliced.md, "Ends of time").
    let o = windowctl(
        &dir,
        &[
            "--input",
            "in.csv",
            "--window",
            "sliding:10s:5s",
            "--agg",
            "count",
            "--on-error",
            "skip",
            "--strategy",
            "native",
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    // [...770000, ...780000) does not fit: the last two elements are refused.
    assert_eq!(
        text(&o.stdout),
        "key,window_start,window_end,result\n\
         a,9223372036854755000,9223372036854765000,1\n\
         a,9223372036854760000,9223372036854770000,2\n\
         a,9223372036854765000,9223372036854775000,1\n"
    );
    assert!(text(&o.stderr).contains("rejected by the assigner: 2"));
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn a_processing_time_trigger_on_event_time_windows_fires_in_a_job() {
    // One event-time window, [0, 100 s), whose end the wall clock passed long ago: its first
    // processing-time fire time is that end, due at the runtime's next batch. 5000 elements
    // come in several batches, so it fires before the end of input, with part of them.
    let dir = scratch("proc-trigger");
    let mut input = String::from("event_time_ms,key,value\n");
    for t in 0..5_000 {
        input.push_str(&format!("{t},a,1\n"));
    }
    fs::write(dir.join("in.csv"), input).expect("input");
    let o = windowctl(
        &dir,
        &[
            "--input",
            "in.csv",
            "--window",
            "tumbling:100s",
            "--agg",
            "count",
            "--trigger",
            "continuous-processing-time:5ms",
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let counts: Vec<f64> = out
        .lines()
        .skip(1)
        .map(|l| {
            assert!(l.starts_with("a,0,100000,"), "{l}");
            l.rsplit(',').next().unwrap().parse().unwrap()
        })
        .collect();
    assert!(!counts.is_empty(), "no firing: {out}");
    assert!(counts[0] < 5_000.0, "{counts:?}");
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn sliced_in_processing_time_warns_of_windows_open_at_the_end_of_input() {
    // Two elements stay batched (no window is due before the end): sliced reported no live
    // slices and printed no warning, where native and keywindow do.
    let dir = scratch("sliced-open");
    fs::write(
        dir.join("in.csv"),
        "event_time_ms,key,value\n1,a,1\n2,b,1\n",
    )
    .expect("input");
    for (strategy, open) in [
        ("native", 20),
        ("keywindow", 4),
        ("sliced", 2),
        ("sliced:changes", 2),
    ] {
        let o = windowctl(
            &dir,
            &[
                "--input",
                "in.csv",
                "--time",
                "processing",
                "--window",
                "sliding:10min:1min",
                "--agg",
                "count",
                "--strategy",
                strategy,
            ],
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
        let err = text(&o.stderr);
        let warning = format!(
            "{open} processing-time windows were still open at end of input and did not fire"
        );
        assert!(err.contains(&warning), "{strategy}: {err}");
    }
    let _ = fs::remove_dir_all(&dir);
}
