//! `windowctl run` end to end, on the bundled real data, against expected outputs computed
//! independently of this project's code by `tests/data/oracle.py` (a plain Python model of
//! Flink's tumbling event-time windows with a bounded-out-of-orderness watermark).

mod common;

use common::{check_against_oracle, expected, stderr, stdout, windowctl};

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
