//! `timely_mem FILE ROUNDS WORKERS...`: the sliding 60 s / 500 ms `sliced` sum of the scaling
//! table on the timely runtime (`window-timely`) with the input already in memory and the
//! results counted, not formatted: what `--workers N` gains on the window work and the parsing
//! alone (both run on every worker), without reading the file or writing rows.
//!
//! The file is read into memory once; then each round runs the job once per worker count, in
//! turn (the first rotating), timed in this process from the start of the run to its end, with
//! the CPU time of all the process's threads over the run. Prints one line per worker count:
//! `workers N median_s S runs [..] results R events E busy B` (`B`: the median over the runs of
//! CPU seconds / wall seconds, the cores the run kept busy; `-` without `/proc`), and fails if
//! two worker counts give different result counts.

use std::io::Cursor;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use engine::core::{AnyWindow, Number, Timestamp, WindowOutput};
use engine::io::{
    ErrorPolicy, EventReader, FieldNames, InputError, InputErrorKind, InputFormat, KeyDictionary,
    KeyId, OnError,
};
use engine::job::{Computation, JobAggregate, JobResult, JobSpec, Strategy, WindowSpec};
use engine::keywindow::EmitMode;
use window_timely::{Describe, FinalSteps, JobParts, TimelyConfig, TimelyInput};

/// Window size and slide of the job, ms.
const SIZE: i64 = 60_000;
const SLIDE: i64 = 500;

/// The job: its spec, and a reader of CSV chunks with the bundled header.
struct Parts {
    spec: JobSpec,
}

impl JobParts for Parts {
    type Computation = Computation<KeyId>;

    fn computation(&self) -> Computation<KeyId> {
        engine::job::build(&self.spec).expect("the bench's job builds")
    }

    fn reader(&self, _input: usize, bytes: Vec<u8>) -> EventReader {
        EventReader::new(
            Cursor::new(bytes),
            "memory",
            InputFormat::Csv,
            FieldNames::default(),
        )
    }

    fn describe(&self) -> Describe {
        Box::new(|_, source, line, _| InputError {
            source_name: source.to_owned(),
            line,
            field: None,
            message: "element rejected".to_owned(),
            raw: Vec::new(),
            raw_cut: false,
            kind: InputErrorKind::Malformed,
        })
    }

    fn final_steps(&self) -> Option<FinalSteps> {
        Some(FinalSteps {
            stride: SLIDE,
            horizon: SIZE,
        })
    }
}

/// Counts what the job emits.
#[derive(Debug, Default)]
struct Count {
    results: u64,
}

impl WindowOutput<KeyId, AnyWindow, Number, JobResult> for Count {
    fn result(&mut self, _: &KeyId, _: &AnyWindow, _: JobResult, _: Timestamp) {
        self.results += 1;
    }

    fn late(&mut self, _: KeyId, _: Timestamp, _: Number, _: Timestamp) {}
}

/// The CPU seconds (user and system) of this process so far, all its threads: `utime` and
/// `stime` of `/proc/self/stat`, in Linux's `USER_HZ` (100 a second: the kernel's ABI fixes it).
/// `None` without `/proc`.
fn process_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command's name (in parentheses, may hold spaces) start at field 3
    // of proc(5); utime and stime are fields 14 and 15.
    let fields: Vec<&str> = stat.get(stat.rfind(')')? + 2..)?.split(' ').collect();
    let ticks = |i: usize| fields.get(i)?.parse::<u64>().ok();
    Some((ticks(11)? + ticks(12)?) as f64 / 100.0)
}

/// One run with `workers` workers over `bytes`: seconds, results, events, and the cores it
/// kept busy (CPU seconds / seconds).
fn run_once(bytes: &Arc<Vec<u8>>, workers: usize) -> Result<(f64, u64, u64, Option<f64>), String> {
    let mut spec = JobSpec::new(
        WindowSpec::Sliding {
            size: SIZE,
            slide: SLIDE,
            offset: 0,
        },
        JobAggregate::Numeric(engine::core::NumericAggregate::Sum),
    );
    spec.strategy = Strategy::Sliced(EmitMode::AllWindows);
    let input = TimelyInput {
        name: "memory".to_owned(),
        bytes: Box::new(Cursor::new(Arc::clone(bytes).to_vec())),
        csv_delimiter: Some(b','),
        csv_header: true,
        live: false,
    };
    let cpu_before = process_cpu();
    let started = Instant::now();
    let outcome = window_timely::run(
        TimelyConfig::new(workers, 0),
        Arc::new(Parts { spec }),
        vec![input],
        KeyDictionary::shared(),
        Count::default(),
        ErrorPolicy::new(OnError::Fail),
    )
    .map_err(|e| e.to_string())?;
    let seconds = started.elapsed().as_secs_f64();
    let busy = process_cpu()
        .zip(cpu_before)
        .map(|(after, before)| (after - before) / seconds);
    if let Some(f) = outcome.failure {
        return Err(f.to_string());
    }
    Ok((seconds, outcome.output.results, outcome.events, busy))
}

/// The median of some timings.
fn median(runs: &[f64]) -> f64 {
    let mut sorted = runs.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = (|| {
        let file = args.first()?;
        let rounds: usize = args.get(1)?.parse().ok().filter(|&r| r > 0)?;
        let workers: Option<Vec<usize>> = args[2..]
            .iter()
            .map(|w| w.parse().ok().filter(|&n| n > 0))
            .collect();
        Some((file.clone(), rounds, workers.filter(|w| !w.is_empty())?))
    })();
    let Some((file, rounds, workers)) = parsed else {
        eprintln!("usage: timely_mem FILE ROUNDS WORKERS...");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(&file) {
        Ok(b) => Arc::new(b),
        Err(e) => {
            eprintln!("timely_mem: {file}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut runs = vec![Vec::new(); workers.len()];
    let mut busy = vec![Vec::new(); workers.len()];
    let mut counts: Vec<Option<(u64, u64)>> = vec![None; workers.len()];
    // A warm-up of each, then the rounds.
    for round in 0..=rounds {
        for k in 0..workers.len() {
            let i = (round + k) % workers.len();
            match run_once(&bytes, workers[i]) {
                Ok((s, results, events, b)) => {
                    if round > 0 {
                        runs[i].push(s);
                        busy[i].extend(b);
                    }
                    counts[i] = Some((results, events));
                }
                Err(e) => {
                    eprintln!("timely_mem: {} workers: {e}", workers[i]);
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    if counts.iter().any(|c| *c != counts[0]) {
        eprintln!("timely_mem: the worker counts disagree: {counts:?}");
        return ExitCode::FAILURE;
    }
    for (i, w) in workers.iter().enumerate() {
        let (results, events) = counts[i].unwrap_or_default();
        let busy = if busy[i].is_empty() {
            "-".to_owned()
        } else {
            format!("{:.3}", median(&busy[i]))
        };
        println!(
            "workers {w} median_s {:.4} runs {:?} results {results} events {events} busy {busy}",
            median(&runs[i]),
            runs[i]
        );
    }
    ExitCode::SUCCESS
}
