//! Checkpoint decoding: arbitrary bytes loaded as a snapshot into computations of several kinds
//! (native, sliced, key windows, sessions) and as a runtime snapshot: an error or a state that
//! then keeps working, never a panic.
#![no_main]

use engine::core::{AnyWindow, Emitted, Number, WindowComputation};
use engine::job::{build, JobResult, JobSpec};
use engine::runtime::RuntimeSnapshot;
use libfuzzer_sys::fuzz_target;

const JOBS: &[&str] = &[
    "assigner = \"tumbling:10ms\"\naggregate = \"sum\"",
    "assigner = \"sliding:30ms:10ms\"\naggregate = \"max\"\nstrategy = \"sliced\"",
    "assigner = \"sliding:30ms:10ms\"\naggregate = \"sum\"\nstrategy = \"keywindow\"",
    "assigner = \"session:5ms\"\naggregate = \"mean\"\nallowed_lateness = \"5ms\"",
    "assigner = \"global\"\ntrigger = \"count:3\"\nevictor = \"count:2\"\naggregate = \"sum\"",
];

fuzz_target!(|data: &[u8]| {
    for job in JOBS {
        let spec: JobSpec = toml::from_str(job).expect("a job");
        let mut c = build::<u32>(&spec).expect("builds");
        if c.restore(data).is_ok() {
            let mut out: Vec<Emitted<u32, AnyWindow, Number, JobResult>> = Vec::new();
            for t in 0..20 {
                let _ = c.process_element(t as u32 % 3, Number::Int(1), t * 3, &mut out);
                c.process_watermark(t * 3 - 5, &mut out);
            }
            c.process_watermark(i64::MAX, &mut out);
        }
    }
    let _ = postcard::from_bytes::<RuntimeSnapshot>(data);
});
