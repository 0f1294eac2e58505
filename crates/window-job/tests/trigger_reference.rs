//! Randomized comparison of the run-time configured job computation ([`window_job::build`]) (event time, `list`
//! aggregate, late side output) with a reference model written from the behavioural model of
//! Flink's `WindowOperator` / `EvictingWindowOperator` in `tests/conformance/flink/README.md`
//! and from the semantics of Flink's built-in triggers and evictors, for every non-default
//! trigger an event-time tumbling or sliding window can take:
//!
//! * `EventTimeTrigger` (`default`, `event-time`, `purging:event-time`),
//! * `CountTrigger` (`count:N`, `purging:count:N`),
//! * `ContinuousEventTimeTrigger` (`continuous-event-time:I`, `purging:...`),
//! * `DeltaTrigger` with `|new - old|` (`delta:X`, `purging:delta:X`),
//!
//! optionally with a `CountEvictor` or `TimeEvictor`, before or after the window function.
//!
//! The model keeps, per (key, window), the window contents (absent = Flink's `null` state) and
//! the trigger state (count; pending continuous fire time; delta reference value), plus one
//! sorted, deduplicated set of event-time timers `(time, key, window)`. Watermarks fire the
//! timers in ascending time order, including timers registered while firing that are already
//! due; a timer at `max_ts + lateness` clears contents, trigger state (the trigger's own
//! `clear`) and so ends the window. Every case ends with the watermark `i64::MAX`.
//!
//! Records are compared per key, in order. Flink fires timers of equal timestamp in
//! binary-heap order, which is unspecified, so records from timers of one watermark advance with
//! the same timestamp (possible within one key for overlapping sliding windows) are compared as
//! a multiset. Cases come from a seeded xorshift generator, so a failure names its seed.

#[path = "../../window-operator/tests/common/mod.rs"]
mod common;

use common::{assign, gen_windows, Rng, Windows};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;
use window_core::Number;

use window_core::Timestamp;
use window_core::{AnyWindow, LateDataPolicy, Window, WindowOutput};
use window_job::{build, JobAggregate, JobResult, JobSpec, WindowSpec};

const CASES: u64 = 5_000;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Trig {
    EventTime,
    Count(u64),
    Continuous(i64),
    Delta(f64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Evict {
    Count(usize),
    Time(i64),
}

#[derive(Clone, Copy, Debug)]
enum Event {
    Element {
        key: usize,
        ts: Timestamp,
        value: f64,
    },
    Watermark(Timestamp),
}

#[derive(Clone, Debug)]
struct Case {
    windows: Windows,
    lateness: i64,
    trigger: Trig,
    purging: bool,
    /// The trigger as `windowctl` spells it.
    trigger_text: String,
    evictor: Option<(Evict, bool)>,
    evictor_text: Option<String>,
    keys: usize,
    events: Vec<Event>,
}

const KEYS: [&str; 3] = ["a", "b", "c"];

fn gen_case(rng: &mut Rng) -> Case {
    let windows = gen_windows(rng, 75);
    let lateness = rng.range(0, 20);
    let purging = rng.chance(50);
    let (trigger, inner) = match rng.range(0, 3) {
        0 => {
            let text = if !purging && rng.chance(50) {
                "default"
            } else {
                "event-time"
            };
            (Trig::EventTime, text.to_owned())
        }
        1 => {
            let n = rng.range(1, 4) as u64;
            (Trig::Count(n), format!("count:{n}"))
        }
        2 => {
            let i = rng.range(1, 8);
            (Trig::Continuous(i), format!("continuous-event-time:{i}"))
        }
        _ => {
            let x = [0.0, 0.5, 1.0, 2.0, 3.0, 5.0][rng.range(0, 5) as usize];
            (Trig::Delta(x), format!("delta:{x}"))
        }
    };
    let trigger_text = if purging {
        format!("purging:{inner}")
    } else {
        inner
    };
    let evictor = if rng.chance(35) {
        let after = rng.chance(50);
        let e = if rng.chance(50) {
            Evict::Count(rng.range(0, 3) as usize)
        } else {
            Evict::Time(rng.range(0, 8))
        };
        Some((e, after))
    } else {
        None
    };
    let evictor_text = evictor.map(|(e, after)| {
        let base = match e {
            Evict::Count(n) => format!("count:{n}"),
            Evict::Time(d) => format!("time:{d}"),
        };
        if after {
            format!("{base}:after")
        } else {
            base
        }
    });
    let keys = rng.range(2, 3) as usize;
    let n = rng.range(0, 40);
    let mut wm = rng.range(-40, 0);
    let mut events = Vec::new();
    for _ in 0..n {
        if rng.chance(25) {
            // Increasing, sometimes by 0 or backwards (such markers are ignored).
            wm += if rng.chance(90) {
                rng.range(1, 12)
            } else {
                rng.range(-3, 0)
            };
            events.push(Event::Watermark(wm));
        } else {
            let key = rng.range(0, keys as i64 - 1) as usize;
            // Around the watermark: on time, out of order, within lateness or late.
            let ts = wm + rng.range(-25, 20);
            events.push(Event::Element {
                key,
                ts,
                value: rng.range(0, 9) as f64,
            });
        }
    }
    Case {
        windows,
        lateness,
        trigger,
        purging,
        trigger_text,
        evictor,
        evictor_text,
        keys,
        events,
    }
}

/// An emitted record of one key.
#[derive(Clone, Debug, PartialEq)]
enum Rec {
    Result {
        window: (Timestamp, Timestamp),
        values: Vec<f64>,
        wm: Timestamp,
    },
    Late {
        ts: Timestamp,
        value: f64,
        wm: Timestamp,
    },
}

// ---------------------------------------------------------------------------------------------
// The reference model.
// ---------------------------------------------------------------------------------------------

/// `[start, end)`.
type Win = (Timestamp, Timestamp);

fn max_ts(w: Win) -> Timestamp {
    w.1 - 1
}

#[derive(Clone, Debug, Default, PartialEq)]
struct TriggerState {
    /// `CountTrigger`'s count.
    count: u64,
    /// `ContinuousEventTimeTrigger`'s pending fire time.
    next: Option<Timestamp>,
    /// `DeltaTrigger`'s reference element (its value).
    last: Option<f64>,
}

struct Model<'c> {
    case: &'c Case,
    wm: Timestamp,
    /// Window contents in arrival order; absent is Flink's `null` state.
    contents: BTreeMap<(usize, Win), Vec<(Timestamp, f64)>>,
    triggers: BTreeMap<(usize, Win), TriggerState>,
    timers: BTreeSet<(Timestamp, usize, Win)>,
    /// (key, group, record): records of one group may come in any order within their key.
    out: Vec<(usize, u64, Rec)>,
    groups: u64,
}

impl<'c> Model<'c> {
    fn new(case: &'c Case) -> Self {
        Self {
            case,
            wm: i64::MIN,
            contents: BTreeMap::new(),
            triggers: BTreeMap::new(),
            timers: BTreeSet::new(),
            out: Vec::new(),
            groups: 0,
        }
    }

    fn new_group(&mut self) -> u64 {
        self.groups += 1;
        self.groups
    }

    fn cleanup_time(&self, w: Win) -> Timestamp {
        max_ts(w).saturating_add(self.case.lateness)
    }

    /// Trigger `onElement`: returns whether it fires (purging is applied by the caller).
    fn trigger_on_element(&mut self, key: usize, w: Win, ts: Timestamp, value: f64) -> bool {
        let wm = self.wm;
        let st = self.triggers.entry((key, w)).or_default();
        match self.case.trigger {
            Trig::EventTime => {
                if max_ts(w) <= wm {
                    return true;
                }
                self.timers.insert((max_ts(w), key, w));
                false
            }
            Trig::Count(n) => {
                st.count += 1;
                if st.count >= n {
                    st.count = 0;
                    return true;
                }
                false
            }
            Trig::Continuous(i) => {
                if max_ts(w) <= wm {
                    return true;
                }
                self.timers.insert((max_ts(w), key, w));
                if st.next.is_none() {
                    // Java's truncating `%`, as Rust's.
                    let t = (ts - ts % i + i).min(max_ts(w));
                    st.next = Some(t);
                    self.timers.insert((t, key, w));
                }
                false
            }
            Trig::Delta(x) => match st.last {
                None => {
                    st.last = Some(value);
                    false
                }
                Some(old) => {
                    if (value - old).abs() > x {
                        st.last = Some(value);
                        true
                    } else {
                        false
                    }
                }
            },
        }
    }

    /// Trigger `onEventTime`.
    fn trigger_on_event_time(&mut self, key: usize, w: Win, t: Timestamp) -> bool {
        match self.case.trigger {
            Trig::EventTime => t == max_ts(w),
            Trig::Count(_) | Trig::Delta(_) => false,
            Trig::Continuous(i) => {
                if t == max_ts(w) {
                    return true;
                }
                let st = self.triggers.entry((key, w)).or_default();
                if st.next == Some(t) {
                    let n = (t + i).min(max_ts(w));
                    st.next = Some(n);
                    self.timers.insert((n, key, w));
                    return true;
                }
                false
            }
        }
    }

    /// Trigger `clear`: drops the trigger state and the timers the trigger deletes.
    fn trigger_clear(&mut self, key: usize, w: Win) {
        let st = self.triggers.remove(&(key, w)).unwrap_or_default();
        match self.case.trigger {
            Trig::EventTime => {
                self.timers.remove(&(max_ts(w), key, w));
            }
            Trig::Continuous(_) => {
                // Only the pending interval timer, not the window-end timer.
                if let Some(t) = st.next {
                    self.timers.remove(&(t, key, w));
                }
            }
            Trig::Count(_) | Trig::Delta(_) => {}
        }
    }

    fn evict(&self, els: &mut Vec<(Timestamp, f64)>, after: bool) {
        let Some((e, evict_after)) = self.case.evictor else {
            return;
        };
        if evict_after != after {
            return;
        }
        match e {
            Evict::Count(n) => {
                if els.len() > n {
                    els.drain(..els.len() - n);
                }
            }
            Evict::Time(d) => {
                if let Some(max) = els.iter().map(|e| e.0).max() {
                    els.retain(|e| e.0 > max - d);
                }
            }
        }
    }

    /// A FIRE: emits the contents unless they are absent.
    fn emit(&mut self, key: usize, w: Win, group: u64) {
        let Some(mut els) = self.contents.remove(&(key, w)) else {
            return;
        };
        self.evict(&mut els, false);
        let values = els.iter().map(|e| e.1).collect();
        self.evict(&mut els, true);
        // An evicting window rewrites its list state; an empty list state is absent.
        if !els.is_empty() {
            self.contents.insert((key, w), els);
        }
        self.out.push((
            key,
            group,
            Rec::Result {
                window: w,
                values,
                wm: self.wm,
            },
        ));
    }

    fn element(&mut self, key: usize, ts: Timestamp, value: f64) {
        let mut skipped = true;
        for w in assign(self.case.windows, ts) {
            let w: Win = (w.start(), w.end());
            if self.cleanup_time(w) <= self.wm {
                continue;
            }
            skipped = false;
            self.contents.entry((key, w)).or_default().push((ts, value));
            let fire = self.trigger_on_element(key, w, ts, value);
            if fire {
                let g = self.new_group();
                self.emit(key, w, g);
                if self.case.purging {
                    self.contents.remove(&(key, w));
                }
            }
            self.timers.insert((self.cleanup_time(w), key, w));
        }
        if skipped && ts + self.case.lateness <= self.wm {
            let g = self.new_group();
            self.out.push((
                key,
                g,
                Rec::Late {
                    ts,
                    value,
                    wm: self.wm,
                },
            ));
        }
    }

    fn watermark(&mut self, wm: Timestamp) {
        if wm <= self.wm {
            return;
        }
        self.wm = wm;
        let mut group = (i64::MIN, 0);
        while let Some(&(t, key, w)) = self.timers.first() {
            if t > wm {
                break;
            }
            self.timers.pop_first();
            if group.0 != t || group.1 == 0 {
                group = (t, self.new_group());
            }
            let fire = self.trigger_on_event_time(key, w, t);
            if fire {
                self.emit(key, w, group.1);
                if self.case.purging {
                    self.contents.remove(&(key, w));
                }
            }
            if t == self.cleanup_time(w) {
                self.contents.remove(&(key, w));
                self.trigger_clear(key, w);
            }
        }
    }
}

fn run_model(case: &Case) -> Vec<(usize, u64, Rec)> {
    let mut m = Model::new(case);
    for e in &case.events {
        match *e {
            Event::Element { key, ts, value } => m.element(key, ts, value),
            Event::Watermark(w) => m.watermark(w),
        }
    }
    m.watermark(i64::MAX);
    assert!(
        m.contents.is_empty() && m.triggers.is_empty() && m.timers.is_empty(),
        "model left state: {:?} {:?} {:?}",
        m.contents,
        m.triggers,
        m.timers
    );
    m.out
}

// ---------------------------------------------------------------------------------------------
// The library.
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct Collect(Vec<(usize, Rec)>);

fn key_index(key: &str) -> usize {
    KEYS.iter().position(|k| *k == key).expect("known key")
}

impl WindowOutput<String, AnyWindow, Number, JobResult> for Collect {
    fn result(
        &mut self,
        key: &String,
        window: &AnyWindow,
        result: JobResult,
        watermark: Timestamp,
    ) {
        let JobResult::List(values) = result else {
            panic!("list aggregate gave {result:?}");
        };
        self.0.push((
            key_index(key),
            Rec::Result {
                window: window.bounds().expect("time window"),
                values: values.into_iter().map(Number::as_f64).collect(),
                wm: watermark,
            },
        ));
    }

    fn late(&mut self, key: String, timestamp: Timestamp, value: Number, watermark: Timestamp) {
        self.0.push((
            key_index(&key),
            Rec::Late {
                ts: timestamp,
                value: value.as_f64(),
                wm: watermark,
            },
        ));
    }
}

fn spec_of(case: &Case) -> JobSpec {
    let window = match case.windows {
        Windows::Tumbling { size, offset } => WindowSpec::Tumbling { size, offset },
        Windows::Sliding {
            size,
            slide,
            offset,
        } => WindowSpec::Sliding {
            size,
            slide,
            offset,
        },
    };
    let mut spec = JobSpec::new(window, JobAggregate::List);
    spec.trigger = case.trigger_text.parse().expect("trigger parses");
    spec.allowed_lateness = case.lateness;
    spec.late_data = LateDataPolicy::SideOutput;
    spec.evictor = case
        .evictor_text
        .as_ref()
        .map(|e| e.parse().expect("evictor parses"));
    spec
}

/// Runs the operator; returns its records and the window states left at the end.
fn run_operator(case: &Case) -> (Vec<(usize, Rec)>, usize) {
    let mut op = build::<String>(&spec_of(case)).expect("valid job");
    let mut sink = Collect::default();
    for e in &case.events {
        match *e {
            Event::Element { key, ts, value } => op
                .process_element(KEYS[key].to_owned(), Number::from(value), ts, &mut sink)
                .expect("element accepted"),
            Event::Watermark(w) => {
                op.process_watermark(w, &mut sink);
            }
        }
    }
    op.process_watermark(i64::MAX, &mut sink);
    (sink.0, op.live_state().windows)
}

/// Compares one key's records; records of one group are compared as a multiset.
fn compare_key(expected: &[(u64, Rec)], actual: &[Rec]) -> Result<(), String> {
    if expected.len() != actual.len() {
        return Err(format!(
            "{} records expected, {} emitted",
            expected.len(),
            actual.len()
        ));
    }
    let mut i = 0;
    while i < expected.len() {
        let g = expected[i].0;
        let mut j = i;
        while j < expected.len() && expected[j].0 == g {
            j += 1;
        }
        let mut e: Vec<String> = expected[i..j]
            .iter()
            .map(|r| format!("{:?}", r.1))
            .collect();
        let mut a: Vec<String> = actual[i..j].iter().map(|r| format!("{r:?}")).collect();
        e.sort();
        a.sort();
        if e != a {
            return Err(format!(
                "records {i}..{j} differ: expected {e:#?}, emitted {a:#?}"
            ));
        }
        i = j;
    }
    Ok(())
}

#[derive(Default)]
struct Stats {
    results: usize,
    late: usize,
    empty_results: usize,
    before_end: usize,
    tie_groups: usize,
    per_trigger: BTreeMap<String, usize>,
}

#[test]
fn triggers_and_evictors_match_reference_model() {
    let started = Instant::now();
    let mut stats = Stats::default();
    for seed in 1..=CASES {
        let mut rng = Rng::new(seed);
        let case = gen_case(&mut rng);
        let expected = run_model(&case);
        let (actual, live) = run_operator(&case);
        for (key, name) in KEYS.iter().enumerate().take(case.keys) {
            let e: Vec<(u64, Rec)> = expected
                .iter()
                .filter(|r| r.0 == key)
                .map(|r| (r.1, r.2.clone()))
                .collect();
            let a: Vec<Rec> = actual
                .iter()
                .filter(|r| r.0 == key)
                .map(|r| r.1.clone())
                .collect();
            if let Err(msg) = compare_key(&e, &a) {
                let exp: Vec<&Rec> = e.iter().map(|r| &r.1).collect();
                panic!(
                    "seed {seed}, key {name}: {msg}\ncase: {case:#?}\nexpected: {exp:#?}\nemitted: {a:#?}"
                );
            }
            let mut sizes: BTreeMap<u64, usize> = BTreeMap::new();
            for (g, _) in &e {
                *sizes.entry(*g).or_default() += 1;
            }
            stats.tie_groups += sizes.values().filter(|&&n| n > 1).count();
        }
        assert_eq!(
            live, 0,
            "seed {seed}: window states left after the final watermark\ncase: {case:#?}"
        );
        let kind = case.trigger_text.split(':').take(2).collect::<Vec<_>>();
        let kind = if case.purging {
            kind.join(":")
        } else {
            kind[0].to_owned()
        };
        *stats.per_trigger.entry(kind).or_default() += 1;
        for (_, _, r) in &expected {
            match r {
                Rec::Result { values, wm, .. } => {
                    stats.results += 1;
                    stats.empty_results += usize::from(values.is_empty());
                    stats.before_end += usize::from(*wm != i64::MAX);
                }
                Rec::Late { .. } => stats.late += 1,
            }
        }
    }
    let n = CASES as usize;
    // The generator must exercise firings, empty evicted results, late elements and ties.
    assert!(stats.results > 10 * n, "only {} results", stats.results);
    assert!(stats.late > n / 4, "only {} late elements", stats.late);
    assert!(
        stats.empty_results > n / 20,
        "only {} empty results",
        stats.empty_results
    );
    assert!(stats.tie_groups > 0, "no same-timestamp timer ties");
    println!(
        "{CASES} cases in {:?}: {} results ({} empty, {} before end of input), {} late elements, {} same-key timer ties; cases per trigger: {:?}",
        started.elapsed(),
        stats.results,
        stats.empty_results,
        stats.before_end,
        stats.late,
        stats.tie_groups,
        stats.per_trigger
    );
}
