//! The mapping of `docs/dstream.md`, checked: with events bucketed into batches by event time
//! (an event at `e` goes to the batch at `zero + (floor((e - zero) / I) + 1) · I`, i.e. the batch
//! at `T` holds `[T - I, T)`), `window(w, s)` at `t` holds exactly the events that Flink's
//! `SlidingEventTimeWindows.of(w, s, offset)` (our `window-assigners`) puts into the window
//! `[t - w, t)`, for the offset that makes window ends fall on `zero + k · s`. An empty DStream
//! window is a window Flink never creates. (The facts about Flink's windows are those of
//! `window-assigners`, checked against real Flink by the Flink conformance cases.)

use std::collections::BTreeMap;

use dstream_compat::StreamingContext;
use proptest::prelude::*;
use window_assigners::{SlidingWindows, TimeDomain, WindowAssigner};
use window_core::TimeWindow;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn windows_are_flink_sliding_windows(
        events in prop::collection::vec((0i64..20_000, 0u32..1000), 0..60),
        zero_batches in -3i64..3,
        w_batches in 1i64..7,
        s_batches in 1i64..4,
    ) {
        let interval = 1000;
        let zero = zero_batches * interval;
        let (window, slide) = (w_batches * interval, s_batches * interval);
        let events: Vec<(i64, u32)> = events.into_iter().map(|(t, id)| (zero + t, id)).collect();

        // DStream side: bucket by event time.
        let batches_needed = 20;
        let mut batches = vec![Vec::new(); batches_needed];
        for &(t, id) in &events {
            let index = usize::try_from((t - zero).div_euclid(interval)).unwrap();
            batches[index].push((t, id));
        }
        let ssc = StreamingContext::new(interval).unwrap();
        let windows = ssc.queue_stream(batches).window(window, slide).unwrap().collect_batches().unwrap();
        ssc.start_at(zero).unwrap();
        prop_assert_eq!(ssc.zero_time(), Some(zero));
        ssc.run_batches(batches_needed + 8).unwrap();

        // Flink side: window ends on zero + k·s.
        let offset = (zero - window).rem_euclid(slide);
        let assigner = SlidingWindows::new(window, slide, offset, TimeDomain::EventTime).unwrap();
        let mut flink: BTreeMap<TimeWindow, Vec<(i64, u32)>> = BTreeMap::new();
        let mut assigned = Vec::new();
        for &(t, id) in &events {
            assigned.clear();
            WindowAssigner::<(i64, u32)>::assign_windows(&assigner, &(t, id), t, 0, &mut assigned).unwrap();
            for w in &assigned {
                flink.entry(*w).or_default().push((t, id));
            }
        }

        let mut dstream_windows = 0;
        for (t, batch) in windows.take() {
            let mut ours = batch.to_vec();
            ours.sort_unstable();
            let mut theirs = flink.remove(&TimeWindow::new(t - window, t)).unwrap_or_default();
            theirs.sort_unstable();
            prop_assert_eq!(ours, theirs, "window ending at {}", t);
            dstream_windows += 1;
        }
        prop_assert_eq!(dstream_windows, (batches_needed + 8) as i64 / s_batches);
        // Every Flink window ends within the batches run (events end 6 s before the last one).
        prop_assert!(flink.is_empty(), "windows the DStream never emitted: {:?}", flink.keys().collect::<Vec<_>>());
    }
}
