//! The runtime on its own (`engine::runtime`), with a manual clock and scripted sources.

use engine::core::Number;
use std::collections::VecDeque;
use std::sync::Arc;

use engine::core::{AnyWindow, Emitted, TimeDomain, Window, WindowComputation};
use engine::io::{ErrorPolicy, Event, InputError, InputErrorKind, OnError, Progress};
use engine::job::{build, Computation, JobResult, JobSpec, WindowSpec};
use engine::runtime::{
    DescribeRejection, Read, Runtime, RuntimeConfig, RuntimeError, Source, Step,
};
use engine::timers::ManualClock;

type Out = Vec<Emitted<String, AnyWindow, Number, JobResult>>;

/// A source handing over prepared batches, one per read, then ending.
struct Scripted {
    name: String,
    batches: VecDeque<Vec<Event>>,
}

impl Scripted {
    fn new(name: &str, batches: Vec<Vec<(i64, &str, f64)>>) -> Self {
        let mut line = 0;
        let batches = batches
            .into_iter()
            .map(|b| {
                b.into_iter()
                    .map(|(timestamp, key, value)| {
                        line += 1;
                        Event {
                            timestamp,
                            key: key.to_owned(),
                            value: Number::Float(value),
                            line,
                        }
                    })
                    .collect()
            })
            .collect();
        Self {
            name: name.to_owned(),
            batches,
        }
    }
}

impl Source<String, Number> for Scripted {
    fn name(&self) -> &str {
        &self.name
    }

    fn read_batch(&mut self, batch: &mut Vec<Event>, _max: usize) -> Read {
        match self.batches.pop_front() {
            Some(b) => {
                batch.extend(b);
                if self.batches.is_empty() {
                    Read::End
                } else {
                    Read::More
                }
            }
            None => Read::End,
        }
    }

    fn progress(&self) -> Option<Progress> {
        None
    }
}

fn spec(window: WindowSpec, aggregate: &str) -> JobSpec {
    JobSpec::new(window, aggregate.parse().unwrap())
}

fn tumbling(size: i64) -> WindowSpec {
    WindowSpec::Tumbling { size, offset: 0 }
}

/// A result as (key, window bounds, value, watermark).
type Row = (String, (i64, i64), Option<f64>, i64);

/// Every result, in order.
fn results(out: &Out) -> Vec<Row> {
    out.iter()
        .filter_map(|e| match e {
            Emitted::Result {
                key,
                window,
                result,
                watermark,
            } => Some((
                key.clone(),
                window.bounds().unwrap(),
                Option::<f64>::from(result.clone()),
                *watermark,
            )),
            _ => None,
        })
        .collect()
}

fn runtime(spec: &JobSpec, config: RuntimeConfig) -> Runtime<String, Number, Computation<String>> {
    let mut rt = Runtime::new(build::<String>(spec).unwrap(), config);
    rt.set_clock(Arc::new(ManualClock::new(0)));
    rt
}

#[test]
fn event_time_watermark_follows_every_element_and_the_end_fires_the_rest() {
    // Flink case tumbling-basic: watermark max_ts - 0 - 1 after each element; [0,10) fires when
    // the element at 10 pushes the watermark to 9; the last window at the final i64::MAX.
    let mut rt = runtime(&spec(tumbling(10), "sum"), RuntimeConfig::default());
    rt.add_source(Box::new(Scripted::new(
        "a",
        vec![
            vec![(1, "a", 1.0), (3, "a", 2.0), (9, "a", 3.0), (10, "a", 4.0)],
            vec![(15, "a", 5.0), (21, "a", 6.0)],
        ],
    )));
    let mut out = Out::new();
    rt.run(&mut out).unwrap();
    assert_eq!(
        results(&out),
        [
            ("a".to_owned(), (0, 10), Some(6.0), 9),
            ("a".to_owned(), (10, 20), Some(9.0), 20),
            ("a".to_owned(), (20, 30), Some(6.0), i64::MAX),
        ]
    );
    assert_eq!(rt.stats().events, 6);
}

#[test]
fn the_slowest_input_holds_event_time_until_it_ends() {
    // Scenario B27: the combined watermark is the minimum; an ended input counts as MAX.
    let mut rt = runtime(&spec(tumbling(10), "count"), RuntimeConfig::default());
    rt.add_source(Box::new(Scripted::new(
        "fast",
        vec![vec![(5, "a", 1.0), (25, "a", 1.0)], vec![(40, "a", 1.0)]],
    )));
    rt.add_source(Box::new(Scripted::new(
        "slow",
        vec![vec![(2, "b", 1.0)], vec![(12, "b", 1.0)]],
    )));
    let mut out = Out::new();
    // fast's first batch: its watermark is 24, but slow has none: nothing fires.
    assert_eq!(rt.step(&mut out).unwrap(), Step::Batch);
    assert!(out.is_empty(), "{out:?}");
    // slow's first batch (its watermark is the lower): watermark min(24, 1) = 1.
    rt.step(&mut out).unwrap();
    assert!(out.is_empty(), "{out:?}");
    // The inputs are aligned: slow (1) is read again before fast (24). Its 12 moves the
    // watermark to min(24, 11) = 11, which fires [0,10) of a and b; its end leaves fast alone
    // at 24, which fires b's [10,20).
    rt.step(&mut out).unwrap();
    let r = results(&out);
    assert_eq!(r.len(), 3, "{r:?}");
    assert_eq!((r[0].1, r[0].3, r[1].1, r[1].3), ((0, 10), 11, (0, 10), 11));
    assert_eq!((&r[2].0[..], r[2].1, r[2].3), ("b", (10, 20), 24));
    // fast's last batch at 40 (watermark 39 fires a's [20,30)) and its end: everything fires.
    assert_eq!(rt.step(&mut out).unwrap(), Step::Finished);
    let r = results(&out);
    assert_eq!(r.len(), 5, "{r:?}");
    assert_eq!((r[3].1, r[3].3), ((20, 30), 39));
    assert_eq!((r[4].1, r[4].3), ((40, 50), i64::MAX));
}

#[test]
fn an_idle_input_stops_holding_the_watermark_back() {
    // Scenario B25 through the runtime: with an idle timeout of 1 s, a silent input is left out
    // once the clock passed the timeout.
    let clock = Arc::new(ManualClock::new(0));
    let config = RuntimeConfig {
        idle_timeout: Some(1_000),
        ..RuntimeConfig::default()
    };
    let mut rt = Runtime::new(
        build::<String>(&spec(tumbling(10), "count")).unwrap(),
        config,
    );
    rt.set_clock(clock.clone());
    rt.add_source(Box::new(Scripted::new(
        "busy",
        vec![
            vec![(5, "a", 1.0), (25, "a", 1.0)],
            vec![(26, "a", 1.0)],
            vec![(27, "a", 1.0)],
        ],
    )));
    rt.add_source(Box::new(Scripted::new(
        "silent",
        vec![vec![], vec![(30, "b", 1.0)]],
    )));
    let mut out = Out::new();
    rt.step(&mut out).unwrap(); // busy: 5, 25
    rt.step(&mut out).unwrap(); // silent: nothing
    assert!(out.is_empty());
    clock.set(1_500);
    rt.step(&mut out).unwrap(); // busy: 26; silent idle since 0: watermark 25 fires [0,10)
    assert_eq!(results(&out), [("a".to_owned(), (0, 10), Some(1.0), 25)]);
    // silent resumes with 30 and ends: busy (watermark 25) holds event time alone.
    rt.step(&mut out).unwrap();
    assert_eq!(results(&out).len(), 1, "{out:?}");
    // busy ends with 27: every input ended, everything fires.
    assert_eq!(rt.step(&mut out).unwrap(), Step::Finished);
    let r = results(&out);
    assert_eq!((r.len(), r[1].3, r[2].3), (3, i64::MAX, i64::MAX), "{r:?}");
}

#[test]
fn processing_time_windows_fire_once_the_clock_passed_their_end() {
    let clock = Arc::new(ManualClock::new(3));
    let config = RuntimeConfig {
        time: TimeDomain::ProcessingTime,
        ..RuntimeConfig::default()
    };
    let mut s = spec(tumbling(10), "sum");
    s.time = TimeDomain::ProcessingTime;
    let mut rt = Runtime::new(build::<String>(&s).unwrap(), config);
    rt.set_clock(clock.clone());
    // Timestamps do not matter in processing time; arrival at clock 3 and 9 puts both in [0,10).
    rt.add_source(Box::new(Scripted::new(
        "in",
        vec![
            vec![(100, "a", 1.0)],
            vec![(0, "a", 2.0)],
            vec![(0, "a", 4.0)],
        ],
    )));
    let mut out = Out::new();
    rt.step(&mut out).unwrap(); // at 3
    clock.set(9);
    rt.step(&mut out).unwrap(); // at 9: still [0,10), not fired (the clock has not passed 9)
    assert!(out.is_empty(), "{out:?}");
    clock.set(10);
    rt.step(&mut out).unwrap(); // at 10: [0,10) fires first, the element goes to [10,20)
    assert_eq!(
        results(&out),
        [("a".to_owned(), (0, 10), Some(3.0), i64::MIN)]
    );
    assert_eq!(rt.computation().live_state().windows, 1, "[10, 20) is open");
}

#[test]
fn periodic_watermarks_follow_the_clock() {
    // Watermarks every 200 ms of processing time, as Flink emits them by default.
    let clock = Arc::new(ManualClock::new(0));
    let config = RuntimeConfig {
        watermark_interval: 200,
        ..RuntimeConfig::default()
    };
    let mut rt = Runtime::new(
        build::<String>(&spec(tumbling(10), "count")).unwrap(),
        config,
    );
    rt.set_clock(clock.clone());
    rt.add_source(Box::new(Scripted::new(
        "in",
        vec![
            vec![(1, "a", 1.0), (15, "a", 1.0)],
            vec![(16, "a", 1.0)],
            vec![],
            vec![],
        ],
    )));
    let mut out = Out::new();
    rt.step(&mut out).unwrap(); // at 0: emitted at start, not due again
    clock.set(100);
    rt.step(&mut out).unwrap(); // at 100: not due
    assert!(out.is_empty(), "{out:?}");
    clock.set(200);
    rt.step(&mut out).unwrap(); // at 200: due, watermark 15 fires [0,10)
    assert_eq!(results(&out), [("a".to_owned(), (0, 10), Some(1.0), 15)]);
}

#[test]
fn a_rejected_element_goes_to_the_policy_with_its_report() {
    // A dynamic session gap of 0 ms is rejected for that element; with skip it is counted and
    // the job goes on; with fail (the default) the job stops with the report.
    let dynamic = spec(WindowSpec::DynamicSession, "count");
    let events = || {
        Scripted::new(
            "gaps",
            vec![vec![(1, "a", 5.0), (2, "a", 0.0), (3, "a", 5.0)]],
        )
    };
    let report: DescribeRejection<String, Number> =
        Box::new(|r, source, line, timestamp| InputError {
            source_name: source.to_owned(),
            line,
            field: Some("value".to_owned()),
            message: format!("gap {} at {timestamp}", r.element),
            raw: format!("{timestamp},{},{}", r.key, r.element).into_bytes(),
            raw_cut: false,
            kind: InputErrorKind::InvalidValue,
        });
    let mut rt = runtime(&dynamic, RuntimeConfig::default());
    rt.set_error_policy(ErrorPolicy::new(OnError::Skip));
    rt.add_source(Box::new(events()));
    let mut out = Out::new();
    rt.run(&mut out).unwrap();
    assert_eq!(rt.stats().rejected, 1);
    assert_eq!(rt.stats().skipped, 1);
    assert_eq!(
        results(&out),
        [("a".to_owned(), (1, 8), Some(2.0), i64::MAX)]
    );

    let mut rt = runtime(&dynamic, RuntimeConfig::default());
    rt.set_rejection_report(report);
    rt.add_source(Box::new(events()));
    let err = rt.run(&mut Out::new()).unwrap_err();
    let RuntimeError::Input(e) = err else {
        panic!("{err:?}")
    };
    assert_eq!((e.line, &e.raw[..]), (2, &b"2,a,0"[..]));
    assert_eq!(e.message, "gap 0 at 2");
}

#[test]
fn a_started_runtime_gives_what_the_inline_one_gives() {
    // One source, event time: the output does not depend on who reads the source.
    let events: Vec<(i64, &str, f64)> = (0..5_000)
        .map(|i| {
            (
                i * 7 % 1_000 + i / 3,
                ["a", "b", "c"][(i % 3) as usize],
                i as f64,
            )
        })
        .collect();
    let mut sliding = spec(
        WindowSpec::Sliding {
            size: 100,
            slide: 30,
            offset: 0,
        },
        "max",
    );
    sliding.allowed_lateness = 50;
    let config = RuntimeConfig {
        out_of_orderness: 200,
        ..RuntimeConfig::default()
    };
    let run = |started: bool| {
        let mut rt = runtime(&sliding, config);
        let batches: Vec<Vec<_>> = events.chunks(700).map(<[_]>::to_vec).collect();
        rt.add_source(Box::new(Scripted::new("in", batches)));
        if started {
            rt.start();
        }
        let mut out = Out::new();
        rt.run(&mut out).unwrap();
        (results(&out), rt.computation().metrics())
    };
    let (inline, m) = run(false);
    assert!(inline.len() > 100, "{}", inline.len());
    assert!(m.late_elements > 0, "the input has late elements: {m:?}");
    assert_eq!(run(true), (inline, m));
}

#[test]
fn a_failed_source_stops_the_run_with_its_name() {
    struct Broken;
    impl Source<String, Number> for Broken {
        fn name(&self) -> &str {
            "broken.csv"
        }
        fn read_batch(&mut self, _: &mut Vec<Event>, _: usize) -> Read {
            Read::Failed("line 3: disk on fire".to_owned())
        }
    }
    let mut rt = runtime(&spec(tumbling(10), "count"), RuntimeConfig::default());
    rt.add_source(Box::new(Broken));
    let err = rt.run(&mut Out::new()).unwrap_err();
    assert_eq!(err.to_string(), "reading broken.csv: line 3: disk on fire");
}

#[test]
fn processing_time_timers_of_an_event_time_job_fire_by_the_clock() {
    // An event-time window with Flink's ContinuousProcessingTimeTrigger: its timers are in
    // processing time, so the runtime advances the clock for it although the job is in event
    // time (windowctl never did before the runtime).
    let clock = Arc::new(ManualClock::new(0));
    let mut s = spec(tumbling(1_000), "sum");
    s.trigger = "continuous-processing-time:100".parse().unwrap();
    let mut rt = Runtime::new(build::<String>(&s).unwrap(), RuntimeConfig::default());
    rt.set_clock(clock.clone());
    rt.add_source(Box::new(Scripted::new(
        "in",
        vec![
            vec![(5, "a", 1.0)],
            vec![(6, "a", 2.0)],
            vec![(7, "a", 4.0)],
        ],
    )));
    let mut out = Out::new();
    rt.step(&mut out).unwrap(); // clock 0: the trigger asks for processing time 100
    assert!(out.is_empty());
    clock.set(150);
    rt.step(&mut out).unwrap(); // past 100: fires with what the window holds before 6 arrives
    assert_eq!(results(&out), [("a".to_owned(), (0, 1_000), Some(1.0), 4)]);
}

#[test]
fn a_processing_time_trigger_behind_the_clock_fires_once_per_instant() {
    // Issue #16's case: clock 100, tumbling 10 ms event-time windows, a continuous
    // processing-time trigger of 5 ms, an element at 1, the clock to 101: the window's fire
    // time is its end (9), in the past; it fires once, not without end, then at the interval
    // boundaries after the clock (105, ...), and the job goes on.
    let clock = Arc::new(ManualClock::new(100));
    let mut s = spec(tumbling(10), "count");
    s.trigger = "continuous-processing-time:5".parse().unwrap();
    let mut rt = Runtime::new(build::<String>(&s).unwrap(), RuntimeConfig::default());
    rt.set_clock(clock.clone());
    rt.add_source(Box::new(Scripted::new(
        "in",
        vec![vec![(1, "a", 1.0)], vec![(2, "a", 1.0)], vec![], vec![]],
    )));
    let mut out = Out::new();
    rt.step(&mut out).unwrap();
    clock.set(101);
    rt.step(&mut out).unwrap(); // fires the timer at 9 once; the element at 2 joins
    assert_eq!(results(&out), [("a".to_owned(), (0, 10), Some(1.0), 0)]);
    clock.set(104);
    rt.step(&mut out).unwrap(); // before the next boundary: nothing
    assert_eq!(results(&out).len(), 1, "{out:?}");
    clock.set(106);
    rt.step(&mut out).unwrap(); // past 105: one more firing, with both
    assert_eq!(results(&out).len(), 2, "{out:?}");
    assert_eq!(results(&out)[1].2, Some(2.0));
}
