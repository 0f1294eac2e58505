//! Helpers shared by the end-to-end tests of `windowctl`: running the binary in the repository
//! root, reading its output and summary, the oracle files of `tests/data/`, temporary inputs.
//! Each test crate uses a different subset, hence the `allow` below (an `expect` would be
//! unfulfilled in the crates that use them all).
#![allow(
    dead_code,
    reason = "each test crate uses a different subset of these helpers"
)]

pub(crate) mod ckpt;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository root: every job runs there, so `data/...` paths work.
pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `windowctl run ARGS --no-progress` in the repository root.
pub(crate) fn windowctl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .arg("run")
        .args(args)
        .arg("--no-progress")
        .current_dir(repo())
        .output()
        .expect("windowctl starts")
}

/// The standard output, as text.
pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 output")
}

/// The standard error, as text.
pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("utf-8 stderr")
}

/// The oracle file: `# late=N`, then the CSV header and rows sorted.
pub(crate) fn expected(name: &str) -> (u64, Vec<String>) {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name),
    )
    .expect("oracle output exists");
    let mut lines = text.lines();
    let late = lines
        .next()
        .and_then(|l| l.strip_prefix("# late="))
        .and_then(|n| n.parse().ok())
        .expect("late count line");
    (late, lines.map(str::to_owned).collect())
}

/// The output's header, then its rows sorted (the order of rows within a watermark step is
/// not fixed across strategies).
pub(crate) fn sorted_output(o: &Output) -> Vec<String> {
    let out = stdout(o);
    let mut lines = out.lines();
    let header = lines.next().expect("header").to_owned();
    let mut rows: Vec<String> = lines.map(str::to_owned).collect();
    rows.sort();
    rows.insert(0, header);
    rows
}

/// The count of late elements dropped, from the summary on stderr.
pub(crate) fn late_dropped(o: &Output) -> u64 {
    let err = stderr(o);
    let line = err
        .lines()
        .find(|l| l.contains("late elements dropped:"))
        .unwrap_or_else(|| panic!("no summary in stderr: {err}"));
    line.split("late elements dropped: ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("count")
}

/// Runs `windowctl run ARGS` and compares its rows and late count with the oracle file.
pub(crate) fn check_against_oracle(args: &[&str], oracle: &str) {
    let o = windowctl(args);
    assert!(o.status.success(), "windowctl failed: {}", stderr(&o));
    let (late, rows) = expected(oracle);
    let got = sorted_output(&o);
    assert_eq!(got.len(), rows.len(), "number of rows (with header)");
    for (g, e) in got.iter().zip(&rows) {
        assert_eq!(g, e);
    }
    assert_eq!(late_dropped(&o), late);
}

/// `windowctl run ARGS --input - --no-progress` with `input` on its standard input.
pub(crate) fn run_with_stdin(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_windowctl"))
        .arg("run")
        .args(args)
        .args(["--input", "-", "--no-progress"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Writes `text` to a file `name` in this test process's temporary directory.
pub(crate) fn write_temp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("windowctl-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Runs `windowctl run ARGS` and asserts that it fails with `needle` in its standard error;
/// returns the output for further checks.
pub(crate) fn assert_fails(args: &[&str], needle: &str) -> Output {
    let o = windowctl(args);
    assert!(!o.status.success(), "expected a failure: {}", stdout(&o));
    assert!(stderr(&o).contains(needle), "{}", stderr(&o));
    o
}

/// A fresh scratch directory for test `name` of the test crate `prefix` (emptied if it exists).
pub(crate) fn scratch_dir(prefix: &str, name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("windowctl-{prefix}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// SplitMix64: a seeded generator for random jobs and inputs.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    /// The next 64 random bits.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (n > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// One of `items` (not empty).
    pub(crate) fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

/// The number of states in the summary's `peak state: N states (...` line, if it has one.
pub(crate) fn peak_states(stderr: &str) -> Option<u64> {
    let line = stderr.lines().find(|l| l.contains("peak state: "))?;
    let n = line.split("peak state: ").nth(1)?.split(' ').next()?;
    n.replace(',', "").parse().ok()
}

/// Children killed if the test fails before they are waited for.
pub(crate) struct Reaper(pub(crate) Vec<std::process::Child>);

impl Drop for Reaper {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Waits for `child` at most `secs` seconds (a hung cluster fails the test instead of hanging
/// it); the child is killed then.
pub(crate) fn wait(mut child: std::process::Child, secs: u64) -> Output {
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().expect("try_wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > std::time::Duration::from_secs(secs) {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "a process did not end within {secs} s: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Owned arguments.
pub(crate) fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// `windowctl run --no-progress ARGS` in `dir`, with `env` set.
pub(crate) fn run_in(dir: &Path, args: &[String], env: &[(&str, String)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_windowctl"));
    c.current_dir(dir)
        .arg("run")
        .arg("--no-progress")
        .args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("windowctl runs")
}

/// The lines of `text`, sorted (rows as a multiset).
pub(crate) fn sorted_lines(text: &str) -> Vec<String> {
    let mut rows: Vec<String> = text.lines().map(str::to_owned).collect();
    rows.sort();
    rows
}
