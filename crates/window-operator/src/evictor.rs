//! Evictors: remove elements from a window when it fires, before or after the window function.
//!
//! With an evictor the operator cannot pre-aggregate: it keeps the window's elements (in arrival
//! order) and, when the trigger fires, hands them to the evictor, then to the window function,
//! then (for evict-after) to the evictor again. What the evictor removes is gone for good: a later
//! firing of the same window sees only what is left (Flink's `EvictingWindowOperator`, which
//! rewrites the window state after each firing).
//!
//! The three built-in evictors follow Flink's `CountEvictor`, `TimeEvictor` and `DeltaEvictor`.
//! [`Evicting`] is the [`WindowFunction`] that applies an evictor around a function over the
//! elements.

use std::fmt;

use window_core::{Timestamp, TimestampedValue};
use window_triggers::DeltaFunction;

use crate::function::{FireContext, FullWindow, WindowFunction};

/// When an evictor runs: before the window function sees the elements, or after.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum EvictMoment {
    /// Before the window function (Flink's default, `doEvictAfter = false`).
    #[default]
    Before,
    /// After the window function.
    After,
}

/// Removes elements from a firing window (Flink's `Evictor`).
///
/// `elements` are the window's elements in arrival order; remove in place. The evictor is called
/// with [`EvictMoment::Before`] before the window function and [`EvictMoment::After`] after it,
/// and acts at the moment it was configured for.
pub trait Evictor<T> {
    /// Removes what this evictor removes at `moment`.
    fn evict(
        &self,
        elements: &mut Vec<TimestampedValue<T>>,
        moment: EvictMoment,
        ctx: &FireContext,
    );
}

/// Keeps at most `max_count` elements, dropping from the front in arrival order (Flink's
/// `CountEvictor`).
#[derive(Clone, Copy, Debug)]
pub struct CountEvictor {
    max_count: usize,
    moment: EvictMoment,
}

impl CountEvictor {
    /// Keeps the last `max_count` elements (0 keeps none), evicting at `moment`.
    #[must_use]
    pub fn of(max_count: usize, moment: EvictMoment) -> Self {
        Self { max_count, moment }
    }
}

impl<T> Evictor<T> for CountEvictor {
    fn evict(
        &self,
        elements: &mut Vec<TimestampedValue<T>>,
        moment: EvictMoment,
        _ctx: &FireContext,
    ) {
        if moment == self.moment && elements.len() > self.max_count {
            let excess = elements.len() - self.max_count;
            elements.drain(..excess);
        }
    }
}

/// Keeps only elements with `timestamp > max timestamp in the window - window_size` (Flink's
/// `TimeEvictor`): the element exactly at the cutoff is evicted.
#[derive(Clone, Copy, Debug)]
pub struct TimeEvictor {
    window_size: i64,
    moment: EvictMoment,
}

impl TimeEvictor {
    /// Keeps the last `window_size` ms of elements, evicting at `moment`.
    #[must_use]
    pub fn of(window_size: i64, moment: EvictMoment) -> Self {
        Self {
            window_size,
            moment,
        }
    }
}

impl<T> Evictor<T> for TimeEvictor {
    fn evict(
        &self,
        elements: &mut Vec<TimestampedValue<T>>,
        moment: EvictMoment,
        _ctx: &FireContext,
    ) {
        if moment != self.moment {
            return;
        }
        let Some(max) = elements.iter().map(|e| e.timestamp).max() else {
            return;
        };
        let cutoff = window_core::time::sub(max, self.window_size);
        elements.retain(|e| e.timestamp > cutoff);
    }
}

/// Evicts every element whose delta to the *last* element of the window is at least `threshold`
/// (Flink's `DeltaEvictor`, with `delta(element, last)`).
#[derive(Clone)]
pub struct DeltaEvictor<T> {
    threshold: f64,
    delta: DeltaFunction<T>,
    moment: EvictMoment,
}

impl<T> DeltaEvictor<T> {
    /// A delta evictor with `threshold` and `delta(element, last)`, evicting at `moment`.
    #[must_use]
    pub fn of(threshold: f64, delta: DeltaFunction<T>, moment: EvictMoment) -> Self {
        Self {
            threshold,
            delta,
            moment,
        }
    }
}

impl<T> fmt::Debug for DeltaEvictor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeltaEvictor")
            .field("threshold", &self.threshold)
            .field("moment", &self.moment)
            .finish_non_exhaustive()
    }
}

impl<T: Clone> Evictor<T> for DeltaEvictor<T> {
    fn evict(
        &self,
        elements: &mut Vec<TimestampedValue<T>>,
        moment: EvictMoment,
        _ctx: &FireContext,
    ) {
        if moment != self.moment {
            return;
        }
        let Some(last) = elements.last().map(|e| e.value.clone()) else {
            return;
        };
        elements.retain(|e| (self.delta)(&e.value, &last) < self.threshold);
    }
}

/// One of the built-in evictors, chosen at run time.
#[derive(Clone, Debug)]
pub enum AnyEvictor<T> {
    /// [`CountEvictor`].
    Count(CountEvictor),
    /// [`TimeEvictor`].
    Time(TimeEvictor),
    /// [`DeltaEvictor`].
    Delta(DeltaEvictor<T>),
}

impl<T: Clone> Evictor<T> for AnyEvictor<T> {
    fn evict(
        &self,
        elements: &mut Vec<TimestampedValue<T>>,
        moment: EvictMoment,
        ctx: &FireContext,
    ) {
        match self {
            AnyEvictor::Count(e) => e.evict(elements, moment, ctx),
            AnyEvictor::Time(e) => e.evict(elements, moment, ctx),
            AnyEvictor::Delta(e) => e.evict(elements, moment, ctx),
        }
    }
}

/// No evictor, or one: `None` evicts nothing (a window function that keeps its elements and may
/// or may not evict, chosen at run time).
impl<T, E: Evictor<T>> Evictor<T> for Option<E> {
    fn evict(
        &self,
        elements: &mut Vec<TimestampedValue<T>>,
        moment: EvictMoment,
        ctx: &FireContext,
    ) {
        if let Some(e) = self {
            e.evict(elements, moment, ctx);
        }
    }
}

/// An evictor behind a box (chosen at run time, as the fluent API keeps it).
impl<T, E: Evictor<T> + ?Sized> Evictor<T> for Box<E> {
    fn evict(
        &self,
        elements: &mut Vec<TimestampedValue<T>>,
        moment: EvictMoment,
        ctx: &FireContext,
    ) {
        (**self).evict(elements, moment, ctx);
    }
}

/// A window function that keeps the elements, applies an evictor around `f`, and keeps only
/// what the evictor left (Flink's `EvictingWindowOperator`).
///
/// # Examples
/// ```
/// use window_operator::{CountEvictor, EvictMoment, Evicting, FireContext, WindowFunction};
/// use window_core::TimestampedValue;
/// let last_two = Evicting::new(CountEvictor::of(2, EvictMoment::Before), |els: &[TimestampedValue<f64>]| {
///     els.iter().map(|e| e.value).sum::<f64>()
/// });
/// let mut acc = last_two.create();
/// for (t, v) in [(1, 1.0), (2, 2.0), (3, 4.0)] { last_two.add(&mut acc, &v, t); }
/// assert_eq!(last_two.fire(&mut acc, &FireContext::default()), 6.0);
/// assert_eq!(acc.len(), 2); // eviction is permanent
/// ```
#[derive(Clone)]
pub struct Evicting<E, G> {
    evictor: E,
    /// Keeps the elements and applies `f`; the evictor runs around it.
    contents: FullWindow<G>,
}

impl<E, G> Evicting<E, G> {
    /// `f` over the elements left by `evictor`.
    pub const fn new(evictor: E, f: G) -> Self {
        Self {
            evictor,
            contents: FullWindow::new(f),
        }
    }
}

impl<E: fmt::Debug, G> fmt::Debug for Evicting<E, G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Evicting")
            .field("evictor", &self.evictor)
            .finish_non_exhaustive()
    }
}

impl<T, O, E, G> WindowFunction<T> for Evicting<E, G>
where
    T: Clone,
    E: Evictor<T>,
    G: Fn(&[TimestampedValue<T>]) -> O,
{
    type Acc = Vec<TimestampedValue<T>>;
    type Out = O;

    fn create(&self) -> Self::Acc {
        self.contents.create()
    }

    fn add(&self, acc: &mut Self::Acc, value: &T, timestamp: Timestamp) {
        self.contents.add(acc, value, timestamp);
    }

    fn merge(&self, acc: &mut Self::Acc, other: Self::Acc) {
        self.contents.merge(acc, other);
    }

    fn fire(&self, acc: &mut Self::Acc, ctx: &FireContext) -> O {
        self.evictor.evict(acc, EvictMoment::Before, ctx);
        let out = self.contents.fire(acc, ctx);
        self.evictor.evict(acc, EvictMoment::After, ctx);
        out
    }

    fn is_empty(&self, acc: &Self::Acc) -> bool {
        acc.is_empty()
    }

    fn elements(&self, acc: &Self::Acc) -> usize {
        acc.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn els(v: &[(i64, f64)]) -> Vec<TimestampedValue<f64>> {
        v.iter()
            .map(|&(timestamp, value)| TimestampedValue { timestamp, value })
            .collect()
    }

    #[test]
    fn count_evictor_drops_from_the_front_in_arrival_order() {
        let mut e = els(&[(5, 1.0), (1, 2.0), (3, 3.0)]);
        let ctx = FireContext::default();
        CountEvictor::of(2, EvictMoment::After).evict(&mut e, EvictMoment::Before, &ctx);
        assert_eq!(e.len(), 3, "acts only at its moment");
        CountEvictor::of(2, EvictMoment::After).evict(&mut e, EvictMoment::After, &ctx);
        assert_eq!(e, els(&[(1, 2.0), (3, 3.0)]));
    }

    #[test]
    fn time_evictor_evicts_the_element_at_the_cutoff() {
        // Flink's TimeEvictor keeps ts > max - size.
        let mut e = els(&[(10, 1.0), (15, 2.0), (11, 3.0), (20, 4.0)]);
        TimeEvictor::of(5, EvictMoment::Before).evict(
            &mut e,
            EvictMoment::Before,
            &FireContext::default(),
        );
        assert_eq!(e, els(&[(20, 4.0)]));
    }

    #[test]
    fn delta_evictor_compares_with_the_last_element() {
        let abs: DeltaFunction<f64> = Arc::new(|a: &f64, b: &f64| (a - b).abs());
        let mut e = els(&[(1, 1.0), (2, 8.0), (3, 6.0), (4, 7.0)]);
        DeltaEvictor::of(3.0, abs, EvictMoment::Before).evict(
            &mut e,
            EvictMoment::Before,
            &FireContext::default(),
        );
        // |1-7| = 6 >= 3 evicted; |8-7| = 1, |6-7| = 1, |7-7| = 0 kept.
        assert_eq!(e, els(&[(2, 8.0), (3, 6.0), (4, 7.0)]));
    }
}
