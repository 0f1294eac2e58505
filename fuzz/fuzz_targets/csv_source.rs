//! CSV source on arbitrary bytes: every line gives an event or a located error, never a panic;
//! line numbers never go back; a reader moved to a position the first one reported continues
//! with the same records (what a checkpoint resume does).
#![no_main]

use engine::io::InputFormat;
use libfuzzer_sys::fuzz_target;

#[path = "common/source.rs"]
mod source;

fuzz_target!(|data: &[u8]| source::windowing_fuzz_source(data, InputFormat::Csv));
