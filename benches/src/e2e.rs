//! The end-to-end table of `cargo xtask bench`: `windowctl run` over a file, beside the least
//! that any program must do with the same file.
//!
//! The least is a *bare parse and count*: read the file once, parse each event's time and value,
//! count the events and sum the values per key in a hash map, print a checksum. It windows
//! nothing, so `windowctl`'s speed as a share of the bare program's says how much of the input
//! path's speed the engine keeps. The share is only honest if the bare program is as fast as a
//! plain single-threaded count can be made, so [`count_csv`] cuts lines and fields with `memchr`
//! in a 1 MiB buffer (the `csv` crate reads only lines with a quote or CR; reading every line
//! with it was 1.5 times slower), parses numbers straight from the field's bytes
//! (`lexical-core`), and counts in an `ahash` map keyed by the key's bytes that is looked up by
//! `&[u8]`: an owned key is made once per new key, never per event, and short keys live inside
//! the map's slots. [`count_jsonl`] does the same for JSON lines with a real JSON parse
//! (`serde_json` into a struct that borrows the key from the line). The `bare_count` binary runs
//! them on a file (`.gz` decompressed with `flate2`).
//!
//! The inputs are pure functions of their event count ([`write_inputs`], run by the `e2e_inputs`
//! binary): the Flink baseline workload ([`crate::flink`]) as CSV and as JSON lines, and 100k
//! Zipf-distributed keys ([`crate::keyed`]) at 100 events per ms.

use std::borrow::{Borrow, Cow};
use std::collections::HashMap;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::flink::flink_events;
use crate::keyed::{KeyDistribution, KeyedStream};
use crate::GeneratedEvent;

/// The read buffer of the bare programs: large enough that reading costs a system call per MiB.
pub const BUFFER_BYTES: usize = 1 << 20;

/// Keys of the Zipf input.
pub const ZIPF_KEYS: u32 = 100_000;

/// Events per ms of event time in the Zipf input (as in the Flink workload).
pub const ZIPF_EVENTS_PER_MS: u32 = 100;

/// The seed of the Zipf input (the table's seed for its 100k-Zipf stream).
pub const ZIPF_SEED: u64 = 0x5EED_0000 + ZIPF_KEYS as u64 * 2 + 1;

/// One key's totals.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KeyTotals {
    /// Events of the key.
    pub events: u64,
    /// Sum of the key's values, added in input order.
    pub sum: f64,
}

/// A key's bytes as the map owns them: up to [`Key::INLINE`] bytes inside the map's slot (no
/// pointer to follow on a look-up: 10 % faster on 100k keys than a `Box<[u8]>`), longer keys on
/// the heap. It hashes and compares as its bytes, so the map is looked up by `&[u8]`.
#[derive(Clone, Debug, Eq)]
enum Key {
    Inline(u8, [u8; Key::INLINE]),
    Heap(Box<[u8]>),
}

impl Key {
    /// The longest key kept inline (the slot is 24 bytes, like a `Box<[u8]>` and its tag).
    const INLINE: usize = 22;

    fn new(bytes: &[u8]) -> Self {
        if bytes.len() <= Self::INLINE {
            let mut inline = [0; Self::INLINE];
            inline[..bytes.len()].copy_from_slice(bytes);
            Key::Inline(bytes.len() as u8, inline)
        } else {
            Key::Heap(bytes.into())
        }
    }

    #[inline]
    fn bytes(&self) -> &[u8] {
        match self {
            Key::Inline(len, inline) => &inline[..usize::from(*len)],
            Key::Heap(bytes) => bytes,
        }
    }
}

impl PartialEq for Key {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.bytes() == other.bytes()
    }
}

impl Hash for Key {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.bytes().hash(state);
    }
}

impl Borrow<[u8]> for Key {
    #[inline]
    fn borrow(&self) -> &[u8] {
        self.bytes()
    }
}

/// Events counted and values summed per key, as the bare program keeps them.
#[derive(Debug, Default)]
pub struct Counts {
    per_key: HashMap<Key, KeyTotals, ahash::RandomState>,
    events: u64,
    time_sum: i64,
    value_sum: f64,
}

impl Counts {
    /// Adds one event: a hash-map look-up by the key's bytes, an allocation only for a new key.
    #[inline]
    pub fn add(&mut self, key: &[u8], time: i64, value: f64) {
        self.events += 1;
        self.time_sum = self.time_sum.wrapping_add(time);
        self.value_sum += value;
        if let Some(t) = self.per_key.get_mut(key) {
            t.events += 1;
            t.sum += value;
        } else {
            self.per_key.insert(
                Key::new(key),
                KeyTotals {
                    events: 1,
                    sum: value,
                },
            );
        }
    }

    /// Number of distinct keys.
    #[must_use]
    pub fn keys(&self) -> usize {
        self.per_key.len()
    }

    /// Number of events.
    #[must_use]
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The totals of one key.
    #[must_use]
    pub fn get(&self, key: &[u8]) -> Option<KeyTotals> {
        self.per_key.get(key).copied()
    }

    /// The sum of all values, added in input order (no sort of the keys at the end: the bare
    /// program's work stays that of the count).
    #[must_use]
    pub fn value_sum(&self) -> f64 {
        self.value_sum
    }

    /// A checksum of everything counted, independent of the map's order: per key a hash of its
    /// bytes, its count and the bits of its sum, added up; plus the wrapping sum of all times.
    #[must_use]
    pub fn checksum(&self) -> u64 {
        let mut total = self.time_sum as u64;
        for (key, t) in &self.per_key {
            // FNV-1a of the key: stable across runs, unlike the map's seeded hasher.
            let h = key.bytes().iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
            });
            total = total
                .wrapping_add(h ^ t.events.rotate_left(32))
                .wrapping_add(t.sum.to_bits());
        }
        total
    }

    /// The line the `bare_count` binary prints: `keys K events N value_sum S checksum C`.
    #[must_use]
    pub fn summary(&self) -> String {
        format!(
            "keys {} events {} value_sum {} checksum {:#018x}",
            self.keys(),
            self.events,
            self.value_sum(),
            self.checksum()
        )
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// A number from a field's bytes (`lexical-core`: no UTF-8 check, the standard library's
/// grammar and correctly rounded floats).
fn parse_field<T: lexical_core::FromLexical>(bytes: &[u8], what: &str, line: u64) -> io::Result<T> {
    lexical_core::parse(bytes).map_err(|_| {
        invalid(format!(
            "line {line}: {what} {:?} is not a number",
            String::from_utf8_lossy(bytes)
        ))
    })
}

/// The columns of the three fields, found in the header line.
#[derive(Clone, Copy, Debug)]
struct CsvColumns {
    time: usize,
    key: usize,
    value: usize,
}

/// Counts a CSV input with a header line naming `event_time_ms`, `key` and `value` (in any
/// order, among other columns).
///
/// Lines are cut out of a 1 MiB read buffer with `memchr` and split on commas in one `memchr`
/// pass; a line with a quote or a CR (whose fields the plain split would get wrong) goes through
/// the `csv` crate, as do the header and any line with too few fields, so the fields are the
/// csv crate's everywhere. Empty lines are skipped, as the csv crate skips them.
///
/// # Errors
/// A read error, a missing column, or a time or value that does not parse.
pub fn count_csv<R: Read>(mut input: R) -> io::Result<Counts> {
    let mut counts = Counts::default();
    let mut columns = None;
    let mut line = 0_u64;
    let mut buf = vec![0_u8; BUFFER_BYTES];
    let (mut start, mut filled) = (0, 0);
    loop {
        while let Some(n) = memchr::memchr(b'\n', &buf[start..filled]) {
            line += 1;
            count_csv_line(&buf[start..start + n], line, &mut columns, &mut counts)?;
            start += n + 1;
        }
        buf.copy_within(start..filled, 0);
        filled -= start;
        start = 0;
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0); // a line longer than the buffer
        }
        let read = input.read(&mut buf[filled..])?;
        if read == 0 {
            if filled > 0 {
                line += 1;
                count_csv_line(&buf[..filled], line, &mut columns, &mut counts)?;
            }
            break;
        }
        filled += read;
    }
    if columns.is_none() {
        return Err(invalid("no header line".to_owned()));
    }
    Ok(counts)
}

/// One line of [`count_csv`]: the header (the first non-empty line) or an event.
fn count_csv_line<'a>(
    raw: &'a [u8],
    line: u64,
    columns: &mut Option<CsvColumns>,
    counts: &mut Counts,
) -> io::Result<()> {
    if raw.is_empty() {
        return Ok(());
    }
    let Some(c) = *columns else {
        let header = csv_record(raw)?;
        let column = |name: &str| {
            header
                .iter()
                .position(|h| h == name.as_bytes())
                .ok_or_else(|| invalid(format!("no column {name} in the header")))
        };
        *columns = Some(CsvColumns {
            time: column("event_time_ms")?,
            key: column("key")?,
            value: column("value")?,
        });
        return Ok(());
    };
    let mut fields: [&'a [u8]; 3] = [&[]; 3];
    let mut found = 0;
    let mut plain = true;
    let mut take = |i: usize, field: &'a [u8]| {
        for (slot, want) in [c.time, c.key, c.value].into_iter().enumerate() {
            if i == want {
                fields[slot] = field;
                found += 1;
            }
        }
    };
    let (mut from, mut i) = (0, 0);
    for at in memchr::memchr3_iter(b',', b'"', b'\r', raw) {
        if raw[at] != b',' {
            plain = false;
            break;
        }
        take(i, &raw[from..at]);
        from = at + 1;
        i += 1;
    }
    if plain {
        take(i, &raw[from..]);
    }
    if plain && found == 3 {
        return count_fields(fields, line, counts);
    }
    // A quoted line, one with a CR, or one with too few fields: the csv crate reads it.
    let record = csv_record(raw)?;
    let (Some(time), Some(key), Some(value)) =
        (record.get(c.time), record.get(c.key), record.get(c.value))
    else {
        return Err(invalid(format!("line {line}: too few fields")));
    };
    count_fields([time, key, value], line, counts)
}

fn count_fields(fields: [&[u8]; 3], line: u64, counts: &mut Counts) -> io::Result<()> {
    let [time, key, value] = fields;
    let time = parse_field::<i64>(time, "time", line)?;
    let value = parse_field::<f64>(value, "value", line)?;
    counts.add(key, time, value);
    Ok(())
}

/// One CSV line's fields as the csv crate reads them.
fn csv_record(raw: &[u8]) -> io::Result<csv::ByteRecord> {
    let mut record = csv::ByteRecord::new();
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(raw)
        .read_byte_record(&mut record)?;
    Ok(record)
}

/// One JSON line; the key is borrowed from the line unless it has escapes.
#[derive(Deserialize)]
struct Row<'a> {
    event_time_ms: i64,
    #[serde(borrow)]
    key: Cow<'a, str>,
    value: f64,
}

/// Counts JSON lines `{"event_time_ms": T, "key": "K", "value": V}` (a string key; other fields
/// are skipped; blank lines too).
///
/// # Errors
/// A read error, or a line that is not such an object.
pub fn count_jsonl<R: Read>(input: R) -> io::Result<Counts> {
    let mut reader = BufReader::with_capacity(BUFFER_BYTES, input);
    let mut buf = Vec::with_capacity(256);
    let mut counts = Counts::default();
    let mut line = 0u64;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            return Ok(counts);
        }
        line += 1;
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let row: Row<'_> =
            serde_json::from_slice(&buf).map_err(|e| invalid(format!("line {line}: {e}")))?;
        counts.add(row.key.as_bytes(), row.event_time_ms, row.value);
    }
}

/// The generated input files of the end-to-end table, in a folder, named by their event count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inputs {
    /// The Flink baseline workload as CSV (`event_time_ms,key,value`, the key as decimal text).
    pub flink_csv: PathBuf,
    /// 100k Zipf keys, time in order at 100 events per ms, values 0..1000, as CSV.
    pub zipf_csv: PathBuf,
    /// The Flink baseline workload as JSON lines (the key a JSON string).
    pub flink_jsonl: PathBuf,
}

impl Inputs {
    /// The file names for `events` events in `dir`.
    #[must_use]
    pub fn in_dir(dir: &Path, events: usize) -> Self {
        Self {
            flink_csv: dir.join(format!("flink-{events}.csv")),
            zipf_csv: dir.join(format!("zipf100k-{events}.csv")),
            flink_jsonl: dir.join(format!("flink-{events}.jsonl")),
        }
    }
}

/// The Zipf input's events: [`ZIPF_KEYS`] keys, [`ZIPF_EVENTS_PER_MS`] events per ms.
#[must_use]
pub fn zipf_events(n: usize) -> Vec<GeneratedEvent> {
    KeyedStream {
        keys: ZIPF_KEYS,
        distribution: KeyDistribution::Zipf { exponent: 1.0 },
        events_per_ms: ZIPF_EVENTS_PER_MS,
        seed: ZIPF_SEED,
    }
    .generate(n)
}

/// Writes events as CSV with the header `event_time_ms,key,value`.
///
/// # Errors
/// A write error.
pub fn write_csv<W: Write>(out: W, events: &[GeneratedEvent]) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(BUFFER_BYTES, out);
    writeln!(out, "event_time_ms,key,value")?;
    for (time, key, value) in events {
        writeln!(out, "{time},{key},{value}")?;
    }
    out.flush()
}

/// Writes events as JSON lines `{"event_time_ms":T,"key":"K","value":V}`.
///
/// # Errors
/// A write error.
pub fn write_jsonl<W: Write>(out: W, events: &[GeneratedEvent]) -> io::Result<()> {
    let mut out = BufWriter::with_capacity(BUFFER_BYTES, out);
    for (time, key, value) in events {
        writeln!(
            out,
            r#"{{"event_time_ms":{time},"key":"{key}","value":{value}}}"#
        )?;
    }
    out.flush()
}

/// Writes the three inputs for `events` events into `dir` (created if missing) and returns
/// their paths. Each file is written under a temporary name and renamed, so a file with the
/// final name is always complete.
///
/// # Errors
/// The folder or a file could not be written.
pub fn write_inputs(dir: &Path, events: usize) -> io::Result<Inputs> {
    std::fs::create_dir_all(dir)?;
    let inputs = Inputs::in_dir(dir, events);
    let write = |path: &Path, f: &dyn Fn(File) -> io::Result<()>| -> io::Result<()> {
        let tmp = path.with_extension("tmp");
        f(File::create(&tmp)?)?;
        std::fs::rename(&tmp, path)
    };
    let flink = flink_events(events);
    write(&inputs.flink_csv, &|f| write_csv(f, &flink))?;
    write(&inputs.flink_jsonl, &|f| write_jsonl(f, &flink))?;
    drop(flink);
    let zipf = zipf_events(events);
    write(&inputs.zipf_csv, &|f| write_csv(f, &zipf))?;
    Ok(inputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_and_jsonl_count_the_same() {
        let events = flink_events(30_123);
        let (mut csv, mut jsonl) = (Vec::new(), Vec::new());
        write_csv(&mut csv, &events).unwrap();
        write_jsonl(&mut jsonl, &events).unwrap();
        let a = count_csv(&csv[..]).unwrap();
        let b = count_jsonl(&jsonl[..]).unwrap();
        assert_eq!((a.keys(), a.events()), (10_000, 30_123));
        assert_eq!(a.summary(), b.summary());
        // Key 123: events 123, 10123, 20123 (values 23 each), 30123 is past the end.
        assert_eq!(
            a.get(b"123"),
            Some(KeyTotals {
                events: 3,
                sum: 69.0
            })
        );
    }

    /// The plain split against the csv crate reading every line (the reference): generated
    /// events with CRLF lines, quoted fields, empty lines, extra columns and a line longer than
    /// the read buffer among them.
    #[test]
    fn csv_count_matches_the_csv_crate() {
        let mut text = String::from("value,x,event_time_ms,key\n");
        for (i, (time, key, value)) in flink_events(5_000).into_iter().enumerate() {
            match i % 7 {
                0 => text.push_str(&format!("{value},1,{time},{key}\r\n")),
                1 => text.push_str(&format!("\"{value}\",\"a,b\",{time},\"k{key}\"\"\"\n")),
                2 => text.push_str(&format!("\n{value},,{time},{key}\n")),
                _ => text.push_str(&format!("{value},,{time},{key}\n")),
            }
        }
        let long = "z".repeat(BUFFER_BYTES + 10);
        text.push_str(&format!("1.5,,7,{long}\n3,,8,last"));
        let mut reference = Counts::default();
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        for r in reader.byte_records() {
            let r = r.unwrap();
            let time = lexical_core::parse::<i64>(&r[2]).unwrap();
            let value = lexical_core::parse::<f64>(&r[0]).unwrap();
            reference.add(&r[3], time, value);
        }
        let counted = count_csv(text.as_bytes()).unwrap();
        assert_eq!(counted.events(), 5_002);
        assert_eq!(counted.summary(), reference.summary());
        assert_eq!(counted.get(long.as_bytes()).map(|t| t.sum), Some(1.5));
    }

    #[test]
    fn zipf_input_is_skewed_and_in_time_order() {
        let e = zipf_events(10_000);
        assert!(e.windows(2).all(|w| w[0].0 <= w[1].0));
        assert_eq!(e[9_999].0, 99);
        let hot = e.iter().filter(|x| x.1 == 0).count();
        assert!(hot > 500, "key 0 has {hot} of 10000 events");
    }
}
