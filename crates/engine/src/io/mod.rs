//! The I/O layer of `windowctl run`: parsing of duration flags, event sources
//! (CSV or JSON lines from files, gzipped files, stdin or a TCP socket) and
//! sinks for window results and late elements.
//!
//! Units throughout: timestamps and durations are `i64` milliseconds.

pub mod duration;
pub mod error;
pub mod sink;
pub mod source;

pub use duration::{parse_duration, parse_signed_duration};
pub use error::{DurationError, InputError, InputErrorKind, OpenError};
pub use sink::{
    create_output, format_number, LateWriter, OutputFormat, ResultRecord, ResultWriter,
};
pub use source::{
    open_source, spawn_reader, CsvHeader, DeadLetterWriter, ErrorPolicy, Event, EventReader,
    FieldNames, InputFormat, InputSpec, OnError, Progress, SourceMessage,
};
