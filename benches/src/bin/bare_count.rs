//! `bare_count [--csv|--jsonl] FILE`: the bare parse-and-count program of the end-to-end table
//! (`cargo xtask bench`). Reads `FILE` once (`.gz` decompressed with `flate2`; JSON lines for a
//! `.jsonl`/`.json` name unless `--csv`), counts events and sums values per key, and prints
//! `keys K events N value_sum S checksum C`. See `benches::e2e` for why it is built as it is.

use std::fs::File;
use std::io::Read;
use std::process::ExitCode;

use benches::e2e::{count_csv, count_jsonl, Counts};

fn count(path: &str, jsonl: Option<bool>) -> std::io::Result<Counts> {
    let file = File::open(path)?;
    let plain = path.strip_suffix(".gz");
    let name = plain.unwrap_or(path);
    let jsonl = jsonl.unwrap_or(name.ends_with(".jsonl") || name.ends_with(".json"));
    let input: Box<dyn Read> = if plain.is_some() {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    if jsonl {
        count_jsonl(input)
    } else {
        count_csv(input)
    }
}

fn main() -> ExitCode {
    let mut jsonl = None;
    let mut path = None;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--csv" => jsonl = Some(false),
            "--jsonl" => jsonl = Some(true),
            _ if path.is_none() && !arg.starts_with('-') => path = Some(arg),
            _ => {
                eprintln!("usage: bare_count [--csv|--jsonl] FILE");
                return ExitCode::from(2);
            }
        }
    }
    let Some(path) = path else {
        eprintln!("usage: bare_count [--csv|--jsonl] FILE");
        return ExitCode::from(2);
    };
    match count(&path, jsonl) {
        Ok(counts) => {
            println!("{}", counts.summary());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bare_count: {path}: {e}");
            ExitCode::FAILURE
        }
    }
}
