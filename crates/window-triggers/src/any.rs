//! [`AnyTrigger`]: every built-in trigger behind one type, for triggers chosen at run time.

use window_core::{TimeDomain, Timestamp, TriggerResult, Window};

use crate::{
    ContinuousEventTimeTrigger, ContinuousProcessingTimeTrigger, CountTrigger, DeltaTrigger,
    EventTimeTrigger, NeverTrigger, ProcessingTimeTrigger, TimeTrigger,
};
use crate::{Trigger, TriggerContext};

/// One of the built-in triggers, chosen at run time (from the command line or a test case).
///
/// Statically typed code can use the trigger structs directly; this enum exists so that one
/// operator type can run any configuration. `Purging` nests any other trigger.
#[derive(Clone, Debug)]
pub enum AnyTrigger<T> {
    /// [`EventTimeTrigger`]; also Flink's `GlobalWindows` end-of-stream trigger, which behaves
    /// the same on the global window (fires at the final `i64::MAX` watermark).
    EventTime,
    /// [`ProcessingTimeTrigger`].
    ProcessingTime,
    /// [`CountTrigger`].
    Count(CountTrigger),
    /// [`crate::PurgingTrigger`] around another trigger.
    Purging(Box<AnyTrigger<T>>),
    /// [`NeverTrigger`].
    Never,
    /// [`ContinuousEventTimeTrigger`].
    ContinuousEventTime(ContinuousEventTimeTrigger),
    /// [`ContinuousProcessingTimeTrigger`].
    ContinuousProcessingTime(ContinuousProcessingTimeTrigger),
    /// [`DeltaTrigger`].
    Delta(DeltaTrigger<T>),
}

/// The state of an [`AnyTrigger`] for one (key, window): the union of what the built-in
/// triggers keep. Each trigger uses its own field; the others stay at their defaults. It goes
/// into snapshots of the window operator (serde, when `T` has it), as Flink checkpoints a
/// trigger's partitioned state.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AnyTriggerState<T> {
    count: u64,
    next_fire: Option<Timestamp>,
    last: Option<T>,
}

impl<T> Default for AnyTriggerState<T> {
    fn default() -> Self {
        Self {
            count: 0,
            next_fire: None,
            last: None,
        }
    }
}

/// Calls `$method` on the trigger inside `$self` with the matching field of the state(s).
macro_rules! dispatch {
    ($self:expr, $state:ident, |$t:ident, $s:ident| $call:expr) => {
        match $self {
            AnyTrigger::EventTime => {
                let $t = &EventTimeTrigger;
                let $s = &mut ();
                $call
            }
            AnyTrigger::ProcessingTime => {
                let $t = &ProcessingTimeTrigger;
                let $s = &mut ();
                $call
            }
            AnyTrigger::Never => {
                let $t = &NeverTrigger;
                let $s = &mut ();
                $call
            }
            AnyTrigger::Count($t) => {
                let $s = &mut $state.count;
                $call
            }
            AnyTrigger::ContinuousEventTime($t) => {
                let $s = &mut $state.next_fire;
                $call
            }
            AnyTrigger::ContinuousProcessingTime($t) => {
                let $s = &mut $state.next_fire;
                $call
            }
            AnyTrigger::Delta($t) => {
                let $s = &mut $state.last;
                $call
            }
            AnyTrigger::Purging(inner) => {
                let $t = inner.as_ref();
                let $s = $state;
                $call
            }
        }
    };
}

impl<T: Clone + std::fmt::Debug, W: Window> Trigger<T, W> for AnyTrigger<T> {
    type State = AnyTriggerState<T>;

    fn on_element<C: TriggerContext>(
        &self,
        element: &T,
        timestamp: Timestamp,
        window: &W,
        state: &mut Self::State,
        ctx: &mut C,
    ) -> TriggerResult {
        let r = dispatch!(self, state, |t, s| Trigger::<T, W>::on_element(
            t, element, timestamp, window, s, ctx
        ));
        self.purge_if_wrapped(r)
    }

    fn on_event_time<C: TriggerContext>(
        &self,
        time: Timestamp,
        window: &W,
        state: &mut Self::State,
        ctx: &mut C,
    ) -> TriggerResult {
        let r = dispatch!(self, state, |t, s| Trigger::<T, W>::on_event_time(
            t, time, window, s, ctx
        ));
        self.purge_if_wrapped(r)
    }

    fn on_processing_time<C: TriggerContext>(
        &self,
        time: Timestamp,
        window: &W,
        state: &mut Self::State,
        ctx: &mut C,
    ) -> TriggerResult {
        let r = dispatch!(self, state, |t, s| Trigger::<T, W>::on_processing_time(
            t, time, window, s, ctx
        ));
        self.purge_if_wrapped(r)
    }

    fn can_merge(&self) -> bool {
        match self {
            AnyTrigger::EventTime
            | AnyTrigger::ProcessingTime
            | AnyTrigger::Count(_)
            | AnyTrigger::ContinuousEventTime(_)
            | AnyTrigger::ContinuousProcessingTime(_) => true,
            AnyTrigger::Never | AnyTrigger::Delta(_) => false,
            AnyTrigger::Purging(inner) => Trigger::<T, W>::can_merge(inner.as_ref()),
        }
    }

    fn on_merge<C: TriggerContext>(
        &self,
        window: &W,
        merged: &[Self::State],
        state: &mut Self::State,
        ctx: &mut C,
    ) {
        match self {
            AnyTrigger::EventTime => {
                Trigger::<T, W>::on_merge(&EventTimeTrigger, window, &[], &mut (), ctx);
            }
            AnyTrigger::ProcessingTime => {
                Trigger::<T, W>::on_merge(&ProcessingTimeTrigger, window, &[], &mut (), ctx);
            }
            AnyTrigger::Count(t) => with_fields(
                merged,
                |s| s.count,
                |counts| Trigger::<T, W>::on_merge(t, window, counts, &mut state.count, ctx),
            ),
            AnyTrigger::ContinuousEventTime(t) => with_fields(
                merged,
                |s| s.next_fire,
                |fires| Trigger::<T, W>::on_merge(t, window, fires, &mut state.next_fire, ctx),
            ),
            AnyTrigger::ContinuousProcessingTime(t) => with_fields(
                merged,
                |s| s.next_fire,
                |fires| Trigger::<T, W>::on_merge(t, window, fires, &mut state.next_fire, ctx),
            ),
            AnyTrigger::Never | AnyTrigger::Delta(_) => {}
            AnyTrigger::Purging(inner) => {
                Trigger::<T, W>::on_merge(inner.as_ref(), window, merged, state, ctx);
            }
        }
    }

    fn clear<C: TriggerContext>(&self, window: &W, state: &mut Self::State, ctx: &mut C) {
        dispatch!(self, state, |t, s| Trigger::<T, W>::clear(
            t, window, s, ctx
        ));
    }

    fn describe(&self) -> String {
        match self {
            AnyTrigger::EventTime => Trigger::<T, W>::describe(&EventTimeTrigger),
            AnyTrigger::ProcessingTime => Trigger::<T, W>::describe(&ProcessingTimeTrigger),
            AnyTrigger::Never => Trigger::<T, W>::describe(&NeverTrigger),
            AnyTrigger::Count(t) => Trigger::<T, W>::describe(t),
            AnyTrigger::ContinuousEventTime(t) => Trigger::<T, W>::describe(t),
            AnyTrigger::ContinuousProcessingTime(t) => Trigger::<T, W>::describe(t),
            AnyTrigger::Delta(t) => Trigger::<T, W>::describe(t),
            AnyTrigger::Purging(inner) => {
                format!(
                    "PurgingTrigger({})",
                    Trigger::<T, W>::describe(inner.as_ref())
                )
            }
        }
    }
}

impl<T> From<EventTimeTrigger> for AnyTrigger<T> {
    fn from(_: EventTimeTrigger) -> Self {
        AnyTrigger::EventTime
    }
}

impl<T> From<ProcessingTimeTrigger> for AnyTrigger<T> {
    fn from(_: ProcessingTimeTrigger) -> Self {
        AnyTrigger::ProcessingTime
    }
}

impl<T> From<NeverTrigger> for AnyTrigger<T> {
    fn from(_: NeverTrigger) -> Self {
        AnyTrigger::Never
    }
}

impl<T> From<TimeTrigger> for AnyTrigger<T> {
    fn from(t: TimeTrigger) -> Self {
        match t.domain() {
            TimeDomain::EventTime => AnyTrigger::EventTime,
            TimeDomain::ProcessingTime => AnyTrigger::ProcessingTime,
        }
    }
}

impl<T> AnyTrigger<T> {
    /// Wraps this trigger in a purging trigger.
    #[must_use]
    pub fn purging(self) -> Self {
        AnyTrigger::Purging(Box::new(self))
    }

    fn purge_if_wrapped(&self, r: TriggerResult) -> TriggerResult {
        match self {
            AnyTrigger::Purging(_) if r.is_fire() => TriggerResult::FireAndPurge,
            _ => r,
        }
    }
}

/// Calls `f` with one field of each merged state: on the stack for up to eight states (a merge
/// joins a handful of windows), so that merging allocates nothing in the usual case.
fn with_fields<S, V: Copy + Default, R>(
    merged: &[S],
    field: impl Fn(&S) -> V,
    f: impl FnOnce(&[V]) -> R,
) -> R {
    const INLINE: usize = 8;
    if merged.len() <= INLINE {
        let mut buf = [V::default(); INLINE];
        for (b, s) in buf.iter_mut().zip(merged) {
            *b = field(s);
        }
        f(&buf[..merged.len()])
    } else {
        let fields: Vec<V> = merged.iter().map(field).collect();
        f(&fields)
    }
}
