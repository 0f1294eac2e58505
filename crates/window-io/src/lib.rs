//! The I/O layer of window jobs: event sources (CSV or JSON lines from files, gzipped files,
//! stdin or a TCP socket) and sinks for window results, late elements and dead letters.
//!
//! Units throughout: timestamps and durations are `i64` milliseconds.

#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

pub mod batch;
mod bundled;
mod delimiter;
pub mod error;
mod fields;
mod json;
mod keys;
mod lines;
mod parse;
mod policy;
pub mod portable;
mod reader;
pub use reader::CsvQuotes;
mod rows;
pub mod sink;
pub mod source;
mod time;

pub use bundled::{find_bundled_data, find_bundled_data_from, BundledDataNotFound, BUNDLED_DATA};
pub use delimiter::Delimiter;
pub use error::{source_failure, InputError, InputErrorKind, OpenError};
pub use keys::{
    join_key_parts, push_key_part, split_key_parts, KeyCache, KeyDictionary, KeyId, KeyTexts,
};
pub use lines::{open_lines, TextLines};
pub use sink::{
    create_output, format_list, format_number, format_value, LateWriter, OutputFormat,
    ResultRecord, ResultWriter,
};
pub use source::{
    open_bytes, open_source, CsvHeader, DeadLetterWriter, ErrorPolicy, Event, EventReader,
    FieldNames, FieldUse, InputFormat, InputSpec, OnError, Progress, ReadPosition,
};
pub use time::{EventTimes, TimeUnit};
pub use window_core::Number;

use std::path::Path;

/// Whether `a` and `b` name the same file: where both exist, the same device and inode (as
/// `cat` checks its output against its inputs; also two names of one file, a hard link, and
/// `/dev/stdin` redirected from the file); elsewhere their canonical paths, else the paths as
/// given. Guards an output from overwriting an input.
#[must_use]
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            // Character devices (a terminal, /dev/null) are not files that can be destroyed.
            let regular = x.is_file() && y.is_file();
            return regular && (x.dev(), x.ino()) == (y.dev(), y.ino());
        }
    }
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        // A file still to be made: the same name in the same folder (`z.csv` and `./z.csv`).
        _ => to_be_made(a) == to_be_made(b),
    }
}

/// A path as a file still to be made is found: its folder canonical, then its name; the path as
/// given when its folder does not exist either.
fn to_be_made(path: &Path) -> std::path::PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    match (absolute.parent(), absolute.file_name()) {
        (Some(dir), Some(name)) => dir
            .canonicalize()
            .map_or_else(|_| absolute.clone(), |d| d.join(name)),
        _ => absolute,
    }
}
