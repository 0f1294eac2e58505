//! The DStream layer on arbitrary batches and durations: `reduceByKeyAndWindow` in the plain
//! and the incremental (inverse-function) form must agree on every window's total, or both
//! refuse the durations; never a panic. Window and slide are at least one batch: with a zero
//! slide Spark fails at different stages in the two forms (the incremental one at `start()`,
//! the plain one at its first batch: `Error::ZeroSlide` documents it), which the first run of
//! this target found and which is Spark's behaviour, not a bug.
#![no_main]

use engine::dstream::workload::{run_sum_by_key_and_window, Form};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<3>() else {
        return;
    };
    let batch_interval = 1 + i64::from(head[0] % 4) * 500;
    let (window, slide) = (1 + u32::from(head[1] % 6), 1 + u32::from(head[2] % 4));
    let batches: Vec<Vec<(u32, i64)>> = rest
        .chunks(8)
        .take(24)
        .map(|b| {
            b.chunks(2)
                .map(|p| {
                    (
                        u32::from(p[0] % 4),
                        i64::from(p.get(1).copied().unwrap_or(0)),
                    )
                })
                .collect()
        })
        .collect();
    let plain = run_sum_by_key_and_window(&batches, batch_interval, window, slide, Form::Plain);
    let incremental =
        run_sum_by_key_and_window(&batches, batch_interval, window, slide, Form::Incremental);
    match (plain, incremental) {
        (Ok(p), Ok(i)) => {
            assert_eq!(p.outputs(), i.outputs());
            assert_eq!(p.total(), i.total(), "window totals differ");
        }
        (Err(_), Err(_)) => {}
        (p, i) => panic!("one form refused: plain {p:?}, incremental {i:?}"),
    }
});
