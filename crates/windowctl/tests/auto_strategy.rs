//! `--strategy auto`, the default (issue #15, item 3): sliced windows for sliding windows in
//! event time with the default trigger, no evictor and a numeric aggregate, the native
//! operator otherwise; the same rows as `--strategy native` either way; and an explicit
//! `--strategy sliced` with a trigger is refused naming `auto` and `native`.

mod common;

use common::{assert_fails, sorted_output, stderr, windowctl};

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
