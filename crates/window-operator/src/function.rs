//! What a window keeps and what it emits: incremental aggregation or the full contents.
//!
//! Flink's window operator stores, per (key, window), either an accumulator (with an
//! `AggregateFunction` or `ReduceFunction`: incremental aggregation) or the list of elements
//! (with a `ProcessWindowFunction` or an evictor: the function sees everything when the window
//! fires). [`WindowFunction`] is that choice as a trait: [`Incremental`] wraps an
//! [`AggregateFunction`], [`FullWindow`] keeps every element and applies a function to them.

use std::fmt;

use window_core::{AggregateFunction, Timestamp, TimestampedValue};

/// What a window function may know when its window fires: the operator's clocks (Flink's
/// `EvictorContext` / `ProcessWindowFunction.Context`, reduced to the time fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FireContext {
    /// The operator's event-time watermark in ms.
    pub watermark: Timestamp,
    /// The operator's processing time in ms.
    pub processing_time: Timestamp,
}

impl Default for FireContext {
    fn default() -> Self {
        Self {
            watermark: Timestamp::MIN,
            processing_time: Timestamp::MIN,
        }
    }
}

/// How a window's contents are kept and turned into a result.
///
/// `Acc` is the per-window state; the operator creates it when the first element arrives,
/// drops it on purge, and merges two of them when session windows merge.
pub trait WindowFunction<T> {
    /// Per-window state.
    type Acc: Clone;
    /// The emitted result.
    type Out;

    /// An empty window state.
    fn create(&self) -> Self::Acc;
    /// Adds an element with its timestamp (ms).
    fn add(&self, acc: &mut Self::Acc, value: &T, timestamp: Timestamp);
    /// Folds `other` into `acc` (session merges).
    fn merge(&self, acc: &mut Self::Acc, other: Self::Acc);
    /// The result when the window fires. May change `acc` (an evictor removes elements for good).
    fn fire(&self, acc: &mut Self::Acc, ctx: &FireContext) -> Self::Out;
    /// Whether `acc` holds nothing any more (only an evicting function can empty a window); an
    /// empty window state is dropped after firing, as Flink drops an empty list state.
    fn is_empty(&self, acc: &Self::Acc) -> bool {
        let _ = acc;
        false
    }
    /// Elements `acc` keeps: its length for a function that keeps the window's elements
    /// ([`FullWindow`], an evictor's [`crate::Evicting`]), 0 (the default) for an accumulator.
    /// The operator counts them against its memory bound (`WindowComputation::held_state`).
    fn elements(&self, acc: &Self::Acc) -> usize {
        let _ = acc;
        0
    }
}

/// Incremental aggregation with an [`AggregateFunction`]: one accumulator per window, no raw
/// elements kept (Flink's `WindowedStream.aggregate`).
#[derive(Clone, Copy, Debug)]
pub struct Incremental<F>(pub F);

impl<T, F: AggregateFunction<T>> WindowFunction<T> for Incremental<F> {
    type Acc = F::Acc;
    type Out = F::Out;

    fn create(&self) -> F::Acc {
        self.0.create_accumulator()
    }

    fn add(&self, acc: &mut F::Acc, value: &T, _timestamp: Timestamp) {
        self.0.add(acc, value);
    }

    fn merge(&self, acc: &mut F::Acc, other: F::Acc) {
        self.0.merge(acc, other);
    }

    fn fire(&self, acc: &mut F::Acc, _ctx: &FireContext) -> F::Out {
        self.0.get_result(acc)
    }
}

/// Keeps every element of the window, in arrival order, and applies `f` to all of them when the
/// window fires (Flink's `WindowedStream.process` with a `ProcessWindowFunction`).
///
/// # Examples
/// ```
/// use window_operator::{FireContext, FullWindow, WindowFunction};
/// use window_core::TimestampedValue;
/// let values = FullWindow::new(|els: &[TimestampedValue<f64>]| els.iter().map(|e| e.value).collect::<Vec<_>>());
/// let mut acc = values.create();
/// values.add(&mut acc, &2.0, 7);
/// values.add(&mut acc, &1.0, 3);
/// assert_eq!(values.fire(&mut acc, &FireContext::default()), vec![2.0, 1.0]);
/// ```
#[derive(Clone, Copy)]
pub struct FullWindow<G> {
    f: G,
}

impl<G> FullWindow<G> {
    /// Wraps the function over the window's elements.
    pub const fn new(f: G) -> Self {
        Self { f }
    }
}

impl<G> fmt::Debug for FullWindow<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FullWindow(..)")
    }
}

impl<T: Clone, O, G: Fn(&[TimestampedValue<T>]) -> O> WindowFunction<T> for FullWindow<G> {
    type Acc = Vec<TimestampedValue<T>>;
    type Out = O;

    fn create(&self) -> Self::Acc {
        Vec::new()
    }

    fn add(&self, acc: &mut Self::Acc, value: &T, timestamp: Timestamp) {
        acc.push(TimestampedValue {
            timestamp,
            value: value.clone(),
        });
    }

    fn merge(&self, acc: &mut Self::Acc, mut other: Self::Acc) {
        acc.append(&mut other);
    }

    fn fire(&self, acc: &mut Self::Acc, _ctx: &FireContext) -> O {
        (self.f)(acc)
    }

    fn elements(&self, acc: &Self::Acc) -> usize {
        acc.len()
    }
}
