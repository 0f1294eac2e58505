//! `cargo xtask bench [--quick] [--features F] [--table-only] [--e2e-only] [--scaling-only]
//! [--rounds N] [FILTER]`:
//! runs the criterion benches of the `benches` crate, then its `table` bench, which prints one
//! table (workload, strategy, events, events/s, fraction of the hash-map baseline, windows
//! created, results emitted, peak state memory, bytes/key), then the end-to-end table ([`e2e`]:
//! `windowctl run` over files beside a bare parse-and-count program over the same files), then
//! the scaling table ([`scaling`]: `windowctl run --workers N` for N up to the cores seen,
//! beside the single-threaded runtime); saves the tables as JSON under `target/bench/` with the host, the git revision, a timestamp and
//! the criterion estimates of this run.
//!
//! `--quick` shortens everything for CI-style smoke runs (criterion: 0.3 s warm-up, 0.5 s
//! measurement, no plots, `BENCH_QUICK=1` for smaller inputs; table: every row on small
//! streams; end-to-end: 200k-event files, 2 rounds). `FILTER` goes to all three: a criterion
//! name regex, a substring of the table's `workload strategy`, a substring of an end-to-end
//! job's name (case-insensitive). `--table-only`, `--e2e-only` and `--scaling-only` run only
//! that table (several: those tables; no criterion); `--rounds N` sets the end-to-end rounds. `--features` is passed
//! to cargo bench.

mod checkpoint;
mod e2e;
mod scaling;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

/// The parsed command line.
#[derive(Debug, Default, PartialEq, Eq)]
struct Options {
    quick: bool,
    table_only: bool,
    e2e_only: bool,
    scaling_only: bool,
    rounds: Option<usize>,
    features: Option<String>,
    filter: Option<String>,
}

impl Options {
    /// Whether some tables alone are asked for (`--table-only`, `--e2e-only`,
    /// `--scaling-only`: each adds its table; then nothing else runs).
    fn only(&self) -> bool {
        self.table_only || self.e2e_only || self.scaling_only
    }

    /// The criterion benches run unless some tables alone are asked for.
    fn criterion(&self) -> bool {
        !self.only()
    }

    /// The in-memory table.
    fn table(&self) -> bool {
        self.table_only || !self.only()
    }

    /// The end-to-end table.
    fn e2e(&self) -> bool {
        self.e2e_only || !self.only()
    }

    /// The scaling table (`--workers N`).
    fn scaling(&self) -> bool {
        self.scaling_only || !self.only()
    }

    /// The scaling table's settings: the end-to-end ones with inputs of 2 M events (as many as
    /// the end-to-end table's with `--quick`).
    fn scaling_settings(&self) -> e2e::Settings {
        let mut s = self.e2e_settings();
        if !self.quick {
            s.events = scaling::FULL_EVENTS;
        }
        s
    }

    /// The end-to-end table's settings: file size and rounds from `--quick` and `--rounds`.
    fn e2e_settings(&self) -> e2e::Settings {
        let (events, rounds) = if self.quick {
            (e2e::QUICK_EVENTS, e2e::QUICK_ROUNDS)
        } else {
            (e2e::FULL_EVENTS, e2e::FULL_ROUNDS)
        };
        e2e::Settings {
            events,
            rounds: self.rounds.unwrap_or(rounds),
            filter: self.filter.clone(),
        }
    }
}

fn parse(args: &[String]) -> Result<Options> {
    let mut o = Options::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => o.quick = true,
            "--table-only" => o.table_only = true,
            "--e2e-only" => o.e2e_only = true,
            "--scaling-only" => o.scaling_only = true,
            "--rounds" => {
                let n = it.next().context("--rounds needs a value")?;
                o.rounds = Some(rounds(n)?);
            }
            s if s.starts_with("--rounds=") => o.rounds = Some(rounds(&s["--rounds=".len()..])?),
            "--features" => {
                o.features = Some(it.next().context("--features needs a value")?.clone());
            }
            s if s.starts_with("--features=") => {
                o.features = Some(s["--features=".len()..].to_owned());
            }
            s if s.starts_with('-') => bail!("unknown option {s}"),
            s if o.filter.is_none() => o.filter = Some(s.to_owned()),
            s => bail!("one FILTER only, got a second: {s}"),
        }
    }
    Ok(o)
}

/// A `--rounds` value: a whole number of at least 1.
fn rounds(text: &str) -> Result<usize> {
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => bail!("--rounds needs a whole number of at least 1, got {text}"),
    }
}

/// The `[[bench]]` target names in a Cargo manifest, in order.
fn bench_targets(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_bench = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bench = line == "[[bench]]";
        } else if in_bench {
            if let Some(v) = line.strip_prefix("name") {
                let v = v
                    .trim_start()
                    .trim_start_matches('=')
                    .trim()
                    .trim_matches('"');
                names.push(v.to_owned());
            }
        }
    }
    names
}

/// `YYYY-MM-DDTHH:MM:SSZ` for seconds since the Unix epoch (proleptic Gregorian, UTC).
fn utc(unix: u64) -> String {
    let days = (unix / 86_400) as i64;
    let secs = unix % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

fn cargo_bench(root: &Path, o: &Options) -> Command {
    let mut cmd = Command::new(cargo());
    cmd.current_dir(root)
        .args(["bench", "--package", "benches"]);
    if let Some(f) = &o.features {
        cmd.args(["--features", f]);
    }
    cmd
}

fn run(mut cmd: Command, what: &str) -> Result<()> {
    let status = cmd.status().with_context(|| format!("starting {what}"))?;
    if !status.success() {
        bail!("{what} failed with {status}");
    }
    Ok(())
}

fn command_output(program: &str, args: &[&str], dir: &Path) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn host() -> Value {
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_owned())
        .or_else(|| command_output("hostname", &[], Path::new(".")))
        .or_else(|| std::env::var("HOSTNAME").ok());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_owned());
    let processors = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    let cores = std::thread::available_parallelism().map_or(processors, |n| n.get());
    json!({ "hostname": hostname, "cpu_model": cpu_model, "cores": cores })
}

/// Criterion estimates written since `since`: `{id, mean_ns, elements_per_sec}` per benchmark.
fn criterion_results(dir: &Path, since: SystemTime) -> Vec<Value> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, found);
            } else if p.ends_with("new/benchmark.json") {
                found.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, &mut files);
    let mut out = BTreeMap::new();
    for bench in files {
        let fresh = std::fs::metadata(&bench)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= since);
        let read = |p: &Path| -> Option<Value> {
            serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()
        };
        let (Some(b), Some(e)) = (read(&bench), read(&bench.with_file_name("estimates.json")))
        else {
            continue;
        };
        if !fresh {
            continue;
        }
        let id = b["full_id"].as_str().unwrap_or("?").to_owned();
        let mean_ns = e["mean"]["point_estimate"].as_f64();
        let elements = b["throughput"]["Elements"].as_f64();
        let rate = mean_ns.zip(elements).map(|(ns, n)| n / (ns * 1e-9));
        out.insert(
            id.clone(),
            json!({ "id": id, "mean_ns": mean_ns, "elements_per_sec": rate }),
        );
    }
    out.into_values().collect()
}

/// Runs the criterion benches, the table and the end-to-end table (those the options ask
/// for), and saves the JSON record.
///
/// # Errors
/// Cargo could not be started, a benchmark failed, or the record could not be written.
pub fn run_cli(args: &[String]) -> Result<()> {
    let o = parse(args)?;
    let started = Instant::now();
    let started_at = SystemTime::now();
    let root = crate::conformance::workspace_root();
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let out_dir = target.join("bench");
    std::fs::create_dir_all(&out_dir).with_context(|| format!("creating {}", out_dir.display()))?;

    // Seconds since the last lap.
    let lap = |last: &mut f64| {
        let now = started.elapsed().as_secs_f64();
        let seconds = now - *last;
        *last = now;
        seconds
    };
    let mut mark = 0.0;
    let (mut built, mut criterion, mut table_s, mut e2e_s) = (0.0, 0.0, 0.0, 0.0);
    let mut table = Value::Null;
    if o.criterion() || o.table() {
        let mut build = cargo_bench(&root, &o);
        build.arg("--no-run");
        run(build, "building the benches")?;
        built = lap(&mut mark);
        run_criterion(&root, &o)?;
        criterion = lap(&mut mark);
    }
    if o.table() {
        table = run_table(&root, &o, &out_dir)?;
        table_s = lap(&mut mark);
    }
    let e2e = if o.e2e() {
        let rows = e2e::run(&root, &out_dir, &o.e2e_settings())?;
        e2e_s = lap(&mut mark);
        rows
    } else {
        Value::Null
    };
    let mut scaling_s = 0.0;
    let scaling = if o.scaling() {
        let rows = scaling::run(&root, &out_dir, &o.scaling_settings())?;
        scaling_s = lap(&mut mark);
        rows
    } else {
        Value::Null
    };
    let wall = json!({
        "build": built,
        "criterion": criterion,
        "table": table_s,
        "e2e": e2e_s,
        "scaling": scaling_s,
        "total": started.elapsed().as_secs_f64(),
    });
    let record = Record {
        args,
        o: &o,
        started_at,
        wall,
        criterion: criterion_results(&target.join("criterion"), started_at),
        table,
        e2e,
        scaling,
    };
    save(&root, &out_dir, record)
}

/// What one run of `cargo xtask bench` measured, to be saved.
struct Record<'a> {
    args: &'a [String],
    o: &'a Options,
    started_at: SystemTime,
    wall: Value,
    criterion: Vec<Value>,
    table: Value,
    e2e: Value,
    scaling: Value,
}

/// Saves the record as `bench-<timestamp>.json` and `latest.json` in `out_dir`.
fn save(root: &Path, out_dir: &Path, r: Record<'_>) -> Result<()> {
    let unix = r
        .started_at
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let timestamp = utc(unix);
    let git_revision = command_output("git", &["rev-parse", "HEAD"], root);
    let git_dirty = command_output("git", &["status", "--porcelain"], root).map(|s| !s.is_empty());
    let record = json!({
        "timestamp": timestamp,
        "unix_time": unix,
        "git_revision": git_revision,
        "git_dirty": git_dirty,
        "host": host(),
        "arguments": r.args,
        "mode": if r.o.quick { "quick" } else { "full" },
        "filter": r.o.filter,
        "features": r.o.features,
        "wall_seconds": r.wall,
        "criterion": r.criterion,
        "table": r.table,
        "e2e": r.e2e,
        "scaling": r.scaling,
    });
    let text = serde_json::to_string_pretty(&record)?;
    let name = format!("bench-{}.json", timestamp.replace([':', '-'], ""));
    let path = out_dir.join(&name);
    std::fs::write(&path, &text).with_context(|| format!("writing {}", path.display()))?;
    std::fs::write(out_dir.join("latest.json"), &text).context("writing latest.json")?;
    let w = |k: &str| r.wall[k].as_f64().unwrap_or(0.0);
    println!(
        "saved {} (and latest.json); git {}; {:.0} s in all (build {:.0} s, criterion {:.0} s, \
         table {:.0} s, end-to-end {:.0} s, scaling {:.0} s)",
        path.display(),
        git_revision.as_deref().unwrap_or("unknown"),
        w("total"),
        w("build"),
        w("criterion"),
        w("table"),
        w("e2e"),
        w("scaling")
    );
    Ok(())
}

/// The criterion benches of `benches/Cargo.toml` (all but the table), unless `--table-only`.
fn run_criterion(root: &Path, o: &Options) -> Result<()> {
    let manifest = std::fs::read_to_string(root.join("benches/Cargo.toml"))
        .context("reading benches/Cargo.toml")?;
    let criterion_benches: Vec<String> = bench_targets(&manifest)
        .into_iter()
        .filter(|n| n != "table")
        .collect();
    if !o.criterion() || criterion_benches.is_empty() {
        return Ok(());
    }
    let mut cmd = cargo_bench(root, o);
    for b in &criterion_benches {
        cmd.args(["--bench", b]);
    }
    cmd.arg("--");
    if let Some(f) = &o.filter {
        cmd.arg(f);
    }
    if o.quick {
        cmd.env("BENCH_QUICK", "1").args([
            "--warm-up-time",
            "0.3",
            "--measurement-time",
            "0.5",
            "--sample-size",
            "10",
            "--noplot",
            "--output-format",
            "bencher",
        ]);
    }
    println!("== criterion: {}", criterion_benches.join(", "));
    run(cmd, "the criterion benches")
}

/// The table bench; returns its rows (JSON).
fn run_table(root: &Path, o: &Options, out_dir: &Path) -> Result<Value> {
    let rows_path = out_dir.join("table-rows.json");
    let _ = std::fs::remove_file(&rows_path);
    let mut cmd = cargo_bench(root, o);
    cmd.args(["--bench", "table", "--"]);
    if o.quick {
        cmd.arg("--quick");
    }
    cmd.arg("--json").arg(&rows_path);
    if let Some(f) = &o.filter {
        cmd.arg(f);
    }
    println!("== table");
    run(cmd, "the table")?;
    let table: Value = serde_json::from_str(
        &std::fs::read_to_string(&rows_path)
            .with_context(|| format!("reading {}", rows_path.display()))?,
    )
    .context("parsing the table's JSON")?;
    let _ = std::fs::remove_file(&rows_path);
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_formats_known_instants() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_436_918_400), "2015-07-15T00:00:00Z");
        assert_eq!(utc(1_767_225_599), "2025-12-31T23:59:59Z");
    }

    #[test]
    fn bench_targets_are_read_from_the_manifest() {
        let m =
            "[package]\nname = \"benches\"\n\n[[bench]]\nname = \"operator\"\nharness = false\n\
                 \n[dependencies]\nname = \"x\"\n[[bench]]\nharness = false\nname = \"table\"\n";
        assert_eq!(bench_targets(m), ["operator", "table"]);
        let real = include_str!("../../benches/Cargo.toml");
        assert!(bench_targets(real).contains(&"table".to_owned()));
    }

    #[test]
    fn options_parse() {
        let a = |s: &[&str]| parse(&s.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>());
        assert_eq!(
            a(&["--quick", "100k zipf", "--features=sliced"]).unwrap(),
            Options {
                quick: true,
                features: Some("sliced".to_owned()),
                filter: Some("100k zipf".to_owned()),
                ..Options::default()
            }
        );
        assert!(a(&["a", "b"]).is_err());
        assert!(a(&["--fast"]).is_err());
    }

    #[test]
    fn e2e_options_parse() {
        let a = |s: &[&str]| parse(&s.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>());
        let all = a(&[]).unwrap();
        assert!(all.criterion() && all.table() && all.e2e());
        assert_eq!(
            all.e2e_settings(),
            e2e::Settings {
                events: 1_000_000,
                rounds: 5,
                filter: None
            }
        );

        let only = a(&["--e2e-only", "--quick"]).unwrap();
        assert!(!only.criterion() && !only.table() && only.e2e());
        assert_eq!(
            (only.e2e_settings().events, only.e2e_settings().rounds),
            (200_000, 2)
        );
        let table = a(&["--table-only"]).unwrap();
        assert!(!table.criterion() && table.table() && !table.e2e());
        let both = a(&["--table-only", "--e2e-only"]).unwrap();
        assert!(!both.criterion() && both.table() && both.e2e() && !both.scaling());
        let scaling = a(&["--scaling-only"]).unwrap();
        assert!(!scaling.criterion() && !scaling.table() && !scaling.e2e() && scaling.scaling());
        assert_eq!(scaling.scaling_settings().events, 2_000_000);
        assert!(all.scaling());
        assert_eq!(
            a(&["--scaling-only", "--quick"])
                .unwrap()
                .scaling_settings()
                .events,
            200_000
        );

        let rounds = a(&["--e2e-only", "--rounds", "3", "zipf"]).unwrap();
        assert_eq!(rounds.rounds, Some(3));
        assert_eq!(rounds.e2e_settings().filter.as_deref(), Some("zipf"));
        assert_eq!(a(&["--rounds=7"]).unwrap().e2e_settings().rounds, 7);
        assert!(a(&["--rounds", "0"]).is_err());
        assert!(a(&["--rounds"]).is_err());
        assert!(a(&["--rounds=x"]).is_err());
    }
}
