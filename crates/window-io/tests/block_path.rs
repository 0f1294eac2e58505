//! The block path of the reader (`EventReader::next_plain_block`, what a file source's
//! `read_batch` takes for plain CSV lines) hands out exactly what the line-by-line path
//! (`next_event`) does: the same events with the same line numbers, the same errors, and the
//! same read positions, whatever the buffer size and however the batches are cut. Random CSV
//! texts with a BOM, CRLF ends, blank lines, bad records, quotes (also spanning lines), invalid
//! UTF-8, long lines and a last line without its end.

use std::io::{BufReader, Cursor};

use window_io::{EventReader, FieldNames, InputError, InputFormat, ReadPosition};

mod common;
use common::Rng;

fn reader(text: &[u8], buffer: usize) -> EventReader {
    let input = BufReader::with_capacity(buffer, Cursor::new(text.to_vec()));
    EventReader::new(input, "in.csv", InputFormat::Csv, FieldNames::default())
}

/// A random CSV input.
fn random_text(rng: &mut Rng) -> Vec<u8> {
    let mut text = Vec::new();
    if rng.below(4) == 0 {
        text.extend_from_slice("\u{feff}".as_bytes());
    }
    text.extend_from_slice(b"event_time_ms,key,value\n");
    for i in 0..rng.below(200) {
        let end: &[u8] = if rng.below(5) == 0 { b"\r\n" } else { b"\n" };
        let line: Vec<u8> = match rng.below(20) {
            0 => Vec::new(),
            1 => b" \t ".to_vec(),
            2 => format!("not a record {i}").into_bytes(),
            3 => format!("{i},\"k{}\",5", rng.below(3)).into_bytes(),
            4 => format!("{i},\"k\nstill k\",5").into_bytes(),
            5 => [&b"7,k\xff"[..], b",1"].concat(),
            6 => format!(
                "{i},k{},{}",
                rng.below(3),
                "9".repeat(rng.below(3000) as usize)
            )
            .into_bytes(),
            7 => format!("{i},k1").into_bytes(),
            8 => format!("{i},k\u{e9}{},1.5", rng.below(3)).into_bytes(),
            9 => format!("{i},,3").into_bytes(),
            10 => format!("x{i},k1,3").into_bytes(),
            11 => format!("{i},k1,3\rx").into_bytes(),
            _ => format!("{},k{},{}", i * 7, rng.below(5), rng.below(100)).into_bytes(),
        };
        text.extend_from_slice(&line);
        text.extend_from_slice(end);
    }
    if rng.below(2) == 0 {
        text.extend_from_slice(b"99,last,1");
    }
    text
}

/// What a reader hands out, as text, with the position after each item.
fn line_by_line(text: &[u8], buffer: usize) -> Vec<(String, ReadPosition)> {
    let mut r = reader(text, buffer);
    let mut out = Vec::new();
    while let Some(item) = r.next_event() {
        out.push((format!("{item:?}"), r.read_position()));
    }
    out
}

/// The same through blocks of random sizes, each followed by one line-by-line item.
fn by_blocks(text: &[u8], buffer: usize, rng: &mut Rng) -> Vec<(String, ReadPosition)> {
    let mut r = reader(text, buffer);
    let mut out = Vec::new();
    loop {
        let max = 1 + rng.below(300) as usize;
        let mut batch = Vec::new();
        let n = r.next_plain_block(&mut batch, max, |k| k.into_owned());
        assert_eq!(n, batch.len());
        assert!(n <= max);
        let end = r.read_position();
        let k = batch.len();
        for (i, e) in batch.into_iter().enumerate() {
            // Only the position after a block's last event is known.
            let at = if i + 1 == k {
                end
            } else {
                ReadPosition::default()
            };
            out.push((format!("{:?}", Ok::<_, InputError>(e)), at));
        }
        if n == max {
            continue;
        }
        match r.next_event() {
            None => return out,
            Some(item) => out.push((format!("{item:?}"), r.read_position())),
        }
    }
}

#[test]
fn the_block_path_hands_out_what_the_line_path_does() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for round in 0..400 {
        let text = random_text(&mut rng);
        let buffer = match round % 4 {
            0 => 8 + rng.below(60) as usize,
            1 => 64 + rng.below(2000) as usize,
            _ => 8192 + rng.below(70_000) as usize,
        };
        let lines = line_by_line(&text, buffer);
        let blocks = by_blocks(&text, 8 + rng.below(100_000) as usize, &mut rng);
        assert_eq!(lines.len(), blocks.len(), "round {round}: item count");
        for (i, ((a, pa), (b, pb))) in lines.iter().zip(&blocks).enumerate() {
            assert_eq!(a, b, "round {round}, item {i}");
            if *pb != ReadPosition::default() {
                assert_eq!(pa, pb, "round {round}, item {i}: position");
            }
        }
    }
}
