//! A Nexmark generator and its window queries Q5, Q7, Q11 and Q12 on the engine
//! (`docs/nexmark.md`).
//!
//! The generator follows Beam's (`sources/generator/`), one generator, default configuration:
//! event `n` is a person when `n % 50 < 1`, an auction when `< 4`, else a bid (1 : 3 : 46);
//! person and auction ids grow with `n` from 1000; a bid goes with probability 1/2 to the hot
//! auction (the first of the current block of 100 auction ids), else to one of the last 100
//! auctions or 10 ahead; its bidder is with probability 3/4 the hot bidder (first of the current
//! block of 100 persons, + 1), else one of the last 1000 persons or 10 ahead; prices are
//! `round(10^(6 U) * 100)`. Event time is a function of `n` only: `2015-07-15T00:00Z + n *
//! 100 µs` (10,000 events per s). String fields (names, emails, `extra` padding) are left out:
//! no window query reads them, and generating them would time the generator.
//!
//! The queries read only bids, projected before any clock starts to keyed events
//! `(time, key, price)`: by auction (Q5), by bidder (Q11, Q12), or one key (Q7).
//!
//! | query | window | here |
//! |---|---|---|
//! | Q5 hot items | sliding 10 s / 2 s (Flink suite) | count per auction through any [`StrategyRun`], then [`HotItems`]: the max count per window |
//! | Q7 highest bid | tumbling 10 s | max price, one key, through any [`StrategyRun`] (size = slide) |
//! | Q11 user sessions | session, gap 10 s | count per bidder, [`WindowOperator`] + [`SessionWindows`] |
//! | Q12 processing-time windows | tumbling 10 s, processing time | count per bidder, [`WindowOperator`] + processing-time [`TumblingWindows`], clock simulated |
//!
//! The watermark is the Flink suite's: bounded out-of-orderness 4 s ([`WATERMARK_DELAY_MS`]).
//! Q12's processing time comes from a simulated clock, [`PROCESSING_EVENTS_PER_MS`] arrivals per
//! ms, advanced before each element with `advance_processing_time`, so runs are reproducible.
//!
//! [`StrategyRun`]: crate::strategy::StrategyRun

use std::collections::{BTreeMap, HashMap};

use engine::assigners::{SessionWindows, TimeDomain, TumblingWindows};
use engine::core::{AnyWindow, NumericAggregate, Window, WindowComputation};
use engine::job::JobResult;
use engine::operator::{Incremental, OperatorConfig, WindowOperator, WindowOutput};
use engine::triggers::{EventTimeTrigger, ProcessingTimeTrigger};
use engine::watermark::BoundedOutOfOrderness;

use crate::rng::SplitMix64;
use crate::strategy::{BenchSink, Emits, Tally};
use crate::GeneratedEvent;

/// Beam's fixed base time, 2015-07-15T00:00:00Z, in ms.
pub const BASE_TIME_MS: i64 = 1_436_918_400_000;
/// Events per second of event time (Beam's default rate, one generator).
pub const EVENTS_PER_SEC: i64 = 10_000;
/// The Flink suite's watermark delay: 4 s.
pub const WATERMARK_DELAY_MS: i64 = 4_000;
/// Simulated arrivals per ms of processing time (Q12): the replay runs 10 times faster than
/// event time.
pub const PROCESSING_EVENTS_PER_MS: i64 = 100;
/// Q5 window size (Flink suite `HOP(.., 2 s, 10 s)`).
pub const Q5_SIZE_MS: i64 = 10_000;
/// Q5 window slide.
pub const Q5_SLIDE_MS: i64 = 2_000;
/// Q7 and Q12 tumbling window size, Q11 session gap.
pub const WINDOW_MS: i64 = 10_000;

const TOTAL_PROPORTION: u64 = 50;
const PERSON_PROPORTION: u64 = 1;
const AUCTION_PROPORTION: u64 = 3;
const FIRST_PERSON_ID: u64 = 1000;
const FIRST_AUCTION_ID: u64 = 1000;
const FIRST_CATEGORY_ID: u64 = 10;
const NUM_CATEGORIES: u64 = 5;
const HOT_AUCTION_RATIO: u64 = 2;
const HOT_BIDDER_RATIO: u64 = 4;
const HOT_SELLER_RATIO: u64 = 4;
const HOT_BLOCK: u64 = 100;
const NUM_IN_FLIGHT_AUCTIONS: u64 = 100;
const NUM_ACTIVE_PEOPLE: u64 = 1000;
const ID_LEAD: u64 = 10;

/// One Nexmark event (without string fields).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NexmarkEvent {
    /// A person registers.
    Person {
        /// Person id.
        id: u64,
        /// Event time, ms.
        time: i64,
    },
    /// An auction opens.
    Auction {
        /// Auction id.
        id: u64,
        /// Seller (a person id).
        seller: u64,
        /// Category, 10..15.
        category: u64,
        /// Initial bid.
        initial_bid: u64,
        /// When it closes, ms.
        expires: i64,
        /// Event time, ms.
        time: i64,
    },
    /// A bid.
    Bid {
        /// Auction id.
        auction: u64,
        /// Bidder (a person id).
        bidder: u64,
        /// Price.
        price: u64,
        /// Event time, ms.
        time: i64,
    },
}

/// Beam's `lastBase0PersonId`: `epoch * PERSON_PROPORTION + min(n % 50, PERSON_PROPORTION - 1)`,
/// which with one person per epoch is the epoch.
fn last_base0_person_id(n: u64) -> u64 {
    const { assert!(PERSON_PROPORTION == 1) };
    n / TOTAL_PROPORTION
}

fn last_base0_auction_id(n: u64) -> u64 {
    let mut epoch = n / TOTAL_PROPORTION;
    let mut offset = n % TOTAL_PROPORTION;
    if offset < PERSON_PROPORTION {
        // In the person part of the epoch: the last auction is from the previous epoch.
        epoch = epoch.saturating_sub(1);
        offset = AUCTION_PROPORTION - 1;
    } else if offset >= PERSON_PROPORTION + AUCTION_PROPORTION {
        offset = AUCTION_PROPORTION - 1;
    } else {
        offset -= PERSON_PROPORTION;
    }
    epoch * AUCTION_PROPORTION + offset
}

fn next_base0_person_id(n: u64, rng: &mut SplitMix64) -> u64 {
    let people = last_base0_person_id(n) + 1;
    let active = people.min(NUM_ACTIVE_PEOPLE);
    people - active + rng.below(active + ID_LEAD)
}

fn next_base0_auction_id(n: u64, rng: &mut SplitMix64) -> u64 {
    let max = last_base0_auction_id(n);
    let min = max.saturating_sub(NUM_IN_FLIGHT_AUCTIONS);
    min + rng.below(max - min + 1 + ID_LEAD)
}

fn price(rng: &mut SplitMix64) -> u64 {
    (10f64.powf(rng.next_f64() * 6.0) * 100.0).round() as u64
}

/// The time of event `n`, ms.
#[must_use]
pub fn event_time(n: u64) -> i64 {
    BASE_TIME_MS + (n as i64) * (1_000_000 / EVENTS_PER_SEC) / 1000
}

/// The first `n` events of the generator seeded with `seed`.
///
/// # Examples
/// ```
/// use benches::nexmark::{generate, NexmarkEvent};
/// let events = generate(5_000, 1);
/// let bids = events.iter().filter(|e| matches!(e, NexmarkEvent::Bid { .. })).count();
/// assert_eq!(bids, 5_000 * 46 / 50);
/// assert_eq!(events[0], NexmarkEvent::Person { id: 1000, time: 1_436_918_400_000 });
/// ```
#[must_use]
pub fn generate(n: usize, seed: u64) -> Vec<NexmarkEvent> {
    let mut rng = SplitMix64::new(seed);
    // Auctions last on average the event time in which 100 more auctions open (Beam).
    let horizon_ms =
        (HOT_BLOCK * TOTAL_PROPORTION / AUCTION_PROPORTION) as i64 * 1000 / EVENTS_PER_SEC;
    (0..n as u64)
        .map(|id| {
            let time = event_time(id);
            let rem = id % TOTAL_PROPORTION;
            if rem < PERSON_PROPORTION {
                NexmarkEvent::Person {
                    id: last_base0_person_id(id) + FIRST_PERSON_ID,
                    time,
                }
            } else if rem < PERSON_PROPORTION + AUCTION_PROPORTION {
                let seller = if rng.below(HOT_SELLER_RATIO) > 0 {
                    (last_base0_person_id(id) / HOT_BLOCK) * HOT_BLOCK
                } else {
                    next_base0_person_id(id, &mut rng)
                };
                NexmarkEvent::Auction {
                    id: last_base0_auction_id(id) + FIRST_AUCTION_ID,
                    seller: seller + FIRST_PERSON_ID,
                    category: FIRST_CATEGORY_ID + rng.below(NUM_CATEGORIES),
                    initial_bid: price(&mut rng),
                    expires: time + 1 + rng.below(2 * horizon_ms as u64) as i64,
                    time,
                }
            } else {
                let auction = if rng.below(HOT_AUCTION_RATIO) > 0 {
                    (last_base0_auction_id(id) / HOT_BLOCK) * HOT_BLOCK
                } else {
                    next_base0_auction_id(id, &mut rng)
                };
                let bidder = if rng.below(HOT_BIDDER_RATIO) > 0 {
                    (last_base0_person_id(id) / HOT_BLOCK) * HOT_BLOCK + 1
                } else {
                    next_base0_person_id(id, &mut rng)
                };
                NexmarkEvent::Bid {
                    auction: auction + FIRST_AUCTION_ID,
                    bidder: bidder + FIRST_PERSON_ID,
                    price: price(&mut rng),
                    time,
                }
            }
        })
        .collect()
}

/// Which field of a bid keys the projected stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BidKey {
    /// The auction id (Q5).
    Auction,
    /// The bidder id (Q11, Q12).
    Bidder,
    /// One key for all bids (Q7, a non-keyed window).
    None,
}

/// The bids as keyed events `(time, key, price)`.
///
/// # Panics
/// If an id does not fit a `u32` (more than ~10^11 events).
#[must_use]
pub fn bids(events: &[NexmarkEvent], key: BidKey) -> Vec<GeneratedEvent> {
    events
        .iter()
        .filter_map(|e| match *e {
            NexmarkEvent::Bid {
                auction,
                bidder,
                price,
                time,
            } => {
                let k = match key {
                    BidKey::Auction => auction,
                    BidKey::Bidder => bidder,
                    BidKey::None => 0,
                };
                Some((time, u32::try_from(k).expect("id fits u32"), price as f64))
            }
            _ => None,
        })
        .collect()
}

/// Q5's second stage: the auctions with the most bids per window (ties included).
///
/// Fed by a strategy that emits every window ([`Emits::EveryWindow`]), it takes the max over each
/// window's results (they arrive together: windows fire in end order). Fed by one that emits
/// changes, it keeps the latest count per auction (an empty result deletes it) in a store with a
/// count index and reports the max at each window end where it changed: the same maxima, only
/// where they change.
#[derive(Debug)]
pub struct HotItems {
    emits: Emits,
    current_end: Option<i64>,
    best: u64,
    ties: u64,
    latest: HashMap<u32, u64, ahash::RandomState>,
    by_count: BTreeMap<u64, u64>,
    last_reported: Option<(u64, u64)>,
    /// Window results received from the counting stage.
    pub window_results: u64,
    /// Windows reported (one hot-items record each).
    pub reported: u64,
    /// Sum of the reported max counts.
    pub checksum: f64,
}

impl HotItems {
    /// A second stage for a counting stage that emits `emits`.
    #[must_use]
    pub fn new(emits: Emits) -> Self {
        Self {
            emits,
            current_end: None,
            best: 0,
            ties: 0,
            latest: HashMap::default(),
            by_count: BTreeMap::new(),
            last_reported: None,
            window_results: 0,
            reported: 0,
            checksum: 0.0,
        }
    }

    fn flush(&mut self) {
        if self.current_end.is_none() {
            return;
        }
        let top = match self.emits {
            Emits::EveryWindow => (self.best > 0).then_some((self.best, self.ties)),
            Emits::Changes => self.by_count.last_key_value().map(|(c, n)| (*c, *n)),
        };
        if let Some(top) = top {
            if self.emits == Emits::EveryWindow || self.last_reported != Some(top) {
                self.reported += 1;
                self.checksum += top.0 as f64;
                self.last_reported = Some(top);
            }
        }
        self.best = 0;
        self.ties = 0;
    }

    fn index(&mut self, count: u64, delta: i64) {
        let e = self.by_count.entry(count).or_insert(0);
        *e = e.saturating_add_signed(delta);
        if *e == 0 {
            self.by_count.remove(&count);
        }
    }

    /// End of input: reports the last window.
    pub fn finish(&mut self) {
        self.flush();
        self.current_end = None;
    }
}

impl<W: Copy, V, R> WindowOutput<u32, W, V, R> for HotItems
where
    AnyWindow: From<W>,
    JobResult: From<R>,
{
    fn result(&mut self, key: &u32, window: &W, result: R, _watermark: i64) {
        self.count(
            *key,
            AnyWindow::from(*window),
            JobResult::from(result).into(),
        );
    }

    fn late(&mut self, _key: u32, _timestamp: i64, _value: V, _watermark: i64) {}

    fn emptied(&mut self, key: &u32, window: &W, _watermark: i64) {
        self.count(*key, AnyWindow::from(*window), None);
    }
}

impl BenchSink for HotItems {
    fn as_output<W, R>(&mut self) -> &mut dyn WindowOutput<u32, W, engine::core::Number, R>
    where
        W: Copy,
        AnyWindow: From<W>,
        JobResult: From<R>,
    {
        self
    }
}

impl HotItems {
    /// A count of `key` for `window` from the counting stage (`None`: the key's window emptied).
    fn count(&mut self, key: u32, window: AnyWindow, value: Option<f64>) {
        self.window_results += 1;
        let end = window.bounds().map(|b| b.1);
        if self.current_end != end {
            self.flush();
            self.current_end = end;
        }
        let count = value.unwrap_or(0.0) as u64;
        match self.emits {
            Emits::EveryWindow => {
                if count > self.best {
                    (self.best, self.ties) = (count, 1);
                } else if count == self.best {
                    self.ties += 1;
                }
            }
            Emits::Changes => {
                if let Some(old) = self.latest.remove(&key) {
                    self.index(old, -1);
                }
                if count > 0 {
                    self.latest.insert(key, count);
                    self.index(count, 1);
                }
            }
        }
    }
}

/// What a native-only query run reports.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QueryRun {
    /// Window states created.
    pub windows_created: u64,
    /// Late elements dropped.
    pub late: u64,
    /// Results and their checksum.
    pub tally: Tally,
}

/// Q11, user sessions: bids per bidder in event-time session windows with a 10 s gap
/// (the Flink suite's `SESSION(dateTime, 10 s)`; Beam's extra count trigger is left out).
///
/// # Panics
/// Never for the fixed, valid parameters.
#[must_use]
pub fn q11_sessions(bids_by_bidder: &[GeneratedEvent]) -> QueryRun {
    let assigner = SessionWindows::with_gap(WINDOW_MS, TimeDomain::EventTime).expect("valid gap");
    let mut op = WindowOperator::new(
        assigner,
        EventTimeTrigger,
        Incremental(NumericAggregate::Count),
        OperatorConfig::default(),
    )
    .expect("valid operator");
    let mut wm = BoundedOutOfOrderness::new(WATERMARK_DELAY_MS);
    let mut tally = Tally::default();
    for &(t, bidder, price) in bids_by_bidder {
        let r = op.process_element(bidder, price, t, &mut tally);
        debug_assert!(r.is_ok(), "{r:?}");
        wm.on_event(t);
        op.process_watermark(wm.current(), &mut tally);
    }
    op.process_watermark(i64::MAX, &mut tally);
    QueryRun {
        windows_created: op.metrics().windows_created,
        late: op.metrics().late_elements,
        tally,
    }
}

/// Q12, processing-time windows: bids per bidder in 10 s tumbling processing-time windows. The
/// `i`-th bid arrives at simulated processing time `i / PROCESSING_EVENTS_PER_MS` ms, set with
/// `advance_processing_time` before it is processed; at the end the clock jumps to `i64::MAX`.
///
/// # Panics
/// Never for the fixed, valid parameters.
#[must_use]
pub fn q12_processing_time(bids_by_bidder: &[GeneratedEvent]) -> QueryRun {
    let assigner =
        TumblingWindows::new(WINDOW_MS, 0, TimeDomain::ProcessingTime).expect("valid size");
    let mut op = WindowOperator::new(
        assigner,
        ProcessingTimeTrigger,
        Incremental(NumericAggregate::Count),
        OperatorConfig::default(),
    )
    .expect("valid operator");
    let mut tally = Tally::default();
    for (i, &(t, bidder, price)) in bids_by_bidder.iter().enumerate() {
        let now = i as i64 / PROCESSING_EVENTS_PER_MS;
        op.advance_processing_time(now, &mut tally);
        let r = op.process_element(bidder, price, t, &mut tally);
        debug_assert!(r.is_ok(), "{r:?}");
    }
    op.advance_processing_time(i64::MAX, &mut tally);
    QueryRun {
        windows_created: op.metrics().windows_created,
        late: op.metrics().late_elements,
        tally,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_ids_and_hot_keys_follow_beam() {
        let events = generate(100_000, 5);
        let (mut persons, mut auctions) = (0, 0);
        let mut auction_bids: HashMap<u64, u64> = HashMap::new();
        let mut bidder_bids: HashMap<u64, u64> = HashMap::new();
        let mut last_time = i64::MIN;
        for e in &events {
            match *e {
                NexmarkEvent::Person { id, time } => {
                    assert_eq!(id, 1000 + persons);
                    persons += 1;
                    assert!(time >= last_time);
                    last_time = time;
                }
                NexmarkEvent::Auction { id, category, .. } => {
                    assert_eq!(id, 1000 + auctions);
                    assert!((10..15).contains(&category));
                    auctions += 1;
                }
                NexmarkEvent::Bid {
                    auction,
                    bidder,
                    price,
                    ..
                } => {
                    assert!((100..=100_000_000).contains(&price));
                    *auction_bids.entry(auction).or_default() += 1;
                    *bidder_bids.entry(bidder).or_default() += 1;
                }
            }
        }
        assert_eq!((persons, auctions), (2_000, 6_000));
        let bids = 92_000.0;
        // Hot auctions (multiples of 100, plus 1000) take about half the bids; hot bidders
        // (x01) about three quarters.
        let hot_a: u64 = auction_bids
            .iter()
            .filter(|(a, _)| (*a - 1000) % 100 == 0)
            .map(|(_, n)| n)
            .sum();
        let hot_b: u64 = bidder_bids
            .iter()
            .filter(|(b, _)| (*b - 1000) % 100 == 1)
            .map(|(_, n)| n)
            .sum();
        assert!((hot_a as f64 / bids - 0.5).abs() < 0.02, "{hot_a}");
        assert!((hot_b as f64 / bids - 0.75).abs() < 0.02, "{hot_b}");
        assert_eq!(event_time(99_999), BASE_TIME_MS + 9_999);
    }

    #[test]
    fn hot_items_from_changes_match_hot_items_from_every_window() {
        use crate::strategy::{run_workload, SlidingSpec, PER_ELEMENT};
        use engine::job::Strategy;
        let input = bids(&generate(60_000, 2), BidKey::Auction);
        let spec = SlidingSpec {
            size: Q5_SIZE_MS,
            slide: Q5_SLIDE_MS,
            aggregate: NumericAggregate::Count,
            out_of_orderness: WATERMARK_DELAY_MS,
            watermark_every: PER_ELEMENT,
            allowed_lateness: 0,
        };
        let run = |every: bool| {
            let mut hot = HotItems::new(if every {
                Emits::EveryWindow
            } else {
                Emits::Changes
            });
            let strategy = if every {
                Strategy::Native
            } else {
                Strategy::KeyWindow
            };
            run_workload(strategy, &spec, &input, &mut hot).unwrap();
            hot.finish();
            (hot.reported, hot.last_reported)
        };
        let (every_n, every_last) = run(true);
        let (changes_n, changes_last) = run(false);
        assert!(changes_n <= every_n && changes_n > 0);
        assert_eq!(every_last, changes_last);
    }

    #[test]
    fn q11_and_q12_produce_windows() {
        let input = bids(&generate(30_000, 3), BidKey::Bidder);
        let s = q11_sessions(&input);
        assert!(s.tally.results > 0 && s.tally.checksum == input.len() as f64);
        let p = q12_processing_time(&input);
        assert_eq!(p.tally.checksum, input.len() as f64);
        assert!(p.tally.results >= 2);
    }
}
