//! The fluent API against what the same job gives elsewhere: Flink's count-window semantics,
//! the job-spec path `windowctl` runs, and the errors a Flink user expects.

use std::time::Duration;

use engine::assigners::{SlidingEventTimeWindows, TumblingEventTimeWindows};
use engine::core::{AnyWindow, Emitted, MapAggregate, Number, NumericAggregate, Window};
use engine::io::Event;
use engine::job::{build, JobAggregate, JobResult, JobSpec, WindowSpec};
use engine::operator::{CountEvictor, EvictMoment};
use engine::runtime::{IterSource, Runtime, RuntimeConfig, RuntimeError};
use engine::stream::{DataStream, WatermarkStrategy};
use engine::triggers::CountTrigger;

/// `(key, value, timestamp)` elements.
type Row = (&'static str, f64, i64);

/// A result as (key, window bounds, value, watermark).
type Result = (String, (i64, i64), Option<f64>, i64);

fn stamped(rows: Vec<Row>) -> DataStream<Row> {
    DataStream::from_collection(rows).assign_timestamps_and_watermarks(
        WatermarkStrategy::for_bounded_out_of_orderness(Duration::from_millis(2))
            .with_timestamp_assigner(|r: &Row| r.2),
    )
}

fn value() -> MapAggregate<fn(&Row) -> f64, NumericAggregate> {
    MapAggregate::new(|r: &Row| r.1, NumericAggregate::Sum)
}

#[test]
fn count_windows_slide_as_flinks_count_window_of_size_and_slide() {
    // Flink's countWindow(4, 2): every 2 elements, the sum of the last 4 (README of
    // tests/conformance/flink: GlobalWindows + CountEvictor.of(4) + CountTrigger.of(2)).
    let rows: Vec<Row> = (1..=7).map(|v| ("k", f64::from(v), i64::from(v))).collect();
    let out = stamped(rows)
        .key_by(|r: &Row| r.0)
        .count_window_sliding(4, 2)
        .unwrap()
        .aggregate(value())
        .unwrap()
        .collect()
        .unwrap();
    let sums: Vec<Option<f64>> = out.results.iter().map(|r| r.value).collect();
    assert_eq!(
        sums,
        [Some(3.0), Some(10.0), Some(18.0)],
        "7 is left over, never fired"
    );
}

#[test]
fn a_count_trigger_and_evictor_on_tumbling_windows_and_reduce() {
    // Every second element of a 10 ms window fires the max of the last 2 (count evictor before).
    let rows: Vec<Row> = vec![("a", 5.0, 1), ("a", 1.0, 2), ("a", 3.0, 3), ("a", 2.0, 4)];
    let out = stamped(rows)
        .key_by(|r: &Row| r.0)
        .window(TumblingEventTimeWindows::of(Duration::from_millis(10)).unwrap())
        .trigger(CountTrigger::of(2).unwrap())
        .evictor(CountEvictor::of(2, EvictMoment::Before))
        .reduce(|a: Row, b: &Row| if b.1 > a.1 { *b } else { a })
        .unwrap()
        .collect()
        .unwrap();
    let maxima: Vec<f64> = out.results.iter().map(|r| r.value.unwrap().1).collect();
    assert_eq!(maxima, [5.0, 3.0]);
}

#[test]
fn the_fluent_job_gives_what_the_job_spec_gives() {
    // The same sliding sum through the fluent API and through window-job's build (windowctl's
    // path) on the runtime: the same results, in the same order.
    let rows: Vec<Row> = (0..2_000)
        .map(|i| {
            (
                ["a", "b", "c", "d"][i % 4],
                (i % 17) as f64,
                (i * 3 % 700 + i / 2) as i64,
            )
        })
        .collect();
    let fluent = stamped(rows.clone())
        .key_by(|r: &Row| r.0)
        .window(
            SlidingEventTimeWindows::of(Duration::from_millis(50), Duration::from_millis(20))
                .unwrap(),
        )
        .allowed_lateness(Duration::from_millis(30))
        .side_output_late_data()
        .aggregate(value())
        .unwrap()
        .collect()
        .unwrap();
    let mut spec = JobSpec::new(
        WindowSpec::Sliding {
            size: 50,
            slide: 20,
            offset: 0,
        },
        JobAggregate::Numeric(NumericAggregate::Sum),
    );
    spec.allowed_lateness = 30;
    spec.late_data = engine::core::LateDataPolicy::SideOutput;
    let config = RuntimeConfig {
        out_of_orderness: 2,
        ..RuntimeConfig::default()
    };
    let mut rt = Runtime::new(build::<String>(&spec).unwrap(), config);
    let events = rows.into_iter().zip(1..).map(|((k, v, t), line)| Event {
        timestamp: t,
        key: k.to_owned(),
        value: Number::Float(v),
        line,
    });
    rt.add_source(Box::new(IterSource::new("rows", events)));
    let mut out: Vec<Emitted<String, AnyWindow, Number, JobResult>> = Vec::new();
    rt.run(&mut out).unwrap();
    let spec_results: Vec<Result> = out
        .iter()
        .filter_map(|e| match e {
            Emitted::Result {
                key,
                window,
                result,
                watermark,
            } => Some((
                key.clone(),
                window.bounds().unwrap(),
                result.clone().into(),
                *watermark,
            )),
            _ => None,
        })
        .collect();
    let fluent_results: Vec<Result> = fluent
        .results
        .iter()
        .map(|r| {
            (
                r.key.to_owned(),
                (r.window.start(), r.window.end()),
                r.value,
                r.watermark,
            )
        })
        .collect();
    assert!(fluent_results.len() > 300);
    assert_eq!(fluent_results, spec_results);
    let late = out
        .iter()
        .filter(|e| matches!(e, Emitted::Late { .. }))
        .count();
    assert_eq!(fluent.late.len(), late);
    assert!(late > 0, "the input has late elements");
}

#[test]
fn elements_without_timestamps_in_event_time_are_an_error_naming_the_element() {
    // Flink: "Record has Long.MIN_VALUE timestamp (= no timestamp marker)".
    let err = DataStream::from_collection(vec![("a", 1.0, 5_i64)])
        .key_by(|r: &Row| r.0)
        .window(TumblingEventTimeWindows::of(Duration::from_secs(1)).unwrap())
        .aggregate(value())
        .unwrap()
        .collect()
        .unwrap_err();
    let RuntimeError::Input(e) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(e.line, 1);
    assert!(err.to_string().contains("no timestamp"), "{err}");
}

#[test]
fn a_tuple_key_and_a_user_struct_value() {
    // Keyed by (region, product), a struct as the element, a reduce keeping the largest order.
    #[derive(Clone, Debug, PartialEq)]
    struct Order {
        region: u8,
        product: &'static str,
        cents: u64,
        at: i64,
    }
    let order = |region, product, cents, at| Order {
        region,
        product,
        cents,
        at,
    };
    let orders = vec![
        order(1, "tea", 300, 1),
        order(1, "tea", 500, 4),
        order(2, "tea", 200, 5),
        order(1, "cake", 900, 6),
        order(1, "tea", 100, 12),
    ];
    let out = DataStream::from_collection(orders)
        .assign_timestamps_and_watermarks(
            WatermarkStrategy::for_monotonous_timestamps()
                .with_timestamp_assigner(|o: &Order| o.at),
        )
        .key_by(|o: &Order| (o.region, o.product))
        .window(TumblingEventTimeWindows::of(Duration::from_millis(10)).unwrap())
        .reduce(|a: Order, b: &Order| if b.cents > a.cents { b.clone() } else { a })
        .unwrap()
        .collect()
        .unwrap();
    let got: Vec<((u8, &str), i64, u64)> = out
        .results
        .iter()
        .map(|r| (r.key, r.window.start(), r.value.as_ref().unwrap().cents))
        .collect();
    assert_eq!(
        got,
        [
            ((1, "tea"), 0, 500),
            ((2, "tea"), 0, 200),
            ((1, "cake"), 0, 900),
            ((1, "tea"), 10, 100),
        ]
    );
}
