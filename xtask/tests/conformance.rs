//! The conformance harness as a test: every case in `tests/conformance/flink` (outputs recorded
//! from real Flink 2.3) and in `tests/conformance/spark` (outputs of real Spark 4.3; see each
//! folder's README) must pass; and the harness must notice a wrong expected value.

use std::path::PathBuf;

use serde_json::{json, Value};
use xtask::conformance::{collect_cases, run_case, run_value, workspace_root, Outcome};

fn folder(name: &str) -> PathBuf {
    workspace_root().join("tests/conformance").join(name)
}

#[test]
fn every_flink_case_passes() {
    let cases = collect_cases(&[folder("flink")]).expect("the Flink case folder is readable");
    assert!(
        !cases.is_empty(),
        "no Flink cases found under {}",
        folder("flink").display()
    );
    let (mut passed, mut failures) = (0usize, Vec::new());
    for path in &cases {
        let report = run_case(path);
        match &report.outcome {
            Outcome::Pass => passed += 1,
            Outcome::Fail(why) => {
                println!("FAIL {}: {why}", report.name);
                failures.push(format!("{}: {why}", report.name));
            }
        }
    }
    println!("{passed} of {} Flink cases passed", cases.len());
    assert!(
        failures.is_empty(),
        "failing Flink cases:\n{}",
        failures.join("\n")
    );
    assert_eq!(passed, cases.len());
}

#[test]
fn every_spark_case_passes() {
    let cases = collect_cases(&[folder("spark")]).expect("the Spark case folder is readable");
    assert!(
        !cases.is_empty(),
        "no Spark cases found under {}",
        folder("spark").display()
    );
    let mut problems = Vec::new();
    for path in &cases {
        let report = run_case(path);
        if report.outcome != Outcome::Pass {
            println!("{}: {:?}", report.name, report.outcome);
            problems.push(format!("{}: {:?}", report.name, report.outcome));
        }
    }
    assert!(
        problems.is_empty(),
        "Spark cases that do not pass (outputs of real Spark 4.3, see tests/conformance/spark):\n{}",
        problems.join("\n")
    );
}

fn tumbling_basic() -> Value {
    let path = folder("flink").join("01-tumbling-basic.json");
    let text = std::fs::read_to_string(&path).expect("01-tumbling-basic.json is readable");
    serde_json::from_str(&text).expect("01-tumbling-basic.json is JSON")
}

#[test]
fn harness_detects_a_wrong_expected_value() {
    let case = tumbling_basic();
    assert_eq!(
        run_value(&case),
        Outcome::Pass,
        "the unmodified case must pass"
    );

    // [0,10) sums to 6 in real Flink; claim 7.
    let mut wrong = case.clone();
    assert_eq!(wrong["expected"][0]["result"], json!(6));
    wrong["expected"][0]["result"] = json!(7);
    assert!(
        matches!(run_value(&wrong), Outcome::Fail(_)),
        "{:?}",
        run_value(&wrong)
    );

    // A record that never happens.
    let mut extra = case.clone();
    extra["expected"].as_array_mut().unwrap().push(json!({
        "key": "a", "window_start": 30, "window_end": 40, "result": 1, "ts": 39, "wm": i64::MAX
    }));
    assert!(matches!(run_value(&extra), Outcome::Fail(_)));

    // A missing record.
    let mut missing = case;
    missing["expected"].as_array_mut().unwrap().pop();
    assert!(matches!(run_value(&missing), Outcome::Fail(_)));
}

#[test]
fn harness_rejects_an_unknown_format() {
    let unknown = json!({"name": "x", "input": {"events": []}, "expected": []});
    assert!(matches!(run_value(&unknown), Outcome::Fail(_)));
    assert!(matches!(run_value(&json!({})), Outcome::Fail(_)));
    assert!(matches!(run_value(&json!([1, 2, 3])), Outcome::Fail(_)));
}
