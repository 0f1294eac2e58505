//! The benchmark table's harness works: its smallest workloads of every kind run on every
//! strategy, with the counting allocator installed, in a few seconds of a debug build.

use benches::table::{run, Mode, Plan};
use engine::job::Strategy;
use peak_alloc::PeakAlloc;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

#[test]
fn smoke_table_has_every_workload_kind_and_strategy() {
    let plan = Plan::new(Mode::Smoke);
    let mut seen = 0;
    let table = run(&plan, &ALLOCATOR, |_| seen += 1).expect("the table runs");
    assert_eq!(seen, table.rows.len());

    let has = |workload: &str, strategy: &str| {
        table
            .rows
            .iter()
            .any(|r| r.workload.contains(workload) && r.strategy == strategy)
    };
    for kind in [
        "sliding sum 1k uniform",
        "sliding max 1k zipf",
        "flights tailnum",
        "flights dest",
        "flink sliding",
        "flink tumbling",
        "nexmark q5",
        "nexmark q7",
    ] {
        for s in Strategy::ALL {
            assert!(has(kind, s.label()), "no {kind} row for {}", s.label());
        }
    }
    assert!(has("nexmark q11", "native") && has("nexmark q12", "native"));

    // Every group starts with its baseline; every row processed events and has a fraction.
    let mut group = "";
    for r in &table.rows {
        if r.group != group {
            assert_eq!(
                r.strategy, "baseline",
                "{} must start with its baseline",
                r.group
            );
            group = &r.group;
        }
        assert!(r.events > 0 && r.events_per_sec > 0.0, "{r:?}");
        assert!(r.fraction_of_baseline.is_some_and(|f| f > 0.0), "{r:?}");
        assert!(
            r.peak_state_bytes.is_some_and(|b| b > 0),
            "memory not measured: {r:?}"
        );
        if r.strategy != "baseline" {
            assert!(r.results_emitted.is_some_and(|n| n > 0), "{r:?}");
        }
        assert!(!r.note.contains("MISMATCH"), "{}: {}", r.workload, r.note);
    }
    // The Flink workload reproduces Flink's output on the native operator.
    let flink_native = table
        .rows
        .iter()
        .filter(|r| r.workload.starts_with("flink") && r.strategy == "native");
    assert_eq!(
        flink_native
            .inspect(|r| assert!(r.note.contains("output checked"), "{}", r.note))
            .count(),
        2
    );
    // Native rows of dense windows are capped; the others use the whole stream.
    let r120 = |s: &str| {
        table
            .rows
            .iter()
            .find(|r| r.workload == "sliding sum 1k uniform r=120" && r.strategy == s)
            .unwrap()
            .events
    };
    assert_eq!(r120("native"), plan.native_assignments / 120);
    assert_eq!(r120("keywindow"), plan.keyed_events as u64);

    let text = table.to_markdown();
    assert_eq!(
        text.lines().filter(|l| l.starts_with("| ")).count(),
        table.rows.len() + 1
    );
    let json = serde_json::to_string(&table).unwrap();
    assert!(json.contains("\"peak_state_bytes\""));
}
