//! The table as text: number formats (`1.23 M`, `4.81 %`, `1,234,567`, `12.3 MiB`), the
//! Markdown table and the issue-6 target ratios. Split from `table.rs`, which measures the rows.

use std::fmt::Write as _;

use engine::job::Strategy;

use super::Table;

/// `1.23 M`-style figures.
#[must_use]
pub fn si(x: f64) -> String {
    let (v, unit) = if x >= 1e9 {
        (x / 1e9, " G")
    } else if x >= 1e6 {
        (x / 1e6, " M")
    } else if x >= 1e3 {
        (x / 1e3, " k")
    } else {
        (x, "")
    };
    if v >= 100.0 || unit.is_empty() {
        format!("{v:.0}{unit}")
    } else {
        format!("{v:.2}{unit}")
    }
}

/// A fraction as a percentage with three significant digits: `4.81 %`, `0.0362 %`.
#[must_use]
pub fn percent(f: f64) -> String {
    let p = f * 100.0;
    if p >= 100.0 || p <= 0.0 {
        format!("{p:.0} %")
    } else {
        let decimals = (2 - p.log10().floor() as i32).max(0) as usize;
        format!("{p:.decimals$} %")
    }
}

/// `1,234,567`.
#[must_use]
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `12.3 MiB`-style sizes.
#[must_use]
pub fn bytes(n: u64) -> String {
    let x = n as f64;
    if x >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2} GiB", x / (1024.0 * 1024.0 * 1024.0))
    } else if x >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", x / (1024.0 * 1024.0))
    } else if x >= 1024.0 {
        format!("{:.1} KiB", x / 1024.0)
    } else {
        format!("{n} B")
    }
}

impl Table {
    /// The table as Markdown, with a header saying how it was measured and, after it, the
    /// issue-6 target ratios that the rows allow to compute.
    #[must_use]
    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "mode {:?}; strategies {}; fraction = events/s / the group's baseline events/s",
            self.plan.mode,
            self.strategies.join(", ")
        );
        let _ = writeln!(s, "peak state memory: {}", self.memory_method);
        let _ = writeln!(
            s,
            "keyed streams: 1 event per ms, key 0 hottest under Zipf (s = 1); native sliding rows \
             capped at {} window assignments (events x size/slide): they run a prefix of the \
             stream (see `events`), so their windows, results and late counts are of that prefix \
             and compare with the other rows only per event\n",
            thousands(self.plan.native_assignments)
        );
        s.push_str(
            "| workload | strategy | events | events/s | of baseline | windows created | results \
             emitted | peak state memory | bytes/key | note |\n|---|---|---:|---:|---:|---:|---:|\
             ---:|---:|---|\n",
        );
        for r in &self.rows {
            let opt = |v: Option<u64>| v.map_or("-".to_owned(), thousands);
            let mut note = r.note.clone();
            if r.late > 0 {
                note = format!("{} late; {note}", thousands(r.late));
            }
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.workload,
                r.strategy,
                thousands(r.events),
                si(r.events_per_sec),
                r.fraction_of_baseline.map_or("-".to_owned(), percent),
                opt(r.windows_created),
                opt(r.results_emitted),
                r.peak_state_bytes.map_or("-".to_owned(), bytes),
                r.bytes_per_key
                    .map_or("-".to_owned(), |b| format!("{b:.0}")),
                note.trim_end_matches("; ")
            );
        }
        s.push_str("\ninput streams (each group's first row is its baseline):\n");
        for (group, note) in &self.groups {
            let _ = writeln!(s, "- {group}: {note}");
        }
        let targets = self.targets();
        if !targets.is_empty() {
            s.push_str("\nissue 6 (item 4), issue 12 (items 5, 6): sliding sum over 100k Zipf keys; lateness:\n");
            for t in targets {
                let _ = writeln!(s, "- {t}");
            }
        }
        let _ = writeln!(s, "\ntable wall time {:.1} s", self.seconds);
        s
    }

    /// The ratios of issue 6, item 4, from the rows of `sliding sum 100k zipf` (a watermark
    /// per element), and the hash-map fractions of issue 12, item 5 (a watermark per input
    /// batch: `wm/batch`).
    #[must_use]
    pub fn targets(&self) -> Vec<String> {
        let rate_of = |r: i64, strategy: &str, suffix: &str| {
            self.rows
                .iter()
                .find(|x| {
                    x.workload == format!("sliding sum 100k zipf r={r}{suffix}")
                        && x.strategy == strategy
                })
                .map(|x| (x.events_per_sec, x))
        };
        let best_of = |r: i64, suffix: &str| {
            Strategy::ALL
                .iter()
                .filter_map(|s| rate_of(r, s.label(), suffix).map(|(v, x)| (v, s.label(), x)))
                .max_by(|a, b| a.0.total_cmp(&b.0))
        };
        let rate = |r: i64, strategy: &str| rate_of(r, strategy, "");
        let best = |r: i64| best_of(r, "");
        let mut out = Vec::new();
        if let (Some(b1200), Some(b2)) = (best(1200), best(2)) {
            let at2 = rate(2, b1200.1).map_or(b2.0, |x| x.0);
            let ratio = b1200.0 / at2;
            out.push(format!(
                "best at r=1200 ({}) / its own rate at r=2: {ratio:.3} (target >= 0.5: {})",
                b1200.1,
                if ratio >= 0.5 { "met" } else { "not met" }
            ));
        }
        if let (Some(b), Some((native, _))) = (best(120), rate(120, "native")) {
            let ratio = b.0 / native;
            out.push(format!(
                "best at r=120 ({}) / native: {ratio:.1}x (target >= 30x: {})",
                b.1,
                if ratio >= 30.0 { "met" } else { "not met" }
            ));
        }
        for r in [2, 120, 1200] {
            if let Some(b) = best(r) {
                let f = b.2.fraction_of_baseline.unwrap_or(0.0);
                out.push(format!(
                    "best at r={r} ({}) / hash-map baseline: {:.1} % (target >= 30 %: {})",
                    b.1,
                    f * 100.0,
                    if f >= 0.3 { "met" } else { "not met" }
                ));
            }
        }
        let native = |workload: &str| {
            self.rows
                .iter()
                .find(|x| x.workload == workload && x.strategy == "native")
                .map(|x| x.events_per_sec)
        };
        if let (Some(l0), Some(l1000)) = (
            native("tumbling sum 10ms lateness 0ms"),
            native("tumbling sum 10ms lateness 1000ms"),
        ) {
            let slowdown = l0 / l1000.max(1e-9);
            out.push(format!(
                "native tumbling 10 ms, lateness 1000 ms / lateness 0: {slowdown:.2}x slower (issue 12 target <= 2x: {})",
                if slowdown <= 2.0 { "met" } else { "not met" }
            ));
        }
        for r in [2, 120] {
            if let Some(b) = best_of(r, " wm/batch") {
                let f = b.2.fraction_of_baseline.unwrap_or(0.0);
                out.push(format!(
                    "best at r={r} wm/batch ({}) / hash-map baseline: {:.1} % (issue 12 target >= 30 %: {})",
                    b.1,
                    f * 100.0,
                    if f >= 0.3 { "met" } else { "not met" }
                ));
            }
        }
        out
    }
}
