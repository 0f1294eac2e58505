//! Randomized comparison of [`WindowOperator`] with a small reference model of Flink's
//! `WindowOperator` (the behavioural model in `tests/conformance/flink/README.md`), for
//! tumbling and sliding event-time windows with the default event-time trigger, allowed
//! lateness and the late side output.
//!
//! The reference keeps, per (key, window), the elements added so far:
//! * an element goes into each of its windows (descending start, as Flink lists sliding
//!   windows) that is not past its cleanup time (`max_ts + lateness <= watermark`); if the
//!   window's max timestamp is already behind the watermark, the window fires at once with its
//!   full contents (a late firing);
//! * an element that went into no window and has `ts + lateness <= watermark` is late: it goes
//!   to the side output when configured;
//! * a watermark that advances fires every window whose max timestamp it reaches (once, in
//!   max-timestamp order, and windows with the same max timestamp in the order they were
//!   created, which is the order their trigger timers were registered in) and drops every window
//!   past its cleanup time.
//!
//! Every case ends with the watermark `i64::MAX`. The emitted records are compared in order, all
//! keys together (the order is what makes outputs byte-identical from run to run). Cases come
//! from a seeded xorshift generator, so a failure names its seed.

mod common;

use common::{assign, gen_windows, Rng, Windows};
use std::collections::BTreeMap;

use window_assigners::{SlidingWindows, TimeDomain, TumblingWindows, WindowAssigner};
use window_core::{TimeWindow, Timestamp, TimestampedValue, Window};
use window_operator::{
    Emitted, FullWindow, LateDataPolicy, OperatorConfig, WindowComputation, WindowOperator,
};
use window_triggers::AnyTrigger;

type Contents = Vec<(Timestamp, f64)>;
type ContentsFn = fn(&[TimestampedValue<f64>]) -> Contents;
type Record = Emitted<&'static str, TimeWindow, f64, Contents>;

const KEYS: [&str; 3] = ["a", "b", "c"];
const CASES: u64 = 5_000;

fn contents_of(els: &[TimestampedValue<f64>]) -> Contents {
    els.iter().map(|e| (e.timestamp, e.value)).collect()
}

#[derive(Clone, Copy, Debug)]
enum Event {
    Element {
        key: &'static str,
        ts: Timestamp,
        value: f64,
    },
    Watermark(Timestamp),
}

#[derive(Clone, Debug)]
struct Case {
    windows: Windows,
    lateness: i64,
    side_output: bool,
    events: Vec<Event>,
}

fn gen_case(rng: &mut Rng) -> Case {
    let windows = gen_windows(rng, 80);
    let lateness = rng.range(0, 20);
    let side_output = rng.chance(70);
    let n = rng.range(0, 45);
    let mut wm = rng.range(-40, 0);
    let mut events = Vec::new();
    for i in 0..n {
        if rng.chance(25) {
            // Mostly forward, sometimes a regression the operator must ignore.
            wm += rng.range(-4, 12);
            events.push(Event::Watermark(wm));
        } else {
            let key = KEYS[rng.range(0, KEYS.len() as i64 - 1) as usize];
            // Around the watermark: on time, out of order, within lateness or late.
            let ts = wm + rng.range(-30, 20);
            events.push(Event::Element {
                key,
                ts,
                value: i as f64,
            });
        }
    }
    Case {
        windows,
        lateness,
        side_output,
        events,
    }
}

/// The reference model.
struct Model {
    case_windows: Windows,
    lateness: i64,
    side_output: bool,
    watermark: Timestamp,
    /// Per (key, window): the contents and the window's creation number.
    state: BTreeMap<(&'static str, TimeWindow), (Contents, u64)>,
    created: u64,
    out: Vec<Record>,
    late_firings: usize,
}

impl Model {
    fn cleanup(&self, w: &TimeWindow) -> Timestamp {
        w.max_timestamp().saturating_add(self.lateness)
    }

    fn element(&mut self, key: &'static str, ts: Timestamp, value: f64) {
        let mut skipped = true;
        for w in assign(self.case_windows, ts) {
            if self.cleanup(&w) <= self.watermark {
                continue;
            }
            skipped = false;
            let created = &mut self.created;
            let (contents, _) = self.state.entry((key, w)).or_insert_with(|| {
                *created += 1;
                (Vec::new(), *created)
            });
            contents.push((ts, value));
            if w.max_timestamp() <= self.watermark {
                let result = contents.clone();
                self.late_firings += 1;
                self.out.push(Emitted::Result {
                    key,
                    window: w,
                    result,
                    watermark: self.watermark,
                });
            }
        }
        if skipped && ts.saturating_add(self.lateness) <= self.watermark && self.side_output {
            self.out.push(Emitted::Late {
                key,
                timestamp: ts,
                value,
                watermark: self.watermark,
            });
        }
    }

    fn watermark(&mut self, wm: Timestamp) {
        if wm <= self.watermark {
            return;
        }
        let old = self.watermark;
        self.watermark = wm;
        let mut due: Vec<(Timestamp, u64, &'static str, TimeWindow)> = self
            .state
            .iter()
            .filter(|((_, w), _)| old < w.max_timestamp() && w.max_timestamp() <= wm)
            .map(|(&(k, w), &(_, created))| (w.max_timestamp(), created, k, w))
            .collect();
        due.sort();
        for (_, _, key, window) in due {
            let result = self.state[&(key, window)].0.clone();
            self.out.push(Emitted::Result {
                key,
                window,
                result,
                watermark: wm,
            });
        }
        let lateness = self.lateness;
        self.state
            .retain(|(_, w), _| w.max_timestamp().saturating_add(lateness) > wm);
    }
}

fn key_of(r: &Record) -> &'static str {
    match r {
        Emitted::Result { key, .. } | Emitted::Late { key, .. } | Emitted::Emptied { key, .. } => {
            key
        }
    }
}

fn by_key(records: &[Record]) -> BTreeMap<&'static str, Vec<Record>> {
    let mut m: BTreeMap<&'static str, Vec<Record>> = BTreeMap::new();
    for r in records {
        m.entry(key_of(r)).or_default().push(r.clone());
    }
    m
}

/// Runs the operator; returns its records and whether it holds no state at the end.
fn run_operator<A>(assigner: A, case: &Case) -> (Vec<Record>, String)
where
    A: WindowAssigner<f64, Window = TimeWindow>,
{
    let config = OperatorConfig {
        allowed_lateness: case.lateness,
        late_data: if case.side_output {
            LateDataPolicy::SideOutput
        } else {
            LateDataPolicy::Drop
        },
    };
    let function = FullWindow::new(contents_of as ContentsFn);
    let mut op = WindowOperator::new(assigner, AnyTrigger::EventTime, function, config).unwrap();
    let mut out = Vec::new();
    for e in &case.events {
        match *e {
            Event::Element { key, ts, value } => {
                op.process_element(key, value, ts, &mut out).unwrap()
            }
            Event::Watermark(w) => {
                op.process_watermark(w, &mut out);
            }
        }
    }
    op.process_watermark(i64::MAX, &mut out);
    let leftover = format!(
        "live windows {}, live keys {}, pending timers {:?}",
        op.live_windows(),
        op.live_keys(),
        op.pending_timers()
    );
    (out, leftover)
}

/// The model's records and the number of late firings among them.
fn run_model(case: &Case) -> (Vec<Record>, usize) {
    let mut m = Model {
        case_windows: case.windows,
        lateness: case.lateness,
        side_output: case.side_output,
        watermark: i64::MIN,
        state: BTreeMap::new(),
        created: 0,
        out: Vec::new(),
        late_firings: 0,
    };
    for e in &case.events {
        match *e {
            Event::Element { key, ts, value } => m.element(key, ts, value),
            Event::Watermark(w) => m.watermark(w),
        }
    }
    m.watermark(i64::MAX);
    assert!(m.state.is_empty());
    (m.out, m.late_firings)
}

#[test]
fn window_operator_matches_reference_model() {
    let mut fired = 0usize;
    let mut late = 0usize;
    let mut late_firings = 0usize;
    for seed in 1..=CASES {
        let mut rng = Rng::new(seed);
        let case = gen_case(&mut rng);
        let (actual, leftover) = match case.windows {
            Windows::Tumbling { size, offset } => run_operator(
                TumblingWindows::new(size, offset, TimeDomain::EventTime).unwrap(),
                &case,
            ),
            Windows::Sliding {
                size,
                slide,
                offset,
            } => run_operator(
                SlidingWindows::new(size, slide, offset, TimeDomain::EventTime).unwrap(),
                &case,
            ),
        };
        let (expected, n) = run_model(&case);
        late_firings += n;
        if actual != expected {
            let (a, e) = (by_key(&actual), by_key(&expected));
            assert_eq!(
                a, e,
                "seed {seed}: per-key output differs\ncase: {case:#?}\nexpected: {expected:#?}\nactual: {actual:#?}"
            );
            panic!(
                "seed {seed}: the per-key outputs agree, the order across keys does not\ncase: {case:#?}\nexpected: {expected:#?}\nactual: {actual:#?}"
            );
        }
        assert_eq!(
            leftover, "live windows 0, live keys 0, pending timers (0, 0)",
            "seed {seed}: state left after the final watermark\ncase: {case:#?}"
        );
        fired += expected
            .iter()
            .filter(|r| matches!(r, Emitted::Result { .. }))
            .count();
        late += expected
            .iter()
            .filter(|r| matches!(r, Emitted::Late { .. }))
            .count();
    }
    // The generator must exercise both firings and the late side output.
    assert!(fired > 10 * CASES as usize, "only {fired} firings");
    assert!(late > CASES as usize / 2, "only {late} late elements");
    assert!(
        late_firings > CASES as usize / 2,
        "only {late_firings} late firings"
    );
    println!("{CASES} cases: {fired} firings ({late_firings} late), {late} late elements");
}
