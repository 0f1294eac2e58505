//! The memory bound of `windowctl dstream` (`--max-window-states`): the records a job holds,
//! events read and waiting for their batch plus the records of the batches its streams remember
//! for their windows ([`engine::dstream::StreamingContext::retained_records`]), at every batch
//! boundary. `--batches-by event` reads the whole input before its first batch, so there the
//! input itself is held to the limit while it is read.

use anyhow::{bail, Result};
use indicatif::{HumanBytes, HumanCount};

use crate::bound::count;

/// Estimated bytes of one record held: a `(String, f64)` and a short key's text.
pub(crate) const RECORD_BYTES: usize = size_of::<(String, f64)>() + 16;

/// `n` records as the messages show them: `1,234 records (about 57.84 KiB)`.
fn records(n: usize) -> String {
    format!(
        "{} (about {})",
        count(n, "record"),
        HumanBytes(n.saturating_mul(RECORD_BYTES) as u64)
    )
}

/// At a batch boundary: `waiting` events not yet in a batch and `retained` records remembered.
///
/// # Errors
/// More than `limit` in all, naming the flag, the limit and both parts.
pub(crate) fn check(waiting: usize, retained: usize, limit: usize) -> Result<()> {
    let held = waiting.saturating_add(retained);
    if held > limit {
        bail!(
            "the job holds {} > --max-window-states {} ({} waiting for their batch, {} in the \
             batches the streams remember for their windows); it stopped at a \
             batch boundary (results up to there are written): a shorter --window remembers fewer \
             batches, --batches-by processing holds events only until their batch, or raise \
             --max-window-states if the machine has the memory",
            records(held),
            HumanCount(limit as u64),
            count(waiting, "event"),
            count(retained, "record")
        );
    }
    Ok(())
}

/// `--batches-by event`, while the input is read: `read` events so far.
///
/// # Errors
/// More than `limit`: nothing was written.
pub(crate) fn check_whole_input(read: usize, limit: usize) -> Result<()> {
    if read > limit {
        bail!(
            "--batches-by event reads the whole input before its first batch, and it holds more \
             than {} > --max-window-states {}; nothing was written: use --batches-by processing \
             (events are held until their batch runs), or raise --max-window-states if the \
             machine has the memory",
            records(limit),
            HumanCount(limit as u64)
        );
    }
    Ok(())
}

/// `--batches-by processing`: `current` events in the batch being read.
///
/// # Errors
/// More than `limit`.
pub(crate) fn check_current(current: usize, limit: usize) -> Result<()> {
    if current > limit {
        bail!(
            "the batch being read holds {} > --max-window-states {}; the job stopped at an event \
             (the results of the batches before it are written): a smaller --batch-interval, or \
             raise --max-window-states if the machine has the memory",
            records(current),
            HumanCount(limit as u64)
        );
    }
    Ok(())
}

/// The summary's line about the peak.
pub(crate) fn summary_line(peak: usize, limit: usize) -> String {
    format!(
        "peak state: {} held at a batch boundary, limit {} (--max-window-states)",
        records(peak),
        HumanCount(limit as u64)
    )
}
