//! `cargo xtask fuzz [--seconds N] [TARGET ...]`: runs the cargo-fuzz targets of `fuzz/` (every
//! one, or those named) for N seconds each (default 60) with libFuzzer, on the nightly
//! toolchain, and fails on the first crash, naming the input that caused it.
//!
//! cargo-fuzz is installed with `cargo install cargo-fuzz --locked` when missing (the machines
//! have a nightly toolchain and the package registry, nothing else). Each target starts from
//! its committed seed corpus, `fuzz/corpus/TARGET`, and keeps what it finds in
//! `target/fuzz-corpus/TARGET` (not committed); a crash leaves its input in
//! `fuzz/artifacts/TARGET/`, which becomes a regression test.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

/// Every target of `fuzz/Cargo.toml`.
pub const TARGETS: &[&str] = &[
    "csv_source",
    "jsonl_source",
    "job_grammar",
    "operator",
    "snapshot_decode",
    "dstream",
];

/// Seconds per target when `--seconds` is not given.
const DEFAULT_SECONDS: u64 = 60;

/// Runs `cargo xtask fuzz` with `args`.
///
/// # Errors
/// A bad argument, cargo-fuzz cannot be installed, a target does not build, or a target
/// crashes.
pub fn run_cli(args: &[String]) -> Result<()> {
    let mut seconds = DEFAULT_SECONDS;
    let mut targets: Vec<&str> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seconds" => {
                let v = it.next().context("--seconds needs a number")?;
                seconds = v
                    .parse()
                    .with_context(|| format!("--seconds {v}: not a number"))?;
            }
            t => match TARGETS.iter().find(|x| **x == t) {
                Some(known) => targets.push(known),
                None => bail!(
                    "unknown fuzz target or option {t:?}; targets: {}",
                    TARGETS.join(", ")
                ),
            },
        }
    }
    if targets.is_empty() {
        targets = TARGETS.to_vec();
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    ensure_cargo_fuzz()?;
    for target in targets {
        run_target(&root, target, seconds)?;
    }
    Ok(())
}

/// Installs cargo-fuzz unless `cargo +nightly fuzz` already runs.
fn ensure_cargo_fuzz() -> Result<()> {
    let present = Command::new("cargo")
        .args(["+nightly", "fuzz", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if present {
        return Ok(());
    }
    println!("== installing cargo-fuzz (cargo install cargo-fuzz --locked)");
    let status = Command::new("cargo")
        .args(["install", "cargo-fuzz", "--locked"])
        .status()
        .context("starting cargo install")?;
    if !status.success() {
        bail!("cargo install cargo-fuzz failed with {status}");
    }
    Ok(())
}

/// Fuzzes one target for `seconds`.
fn run_target(root: &Path, target: &str, seconds: u64) -> Result<()> {
    let work = root.join("target/fuzz-corpus").join(target);
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let seeds = root.join("fuzz/corpus").join(target);
    println!("== fuzz {target}: {seconds} s");
    let status = Command::new("cargo")
        .current_dir(root.join("fuzz"))
        .args(["+nightly", "fuzz", "run", target])
        .arg(&work)
        .arg(&seeds)
        .arg("--")
        .arg(format!("-max_total_time={seconds}"))
        .arg("-timeout=10")
        .arg("-rss_limit_mb=4096")
        .status()
        .context("starting cargo fuzz")?;
    if !status.success() {
        bail!(
            "fuzz target {target} failed ({status}): the input is in fuzz/artifacts/{target}/; \
             make it a regression test"
        );
    }
    Ok(())
}
