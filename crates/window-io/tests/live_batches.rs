//! A live source (stdin, a pipe, a socket) takes, in one batch, every line that has come, and
//! never waits for more once it has taken one: `ReaderSource::read_batch` over a live input.
//! Bursts of lines (random, with quoted and bad lines among them) arrive one at a time through
//! an input whose read panics when nothing has come (it would wait on a real pipe); the events
//! must equal those read from the whole text as a file, with the same line numbers.

use std::collections::VecDeque;
use std::io::{self, BufReader, Cursor};
use std::sync::{Arc, Mutex};

use window_io::batch::{Read, ReaderSource, Source};

mod common;
use common::Rng;
use window_io::{Event, EventReader, FieldNames, InputFormat, KeyDictionary, KeyId};

/// An input fed burst by burst; reading when no burst is there panics.
#[derive(Clone, Default)]
struct Bursts(Arc<Mutex<(VecDeque<u8>, bool)>>);

impl Bursts {
    fn feed(&self, bytes: &[u8]) {
        self.0.lock().unwrap().0.extend(bytes);
    }
    fn close(&self) {
        self.0.lock().unwrap().1 = true;
    }
    fn is_drained(&self) -> bool {
        self.0.lock().unwrap().0.is_empty()
    }
}

impl io::Read for Bursts {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut inner = self.0.lock().unwrap();
        let (bytes, closed) = &mut *inner;
        assert!(
            !bytes.is_empty() || *closed,
            "the source read on although the lines that had come were taken: a live input \
             would wait here"
        );
        let n = bytes.len().min(buf.len());
        for (b, x) in buf.iter_mut().zip(bytes.drain(..n)) {
            *b = x;
        }
        Ok(n)
    }
}

/// Random lines, each ending in a line break, and whether it is a plain record (taken with
/// the others in one batch): mostly plain records, some quoted (CSV), some bad.
fn lines(rng: &mut Rng, n: usize, format: InputFormat) -> Vec<(Vec<u8>, bool)> {
    if format == InputFormat::Jsonl {
        return (0..n)
            .map(|i| {
                let (line, plain) = match rng.below(12) {
                    0 => (format!("{{\"event_time_ms\":{i},\"key\":\"k\"}}\n"), false),
                    1 => (
                        format!("{{\"event_time_ms\":{i},\"key\":\"k\",\"value\":x}}\n"),
                        false,
                    ),
                    2 => (
                        format!(
                            "{{\"event_time_ms\":{i},\"key\":\"k\",\"value\":{}}}\r\n",
                            rng.below(9)
                        ),
                        true,
                    ),
                    _ => (
                        format!(
                            "{{\"event_time_ms\":{i},\"key\":\"k{}\",\"value\":{}}}\n",
                            rng.below(5),
                            rng.below(100)
                        ),
                        true,
                    ),
                };
                (line.into_bytes(), plain)
            })
            .collect();
    }
    (0..n)
        .map(|i| {
            let (line, plain) = match rng.below(12) {
                0 => (
                    format!("{i},\"k,{}\",{}\n", rng.below(5), rng.below(100)),
                    false,
                ),
                1 => (format!("{i},k{},not-a-number\n", rng.below(5)), false),
                2 => (
                    format!("{i},k{},{}\r\n", rng.below(5), rng.below(100)),
                    true,
                ),
                _ => (format!("{i},k{},{}\n", rng.below(5), rng.below(100)), true),
            };
            (line.into_bytes(), plain)
        })
        .collect()
}

type Seen = (i64, String, String, u64);

fn seen(events: &[Event<KeyId>], dictionary: &KeyDictionary) -> Vec<Seen> {
    events
        .iter()
        .map(|e| {
            let key = dictionary.text(e.key).expect("interned").to_string();
            (e.timestamp, key, format!("{:?}", e.value), e.line)
        })
        .collect()
}

/// Events and rejected lines (by line number) taken so far.
#[derive(Debug, Default, PartialEq)]
struct Taken {
    events: Vec<Seen>,
    rejected: Vec<u64>,
}

impl Taken {
    fn len(&self) -> usize {
        self.events.len() + self.rejected.len()
    }

    /// One batch of `source`; whether the source has ended.
    fn batch(&mut self, source: &mut ReaderSource, dictionary: &KeyDictionary) -> bool {
        let mut batch = Vec::new();
        let read = source.read_batch(&mut batch, 1024);
        self.events.extend(seen(&batch, dictionary));
        match read {
            Read::More => false,
            Read::Rejected(e) => {
                self.rejected.push(e.line);
                false
            }
            Read::End => true,
            Read::Failed(e) => panic!("{e}"),
        }
    }
}

#[test]
fn a_live_csv_source_takes_every_line_that_has_come_and_waits_for_none() {
    bursts_of(InputFormat::Csv, b"event_time_ms,key,value\n");
}

#[test]
fn a_live_json_lines_source_takes_every_line_that_has_come_and_waits_for_none() {
    bursts_of(InputFormat::Jsonl, b"");
}

/// Random inputs of `format` (after `header`) fed in bursts: the live source's events equal
/// the file's, it never reads when the lines that came are taken, and a burst of plain lines
/// takes one batch.
fn bursts_of(format: InputFormat, header: &[u8]) {
    let mut rng = Rng(0x11AE);
    for case in 0..40 {
        let count = 1 + rng.below(300) as usize;
        let lines = lines(&mut rng, count, format);
        let mut text = header.to_vec();
        text.extend(lines.iter().flat_map(|l| l.0.iter()));
        let dictionary = KeyDictionary::shared();
        let file = EventReader::new(Cursor::new(text), "in.csv", format, FieldNames::default());
        let mut file = ReaderSource::new(file, false, dictionary.clone());
        let mut expected = Taken::default();
        while !expected.batch(&mut file, &dictionary) {}
        assert_eq!(
            expected.len(),
            lines.len(),
            "case {case}: every line an event or rejected"
        );

        let bursts = Bursts::default();
        // A buffer larger than any burst: each burst is one read, as a pipe's would be.
        let input = BufReader::with_capacity(64 * 1024, bursts.clone());
        let live = EventReader::new(input, "-", format, FieldNames::default());
        let mut live = ReaderSource::new(live, true, dictionary.clone());
        let mut taken = Taken::default();
        bursts.feed(header);
        let (mut fed, mut first) = (0, true);
        while fed < lines.len() {
            let n = (1 + rng.below(40) as usize).min(lines.len() - fed);
            let burst = &lines[fed..fed + n];
            for line in burst {
                bursts.feed(&line.0);
            }
            fed += n;
            // Batches until every line fed is taken; none may wait (`Bursts` panics).
            let mut batches = 0;
            while taken.len() < fed {
                assert!(
                    !taken.batch(&mut live, &dictionary),
                    "case {case}: ended early"
                );
                batches += 1;
            }
            assert!(bursts.is_drained());
            if burst.iter().all(|l| l.1) {
                // Plain lines: one batch (the first also takes the header, line by line).
                let most = if first && !header.is_empty() { 2 } else { 1 };
                assert!(
                    batches <= most,
                    "case {case}: {n} plain lines in {batches} batches"
                );
            }
            first = false;
        }
        bursts.close();
        assert!(taken.batch(&mut live, &dictionary), "case {case}: the end");
        assert_eq!(taken, expected, "case {case}");
    }
}
