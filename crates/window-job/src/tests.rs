//! Unit tests of the grammar and of building computations.

use super::*;
use crate::{DeltaSpec, EvictorSpec};
use keywindow::EmitMode;
use window_assigners::TimeDomain;
use window_core::{AnyWindow, Emitted, Number, Timestamp, Window};

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
        TriggerSpec::Purging {
            inner: Box::new(TriggerSpec::Count { count: 3 })
        }
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
type Rows = Vec<Emitted<String, AnyWindow, Number, JobResult>>;

/// A numeric result as (key, window bounds, value).
type NumberRow = (String, Option<(Timestamp, Timestamp)>, Option<f64>);

fn numbers(out: &Rows) -> Vec<NumberRow> {
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
            op.process_element("a".to_owned(), Number::from(value), 9, &mut out)
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

#[test]
fn a_conformance_case_input_is_a_job_spec() {
    // The input of the Flink case allowed-lateness-late-firings, without its events.
    let json = r#"{
        "watermarks": {"type": "bounded", "max_out_of_orderness": 0},
        "assigner": {"type": "sliding", "size": 10, "slide": 5, "offset": 0},
        "trigger": {"type": "purging", "inner": {"type": "count", "count": 2}},
        "evictor": {"type": "delta", "threshold": 2, "delta_fn": "diff", "evict_after": true},
        "allowed_lateness": 20,
        "late_side_output": true,
        "aggregate": "list"
    }"#;
    let spec = JobSpec::from_json(json).unwrap();
    let window = WindowSpec::Sliding {
        size: 10,
        slide: 5,
        offset: 0,
    };
    let mut expected = JobSpec::new(window, JobAggregate::List);
    expected.trigger = TriggerSpec::Purging {
        inner: Box::new(TriggerSpec::Count { count: 2 }),
    };
    expected.evictor = Some(EvictorSpec::Delta {
        threshold: 2.0,
        function: DeltaSpec::Diff,
        moment: window_operator::EvictMoment::After,
    });
    expected.allowed_lateness = 20;
    expected.late_data = window_core::LateDataPolicy::SideOutput;
    // No strategy given: auto (which is the native operator for this job).
    expected.strategy = Strategy::Auto;
    assert_eq!(spec, expected);
    assert_eq!(spec.auto_strategy(), Strategy::Native);
    // The canonical form reads back as the same job.
    assert_eq!(JobSpec::from_json(&spec.canonical()).unwrap(), spec);
}

#[test]
fn a_toml_job_file_takes_the_command_lines_grammar_and_units() {
    let toml = r#"
        name = "delays"
        assigner = "sliding:1h:5min"
        trigger = "purging:count:3"
        aggregate = "mean"
        strategy = "sliced:changes"
        time = "event"
        allowed_lateness = "10min"
        watermarks = { type = "bounded", max_out_of_orderness = "6h", idle_timeout = "30s" }
        [io]
        input = ["data/nycflights13_dest.csv.gz"]
        output = "delays.jsonl"
    "#;
    let spec = JobSpec::from_toml(toml).unwrap();
    assert_eq!(spec.name.as_deref(), Some("delays"));
    // The values written out, not parsed by the grammar under test.
    assert_eq!(
        spec.window,
        WindowSpec::Sliding {
            size: 3_600_000,
            slide: 300_000,
            offset: 0
        }
    );
    assert_eq!(
        spec.trigger,
        TriggerSpec::Purging {
            inner: Box::new(TriggerSpec::Count { count: 3 })
        }
    );
    assert_eq!(spec.strategy, Strategy::Sliced(EmitMode::Changes));
    assert_eq!(spec.allowed_lateness, 600_000);
    assert_eq!(
        spec.watermarks,
        WatermarkSpec::Bounded {
            max_out_of_orderness: 21_600_000,
            interval: 0,
            idle_timeout: Some(30_000)
        }
    );
    assert_eq!(spec.io.input, ["data/nycflights13_dest.csv.gz"]);
    assert_eq!(JobSpec::from_json(&spec.canonical()).unwrap(), spec);
}

#[test]
fn a_job_file_with_a_typo_or_a_bad_value_says_where() {
    let e = JobSpec::from_toml("assigner = \"global\"\naggregat = \"sum\"\n").unwrap_err();
    assert!(e.to_string().contains("aggregat"), "{e}");
    let e = JobSpec::from_json(r#"{"assigner": "tumbling:1x", "aggregate": "sum"}"#).unwrap_err();
    assert!(e.to_string().contains("1x"), "{e}");
    let e = JobSpec::from_json(r#"{"assigner": {"type": "tumbling"}, "aggregate": "sum"}"#)
        .unwrap_err();
    assert!(e.to_string().contains("size"), "{e}");
}

#[test]
fn validation_errors_name_the_flink_rule_they_enforce() {
    let cases = [
        (
            r#"{"assigner": {"type": "tumbling", "size": 10, "offset": 10}, "aggregate": "sum"}"#,
            window_core::FlinkRule::TumblingWindowParameters,
        ),
        (
            r#"{"assigner": {"type": "tumbling", "size": 0}, "aggregate": "sum"}"#,
            window_core::FlinkRule::TumblingWindowParameters,
        ),
        (
            r#"{"assigner": {"type": "sliding", "size": 10, "slide": 0}, "aggregate": "sum"}"#,
            window_core::FlinkRule::SlidingWindowParameters,
        ),
        (
            r#"{"assigner": {"type": "session", "gap": -5}, "aggregate": "sum"}"#,
            window_core::FlinkRule::SessionGapPositive,
        ),
        (
            r#"{"assigner": "session:5", "trigger": "count:3", "aggregate": "sum", "allowed_lateness": -1}"#,
            window_core::FlinkRule::AllowedLatenessNotNegative,
        ),
    ];
    for (json, rule) in cases {
        let spec = JobSpec::from_json(json).unwrap();
        let err = build::<String>(&spec).err().expect("rejected");
        assert_eq!(err.rule(), Some(rule), "{json}: {err}");
        assert!(err.to_string().contains(rule.flink_message()), "{err}");
    }
}
