//! A collecting output for the unit tests: key-window results as the contract states them.

use window_core::{TimeWindow, Timestamp, WindowOutput};

/// A value, or the window became empty.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum KeyWindowResult<O> {
    Value(O),
    Empty,
}

/// Results in firing order.
#[derive(Debug)]
pub(crate) struct Rows<K, O>(pub(crate) Vec<(K, TimeWindow, KeyWindowResult<O>)>);

impl<K, O> Rows<K, O> {
    pub(crate) fn new() -> Self {
        Self(Vec::new())
    }
}

impl<K: Clone, T, O> WindowOutput<K, TimeWindow, T, O> for Rows<K, O> {
    fn result(&mut self, key: &K, window: &TimeWindow, result: O, _: Timestamp) {
        self.0
            .push((key.clone(), *window, KeyWindowResult::Value(result)));
    }
    fn late(&mut self, _: K, _: Timestamp, _: T, _: Timestamp) {
        unreachable!("in-order processors have no late elements")
    }
    fn emptied(&mut self, key: &K, window: &TimeWindow, _: Timestamp) {
        self.0.push((key.clone(), *window, KeyWindowResult::Empty));
    }
}
