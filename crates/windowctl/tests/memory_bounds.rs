//! Issue 16, item 9: every strategy is held to `--max-window-states` (window states, key
//! windows or slices, and the elements held; records for `dstream`), stops cleanly over it
//! (exit 1, the results up to the batch boundary written, no torn row, the message naming the
//! flag, the limit and what was held), and reports its peak state in the summary. The peaks are
//! worked out by hand in the comments.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("windowctl-mem-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Writes `text` to `name` in `dir`; its path as text.
fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    fs::write(&p, text).expect("write input");
    p.to_str().expect("utf-8 path").to_owned()
}

fn windowctl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .args(args)
        .output()
        .expect("windowctl starts")
}

fn run(args: &[&str]) -> Output {
    let mut all = vec!["run", "--no-progress"];
    all.extend_from_slice(args);
    windowctl(&all)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The summary's peak state: (states, window states / key windows / slices, elements held).
fn peak(o: &Output) -> (u64, u64, u64) {
    let err = stderr(o);
    let line = err
        .lines()
        .find(|l| l.starts_with("windowctl: peak state: "))
        .unwrap_or_else(|| panic!("no peak state line in {err}"));
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit() && c != ',')
        .map(|w| w.replace(',', ""))
        .filter_map(|w| w.parse().ok())
        .collect();
    (numbers[0], numbers[1], numbers[2])
}

/// The key windows paper's worked example: one key, elements at 0, 5, 10 and 11 ms, sliding
/// windows of 4 ms every 1 ms, watermark delay 0 (after each element, its time - 1).
const WORKED_EXAMPLE: &str = "event_time_ms,key,value\n0,a,1\n5,a,1\n10,a,1\n11,a,1\n";

/// The job over the worked example with `strategy`, `extra` flags after.
fn worked_example(dir: &Path, strategy: &str, extra: &[&str]) -> Output {
    let input = write(dir, "worked.csv", WORKED_EXAMPLE);
    let mut args = vec![
        "--input",
        &input,
        "--window",
        "sliding:4ms:1ms",
        "--agg",
        "count",
        "--strategy",
        strategy,
    ];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn the_summary_reports_the_peak_state_of_each_strategy() {
    let dir = scratch("peaks");
    // The input is one batch; its boundary (and the one before the final watermark) sees the
    // watermark at 10, element 11 just processed.
    // native: windows [s, s + 4) with s in 8..=11 hold 11 (or 10) and are open; [7, 11) fired
    // at 10 and was cleaned up (no lateness), as were the windows of 0 and 5.
    assert_eq!(peak(&worked_example(&dir, "native", &[])), (4, 4, 0));
    // keywindow: 11 waits in the reordering buffer (released at watermark 11); elements 0, 5,
    // 10 made the key windows [-3,1) [1,5) [2,6) [6,10) [7,11) [11,15); a fired window is kept
    // until end + size for a later left window to inherit from: [-3,1), [1,5) and [2,6) went
    // (dropped at 5, 9, 10), 3 are held.
    assert_eq!(peak(&worked_example(&dir, "keywindow", &[])), (4, 3, 1));
    // sliced (slices of gcd(4, 1) = 1 ms): the slices of 0 and 5 left with their last windows
    // ([0, 4) and [5, 9) fired by 10), the slice of 10 is held (its last window is [10, 14)),
    // 11 waits in the buffer. Emitting changes only keeps the same slices.
    assert_eq!(peak(&worked_example(&dir, "sliced", &[])), (2, 1, 1));
    assert_eq!(
        peak(&worked_example(&dir, "sliced:changes", &[])),
        (2, 1, 1)
    );
}

/// The worked example in tumbling 10 ms windows that keep their last 3 elements (an evictor),
/// summed, with a watermark 1 s behind (nothing fires before the end), and `extra` flags.
fn evicting(input: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "--input",
        input,
        "--window",
        "tumbling:10ms",
        "--evictor",
        "count:3",
        "--agg",
        "sum",
        "--out-of-orderness",
        "1s",
    ];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn the_peak_state_counts_the_elements_evicting_windows_keep() {
    let dir = scratch("evicting");
    let input = write(&dir, "in.csv", WORKED_EXAMPLE);
    let job = |extra: &[&str]| evicting(&input, extra);
    // Nothing fires before the end (watermark 11 - 1000 - 1): [0, 10) keeps 0 and 5, [10, 20)
    // keeps 10 and 11: 2 window states and 4 elements, 6 states.
    let ok = job(&["--max-window-states", "6"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert_eq!(peak(&ok), (6, 2, 4));
    assert_eq!(
        stdout(&ok),
        "key,window_start,window_end,result\na,0,10,2\na,10,20,2\n"
    );
    // Over the limit at the boundary before the final watermark: nothing fired, nothing
    // written but the header, exit 1.
    let over = job(&["--max-window-states", "5"]);
    assert_eq!(over.status.code(), Some(1), "{}", stderr(&over));
    let err = stderr(&over);
    assert!(
        err.contains("the native operator holds 6 states (2 window states, 4 elements held; about")
            && err.contains("> --max-window-states 5;")
            && err.contains("most of it is elements held"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(stdout(&over), "key,window_start,window_end,result\n");
}

#[test]
fn each_strategy_stops_over_its_limit_and_runs_at_it() {
    let dir = scratch("limits");
    // (strategy, peak, what the message says was held)
    let cases = [
        (
            "keywindow",
            4,
            "--strategy keywindow holds 4 states (3 key windows, 1 element held",
        ),
        (
            "sliced",
            2,
            "--strategy sliced holds 2 states (1 slice, 1 element held",
        ),
        (
            "sliced:changes",
            2,
            "--strategy sliced:changes holds 2 states (1 slice, 1 element held",
        ),
    ];
    for (strategy, peak_states, held) in cases {
        let full = worked_example(
            &dir,
            strategy,
            &["--max-window-states", &peak_states.to_string()],
        );
        assert!(full.status.success(), "{strategy}: {}", stderr(&full));
        let limit = (peak_states - 1).to_string();
        let over = worked_example(&dir, strategy, &["--max-window-states", &limit]);
        assert_eq!(over.status.code(), Some(1), "{strategy}: {}", stderr(&over));
        let err = stderr(&over);
        assert!(err.contains(held), "{strategy}: {err}");
        assert!(
            err.contains(&format!("> --max-window-states {limit};"))
                && err.contains("the job stopped at a batch boundary"),
            "{strategy}: {err}"
        );
        // The results up to there: a prefix of the full run's, whole rows.
        let (part, all) = (stdout(&over), stdout(&full));
        assert!(
            all.starts_with(&part) && part.ends_with('\n'),
            "{strategy}: {part}"
        );
        assert!(!err.contains("panicked"), "{strategy}: {err}");
    }
    // The native operator also refuses, before adding it, the element that would bring its
    // window states over the limit, which sees more than a batch boundary: element 5 comes
    // before the watermark passes element 0's 4 windows, and adds 4 more, 8 (the boundary's
    // peak is 4). The results before it are written.
    let over = worked_example(&dir, "native", &["--max-window-states", "7"]);
    assert_eq!(over.status.code(), Some(1), "{}", stderr(&over));
    let err = stderr(&over);
    assert!(
        err.contains(
            "the element at 5 would bring the window states to 8, more than the limit of 7"
        ) && err.contains("--max-window-states"),
        "{err}"
    );
    let ok = worked_example(&dir, "native", &["--max-window-states", "8"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(stdout(&ok).starts_with(&stdout(&over)), "{}", stdout(&over));
}

#[test]
fn a_job_file_limit_holds_every_strategy() {
    let dir = scratch("jobfile");
    let input = write(&dir, "worked.csv", WORKED_EXAMPLE);
    let job = write(
        &dir,
        "job.toml",
        &format!(
            "assigner = \"sliding:4ms:1ms\"\naggregate = \"count\"\nstrategy = \"keywindow\"\n\
             max_window_states = 3\n[io]\ninput = [{input:?}]\n"
        ),
    );
    let o = run(&["--job", &job]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("holds 4 states (3 key windows, 1 element held"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_key_dictionary_is_held_to_the_limit() {
    let dir = scratch("keys");
    // Ten keys, each in its own 1 ms window that fires at the next element: few window states,
    // but ten distinct keys, which the dictionary keeps for the whole run.
    let mut text = String::from("event_time_ms,key,value\n");
    for i in 0..10 {
        text.push_str(&format!("{i},k{i},1\n"));
    }
    let input = write(&dir, "keys.csv", &text);
    let job = |limit: &str| {
        run(&[
            "--input",
            &input,
            "--window",
            "tumbling:1ms",
            "--agg",
            "count",
            "--max-window-states",
            limit,
        ])
    };
    let over = job("5");
    assert_eq!(over.status.code(), Some(1), "{}", stderr(&over));
    assert!(
        stderr(&over).contains("the key dictionary holds 10 distinct keys (about")
            && stderr(&over).contains("> --max-window-states 5:"),
        "{}",
        stderr(&over)
    );
    let ok = job("10");
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(
        stderr(&ok).contains("key dictionary: 10 keys"),
        "{}",
        stderr(&ok)
    );
}

/// Events (unsorted) at 500 (a), 1500 (b), 1200 (a), 3100 (a): 1 s batches from zero 0 hold
/// 1, 2, 0 and 1 events; `--operation window` over 2 s windows.
const DSTREAM_EVENTS: &str = "event_time_ms,key,value\n500,a,2\n1500,b,1\n1200,a,4\n3100,a,8\n";

fn dstream(input: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "dstream",
        "--input",
        input,
        "--batch-interval",
        "1s",
        "--window",
        "2s",
        "--operation",
        "window",
    ];
    args.extend_from_slice(extra);
    windowctl(&args)
}

#[test]
fn dstream_holds_its_records_to_the_limit_and_reports_the_peak() {
    let dir = scratch("dstream");
    let input = write(&dir, "ev.csv", DSTREAM_EVENTS);
    // The output remembers 1 batch (its slide), the window its one batch and asks the queue
    // input for 1 s + 2 s: 3 batches. After batch 1000: 3 events waiting + input {1000: 1} +
    // window (1) = 5; after 2000: 1 + (1 + 2) + 3 = 7; after 3000: 1 + 3 + 2 = 6; after 4000:
    // 0 + (2 + 0 + 1) + 1 = 4. Before the first batch the whole input, 4. Peak 7.
    let ok = dstream(&input, &["--max-window-states", "7"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(
        stderr(&ok).contains("dstream: peak state: 7 records (about "),
        "{}",
        stderr(&ok)
    );
    let over = dstream(&input, &["--max-window-states", "6"]);
    assert_eq!(over.status.code(), Some(1), "{}", stderr(&over));
    let err = stderr(&over);
    assert!(
        err.contains(
            "the job holds 7 records (about 336 B) > --max-window-states 6 (1 event waiting \
             for their batch, 6 records in the batches"
        ),
        "{err}"
    );
    // The rows of batches 1000 and 2000, written before the job stopped.
    assert_eq!(
        stdout(&over),
        "batch_time,key,result\n1000,a,2\n2000,a,2\n2000,a,4\n2000,b,1\n"
    );
    // --batches-by event reads the whole input first: 4 events over 3, nothing written.
    let out = dir.join("out.csv");
    let over = dstream(
        &input,
        &[
            "--max-window-states",
            "3",
            "--output",
            out.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(over.status.code(), Some(1), "{}", stderr(&over));
    assert!(
        stderr(&over).contains("--batches-by event reads the whole input before its first batch"),
        "{}",
        stderr(&over)
    );
    assert!(!out.exists(), "nothing is written");
}

#[test]
fn under_workers_each_worker_holds_its_share_and_the_message_names_the_flag() {
    let dir = scratch("workers");
    let input = write(&dir, "in.csv", WORKED_EXAMPLE);
    let job = |limit: &str| evicting(&input, &["--workers", "2", "--max-window-states", limit]);
    // One key, so one worker holds all 6 states (2 window states, 4 elements) before the end:
    // a share of 12 / 2 = 6 runs, a share of 10 / 2 = 5 stops with nothing fired.
    let ok = job("12");
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert_eq!(
        stdout(&ok),
        "key,window_start,window_end,result\na,0,10,2\na,10,20,2\n"
    );
    let over = job("10");
    assert_eq!(over.status.code(), Some(1), "{}", stderr(&over));
    let err = stderr(&over);
    assert!(
        err.contains("a worker holds 6 (2 window states, 4 elements) > 5, its share")
            && err.contains("--max-window-states"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(stdout(&over), "key,window_start,window_end,result\n");
}
