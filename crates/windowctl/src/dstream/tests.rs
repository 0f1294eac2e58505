//! Unit tests of `windowctl dstream`: batches by event and processing time, each operation,
//! the incremental forms, Spark's validation, and the bundled data adding up.

use std::io::Cursor;

use engine::io::FieldNames;

use super::*;

fn args(extra: &[&str]) -> DstreamArgs {
    use clap::Parser;
    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: DstreamArgs,
    }
    let mut argv = vec!["windowctl-dstream"];
    argv.extend_from_slice(extra);
    Cli::parse_from(argv).args
}

fn run_csv(input: &str, extra: &[&str], clock: i64) -> (String, DstreamSummary) {
    let plan = plan(&args(extra)).unwrap();
    let reader = EventReader::new(
        Cursor::new(input.to_owned()),
        "test",
        InputFormat::Csv,
        FieldNames::default(),
    );
    let mut out = Vec::new();
    let summary = run_on(reader, plan, || Ok(&mut out), move || clock).unwrap();
    (String::from_utf8(out).unwrap(), summary)
}

// Events (unsorted) at 500, 1500, 1200, 3100 ms; 1 s batches from zero 0: batch 1000
// {a:2}, batch 2000 {b:1, a:4}, batch 3000 {}, batch 4000 {a:8}. The expected rows follow
// from the window definition (docs/dstream.md): window 2 s at t holds batches t-1000, t.
const EVENTS: &str = "event_time_ms,key,value\n500,a,2\n1500,b,1\n1200,a,4\n3100,a,8\n";

#[test]
fn sum_by_key_over_event_time_batches() {
    let (csv, summary) = run_csv(
        EVENTS,
        &["--batch-interval", "1s", "--window", "2s", "--agg", "sum"],
        0,
    );
    assert_eq!(
        csv,
        "batch_time,key,result\n\
         1000,a,2\n\
         2000,a,6\n2000,b,1\n\
         3000,a,4\n3000,b,1\n\
         4000,a,8\n\
         5000,a,8\n"
    );
    // Batches 1000..4000 with events, then 5000 (the last window holding batch 4000).
    assert_eq!(summary.batches, 5);
    assert_eq!(summary.outputs, 5);
    assert_eq!(summary.rows, 7);
    assert_eq!(summary.zero_time, Some(0));
}

#[test]
fn inverse_count_keeps_zero_keys() {
    let (csv, _) = run_csv(
        EVENTS,
        &[
            "--batch-interval",
            "1s",
            "--window",
            "2s",
            "--agg",
            "count",
            "--inverse",
        ],
        0,
    );
    assert_eq!(
        csv,
        "batch_time,key,result\n\
         1000,a,1\n\
         2000,a,2\n2000,b,1\n\
         3000,a,1\n3000,b,1\n\
         4000,a,1\n4000,b,0\n\
         5000,a,1\n5000,b,0\n"
    );
}

#[test]
fn other_operations() {
    let common = ["--batch-interval", "1s", "--window", "2s", "--slide", "2s"];
    let with = |op: &str| {
        let mut a = common.to_vec();
        a.extend(["--operation", op]);
        run_csv(EVENTS, &a, 0).0
    };
    // Windows at 2000 (batches 1000, 2000) and 4000 (batches 3000, 4000).
    assert_eq!(
        with("count-by-window"),
        "batch_time,key,result\n2000,,3\n4000,,1\n"
    );
    assert_eq!(
        with("count-by-value-and-window"),
        "batch_time,key,result\n2000,a,2\n2000,b,1\n4000,a,1\n"
    );
    assert_eq!(
        with("group-by-key-and-window"),
        "batch_time,key,result\n2000,a,[2;4]\n2000,b,[1]\n4000,a,[8]\n"
    );
    assert_eq!(
        with("window"),
        "batch_time,key,result\n2000,a,2\n2000,a,4\n2000,b,1\n4000,a,8\n"
    );
    let mut max = common.to_vec();
    max.extend(["--operation", "reduce-by-window", "--agg", "max"]);
    assert_eq!(
        run_csv(EVENTS, &max, 0).0,
        "batch_time,key,result\n2000,,4\n4000,,8\n"
    );
}

#[test]
fn processing_time_puts_a_fast_file_in_one_batch() {
    // The clock stands at 10,500 ms while the file is read: every event is in the batch
    // at 11,000 whatever its event time.
    let (csv, summary) = run_csv(
        EVENTS,
        &[
            "--batch-interval",
            "1s",
            "--window",
            "1s",
            "--batches-by",
            "processing",
            "--agg",
            "sum",
        ],
        10_500,
    );
    assert_eq!(csv, "batch_time,key,result\n11000,a,14\n11000,b,1\n");
    assert_eq!(summary.zero_time, Some(10_000));
    assert_eq!(summary.events, 4);
}

#[test]
fn spark_validation_and_option_errors() {
    let plan_ok = plan(&args(&["--batch-interval", "1s", "--window", "1500ms"])).unwrap();
    let reader = EventReader::new(
        Cursor::new(EVENTS.to_owned()),
        "test",
        InputFormat::Csv,
        FieldNames::default(),
    );
    let err = run_on(reader, plan_ok, || Ok(Vec::new()), || 0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the window duration of WindowedDStream (1500 ms) must be a multiple of the slide \
         duration of parent DStream (1000 ms)"
    );
    let err = plan(&args(&["--inverse", "--agg", "max"])).unwrap_err();
    assert!(err.to_string().contains("invertible"), "{err}");
    assert!(plan(&args(&["--slide", "0"])).is_err());
}

fn run_bundled(extra: &[&str]) -> (String, DstreamSummary) {
    let plan = plan(&args(extra)).unwrap();
    let reader = open_source(
        &InputSpec::File(find_bundled_data().unwrap()),
        InputFormat::Csv,
        FieldNames::default(),
    )
    .unwrap();
    let mut out = Vec::new();
    let summary = run_on(reader, plan, || Ok(&mut out), || 0).unwrap();
    (String::from_utf8(out).unwrap(), summary)
}

fn rows(csv: &str) -> Vec<(i64, String, String)> {
    csv.lines()
        .skip(1)
        .map(|l| {
            let mut f = l.splitn(3, ',');
            let t = f.next().unwrap().parse().unwrap();
            (
                t,
                f.next().unwrap().to_owned(),
                f.next().unwrap().to_owned(),
            )
        })
        .collect()
}

/// The bundled data holds 328,521 departures (README.md, data/README.md): daily tumbling
/// counts add up to that, and the plain and incremental weekly counts per destination agree
/// except for the zero rows the incremental form keeps.
#[test]
fn bundled_flights_add_up() {
    let day = ["--batch-interval", "1d", "--window", "1d"];
    let (csv, summary) = run_bundled(&[&day[..], &["--operation", "count-by-window"]].concat());
    assert_eq!(summary.events, 328_521);
    let total: i64 = rows(&csv).iter().map(|r| r.2.parse::<i64>().unwrap()).sum();
    assert_eq!(total, 328_521);

    let week = ["--batch-interval", "1d", "--window", "7d", "--agg", "count"];
    let (plain, _) = run_bundled(&week);
    let (incremental, _) = run_bundled(&[&week[..], &["--inverse"]].concat());
    let incremental: Vec<_> = rows(&incremental)
        .into_iter()
        .filter(|r| r.2 != "0")
        .collect();
    assert_eq!(rows(&plain), incremental);
}

#[test]
fn bad_records_name_the_line() {
    let plan = plan(&args(&["--batch-interval", "1s", "--window", "10s"])).unwrap();
    let reader = EventReader::new(
        Cursor::new("event_time_ms,key,value\n1,a,1\nx,a,1\n".to_owned()),
        "test",
        InputFormat::Csv,
        FieldNames::default(),
    );
    let err = run_on(reader, plan, || Ok(Vec::new()), || 0).unwrap_err();
    assert!(
        err.to_string().starts_with("test:3: field 'event_time_ms'"),
        "{err}"
    );
}
