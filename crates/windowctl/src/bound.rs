//! The memory bound of `windowctl run` (`--max-window-states`) and the peak state its summary
//! reports.
//!
//! Every strategy counts what it holds that grows with the input
//! ([`engine::core::WindowComputation::held_state`], from counters, O(1)): window states (one
//! per key and window for the native operator, retired ones included), key windows
//! (`keywindow`), slices (`sliced`, `sliced:changes`), and the elements held (kept in windows that
//! keep their elements: an evictor, `list`, `elements`, count windows with a slide; waiting in a
//! reordering buffer for the watermark; batched before they are folded into slices). One window
//! state, key window, slice or element is one state. [`Bounded`] looks at that count at every
//! batch boundary (and once more before the final watermark, which fires every window left) and
//! stops the job, at that boundary, when it is over the limit: the outputs hold every result up
//! to there and no torn row, and the process exits with 1. The native operator also refuses,
//! before adding it, an element that would bring its window states over the limit (a sliding
//! window of 10,000,000 windows per element would exhaust memory within one batch).
//!
//! The key dictionary (every distinct key read, kept for the whole run) is held to the same
//! limit, apart: it counts keys, not states.
//!
//! `docs/limits.md` describes the bound per strategy, with the byte estimates.

use std::cell::Cell;
use std::sync::Arc;

use anyhow::{bail, Result};
use engine::core::{
    HeldState, LiveState, Rejected, SnapshotError, Timestamp, WindowComputation, WindowMetrics,
    WindowOutput,
};
use engine::io::{KeyDictionary, KeyId};
use engine::job::{Computation, JobResult, Strategy};
use indicatif::{HumanBytes, HumanCount};

use engine::core::{AnyWindow, Number};

/// Estimated bytes per key of the key dictionary: the key's text behind an `Arc<str>` (a
/// 16-byte header and a short text), a hash-map entry and a slot of the id-to-text vector.
pub(crate) const DICTIONARY_KEY_BYTES: usize = 96;

/// What one window state is called for `strategy`, in messages and the summary.
pub(crate) fn unit(strategy: Strategy) -> &'static str {
    match strategy {
        Strategy::Auto | Strategy::Native => "window state",
        Strategy::KeyWindow => "key window",
        Strategy::Sliced(_) => "slice",
    }
}

/// `n` and `what`, plural unless `n` is 1, the count with thousands separators: `1,234 keys`.
pub(crate) fn count(n: usize, what: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{} {what}{s}", HumanCount(n as u64))
}

/// `held` as the summary and the errors show it: `1,234 states (1,200 key windows, 34
/// elements held; about 1.20 MiB)`.
pub(crate) fn describe(held: HeldState, strategy: Strategy) -> String {
    format!(
        "{} ({}, {} held; about {})",
        count(held.entries(), "state"),
        count(held.windows, unit(strategy)),
        count(held.elements, "element"),
        HumanBytes(held.bytes as u64)
    )
}

/// The job's computation, watched for the memory bound: everything goes to the computation it
/// wraps; [`Bounded::check`] (at every batch boundary) and the final watermark look at what it
/// holds.
pub(crate) struct Bounded {
    inner: Computation<KeyId>,
    /// `--max-window-states`; `None`: no limit (a job file's choice).
    limit: Option<usize>,
    strategy: Strategy,
    /// The job's keys, to hold to the limit too.
    keys: Arc<KeyDictionary>,
    /// The most held at a batch boundary so far.
    peak: Cell<HeldState>,
    /// What was held before the final watermark, when it was over the limit (the watermark
    /// was not passed on, so nothing fired past the limit).
    over_at_end: Cell<Option<HeldState>>,
}

impl Bounded {
    /// `inner`, held to `limit` states (and `limit` keys in `keys`).
    pub(crate) fn new(
        inner: Computation<KeyId>,
        limit: Option<usize>,
        strategy: Strategy,
        keys: Arc<KeyDictionary>,
    ) -> Self {
        Self {
            inner,
            limit,
            strategy,
            keys,
            peak: Cell::new(HeldState::default()),
            over_at_end: Cell::new(None),
        }
    }

    /// Notes `held` for the peak; whether it is over the limit.
    fn note(&self, held: HeldState) -> bool {
        if held.entries() > self.peak.get().entries() {
            self.peak.set(held);
        }
        self.limit.is_some_and(|l| held.entries() > l)
    }

    /// The most states held at a batch boundary so far.
    pub(crate) fn peak(&self) -> HeldState {
        self.peak.get()
    }

    /// Distinct keys in the key dictionary (the empty key of `--window-all` not counted).
    pub(crate) fn dictionary_keys(&self) -> usize {
        self.keys.len().saturating_sub(1)
    }

    /// Looks at what the computation holds now, at a batch boundary: notes the peak.
    ///
    /// # Errors
    /// More states held than the limit, now or before the final watermark, or more keys in
    /// the key dictionary: the message names the flag, the limit, what was held and what to do.
    pub(crate) fn check(&self) -> Result<()> {
        let held = self
            .over_at_end
            .get()
            .unwrap_or_else(|| self.inner.held_state());
        let Some(limit) = self.limit else {
            self.note(held);
            return Ok(());
        };
        if self.note(held) || self.over_at_end.get().is_some() {
            bail!(
                "{} holds {} > --max-window-states {}; the job stopped at a batch \
                 boundary (results up to there are written): {}",
                self.strategy_name(),
                describe(held, self.strategy),
                HumanCount(limit as u64),
                self.advice(held)
            );
        }
        let keys = self.dictionary_keys();
        if keys > limit {
            bail!(
                "the key dictionary holds {} (about {}) > --max-window-states {}: \
                 every distinct key read is kept for the whole run; the job stopped at a batch \
                 boundary (results up to there are written): raise --max-window-states if the \
                 machine has the memory",
                count(keys, "distinct key"),
                HumanBytes((keys * DICTIONARY_KEY_BYTES) as u64),
                HumanCount(limit as u64)
            );
        }
        Ok(())
    }

    /// `--strategy sliced:changes` for `sliced` with changes only.
    fn strategy_name(&self) -> &'static str {
        match self.strategy {
            Strategy::Sliced(engine::keywindow::EmitMode::Changes) => "--strategy sliced:changes",
            Strategy::Sliced(_) => "--strategy sliced",
            Strategy::KeyWindow => "--strategy keywindow",
            Strategy::Auto | Strategy::Native => "the native operator",
        }
    }

    /// What to do about `held` being over the limit.
    fn advice(&self, held: HeldState) -> String {
        let mut advice = String::new();
        if held.elements > held.windows {
            advice.push_str(
                "most of it is elements held (windows that keep their elements, an evictor, or a \
                 reordering buffer waiting for the watermark, which a smaller \
                 --out-of-orderness shortens); ",
            );
        }
        match self.strategy {
            Strategy::Auto | Strategy::Native => advice.push_str(
                "for sliding windows --strategy sliced:changes or keywindow hold far fewer \
                 states; ",
            ),
            Strategy::KeyWindow => advice.push_str(
                "--strategy sliced:changes writes the same results from less state per key; ",
            ),
            // Sliced windows hold the least state of the strategies: nothing else to try.
            Strategy::Sliced(_) => {}
        }
        let or = if advice.is_empty() { "" } else { "or " };
        advice.push_str(or);
        advice.push_str("raise --max-window-states if the machine has the memory");
        advice
    }

    /// The summary's line: the peak state, its estimate and the limit, and the key dictionary.
    pub(crate) fn summary_line(&self) -> String {
        peak_line(
            &describe(self.peak(), self.strategy),
            self.limit,
            self.dictionary_keys(),
        )
    }
}

/// The summary's `peak state` line of either runtime: `peak` ([`describe`], with what the figure
/// is under `--workers`), the limit and the key dictionary's `keys`.
pub(crate) fn peak_line(peak: &str, limit: Option<usize>, keys: usize) -> String {
    let limit = limit.map_or_else(
        || "no limit".to_owned(),
        |l| HumanCount(l as u64).to_string(),
    );
    format!(
        "peak state: {peak}, limit {limit} (--max-window-states); key dictionary: {} (about {})",
        count(keys, "key"),
        HumanBytes((keys * DICTIONARY_KEY_BYTES) as u64)
    )
}

impl WindowComputation<KeyId, Number> for Bounded {
    type Window = AnyWindow;
    type Output = JobResult;

    #[inline]
    fn process_element(
        &mut self,
        key: KeyId,
        element: Number,
        timestamp: Timestamp,
        out: &mut dyn WindowOutput<KeyId, AnyWindow, Number, JobResult>,
    ) -> Result<(), Rejected<KeyId, Number>> {
        self.inner.process_element(key, element, timestamp, out)
    }

    /// The final watermark (`i64::MAX`, at the end of input) is the last batch boundary: what
    /// is held before it counts, and over the limit it is not passed on.
    fn process_watermark(
        &mut self,
        watermark: Timestamp,
        out: &mut dyn WindowOutput<KeyId, AnyWindow, Number, JobResult>,
    ) -> bool {
        if watermark == Timestamp::MAX && watermark > self.inner.current_watermark() {
            let held = self.inner.held_state();
            if self.note(held) {
                self.over_at_end.set(Some(held));
                return false;
            }
        }
        self.inner.process_watermark(watermark, out)
    }

    fn advance_wall_clock(
        &mut self,
        now: Timestamp,
        out: &mut dyn WindowOutput<KeyId, AnyWindow, Number, JobResult>,
    ) {
        self.inner.advance_wall_clock(now, out);
    }

    fn next_processing_time_timer(&self) -> Option<Timestamp> {
        self.inner.next_processing_time_timer()
    }

    fn next_event_time_timer(&self) -> Option<Timestamp> {
        self.inner.next_event_time_timer()
    }

    fn current_watermark(&self) -> Timestamp {
        self.inner.current_watermark()
    }

    fn metrics(&self) -> WindowMetrics {
        self.inner.metrics()
    }

    fn live_state(&self) -> LiveState {
        self.inner.live_state()
    }

    fn held_state(&self) -> HeldState {
        self.inner.held_state()
    }

    fn snapshot(&self, out: &mut Vec<u8>) -> Result<(), SnapshotError> {
        self.inner.snapshot(out)
    }

    fn restore(&mut self, snapshot: &[u8]) -> Result<(), SnapshotError> {
        self.inner.restore(snapshot)
    }
}
