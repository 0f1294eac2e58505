use super::*;

/// Known instants (checked against `date -u -d ... +%s%3N`), each as several spellings.
const KNOWN: &[(&str, i64)] = &[
    ("1970-01-01T00:00:00Z", 0),
    ("2013-01-01T00:00:00Z", 1_356_998_400_000),
    ("2013-01-01T05:15:00Z", 1_357_017_300_000),
    ("2013-01-01T06:15:00+01:00", 1_357_017_300_000),
    ("2012-12-31T19:15:00-10:00", 1_357_017_300_000),
    ("2013-01-01T05:45:00+00:30", 1_357_017_300_000),
    ("2013-01-01 05:15:00Z", 1_357_017_300_000),
    ("2013-01-01t05:15:00z", 1_357_017_300_000),
    ("2013-01-01T05:15Z", 1_357_017_300_000),
    ("2013-01-01T05:15:00.5Z", 1_357_017_300_500),
    ("2013-01-01T05:15:00.123456789Z", 1_357_017_300_123),
    ("2013-01-01T05:15:00.999999999999Z", 1_357_017_300_999),
    ("2013-01-01T06:15:00.250+01:00", 1_357_017_300_250),
    ("1969-12-31T23:59:59.999Z", -1),
    // Floored toward the past: 0.1 ms before the epoch is in the millisecond -1.
    ("1969-12-31T23:59:59.9999Z", -1),
    ("1969-12-31T23:59:59Z", -1000),
    ("2000-02-29T12:00:00Z", 951_825_600_000),
    ("1900-03-01T00:00:00Z", -2_203_891_200_000),
    ("0000-01-01T00:00:00Z", -62_167_219_200_000),
    ("9999-12-31T23:59:59.999Z", 253_402_300_799_999),
    // A leap second is the second after :59.
    ("2016-12-31T23:59:60Z", 1_483_228_800_000),
    ("2017-01-01T00:00:00Z", 1_483_228_800_000),
    ("2038-01-19T03:14:08Z", 2_147_483_648_000),
];

#[test]
fn rfc3339_date_times_are_their_epoch_milliseconds() {
    for &(text, ms) in KNOWN {
        assert_eq!(rfc3339_millis(text), Ok(ms), "{text}");
        // The same through the text rule, in every unit, trimmed.
        for unit in [
            TimeUnit::Seconds,
            TimeUnit::Millis,
            TimeUnit::Micros,
            TimeUnit::Nanos,
        ] {
            assert_eq!(
                timestamp_text_slow(&format!(" {text} "), unit),
                Ok(ms),
                "{text} {unit}"
            );
        }
    }
}

/// `days_from_civil` against counting days one by one, 1600..2400.
#[test]
fn days_from_civil_agrees_with_counting_days() {
    let month_days = |y: i64, m: i64| match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    let mut day = 0;
    for y in 1970..2400 {
        for m in 1..=12 {
            for d in 1..=month_days(y, m) {
                assert_eq!(days_from_civil(y, m, d), day, "{y}-{m}-{d}");
                day += 1;
            }
        }
    }
    let mut day = 0;
    for y in (1600..1970).rev() {
        for m in (1..=12).rev() {
            for d in (1..=month_days(y, m)).rev() {
                day -= 1;
                assert_eq!(days_from_civil(y, m, d), day, "{y}-{m}-{d}");
            }
        }
    }
}

#[test]
fn bad_date_times_say_what_is_wrong() {
    let cases = [
        ("2013-01-01", "a date without a time of day"),
        ("2013-01-01T05:15:00", "no UTC offset"),
        ("2013-01-01 05:15:00.5", "no UTC offset"),
        ("2013-13-01T00:00:00Z", "month between 01 and 12"),
        ("2013-02-29T00:00:00Z", "day between 01 and 28"),
        ("2013-01-01T24:00:00Z", "hour between 00 and 23"),
        ("2013-01-01T00:60:00Z", "minute between 00 and 59"),
        ("2013-01-01T00:00:00+24:00", "hours between 00 and 23"),
        ("2013-01-01X00:00:00Z", "invalid"),
        ("2013-01-01T00:00:00Zjunk", "invalid"),
        ("2013-1-01T00:00:00Z", "two-digit month"),
        ("2013-01-01T00:00:00.Z", "invalid"),
    ];
    for (text, why) in cases {
        let (kind, message) = timestamp_text_slow(text, TimeUnit::Millis).unwrap_err();
        assert_eq!(kind, InputErrorKind::InvalidTimestamp, "{text}");
        assert!(
            message.starts_with(&format!("{text:?} is not an RFC 3339 date-time: ")),
            "{text}: {message}"
        );
        assert!(message.contains(why), "{text}: {message}");
    }
}

#[test]
fn numbers_of_each_unit_are_floored_to_milliseconds() {
    use NumberError::{NotANumber, OutOfRange};
    use TimeUnit::{Micros, Millis, Nanos, Seconds};
    let cases: &[(&str, TimeUnit, Result<i64, NumberError>)] = &[
        ("1357016400", Seconds, Ok(1_357_016_400_000)),
        ("1357016400.5", Seconds, Ok(1_357_016_400_500)),
        ("1357016400.123456", Seconds, Ok(1_357_016_400_123)),
        ("1357016400.1239", Seconds, Ok(1_357_016_400_123)),
        ("1357016400.05", Seconds, Ok(1_357_016_400_050)),
        ("-1.5", Seconds, Ok(-1500)),
        ("-1.0001", Seconds, Ok(-1001)),
        ("-0.0005", Seconds, Ok(-1)),
        ("-0.0000", Seconds, Ok(0)),
        ("-0", Seconds, Ok(0)),
        ("0.0009", Seconds, Ok(0)),
        ("+2", Seconds, Ok(2000)),
        ("007", Seconds, Ok(7000)),
        ("9223372036854775", Seconds, Ok(9_223_372_036_854_775_000)),
        ("9223372036854775.807", Seconds, Ok(i64::MAX)),
        ("9223372036854775.8079", Seconds, Ok(i64::MAX)),
        ("9223372036854775.808", Seconds, Err(OutOfRange)),
        ("9223372036854776", Seconds, Err(OutOfRange)),
        ("-9223372036854775.808", Seconds, Ok(i64::MIN)),
        ("-9223372036854775.8081", Seconds, Err(OutOfRange)),
        ("-9223372036854776", Seconds, Err(OutOfRange)),
        ("1.", Seconds, Err(NotANumber)),
        (".5", Seconds, Err(NotANumber)),
        ("1e9", Seconds, Err(NotANumber)),
        ("1.3e9", Seconds, Err(NotANumber)),
        ("1.5.5", Seconds, Err(NotANumber)),
        ("1,5", Seconds, Err(NotANumber)),
        ("-", Seconds, Err(NotANumber)),
        ("--1", Seconds, Err(NotANumber)),
        ("-.5", Seconds, Err(NotANumber)),
        ("1357016400123", Millis, Ok(1_357_016_400_123)),
        ("1.5", Millis, Err(NotANumber)),
        ("1000.0", Millis, Err(NotANumber)),
        ("+5", Millis, Ok(5)),
        ("9223372036854775807", Millis, Ok(i64::MAX)),
        ("-9223372036854775808", Millis, Ok(i64::MIN)),
        ("9223372036854775808", Millis, Err(OutOfRange)),
        ("-9223372036854775809", Millis, Err(OutOfRange)),
        (
            "99999999999999999999999999999999999999999",
            Millis,
            Err(OutOfRange),
        ),
        ("0000000000000000000000000000000000000000001", Millis, Ok(1)),
        ("1357016400123456", Micros, Ok(1_357_016_400_123)),
        ("-1", Micros, Ok(-1)),
        ("-1000", Micros, Ok(-1)),
        ("-1001", Micros, Ok(-2)),
        ("999", Micros, Ok(0)),
        ("9223372036854775807999", Micros, Ok(i64::MAX)),
        ("9223372036854775808000", Micros, Err(OutOfRange)),
        ("-9223372036854775808000", Micros, Ok(i64::MIN)),
        ("-9223372036854775808001", Micros, Err(OutOfRange)),
        ("1.5", Micros, Err(NotANumber)),
        ("1357016400123456789", Nanos, Ok(1_357_016_400_123)),
        ("-1", Nanos, Ok(-1)),
        ("-999999", Nanos, Ok(-1)),
        ("-1000001", Nanos, Ok(-2)),
        ("9223372036854775807", Nanos, Ok(9_223_372_036_854)),
        ("1.5", Nanos, Err(NotANumber)),
    ];
    for &(text, unit, expected) in cases {
        assert_eq!(number_millis(text, unit), expected, "{text} {unit}");
    }
}

/// The small-integer path ([`TimeUnit::millis_of`]) gives what the text rule gives, on a
/// seeded spread of integers of up to 18 digits.
#[test]
fn the_integer_fast_path_agrees_with_the_text_rule() {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..20_000 {
        let digits = next() % 18 + 1;
        let n = (next() % 10_u64.pow(digits as u32)) as i64;
        let n = if next() % 2 == 0 { -n } else { n };
        for unit in [
            TimeUnit::Seconds,
            TimeUnit::Millis,
            TimeUnit::Micros,
            TimeUnit::Nanos,
        ] {
            let slow = number_millis(&n.to_string(), unit).ok();
            assert_eq!(unit.millis_of(n), slow, "{n} {unit}");
        }
    }
}

#[test]
fn messages_name_the_unit() {
    let message = |text: &str, unit| timestamp_text_slow(text, unit).unwrap_err().1;
    assert_eq!(
        message("x", TimeUnit::Millis),
        "\"x\" is not an integer number of milliseconds"
    );
    assert_eq!(
        message("1.5", TimeUnit::Nanos),
        "\"1.5\" is not an integer number of nanoseconds"
    );
    assert_eq!(
        message("1e9", TimeUnit::Seconds),
        "\"1e9\" is not a number of seconds (an integer, or a decimal fraction as 1357016400.5)"
    );
    assert_eq!(
        message("9300000000000000", TimeUnit::Seconds),
        "\"9300000000000000\" seconds is out of range for a 64-bit millisecond timestamp"
    );
    assert_eq!(
        message("99999999999999999999", TimeUnit::Millis),
        "\"99999999999999999999\" is out of range for a 64-bit millisecond timestamp"
    );
    assert_eq!(
        timestamp_text_slow("  ", TimeUnit::Seconds),
        Err((InputErrorKind::MissingField, "missing (empty)".to_owned()))
    );
    let json = |text: &str, unit| {
        // Shown as serde_json prints the number (the caller may pass the line's own text).
        let n: serde_json::Number = serde_json::from_str(text).unwrap();
        json_number_millis(&n, unit, || n.to_string()).map_err(|e| e.1)
    };
    assert_eq!(
        json("1357016400.5", TimeUnit::Seconds),
        Ok(1_357_016_400_500)
    );
    assert_eq!(
        json("1e30", TimeUnit::Seconds),
        Err("1e+30 seconds is out of range for a 64-bit millisecond timestamp".to_owned())
    );
    assert_eq!(
        json("1.5", TimeUnit::Millis),
        Err("1.5 is not an integer number of milliseconds".to_owned())
    );
}

#[test]
fn units_parse_and_print() {
    for unit in [
        TimeUnit::Seconds,
        TimeUnit::Millis,
        TimeUnit::Micros,
        TimeUnit::Nanos,
    ] {
        assert_eq!(unit.to_string().parse::<TimeUnit>(), Ok(unit));
    }
    assert_eq!("MS".parse::<TimeUnit>(), Ok(TimeUnit::Millis));
    assert_eq!("µs".parse::<TimeUnit>(), Ok(TimeUnit::Micros));
    let err = "sec".parse::<TimeUnit>().unwrap_err();
    assert!(
        err.contains("\"sec\"") && err.contains("s, ms, us or ns"),
        "{err}"
    );
}

#[test]
fn the_hint_names_the_unit_the_times_look_like() {
    let times = |values: &[i64]| {
        let t = EventTimes::default();
        let mut local = (i64::MAX, i64::MIN);
        for &v in values {
            t.see(&mut local, v);
        }
        t
    };
    let seconds = times(&[1_357_016_400, 1_357_020_000, 1_357_000_000]);
    assert_eq!(seconds.range(), Some((1_357_000_000, 1_357_020_000)));
    let hint = EventTimes::unit_hint(std::slice::from_ref(&seconds), TimeUnit::Millis).unwrap();
    assert!(hint.contains("add --time-unit s"), "{hint}");
    assert!(hint.contains("1357000000 .. 1357020000"), "{hint}");
    // Read as seconds already, or real milliseconds: no hint.
    assert_eq!(EventTimes::unit_hint(&[seconds], TimeUnit::Seconds), None);
    let millis = times(&[1_357_016_400_000, 1_357_020_000_000]);
    assert_eq!(
        EventTimes::unit_hint(std::slice::from_ref(&millis), TimeUnit::Millis),
        None
    );
    // One input of seconds beside one of milliseconds: the range is not all seconds.
    let seconds = times(&[1_357_016_400]);
    assert_eq!(
        EventTimes::unit_hint(&[seconds, millis], TimeUnit::Millis),
        None
    );
    // Small times (a test's 1, 2, 3) are not dates in any unit.
    assert_eq!(
        EventTimes::unit_hint(&[times(&[1, 2, 3])], TimeUnit::Millis),
        None
    );
    assert_eq!(EventTimes::unit_hint(&[times(&[])], TimeUnit::Millis), None);
    assert_eq!(EventTimes::unit_hint(&[], TimeUnit::Millis), None);
    let micros = times(&[1_357_016_400_000_000]);
    let hint = EventTimes::unit_hint(&[micros], TimeUnit::Millis).unwrap();
    assert!(hint.contains("add --time-unit us"), "{hint}");
    let nanos = times(&[1_357_016_400_000_000_000]);
    let hint = EventTimes::unit_hint(&[nanos], TimeUnit::Millis).unwrap();
    assert!(hint.contains("add --time-unit ns"), "{hint}");
}
