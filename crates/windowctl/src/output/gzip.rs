//! Outputs that end with more than a flush: a `.gz` output is a gzip stream whose trailer is
//! written at the end (as a `.gz` input is read through a gzip decoder), and an error writing
//! it must fail the job like any other write error.

use std::io::{self, Write};
use std::path::Path;

use anyhow::Result;
use engine::io::create_output;

/// An output the writer thread finishes at the end.
pub(crate) trait Finish: Write + Send {
    /// Flushes and writes what ends the stream (nothing for a plain file).
    ///
    /// # Errors
    /// The write or the flush fails.
    fn finish(&mut self) -> io::Result<()>;
}

/// The writers' output.
pub(crate) type Out = Box<dyn Finish>;

/// A plain output: finishing is flushing.
pub(crate) struct Plain(pub(crate) Box<dyn Write + Send>);

impl Write for Plain {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl Finish for Plain {
    fn finish(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// A gzip-compressed output (flate2's encoder).
struct Gzip(Option<flate2::write::GzEncoder<Box<dyn Write + Send>>>);

impl Write for Gzip {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.0 {
            Some(g) => g.write(buf),
            None => Err(io::Error::other("the gzip stream was finished")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.0 {
            Some(g) => g.flush(),
            None => Ok(()),
        }
    }
}

impl Finish for Gzip {
    fn finish(&mut self) -> io::Result<()> {
        match self.0.take() {
            Some(g) => g.finish()?.flush(),
            None => Ok(()),
        }
    }
}

/// Creates an output: a file whose name ends in `.gz` is written gzip-compressed, anything else
/// as it is; `-` is stdout.
///
/// # Errors
/// The file cannot be created.
pub(crate) fn create_maybe_gzip(target: &str) -> Result<Out> {
    let out = create_output(target)?;
    Ok(if is_gzip_name(target) {
        let encoder = flate2::write::GzEncoder::new(out, flate2::Compression::default());
        Box::new(Gzip(Some(encoder)))
    } else {
        Box::new(Plain(out))
    })
}

/// Whether an output named `target` is written gzip-compressed (its name ends in `.gz`).
pub(crate) fn is_gzip_name(target: &str) -> bool {
    Path::new(target)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
}

/// Whether the process was started with its standard output closed (`windowctl ... >&-`): Rust's
/// runtime then opens `/dev/null` read-write on descriptor 1 (a shell's `>/dev/null` opens it
/// write-only), so every result written to stdout would be lost without an error. Linux only
/// (`/proc`); elsewhere `false`.
pub(crate) fn stdout_was_closed() -> bool {
    descriptor_was_closed(1)
}

/// Whether the process was started with its standard input closed (`windowctl ... <&-`), which
/// would read as an empty input: as [`stdout_was_closed`], for descriptor 0 (a shell's
/// `</dev/null` opens it read-only).
pub(crate) fn stdin_was_closed() -> bool {
    descriptor_was_closed(0)
}

/// Whether descriptor `fd` (0, 1 or 2) is the `/dev/null` opened read-write that Rust's runtime
/// puts in place of a descriptor the process was started without.
fn descriptor_was_closed(fd: u8) -> bool {
    let target = std::fs::read_link(format!("/proc/self/fd/{fd}"));
    if target.ok().as_deref() != Some(Path::new("/dev/null")) {
        return false;
    }
    let Ok(info) = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")) else {
        return false;
    };
    // `flags:` is octal; O_ACCMODE is 3, O_RDWR 2.
    info.lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
        .is_some_and(|flags| flags & 3 == 2)
}
