//! Several aggregates in one job (`count,sum,max`, issue #16 item 13): each of the job's
//! results equals the single aggregate's result, row for row, in every strategy and window kind,
//! with triggers, evictors and allowed lateness; the grammar, job files and snapshots.

use window_core::{AnyWindow, Emitted, LateDataPolicy, Number, Window, MAX_WATERMARK};
use window_job::{build, JobAggregate, JobResult, JobSpec};

type Rows = Vec<Emitted<String, AnyWindow, Number, JobResult>>;

/// One output row with the result as bits (NaN compares equal to itself), so that rows of
/// different jobs compare exactly.
#[derive(Debug, PartialEq)]
enum Row {
    Result(String, Option<(i64, i64)>, Option<u64>, i64),
    Late(String, i64, u64, i64),
    Emptied(String, Option<(i64, i64)>, i64),
}

const SINGLES: [&str; 5] = ["count", "sum", "min", "max", "mean"];

/// Seeded events: four keys, integer and fractional values, timestamps out of order by up to
/// 30 ms, a few far behind (late with a 20 ms watermark delay).
fn events() -> Vec<(String, f64, i64)> {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..400i64)
        .map(|i| {
            let r = next();
            let key = format!("k{}", r % 4);
            let value = match r % 5 {
                0 => ((r >> 8) % 100) as f64 / 8.0 - 3.0,
                1 => -(((r >> 8) % 1000) as f64),
                _ => ((r >> 8) % 50) as f64,
            };
            let jitter = ((r >> 20) % 30) as i64;
            let behind = if r % 37 == 0 { 60 } else { 0 };
            (key, value, i * 3 - jitter - behind)
        })
        .collect()
}

/// Runs `spec` over `events` with a watermark 20 ms behind the largest timestamp after each
/// element, then the end of input.
fn run(spec: &JobSpec, events: &[(String, f64, i64)]) -> Rows {
    let mut op = build::<String>(spec).unwrap_or_else(|e| panic!("{spec:?}: {e}"));
    let mut out = Rows::new();
    let mut max = i64::MIN;
    for (key, value, ts) in events {
        op.process_element(key.clone(), Number::from(*value), *ts, &mut out)
            .unwrap_or_else(|r| panic!("{}", r.error));
        max = max.max(*ts);
        op.process_watermark(max - 20, &mut out);
    }
    op.process_watermark(MAX_WATERMARK, &mut out);
    out
}

/// The rows of a run, with column `column` of several results (`None`: a single result).
fn rows(out: &Rows, column: Option<usize>) -> Vec<Row> {
    out.iter()
        .map(|e| match e {
            Emitted::Result {
                key,
                window,
                result,
                watermark,
            } => {
                let v = match (result, column) {
                    (JobResult::Number(v), None) => *v,
                    (JobResult::Integer(i), None) => Some(*i as f64),
                    (JobResult::Numbers(vs), Some(i)) => vs[i].as_f64(),
                    other => panic!("unexpected result {other:?}"),
                };
                Row::Result(
                    key.clone(),
                    window.bounds(),
                    v.map(f64::to_bits),
                    *watermark,
                )
            }
            Emitted::Late {
                key,
                timestamp,
                value,
                watermark,
            } => Row::Late(
                key.clone(),
                *timestamp,
                value.as_f64().to_bits(),
                *watermark,
            ),
            Emitted::Emptied {
                key,
                window,
                watermark,
            } => Row::Emptied(key.clone(), window.bounds(), *watermark),
        })
        .collect()
}

/// The job of `window`, `trigger`, `evictor`, `strategy` and lateness over `aggregate`.
fn job(aggregate: &str, setup: &Setup) -> JobSpec {
    let mut spec = JobSpec::new(setup.window.parse().unwrap(), aggregate.parse().unwrap());
    spec.strategy = setup.strategy.parse().unwrap();
    if let Some(t) = setup.trigger {
        spec.trigger = t.parse().unwrap();
    }
    spec.evictor = setup.evictor.map(|e| e.parse().unwrap());
    spec.allowed_lateness = setup.lateness;
    spec.late_data = LateDataPolicy::SideOutput;
    spec
}

struct Setup {
    strategy: &'static str,
    window: &'static str,
    trigger: Option<&'static str>,
    evictor: Option<&'static str>,
    lateness: i64,
}

const fn setup(strategy: &'static str, window: &'static str) -> Setup {
    Setup {
        strategy,
        window,
        trigger: None,
        evictor: None,
        lateness: 0,
    }
}

fn setups() -> Vec<Setup> {
    let mut all = Vec::new();
    for strategy in ["native", "keywindow", "sliced", "sliced:changes"] {
        all.push(setup(strategy, "sliding:40ms:10ms"));
        all.push(Setup {
            lateness: 25,
            ..setup(strategy, "sliding:40ms:10ms")
        });
    }
    for window in [
        "tumbling:25ms",
        "tumbling:25ms:7ms",
        "session:8ms",
        "global:end-of-stream",
        "count:3",
        "count:5:2",
    ] {
        all.push(setup("native", window));
    }
    all.push(Setup {
        lateness: 30,
        ..setup("native", "session:8ms")
    });
    all.push(Setup {
        trigger: Some("count:2"),
        ..setup("native", "tumbling:25ms")
    });
    all.push(Setup {
        trigger: Some("continuous-event-time:10ms"),
        ..setup("native", "session:8ms")
    });
    all.push(Setup {
        trigger: Some("purging:count:3"),
        ..setup("native", "global")
    });
    all.push(Setup {
        evictor: Some("count:2"),
        ..setup("native", "sliding:40ms:10ms")
    });
    all.push(Setup {
        evictor: Some("delta:10:after"),
        trigger: Some("count:3"),
        ..setup("native", "tumbling:50ms")
    });
    all
}

#[test]
fn each_column_is_the_single_aggregates_result_in_every_strategy_and_window_kind() {
    let events = events();
    let (mut late, mut emptied) = (0, 0);
    for setup in setups() {
        let several = run(&job("count,sum,min,max,mean", &setup), &events);
        late += several
            .iter()
            .filter(|e| matches!(e, Emitted::Late { .. }))
            .count();
        emptied += several
            .iter()
            .filter(|e| matches!(e, Emitted::Emptied { .. }))
            .count();
        let label = format!(
            "{} {} {:?} {:?} lateness {}",
            setup.strategy, setup.window, setup.trigger, setup.evictor, setup.lateness
        );
        assert!(several.len() >= 4, "{label}: too few rows to compare");
        for (i, single) in SINGLES.iter().enumerate() {
            let want = rows(&run(&job(single, &setup), &events), None);
            assert_eq!(rows(&several, Some(i)), want, "{label}: column {single}");
        }
        // Another order and a subset give the same columns, moved.
        let two = run(&job("max, count", &setup), &events);
        assert_eq!(rows(&two, Some(0)), rows(&several, Some(3)), "{label}");
        assert_eq!(rows(&two, Some(1)), rows(&several, Some(0)), "{label}");
    }
    assert!(late > 0 && emptied > 0, "late {late}, emptied {emptied}");
}

#[test]
fn several_aggregates_parse_print_and_refuse_duplicates() {
    let a: JobAggregate = "count,sum,max".parse().unwrap();
    assert_eq!(a.to_string(), "count,sum,max");
    assert!(matches!(a, JobAggregate::Several(s) if s.len() == 3));
    assert_eq!(
        "sum,".parse::<JobAggregate>().unwrap_err().to_string(),
        "invalid aggregate 'sum,': an empty name in the list: separate count, sum, min, max or \
         mean by single commas"
    );
    assert_eq!(
        " mean ,count".parse::<JobAggregate>().unwrap().to_string(),
        "mean,count"
    );
    assert_eq!(
        "count,sum,count"
            .parse::<JobAggregate>()
            .unwrap_err()
            .to_string(),
        "invalid aggregate 'count,sum,count': count is listed twice (each aggregate once)"
    );
    assert_eq!(
        "count,median"
            .parse::<JobAggregate>()
            .unwrap_err()
            .to_string(),
        "invalid aggregate 'count,median': unknown aggregate 'median' in the list: expected \
         count, sum, min, max or mean, each once"
    );
    let e = "count,list"
        .parse::<JobAggregate>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("list keeps the elements"), "{e}");
    // mean and avg are one aggregate.
    let e = "mean,avg".parse::<JobAggregate>().unwrap_err().to_string();
    assert!(e.contains("mean is listed twice"), "{e}");
}

#[test]
fn job_files_take_the_list_as_text_or_as_a_list() {
    let toml = JobSpec::from_toml("assigner = \"tumbling:1h\"\naggregate = [\"count\", \"max\"]\n")
        .unwrap();
    let text =
        JobSpec::from_toml("assigner = \"tumbling:1h\"\naggregate = \"count,max\"\n").unwrap();
    assert_eq!(toml, text);
    assert_eq!(toml.aggregate.to_string(), "count,max");
    let json = JobSpec::from_json(r#"{"assigner": "tumbling:1h", "aggregate": ["count", "max"]}"#)
        .unwrap();
    assert_eq!(json, toml);
    // One name in a list is the single aggregate.
    let one = JobSpec::from_json(r#"{"assigner": "tumbling:1h", "aggregate": ["sum"]}"#).unwrap();
    assert_eq!(one.aggregate, "sum".parse().unwrap());
    // The canonical form (what checkpoints compare) reads back to the same job.
    assert_eq!(JobSpec::from_json(&toml.canonical()).unwrap(), toml);
    let e = JobSpec::from_toml("assigner = \"tumbling:1h\"\naggregate = [\"sum\", \"sum\"]\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("sum is listed twice"), "{e}");
}

/// A job with several aggregates snapshots mid-run and a restored copy continues with the same
/// output as the uninterrupted run, in every strategy.
#[test]
fn several_aggregates_restore_from_a_snapshot() {
    let events = events();
    let mut setups: Vec<Setup> = ["native", "keywindow", "sliced", "sliced:changes"]
        .into_iter()
        .map(|s| setup(s, "sliding:40ms:10ms"))
        .collect();
    setups.push(setup("native", "session:8ms"));
    setups.push(Setup {
        evictor: Some("count:2"),
        ..setup("native", "tumbling:25ms")
    });
    for setup in setups {
        let spec = job("mean,max,count", &setup);
        let whole = run(&spec, &events);
        let (first, second) = events.split_at(events.len() / 2);
        let mut op = build::<String>(&spec).unwrap();
        let mut out = Rows::new();
        let mut max = i64::MIN;
        for (key, value, ts) in first {
            op.process_element(key.clone(), Number::from(*value), *ts, &mut out)
                .unwrap();
            max = max.max(*ts);
            op.process_watermark(max - 20, &mut out);
        }
        let mut snapshot = Vec::new();
        op.snapshot(&mut snapshot).unwrap();
        drop(op);
        let mut op = build::<String>(&spec).unwrap();
        op.restore(&snapshot).unwrap();
        for (key, value, ts) in second {
            op.process_element(key.clone(), Number::from(*value), *ts, &mut out)
                .unwrap();
            max = max.max(*ts);
            op.process_watermark(max - 20, &mut out);
        }
        op.process_watermark(MAX_WATERMARK, &mut out);
        assert_eq!(out, whole, "{} {}", setup.strategy, setup.window);
    }
}
