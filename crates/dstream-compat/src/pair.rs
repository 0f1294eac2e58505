//! The operations of streams of `(key, value)` pairs (Spark's `PairDStreamFunctions`):
//! per-batch `reduce_by_key`, `group_by_key`, `combine_by_key`, and the keyed windows
//! `reduce_by_key_and_window` (plain and incremental) and `group_by_key_and_window`.
//!
//! The incremental form is Spark's `ReducedWindowedDStream`: the window at `t` is the window at
//! `t - slide`, inverse-reduced by the per-batch results that left it and reduced with the ones
//! that entered it. Its one deliberate difference from Spark is in which batches count as
//! "left" and "entered" when the window is shorter than the slide (see
//! [`DStream::reduce_by_key_and_window_inv`]).

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::hash::Hash;
use std::rc::Rc;

use ahash::AHashMap;

use crate::batch::Batch;
use crate::codec::{CodecResult, Codecs};
use crate::dstream::{check_window, DStream};
use crate::error::{Error, Result};
use crate::graph::{names, AnyNode, Compute, Node};
use crate::snapshot::StreamState;
use crate::Partitions;

pub(crate) type ReduceFn<V> = Rc<dyn Fn(&V, &V) -> V>;
type MergeFn<C, V> = Rc<dyn Fn(&mut C, &V)>;
type FilterFn<K, V> = Rc<dyn Fn(&K, &V) -> bool>;

/// The functions and options of the incremental `reduceByKeyAndWindow` (Spark's
/// `reduceByKeyAndWindow(reduceFunc, invReduceFunc, windowDuration, slideDuration,
/// numPartitions, filterFunc)`), for
/// [`DStream::reduce_by_key_and_window_inv`].
///
/// `reduce` must be associative and commutative; `inverse(reduce(a, b), b) == a` must hold
/// (`+` and `-`). The optional filter keeps a key in the window's result, and in the state
/// the next window is computed from, only while it returns true.
///
/// # Examples
/// ```
/// use dstream_compat::{InverseReduce, Partitions};
///
/// let spec = InverseReduce::new(|a: &i64, b: &i64| a + b, |a: &i64, b: &i64| a - b)
///     .with_filter(|_key: &&str, sum: &i64| *sum != 0)
///     .with_partitions(Partitions::fixed(4)?);
/// # let _ = spec;
/// # Ok::<(), dstream_compat::Error>(())
/// ```
pub struct InverseReduce<K, V> {
    reduce: ReduceFn<V>,
    inverse: ReduceFn<V>,
    filter: Option<FilterFn<K, V>>,
    partitions: Partitions,
}

impl<K, V> fmt::Debug for InverseReduce<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InverseReduce")
            .field("filter", &self.filter.is_some())
            .field("partitions", &self.partitions)
            .finish_non_exhaustive()
    }
}

impl<K, V> Clone for InverseReduce<K, V> {
    fn clone(&self) -> Self {
        InverseReduce {
            reduce: Rc::clone(&self.reduce),
            inverse: Rc::clone(&self.inverse),
            filter: self.filter.clone(),
            partitions: self.partitions,
        }
    }
}

impl<K, V> InverseReduce<K, V> {
    /// The reduce function and its inverse (Spark's `reduceFunc` and `invReduceFunc`), no
    /// filter, the default partitions.
    #[must_use]
    pub fn new(
        reduce: impl Fn(&V, &V) -> V + 'static,
        inverse: impl Fn(&V, &V) -> V + 'static,
    ) -> InverseReduce<K, V> {
        InverseReduce {
            reduce: Rc::new(reduce),
            inverse: Rc::new(inverse),
            filter: None,
            partitions: Partitions::Default,
        }
    }

    /// Keeps only the keys for which `keep(key, window value)` is true (Spark's `filterFunc`),
    /// in the output and in the state.
    #[must_use]
    pub fn with_filter(mut self, keep: impl Fn(&K, &V) -> bool + 'static) -> InverseReduce<K, V> {
        self.filter = Some(Rc::new(keep));
        self
    }

    /// Spark's `numPartitions`: recorded, does not change results.
    #[must_use]
    pub fn with_partitions(mut self, partitions: Partitions) -> InverseReduce<K, V> {
        self.partitions = partitions;
        self
    }
}

impl<K, V> DStream<(K, V)>
where
    K: Clone + Eq + Hash + 'static,
    V: Clone + 'static,
{
    /// Spark's `PairDStreamFunctions.combineByKey`: per batch, one record per key, its first
    /// value through `create` and each further value merged in with `merge`. Keys come out in
    /// the order they first appear in the batch.
    pub fn combine_by_key<C: Clone + 'static>(
        &self,
        create: impl Fn(&V) -> C + 'static,
        merge: impl Fn(&mut C, &V) + 'static,
        partitions: Partitions,
    ) -> DStream<(K, C)> {
        let mut meta = self.ctx.new_meta(names::SHUFFLED, self.slide_duration());
        meta.partitions = Some(partitions);
        let op = CombineOp {
            parent: Rc::clone(&self.node),
            create: Rc::new(create),
            merge: Rc::new(merge),
        };
        DStream::from_node(self.ctx.clone(), Node::new(meta, op))
    }

    /// Spark's `PairDStreamFunctions.reduceByKey(reduceFunc, numPartitions)`: per batch, one
    /// record per key with `f` folded over its values.
    pub fn reduce_by_key(
        &self,
        f: impl Fn(&V, &V) -> V + 'static,
        partitions: Partitions,
    ) -> DStream<(K, V)> {
        self.combine_by_key(V::clone, move |acc, v| *acc = f(acc, v), partitions)
    }

    /// Spark's `PairDStreamFunctions.groupByKey(numPartitions)`: per batch, one record per key
    /// with all its values in arrival order.
    pub fn group_by_key(&self, partitions: Partitions) -> DStream<(K, Vec<V>)> {
        self.combine_by_key(
            |v| vec![v.clone()],
            |acc, v| acc.push(v.clone()),
            partitions,
        )
    }

    /// Spark's `reduceByKeyAndWindow(reduceFunc, windowDuration, slideDuration,
    /// numPartitions)`, the plain form: every `slide` ms, one record per key that has values
    /// in the window `(t - window, t]`, with `f` folded over them (a sum of 0 is still a
    /// record). Built as Spark builds it: `reduce_by_key`, `window`, `reduce_by_key`. Any
    /// associative `f` works (`max`, `min`).
    ///
    /// # Errors
    /// As [`DStream::window`] (stream `WindowedDStream`).
    ///
    /// # Examples
    /// ```
    /// use dstream_compat::{Partitions, StreamingContext};
    ///
    /// let ssc = StreamingContext::new(1000)?;
    /// let pairs = ssc.queue_stream(vec![vec![("a", 1)], vec![("a", 2), ("b", 1)], vec![]]);
    /// let sums = pairs
    ///     .reduce_by_key_and_window(|a, b| a + b, 2000, 1000, Partitions::Default)?
    ///     .collect_batches()?;
    /// ssc.start()?;
    /// ssc.run_batches(3)?;
    /// let mut got: Vec<(i64, Vec<(&str, i32)>)> =
    ///     sums.take().into_iter().map(|(t, b)| (t, b.into_vec())).collect();
    /// got.iter_mut().for_each(|(_, b)| b.sort());
    /// assert_eq!(got, [
    ///     (1000, vec![("a", 1)]),
    ///     (2000, vec![("a", 3), ("b", 1)]),
    ///     (3000, vec![("a", 2), ("b", 1)]),
    /// ]);
    /// # Ok::<(), dstream_compat::Error>(())
    /// ```
    pub fn reduce_by_key_and_window(
        &self,
        f: impl Fn(&V, &V) -> V + 'static,
        window: i64,
        slide: i64,
        partitions: Partitions,
    ) -> Result<DStream<(K, V)>> {
        let f: ReduceFn<V> = Rc::new(f);
        let g = Rc::clone(&f);
        Ok(self
            .reduce_by_key(move |a, b| f(a, b), partitions)
            .window(window, slide)?
            .reduce_by_key(move |a, b| g(a, b), partitions))
    }

    /// Spark's `reduceByKeyAndWindow(reduceFunc, invReduceFunc, windowDuration, slideDuration,
    /// numPartitions, filterFunc)`, the incremental form (Spark's `ReducedWindowedDStream`).
    ///
    /// Per batch, the values of each key are reduced (`reduce_by_key`). The window at `t` is
    /// then computed from the window at `t - slide` (its previous value, per key), the batches
    /// that left the window and the batches that entered it (`p` = this stream's slide):
    /// * a key without a previous value gets the reduction of its entering batches;
    /// * otherwise its previous value, `inverse`-reduced by the reduction of its leaving
    ///   batches if any, then reduced with the reduction of its entering batches if any;
    /// * the filter, if any, removes keys from the result, and so from the state.
    ///
    /// Hence, unlike the plain form, **a key whose values all left the window stays, with the
    /// inverse-reduced value (0 for `+`/`-`), until a filter removes it**. A filter that
    /// removes a key whose values are still in the window (its sum is momentarily 0) makes a
    /// later window fail with [`Error::MissingPreviousWindowValue`], as in Spark.
    ///
    /// Leaving batches are those in `[prev_begin, min(cur_begin - p, prev_end)]` and entering
    /// ones those in `[max(prev_end + p, cur_begin), cur_end]`, where `cur = [t - window + p,
    /// t]` and `prev = cur - slide`. When `window >= slide` this is exactly Spark's slicing.
    /// When `window < slide`, Spark leaves out the clamps and counts the batches between two
    /// windows as both leaving and entering, which gives wrong sums (at start-up and for keys
    /// first seen between windows); we give the correct ones, equal to the plain form's for
    /// every key with values in the window (a deliberate difference, `docs/dstream.md`).
    ///
    /// Spark requires a checkpoint directory for this stream; we do not (our state has no
    /// lineage to cut). The stream still gets Spark's default checkpoint interval, which only
    /// sets how long it remembers its results.
    ///
    /// # Errors
    /// [`Error::NegativeDuration`], [`Error::WindowNotMultiple`] or
    /// [`Error::SlideNotMultiple`] with stream `ReducedWindowedDStream` (Spark's `require`
    /// wording), [`Error::ZeroSlide`] if this stream's slide is 0.
    ///
    /// # Examples
    /// ```
    /// use dstream_compat::{InverseReduce, StreamingContext};
    ///
    /// let ssc = StreamingContext::new(1000)?;
    /// let pairs = ssc.queue_stream(vec![vec![("a", 1)], vec![("b", 2)], vec![], vec![]]);
    /// let spec = InverseReduce::new(|a: &i64, b: &i64| a + b, |a: &i64, b: &i64| a - b);
    /// let sums = pairs.reduce_by_key_and_window_inv(spec, 2000, 1000)?.collect_batches()?;
    /// ssc.start()?;
    /// ssc.run_batches(4)?;
    /// let mut got: Vec<(i64, Vec<(&str, i64)>)> =
    ///     sums.take().into_iter().map(|(t, b)| (t, b.into_vec())).collect();
    /// got.iter_mut().for_each(|(_, b)| b.sort());
    /// // `a` left the window at 3000 and `b` at 4000: both stay with 0.
    /// assert_eq!(got, [
    ///     (1000, vec![("a", 1)]),
    ///     (2000, vec![("a", 1), ("b", 2)]),
    ///     (3000, vec![("a", 0), ("b", 2)]),
    ///     (4000, vec![("a", 0), ("b", 0)]),
    /// ]);
    /// # Ok::<(), dstream_compat::Error>(())
    /// ```
    pub fn reduce_by_key_and_window_inv(
        &self,
        spec: InverseReduce<K, V>,
        window: i64,
        slide: i64,
    ) -> Result<DStream<(K, V)>> {
        check_window(names::REDUCED_WINDOWED, window, slide, &self.node.meta)?;
        let reduce = Rc::clone(&spec.reduce);
        let reduced = self.reduce_by_key(move |a, b| reduce(a, b), spec.partitions);
        let mut meta = self.ctx.new_meta(names::REDUCED_WINDOWED, slide);
        meta.window = Some(window);
        meta.must_checkpoint = true;
        meta.partitions = Some(spec.partitions);
        // The remembered windows are state (see `crate::snapshot`): encoded as pairs.
        self.ctx.inner.codecs.register_pair::<K, V>();
        let op = ReducedWindowOp {
            reduced: Rc::clone(&reduced.node),
            spec,
            window,
            slide,
        };
        Ok(DStream::from_node(self.ctx.clone(), Node::new(meta, op)))
    }

    /// Spark's `groupByKeyAndWindow(windowDuration, slideDuration, numPartitions)`: every
    /// `slide` ms, one record per key with values in the window, holding all of them
    /// (duplicates kept; batches in time order, values of a batch in arrival order; Spark
    /// defines no order). Built as Spark builds it: `group_by_key`, `window`, then merging the
    /// groups of each key (`combine_by_key`).
    ///
    /// # Errors
    /// As [`DStream::window`] (stream `WindowedDStream`).
    pub fn group_by_key_and_window(
        &self,
        window: i64,
        slide: i64,
        partitions: Partitions,
    ) -> Result<DStream<(K, Vec<V>)>> {
        Ok(self
            .group_by_key(partitions)
            .window(window, slide)?
            .combine_by_key(Vec::clone, |acc, vs| acc.extend_from_slice(vs), partitions))
    }
}

/// Spark's `ShuffledDStream` (`combineByKey` on each batch).
struct CombineOp<K, V, C> {
    parent: Rc<Node<(K, V)>>,
    create: Rc<dyn Fn(&V) -> C>,
    merge: MergeFn<C, V>,
}

impl<K, V, C> Compute<(K, C)> for CombineOp<K, V, C>
where
    K: Clone + Eq + Hash + 'static,
    V: 'static,
    C: 'static,
{
    fn compute(&self, _this: &Node<(K, C)>, time: i64) -> Result<Option<Batch<(K, C)>>> {
        let Some(batch) = self.parent.get_or_compute(time)? else {
            return Ok(None);
        };
        let mut index: AHashMap<K, usize> = AHashMap::with_capacity(batch.len());
        let mut out: Vec<(K, C)> = Vec::new();
        for (k, v) in batch.iter() {
            match index.get(k) {
                Some(&i) => (self.merge)(&mut out[i].1, v),
                None => {
                    index.insert(k.clone(), out.len());
                    out.push((k.clone(), (self.create)(v)));
                }
            }
        }
        Ok(Some(Batch::from(out)))
    }

    fn dependencies(&self) -> Vec<Rc<dyn AnyNode>> {
        vec![Rc::clone(&self.parent) as Rc<dyn AnyNode>]
    }
}

/// Spark's `ReducedWindowedDStream.compute`, with the window < slide correction.
struct ReducedWindowOp<K, V> {
    reduced: Rc<Node<(K, V)>>,
    spec: InverseReduce<K, V>,
    window: i64,
    slide: i64,
}

/// A key's values in one step of the incremental window.
struct Merge<K, V> {
    key: K,
    previous: Option<V>,
    leaving: Option<V>,
    entering: Option<V>,
}

impl<K, V> Merge<K, V> {
    /// A key with nothing from any part yet.
    fn of(key: K) -> Self {
        Self {
            key,
            previous: None,
            leaving: None,
            entering: None,
        }
    }
}

impl<K, V> ReducedWindowOp<K, V>
where
    K: Clone + Eq + Hash + 'static,
    V: Clone + 'static,
{
    /// Makes sure the windows before `time` are computed oldest first, so that computing the
    /// window at `time` never recurses more than one step (Spark recurses through
    /// `getOrCompute` of every missing previous window).
    fn compute_missing_previous(&self, this: &Node<(K, V)>, time: i64) -> Result<()> {
        if self.slide <= 0 {
            return Ok(());
        }
        let mut missing = Vec::new();
        let mut t = time.saturating_sub(self.slide);
        while this.cached(t).is_none() && this.meta.is_time_valid(t)? {
            missing.push(t);
            t = t.saturating_sub(self.slide);
        }
        for t in missing.into_iter().rev() {
            this.get_or_compute(t)?;
        }
        Ok(())
    }

    fn fold_into(
        &self,
        batches: &[Batch<(K, V)>],
        index: &mut AHashMap<K, usize>,
        merges: &mut Vec<Merge<K, V>>,
        slot: fn(&mut Merge<K, V>) -> &mut Option<V>,
    ) {
        for batch in batches {
            for (k, v) in batch.iter() {
                // Look up by reference first: the key is cloned only for a new entry.
                let i = match index.get(k) {
                    Some(&i) => i,
                    None => {
                        index.insert(k.clone(), merges.len());
                        merges.push(Merge::of(k.clone()));
                        merges.len() - 1
                    }
                };
                let acc = slot(&mut merges[i]);
                *acc = Some(match acc.take() {
                    None => v.clone(),
                    Some(a) => (self.spec.reduce)(&a, v),
                });
            }
        }
    }
}

impl<K, V> Compute<(K, V)> for ReducedWindowOp<K, V>
where
    K: Clone + Eq + Hash + 'static,
    V: Clone + 'static,
{
    fn compute(&self, this: &Node<(K, V)>, time: i64) -> Result<Option<Batch<(K, V)>>> {
        let p = self.reduced.meta.slide;
        let cur_begin = time.saturating_sub(self.window).saturating_add(p);
        let cur_end = time;
        let prev_begin = cur_begin.saturating_sub(self.slide);
        let prev_end = cur_end.saturating_sub(self.slide);
        // Spark: leaving = [prev_begin, cur_begin - p], entering = [prev_end + p, cur_end].
        // The clamps only matter when window < slide (the windows do not overlap).
        let leaving_end = cur_begin.saturating_sub(p).min(prev_end);
        let entering_begin = prev_end.saturating_add(p).max(cur_begin);
        let leaving = self.reduced.slice(prev_begin, leaving_end)?;
        let entering = self.reduced.slice(entering_begin, cur_end)?;
        self.compute_missing_previous(this, time)?;
        let previous = this.get_or_compute(prev_end)?;

        let mut index: AHashMap<K, usize> = AHashMap::new();
        let mut merges: Vec<Merge<K, V>> = Vec::new();
        if let Some(prev) = &previous {
            index.reserve(prev.len());
            merges.reserve(prev.len());
            for (k, v) in prev.iter() {
                index.insert(k.clone(), merges.len());
                merges.push(Merge {
                    previous: Some(v.clone()),
                    ..Merge::of(k.clone())
                });
            }
        }
        self.fold_into(&leaving, &mut index, &mut merges, |m| &mut m.leaving);
        self.fold_into(&entering, &mut index, &mut merges, |m| &mut m.entering);

        let mut out = Vec::with_capacity(merges.len());
        for m in merges {
            let value = match m.previous {
                None => match m.entering {
                    Some(v) => v,
                    None => return Err(Error::MissingPreviousWindowValue { time }),
                },
                Some(mut v) => {
                    if let Some(old) = &m.leaving {
                        v = (self.spec.inverse)(&v, old);
                    }
                    if let Some(new) = &m.entering {
                        v = (self.spec.reduce)(&v, new);
                    }
                    v
                }
            };
            if self
                .spec
                .filter
                .as_ref()
                .is_none_or(|keep| keep(&m.key, &value))
            {
                out.push((m.key, value));
            }
        }
        Ok(Some(Batch::from(out)))
    }

    fn dependencies(&self) -> Vec<Rc<dyn AnyNode>> {
        vec![Rc::clone(&self.reduced) as Rc<dyn AnyNode>]
    }

    fn detail(&self) -> String {
        if self.spec.filter.is_some() {
            "with a filter".to_owned()
        } else {
            "without a filter".to_owned()
        }
    }

    // Each window is computed from the previous one, so the remembered windows are the state
    // (Spark checkpoints this stream's RDDs for the same reason).
    fn snapshot(&self, this: &Node<(K, V)>, codecs: &Codecs) -> CodecResult<StreamState> {
        this.generated_state(codecs)
    }

    fn decode_snapshot(
        &self,
        this: &Node<(K, V)>,
        state: &StreamState,
        codecs: &Codecs,
        zero: i64,
    ) -> CodecResult<Option<Box<dyn Any>>> {
        Ok(Some(Box::new(this.decode_generated(state, codecs, zero)?)))
    }

    fn install(&self, this: &Node<(K, V)>, decoded: Box<dyn Any>) {
        if let Ok(generated) = decoded.downcast::<BTreeMap<i64, Batch<(K, V)>>>() {
            this.replace_generated(*generated);
        }
    }
}

impl Partitions {
    /// One partition (what Spark's `reduce` and `reduceByWindow` use).
    pub const ONE: Partitions = Partitions::Fixed(std::num::NonZeroUsize::MIN);

    /// A fixed number of partitions (Spark's `numPartitions`).
    ///
    /// # Errors
    /// [`Error::InvalidPartitions`] for 0.
    pub fn fixed(partitions: usize) -> Result<Partitions> {
        std::num::NonZeroUsize::new(partitions)
            .map(Partitions::Fixed)
            .ok_or(Error::InvalidPartitions { partitions })
    }
}
