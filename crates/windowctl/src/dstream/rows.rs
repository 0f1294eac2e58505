//! The output rows of `windowctl dstream`, as CSV or JSON lines.
//!
//! CSV: the header `batch_time,key,result`, then one row per record; `key` is empty for the
//! operations over all events, `result` a number ([`format_number`]), a count, or a list
//! `[v1;v2]` ([`format_list`]). JSON lines, with the rules of `windowctl run`'s JSON output
//! (`window_io::sink`): one object per record with the same three members in that order,
//! `batch_time` an integer, `key` a JSON string (`null` for the operations over all events),
//! `result` a number in the form of [`format_number`], an integer count, or an array of numbers
//! for a list; a number that JSON cannot hold (NaN, an infinity) is `null`.

use std::io::Write;

use anyhow::{Context, Result};
use engine::io::{format_list, format_number, OutputFormat};

/// The result of one record.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    /// An aggregate or an event's value.
    Num(f64),
    /// A number of events.
    Count(i64),
    /// All values of a key (`group-by-key-and-window`).
    List(Vec<f64>),
}

impl Value {
    /// The CSV cell.
    fn csv(&self) -> String {
        match self {
            Value::Num(v) => format_number(*v),
            Value::Count(n) => n.to_string(),
            Value::List(vs) => format_list(vs),
        }
    }

    /// Appends the JSON value.
    fn push_json(&self, out: &mut String) {
        match self {
            Value::Num(v) => push_json_number(out, *v),
            Value::Count(n) => out.push_str(&n.to_string()),
            Value::List(vs) => {
                out.push('[');
                for (i, v) in vs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    push_json_number(out, *v);
                }
                out.push(']');
            }
        }
    }
}

/// A number as `windowctl run`'s JSON output writes it: [`format_number`], `null` for NaN and
/// the infinities (JSON has none).
fn push_json_number(out: &mut String, v: f64) {
    if v.is_finite() {
        out.push_str(&format_number(v));
    } else {
        out.push_str("null");
    }
}

/// One output row: a record of the output batch at `time`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Row {
    /// The batch time (the window's end), in ms.
    pub time: i64,
    /// The key; `None` for the operations over all events.
    pub key: Option<String>,
    /// The result.
    pub result: Value,
}

/// Sorts the records of one batch by key, then by the result as CSV writes it (the order of
/// `windowctl dstream`'s rows within a batch).
pub(super) fn sort_batch(rows: &mut [(Option<String>, Value)]) {
    rows.sort_by_cached_key(|(key, value)| (key.clone().unwrap_or_default(), value.csv()));
}

/// Writes rows in one of the two formats.
pub(super) enum RowSink<W: Write> {
    /// CSV with a header (boxed: the csv writer is large).
    Csv(Box<csv::Writer<W>>),
    /// JSON lines.
    Jsonl {
        /// The output.
        out: W,
        /// The line being built, reused.
        line: String,
    },
}

impl<W: Write> RowSink<W> {
    /// A sink in `format` on `out`; CSV writes its header now.
    ///
    /// # Errors
    /// Writing the header fails.
    pub(super) fn new(out: W, format: OutputFormat) -> Result<Self> {
        Ok(match format {
            OutputFormat::Csv => {
                let mut csv = csv::Writer::from_writer(out);
                csv.write_record(["batch_time", "key", "result"])
                    .context("writing output")?;
                RowSink::Csv(Box::new(csv))
            }
            OutputFormat::Jsonl => RowSink::Jsonl {
                out,
                line: String::new(),
            },
        })
    }

    /// Writes one row.
    ///
    /// # Errors
    /// The output fails.
    pub(super) fn write(&mut self, row: Row) -> Result<()> {
        match self {
            RowSink::Csv(csv) => csv
                .write_record([
                    row.time.to_string(),
                    row.key.unwrap_or_default(),
                    row.result.csv(),
                ])
                .context("writing output"),
            RowSink::Jsonl { out, line } => {
                line.clear();
                line.push_str("{\"batch_time\":");
                line.push_str(&row.time.to_string());
                line.push_str(",\"key\":");
                match &row.key {
                    // Serializing a str cannot fail.
                    Some(k) => line.push_str(&serde_json::to_string(k).unwrap_or_default()),
                    None => line.push_str("null"),
                }
                line.push_str(",\"result\":");
                row.result.push_json(line);
                line.push_str("}\n");
                out.write_all(line.as_bytes()).context("writing output")
            }
        }
    }

    /// Flushes the output.
    ///
    /// # Errors
    /// The output fails.
    pub(super) fn flush(&mut self) -> Result<()> {
        match self {
            RowSink::Csv(csv) => csv.flush(),
            RowSink::Jsonl { out, .. } => out.flush(),
        }
        .context("writing output")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jsonl(rows: Vec<Row>) -> String {
        let mut sink = RowSink::new(Vec::new(), OutputFormat::Jsonl).unwrap();
        for r in rows {
            sink.write(r).unwrap();
        }
        sink.flush().unwrap();
        let RowSink::Jsonl { out, .. } = sink else {
            unreachable!()
        };
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn json_lines_follow_the_run_rules() {
        let row = |key: Option<&str>, result| Row {
            time: 2000,
            key: key.map(str::to_owned),
            result,
        };
        let out = jsonl(vec![
            row(Some("a"), Value::Num(6.0)),
            row(Some("say \"hi\"\n"), Value::Num(2.5)),
            row(None, Value::Count(3)),
            row(Some("b"), Value::List(vec![1.0, 1e300, f64::NAN])),
            row(Some("c"), Value::Num(f64::INFINITY)),
        ]);
        assert_eq!(
            out,
            "{\"batch_time\":2000,\"key\":\"a\",\"result\":6}\n\
             {\"batch_time\":2000,\"key\":\"say \\\"hi\\\"\\n\",\"result\":2.5}\n\
             {\"batch_time\":2000,\"key\":null,\"result\":3}\n\
             {\"batch_time\":2000,\"key\":\"b\",\"result\":[1,1e300,null]}\n\
             {\"batch_time\":2000,\"key\":\"c\",\"result\":null}\n"
        );
        for line in out.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(v["batch_time"], 2000);
        }
    }

    #[test]
    fn batches_sort_by_key_then_csv_text() {
        let mut rows = vec![
            (Some("b".to_owned()), Value::Num(1.0)),
            (Some("a".to_owned()), Value::Num(9.0)),
            (Some("a".to_owned()), Value::Num(10.0)),
        ];
        sort_batch(&mut rows);
        let keys: Vec<_> = rows.iter().map(|r| (r.0.as_deref(), r.1.csv())).collect();
        assert_eq!(
            keys,
            [
                (Some("a"), "10".to_owned()),
                (Some("a"), "9".to_owned()),
                (Some("b"), "1".to_owned())
            ]
        );
    }
}
