//! Snapshots of a running [`StreamingContext`]: Spark Streaming's checkpoint (metadata
//! checkpointing plus the RDD checkpoints of the stateful streams, read back by
//! `StreamingContext.getOrCreate`).
//!
//! # The idea
//!
//! After a restart Spark rebuilds the context from the same program: the same streams,
//! windows and output operations, built in the same order. What the program cannot give again
//! comes from the checkpoint: the batch time reached, the input not yet released, and the
//! batches of the streams whose batches depend on their own history (Spark always checkpoints
//! a `ReducedWindowedDStream`). Every other stream's batch is a function of its parents'
//! batches at known times, so it is computed again when something asks for it (Spark
//! recomputes such RDDs from their lineage).
//!
//! Here likewise. [`StreamingContext::snapshot`], between two batches, writes:
//!
//! * a header: a kind tag, a format version, the batch interval, the context's remember
//!   duration and a fingerprint of the graph: per stream (in the order a depth-first walk from
//!   the output operations, in registration order, first meets them) its class, slide, window,
//!   checkpoint interval, partitions, parents and the settings of its operation (a queue's
//!   retention, whether an incremental window has a filter); and the stream of each output
//!   operation;
//! * the zero time and the time of the last batch run;
//! * per stream its state: a queue input's batches not yet released (and how many were
//!   pushed), an incremental window's remembered windows, nothing for the other streams.
//!
//! [`StreamingContext::restore`] reads it into a context rebuilt from the same program and not
//! yet started: it checks the header against its own graph (a difference is an
//! [`Error::InvalidSnapshot`] naming it), decodes and checks every state, and only then starts
//! the context at the snapshot's zero time (the steps of `start()`), sets the clock to the last
//! batch run and puts the states in place. The next [`run_batch`](StreamingContext::run_batch)
//! runs the batch after the snapshot, and every output operation gets exactly the batches it
//! would have got without the restart.
//!
//! # Records
//!
//! Streams are seen without their element types here, so records go through encodings
//! registered by type (`crate::codec`): the scalar types and `String` are built in, an
//! incremental window's `(K, V)` records are encoded as a pair of `K` and `V`, and any other
//! type (the element type of a queue input, e.g. `(String, f64)`) is registered with
//! [`StreamingContext::register_snapshot_type`]. A snapshot of a state whose records have no
//! encoding is refused with [`Error::SnapshotUnsupported`] naming the type.
//!
//! # Not in a snapshot
//!
//! * The output operations' own state (what a [`BatchCollector`](crate::BatchCollector)
//!   collected, the caller's counters): the caller's to keep.
//! * The warnings and the slice trace: diagnostics; a restored context starts without them.
//! * The batches of the other streams, which are computed again: the functions of the graph
//!   must be deterministic, as Spark requires. A batch computed ahead of the clock (by slicing
//!   a time after the current batch) is computed again too, from the input as it is then.

use std::collections::HashMap;
use std::rc::Rc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::codec::CodecError;
use crate::context::StreamingContext;
use crate::error::{Error, Result};
use crate::graph::AnyNode;
use crate::time::default_checkpoint_interval;
use crate::Partitions;

/// The kind tag of a snapshot of a [`StreamingContext`].
const KIND: &str = "dstream-compat StreamingContext";

/// The version of the snapshot format.
const VERSION: u32 = 1;

/// A whole snapshot.
#[derive(Debug, Serialize, Deserialize)]
struct Snapshot {
    header: Header,
    zero: i64,
    time: i64,
    /// One per stream of the header's fingerprint, in its order.
    streams: Vec<StreamState>,
}

/// What a restore checks before it reads any state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Header {
    kind: String,
    version: u32,
    batch_interval: i64,
    /// `StreamingContext::remember`.
    remember: Option<i64>,
    streams: Vec<StreamPrint>,
    /// The stream (its index in `streams`) of each output operation, in registration order.
    outputs: Vec<usize>,
}

/// The fingerprint of one stream: what it was built with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct StreamPrint {
    name: String,
    slide: i64,
    window: Option<i64>,
    /// The checkpoint interval it has after `start()` (set, or Spark's default).
    checkpoint: Option<i64>,
    /// `None`: takes no partitions; `Some(0)`: the default; `Some(n)`: `n`.
    partitions: Option<usize>,
    /// The indices of its parents in the fingerprint.
    parents: Vec<usize>,
    /// The settings of its operation ([`AnyNode::detail`]).
    detail: String,
}

/// What a snapshot holds of one stream.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum StreamState {
    /// Nothing: its batches are computed again from its parents.
    Recomputed,
    /// A queue input: the batches pushed and not released, as encoded batches.
    Queue {
        /// The 0-based number of the first batch held.
        first_index: u64,
        /// How many batches were pushed in all.
        pushed: u64,
        /// The batches held, from `first_index` on.
        batches: Vec<Vec<u8>>,
    },
    /// The remembered batches, by time (an incremental window's windows).
    Generated {
        /// `(time in ms, encoded batch)`, in time order.
        batches: Vec<(i64, Vec<u8>)>,
    },
}

impl StreamState {
    /// What the state is, for messages.
    pub(crate) fn what(&self) -> &'static str {
        match self {
            StreamState::Recomputed => "no state",
            StreamState::Queue { .. } => "a queue input's batches",
            StreamState::Generated { .. } => "remembered windows",
        }
    }
}

/// The streams an output operation depends on, in the order of the fingerprint.
struct Graph {
    nodes: Vec<Rc<dyn AnyNode>>,
    parents: Vec<Vec<usize>>,
    outputs: Vec<usize>,
}

impl Graph {
    /// Walks depth first from each output operation's stream, in registration order; a stream
    /// met again (a stream in two windows, a union of a stream with itself) keeps its first
    /// index.
    fn of(outputs: &[Rc<dyn AnyNode>]) -> Graph {
        let mut graph = Graph {
            nodes: Vec::new(),
            parents: Vec::new(),
            outputs: Vec::with_capacity(outputs.len()),
        };
        let mut index = HashMap::new();
        for out in outputs {
            let i = graph.visit(out, &mut index);
            graph.outputs.push(i);
        }
        graph
    }

    fn visit(&mut self, node: &Rc<dyn AnyNode>, index: &mut HashMap<usize, usize>) -> usize {
        if let Some(&i) = index.get(&node.meta().id) {
            return i;
        }
        let i = self.nodes.len();
        index.insert(node.meta().id, i);
        self.nodes.push(Rc::clone(node));
        self.parents.push(Vec::new());
        let parents = node
            .dependencies()
            .iter()
            .map(|dep| self.visit(dep, index))
            .collect();
        self.parents[i] = parents;
        i
    }

    fn header(&self, batch_interval: i64, remember: Option<i64>) -> Header {
        let streams = self
            .nodes
            .iter()
            .zip(&self.parents)
            .map(|(node, parents)| {
                let m = node.meta();
                StreamPrint {
                    name: m.name.to_owned(),
                    slide: m.slide,
                    window: m.window,
                    checkpoint: m.checkpoint.get().or_else(|| {
                        m.must_checkpoint
                            .then(|| default_checkpoint_interval(m.slide))
                    }),
                    partitions: m.partitions.map(|p| match p {
                        Partitions::Default => 0,
                        Partitions::Fixed(n) => n.get(),
                    }),
                    parents: parents.clone(),
                    detail: node.detail(),
                }
            })
            .collect();
        Header {
            kind: KIND.to_owned(),
            version: VERSION,
            batch_interval,
            remember,
            streams,
            outputs: self.outputs.clone(),
        }
    }
}

fn ms(d: Option<i64>) -> String {
    d.map_or_else(|| "none".to_owned(), |d| format!("{d} ms"))
}

impl StreamPrint {
    /// The fields compared, labelled, in the order a difference is reported.
    fn fields(&self) -> [(&'static str, String); 6] {
        let partitions = match self.partitions {
            None => "none".to_owned(),
            Some(0) => "the default".to_owned(),
            Some(n) => n.to_string(),
        };
        [
            ("slide", ms(Some(self.slide))),
            ("window", ms(self.window)),
            ("checkpoint interval", ms(self.checkpoint)),
            ("partitions", partitions),
            ("parent streams", format!("{:?}", self.parents)),
            ("operation", format!("`{}`", self.detail)),
        ]
    }
}

/// The first difference between the header of a snapshot and that of this context, in words.
fn compare(snap: &Header, here: &Header) -> std::result::Result<(), String> {
    if snap.version != here.version {
        return Err(format!(
            "format version {} (this build reads version {})",
            snap.version, here.version
        ));
    }
    if snap.batch_interval != here.batch_interval {
        return Err(format!(
            "the batch interval is {} ms in the snapshot, {} ms in this context",
            snap.batch_interval, here.batch_interval
        ));
    }
    if snap.remember != here.remember {
        return Err(format!(
            "the context's remember duration is {} in the snapshot, {} in this context",
            ms(snap.remember),
            ms(here.remember)
        ));
    }
    for (i, (a, b)) in snap.streams.iter().zip(&here.streams).enumerate() {
        if a.name != b.name {
            return Err(format!(
                "stream {i} is a {} in the snapshot, a {} in this context",
                a.name, b.name
            ));
        }
        for ((label, was), (_, is)) in a.fields().into_iter().zip(b.fields()) {
            if was != is {
                return Err(format!(
                    "stream {i} ({}): {label} {was} in the snapshot, {is} in this context",
                    a.name
                ));
            }
        }
    }
    if snap.streams.len() != here.streams.len() {
        return Err(format!(
            "the snapshot's graph has {} streams, this context's {}",
            snap.streams.len(),
            here.streams.len()
        ));
    }
    if snap.outputs.len() != here.outputs.len() {
        return Err(format!(
            "the snapshot's graph has {} output operations, this context's {}",
            snap.outputs.len(),
            here.outputs.len()
        ));
    }
    for (i, (a, b)) in snap.outputs.iter().zip(&here.outputs).enumerate() {
        if a != b {
            return Err(format!(
                "output operation {i} is on stream {a} in the snapshot, on stream {b} in this context"
            ));
        }
    }
    Ok(())
}

/// The snapshot in `bytes`, or why it is not one: not a snapshot, one of another kind,
/// truncated, or with bytes after its end.
fn decode(bytes: &[u8]) -> std::result::Result<Snapshot, String> {
    let kind = match postcard::take_from_bytes::<String>(bytes) {
        Ok((kind, _)) => kind,
        Err(e) => return Err(format!("not a snapshot of a {KIND} ({e})")),
    };
    if kind != KIND {
        let shown: String = kind.chars().take(60).collect();
        return Err(format!("a snapshot of kind `{shown}`, not of a {KIND}"));
    }
    let (snapshot, rest) = postcard::take_from_bytes::<Snapshot>(bytes)
        .map_err(|e| format!("a truncated or damaged snapshot ({e})"))?;
    if !rest.is_empty() {
        return Err(format!(
            "{} bytes after the end of the snapshot",
            rest.len()
        ));
    }
    Ok(snapshot)
}

fn invalid(reason: String) -> Error {
    Error::InvalidSnapshot { reason }
}

/// The error of a stream's state that could not be encoded or decoded.
fn stream_error(index: usize, node: &dyn AnyNode, e: CodecError) -> Error {
    match e {
        CodecError::Missing(type_name) => Error::SnapshotUnsupported {
            stream: node.meta().describe(),
            reason: format!(
                "its records need an encoding of `{type_name}`: register it with StreamingContext::register_snapshot_type"
            ),
        },
        CodecError::Invalid(why) => invalid(format!(
            "stream {index} ({}): {why}",
            node.meta().describe()
        )),
    }
}

impl StreamingContext {
    /// Registers how records of type `T` are written to and read from snapshots (its serde
    /// implementation, in postcard's encoding), for [`snapshot`](Self::snapshot) and
    /// [`restore`](Self::restore). Needed for the element type of every queue input unless it
    /// is built in (the integer and float types, `bool`, `char`, `()`, `String`); the
    /// incremental windows' `(K, V)` records need `K` and `V` (registered or built in). Call
    /// it in the program that builds the graph, so the restarted program registers the same.
    ///
    /// Spark likewise requires the records of checkpointed streams to be serializable.
    pub fn register_snapshot_type<T: Serialize + DeserializeOwned + 'static>(&self) {
        self.inner.codecs.register::<T>();
    }

    /// Writes the state of this context between two batches (Spark's checkpoint): the batch
    /// time reached, the queue inputs' batches not yet released, and the windows the
    /// incremental windows remember, under a header with the batch interval and a fingerprint
    /// of the graph. Read it back with [`restore`](Self::restore) into a context rebuilt from
    /// the same program. The batches of the other streams are computed again after a restore
    /// (see the module documentation of the format and of what is left out).
    ///
    /// # Errors
    /// [`Error::NotStarted`], [`Error::Stopped`], [`Error::BatchInProgress`] (called from an
    /// output operation: a snapshot is consistent only between batches);
    /// [`Error::SnapshotUnsupported`] when a state's records have no registered encoding
    /// ([`register_snapshot_type`](Self::register_snapshot_type)) or encoding them failed.
    ///
    /// # Examples
    /// ```
    /// use dstream_compat::{InverseReduce, StreamingContext};
    ///
    /// // The program: the same graph before and after the restart.
    /// let program = || -> Result<_, dstream_compat::Error> {
    ///     let ssc = StreamingContext::new(1000)?;
    ///     let (input, pairs) = ssc.queue_input::<(String, i64)>();
    ///     ssc.register_snapshot_type::<(String, i64)>();
    ///     let spec = InverseReduce::new(|a: &i64, b: &i64| a + b, |a: &i64, b: &i64| a - b);
    ///     let sums = pairs.reduce_by_key_and_window_inv(spec, 2000, 1000)?.collect_batches()?;
    ///     Ok((ssc, input, sums))
    /// };
    /// let (ssc, input, sums) = program()?;
    /// ssc.start()?;
    /// input.push(vec![("a".into(), 1)]);
    /// ssc.run_batch()?;
    /// let bytes = ssc.snapshot()?;
    ///
    /// let (again, input, restored) = program()?;
    /// again.restore(&bytes)?;
    /// assert_eq!(again.current_time(), Some(1000));
    /// input.push(vec![("b".into(), 2)]);
    /// again.run_batch()?;
    /// let got: Vec<(i64, Vec<(String, i64)>)> =
    ///     restored.take().into_iter().map(|(t, b)| (t, b.into_vec())).collect();
    /// assert_eq!(got, [(2000, vec![("a".into(), 1), ("b".into(), 2)])]);
    /// # drop(sums);
    /// # Ok::<(), dstream_compat::Error>(())
    /// ```
    pub fn snapshot(&self) -> Result<Vec<u8>> {
        let (zero, time) = self.between_batches()?;
        let (outputs, remember) = self.output_streams();
        let graph = Graph::of(&outputs);
        let header = graph.header(self.batch_interval(), remember);
        let mut streams = Vec::with_capacity(graph.nodes.len());
        for (i, node) in graph.nodes.iter().enumerate() {
            let state = node
                .snapshot_state(&self.inner.codecs)
                .map_err(|e| match stream_error(i, &**node, e) {
                    Error::InvalidSnapshot { reason } => Error::SnapshotUnsupported {
                        stream: node.meta().describe(),
                        reason,
                    },
                    other => other,
                })?;
            streams.push(state);
        }
        let snapshot = Snapshot {
            header,
            zero,
            time,
            streams,
        };
        postcard::to_allocvec(&snapshot).map_err(|e| Error::SnapshotUnsupported {
            stream: "the context".to_owned(),
            reason: e.to_string(),
        })
    }

    /// Restores a [`snapshot`](Self::snapshot) into this context, which must be rebuilt from
    /// the same program (the same streams, windows and output operations, built in the same
    /// order, the same types registered) and not started (Spark's
    /// `StreamingContext.getOrCreate`). The snapshot is checked and decoded in full first;
    /// then the context starts at the snapshot's zero time as [`start`](Self::start) would,
    /// its clock at the last batch the snapshot's context ran, with the queue inputs' batches
    /// and the incremental windows' remembered windows of the snapshot (the batches a queue
    /// input was given while the program rebuilt the graph are replaced). Push the batches
    /// after those of the snapshot and run on; the output operations get what they would
    /// have got without the restart.
    ///
    /// # Errors
    /// [`Error::AlreadyStarted`], [`Error::Stopped`], [`Error::NoOutputOperations`];
    /// [`Error::InvalidSnapshot`] for bytes that are not a whole snapshot of a context, or a
    /// snapshot of another graph (the message names the first difference: batch interval,
    /// number of streams, a stream's class, slide, window, ...); [`Error::SnapshotUnsupported`]
    /// when a state's record type is not registered here. On these the context is unchanged.
    /// The errors of [`start`](Self::start), which the same graph does not give.
    pub fn restore(&self, snapshot: &[u8]) -> Result<()> {
        self.startable()?;
        let snap = decode(snapshot).map_err(invalid)?;
        let (outputs, remember) = self.output_streams();
        let graph = Graph::of(&outputs);
        let interval = self.batch_interval();
        compare(&snap.header, &graph.header(interval, remember)).map_err(invalid)?;
        let (zero, time) = (snap.zero, snap.time);
        let run = crate::time::since(time, zero);
        let aligned = run >= 0 && run % i128::from(interval) == 0;
        if zero.rem_euclid(interval) != 0 || !aligned {
            return Err(invalid(format!(
                "zero time {zero} ms and last batch {time} ms are not batch times of a {interval} ms interval"
            )));
        }
        if snap.streams.len() != graph.nodes.len() {
            return Err(invalid(format!(
                "states of {} streams for a graph of {}",
                snap.streams.len(),
                graph.nodes.len()
            )));
        }
        let mut decoded = Vec::with_capacity(graph.nodes.len());
        for (i, (node, state)) in graph.nodes.iter().zip(&snap.streams).enumerate() {
            let state = node
                .decode_state(state, &self.inner.codecs, zero)
                .map_err(|e| stream_error(i, &**node, e))?;
            decoded.push(state);
        }
        self.start_graph(zero, time)?;
        for (node, state) in graph.nodes.iter().zip(decoded) {
            if let Some(state) = state {
                node.install_state(state);
            }
        }
        Ok(())
    }
}
