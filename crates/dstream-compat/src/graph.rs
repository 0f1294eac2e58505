//! The stream graph behind the [`DStream`](crate::DStream) handles: one node per stream, holding
//! what Spark's `DStream` base class holds (slide, zero time, remember duration, checkpoint
//! interval, the batches generated and not yet forgotten) and an operation that computes a
//! batch from the parents' batches.
//!
//! The graph-wide steps of `start()` and of every batch are free functions over
//! [`AnyNode`], Spark's recursive `initialize`, `remember`, `validateAtStart` and
//! `clearMetadata`. Nodes are shared with `Rc` and mutated through `Cell`/`RefCell`: a
//! context and its streams live on one thread, as Spark's driver-side graph does.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

use crate::batch::Batch;
use crate::codec::{CodecError, CodecResult, Codecs};
use crate::error::{Error, Result};
use crate::snapshot::StreamState;
use crate::time::{
    default_checkpoint_interval, floor, is_multiple_of, is_multiple_since, since, times_inclusive,
};
use crate::Partitions;

/// Spark's class names of the streams, used in messages and in
/// [`StreamInfo`](crate::StreamInfo).
pub(crate) mod names {
    pub(crate) const QUEUE_INPUT: &str = "QueueInputDStream";
    pub(crate) const MAPPED: &str = "MappedDStream";
    pub(crate) const FILTERED: &str = "FilteredDStream";
    pub(crate) const FLAT_MAPPED: &str = "FlatMappedDStream";
    pub(crate) const TRANSFORMED: &str = "TransformedDStream";
    pub(crate) const SHUFFLED: &str = "ShuffledDStream";
    pub(crate) const WINDOWED: &str = "WindowedDStream";
    pub(crate) const REDUCED_WINDOWED: &str = "ReducedWindowedDStream";
    pub(crate) const UNION: &str = "UnionDStream";
}

/// Warnings and the slice trace of one context, shared by its nodes.
#[derive(Debug, Default)]
pub(crate) struct Log {
    warnings: RefCell<Vec<String>>,
    /// `Some` once tracing is on.
    slices: RefCell<Option<Vec<String>>>,
}

impl Log {
    pub(crate) fn warn(&self, message: String) {
        self.warnings.borrow_mut().push(message);
    }

    pub(crate) fn warnings(&self) -> Vec<String> {
        self.warnings.borrow().clone()
    }

    pub(crate) fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.borrow_mut())
    }

    pub(crate) fn trace_slices(&self) {
        self.slices.borrow_mut().get_or_insert_with(Vec::new);
    }

    pub(crate) fn slice(&self, make: impl FnOnce() -> String) {
        if let Some(lines) = self.slices.borrow_mut().as_mut() {
            lines.push(make());
        }
    }

    pub(crate) fn slice_log(&self) -> Vec<String> {
        self.slices.borrow().clone().unwrap_or_default()
    }
}

/// The fields of Spark's `DStream` base class.
pub(crate) struct Meta {
    pub(crate) id: usize,
    pub(crate) name: &'static str,
    pub(crate) slide: i64,
    /// The window duration of a windowed stream: its parent must remember this much more.
    pub(crate) window: Option<i64>,
    pub(crate) must_checkpoint: bool,
    pub(crate) partitions: Option<Partitions>,
    pub(crate) zero: Cell<Option<i64>>,
    pub(crate) remember: Cell<Option<i64>>,
    pub(crate) checkpoint: Cell<Option<i64>>,
    pub(crate) log: Rc<Log>,
}

impl fmt::Debug for Meta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Meta")
            .field("stream", &self.describe())
            .field("slide", &self.slide)
            .field("window", &self.window)
            .field("zero", &self.zero.get())
            .field("remember", &self.remember.get())
            .field("checkpoint", &self.checkpoint.get())
            .finish_non_exhaustive()
    }
}

impl Meta {
    pub(crate) fn describe(&self) -> String {
        format!("{}#{}", self.name, self.id)
    }

    fn zero_or_err(&self) -> Result<i64> {
        self.zero.get().ok_or_else(|| Error::NotInitialized {
            stream: self.describe(),
        })
    }

    /// Spark's `DStream.isTimeValid`: after the zero time, and a multiple of the slide from it.
    pub(crate) fn is_time_valid(&self, time: i64) -> Result<bool> {
        let zero = self.zero_or_err()?;
        if time <= zero {
            return Ok(false);
        }
        is_multiple_since(time, zero, self.slide, self.name)
    }

    /// Spark's `parentRememberDuration`: the own remember duration, plus the window for a
    /// windowed stream.
    fn parent_remember(&self) -> Option<i64> {
        self.remember
            .get()
            .map(|r| r.saturating_add(self.window.unwrap_or(0)))
    }
}

/// A node without its element type: what the graph-wide steps need.
pub(crate) trait AnyNode {
    fn meta(&self) -> &Meta;
    fn dependencies(&self) -> Vec<Rc<dyn AnyNode>>;
    /// Drops the generated batches at times `<= up_to` (and what the operation keeps for them).
    fn forget_up_to(&self, up_to: i64);
    /// The operation's settings a snapshot's graph fingerprint records beyond the [`Meta`]
    /// (a queue's retention, whether a filter is set); empty for most.
    fn detail(&self) -> String;
    /// What a snapshot holds of this stream (see [`Compute::snapshot`]).
    fn snapshot_state(&self, codecs: &Codecs) -> CodecResult<StreamState>;
    /// The decoded and checked state of [`snapshot_state`](Self::snapshot_state) for a
    /// context with zero time `zero`, ready for [`install_state`](Self::install_state);
    /// `None` for a stream without state. Changes nothing.
    fn decode_state(
        &self,
        state: &StreamState,
        codecs: &Codecs,
        zero: i64,
    ) -> CodecResult<Option<Box<dyn Any>>>;
    /// Puts a state from [`decode_state`](Self::decode_state) of this stream in place.
    fn install_state(&self, decoded: Box<dyn Any>);
    /// Records in the batches this stream remembers (one a batch, counted by its length).
    fn retained(&self) -> usize;
}

/// How one kind of stream computes its batch at a valid time.
pub(crate) trait Compute<T> {
    /// Spark's `DStream.compute`: `None` when the stream has no batch at that time.
    fn compute(&self, this: &Node<T>, time: i64) -> Result<Option<Batch<T>>>;
    fn dependencies(&self) -> Vec<Rc<dyn AnyNode>>;
    /// Releases what the operation itself keeps for times `<= up_to` (the queue input's
    /// prepared batches).
    fn forget_up_to(&self, _meta: &Meta, _up_to: i64) {}

    /// See [`AnyNode::detail`].
    fn detail(&self) -> String {
        String::new()
    }

    /// What a snapshot holds of this stream: nothing for a stream whose batches are computed
    /// again from its parents after a restore (the default; Spark recomputes them from their
    /// lineage), the state of a stream whose batches cannot be computed again (a queue input's
    /// batches, an incremental window's remembered windows).
    fn snapshot(&self, _this: &Node<T>, _codecs: &Codecs) -> CodecResult<StreamState> {
        Ok(StreamState::Recomputed)
    }

    /// See [`AnyNode::decode_state`].
    fn decode_snapshot(
        &self,
        _this: &Node<T>,
        state: &StreamState,
        _codecs: &Codecs,
        _zero: i64,
    ) -> CodecResult<Option<Box<dyn Any>>> {
        match state {
            StreamState::Recomputed => Ok(None),
            other => Err(CodecError::Invalid(format!(
                "the snapshot holds {} for a stream that keeps none",
                other.what()
            ))),
        }
    }

    /// See [`AnyNode::install_state`].
    fn install(&self, _this: &Node<T>, _decoded: Box<dyn Any>) {}
}

/// A stream: its metadata, its generated batches by time, and its operation.
pub(crate) struct Node<T> {
    pub(crate) meta: Meta,
    generated: RefCell<BTreeMap<i64, Batch<T>>>,
    op: Box<dyn Compute<T>>,
}

impl<T> fmt::Debug for Node<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Node")
            .field("meta", &self.meta)
            .field("generated", &self.generated.borrow().len())
            .finish_non_exhaustive()
    }
}

impl<T: 'static> Node<T> {
    pub(crate) fn new(meta: Meta, op: impl Compute<T> + 'static) -> Rc<Node<T>> {
        Rc::new(Node {
            meta,
            generated: RefCell::new(BTreeMap::new()),
            op: Box::new(op),
        })
    }

    /// The remembered batches as a snapshot's [`StreamState::Generated`].
    pub(crate) fn generated_state(&self, codecs: &Codecs) -> CodecResult<StreamState> {
        codecs.check::<T>()?;
        let generated = self.generated.borrow();
        let mut batches = Vec::with_capacity(generated.len());
        for (time, batch) in generated.iter() {
            batches.push((*time, codecs.encode_batch::<T>(batch)?));
        }
        Ok(StreamState::Generated { batches })
    }

    /// The remembered batches of a [`StreamState::Generated`], checked: valid times of this
    /// stream for the zero time `zero`, each once, in order.
    pub(crate) fn decode_generated(
        &self,
        state: &StreamState,
        codecs: &Codecs,
        zero: i64,
    ) -> CodecResult<BTreeMap<i64, Batch<T>>> {
        let StreamState::Generated { batches } = state else {
            return Err(CodecError::Invalid(format!(
                "the snapshot holds {} for a stream that remembers its windows",
                state.what()
            )));
        };
        codecs.check::<T>()?;
        let slide = self.meta.slide;
        let mut out = BTreeMap::new();
        let mut last = zero;
        for (time, bytes) in batches {
            let time = *time;
            let valid = slide > 0 && time > last && since(time, zero) % i128::from(slide) == 0;
            if !valid {
                return Err(CodecError::Invalid(format!(
                    "a remembered batch at {time} ms, not a batch time after {last} ms (zero time {zero} ms, slide {slide} ms)"
                )));
            }
            let records = codecs.decode_batch::<T>(bytes).map_err(|e| match e {
                CodecError::Invalid(why) => {
                    CodecError::Invalid(format!("the batch at {time} ms: {why}"))
                }
                missing @ CodecError::Missing(_) => missing,
            })?;
            out.insert(time, Batch::from(records));
            last = time;
        }
        Ok(out)
    }

    /// Replaces the remembered batches.
    pub(crate) fn replace_generated(&self, generated: BTreeMap<i64, Batch<T>>) {
        *self.generated.borrow_mut() = generated;
    }

    pub(crate) fn cached(&self, time: i64) -> Option<Batch<T>> {
        self.generated.borrow().get(&time).cloned()
    }

    /// Spark's `DStream.getOrCompute`: the remembered batch at `time`, or, if `time` is valid
    /// for this stream, the batch computed now and remembered.
    pub(crate) fn get_or_compute(&self, time: i64) -> Result<Option<Batch<T>>> {
        if let Some(batch) = self.cached(time) {
            return Ok(Some(batch));
        }
        if !self.meta.is_time_valid(time)? {
            return Ok(None);
        }
        let batch = self.op.compute(self, time)?;
        if let Some(b) = &batch {
            self.generated.borrow_mut().insert(time, b.clone());
        }
        Ok(batch)
    }

    /// Spark's `DStream.slice(fromTime, toTime)`: the batches at the valid times from `from` to
    /// `to`, both included, after flooring each bound that is not a multiple of the slide
    /// (relative to the zero time) with a warning; times at or before the zero time are
    /// skipped, and times after the current batch are computed.
    pub(crate) fn slice(&self, from: i64, to: i64) -> Result<Vec<Batch<T>>> {
        let meta = &self.meta;
        let zero = meta.zero_or_err()?;
        let slide = meta.slide;
        let aligned_to = if is_multiple_since(to, zero, slide, meta.name)? {
            to
        } else {
            meta.log.warn(format!(
                "toTime ({to} ms) is not a multiple of slideDuration ({slide} ms)"
            ));
            floor(to, slide, zero)
        };
        let aligned_from = if is_multiple_since(from, zero, slide, meta.name)? {
            from
        } else {
            meta.log.warn(format!(
                "fromTime ({from} ms) is not a multiple of slideDuration ({slide} ms)"
            ));
            floor(from, slide, zero)
        };
        meta.log.slice(|| {
            format!(
                "Slicing from {from} ms to {to} ms (aligned to {aligned_from} ms and {aligned_to} ms)"
            )
        });
        if slide < 0 {
            // Not reachable: negative slides are rejected when a stream is built.
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for time in times_inclusive(aligned_from, aligned_to, slide) {
            if time >= zero {
                if let Some(batch) = self.get_or_compute(time)? {
                    out.push(batch);
                }
            }
        }
        Ok(out)
    }
}

impl<T: 'static> AnyNode for Node<T> {
    fn meta(&self) -> &Meta {
        &self.meta
    }

    fn dependencies(&self) -> Vec<Rc<dyn AnyNode>> {
        self.op.dependencies()
    }

    fn forget_up_to(&self, up_to: i64) {
        {
            let mut generated = self.generated.borrow_mut();
            let keep = generated.split_off(&up_to.saturating_add(1));
            *generated = keep;
        }
        self.op.forget_up_to(&self.meta, up_to);
    }

    fn detail(&self) -> String {
        self.op.detail()
    }

    fn snapshot_state(&self, codecs: &Codecs) -> CodecResult<StreamState> {
        self.op.snapshot(self, codecs)
    }

    fn decode_state(
        &self,
        state: &StreamState,
        codecs: &Codecs,
        zero: i64,
    ) -> CodecResult<Option<Box<dyn Any>>> {
        self.op.decode_snapshot(self, state, codecs, zero)
    }

    fn install_state(&self, decoded: Box<dyn Any>) {
        self.op.install(self, decoded);
    }

    fn retained(&self) -> usize {
        self.generated.borrow().values().map(|b| b.len()).sum()
    }
}

/// Spark's `DStream.initialize`: sets the zero time, the default checkpoint interval of a
/// stream that must checkpoint, and the minimum remember duration (the slide, or twice the
/// checkpoint interval when that is not shorter than the slide), then the same for the parents.
pub(crate) fn initialize(node: &dyn AnyNode, zero: i64) {
    let m = node.meta();
    m.zero.set(Some(zero));
    if m.must_checkpoint && m.checkpoint.get().is_none() {
        m.checkpoint.set(Some(default_checkpoint_interval(m.slide)));
    }
    let mut min_remember = m.slide;
    if let Some(c) = m.checkpoint.get() {
        if min_remember <= c {
            min_remember = c.saturating_mul(2);
        }
    }
    if m.remember.get().is_none_or(|r| r < min_remember) {
        m.remember.set(Some(min_remember));
    }
    for dep in node.dependencies() {
        initialize(&*dep, zero);
    }
}

/// Spark's `DStream.remember`: raises the remember duration to `duration`, then asks every
/// parent to remember this stream's remember duration (plus the window, for a windowed one).
pub(crate) fn remember(node: &dyn AnyNode, duration: Option<i64>) {
    let m = node.meta();
    if let Some(d) = duration {
        if m.remember.get().is_none_or(|r| d > r) {
            m.remember.set(Some(d));
        }
    }
    let parent = m.parent_remember();
    for dep in node.dependencies() {
        remember(&*dep, parent);
    }
}

/// The checkpoint checks of Spark's `DStream.validateAtStart`, on this stream then its
/// parents. The checkpoint-directory requirement is not reproduced (see `docs/dstream.md`).
pub(crate) fn validate_at_start(node: &dyn AnyNode) -> Result<()> {
    let m = node.meta();
    if let Some(interval) = m.checkpoint.get() {
        if interval < m.slide {
            return Err(Error::CheckpointIntervalTooShort {
                stream: m.name,
                interval,
                slide: m.slide,
            });
        }
        if !is_multiple_of(interval, m.slide, m.name)? {
            return Err(Error::CheckpointIntervalNotMultiple {
                stream: m.name,
                interval,
                slide: m.slide,
            });
        }
    }
    for dep in node.dependencies() {
        validate_at_start(&*dep)?;
    }
    Ok(())
}

/// Spark's `DStream.clearMetadata(time)`: forgets the batches older than the remember
/// duration (times `<= time - remember`), in this stream and its parents.
pub(crate) fn clear_metadata(node: &dyn AnyNode, time: i64) {
    let m = node.meta();
    if let Some(r) = m.remember.get() {
        node.forget_up_to(time.saturating_sub(r));
    }
    for dep in node.dependencies() {
        clear_metadata(&*dep, time);
    }
}
