//! Issue 16, items 11-13, end to end: which fields of the input a job reads. CSV without a
//! header (`--no-header`, fields as column numbers), composite keys (`--key-field a,b`, one
//! output column per key field, in results and late rows), a count that needs no value column
//! and `--window-all` that needs no key column; a headerless job resumed from a checkpoint.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{assert_fails, stderr, stdout, windowctl, write_temp};

/// Three keys over two 10 s windows, hand-computed below.
const EVENTS: &str = "1000,a,1\n2000,b,2\n3000,a,4\n12000,a,8\n";

/// `windowctl run --input PATH --window tumbling:10s --agg sum` with `extra`.
fn sum(path: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "--input",
        path.to_str().unwrap(),
        "--window",
        "tumbling:10s",
        "--agg",
        "sum",
    ];
    args.extend_from_slice(extra);
    windowctl(&args)
}

#[test]
fn no_header_reads_columns_by_number() {
    let want = "key,window_start,window_end,result\na,0,10000,5\nb,0,10000,2\na,10000,20000,8\n";
    let plain = write_temp("no-header.csv", EVENTS);
    let o = sum(&plain, &["--no-header"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), want, "columns 1, 2, 3 by default");
    // The same events with the columns in another order, and one extra column.
    let moved: String = EVENTS
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            format!("x,{},{},{}\n", f[2], f[1], f[0])
        })
        .collect();
    let moved = write_temp("no-header-moved.csv", &moved);
    let o = sum(
        &moved,
        &[
            "--no-header",
            "--time-field",
            "4",
            "--key-field",
            "3",
            "--value-field",
            "2",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), want);
    // With a header, a number that no column is named is the column at that position.
    let header = write_temp("header-numbers.csv", &format!("t,k,v\n{EVENTS}"));
    let o = sum(
        &header,
        &[
            "--time-field",
            "1",
            "--key-field",
            "2",
            "--value-field",
            "v",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), want);
    // Without --no-header a headerless file is refused, naming the field and the header.
    let o = sum(&plain, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o)
            .contains("no-header.csv:1: field 'event_time_ms': no such column in the CSV header"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn no_header_refuses_names_zero_and_json_naming_the_setting() {
    let plain = write_temp("no-header-bad.csv", EVENTS);
    let o = sum(&plain, &["--no-header", "--time-field", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--time-field 0: column numbers count from 1"),
        "{}",
        stderr(&o)
    );
    let o = sum(&plain, &["--no-header", "--key-field", "key"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--key-field key: with --no-header the input has no header line"),
        "{}",
        stderr(&o)
    );
    let json = write_temp(
        "no-header.jsonl",
        "{\"event_time_ms\":1,\"key\":\"a\",\"value\":1}\n",
    );
    let o = sum(&json, &["--no-header"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is JSON lines") && stderr(&o).contains("--no-header"),
        "{}",
        stderr(&o)
    );
    // A job file: the same, named by its keys.
    let input = plain.to_str().unwrap();
    let job = write_temp(
        "no-header.toml",
        &format!(
            "assigner = \"tumbling:10s\"\naggregate = \"sum\"\n[io]\ninput = [\"{input}\"]\nno_header = true\ntime_field = \"t\"\n"
        ),
    );
    let o = windowctl(&["--job", job.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "no-header.toml: io.time_field t: with io.no_header the input has no header line"
        ),
        "{}",
        stderr(&o)
    );
    let job = write_temp(
        "no-header-ok.toml",
        &format!(
            "assigner = \"tumbling:10s\"\naggregate = \"sum\"\n[io]\ninput = [\"{input}\"]\nno_header = true\n"
        ),
    );
    let o = windowctl(&["--job", job.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), stdout(&sum(&plain, &["--no-header"])));
}

#[test]
fn a_composite_key_gives_a_column_per_key_field() {
    // Quoted fields with commas: ("x,y", "z") and ("x", "y,z") are two keys.
    let text = "t,carrier,dest,v\n\
                1000,UA,SFO,1\n\
                2000,UA,LAX,2\n\
                3000,UA,SFO,4\n\
                4000,\"x,y\",z,10\n\
                5000,x,\"y,z\",20\n\
                12000,AA,SFO,8\n";
    let p = write_temp("composite.csv", text);
    let fields = [
        "--time-field",
        "t",
        "--value-field",
        "v",
        "--key-field",
        "carrier,dest",
    ];
    let o = sum(&p, &fields);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "carrier,dest,window_start,window_end,result\n\
         UA,SFO,0,10000,5\n\
         UA,LAX,0,10000,2\n\
         \"x,y\",z,0,10000,10\n\
         x,\"y,z\",0,10000,20\n\
         AA,SFO,10000,20000,8\n"
    );
    let out = std::env::temp_dir().join(format!("windowctl-fields-{}.jsonl", std::process::id()));
    let mut args = fields.to_vec();
    args.extend(["--output", out.to_str().unwrap()]);
    let o = sum(&p, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let json = fs::read_to_string(&out).unwrap();
    assert_eq!(
        json.lines().nth(3),
        Some("{\"carrier\":\"x\",\"dest\":\"y,z\",\"window_start\":0,\"window_end\":10000,\"result\":20}")
    );
    let _ = fs::remove_file(&out);
    // The keywindow strategy's `empty` column comes after them.
    let mut args = vec!["--input", p.to_str().unwrap(), "--window", "sliding:10s:5s"];
    args.extend_from_slice(&fields);
    args.extend(["--agg", "sum", "--strategy", "sliced:changes"]);
    let o = windowctl(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with(
            "carrier,dest,window_start,window_end,result,empty\nUA,SFO,-5000,5000,5,false\n"
        ),
        "{}",
        stdout(&o)
    );
    // Without a header: columns named key1, key2.
    let plain = write_temp("composite-plain.csv", "1000,UA,SFO,1\n2000,UA,SFO,2\n");
    let o = sum(
        &plain,
        &["--no-header", "--key-field", "2,3", "--value-field", "4"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "key1,key2,window_start,window_end,result\nUA,SFO,0,10000,3\n"
    );
    // A key field missing from the header is named, with the file.
    let o = sum(
        &p,
        &[
            "--time-field",
            "t",
            "--value-field",
            "v",
            "--key-field",
            "carrier,origin",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("composite.csv:1: field 'origin': no such column"),
        "{}",
        stderr(&o)
    );
    // Key columns that would repeat a column of the output are refused.
    assert_fails(
        &[
            "--input",
            p.to_str().unwrap(),
            "--key-field",
            "carrier,result",
        ],
        "--key-field carrier,result: each key field becomes an output column",
    );
}

#[test]
fn composite_keys_in_late_rows_dead_letters_and_json_lines() {
    let text = "t,carrier,dest,v\n\
                20000,UA,SFO,1\n\
                1000,UA,LAX,2\n\
                21000,UA,,3\n\
                22000,AA,SFO,4\n";
    let p = write_temp("composite-late.csv", text);
    let dir = std::env::temp_dir().join(format!("windowctl-fields-late-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let (late, dead) = (dir.join("late.csv"), dir.join("dead.csv"));
    let o = sum(
        &p,
        &[
            "--time-field",
            "t",
            "--value-field",
            "v",
            "--key-field",
            "carrier,dest",
            "--late-output",
            late.to_str().unwrap(),
            "--on-error",
            "skip",
            "--dead-letter",
            dead.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "carrier,dest,window_start,window_end,result\nUA,SFO,20000,30000,1\nAA,SFO,20000,30000,4\n"
    );
    assert_eq!(
        fs::read_to_string(&late).unwrap(),
        "event_time_ms,carrier,dest,value,watermark\n1000,UA,LAX,2,19999\n"
    );
    let dead = fs::read_to_string(&dead).unwrap();
    assert!(
        dead.contains(",4,dest,missing (empty),\"21000,UA,,3\""),
        "{dead}"
    );
    let _ = fs::remove_dir_all(&dir);
    // JSON lines: each member; a missing one named with its line.
    let json = write_temp(
        "composite.jsonl",
        "{\"t\":1000,\"carrier\":\"UA\",\"dest\":\"SFO\",\"v\":1}\n{\"t\":2000,\"carrier\":\"UA\",\"v\":1}\n",
    );
    let o = sum(
        &json,
        &[
            "--time-field",
            "t",
            "--value-field",
            "v",
            "--key-field",
            "carrier,dest",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("composite.jsonl:2: field 'dest': missing"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_count_needs_no_value_column() {
    let p = write_temp(
        "count.csv",
        "event_time_ms,key\n1000,a\n2000,b\n3000,a\n12000,a\n",
    );
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--window",
        "tumbling:10s",
        "--agg",
        "count",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "key,window_start,window_end,result\na,0,10000,2\nb,0,10000,1\na,10000,20000,1\n"
    );
    // A late element without a value: an empty value in the late rows.
    let late =
        std::env::temp_dir().join(format!("windowctl-count-late-{}.csv", std::process::id()));
    let p2 = write_temp("count-late.csv", "event_time_ms,key\n20000,a\n1000,a\n");
    let o = windowctl(&[
        "--input",
        p2.to_str().unwrap(),
        "--window",
        "tumbling:10s",
        "--agg",
        "count",
        "--late-output",
        late.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        fs::read_to_string(&late).unwrap(),
        "event_time_ms,key,value,watermark\n1000,a,,19999\n"
    );
    let _ = fs::remove_file(&late);
    // Jobs that read values still need the column, and say which file lacks it.
    for extra in [
        &["--agg", "sum"][..],
        &["--agg", "count", "--evictor", "delta:1"],
        &["--agg", "count", "--trigger", "purging:delta:1"],
    ] {
        let mut args = vec!["--input", p.to_str().unwrap(), "--window", "tumbling:10s"];
        args.extend_from_slice(extra);
        let o = windowctl(&args);
        assert_eq!(o.status.code(), Some(1), "{extra:?}");
        assert!(
            stderr(&o).contains("count.csv:1: field 'value': no such column in the CSV header"),
            "{extra:?}: {}",
            stderr(&o)
        );
    }
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--window",
        "session:value",
        "--agg",
        "count",
    ]);
    assert!(
        stderr(&o).contains("field 'value': no such column"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn window_all_needs_no_key_column() {
    let p = write_temp(
        "all-nokey.csv",
        "event_time_ms,value\n1000,1\n2000,2\n12000,8\n",
    );
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--window",
        "tumbling:10s",
        "--agg",
        "sum",
        "--window-all",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "key,window_start,window_end,result\n,0,10000,3\n,10000,20000,8\n"
    );
    // Without --window-all the key is read, and its column must be there.
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--window",
        "tumbling:10s",
        "--agg",
        "sum",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("all-nokey.csv:1: field 'key': no such column in the CSV header"),
        "{}",
        stderr(&o)
    );
    // No key and no value: the count of every element.
    let t = write_temp("all-time-only.csv", "1000\n2000\n12000\n");
    let o = windowctl(&[
        "--input",
        t.to_str().unwrap(),
        "--no-header",
        "--window",
        "tumbling:10s",
        "--agg",
        "count",
        "--window-all",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "key,window_start,window_end,result\n,0,10000,2\n,10000,20000,1\n"
    );
    // A key field with --window-all would be ignored: refused as a usage error, also from a
    // job file.
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--window",
        "tumbling:10s",
        "--window-all",
        "--key-field",
        "value",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--key-field value: --window-all puts every element under one key"),
        "{}",
        stderr(&o)
    );
    let job = write_temp(
        "all-key.toml",
        "window = \"tumbling:10s\"\naggregate = \"sum\"\nwindow_all = true\n[io]\nkey_field = \"value\"\n",
    );
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--job",
        job.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("all-key.toml: io.key_field value: window_all puts every element"),
        "{}",
        stderr(&o)
    );
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("windowctl-fields-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The arguments as `&str`s.
fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .arg("run")
        .args(args)
        .arg("--no-progress")
        .current_dir(dir)
        .output()
        .expect("windowctl starts")
}

/// A headerless input with a composite key, run to the end with checkpoints, then resumed from
/// the checkpoint before the last (the last one removed): the outputs are those of a run
/// without checkpoints. A checkpoint of the job is not taken for the same job with a header.
#[test]
fn a_headerless_job_resumes_from_a_checkpoint() {
    let dir = scratch("resume");
    let mut text = String::new();
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    for i in 0..20_000_u64 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let t = (i * 3).saturating_sub(seed % 200);
        text.push_str(&format!(
            "{},c{},d{},{}\n",
            t,
            seed % 7,
            (seed >> 9) % 5,
            (seed >> 20) % 100
        ));
    }
    fs::write(dir.join("in.csv"), text).unwrap();
    let job = |out: &str, late: &str| -> Vec<String> {
        [
            "--input",
            "in.csv",
            "--no-header",
            "--key-field",
            "2,3",
            "--value-field",
            "4",
            "--window",
            "tumbling:100ms",
            "--agg",
            "mean",
            "--out-of-orderness",
            "50ms",
            "--output",
            out,
            "--late-output",
            late,
        ]
        .map(String::from)
        .to_vec()
    };
    let a = job("a.csv", "a-late.csv");
    let o = run_in(&dir, &strs(&a));
    assert!(o.status.success(), "{}", stderr(&o));
    let mut b = job("b.csv", "b-late.csv");
    b.extend(["--checkpoint-dir", "ckpt", "--checkpoint-interval", "1ms"].map(String::from));
    let o = run_in(&dir, &strs(&b));
    assert!(o.status.success(), "{}", stderr(&o));
    let mut files: Vec<PathBuf> = fs::read_dir(dir.join("ckpt"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "wcp"))
        .collect();
    files.sort();
    fs::remove_file(files.last().unwrap()).unwrap();
    let o = run_in(&dir, &strs(&b));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("resumed from checkpoint"),
        "{}",
        stderr(&o)
    );
    for (x, y) in [("a.csv", "b.csv"), ("a-late.csv", "b-late.csv")] {
        let (x, y) = (
            fs::read(dir.join(x)).unwrap(),
            fs::read(dir.join(y)).unwrap(),
        );
        assert!(x == y && x.len() > 100, "{} vs {} bytes", x.len(), y.len());
    }
    assert!(fs::read_to_string(dir.join("b.csv"))
        .unwrap()
        .starts_with("key1,key2,window_start"));
    // The same job over a header: another job.
    let header = b
        .iter()
        .filter(|a| *a != "--no-header")
        .cloned()
        .collect::<Vec<_>>();
    let o = run_in(&dir, &strs(&header));
    assert!(!o.status.success());
    assert!(stderr(&o).contains("is of another job"), "{}", stderr(&o));
    let _ = fs::remove_dir_all(&dir);
}

/// An element the assigner rejects is reported with its key fields as the line had them.
#[test]
fn a_rejected_element_of_a_composite_key_names_its_fields() {
    let p = write_temp(
        "composite-gap.csv",
        "t,carrier,dest,v\n1000,UA,SFO,-5\n2000,UA,SFO,5\n",
    );
    let dead = std::env::temp_dir().join(format!("windowctl-gap-dead-{}.csv", std::process::id()));
    let o = windowctl(&[
        "--input",
        p.to_str().unwrap(),
        "--time-field",
        "t",
        "--value-field",
        "v",
        "--key-field",
        "carrier,dest",
        "--window",
        "session:value",
        "--agg",
        "count",
        "--on-error",
        "skip",
        "--dead-letter",
        dead.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "carrier,dest,window_start,window_end,result\nUA,SFO,2000,2005,1\n"
    );
    let text = fs::read_to_string(&dead).unwrap();
    assert!(
        text.contains(",2,v,") && text.ends_with(",\"1000,UA,SFO,-5\"\n"),
        "{text}"
    );
    let _ = fs::remove_file(&dead);
}

/// `windowctl dstream` reads headerless CSV too, and keys by one field.
#[test]
fn dstream_reads_without_a_header_and_refuses_a_composite_key() {
    let p = write_temp("dstream-plain.csv", "1000,a,1\n2000,b,2\n3000,a,4\n");
    let dstream = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_windowctl"))
            .args([
                "dstream",
                "--input",
                p.to_str().unwrap(),
                "--batch-interval",
                "10s",
            ])
            .args(["--window", "10s"])
            .args(extra)
            .output()
            .expect("windowctl starts")
    };
    let o = dstream(&["--no-header"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "batch_time,key,result\n10000,a,2\n10000,b,1\n");
    let o = dstream(&["--no-header", "--key-field", "2,3"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--key-field 2,3: windowctl dstream keys by one field"),
        "{}",
        stderr(&o)
    );
}

/// A key field without a name is named by the setting, its value quoted (a trial saw
/// `io.key_field : a key field has no name` for an empty one in a job file).
#[test]
fn an_empty_key_field_is_quoted_in_its_message() {
    let input = write_temp("empty-key-field.csv", "t,a,v\n1000,x,1\n");
    let input = input.to_str().unwrap();
    for (given, shown) in [("a,,b", "\"a,,b\""), ("", "\"\"")] {
        assert_fails(
            &[
                "--input",
                input,
                "--time-field",
                "t",
                "--value-field",
                "v",
                "--key-field",
                given,
            ],
            &format!("--key-field {shown}: a key field has no name"),
        );
    }
}
