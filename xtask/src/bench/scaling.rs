//! The scaling table of `cargo xtask bench`: `windowctl run --workers N` (the timely runtime,
//! `docs/scale-out.md`) for N = 1, 2, 4 ... up to the cores this machine has, beside the
//! single-threaded runtime, on the same files.
//!
//! Flink scales a keyed window job by running more parallel subtasks; issue #14 asks that
//! `--workers 2` be at least 1.6x faster than `--workers 1` on the sliding 60 s / 500 ms sliced
//! job over 2 M events on a 2-core machine, and that the scaling go on near-linearly with more
//! cores, so the table says how many cores it saw and goes as far as they do: a larger machine
//! shows more rows without a code change. `--workers 1` beside the single-threaded runtime is
//! the timely runtime's overhead (the target: within 10 %).
//!
//! Every variant of a job is a whole `windowctl run ... --output /dev/null --no-progress`
//! process, timed by wall clock after an untimed warm-up of each (which also checks that every
//! variant writes the same number of results); the variants run in turn in every round, the
//! first one rotating, so that a busy machine slows all alike. The table shows the median.
//! The inputs are the end-to-end table's generated workloads (`e2e_inputs`), 2 M events each
//! (200 k with `--quick`), in `target/bench/scaling/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::e2e::{self, median, Settings};

/// Events per generated input in a full run (the 2 M).
pub(super) const FULL_EVENTS: usize = 2_000_000;

/// The in-memory rows' job.
const IN_MEMORY: &str =
    "in memory: sliding 60 s / 500 ms sum, sliced (Flink workload), results counted";

/// One way to run a job: the single-threaded runtime (`None`) or `--workers N`.
type Variant = Option<usize>;

/// The worker counts of the table on a machine with `cores` cores: 1, 2, 4 ... up to `cores`,
/// and at least 1 and 2 (so that a 1-core machine still shows what a second worker costs).
fn worker_counts(cores: usize) -> Vec<usize> {
    let mut counts = vec![1, 2];
    let mut n = 4;
    while n <= cores {
        counts.push(n);
        n *= 2;
    }
    if cores > 2 && !counts.contains(&cores) {
        counts.push(cores);
    }
    counts
}

/// The jobs: name, input (index into the generated `[flink, zipf, jsonl]`) and arguments.
fn jobs() -> Vec<(&'static str, usize, &'static [&'static str])> {
    vec![
        (
            "sliding 60 s / 500 ms sum, sliced (Flink workload)",
            0,
            e2e::SLIDING_SLICED,
        ),
        (
            "sliding 60 s / 500 ms sum, sliced (100k Zipf keys)",
            1,
            e2e::SLIDING_SLICED,
        ),
        ("tumbling 60 s sum (Flink workload)", 0, e2e::TUMBLING),
    ]
}

/// The `windowctl run` command of a job's variant.
fn command(windowctl: &Path, input: &Path, args: &[&str], variant: Variant) -> Command {
    let mut cmd = Command::new(windowctl);
    cmd.arg("run")
        .arg("--input")
        .arg(input)
        .args(["--out-of-orderness", "0ms"])
        .args(args)
        .args(["--output", "/dev/null", "--no-progress"]);
    if let Some(n) = variant {
        cmd.args(["--workers", &n.to_string()]);
    }
    cmd
}

/// A variant's name in the table.
fn variant_name(variant: Variant) -> String {
    variant.map_or_else(
        || "single-threaded".to_owned(),
        |n| format!("--workers {n}"),
    )
}

/// One timed run: wall seconds, and the CPU seconds of all its threads (`None` without
/// `/proc`).
type Run = (f64, Option<f64>);

/// The cores a variant kept busy: the median over its runs of CPU seconds / wall seconds
/// (`None` if no run has a CPU time).
fn cores_busy(runs: &[Run]) -> Option<f64> {
    let ratios: Vec<f64> = runs
        .iter()
        .filter_map(|&(wall, cpu)| Some(cpu? / wall))
        .collect();
    (!ratios.is_empty()).then(|| median(&ratios))
}

/// Times every variant of one job: a warm-up of each (the result counts must agree), then
/// `rounds` rounds of all of them, the first rotating. Returns the runs per variant.
fn measure(
    windowctl: &Path,
    input: &Path,
    args: &[&str],
    variants: &[Variant],
    rounds: usize,
) -> Result<Vec<Vec<Run>>> {
    let mut results: Option<(Variant, Option<u64>)> = None;
    for &v in variants {
        let (_, out) = e2e::run_captured(&mut command(windowctl, input, args, v), "windowctl")?;
        let written = e2e::number_before(&String::from_utf8_lossy(&out.stderr), " results written");
        match results {
            Some((first, n)) if n != written => bail!(
                "{} wrote {n:?} results, {} {written:?}",
                variant_name(first),
                variant_name(v)
            ),
            Some(_) => {}
            None => results = Some((v, written)),
        }
    }
    let mut runs = vec![Vec::with_capacity(rounds); variants.len()];
    for round in 0..rounds {
        for k in 0..variants.len() {
            let i = (round + k) % variants.len();
            let mut cmd = command(windowctl, input, args, variants[i]);
            let (wall, cpu, _) = e2e::run_cpu(&mut cmd, "windowctl")?;
            runs[i].push((wall, cpu));
        }
    }
    Ok(runs)
}

/// The in-memory rows: `timely_mem` (`benches/src/bin/timely_mem.rs`) runs the sliding sliced
/// job on the timely runtime with the input in memory and the results counted, for each worker
/// count, and prints `workers N median_s S runs [..] results R events E` per count.
fn in_memory(
    timely_mem: &Path,
    input: &Path,
    counts: &[usize],
    rounds: usize,
) -> Result<Vec<Value>> {
    let mut cmd = Command::new(timely_mem);
    cmd.arg(input).arg(rounds.to_string());
    cmd.args(counts.iter().map(ToString::to_string));
    let (_, out) = e2e::run_captured(&mut cmd, "timely_mem")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut rows: Vec<(usize, f64, u64, Option<f64>)> = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let field = |name: &str| {
            let at = words.iter().position(|w| *w == name)?;
            words.get(at + 1).copied()
        };
        let parsed = (|| {
            let n = field("workers")?.parse().ok()?;
            let s = field("median_s")?.parse().ok()?;
            let e = field("events")?.parse().ok()?;
            let busy = field("busy").and_then(|b| b.parse().ok());
            Some((n, s, e, busy))
        })();
        rows.push(parsed.with_context(|| format!("timely_mem printed {line:?}"))?);
    }
    let one = rows
        .iter()
        .find(|r| r.0 == 1)
        .map(|r| r.1)
        .context("timely_mem gave no 1-worker row")?;
    Ok(rows
        .iter()
        .map(|&(n, s, events, busy)| {
            json!({
                "job": IN_MEMORY,
                "runtime": format!("--workers {n}"),
                "workers": n,
                "events": events,
                "seconds": s,
                "events_per_sec": events as f64 / s,
                "speedup_vs_workers_1": one / s,
                "speedup_vs_single_threaded": Value::Null,
                "cores_busy": busy,
            })
        })
        .collect())
}

/// The markdown table of the rows.
fn markdown(rows: &[Value]) -> String {
    let mut out = String::from(
        "| job | runtime | s | M events/s | vs --workers 1 | vs single-threaded | cores busy |\n\
         |---|---|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
        out.push_str(&format!(
            "| {} | {} | {:.3} | {:.2} | {:.2}x | {} | {} |\n",
            r["job"].as_str().unwrap_or("?"),
            r["runtime"].as_str().unwrap_or("?"),
            f("seconds"),
            f("events_per_sec") / 1e6,
            f("speedup_vs_workers_1"),
            // None for the in-memory rows, which have no single-threaded counterpart.
            r["speedup_vs_single_threaded"]
                .as_f64()
                .map_or_else(|| "-".to_owned(), |x| format!("{x:.2}x")),
            r["cores_busy"]
                .as_f64()
                .map_or_else(|| "-".to_owned(), |x| format!("{x:.2}")),
        ));
    }
    out
}

/// What the machine allows each job: `--workers 1` keeps `b` cores busy (its parser, worker and
/// writer threads run side by side), so on `cores` cores no worker count can run it more than
/// `cores / b` times faster, however well the workers scale. One line per job that has a
/// `--workers 1` row with a CPU time.
fn ceilings(rows: &[Value], cores: usize) -> Vec<String> {
    rows.iter()
        .filter(|r| r["workers"].as_u64() == Some(1))
        .filter_map(|r| {
            let busy = r["cores_busy"].as_f64().filter(|b| *b > 0.0)?;
            Some(format!(
                "{}: --workers 1 keeps {busy:.2} of {cores} cores busy, so no worker count can \
                 run it more than {:.2}x faster on this machine",
                r["job"].as_str().unwrap_or("?"),
                cores as f64 / busy
            ))
        })
        .collect()
}

/// Builds the programs, generates the inputs, runs every job that matches the filter in every
/// variant, prints the table and returns it as JSON (`Value::Null` if no job matches).
pub(super) fn run(root: &Path, out_dir: &Path, settings: &Settings) -> Result<Value> {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let counts = worker_counts(cores);
    let filter = settings.filter.as_deref().map(str::to_lowercase);
    let jobs: Vec<_> = jobs()
        .into_iter()
        .filter(|j| {
            filter
                .as_ref()
                .is_none_or(|f| j.0.to_lowercase().contains(f))
        })
        .collect();
    let memory = filter
        .as_ref()
        .is_none_or(|f| IN_MEMORY.to_lowercase().contains(f));
    if jobs.is_empty() && !memory {
        return Ok(Value::Null);
    }
    println!(
        "== scaling: windowctl run --workers {counts:?} beside the single-threaded runtime, \
         {cores} cores seen, {} rounds",
        settings.rounds
    );
    let programs = e2e::build(root)?;
    let inputs: [PathBuf; 3] = e2e::generate(&programs, &out_dir.join("scaling"), settings.events)?;
    let variants: Vec<Variant> = std::iter::once(None)
        .chain(counts.iter().map(|&n| Some(n)))
        .collect();
    let mut rows = Vec::new();
    for (name, input, args) in &jobs {
        let runs = measure(
            &programs.windowctl,
            &inputs[*input],
            args,
            &variants,
            settings.rounds,
        )
        .with_context(|| format!("the scaling job {name}"))?;
        let walls: Vec<Vec<f64>> = runs
            .iter()
            .map(|r| r.iter().map(|x| x.0).collect())
            .collect();
        let medians: Vec<f64> = walls.iter().map(|r| median(r)).collect();
        let (single, one) = (medians[0], medians[1]);
        for ((v, r), m) in variants.iter().zip(&runs).zip(&medians) {
            rows.push(json!({
                "job": name,
                "runtime": variant_name(*v),
                "workers": v,
                "events": settings.events,
                "seconds": m,
                "events_per_sec": settings.events as f64 / m,
                "runs": r.iter().map(|x| x.0).collect::<Vec<_>>(),
                "cpu_seconds": r.iter().map(|x| x.1).collect::<Vec<_>>(),
                "speedup_vs_workers_1": one / m,
                "speedup_vs_single_threaded": single / m,
                "cores_busy": cores_busy(r),
            }));
        }
        println!(
            "   {name}: {}",
            medians
                .iter()
                .map(|m| format!("{m:.3} s"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if memory {
        rows.extend(
            in_memory(&programs.timely_mem, &inputs[0], &counts, settings.rounds)
                .context("the in-memory scaling rows")?,
        );
    }
    let table = markdown(&rows);
    println!("\n{table}");
    println!(
        "{cores} cores seen; each figure the median of {} rounds, variants run in turn; cores \
         busy: CPU seconds of all the run's threads / its wall seconds",
        settings.rounds
    );
    let ceilings = ceilings(&rows, cores);
    for c in &ceilings {
        println!("- {c}");
    }
    Ok(json!({
        "cores": cores,
        "worker_counts": counts,
        "rounds": settings.rounds,
        "events_per_generated_input": settings.events,
        "timing": "wall clock of each windowctl process, median of the rounds, every variant \
                   in turn (the first rotating), after an untimed warm-up run of each",
        "markdown": table,
        "ceilings": ceilings,
        "rows": rows,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_counts_go_up_to_the_cores() {
        assert_eq!(worker_counts(1), [1, 2]);
        assert_eq!(worker_counts(2), [1, 2]);
        assert_eq!(worker_counts(4), [1, 2, 4]);
        assert_eq!(worker_counts(6), [1, 2, 4, 6]);
        assert_eq!(worker_counts(16), [1, 2, 4, 8, 16]);
    }

    #[test]
    fn the_table_shows_both_ratios() {
        let row = json!({"job": "j", "runtime": "--workers 2", "seconds": 0.5,
            "events_per_sec": 4.0e6, "speedup_vs_workers_1": 1.6,
            "speedup_vs_single_threaded": 1.25, "cores_busy": 1.9});
        assert!(markdown(&[row])
            .ends_with("| j | --workers 2 | 0.500 | 4.00 | 1.60x | 1.25x | 1.90 |\n"));
        let memory = json!({"job": "m", "runtime": "--workers 1", "seconds": 0.25,
            "events_per_sec": 8.0e6, "speedup_vs_workers_1": 1.0,
            "speedup_vs_single_threaded": null, "cores_busy": null});
        assert!(
            markdown(&[memory]).ends_with("| m | --workers 1 | 0.250 | 8.00 | 1.00x | - | - |\n")
        );
        assert_eq!(variant_name(None), "single-threaded");
        assert_eq!(variant_name(Some(3)), "--workers 3");
    }

    #[test]
    fn cores_busy_is_the_median_ratio_and_bounds_the_speedup() {
        let runs = [
            (1.0, Some(1.5)),
            (2.0, Some(2.0)),
            (0.5, Some(1.0)),
            (9.0, None),
        ];
        assert_eq!(cores_busy(&runs), Some(1.5));
        assert_eq!(cores_busy(&[(1.0, None)]), None);
        let rows = [
            json!({"job": "j", "workers": 1, "cores_busy": 1.6}),
            json!({"job": "j", "workers": 2, "cores_busy": 1.9}),
            json!({"job": "s", "workers": null, "cores_busy": 1.2}),
            json!({"job": "k", "workers": 1, "cores_busy": null}),
        ];
        let lines = ceilings(&rows, 2);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].starts_with("j: --workers 1 keeps 1.60 of 2 cores busy"));
        assert!(lines[0].contains("more than 1.25x faster"));
    }
}
