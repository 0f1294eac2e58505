//! Timestamps as an input writes them, to the engine's `i64` milliseconds since the epoch: a
//! number in a [`TimeUnit`] (`--time-unit`), or an RFC 3339 date-time with a UTC offset
//! (`2013-01-01T05:15:00Z`, `2013-01-01T06:15:00.250+01:00`), whatever the unit.
//!
//! The engine's time is milliseconds, as Flink's (`StreamRecord` timestamps are `long` ms):
//! an instant finer than a millisecond (microseconds, nanoseconds, a fraction of a second with
//! more than 3 digits, an RFC 3339 fraction with more than 3 digits) is **floored** to the
//! millisecond that holds it, toward the past for negative times too, as Java's
//! `Instant.toEpochMilli` and Flink's `TimestampData.getMillisecond` do: so an element lands in
//! the window that holds its exact instant. A conversion whose millisecond is outside `i64` is
//! an error of the line, as any bad timestamp.
//!
//! RFC 3339 text is parsed by `toml_datetime` (the date-time grammar TOML takes from RFC 3339:
//! `T`, `t` or a space between date and time; `Z`, `z` or `±HH:MM`; seconds may be left out;
//! any number of fraction digits, read to the nanosecond); a leap second (`:60`) counts as the
//! second after `:59` (POSIX time has no leap seconds). A date-time without an offset is refused:
//! the engine has no time zone to read it in, and guessing one would move windows silently.

use std::fmt;
use std::str::FromStr;

use crate::error::InputErrorKind;

/// The unit of a numeric timestamp in an input (`windowctl run --time-unit`): what one of the
/// integer's steps means. The engine's time is milliseconds; the others are converted to it
/// (see the module documentation for rounding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TimeUnit {
    /// Seconds since the epoch (`1357016400`), with an optional decimal fraction
    /// (`1357016400.5`, as `time.time()` or the USGS feeds write it).
    Seconds,
    /// Milliseconds since the epoch, an integer: the engine's unit (the default).
    #[default]
    Millis,
    /// Microseconds since the epoch, an integer (floored to the millisecond).
    Micros,
    /// Nanoseconds since the epoch, an integer (floored to the millisecond).
    Nanos,
}

impl TimeUnit {
    /// The unit's name in messages: `seconds`, `milliseconds` ...
    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "seconds",
            TimeUnit::Millis => "milliseconds",
            TimeUnit::Micros => "microseconds",
            TimeUnit::Nanos => "nanoseconds",
        }
    }

    /// `n` steps of this unit in ms, floored; `None` outside `i64`.
    #[inline]
    fn to_millis(self, n: i128) -> Option<i64> {
        let ms = match self {
            TimeUnit::Seconds => n.checked_mul(1000)?,
            TimeUnit::Millis => n,
            TimeUnit::Micros => n.div_euclid(1000),
            TimeUnit::Nanos => n.div_euclid(1_000_000),
        };
        i64::try_from(ms).ok()
    }

    /// An integer of this unit (already read as an `i64`) in ms, floored; `None` outside `i64`.
    #[inline]
    pub(crate) fn millis_of(self, n: i64) -> Option<i64> {
        match self {
            TimeUnit::Millis => Some(n),
            TimeUnit::Seconds => n.checked_mul(1000),
            TimeUnit::Micros => Some(n.div_euclid(1000)),
            TimeUnit::Nanos => Some(n.div_euclid(1_000_000)),
        }
    }
}

impl fmt::Display for TimeUnit {
    /// `s`, `ms`, `us` or `ns`: what [`TimeUnit::from_str`] reads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimeUnit::Seconds => "s",
            TimeUnit::Millis => "ms",
            TimeUnit::Micros => "us",
            TimeUnit::Nanos => "ns",
        })
    }
}

impl FromStr for TimeUnit {
    type Err = String;

    /// `s`, `ms`, `us` (or `µs`) or `ns`, in any case.
    ///
    /// # Errors
    /// Any other text, with the accepted ones.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "s" => Ok(TimeUnit::Seconds),
            "ms" => Ok(TimeUnit::Millis),
            "us" | "µs" => Ok(TimeUnit::Micros),
            "ns" => Ok(TimeUnit::Nanos),
            _ => Err(format!(
                "unknown time unit {s:?} (expected s, ms, us or ns; RFC 3339 text such as \
                 2013-01-01T05:15:00Z is read in any unit)"
            )),
        }
    }
}

/// Why a number is not a timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NumberError {
    /// Not a number of the unit (a fraction is taken in seconds only).
    NotANumber,
    /// A number whose millisecond is outside `i64`.
    OutOfRange,
}

/// Digits of a magnitude beyond which no unit gives an `i64` millisecond (and `i128` holds
/// the product with 1000 safely).
const MAX_DIGITS: usize = 30;

/// The ms of a number written as text (trimmed): an integer with an optional sign, and in
/// seconds an optional fraction (`1357016400.5`, digits on both sides of the point), floored
/// to the millisecond. No exponents, no thousands separators.
pub(crate) fn number_millis(text: &str, unit: TimeUnit) -> Result<i64, NumberError> {
    let (int, fraction) = match text.split_once('.') {
        Some((int, fraction)) if unit == TimeUnit::Seconds => (int, Some(fraction)),
        Some(_) => return Err(NumberError::NotANumber),
        None => (text, None),
    };
    let (negative, digits) = match int.as_bytes().split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, int.as_bytes()),
    };
    let all_digits = |d: &[u8]| !d.is_empty() && d.iter().all(u8::is_ascii_digit);
    if !all_digits(digits) || fraction.is_some_and(|f| !all_digits(f.as_bytes())) {
        return Err(NumberError::NotANumber);
    }
    let significant = match digits.iter().position(|&d| d != b'0') {
        Some(first) => &digits[first..],
        None => &[],
    };
    if significant.len() > MAX_DIGITS {
        return Err(NumberError::OutOfRange);
    }
    let magnitude = significant
        .iter()
        .fold(0_i128, |n, &d| n * 10 + i128::from(d - b'0'));
    let signed = |n: i128| if negative { -n } else { n };
    match fraction {
        None => unit.to_millis(signed(magnitude)),
        Some(fraction) => {
            // Whole seconds and the first 3 digits of the fraction are the ms; any further
            // non-zero digit puts a negative time 1 ms further down (floor).
            let f = fraction.as_bytes();
            let ms_digits = (0..3).fold(0_i128, |n, i| {
                n * 10 + f.get(i).map_or(0, |d| i128::from(d - b'0'))
            });
            let below_ms = f.iter().skip(3).any(|&d| d != b'0');
            let ms = signed(magnitude * 1000 + ms_digits) - i128::from(negative && below_ms);
            i64::try_from(ms).ok()
        }
    }
    .ok_or(NumberError::OutOfRange)
}

/// Whether `text` (trimmed) reads as an attempt at a date: `YYYY-`. No number does.
pub(crate) fn looks_like_date(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() > 4 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-'
}

/// The ms of an RFC 3339 date-time with an offset (see the module documentation), floored to
/// the millisecond.
///
/// # Errors
/// What is wrong with the text, as a phrase: the parser's reason, a date without a time, a
/// date-time without an offset.
pub(crate) fn rfc3339_millis(text: &str) -> Result<i64, String> {
    let parsed = toml_datetime::Datetime::from_str(text).map_err(|e| e.to_string())?;
    let (Some(date), Some(time)) = (parsed.date, parsed.time) else {
        return Err("a date without a time of day".to_owned());
    };
    let offset_minutes = match parsed.offset {
        Some(toml_datetime::Offset::Z) => 0,
        Some(toml_datetime::Offset::Custom { minutes }) => i64::from(minutes),
        None => {
            return Err(
                "no UTC offset (add Z for UTC, or +HH:MM / -HH:MM): the engine has no time \
                 zone to read a local time in"
                    .to_owned(),
            )
        }
    };
    let days = days_from_civil(
        i64::from(date.year),
        i64::from(date.month),
        i64::from(date.day),
    );
    let seconds = days * 86_400
        + i64::from(time.hour) * 3600
        + i64::from(time.minute) * 60
        + i64::from(time.second)
        - offset_minutes * 60;
    // Years 0000-9999: far inside i64 ms.
    Ok(seconds * 1000 + i64::from(time.nanosecond / 1_000_000))
}

/// Days from 1970-01-01 to the proleptic Gregorian date `y-m-d` (Howard Hinnant's
/// `days_from_civil`, exact for every date).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Shortens and quotes an offending value for a message (at most 64 characters).
pub(crate) fn quote(text: &str) -> String {
    const MAX_QUOTED_CHARS: usize = 64;
    if text.chars().count() <= MAX_QUOTED_CHARS {
        format!("{text:?}")
    } else {
        let prefix: String = text.chars().take(MAX_QUOTED_CHARS).collect();
        format!("{prefix:?}...")
    }
}

/// A timestamp field's text (a CSV field or a JSON string) that is not a small integer, in
/// ms: a number of `unit`, else an RFC 3339 date-time.
///
/// # Errors
/// The kind and message of the line's error: missing (empty), not a number of the unit nor a
/// date-time, out of range.
pub(crate) fn timestamp_text_slow(
    text: &str,
    unit: TimeUnit,
) -> Result<i64, (InputErrorKind, String)> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err((InputErrorKind::MissingField, "missing (empty)".to_owned()));
    }
    let invalid = |message| Err((InputErrorKind::InvalidTimestamp, message));
    match number_millis(trimmed, unit) {
        Ok(t) => Ok(t),
        Err(NumberError::OutOfRange) => invalid(out_of_range(&quote(text), unit)),
        Err(NumberError::NotANumber) if looks_like_date(trimmed) => match rfc3339_millis(trimmed) {
            Ok(t) => Ok(t),
            Err(why) => invalid(format!(
                "{} is not an RFC 3339 date-time: {why}",
                quote(text)
            )),
        },
        Err(NumberError::NotANumber) => invalid(not_a_number(&quote(text), unit)),
    }
}

/// The message for a number whose millisecond is outside `i64`; `shown` is the number as the
/// message shows it.
pub(crate) fn out_of_range(shown: &str, unit: TimeUnit) -> String {
    match unit {
        TimeUnit::Millis => format!("{shown} is out of range for a 64-bit millisecond timestamp"),
        _ => format!(
            "{shown} {} is out of range for a 64-bit millisecond timestamp",
            unit.name()
        ),
    }
}

/// The message for a timestamp that is not a number of `unit` (nor a date-time).
pub(crate) fn not_a_number(shown: &str, unit: TimeUnit) -> String {
    match unit {
        TimeUnit::Seconds => format!(
            "{shown} is not a number of seconds (an integer, or a decimal fraction as \
             1357016400.5)"
        ),
        _ => format!("{shown} is not an integer number of {}", unit.name()),
    }
}

/// A JSON number timestamp (its text as written: `serde_json` keeps it) in ms.
///
/// # Errors
/// As [`timestamp_text_slow`]; an integral number beyond `i64` written with an exponent
/// (`1e30`) is out of range.
pub(crate) fn json_number_millis(
    n: &serde_json::Number,
    unit: TimeUnit,
    written: impl FnOnce() -> String,
) -> Result<i64, (InputErrorKind, String)> {
    let text = n.to_string();
    match number_millis(&text, unit) {
        Ok(t) => Ok(t),
        Err(error) => {
            /// 2^63, the first integer above the `i64` range.
            const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
            let integral_beyond = n
                .as_f64()
                .is_some_and(|f| f.fract() == 0.0 && !(-TWO_POW_63..TWO_POW_63).contains(&f));
            // The number as the input writes it (`1.5e3`, where `text` is serde's `1.5e+3`).
            let shown = written();
            let message = if error == NumberError::OutOfRange || integral_beyond {
                out_of_range(&shown, unit)
            } else {
                not_a_number(&shown, unit)
            };
            Err((InputErrorKind::InvalidTimestamp, message))
        }
    }
}

/// The smallest and largest event times a reader handed out, shared with whoever reports on
/// the job (a summary's hint that the times look like another unit, [`EventTimes::unit_hint`]).
/// Written by one reader only, read at any time: each bound is stored when it changes, a plain
/// store (no read-modify-write) on the reader's side.
#[derive(Debug, Clone)]
pub struct EventTimes {
    min: std::sync::Arc<std::sync::atomic::AtomicI64>,
    max: std::sync::Arc<std::sync::atomic::AtomicI64>,
}

impl Default for EventTimes {
    fn default() -> Self {
        Self {
            min: std::sync::Arc::new(std::sync::atomic::AtomicI64::new(i64::MAX)),
            max: std::sync::Arc::new(std::sync::atomic::AtomicI64::new(i64::MIN)),
        }
    }
}

/// 1990-01-01T00:00:00Z in seconds: the start of the dates a hint takes as plausible.
const PLAUSIBLE_FROM_S: i64 = 631_152_000;
/// 2100-01-01T00:00:00Z in seconds: the end of the dates a hint takes as plausible.
const PLAUSIBLE_TO_S: i64 = 4_102_444_800;

impl EventTimes {
    /// Widens the range to take in `range` (min, max): for a runtime whose readers each read a
    /// part of one input (`window-timely`'s chunks), once per part.
    pub fn include(&self, range: (i64, i64)) {
        use std::sync::atomic::Ordering::Relaxed;
        self.min.fetch_min(range.0, Relaxed);
        self.max.fetch_max(range.1, Relaxed);
    }

    /// The range of the event times seen, `None` before the first.
    pub fn range(&self) -> Option<(i64, i64)> {
        use std::sync::atomic::Ordering::Relaxed;
        let (min, max) = (self.min.load(Relaxed), self.max.load(Relaxed));
        (min <= max).then_some((min, max))
    }

    /// Notes an event time; `local` is the reader's own copy of the range (so the shared one
    /// is written only when a bound moves).
    #[inline]
    pub(crate) fn see(&self, local: &mut (i64, i64), t: i64) {
        use std::sync::atomic::Ordering::Relaxed;
        if t < local.0 {
            local.0 = t;
            self.min.store(t, Relaxed);
        }
        if t > local.1 {
            local.1 = t;
            self.max.store(t, Relaxed);
        }
    }

    /// A one-line hint when the times, read as `unit`, all fall in the first weeks of 1970 as
    /// milliseconds but would all be dates of 1990..2100 as seconds (or, far in the future,
    /// as microseconds or nanoseconds read as milliseconds): the flag that reads them so.
    /// `None` when no unit fits better, or for another unit than milliseconds.
    pub fn unit_hint(ranges: &[EventTimes], unit: TimeUnit) -> Option<String> {
        if unit != TimeUnit::Millis {
            return None;
        }
        let (min, max) = ranges
            .iter()
            .filter_map(EventTimes::range)
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))?;
        let plausible = |divisor: i64| {
            (PLAUSIBLE_FROM_S..PLAUSIBLE_TO_S).contains(&min.div_euclid(divisor))
                && (PLAUSIBLE_FROM_S..PLAUSIBLE_TO_S).contains(&max.div_euclid(divisor))
        };
        let (flag, as_ms) = if plausible(1) {
            ("s", "seconds")
        } else if plausible(1_000_000) {
            ("us", "microseconds")
        } else if plausible(1_000_000_000) {
            ("ns", "nanoseconds")
        } else {
            return None;
        };
        let when = |t: i64| match flag {
            "s" => "1970".to_owned(),
            _ => format!("the year {}", 1970 + t / 31_556_952_000),
        };
        Some(format!(
            "hint: the event times ({min} .. {max}) read as milliseconds are in {}; as {as_ms} \
             they would be dates of 1990..2100: if they are {as_ms}, add --time-unit {flag}",
            when(max)
        ))
    }
}

#[cfg(test)]
mod tests;
