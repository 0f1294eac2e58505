//! The command-line grammar of `windowctl run` and the input options it shares with
//! `windowctl dstream`, as clap structs: what each flag means and its default, nothing more.
//! Turning the flags (and a job file) into a job is [`crate::plan`]'s work.

use std::path::PathBuf;

use clap::Args;
use engine::io::{Delimiter, FieldNames, InputFormat, OnError, OutputFormat, TimeUnit};
use engine::job::{EvictorSpec, Strategy, TriggerSpec, WindowSpec};

/// The options describing how input records read: their format and the names of the three
/// fields. Flattened into both `windowctl run` and `windowctl dstream`.
#[derive(Args, Debug, Clone)]
pub(crate) struct InputArgs {
    /// Input format. Default: jsonl for `.jsonl`/`.json` files, else csv.
    #[arg(long, value_name = "csv|jsonl")]
    pub(crate) format: Option<InputFormat>,

    /// CSV input without a header line: every line is data, and --time-field, --key-field and
    /// --value-field are column numbers counted from 1, as `cut -f` and awk's $1 count (default
    /// 1, 2 and 3). Without it a field given as a number is the header column of that name, or
    /// else the column at that position.
    #[arg(long)]
    pub(crate) no_header: bool,

    /// Field holding the event time: a number of --time-unit since the epoch, or an RFC 3339
    /// date-time with an offset (2013-01-01T05:15:00Z, 2013-01-01T06:15:00.5+01:00); a name,
    /// or a column number from 1. Default: event_time_ms (with --no-header: 1).
    #[arg(long, value_name = "NAME|N")]
    pub(crate) time_field: Option<String>,

    /// Unit of numeric timestamps: s, ms, us or ns since the epoch, converted to the engine's
    /// milliseconds (a finer instant is floored to its millisecond); in s a decimal fraction
    /// is read too (1357016400.5). RFC 3339 text is read in any unit.
    #[arg(long, default_value = "ms", value_name = "s|ms|us|ns")]
    pub(crate) time_unit: TimeUnit,

    /// CSV field separator: one ASCII character (`;`, `|`), or `tab`. Results are written with
    /// commas whatever it is.
    #[arg(long, default_value = ",", value_name = "C")]
    pub(crate) delimiter: Delimiter,

    /// Field holding the key; several, comma-separated (carrier,dest), key by the tuple (Flink's
    /// keyBy on several fields), with one output column per field, named by it (by key1, key2
    /// ... for column numbers). Default: key (with --no-header: 2).
    #[arg(long, value_name = "NAME|N[,...]")]
    pub(crate) key_field: Option<String>,

    /// Field holding the numeric value; not needed by --agg count (unless the window, trigger
    /// or evictor reads values). Default: value (with --no-header: 3).
    #[arg(long, value_name = "NAME|N")]
    pub(crate) value_field: Option<String>,
}

impl InputArgs {
    /// The three field names as the readers take them, each defaulting to the bundled data's
    /// (to 1, 2 and 3 with `--no-header`).
    pub(crate) fn field_names(&self) -> FieldNames {
        let default = default_fields(self.no_header);
        FieldNames {
            time: self.time_field.clone().unwrap_or(default.time),
            key: self.key_field.clone().unwrap_or(default.key),
            value: self.value_field.clone().unwrap_or(default.value),
        }
    }
}

/// The fields of a job that names none: the bundled data's header, or columns 1, 2 and 3 of an
/// input without a header.
pub(crate) fn default_fields(no_header: bool) -> FieldNames {
    match no_header {
        false => FieldNames::default(),
        true => FieldNames {
            time: "1".to_owned(),
            key: "2".to_owned(),
            value: "3".to_owned(),
        },
    }
}

/// The options of `windowctl run`. The clap ids (the field names) are what
/// [`crate::resolve::Given`] records as given on the command line.
#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    /// Run the job a file describes (TOML for a .toml name, JSON for .json); each flag given on
    /// the command line overrides the file's value.
    ///
    /// The file has the fields of a job description (engine::job::JobSpec): assigner, trigger,
    /// evictor, aggregate, time, allowed_lateness, late_side_output, strategy, window_all,
    /// max_window_states, watermarks (type = "bounded", max_out_of_orderness, interval,
    /// idle_timeout) and io (input, socket, format, no_header, time_field, time_unit,
    /// delimiter, key_field, value_field, output, output_format, late_output, on_error,
    /// dead_letter); durations are ms or text with units, parts text as the flags take them. A
    /// flag given replaces the file's value (--input replaces its whole list); the flags not
    /// given keep it. Paths are relative to the working
    /// directory. A file without watermarks has no watermark delay, also on the bundled data;
    /// one without max_window_states has the default limit of --max-window-states.
    #[arg(long, value_name = "FILE")]
    pub(crate) job: Option<PathBuf>,

    /// Input file (`.gz` is decompressed) or `-` for stdin; repeat for several inputs, whose
    /// watermarks are combined (the minimum). Default: the bundled flights data.
    #[arg(long, value_name = "PATH|-")]
    pub(crate) input: Vec<String>,

    /// Read from a TCP server at HOST:PORT (like Flink's socketTextStream), e.g. one started with
    /// `nc -lk 7777`; repeatable. In CSV the header line is optional.
    #[arg(long, value_name = "HOST:PORT")]
    pub(crate) socket: Vec<String>,

    /// With several inputs: an input without elements for this long stops holding the watermark
    /// back until it produces again (Flink's withIdleness). The watermark never goes back.
    #[arg(long, allow_hyphen_values = true, value_name = "D")]
    pub(crate) idle_timeout: Option<String>,

    /// Window all elements together, ignoring the key (Flink's windowAll): the key field is not
    /// read (the input need not have one); results have an empty key.
    #[arg(long)]
    pub(crate) window_all: bool,

    /// The input format and field names.
    #[command(flatten)]
    pub(crate) input_args: InputArgs,

    /// Windows: tumbling:SIZE[:OFFSET], sliding:SIZE:SLIDE[:OFFSET], session:GAP, session:value
    /// (gap = each element's value in ms), global, global:end-of-stream, count:N (every N
    /// elements of a key) or count:N:M (the last N elements, every M). Durations take units ms,
    /// s, min, h, d (e.g. sliding:1h:5min, tumbling:1d:-8h).
    #[arg(long, default_value = "sliding:1h:5min", value_name = "SPEC")]
    pub(crate) window: WindowSpec,

    /// Aggregate per window: count, sum, min, max, mean; or several, comma-separated, each once
    /// (count,sum,max): one output column each, named after it, in place of `result`.
    #[arg(long, default_value = "mean", value_name = "AGG")]
    pub(crate) agg: String,

    /// Time domain of the windows: event (the time field) or processing (the wall clock when
    /// the element arrives).
    #[arg(long, default_value = "event", value_name = "event|processing")]
    pub(crate) time: String,

    /// Watermark delay for bounded out-of-orderness: watermark = max event time seen - D - 1 ms.
    /// D is a duration (`500ms`, `5s`, `6h`); a number without a unit is ms (`5` is 5 ms).
    /// Elements further behind are late. Default: 6h for the default job (no --input and no
    /// --socket), else 0; real data usually needs more (the bundled flights: 6h).
    #[arg(long, allow_hyphen_values = true, value_name = "D")]
    pub(crate) out_of_orderness: Option<String>,

    /// How often the watermark is emitted, in processing time; 0 (the default) emits it after
    /// every element, which makes runs over a file reproducible. Flink's default is 200ms.
    #[arg(
        long,
        allow_hyphen_values = true,
        default_value = "0",
        value_name = "D"
    )]
    pub(crate) watermark_interval: String,

    /// How long after its end a window still accepts late elements (and fires again for each).
    #[arg(
        long,
        allow_hyphen_values = true,
        default_value = "0",
        value_name = "D"
    )]
    pub(crate) allowed_lateness: String,

    /// Trigger replacing the window's default: default, event-time, processing-time, count:N,
    /// purging:TRIGGER, never, continuous:INTERVAL (in the job's time domain),
    /// continuous-event-time:INTERVAL, continuous-processing-time:INTERVAL,
    /// delta:THRESHOLD[:abs|diff].
    #[arg(long, default_value = "default", value_name = "SPEC")]
    pub(crate) trigger: TriggerSpec,

    /// How sliding windows are computed: auto (the default: sliced for sliding windows in event
    /// time with the default trigger, no evictor and count, sum, min, max or mean; native
    /// otherwise); native (Flink's operator: every window of every
    /// element, a result per non-empty window); keywindow (two windows per element, a result
    /// only where it changes, plus one result with `empty` = true when a key's window becomes
    /// empty; output gets an `empty` column); sliced (per-key partial aggregates of non-empty
    /// slices: the native output's rows (sums and means may differ in the last digits: partial
    /// sums are added in another order), at a cost that does not grow with size/slide; rows of
    /// one watermark step may come in another order, as across keys in Flink); sliced:changes
    /// (sliced, with the keywindow output; also sliced --emit changes). sliced:all is sliced.
    /// Every strategy takes an element behind the watermark as Flink does: late (dropped, or
    /// to --late-output) only once every window holding it is cleaned up; else into the
    /// windows that have not fired, and with --allowed-lateness fired windows fire again
    /// (keywindow and sliced:changes: the changes it makes to the results seen). See
    /// docs/keywindow.md and docs/sliced.md.
    #[arg(
        long,
        default_value = "auto",
        value_name = "auto|native|keywindow|sliced|sliced:changes"
    )]
    pub(crate) strategy: StrategyArg,

    /// Which results --strategy sliced emits: all (every non-empty window, as Flink) or changes
    /// (only windows whose contents differ from the key's previous window, and an empty result
    /// when its window empties: the keywindow output; an equal value from other contents is
    /// still emitted). `--strategy sliced --emit changes` is `--strategy sliced:changes`.
    #[arg(long, value_name = "all|changes")]
    pub(crate) emit: Option<EmitChoice>,

    /// Evictor: count:N[:after] (keep the last N elements), time:D[:after] (keep elements within D
    /// of the newest), delta:X[:abs|diff][:after] (drop elements whose delta to the last one is >=
    /// X). Runs before the aggregate unless `:after`; with an evictor windows keep their elements.
    #[arg(long, value_name = "SPEC")]
    pub(crate) evictor: Option<EvictorSpec>,

    /// Write late (dropped) elements to this file (CSV event_time_ms,key,value,watermark, or
    /// JSON lines for a .jsonl name); `-` is stdout, with the results in a file (--output).
    /// Without it late elements are only counted.
    #[arg(long, value_name = "PATH|-")]
    pub(crate) late_output: Option<PathBuf>,

    /// Write results to this file instead of stdout: JSON lines for a name ending in .jsonl,
    /// .ndjson or .json, else CSV (see --output-format); gzip-compressed when the name also
    /// ends in .gz (results.csv.gz).
    #[arg(long, value_name = "PATH")]
    pub(crate) output: Option<String>,

    /// Output format. Default: jsonl for a `.jsonl`/`.json` output file, else csv.
    #[arg(long, value_name = "csv|jsonl")]
    pub(crate) output_format: Option<OutputFormat>,

    /// What to do with a bad input line (malformed, missing field, bad number or timestamp):
    /// fail (stop with an error naming file, line and field) or skip (count it and go on).
    #[arg(long, default_value = "fail", value_name = "fail|skip")]
    pub(crate) on_error: OnError,

    /// With --on-error skip: append every skipped line to this CSV file
    /// (source,line,field,error,raw; raw is the line's bytes as read); `-` is stdout, with the
    /// results in a file (--output).
    #[arg(long, value_name = "PATH|-")]
    pub(crate) dead_letter: Option<PathBuf>,

    /// Stop with an error (exit 1) once the job holds more states than this, checked at every
    /// batch boundary (the native operator also refuses an element that would bring its window
    /// states over it): window states (native: one per key and window), key windows
    /// (keywindow) or slices (sliced), plus the elements held (kept by evictor, list and count
    /// windows; waiting in the reordering buffer for the watermark). The results written up
    /// to there stay. The key dictionary is held to as many distinct keys. A state takes
    /// roughly 100 bytes to 1 KB; the summary's peak state line gives an estimate.
    #[arg(long, default_value_t = DEFAULT_MAX_WINDOW_STATES, value_name = "N")]
    pub(crate) max_window_states: usize,

    /// Do not show a progress bar (it is shown only when stderr is a terminal).
    #[arg(long)]
    pub(crate) no_progress: bool,

    /// Run the job on N worker threads of timely dataflow (the window-timely crate): the input
    /// is cut into chunks of lines that the workers parse in parallel, keys are partitioned
    /// across the workers (Flink's parallel subtasks), and the watermark is the one of a single
    /// reader. The output is byte-identical for any N: the single-threaded runtime's rows, with
    /// the rows of one watermark step ordered by window end, then by where the key first
    /// appears in the input. Inputs: a file, .gz, stdin or a socket, or several (files merged
    /// in event time, a live one among them taken as it comes); --checkpoint-dir takes
    /// checkpoints per key group, which a run with any N resumes; see docs/scale-out.md. Without it the job runs on the single-threaded runtime.
    // A negative number is read as this flag's value (not as a flag), so that it is refused
    // naming --workers and the range.
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u16).range(1..=512))]
    pub(crate) workers: Option<u16>,

    /// Run the job on N processes of timely dataflow (a cluster; --workers threads in each,
    /// the same in every process), each started with the same job and its own --process; see
    /// docs/scale-out.md. Every process reads the whole input file and parses its workers'
    /// chunks; process 0 writes the output, late output and dead letters. No authentication or
    /// encryption: run a cluster on loopback or a trusted network only.
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u16).range(1..=512))]
    pub(crate) processes: Option<u16>,

    /// With --processes: this process's index, from 0 (its line of --hostfile, from the first).
    #[arg(long, value_name = "I", allow_negative_numbers = true,
          value_parser = clap::value_parser!(u16).range(0..=511))]
    pub(crate) process: Option<u16>,

    /// With --processes N: a file of N lines, one `host:port` per process in index order (as
    /// timely's own cluster option); blank lines and lines starting with `#` are skipped. Each
    /// process listens on its own line's address only.
    #[arg(long, value_name = "FILE")]
    pub(crate) hostfile: Option<PathBuf>,

    /// Take checkpoints in DIR (made if missing), and resume from its newest valid checkpoint
    /// when DIR holds one of the same job: outputs are cut back to their lengths at the
    /// checkpoint and inputs continue from their positions, so the outputs end byte for byte as
    /// an uninterrupted run's, however often the job was killed. Needs file inputs and a file
    /// --output (stdin, sockets and stdout cannot be replayed or cut back). SIGINT and SIGTERM
    /// take a last checkpoint before the job stops. A finished job's DIR says so on a rerun.
    /// With --processes, give it (and --checkpoint-interval) to every process: process 0 keeps
    /// the checkpoints and tells the others where to resume; theirs is not used.
    #[arg(long, value_name = "DIR")]
    pub(crate) checkpoint_dir: Option<PathBuf>,

    /// With --checkpoint-dir: processing time between two checkpoints (a duration: 10s,
    /// 500ms, 1min). Also taken at the end of the job.
    #[arg(long, default_value = "10s", value_name = "D")]
    pub(crate) checkpoint_interval: String,
}

/// `--max-window-states` when it is not given (also for a job file without
/// `max_window_states`).
pub(crate) const DEFAULT_MAX_WINDOW_STATES: usize = 5_000_000;

/// `--emit`: which results the sliced strategy emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum EmitChoice {
    /// Every non-empty window.
    All,
    /// Only windows whose contents differ from the key's previous window (and an empty result
    /// when it empties).
    Changes,
}

/// `--strategy` as given: the strategy, and whether the sliced output was spelled out
/// (`sliced:all`, `sliced:changes`), so that `--emit` can contradict it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct StrategyArg {
    /// The strategy named.
    pub(crate) strategy: Strategy,
    /// Whether the text named what sliced windows emit (it has a `:`).
    pub(crate) spelled_output: bool,
}

impl std::str::FromStr for StrategyArg {
    type Err = engine::job::SpecError;

    /// The strategy `s` names, and whether it spells out the sliced output.
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        Ok(Self {
            strategy: s.parse()?,
            spelled_output: s.contains(':'),
        })
    }
}
