//! The runtime's checkpoint (`Runtime::snapshot` / `restore`): a random job over several inputs
//! (watermark per element or periodic, idleness, a manual clock), snapshotted after a random
//! step, encoded and decoded, restored into a fresh runtime whose sources continue at the
//! snapshot's positions, gives the uninterrupted run's output, in order.

use engine::core::Number;
use std::sync::Arc;

use engine::core::{AnyWindow, Emitted, TimeDomain};
use engine::io::{Event, ReadPosition};
use engine::job::{build, JobResult, JobSpec, Strategy, WindowSpec};
use engine::keywindow::EmitMode;
use engine::runtime::{Read, Runtime, RuntimeConfig, RuntimeSnapshot, Source, Step};
use engine::timers::ManualClock;

type Out = Vec<Emitted<String, AnyWindow, Number, JobResult>>;

/// A source over prepared events, read in batches of a set size; its position is the number
/// of events handed out.
struct Prepared {
    name: String,
    events: Arc<Vec<Event>>,
    next: usize,
    batch: usize,
}

impl Source<String, Number> for Prepared {
    fn name(&self) -> &str {
        &self.name
    }

    fn read_batch(&mut self, batch: &mut Vec<Event>, max: usize) -> Read {
        let end = (self.next + self.batch.min(max)).min(self.events.len());
        batch.extend(self.events[self.next..end].iter().cloned());
        self.next = end;
        if self.next == self.events.len() {
            Read::End
        } else {
            Read::More
        }
    }

    fn read_position(&self) -> Option<ReadPosition> {
        let n = self.next as u64;
        Some(ReadPosition { offset: n, line: n })
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One random trial's job, inputs and clock steps.
struct Trial {
    spec: JobSpec,
    config: RuntimeConfig,
    inputs: Vec<Arc<Vec<Event>>>,
    batch: usize,
    clock_steps: Vec<i64>,
}

fn trial(rng: &mut Rng) -> Trial {
    let window = match rng.below(4) {
        0 => WindowSpec::Tumbling {
            size: 20,
            offset: 0,
        },
        1 => WindowSpec::Sliding {
            size: 30,
            slide: 10,
            offset: 0,
        },
        2 => WindowSpec::Session { gap: 7 },
        _ => WindowSpec::Sliding {
            size: 40,
            slide: 5,
            offset: 0,
        },
    };
    let mut spec = JobSpec::new(window, "sum".parse().expect("an aggregate"));
    if matches!(window, WindowSpec::Sliding { .. }) {
        spec.strategy = match rng.below(3) {
            0 => Strategy::Native,
            1 => Strategy::Sliced(EmitMode::AllWindows),
            _ => Strategy::Sliced(EmitMode::Changes),
        };
    }
    if spec.strategy == Strategy::Native && rng.below(2) == 0 {
        spec.allowed_lateness = 15;
    }
    let inputs = (0..1 + rng.below(3))
        .map(|i| {
            let n = rng.below(300) as i64;
            let events = (0..n)
                .map(|j| Event {
                    timestamp: j * 2 + rng.below(12) as i64 - 4 + i as i64,
                    key: format!("k{}", rng.below(6)),
                    value: Number::Int(rng.below(100) as i64),
                    line: j as u64 + 1,
                })
                .collect();
            Arc::new(events)
        })
        .collect();
    Trial {
        spec,
        config: RuntimeConfig {
            time: TimeDomain::EventTime,
            out_of_orderness: rng.below(8) as i64,
            watermark_interval: if rng.below(2) == 0 { 0 } else { 3 },
            idle_timeout: (rng.below(2) == 0).then_some(4),
        },
        inputs,
        batch: 1 + rng.below(20) as usize,
        clock_steps: (0..2_000).map(|_| rng.below(3) as i64).collect(),
    }
}

/// A runtime of the trial, its sources at `positions` (events handed out), its clock at `now`.
fn runtime(
    t: &Trial,
    positions: &[usize],
    clock: &Arc<ManualClock>,
) -> Runtime<String, Number, engine::job::Computation<String>> {
    let mut rt = Runtime::new(build::<String>(&t.spec).expect("a valid job"), t.config);
    rt.set_clock(Arc::clone(clock) as Arc<dyn engine::timers::Clock>);
    for (i, events) in t.inputs.iter().enumerate() {
        rt.add_source(Box::new(Prepared {
            name: format!("input {i}"),
            events: Arc::clone(events),
            next: positions[i],
            batch: t.batch,
        }));
    }
    rt
}

/// Steps `rt` from step `from`, advancing the clock by the trial's steps, until it finishes or
/// `until` steps were made; returns whether it finished.
fn steps(
    rt: &mut Runtime<String, Number, engine::job::Computation<String>>,
    t: &Trial,
    clock: &ManualClock,
    from: usize,
    until: usize,
    out: &mut Out,
) -> bool {
    for step in from..until {
        clock.advance(t.clock_steps[step % t.clock_steps.len()]);
        if rt.step(out).expect("the run goes on") == Step::Finished {
            return true;
        }
    }
    false
}

#[test]
fn a_runtime_restored_from_a_snapshot_continues_as_the_uninterrupted_run() {
    let mut rng = Rng(0x5EED_CAFE_F00D_0001);
    let mut checked = 0;
    for round in 0..400 {
        let t = trial(&mut rng);
        let zero = vec![0; t.inputs.len()];
        let clock = Arc::new(ManualClock::new(1_000));
        let mut expected = Out::new();
        let mut whole = runtime(&t, &zero, &clock);
        assert!(steps(&mut whole, &t, &clock, 0, 100_000, &mut expected));
        let cut = rng.below(40) as usize;
        let clock = Arc::new(ManualClock::new(1_000));
        let mut got = Out::new();
        let mut first = runtime(&t, &zero, &clock);
        if steps(&mut first, &t, &clock, 0, cut, &mut got) {
            continue; // finished before the cut
        }
        let snapshot = first.snapshot().expect("every strategy snapshots");
        let bytes = postcard::to_stdvec(&snapshot).expect("encodes");
        let snapshot: RuntimeSnapshot = postcard::from_bytes(&bytes).expect("decodes");
        drop(first);
        let positions: Vec<usize> = snapshot
            .positions()
            .iter()
            .map(|p| p.map_or(0, |p| p.offset as usize))
            .collect();
        let mut second = runtime(&t, &positions, &clock);
        second
            .restore(snapshot)
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert!(steps(&mut second, &t, &clock, cut, 100_000, &mut got));
        if got != expected {
            let at = got
                .iter()
                .zip(&expected)
                .take_while(|(a, b)| a == b)
                .count();
            panic!(
                "round {round}: {:?} {:?}, cut after {cut} steps: {} rows, expected {}; first \
                 difference at {at}: {:?} instead of {:?}",
                t.spec.window,
                t.spec.strategy,
                got.len(),
                expected.len(),
                got.get(at),
                expected.get(at)
            );
        }
        assert_eq!(second.stats(), whole.stats(), "round {round}");
        checked += 1;
    }
    assert!(
        checked > 100,
        "only {checked} trials were cut before their end"
    );
}

#[test]
fn a_snapshot_of_other_inputs_is_refused() {
    let t = Trial {
        spec: JobSpec::new(
            WindowSpec::Tumbling {
                size: 10,
                offset: 0,
            },
            "count".parse().expect("an aggregate"),
        ),
        config: RuntimeConfig::default(),
        inputs: vec![Arc::new(Vec::new()), Arc::new(Vec::new())],
        batch: 4,
        clock_steps: vec![1],
    };
    let clock = Arc::new(ManualClock::new(0));
    let rt = runtime(&t, &[0, 0], &clock);
    let snapshot = rt.snapshot().expect("snapshots");
    let one = Trial {
        inputs: vec![Arc::new(Vec::new())],
        ..t
    };
    let mut other = runtime(&one, &[0], &clock);
    let err = other.restore(snapshot.clone()).unwrap_err();
    assert!(err.to_string().contains("2 inputs, this run 1"), "{err}");
    let delayed = Trial {
        config: RuntimeConfig {
            out_of_orderness: 5,
            ..RuntimeConfig::default()
        },
        inputs: vec![Arc::new(Vec::new()), Arc::new(Vec::new())],
        ..one
    };
    let mut other = runtime(&delayed, &[0, 0], &clock);
    let err = other.restore(snapshot).unwrap_err();
    assert!(
        err.to_string().contains("watermark delay was 0 ms"),
        "{err}"
    );
}
