//! Snapshots of the jobs `window_job::build` makes with the native strategy (Flink's window
//! operator): a random job cut by snapshots, each restored into a freshly built job of the same
//! spec, emits exactly what the uninterrupted job emits.
//!
//! Specs are written in the job grammar and vary everything the native operator takes: every
//! window kind (tumbling, sliding, sessions with a static and a dynamic gap, global windows
//! with and without the end-of-stream trigger, count windows with and without a slide), every
//! trigger (purging or not), evictors, every aggregate (numbers, lists, elements), event and
//! processing time, allowed lateness, the late side output, `windowAll`, and a limit on window
//! states. Inputs have disorder, negative timestamps, watermark and wall-clock advances. Cases
//! come from a seeded generator, so a failure names its seed.

use window_assigners::TimeDomain;
use window_core::{
    AnyWindow, ElementError, Emitted, LateDataPolicy, Number, SnapshotError, Timestamp,
};
use window_job::{build, Computation, JobResult, JobSpec};

const CASES: u64 = 800;

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.next() as usize % items.len()]
    }
}

fn gen_window(rng: &mut Rng) -> String {
    match rng.range(0, 9) {
        0 | 1 => {
            let size = rng.range(1, 15);
            format!("tumbling:{size}:{}", rng.range(-(size - 1), size - 1))
        }
        2 | 3 => {
            let size = rng.range(1, 20);
            let slide = rng.range(1, size + 3);
            format!(
                "sliding:{size}:{slide}:{}",
                rng.range(-(slide - 1), slide - 1)
            )
        }
        4 => format!("session:{}", rng.range(1, 12)),
        5 => "session:value".to_owned(),
        6 => rng.pick(&["global", "global:end-of-stream"]).to_owned(),
        7 => format!("count:{}", rng.range(1, 4)),
        _ => format!("count:{}:{}", rng.range(1, 5), rng.range(1, 3)),
    }
}

fn gen_trigger(rng: &mut Rng) -> String {
    let base = match rng.range(0, 10) {
        0 => "event-time".to_owned(),
        1 => "processing-time".to_owned(),
        2 => format!("count:{}", rng.range(1, 4)),
        3 => "never".to_owned(),
        4 => format!("continuous:{}", rng.range(1, 8)),
        5 => format!("continuous-event-time:{}", rng.range(1, 8)),
        6 => format!("continuous-processing-time:{}", rng.range(1, 8)),
        7 => format!("delta:{}:abs", rng.range(1, 6)),
        _ => "default".to_owned(),
    };
    if base != "default" && rng.chance(25) {
        format!("purging:{base}")
    } else {
        base
    }
}

fn gen_evictor(rng: &mut Rng) -> Option<String> {
    let after = if rng.chance(50) { ":after" } else { "" };
    match rng.range(0, 5) {
        0 => Some(format!("count:{}{after}", rng.range(0, 3))),
        1 => Some(format!("time:{}{after}", rng.range(1, 6))),
        2 => Some(format!("delta:{}:abs{after}", rng.range(1, 6))),
        _ => None,
    }
}

/// A random native job, in its own words (for the failure message).
fn gen_spec(rng: &mut Rng) -> (JobSpec, String) {
    let window = gen_window(rng);
    let aggregate = rng.pick(&["count", "sum", "min", "max", "mean", "list", "elements"]);
    let mut spec = JobSpec::new(window.parse().unwrap(), aggregate.parse().unwrap());
    let trigger = if rng.chance(60) {
        gen_trigger(rng)
    } else {
        "default".to_owned()
    };
    spec.trigger = trigger.parse().unwrap();
    let evictor = gen_evictor(rng);
    spec.evictor = evictor.as_deref().map(|e| e.parse().unwrap());
    if rng.chance(30) {
        spec.time = TimeDomain::ProcessingTime;
    }
    if rng.chance(50) {
        spec.allowed_lateness = rng.range(1, 15);
    }
    if rng.chance(50) {
        spec.late_data = LateDataPolicy::SideOutput;
    }
    spec.window_all = rng.chance(15);
    if rng.chance(10) {
        spec.max_window_states = Some(rng.range(3, 30) as usize);
    }
    let words = format!(
        "window {window} trigger {trigger} evictor {evictor:?} aggregate {aggregate} time {:?} \
         lateness {} late {:?} all {} max states {:?}",
        spec.time, spec.allowed_lateness, spec.late_data, spec.window_all, spec.max_window_states
    );
    (spec, words)
}

#[derive(Clone, Debug)]
enum Step {
    Element { key: u8, ts: Timestamp, value: f64 },
    Watermark(Timestamp),
    Clock(Timestamp),
}

fn gen_steps(rng: &mut Rng) -> Vec<Step> {
    let mut wm = rng.range(-60, 0);
    let mut clock = rng.range(-60, 0);
    let mut steps = vec![Step::Clock(clock)];
    for _ in 0..rng.range(0, 70) {
        steps.push(match rng.range(0, 9) {
            0 | 1 => {
                wm += rng.range(-3, 10);
                Step::Watermark(wm)
            }
            2 => {
                clock += rng.range(0, 10);
                Step::Clock(clock)
            }
            // Values are also dynamic session gaps: 0 is refused.
            _ => Step::Element {
                key: rng.range(0, 3) as u8,
                ts: wm.max(clock) + rng.range(-25, 15),
                value: rng.range(0, 9) as f64,
            },
        });
    }
    steps
}

type Out = Vec<Emitted<String, AnyWindow, Number, JobResult>>;
type Rejections = Vec<(usize, ElementError)>;

fn apply(
    job: &mut Computation<String>,
    i: usize,
    step: &Step,
    out: &mut Out,
    rej: &mut Rejections,
) {
    match *step {
        Step::Element { key, ts, value } => {
            if let Err(r) = job.process_element(format!("k{key}"), Number::from(value), ts, out) {
                rej.push((i, r.error));
            }
        }
        Step::Watermark(w) => {
            job.process_watermark(w, out);
        }
        Step::Clock(t) => job.advance_wall_clock(t, out),
    }
}

fn finish(job: &mut Computation<String>, out: &mut Out) {
    job.process_watermark(i64::MAX, out);
    job.advance_wall_clock(300, out);
}

fn observe(job: &Computation<String>) -> impl PartialEq + std::fmt::Debug {
    (
        job.metrics(),
        job.live_state(),
        job.current_watermark(),
        job.next_processing_time_timer(),
    )
}

fn restored(spec: &JobSpec, job: &Computation<String>, seed: u64) -> Computation<String> {
    let mut bytes = Vec::new();
    job.snapshot(&mut bytes)
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    let mut fresh = build::<String>(spec).unwrap();
    fresh
        .restore(&bytes)
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    assert_eq!(observe(&fresh), observe(job), "seed {seed}");
    fresh
}

#[test]
fn native_jobs_cut_by_snapshots_emit_what_uninterrupted_jobs_emit() {
    let (mut built, mut records, mut rejected) = (0, 0, 0);
    for seed in 1..=CASES {
        let mut rng = Rng::new(seed);
        let (spec, words) = gen_spec(&mut rng);
        let steps = gen_steps(&mut rng);
        let Ok(mut job) = build::<String>(&spec) else {
            continue; // a trigger that cannot merge on sessions, say
        };
        built += 1;
        let (mut expected, mut expected_rej) = (Out::new(), Rejections::new());
        for (i, s) in steps.iter().enumerate() {
            apply(&mut job, i, s, &mut expected, &mut expected_rej);
        }
        finish(&mut job, &mut expected);

        let mut cuts: Vec<usize> = (0..rng.range(1, 4))
            .map(|_| rng.range(0, steps.len() as i64) as usize)
            .collect();
        cuts.sort_unstable();
        let mut cut = build::<String>(&spec).unwrap();
        let (mut got, mut got_rej) = (Out::new(), Rejections::new());
        for (i, s) in steps.iter().enumerate() {
            if cuts.contains(&i) {
                cut = restored(&spec, &cut, seed);
            }
            apply(&mut cut, i, s, &mut got, &mut got_rej);
        }
        finish(&mut cut, &mut got);
        assert_eq!(
            got, expected,
            "seed {seed}: {words}\ncuts {cuts:?}\n{steps:?}"
        );
        assert_eq!(got_rej, expected_rej, "seed {seed}: {words}");
        assert_eq!(observe(&cut), observe(&job), "seed {seed}: {words}");
        records += expected.len();
        rejected += expected_rej.len();
    }
    assert!(built > CASES * 3 / 4, "only {built} jobs built");
    assert!(records > 10 * built as usize, "only {records} records");
    assert!(rejected > 50, "only {rejected} rejected elements");
}

#[test]
fn a_tumbling_job_snapshot_does_not_load_into_a_session_job() {
    let tumbling = JobSpec::new("tumbling:10".parse().unwrap(), "sum".parse().unwrap());
    let session = JobSpec::new("session:10".parse().unwrap(), "sum".parse().unwrap());
    let mut job = build::<String>(&tumbling).unwrap();
    let mut out = Out::new();
    job.process_element("a".to_owned(), Number::from(1.0), 3, &mut out)
        .unwrap();
    let mut bytes = Vec::new();
    job.snapshot(&mut bytes).unwrap();
    let mut other = build::<String>(&session).unwrap();
    other
        .process_element("b".to_owned(), Number::from(2.0), 4, &mut out)
        .unwrap();
    match other.restore(&bytes) {
        Err(SnapshotError::Invalid(why)) => assert!(
            why.contains(
                "window assigner tumbling(10 ms, offset 0 ms), this one has session(gap 10 ms)"
            ),
            "{why}"
        ),
        r => panic!("{r:?}"),
    }
    // The session job is unchanged: it fires its own window.
    other.process_watermark(100, &mut out);
    assert_eq!(
        out,
        [Emitted::Result {
            key: "b".to_owned(),
            window: AnyWindow::Time(window_core::TimeWindow::new(4, 14)),
            result: JobResult::Number(Some(2.0)),
            watermark: 100,
        }]
    );
    // Torn bytes too.
    for len in 0..bytes.len() {
        assert!(matches!(
            job.restore(&bytes[..len]),
            Err(SnapshotError::Invalid(_))
        ));
    }
}
