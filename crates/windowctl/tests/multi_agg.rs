//! `windowctl run --agg count,sum,max` (issue #16 item 13): several aggregates in one job, one
//! output column each in place of `result`. Each column must equal the single-aggregate job's
//! `result` column row for row, in every strategy and window kind, with triggers, evictors and
//! allowed lateness; exact values on a small input, JSON lines, job files, errors, and a resume
//! from a checkpoint.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{stderr, stdout, windowctl, write_temp};

/// The five aggregates, in the order of the `--agg` list the comparisons use.
const ALL: [&str; 5] = ["count", "sum", "min", "max", "mean"];

/// A seeded input: `n` events over 8 keys, integer and fractional values, timestamps out of
/// order by up to 40 ms and a few 1 s behind (late with a 50 ms watermark delay).
fn input_text(n: u64) -> String {
    let mut text = String::from("event_time_ms,key,value\n");
    let mut seed = 0x2545_F491_4F6C_DD1D_u64;
    for i in 0..n {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let behind = if seed.is_multiple_of(41) {
            1000
        } else {
            seed % 40
        };
        let t = (i * 4).saturating_sub(behind);
        let value = match seed % 4 {
            0 => format!("{}.25", (seed >> 9) % 100),
            1 => format!("-{}", (seed >> 9) % 1000),
            _ => format!("{}", (seed >> 9) % 60),
        };
        text.push_str(&format!("{t},k{},{value}\n", (seed >> 30) % 8));
    }
    text
}

/// The input file, written once per test process: the tests run in parallel, and rewriting it
/// in each let one test read another's half-written copy.
fn input() -> PathBuf {
    static INPUT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    INPUT
        .get_or_init(|| write_temp("multi-agg-input.csv", &input_text(3_000)))
        .clone()
}

/// Runs a job and returns its standard output (failing on an error).
fn run_ok(args: &[&str]) -> String {
    let o = windowctl(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

/// The rows of a CSV output, split into cells (no key here has a comma).
fn cells(csv: &str) -> Vec<Vec<String>> {
    csv.lines()
        .map(|l| l.split(',').map(str::to_owned).collect())
        .collect()
}

/// The job of `extra` over the input with `agg`, results and late elements to files of `tag`.
fn job(input: &Path, agg: &str, extra: &[&str], tag: &str) -> (String, Vec<u8>) {
    let dir = input.parent().expect("temp dir");
    let late = dir.join(format!("multi-agg-late-{tag}.csv"));
    let late_path = late.display().to_string();
    let mut args = vec![
        "--input",
        input.to_str().expect("utf-8 path"),
        "--out-of-orderness",
        "50ms",
        "--agg",
        agg,
        "--late-output",
        &late_path,
    ];
    args.extend_from_slice(extra);
    let out = run_ok(&args);
    (out, fs::read(&late).expect("late output"))
}

/// For the job of `extra`: the `count,sum,min,max,mean` job's header names the aggregates,
/// each of its columns is the single job's `result` column row for row (and the other columns
/// are the single job's, with `empty` where the strategy has it), its late output is the same.
/// Returns the number of late elements.
fn check_columns(input: &Path, extra: &[&str]) -> usize {
    let tag = extra.join("_").replace([':', '/'], "-");
    let (several, several_late) = job(input, &ALL.join(","), extra, &format!("{tag}-all"));
    let several = cells(&several);
    assert!(several.len() > 5, "{extra:?}: too few rows: {several:?}");
    let header = &several[0];
    assert_eq!(&header[..3], ["key", "window_start", "window_end"]);
    assert_eq!(&header[3..8], ALL, "{extra:?}");
    for (i, agg) in ALL.iter().enumerate() {
        let (single, single_late) = job(input, agg, extra, &format!("{tag}-{agg}"));
        let single = cells(&single);
        assert_eq!(
            single.len(),
            several.len(),
            "{extra:?} {agg}: number of rows"
        );
        assert_eq!(single[0][3], "result");
        for (row, (s, m)) in single.iter().zip(&several).enumerate().skip(1) {
            assert_eq!(s[..3], m[..3], "{extra:?} {agg}: row {row} key and window");
            assert_eq!(s[3], m[3 + i], "{extra:?} {agg}: row {row}: {s:?} vs {m:?}");
            assert_eq!(
                s[4..],
                m[8..],
                "{extra:?} {agg}: row {row}: the empty column"
            );
        }
        assert_eq!(single_late, several_late, "{extra:?} {agg}: late output");
    }
    several_late.iter().filter(|&&b| b == b'\n').count() - 1
}

#[test]
fn each_column_equals_the_single_aggregate_job_in_every_strategy() {
    let input = input();
    for strategy in ["native", "keywindow", "sliced", "sliced:changes"] {
        let window = ["--window", "sliding:200ms:50ms", "--strategy", strategy];
        assert!(
            check_columns(&input, &window) > 0,
            "{strategy}: no late elements"
        );
        let late = [&window[..], &["--allowed-lateness", "100ms"]].concat();
        assert!(
            check_columns(&input, &late) > 0,
            "{strategy}: no late elements"
        );
    }
}

#[test]
fn each_column_equals_the_single_aggregate_job_in_every_window_kind() {
    let input = input();
    for window in [
        "tumbling:100ms",
        "tumbling:100ms:30ms",
        "session:6ms",
        "global:end-of-stream",
        "count:7",
        "count:10:3",
    ] {
        check_columns(&input, &["--window", window]);
    }
    check_columns(
        &input,
        &["--window", "session:6ms", "--allowed-lateness", "300ms"],
    );
    // Triggers and evictors (windows that keep their elements).
    check_columns(
        &input,
        &["--window", "tumbling:100ms", "--trigger", "count:4"],
    );
    check_columns(
        &input,
        &["--window", "global", "--trigger", "purging:count:9"],
    );
    check_columns(
        &input,
        &["--window", "sliding:200ms:50ms", "--evictor", "count:3"],
    );
    check_columns(
        &input,
        &[
            "--window",
            "tumbling:100ms",
            "--trigger",
            "continuous-event-time:30ms",
            "--evictor",
            "delta:20:after",
        ],
    );
}

/// A hand-made input and the exact output, integers printed as integers in every column.
#[test]
fn exact_values_on_a_small_input() {
    let input = write_temp(
        "multi-agg-small.csv",
        "event_time_ms,key,value\n1,a,4\n2,a,-2\n3,b,2.5\n7,a,10\n12,a,1\n14,b,3\n",
    );
    let input = input.to_str().expect("utf-8 path");
    let args = |agg, strategy| {
        run_ok(&[
            "--input",
            input,
            "--window",
            "sliding:10ms:5ms",
            "--strategy",
            strategy,
            "--agg",
            agg,
        ])
    };
    assert_eq!(
        args("count,sum,min,max,mean", "native"),
        "key,window_start,window_end,count,sum,min,max,mean\n\
         a,-5,5,2,2,-2,4,1\n\
         b,-5,5,1,2.5,2.5,2.5,2.5\n\
         a,0,10,3,12,-2,10,4\n\
         b,0,10,1,2.5,2.5,2.5,2.5\n\
         a,5,15,2,11,1,10,5.5\n\
         b,5,15,1,3,3,3,3\n\
         a,10,20,1,1,1,1,1\n\
         b,10,20,1,3,3,3,3\n"
    );
    // Another order and a subset, with the keywindow strategy's empty results.
    assert_eq!(
        args("max,count", "keywindow"),
        "key,window_start,window_end,max,count,empty\n\
         a,-5,5,4,2,false\n\
         b,-5,5,2.5,1,false\n\
         a,0,10,10,3,false\n\
         a,5,15,10,2,false\n\
         b,5,15,3,1,false\n\
         a,10,20,1,1,false\n\
         a,15,25,,,true\n\
         b,15,25,,,true\n"
    );
}

#[test]
fn json_lines_have_one_member_per_aggregate() {
    let input = write_temp(
        "multi-agg-json.csv",
        "event_time_ms,key,value\n1,a,4\n2,a,-2\n3,b,2.5\n",
    );
    let out = run_ok(&[
        "--input",
        input.to_str().expect("utf-8 path"),
        "--window",
        "tumbling:10ms",
        "--agg",
        "sum,mean,count",
        "--output-format",
        "jsonl",
    ]);
    assert_eq!(
        out,
        "{\"key\":\"a\",\"window_start\":0,\"window_end\":10,\"sum\":2,\"mean\":1,\"count\":2}\n\
         {\"key\":\"b\",\"window_start\":0,\"window_end\":10,\"sum\":2.5,\"mean\":2.5,\"count\":1}\n"
    );
}

/// `aggregate` in a job file as text or as a list, and `--agg` over it, give the same output.
#[test]
fn job_files_take_several_aggregates() {
    let input = input();
    let path = input.to_str().expect("utf-8 path");
    let head = format!("assigner = \"tumbling:100ms\"\n[io]\ninput = [{path:?}]\n");
    let text = write_temp(
        "multi-agg-text.toml",
        &format!("aggregate = \"count,max\"\n{head}"),
    );
    let list = write_temp(
        "multi-agg-list.toml",
        &format!("aggregate = [\"count\", \"max\"]\n{head}"),
    );
    let other = write_temp(
        "multi-agg-sum.toml",
        &format!("aggregate = \"sum\"\n{head}"),
    );
    let flags = run_ok(&[
        "--input",
        path,
        "--window",
        "tumbling:100ms",
        "--agg",
        "count,max",
    ]);
    assert!(flags.starts_with("key,window_start,window_end,count,max\n"));
    for file in [&text, &list] {
        assert_eq!(run_ok(&["--job", file.to_str().expect("utf-8")]), flags);
    }
    assert_eq!(
        run_ok(&[
            "--job",
            other.to_str().expect("utf-8"),
            "--agg",
            "count,max"
        ]),
        flags
    );
    let twice = write_temp(
        "multi-agg-twice.toml",
        &format!("aggregate = [\"max\", \"max\"]\n{head}"),
    );
    let o = windowctl(&["--job", twice.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("multi-agg-twice.toml") && err.contains("max is listed twice"),
        "{err}"
    );
}

fn usage_error(agg: &str) -> String {
    let o: Output = windowctl(&["--input", "data/nycflights13_dest.csv.gz", "--agg", agg]);
    assert_eq!(o.status.code(), Some(2), "--agg {agg}: {}", stderr(&o));
    assert!(o.stdout.is_empty(), "nothing written for --agg {agg}");
    stderr(&o)
}

#[test]
fn duplicate_unknown_and_empty_names_are_usage_errors() {
    assert_eq!(
        usage_error("count,sum,count"),
        "windowctl: error: --agg: invalid aggregate 'count,sum,count': count is listed twice \
         (each aggregate once)\n"
    );
    assert_eq!(
        usage_error("count,median"),
        "windowctl: error: --agg: invalid aggregate 'count,median': unknown aggregate 'median' \
         in the list: expected count, sum, min, max or mean, each once\n"
    );
    assert!(usage_error("sum,,max").contains("an empty name in the list"));
    assert!(usage_error("count,list").contains("list keeps the elements"));
    assert!(usage_error("mean,avg").contains("mean is listed twice"));
}

/// A fresh directory for one checkpointed job.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("windowctl-multi-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The checkpoints of `dir/ckpt`, oldest first.
fn checkpoint_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir.join("ckpt"))
        .expect("checkpoint dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "wcp"))
        .collect();
    files.sort();
    files
}

/// A job with several aggregates runs to the end taking checkpoints; with its newer
/// checkpoints removed it resumes from the oldest one kept (mid-run: the accumulators of
/// several aggregates restored) and ends with the same outputs, byte for byte.
#[test]
fn a_resume_from_a_checkpoint_gives_identical_outputs() {
    for (name, extra) in [
        ("native", &["--window", "sliding:200ms:50ms"][..]),
        (
            "session",
            &["--window", "session:6ms", "--allowed-lateness", "100ms"],
        ),
        (
            "sliced",
            &["--window", "sliding:400ms:20ms", "--strategy", "sliced"],
        ),
        (
            "evicting",
            &["--window", "tumbling:100ms", "--evictor", "count:3"],
        ),
    ] {
        let dir = scratch(name);
        fs::write(dir.join("in.csv"), input_text(60_000)).expect("input");
        let mut args = vec![
            "--input",
            "in.csv",
            "--out-of-orderness",
            "50ms",
            "--agg",
            "mean,count,max,sum,min",
            "--output",
            "out.csv",
            "--late-output",
            "late.csv",
            "--checkpoint-dir",
            "ckpt",
            "--checkpoint-interval",
            "1ms",
        ];
        args.extend_from_slice(extra);
        let run = |args: &[&str]| {
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_windowctl"))
                .arg("run")
                .args(args)
                .arg("--no-progress")
                .current_dir(&dir)
                .output()
                .expect("windowctl starts");
            assert!(o.status.success(), "{name}: {}", stderr(&o));
            stderr(&o)
        };
        let first = run(&args);
        let outputs = || {
            (
                fs::read(dir.join("out.csv")),
                fs::read(dir.join("late.csv")),
            )
        };
        let (results, late) = outputs();
        let results = results.expect("results");
        assert!(results.starts_with(b"key,window_start,window_end,mean,count,max,sum,min\n"));
        let files = checkpoint_files(&dir);
        assert!(files.len() >= 2, "{name}: {files:?}");
        for newer in &files[1..] {
            fs::remove_file(newer).expect("remove");
        }
        let taken = |err: &str, what: &str| -> u64 {
            let (_, rest) = err
                .split_once(what)
                .unwrap_or_else(|| panic!("{name}: {err}"));
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().expect("a number")
        };
        let first = taken(&first, "checkpoints taken: ");
        let err = run(&args);
        // Not from the last checkpoint, at the end of the input: windows were open.
        assert!(
            taken(&err, "resumed from checkpoint ") < first - 1,
            "{name}: {err}"
        );
        let (again, late_again) = outputs();
        assert!(again.expect("results") == results, "{name}: results differ");
        assert!(
            late_again.expect("late") == late.expect("late"),
            "{name}: late output differs"
        );
        let _ = fs::remove_dir_all(&dir);
    }
}
