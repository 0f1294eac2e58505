//! The checkpoint overhead of `cargo xtask bench`: the default job with checkpoints every
//! second (`--checkpoint-dir`, `--checkpoint-interval 1s`) beside the same job without, both
//! writing their results to a file (a checkpointed job needs one), timed alternately as whole
//! processes. Issue 13's target: at most 10 % slower. The default job runs for less than a
//! second here, so at 1 s it takes only its first and last checkpoint; a second row at 100 ms
//! shows the cost of checkpoints taken while the job runs.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::e2e::median;

/// Both rows: intervals of 1 s and 100 ms.
pub(super) fn run(windowctl: &Path, dir: &Path, rounds: usize) -> Result<Value> {
    let rows = ["1s", "100ms"]
        .into_iter()
        .map(|interval| run_at(windowctl, dir, rounds, interval))
        .collect::<Result<Vec<_>>>()?;
    Ok(Value::Array(rows))
}

/// Runs `windowctl` (the release binary at `windowctl`) `rounds` times each way in `dir`, the
/// checkpointed runs every `interval`.
fn run_at(windowctl: &Path, dir: &Path, rounds: usize, interval: &str) -> Result<Value> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let checkpoints = dir.join("checkpoints");
    let once = |checkpointed: bool| -> Result<(f64, String)> {
        let mut cmd = Command::new(windowctl);
        cmd.arg("run").arg("--no-progress").arg("--output");
        if checkpointed {
            // A fresh directory each time: the job runs from the start, not "already finished".
            let _ = fs::remove_dir_all(&checkpoints);
            cmd.arg(dir.join("checkpointed.csv"))
                .arg("--checkpoint-dir")
                .arg(&checkpoints)
                .args(["--checkpoint-interval", interval]);
        } else {
            cmd.arg(dir.join("plain.csv"));
        }
        let started = Instant::now();
        let out = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .output()
            .context("starting windowctl")?;
        let seconds = started.elapsed().as_secs_f64();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if !out.status.success() {
            bail!("windowctl failed ({}): {stderr}", out.status);
        }
        Ok((seconds, stderr))
    };
    // Warm-up, and the checkpointed run's summary line.
    once(false)?;
    let (_, summary) = once(true)?;
    let report = summary
        .lines()
        .find(|l| l.contains("checkpoints taken"))
        .unwrap_or("")
        .to_owned();
    if fs::read(dir.join("plain.csv"))? != fs::read(dir.join("checkpointed.csv"))? {
        bail!("the checkpointed default job wrote other results than the plain one");
    }
    let (mut plain, mut checkpointed) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        for with in [round % 2 == 0, round % 2 == 1] {
            let (s, _) = once(with)?;
            if with {
                checkpointed.push(s);
            } else {
                plain.push(s);
            }
        }
    }
    let (p, c) = (median(&plain), median(&checkpointed));
    let ratio = c / p;
    println!(
        "\n== checkpoint overhead, default job, --checkpoint-interval {interval}: {c:.3} s vs \
         {p:.3} s without (medians of {rounds}): {ratio:.3}x (target at 1s <= 1.10: {}); {}",
        if ratio <= 1.10 { "met" } else { "not met" },
        report.trim_start_matches("windowctl: ")
    );
    Ok(json!({
        "job": "default job, results to a file",
        "interval": interval,
        "plain_runs": plain,
        "checkpointed_runs": checkpointed,
        "plain_seconds": p,
        "checkpointed_seconds": c,
        "ratio": ratio,
        "checkpoints": report,
    }))
}
