//! Black-box table test of duration parsing (`window_io::duration`).

use window_job::duration::DurationError;
use window_job::duration::{parse_duration, parse_signed_duration};

#[test]
fn duration_table() {
    let ok: [(&str, i64); 14] = [
        ("0", 0),
        ("0ms", 0),
        ("250ms", 250),
        ("250", 250),
        ("5s", 5_000),
        ("1.5s", 1_500),
        ("0.25s", 250),
        ("1min", 60_000),
        ("1.5min", 90_000),
        ("1h", 3_600_000),
        ("24h", 86_400_000),
        ("2d", 172_800_000),
        ("365d", 31_536_000_000),
        ("9223372036854775807ms", i64::MAX),
    ];
    for (text, ms) in ok {
        assert_eq!(parse_duration(text), Ok(ms), "{text}");
        assert_eq!(parse_signed_duration(text), Ok(ms), "{text}");
    }
    let signed: [(&str, i64); 4] = [
        ("-8h", -28_800_000),
        ("+8h", 28_800_000),
        ("-0", 0),
        ("-1.5s", -1_500),
    ];
    for (text, ms) in signed {
        assert_eq!(parse_signed_duration(text), Ok(ms), "{text}");
        assert_eq!(
            parse_duration(text),
            Err(DurationError::Negative {
                input: text.to_owned()
            })
        );
    }
}

#[test]
fn duration_errors() {
    let cases: [(&str, &str); 9] = [
        ("", "invalid duration \"\": it is empty (expected a number with a unit: ms, s, min, h or d, e.g. 5s)"),
        ("5w", "invalid duration \"5w\": unknown unit \"w\" (allowed units: ms, s, min, h, d; no unit means ms)"),
        ("ms", "invalid duration \"ms\": it does not start with a number (expected e.g. 250ms, 1.5s, 1min, 1h, 2d)"),
        ("bogus", "invalid duration \"bogus\": it does not start with a number (expected e.g. 250ms, 1.5s, 1min, 1h, 2d)"),
        ("1..5s", "invalid duration \"1..5s\": \"1..5\" is not a number (expected e.g. 250ms, 1.5s, 1min, 1h, 2d)"),
        ("0.5ms", "invalid duration \"0.5ms\": it is not a whole number of milliseconds"),
        ("1.0001s", "invalid duration \"1.0001s\": it is not a whole number of milliseconds"),
        ("106751991167301d", "invalid duration \"106751991167301d\": it does not fit in a 64-bit number of milliseconds"),
        ("-8h", "invalid duration \"-8h\": it must not be negative or signed (only offsets may be negative)"),
    ];
    for (text, message) in cases {
        assert_eq!(parse_duration(text).unwrap_err().to_string(), message);
    }
    assert!(matches!(
        parse_signed_duration("-106751991167301d"),
        Err(DurationError::Overflow { .. })
    ));
}
