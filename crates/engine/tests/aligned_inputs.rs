//! Several bounded inputs in event time are aligned by their watermarks (issue #16, item 8): the
//! runtime reads next the open input whose watermark is lowest, so the interleaving of inputs,
//! and with it the late elements and the results, depends only on the data. Before, the
//! runtime took batches as the reader threads delivered them, and runs of one command differed.

use engine::core::Number;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::core::{AnyWindow, Emitted, LateDataPolicy, TimeDomain};
use engine::io::Event;
use engine::job::{build, JobResult, JobSpec, Strategy, WindowSpec};
use engine::keywindow::EmitMode;
use engine::runtime::{Read, Runtime, RuntimeConfig, Source};

type Out = Vec<Emitted<String, AnyWindow, Number, JobResult>>;

/// A source over prepared events in batches of a set size; it logs the first timestamp of each
/// batch it hands out, and may sleep before each batch (a slow disk).
struct Prepared {
    name: String,
    events: Arc<Vec<Event>>,
    next: usize,
    batch: usize,
    pause: Duration,
    log: Arc<Mutex<Vec<(usize, i64)>>>,
    input: usize,
}

impl Source<String, Number> for Prepared {
    fn name(&self) -> &str {
        &self.name
    }

    fn read_batch(&mut self, batch: &mut Vec<Event>, max: usize) -> Read {
        if !self.pause.is_zero() {
            std::thread::sleep(self.pause);
        }
        let end = (self.next + self.batch.min(max)).min(self.events.len());
        batch.extend(self.events[self.next..end].iter().cloned());
        if let Some(first) = self.events.get(self.next) {
            let mut log = self.log.lock().expect("not poisoned");
            log.push((self.input, first.timestamp));
        }
        self.next = end;
        if self.next == self.events.len() {
            Read::End
        } else {
            Read::More
        }
    }
}

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn event(timestamp: i64, key: &str, line: u64) -> Event {
    Event {
        timestamp,
        key: key.to_owned(),
        value: Number::Float(1.0),
        line,
    }
}

/// A runtime over `inputs` (each with its batch size and pause), logging into `log`.
fn runtime(
    spec: &JobSpec,
    config: RuntimeConfig,
    inputs: &[(Arc<Vec<Event>>, usize, Duration)],
    log: &Arc<Mutex<Vec<(usize, i64)>>>,
) -> Runtime<String, Number, engine::job::Computation<String>> {
    let mut rt = Runtime::new(build::<String>(spec).expect("a valid job"), config);
    for (input, (events, batch, pause)) in inputs.iter().enumerate() {
        rt.add_source(Box::new(Prepared {
            name: format!("input {input}"),
            events: Arc::clone(events),
            next: 0,
            batch: *batch,
            pause: *pause,
            log: Arc::clone(log),
            input,
        }));
    }
    rt
}

fn config(out_of_orderness: i64) -> RuntimeConfig {
    RuntimeConfig {
        time: TimeDomain::EventTime,
        out_of_orderness,
        watermark_interval: 0,
        idle_timeout: None,
    }
}

#[test]
fn the_input_whose_watermark_is_lowest_is_read_next() {
    // Batches of one event; a watermark delay of 0 (watermark = max timestamp - 1). Both start
    // at i64::MIN, so input 0 goes first; then always the lower one, the first of equals.
    let a = Arc::new(vec![
        event(100, "a", 1),
        event(200, "a", 2),
        event(300, "a", 3),
    ]);
    let b = Arc::new(vec![
        event(150, "b", 1),
        event(160, "b", 2),
        event(170, "b", 3),
        event(250, "b", 4),
    ]);
    let inputs = [(a, 1, Duration::ZERO), (b, 1, Duration::ZERO)];
    let spec = JobSpec::new(
        WindowSpec::Tumbling {
            size: 1000,
            offset: 0,
        },
        "count".parse().expect("an aggregate"),
    );
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut rt = runtime(&spec, config(0), &inputs, &log);
    rt.run(&mut Out::new()).expect("runs");
    let order = log.lock().expect("not poisoned").clone();
    assert_eq!(
        order,
        [
            (0, 100),
            (1, 150),
            (0, 200),
            (1, 160),
            (1, 170),
            (1, 250),
            (0, 300)
        ]
    );
}

/// Random disordered inputs over one time range, at different rates.
fn random_inputs(rng: &mut Rng, slow: usize) -> Vec<(Arc<Vec<Event>>, usize, Duration)> {
    (0..2 + rng.below(2) as usize)
        .map(|i| {
            let step = 1 + rng.below(4) as i64;
            let n = 100 + rng.below(400) as i64;
            let events = (0..n)
                .map(|j| {
                    let t = j * step + rng.below(30) as i64 - 10;
                    event(t, &format!("k{}", rng.below(5)), j as u64 + 1)
                })
                .collect();
            let pause = if i == slow {
                Duration::from_micros(300)
            } else {
                Duration::ZERO
            };
            (Arc::new(events), 1 + rng.below(40) as usize, pause)
        })
        .collect()
}

fn random_spec(rng: &mut Rng) -> JobSpec {
    let window = match rng.below(3) {
        0 => WindowSpec::Tumbling {
            size: 25,
            offset: 0,
        },
        1 => WindowSpec::Sliding {
            size: 40,
            slide: 10,
            offset: 0,
        },
        _ => WindowSpec::Session { gap: 6 },
    };
    let mut spec = JobSpec::new(window, "sum".parse().expect("an aggregate"));
    spec.late_data = LateDataPolicy::SideOutput;
    if matches!(window, WindowSpec::Sliding { .. }) && rng.below(2) == 0 {
        spec.strategy = Strategy::Sliced(EmitMode::AllWindows);
    } else if rng.below(2) == 0 {
        spec.allowed_lateness = 8;
    }
    spec
}

#[test]
fn several_bounded_inputs_give_the_same_output_on_threads_as_inline_and_on_every_run() {
    let mut rng = Rng(0xA11C_0FF5_EED5_0016);
    let mut late_seen = 0;
    for round in 0..24 {
        let slow = rng.below(3) as usize;
        let inputs = random_inputs(&mut rng, slow);
        let spec = random_spec(&mut rng);
        let config = config(rng.below(6) as i64);
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut inline = Out::new();
        runtime(&spec, config, &inputs, &log)
            .run(&mut inline)
            .expect("runs");
        late_seen += inline
            .iter()
            .filter(|e| matches!(e, Emitted::Late { .. }))
            .count();
        for run in 0..2 {
            let mut threaded = Out::new();
            let mut rt = runtime(&spec, config, &inputs, &log);
            rt.start();
            rt.run(&mut threaded).expect("runs");
            assert!(
                threaded == inline,
                "round {round}, threaded run {run}: {} rows, inline {} ({spec:?})",
                threaded.len(),
                inline.len()
            );
        }
    }
    assert!(
        late_seen > 100,
        "the inputs make late elements: {late_seen}"
    );
}
