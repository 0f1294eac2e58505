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

use parking_lot::Mutex;

/// How often a worker waiting for the input looks whether its chunk was read meanwhile.
const LOOK_AGAIN: std::time::Duration = std::time::Duration::from_millis(10);

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
            }),
            chunk_bytes: chunk_bytes.max(1),
            csv,
            csv_header,
            csv_columns: csv.is_some() && !csv_header,
            share,
        }
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
            let read = self.read_lines(&mut input, &mut lines);
            self.read_next(&mut self.state.lock(), lines, read);
        }
    }

    /// Records the next chunk, `lines` as read, in `pending`, or the end or a failure.
    fn read_next(&self, s: &mut State, mut lines: Vec<u8>, read: std::io::Result<()>) {
        if let Err(e) = read {
            // The complete lines read before the failure are read as the one-reader runtime
            // reads them; the failure is the next chunk's.
            let whole = lines.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            lines.truncate(whole);
            s.failed = Some((s.next + u64::from(!lines.is_empty()), e.to_string()));
        }
        if lines.is_empty() {
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
        let due = s.checkpoints.as_mut().is_some_and(|(every, last)| {
            let due = last.elapsed() >= *every;
            if due {
                *last = std::time::Instant::now();
            }
            due
        });
        let cut = due.then(|| crate::cut::ChunkEnd {
            end: s.consumed,
            header: s.header.clone(),
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
            let deadline = first
                .filter(|_| !no_line)
                .map(|t| t + crate::live::FLUSH_AFTER);
            if !live.wait_until(deadline) {
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
mod tests {
    use super::*;

    fn chunker(text: &str, bytes: usize, header: bool) -> Chunker {
        Chunker::new(
            Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
            bytes,
            Some(b','),
            header,
            Share::ALL,
        )
    }

    /// Every chunk's lines, taken in order.
    fn all_chunks(c: &Chunker) -> Vec<String> {
        let mut chunks = Vec::new();
        for i in 0.. {
            match c.take(i) {
                Take::Chunk(ch) => chunks.push(String::from_utf8(ch.lines).expect("utf-8")),
                _ => break,
            }
        }
        chunks
    }

    #[test]
    fn a_quote_inside_an_unquoted_field_opens_nothing() {
        // `a"b` is taken literally by the CSV reader; the record after it is quoted over two
        // lines and must stay whole.
        let text = "t,k,v\n1,a\"b,1\n2,\"x\ny\",2\n3,c,3\n";
        let c = chunker(text, 1, true);
        let chunks = all_chunks(&c);
        assert_eq!(
            chunks,
            ["t,k,v\n", "1,a\"b,1\n", "2,\"x\ny\",2\n", "3,c,3\n"]
        );
    }

    #[test]
    fn a_quoted_line_break_is_never_a_cut() {
        let text = "t,k,v\n1,\"a\nb\",1\n2,\"c\"\"\nd\",2\n3,e,3\n";
        let c = chunker(text, 1, true);
        let chunks = all_chunks(&c);
        assert_eq!(
            chunks,
            ["t,k,v\n", "1,\"a\nb\",1\n", "2,\"c\"\"\nd\",2\n", "3,e,3\n"]
        );
    }

    #[test]
    fn chunks_are_whole_lines_in_any_order_of_taking() {
        let text = "t,k,v\n1,a,1\n2,b,22\n3,c,333\n4,d,4";
        let c = chunker(text, 7, true);
        // Taken out of order, as workers do.
        let Take::Chunk(two) = c.take(2) else {
            panic!("chunk 2")
        };
        let Take::Chunk(zero) = c.take(0) else {
            panic!("chunk 0")
        };
        let Take::Chunk(one) = c.take(1) else {
            panic!("chunk 1")
        };
        assert_eq!(zero.lines, b"t,k,v\n1,a,1\n");
        assert!(zero.header.is_empty());
        assert_eq!(one.lines, b"2,b,22\n");
        assert_eq!(one.header, b"t,k,v\n");
        assert_eq!(two.lines, b"3,c,333\n");
        let Take::Chunk(three) = c.take(3) else {
            panic!("chunk 3")
        };
        assert_eq!(three.lines, b"4,d,4");
        assert!(matches!(c.take(4), Take::End));
        // Handed out once.
        assert!(matches!(c.take(1), Take::End));
        let joined: Vec<u8> = [zero, one, two, three]
            .into_iter()
            .flat_map(|c| c.lines)
            .collect();
        assert_eq!(joined, text.as_bytes());
    }

    #[test]
    fn the_header_is_the_first_non_blank_line_and_json_has_none() {
        // Chunk 0 is blank lines only; chunk 1 holds the header.
        let c = chunker("\n  \n\u{feff}t,k,v\r\n1,a,1\n2,a,2\n", 4, true);
        for (i, header) in [
            (0, &b""[..]),
            (1, b""),
            (2, b"\xEF\xBB\xBFt,k,v\r\n"),
            (3, b"\xEF\xBB\xBFt,k,v\r\n"),
        ] {
            let Take::Chunk(chunk) = c.take(i) else {
                panic!("chunk {i}")
            };
            assert_eq!(chunk.header, header, "chunk {i}");
        }
        let c = chunker("{\"t\":1}\n{\"t\":2}\n", 4, false);
        let _ = c.take(0);
        let Take::Chunk(later) = c.take(1) else {
            panic!("chunk 1")
        };
        assert!(later.header.is_empty());
        assert_eq!(
            first_line(b"\xEF\xBB\xBFt\n"),
            Some(&b"\xEF\xBB\xBFt\n"[..])
        );
        assert_eq!(first_line(b" \n\t\n"), None);
    }

    #[test]
    fn a_process_keeps_only_its_workers_chunks() {
        let text = "t,k,v\n1,a,1\n2,b,2\n3,c,3\n4,d,4\n5,e,5\n";
        // Two processes of two workers: process 1 holds workers 2 and 3.
        let share = Share {
            threads: 2,
            process: 1,
            processes: 2,
        };
        let c = Chunker::new(
            Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
            1,
            Some(b','),
            true,
            share,
        );
        let Take::Chunk(three) = c.take(3) else {
            panic!("chunk 3")
        };
        assert_eq!(three.lines, b"3,c,3\n");
        assert_eq!(three.header, b"t,k,v\n");
        // Chunks 0 and 1 were read and dropped, not kept for anyone.
        assert_eq!(c.state.lock().pending.len(), 1);
        assert!(matches!(c.take(0), Take::End));
        let Take::Chunk(two) = c.take(2) else {
            panic!("chunk 2")
        };
        assert_eq!(two.lines, b"2,b,2\n");
        assert!(matches!(c.take(6), Take::End));
        assert!(c.state.lock().pending.is_empty());
        assert!(!share.keeps(4) && share.keeps(6) && share.keeps(7) && Share::ALL.keeps(4));
    }

    #[test]
    fn a_read_error_is_reported_once_where_it_happened() {
        struct Failing(u8);
        impl std::io::Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                if self.0 == 0 {
                    return Err(std::io::Error::other("disk on fire"));
                }
                self.0 -= 1;
                buf[..2].copy_from_slice(b"a\n");
                Ok(2)
            }
        }
        let c = Chunker::new(
            Box::new(std::io::BufReader::new(Failing(2))),
            2,
            None,
            false,
            Share::ALL,
        );
        assert!(matches!(c.take(0), Take::Chunk(_)));
        assert!(matches!(c.take(3), Take::End));
        assert!(matches!(c.take(1), Take::Chunk(_)));
        match c.take(2) {
            Take::Failed(m) => assert_eq!(m, "disk on fire"),
            other => panic!("{other:?}"),
        }
    }

    /// The chunks of a live CSV input with a header (chunk size 64 KiB): `first`, then each of
    /// `parts` after a pause of three times [`crate::live::FLUSH_AFTER`].
    fn live_chunks(first: &[u8], parts: &[&[u8]]) -> Vec<String> {
        let (fed, send) = crate::live::tests::Fed::new(first);
        let input = std::io::BufReader::new(fed);
        let c = Chunker::new(Box::new(input), 1 << 16, Some(b','), true, Share::ALL).live_if(true);
        let parts: Vec<Vec<u8>> = parts.iter().map(|p| p.to_vec()).collect();
        let feed = std::thread::spawn(move || {
            for part in parts {
                std::thread::sleep(crate::live::FLUSH_AFTER * 3);
                send.send(part).expect("send");
            }
            std::thread::sleep(crate::live::FLUSH_AFTER * 3);
        });
        let chunks = all_chunks(&c);
        feed.join().expect("feed");
        chunks
    }

    #[test]
    fn a_live_input_is_cut_where_it_pauses_at_a_whole_line_outside_quotes() {
        // The line goes on after a pause; then a quoted field with a line break spans a pause
        // (the line end in it is no place to cut). Far below the chunk size, each chunk ends
        // where the input paused, at its last whole record (the line cut by the first pause
        // goes on in the next chunk).
        let parts: [&[u8]; 4] = [b"a,1\n", b"3,\"x\n", b"y\",1\n", b"4,a,1\n"];
        assert_eq!(
            live_chunks(b"t,k,v\n1,a,1\n2,", &parts),
            ["t,k,v\n1,a,1\n", "2,a,1\n", "3,\"x\ny\",1\n", "4,a,1\n"]
        );
    }

    #[test]
    fn a_live_input_that_pauses_inside_a_line_is_cut_at_its_last_whole_record() {
        // A producer's block ends inside a line; the next one inside a quoted field whose line
        // break is no record's end.
        let parts: [&[u8]; 2] = [b",1\n3,\"x\ny", b"\",1\n"];
        assert_eq!(
            live_chunks(b"t,k,v\n1,a,1\n2,a", &parts),
            ["t,k,v\n1,a,1\n", "2,a,1\n", "3,\"x\ny\",1\n"]
        );
        assert_eq!(
            last_record_end(b"1,\"a\nb\",1\n2,\"c\n", Some(b',')),
            Some(10)
        );
        assert_eq!(last_record_end(b"{}\n{", None), Some(3));
        assert_eq!(last_record_end(b"1,\"a\n", Some(b',')), None);
    }

    #[test]
    fn a_worker_waiting_for_the_input_takes_its_chunk_read_meanwhile() {
        // Worker B asks for chunk 0 while worker A reads it; A then goes on to wait on a live
        // input for chunk 1, holding the input (a job of the fresh-user trial hung so with 3
        // workers, 1 run in 3: B waited for the input's lock, which A took again at once).
        let c = std::sync::Arc::new(chunker("", 12, false));
        let reading = c.input.lock(); // A
        let (got, taken) = std::sync::mpsc::channel();
        let b = {
            let c = std::sync::Arc::clone(&c);
            std::thread::spawn(move || got.send(c.take(0)).expect("send"))
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        {
            // A has read chunk 0 and goes on, still holding the input.
            let mut s = c.state.lock();
            s.next = 1;
            let chunk = Chunk {
                index: 0,
                header: Vec::new(),
                columns_from: Vec::new(),
                lines: b"1,a,1\n2,a,1\n".to_vec(),
                cut: None,
                end: 12,
            };
            s.pending.insert(0, chunk);
        }
        let zero = taken
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("chunk 0 handed out while A holds the input");
        match zero {
            Take::Chunk(chunk) => assert_eq!(chunk.lines, b"1,a,1\n2,a,1\n"),
            other => panic!("{other:?}"),
        }
        drop(reading);
        b.join().expect("join");
    }

    #[test]
    fn a_worker_waiting_on_a_live_input_holds_up_no_chunk_read_already() {
        let (fed, send) = crate::live::tests::Fed::new(b"1,a,1\n2,a,1\n3,a,1\n");
        let input = std::io::BufReader::new(fed);
        let c = std::sync::Arc::new(Chunker::new(
            Box::new(input),
            12,
            Some(b','),
            false,
            Share::ALL,
        ));
        // A worker asks for chunk 1: it reads chunk 0 (for another worker), then waits for
        // chunk 1's bytes, which have not come.
        let waiting = {
            let c = std::sync::Arc::clone(&c);
            std::thread::spawn(move || c.take(1))
        };
        std::thread::sleep(std::time::Duration::from_millis(100));
        // Chunk 0 is read already: the other worker takes it now, not when more input comes.
        let (got, taken) = std::sync::mpsc::channel();
        let other = {
            let c = std::sync::Arc::clone(&c);
            std::thread::spawn(move || got.send(c.take(0)).expect("send"))
        };
        let zero = taken
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("chunk 0 handed out while chunk 1 waits for input");
        match zero {
            Take::Chunk(chunk) => assert_eq!(chunk.lines, b"1,a,1\n2,a,1\n"),
            other => panic!("{other:?}"),
        }
        send.send(b"4,a,1\n".to_vec()).expect("send");
        drop(send);
        match waiting.join().expect("join") {
            Take::Chunk(chunk) => assert_eq!(chunk.lines, b"3,a,1\n4,a,1\n"),
            other => panic!("{other:?}"),
        }
        other.join().expect("join");
    }
}
