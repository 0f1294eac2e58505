//! Unit tests of the grammar and of building computations.

use super::*;
use keywindow::EmitMode;
use window_assigners::TimeDomain;
use window_core::{AnyWindow, Emitted, Timestamp, Window};

#[test]
fn window_specs_parse_with_units_and_reject_garbage() {
    assert_eq!(
        "sliding:1h:5min".parse::<WindowSpec>().unwrap(),
        WindowSpec::Sliding {
            size: 3_600_000,
            slide: 300_000,
            offset: 0
        }
    );
    assert_eq!(
        "tumbling:1d:-8h".parse::<WindowSpec>().unwrap(),
        WindowSpec::Tumbling {
            size: 86_400_000,
            offset: -28_800_000
        }
    );
    assert_eq!(
        "session:value".parse::<WindowSpec>().unwrap(),
        WindowSpec::DynamicSession
    );
    let e = "hopping:1h".parse::<WindowSpec>().unwrap_err().to_string();
    assert!(e.contains("'hopping:1h'"), "{e}");
    assert!("tumbling:1x".parse::<WindowSpec>().is_err());
}

#[test]
fn trigger_specs_parse_nested() {
    assert_eq!(
        "purging:count:3".parse::<TriggerSpec>().unwrap(),
        TriggerSpec::Purging(Box::new(TriggerSpec::Count(3)))
    );
    assert!("count:0".parse::<TriggerSpec>().is_err());
    assert_eq!(
        "delta:5:diff".parse::<TriggerSpec>().unwrap(),
        TriggerSpec::Delta {
            threshold: 5.0,
            function: DeltaSpec::Diff
        }
    );
}

/// Results of a job as (key, window, value).
type Rows = Vec<Emitted<String, AnyWindow, f64, JobResult>>;

/// A numeric result as (key, window bounds, value).
type Number = (String, Option<(Timestamp, Timestamp)>, Option<f64>);

fn numbers(out: &Rows) -> Vec<Number> {
    out.iter()
        .filter_map(|e| match e {
            Emitted::Result {
                key,
                window,
                result: JobResult::Number(v),
                ..
            } => Some((key.clone(), window.bounds(), *v)),
            _ => None,
        })
        .collect()
}

#[test]
fn processing_time_windows_fire_once_the_clock_passed_their_end_for_every_strategy() {
    // The wall clock reads 9 when an element arrives and the job advances processing time
    // to 9: window [0, 10) must not fire yet (Flink fires it once the clock passed 9), so
    // a second element arriving at 9 joins it, and it fires once, with both.
    for strategy in [Strategy::Native, Strategy::Sliced(EmitMode::AllWindows)] {
        let window = WindowSpec::Sliding {
            size: 10,
            slide: 5,
            offset: 0,
        };
        let mut spec = JobSpec::new(window, "sum".parse().unwrap());
        spec.time = TimeDomain::ProcessingTime;
        spec.strategy = strategy;
        let mut op = build::<String>(&spec).unwrap();
        let mut out = Rows::new();
        for value in [1.0, 2.0] {
            op.advance_wall_clock(9, &mut out);
            op.process_element("a".to_owned(), value, 9, &mut out)
                .unwrap();
        }
        op.advance_wall_clock(9, &mut out);
        assert!(out.is_empty(), "{strategy:?}: fired at 9: {out:?}");
        op.advance_wall_clock(10, &mut out);
        assert_eq!(
            numbers(&out),
            [("a".to_owned(), Some((0, 10)), Some(3.0))],
            "{strategy:?}"
        );
    }
}

#[test]
fn b46_session_with_delta_trigger_is_rejected_at_build() {
    // Scenario B46 (Flink WindowedStream check for merging assigners).
    let mut spec = JobSpec::new(WindowSpec::Session { gap: 5 }, "sum".parse().unwrap());
    spec.trigger = "delta:1".parse().unwrap();
    let err = build::<String>(&spec).err().unwrap().to_string();
    assert!(
        err.contains("cannot be used with a trigger that does not support merging"),
        "{err}"
    );
    assert!(err.contains("DeltaTrigger"), "{err}");
}
