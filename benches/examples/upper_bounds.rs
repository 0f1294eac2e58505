//! How fast could the keyed sliding sum be? Lean prototypes timed beside the hash-map baseline.
//!
//! The bench table (`cargo xtask bench`) asks the best strategy on the keyed sliding sum with
//! 100k Zipf keys to reach 30 % of the bare hash-map count over the same events. This example
//! measures what stands in the way. Beside the baseline and the real `sliced:changes` strategy
//! it times lean prototypes that compute the same results (checked below: same number of
//! results, same checksum) while cutting every corner the engine cannot cut: `u32` keys, sum
//! only, offset 0, times `>= 0` in order, `size = r * slide`, no metrics, no ends of time.
//!
//! - **harness only**: the event-time reorder buffer ([`EventTime`]) and the
//!   bounded-out-of-orderness watermark after each element, in front of a processor that does
//!   nothing. Every ordered strategy pays this, the baseline does not.
//! - **per-key minimal**: per-key state as `sliced` keeps it (the open slice in a dense array,
//!   closed slices in a deque, a slice log of key slots per slice), but the window aggregate is
//!   summed over the closed slices (`O(r)`, no two-stacks), so it bounds small `r` only.
//! - **slice tables**: no per-key state at all: one hash table (key -> partial sum) per slice;
//!   a window's result probes the `r` tables of the window. Cheap for `r <= 2`, `O(r)` beyond.
//!
//! Each prototype runs bare (elements handed over in order, no watermark) and behind the same
//! harness the bench strategies run behind. Figures are best of `runs`, all variants
//! interleaved run by run, so they compare within one invocation.
//!
//! ```text
//! cargo run --release -p benches --example upper_bounds [events=100000] [runs=7] [ratios=1,2]
//! ```

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use benches::keyed::{KeyDistribution, KeyedStream};
use benches::strategy::{run_workload, SlidingSpec, Tally, PER_ELEMENT};
use benches::table::{hash_map_count, KEYED_WINDOW_MS};
use benches::GeneratedEvent;
use engine::core::{NumericAggregate, TimeWindow, Timestamp, WindowComputation, WindowOutput};
use engine::job::Strategy;
use engine::keywindow::{
    EmitMode, EventTime, InOrderWindows, KeyWindowError, KeyWindowMetrics, SlidingGeometry,
};
use engine::watermark::BoundedOutOfOrderness;

type Map<K, V> = HashMap<K, V, ahash::RandomState>;

/// A prototype: elements in time order, then time advanced; counts and sums its results.
trait Prototype {
    /// Adds an element (first firing the windows that end before `time`).
    fn process(&mut self, key: u32, value: f64, time: Timestamp);
    /// Fires every window with max timestamp `<= time`.
    fn advance(&mut self, time: Timestamp);
    /// (results, checksum): empty results count and add 0, as [`Tally`] does.
    fn tally(&self) -> (u64, f64);
}

/// Window geometry in slices: window `w` holds slices `w - r + 1 ..= w` (slice = slide).
#[derive(Clone, Copy, Debug)]
struct Grid {
    slide: i64,
    r: i64,
}

impl Grid {
    fn slice_of(&self, time: Timestamp) -> i64 {
        time.div_euclid(self.slide)
    }
    fn max_timestamp(&self, w: i64) -> Timestamp {
        (w + 1).saturating_mul(self.slide) - 1
    }
}

/// Which window changes next: the next slice to enter or the oldest entered one to leave.
fn next_change(grid: Grid, entering: Option<i64>, leaving: Option<i64>) -> Option<i64> {
    match (entering, leaving.map(|s| s + grid.r)) {
        (Some(e), Some(l)) => Some(e.min(l)),
        (e, l) => e.or(l),
    }
}

/// Does nothing: what is left is the harness around it.
#[derive(Debug, Default)]
struct Nothing {
    sum: f64,
}

impl Prototype for Nothing {
    fn process(&mut self, _key: u32, value: f64, _time: Timestamp) {
        self.sum += value;
    }
    fn advance(&mut self, _time: Timestamp) {}
    fn tally(&self) -> (u64, f64) {
        (0, self.sum)
    }
}

#[derive(Clone, Copy, Debug)]
struct Open {
    slice: i64,
    sum: f64,
    count: u64,
}

const NO_SLICE: i64 = -1;

#[derive(Debug, Default)]
struct Cold {
    key: u32,
    closed: VecDeque<(i64, f64, u64)>,
    round: u64,
}

/// Per-key state, minimal (see the module docs).
#[derive(Debug)]
struct PerKey {
    grid: Grid,
    ids: Map<u32, u32>,
    open: Vec<Open>,
    cold: Vec<Cold>,
    free: Vec<u32>,
    /// Key slots of the slices created in each slice interval, oldest first.
    log: VecDeque<(i64, Vec<u32>)>,
    /// `log[..entered]` entered their first window.
    entered: usize,
    current: i64,
    batch: Vec<(u32, f64)>,
    slots: Vec<u32>,
    idle: Vec<u32>,
    round: u64,
    results: u64,
    checksum: f64,
}

impl PerKey {
    fn new(grid: Grid) -> Self {
        Self {
            grid,
            ids: Map::default(),
            open: Vec::new(),
            cold: Vec::new(),
            free: Vec::new(),
            log: VecDeque::new(),
            entered: 0,
            current: NO_SLICE,
            batch: Vec::with_capacity(256),
            slots: Vec::with_capacity(256),
            idle: Vec::new(),
            round: 0,
            results: 0,
            checksum: 0.0,
        }
    }

    fn fold(&mut self) {
        let fresh = Open {
            slice: NO_SLICE,
            sum: 0.0,
            count: 0,
        };
        self.slots.clear();
        for &(key, _) in &self.batch {
            let slot = match self.ids.get(&key) {
                Some(&slot) => slot,
                None => {
                    let slot = match self.free.pop() {
                        Some(slot) => {
                            self.open[slot as usize] = fresh;
                            self.cold[slot as usize].key = key;
                            slot
                        }
                        None => {
                            self.open.push(fresh);
                            self.cold.push(Cold {
                                key,
                                ..Cold::default()
                            });
                            (self.open.len() - 1) as u32
                        }
                    };
                    self.ids.insert(key, slot);
                    slot
                }
            };
            self.slots.push(slot);
        }
        let current = self.current;
        for (&(_, value), &slot) in self.batch.iter().zip(&self.slots) {
            let open = &mut self.open[slot as usize];
            if open.slice == current {
                open.sum += value;
                open.count += 1;
                continue;
            }
            if open.slice != NO_SLICE {
                let closed = (open.slice, open.sum, open.count);
                self.cold[slot as usize].closed.push_back(closed);
            }
            *open = Open {
                slice: current,
                sum: value,
                count: 1,
            };
            if let Some(last) = self.log.back_mut() {
                last.1.push(slot);
            }
        }
        self.batch.clear();
    }

    fn fire(&mut self, w: i64, firing: &mut Vec<u32>) {
        self.round += 1;
        firing.clear();
        if self.entered > 0 && self.log.front().is_some_and(|l| l.0 + self.grid.r == w) {
            if let Some((_, slots)) = self.log.pop_front() {
                firing.extend_from_slice(&slots);
                self.entered -= 1;
            }
        }
        if self.log.get(self.entered).is_some_and(|l| l.0 == w) {
            firing.extend_from_slice(&self.log[self.entered].1);
            self.entered += 1;
        }
        let first = w - self.grid.r + 1;
        for &slot in firing.iter() {
            let cold = &mut self.cold[slot as usize];
            if cold.round == self.round {
                continue;
            }
            cold.round = self.round;
            while cold.closed.front().is_some_and(|c| c.0 < first) {
                cold.closed.pop_front();
            }
            let open = &mut self.open[slot as usize];
            if open.slice != NO_SLICE && open.slice < first {
                open.slice = NO_SLICE;
            }
            let (mut sum, mut count) = (0.0, 0);
            for c in &cold.closed {
                sum += c.1;
                count += c.2;
            }
            if open.slice != NO_SLICE {
                sum += open.sum;
                count += open.count;
            }
            self.results += 1;
            self.checksum += sum;
            if count == 0 {
                self.idle.push(slot);
            }
        }
        if self.idle.len() > 4096.max(self.ids.len() / 2) {
            for slot in self.idle.drain(..) {
                let cold = &self.cold[slot as usize];
                let idle = cold.closed.is_empty() && self.open[slot as usize].slice == NO_SLICE;
                if idle && self.ids.remove(&cold.key).is_some() {
                    self.free.push(slot);
                }
            }
        }
    }
}

impl Prototype for PerKey {
    fn process(&mut self, key: u32, value: f64, time: Timestamp) {
        let slice = self.grid.slice_of(time);
        if slice != self.current {
            self.fold();
            self.advance(time - 1);
            self.current = slice;
            self.log.push_back((slice, Vec::new()));
        }
        self.batch.push((key, value));
        if self.batch.len() == 256 {
            self.fold();
        }
    }

    fn advance(&mut self, time: Timestamp) {
        let mut firing = Vec::new();
        loop {
            let entering = self.log.get(self.entered).map(|l| l.0);
            let leaving = (self.entered > 0)
                .then(|| self.log.front().map(|l| l.0))
                .flatten();
            match next_change(self.grid, entering, leaving) {
                Some(w) if self.grid.max_timestamp(w) <= time => {
                    // Batched elements first: they may be in the window.
                    self.fold();
                    self.fire(w, &mut firing);
                }
                _ => break,
            }
        }
    }

    fn tally(&self) -> (u64, f64) {
        (self.results, self.checksum)
    }
}

/// One slice's partial sums: key -> (sum, count).
type SliceTable = Map<u32, (f64, u64)>;

/// One hash table per slice (see the module docs).
#[derive(Debug)]
struct SliceTables {
    grid: Grid,
    /// Live slices, oldest first: (slice, key -> (sum, count)).
    slices: VecDeque<(i64, SliceTable)>,
    entered: usize,
    current: i64,
    spare: Vec<SliceTable>,
    results: u64,
    checksum: f64,
}

impl SliceTables {
    fn new(grid: Grid) -> Self {
        Self {
            grid,
            slices: VecDeque::new(),
            entered: 0,
            current: NO_SLICE,
            spare: Vec::new(),
            results: 0,
            checksum: 0.0,
        }
    }

    /// Sum and count of `key` over the live slices in `first..=last`.
    fn window_sum(&self, key: u32, first: i64, last: i64) -> (f64, u64) {
        let mut acc = (0.0, 0);
        for (slice, table) in &self.slices {
            if (first..=last).contains(slice) {
                if let Some(x) = table.get(&key) {
                    acc.0 += x.0;
                    acc.1 += x.1;
                }
            }
        }
        acc
    }

    fn fire(&mut self, w: i64) {
        let first = w - self.grid.r + 1;
        let entering = self
            .slices
            .get(self.entered)
            .is_some_and(|s| s.0 == w)
            .then_some(self.entered);
        if let Some(i) = entering {
            for &key in self.slices[i].1.keys() {
                let (sum, _) = self.window_sum(key, first, w);
                self.results += 1;
                self.checksum += sum;
            }
            self.entered += 1;
        }
        if self.entered > 0 && self.slices.front().is_some_and(|s| s.0 + self.grid.r == w) {
            if let Some((_, mut table)) = self.slices.pop_front() {
                self.entered -= 1;
                let entered_now = entering.map(|i| &self.slices[i - 1].1);
                for &key in table.keys() {
                    if entered_now.is_some_and(|t| t.contains_key(&key)) {
                        continue; // fired above, once per window
                    }
                    let (sum, _) = self.window_sum(key, first, w);
                    self.results += 1;
                    self.checksum += sum;
                }
                table.clear();
                self.spare.push(table);
            }
        }
    }
}

impl Prototype for SliceTables {
    fn process(&mut self, key: u32, value: f64, time: Timestamp) {
        let slice = self.grid.slice_of(time);
        if slice != self.current {
            self.advance(time - 1);
            self.current = slice;
            let table = self.spare.pop().unwrap_or_default();
            self.slices.push_back((slice, table));
        }
        if let Some((_, table)) = self.slices.back_mut() {
            let e = table.entry(key).or_insert((0.0, 0));
            e.0 += value;
            e.1 += 1;
        }
    }

    fn advance(&mut self, time: Timestamp) {
        loop {
            let entering = self.slices.get(self.entered).map(|s| s.0);
            let leaving = (self.entered > 0)
                .then(|| self.slices.front().map(|s| s.0))
                .flatten();
            match next_change(self.grid, entering, leaving) {
                Some(w) if self.grid.max_timestamp(w) <= time => self.fire(w),
                _ => break,
            }
        }
    }

    fn tally(&self) -> (u64, f64) {
        (self.results, self.checksum)
    }
}

/// A prototype as an in-order processor, so it can run behind [`EventTime`].
#[derive(Debug)]
struct InOrder<P>(P, SlidingGeometry);

impl<P: Prototype> InOrderWindows<u32, f64> for InOrder<P> {
    type Out = Option<f64>;

    fn process<O: WindowOutput<u32, TimeWindow, f64, Option<f64>> + ?Sized>(
        &mut self,
        key: u32,
        value: f64,
        time: Timestamp,
        _out: &mut O,
    ) -> Result<(), KeyWindowError> {
        self.0.process(key, value, time);
        Ok(())
    }

    fn advance_time<O: WindowOutput<u32, TimeWindow, f64, Option<f64>> + ?Sized>(
        &mut self,
        time: Timestamp,
        _: &mut O,
    ) {
        self.0.advance(time);
    }

    fn metrics(&self) -> KeyWindowMetrics {
        KeyWindowMetrics::default()
    }

    fn live_windows(&self) -> usize {
        0
    }

    fn live_keys(&self) -> usize {
        0
    }

    fn geometry(&self) -> SlidingGeometry {
        self.1
    }

    fn current_time(&self) -> Timestamp {
        0
    }
}

/// Results go nowhere (prototypes count their own).
struct Discard;

impl WindowOutput<u32, TimeWindow, f64, Option<f64>> for Discard {
    fn result(&mut self, _: &u32, _: &TimeWindow, _: Option<f64>, _: Timestamp) {}
    fn late(&mut self, _: u32, _: Timestamp, _: f64, _: Timestamp) {}
}

fn run_bare<P: Prototype>(mut p: P, events: &[GeneratedEvent]) -> (u64, f64) {
    for &(time, key, value) in events {
        p.process(key, value, time);
    }
    p.advance(Timestamp::MAX);
    p.tally()
}

fn run_behind_harness<P: Prototype>(p: P, grid: Grid, events: &[GeneratedEvent]) -> (u64, f64) {
    let geometry = SlidingGeometry::new(grid.slide * grid.r, grid.slide, 0).expect("valid grid");
    let mut et = EventTime::wrap(InOrder(p, geometry), 0);
    let mut watermark = BoundedOutOfOrderness::new(0);
    for &(time, key, value) in events {
        let r = et.process_element(key, value, time, &mut Discard);
        debug_assert!(r.is_ok(), "{r:?}");
        watermark.on_event(time);
        et.process_watermark(watermark.current(), &mut Discard);
    }
    et.process_watermark(Timestamp::MAX, &mut Discard);
    et.inner().0.tally()
}

fn run_sliced_changes(spec: &SlidingSpec, events: &[GeneratedEvent]) -> (u64, f64) {
    let mut tally = Tally::default();
    run_workload(
        Strategy::Sliced(EmitMode::Changes),
        spec,
        events,
        &mut tally,
    )
    .expect("valid spec");
    (tally.results, tally.checksum)
}

/// Prints a line of the table; a closed stdout (`| head`) ends the program quietly.
fn say(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    if writeln!(std::io::stdout(), "{line}").is_err() {
        std::process::exit(0);
    }
}

const USAGE: &str = "usage: upper_bounds [EVENTS (>= 1, default 100000)] [RUNS (>= 1, default 7)] \
[RATIOS: size/slide values dividing 60000, comma-separated, default 1,2]";

/// The command line: (events, runs, size/slide ratios), or a message naming the bad argument.
fn parse_args(args: &[String]) -> Result<(usize, usize, Vec<i64>), String> {
    if args.len() > 3 || args.iter().any(|a| a.starts_with('-')) {
        return Err(String::new());
    }
    let count = |i: usize, name: &str, default: usize| match args.get(i) {
        None => Ok(default),
        Some(a) => match a.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(format!("{name} must be a whole number >= 1, got '{a}'")),
        },
    };
    let ratios = match args.get(2) {
        None => vec![1, 2],
        Some(list) => list
            .split(',')
            .map(|r| match r.trim().parse::<i64>() {
                Ok(r) if r >= 1 && KEYED_WINDOW_MS % r == 0 => Ok(r),
                _ => Err(format!(
                    "ratio '{r}' must be a whole number >= 1 dividing {KEYED_WINDOW_MS} (the window, ms)"
                )),
            })
            .collect::<Result<_, _>>()?,
    };
    Ok((count(0, "EVENTS", 100_000)?, count(1, "RUNS", 7)?, ratios))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (events, runs, ratios) = match parse_args(&args) {
        Ok(parsed) => parsed,
        Err(why) => {
            if !why.is_empty() {
                eprintln!("upper_bounds: {why}");
            }
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };
    let keys = 100_000;
    // The stream of the bench table's "keyed 100k zipf" group.
    let stream = KeyedStream {
        keys,
        distribution: KeyDistribution::Zipf { exponent: 1.0 },
        events_per_ms: 1,
        seed: 0x5EED_0000 + u64::from(keys) * 2 + 1,
    };
    let events = stream.generate(events);
    let n = events.len() as f64;
    say(format_args!(
        "keyed sliding sum, 100k Zipf keys, window 60 s, {n} events, best of {runs} runs"
    ));
    say(format_args!(
        "| r | variant | events/s | of baseline | results |"
    ));
    say(format_args!("|---:|---|---:|---:|---:|"));
    for r in ratios {
        let spec = SlidingSpec {
            size: KEYED_WINDOW_MS,
            slide: KEYED_WINDOW_MS / r,
            aggregate: NumericAggregate::Sum,
            out_of_orderness: 0,
            watermark_every: PER_ELEMENT,
            allowed_lateness: 0,
        };
        let grid = Grid {
            slide: spec.slide,
            r,
        };
        type Variant<'a> = (&'a str, Box<dyn Fn() -> (u64, f64) + 'a>);
        let ev = &events;
        let variants: Vec<Variant<'_>> = vec![
            (
                "baseline: hash-map count",
                Box::new(|| (hash_map_count(ev) as u64, 0.0)),
            ),
            (
                "sliced:changes (the engine)",
                Box::new(|| run_sliced_changes(&spec, ev)),
            ),
            (
                "harness only",
                Box::new(|| run_behind_harness(Nothing::default(), grid, ev)),
            ),
            (
                "per-key minimal, bare",
                Box::new(|| run_bare(PerKey::new(grid), ev)),
            ),
            (
                "per-key minimal + harness",
                Box::new(|| run_behind_harness(PerKey::new(grid), grid, ev)),
            ),
            (
                "slice tables, bare",
                Box::new(|| run_bare(SliceTables::new(grid), ev)),
            ),
            (
                "slice tables + harness",
                Box::new(|| run_behind_harness(SliceTables::new(grid), grid, ev)),
            ),
        ];
        let mut best = vec![f64::MAX; variants.len()];
        let mut tallies = vec![(0, 0.0); variants.len()];
        for _ in 0..runs {
            for (i, (_, run)) in variants.iter().enumerate() {
                let start = Instant::now();
                tallies[i] = std::hint::black_box(run());
                best[i] = best[i].min(start.elapsed().as_secs_f64());
            }
        }
        let reference = tallies[1];
        for (i, (name, _)) in variants.iter().enumerate() {
            if i >= 3 {
                // Every prototype must compute what the engine computes.
                assert_eq!(
                    tallies[i], reference,
                    "r = {r}: {name} differs from sliced:changes"
                );
            }
            let results = if i == 0 || i == 2 {
                "-".to_owned()
            } else {
                tallies[i].0.to_string()
            };
            say(format_args!(
                "| {r} | {name} | {:.2} M | {:.1} % | {results} |",
                n / best[i] / 1e6,
                100.0 * best[0] / best[i]
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prototype_computes_what_sliced_changes_computes() {
        // The prototypes are only bounds if they do the same work: same results, same sums
        // (integer values, so sums are exact whatever the order), bare and behind the harness.
        let events = KeyedStream {
            keys: 500,
            distribution: KeyDistribution::Zipf { exponent: 1.0 },
            events_per_ms: 1,
            seed: 7,
        }
        .generate(20_000);
        for r in [1, 2, 3, 12] {
            let spec = SlidingSpec {
                size: 1_200,
                slide: 1_200 / r,
                aggregate: NumericAggregate::Sum,
                out_of_orderness: 0,
                watermark_every: PER_ELEMENT,
                allowed_lateness: 0,
            };
            let grid = Grid {
                slide: spec.slide,
                r,
            };
            let engine = run_sliced_changes(&spec, &events);
            assert!(engine.0 > 1_000, "r = {r}: {engine:?}");
            assert_eq!(run_bare(PerKey::new(grid), &events), engine, "r = {r}");
            assert_eq!(
                run_behind_harness(PerKey::new(grid), grid, &events),
                engine,
                "r = {r}"
            );
            assert_eq!(run_bare(SliceTables::new(grid), &events), engine, "r = {r}");
            assert_eq!(
                run_behind_harness(SliceTables::new(grid), grid, &events),
                engine,
                "r = {r}"
            );
        }
    }
}
