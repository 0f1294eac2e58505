//! What a context's streams remember, as a memory bound counts it
//! (`StreamingContext::retained_records`): the records of every remembered batch, each stream
//! once.

use dstream_compat::{Error, Retention, StreamingContext};

/// 1 s batches, a 3 s window sliding by 1 s over a queue input that forgets its batches. The
/// output remembers its slide, 1 batch; the window asks its parent for its own remember duration
/// plus its window, 4 s: 4 batches. After the batch at `t` the queue input holds the batches in
/// `(t - 4 s, t]` and the window its one batch at `t`, the records of `(t - 3 s, t]`.
#[test]
fn the_remembered_batches_of_every_stream_count_once() -> Result<(), Error> {
    let ssc = StreamingContext::new(1000)?;
    let (queue, input) = ssc.queue_input_with::<u32>(Retention::UntilForgotten);
    let windowed = input.window(3000, 1000)?;
    windowed.foreach_batch(|_, _| {})?;
    // The same input twice more (a second output on it) is still one stream.
    input.foreach_batch(|_, _| {})?;
    ssc.start_at(0)?;
    assert_eq!(ssc.retained_records(), 0);
    let sizes = [1_usize, 2, 3, 4, 5, 6];
    for (i, &n) in sizes.iter().enumerate() {
        queue.push(vec![7; n]);
        ssc.run_batch()?;
        let input_held: usize = sizes[i.saturating_sub(3)..=i].iter().sum();
        let window_held: usize = sizes[i.saturating_sub(2)..=i].iter().sum();
        assert_eq!(
            ssc.retained_records(),
            input_held + window_held,
            "batch {i}"
        );
    }
    // Empty batches: the window and the input forget the old ones.
    for _ in 0..4 {
        queue.push(Vec::new());
        ssc.run_batch()?;
    }
    assert_eq!(ssc.retained_records(), 0);
    Ok(())
}
