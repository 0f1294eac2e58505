//! One job from a job file and the command line: the file's [`JobSpec`] (or, without one, the
//! defaults) with every flag given on the command line applied over it (every flag, defaults
//! included, when there is no file). This is the only place where flags become a job, so a job
//! given as flags and the same job given as a file are the same [`JobSpec`], validated by
//! [`crate::plan`] in one way.
//!
//! It also remembers where each setting came from ([`Origins`]), so that an error names the
//! flag (`--dead-letter`) or the file and its key (`job.toml: io.dead_letter`).

use std::collections::HashSet;
use std::path::Path;

use anyhow::{anyhow, bail, Result};
use clap::parser::ValueSource;
use clap::ArgMatches;
use engine::core::NumericAggregate;
use engine::job::duration::parse_duration;
use engine::job::{IoSpec, JobAggregate, JobSpec, Strategy, WatermarkSpec, WindowSpec};
use engine::keywindow::EmitMode;

use crate::args::{EmitChoice, RunArgs, StrategyArg, DEFAULT_MAX_WINDOW_STATES};

/// The flags given explicitly on the command line, by clap id (the [`RunArgs`] field name):
/// those whose value source is the command line, not a default.
#[derive(Debug, Default, Clone)]
pub(crate) struct Given(HashSet<String>);

impl Given {
    /// The flags of `matches` whose value came from the command line.
    pub(crate) fn from_matches(matches: &ArgMatches) -> Self {
        Self(
            matches
                .ids()
                .filter(|id| matches.value_source(id.as_str()) == Some(ValueSource::CommandLine))
                .map(|id| id.as_str().to_owned())
                .collect(),
        )
    }

    /// Whether the flag with clap id `id` was given.
    pub(crate) fn contains(&self, id: &str) -> bool {
        self.0.contains(id)
    }
}

/// A setting of a job that a flag can give: the flag's clap id (its spelling with `-` for
/// `_`) and the setting's key in a job file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Field {
    /// The clap id, the [`RunArgs`] field name (`late_output`).
    id: &'static str,
    /// The key in a job file (`io.late_output`).
    key: &'static str,
}

impl Field {
    /// The setting with clap id `id` and job-file key `key`.
    const fn new(id: &'static str, key: &'static str) -> Self {
        Self { id, key }
    }

    /// The flag as written on the command line (`--late-output`).
    fn flag(self) -> String {
        format!("--{}", self.id.replace('_', "-"))
    }
}

/// `--input` / `io.input`.
pub(crate) const INPUT: Field = Field::new("input", "io.input");
/// `--socket` / `io.socket`.
pub(crate) const SOCKET: Field = Field::new("socket", "io.socket");
/// `--format` / `io.format`.
pub(crate) const FORMAT: Field = Field::new("format", "io.format");
/// `--no-header` / `io.no_header`.
pub(crate) const NO_HEADER: Field = Field::new("no_header", "io.no_header");
/// `--time-field` / `io.time_field`.
pub(crate) const TIME_FIELD: Field = Field::new("time_field", "io.time_field");
/// `--time-unit` / `io.time_unit`.
pub(crate) const TIME_UNIT: Field = Field::new("time_unit", "io.time_unit");
/// `--delimiter` / `io.delimiter`.
pub(crate) const DELIMITER: Field = Field::new("delimiter", "io.delimiter");
/// `--key-field` / `io.key_field`.
pub(crate) const KEY_FIELD: Field = Field::new("key_field", "io.key_field");
/// `--value-field` / `io.value_field`.
pub(crate) const VALUE_FIELD: Field = Field::new("value_field", "io.value_field");
/// `--output` / `io.output`.
pub(crate) const OUTPUT: Field = Field::new("output", "io.output");
/// `--output-format` / `io.output_format`.
pub(crate) const OUTPUT_FORMAT: Field = Field::new("output_format", "io.output_format");
/// `--late-output` / `io.late_output`.
pub(crate) const LATE_OUTPUT: Field = Field::new("late_output", "io.late_output");
/// `--on-error` / `io.on_error`.
pub(crate) const ON_ERROR: Field = Field::new("on_error", "io.on_error");
/// `--dead-letter` / `io.dead_letter`.
pub(crate) const DEAD_LETTER: Field = Field::new("dead_letter", "io.dead_letter");
/// `--window` / `assigner`.
pub(crate) const WINDOW: Field = Field::new("window", "assigner");
/// `--agg` / `aggregate`.
pub(crate) const AGG: Field = Field::new("agg", "aggregate");
/// `--time` / `time`.
pub(crate) const TIME: Field = Field::new("time", "time");
/// `--out-of-orderness` / `watermarks.max_out_of_orderness`.
pub(crate) const OUT_OF_ORDERNESS: Field =
    Field::new("out_of_orderness", "watermarks.max_out_of_orderness");
/// `--watermark-interval` / `watermarks.interval`.
const WATERMARK_INTERVAL: Field = Field::new("watermark_interval", "watermarks.interval");
/// `--idle-timeout` / `watermarks.idle_timeout`.
pub(crate) const IDLE_TIMEOUT: Field = Field::new("idle_timeout", "watermarks.idle_timeout");
/// `--allowed-lateness` / `allowed_lateness`.
const ALLOWED_LATENESS: Field = Field::new("allowed_lateness", "allowed_lateness");
/// `--trigger` / `trigger`.
const TRIGGER: Field = Field::new("trigger", "trigger");
/// `--strategy` / `strategy`.
pub(crate) const STRATEGY: Field = Field::new("strategy", "strategy");
/// `--evictor` / `evictor`.
const EVICTOR: Field = Field::new("evictor", "evictor");
/// `--window-all` / `window_all`.
pub(crate) const WINDOW_ALL: Field = Field::new("window_all", "window_all");
/// `--max-window-states` / `max_window_states`.
const MAX_WINDOW_STATES: Field = Field::new("max_window_states", "max_window_states");

/// Every setting above, for the test that each names a flag of `windowctl run`.
#[cfg(test)]
pub(crate) const ALL_FIELDS: [Field; 26] = [
    INPUT,
    SOCKET,
    FORMAT,
    NO_HEADER,
    TIME_FIELD,
    TIME_UNIT,
    DELIMITER,
    KEY_FIELD,
    VALUE_FIELD,
    OUTPUT,
    OUTPUT_FORMAT,
    LATE_OUTPUT,
    ON_ERROR,
    DEAD_LETTER,
    WINDOW,
    AGG,
    TIME,
    OUT_OF_ORDERNESS,
    WATERMARK_INTERVAL,
    IDLE_TIMEOUT,
    ALLOWED_LATENESS,
    TRIGGER,
    STRATEGY,
    EVICTOR,
    WINDOW_ALL,
    MAX_WINDOW_STATES,
];

#[cfg(test)]
impl Field {
    /// The clap id.
    pub(crate) fn id(self) -> &'static str {
        self.id
    }
}

/// Where the settings of a job came from: a job file, and the flags given over it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Origins<'a> {
    /// The job file, if there is one.
    file: Option<&'a Path>,
    /// The flags given on the command line.
    given: &'a Given,
}

impl<'a> Origins<'a> {
    /// The settings of a job read from `file` (if any) with the flags `given` over it.
    pub(crate) fn new(file: Option<&'a Path>, given: &'a Given) -> Self {
        Self { file, given }
    }

    /// The job file, if there is one.
    pub(crate) fn file(self) -> Option<&'a Path> {
        self.file
    }

    /// Whether the setting comes from its flag: it was given, or there is no job file (then
    /// every flag applies, with its default where it was not given).
    pub(crate) fn flag_applies(self, field: Field) -> bool {
        self.file.is_none() || self.given.contains(field.id)
    }

    /// The setting's name in an error: its flag (`--late-output`) where it comes from the
    /// flag, else its key in the job file (`io.late_output`); see [`Origins::prefix`].
    pub(crate) fn name(self, field: Field) -> String {
        if self.flag_applies(field) {
            field.flag()
        } else {
            field.key.to_owned()
        }
    }

    /// `FILE: ` before an error about `fields` when one of them comes from the job file, so
    /// that the error names the file once and each setting by [`Origins::name`].
    pub(crate) fn prefix(self, fields: &[Field]) -> String {
        match self.file {
            Some(file) if fields.iter().any(|f| !self.flag_applies(*f)) => {
                format!("{}: ", file.display())
            }
            _ => String::new(),
        }
    }

    /// The setting as the subject of an error: `--late-output`, or `job.toml: io.late_output`.
    pub(crate) fn subject(self, field: Field) -> String {
        format!("{}{}", self.prefix(&[field]), self.name(field))
    }

    /// `FILE: ` before an error about the job as a whole, when there is a job file.
    pub(crate) fn file_prefix(self) -> String {
        self.file
            .map_or_else(String::new, |f| format!("{}: ", f.display()))
    }
}

/// Where the watermark delay came from, which decides its default and whether it may be
/// refused with processing time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DelayOrigin {
    /// `--out-of-orderness`.
    CommandLine,
    /// The job file's `watermarks` (no delay when it has none).
    JobFile,
    /// Neither: no delay, except on the bundled data (see [`crate::plan`]).
    Default,
}

/// A job as resolved from a job file and the command line, not yet validated.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    /// The job, its inputs and outputs as text.
    pub(crate) spec: JobSpec,
    /// Where the watermark delay in `spec.watermarks` came from.
    pub(crate) delay: DelayOrigin,
}

/// The job `file_spec` (read from a job file; `None` without one) describes, with the flags of
/// `args` applied over it as `origins` says.
///
/// # Errors
/// A flag's value that does not parse (a duration, `--agg`, `--time`, `--emit` against
/// `--strategy`), naming the flag.
pub(crate) fn resolve(
    file_spec: Option<JobSpec>,
    args: &RunArgs,
    origins: Origins<'_>,
) -> Result<Resolved> {
    let delay = match (&args.out_of_orderness, &file_spec) {
        (Some(_), _) => DelayOrigin::CommandLine,
        (None, Some(_)) => DelayOrigin::JobFile,
        (None, None) => DelayOrigin::Default,
    };
    let mut spec = match file_spec {
        Some(mut spec) => {
            // The guard against runaway window states stays on unless the file sets it.
            spec.max_window_states
                .get_or_insert(DEFAULT_MAX_WINDOW_STATES);
            spec
        }
        // Without a file every flag applies, with its default where it was not given, over
        // `JobSpec::new`'s defaults for what no flag sets (no name, no watermark delay).
        None => JobSpec::new(args.window, JobAggregate::Numeric(NumericAggregate::Mean)),
    };
    apply_computation(&mut spec, args, origins)?;
    apply_watermarks(&mut spec.watermarks, args, origins)?;
    apply_io(&mut spec.io, args, origins);
    Ok(Resolved { spec, delay })
}

/// Applies the flags of the computation: windows, aggregate, time, lateness, trigger, evictor,
/// strategy, `--window-all`, the limit on window states.
fn apply_computation(spec: &mut JobSpec, args: &RunArgs, o: Origins<'_>) -> Result<()> {
    if o.flag_applies(WINDOW) {
        spec.window = args.window;
    }
    if o.flag_applies(AGG) {
        spec.aggregate = args.agg.parse().map_err(|e| {
            if args.agg.contains(',') {
                // A list: what is wrong in it (a name twice, an unknown one).
                anyhow!("--agg: {e}")
            } else {
                anyhow!("--agg: {}", numeric_aggregates(&args.agg))
            }
        })?;
    }
    if o.flag_applies(TIME) {
        spec.time =
            engine::job::parse_time_domain(&args.time).map_err(|e| anyhow!("--time: {e}"))?;
    }
    if o.flag_applies(ALLOWED_LATENESS) {
        spec.allowed_lateness = duration(ALLOWED_LATENESS, &args.allowed_lateness)?;
    }
    if o.flag_applies(TRIGGER) {
        spec.trigger = args.trigger.clone();
    }
    if o.flag_applies(EVICTOR) {
        spec.evictor = args.evictor;
    }
    if o.flag_applies(STRATEGY) {
        spec.strategy = strategy_with_emit(args.strategy, args.emit)?;
    } else if args.emit.is_some() {
        // `--emit` over the file's strategy: it replaces what sliced windows emit.
        let strategy = match spec.strategy {
            Strategy::Sliced(_) => Strategy::Sliced(EmitMode::AllWindows),
            other => other,
        };
        let arg = StrategyArg {
            strategy,
            spelled_output: false,
        };
        spec.strategy = strategy_with_emit(arg, args.emit)?;
    }
    if args.strategy.strategy == Strategy::Auto && args.emit == Some(EmitChoice::Changes) {
        // What auto cannot give: say so by the flag the user gave, not by a strategy.
        let sliding = matches!(spec.window, WindowSpec::Sliding { .. });
        if !sliding || !spec.trigger.is_default_for(spec.time) || spec.evictor.is_some() {
            bail!(
                "--emit changes (the key-window output of sliced windows) needs sliding windows with the default trigger and no evictor; without --emit every window is emitted"
            );
        }
    }
    if o.flag_applies(WINDOW_ALL) {
        spec.window_all = args.window_all;
    }
    if o.flag_applies(MAX_WINDOW_STATES) {
        spec.max_window_states = Some(args.max_window_states);
    }
    // `auto` (the default): the strategy it stands for in this job, so that what follows
    // (summary, memory bounds, checkpoints) names the one that runs.
    spec.strategy = spec.auto_strategy();
    Ok(())
}

/// What `--agg` and a job file's `aggregate` accept, for an error about `text`.
pub(crate) fn numeric_aggregates(text: &str) -> String {
    format!(
        "expected count, sum, min, max or mean, or several of them (count,sum,max), got '{text}'"
    )
}

/// Applies `--out-of-orderness`, `--watermark-interval` and `--idle-timeout`. A delay replaces
/// a file's explicit watermarks by bounded ones; the interval and the idle timeout apply to
/// bounded watermarks only.
fn apply_watermarks(watermarks: &mut WatermarkSpec, args: &RunArgs, o: Origins<'_>) -> Result<()> {
    if let (true, Some(text)) = (o.flag_applies(OUT_OF_ORDERNESS), &args.out_of_orderness) {
        let delay = duration(OUT_OF_ORDERNESS, text)?;
        match watermarks {
            WatermarkSpec::Bounded {
                max_out_of_orderness,
                ..
            } => *max_out_of_orderness = delay,
            WatermarkSpec::Explicit => {
                *watermarks = WatermarkSpec::Bounded {
                    max_out_of_orderness: delay,
                    interval: 0,
                    idle_timeout: None,
                }
            }
        }
    }
    if let WatermarkSpec::Bounded {
        interval,
        idle_timeout,
        ..
    } = watermarks
    {
        if o.flag_applies(WATERMARK_INTERVAL) {
            *interval = duration(WATERMARK_INTERVAL, &args.watermark_interval)?;
        }
        if o.flag_applies(IDLE_TIMEOUT) {
            *idle_timeout = match &args.idle_timeout {
                Some(text) => Some(duration(IDLE_TIMEOUT, text)?),
                None => None,
            };
        }
    }
    Ok(())
}

/// Applies the flags of inputs and outputs, as the text a job file holds.
fn apply_io(io: &mut IoSpec, args: &RunArgs, o: Origins<'_>) {
    let text = |p: &Path| p.to_string_lossy().into_owned();
    let input = &args.input_args;
    let fields = [
        (TIME_FIELD, &mut io.time_field, &input.time_field),
        (KEY_FIELD, &mut io.key_field, &input.key_field),
        (VALUE_FIELD, &mut io.value_field, &input.value_field),
    ];
    for (field, setting, value) in fields {
        // Not given (and no file): the default, which depends on --no-header (crate::plan).
        if o.flag_applies(field) {
            setting.clone_from(value);
        }
    }
    if o.flag_applies(NO_HEADER) {
        io.no_header = input.no_header;
    }
    if o.flag_applies(INPUT) {
        io.input.clone_from(&args.input);
    }
    if o.flag_applies(SOCKET) {
        io.socket.clone_from(&args.socket);
    }
    if o.flag_applies(FORMAT) {
        io.format = input.format.map(|f| f.to_string());
    }
    if o.flag_applies(TIME_UNIT) {
        io.time_unit = Some(input.time_unit.to_string());
    }
    if o.flag_applies(DELIMITER) {
        io.delimiter = Some(input.delimiter.to_string());
    }
    if o.flag_applies(OUTPUT) {
        io.output.clone_from(&args.output);
    }
    if o.flag_applies(OUTPUT_FORMAT) {
        io.output_format = args.output_format.map(|f| f.to_string());
    }
    if o.flag_applies(LATE_OUTPUT) {
        io.late_output = args.late_output.as_deref().map(text);
    }
    if o.flag_applies(ON_ERROR) {
        io.on_error = Some(args.on_error.to_string());
    }
    if o.flag_applies(DEAD_LETTER) {
        io.dead_letter = args.dead_letter.as_deref().map(text);
    }
}

/// A duration flag's value in ms; an error naming the flag.
fn duration(field: Field, text: &str) -> Result<i64> {
    parse_duration(text).map_err(|e| anyhow!("{}: {e}", field.flag()))
}

/// Applies `--emit` to `--strategy`; an error where they contradict.
fn strategy_with_emit(arg: StrategyArg, emit: Option<EmitChoice>) -> Result<Strategy> {
    let strategy = arg.strategy;
    Ok(match (strategy, emit) {
        (s, None) => s,
        // Changes are emitted by sliced windows (or key windows) only.
        (Strategy::Auto, Some(EmitChoice::Changes)) => Strategy::Sliced(EmitMode::Changes),
        (Strategy::Auto, Some(EmitChoice::All)) => strategy,
        (Strategy::Sliced(EmitMode::AllWindows), Some(EmitChoice::Changes))
            if arg.spelled_output =>
        {
            bail!("--strategy sliced:all contradicts --emit changes; use --strategy sliced:changes")
        }
        (Strategy::Sliced(EmitMode::AllWindows), Some(EmitChoice::Changes)) => {
            Strategy::Sliced(EmitMode::Changes)
        }
        (Strategy::Sliced(EmitMode::AllWindows), Some(EmitChoice::All))
        | (Strategy::Native, Some(EmitChoice::All)) => strategy,
        (Strategy::Sliced(EmitMode::Changes) | Strategy::KeyWindow, Some(EmitChoice::Changes)) => {
            strategy
        }
        (Strategy::Native, Some(EmitChoice::Changes)) => bail!(
            "--emit changes needs --strategy sliced (sliding windows only); the native operator emits every window"
        ),
        (Strategy::KeyWindow, Some(EmitChoice::All)) => bail!(
            "--emit all does not apply to --strategy keywindow, which emits changes; use --strategy sliced for every window"
        ),
        (Strategy::Sliced(EmitMode::Changes), Some(EmitChoice::All)) => bail!(
            "--strategy sliced:changes contradicts --emit all; use --strategy sliced --emit all"
        ),
    })
}
