//! JSON-lines source on arbitrary bytes: as the CSV target.
#![no_main]

use engine::io::InputFormat;
use libfuzzer_sys::fuzz_target;

#[path = "common/source.rs"]
mod source;

fuzz_target!(|data: &[u8]| source::windowing_fuzz_source(data, InputFormat::Jsonl));
