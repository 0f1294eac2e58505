//! Watermarks: how far event time has progressed.
//!
//! A watermark `w` states that no more elements with timestamp `<= w` are expected; the window
//! operator fires event-time windows whose max timestamp the watermark reached, and treats
//! elements behind it as possibly late. [`BoundedOutOfOrderness`] is Flink's standard generator:
//! it trusts that elements arrive at most `delay` ms out of order, so the watermark is
//! `max timestamp seen - delay - 1`. It starts at `i64::MIN` and never goes back.
//!
//! With several inputs (or source partitions) the operator's watermark is the minimum over the
//! inputs ([`WatermarkCombiner`]); an input that ended counts as `i64::MAX`, and an input idle for
//! longer than the idle timeout is left out until it produces again, so that a silent partition
//! does not stall event time (Flink's `withIdleness`). The combined watermark never goes back.

use window_core::{time, Timestamp, MAX_WATERMARK, MIN_WATERMARK};

/// Flink's `BoundedOutOfOrdernessWatermarks`: watermark = max timestamp seen - delay - 1.
/// Serializable with serde: a checkpoint keeps it whole (Flink restores a source's watermark
/// state from its checkpoint too).
///
/// # Examples
/// ```
/// use window_operator::watermark::BoundedOutOfOrderness;
/// let mut g = BoundedOutOfOrderness::new(60_000);
/// assert_eq!(g.current(), i64::MIN);
/// g.on_event(100);
/// assert_eq!(g.current(), 100 - 60_000 - 1);
/// g.on_event(50); // out of order: the watermark does not go back
/// assert_eq!(g.current(), -59_901);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BoundedOutOfOrderness {
    delay: i64,
    max_timestamp: Option<Timestamp>,
}

impl BoundedOutOfOrderness {
    /// A generator that tolerates `delay` ms of out-of-orderness (`delay >= 0`; a negative delay
    /// is treated as 0).
    #[must_use]
    pub fn new(delay: i64) -> Self {
        Self {
            delay: delay.max(0),
            max_timestamp: None,
        }
    }

    /// Observes an element's timestamp.
    #[inline]
    pub fn on_event(&mut self, timestamp: Timestamp) {
        self.max_timestamp = Some(self.max_timestamp.map_or(timestamp, |m| m.max(timestamp)));
    }

    /// The out-of-orderness it was made with, in ms (a negative one reads as 0).
    #[must_use]
    pub fn delay(&self) -> i64 {
        self.delay
    }

    /// The current watermark: `i64::MIN` before any element, else `max - delay - 1`
    /// (saturating).
    #[must_use]
    #[inline]
    pub fn current(&self) -> Timestamp {
        match self.max_timestamp {
            None => MIN_WATERMARK,
            Some(m) => time::sub(time::sub(m, self.delay), 1),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct InputState {
    watermark: Timestamp,
    /// Processing time of the last activity; `None` until the first activity or clock tick.
    last_active: Option<Timestamp>,
    idle: bool,
    ended: bool,
}

/// Combines the watermarks of several inputs into the operator's watermark (Flink's
/// `StatusWatermarkValve`): the minimum over active inputs, where an ended input counts as
/// `i64::MAX` and an idle input is ignored. The result never goes back. Serializable with serde
/// (each input's watermark, last activity and idleness), for checkpoints.
///
/// # Examples
/// ```
/// use window_operator::watermark::WatermarkCombiner;
/// // Scenario B25: input 1 reaches 25, input 2 is silent.
/// let mut c = WatermarkCombiner::new(2, Some(1_000));
/// c.on_processing_time(0); // the job starts
/// c.on_watermark(0, 25, 500);
/// assert_eq!(c.combined(), i64::MIN); // input 2 holds event time back
/// c.on_processing_time(1_000); // input 2 silent for 1 s: idle, excluded
/// assert_eq!(c.combined(), 25);
/// c.on_watermark(1, 3, 1_500); // input 2 resumes behind: no going back
/// assert_eq!(c.combined(), 25);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WatermarkCombiner {
    inputs: Vec<InputState>,
    idle_timeout: Option<i64>,
    combined: Timestamp,
}

impl WatermarkCombiner {
    /// `inputs` inputs, all starting at `i64::MIN`; with `idle_timeout` (ms), an input without
    /// activity for that long is considered idle.
    #[must_use]
    pub fn new(inputs: usize, idle_timeout: Option<i64>) -> Self {
        Self {
            inputs: vec![
                InputState {
                    watermark: MIN_WATERMARK,
                    last_active: None,
                    idle: false,
                    ended: false,
                };
                inputs
            ],
            idle_timeout,
            combined: MIN_WATERMARK,
        }
    }

    /// Input `input` was active (an element arrived) at processing time `now`: it is no longer
    /// idle. Returns the combined watermark.
    pub fn on_activity(&mut self, input: usize, now: Timestamp) -> Timestamp {
        let s = &mut self.inputs[input];
        s.last_active = Some(now);
        s.idle = false;
        self.recompute()
    }

    /// Input `input` emitted `watermark` at processing time `now`; an input's own watermark never
    /// goes back. Returns the combined watermark.
    pub fn on_watermark(
        &mut self,
        input: usize,
        watermark: Timestamp,
        now: Timestamp,
    ) -> Timestamp {
        let s = &mut self.inputs[input];
        s.watermark = s.watermark.max(watermark);
        s.last_active = Some(now);
        s.idle = false;
        self.recompute()
    }

    /// Input `input` ended: it counts as `i64::MAX` from now on.
    pub fn on_end(&mut self, input: usize) -> Timestamp {
        let s = &mut self.inputs[input];
        s.ended = true;
        s.watermark = MAX_WATERMARK;
        self.recompute()
    }

    /// Processing time moved to `now`: inputs silent for the idle timeout become idle.
    pub fn on_processing_time(&mut self, now: Timestamp) -> Timestamp {
        if let Some(timeout) = self.idle_timeout {
            for s in &mut self.inputs {
                // The idle clock of an input starts at its first activity or the first tick.
                let since = *s.last_active.get_or_insert(now);
                if !s.ended && time::sub(now, since) >= timeout {
                    s.idle = true;
                }
            }
        }
        self.recompute()
    }

    /// The number of inputs and the idle timeout it was made with (what a restored combiner
    /// must match).
    #[must_use]
    pub fn shape(&self) -> (usize, Option<i64>) {
        (self.inputs.len(), self.idle_timeout)
    }

    /// The operator's watermark.
    #[must_use]
    pub fn combined(&self) -> Timestamp {
        self.combined
    }

    fn recompute(&mut self) -> Timestamp {
        let active = self.inputs.iter().filter(|s| !s.idle || s.ended);
        let candidate = match active.map(|s| s.watermark).min() {
            Some(min) => min,
            // Every input idle: event time moves to the largest watermark any input reached,
            // as Flink's StatusWatermarkValve does when its last active channel goes idle.
            None => self
                .inputs
                .iter()
                .map(|s| s.watermark)
                .max()
                .unwrap_or(MIN_WATERMARK),
        };
        self.combined = self.combined.max(candidate);
        self.combined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b24_initial_watermark_is_min_and_never_regresses() {
        // Scenario B24: bounded out-of-orderness 60 000.
        let mut g = BoundedOutOfOrderness::new(60_000);
        assert_eq!(g.current(), i64::MIN);
        g.on_event(100);
        assert_eq!(g.current(), -59_901);
        g.on_event(50);
        assert_eq!(g.current(), -59_901);
        let mut g = BoundedOutOfOrderness::new(5);
        g.on_event(i64::MIN);
        assert_eq!(g.current(), i64::MIN);
    }

    #[test]
    fn b27_ended_inputs_count_as_max() {
        // Scenario B27: input 1 has a@3 and ends; input 2 gives WM 7, 12, then ends.
        let mut c = WatermarkCombiner::new(2, None);
        c.on_activity(0, 0);
        assert_eq!(c.on_end(0), i64::MIN);
        assert_eq!(c.on_watermark(1, 7, 0), 7);
        assert_eq!(c.on_watermark(1, 12, 0), 12);
        assert_eq!(c.on_end(1), i64::MAX);
    }

    #[test]
    fn without_idleness_a_silent_input_holds_event_time() {
        let mut c = WatermarkCombiner::new(2, None);
        c.on_watermark(0, 25, 0);
        assert_eq!(c.on_processing_time(1_000_000), i64::MIN);
    }
}
