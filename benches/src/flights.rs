//! A replay of the bundled real data, NYC flights 2013 (`data/`, CC0), time-compressed.
//!
//! Each of the 328,521 departures is one event; the files differ only in the key: tail number
//! (`nycflights13_tailnum.csv.gz`, 4,037 aircraft, every key sparse) and destination
//! (`nycflights13_dest.csv.gz`, 104 airports, a few hot keys). Rows are in arrival order, which
//! is not event-time order (up to 21.7 h late), so the replay needs a watermark delay.
//!
//! **Time compression:** event time is replayed [`TIME_COMPRESSION`] = 60 times faster:
//! `t' = (t - 2013-01-01T00:00Z) / 60`, so one real minute is one replayed second and the year
//! spans six days. The benchmark's windows, 60 s sliding every 1 s, are therefore the real data's
//! 1 h sliding every 1 min (`cargo xtask compare-strategies`), and the 6 h watermark delay of
//! `windowctl`'s default job becomes [`WATERMARK_DELAY_MS`] = 360 s. Keys are interned to
//! `u32` ids in order of first appearance while loading (before any clock starts).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use engine::io::{open_source, FieldNames, InputFormat, InputSpec};

use crate::GeneratedEvent;

/// Replayed event time runs this many times faster than real time.
pub const TIME_COMPRESSION: i64 = 60;
/// The origin of replayed time: 2013-01-01T00:00:00Z in ms.
pub const TIME_ORIGIN_MS: i64 = 1_356_998_400_000;
/// Watermark delay of the replay: 6 h of real time, compressed.
pub const WATERMARK_DELAY_MS: i64 = 6 * 3_600_000 / TIME_COMPRESSION;
/// Window size of the flights workloads: 1 h of real time, compressed (60 s).
pub const WINDOW_SIZE_MS: i64 = 3_600_000 / TIME_COMPRESSION;
/// Window slide of the flights workloads: 1 min of real time, compressed (1 s).
pub const WINDOW_SLIDE_MS: i64 = 60_000 / TIME_COMPRESSION;

/// Which bundled file: which field is the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlightsKey {
    /// Keyed by aircraft tail number: many sparse keys.
    TailNumber,
    /// Keyed by destination airport: hot keys next to rare ones.
    Destination,
}

impl FlightsKey {
    /// The file under `data/`.
    #[must_use]
    pub fn file_name(self) -> &'static str {
        match self {
            FlightsKey::TailNumber => "nycflights13_tailnum.csv.gz",
            FlightsKey::Destination => "nycflights13_dest.csv.gz",
        }
    }

    /// `tailnum` or `dest`.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            FlightsKey::TailNumber => "tailnum",
            FlightsKey::Destination => "dest",
        }
    }
}

/// The repository's `data/` directory.
#[must_use]
pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data")
}

/// Reads the first `limit` events (all with `None`) of the flights file keyed by `key`, in
/// arrival order, time-compressed, with keys interned to ids.
///
/// # Errors
/// The file cannot be opened or a line does not parse (the message names file and line).
pub fn load_flights(key: FlightsKey, limit: Option<usize>) -> Result<Vec<GeneratedEvent>, String> {
    let path = data_dir().join(key.file_name());
    let reader = open_source(
        &InputSpec::File(path.clone()),
        InputFormat::Csv,
        FieldNames::default(),
    )
    .map_err(|e| e.to_string())?;
    let mut ids: HashMap<String, u32> = HashMap::new();
    let mut events = Vec::with_capacity(limit.unwrap_or(330_000).min(330_000));
    for event in reader.take(limit.unwrap_or(usize::MAX)) {
        let event = event.map_err(|e| e.to_string())?;
        let next = ids.len() as u32;
        let id = *ids.entry(event.key).or_insert(next);
        let t = (event.timestamp - TIME_ORIGIN_MS).div_euclid(TIME_COMPRESSION);
        events.push((t, id, event.value.as_f64()));
    }
    Ok(events)
}
