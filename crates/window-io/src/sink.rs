//! Result sinks of `windowctl run`: writes window results and late (dropped)
//! elements as CSV or JSON lines, with one number format for both, so that
//! outputs are byte-stable and diffable (`6`, not `6.0`).

use std::fmt;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::str::FromStr;

use super::error::OpenError;
use super::source::Event;

use crate::rows::{push_number, Cell, RowWriter};
use window_core::{Number, NumericResult};

mod interned;
mod key_cells;
use key_cells::{EncodedKeys, KeyColumns, BLOCK as KEY_BLOCK};

/// The size of a window's `,start,end,` text padded to a block (it takes at most 43 bytes).
const WINDOW_BLOCK: usize = 48;

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
        // `x.jsonl.gz` is JSON lines, gzip-compressed (as an input of that name is read).
        let name = name.strip_suffix(".gz").unwrap_or(&name);
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
/// for magnitudes of at least 2^53 or below `1e-6` (`1e300`, `2.5e-9`,
/// `9.007199254740994e15`): plain digits beyond 2^53 are left to exact integers.
pub fn format_number(v: f64) -> String {
    let mut b = Vec::new();
    push_number(&mut b, v);
    // The formats write ASCII only.
    String::from_utf8(b).unwrap_or_default()
}

/// Formats an element value as outputs write it: an integer's digits (exact beyond 2^53), a
/// float as [`format_number`].
///
/// # Examples
/// ```
/// use window_io::{format_value, Number};
/// assert_eq!(format_value(Number::Int(9_007_199_254_740_993)), "9007199254740993");
/// assert_eq!(format_value(Number::Float(2.5)), "2.5");
/// ```
pub fn format_value(v: Number) -> String {
    match v {
        Number::Int(i) => i.to_string(),
        Number::Float(f) => format_number(f),
    }
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
    let mut b = vec![b'['];
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            b.push(b';');
        }
        push_number(&mut b, *v);
    }
    b.push(b']');
    // The formats write ASCII only.
    String::from_utf8(b).unwrap_or_default()
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
    /// CSV field or JSON `null`. NaN and infinities print as `NaN`, `inf` and
    /// `-inf`, in JSON as the strings `"NaN"`, `"inf"` and `"-inf"` (JSON has
    /// no such numbers, and `null` would read as an undefined result).
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

/// Writes window results as CSV (header `key,window_start,window_end,result`,
/// written once, also for an empty output when flushed) or as JSON lines
/// with those field names. Buffered: call [`ResultWriter::flush`] at the end.
pub struct ResultWriter<W: Write = Box<dyn Write + Send>> {
    rows: RowWriter<W>,
    written: u64,
    empty_column: bool,
    /// Result columns: 1 (`result`), or one per aggregate ([`ResultWriter::with_result_columns`]).
    result_columns: usize,
    /// Each interned key in the output's form (quoted, escaped), by id, made at its first
    /// result: a result row copies it instead of quoting the key again.
    encoded_keys: EncodedKeys,
    /// CSV: the window of the last interned row and its `,start,end,` text, which the rows of
    /// one firing round (one window, many keys) share: the text's `window_len` bytes padded
    /// with zero bytes to a fixed block, copied whole and cut to the length (a fixed move
    /// instead of a `memcpy` call).
    last_window: Option<Option<(i64, i64)>>,
    window_block: [u8; WINDOW_BLOCK],
    window_len: usize,
    /// A composite key's columns ([`ResultWriter::with_key_columns`]).
    key_columns: KeyColumns,
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
        Self::with_result_columns(writer, format, &["result"], false)
    }

    /// Writes results with the key-window strategy's extra `empty` column
    /// ([`KEY_WINDOW_RESULT_COLUMNS`]); write them with [`ResultWriter::write_key_window_result`].
    pub fn with_empty_column(writer: W, format: OutputFormat) -> Self {
        Self::with_result_columns(writer, format, &["result"], true)
    }

    /// Writes results with one column per name of `results` in place of `result` (several
    /// aggregates: `key,window_start,window_end,count,sum,max`), and the `empty` column if
    /// `empty_column`; write them with [`ResultWriter::write_interned_values`]. Each value is
    /// formatted as a `result` is.
    pub fn with_result_columns(
        writer: W,
        format: OutputFormat,
        results: &[&str],
        empty_column: bool,
    ) -> Self {
        let mut columns = vec!["key", "window_start", "window_end"];
        columns.extend_from_slice(results);
        if empty_column {
            columns.push("empty");
        }
        ResultWriter {
            rows: RowWriter::new(writer, format, &columns),
            written: 0,
            empty_column,
            result_columns: results.len(),
            encoded_keys: EncodedKeys::default(),
            last_window: None,
            window_block: [0; WINDOW_BLOCK],
            window_len: 0,
            key_columns: KeyColumns::default(),
        }
    }

    /// Writes a composite key (one made by [`crate::join_key_parts`]) as one column per field,
    /// named by `names` (the key fields), in place of the `key` column, in CSV and JSON; the
    /// output of one name (or none) is unchanged: one `key` column. Call it before the first row.
    #[must_use]
    pub fn with_key_columns(mut self, names: &[String]) -> Self {
        self.key_columns = KeyColumns::new(names);
        if self.key_columns.composite() {
            self.rows.set_key_columns(0, names);
        }
        self
    }

    /// Writes one key-window result: `empty` is true on a key's empty result (whose `result`
    /// is then `None`). On a writer without the `empty` column the flag is not written.
    ///
    /// # Errors
    ///
    /// Fails if the underlying writer fails.
    pub fn write_key_window_result(&mut self, r: &ResultRecord<'_>, empty: bool) -> io::Result<()> {
        let (start, end) = (r.window_start, r.window_end);
        let mut encoded = Vec::new();
        let key = match self.key_columns.composite() {
            true => {
                self.key_columns
                    .encode(self.rows.format(), r.key, &mut encoded);
                Cell::Encoded(&encoded)
            }
            false => Cell::Str(r.key),
        };
        let cells = [key, start.into(), end.into()];
        let shape = (self.result_columns, self.empty_column);
        let result = NumericResult::Float(r.result);
        Self::write_row(&mut self.rows, shape, cells, &[result], empty)?;
        self.written += 1;
        Ok(())
    }

    /// Writes a result row of `(result columns, empty column)` `shape`: the key, window start
    /// and end cells, the result columns (from `results`, empty where it has no value) and
    /// `empty` (only with the `empty` column).
    fn write_row(
        rows: &mut RowWriter<W>,
        (result_columns, empty_column): (usize, bool),
        [key, start, end]: [Cell<'_>; 3],
        results: &[NumericResult],
        empty: bool,
    ) -> io::Result<()> {
        if result_columns != 1 {
            let shape = (result_columns, empty_column);
            return Self::write_several_row(rows, shape, [key, start, end], results, empty);
        }
        let result = results.first().map_or(Cell::Null, |r| Cell::from(*r));
        let cells = [key, start, end, result, Cell::Bool(empty)];
        rows.write_row(&cells[..if empty_column { 5 } else { 4 }])
    }

    /// [`ResultWriter::write_row`] for several result columns, apart (not inlined), so that the
    /// single result's row stays specialised to its cells.
    #[inline(never)]
    fn write_several_row(
        rows: &mut RowWriter<W>,
        (result_columns, empty_column): (usize, bool),
        [key, start, end]: [Cell<'_>; 3],
        results: &[NumericResult],
        empty: bool,
    ) -> io::Result<()> {
        let mut cells = vec![key, start, end];
        let values = (0..result_columns).map(|i| results.get(i).copied());
        cells.extend(values.map(|v| v.map_or(Cell::Null, Cell::from)));
        if empty_column {
            cells.push(Cell::Bool(empty));
        }
        rows.write_row(&cells)
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

    /// Continues an output that already holds a header and `written` results (a job resumed
    /// from a checkpoint, after the output was cut back to the checkpoint's length): no second
    /// header, and the count goes on from `written`.
    #[must_use]
    pub fn continuing(mut self, written: u64) -> Self {
        self.rows.continue_output();
        self.written = written;
        self
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
    /// A composite key's columns ([`LateWriter::with_key_columns`]).
    key_columns: KeyColumns,
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
            key_columns: KeyColumns::default(),
        }
    }

    /// Writes a composite key as one column per field, named by `names`, in place of the `key`
    /// column, as [`ResultWriter::with_key_columns`] does. Call it before the first row.
    #[must_use]
    pub fn with_key_columns(mut self, names: &[String]) -> Self {
        self.key_columns = KeyColumns::new(names);
        if self.key_columns.composite() {
            self.rows.set_key_columns(1, names);
        }
        self
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

    /// Writes one late element given by its parts: event time (ms), key, value (an integer
    /// exactly; NaN for an element without one, [`crate::FieldUse::value`]: an empty field,
    /// JSON `null`), and the watermark (ms) at which it was dropped.
    ///
    /// # Errors
    ///
    /// Fails if the underlying writer fails.
    pub fn write_late_parts(
        &mut self,
        timestamp: i64,
        key: &str,
        value: Number,
        watermark: i64,
    ) -> io::Result<()> {
        let mut encoded = Vec::new();
        let key = match self.key_columns.composite() {
            true => {
                self.key_columns
                    .encode(self.rows.format(), key, &mut encoded);
                Cell::Encoded(&encoded)
            }
            false => Cell::Str(key),
        };
        let value = match value.is_nan() {
            true => Cell::Null,
            false => Cell::from(value),
        };
        self.rows
            .write_row(&[Cell::Int(timestamp), key, value, Cell::Int(watermark)])?;
        self.written += 1;
        Ok(())
    }

    /// The number of late elements written so far.
    pub fn records_written(&self) -> u64 {
        self.written
    }

    /// Continues an output that already holds a header and `written` late elements (see
    /// [`ResultWriter::continuing`]).
    #[must_use]
    pub fn continuing(mut self, written: u64) -> Self {
        self.rows.continue_output();
        self.written = written;
        self
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
    use crate::keys::KeyTexts;

    #[test]
    fn numbers() {
        assert_eq!(format_number(6.0), "6");
        assert_eq!(format_number(-3.0), "-3");
        assert_eq!(format_number(-0.0), "0");
        assert_eq!(format_number(2.5), "2.5");
        assert_eq!(format_number(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(format_number(9_007_199_254_740_991.0), "9007199254740991");
        assert_eq!(
            format_number(9_007_199_254_740_992.0),
            "9.007199254740992e15"
        );
        assert_eq!(format_number(f64::NAN), "NaN");
        assert_eq!(format_number(f64::INFINITY), "inf");
    }

    /// Issue #16, item 13: several aggregates, one column each, in place of `result`, in CSV
    /// and JSON lines, with the `empty` column; an empty result leaves every column empty.
    #[test]
    fn several_result_columns() {
        let dictionary = crate::keys::KeyDictionary::shared();
        let id = dictionary.intern("k,1");
        let mut keys = KeyTexts::new(dictionary);
        let mut rows = |format, empty_column| {
            let names = ["count", "sum", "max"];
            let mut w = ResultWriter::with_result_columns(Vec::new(), format, &names, empty_column);
            let values = [Some(3.0), Some(2.5), None].map(NumericResult::Float);
            w.write_interned_values(&mut keys, id, Some((0, 10)), &values, false)
                .unwrap();
            w.write_interned_values(&mut keys, id, None, &[], true)
                .unwrap();
            assert_eq!(w.records_written(), 2);
            String::from_utf8(w.into_inner().unwrap()).unwrap()
        };
        assert_eq!(
            rows(OutputFormat::Csv, false),
            "key,window_start,window_end,count,sum,max\n\"k,1\",0,10,3,2.5,\n\"k,1\",,,,,\n"
        );
        assert_eq!(
            rows(OutputFormat::Csv, true),
            "key,window_start,window_end,count,sum,max,empty\n\"k,1\",0,10,3,2.5,,false\n\"k,1\",,,,,,true\n"
        );
        assert_eq!(
            rows(OutputFormat::Jsonl, true),
            "{\"key\":\"k,1\",\"window_start\":0,\"window_end\":10,\"count\":3,\"sum\":2.5,\"max\":null,\"empty\":false}\n\
             {\"key\":\"k,1\",\"window_start\":null,\"window_end\":null,\"count\":null,\"sum\":null,\"max\":null,\"empty\":true}\n"
        );
        // One name is the single-aggregate writer, byte for byte.
        let mut one =
            ResultWriter::with_result_columns(Vec::new(), OutputFormat::Csv, &["result"], false);
        one.write_interned_values(
            &mut keys,
            id,
            Some((0, 10)),
            &[NumericResult::Float(Some(6.0))],
            false,
        )
        .unwrap();
        let mut single = ResultWriter::new(Vec::new(), OutputFormat::Csv);
        single
            .write_interned(&mut keys, id, Some((0, 10)), Some(6.0), false)
            .unwrap();
        assert_eq!(one.into_inner().unwrap(), single.into_inner().unwrap());
        // A single value on a writer of several columns (an emptied window's row) fills the
        // first, the others are empty.
        let mut w =
            ResultWriter::with_result_columns(Vec::new(), OutputFormat::Csv, &["a", "b"], true);
        w.write_interned(&mut keys, id, Some((0, 10)), None, true)
            .unwrap();
        assert_eq!(
            String::from_utf8(w.into_inner().unwrap()).unwrap(),
            "key,window_start,window_end,a,b,empty\n\"k,1\",0,10,,,true\n"
        );
    }

    /// Issue #16, item 6: NaN and infinities were written as JSON `null`, which reads as an
    /// empty window's result; they are strings now, in both JSON result paths, and CSV writes
    /// them bare.
    #[test]
    fn non_finite_results_are_distinct_from_undefined_ones() {
        let results = [
            Some(f64::NAN),
            Some(f64::INFINITY),
            Some(f64::NEG_INFINITY),
            None,
        ];
        let mut w = ResultWriter::new(Vec::new(), OutputFormat::Jsonl);
        for result in results {
            w.write_result(&ResultRecord {
                key: "k",
                window_start: None,
                window_end: None,
                result,
            })
            .unwrap();
        }
        let out = String::from_utf8(w.into_inner().unwrap()).unwrap();
        let row = |r: &str| {
            format!("{{\"key\":\"k\",\"window_start\":null,\"window_end\":null,\"result\":{r}}}\n")
        };
        let want: String = ["\"NaN\"", "\"inf\"", "\"-inf\"", "null"]
            .iter()
            .map(|r| row(r))
            .collect();
        assert_eq!(out, want);
        // Every line is JSON, and the results read back apart.
        let read: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["result"].clone())
            .collect();
        assert_eq!(
            read,
            [
                serde_json::json!("NaN"),
                serde_json::json!("inf"),
                serde_json::json!("-inf"),
                serde_json::Value::Null
            ]
        );
        // The interned-key path writes the same.
        let dictionary = crate::keys::KeyDictionary::shared();
        let id = dictionary.intern("k");
        let mut keys = KeyTexts::new(dictionary);
        let mut w = ResultWriter::new(Vec::new(), OutputFormat::Jsonl);
        for result in results {
            w.write_interned(&mut keys, id, None, result, false)
                .unwrap();
        }
        assert_eq!(String::from_utf8(w.into_inner().unwrap()).unwrap(), want);
        // CSV: bare, and an undefined result is an empty field.
        let mut w = ResultWriter::new(Vec::new(), OutputFormat::Csv);
        for result in results {
            w.write_interned(&mut keys, id, Some((0, 10)), result, false)
                .unwrap();
        }
        assert_eq!(
            String::from_utf8(w.into_inner().unwrap()).unwrap(),
            "key,window_start,window_end,result\nk,0,10,NaN\nk,0,10,inf\nk,0,10,-inf\nk,0,10,\n"
        );
    }
}
