//! The writer thread's merge of pieces, against a naive reference: random runs of several
//! workers, cut into random pieces and handed over in random interleavings, give the rows that
//! writing each timestamp whole gives, in the same order; and nothing is written past what
//! every worker's pieces cover.

use super::*;
use crate::groups::tests::Rng;
use window_core::{TimeWindow, Window};
use window_io::{KeyDictionary, OnError};

/// Collects what is written: (key text, window end, value bits).
#[derive(Default)]
struct Collect {
    rows: Vec<(KeyId, i64, u64)>,
}

impl WindowOutput<KeyId, AnyWindow, Number, JobResult> for Collect {
    fn result(&mut self, key: &KeyId, window: &AnyWindow, result: JobResult, _watermark: i64) {
        let JobResult::Number(Some(v)) = result else {
            panic!("only numbers here")
        };
        self.rows.push((*key, window.max_timestamp(), v.to_bits()));
    }

    fn late(&mut self, _key: KeyId, _timestamp: i64, _value: Number, _watermark: i64) {
        panic!("no late rows here")
    }
}

fn state(workers: usize) -> SinkState<Collect> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut s = SinkState::new(
        Collect::default(),
        ErrorPolicy::new(OnError::Skip),
        vec![],
        stop,
    );
    s.workers = workers;
    s
}

/// One worker's rows of one timestamp in the canonical order, as (moment, window end, rank,
/// key, value): a few watermark steps (phase 0) and elements (phase 1); keys are the worker's
/// own (`key % workers == worker`), their rank their index.
fn run(
    rng: &mut Rng,
    worker: u64,
    workers: u64,
    keys: &[KeyId],
) -> Vec<(Order, i64, u64, KeyId, u64)> {
    let mut rows = Vec::new();
    let mut watermark = 0;
    for step in 0..1 + rng.below(6) {
        watermark += 1 + rng.below(50) as i64;
        let phase = u8::from(step % 2 == 1);
        let order = Order {
            watermark,
            phase,
            pos: step as u32,
            sub: phase,
        };
        let mut end = watermark - 60;
        for _ in 0..rng.below(5) {
            end += 1 + rng.below(9) as i64;
            for k in (worker..keys.len() as u64).step_by(workers as usize) {
                if rng.below(3) > 0 {
                    rows.push((order, end, k, keys[k as usize], rng.below(1000)));
                }
            }
        }
    }
    rows.sort_by_key(|r| (r.0, r.1, r.2));
    rows
}

/// `rows` as blocks of `worker`: cut where (moment, end) changes (with `rng`; without, one
/// block), each piece but the last saying what it covers.
fn blocks(
    mut rng: Option<&mut Rng>,
    worker: u32,
    rows: &[(Order, i64, u64, KeyId, u64)],
) -> Vec<Rows> {
    let mut out = Vec::new();
    let mut block = Rows::default();
    block.worker = worker;
    for (i, &(order, end, rank, key, value)) in rows.iter().enumerate() {
        let at = block.moment(order, 0);
        let window = block.window(&AnyWindow::Time(TimeWindow::new(end - 10, end + 1)));
        block.push(
            key,
            crate::rows::Kind::Number,
            (value as f64).to_bits(),
            window,
            at,
            rank,
        );
        let changes = rows.get(i + 1).is_some_and(|n| (n.0, n.1) > (order, end));
        if changes && rng.as_mut().is_some_and(|r| r.below(3) == 0) {
            block.piece = Some((order, end));
            let mut next = Rows::default();
            next.worker = worker;
            out.push(std::mem::replace(&mut block, next));
        }
    }
    out.push(block);
    out
}

#[test]
fn pieces_in_any_interleaving_write_what_whole_timestamps_write() {
    let dictionary = KeyDictionary::shared();
    let keys: Vec<KeyId> = (0..12)
        .map(|k| dictionary.intern(&format!("k{k}")))
        .collect();
    // Seeds where rows of several workers were written before the last message.
    let mut early = 0;
    for seed in 1..300u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let workers = 1 + rng.below(3);
        let runs: Vec<_> = (0..workers)
            .map(|w| run(&mut rng, w, workers, &keys))
            .collect();
        // The reference: every worker's rows whole, at once.
        let mut whole = state(workers as usize);
        let at_once = (0..workers)
            .map(|w| blocks(None, w as u32, &runs[w as usize]).remove(0))
            .collect();
        whole.write(at_once);
        // Pieces, in a random interleaving of the workers, a few blocks per message; the last
        // message is the end of the timestamp for half the seeds.
        let mut queues: Vec<VecDeque<Rows>> = (0..workers)
            .map(|w| blocks(Some(&mut rng), w as u32, &runs[w as usize]).into())
            .collect();
        let end_message = rng.below(2) == 0;
        let mut pieced = state(workers as usize);
        loop {
            let open: Vec<usize> = (0..queues.len())
                .filter(|&w| !queues[w].is_empty())
                .collect();
            if open.is_empty() || (end_message && rng.below(8) == 0) {
                break;
            }
            let mut message = Vec::new();
            for _ in 0..1 + rng.below(2) {
                let w = open[rng.below(open.len() as u64) as usize];
                message.extend(queues[w].pop_front());
            }
            pieced.piece(message);
            // Nothing written past what every worker covers: a prefix of the reference.
            let got = &pieced.out.rows;
            assert_eq!(
                got[..],
                whole.out.rows[..got.len()],
                "seed {seed}: not a prefix"
            );
        }
        early += usize::from(workers > 1 && !pieced.out.rows.is_empty());
        let rest: Vec<Rows> = queues.into_iter().flatten().collect();
        if end_message || !rest.is_empty() {
            pieced.write(rest);
        }
        assert_eq!(
            pieced.out.rows, whole.out.rows,
            "seed {seed}: {workers} workers"
        );
        assert!(
            !pieced.pending.any,
            "seed {seed}: the timestamp is complete"
        );
    }
    assert!(
        early > 50,
        "only {early} seeds wrote rows of several workers early"
    );
}
