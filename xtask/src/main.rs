//! `cargo xtask <command>`: conformance, bench. See `cargo xtask help`.

use std::path::PathBuf;
use std::process::ExitCode;

const HELP: &str = "\
cargo xtask <command>

commands:
  conformance [DIR|FILE ...]  run Flink/Spark conformance cases (default: tests/conformance/*);
                              prints PASS/FAIL per case and 'N passed, M failed'
  bench [--quick] [FILTER]    run the criterion benchmarks in benches/, the in-memory table (events per
                              second per workload and strategy) and the end-to-end table (windowctl run
                              on files beside a bare parse-and-count program); saves JSON in target/bench/
        [--table-only] [--e2e-only] [--rounds N]
                              only the in-memory or the end-to-end table; end-to-end rounds (5, --quick 2)
  compare-strategies [INPUT] [WINDOW]
                              windowctl with each --strategy (native, keywindow, sliced, sliced:changes) on the flights data
                              (by tail number, sliding:1h:1min): time, windows, results, memory
  fuzz [--seconds N] [TARGET ...]
                              run the cargo-fuzz targets of fuzz/ (nightly; installs cargo-fuzz if
                              missing) for N seconds each (60); fails on a crash
  help                        this text
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("conformance") => {
            let paths: Vec<PathBuf> = args[1..].iter().map(PathBuf::from).collect();
            match xtask::conformance::run_cli(&paths) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::FAILURE,
                Err(e) => {
                    eprintln!("xtask conformance: {e:#}");
                    ExitCode::from(2)
                }
            }
        }
        Some("bench") => match xtask::bench::run_cli(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("xtask bench: {e:#}");
                ExitCode::FAILURE
            }
        },
        Some("compare-strategies") => match xtask::compare::run_cli(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("xtask compare-strategies: {e:#}");
                ExitCode::FAILURE
            }
        },
        Some("fuzz") => match xtask::fuzz::run_cli(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("xtask fuzz: {e:#}");
                ExitCode::FAILURE
            }
        },
        Some("help") | Some("--help") | Some("-h") | None => {
            print!("{HELP}");
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("unknown xtask command '{other}'\n\n{HELP}");
            ExitCode::from(2)
        }
    }
}
