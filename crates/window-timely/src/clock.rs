//! Processing time under several workers: one clock reading per chunk, the same on every worker.
//!
//! Flink's processing time is the wall clock of the machine that runs a window operator: an
//! element belongs to the windows of the moment the operator sees it, and a window fires once
//! the clock passes its end (`ProcessingTimeTrigger`, `InternalTimerService`'s processing-time
//! timers). With one reader and several workers, each worker reading its own clock would put
//! elements of one chunk at different processing times, and the output would depend on how
//! the keys fall on the workers. So the chunk reader reads the clock once per chunk, when it
//! cuts it ([`ChunkClock`]), the reading travels in the chunk's summary to every worker, and
//! every worker sets processing time to it before the chunk's elements (firing the timers
//! before it, as the single-threaded runtime does before each batch). Given the readings, the
//! output is the same for any number of workers.
//!
//! A timer must also fire while the input pauses (a live socket or stdin between writes). The
//! workers post their earliest processing-time timer in [`Timers`]; a live input's reader that
//! waits for bytes cuts an empty chunk, stamped with the clock, once that timer is due, and the
//! empty chunk takes the clock to every worker (a timely operator woken by an activation would
//! read its own clock, not the others').

use parking_lot::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How often a reader waiting for a live input looks again at the workers' timers (one may have
/// been set since it began to wait).
pub(crate) const LOOK_AGAIN: Duration = Duration::from_millis(10);

/// Where chunks get their processing time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkClock {
    /// The system clock, in ms since the Unix epoch (Flink's `SystemProcessingTimeService`).
    System,
    /// For tests: chunk `c` is at `c * step` ms, whatever the clock says, so that a
    /// processing-time job over a file gives the same output on every run.
    PerChunk(i64),
}

impl ChunkClock {
    /// The processing time of chunk `index`, cut now, in ms.
    pub(crate) fn read(self, index: u64) -> i64 {
        match self {
            ChunkClock::System => now_ms(),
            ChunkClock::PerChunk(step) => {
                i64::try_from(index).map_or(i64::MAX, |i| i.saturating_mul(step))
            }
        }
    }
}

/// The system clock in ms since the Unix epoch (0 before it).
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Each worker's earliest processing-time timer (ms; `i64::MAX`: none) and the chunk after which
/// it posted it, for the reader of a live input to cut an empty chunk when one is due.
#[derive(Debug)]
pub(crate) struct Timers {
    next: Mutex<Vec<(i64, u64)>>,
}

impl Timers {
    /// Slots for `workers` workers (of this process), none with a timer.
    pub(crate) fn new(workers: usize) -> Self {
        Self {
            next: Mutex::new(vec![(i64::MAX, 0); workers.max(1)]),
        }
    }

    /// Worker `worker`'s earliest timer is now `next`, after it processed chunk `chunk`.
    pub(crate) fn post(&self, worker: usize, next: Option<i64>, chunk: u64) {
        let mut slots = self.next.lock();
        let n = slots.len();
        slots[worker % n] = (next.unwrap_or(i64::MAX), chunk);
    }

    /// When a reader waiting for bytes cuts an empty chunk for the earliest timer that the last
    /// chunk cut, `last` (its index and processing time), does not fire: a worker fires its
    /// timers before a chunk's time as it begins the chunk, so a timer posted after an earlier
    /// chunk, before `last`'s time, fires with `last`; one set while the worker processed
    /// `last` (a window already past, a timer in the past) needs a chunk of its own. A timer at
    /// `t` fires once processing time is past `t` (at `t + 1`), as Flink's
    /// `SystemProcessingTimeService` runs it once the clock has reached `t`. `None`: no timer.
    pub(crate) fn due_at(&self, last: Option<(u64, i64)>) -> Option<Instant> {
        let fired_by_last = |t: i64, after: u64| last.is_some_and(|(c, at)| c > after && at > t);
        let next = self
            .next
            .lock()
            .iter()
            .filter(|&&(t, after)| t != i64::MAX && !fired_by_last(t, after))
            .map(|&(t, _)| t)
            .min()?;
        let wait = next.saturating_add(1).saturating_sub(now_ms()).max(0);
        Some(Instant::now() + Duration::from_millis(u64::try_from(wait).unwrap_or(0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earliest_timer_of_any_worker_is_due_a_millisecond_after_it() {
        let timers = Timers::new(3);
        assert_eq!(timers.due_at(None), None);
        let now = now_ms();
        timers.post(1, Some(now + 5_000), 0);
        timers.post(2, Some(now + 60_000), 0);
        let due = timers.due_at(None).expect("a timer");
        let wait = due.saturating_duration_since(Instant::now());
        assert!(wait > Duration::from_millis(4_000) && wait <= Duration::from_millis(5_001));
        // A timer in the past, posted after chunk 3: due now, unless a later chunk cut after a
        // time past it fires it (its worker has not processed that chunk yet).
        timers.post(0, Some(now - 10), 3);
        assert!(timers.due_at(None).expect("due") <= Instant::now());
        assert!(timers.due_at(Some((3, now))).expect("due") <= Instant::now());
        assert!(timers.due_at(Some((4, now - 10))).expect("due") <= Instant::now());
        let later = timers.due_at(Some((4, now - 9))).expect("the next one");
        assert!(later > Instant::now() + Duration::from_millis(4_000));
        // A worker with none posts None.
        timers.post(0, None, 4);
        timers.post(1, None, 4);
        timers.post(2, None, 4);
        assert_eq!(timers.due_at(None), None);
        assert_eq!(ChunkClock::PerChunk(7).read(3), 21);
        assert!(ChunkClock::System.read(0) >= now);
    }
}
