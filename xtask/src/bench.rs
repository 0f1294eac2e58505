//! `cargo xtask bench`: runs the criterion benchmarks of the `benches` crate.
//!
//! `--quick` shortens measurement for smoke runs. Any other argument is passed to criterion as a
//! benchmark name filter.

use std::process::Command;

use anyhow::{bail, Context, Result};

/// Runs `cargo bench -p benches` with the given arguments.
///
/// # Errors
/// Cargo could not be started or the benchmarks failed.
pub fn run_cli(args: &[String]) -> Result<()> {
    let quick = args.iter().any(|a| a == "--quick");
    let filters: Vec<&String> = args.iter().filter(|a| *a != "--quick").collect();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(crate::conformance::workspace_root()).args([
        "bench",
        "--package",
        "benches",
        "--",
    ]);
    cmd.args(filters);
    if quick {
        cmd.args([
            "--warm-up-time",
            "1",
            "--measurement-time",
            "3",
            "--sample-size",
            "10",
        ]);
    }
    let status = cmd.status().context("starting cargo bench")?;
    if !status.success() {
        bail!("cargo bench failed with {status}");
    }
    Ok(())
}
