//! A known bug, found by the fifteenth session's README-only trial and not yet mended: with
//! `--workers 2` or more, sliced float sums can differ in their last digits from `--workers 1`
//! and from the single-threaded runtime (`-1736.3670000000002` against `-1736.367` for key
//! `k2846`), which README.md and docs/scale-out.md promise byte-identical. The input is the
//! trial's reduced case: two keys, `k2846` with float and integer values and `k1` with zeros;
//! with another filler key (`k0`) or fewer filler lines the outputs agree, so it depends on the
//! keys' groups and on when each group's computation is stepped (`KeyGroups::process_watermark`
//! steps one group per worker at every watermark, several groups only when their bound is
//! reached), which changes the order in which the slices' partial sums are added. Chunk sizes
//! and `WINDOWCTL_ROWS_AHEAD` do not change it. Run it with `cargo test -p windowctl --test
//! workers_float_sums -- --ignored`; it fails today. Mend the cause, then drop the `ignore`.

mod common;

use common::{stderr, windowctl};

/// The job of the trial, with `workers` (`None`: the single-threaded runtime).
fn sums(workers: Option<&str>) -> Vec<u8> {
    let mut args = vec![
        "--input",
        "crates/windowctl/tests/data/workers_float_sums.csv",
        "--time-field",
        "time",
        "--window",
        "sliding:60s:500ms",
        "--agg",
        "sum",
        "--strategy",
        "sliced",
        "--out-of-orderness",
        "2s",
    ];
    if let Some(n) = workers {
        args.extend(["--workers", n]);
    }
    let o = windowctl(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    o.stdout
}

#[test]
#[ignore = "known bug: sliced float sums under --workers 2 differ in the last digits (module docs)"]
fn sliced_float_sums_are_the_same_for_every_worker_count() {
    let single = sums(None);
    assert!(single.len() > 1_000, "the job writes rows");
    assert_eq!(sums(Some("1")), single, "--workers 1");
    assert_eq!(sums(Some("2")), single, "--workers 2");
    assert_eq!(sums(Some("3")), single, "--workers 3");
}
