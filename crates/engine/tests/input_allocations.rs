//! Issue 12, item 1: the input path does not allocate per event. A counting global allocator
//! (`stats_alloc`, this test binary only) counts allocations while a [`ReaderSource`] reads CSV
//! and JSON lines in a steady state: after a warm-up in which every key was met once (its text
//! is stored once, in the key dictionary) and the batch buffer grew. One test, so that nothing
//! else runs in this binary meanwhile.

use std::alloc::System;
use std::io::Cursor;

use engine::io::{EventReader, FieldNames, InputFormat, KeyDictionary, KeyId, KeyTexts};
use engine::runtime::{Read, ReaderSource, Source, MAX_BATCH};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// `n` rows over 1,000 keys of a few lengths (`k7`, `sensor-0042` ...), integer and
/// fractional values: CSV with its header, or JSON lines.
fn input(n: usize, format: InputFormat) -> Vec<u8> {
    let mut text = match format {
        InputFormat::Csv => String::from("event_time_ms,key,value\n"),
        InputFormat::Jsonl => String::new(),
    };
    for g in 0..n {
        let key = if g % 3 == 0 {
            format!("k{}", g % 500)
        } else {
            format!("sensor-{:04}", g % 500)
        };
        let value = if g % 2 == 0 {
            format!("{}", g % 100)
        } else {
            format!("{}.25", g % 100)
        };
        text.push_str(&match format {
            InputFormat::Csv => format!("{},{key},{value}\n", g / 10),
            InputFormat::Jsonl => format!(
                "{{\"event_time_ms\": {}, \"key\": \"{key}\", \"value\": {value}, \"note\": [1]}}\n",
                g / 10
            ),
        });
    }
    text.into_bytes()
}

#[test]
fn reading_allocates_nothing_per_event_once_every_key_was_met() {
    for format in [InputFormat::Csv, InputFormat::Jsonl] {
        read_in_steady_state(format);
    }
}

fn read_in_steady_state(format: InputFormat) {
    let keys = KeyDictionary::shared();
    let reader = EventReader::new(
        Cursor::new(input(300_000, format)),
        "mem",
        format,
        FieldNames::default(),
    );
    let mut source = ReaderSource::new(reader, false, std::sync::Arc::clone(&keys));
    let mut batch = Vec::with_capacity(MAX_BATCH);
    let mut read = |batch: &mut Vec<_>| {
        batch.clear();
        matches!(source.read_batch(batch, MAX_BATCH), Read::More)
    };
    // Warm-up: 20 batches, far more than the 1,500 events in which every key appears.
    for _ in 0..20 {
        assert!(read(&mut batch));
    }
    let mut events = 0;
    let mut checksum = 0.0;
    let region = Region::new(GLOBAL);
    while read(&mut batch) {
        events += batch.len();
        checksum += batch.iter().map(|e| e.value.as_f64()).sum::<f64>();
    }
    events += batch.len();
    let allocations = region.change().allocations;
    assert_eq!(events, 300_000 - 20 * MAX_BATCH);
    assert_eq!(
        allocations, 0,
        "{format:?}: allocations over {events} events"
    );
    assert!(checksum > 0.0);
    // Every key is in the dictionary once, and the ids give the texts back.
    assert_eq!(keys.len(), 1 + 1000);
    let mut texts = KeyTexts::new(keys);
    let last = batch.last().expect("the last batch has events");
    let g = 300_000 - 1;
    assert_eq!(
        texts.get(last.key),
        Some(format!("sensor-{:04}", g % 500).as_str())
    );
    assert_eq!(last.timestamp, (g / 10) as i64);
    assert!(texts.get(KeyId::default()) == Some(""));
}
