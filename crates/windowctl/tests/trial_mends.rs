//! Findings of the fifth fresh-user trial (issue #16), each with the behaviour it had: a key
//! column named as an aggregate's column made duplicate columns, some usage errors exited 1,
//! closed standard input read as an empty input, and the message for a closed standard output
//! named the wrong flag. Later: a CSV header that is not UTF-8 was skipped as a bad line.

mod common;

use std::process::{Command, Output};

use common::{stderr, windowctl, write_temp};

/// `windowctl ARGS` through `sh`, with `redirect` (`<&-`, `>&-`) applied to it.
fn with_redirect(args: &str, redirect: &str) -> Output {
    let bin = env!("CARGO_BIN_EXE_windowctl");
    Command::new("sh")
        .arg("-c")
        .arg(format!("exec '{bin}' {args} {redirect}"))
        .current_dir(common::repo())
        .output()
        .expect("sh starts")
}

#[test]
fn a_key_column_named_as_an_aggregate_column_is_refused() {
    // Before: the header was count,sum,window_start,window_end,count,sum, and JSON lines had
    // two "count" members, so that a JSON reader lost the key.
    let input = write_temp(
        "trial-clash.csv",
        "event_time_ms,count,sum,value\n1000,x,y,1\n",
    );
    let input = input.to_str().unwrap();
    let args = [
        "--input",
        input,
        "--key-field",
        "count,sum",
        "--agg",
        "count,sum",
        "--window",
        "tumbling:10s",
    ];
    let o = windowctl(&args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("count is already a column of the output"),
        "{}",
        stderr(&o)
    );
    // The same key fields with other aggregates are fine: the columns differ.
    let ok = windowctl(&[
        "--input",
        input,
        "--key-field",
        "count,sum",
        "--agg",
        "min,max",
        "--window",
        "tumbling:10s",
    ]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert_eq!(
        String::from_utf8_lossy(&ok.stdout),
        "count,sum,window_start,window_end,min,max\nx,y,0,10000,1,1\n"
    );
}

#[test]
fn usage_errors_found_by_the_trial_exit_2() {
    let input = write_temp("trial-usage.csv", "event_time_ms,key,value\n1000,a,1\n");
    let input = input.to_str().unwrap();
    // Checkpoints need the results in a file (was exit 1, found only when opening outputs).
    let dir = std::env::temp_dir().join(format!("windowctl-trial-ckpt-{}", std::process::id()));
    let o = windowctl(&["--input", input, "--checkpoint-dir", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("needs the results in a file"),
        "{}",
        stderr(&o)
    );
    // dstream keys by one field (was exit 1).
    let o = Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .args(["dstream", "--input", input, "--key-field", "key,value"])
        .args(["--batch-interval", "1s", "--window", "2s"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("keys by one field"), "{}", stderr(&o));
}

#[test]
fn closed_standard_input_is_an_error_not_an_empty_input() {
    // Before: `--input - <&-` read nothing and exited 0 with no results.
    let o = with_redirect(
        "run --no-progress --input - --window tumbling:1s --agg count",
        "<&-",
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("standard input is closed"),
        "{}",
        stderr(&o)
    );
    // `</dev/null` is an empty input, as before.
    let o = with_redirect(
        "run --no-progress --input - --window tumbling:1s --agg count",
        "</dev/null",
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_closed_standard_output_names_the_flag_that_writes_there() {
    let input = write_temp("trial-late.csv", "event_time_ms,key,value\n1000,a,1\n");
    let out = input.with_file_name("trial-late-results.csv");
    let args = format!(
        "run --no-progress --input '{}' --output '{}' --late-output - --window tumbling:1s",
        input.display(),
        out.display()
    );
    let o = with_redirect(&args, ">&-");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // Before: "the results would be lost; give --output FILE", with --output given.
    assert!(
        stderr(&o).contains("the late elements (--late-output -) would be lost"),
        "{}",
        stderr(&o)
    );
}

/// A CSV header that is not valid UTF-8 stops the job at line 1, also with `--on-error skip`
/// and with `--workers`: before, skip dropped it as a bad line and took line 2, a record, as the
/// header ("line 2: field 'event_time_ms': no such column in the CSV header").
#[test]
fn a_header_that_is_not_utf8_is_fatal_also_when_bad_lines_are_skipped() {
    let input = write_temp("trial-bad-header.csv", "");
    std::fs::write(
        &input,
        b"event_time_ms,k\xff,value\n1,a,1\n2,a,2\n3000,b,1\n",
    )
    .unwrap();
    let input = input.to_str().unwrap();
    for workers in [None, Some("2")] {
        for skip in [false, true] {
            let mut args = vec![
                "--input",
                input,
                "--window",
                "tumbling:1s",
                "--agg",
                "count",
            ];
            if skip {
                args.extend(["--on-error", "skip"]);
            }
            if let Some(w) = workers {
                args.extend(["--workers", w]);
            }
            let o = windowctl(&args);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
            let want = "trial-bad-header.csv:1: the CSV header is not valid UTF-8 (invalid byte \
                        at column 16)";
            assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        }
    }
    // A bad first record of a headerless input is a bad line as any other: skipped.
    let o = windowctl(&[
        "--input",
        input,
        "--no-header",
        "--window",
        "tumbling:1s",
        "--agg",
        "count",
        "--on-error",
        "skip",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("bad input lines skipped: 1"),
        "{}",
        stderr(&o)
    );
}
