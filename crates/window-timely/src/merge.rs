//! Several inputs under several workers: their chunks in one order, aligned in event time.
//!
//! Flink's watermark of an operator with several inputs is the minimum of theirs
//! (`StatusWatermarkValve`), and with watermark alignment (`withWatermarkAlignment`) no source
//! runs ahead of the others by more than a drift. The single-threaded runtime reads, batch by
//! batch, the open input whose watermark is lowest, so no bounded input runs ahead of the
//! others and the state held for the windows the slowest one holds back stays small.
//!
//! Here each input has a chunker of its own ([`Chunker`], its chunks numbered by the input),
//! and one reader at a time merges them into the job's chunks, numbered from 0: it keeps the
//! next chunk of every open input read ahead and takes the one whose first event time is the
//! lowest (the first input of equals; a chunk whose first record has no time goes first), after
//! the first chunk of every input (an input not read yet has the lowest watermark, and holds
//! every other input's windows until it has one, as for the single-threaded runtime). The
//! choice depends on the inputs' bytes and the chunk size only, so every worker and every
//! process of a cluster sees the same chunks in the same order, for any number of workers. A
//! chunk says which input it is of, which inputs ended before it (an empty input), and whether
//! it is its input's last: every worker ends that input there, as the single-threaded runtime
//! does when its reader reaches the input's end.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::chunks::{Chunk, Chunker, Share, Take};
use crate::clock::ChunkClock;
use window_core::time;

/// The first event time of a chunk of input `input` (`None` when no record of its first
/// lines has one), to choose the input read next.
pub(crate) type FirstTime = dyn Fn(usize, &Chunk) -> Option<i64> + Send + Sync;

/// The chunks of several inputs, in one order ([`Merged::take`]).
pub(crate) struct Merged {
    inputs: Vec<Chunker>,
    first_time: Box<FirstTime>,
    state: Mutex<State>,
    /// Held by the one worker merging the next chunk (the state is free meanwhile).
    reading: Mutex<()>,
    share: Share,
    clock: ChunkClock,
    /// Periodic watermarks: their interval, and when the last chunk was marked.
    periodic: Option<std::time::Duration>,
    /// Checkpoints: their interval (a chunk is marked for a cut once it has passed).
    checkpoints: Option<std::time::Duration>,
}

struct State {
    /// The job's chunks merged so far.
    n: Numbered,
    /// Each input's next chunk (its own index), once read ahead, with its first event time.
    ahead: Vec<Option<(Option<i64>, Chunk)>>,
    /// Each input's next chunk index of its own.
    local: Vec<u64>,
    /// Inputs whose end was read.
    ended: Vec<bool>,
    /// Inputs with a chunk merged already.
    started: Vec<bool>,
    /// Inputs that ended before any of their chunks was merged, not yet told.
    untold: Vec<u32>,
    /// When the last chunk was marked for a periodic watermark.
    marked: Option<std::time::Instant>,
    /// When the last chunk was marked for a checkpoint (from the start).
    cut_at: std::time::Instant,
    /// Each input's place after its last chunk merged: bytes through it, chunks merged.
    merged: Vec<(u64, u64)>,
}

impl Merged {
    /// The chunks of `inputs` (each numbering its own from 0, every one kept), merged by
    /// `first_time`; this process keeps those of `share`.
    pub(crate) fn new(inputs: Vec<Chunker>, first_time: Box<FirstTime>, share: Share) -> Self {
        let n = inputs.len();
        Self {
            inputs,
            first_time,
            state: Mutex::new(State {
                n: Numbered::default(),
                ahead: (0..n).map(|_| None).collect(),
                local: vec![0; n],
                ended: vec![false; n],
                started: vec![false; n],
                untold: Vec::new(),
                marked: None,
                cut_at: std::time::Instant::now(),
                merged: vec![(0, 0); n],
            }),
            reading: Mutex::new(()),
            share,
            clock: ChunkClock::System,
            periodic: None,
            checkpoints: None,
        }
    }

    /// Goes on after `cut` (each input's chunker resumed at its offset already): the job's
    /// chunks numbered on from the cut, each input where it stood in the merge then.
    fn resume(&mut self, cut: &crate::Cut) {
        let s = self.state.get_mut();
        s.n.next = cut.chunk + 1;
        for (i, at) in cut.inputs.iter().enumerate() {
            s.local[i] = at.chunks;
            s.ended[i] = at.ended;
            s.started[i] = at.chunks > 0;
            s.merged[i] = (at.offset, at.chunks);
        }
    }

    /// Where every input stands in the merge now, for a cut after the chunk just merged.
    fn positions(&self, s: &State) -> Vec<crate::cut::InputCut> {
        (0..self.inputs.len())
            .map(|i| crate::cut::InputCut {
                offset: s.merged[i].0,
                // An input none of whose chunks is merged yet is read again from its start,
                // header line included: no header in front (it was read ahead already).
                header: self.inputs[i].header().filter(|_| s.merged[i].1 > 0),
                chunks: s.merged[i].1,
                ended: s.ended[i] && s.ahead[i].is_none(),
                ..crate::cut::InputCut::default()
            })
            .collect()
    }

    /// Chunks get their processing time from `clock`; with `periodic`, a chunk is marked for
    /// a watermark as [`Chunker::with_watermarks`] marks one (no input is live here).
    pub(crate) fn with_clock(
        mut self,
        clock: ChunkClock,
        periodic: Option<std::time::Duration>,
    ) -> Self {
        self.clock = clock;
        self.periodic = periodic;
        // The first periodic watermark an interval after the start.
        self.state.get_mut().marked = Some(std::time::Instant::now());
        self
    }

    /// Chunk `index` of the job, merged now if no one has merged it yet (with the chunks before
    /// it, which stay for their workers). Each chunk is handed out once. A failed read is
    /// [`Take::Failed`] with the failing input.
    pub(crate) fn take(&self, index: u64) -> (Take, u32) {
        take_numbered(
            &self.state,
            &self.reading,
            index,
            |s| &mut s.n,
            || {
                self.merge_next();
            },
        )
    }

    /// Reads ahead the next chunk of every open input that has none, then merges the one with
    /// the lowest first event time as the job's next chunk (or records the end, or a failure).
    fn merge_next(&self) {
        for i in 0..self.inputs.len() {
            if let Err(message) = self.read_ahead(i) {
                // The chunks merged so far are whole: the failure is the next one's.
                let mut s = self.state.lock();
                s.n.failed = Some((s.n.next, i as u32, message));
                return;
            }
        }
        let mut s = self.state.lock();
        // An input not started yet goes first: its watermark is the lowest (i64::MIN), and
        // until its first chunk it holds the watermark of every input there.
        let chosen = (0..self.inputs.len())
            .filter_map(|i| {
                let first = s.ahead[i].as_ref()?.0;
                Some((first.filter(|_| s.started[i]).unwrap_or(i64::MIN), i))
            })
            .min();
        let Some((_, i)) = chosen else {
            s.n.end = Some(s.n.next);
            return;
        };
        let (_, mut chunk) = s.ahead[i].take().expect("chosen among those read ahead");
        s.started[i] = true;
        drop(s);
        // Whether this is the input's last chunk: its next one read ahead now. A failure there
        // is the job's chunk after this one.
        let read = self.read_ahead(i);
        let mut s = self.state.lock();
        let index = s.n.next;
        let ok = match read {
            Ok(()) => true,
            Err(message) => {
                s.n.failed = Some((index + 1, i as u32, message));
                false
            }
        };
        chunk.index = index;
        chunk.input = i as u32;
        chunk.ended_before = std::mem::take(&mut s.untold);
        chunk.last = ok && s.ended[i] && s.ahead[i].is_none();
        chunk.clock = self.clock.read(index);
        s.merged[i] = (chunk.end, s.merged[i].1 + 1);
        let due = self.share.marks_cuts(index)
            && self
                .checkpoints
                .is_some_and(|every| s.cut_at.elapsed() >= every);
        if due {
            s.cut_at = std::time::Instant::now();
            chunk.cut = Some(crate::cut::ChunkEnd {
                end: 0,
                header: None,
                inputs: self.positions(&s),
            });
        }
        chunk.watermark = self.periodic.is_some_and(|every| {
            let due = s.marked.is_none_or(|l| l.elapsed() >= every);
            if due {
                s.marked = Some(std::time::Instant::now());
            }
            due
        });
        if self.share.keeps(index) {
            s.n.pending.insert(index, chunk);
        }
        s.n.next += 1;
    }

    /// Reads input `i`'s next chunk ahead if it is open and has none.
    ///
    /// # Errors
    /// The read failed: the message (the input is ended).
    fn read_ahead(&self, i: usize) -> Result<(), String> {
        let local = {
            let s = self.state.lock();
            if s.ended[i] || s.ahead[i].is_some() {
                return Ok(());
            }
            s.local[i]
        };
        let taken = self.inputs[i].take(local);
        let mut s = self.state.lock();
        s.local[i] += 1;
        match taken {
            Take::Chunk(chunk) => {
                drop(s);
                let first = (self.first_time)(i, &chunk);
                self.state.lock().ahead[i] = Some((first, chunk));
                Ok(())
            }
            Take::End => {
                s.ended[i] = true;
                if local == 0 {
                    s.untold.push(i as u32);
                }
                Ok(())
            }
            Take::Failed(message) => {
                s.ended[i] = true;
                Err(message)
            }
        }
    }
}

/// The job's chunks as one reader at a time numbers them ([`Merged`],
/// [`crate::arrive::Arrivals`]), the others taking theirs.
#[derive(Debug, Default)]
pub(crate) struct Numbered {
    /// The next chunk of the job.
    pub(crate) next: u64,
    /// Chunks numbered and not yet taken.
    pub(crate) pending: BTreeMap<u64, Chunk>,
    /// Where the job's chunks end, once known.
    pub(crate) end: Option<u64>,
    /// A failed read: the job's chunk where it happened, its input and the message.
    pub(crate) failed: Option<(u64, u32, String)>,
}

impl Numbered {
    /// Whether chunk `index` is still to be numbered (no end or failure before it).
    fn to_number(&self, index: u64) -> bool {
        self.next <= index && self.end.is_none() && self.failed.is_none()
    }

    /// What a worker asking for chunk `index` gets now (the chunk, the failure there, or the
    /// end), with the input a failure is of; `None` while the chunk is still to be numbered.
    fn answer(&mut self, index: u64) -> Option<(Take, u32)> {
        if let Some(chunk) = self.pending.remove(&index) {
            let input = chunk.input;
            return Some((Take::Chunk(chunk), input));
        }
        if self.to_number(index) {
            return None;
        }
        Some(match &self.failed {
            Some((at, input, message)) if *at == index => (Take::Failed(message.clone()), *input),
            _ => (Take::End, 0),
        })
    }
}

/// Chunk `index` of the job from `state` (its numbering `n`): taken if numbered already, else
/// numbered now by `number_next` (by one worker at a time, holding `reading`; the state is
/// free meanwhile) with the chunks before it, which stay for their workers. Each chunk is handed
/// out once.
pub(crate) fn take_numbered<S>(
    state: &Mutex<S>,
    reading: &Mutex<()>,
    index: u64,
    n: impl Fn(&mut S) -> &mut Numbered,
    number_next: impl Fn(),
) -> (Take, u32) {
    loop {
        if let Some(answer) = n(&mut state.lock()).answer(index) {
            return answer;
        }
        let Some(_reading) = reading.try_lock_for(crate::chunks::LOOK_AGAIN) else {
            continue;
        };
        if !n(&mut state.lock()).to_number(index) {
            continue; // numbered by another worker while this one waited
        }
        number_next();
    }
}

/// Where a job's chunks come from: one input's chunker, or several inputs merged.
pub(crate) enum Chunks {
    One(Arc<Chunker>),
    Merged(Box<Merged>),
    /// Several inputs with a live one: as they arrive.
    Arrivals(Box<crate::arrive::Arrivals>),
}

impl Chunks {
    /// Chunk `index` of the job, and the input a failed read is of.
    pub(crate) fn take(&self, index: u64) -> (Take, u32) {
        match self {
            Chunks::One(c) => (c.take(index), 0),
            Chunks::Merged(m) => m.take(index),
            Chunks::Arrivals(a) => a.take(index),
        }
    }
}

/// Where a worker stands in each input of the job: its lines read, its maximum event time, the
/// watermark it last reported, whether it ended. The operator's watermark is the minimum of the
/// reported watermarks of the inputs not ended (Flink's `StatusWatermarkValve`; an ended
/// input counts as `i64::MAX`, as the single-threaded runtime's combiner counts it).
#[derive(Debug)]
pub(crate) struct Positions {
    at: Vec<At>,
    /// The bounded out-of-orderness of every input's watermark, in ms.
    delay: i64,
}

#[derive(Debug)]
struct At {
    name: Arc<str>,
    lines_before: u64,
    max: Option<i64>,
    reported: i64,
    ended: bool,
    /// Told idle ([`crate::arrive`]), until its next chunk with lines.
    idle: bool,
}

impl Positions {
    /// Inputs named `names` (at least one), each with a watermark `delay` ms behind its
    /// maximum event time.
    pub(crate) fn new(names: Vec<Arc<str>>, delay: i64) -> Self {
        Self {
            at: names
                .into_iter()
                .map(|name| At {
                    name,
                    lines_before: 0,
                    max: None,
                    reported: i64::MIN,
                    ended: false,
                    idle: false,
                })
                .collect(),
            delay,
        }
    }

    /// Input `i`'s name in messages.
    pub(crate) fn name(&self, i: u32) -> &Arc<str> {
        &self.at[i as usize].name
    }

    /// Input `i`'s lines before the chunk being processed.
    pub(crate) fn lines_before(&self, i: u32) -> u64 {
        self.at[i as usize].lines_before
    }

    /// Input `i`'s lines before the chunk being processed are now `lines`.
    pub(crate) fn set_lines_before(&mut self, i: u32, lines: u64) {
        self.at[i as usize].lines_before = lines;
    }

    /// Input `i`'s maximum event time rose to `t`.
    pub(crate) fn rise(&mut self, i: u32, t: i64) {
        let at = &mut self.at[i as usize];
        at.max = Some(at.max.map_or(t, |m| m.max(t)));
    }

    /// Input `i` (`None`: every input) reports its watermark: its maximum event time less the
    /// delay, less 1 (Flink's `BoundedOutOfOrdernessWatermarks`); it never goes back.
    pub(crate) fn report(&mut self, i: Option<u32>) {
        let delay = self.delay;
        let (from, to) = i.map_or((0, self.at.len()), |i| (i as usize, i as usize + 1));
        for at in &mut self.at[from..to] {
            if let Some(max) = at.max {
                let w = time::sub(time::sub(max, delay), 1);
                at.reported = at.reported.max(w);
            }
        }
    }

    /// Input `i` ended: it no longer holds the watermark back.
    pub(crate) fn end(&mut self, i: u32) {
        self.at[i as usize].ended = true;
    }

    /// Input `i` is idle (`true`: told so) or active again (`false`: a chunk of its with lines).
    pub(crate) fn set_idle(&mut self, i: u32, idle: bool) {
        self.at[i as usize].idle = idle;
    }

    /// The operator's watermark: the least of the inputs that are not idle, an ended one
    /// counting as `i64::MAX`; with every input idle, the greatest any reported (Flink's
    /// `StatusWatermarkValve`, and the single-threaded runtime's combiner); `None` when every
    /// input ended (the final watermark follows then).
    pub(crate) fn combined(&self) -> Option<i64> {
        if self.at.iter().all(|a| a.ended) {
            return None;
        }
        let counted = self.at.iter().filter(|a| a.ended || !a.idle);
        let least = counted
            .map(|a| if a.ended { i64::MAX } else { a.reported })
            .min();
        least.or_else(|| self.at.iter().map(|a| a.reported).max())
    }

    /// For a cut and its resume (one input): input 0's maximum event time and watermark.
    pub(crate) fn restore_first(&mut self, max: Option<i64>, watermark: i64) {
        self.at[0].max = max;
        self.at[0].reported = watermark;
    }

    /// For a cut of several inputs: each input's lines, maximum event time and reported
    /// watermark (whether it ended is the merge's, [`crate::cut::InputCut::ended`]).
    pub(crate) fn snapshot(&self) -> Vec<(u64, Option<i64>, i64)> {
        (self.at.iter())
            .map(|a| (a.lines_before, a.max, a.reported))
            .collect()
    }

    /// Where each of several inputs stood at a cut.
    pub(crate) fn restore(&mut self, inputs: &[crate::cut::InputCut]) {
        for (a, c) in self.at.iter_mut().zip(inputs) {
            (a.lines_before, a.max, a.reported, a.ended) = (c.lines, c.max, c.reported, c.ended);
        }
    }
}

impl Chunks {
    /// Several inputs' chunkers merged ([`Merged`]), each chunk's order decided by the first
    /// event time of its first lines as `parts` reads them; the process keeps `share`'s.
    pub(crate) fn merged<P: crate::JobParts>(
        chunkers: Vec<Chunker>,
        parts: &Arc<P>,
        how: &How<'_>,
    ) -> Self {
        let config = how.config;
        // A resume: each input's chunker reads on after its last chunk merged before the cut.
        let chunkers = match how.resume {
            Some(cut) => chunkers
                .into_iter()
                .zip(&cut.inputs)
                .map(|(c, at)| c.resumed(at.chunks, at.offset, at.header.clone()))
                .collect(),
            None => chunkers,
        };
        let parts = Arc::clone(parts);
        let first_time = move |input: usize, chunk: &Chunk| {
            let mut bytes = chunk.header.clone();
            // The first lines are enough (a bad one is passed over).
            let end = memchr::memchr_iter(b'\n', &chunk.lines)
                .nth(FIRST_LINES)
                .map_or(chunk.lines.len(), |i| i + 1);
            bytes.extend_from_slice(&chunk.lines[..end]);
            let mut reader = parts.reader(input, bytes);
            if !chunk.columns_from.is_empty() {
                reader = reader.with_csv_columns_from(&chunk.columns_from);
            }
            reader.find_map(|e| e.ok().map(|e| e.timestamp))
        };
        // The inputs' own chunkers keep every chunk: the merge needs them all.
        let mut merged = Merged::new(chunkers, Box::new(first_time), how.share)
            .with_clock(config.chunk_clock, config.watermark_interval);
        merged.checkpoints = how.interval;
        if let Some(cut) = how.resume {
            merged.resume(cut);
        }
        Chunks::Merged(Box::new(merged))
    }
}

/// How many lines of a chunk are read for its first event time, at most.
const FIRST_LINES: usize = 16;

/// What [`chunks`] builds the job's chunks with.
pub(crate) struct How<'a> {
    pub(crate) config: &'a crate::TimelyConfig,
    /// This process's chunks.
    pub(crate) share: Share,
    /// The workers' earliest processing-time timers, for a live input's empty chunks.
    pub(crate) timers: &'a Arc<crate::clock::Timers>,
    /// In a cluster: the count and hash of every byte read, in the order read.
    pub(crate) read: Option<&'a crate::end::ReadSoFar>,
    /// Checkpoints: their interval (one input only).
    pub(crate) interval: Option<std::time::Duration>,
    /// The cut a run resumes from (one input only).
    pub(crate) resume: Option<&'a crate::Cut>,
}

/// The job's chunks from `inputs`: one input's chunker (with its checkpoints' cuts), or
/// several merged in event time.
pub(crate) fn chunks<P: crate::JobParts>(
    inputs: Vec<crate::TimelyInput>,
    parts: &Arc<P>,
    how: &How<'_>,
) -> (Chunks, Option<Arc<crate::cut::Cuts>>) {
    let config = how.config;
    // Several inputs' chunkers keep every chunk: the merge needs them all, and keeps `share`'s.
    let live = inputs.iter().any(|i| i.live);
    let several_live = live && inputs.len() > 1;
    let one = inputs.len() == 1;
    let own = if inputs.len() == 1 {
        how.share
    } else {
        Share::ALL
    };
    let chunkers: Vec<Chunker> = inputs
        .into_iter()
        .map(|input| {
            let bytes = crate::end::HashRead::sharing(input.bytes, how.read);
            let chunker = Chunker::new(
                bytes,
                config.chunk_bytes,
                input.csv_delimiter,
                input.csv_header,
                own,
            );
            // Several inputs with a live one: the arrivals cut the timers' empty chunks (in
            // the job's numbering), not each input's reader.
            let timers = (input.live && !several_live).then(|| Arc::clone(how.timers));
            // Merged files are marked by the merge; a live input's own marks give the empty
            // chunk of a watermark owed while it pauses.
            let periodic = config.watermark_interval.filter(|_| live || one);
            chunker
                .with_watermarks(periodic)
                .with_clock(config.chunk_clock, timers)
                .live_if(input.live)
        })
        .collect();
    if chunkers.len() > 1 && live {
        let periodic = config.watermark_interval;
        let arrivals = crate::arrive::Arrivals::start(
            chunkers,
            config.chunk_clock,
            periodic,
            config.idle_timeout,
            Some(Arc::clone(how.timers)),
        );
        return (Chunks::Arrivals(Box::new(arrivals)), None);
    }
    // Every worker of every process leaves a part of each cut.
    let workers = config.workers.max(1) * how.share.processes.max(1) as usize;
    let groups = config.key_groups.max(1);
    if chunkers.len() > 1 {
        let cuts = how
            .interval
            .map(|_| Arc::new(crate::cut::Cuts::new(None, workers, groups)));
        return (Chunks::merged(chunkers, parts, how), cuts);
    }
    let chunker = chunkers.into_iter().next().expect("one input");
    let chunker = Arc::new(crate::cut::chunker(chunker, how.interval, how.resume));
    // In a cluster, no cut where a signal stopped the job (the workers leave those parts in
    // their own process, and only process 0 takes cuts): the last periodic one stands.
    let stop_cut = (how.share.processes <= 1).then(|| Arc::clone(&chunker));
    let cuts = how
        .interval
        .map(|_| Arc::new(crate::cut::Cuts::new(stop_cut, workers, groups)));
    (Chunks::One(chunker), cuts)
}

/// Refuses what the runtime does not run with `inputs`: none; several with a live one and
/// checkpoints (the chunks' order is the arrival's, which a resume could not read again; the
/// single-threaded runtime refuses a live input with checkpoints too).
///
/// # Errors
/// [`crate::TimelyError::Inputs`] for no input; [`crate::TimelyError::Checkpoint`] for
/// checkpoints of several inputs with a live one.
pub(crate) fn check_inputs(
    inputs: &[crate::TimelyInput],
    checkpoints: bool,
) -> Result<(), crate::TimelyError> {
    if inputs.is_empty() {
        return Err(crate::TimelyError::Inputs("a job needs an input".into()));
    }
    if checkpoints && inputs.len() > 1 {
        if let Some(live) = inputs.iter().find(|i| i.live) {
            return Err(crate::TimelyError::Checkpoint(format!(
                "{} is a live input (stdin, a pipe, a socket): it cannot be read again on a \
                 resume",
                live.name
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunker(text: &str, bytes: usize) -> Chunker {
        let input = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
        Chunker::new(input, bytes, Some(b','), true, Share::ALL)
    }

    /// The time of the first line of `lines` that starts with a number.
    fn first(lines: &[u8]) -> Option<i64> {
        let text = std::str::from_utf8(lines).ok()?;
        text.lines().find_map(|l| l.split(',').next()?.parse().ok())
    }

    #[test]
    fn chunks_merge_as_a_naive_model_of_the_rule_says() {
        let mut seed = 0x3e76_u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for round in 0..40 {
            let inputs: Vec<String> = (0..1 + next(4))
                .map(|_| {
                    let mut text = String::from("t,k,v\n");
                    let mut t = next(50) as i64;
                    for _ in 0..next(30) {
                        t += next(5) as i64;
                        text.push_str(&format!("{},k,1\n", t - next(3) as i64));
                        if next(10) == 0 {
                            text.push_str("bad,k,1\n");
                        }
                    }
                    text
                })
                .collect();
            let bytes = 8 + next(40) as usize;
            // The model: each input's chunks as its own chunker cuts them; the first chunk of
            // each input in input order, then the least first time (the first input of
            // equals; no time first).
            let mut own: Vec<std::collections::VecDeque<Vec<u8>>> = inputs
                .iter()
                .map(|t| {
                    let c = chunker(t, bytes);
                    (0..)
                        .map_while(|i| match c.take(i) {
                            Take::Chunk(ch) => Some(ch.lines),
                            _ => None,
                        })
                        .collect()
                })
                .collect();
            let mut want = Vec::new();
            let mut started = vec![false; inputs.len()];
            let mut ended_before: Vec<u32> = (0..inputs.len())
                .filter(|&i| own[i].is_empty())
                .map(|i| i as u32)
                .collect();
            loop {
                let pick = (0..own.len())
                    .filter_map(|i| {
                        let lines = own[i].front()?;
                        let t = first(lines).filter(|_| started[i]).unwrap_or(i64::MIN);
                        Some((t, i))
                    })
                    .min();
                let Some((_, i)) = pick else { break };
                started[i] = true;
                let lines = own[i].pop_front().expect("picked");
                let last = own[i].is_empty();
                want.push((i as u32, lines, std::mem::take(&mut ended_before), last));
            }
            let merged = Merged::new(
                inputs.iter().map(|t| chunker(t, bytes)).collect(),
                Box::new(|_, c: &Chunk| first(&c.lines)),
                Share::ALL,
            );
            let got: Vec<(u32, Vec<u8>, Vec<u32>, bool)> = (0..)
                .map_while(|i| match merged.take(i).0 {
                    Take::Chunk(c) => {
                        assert_eq!(c.index, i);
                        Some((c.input, c.lines, c.ended_before, c.last))
                    }
                    _ => None,
                })
                .collect();
            // An input with no chunk at all when every input is empty: no chunk tells it.
            if want.is_empty() {
                assert!(got.is_empty(), "round {round}");
                continue;
            }
            assert_eq!(
                got, want,
                "round {round}: {inputs:?}, chunks of {bytes} bytes"
            );
        }
    }
}
