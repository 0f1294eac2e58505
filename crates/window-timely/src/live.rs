//! A live input (stdin, a pipe): read on a thread of its own, so that the chunk reader can ask
//! whether more bytes came within a time, and cut a chunk when the input pauses.
//!
//! A file's bytes are there to be read: a chunk is cut after [`crate::TimelyConfig::chunk_bytes`]
//! bytes. A live input's bytes come when its writer sends them, and a chunk cut only by size would
//! hold a slow feed's lines back until 64 KiB of them had come (and a SIGTERM meanwhile would drop
//! them all). So the chunk reader of a live input also cuts a chunk that holds whole lines once
//! [`FLUSH_AFTER`] has passed since its first byte came, as Flink's network stack sends a buffer
//! that is not full once its buffer timeout has passed (`execution.buffer-timeout`, 100 ms by
//! default). Where a chunk is cut does not change the output (`docs/scale-out.md`, "Output
//! order").

use std::io::{BufRead, Read};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};

/// How long a chunk of a live input waits for more bytes after its first byte came, before it is
/// cut at its last whole line: Flink's default buffer timeout (`execution.buffer-timeout`).
pub(crate) const FLUSH_AFTER: Duration = Duration::from_millis(100);

/// Blocks of bytes read ahead, at most (each as large as one read of the input gives).
const AHEAD: usize = 16;

/// The bytes of a live input, read ahead by a thread of its own: a [`BufRead`] whose reads
/// block until bytes come, with [`LiveBytes::wait_until`] to wait for them only so long.
pub(crate) struct LiveBytes {
    blocks: Receiver<std::io::Result<Vec<u8>>>,
    /// The block being read, and how far.
    front: Vec<u8>,
    at: usize,
    /// The input's end (or a read error, given once), once the reading thread has sent it.
    ended: bool,
    failed: Option<std::io::Error>,
}

impl LiveBytes {
    /// Starts reading `input` on a thread of its own. The thread ends at the input's end, on a
    /// read error (passed on), or once these bytes are dropped and its next block is read; a
    /// thread blocked on a live input that never ends is left to the process's exit.
    ///
    /// # Errors
    /// The thread cannot be started: `input` is given back, not read from.
    pub(crate) fn start(input: Box<dyn BufRead + Send>) -> Result<Self, Box<dyn BufRead + Send>> {
        let (send, blocks) = crossbeam_channel::bounded(AHEAD);
        // The thread takes the input from here; where it does not start, it is had back.
        let handed = std::sync::Arc::new(parking_lot::Mutex::new(Some(input)));
        let taken = std::sync::Arc::clone(&handed);
        let spawned = std::thread::Builder::new()
            .name("live-input".into())
            .spawn(move || {
                let Some(mut input) = taken.lock().take() else {
                    return;
                };
                loop {
                    let block = match input.fill_buf() {
                        Ok(buf) => Ok(buf.to_vec()),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => Err(e),
                    };
                    let last = !matches!(&block, Ok(b) if !b.is_empty());
                    if let Ok(b) = &block {
                        input.consume(b.len());
                    }
                    if send.send(block).is_err() || last {
                        return;
                    }
                }
            });
        if spawned.is_err() {
            if let Some(input) = handed.lock().take() {
                return Err(input);
            }
        }
        Ok(Self {
            blocks,
            front: Vec::new(),
            at: 0,
            ended: false,
            failed: None,
        })
    }

    /// Whether bytes (or the end, or an error) are there to read now or come before `deadline`
    /// (with no deadline: waits until they come).
    pub(crate) fn wait_until(&mut self, deadline: Option<Instant>) -> bool {
        if self.at < self.front.len() || self.ended || self.failed.is_some() {
            return true;
        }
        let next = match deadline {
            Some(d) => self.blocks.recv_deadline(d),
            None => self
                .blocks
                .recv()
                .map_err(|_| RecvTimeoutError::Disconnected),
        };
        match next {
            Ok(Ok(block)) if block.is_empty() => self.ended = true,
            Ok(Ok(block)) => {
                self.front = block;
                self.at = 0;
            }
            Ok(Err(e)) => self.failed = Some(e),
            Err(RecvTimeoutError::Timeout) => return false,
            // The thread ended without a word: only a panic there does that.
            Err(RecvTimeoutError::Disconnected) => {
                self.failed = Some(std::io::Error::other("the input's reading thread failed"));
            }
        }
        true
    }

    /// Gives `bytes` back, to be read again before the rest (the part of a chunk after its cut).
    pub(crate) fn unread(&mut self, bytes: &[u8]) {
        let mut front = Vec::with_capacity(bytes.len() + self.front.len() - self.at);
        front.extend_from_slice(bytes);
        front.extend_from_slice(&self.front[self.at..]);
        self.front = front;
        self.at = 0;
    }
}

impl Read for LiveBytes {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for LiveBytes {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.wait_until(None);
        if let Some(e) = self.failed.take() {
            // Given once, as a reader's error is; the input ends there.
            self.ended = true;
            return Err(e);
        }
        Ok(&self.front[self.at..])
    }

    fn consume(&mut self, amount: usize) {
        self.at = (self.at + amount).min(self.front.len());
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A live input for tests: `first`'s bytes, then each block the returned sender sends, as
    /// it comes; it ends when the sender is dropped.
    pub(crate) struct Fed(std::sync::mpsc::Receiver<Vec<u8>>, std::io::Cursor<Vec<u8>>);

    impl Fed {
        pub(crate) fn new(first: &[u8]) -> (Self, std::sync::mpsc::Sender<Vec<u8>>) {
            let (send, more) = std::sync::mpsc::channel();
            (Fed(more, std::io::Cursor::new(first.to_vec())), send)
        }
    }

    impl Read for Fed {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            loop {
                let n = self.1.read(buf)?;
                if n > 0 {
                    return Ok(n);
                }
                match self.0.recv() {
                    Ok(more) => self.1 = std::io::Cursor::new(more),
                    Err(_) => return Ok(0),
                }
            }
        }
    }

    #[test]
    fn bytes_come_as_sent_and_a_wait_ends_at_its_deadline() {
        let (fed, send) = Fed::new(b"");
        let input = std::io::BufReader::new(fed);
        let Ok(mut live) = LiveBytes::start(Box::new(input)) else {
            panic!("thread")
        };
        let soon = || Some(Instant::now() + Duration::from_millis(50));
        assert!(!live.wait_until(soon()), "nothing sent yet");
        send.send(b"1,a\n2,".to_vec()).expect("send");
        assert!(live.wait_until(None));
        let mut line = Vec::new();
        live.read_until(b'\n', &mut line).expect("read");
        assert_eq!(line, b"1,a\n");
        // The rest of the block is there at once.
        assert!(live.wait_until(soon()));
        live.consume(2);
        assert!(!live.wait_until(soon()));
        send.send(b"b\n".to_vec()).expect("send");
        drop(send);
        let mut rest = Vec::new();
        live.read_to_end(&mut rest).expect("read");
        assert_eq!(rest, b"b\n");
        assert!(live.wait_until(soon()), "the end is there to read");
        assert!(live.fill_buf().expect("end").is_empty());
    }

    #[test]
    fn a_read_error_is_given_once_and_ends_the_input() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk on fire"))
            }
        }
        let Ok(mut live) = LiveBytes::start(Box::new(std::io::BufReader::new(Failing))) else {
            panic!("thread")
        };
        let e = live.fill_buf().expect_err("the error");
        assert_eq!(e.to_string(), "disk on fire");
        assert!(live.fill_buf().expect("then the end").is_empty());
    }
}
