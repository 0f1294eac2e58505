//! `--strategy auto`, the default (issue #15, item 3): sliced windows for sliding windows in
//! event time with the default trigger, no evictor and a numeric aggregate, the native
//! operator otherwise; the same rows as `--strategy native` either way; and an explicit
//! `--strategy sliced` with a trigger is refused naming `auto` and `native`.

mod common;

use common::{assert_fails, sorted_output, stderr, windowctl, write_temp};

const TINY: &str = "data/nycflights13_tailnum_tiny.csv";

#[test]
fn the_default_strategy_slices_sliding_windows_and_emits_the_native_rows() {
    let job = [
        "--input",
        TINY,
        "--window",
        "sliding:1h:10min",
        "--agg",
        "max",
        "--out-of-orderness",
        "10min",
        "--allowed-lateness",
        "1h",
    ];
    let auto = windowctl(&job);
    assert!(auto.status.success(), "{}", stderr(&auto));
    assert!(
        stderr(&auto).contains("slices created"),
        "{}",
        stderr(&auto)
    );
    let native = windowctl(&[&job[..], &["--strategy", "native"]].concat());
    assert!(native.status.success(), "{}", stderr(&native));
    assert!(!stderr(&native).contains("slices created"));
    assert_eq!(sorted_output(&auto), sorted_output(&native));
    let explicit = windowctl(&[&job[..], &["--strategy", "auto"]].concat());
    assert_eq!(sorted_output(&explicit), sorted_output(&native));
}

#[test]
fn auto_runs_a_job_with_a_trigger_natively_where_sliced_is_refused() {
    let job = [
        "--input",
        TINY,
        "--window",
        "sliding:1h:10min",
        "--agg",
        "sum",
        "--trigger",
        "count:2",
    ];
    let auto = windowctl(&job);
    assert!(auto.status.success(), "{}", stderr(&auto));
    assert!(!stderr(&auto).contains("slices created"));
    let native = windowctl(&[&job[..], &["--strategy", "native"]].concat());
    assert_eq!(sorted_output(&auto), sorted_output(&native));
    assert_fails(
        &[&job[..], &["--strategy", "sliced"]].concat(),
        "strategy auto or native runs this job on the native operator",
    );
}

/// Mends from the seventh fresh-user trial: messages name what the user gave.
#[test]
fn messages_name_the_flag_and_the_strategy_that_refused() {
    // Near the start of time: sliced (auto's choice) refuses what native takes, and says so.
    let ends = write_temp(
        "auto-ends.csv",
        "event_time_ms,key,value\n-9223372036854775800,a,1\n0,a,3\n",
    );
    let ends = ends.to_str().expect("utf-8 path");
    let job = [
        "--input",
        ends,
        "--window",
        "sliding:10ms:5ms",
        "--agg",
        "sum",
    ];
    assert_fails(
        &job,
        "rejected by the sliced strategy (--strategy, default auto)",
    );
    assert_fails(&job, "--strategy native takes this element");
    let native = windowctl(&[&job[..], &["--strategy", "native"]].concat());
    assert!(native.status.success(), "{}", stderr(&native));
    // Near the end of time, an element native refuses too: no hint to use it.
    let both = write_temp(
        "auto-ends-both.csv",
        "event_time_ms,key,value
0,a,3
9223372036854775800,a,1
",
    );
    let both_job = [
        "--input",
        both.to_str().expect("utf-8 path"),
        "--window",
        "sliding:10ms:5ms",
        "--agg",
        "sum",
    ];
    for (strategy, refused_by) in [
        ("auto", "the sliced strategy (--strategy, default auto)"),
        ("native", "the window assigner"),
    ] {
        let run = windowctl(&[&both_job[..], &["--strategy", strategy]].concat());
        assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
        assert!(
            stderr(&run).contains(&format!("rejected by {refused_by}")),
            "{}",
            stderr(&run)
        );
        assert!(
            stderr(&run).contains(
                "auto-ends-both.csv:3: field 'event_time_ms': element (9223372036854775800, \
                 value 1)"
            ),
            "{}",
            stderr(&run)
        );
        assert!(
            stderr(&run).contains("too close to the end of the i64 range"),
            "{}",
            stderr(&run)
        );
        assert!(
            !stderr(&run).contains("--strategy native"),
            "{}",
            stderr(&run)
        );
        assert_eq!(
            stderr(&run).contains("the native operator refuses it too"),
            strategy == "auto",
            "{}",
            stderr(&run)
        );
    }
    // i64::MIN is Flink's "no timestamp": said so, not as a library's advice.
    let min = write_temp(
        "auto-min.csv",
        "event_time_ms,key,value
-9223372036854775808,a,1
",
    );
    for strategy in ["auto", "native"] {
        let run = windowctl(&[
            "--input",
            min.to_str().expect("utf-8 path"),
            "--window",
            "sliding:10ms:5ms",
            "--agg",
            "sum",
            "--strategy",
            strategy,
        ]);
        assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
        assert!(
            stderr(&run).contains(
                "auto-min.csv:2: field 'event_time_ms': element (-9223372036854775808, value 1): \
                 timestamp -9223372036854775808 is i64::MIN, which stands for \"no timestamp\" \
                 (Flink's Long.MIN_VALUE) and has no event-time window"
            ),
            "{}",
            stderr(&run)
        );
    }
    // --emit changes without a sliding window, under auto: the flag is named, not a strategy.
    assert_fails(
        &[
            "--input",
            TINY,
            "--window",
            "tumbling:1h",
            "--emit",
            "changes",
        ],
        "--emit changes (the key-window output of sliced windows) needs sliding windows",
    );
    // The event-time trigger named explicitly is the default: sliced takes it.
    let named = [
        "--input",
        TINY,
        "--window",
        "sliding:1h:10min",
        "--agg",
        "sum",
        "--strategy",
        "sliced",
        "--trigger",
        "event-time",
    ];
    let sliced = windowctl(&named);
    assert!(sliced.status.success(), "{}", stderr(&sliced));
    let native = windowctl(&[&named[..6], &["--strategy", "native"]].concat());
    assert_eq!(sorted_output(&sliced), sorted_output(&native));
    // sliced:changes names itself.
    assert_fails(
        &[
            "--input",
            TINY,
            "--window",
            "sliding:1h:10min",
            "--strategy",
            "sliced:changes",
            "--trigger",
            "count:2",
        ],
        "invalid strategy 'sliced:changes'",
    );
}
