//! `cargo xtask compare-strategies`: runs `windowctl` on the bundled flights data keyed by tail
//! number, 1 h windows sliding every 1 min, once per strategy (native, keywindow, sliced,
//! sliced:changes), one after the other in one invocation, and prints windows created, results
//! emitted, peak memory and run time side by side.

use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

fn field(summary: &str, marker: &str) -> String {
    summary
        .lines()
        .find_map(|l| l.split(marker).nth(1))
        .and_then(|rest| rest.split([' ', ';', '(']).next())
        .unwrap_or("?")
        .to_owned()
}

/// Builds `windowctl` in release mode and runs the comparison.
///
/// # Errors
/// The build or a run failed.
pub fn run_cli(args: &[String]) -> Result<()> {
    let root = crate::conformance::workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(&cargo)
        .current_dir(&root)
        .args([
            "build",
            "--release",
            "--quiet",
            "--package",
            "windowctl",
            "--bin",
            "windowctl",
        ])
        .status()
        .context("building windowctl")?;
    if !status.success() {
        bail!("building windowctl failed");
    }
    let input = args.first().cloned().unwrap_or_else(|| {
        root.join("data/nycflights13_tailnum.csv.gz")
            .display()
            .to_string()
    });
    let window = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "sliding:1h:1min".to_owned());
    println!("input {input}, window {window}, count per key, watermark delay 6h");
    println!("| strategy | run time (s) | windows created | results emitted | late dropped | peak memory (KB) |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut native_time = None;
    let mut notes: Vec<String> = Vec::new();
    for strategy in ["native", "keywindow", "sliced", "sliced:changes"] {
        let started = Instant::now();
        let out = Command::new(root.join("target/release/windowctl"))
            .args([
                "run", "--input", &input, "--window", &window, "--agg", "count",
            ])
            .args([
                "--out-of-orderness",
                "6h",
                "--no-progress",
                "--strategy",
                strategy,
            ])
            .args(["--output", "/dev/null"])
            .output()
            .context("running windowctl")?;
        let seconds = started.elapsed().as_secs_f64();
        let summary = String::from_utf8_lossy(&out.stderr).into_owned();
        if !out.status.success() {
            bail!("windowctl --strategy {strategy} failed: {summary}");
        }
        println!(
            "| {strategy} | {seconds:.2} | {} | {} | {} | {} |",
            field(&summary, "window states created: "),
            field(&summary, "windows fired: "),
            field(&summary, "late elements dropped: "),
            field(&summary, "peak memory (resident): "),
        );
        if strategy == "native" {
            native_time = Some(seconds);
        } else if let Some(n) = native_time {
            notes.push(format!(
                "{strategy}: run time 1/{:.1} of native",
                n / seconds
            ));
        }
        notes.extend(
            summary
                .lines()
                .filter(|l| l.contains("would create"))
                .map(|l| format!("{strategy}: {}", l.trim_start_matches("windowctl: "))),
        );
    }
    println!();
    for n in notes {
        println!("{n}");
    }
    Ok(())
}
