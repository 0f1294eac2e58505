//! `windowctl`: run Flink-style window jobs over CSV or JSON-lines events from a file, stdin or a
//! TCP socket, and print the window results.
//!
//! `windowctl run` with no options runs the default job on the bundled real data set (NYC
//! flights 2013 keyed by destination airport): the mean departure delay over a 1 h window
//! sliding every 5 min, in event time, with a 6 h watermark delay (the bundled profile shows
//! that 0.1 % of the flights arrive more than 5.3 h behind the latest event time seen).
//! `windowctl run --job FILE` runs the job a TOML or JSON file describes, with the flags given
//! on the command line over it.
//!
//! This file holds the command line's top level and how errors end the process; the modules:
//! [`args`] (the flags), [`job_file`] (reading a job file), [`resolve`] (a job file and the
//! flags into one job), [`plan`] (validating it), [`run`] (running it on the runtime), [`output`] (its output sink,
//! with result rows formatted on their own thread),
//! [`summary`] (the stderr summary), [`lost_peer`] (a cluster's peer that died), [`bound`] (the memory bound) and [`dstream`] (`windowctl dstream`).

mod args;
mod bound;
mod checkpoint;
mod dstream;
mod job_file;
mod lost_peer;
mod output;
mod plan;
mod progress;
mod resolve;
mod run;
mod scale;
mod scale_checkpoint;
mod stopped;
mod summary;

use std::io::ErrorKind;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::args::RunArgs;
use crate::resolve::Given;

/// The command line: a subcommand per kind of job.
#[derive(Parser, Debug)]
#[command(name = "windowctl", version, about = "Flink-style window jobs over event streams", long_about = None)]
struct Cli {
    /// What to run.
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
enum Command {
    /// Run a window job and print its results (CSV header: key,window_start,window_end,result).
    ///
    /// Without options: the bundled NYC flights 2013 data keyed by destination, mean departure
    /// delay (minutes) over 1 h windows sliding every 5 min, event time, 6 h watermark delay.
    Run(Box<RunArgs>),
    /// Run a Spark-Streaming-style DStream job: events cut into batches, windowed by batch
    /// (window and slide are multiples of the batch interval), per-batch results as CSV
    /// batch_time,key,result or JSON lines. Without options: daily flight counts per destination
    /// airport from hourly batches of the bundled data.
    Dstream(Box<crate::dstream::DstreamArgs>),
}

fn main() -> ExitCode {
    // Parsed in two steps to keep the matches: `windowctl run --job` needs to know which flags
    // were given on the command line, and which only have their default.
    let matches = match Cli::command().try_get_matches() {
        Ok(matches) => matches,
        Err(e) => return usage_error(&e),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e.format(&mut Cli::command())),
    };
    let outcome = match cli.command {
        Command::Run(args) => {
            let given = matches
                .subcommand_matches("run")
                .map(Given::from_matches)
                .unwrap_or_default();
            run::run(&args, &given)
        }
        Command::Dstream(args) => crate::dstream::run_dstream(&args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) if e.downcast_ref::<run::Usage>().is_some() => {
            eprintln!("windowctl: error: {e:#}");
            ExitCode::from(2)
        }
        Err(e) if e.downcast_ref::<run::Stopped>().is_some() => {
            eprintln!("windowctl: {e}");
            let signal = e.downcast_ref::<run::Stopped>().map_or(15, |s| s.signal);
            ExitCode::from(u8::try_from(128 + signal).unwrap_or(1))
        }
        Err(e) => {
            eprintln!("windowctl: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// A command line clap refused, said as every other error of windowctl is (`windowctl: error:
/// ...`, then clap's usage line and hint), exit 2; `--help` and `--version` print as clap
/// prints them, exit 0.
fn usage_error(e: &clap::Error) -> ExitCode {
    if !e.use_stderr() {
        // Help or version, on stdout.
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let text = e.render().to_string();
    match text.strip_prefix("error: ") {
        Some(rest) => eprint!("windowctl: error: {rest}"),
        // The help shown when a subcommand is missing, as clap words it.
        None => eprint!("{text}"),
    }
    ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
}

/// Whether the error is a closed stdout (`windowctl run | head`): then we stop quietly. The
/// CSV writer wraps I/O errors in `csv::Error` inside an `io::Error`, so look inside those too.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    /// Whether `io` is a broken pipe, also inside a CSV error.
    fn io_is_broken_pipe(io: &std::io::Error) -> bool {
        io.kind() == ErrorKind::BrokenPipe
            || io.get_ref().and_then(|inner| inner.downcast_ref::<csv::Error>()).is_some_and(|c| {
                matches!(c.kind(), csv::ErrorKind::Io(inner) if inner.kind() == ErrorKind::BrokenPipe)
            })
    }
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(io_is_broken_pipe)
            || c.downcast_ref::<csv::Error>().is_some_and(
                |c| matches!(c.kind(), csv::ErrorKind::Io(io) if io_is_broken_pipe(io)),
            )
    })
}
