//! Rows of fixed columns as CSV or JSON lines, built in one reused buffer: integers formatted by
//! `itoa`, other numbers by the standard library, text quoted by the csv crate's rule
//! (`csv_core`) or escaped by `serde_json`.
//! The buffer goes to the writer when it holds [`FLUSH_AT`] bytes, and on flush.
//!
//! The number format is the one of [`crate::format_number`]: an integral value below 2^53 as an
//! integer (`6`, not `6.0`), any other value as its shortest round-trip decimal, with an
//! exponent at or above 2^53 in magnitude and below 1e-6 (so that plain digits beyond 2^53 are
//! only ever printed for an exact integer result, [`Cell::Wide`] or `NumericResult::Integer`);
//! `NaN`, `inf` and `-inf` (in JSON as strings, `"NaN"`, `"inf"`, `"-inf"`, as JSON has no such
//! numbers and `null` is an undefined result).

use std::io::{self, Write};

use window_core::{Number, NumericResult};

use crate::sink::OutputFormat;

/// Integral values with a magnitude below this (2^53) print as integers.
const MAX_EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

/// Bytes gathered before they are handed to the writer.
pub(crate) const FLUSH_AT: usize = 64 * 1024;

/// One output cell.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Cell<'a> {
    /// Text, quoted or escaped as the format needs.
    Str(&'a str),
    /// Text already in the format's form (see [`encode_str`]).
    Encoded(&'a [u8]),
    Int(i64),
    /// An exact integer beyond the `i64` range (a sum of integers).
    Wide(i128),
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

impl From<NumericResult> for Cell<'_> {
    /// A number (`None`: an empty cell) or an exact integer.
    fn from(v: NumericResult) -> Self {
        match v {
            NumericResult::Float(v) => v.into(),
            NumericResult::Integer(i) => i64::try_from(i).map_or(Cell::Wide(i), Cell::Int),
        }
    }
}

impl From<Number> for Cell<'_> {
    /// An integer exactly, a float as [`push_number`] writes it.
    fn from(v: Number) -> Self {
        match v {
            Number::Int(i) => Cell::Int(i),
            Number::Float(f) => Cell::Num(f),
        }
    }
}

/// Appends a result cell's text (CSV): a number as [`push_number`], nothing for `None`, an
/// exact integer's digits.
pub(crate) fn push_result(out: &mut Vec<u8>, v: NumericResult) {
    match v {
        NumericResult::Float(Some(v)) => push_number(out, v),
        NumericResult::Float(None) => {}
        NumericResult::Integer(i) => {
            out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes())
        }
    }
}

/// Appends `v` as [`crate::format_number`] formats it: integers by `itoa`, the rest by the
/// standard library. (`ryu` is not used: where the shortest decimal has two candidates at the
/// same distance it picks the other one, `765806926036679.2` for the `f64` whose standard form
/// is `765806926036679.3`, and outputs must stay byte-identical.)
#[inline]
pub(crate) fn push_number(out: &mut Vec<u8>, v: f64) {
    if v.abs() < MAX_EXACT_INTEGER {
        // Below 2^53 the cast truncates exactly and the integer converts back exactly, so the
        // value is integral iff it survives the round trip (and -0.0 is 0). The same test as
        // `v.fract() == 0.0`, without the call to `trunc` that `fract` compiles to.
        let i = v as i64;
        if i as f64 == v {
            out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
            return;
        }
    }
    push_fraction(out, v);
}

/// [`push_number`] for a value that is not an integer below 2^53.
#[inline(never)]
fn push_fraction(out: &mut Vec<u8>, v: f64) {
    if v.is_finite() && (v.abs() >= MAX_EXACT_INTEGER || (v != 0.0 && v.abs() < 1e-6)) {
        // Shortest round-trip with an exponent (`1e300`, not 301 digits; `9.007199254740994e15`
        // from 2^53 up, so that plain digits beyond 2^53 are always an exact integer result).
        let _ = write!(out, "{v:e}");
    } else {
        let _ = write!(out, "{v}");
    }
}

/// Appends `s` in the form of `format`: for CSV quoted where the csv crate quotes it (a quote,
/// comma, CR or LF inside), quotes doubled; for JSON a JSON string.
pub(crate) fn encode_str(format: OutputFormat, s: &str, out: &mut Vec<u8>) {
    match format {
        OutputFormat::Csv => {
            let bytes = s.as_bytes();
            if !csv_core::Writer::new().should_quote(bytes) {
                out.extend_from_slice(bytes);
                return;
            }
            out.push(b'"');
            let mut input = bytes;
            while !input.is_empty() {
                // Room for every byte doubled: one pass.
                let start = out.len();
                out.resize(start + 2 * input.len(), 0);
                let (_, read, written) =
                    csv_core::quote(input, &mut out[start..], b'"', b'\\', true);
                out.truncate(start + written);
                input = &input[read..];
            }
            out.push(b'"');
        }
        OutputFormat::Jsonl => {
            // Writing a str into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *out, s);
        }
    }
}

/// A CSV or JSON-lines writer of rows with fixed column names.
pub(crate) struct RowWriter<W: Write> {
    /// `None` only after [`RowWriter::into_inner`].
    writer: Option<W>,
    format: OutputFormat,
    /// The CSV header's names.
    columns: Vec<String>,
    header_written: bool,
    /// Rows not yet handed to the writer.
    buf: Vec<u8>,
    /// The JSON member names, `"key":` ..., encoded once, one per cell; empty for a cell that
    /// holds its members, names included ([`RowWriter::set_key_columns`]).
    json_names: Vec<Vec<u8>>,
}

impl<W: Write> RowWriter<W> {
    pub(crate) fn new(writer: W, format: OutputFormat, columns: &[&str]) -> Self {
        let json_names = columns
            .iter()
            .map(|name| {
                let mut b = Vec::new();
                encode_str(OutputFormat::Jsonl, name, &mut b);
                b.push(b':');
                b
            })
            .collect();
        Self {
            writer: Some(writer),
            format,
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            header_written: false,
            buf: Vec::with_capacity(FLUSH_AT + 1024),
            json_names,
        }
    }

    pub(crate) fn format(&self) -> OutputFormat {
        self.format
    }

    /// Makes the cell at `at` stand for the columns `names` (a composite key, one column per
    /// field): the CSV header names them in its place, and the cell is written as it is given,
    /// its fields joined by commas in CSV, its members with their names in JSON
    /// (`"a":"x","b":"y"`).
    pub(crate) fn set_key_columns(&mut self, at: usize, names: &[String]) {
        if at < self.columns.len() {
            self.columns.splice(at..=at, names.iter().cloned());
            self.json_names[at].clear();
        }
    }

    /// Treats the header as written: the writer continues an output that has it (a job
    /// resumed from a checkpoint).
    pub(crate) fn continue_output(&mut self) {
        self.header_written = true;
    }

    /// Writes the CSV header before the first row: a flag test per row, the header itself out
    /// of line (the test and the store were ~20 instructions a row when not inlined).
    #[inline]
    fn write_header_once(&mut self) {
        if !self.header_written {
            self.write_header();
        }
    }

    #[cold]
    #[inline(never)]
    fn write_header(&mut self) {
        if self.format == OutputFormat::Csv {
            for (i, name) in self.columns.iter().enumerate() {
                if i > 0 {
                    self.buf.push(b',');
                }
                encode_str(OutputFormat::Csv, name, &mut self.buf);
            }
            self.buf.push(b'\n');
        }
        self.header_written = true;
    }

    pub(crate) fn write_row(&mut self, cells: &[Cell<'_>]) -> io::Result<()> {
        self.write_header_once();
        let buf = &mut self.buf;
        match self.format {
            OutputFormat::Csv => {
                for (i, cell) in cells.iter().enumerate() {
                    if i > 0 {
                        buf.push(b',');
                    }
                    match *cell {
                        Cell::Str(s) => encode_str(OutputFormat::Csv, s, buf),
                        Cell::Encoded(b) => buf.extend_from_slice(b),
                        Cell::Int(i) => {
                            buf.extend_from_slice(itoa::Buffer::new().format(i).as_bytes())
                        }
                        Cell::Wide(i) => {
                            buf.extend_from_slice(itoa::Buffer::new().format(i).as_bytes())
                        }
                        Cell::Num(v) => push_number(buf, v),
                        Cell::Bool(b) => buf.extend_from_slice(if b { b"true" } else { b"false" }),
                        Cell::Null => {}
                    }
                }
                buf.push(b'\n');
            }
            OutputFormat::Jsonl => {
                buf.push(b'{');
                for (i, (name, cell)) in self.json_names.iter().zip(cells).enumerate() {
                    if i > 0 {
                        buf.push(b',');
                    }
                    // An empty name: the cell holds its members, names included.
                    buf.extend_from_slice(name);
                    match *cell {
                        Cell::Str(s) => encode_str(OutputFormat::Jsonl, s, buf),
                        Cell::Encoded(b) => buf.extend_from_slice(b),
                        Cell::Int(i) => {
                            buf.extend_from_slice(itoa::Buffer::new().format(i).as_bytes())
                        }
                        Cell::Wide(i) => {
                            buf.extend_from_slice(itoa::Buffer::new().format(i).as_bytes())
                        }
                        Cell::Bool(b) => buf.extend_from_slice(if b { b"true" } else { b"false" }),
                        Cell::Num(v) if v.is_finite() => push_number(buf, v),
                        // JSON has no NaN or infinity, and `null` is an undefined result (the
                        // mean of an empty window): the strings "NaN", "inf" and "-inf".
                        Cell::Num(v) => {
                            buf.push(b'"');
                            push_number(buf, v);
                            buf.push(b'"');
                        }
                        Cell::Null => buf.extend_from_slice(b"null"),
                    }
                }
                buf.extend_from_slice(b"}\n");
            }
        }
        if self.buf.len() >= FLUSH_AT {
            self.hand_over()?;
        }
        Ok(())
    }

    /// Appends one CSV row that `row` builds in the buffer (the caller's fast path for a row
    /// shape it knows), after the header, as [`RowWriter::write_row`] would.
    // Inlined into its one caller's row loop: left to itself the compiler inlined it in some
    // builds and not in others (+4 % instructions on sliced jobs, cachegrind).
    #[inline(always)]
    pub(crate) fn write_csv_with(&mut self, row: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        debug_assert_eq!(self.format, OutputFormat::Csv);
        self.write_header_once();
        row(&mut self.buf);
        if self.buf.len() >= FLUSH_AT {
            self.hand_over()?;
        }
        Ok(())
    }

    /// Hands the gathered rows to the writer.
    fn hand_over(&mut self) -> io::Result<()> {
        if let Some(w) = self.writer.as_mut() {
            if !self.buf.is_empty() {
                // On failure the rows stay gathered: nothing is lost, the error is reported.
                w.write_all(&self.buf)?;
                self.buf.clear();
            }
        }
        Ok(())
    }

    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.write_header_once();
        self.hand_over()?;
        match self.writer.as_mut() {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }

    pub(crate) fn into_inner(mut self) -> io::Result<W> {
        self.flush()?;
        self.writer
            .take()
            .ok_or_else(|| io::Error::other("the writer was taken"))
    }
}

impl<W: Write> Drop for RowWriter<W> {
    /// Hands over what was gathered, as a `BufWriter` does when dropped (errors are ignored
    /// here; call `flush` to see them).
    fn drop(&mut self) {
        let _ = self.hand_over();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(v: f64) -> String {
        let mut b = Vec::new();
        push_number(&mut b, v);
        String::from_utf8(b).unwrap()
    }

    /// The number rule on values whose text is known (written out, not computed by the rule).
    #[test]
    fn numbers_follow_the_output_rule() {
        for (v, text) in [
            (0.0, "0"),
            (-0.0, "0"),
            (6.0, "6"),
            (-3.0, "-3"),
            (9_007_199_254_740_991.0, "9007199254740991"),
            // From 2^53 up with an exponent: plain digits there are left to exact integers.
            (9_007_199_254_740_992.0, "9.007199254740992e15"),
            (9_007_199_254_740_994.0, "9.007199254740994e15"),
            (-9_007_199_254_740_994.0, "-9.007199254740994e15"),
            (1e16, "1e16"),
            (2.5, "2.5"),
            (-2.5, "-2.5"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e15 + 0.5, "1000000000000000.5"),
            // std breaks this tie upwards; ryu would write ...679.2.
            (f64::from_bits(0x4305_c3fa_8e57_f63a), "765806926036679.3"),
            (1e-6, "0.000001"),
            (9.99e-7, "9.99e-7"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ] {
            assert_eq!(number(v), text, "{v:e}");
        }
    }

    /// `itoa` writes every integer below 2^53 as the standard library writes it.
    #[test]
    fn itoa_writes_integers_as_the_standard_library_writes_them() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..300_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Every magnitude from 0 to 2^53, both signs.
            let bits = (state % 54) as u32;
            let magnitude = (state >> 10) & ((1_u64 << bits) - 1).max(1);
            let i = if state & 1 == 0 {
                magnitude as i64
            } else {
                -(magnitude as i64)
            };
            assert_eq!(number(i as f64), i.to_string(), "{i}");
        }
    }

    #[test]
    fn text_is_quoted_as_the_csv_crate_quotes_it() {
        for s in [
            "a",
            "",
            "a,b",
            "say \"hi\"",
            "line\nbreak",
            "cr\r",
            "é ü",
            " padded ",
        ] {
            let mut ours = Vec::new();
            encode_str(OutputFormat::Csv, s, &mut ours);
            let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
            w.write_record([s, "x"]).unwrap();
            let theirs = w.into_inner().unwrap();
            let theirs = &theirs[..theirs.len() - 3]; // without ",x\n"
            assert_eq!(ours, theirs, "{s:?}");
        }
    }
}
