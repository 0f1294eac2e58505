//! The source check shared by the CSV and JSON-lines targets.

use std::io::{BufReader, Cursor};

use engine::io::{
    CsvHeader, Delimiter, EventReader, FieldNames, FieldUse, InputFormat, ReadPosition, TimeUnit,
};

/// The reader settings the first byte of the input selects: delimiter, time unit, header or
/// none (fields by column number), a composite key, a job that reads no key or no value.
struct Settings {
    delimiter: u8,
    unit: TimeUnit,
    no_header: bool,
    composite: bool,
    uses: FieldUse,
}

impl Settings {
    fn of(byte: u8) -> Self {
        Settings {
            delimiter: [b',', b';', b'\t', b','][usize::from(byte & 3)],
            unit: [
                TimeUnit::Millis,
                TimeUnit::Seconds,
                TimeUnit::Micros,
                TimeUnit::Nanos,
            ][usize::from((byte >> 2) & 3)],
            no_header: byte & 16 != 0,
            composite: byte & 32 != 0,
            uses: FieldUse {
                key: byte & 64 == 0,
                value: byte & 128 == 0,
            },
        }
    }

    fn fields(&self) -> FieldNames {
        let (time, key, value) = match (self.no_header, self.composite) {
            (false, false) => ("event_time_ms", "key", "value"),
            (false, true) => ("event_time_ms", "key,value", "value"),
            (true, false) => ("1", "2", "3"),
            (true, true) => ("1", "2,3", "3"),
        };
        FieldNames {
            time: time.to_owned(),
            key: key.to_owned(),
            value: value.to_owned(),
        }
    }
}

/// Reads `data` (a small buffer, so lines cross it) to the end, then again from a position in
/// the middle, and checks the two agree. An input starting with a 0 byte has its settings in
/// the next byte ([`Settings::of`]); any other is read with the defaults (the seed corpus).
pub fn windowing_fuzz_source(data: &[u8], format: InputFormat) {
    let (settings, data) = match data {
        [0, byte, rest @ ..] => (Settings::of(*byte), rest),
        _ => (Settings::of(0), data),
    };
    let open = || {
        let input = BufReader::with_capacity(16, Cursor::new(data.to_vec()));
        let mut reader = EventReader::new(input, "fuzz", format, settings.fields())
            .with_time_unit(settings.unit)
            .with_delimiter(
                char::from(settings.delimiter)
                    .to_string()
                    .parse()
                    .unwrap_or(Delimiter::COMMA),
            )
            .reading(settings.uses);
        if settings.no_header && format == InputFormat::Csv {
            reader = reader.with_csv_header(CsvHeader::Absent);
        }
        reader
    };
    let mut reader = open();
    let mut items = Vec::new();
    let mut last_line = 0;
    while let Some(item) = reader.next_event() {
        let position = reader.read_position();
        let line = match &item {
            Ok(e) => e.line,
            Err(e) => e.line,
        };
        assert!(
            line >= last_line,
            "line numbers go back: {line} after {last_line}"
        );
        last_line = line;
        items.push((item, position));
    }
    if items.is_empty() {
        return;
    }
    let (_, middle) = items[items.len() / 2].clone();
    let mut resumed = open();
    if resumed.skip_to(middle).is_err() {
        // A fatal header error before the middle is allowed to stop both readers alike.
        assert!(items[..=items.len() / 2]
            .iter()
            .any(|(i, _)| i.as_ref().is_err_and(|e| e.is_fatal())));
        return;
    }
    assert_eq!(resumed.read_position(), middle);
    let mut rest = Vec::new();
    while let Some(item) = resumed.next_event() {
        rest.push((item, resumed.read_position()));
    }
    // Values compare by their bits: a record without a value reads as NaN, which is not equal
    // to itself.
    assert_eq!(comparable(&rest), comparable(&items[items.len() / 2 + 1..]));
    let _: ReadPosition = middle;
}

/// `items` with each event's value as its variant and bits, so that NaN equals NaN.
fn comparable(
    items: &[(
        Result<engine::io::Event, engine::io::InputError>,
        ReadPosition,
    )],
) -> Vec<String> {
    items
        .iter()
        .map(|(item, position)| match item {
            Ok(e) => format!(
                "{} {:?} {} {} {position:?}",
                e.timestamp,
                e.key,
                match e.value {
                    engine::core::Number::Int(i) => format!("i{i}"),
                    engine::core::Number::Float(f) => format!("f{:x}", f.to_bits()),
                },
                e.line
            ),
            Err(err) => format!("{err:?} {position:?}"),
        })
        .collect()
}
