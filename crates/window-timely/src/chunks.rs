//! Cutting an input into chunks of whole lines, which the workers take in turn.
//!
//! Chunk `c` is the lines that follow chunk `c - 1` up to the first line end at or after
//! `chunk_bytes` bytes, so the cut depends on the input and the chunk size only, never on the
//! number of workers. One reader, behind a lock, reads the input in order (a `.gz` file is
//! decompressed there, as every reader of this workspace decompresses it); a worker that asks for
//! a chunk no one has read yet reads the chunks before it too and leaves them for their workers.
//! Reading bytes is cheap next to parsing them, and parsing runs on the workers in parallel.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;

use crate::clock::{ChunkClock, Timers, LOOK_AGAIN as LOOK_AT_TIMERS};

/// The chunk size of [`crate::TimelyConfig::new`]: 64 KiB.
pub const DEFAULT_CHUNK_BYTES: usize = 64 << 10;

/// The fan-out up to which [`chunk_bytes_for_fan_out`] keeps [`DEFAULT_CHUNK_BYTES`].
const FULL_CHUNKS_UP_TO: u64 = 256;

/// The least chunk size [`chunk_bytes_for_fan_out`] gives: below it the cost of a chunk
/// (about 40 us of progress tracking and parser set-up, two workers) outweighs its events.
const MIN_CHUNK_BYTES: usize = 4 << 10;

/// The chunk size for a job whose elements each fall into `fan_out` windows (a sliding
/// window's size / slide, rounded up; 1 for tumbling, session, global and count windows).
///
/// The rows a chunk fires are held until every worker is past the chunk and the writer has
/// them all (module `sink`), and on many sparse keys they are about the chunk's events times
/// `fan_out`: `sliding:1d:1s` (86,400) over 64 KiB of flights fired some 20 M rows a chunk, and
/// a run with two workers took 2.7 GB where one thread takes 10 MB. So above a fan-out of 256
/// the chunk shrinks in proportion, to 4 KiB at most (`MIN_CHUNK_BYTES`): the rows a chunk
/// holds then grow no further with the fan-out until it reaches 4096. Up to 256 (the
/// benchmarks' 60 s / 500 ms is 120, the default job's 1 h / 5 min 12) it is
/// [`DEFAULT_CHUNK_BYTES`]. The output does not depend on the chunk size.
#[must_use]
pub fn chunk_bytes_for_fan_out(fan_out: u64) -> usize {
    if fan_out <= FULL_CHUNKS_UP_TO {
        return DEFAULT_CHUNK_BYTES;
    }
    let scaled = DEFAULT_CHUNK_BYTES as u64 * FULL_CHUNKS_UP_TO / fan_out;
    usize::try_from(scaled).map_or(DEFAULT_CHUNK_BYTES, |b| b.max(MIN_CHUNK_BYTES))
}

/// How often a worker waiting for the input looks whether its chunk was read meanwhile.
pub(crate) const LOOK_AGAIN: std::time::Duration = std::time::Duration::from_millis(10);

/// One chunk of whole lines.
#[derive(Debug)]
pub(crate) struct Chunk {
    /// Its place in the input, from 0.
    pub(crate) index: u64,
    /// The CSV header line (with its line end) put in front of the chunk's lines, for a chunk
    /// other than the first one of a CSV input with a header; empty otherwise.
    pub(crate) header: Vec<u8>,
    /// For a CSV input without a header, the input's first record (with its line end), from
    /// which a chunk after the one that holds it takes its columns (the field count and where
    /// the time, key and value are), as one reader of the whole input takes them from that
    /// record ([`window_io::EventReader::with_csv_columns_from`]); empty otherwise.
    pub(crate) columns_from: Vec<u8>,
    /// The chunk's lines, with their line ends (the last one of the input may have none).
    pub(crate) lines: Vec<u8>,
    /// Set when a checkpoint follows this chunk: where it ends ([`crate::cut`]).
    pub(crate) cut: Option<crate::cut::ChunkEnd>,
    /// Bytes of the input through the end of the chunk.
    pub(crate) end: u64,
    /// With periodic watermarks: whether the watermark is emitted after this chunk
    /// ([`Chunker::with_watermarks`]).
    pub(crate) watermark: bool,
    /// Its processing time: the clock when it was cut, in ms ([`crate::clock`]).
    pub(crate) clock: i64,
    /// The input it is of (from 0, in the order the job names them; [`crate::merge`]).
    pub(crate) input: u32,
    /// Inputs that ended before any chunk of theirs (empty inputs), not yet told.
    pub(crate) ended_before: Vec<u32>,
    /// Whether it is its input's last chunk (several inputs: its input ends after it).
    pub(crate) last: bool,
    /// Inputs that went idle before it ([`crate::arrive`]).
    pub(crate) idle: Vec<u32>,
}

/// How a chunk was cut, besides its lines.
#[derive(Clone, Copy, Debug)]
struct HowCut {
    /// An empty chunk that carries a periodic watermark ([`Periodic::owed_at`]), not the end.
    tick: bool,
    /// Whether the watermark is emitted after the chunk ([`Chunk::watermark`]).
    watermark: bool,
    /// Its processing time ([`Chunk::clock`]).
    clock: i64,
}

/// What a worker gets for the chunk it asks for.
#[derive(Debug)]
pub(crate) enum Take {
    /// The chunk.
    Chunk(Chunk),
    /// The input ended before this chunk.
    End,
    /// Reading failed where this chunk begins: the message names what failed. Chunks after it
    /// are [`Take::End`].
    Failed(String),
}

/// The shared reader of one input.
pub(crate) struct Chunker {
    state: Mutex<State>,
    /// The input, held by the one worker reading the next chunk; the state's lock is not held
    /// while it reads, so that a worker whose chunk was read already takes it meanwhile (a
    /// reader waiting on a live stdin holds up no one else's chunk).
    input: Mutex<Input>,
    chunk_bytes: usize,
    /// A CSV input's delimiter; `None` for JSON lines.
    csv: Option<u8>,
    /// Whether the input is CSV with a header line that later chunks need in front.
    csv_header: bool,
    /// Whether the input is CSV without a header: later chunks take their columns from its
    /// first record ([`Chunk::columns_from`]).
    csv_columns: bool,
    /// Which chunks this process's workers take; the others are read (the cut needs every
    /// byte before it) and dropped.
    share: Share,
    /// Where chunks get their processing time.
    clock: ChunkClock,
    /// The workers' earliest processing-time timers, for a live input's empty chunks.
    timers: Option<Arc<Timers>>,
}

/// The chunks of one process of a cluster: worker `w` (of `threads * processes`, process `p`
/// holding workers `p * threads ..`) takes chunks `w`, `w + workers` ...
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Share {
    /// Worker threads per process.
    pub(crate) threads: u64,
    /// This process's index.
    pub(crate) process: u64,
    /// The number of processes.
    pub(crate) processes: u64,
}

impl Share {
    /// One process: every chunk.
    pub(crate) const ALL: Share = Share {
        threads: 1,
        process: 0,
        processes: 1,
    };

    /// Whether chunk `index` is one of this process's workers'.
    pub(crate) fn keeps(self, index: u64) -> bool {
        self.processes <= 1
            || (index % (self.threads * self.processes)) / self.threads == self.process
    }

    /// Whether this process may mark chunk `index` for a checkpoint: one of process 0's own
    /// (process 0 keeps the checkpoints, and its clock alone decides when one is due, as
    /// Flink's checkpoint coordinator: one per interval in a cluster too).
    pub(crate) fn marks_cuts(self, index: u64) -> bool {
        self.process == 0 && self.keeps(index)
    }
}

impl std::fmt::Debug for Chunker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chunker")
            .field("chunk_bytes", &self.chunk_bytes)
            .finish_non_exhaustive()
    }
}

/// The input and where its reading stands with respect to quotes.
struct Input {
    bytes: Bytes,
    /// For CSV (whose quoted fields may hold line breaks): where the stream read so far stands
    /// with respect to quoted fields, by the CSV reader's own rule; a chunk is cut only at a
    /// line end outside quotes.
    quotes: Option<window_io::CsvQuotes>,
    /// With periodic watermarks: when the next chunk is marked for one.
    periodic: Option<Periodic>,
    /// Set where a live input's read ended with no bytes because a watermark or a timer came
    /// due ([`Chunker::tick_at`]): an empty chunk carries it.
    tick: bool,
    /// The last chunk cut and its processing time: a worker that has not processed it yet
    /// fires its timers before that time with it.
    last_cut: Option<(u64, i64)>,
}

/// Periodic watermarks of a chunker ([`Chunker::with_watermarks`]).
struct Periodic {
    every: std::time::Duration,
    /// When the last chunk was marked; `None` before the first.
    last: Option<std::time::Instant>,
    /// Whether a chunk with lines was cut unmarked since: their watermark is owed.
    owed: bool,
}

impl Periodic {
    /// When the watermark owed to chunks cut unmarked comes due: a live input that pauses
    /// until then gets an empty chunk that carries it.
    fn owed_at(&self) -> Option<std::time::Instant> {
        self.last.filter(|_| self.owed).map(|l| l + self.every)
    }

    /// Whether the chunk just cut is marked (`lines`: whether it has any; an empty chunk cut
    /// when the watermark owed came due is marked, as the interval has passed then).
    fn mark(&mut self, lines: bool) -> bool {
        let due = self.last.is_none_or(|l| l.elapsed() >= self.every);
        if due {
            self.last = Some(std::time::Instant::now());
            self.owed = false;
        } else {
            self.owed |= lines;
        }
        due
    }
}

/// An input's bytes: ready to read (a file), or coming when they come (stdin, a pipe).
enum Bytes {
    /// A chunk is cut by its size.
    Ready(Box<dyn BufRead + Send>),
    /// A chunk is also cut once [`crate::live::FLUSH_AFTER`] has passed since its first byte.
    Live(crate::live::LiveBytes),
}

struct State {
    /// The index of the next chunk to read.
    next: u64,
    /// Chunks read and not yet taken.
    pending: BTreeMap<u64, Chunk>,
    /// Where the input ended (the number of chunks), once known.
    end: Option<u64>,
    /// A read error, at the chunk where it happened.
    failed: Option<(u64, String)>,
    /// The CSV header line, once read.
    header: Option<Vec<u8>>,
    /// Bytes of the input read into chunks so far.
    consumed: u64,
    /// How often a chunk is marked for a checkpoint, and when the last mark was.
    checkpoints: Option<(std::time::Duration, std::time::Instant)>,
}

/// Whether a line (without its terminator) is blank as the readers see it: only spaces and
/// tabs (the CSV readers skip such lines before the header and between records).
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| b == b' ' || b == b'\t' || b == b'\r')
}

/// The first non-blank line of `bytes` (with its line end), after a UTF-8 byte order mark.
fn first_line(bytes: &[u8]) -> Option<&[u8]> {
    let mut rest = bytes;
    while !rest.is_empty() {
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(rest.len(), |i| i + 1);
        let (line, tail) = rest.split_at(end);
        let text = line.strip_suffix(b"\n").unwrap_or(line);
        let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        if !is_blank(text) {
            return Some(line);
        }
        rest = tail;
    }
    None
}

impl Chunker {
    /// A chunker over `input`, cutting after `chunk_bytes` bytes (at least 1); `csv`: a CSV
    /// input's delimiter; `csv_header` when its first non-blank line is a header.
    pub(crate) fn new(
        input: Box<dyn BufRead + Send>,
        chunk_bytes: usize,
        csv: Option<u8>,
        csv_header: bool,
        share: Share,
    ) -> Self {
        Self {
            state: Mutex::new(State {
                next: 0,
                pending: BTreeMap::new(),
                end: None,
                failed: None,
                header: None,
                consumed: 0,
                checkpoints: None,
            }),
            input: Mutex::new(Input {
                bytes: Bytes::Ready(input),
                quotes: csv.map(window_io::CsvQuotes::new),
                periodic: None,
                tick: false,
                last_cut: None,
            }),
            chunk_bytes: chunk_bytes.max(1),
            csv,
            csv_header,
            csv_columns: csv.is_some() && !csv_header,
            share,
            clock: ChunkClock::System,
            timers: None,
        }
    }

    /// Chunks get their processing time from `clock`; with `timers` (the workers' earliest
    /// processing-time timers), a live input that pauses gets an empty chunk once one is due,
    /// which takes the clock to every worker ([`crate::clock`]).
    pub(crate) fn with_clock(mut self, clock: ChunkClock, timers: Option<Arc<Timers>>) -> Self {
        self.clock = clock;
        self.timers = timers;
        self
    }

    /// With `live`, reads the input as a live one (stdin, a pipe) on a thread of its own,
    /// cutting a chunk also once it holds whole lines and [`crate::live::FLUSH_AFTER`] has
    /// passed since its first byte came: a slow feed's lines are windowed as they come, not once
    /// 64 KiB of them have. (Where the thread cannot be started, the input is read as a file is:
    /// the same output, later.)
    pub(crate) fn live_if(self, live: bool) -> Self {
        let mut input = self.input.into_inner();
        input.bytes = match input.bytes {
            Bytes::Ready(r) if live => match crate::live::LiveBytes::start(r) {
                Ok(l) => Bytes::Live(l),
                Err(r) => Bytes::Ready(r),
            },
            bytes => bytes,
        };
        Self {
            input: Mutex::new(input),
            ..self
        }
    }

    /// Marks a chunk for a checkpoint every `interval` (wall clock, from now).
    pub(crate) fn with_checkpoints(mut self, interval: std::time::Duration) -> Self {
        self.state.get_mut().checkpoints = Some((interval, std::time::Instant::now()));
        self
    }

    /// Marks a chunk for a watermark (periodic watermarks, Flink's `autoWatermarkInterval`):
    /// the first chunk cut once `interval` has passed (wall clock) since the start or the last
    /// mark (as Flink's periodic emitter, and the single-threaded runtime, first emit an
    /// interval after the start). Where a live input pauses with chunks cut unmarked since the last mark,
    /// an empty chunk, marked, is cut once the interval has passed, as Flink's periodic emitter
    /// emits the watermark of the elements before a pause without waiting for more. The
    /// workers emit the watermark after a marked chunk only: the watermarks all workers apply
    /// are the same, whatever the clock said.
    /// `None`: no marks (a watermark after every element).
    pub(crate) fn with_watermarks(mut self, interval: Option<std::time::Duration>) -> Self {
        self.input.get_mut().periodic = interval.map(|every| Periodic {
            every,
            last: Some(Instant::now()),
            owed: false,
        });
        self
    }

    /// A chunker whose input stands after `consumed` bytes, the end of chunk `next - 1`
    /// (a resume): chunks are numbered on from `next`, with `header` in front of each.
    pub(crate) fn resumed(mut self, next: u64, consumed: u64, header: Option<Vec<u8>>) -> Self {
        let s = self.state.get_mut();
        s.next = next;
        s.consumed = consumed;
        s.header = header;
        self
    }

    /// The CSV header line, once read.
    pub(crate) fn header(&self) -> Option<Vec<u8>> {
        self.state.lock().header.clone()
    }

    /// Chunk `index`: read now if no one has read it yet (with the chunks before it, which stay
    /// for their workers). Each chunk is handed out once.
    pub(crate) fn take(&self, index: u64) -> Take {
        loop {
            let to_read = |s: &State| s.next <= index && s.end.is_none() && s.failed.is_none();
            {
                let mut s = self.state.lock();
                if let Some(chunk) = s.pending.remove(&index) {
                    return Take::Chunk(chunk);
                }
                if !to_read(&s) {
                    return match &s.failed {
                        Some((at, message)) if *at == index => Take::Failed(message.clone()),
                        _ => Take::End,
                    };
                }
            }
            // One chunk at a time, by one worker at a time; the state is free meanwhile. A
            // worker that waits for the input looks at the chunks read meanwhile every 10 ms:
            // the one reading (a live input that pauses) may read this worker's chunk and then
            // wait for the next one, holding the input (the lock is not fair: it takes it
            // again at once).
            let Some(mut input) = self.input.try_lock_for(LOOK_AGAIN) else {
                continue;
            };
            if !to_read(&self.state.lock()) {
                continue; // read by another worker while this one waited
            }
            let mut lines = Vec::with_capacity(self.chunk_bytes + 4096);
            input.tick = false;
            let read = self.read_lines(&mut input, &mut lines);
            let tick = input.tick;
            let watermark = match &mut input.periodic {
                Some(p) if read.is_ok() && (tick || !lines.is_empty()) => p.mark(!lines.is_empty()),
                _ => false,
            };
            let next = self.state.lock().next;
            let clock = self.clock.read(next);
            input.last_cut = Some((next, clock));
            let cut = HowCut {
                tick,
                watermark,
                clock,
            };
            self.read_next(&mut self.state.lock(), lines, read, cut);
        }
    }

    /// Records the next chunk, `lines` as read, in `pending`, or the end or a failure.
    fn read_next(&self, s: &mut State, mut lines: Vec<u8>, read: std::io::Result<()>, how: HowCut) {
        if let Err(e) = read {
            // The complete lines read before the failure are read as the one-reader runtime
            // reads them; the failure is the next chunk's.
            let whole = lines.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            lines.truncate(whole);
            s.failed = Some((s.next + u64::from(!lines.is_empty()), e.to_string()));
        }
        if lines.is_empty() && !how.tick {
            if s.failed.is_none() {
                s.end = Some(s.next);
            }
            return;
        }
        let index = s.next;
        // The header is the input's first non-blank line: the chunks after the one that holds
        // it get it in front.
        // Without a header, the first non-blank line is the first record: later chunks take
        // their columns from it (kept in the same place, and in a checkpoint's cut).
        let (header, columns_from) = match &s.header {
            Some(h) if self.csv_header => (h.clone(), Vec::new()),
            Some(h) => (Vec::new(), h.clone()),
            None => {
                if self.csv_header || self.csv_columns {
                    s.header = first_line(&lines).map(<[u8]>::to_vec);
                }
                (Vec::new(), Vec::new())
            }
        };
        s.consumed += lines.len() as u64;
        let mine = self.share.marks_cuts(index);
        let due = s.checkpoints.as_mut().is_some_and(|(every, last)| {
            let due = mine && last.elapsed() >= *every;
            if due {
                *last = std::time::Instant::now();
            }
            due
        });
        let cut = due.then(|| crate::cut::ChunkEnd {
            end: s.consumed,
            header: s.header.clone(),
            inputs: Vec::new(),
        });
        if self.share.keeps(index) {
            s.pending.insert(
                index,
                Chunk {
                    index,
                    header,
                    columns_from,
                    lines,
                    cut,
                    end: s.consumed,
                    watermark: how.watermark,
                    clock: how.clock,
                    input: 0,
                    ended_before: Vec::new(),
                    last: false,
                    idle: Vec::new(),
                },
            );
        }
        s.next += 1;
    }

    /// Reads the next chunk's lines into `lines`: `chunk_bytes` bytes as the input's buffer
    /// holds them, then to the end of that line, then whole lines while the cut would fall
    /// inside a quoted CSV field. That is the first line end at or after `chunk_bytes` bytes
    /// outside quotes, as a line-by-line read finds it, without a search per line.
    fn read_lines(&self, s: &mut Input, lines: &mut Vec<u8>) -> std::io::Result<()> {
        let Bytes::Ready(bytes) = &mut s.bytes else {
            return self.read_live(s, lines);
        };
        while lines.len() < self.chunk_bytes {
            let buf = match bytes.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                break;
            }
            let n = buf.len().min(self.chunk_bytes - lines.len());
            lines.extend_from_slice(&buf[..n]);
            bytes.consume(n);
        }
        if lines.last().is_some_and(|&b| b != b'\n') {
            read_line(&mut **bytes, lines)?;
        }
        // Fed whole: the chunk ends at a line end (or the input's end).
        let Some(q) = s.quotes.as_mut() else {
            return Ok(());
        };
        q.feed(lines);
        // A line break inside a quoted CSV field is no place to cut.
        while q.in_quotes() {
            let from = lines.len();
            if read_line(&mut **bytes, lines)? == 0 {
                break;
            }
            q.feed(&lines[from..]);
        }
        Ok(())
    }

    /// When a live input that pauses gets an empty chunk: once the watermark owed to chunks cut
    /// unmarked comes due ([`Periodic::owed_at`]), or the earliest processing-time timer of the
    /// workers not fired by the last chunk cut ([`Timers::due_at`]).
    fn tick_at(
        &self,
        periodic: Option<&Periodic>,
        last_cut: Option<(u64, i64)>,
    ) -> Option<Instant> {
        let owed = periodic.and_then(Periodic::owed_at);
        let timer = self.timers.as_ref().and_then(|t| t.due_at(last_cut));
        earliest(owed, timer)
    }

    /// [`Self::read_lines`] for a live input: the chunk also ends where no byte came for the
    /// rest of [`crate::live::FLUSH_AFTER`] after its first byte: at its end if that is a line
    /// end outside quotes, else at its last such line end (the bytes after it go back to the
    /// input, for the next chunk: a producer that writes in blocks of its own size cuts lines
    /// anywhere). A chunk with no whole line waits for one.
    fn read_live(&self, s: &mut Input, lines: &mut Vec<u8>) -> std::io::Result<()> {
        let Bytes::Live(live) = &mut s.bytes else {
            return Ok(());
        };
        let mut first: Option<std::time::Instant> = None;
        // Set where the input paused with no whole line in the chunk: wait for more.
        let mut no_line = false;
        loop {
            // Whole lines, outside quotes: a place to cut.
            let whole = lines.last() == Some(&b'\n') && !s.quotes.is_some_and(|q| q.in_quotes());
            if whole && lines.len() >= self.chunk_bytes {
                return Ok(());
            }
            let deadline = match first {
                Some(t) => (!no_line).then(|| t + crate::live::FLUSH_AFTER),
                // No byte yet: wait until a watermark owed or a timer comes due, looking at the
                // timers again every so often (a worker may have set an earlier one).
                None => {
                    let look = self
                        .timers
                        .as_ref()
                        .map(|_| Instant::now() + LOOK_AT_TIMERS);
                    earliest(self.tick_at(s.periodic.as_ref(), s.last_cut), look)
                }
            };
            if !live.wait_until(deadline) {
                if first.is_none() {
                    let tick = self.tick_at(s.periodic.as_ref(), s.last_cut);
                    if tick.is_some_and(|t| t <= Instant::now()) {
                        s.tick = true;
                        return Ok(());
                    }
                    continue;
                }
                // The input paused.
                if whole {
                    return Ok(());
                }
                if let Some(cut) = last_record_end(lines, self.csv) {
                    live.unread(&lines[cut..]);
                    lines.truncate(cut);
                    // At a record's end, outside quotes; the bytes given back are fed again.
                    s.quotes = self.csv.map(window_io::CsvQuotes::new);
                    return Ok(());
                }
                no_line = true;
                continue;
            }
            no_line = false;
            let buf = live.fill_buf()?;
            if buf.is_empty() {
                return Ok(()); // the input's end
            }
            // Up to the size, then a line at a time (to its end, or the block's end).
            let n = if lines.len() < self.chunk_bytes {
                buf.len().min(self.chunk_bytes - lines.len())
            } else {
                buf.iter()
                    .position(|&b| b == b'\n')
                    .map_or(buf.len(), |i| i + 1)
            };
            lines.extend_from_slice(&buf[..n]);
            live.consume(n);
            if let Some(q) = s.quotes.as_mut() {
                q.feed(&lines[lines.len() - n..]);
            }
            first.get_or_insert_with(std::time::Instant::now);
        }
    }
}

/// The earlier of two deadlines, if any.
fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Where the last whole record of `lines` (a chunk's bytes from a record's start) ends: after
/// its last line end outside quoted CSV fields (`csv`: the delimiter; `None` for JSON lines,
/// where every line end is one); `None` without one.
fn last_record_end(lines: &[u8], csv: Option<u8>) -> Option<usize> {
    let mut quotes = csv.map(window_io::CsvQuotes::new);
    let mut fed = 0;
    let mut end = None;
    for (i, _) in lines.iter().enumerate().filter(|(_, &b)| b == b'\n') {
        if let Some(q) = quotes.as_mut() {
            q.feed(&lines[fed..=i]);
            fed = i + 1;
            if q.in_quotes() {
                continue;
            }
        }
        end = Some(i + 1);
    }
    end
}

/// Appends the rest of a line (to its `\n`, or the input's end) to `lines`; the bytes read.
fn read_line(input: &mut dyn BufRead, lines: &mut Vec<u8>) -> std::io::Result<usize> {
    loop {
        match input.read_until(b'\n', lines) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            r => return r,
        }
    }
}

#[cfg(test)]
mod tests;
