//! The parts of a run that only a cluster (several processes) has: the allocators over the
//! connections [`crate::cluster::connect`] made, and the end of the job, when every worker tells
//! every other one its counters and process 0 tells how the job ended.

use std::cell::RefCell;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::{AllocatorBuilder, ProcessBuilder};
use timely::communication::Hooks;
use timely::dataflow::operators::vec::{Broadcast, Input};
use timely::dataflow::operators::Inspect;
use timely::dataflow::InputHandleVec;
use window_core::WindowMetrics;

use crate::cluster::Cluster;
use crate::{Cut, TimelyError, WorkerEnd};

/// The connections to the other processes ([`crate::cluster::connect`]), by process.
pub(crate) type Sockets = Vec<Option<TcpStream>>;

/// The allocators of this process's `threads` workers, over `sockets` to the other processes of
/// `cluster` (timely's TCP allocator, over our checked connections), and the guard of the send
/// and receive threads (dropped once the workers are done).
pub(crate) fn allocators(
    cluster: &Cluster,
    sockets: Sockets,
    threads: usize,
) -> Result<(Vec<AllocatorBuilder>, Box<dyn std::any::Any + Send>), TimelyError> {
    let hooks = Hooks::default();
    let local =
        ProcessBuilder::new_typed_vector(threads, hooks.refill.clone(), hooks.spill.clone());
    let (builders, guard) =
        initialize_networking_from_sockets(local, sockets, cluster.process, threads, hooks)
            .map_err(|e| TimelyError::Cluster(format!("starting the network threads: {e}")))?;
    let builders = builders.into_iter().map(AllocatorBuilder::Tcp).collect();
    Ok((builders, Box::new(guard)))
}

/// How a cluster's job with checkpoints starts, as process 0 (which holds the checkpoints)
/// tells every other process on its connection, after the hellos and before timely's own
/// traffic (Flink's JobManager handing each task its state to restore).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Start {
    /// From the input's start.
    Fresh,
    /// From this cut.
    Resume(Box<Cut>),
    /// Not at all: process 0's last checkpoint says the job ran to its end.
    Finished,
    /// Not at all: process 0 cannot run the job (its checkpoints are of another job, damaged,
    /// locked by another run ...); the text is its error.
    Failed(String),
}

/// How [`start`] left a cluster's process.
pub(crate) enum Started {
    /// Connected to every other process, ready for timely (a resume's cut is set).
    Connected(Sockets),
    /// Process 0 says the job finished already: nothing to run.
    Finished,
}

/// Connects this process to the others of `cluster`; with `checkpoints`, process 0 then tells
/// the others where the job starts (`resume`, its cut or `None`), and the others set `resume`
/// to what they hear.
///
/// # Errors
/// [`TimelyError::Cluster`]: the processes cannot connect, or the start cannot be told.
pub(crate) fn start(
    cluster: &Cluster,
    checkpoints: bool,
    resume: &mut Option<Cut>,
) -> Result<Started, TimelyError> {
    let mut sockets = crate::cluster::connect(cluster).map_err(TimelyError::Cluster)?;
    if checkpoints && cluster.process == 0 {
        // The cut is moved into the message and back, not copied.
        let start = resume
            .take()
            .map_or(Start::Fresh, |c| Start::Resume(Box::new(c)));
        let told = tell_start(cluster, &mut sockets, &start);
        if let Start::Resume(cut) = start {
            *resume = Some(*cut);
        }
        told?;
    } else if checkpoints {
        match hear_start(cluster, &mut sockets)? {
            Start::Fresh => *resume = None,
            Start::Resume(cut) => *resume = Some(*cut),
            Start::Finished => return Ok(Started::Finished),
            Start::Failed(message) => {
                return Err(TimelyError::Peer {
                    process: 0,
                    message,
                })
            }
        }
    }
    Ok(Started::Connected(sockets))
}

/// Process 0 of a cluster whose last checkpoint says the job ran to its end: connects to the
/// other processes and tells them so (each then ends at once, with
/// [`crate::Outcome::finished_already`]), instead of leaving them to wait for it.
///
/// # Errors
/// [`TimelyError::Cluster`]: the processes cannot connect.
pub fn tell_finished(cluster: &Cluster) -> Result<(), TimelyError> {
    tell_without_running(cluster, &Start::Finished)
}

/// Process 0 of a cluster with checkpoints that cannot run the job (`message`, its error):
/// connects to the other processes and tells them, so that each fails with that error instead
/// of waiting for process 0 until its connect timeout.
///
/// # Errors
/// [`TimelyError::Cluster`]: the processes cannot connect.
pub fn tell_failed(cluster: &Cluster, message: String) -> Result<(), TimelyError> {
    tell_without_running(cluster, &Start::Failed(message))
}

/// Process 0 that does not run the job: connects to the others and tells them `start`.
fn tell_without_running(cluster: &Cluster, start: &Start) -> Result<(), TimelyError> {
    let mut sockets = crate::cluster::connect(cluster).map_err(TimelyError::Cluster)?;
    tell_start(cluster, &mut sockets, start)
}

/// The longest start message a process accepts (a cut holds every key group's snapshot).
const MAX_START: u64 = 1 << 36;

/// Process 0: tells every other process how the job starts.
///
/// # Errors
/// [`TimelyError::Cluster`]: a connection fails.
pub(crate) fn tell_start(
    cluster: &Cluster,
    sockets: &mut Sockets,
    start: &Start,
) -> Result<(), TimelyError> {
    let bytes = postcard::to_allocvec(start)
        .map_err(|e| TimelyError::Checkpoint(format!("encoding the cut for the cluster: {e}")))?;
    for (p, socket) in sockets.iter_mut().enumerate() {
        let Some(socket) = socket.as_mut() else {
            continue;
        };
        let sent = socket
            .write_all(&(bytes.len() as u64).to_le_bytes())
            .and_then(|()| socket.write_all(&bytes));
        sent.map_err(|e| {
            TimelyError::Cluster(format!(
                "telling process {p} ({}) where the job starts: {e}",
                cluster.addresses[p]
            ))
        })?;
    }
    Ok(())
}

/// A process other than 0: hears from process 0 how the job starts.
///
/// # Errors
/// [`TimelyError::Cluster`]: the connection fails or closes first, or the message is not one.
pub(crate) fn hear_start(cluster: &Cluster, sockets: &mut Sockets) -> Result<Start, TimelyError> {
    let fail = |what: String| {
        TimelyError::Cluster(format!(
            "hearing from process 0 ({}) where the job starts: {what}",
            cluster.addresses[0]
        ))
    };
    let socket = sockets[0]
        .as_mut()
        .ok_or_else(|| fail("no connection to it".into()))?;
    let mut len = [0u8; 8];
    socket.read_exact(&mut len).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => fail(
            "process 0 closed the connection first (it stopped or died); start every process \
             again"
                .into(),
        ),
        _ => fail(e.to_string()),
    })?;
    let len = u64::from_le_bytes(len);
    if len > MAX_START {
        return Err(fail(format!("a message of {len} bytes")));
    }
    let mut bytes = Vec::new();
    let got = socket
        .take(len)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(e.to_string()))?;
    if got as u64 != len {
        return Err(fail(format!(
            "the connection closed after {got} of {len} bytes"
        )));
    }
    postcard::from_bytes(&bytes).map_err(|e| fail(format!("not a start message: {e}")))
}

/// What a worker says at the end of a cluster's job.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct EndMessage {
    events: u64,
    rejected: u64,
    /// [`WindowMetrics`] in field order.
    metrics: [u64; 8],
    live_windows: u64,
    /// The worker's peak [`window_core::HeldState`]: windows, elements, keys, bytes.
    peak: [u64; 4],
    /// From worker 0 (process 0, which writes): why the job stopped early, if it did.
    failure: Option<String>,
    /// The sender's process and what it read of its input: bytes, and FNV-1a of every byte.
    read: (u32, u64, u64),
}

impl EndMessage {
    /// The message of a worker that ended with `end`, `failure` from worker 0.
    pub(crate) fn new(end: &WorkerEnd, failure: Option<String>, read: (u32, u64, u64)) -> Self {
        let m = &end.metrics;
        Self {
            events: end.events,
            rejected: end.rejected,
            metrics: [
                m.elements,
                m.windows_created,
                m.native_windows,
                m.windows_fired,
                m.empty_results,
                m.late_elements,
                m.late_side_output,
                m.elements_in_no_window,
            ],
            live_windows: end.live_windows as u64,
            peak: [
                end.peak.windows as u64,
                end.peak.elements as u64,
                end.peak.keys as u64,
                end.peak.bytes as u64,
            ],
            failure,
            read,
        }
    }
}

/// What this worker's process read (`index` / `threads`), from its workers' messages.
fn mine_read(all: &[EndMessage], index: usize, threads: usize) -> Option<(u32, u64, u64)> {
    let me = (index / threads) as u32;
    all.iter().map(|m| m.read).find(|r| r.0 == me)
}

/// Which process read other bytes than this one, if one did.
fn input_difference(all: &[EndMessage], mine: Option<(u32, u64, u64)>) -> Option<String> {
    let (me, bytes, hash) = mine?;
    let other = all.iter().find(|m| (m.read.1, m.read.2) != (bytes, hash))?;
    let (p, b, h) = other.read;
    Some(format!(
        "process {p} read other input bytes than process {me} ({b} bytes, FNV-1a {h:016x} \
         there; {bytes} bytes, {hash:016x} here): the input files differ beyond what the \
         processes compared when they connected (each file's size and first 64 KiB), and the \
         output is not the job's; run every process on the same files"
    ))
}

/// Sends `mine` to every worker of the cluster and returns what this worker should report (the
/// process sums its workers'): on worker 0 the counters of all workers, summed, so that process
/// 0's summary covers the whole cluster, and zero on process 0's other workers (`threads` per
/// process); on the other processes each worker's own counters (their summary is of their own
/// part) and worker 0's failure, which every process reports.
pub(crate) fn gather(
    worker: &mut timely::worker::Worker,
    threads: usize,
    own: WorkerEnd,
    mine: EndMessage,
) -> WorkerEnd {
    let index = worker.index();
    let mut input = InputHandleVec::<u64, EndMessage>::new();
    let got: Rc<RefCell<Vec<EndMessage>>> = Rc::default();
    let into = Rc::clone(&got);
    worker.dataflow::<u64, _, _>(|scope| {
        scope
            .input_from(&mut input)
            .broadcast()
            .inspect(move |m: &EndMessage| into.borrow_mut().push(m.clone()));
    });
    input.send(mine);
    drop(input);
    while worker.step_or_park(None) {}
    let all = got.take();
    let failure = all.iter().find_map(|m| m.failure.clone());
    // A job that ran to its end read every byte of its input in every process: they must have
    // read the same bytes (the hello compared only the size and the first bytes).
    let input_differs = if failure.is_none() && own.halted.is_none() {
        input_difference(&all, mine_read(&all, index, threads))
    } else {
        None
    };
    if index >= threads {
        return WorkerEnd {
            peer_failure: failure,
            input_differs,
            ..own
        };
    }
    if index != 0 {
        return WorkerEnd::default();
    }
    let mut total = WorkerEnd {
        halted: own.halted,
        input_differs,
        ..WorkerEnd::default()
    };
    for m in &all {
        total.events += m.events;
        total.rejected += m.rejected;
        total.live_windows += m.live_windows as usize;
        let [windows, elements, keys, bytes] = m.peak.map(|n| n as usize);
        crate::end::add_held(
            &mut total.peak,
            &window_core::HeldState {
                windows,
                elements,
                keys,
                bytes,
            },
        );
        let [a, b, c, d, e, f, g, h] = m.metrics;
        crate::end::add_metrics(
            &mut total.metrics,
            &WindowMetrics {
                elements: a,
                windows_created: b,
                native_windows: c,
                windows_fired: d,
                empty_results: e,
                late_elements: f,
                late_side_output: g,
                elements_in_no_window: h,
            },
        );
    }
    total
}
