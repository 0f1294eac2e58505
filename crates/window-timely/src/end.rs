//! The end of a run: each worker's counters ([`WorkerEnd`]) summed into the [`Outcome`], with
//! the failure that the writer, process 0 or another process of a cluster reports; and the
//! input of a cluster's process, hashed as it is read ([`HashRead`]), for the check at the end
//! that every process read the same bytes.

use std::io::BufRead;
use std::sync::Arc;

use parking_lot::Mutex;
use window_core::{HeldState, WindowMetrics};

use std::sync::atomic::Ordering;

use timely::dataflow::InputHandleVec;

use crate::sink::SinkState;
use crate::{gather, parse, Outcome, Shared, Summary, TimelyError, ToSink};

/// One worker's counters at its end.
#[derive(Debug, Default)]
pub(crate) struct WorkerEnd {
    pub(crate) events: u64,
    pub(crate) rejected: u64,
    pub(crate) metrics: WindowMetrics,
    pub(crate) live_windows: usize,
    /// The most this worker held after a chunk (the workers' peaks summed, after [`outcome`]).
    pub(crate) peak: HeldState,
    /// In a cluster, on the processes but 0: why process 0 stopped the job, if it did.
    pub(crate) peer_failure: Option<String>,
    /// In a cluster: the process that stopped the job on its own (a signal, process 0's
    /// output failing), and why, if one did ([`parse::halt_summary`]).
    pub(crate) halted: Option<(u32, String)>,
    /// In a cluster: a process that read other input bytes than this one, at the end of a job
    /// that ran to its end.
    pub(crate) input_differs: Option<String>,
}

/// Adds `b` to `a`, field by field (the sum of several workers' peaks).
pub(crate) fn add_held(a: &mut HeldState, b: &HeldState) {
    a.windows += b.windows;
    a.elements += b.elements;
    a.keys += b.keys;
    a.bytes += b.bytes;
}

/// Adds the counters `b` to `a`.
pub(crate) fn add_metrics(a: &mut WindowMetrics, b: &WindowMetrics) {
    a.elements += b.elements;
    a.windows_created += b.windows_created;
    a.native_windows += b.native_windows;
    a.windows_fired += b.windows_fired;
    a.empty_results += b.empty_results;
    a.late_elements += b.late_elements;
    a.late_side_output += b.late_side_output;
    a.elements_in_no_window += b.elements_in_no_window;
}

/// An input that hashes (FNV-1a) every byte consumed from it, and counts them.
pub(crate) struct HashRead {
    pub(crate) inner: Box<dyn BufRead + Send>,
    pub(crate) read: Arc<Mutex<(u64, u64)>>,
}

impl std::io::Read for HashRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = {
            let have = self.fill_buf()?;
            let n = have.len().min(buf.len());
            buf[..n].copy_from_slice(&have[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for HashRead {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        // The buffer `fill_buf` gave is there still (no read happens while it is not empty).
        if let Ok(have) = self.inner.fill_buf() {
            let mut r = self.read.lock();
            let n = amt.min(have.len());
            r.0 += n as u64;
            r.1 = have[..n].iter().fold(r.1, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
        }
        self.inner.consume(amt);
    }
}

/// What a run leaves: the workers' ends (`ran`) summed, the writer thread's state; `me`, this
/// process's index in a cluster.
pub(crate) fn outcome<O>(
    ran: Result<Vec<Result<WorkerEnd, String>>, TimelyError>,
    sink: Result<SinkState<O>, TimelyError>,
    interrupted: bool,
    me: Option<usize>,
) -> Result<Outcome<O>, TimelyError> {
    let mut total = WorkerEnd::default();
    for end in ran? {
        let end = end.map_err(TimelyError::Timely)?;
        total.events += end.events;
        total.rejected += end.rejected;
        add_metrics(&mut total.metrics, &end.metrics);
        total.live_windows += end.live_windows;
        add_held(&mut total.peak, &end.peak);
        total.peer_failure = total.peer_failure.or(end.peer_failure);
        total.halted = total.halted.or(end.halted);
        total.input_differs = total.input_differs.or(end.input_differs);
    }
    let mut sink = sink?;
    if let Some(message) = total.input_differs.filter(|_| sink.failure.is_none()) {
        sink.failure = Some(TimelyError::Cluster(message));
    }
    // This process's own error first, then process 0's, then another process that stopped the
    // job (unless this one was stopped by a signal too: then it reports that).
    if sink.failure.is_none() {
        if let Some(message) = total.peer_failure {
            sink.failure = Some(TimelyError::Peer {
                process: 0,
                message,
            });
        } else if let Some((process, message)) = total
            .halted
            .filter(|(p, _)| !interrupted && Some(*p as usize) != me)
        {
            sink.failure = Some(TimelyError::Peer {
                process: process as usize,
                message,
            });
        }
    }
    Ok(Outcome {
        output: sink.out,
        policy: sink.policy,
        events: total.events,
        rejected: total.rejected,
        metrics: total.metrics,
        live_windows: total.live_windows,
        peak_held: total.peak,
        failure: sink.failure,
        interrupted,
        finished_already: false,
    })
}

impl<O> Outcome<O> {
    /// The outcome of a run that did not start: the job had finished already.
    pub(crate) fn finished(output: O, policy: window_io::ErrorPolicy) -> Self {
        Self {
            output,
            policy,
            events: 0,
            rejected: 0,
            metrics: WindowMetrics::default(),
            live_windows: 0,
            peak_held: HeldState::default(),
            failure: None,
            interrupted: false,
            finished_already: true,
        }
    }
}

/// Bytes read so far and their FNV-1a hash, shared by a process's readers.
pub(crate) type ReadSoFar = Arc<Mutex<(u64, u64)>>;

impl HashRead {
    /// `bytes` hashed into `read` as they are read (in a cluster: every input of the process,
    /// read in one order, into one count and hash), or `bytes` as they are without `read`.
    pub(crate) fn sharing(
        bytes: Box<dyn BufRead + Send>,
        read: Option<&ReadSoFar>,
    ) -> Box<dyn BufRead + Send> {
        match read {
            Some(read) => Box::new(HashRead {
                inner: bytes,
                read: Arc::clone(read),
            }),
            None => bytes,
        }
    }
}

/// In a cluster, a worker that stopped on its own (a signal, process 0's output failed, a
/// refused element) sends a last summary at its next chunk, `chunk`: the other processes learn
/// it there and stop too, instead of waiting for this worker's next chunks. (One stopped by a
/// chunk already stopped every worker at that chunk, before this one: then this is ignored.)
pub(crate) fn send_halt<P>(
    shared: &Shared<P>,
    summaries_in: &mut InputHandleVec<u64, Summary>,
    chunk: u64,
    index: usize,
) {
    let interrupted = shared.interrupted.load(Ordering::Relaxed);
    if let Some(threads) = shared.cluster {
        if interrupted || shared.stop.load(Ordering::Relaxed) {
            // Stopped on its own (a signal, process 0's output failed, a refused element): the
            // other processes learn it at this chunk and stop there too, instead of waiting for
            // this worker's next chunks. (One stopped by a chunk already stopped every worker at
            // that chunk, before this one: then this is ignored.)
            // Any other stop has an error of its own (process 0's output, a worker's refused
            // element), which process 0 reports and passes on: this text is a fallback.
            let why = if interrupted {
                "it was stopped by a signal (SIGINT or SIGTERM)"
            } else {
                "it stopped early (its own error says why)"
            };
            let process = (index / threads) as u32;
            summaries_in.send(parse::halt_summary(chunk, process, why.into()));
        }
    }
}

/// A worker's end, `own`; in a cluster, exchanged with every other worker (worker 0 first waits
/// for the writer, to say how the job ended), with the bytes this process read.
pub(crate) fn end_of_worker_run<P>(
    worker: &mut timely::worker::Worker,
    shared: &Shared<P>,
    own: WorkerEnd,
) -> WorkerEnd {
    let index = worker.index();
    let Some(threads) = shared.cluster else {
        return own;
    };
    // Worker 0 waits for the writer to write everything, to say how the job ended.
    let failure = if index == 0 {
        let _ = shared.to_sink.send(ToSink::Done);
        let done = shared.sink_done.lock().take();
        done.and_then(|d| d.recv().ok()).flatten()
    } else {
        None
    };
    let read = shared.read.as_ref().map_or((0, 0, 0), |r| {
        let (bytes, hash) = *r.lock();
        ((index / threads) as u32, bytes, hash)
    });
    let message = gather::EndMessage::new(&own, failure, read);
    gather::gather(worker, threads, own, message)
}
