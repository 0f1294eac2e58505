//! The conformance harness: run case files whose expected outputs came from real Flink and
//! real Spark, and compare.
//!
//! A case is one JSON file. Flink cases (`tests/conformance/flink`, format in that folder's
//! README) have `input.assigner`; Spark cases (`tests/conformance/spark`) have
//! `input.batchDurationMs`. The format is told from the content, never from the folder, so
//! `cargo xtask conformance SOME/DIR` runs case files it has never seen.
//!
//! Each case ends as [`Outcome::Pass`] or [`Outcome::Fail`] with the first difference.

mod flink;
mod spark;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde_json::Value;

/// The verdict on one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Our output matches the recorded one.
    Pass,
    /// The first difference found.
    Fail(String),
}

/// A case's name (file name without `.json`) and verdict.
#[derive(Debug, Clone)]
pub struct CaseReport {
    /// File name without `.json`.
    pub name: String,
    /// The verdict.
    pub outcome: Outcome,
}

/// The folders searched when no path is given, relative to the workspace root.
pub const DEFAULT_DIRS: [&str; 2] = ["tests/conformance/flink", "tests/conformance/spark"];

/// The workspace root (the parent of this crate's folder).
#[must_use]
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

/// Every `*.json` case file under `paths` (files are taken as they are, folders are searched
/// recursively), sorted by path. With no paths, the repository's own copies.
///
/// # Errors
/// A path that does not exist or cannot be read.
pub fn collect_cases(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let roots: Vec<PathBuf> = if paths.is_empty() {
        DEFAULT_DIRS
            .iter()
            .map(|d| workspace_root().join(d))
            .collect()
    } else {
        paths.to_vec()
    };
    let mut out = Vec::new();
    for root in roots {
        collect(&root, &mut out).with_context(|| format!("reading {}", root.display()))?;
    }
    out.sort();
    Ok(out)
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let meta = std::fs::metadata(path)?;
    if meta.is_file() {
        out.push(path.to_path_buf());
    } else {
        for entry in std::fs::read_dir(path)? {
            let p = entry?.path();
            if p.is_dir() {
                collect(&p, out)?;
            } else if p.extension().is_some_and(|e| e == "json") {
                out.push(p);
            }
        }
    }
    Ok(())
}

/// Runs one case file.
#[must_use]
pub fn run_case(path: &Path) -> CaseReport {
    let name = path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    );
    let outcome = match std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()))
    {
        Err(e) => Outcome::Fail(format!("cannot read case: {e}")),
        Ok(case) => run_value(&case),
    };
    CaseReport { name, outcome }
}

/// Runs a parsed case, telling Flink from Spark by content.
#[must_use]
pub fn run_value(case: &Value) -> Outcome {
    let input = &case["input"];
    if input.get("assigner").is_some() {
        flink::run(case)
    } else if input.get("batchDurationMs").is_some() {
        spark::run(case)
    } else {
        Outcome::Fail(
            "not a Flink case (input.assigner) nor a Spark case (input.batchDurationMs)".into(),
        )
    }
}

/// Runs every case under `paths`, prints one line per case and the totals; returns whether no
/// case failed.
///
/// # Errors
/// Unreadable paths.
pub fn run_cli(paths: &[PathBuf]) -> Result<bool> {
    let cases = collect_cases(paths)?;
    let (mut passed, mut failed) = (0, 0);
    for path in &cases {
        let r = run_case(path);
        match &r.outcome {
            Outcome::Pass => {
                passed += 1;
                println!("PASS {}", r.name);
            }
            Outcome::Fail(why) => {
                failed += 1;
                println!("FAIL {}: {why}", r.name);
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    Ok(failed == 0)
}
