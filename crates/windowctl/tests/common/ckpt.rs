//! The random jobs and inputs of the checkpoint tests under `--workers` and `--processes`, and
//! the byte-for-byte comparison of their outputs.

use std::fs;
use std::path::Path;

use super::Rng;

/// A CSV input in roughly increasing time with disorder, negative times and a few bad lines.
pub(crate) fn input(rng: &mut Rng, lines: usize, keys: u64) -> String {
    let mut text = String::from("event_time_ms,key,value\n");
    let mut t: i64 = -300;
    for _ in 0..lines {
        t += rng.below(6) as i64;
        let behind = match rng.below(10) {
            0 => rng.below(300) as i64,
            1 | 2 => rng.below(30) as i64,
            _ => 0,
        };
        let value = (rng.below(1000) as i64 - 300).to_string();
        text.push_str(&format!("{},k{},{value}\n", t - behind, rng.below(keys)));
        if rng.below(120) == 0 {
            text.push_str("oops,k1,1\n");
        }
    }
    text
}

/// The outputs of a run: results, late output, dead letters.
pub(crate) fn outputs(dir: &Path) -> [Vec<u8>; 3] {
    ["out.csv", "late.csv", "dead.csv"].map(|f| fs::read(dir.join(f)).unwrap_or_default())
}

/// Asserts that a resumed run's outputs (`got`) are an uninterrupted run's (`base`), byte for
/// byte, naming the one that differs.
pub(crate) fn assert_same(what: &str, got: &[Vec<u8>; 3], base: &[Vec<u8>; 3]) {
    for (i, name) in ["results", "late output", "dead letters"]
        .iter()
        .enumerate()
    {
        assert!(
            got[i] == base[i],
            "{what}: {name} differ after the resume: {} vs {}",
            String::from_utf8_lossy(&got[i]),
            String::from_utf8_lossy(&base[i])
        );
    }
}

/// A random job's arguments (without its outputs).
pub(crate) fn job(rng: &mut Rng) -> Vec<String> {
    let window = match rng.below(4) {
        0 => format!("tumbling:{}ms", 20 + rng.below(150)),
        1 => format!("session:{}ms", 5 + rng.below(50)),
        _ => {
            let slide = 5 + rng.below(30);
            format!("sliding:{}ms:{slide}ms", slide * (1 + rng.below(5)))
        }
    };
    let strategy = if window.starts_with("sliding") {
        rng.pick(&["native", "keywindow", "sliced", "sliced:changes", "auto"])
    } else {
        "native"
    };
    let agg = rng.pick(&["sum", "count", "min", "max", "mean"]);
    [
        "--input",
        "in.csv",
        "--window",
        &window,
        "--strategy",
        strategy,
        "--agg",
        agg,
        "--out-of-orderness",
        &format!("{}ms", rng.below(30)),
        "--allowed-lateness",
        &format!("{}ms", rng.below(3) * rng.below(80)),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}
