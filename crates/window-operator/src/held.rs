//! What the operator holds, for a memory bound ([`WindowComputation::held_state`]): window
//! states (live and retired), the elements their contents keep when the window function keeps
//! elements (an evictor, a list: Flink's `EvictingWindowOperator` keeps them in a `ListState`),
//! and keys. The elements are counted as they come and go (add, fire, purge, cleanup, restore),
//! so that asking costs nothing.
//!
//! [`WindowComputation::held_state`]: window_core::WindowComputation::held_state

use std::hash::Hash;

use window_assigners::WindowAssigner;
use window_core::{HeldState, Timestamp, TimestampedValue, MAP_ENTRY_OVERHEAD};
use window_triggers::Trigger;

use crate::function::WindowFunction;
use crate::keys::KeyId;
use crate::operator::{WindowOperator, WindowState};
use crate::timers::TimerStore;

impl<K, T, A, Tr, F, S> WindowOperator<K, T, A, Tr, F, S>
where
    K: Hash + Eq + Clone,
    A: WindowAssigner<T>,
    Tr: Trigger<T, A::Window>,
    F: WindowFunction<T>,
    S: TimerStore<A::Window>,
{
    /// Elements the contents `c` keep ([`WindowFunction::elements`]).
    pub(crate) fn held_in(function: &F, c: &Option<F::Acc>) -> usize {
        c.as_ref().map_or(0, |a| function.elements(a))
    }

    /// What the operator holds. Bytes: per window state its size, its map entry and two timer
    /// entries (cleanup and the trigger's); per kept element its size; per key its slot and map
    /// entries.
    pub(crate) fn held(&self) -> HeldState {
        let window = size_of::<WindowState<Tr::State, F::Acc>>()
            + size_of::<(KeyId, A::Window)>()
            + MAP_ENTRY_OVERHEAD
            + 2 * (size_of::<(Timestamp, A::Window)>() + MAP_ENTRY_OVERHEAD);
        let element = size_of::<TimestampedValue<T>>();
        let key = size_of::<K>() + 4 * MAP_ENTRY_OVERHEAD;
        let (windows, elements, keys) =
            (self.window_states(), self.held_elements, self.live_keys());
        HeldState {
            windows,
            elements,
            keys,
            bytes: windows * window + elements * element + keys * key,
        }
    }
}

#[cfg(test)]
mod tests {
    use window_assigners::{SessionWindows, SlidingWindows, TimeDomain, TumblingWindows};
    use window_core::{TimestampedValue, WindowComputation};
    use window_triggers::{AnyTrigger, CountTrigger};

    use crate::{AnyEvictor, CountEvictor, EvictMoment, Evicting, OperatorConfig, TimeEvictor};

    use super::*;

    /// A seeded linear congruential generator.
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n
        }
    }

    impl<K, T, A, Tr, F, S> WindowOperator<K, T, A, Tr, F, S>
    where
        K: Hash + Eq + Clone,
        A: WindowAssigner<T>,
        Tr: Trigger<T, A::Window>,
        F: WindowFunction<T>,
        S: TimerStore<A::Window>,
    {
        /// The elements held, counted by a scan of every window state.
        fn scanned_elements(&self) -> usize {
            let live: usize = self
                .windows
                .iter()
                .map(|(_, _, s)| Self::held_in(&self.function, &s.contents))
                .sum();
            let retired: usize = self
                .retired
                .iter()
                .map(|(_, _, _, s)| Self::held_in(&self.function, &s.contents))
                .sum();
            live + retired
        }
    }

    fn evictor(pick: u64) -> Option<AnyEvictor<f64>> {
        match pick {
            0 => None,
            1 => Some(AnyEvictor::Count(CountEvictor::of(2, EvictMoment::Before))),
            _ => Some(AnyEvictor::Time(TimeEvictor::of(3, EvictMoment::After))),
        }
    }

    fn trigger(pick: u64) -> AnyTrigger<f64> {
        let count = || AnyTrigger::Count(CountTrigger::of(3).expect("3 > 0"));
        match pick {
            0 => AnyTrigger::EventTime,
            1 => count(),
            2 => count().purging(),
            _ => AnyTrigger::EventTime.purging(),
        }
    }

    /// Drives `op` with random elements (some late) and watermarks; after every call the
    /// counted elements equal a scan's, and a snapshot restored gives the same count. Returns
    /// the most elements held.
    fn check<A, F>(op: &mut WindowOperator<u32, f64, A, AnyTrigger<f64>, F>, rng: &mut Lcg) -> usize
    where
        A: WindowAssigner<f64>,
        A::Window: serde::Serialize + serde::de::DeserializeOwned,
        F: WindowFunction<f64>,
        F::Acc: serde::Serialize + serde::de::DeserializeOwned,
    {
        let mut out = Vec::new();
        let (mut watermark, mut most) = (0, 0);
        for step in 0..400 {
            if step % 97 == 0 {
                let mut bytes = Vec::new();
                op.snapshot(&mut bytes).expect("snapshot");
                let held = op.held();
                op.held_elements = 0;
                op.restore(&bytes).expect("restore");
                assert_eq!(op.held(), held);
            }
            if rng.below(5) == 0 {
                watermark += rng.below(12) as i64;
                op.process_watermark(watermark, &mut out);
            } else {
                let t = watermark + rng.below(30) as i64 - 10;
                let key = rng.below(4) as u32;
                let _ = op.process_element(key, 1.0, t, &mut out);
            }
            assert_eq!(op.held().elements, op.scanned_elements());
            most = most.max(op.held().elements);
        }
        op.process_watermark(Timestamp::MAX, &mut out);
        assert_eq!(op.held().elements, op.scanned_elements());
        most
    }

    #[test]
    fn kept_elements_are_counted_as_a_scan_counts_them() {
        let mut rng = Lcg(16);
        for case in 0..36_u64 {
            let (e, tr, lateness) = (case % 3, (case / 3) % 4, (case / 12) as i64 * 5);
            let config = OperatorConfig {
                allowed_lateness: lateness,
                ..OperatorConfig::default()
            };
            let f = || Evicting::new(evictor(e), |els: &[TimestampedValue<f64>]| els.len());
            let d = TimeDomain::EventTime;
            let a = TumblingWindows::new(10, 0, d).expect("valid");
            let mut op = WindowOperator::new(a, trigger(tr), f(), config)
                .expect("valid")
                .with_snapshots();
            assert!(check(&mut op, &mut rng) > 0);
            let a = SlidingWindows::new(20, 5, 0, d).expect("valid");
            let mut op = WindowOperator::new(a, trigger(tr), f(), config)
                .expect("valid")
                .with_snapshots();
            assert!(check(&mut op, &mut rng) > 0);
            let a = SessionWindows::with_gap(4, d).expect("valid");
            let mut op = WindowOperator::new(a, trigger(tr), f(), config)
                .expect("valid")
                .with_snapshots();
            assert!(check(&mut op, &mut rng) > 0);
        }
    }
}
