//! Spark Streaming's `reduceByKeyAndWindow` with an inverse function: flights per destination
//! airport over the last 3 hours, every hour, from hourly batches of the bundled NYC flights
//! 2013 data (`data/`).
//!
//! The incremental form (`reduceByKeyAndWindow(func, invFunc, window, slide)`) adds the batch
//! that entered the window and subtracts the one that left, instead of reducing all three
//! batches again; with a filter it drops airports whose count fell to 0 (without one, Spark keeps
//! them with 0). It gives the plain form's counts, which the example checks, batch by batch.
//!
//! ```text
//! cargo run -p engine --example reduce_by_key_and_window
//! ```

use std::collections::BTreeMap;

use engine::dstream::{InverseReduce, Partitions, StreamingContext};
use engine::io::{find_bundled_data, open_source, FieldNames, InputFormat, InputSpec};

const HOUR: i64 = 3_600_000;

/// One batch: a `(destination, 1)` pair per flight.
type Batch = Vec<(String, i64)>;

/// The destinations of the first `n` flights, in hourly batches from the first flight's hour.
fn hourly_batches(n: usize) -> Result<Vec<Batch>, Box<dyn std::error::Error>> {
    let spec = InputSpec::File(find_bundled_data()?);
    let reader = open_source(&spec, InputFormat::Csv, FieldNames::default())?;
    let mut batches: Vec<Batch> = Vec::new();
    let mut first_hour = None;
    for event in reader.take(n) {
        let event = event?;
        let hour = event.timestamp.div_euclid(HOUR);
        let first = *first_hour.get_or_insert(hour);
        // The bundled data is in departure order up to a few hours: earlier flights join the
        // first batch.
        let index = usize::try_from(hour - first).unwrap_or(0);
        if batches.len() <= index {
            batches.resize(index + 1, Vec::new());
        }
        batches[index].push((event.key, 1));
    }
    Ok(batches)
}

/// Per batch time, the counts per destination: plain, and incremental with an inverse and a
/// filter that drops zero counts.
type Counts = Vec<(i64, BTreeMap<String, i64>)>;

fn counts(batches: Vec<Batch>) -> Result<(Counts, Counts), engine::dstream::Error> {
    let n = batches.len();
    let ssc = StreamingContext::new(HOUR)?;
    let flights = ssc.queue_stream(batches);
    let plain = flights
        .reduce_by_key_and_window(
            |a: &i64, b: &i64| a + b,
            3 * HOUR,
            HOUR,
            Partitions::default(),
        )?
        .collect_batches()?;
    let inverse = InverseReduce::new(|a: &i64, b: &i64| a + b, |a: &i64, b: &i64| a - b)
        .with_filter(|_, count| *count != 0);
    let incremental = flights
        .reduce_by_key_and_window_inv(inverse, 3 * HOUR, HOUR)?
        .collect_batches()?;
    ssc.start()?;
    ssc.run_batches(n)?;
    let as_maps = |batches: Vec<(i64, engine::dstream::Batch<(String, i64)>)>| -> Counts {
        batches
            .into_iter()
            .map(|(t, b)| (t, b.iter().cloned().collect()))
            .collect()
    };
    Ok((as_maps(plain.take()), as_maps(incremental.take())))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (plain, incremental) = counts(hourly_batches(20_000)?)?;
    for (t, counts) in incremental.iter().take(12) {
        let top: Vec<_> = counts.iter().filter(|(_, c)| **c >= 40).collect();
        println!(
            "{:>3} h: {} airports; >= 40 flights: {top:?}",
            t / HOUR,
            counts.len()
        );
    }
    println!(
        "{} windows, incremental = plain: {}",
        plain.len(),
        plain == incremental
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_incremental_counts_are_the_plain_counts() {
        let batches = hourly_batches(5_000).unwrap();
        let flights: i64 = batches.iter().map(|b| b.len() as i64).sum();
        assert_eq!(flights, 5_000);
        let (plain, incremental) = counts(batches).unwrap();
        assert!(plain.len() > 24, "{}", plain.len());
        assert_eq!(incremental, plain);
        // Each batch is in three windows, except the last two, whose later windows come after
        // the run stops.
        let total: i64 = plain.iter().flat_map(|(_, c)| c.values()).sum();
        assert!(total > 2 * flights && total <= 3 * flights, "{total}");
    }
}
