//! What to do with rejected input records: fail the job, or skip them, counting them and
//! keeping them in a dead-letter CSV file. Split from `source.rs`: the readers report errors,
//! the caller applies a policy.

use std::fmt;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::Path;
use std::str::FromStr;

use crate::error::{InputError, InputErrorKind, OpenError};

/// What to do with a rejected (non-fatal) input record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OnError {
    /// Stop the job with the error.
    #[default]
    Fail,
    /// Drop the record (writing it to the dead-letter file, if any) and go on.
    Skip,
}

impl fmt::Display for OnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OnError::Fail => "fail",
            OnError::Skip => "skip",
        })
    }
}

impl FromStr for OnError {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "fail" => Ok(OnError::Fail),
            "skip" => Ok(OnError::Skip),
            _ => Err(format!(
                "unknown error policy {s:?} (expected fail or skip)"
            )),
        }
    }
}

/// Appends rejected records to a CSV file with columns
/// `source,line,field,error,raw` (`field` empty when no single field is at
/// fault; `error` is the message without location; `raw` the line's bytes exactly as read,
/// without its terminator, non-UTF-8 bytes too, quoted as CSV needs: a CSV reader gives them
/// back byte for byte). A line longer than [`crate::source::MAX_RAW_BYTES`] keeps its first
/// bytes only, the `error` column says so, and [`DeadLetterWriter::cut`] counts it. The header
/// is written only when the file is new or empty. Every record is flushed at once.
pub struct DeadLetterWriter {
    name: String,
    /// Where the records go; each is written by a csv writer of its own (see
    /// [`DeadLetterWriter::write`]).
    out: Box<dyn Write + Send>,
    /// Records written whose raw line was cut.
    cut: u64,
    /// The file, when opened by [`DeadLetterWriter::create`]: synced and measured for a
    /// checkpoint ([`DeadLetterWriter::sync`]).
    file: Option<std::fs::File>,
}

impl fmt::Debug for DeadLetterWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeadLetterWriter")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The header of a dead-letter file.
pub const DEAD_LETTER_HEADER: [&str; 5] = ["source", "line", "field", "error", "raw"];

impl DeadLetterWriter {
    /// Opens (creating if needed) `path` for appending.
    ///
    /// # Errors
    ///
    /// [`OpenError::Create`] if the file cannot be opened or its header
    /// cannot be written.
    pub fn create(path: impl AsRef<Path>) -> Result<DeadLetterWriter, OpenError> {
        let path = path.as_ref();
        let create_error = |error| OpenError::Create {
            path: path.display().to_string(),
            error,
        };
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(create_error)?;
        let is_empty = file.metadata().map_err(create_error)?.len() == 0;
        let handle = file.try_clone().map_err(create_error)?;
        let mut w =
            DeadLetterWriter::from_writer(Box::new(file), path.display().to_string(), is_empty)
                .map_err(create_error)?;
        w.file = Some(handle);
        Ok(w)
    }

    /// Makes what was written durable (each record is flushed as it is written) and returns
    /// the file's length in bytes: what a checkpoint records of the dead letters. `None` for a
    /// writer not made by [`DeadLetterWriter::create`].
    ///
    /// # Errors
    /// The flush, the sync or reading the length fails.
    pub fn sync(&mut self) -> io::Result<Option<u64>> {
        self.out.flush()?;
        match &self.file {
            Some(f) => {
                f.sync_data()?;
                Ok(Some(f.metadata()?.len()))
            }
            None => Ok(None),
        }
    }

    /// Writes dead letters to any writer; `name` is used in error messages.
    ///
    /// # Errors
    ///
    /// Fails if the header cannot be written.
    pub fn from_writer(
        writer: Box<dyn Write + Send>,
        name: impl Into<String>,
        write_header: bool,
    ) -> io::Result<DeadLetterWriter> {
        let mut w = DeadLetterWriter {
            name: name.into(),
            out: writer,
            cut: 0,
            file: None,
        };
        if write_header {
            w.write_record(DEAD_LETTER_HEADER.map(str::as_bytes))?;
        }
        Ok(w)
    }

    /// The file name used in error messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The records written (by this writer) whose line was longer than
    /// [`crate::source::MAX_RAW_BYTES`], so that `raw` holds its first bytes only.
    pub fn cut(&self) -> u64 {
        self.cut
    }

    /// Appends one rejected record and flushes.
    ///
    /// # Errors
    ///
    /// Fails if writing fails.
    pub fn write(&mut self, err: &InputError) -> io::Result<()> {
        let line = err.line.to_string();
        self.write_record([
            err.source_name.as_bytes(),
            line.as_bytes(),
            err.field.as_deref().unwrap_or("").as_bytes(),
            err.message.as_bytes(),
            &err.raw,
        ])?;
        self.cut += u64::from(err.raw_cut);
        Ok(())
    }

    /// Writes one CSV record and flushes, through a csv writer whose buffer holds the whole
    /// record: the csv crate decides a field's quoting by scanning what is left of it each time
    /// its buffer fills, which made a line of 40 MB take seconds with the default 8 KiB buffer.
    fn write_record(&mut self, fields: [&[u8]; 5]) -> io::Result<()> {
        // Quoting at most doubles a field; a few bytes more for quotes and separators.
        let capacity = fields.iter().map(|f| 2 * f.len() + 3).sum::<usize>() + 2;
        let mut writer = csv::WriterBuilder::new()
            .has_headers(false)
            .buffer_capacity(capacity.max(1024))
            .from_writer(&mut self.out);
        writer.write_record(fields)?;
        writer.flush()?;
        drop(writer);
        self.out.flush()
    }
}

/// The caller's handling of rejected records: fail, or skip and count them,
/// optionally keeping them in a dead-letter file.
#[derive(Debug, Default)]
pub struct ErrorPolicy {
    /// Fail or skip.
    pub on_error: OnError,
    /// Where skipped records are kept, if anywhere.
    pub dead_letter: Option<DeadLetterWriter>,
    /// The number of records skipped so far.
    pub skipped: u64,
}

impl ErrorPolicy {
    /// A policy without dead-letter file.
    pub fn new(on_error: OnError) -> ErrorPolicy {
        ErrorPolicy {
            on_error,
            dead_letter: None,
            skipped: 0,
        }
    }

    /// Adds a dead-letter file for skipped records.
    pub fn with_dead_letter(mut self, writer: DeadLetterWriter) -> ErrorPolicy {
        self.dead_letter = Some(writer);
        self
    }

    /// Handles a rejected record: with [`OnError::Fail`], or for a fatal error
    /// (CSV header, I/O), returns it; with [`OnError::Skip`], writes it to the
    /// dead-letter file, counts it in `skipped` and returns `Ok`.
    ///
    /// # Errors
    ///
    /// The error itself as described, or an [`InputErrorKind::Io`] error at the
    /// record's location if the dead-letter file cannot be written.
    pub fn handle(&mut self, err: InputError) -> Result<(), InputError> {
        if self.on_error == OnError::Fail || err.is_fatal() {
            return Err(err);
        }
        if let Some(dead_letter) = &mut self.dead_letter {
            if let Err(e) = dead_letter.write(&err) {
                return Err(InputError {
                    field: None,
                    message: format!(
                        "cannot write the rejected record to the dead-letter file {:?}: {e}",
                        dead_letter.name()
                    ),
                    kind: InputErrorKind::Io,
                    ..err
                });
            }
        }
        self.skipped += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_policy() {
        let err = InputError {
            source_name: "s".into(),
            line: 3,
            field: None,
            message: "bad".into(),
            raw: b"x".to_vec(),
            raw_cut: false,
            kind: InputErrorKind::Malformed,
        };
        let mut fail = ErrorPolicy::new(OnError::Fail);
        assert_eq!(fail.handle(err.clone()), Err(err.clone()));
        let mut skip = ErrorPolicy::new(OnError::Skip);
        assert_eq!(skip.handle(err.clone()), Ok(()));
        assert_eq!(skip.skipped, 1);
        let fatal = InputError {
            kind: InputErrorKind::Header,
            ..err
        };
        assert_eq!(skip.handle(fatal.clone()), Err(fatal));
        assert_eq!(skip.skipped, 1);
    }
}
