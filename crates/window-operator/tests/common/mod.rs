//! Shared by the randomized reference tests (`operator_reference.rs`, `trigger_reference.rs`):
//! a seeded generator, random tumbling/sliding window parameters, and the reference window
//! assignment they check the operator against.

use window_core::{TimeWindow, Timestamp};

/// xorshift64*.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..=hi`.
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi - lo + 1) as u64;
        lo + (self.next() % span) as i64
    }

    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// Event-time window parameters of a case, in ms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Windows {
    Tumbling { size: i64, offset: i64 },
    Sliding { size: i64, slide: i64, offset: i64 },
}

/// Random windows: tumbling 40 % of the time, else sliding, overlapping (slide <= size) with
/// probability `overlapping_percent`, otherwise possibly with gaps (slide > size).
pub(crate) fn gen_windows(rng: &mut Rng, overlapping_percent: u64) -> Windows {
    if rng.chance(40) {
        let size = rng.range(1, 15);
        Windows::Tumbling {
            size,
            offset: rng.range(-(size - 1), size - 1),
        }
    } else {
        let size = rng.range(1, 20);
        let slide = if rng.chance(overlapping_percent) {
            rng.range(1, size)
        } else {
            rng.range(1, 15)
        };
        Windows::Sliding {
            size,
            slide,
            offset: rng.range(-(slide - 1), slide - 1),
        }
    }
}

/// The windows of an element at `ts`, by descending start (Flink's sliding assigner loop;
/// tumbling is sliding with slide = size).
pub(crate) fn assign(windows: Windows, ts: Timestamp) -> Vec<TimeWindow> {
    let (size, slide, offset) = match windows {
        Windows::Tumbling { size, offset } => (size, size, offset),
        Windows::Sliding {
            size,
            slide,
            offset,
        } => (size, slide, offset),
    };
    let mut out = Vec::new();
    let mut start = ts - (ts - offset).rem_euclid(slide);
    while start > ts - size {
        out.push(TimeWindow::new(start, start + size));
        start -= slide;
    }
    out
}
