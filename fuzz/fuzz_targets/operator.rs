//! The window operator (every strategy `window_job::build` makes) driven by an arbitrary
//! sequence of elements, watermarks and clock advances, checked against itself: at an
//! arbitrary point its snapshot is restored into a fresh computation of the same job, and from
//! there both must emit exactly the same records. Never a panic.
#![no_main]

use engine::core::{AnyWindow, Emitted, Number, WindowComputation};
use engine::job::{build, Computation, JobResult, JobSpec};
use libfuzzer_sys::fuzz_target;

/// Jobs the first byte picks from: every window kind, triggers, evictors, lateness, strategies.
const JOBS: &[&str] = &[
    r#"assigner = "tumbling:10ms"
aggregate = "sum""#,
    r#"assigner = "sliding:30ms:10ms"
aggregate = "max"
allowed_lateness = "15ms""#,
    r#"assigner = "sliding:30ms:10ms"
aggregate = "sum"
strategy = "sliced""#,
    r#"assigner = "sliding:40ms:5ms"
aggregate = "min"
strategy = "sliced:changes""#,
    r#"assigner = "sliding:20ms:5ms"
aggregate = "count"
strategy = "keywindow""#,
    r#"assigner = "session:7ms"
aggregate = "mean"
allowed_lateness = "10ms""#,
    r#"assigner = "session:value"
aggregate = "sum""#,
    r#"assigner = "count:3:2"
aggregate = "sum""#,
    r#"assigner = "global"
trigger = "purging:count:4"
aggregate = "sum""#,
    r#"assigner = "tumbling:20ms"
trigger = "continuous:5ms"
evictor = "count:2"
aggregate = "sum""#,
    r#"assigner = "tumbling:20ms"
trigger = "delta:10:abs"
evictor = "time:5ms:after"
aggregate = "max""#,
    r#"assigner = "tumbling:10ms"
time = "processing"
aggregate = "sum""#,
    r#"assigner = "sliding:30ms:10ms"
aggregate = "count,sum,min,max,mean"
strategy = "sliced"
allowed_lateness = "0ms""#,
    r#"assigner = "session:5ms"
aggregate = ["max", "count"]
allowed_lateness = "8ms""#,
    r#"assigner = "sliding:20ms:5ms"
aggregate = "min,mean"
strategy = "keywindow""#,
    r#"assigner = "tumbling:10ms"
evictor = "count:2"
aggregate = "sum,max""#,
];

type Out = Vec<Emitted<u32, AnyWindow, Number, JobResult>>;

/// One step of the program in `op` (4 bytes).
fn step(c: &mut Computation<u32>, time: &mut i64, clock: &mut i64, op: &[u8], out: &mut Out) {
    match op[0] % 4 {
        0 | 1 => {
            // An element near the current time, sometimes behind it.
            let t = *time + i64::from(op[1] % 32) - 8;
            *time = (*time).max(t);
            // Integers (exact), and floats for odd bytes.
            let value = match op[3] % 2 {
                0 => Number::Int(i64::from(op[3])),
                _ => Number::Float(f64::from(op[3]) / 2.0),
            };
            let _ = c.process_element(u32::from(op[2] % 5), value, t, out);
        }
        2 => {
            let w = *time - i64::from(op[1] % 16);
            c.process_watermark(w, out);
        }
        _ => {
            *clock += i64::from(op[1] % 8);
            c.advance_wall_clock(*clock, out);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, program)) = data.split_first() else {
        return;
    };
    let spec: JobSpec = toml::from_str(JOBS[usize::from(pick) % JOBS.len()]).expect("a job");
    let Ok(mut original) = build::<u32>(&spec) else {
        return;
    };
    let ops: Vec<&[u8]> = program.chunks_exact(4).collect();
    let cut = ops.len() / 2;
    let (mut time, mut clock) = (0_i64, 1_000_i64);
    let mut out = Out::new();
    for op in &ops[..cut] {
        step(&mut original, &mut time, &mut clock, op, &mut out);
    }
    let mut bytes = Vec::new();
    original
        .snapshot(&mut bytes)
        .expect("build makes computations with snapshots");
    let mut restored = build::<u32>(&spec).expect("built once");
    restored.restore(&bytes).expect("its own snapshot restores");
    let (mut a, mut b) = (Out::new(), Out::new());
    let (mut t2, mut c2) = (time, clock);
    for op in &ops[cut..] {
        step(&mut original, &mut time, &mut clock, op, &mut a);
        step(&mut restored, &mut t2, &mut c2, op, &mut b);
    }
    original.process_watermark(i64::MAX, &mut a);
    restored.process_watermark(i64::MAX, &mut b);
    assert_eq!(a, b, "the restored computation diverged");
    assert_eq!(original.metrics(), restored.metrics());
});
