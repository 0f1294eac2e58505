//! Snapshots of key windows and sliced windows (checkpoints, `window_core::snapshot`).
//!
//! A snapshot is *logical* where the state allows it: the keys with their windows (or slices)
//! and accumulators, the timers in firing order, the time and the counters; restore rebuilds the
//! hash tables, timer queues and rings by inserting those entries. Two things are kept as they
//! are, because no simpler form gives the same output bit for bit: the two-stacks aggregator's
//! suffix aggregates (the plain per-slice partials are gone once folded, and `f64` sums depend on
//! the merge order), and the key slot numbers with the free list, which name keys in timers and
//! in the firing schedule (a stale schedule entry of a reused slot fires where it stands).
//!
//! Each part is a header (a kind tag and the configuration this computation can see: geometry,
//! emit mode, lateness), then a body; a wrapper ([`crate::EventTime`],
//! [`crate::ProcessingTime`]) writes its own part, then the processor's. Restore decodes and
//! checks everything before it changes anything, so a refused snapshot leaves the computation
//! as it was.
//!
//! Serde bounds (keys, elements, accumulators: `Serialize + DeserializeOwned`, as Flink needs
//! serializers for keys and state) sit on [`InOrderSnapshot`]'s impls and on the wrappers'
//! `with_snapshots`, not on the processors themselves: a processor over other types still works,
//! and its wrapper answers [`SnapshotError::Unsupported`].

use serde::{Deserialize, Serialize};
use window_core::SnapshotError;

use crate::InOrderWindows;

/// An in-order processor ([`crate::KeyWindows`], [`crate::SlicedWindows`]) whose whole state
/// can be written to a snapshot and loaded into a processor built from the same configuration
/// (Flink's checkpointed keyed state and timers of a window operator).
///
/// The wrappers that make these processors a `WindowComputation` ([`crate::EventTime`],
/// [`crate::ProcessingTime`]) snapshot through this trait once `with_snapshots` is called.
pub trait InOrderSnapshot<K, T>: InOrderWindows<K, T> {
    /// Appends the processor's whole state (a header naming the kind and geometry, then the
    /// keys, windows or slices, accumulators, timers, time and counters) to `out`.
    ///
    /// # Errors
    /// [`SnapshotError::Unsupported`] if the encoder refuses a value (`out` is then as it was).
    fn snapshot(&self, out: &mut Vec<u8>) -> Result<(), SnapshotError>;

    /// Replaces the state of this processor, freshly built from the same configuration, with
    /// the one in `snapshot` (exactly the bytes [`InOrderSnapshot::snapshot`] appended).
    ///
    /// # Errors
    /// [`SnapshotError::Invalid`] for bytes that are torn, of another kind of processor, or of
    /// another geometry or emit mode; the processor is unchanged then.
    fn restore(&mut self, snapshot: &[u8]) -> Result<(), SnapshotError>;
}

/// The first part of every snapshot of this crate: what it is a snapshot of.
#[derive(Serialize, Deserialize, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    /// The kind, e.g. `keywindow::SlicedWindows`.
    kind: String,
    /// The configuration as text, e.g. `size 10 ms, slide 5 ms, offset 0 ms, all windows`.
    config: String,
}

impl Header {
    pub(crate) fn new(kind: &str, config: String) -> Self {
        Self {
            kind: kind.to_owned(),
            config,
        }
    }
}

/// Appends to a borrowed buffer (postcard's `to_extend` takes its writer by value).
struct Append<'a>(&'a mut Vec<u8>);

impl Extend<u8> for Append<'_> {
    fn extend<I: IntoIterator<Item = u8>>(&mut self, bytes: I) {
        self.0.extend(bytes);
    }
}

/// Writes `header` then `body` to `out`; on an error `out` is cut back to where it was.
pub(crate) fn write<B: Serialize>(
    out: &mut Vec<u8>,
    header: &Header,
    body: &B,
) -> Result<(), SnapshotError> {
    let len = out.len();
    let written = postcard::to_extend(header, Append(out))
        .and_then(|w| postcard::to_extend(body, w))
        .map(|_| ());
    written.map_err(|e| {
        out.truncate(len);
        SnapshotError::Unsupported(format!("{} (its state does not encode: {e})", header.kind))
    })
}

/// Reads a header, checks it is `expected`, then reads the body; returns the body and the
/// bytes after it (a wrapped processor's part, or nothing).
pub(crate) fn read<'a, B: Deserialize<'a>>(
    bytes: &'a [u8],
    expected: &Header,
) -> Result<(B, &'a [u8]), SnapshotError> {
    let (header, rest): (Header, _) = postcard::take_from_bytes(bytes).map_err(|e| {
        SnapshotError::Invalid(format!("no {} snapshot header: {e}", expected.kind))
    })?;
    if header.kind != expected.kind {
        return Err(SnapshotError::Invalid(format!(
            "a snapshot of {}, restored into {}",
            header.kind, expected.kind
        )));
    }
    if header.config != expected.config {
        return Err(SnapshotError::Invalid(format!(
            "a snapshot of {} with {}, restored into one with {}",
            header.kind, header.config, expected.config
        )));
    }
    postcard::take_from_bytes(rest)
        .map_err(|e| SnapshotError::Invalid(format!("{} snapshot torn: {e}", expected.kind)))
}

/// Checks that nothing follows the last part of a snapshot.
pub(crate) fn at_end(rest: &[u8], kind: &str) -> Result<(), SnapshotError> {
    if rest.is_empty() {
        Ok(())
    } else {
        Err(SnapshotError::Invalid(format!(
            "{} bytes after the end of a {kind} snapshot",
            rest.len()
        )))
    }
}

/// How a wrapper writes and loads its state, chosen where the serde bounds hold (its
/// `with_snapshots`), so that the wrapper's `WindowComputation` impl needs none.
pub(crate) struct Codec<S> {
    pub(crate) snapshot: fn(&S, &mut Vec<u8>) -> Result<(), SnapshotError>,
    pub(crate) restore: fn(&mut S, &[u8]) -> Result<(), SnapshotError>,
}

impl<S> Clone for Codec<S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Codec<S> {}

/// The answer of a wrapper built without `with_snapshots`.
pub(crate) fn unsupported(what: &str) -> SnapshotError {
    SnapshotError::Unsupported(format!(
        "{what} (built without with_snapshots: its keys, elements or accumulators may not be serde types)"
    ))
}

/// A geometry as a header's configuration text.
pub(crate) fn geometry_text(g: crate::SlidingGeometry) -> String {
    format!(
        "size {} ms, slide {} ms, offset {} ms",
        g.size(),
        g.slide(),
        g.offset()
    )
}

/// Timers as a snapshot lists them, in firing order: (timestamp, key slot, window start).
pub(crate) type TimerList = Vec<(i64, u32, i64)>;

/// The live timers of `queue` in firing order.
pub(crate) fn timers_of(queue: &timer_service::TimerQueue<u32, i64>) -> TimerList {
    queue
        .live_in_order()
        .into_iter()
        .map(|t| (t.timestamp, t.key, t.namespace))
        .collect()
}

/// A queue that fires `timers` in their order.
pub(crate) fn queue_of(timers: &[(i64, u32, i64)]) -> timer_service::TimerQueue<u32, i64> {
    let mut queue = timer_service::TimerQueue::new();
    for &(timestamp, slot, start) in timers {
        queue.register(timestamp, slot, start);
    }
    queue
}
