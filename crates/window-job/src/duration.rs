//! Parsing of human-written durations (`250ms`, `5s`, `1min`, `1h`, `2d`) for
//! the command line's window sizes, slides, gaps, lateness and offsets.
//!
//! All results are `i64` milliseconds. The arithmetic is exact: fractions are
//! accepted only when they give a whole number of milliseconds (`1.5s` is
//! 1500 ms, `0.5ms` is an error), and overflow is an error, never a wrap.

/// Why a duration text such as `5s` or `-8h` was rejected.
///
/// Every variant carries the text as given by the user (`input`), and its
/// message names it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// The text is empty (or only whitespace).
    #[error("invalid duration {input:?}: it is empty (expected a number with a unit: ms, s, min, h or d, e.g. 5s)")]
    Empty {
        /// The rejected text.
        input: String,
    },
    /// The number part is missing or is not a decimal number.
    #[error("invalid duration {input:?}: {number:?} is not a number (expected e.g. 250ms, 1.5s, 1min, 1h, 2d)")]
    InvalidNumber {
        /// The rejected text.
        input: String,
        /// The part that should have been a number.
        number: String,
    },
    /// There is no number before the unit (`ms`, `bogus`).
    #[error("invalid duration {input:?}: it does not start with a number (expected e.g. 250ms, 1.5s, 1min, 1h, 2d)")]
    MissingNumber {
        /// The rejected text.
        input: String,
    },
    /// The unit is not one of `ms`, `s`, `min`, `h`, `d`.
    #[error("invalid duration {input:?}: unknown unit {unit:?} (allowed units: ms, s, min, h, d; no unit means ms)")]
    UnknownUnit {
        /// The rejected text.
        input: String,
        /// The unit as written.
        unit: String,
    },
    /// The duration does not fit in an `i64` number of milliseconds.
    #[error("invalid duration {input:?}: it does not fit in a 64-bit number of milliseconds")]
    Overflow {
        /// The rejected text.
        input: String,
    },
    /// A fractional value that is not a whole number of milliseconds (`0.5ms`).
    #[error("invalid duration {input:?}: it is not a whole number of milliseconds")]
    NotWholeMillis {
        /// The rejected text.
        input: String,
    },
    /// A sign where only non-negative durations are allowed.
    #[error("invalid duration {input:?}: it must not be negative or signed (only offsets may be negative)")]
    Negative {
        /// The rejected text.
        input: String,
    },
}

/// The accepted units and their length in milliseconds, as documented.
const UNITS: [(&str, i128); 5] = [
    ("ms", 1),
    ("s", 1_000),
    ("min", 60_000),
    ("h", 3_600_000),
    ("d", 86_400_000),
];

/// More significant fraction digits than this can never give a whole number
/// of milliseconds with the units above (the largest power of ten dividing
/// any unit length, times its spare factors of two or five, is below 10^11).
const MAX_FRACTION_DIGITS: usize = 30;

/// Parses a non-negative duration into milliseconds.
///
/// Accepts a decimal number followed by an optional unit (`ms`, `s`, `min`,
/// `h`, `d`; no unit means milliseconds), with optional spaces around and
/// between them: `250ms`, `5s`, `1.5s`, `1min`, `1h`, `2d`, `0`, `300`.
///
/// # Errors
///
/// Returns a [`DurationError`] naming the input if the text is empty, has no
/// number, has an unknown unit, is signed, does not fit in an `i64` number of
/// milliseconds, or is a fraction that is not a whole number of milliseconds.
pub fn parse_duration(s: &str) -> Result<i64, DurationError> {
    let text = s.trim();
    if text.starts_with(['-', '+']) {
        return Err(DurationError::Negative {
            input: s.to_owned(),
        });
    }
    parse_magnitude(s, text)
}

/// Parses a duration that may be negative (e.g. a window offset such as
/// `-8h`), into milliseconds.
///
/// Same syntax as [`parse_duration`], with an optional leading `-` or `+`.
///
/// # Errors
///
/// As [`parse_duration`], except that a sign is allowed.
pub fn parse_signed_duration(s: &str) -> Result<i64, DurationError> {
    let text = s.trim();
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let rest = rest.trim_start();
    if rest.starts_with(['-', '+']) {
        return Err(DurationError::InvalidNumber {
            input: s.to_owned(),
            number: rest.to_owned(),
        });
    }
    let magnitude = parse_magnitude_i128(s, rest)?;
    let value = if negative { -magnitude } else { magnitude };
    i64::try_from(value).map_err(|_| DurationError::Overflow {
        input: s.to_owned(),
    })
}

fn parse_magnitude(input: &str, text: &str) -> Result<i64, DurationError> {
    let value = parse_magnitude_i128(input, text)?;
    i64::try_from(value).map_err(|_| DurationError::Overflow {
        input: input.to_owned(),
    })
}

/// Parses `NUMBER [UNIT]` (unsigned) into milliseconds as an `i128`, which
/// cannot overflow for any input that fits in an `i64` result; larger values
/// are reported as overflow.
fn parse_magnitude_i128(input: &str, text: &str) -> Result<i128, DurationError> {
    if text.is_empty() {
        return Err(DurationError::Empty {
            input: input.to_owned(),
        });
    }
    let number_len = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(number_len);
    if number.is_empty() {
        return Err(DurationError::MissingNumber {
            input: input.to_owned(),
        });
    }
    let unit = unit.trim();
    let invalid_number = || DurationError::InvalidNumber {
        input: input.to_owned(),
        number: number.to_owned(),
    };
    let multiplier = if unit.is_empty() {
        1
    } else {
        match UNITS.iter().find(|(name, _)| *name == unit) {
            Some(&(_, ms)) => ms,
            None => {
                return Err(DurationError::UnknownUnit {
                    input: input.to_owned(),
                    unit: unit.to_owned(),
                })
            }
        }
    };

    let (int_part, frac_part) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number, ""),
    };
    if (int_part.is_empty() && frac_part.is_empty()) || frac_part.contains('.') {
        return Err(invalid_number());
    }
    let overflow = || DurationError::Overflow {
        input: input.to_owned(),
    };
    // Integer part: at most 19 significant digits can fit in an i64.
    let int_digits = int_part.trim_start_matches('0');
    if int_digits.len() > 20 {
        return Err(overflow());
    }
    let int_value: i128 = if int_digits.is_empty() {
        0
    } else {
        int_digits.parse().map_err(|_| invalid_number())?
    };
    let mut total = int_value.checked_mul(multiplier).ok_or_else(overflow)?;

    let frac_digits = frac_part.trim_end_matches('0');
    if !frac_digits.is_empty() {
        let not_whole = || DurationError::NotWholeMillis {
            input: input.to_owned(),
        };
        if frac_digits.len() > MAX_FRACTION_DIGITS {
            return Err(not_whole());
        }
        let frac_value: i128 = frac_digits.parse().map_err(|_| invalid_number())?;
        let scale = 10_i128.pow(frac_digits.len() as u32);
        let scaled = frac_value.checked_mul(multiplier).ok_or_else(overflow)?;
        if scaled % scale != 0 {
            return Err(not_whole());
        }
        total = total.checked_add(scaled / scale).ok_or_else(overflow)?;
    }
    if total > i128::from(i64::MAX) + 1 {
        return Err(overflow());
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(parse_duration("250ms"), Ok(250));
        assert_eq!(parse_duration("5s"), Ok(5_000));
        assert_eq!(parse_duration("1min"), Ok(60_000));
        assert_eq!(parse_duration("1h"), Ok(3_600_000));
        assert_eq!(parse_duration("2d"), Ok(172_800_000));
        assert_eq!(parse_duration("300"), Ok(300));
        assert_eq!(parse_duration("0"), Ok(0));
        assert_eq!(parse_duration(" 5 s "), Ok(5_000));
    }

    #[test]
    fn fractions() {
        assert_eq!(parse_duration("1.5s"), Ok(1_500));
        assert_eq!(parse_duration("0.001s"), Ok(1));
        assert_eq!(parse_duration(".5s"), Ok(500));
        assert_eq!(parse_duration("2.s"), Ok(2_000));
        assert_eq!(
            parse_duration("1.50000000000000000000000000000000000000s"),
            Ok(1_500)
        );
        assert_eq!(parse_duration("0.5h"), Ok(1_800_000));
        assert!(matches!(
            parse_duration("0.5ms"),
            Err(DurationError::NotWholeMillis { .. })
        ));
        assert!(matches!(
            parse_duration("0.0001s"),
            Err(DurationError::NotWholeMillis { .. })
        ));
        assert!(matches!(
            parse_duration("0.0000000000000000000000000000000000000001d"),
            Err(DurationError::NotWholeMillis { .. })
        ));
    }

    #[test]
    fn limits() {
        assert_eq!(parse_duration("9223372036854775807"), Ok(i64::MAX));
        assert_eq!(parse_duration("9223372036854775807ms"), Ok(i64::MAX));
        assert!(matches!(
            parse_duration("9223372036854775808"),
            Err(DurationError::Overflow { .. })
        ));
        assert!(matches!(
            parse_duration("106751991167301d"),
            Err(DurationError::Overflow { .. })
        ));
        assert!(matches!(
            parse_duration("99999999999999999999999999999999999999999999d"),
            Err(DurationError::Overflow { .. })
        ));
        assert_eq!(
            parse_signed_duration("-9223372036854775808ms"),
            Ok(i64::MIN)
        );
        assert!(matches!(
            parse_signed_duration("-9223372036854775809ms"),
            Err(DurationError::Overflow { .. })
        ));
    }

    #[test]
    fn signs() {
        assert_eq!(parse_signed_duration("-8h"), Ok(-28_800_000));
        assert_eq!(parse_signed_duration("+8h"), Ok(28_800_000));
        assert_eq!(parse_signed_duration("- 1.5s"), Ok(-1_500));
        assert_eq!(parse_signed_duration("15min"), Ok(900_000));
        assert!(matches!(
            parse_duration("-8h"),
            Err(DurationError::Negative { .. })
        ));
        assert!(matches!(
            parse_signed_duration("--8h"),
            Err(DurationError::InvalidNumber { .. })
        ));
    }

    #[test]
    fn errors_name_the_input() {
        let cases = [
            ("", "invalid duration \"\": it is empty"),
            ("   ", "invalid duration \"   \": it is empty"),
            (
                "5x",
                "invalid duration \"5x\": unknown unit \"x\" (allowed units: ms, s, min, h, d",
            ),
            ("5m", "unknown unit \"m\""),
            ("5 sec", "unknown unit \"sec\""),
            (
                "s",
                "invalid duration \"s\": it does not start with a number",
            ),
            ("1.2.3s", "\"1.2.3\" is not a number"),
            (".s", "invalid duration \".s\": \".\" is not a number"),
            (
                "0.5ms",
                "invalid duration \"0.5ms\": it is not a whole number of milliseconds",
            ),
            ("-1s", "invalid duration \"-1s\": it must not be negative"),
            ("1e3s", "unknown unit \"e3s\""),
        ];
        for (input, expected) in cases {
            let err = parse_duration(input).expect_err(input).to_string();
            assert!(err.contains(expected), "{input:?}: {err}");
        }
    }
}
