//! What `windowctl run` will do, validated before anything is opened: the job of a job file
//! and the command line ([`crate::resolve`]) checked against what `windowctl` can run, with
//! its inputs, outputs and watermarks in the types the runtime takes.
//!
//! Every check runs on the resolved job, whichever way a setting was given, and names the flag
//! or the file and key the setting came from.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use engine::assigners::TimeDomain;
use engine::core::LateDataPolicy;
use engine::io::{
    find_bundled_data, same_file, Delimiter, FieldNames, FieldUse, InputFormat, InputSpec, KeyId,
    OnError, OutputFormat, TimeUnit,
};
use engine::job::{
    Computation, IoSpec, JobAggregate, JobSpec, SpecError, WatermarkSpec, WindowSpec,
};

use crate::args::RunArgs;
use crate::job_file;
use crate::resolve::{
    numeric_aggregates, resolve, DelayOrigin, Field, Given, Origins, Resolved, AGG, DEAD_LETTER,
    DELIMITER, FORMAT, IDLE_TIMEOUT, INPUT, KEY_FIELD, LATE_OUTPUT, ON_ERROR, OUTPUT,
    OUTPUT_FORMAT, OUT_OF_ORDERNESS, SOCKET, STRATEGY, TIME, TIME_UNIT, WINDOW, WINDOW_ALL,
};

/// Watermark delay of the default job, on the bundled data (see the crate doc): 6 h.
const BUNDLED_OUT_OF_ORDERNESS_MS: i64 = 6 * 3_600_000;

/// The whole `run` configuration after validation.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The inputs, each with its format.
    pub(crate) inputs: Vec<(InputSpec, InputFormat)>,
    /// The names of the time, key and value fields.
    pub(crate) fields: FieldNames,
    /// CSV inputs have no header: the fields are column numbers.
    pub(crate) no_header: bool,
    /// What the job reads of each record besides its time (no key for `--window-all`, no value
    /// needed for a count).
    pub(crate) reads: FieldUse,
    /// The unit of numeric timestamps.
    pub(crate) time_unit: TimeUnit,
    /// The CSV field separator.
    pub(crate) delimiter: Delimiter,
    /// The job: its computation, its watermarks resolved, late data to the side output exactly
    /// when there is a late output; its `io` is empty (the inputs and outputs are below).
    pub(crate) spec: JobSpec,
    /// Watermark delay in ms.
    pub(crate) out_of_orderness: i64,
    /// Watermark interval in ms of processing time (0: after every element).
    pub(crate) watermark_interval: i64,
    /// How long an input may be silent before it stops holding the watermark back.
    pub(crate) idle_timeout: Option<i64>,
    /// Where results go.
    pub(crate) outputs: Outputs,
}

/// Where a job writes, and what it does with bad input lines.
#[derive(Debug, Clone)]
pub(crate) struct Outputs {
    /// The results file; `None` or `-` for stdout.
    pub(crate) output: Option<String>,
    /// The results' format.
    pub(crate) output_format: OutputFormat,
    /// The late-elements file.
    pub(crate) late_output: Option<PathBuf>,
    /// Fail or skip on a bad input line.
    pub(crate) on_error: OnError,
    /// Where skipped lines go.
    pub(crate) dead_letter: Option<PathBuf>,
    /// The results file's setting, as a write error names it (`--output`, or
    /// `job.toml: io.output`).
    pub(crate) output_name: String,
    /// The late output's setting, as an error opening it names it (`--late-output`, or
    /// `job.toml: io.late_output`).
    pub(crate) late_output_name: String,
    /// The dead-letter file's setting, as an error opening it names it.
    pub(crate) dead_letter_name: String,
    /// A composite key's output columns, one per key field (empty: one `key` column).
    pub(crate) key_columns: Vec<String>,
}

/// The plan and the computation of `windowctl run` with `args`, of which `given` were given on
/// the command line: the job file's job (if `--job`) with those flags over it.
///
/// # Errors
/// A job file that cannot be read or is not a job, a flag that does not parse, or a job
/// `windowctl` cannot run (see [`validate`] and `engine::job::build`), naming the flag or
/// the file and key at fault.
pub(crate) fn plan(args: &RunArgs, given: &Given) -> Result<(Plan, Computation<KeyId>)> {
    let file_spec = args.job.as_deref().map(job_file::load).transpose()?;
    let origins = Origins::new(args.job.as_deref(), given);
    let resolved = resolve(file_spec, args, origins)?;
    let plan = validate(resolved, origins)?;
    let computation = engine::job::build(&plan.spec).map_err(|e| build_error(e, origins))?;
    Ok((plan, computation))
}

/// An error of `engine::job::build`, as the command line has always printed it; with a job
/// file, naming the file (and `assigner` for the window's parameters when they are the
/// file's).
fn build_error(e: SpecError, o: Origins<'_>) -> anyhow::Error {
    match (&e, o.file()) {
        (_, None) => anyhow!("{e}"),
        (SpecError::Assigner { .. }, Some(_)) if !o.flag_applies(WINDOW) => {
            anyhow!("{}: {e}", o.subject(WINDOW))
        }
        (SpecError::Assigner { .. }, Some(_)) => anyhow!("{e}"),
        // The strategy given as a flag does not fit the file's window, trigger or evictor.
        (
            SpecError::Syntax {
                what: "strategy", ..
            },
            Some(file),
        ) if o.flag_applies(STRATEGY) => {
            anyhow!("{e} (--strategy, with the job of {})", file.display())
        }
        (_, Some(_)) => anyhow!("{}{e}", o.file_prefix()),
    }
}

/// Checks a resolved job against what `windowctl` runs and turns it into a [`Plan`].
///
/// # Errors
/// Standard input twice; a non-numeric aggregate (`windowctl` prints numbers); end-of-stream
/// windows in processing time; an output over an input or over another output; a watermark
/// delay with processing time; a dead-letter file without `skip`; explicit watermarks
/// (`windowctl` reads events, not watermark markers); a zero idle timeout; late elements to a
/// side output without a file for them; a format or error policy that does not parse; fields
/// that do not fit the input (see [`fields::fields`]).
fn validate(resolved: Resolved, o: Origins<'_>) -> Result<Plan> {
    let Resolved { mut spec, delay } = resolved;
    let bundled = spec.io.input.is_empty() && spec.io.socket.is_empty();
    let inputs = inputs(&spec.io, bundled, o)?;
    if matches!(spec.aggregate, JobAggregate::List | JobAggregate::Elements) {
        bail!(
            "{}: {}; windowctl prints numeric aggregates only",
            o.subject(AGG),
            numeric_aggregates(&spec.aggregate.to_string())
        );
    }
    let processing = spec.time == TimeDomain::ProcessingTime;
    if processing && spec.window == WindowSpec::GlobalEndOfStream {
        bail!(
            "{}{} global:end-of-stream fires at the end of a bounded input, in event time; it never fires with {} processing",
            o.prefix(&[WINDOW, TIME]),
            o.name(WINDOW),
            o.name(TIME)
        );
    }
    if let (true, Some(key)) = (spec.window_all, &spec.io.key_field) {
        // Flink's windowAll has no key selector: a key field would be ignored.
        bail!(
            "{}{} {key}: {} puts every element under one key (Flink's windowAll) and reads no key field; give one of them",
            o.prefix(&[KEY_FIELD, WINDOW_ALL]),
            o.name(KEY_FIELD),
            o.name(WINDOW_ALL)
        );
    }
    let mut outputs = outputs(&spec.io, o)?;
    check_distinct_files(&outputs, &inputs, o)?;
    let fields = fields::fields(&spec, &inputs, outputs.late_output.is_some(), o)?;
    outputs.key_columns.clone_from(&fields.key_columns);
    let (out_of_orderness, watermark_interval, idle_timeout) =
        watermarks(&spec, delay, bundled, o)?;
    if outputs.dead_letter.is_some() && outputs.on_error != OnError::Skip {
        bail!(
            "{}{} needs {} skip (with fail, the first bad line stops the job)",
            o.prefix(&[DEAD_LETTER, ON_ERROR]),
            o.name(DEAD_LETTER),
            o.name(ON_ERROR)
        );
    }
    spec.late_data = match (&outputs.late_output, spec.late_data) {
        (Some(_), _) => LateDataPolicy::SideOutput,
        (None, LateDataPolicy::Drop) => LateDataPolicy::Drop,
        (None, _) => bail!(
            "{}late_side_output = true needs a file for the late elements: io.late_output or --late-output",
            o.file_prefix()
        ),
    };
    spec.watermarks = WatermarkSpec::Bounded {
        max_out_of_orderness: out_of_orderness,
        interval: watermark_interval,
        idle_timeout,
    };
    let (time_unit, delimiter) = time_unit_and_delimiter(&spec.io, &inputs, o)?;
    // The inputs and outputs are in the plan's fields now, in the types they are used in.
    spec.io = IoSpec::default();
    Ok(Plan {
        inputs,
        fields: fields.names,
        no_header: fields.no_header,
        reads: fields.reads,
        time_unit,
        delimiter,
        spec,
        out_of_orderness,
        watermark_interval,
        idle_timeout,
        outputs,
    })
}

/// Whether `addr` is HOST:PORT: a port of digits from 1 to 65535 after the last `:`, and a host
/// name (no space, slash, bracket or colon) or an IPv6 address in brackets before it.
fn is_host_port(addr: &str) -> bool {
    let Some((host, port)) = addr.rsplit_once(':') else {
        return false;
    };
    let port_ok =
        port.bytes().all(|b| b.is_ascii_digit()) && port.parse::<u16>().is_ok_and(|p| p != 0);
    let host_ok = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => v6.parse::<std::net::Ipv6Addr>().is_ok(),
        None => {
            !host.is_empty() && !host.contains(|c: char| c.is_whitespace() || "/\\[]:".contains(c))
        }
    };
    port_ok && host_ok
}

/// The inputs of `io` with their formats; the bundled data when `bundled` (no input and no
/// socket named).
fn inputs(io: &IoSpec, bundled: bool, o: Origins<'_>) -> Result<Vec<(InputSpec, InputFormat)>> {
    let mut specs: Vec<InputSpec> = io.input.iter().map(|p| InputSpec::parse(p)).collect();
    for addr in &io.socket {
        // HOST:PORT, as `TcpStream::connect` takes it (a port from 1 to 65535): anything else
        // is a usage error, not a failed connection.
        if !is_host_port(addr) {
            bail!(
                "{} {addr}: not HOST:PORT (a host name or address, then a port from 1 to \
                 65535, as 127.0.0.1:9999 or [::1]:9999)",
                o.subject(SOCKET)
            );
        }
        specs.push(InputSpec::Socket(addr.clone()));
    }
    if bundled {
        // Found from the current directory or the binary; an error names both places.
        specs.push(InputSpec::File(find_bundled_data()?));
    }
    if specs.iter().filter(|s| **s == InputSpec::Stdin).count() > 1 {
        bail!(
            "{} -: standard input can be read only once",
            o.subject(INPUT)
        );
    }
    let format = parsed::<InputFormat>(io.format.as_deref(), FORMAT, o)?;
    Ok(specs
        .into_iter()
        .map(|spec| {
            let format = format.unwrap_or(match &spec {
                InputSpec::File(p) => InputFormat::from_path(p),
                _ => InputFormat::Csv,
            });
            (spec, format)
        })
        .collect())
}

/// The time unit and the CSV delimiter of `io`; a delimiter other than the comma is refused
/// when no input is CSV (it would do nothing).
fn time_unit_and_delimiter(
    io: &IoSpec,
    inputs: &[(InputSpec, InputFormat)],
    o: Origins<'_>,
) -> Result<(TimeUnit, Delimiter)> {
    let time_unit = parsed::<TimeUnit>(io.time_unit.as_deref(), TIME_UNIT, o)?.unwrap_or_default();
    let delimiter = parsed::<Delimiter>(io.delimiter.as_deref(), DELIMITER, o)?.unwrap_or_default();
    if delimiter != Delimiter::COMMA && inputs.iter().all(|(_, f)| *f != InputFormat::Csv) {
        bail!(
            "{} {delimiter}: the delimiter separates CSV fields, and the input is JSON lines",
            o.subject(DELIMITER)
        );
    }
    Ok((time_unit, delimiter))
}

/// The outputs of `io`, the results' format defaulting to the output file's name.
fn outputs(io: &IoSpec, o: Origins<'_>) -> Result<Outputs> {
    let output_format = parsed::<OutputFormat>(io.output_format.as_deref(), OUTPUT_FORMAT, o)?;
    Ok(Outputs {
        output: io.output.clone(),
        output_format: output_format.unwrap_or(match &io.output {
            Some(p) => OutputFormat::from_path(p),
            None => OutputFormat::Csv,
        }),
        late_output: io.late_output.as_ref().map(PathBuf::from),
        on_error: parsed::<OnError>(io.on_error.as_deref(), ON_ERROR, o)?.unwrap_or_default(),
        dead_letter: io.dead_letter.as_ref().map(PathBuf::from),
        output_name: o.subject(OUTPUT),
        late_output_name: o.subject(LATE_OUTPUT),
        dead_letter_name: o.subject(DEAD_LETTER),
        key_columns: Vec::new(),
    })
}

/// `text` (a job file's value of `field`) parsed; an error naming the field.
fn parsed<T>(text: Option<&str>, field: Field, o: Origins<'_>) -> Result<Option<T>>
where
    T: std::str::FromStr<Err = String>,
{
    text.map(|t| t.parse().map_err(|e| anyhow!("{}: {e}", o.subject(field))))
        .transpose()
}

/// The watermark delay, interval and idle timeout of `spec`: the bundled data's delay when
/// none was given; refused with processing time when one was given (a job file's delay of 0
/// reads as none), and refused for explicit watermarks or a zero idle timeout.
fn watermarks(
    spec: &JobSpec,
    delay: DelayOrigin,
    bundled: bool,
    o: Origins<'_>,
) -> Result<(i64, i64, Option<i64>)> {
    let WatermarkSpec::Bounded {
        max_out_of_orderness,
        interval,
        idle_timeout,
    } = spec.watermarks
    else {
        bail!(
            "{}watermarks: explicit watermarks come as markers in the input, and windowctl reads events only; use type = \"bounded\" (or --out-of-orderness)",
            o.file_prefix()
        );
    };
    let given = match delay {
        DelayOrigin::CommandLine => true,
        DelayOrigin::JobFile => max_out_of_orderness != 0,
        DelayOrigin::Default => false,
    };
    if spec.time == TimeDomain::ProcessingTime && given {
        bail!(
            "{}{} delays the event-time watermark; with {} processing windows fire by the wall clock and it would do nothing",
            o.prefix(&[OUT_OF_ORDERNESS, TIME]),
            o.name(OUT_OF_ORDERNESS),
            o.name(TIME)
        );
    }
    let out_of_orderness = match delay {
        DelayOrigin::Default if bundled => BUNDLED_OUT_OF_ORDERNESS_MS,
        _ => max_out_of_orderness,
    };
    if idle_timeout == Some(0) {
        bail!(
            "{} must be positive (0 would mark every input idle at once)",
            o.subject(IDLE_TIMEOUT)
        );
    }
    Ok((out_of_orderness, interval, idle_timeout))
}

/// Refuses to write an output over an input or over another output: `--output data.csv
/// --input data.csv` would truncate the input before reading it, and two outputs in one place
/// (one file, or standard output: the results without `--output FILE`, and any output named
/// `-`) would mix two kinds of rows.
fn check_distinct_files(
    outputs: &Outputs,
    inputs: &[(InputSpec, InputFormat)],
    o: Origins<'_>,
) -> Result<()> {
    // Standard input redirected from a file (`< results.csv`) is that file: on Linux
    // /dev/stdin leads to it, and the same-file test compares device and inode; standard
    // output likewise (`>> data.csv`).
    let stdin = PathBuf::from("/dev/stdin");
    let stdout = PathBuf::from("/dev/stdout");
    let inputs: Vec<&PathBuf> = inputs
        .iter()
        .filter_map(|(spec, _)| match spec {
            InputSpec::File(f) => Some(f),
            InputSpec::Stdin => Some(&stdin),
            InputSpec::Socket(_) => None,
        })
        .collect();
    let place = |p: &Path| {
        if p == Path::new("-") {
            stdout.clone()
        } else {
            p.to_owned()
        }
    };
    let mut files: Vec<(Field, PathBuf)> = vec![(
        OUTPUT,
        place(Path::new(outputs.output.as_deref().unwrap_or("-"))),
    )];
    if let Some(p) = &outputs.late_output {
        files.push((LATE_OUTPUT, place(p)));
    }
    if let Some(p) = &outputs.dead_letter {
        files.push((DEAD_LETTER, place(p)));
    }
    // How a message names an output's place: standard output as `-`, or the results when no
    // --output was given.
    let shown = |field: Field, path: &Path| match (path == stdout, field == OUTPUT) {
        (true, true) if outputs.output.is_none() => {
            "(none given: the results go to standard output)".to_owned()
        }
        (true, _) => "- (standard output)".to_owned(),
        (false, _) => path.display().to_string(),
    };
    for (i, (field, path)) in files.iter().enumerate() {
        if let Some(input) = inputs.iter().find(|input| same_file(input, path)) {
            input_conflict(o, *field, &shown(*field, path), input, path, &stdin)?;
        }
        let Some((other, p)) = files[..i]
            .iter()
            .find(|(_, p)| (*p == stdout && *path == stdout) || same_file(p, path))
        else {
            continue;
        };
        if *path == stdout && *p == stdout {
            let hint = if *other == OUTPUT {
                format!("give the results a file with {} FILE", o.name(OUTPUT))
            } else {
                "give one of them a file".to_owned()
            };
            bail!(
                "{}{} {} and {} {} both write to standard output, which would mix their rows; \
                 {hint}",
                o.prefix(&[*field, *other]),
                o.name(*other),
                shown(*other, p),
                o.name(*field),
                shown(*field, path),
            );
        }
        bail!(
            "{}{} {} is also given to {}: each output needs its own file",
            o.prefix(&[*field, *other]),
            o.name(*field),
            shown(*field, path),
            o.name(*other)
        );
    }
    Ok(())
}

/// The error for the output `field` (`shown` as the message shows it, at `path`) that is the
/// file of `input`.
fn input_conflict(
    o: Origins<'_>,
    field: Field,
    shown: &str,
    input: &Path,
    path: &Path,
    stdin: &Path,
) -> Result<()> {
    if input == stdin {
        bail!(
            "{} {shown}: standard input (--input -) is read from that file; writing it would \
             destroy the input",
            o.subject(field)
        );
    }
    if input == path {
        bail!(
            "{} {shown} is also an input: writing it would destroy the input",
            o.subject(field)
        );
    }
    bail!(
        "{} {shown} is also an input: it is the same file as the input {} (same device \
         and inode); writing it would destroy the input",
        o.subject(field),
        input.display()
    );
}

mod fields;

#[cfg(test)]
mod tests;
