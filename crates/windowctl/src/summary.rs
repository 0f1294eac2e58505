//! The summary `windowctl run` prints on stderr at the end of a job: events read and their
//! rate, windows fired and created, late elements, peak memory and peak state, skipped lines, the watermark
//! delay, what a key-window or sliced strategy saved, and the window states left at the end.

use std::io::Write;
use std::time::Duration;

use engine::assigners::TimeDomain;
use engine::core::{WindowComputation, WindowMetrics};
use engine::io::EventTimes;
use engine::job::Strategy;
use engine::runtime::RunStats;

use crate::plan::Plan;
use crate::run::JobRuntime;

/// What the summary reports of a run, from either runtime.
pub(crate) struct Facts {
    /// The inputs' names, joined.
    pub(crate) source_name: String,
    /// Events read, records skipped and rejected.
    pub(crate) stats: RunStats,
    /// The computation's counters (summed over workers).
    pub(crate) metrics: WindowMetrics,
    /// Window states held at the end (stopped by a signal: at the stop; under `--workers`,
    /// every worker's, see `window_timely::Outcome::live_windows` for why it is right to be
    /// far below another run's count stopped at another point).
    pub(crate) live_windows: usize,
    /// The lines about the state held (peak state) and, under `--workers`, the workers.
    pub(crate) state_lines: Vec<String>,
}

impl Facts {
    /// The facts of a run on the single-threaded runtime.
    pub(crate) fn of(rt: &JobRuntime) -> Self {
        let op = rt.computation();
        Self {
            source_name: rt.source_names().join(", "),
            stats: rt.stats(),
            metrics: op.metrics(),
            live_windows: op.live_state().windows,
            state_lines: vec![op.summary_line()],
        }
    }
}

/// Above this share of late elements (in %), the summary warns about the watermark delay.
const LATE_WARNING_PERCENT: u64 = 2;

/// The process's peak resident memory in KB (Linux `VmHWM`), if the platform tells.
fn peak_memory_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Epoch seconds read as milliseconds make windows of the first weeks of 1970: says so on
/// `err`, naming `--time-unit s` ([`EventTimes::unit_hint`]), in event time.
fn unit_hint(err: &mut impl Write, plan: &Plan, times: &[EventTimes]) {
    if plan.spec.time == TimeDomain::EventTime {
        if let Some(hint) = EventTimes::unit_hint(times, plan.time_unit) {
            let _ = writeln!(err, "windowctl: {hint}");
        }
    }
}

/// Prints the summary of the job `plan` described, whose run `facts` describe, which wrote `results` result
/// rows in `elapsed`; `stopped` when a signal stopped it before the end of its inputs; `times`
/// the ranges of event times its readers read. Write errors on stderr are ignored: the job's
/// outcome is decided.
pub(crate) fn summary(
    plan: &Plan,
    facts: &Facts,
    results: u64,
    elapsed: Duration,
    stopped: bool,
    times: &[EventTimes],
) {
    let stats = facts.stats;
    let source_name = &facts.source_name;
    let m = facts.metrics;
    let secs = elapsed.as_secs_f64().max(1e-9);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "windowctl: {source_name}: {} events read in {secs:.3} s ({:.0} events/s)",
        stats.events,
        stats.events as f64 / secs
    );
    let _ = writeln!(
        err,
        "windowctl: windows fired: {} ({} results written); window states created: {}",
        m.windows_fired, results, m.windows_created
    );
    let _ = writeln!(
        err,
        "windowctl: late elements dropped: {} (to late output: {}); elements in no window: {}",
        m.late_elements, m.late_side_output, m.elements_in_no_window
    );
    // Many late elements usually mean a watermark delay too small for the data (the default
    // is 0 for a named input), which silently drops them: say so.
    if stats.events > 0 && m.late_elements * 100 > stats.events * LATE_WARNING_PERCENT {
        let _ = writeln!(
            err,
            "windowctl: warning: {:.1} % of the elements were late (behind the watermark by more \
             than the allowed lateness); with --out-of-orderness {} ms the data may need a larger \
             watermark delay",
            m.late_elements as f64 * 100.0 / stats.events as f64,
            plan.out_of_orderness
        );
    }
    unit_hint(&mut err, plan, times);
    if let Some(kb) = peak_memory_kb() {
        let _ = writeln!(err, "windowctl: peak memory (resident): {kb} KB");
    }
    for line in &facts.state_lines {
        let _ = writeln!(err, "windowctl: {line}");
    }
    let _ = writeln!(
        err,
        "windowctl: bad input lines skipped: {} (rejected by the assigner: {}); watermark delay {} ms",
        stats.skipped, stats.rejected, plan.out_of_orderness
    );
    if plan.spec.strategy != Strategy::Native {
        let k = m;
        let created = if plan.spec.strategy == Strategy::KeyWindow {
            "key windows"
        } else {
            "slices"
        };
        let _ = writeln!(
            err,
            "windowctl: {created} created: {}; the native operator would create: {} windows ({:.1}x); results emitted: {} ({} empty)",
            k.windows_created,
            k.native_windows,
            k.native_windows as f64 / (k.windows_created.max(1)) as f64,
            k.windows_fired,
            k.empty_results
        );
    }
    let live_windows = facts.live_windows;
    if stopped {
        let _ = writeln!(
            err,
            "windowctl: {live_windows} window states were open when the job stopped"
        );
        return;
    }
    if plan.spec.time == TimeDomain::EventTime && live_windows > 0 {
        let _ = writeln!(
            err,
            "windowctl: {} window states remain at end of input: windows whose cleanup time is the end of time (global windows, or an allowed lateness reaching i64::MAX) are never cleaned up, and elements added after their last firing were not emitted (as in Flink)",
            live_windows
        );
    }
    if plan.spec.time == TimeDomain::ProcessingTime && live_windows > 0 {
        let _ = writeln!(
            err,
            "windowctl: {} processing-time windows were still open at end of input and did not fire (as in Flink)",
            live_windows
        );
    }
}
