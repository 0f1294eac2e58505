//! Unit tests of resolving a job file and the flags over it into one validated plan: the file
//! and the flags it stands for make the same plan, a flag given wins, the defaults without a
//! file are those `windowctl run` always had.

use std::path::Path;

use clap::{CommandFactory, FromArgMatches, Parser};
use engine::core::NumericAggregate;
use engine::io::{find_bundled_data, InputSpec};

use super::*;
use crate::args::DEFAULT_MAX_WINDOW_STATES;
use crate::resolve::ALL_FIELDS;

/// `windowctl run`'s options alone, to parse them as `main` does.
#[derive(Parser, Debug)]
struct Run {
    #[command(flatten)]
    args: RunArgs,
}

/// The plan of `windowctl run ARGV` over the TOML job `file` (read as if from `job.toml`).
fn planned(argv: &[&str], file: Option<&str>) -> Result<Plan> {
    let matches =
        Run::command().get_matches_from(std::iter::once("run").chain(argv.iter().copied()));
    let given = Given::from_matches(&matches);
    let args = Run::from_arg_matches(&matches).unwrap().args;
    let spec = file.map(|text| JobSpec::from_toml(text).unwrap());
    let origins = Origins::new(file.map(|_| Path::new("job.toml")), &given);
    validate(resolve(spec, &args, origins)?, origins)
}

/// The error of planning `windowctl run ARGV` over the TOML job `file`.
fn refused(argv: &[&str], file: Option<&str>) -> String {
    format!("{:#}", planned(argv, file).expect_err("refused"))
}

const TOML: &str = r#"
assigner = "sliding:1h:5min"
aggregate = "sum"
strategy = "sliced"
allowed_lateness = "1h"
watermarks = { type = "bounded", max_out_of_orderness = "5min", idle_timeout = "2s" }
[io]
input = ["events.csv", "more.jsonl"]
output = "out.jsonl"
late_output = "late.csv"
time_field = "t"
"#;

const FLAGS: [&str; 18] = [
    "--input",
    "events.csv",
    "--input",
    "more.jsonl",
    "--window",
    "sliding:1h:5min",
    "--agg",
    "sum",
    "--strategy",
    "sliced",
    "--allowed-lateness",
    "1h",
    "--out-of-orderness",
    "5min",
    "--idle-timeout",
    "2s",
    "--late-output",
    "late.csv",
];

#[test]
fn every_setting_names_a_flag_of_windowctl_run() {
    let command = Run::command();
    for field in ALL_FIELDS {
        assert!(
            command.get_arguments().any(|a| a.get_id() == field.id()),
            "{field:?}"
        );
    }
    // Every flag but --job and --no-progress (and --emit, which modifies --strategy) is one,
    // and the checkpoint flags, which say how to run a job, not what it computes (as Flink's
    // checkpointing is execution configuration, not part of the job graph), and --workers (the
    // runtime's parallelism, as Flink's parallelism is set apart from the job's windows), and
    // --processes, --process and --hostfile (where the runtime runs).
    let flags = command
        .get_arguments()
        .filter(|a| a.get_long().is_some())
        .count();
    assert_eq!(flags, ALL_FIELDS.len() + 9);
}

#[test]
fn a_job_file_and_the_flags_it_stands_for_make_the_same_plan() {
    let mut flags = FLAGS.to_vec();
    flags.extend(["--output", "out.jsonl", "--time-field", "t"]);
    let by_flags = planned(&flags, None).unwrap();
    let mut by_file = planned(&[], Some(TOML)).unwrap();
    // Only the names errors give the outputs differ: flags, or the file's keys.
    assert_eq!(by_file.outputs.late_output_name, "job.toml: io.late_output");
    assert_eq!(by_flags.outputs.late_output_name, "--late-output");
    assert_eq!(by_file.outputs.output_name, "job.toml: io.output");
    assert_eq!(by_flags.outputs.output_name, "--output");
    by_file.outputs.output_name = by_flags.outputs.output_name.clone();
    by_file.outputs.late_output_name = by_flags.outputs.late_output_name.clone();
    by_file.outputs.dead_letter_name = by_flags.outputs.dead_letter_name.clone();
    assert_eq!(format!("{by_file:?}"), format!("{by_flags:?}"));
    assert_eq!(by_file.out_of_orderness, 300_000);
    assert_eq!(by_file.idle_timeout, Some(2_000));
    assert_eq!(by_file.outputs.output_format, OutputFormat::Jsonl);
    assert_eq!(by_file.spec.late_data, LateDataPolicy::SideOutput);
    assert_eq!(by_file.inputs[1].1, InputFormat::Jsonl);
    assert_eq!(by_file.fields.time, "t");
}

#[test]
fn flags_given_override_the_file_and_the_others_keep_its_values() {
    let plan = planned(
        &[
            "--agg",
            "max",
            "--input",
            "other.csv",
            "--strategy",
            "native",
        ],
        Some(TOML),
    )
    .unwrap();
    assert_eq!(
        plan.spec.aggregate,
        JobAggregate::Numeric(NumericAggregate::Max)
    );
    assert_eq!(plan.inputs.len(), 1, "--input replaces the file's list");
    assert_eq!(plan.spec.strategy, engine::job::Strategy::Native);
    // Not given: the file's, not the flags' defaults.
    assert_eq!(plan.spec.window, "sliding:1h:5min".parse().unwrap());
    assert_eq!(plan.spec.allowed_lateness, 3_600_000);
    assert_eq!(plan.out_of_orderness, 300_000);
    assert_eq!(plan.fields.time, "t");
    assert_eq!(plan.outputs.output.as_deref(), Some("out.jsonl"));
    // --emit over the file's sliced strategy.
    let plan = planned(&["--emit", "changes"], Some(TOML)).unwrap();
    assert_eq!(plan.spec.strategy, "sliced:changes".parse().unwrap());
}

#[test]
fn without_a_job_file_the_defaults_are_the_default_jobs() {
    let plan = planned(&[], None).unwrap();
    assert_eq!(
        plan.inputs,
        [(
            InputSpec::File(find_bundled_data().unwrap()),
            InputFormat::Csv
        )]
    );
    assert_eq!(plan.out_of_orderness, 6 * 3_600_000);
    assert_eq!(plan.spec.window, "sliding:1h:5min".parse().unwrap());
    assert_eq!(
        plan.spec.aggregate,
        JobAggregate::Numeric(NumericAggregate::Mean)
    );
    assert_eq!(plan.spec.max_window_states, Some(DEFAULT_MAX_WINDOW_STATES));
    assert_eq!(plan.spec.late_data, LateDataPolicy::Drop);
    let plan = planned(&["--input", "events.csv"], None).unwrap();
    assert_eq!(plan.out_of_orderness, 0);
    // A job file says what it leaves out: no delay, also on the bundled data, and the limit on
    // window states stays on.
    let plan = planned(
        &[],
        Some("assigner = \"tumbling:1h\"\naggregate = \"count\"\n"),
    )
    .unwrap();
    assert_eq!(
        plan.inputs[0].0,
        InputSpec::File(find_bundled_data().unwrap())
    );
    assert_eq!(plan.out_of_orderness, 0);
    assert_eq!(plan.spec.max_window_states, Some(DEFAULT_MAX_WINDOW_STATES));
}

#[test]
fn errors_name_the_flag_or_the_file_and_its_key() {
    let dead = "assigner = \"global\"\naggregate = \"sum\"\n[io]\ndead_letter = \"d.csv\"\n";
    assert_eq!(
        refused(&[], Some(dead)),
        "job.toml: io.dead_letter needs io.on_error skip (with fail, the first bad line stops the job)"
    );
    assert_eq!(
        refused(&["--dead-letter", "d.csv"], None),
        "--dead-letter needs --on-error skip (with fail, the first bad line stops the job)"
    );
    assert_eq!(
        refused(
            &["--dead-letter", "e.csv"],
            Some("assigner = \"global\"\naggregate = \"sum\"\n")
        ),
        "job.toml: --dead-letter needs io.on_error skip (with fail, the first bad line stops the job)"
    );
    let processing = "assigner = \"tumbling:1s\"\naggregate = \"sum\"\ntime = \"processing\"\n";
    assert!(
        planned(&[], Some(processing)).is_ok(),
        "no delay in the file"
    );
    assert_eq!(
        refused(&["--out-of-orderness", "0"], Some(processing)),
        "job.toml: --out-of-orderness delays the event-time watermark; with time processing windows fire by the wall clock and it would do nothing"
    );
    assert_eq!(
        refused(&["--agg", "list"], None),
        "--agg: expected count, sum, min, max or mean, or several of them (count,sum,max), got 'list'; windowctl prints numeric aggregates only"
    );
    assert_eq!(
        refused(&["--agg", "median"], Some(processing)),
        "--agg: expected count, sum, min, max or mean, or several of them (count,sum,max), got 'median'"
    );
    assert_eq!(
        refused(&["--input", "-", "--input", "-"], None),
        "--input -: standard input can be read only once"
    );
    let stdin_twice = "assigner = \"global\"\naggregate = \"sum\"\n[io]\ninput = [\"-\", \"-\"]\n";
    assert_eq!(
        refused(&[], Some(stdin_twice)),
        "job.toml: io.input -: standard input can be read only once"
    );
}
