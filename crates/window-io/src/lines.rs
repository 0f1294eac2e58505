//! Lines of text as the elements of a stream (Flink's `socketTextStream`): each line, without
//! its terminator, with its number.

use std::io::{self, BufRead, Read};

use crate::error::{InputError, InputErrorKind, OpenError};
use crate::source::{open_input, InputSpec, Progress, MAX_LINE_BYTES, MAX_RAW_BYTES};

/// Opens `spec` (a file, stdin or a TCP connection) as lines of text.
///
/// # Errors
/// The file cannot be opened or the connection fails.
pub fn open_lines(spec: &InputSpec) -> Result<TextLines, OpenError> {
    let opened = open_input(spec)?;
    Ok(TextLines {
        input: opened.input,
        name: spec.source_name(),
        progress: opened.progress,
        line_no: 0,
        buffer: Vec::new(),
        done: false,
    })
}

/// The lines of an input: `(line number from 1, text)`, or an error naming the line: a line
/// that is not UTF-8 or longer than [`MAX_LINE_BYTES`] (skippable), or a failed read (the
/// end).
pub struct TextLines {
    input: Box<dyn BufRead + Send>,
    name: String,
    progress: Progress,
    line_no: u64,
    buffer: Vec<u8>,
    done: bool,
}

impl std::fmt::Debug for TextLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextLines")
            .field("name", &self.name)
            .field("line", &self.line_no)
            .finish_non_exhaustive()
    }
}

impl TextLines {
    /// The name messages use for the input.
    pub fn source_name(&self) -> &str {
        &self.name
    }

    /// How far the input has been read.
    pub fn progress(&self) -> Progress {
        self.progress.clone()
    }

    fn error(&self, kind: InputErrorKind, message: String) -> InputError {
        InputError {
            source_name: self.name.clone(),
            line: self.line_no,
            field: None,
            message,
            raw: self.buffer[..self.buffer.len().min(MAX_RAW_BYTES)].to_vec(),
            raw_cut: self.buffer.len() > MAX_RAW_BYTES,
            kind,
        }
    }

    fn read(&mut self) -> io::Result<usize> {
        self.buffer.clear();
        // A line too long to be an element is still kept up to MAX_RAW_BYTES, for its error.
        let limit = MAX_RAW_BYTES as u64 + 1;
        let n = (&mut self.input)
            .take(limit)
            .read_until(b'\n', &mut self.buffer)?;
        if self.buffer.last() == Some(&b'\n') {
            self.buffer.pop();
            if self.buffer.last() == Some(&b'\r') {
                self.buffer.pop();
            }
        } else if n as u64 == limit {
            self.skip_rest_of_line()?;
        }
        Ok(n)
    }

    /// Skips the rest of a line that is too long, without holding it in memory.
    fn skip_rest_of_line(&mut self) -> io::Result<()> {
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                return Ok(());
            }
            match buf.iter().position(|b| *b == b'\n') {
                Some(i) => {
                    self.input.consume(i + 1);
                    return Ok(());
                }
                None => {
                    let n = buf.len();
                    self.input.consume(n);
                }
            }
        }
    }
}

impl Iterator for TextLines {
    type Item = Result<(u64, String), InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let n = match self.read() {
            Ok(n) => n,
            Err(e) => {
                self.done = true;
                let message = format!("reading failed: {e}");
                return Some(Err(self.error(InputErrorKind::Io, message)));
            }
        };
        if n == 0 {
            self.done = true;
            return None;
        }
        self.line_no += 1;
        if self.buffer.len() > MAX_LINE_BYTES {
            let kept = if self.buffer.len() > MAX_RAW_BYTES {
                format!("; only its first {MAX_RAW_BYTES} bytes are kept")
            } else {
                String::new()
            };
            let message = format!("the line is longer than {MAX_LINE_BYTES} bytes{kept}");
            return Some(Err(self.error(InputErrorKind::Malformed, message)));
        }
        match String::from_utf8(std::mem::take(&mut self.buffer)) {
            Ok(text) => Some(Ok((self.line_no, text))),
            Err(e) => {
                self.buffer = e.into_bytes();
                let message = "the line is not valid UTF-8".to_owned();
                Some(Err(self.error(InputErrorKind::Malformed, message)))
            }
        }
    }
}
