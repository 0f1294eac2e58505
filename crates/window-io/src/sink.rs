//! Result sinks of `windowctl run`: writes window results and late (dropped)
//! elements as CSV or JSON lines, with one number format for both, so that
//! outputs are byte-stable and diffable (`6`, not `6.0`).

use std::fmt;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::str::FromStr;

use super::error::OpenError;
use super::source::Event;

/// Integral values with a magnitude below this (2^53) print as integers.
const MAX_EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

/// The text format of an output stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OutputFormat {
    /// Comma-separated values with a header row.
    #[default]
    Csv,
    /// One JSON object per line.
    Jsonl,
}

impl OutputFormat {
    /// Guesses the format from a file name: `.jsonl`, `.ndjson` or `.json`
    /// mean JSON lines, anything else CSV.
    pub fn from_path(path: impl AsRef<Path>) -> OutputFormat {
        let name = path.as_ref().to_string_lossy().to_ascii_lowercase();
        if [".jsonl", ".ndjson", ".json"]
            .iter()
            .any(|ext| name.ends_with(ext))
        {
            OutputFormat::Jsonl
        } else {
            OutputFormat::Csv
        }
    }
}

impl fmt::Display for OutputFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OutputFormat::Csv => "csv",
            OutputFormat::Jsonl => "jsonl",
        })
    }
}

impl FromStr for OutputFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "csv" => Ok(OutputFormat::Csv),
            "jsonl" | "ndjson" | "json" => Ok(OutputFormat::Jsonl),
            _ => Err(format!(
                "unknown output format {s:?} (expected csv or jsonl)"
            )),
        }
    }
}

/// Opens an output target: `-` is stdout, anything else a file that is
/// created or truncated. Wrap the result in a [`ResultWriter`] or
/// [`LateWriter`], which buffer.
///
/// # Errors
///
/// [`OpenError::Create`] if the file cannot be created.
pub fn create_output(target: &str) -> Result<Box<dyn Write + Send>, OpenError> {
    if target == "-" {
        return Ok(Box::new(io::stdout()));
    }
    File::create(target)
        .map(|file| Box::new(file) as Box<dyn Write + Send>)
        .map_err(|error| OpenError::Create {
            path: target.to_owned(),
            error,
        })
}

/// Formats a number for output: an integral value with `|v| < 2^53` prints
/// as an integer (`6`, `-3`, and `0` for `-0.0`), any other value with Rust's
/// shortest round-trip formatting (`2.5`, `0.1`, `NaN`, `inf`), with an exponent
/// for magnitudes of at least `1e16` or below `1e-6` (`1e300`, `2.5e-9`).
pub fn format_number(v: f64) -> String {
    let mut s = String::new();
    push_number(&mut s, v);
    s
}

/// Formats a list of numbers as `windowctl` prints lists: `[a;b;c]`, each as
/// [`format_number`] formats it.
///
/// # Examples
/// ```
/// assert_eq!(window_io::format_list(&[1.0, 2.5]), "[1;2.5]");
/// assert_eq!(window_io::format_list(&[]), "[]");
/// ```
pub fn format_list(values: &[f64]) -> String {
    let mut s = String::from("[");
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            s.push(';');
        }
        push_number(&mut s, *v);
    }
    s.push(']');
    s
}

/// Appends `v` to `out` as [`format_number`] formats it.
fn push_number(out: &mut String, v: f64) {
    use std::fmt::Write as _;
    // Writing into a String cannot fail.
    if v.fract() == 0.0 && v.abs() < MAX_EXACT_INTEGER {
        // Exact: the value is an integer of at most 53 bits.
        let _ = write!(out, "{}", v as i64);
    } else if v.is_finite() && (v.abs() >= 1e16 || (v != 0.0 && v.abs() < 1e-6)) {
        // Shortest round-trip with an exponent (`1e300`), not 301 digits.
        let _ = write!(out, "{v:e}");
    } else {
        let _ = write!(out, "{v}");
    }
}

/// One window result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResultRecord<'a> {
    /// The key of the window.
    pub key: &'a str,
    /// Window start in milliseconds (inclusive); `None` for the global window.
    pub window_start: Option<i64>,
    /// Window end in milliseconds (exclusive); `None` for the global window.
    pub window_end: Option<i64>,
    /// The aggregate; `None` (e.g. the average of nothing) prints as an empty
    /// CSV field or JSON `null`.
    pub result: Option<f64>,
}

/// The column names of the result output.
pub const RESULT_COLUMNS: [&str; 4] = ["key", "window_start", "window_end", "result"];

/// The column names of the result output of the key-window strategy: the four standard ones
/// and `empty` (`true` on the one empty result a key gets when its window becomes empty).
pub const KEY_WINDOW_RESULT_COLUMNS: [&str; 5] =
    ["key", "window_start", "window_end", "result", "empty"];

/// The column names of the late-element output.
pub const LATE_COLUMNS: [&str; 4] = ["event_time_ms", "key", "value", "watermark"];

/// One output cell.
#[derive(Clone, Copy)]
enum Cell<'a> {
    Str(&'a str),
    Int(i64),
    Num(f64),
    Bool(bool),
    Null,
}

impl From<Option<i64>> for Cell<'_> {
    fn from(v: Option<i64>) -> Self {
        v.map_or(Cell::Null, Cell::Int)
    }
}

impl From<Option<f64>> for Cell<'_> {
    fn from(v: Option<f64>) -> Self {
        v.map_or(Cell::Null, Cell::Num)
    }
}

/// A CSV or JSON-lines writer of rows with fixed column names.
enum RowWriter<W: Write> {
    Csv {
        writer: Box<csv::Writer<W>>,
        columns: &'static [&'static str],
        header_written: bool,
        /// Reused buffer for formatting numbers: no allocation per cell.
        scratch: String,
    },
    Jsonl {
        writer: BufWriter<W>,
        columns: &'static [&'static str],
        /// Reused buffers for one line and one number: no allocation per row.
        line: Vec<u8>,
        scratch: String,
    },
}

impl<W: Write> RowWriter<W> {
    fn new(writer: W, format: OutputFormat, columns: &'static [&'static str]) -> Self {
        match format {
            OutputFormat::Csv => RowWriter::Csv {
                writer: Box::new(
                    csv::WriterBuilder::new()
                        .has_headers(false)
                        .from_writer(writer),
                ),
                columns,
                header_written: false,
                scratch: String::with_capacity(32),
            },
            OutputFormat::Jsonl => RowWriter::Jsonl {
                writer: BufWriter::new(writer),
                columns,
                line: Vec::with_capacity(128),
                scratch: String::with_capacity(32),
            },
        }
    }

    fn write_header_once(&mut self) -> io::Result<()> {
        if let RowWriter::Csv {
            writer,
            columns,
            header_written,
            ..
        } = self
        {
            if !*header_written {
                writer.write_record(columns.iter())?;
                *header_written = true;
            }
        }
        Ok(())
    }

    fn write_row(&mut self, cells: &[Cell<'_>]) -> io::Result<()> {
        self.write_header_once()?;
        match self {
            RowWriter::Csv {
                writer, scratch, ..
            } => {
                for cell in cells {
                    match *cell {
                        Cell::Str(s) => writer.write_field(s)?,
                        Cell::Int(i) => {
                            scratch.clear();
                            // Writing into a String cannot fail.
                            let _ = write!(scratch, "{i}");
                            writer.write_field(scratch.as_bytes())?;
                        }
                        Cell::Num(v) => {
                            scratch.clear();
                            push_number(scratch, v);
                            writer.write_field(scratch.as_bytes())?;
                        }
                        Cell::Bool(b) => writer.write_field(if b { "true" } else { "false" })?,
                        Cell::Null => writer.write_field("")?,
                    }
                }
                writer.write_record(None::<&[u8]>)?;
            }
            RowWriter::Jsonl {
                writer,
                columns,
                line,
                scratch,
            } => {
                line.clear();
                line.push(b'{');
                for (i, (name, cell)) in columns.iter().zip(cells.iter().copied()).enumerate() {
                    if i > 0 {
                        line.push(b',');
                    }
                    serde_json::to_writer(&mut *line, name)?;
                    line.push(b':');
                    match cell {
                        Cell::Str(s) => serde_json::to_writer(&mut *line, s)?,
                        Cell::Int(i) => write!(line, "{i}")?,
                        Cell::Bool(b) => line.extend_from_slice(if b { b"true" } else { b"false" }),
                        // JSON has no NaN or infinity.
                        Cell::Num(v) if v.is_finite() => {
                            scratch.clear();
                            push_number(scratch, v);
                            line.extend_from_slice(scratch.as_bytes());
                        }
                        Cell::Num(_) | Cell::Null => line.extend_from_slice(b"null"),
                    }
                }
                line.extend_from_slice(b"}\n");
                writer.write_all(line)?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_header_once()?;
        match self {
            RowWriter::Csv { writer, .. } => writer.flush(),
            RowWriter::Jsonl { writer, .. } => writer.flush(),
        }
    }

    fn into_inner(mut self) -> io::Result<W> {
        self.flush()?;
        match self {
            RowWriter::Csv { writer, .. } => writer
                .into_inner()
                .map_err(|e| io::Error::new(e.error().kind(), e.error().to_string())),
            RowWriter::Jsonl { writer, .. } => writer.into_inner().map_err(|e| e.into_error()),
        }
    }
}

/// Writes window results as CSV (header `key,window_start,window_end,result`,
/// written once, also for an empty output when flushed) or as JSON lines
/// with those field names. Buffered: call [`ResultWriter::flush`] at the end.
pub struct ResultWriter<W: Write = Box<dyn Write + Send>> {
    rows: RowWriter<W>,
    written: u64,
    empty_column: bool,
}

impl<W: Write> fmt::Debug for ResultWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResultWriter")
            .field("written", &self.written)
            .finish_non_exhaustive()
    }
}

impl<W: Write> ResultWriter<W> {
    /// Writes results in `format` to `writer`.
    pub fn new(writer: W, format: OutputFormat) -> Self {
        ResultWriter {
            rows: RowWriter::new(writer, format, &RESULT_COLUMNS),
            written: 0,
            empty_column: false,
        }
    }

    /// Writes results with the key-window strategy's extra `empty` column
    /// ([`KEY_WINDOW_RESULT_COLUMNS`]); write them with [`ResultWriter::write_key_window_result`].
    pub fn with_empty_column(writer: W, format: OutputFormat) -> Self {
        ResultWriter {
            rows: RowWriter::new(writer, format, &KEY_WINDOW_RESULT_COLUMNS),
            written: 0,
            empty_column: true,
        }
    }

    /// Writes one key-window result: `empty` is true on a key's empty result (whose `result`
    /// is then `None`). On a writer without the `empty` column the flag is not written.
    ///
    /// # Errors
    ///
    /// Fails if the underlying writer fails.
    pub fn write_key_window_result(&mut self, r: &ResultRecord<'_>, empty: bool) -> io::Result<()> {
        let cells = [
            Cell::Str(r.key),
            r.window_start.into(),
            r.window_end.into(),
            r.result.into(),
            Cell::Bool(empty),
        ];
        let n = if self.empty_column { 5 } else { 4 };
        self.rows.write_row(&cells[..n])?;
        self.written += 1;
        Ok(())
    }

    /// Writes one result.
    ///
    /// # Errors
    ///
    /// Fails if the underlying writer fails.
    pub fn write_result(&mut self, r: &ResultRecord<'_>) -> io::Result<()> {
        self.write_key_window_result(r, false)
    }

    /// The number of results written so far.
    pub fn records_written(&self) -> u64 {
        self.written
    }

    /// Flushes buffered output (writing the CSV header if nothing was
    /// written yet).
    ///
    /// # Errors
    ///
    /// Fails if the underlying writer fails.
    pub fn flush(&mut self) -> io::Result<()> {
        self.rows.flush()
    }

    /// Flushes and returns the underlying writer.
    ///
    /// # Errors
    ///
    /// Fails if the final flush fails.
    pub fn into_inner(self) -> io::Result<W> {
        self.rows.into_inner()
    }
}

/// Writes late elements (dropped because their window had already been
/// purged) as CSV with header `event_time_ms,key,value,watermark` or as JSON
/// lines with those field names. Buffered: call [`LateWriter::flush`] at the
/// end.
pub struct LateWriter<W: Write = Box<dyn Write + Send>> {
    rows: RowWriter<W>,
    written: u64,
}

impl<W: Write> fmt::Debug for LateWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LateWriter")
            .field("written", &self.written)
            .finish_non_exhaustive()
    }
}

impl<W: Write> LateWriter<W> {
    /// Writes late elements in `format` to `writer`.
    pub fn new(writer: W, format: OutputFormat) -> Self {
        LateWriter {
            rows: RowWriter::new(writer, format, &LATE_COLUMNS),
            written: 0,
        }
    }

    /// Writes one late element with the watermark (milliseconds) at which it
    /// was dropped.
    ///
    /// # Errors
    ///
    /// Fails if the underlying writer fails.
    pub fn write_late(&mut self, event: &Event, watermark: i64) -> io::Result<()> {
        self.write_late_parts(event.timestamp, &event.key, event.value, watermark)
    }

    /// Writes one late element given by its parts: event time (ms), key, value, and the
    /// watermark (ms) at which it was dropped.
    ///
    /// # Errors
    ///
    /// Fails if the underlying writer fails.
    pub fn write_late_parts(
        &mut self,
        timestamp: i64,
        key: &str,
        value: f64,
        watermark: i64,
    ) -> io::Result<()> {
        self.rows.write_row(&[
            Cell::Int(timestamp),
            Cell::Str(key),
            Cell::Num(value),
            Cell::Int(watermark),
        ])?;
        self.written += 1;
        Ok(())
    }

    /// The number of late elements written so far.
    pub fn records_written(&self) -> u64 {
        self.written
    }

    /// Flushes buffered output (writing the CSV header if nothing was
    /// written yet).
    ///
    /// # Errors
    ///
    /// Fails if the underlying writer fails.
    pub fn flush(&mut self) -> io::Result<()> {
        self.rows.flush()
    }

    /// Flushes and returns the underlying writer.
    ///
    /// # Errors
    ///
    /// Fails if the final flush fails.
    pub fn into_inner(self) -> io::Result<W> {
        self.rows.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(format_number(6.0), "6");
        assert_eq!(format_number(-3.0), "-3");
        assert_eq!(format_number(-0.0), "0");
        assert_eq!(format_number(2.5), "2.5");
        assert_eq!(format_number(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(format_number(9_007_199_254_740_991.0), "9007199254740991");
        assert_eq!(format_number(9_007_199_254_740_992.0), "9007199254740992");
        assert_eq!(format_number(f64::NAN), "NaN");
        assert_eq!(format_number(f64::INFINITY), "inf");
    }

    #[test]
    fn non_finite_is_json_null() {
        let mut w = ResultWriter::new(Vec::new(), OutputFormat::Jsonl);
        w.write_result(&ResultRecord {
            key: "k",
            window_start: None,
            window_end: None,
            result: Some(f64::NAN),
        })
        .unwrap();
        let out = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(
            out,
            "{\"key\":\"k\",\"window_start\":null,\"window_end\":null,\"result\":null}\n"
        );
    }
}
