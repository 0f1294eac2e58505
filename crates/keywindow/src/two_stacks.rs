//! The two-stacks FIFO aggregator that holds each key's closed slices in
//! [`crate::sliced`]: amortised O(1) push, evict and query of the aggregate of all entries,
//! with `merge` only (no retraction). Its own file because it is a data structure with its own
//! invariant and test, independent of slicing and firing.

use std::collections::VecDeque;

use window_core::AggregateFunction;

/// A FIFO of (slice start, partial aggregate) with amortised O(1) push, evict and query: the
/// "two-stacks lite" form of two-stacks (Tangwongsan, Hirzel, Schneider: "In-order
/// sliding-window aggregation in worst-case constant time", VLDB J. 2021), both stacks in one
/// ring buffer.
///
/// `items[..front]` is the front stack, oldest first; each of its entries holds the aggregate of
/// itself and every newer front entry (a suffix aggregate), so `items[0]` holds the whole front.
/// `items[front..]` is the back stack: plain partials, whose aggregate is `back_agg`. Evicting
/// pops the oldest entry; when the front runs empty, the back is turned into suffix aggregates
/// in place (a flip). One buffer, held inline by the key, so reaching a slice costs one hop.
#[derive(Clone, Debug)]
pub(crate) struct TwoStacks<A> {
    items: VecDeque<(i64, A)>,
    front: usize,
    back_agg: Option<A>,
}

impl<A: Clone> TwoStacks<A> {
    pub(crate) const fn new() -> Self {
        Self {
            items: VecDeque::new(),
            front: 0,
            back_agg: None,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    pub(crate) fn push<T, F: AggregateFunction<T, Acc = A>>(&mut self, f: &F, start: i64, acc: A) {
        match self.back_agg.as_mut() {
            Some(agg) => f.merge(agg, acc.clone()),
            None => self.back_agg = Some(acc.clone()),
        }
        self.items.push_back((start, acc));
    }

    pub(crate) fn newest_start(&self) -> Option<i64> {
        self.items.back().map(|e| e.0)
    }

    /// Drops every slice starting before `start`; returns how many went.
    pub(crate) fn evict_before<T, F: AggregateFunction<T, Acc = A>>(
        &mut self,
        f: &F,
        start: i64,
    ) -> usize {
        let mut evicted = 0;
        while self.items.front().is_some_and(|e| e.0 < start) {
            if self.front == 0 {
                // Flip: the back becomes the front, as suffix aggregates, newest first.
                let mut newer: Option<A> = None;
                for e in self.items.iter_mut().rev() {
                    if let Some(n) = newer {
                        f.merge(&mut e.1, n);
                    }
                    newer = Some(e.1.clone());
                }
                self.front = self.items.len();
                self.back_agg = None;
            }
            self.items.pop_front();
            self.front -= 1;
            evicted += 1;
        }
        if self.items.is_empty() {
            self.items = VecDeque::new();
        }
        evicted
    }

    /// The aggregate of every slice, merged into `into`.
    pub(crate) fn merge_into<T, F: AggregateFunction<T, Acc = A>>(&self, f: &F, into: &mut A) {
        if self.front > 0 {
            if let Some(e) = self.items.front() {
                f.merge(into, e.1.clone());
            }
        }
        if let Some(b) = &self.back_agg {
            f.merge(into, b.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use window_core::NumericAggregate;

    #[test]
    fn two_stacks_matches_a_plain_fifo() {
        let f = NumericAggregate::Max;
        let mut s = TwoStacks::new();
        let mut fifo: Vec<(i64, f64)> = Vec::new();
        let mut seed = 12345_u64;
        for step in 0..5000_i64 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            if seed % 3 != 0 {
                let v = (seed % 1000) as f64;
                let mut acc = AggregateFunction::<f64>::create_accumulator(&f);
                AggregateFunction::<f64>::add(&f, &mut acc, &v);
                s.push(&f, step, acc);
                fifo.push((step, v));
            } else {
                let cut = step - (seed % 20) as i64;
                s.evict_before(&f, cut);
                fifo.retain(|e| e.0 >= cut);
            }
            let mut acc = AggregateFunction::<f64>::create_accumulator(&f);
            s.merge_into(&f, &mut acc);
            let expected = fifo
                .iter()
                .map(|e| e.1)
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
            assert_eq!(AggregateFunction::<f64>::get_result(&f, &acc), expected);
            assert_eq!(s.len(), fifo.len());
        }
    }
}
