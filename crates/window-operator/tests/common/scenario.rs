//! Helpers shared by the scenario tests of the window operator (`scenarios_time.rs`,
//! `scenarios_triggers.rs`, included there with `#[path]`): the notation of
//! `tests/conformance/scenarios.md` as constructors (`tw`, `res`, `late`), the operator
//! configuration, and the window functions the rows use. Its own file so that each scenario file
//! stays short and neither repeats them.

use window_assigners::{SessionWindows, TimeDomain, TumblingWindows};
use window_core::{NumericAggregate, TimeWindow, Timestamp, TimestampedValue};
use window_operator::{Emitted, FullWindow, Incremental, LateDataPolicy, OperatorConfig};

pub(crate) const MIN: Timestamp = i64::MIN;
pub(crate) const MAX: Timestamp = i64::MAX;

/// Collected output of an operator over `&str` keys and `f64` values.
pub(crate) type Out<W, R> = Vec<Emitted<&'static str, W, f64, R>>;
/// A window's contents: `(timestamp, value)` in the window's order.
pub(crate) type Contents = Vec<(Timestamp, f64)>;
pub(crate) type ContentsFn = fn(&[TimestampedValue<f64>]) -> Contents;

pub(crate) fn contents_of(els: &[TimestampedValue<f64>]) -> Contents {
    els.iter().map(|e| (e.timestamp, e.value)).collect()
}

/// Full-window function: the window's elements as `(timestamp, value)`.
pub(crate) fn contents() -> FullWindow<ContentsFn> {
    FullWindow::new(contents_of as ContentsFn)
}

/// Incremental sum; its result is `Some(sum)`.
pub(crate) fn sum() -> Incremental<NumericAggregate> {
    Incremental(NumericAggregate::Sum)
}

pub(crate) fn config(allowed_lateness: i64, side_output: bool) -> OperatorConfig {
    OperatorConfig {
        allowed_lateness,
        late_data: if side_output {
            LateDataPolicy::SideOutput
        } else {
            LateDataPolicy::Drop
        },
    }
}

pub(crate) fn tw(start: Timestamp, end: Timestamp) -> TimeWindow {
    TimeWindow::new(start, end)
}

pub(crate) fn tumbling(size: i64) -> TumblingWindows {
    TumblingWindows::new(size, 0, TimeDomain::EventTime).unwrap()
}

pub(crate) fn sessions(gap: i64) -> SessionWindows<f64> {
    SessionWindows::with_gap(gap, TimeDomain::EventTime).unwrap()
}

pub(crate) fn res<W, R>(
    key: &'static str,
    window: W,
    result: R,
    watermark: Timestamp,
) -> Emitted<&'static str, W, f64, R> {
    Emitted::Result {
        key,
        window,
        result,
        watermark,
    }
}

pub(crate) fn late<W, R>(
    key: &'static str,
    timestamp: Timestamp,
    value: f64,
    watermark: Timestamp,
) -> Emitted<&'static str, W, f64, R> {
    Emitted::Late {
        key,
        timestamp,
        value,
        watermark,
    }
}
