//! `auto`, the default strategy of job files and `windowctl` (issue #15, item 3): sliced windows
//! where their output is the native operator's, the native operator everywhere else; and an
//! explicit sliced strategy with a trigger or evictor is refused naming `auto` and `native`.

use window_assigners::TimeDomain;
use window_core::{Emitted, LateDataPolicy, Number, MAX_WATERMARK};
use window_job::{build, JobSpec, Strategy, WindowSpec};

const SLIDING: WindowSpec = WindowSpec::Sliding {
    size: 20,
    slide: 5,
    offset: 0,
};

fn spec(window: WindowSpec, aggregate: &str) -> JobSpec {
    let mut s = JobSpec::new(window, aggregate.parse().unwrap());
    s.strategy = Strategy::Auto;
    s
}

#[test]
fn a_job_file_without_a_strategy_is_auto() {
    let s = JobSpec::from_json(r#"{"window": "sliding:20ms:5ms", "aggregate": "sum"}"#).unwrap();
    assert_eq!(s.strategy, Strategy::Auto);
    assert_eq!(
        s.auto_strategy(),
        Strategy::Sliced(keywindow::EmitMode::AllWindows)
    );
    assert_eq!("auto".parse::<Strategy>().unwrap(), Strategy::Auto);
    assert_eq!(Strategy::Auto.label(), "auto");
}

#[test]
fn auto_is_sliced_only_where_sliced_gives_the_native_output() {
    let sliced = Strategy::Sliced(keywindow::EmitMode::AllWindows);
    assert_eq!(spec(SLIDING, "max").auto_strategy(), sliced);
    assert_eq!(spec(SLIDING, "count,sum,mean").auto_strategy(), sliced);
    let mut late = spec(SLIDING, "sum");
    late.allowed_lateness = 100;
    late.late_data = LateDataPolicy::SideOutput;
    assert_eq!(late.auto_strategy(), sliced);
    // Everything else runs natively.
    let tumbling = WindowSpec::Tumbling {
        size: 10,
        offset: 0,
    };
    assert_eq!(spec(tumbling, "sum").auto_strategy(), Strategy::Native);
    assert_eq!(spec(SLIDING, "list").auto_strategy(), Strategy::Native);
    let mut trigger = spec(SLIDING, "sum");
    trigger.trigger = "count:3".parse().unwrap();
    assert_eq!(trigger.auto_strategy(), Strategy::Native);
    let mut evictor = spec(SLIDING, "sum");
    evictor.evictor = Some("count:2".parse().unwrap());
    assert_eq!(evictor.auto_strategy(), Strategy::Native);
    let mut processing = spec(SLIDING, "sum");
    processing.time = TimeDomain::ProcessingTime;
    assert_eq!(processing.auto_strategy(), Strategy::Native);
    // An explicit strategy stays.
    let mut explicit = spec(SLIDING, "sum");
    explicit.strategy = Strategy::KeyWindow;
    assert_eq!(explicit.auto_strategy(), Strategy::KeyWindow);
}

/// Runs `spec` over seeded events with disorder (some behind the watermark, some beyond the
/// lateness): results and late elements as sorted text rows.
fn rows(spec: &JobSpec) -> Vec<String> {
    let mut op = build::<String>(spec).unwrap();
    let mut out = Vec::new();
    let mut seed = 0x15_u64;
    let mut max = i64::MIN;
    for _ in 0..500 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let t = (seed % 400) as i64 + max.max(0) / 2;
        let key = format!("k{}", (seed >> 10) % 3);
        op.process_element(key, Number::Int(((seed >> 20) % 50) as i64), t, &mut out)
            .unwrap();
        max = max.max(t);
        op.process_watermark(max - 10, &mut out);
    }
    op.process_watermark(MAX_WATERMARK, &mut out);
    let mut rows: Vec<String> = out
        .iter()
        .map(|e| match e {
            Emitted::Result {
                key,
                window,
                result,
                ..
            } => format!("{key} {window:?} {result:?}"),
            Emitted::Late { key, timestamp, .. } => format!("late {key} {timestamp}"),
            Emitted::Emptied { .. } => panic!("no empty results: {e:?}"),
        })
        .collect();
    rows.sort_unstable();
    rows
}

#[test]
fn auto_jobs_emit_the_native_rows() {
    for lateness in [0, 30] {
        let mut auto = spec(SLIDING, "max");
        auto.allowed_lateness = lateness;
        auto.late_data = LateDataPolicy::SideOutput;
        let mut native = auto.clone();
        native.strategy = Strategy::Native;
        let expected = rows(&native);
        assert!(
            expected.iter().any(|r| r.starts_with("late")),
            "no late element"
        );
        assert_eq!(rows(&auto), expected, "lateness {lateness}");
    }
    // With a trigger auto runs natively where sliced is refused.
    let mut counted = spec(SLIDING, "sum");
    counted.trigger = "count:2".parse().unwrap();
    let mut native = counted.clone();
    native.strategy = Strategy::Native;
    assert_eq!(rows(&counted), rows(&native));
}

#[test]
fn explicit_sliced_with_a_trigger_or_evictor_is_refused_naming_auto_and_native() {
    let mut s = spec(SLIDING, "sum");
    s.strategy = Strategy::Sliced(keywindow::EmitMode::AllWindows);
    s.trigger = "count:2".parse().unwrap();
    let e = build::<String>(&s).err().expect("refused").to_string();
    assert!(e.contains("no other trigger, no evictor"), "{e}");
    assert!(e.contains("strategy auto or native"), "{e}");
    s.trigger = "default".parse().unwrap();
    s.evictor = Some("count:2".parse().unwrap());
    let e = build::<String>(&s).err().expect("refused").to_string();
    assert!(e.contains("strategy auto or native"), "{e}");
}
