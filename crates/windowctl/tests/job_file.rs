//! `windowctl run --job FILE` end to end: a TOML or JSON job file is the same job as the flags
//! it stands for (byte for byte), a flag given overrides the file's value, and a file that is
//! not a job, or describes one `windowctl` cannot run, is refused naming the file and the key.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{stderr, stdout, windowctl, write_temp};

/// The flags of the job the files below describe: dense sliding windows computed with sliced
/// windows over the tiny flights data, a watermark delay, allowed lateness and a late output.
const FLAGS: [&str; 12] = [
    "--input",
    "data/nycflights13_tailnum_tiny.csv",
    "--window",
    "sliding:1h:5min",
    "--agg",
    "sum",
    "--strategy",
    "sliced",
    "--out-of-orderness",
    "5min",
    "--allowed-lateness",
    "1h",
];

/// The job of [`FLAGS`] in TOML, writing its late elements to `late`.
fn toml_job(late: &Path) -> String {
    format!(
        r#"name = "tail numbers"
assigner = "sliding:1h:5min"
aggregate = "sum"
strategy = "sliced"
allowed_lateness = "1h"
watermarks = {{ type = "bounded", max_out_of_orderness = "5min" }}

[io]
input = ["data/nycflights13_tailnum_tiny.csv"]
late_output = "{}"
"#,
        late.display()
    )
}

/// The job of [`FLAGS`] in JSON, in the conformance cases' spelling: tagged objects and ms.
fn json_job(late: &Path) -> String {
    format!(
        r#"{{
  "assigner": {{"type": "sliding", "size": 3600000, "slide": 300000}},
  "aggregate": "sum",
  "strategy": "sliced",
  "allowed_lateness": 3600000,
  "late_side_output": true,
  "watermarks": {{"type": "bounded", "max_out_of_orderness": 300000}},
  "io": {{"input": ["data/nycflights13_tailnum_tiny.csv"], "late_output": "{}"}}
}}
"#,
        late.display()
    )
}

/// A fresh temporary directory for one test.
fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("windowctl-job-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `windowctl run` with `args`, which must succeed.
fn succeeds(args: &[&str]) -> Output {
    let o = windowctl(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    o
}

/// `windowctl run` with `args`, which must fail; its stderr.
fn fails(args: &[&str]) -> String {
    let o = windowctl(args);
    assert!(!o.status.success(), "{args:?} was accepted: {}", stdout(&o));
    stderr(&o)
}

#[test]
fn a_toml_and_a_json_job_file_give_the_output_of_the_same_flags_byte_for_byte() {
    let dir = temp_dir("same");
    let flags_late = dir.join("flags.late.csv");
    let mut flags = FLAGS.to_vec();
    flags.extend(["--late-output", flags_late.to_str().unwrap()]);
    let by_flags = succeeds(&flags);
    assert!(
        stderr(&by_flags).contains("watermark delay 300000 ms"),
        "{}",
        stderr(&by_flags)
    );
    let late_rows = std::fs::read(&flags_late).unwrap();
    assert!(late_rows.len() > 100, "the job has late elements");

    for (name, text) in [
        ("job.toml", toml_job(&dir.join("toml.late.csv"))),
        ("job.json", json_job(&dir.join("json.late.csv"))),
    ] {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        let by_file = succeeds(&["--job", file.to_str().unwrap()]);
        assert!(by_file.stdout == by_flags.stdout, "{name}: other results");
        let late = dir.join(name.replace("job.", "") + ".late.csv");
        assert!(
            std::fs::read(&late).unwrap() == late_rows,
            "{name}: other late rows"
        );
        // The summary is the same but for the timing and memory lines.
        let summary = |o: &Output| -> Vec<String> {
            stderr(o)
                .lines()
                .filter(|l| !l.contains(" events/s") && !l.contains("peak memory"))
                .map(str::to_owned)
                .collect()
        };
        assert_eq!(summary(&by_file), summary(&by_flags), "{name}");
    }
}

#[test]
fn a_flag_given_overrides_the_file_and_the_flags_not_given_keep_its_values() {
    let dir = temp_dir("override");
    let file_late = dir.join("file.late.csv");
    let file = dir.join("job.toml");
    std::fs::write(&file, toml_job(&file_late)).unwrap();
    let job = file.to_str().unwrap();

    // --agg and --late-output replace the file's; window, strategy, lateness, watermarks and
    // input stay the file's (not the flags' defaults: the default job would read the bundled
    // data with mean over native windows).
    let flag_late = dir.join("flag.late.csv");
    let flag_late = flag_late.to_str().unwrap();
    let overridden = succeeds(&["--job", job, "--agg", "max", "--late-output", flag_late]);
    let flags_late = dir.join("flags.late.csv");
    let mut flags: Vec<&str> = FLAGS
        .iter()
        .map(|f| if *f == "sum" { "max" } else { f })
        .collect();
    flags.extend(["--late-output", flags_late.to_str().unwrap()]);
    let by_flags = succeeds(&flags);
    assert!(overridden.stdout == by_flags.stdout, "other results");
    assert!(Path::new(flag_late).exists());
    assert!(!file_late.exists(), "the file's late output was written");

    // A flag given with its default value is given too: --strategy native overrides sliced.
    let native = succeeds(&["--job", job, "--strategy", "native"]);
    assert!(
        !stderr(&native).contains("slices created"),
        "{}",
        stderr(&native)
    );
    // A list flag replaces the file's list, and --out-of-orderness the file's delay.
    let quakes = succeeds(&[
        "--job",
        job,
        "--input",
        "data/usgs_quakes_tiny.csv",
        "--out-of-orderness",
        "1d",
    ]);
    let err = stderr(&quakes);
    assert!(
        err.contains("data/usgs_quakes_tiny.csv: 1707 events read")
            && err.contains("watermark delay 86400000 ms"),
        "{err}"
    );
}

#[test]
fn a_job_file_that_is_not_a_job_is_refused_naming_the_file_and_the_key() {
    let typo = write_temp("typo.toml", "assigner = \"global\"\naggregat = \"sum\"\n");
    let err = fails(&["--job", typo.to_str().unwrap()]);
    assert!(
        err.contains(typo.to_str().unwrap()) && err.contains("unknown field `aggregat`"),
        "{err}"
    );

    let toml_duration = write_temp(
        "duration.toml",
        "assigner = \"tumbling:1h\"\naggregate = \"sum\"\nallowed_lateness = \"10x\"\n",
    );
    let err = fails(&["--job", toml_duration.to_str().unwrap()]);
    assert!(
        err.contains(toml_duration.to_str().unwrap())
            && err.contains("allowed_lateness = \"10x\"")
            && err.contains("unknown unit \"x\""),
        "{err}"
    );

    // JSON's parser names only the value and its position; the key there is named.
    let json_duration = write_temp(
        "duration.json",
        "{\n  \"assigner\": \"tumbling:1h\",\n  \"aggregate\": \"sum\",\n  \"watermarks\": {\"type\": \"bounded\", \"max_out_of_orderness\": \"6 hours\"}\n}\n",
    );
    let err = fails(&["--job", json_duration.to_str().unwrap()]);
    assert!(
        err.contains(&format!(
            "{}: watermarks: invalid duration \"6 hours\"",
            json_duration.display()
        )),
        "{err}"
    );
    let json_lateness = write_temp(
        "lateness.json",
        r#"{"assigner": "tumbling:1h", "aggregate": "sum", "allowed_lateness": "1 hour"}"#,
    );
    let err = fails(&["--job", json_lateness.to_str().unwrap()]);
    assert!(
        err.contains(&format!(
            "{}: allowed_lateness: invalid duration \"1 hour\"",
            json_lateness.display()
        )),
        "{err}"
    );

    for (name, aggregate) in [("list.toml", "list"), ("elements.toml", "elements")] {
        let file = write_temp(
            name,
            &format!("assigner = \"tumbling:1h\"\naggregate = \"{aggregate}\"\n"),
        );
        let err = fails(&["--job", file.to_str().unwrap()]);
        assert!(
            err.contains(&format!("{}: aggregate: ", file.display()))
                && err.contains(&format!("got '{aggregate}'"))
                && err.contains("numeric aggregates only"),
            "{err}"
        );
    }
}

#[test]
fn a_missing_or_unnamed_job_file_is_named() {
    let missing = std::env::temp_dir().join("windowctl-no-such-dir/job.toml");
    let err = fails(&["--job", missing.to_str().unwrap()]);
    assert!(
        err.contains(&format!("--job {}: ", missing.display())),
        "{err}"
    );
    let yaml = write_temp("job.yaml", "assigner: global\n");
    let err = fails(&["--job", yaml.to_str().unwrap()]);
    assert!(
        err.contains(yaml.to_str().unwrap()) && err.contains(".toml") && err.contains(".json"),
        "{err}"
    );
}

#[test]
fn a_job_file_is_validated_as_the_flags_are_naming_the_file_and_the_keys() {
    // Inputs and outputs in a temporary directory: a check that failed would write there.
    let data = write_temp("events.csv", "event_time_ms,key,value\n1,a,1\n");
    let data = data.to_str().unwrap();
    let dead_letter = data.replace("events.csv", "dead.csv");
    let head = "assigner = \"tumbling:1h\"\naggregate = \"sum\"\n";
    let input = format!("[io]\ninput = [\"{data}\"]\n");
    let cases = [
        (
            "dead.toml",
            format!("{head}{input}dead_letter = \"{dead_letter}\"\n"),
            "io.dead_letter needs io.on_error skip",
        ),
        (
            "side.toml",
            format!("{head}late_side_output = true\n{input}"),
            "late_side_output = true needs a file for the late elements",
        ),
        (
            "explicit.toml",
            format!("{head}watermarks = {{ type = \"explicit\" }}\n{input}"),
            "watermarks: explicit watermarks come as markers in the input",
        ),
        (
            "processing.toml",
            format!("{head}time = \"processing\"\nwatermarks = {{ type = \"bounded\", max_out_of_orderness = \"1h\" }}\n{input}"),
            "watermarks.max_out_of_orderness delays the event-time watermark; with time processing",
        ),
        (
            "over.toml",
            format!("{head}{input}output = \"{data}\"\n"),
            &format!("io.output {data} is also an input"),
        ),
        (
            "zero.toml",
            "assigner = \"tumbling:0s\"\naggregate = \"sum\"\n".to_owned(),
            "assigner: window size must be positive",
        ),
    ];
    for (name, text, message) in cases {
        let file = write_temp(name, &text);
        let err = fails(&["--job", file.to_str().unwrap()]);
        assert!(
            err.contains(&format!("{}: {message}", file.display())),
            "{name}: {err}"
        );
    }
    // A flag that fixes the file's setting is the one the error would name.
    let dead = write_temp(
        "dead_fixed.toml",
        &format!("{head}{input}dead_letter = \"{dead_letter}\"\n"),
    );
    let err = fails(&["--job", dead.to_str().unwrap(), "--on-error", "fail"]);
    assert!(
        err.contains(&format!(
            "{}: io.dead_letter needs --on-error skip",
            dead.display()
        )),
        "{err}"
    );
    // A strategy given as a flag that does not fit the file's window: the flag is named first,
    // the file after it; from the file, the file is named first.
    let tumbling = write_temp("tumbling.toml", &format!("{head}{input}"));
    let err = fails(&["--job", tumbling.to_str().unwrap(), "--strategy", "sliced"]);
    assert!(
        err.contains(&format!(
            "invalid strategy 'sliced': key windows and sliced windows apply to sliding windows only (--strategy, with the job of {})",
            tumbling.display()
        )),
        "{err}"
    );
    let sliced = write_temp(
        "sliced.toml",
        &format!("{head}strategy = \"sliced\"\n{input}"),
    );
    let err = fails(&["--job", sliced.to_str().unwrap()]);
    assert!(
        err.contains(&format!("{}: invalid strategy 'sliced'", sliced.display())),
        "{err}"
    );
}

#[test]
fn the_readmes_job_file_is_the_readmes_flags() {
    // docs/jobs/quakes.toml stands for the README's earthquake job; its late output goes to
    // late.csv in the working directory, so both runs write to a temporary one.
    let dir = std::env::temp_dir().join(format!("windowctl-readme-job-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let job = common::repo().join("docs/jobs/quakes.toml");
    let data = common::repo().join("data/usgs_quakes_tiny.csv");
    let run = |args: &[&str]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_windowctl"))
            .current_dir(&dir)
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let late = std::fs::read_to_string(dir.join("late.csv")).unwrap();
        (stdout(&o), late)
    };
    // The file names its input relative to the repository: run it from there, by a copy.
    let text = std::fs::read_to_string(&job)
        .unwrap()
        .replace("data/usgs_quakes_tiny.csv", data.to_str().unwrap());
    let copy = dir.join("quakes.toml");
    std::fs::write(&copy, text).unwrap();
    let from_file = run(&["run", "--no-progress", "--job", copy.to_str().unwrap()]);
    let from_flags = run(&[
        "run",
        "--no-progress",
        "--input",
        data.to_str().unwrap(),
        "--window",
        "tumbling:1d:-8h",
        "--agg",
        "count",
        "--out-of-orderness",
        "1d",
        "--allowed-lateness",
        "6h",
        "--late-output",
        "late.csv",
    ]);
    assert!(from_file.0.lines().count() > 10);
    assert_eq!(from_file, from_flags);
    let _ = std::fs::remove_dir_all(&dir);
}
