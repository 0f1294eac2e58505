//! [`DStream`]: the typed handle of one stream, with the operations of Spark's `DStream` class
//! that the windows need or are built from: per-batch `map`, `filter`, `flat_map`,
//! `transform`, `count`, `count_by_value`, `reduce`; `union`; `window` and the windowed
//! reductions over any stream (`reduce_by_window`, `count_by_window`,
//! `count_by_value_and_window`); `slice`; `checkpoint`; and the output operations. Keyed
//! operations are in [`crate::pair`].
//!
//! Every operation builds the stream Spark builds for it, from the same smaller operations, so
//! that slides, remember durations and validation errors come out as in Spark (e.g. a plain
//! `reduce_by_window` is `reduce`, `window`, `reduce`).

use std::cell::RefCell;
use std::fmt;
use std::hash::Hash;
use std::rc::Rc;

use crate::batch::Batch;
use crate::context::{BatchFn, ForEach, StreamingContext};
use crate::error::{Error, Result};
use crate::graph::{names, AnyNode, Compute, Node};
use crate::pair::InverseReduce;
use crate::time::is_multiple_of;
use crate::Partitions;

/// A discretized stream (Spark's `DStream[T]`): a sequence of [`Batch`]es of `T`, one at every
/// valid time `zero + k · slide` (k ≥ 1) of the stream.
///
/// A handle is cheap to clone; the stream itself lives in its [`StreamingContext`]. A batch is
/// computed when an output operation or a window first asks for it, then remembered for the
/// stream's remember duration (see [`StreamingContext::start_at`]) and forgotten.
///
/// All durations and times are milliseconds. Spark's one-argument overloads (`window(w)`,
/// `reduceByKeyAndWindow(f, w)`, `groupByKeyAndWindow(w)`) are the two-argument methods with
/// `slide = self.slide_duration()`.
///
/// # Examples
/// ```
/// use dstream_compat::StreamingContext;
///
/// let ssc = StreamingContext::new(1000)?;
/// let words = ssc.queue_stream(vec![vec!["a b", "a"], vec!["b"]]);
/// let counts = words
///     .flat_map(|line: &&str| line.split(' ').collect::<Vec<_>>())
///     .count_by_value_and_window(2000, 1000, Default::default())?
///     .collect_batches()?;
/// ssc.start()?;
/// ssc.run_batches(2)?;
/// let mut at_2000 = counts.take()[1].1.to_vec();
/// at_2000.sort();
/// assert_eq!(at_2000, [("a", 2), ("b", 2)]);
/// # Ok::<(), dstream_compat::Error>(())
/// ```
pub struct DStream<T> {
    pub(crate) ctx: StreamingContext,
    pub(crate) node: Rc<Node<T>>,
}

impl<T> Clone for DStream<T> {
    fn clone(&self) -> Self {
        DStream {
            ctx: self.ctx.clone(),
            node: Rc::clone(&self.node),
        }
    }
}

impl<T> fmt::Debug for DStream<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = &self.node.meta;
        f.debug_struct("DStream")
            .field("stream", &m.describe())
            .field("slide", &m.slide)
            .field("window", &m.window)
            .field("remember", &m.remember.get())
            .finish_non_exhaustive()
    }
}

/// The records an output operation collected: `(batch time in ms, batch)` in time order (see
/// [`DStream::collect_batches`]).
pub struct BatchCollector<T> {
    batches: Rc<RefCell<TimedBatches<T>>>,
}

type TimedBatches<T> = Vec<(i64, Batch<T>)>;
type FlatMapFn<T, U> = Rc<dyn Fn(&T, &mut Vec<U>)>;
type TransformFn<T, U> = Rc<dyn Fn(i64, &[T]) -> Vec<U>>;

impl<T> Clone for BatchCollector<T> {
    fn clone(&self) -> Self {
        BatchCollector {
            batches: Rc::clone(&self.batches),
        }
    }
}

impl<T> fmt::Debug for BatchCollector<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchCollector")
            .field("batches", &self.batches.borrow().len())
            .finish()
    }
}

impl<T> BatchCollector<T> {
    /// A copy of the batches collected so far (the batches themselves are shared).
    #[must_use]
    pub fn batches(&self) -> Vec<(i64, Batch<T>)> {
        self.batches.borrow().clone()
    }

    /// The batches collected so far; the collector is empty afterwards.
    pub fn take(&self) -> Vec<(i64, Batch<T>)> {
        std::mem::take(&mut *self.batches.borrow_mut())
    }

    /// How many batches are held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.batches.borrow().len()
    }

    /// Whether no batch is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.batches.borrow().is_empty()
    }
}

impl<T: Clone + 'static> DStream<T> {
    pub(crate) fn from_node(ctx: StreamingContext, node: Rc<Node<T>>) -> DStream<T> {
        DStream { ctx, node }
    }

    fn derive<U: Clone + 'static>(
        &self,
        name: &'static str,
        slide: i64,
        op: impl Compute<U> + 'static,
    ) -> DStream<U> {
        let meta = self.ctx.new_meta(name, slide);
        DStream::from_node(self.ctx.clone(), Node::new(meta, op))
    }

    /// The context this stream belongs to.
    #[must_use]
    pub fn context(&self) -> &StreamingContext {
        &self.ctx
    }

    /// Spark's class of this stream (`MappedDStream`, `WindowedDStream`, ...).
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.node.meta.name
    }

    /// The interval between two batches of this stream, in ms (Spark's `slideDuration`): the
    /// batch interval for an input stream and per-batch operations, the slide of a window.
    #[must_use]
    pub fn slide_duration(&self) -> i64 {
        self.node.meta.slide
    }

    /// How long this stream keeps its generated batches, in ms; known after `start()`.
    #[must_use]
    pub fn remember_duration(&self) -> Option<i64> {
        self.node.meta.remember.get()
    }

    /// The checkpoint interval, in ms, if one is set (see [`checkpoint`](Self::checkpoint)).
    #[must_use]
    pub fn checkpoint_interval(&self) -> Option<i64> {
        self.node.meta.checkpoint.get()
    }

    /// Spark's `DStream.checkpoint(interval)`: sets the stream's checkpoint interval, which
    /// `start()` checks as Spark does (at least the slide, and a multiple of it) and which
    /// makes the stream remember at least twice as long. Nothing is written: our state needs
    /// no checkpoint (see `docs/dstream.md`). Returns the stream for chaining.
    ///
    /// # Errors
    /// [`Error::AlreadyStarted`] after `start()`.
    pub fn checkpoint(&self, interval: i64) -> Result<DStream<T>> {
        if !self.ctx.is_initialized_phase() {
            return Err(Error::AlreadyStarted);
        }
        self.node.meta.checkpoint.set(Some(interval));
        Ok(self.clone())
    }

    /// Spark's `DStream.map`: each record through `f`, batch by batch.
    pub fn map<U: Clone + 'static>(&self, f: impl Fn(&T) -> U + 'static) -> DStream<U> {
        self.derive(
            names::MAPPED,
            self.slide_duration(),
            MapOp {
                parent: Rc::clone(&self.node),
                f: Rc::new(f),
            },
        )
    }

    /// Spark's `DStream.filter`: the records for which `keep` is true.
    pub fn filter(&self, keep: impl Fn(&T) -> bool + 'static) -> DStream<T> {
        self.derive(
            names::FILTERED,
            self.slide_duration(),
            FilterOp {
                parent: Rc::clone(&self.node),
                keep: Rc::new(keep),
            },
        )
    }

    /// Spark's `DStream.flatMap`: every record replaced by the records `f` gives for it.
    pub fn flat_map<U, I>(&self, f: impl Fn(&T) -> I + 'static) -> DStream<U>
    where
        U: Clone + 'static,
        I: IntoIterator<Item = U>,
    {
        let each: FlatMapFn<T, U> = Rc::new(move |t, out| out.extend(f(t)));
        self.derive(
            names::FLAT_MAPPED,
            self.slide_duration(),
            FlatMapOp {
                parent: Rc::clone(&self.node),
                each,
            },
        )
    }

    /// Spark's `DStream.transform((rdd, time) => ...)`: a whole batch at a time, with its time
    /// in ms.
    pub fn transform<U: Clone + 'static>(
        &self,
        f: impl Fn(i64, &[T]) -> Vec<U> + 'static,
    ) -> DStream<U> {
        self.derive(
            names::TRANSFORMED,
            self.slide_duration(),
            TransformOp {
                parent: Rc::clone(&self.node),
                f: Rc::new(f),
            },
        )
    }

    /// Spark's `DStream.union(that)`: both streams' records at each batch time.
    ///
    /// # Errors
    /// As [`StreamingContext::union`].
    pub fn union(&self, other: &DStream<T>) -> Result<DStream<T>> {
        self.ctx.union(&[self.clone(), other.clone()])
    }

    /// Spark's `DStream.count()`: one record per batch, its number of records (0 for an empty
    /// batch). Built as Spark builds it: `map` to `((), 1)`, add `((), 0)`, `reduce_by_key`,
    /// `map` to the count.
    pub fn count(&self) -> DStream<i64> {
        self.map(|_| ((), 1_i64))
            .transform(|_, batch: &[((), i64)]| {
                let mut out = batch.to_vec();
                out.push(((), 0));
                out
            })
            .reduce_by_key(|a, b| a + b, Partitions::Default)
            .map(|(_, n)| *n)
    }

    /// Spark's `DStream.reduce(f)`: one record per non-empty batch, `f` folded over its
    /// records; no record for an empty batch. Built as `map` to `((), x)`,
    /// `reduce_by_key(f, 1 partition)`, `map` to the value.
    pub fn reduce(&self, f: impl Fn(&T, &T) -> T + 'static) -> DStream<T> {
        self.map(|x| ((), x.clone()))
            .reduce_by_key(f, Partitions::ONE)
            .map(|(_, v)| v.clone())
    }

    /// Spark's `DStream.window(windowDuration, slideDuration)`: every `slide` ms, the records
    /// of this stream's batches at times `t - window + p, ..., t` (`p` = this stream's slide),
    /// i.e. the batches in `(t - window, t]`, duplicates kept. Times at or before the zero
    /// time are skipped, so the first windows are partial; an empty window is an empty batch.
    ///
    /// The first window is at `t = slide`. A window shorter than the slide leaves batches
    /// out; a window that is not a multiple of the slide is fine; a window of 0 is always
    /// empty. A slide of 0 is accepted here and fails at the first batch, as in Spark.
    ///
    /// # Errors
    /// [`Error::NegativeDuration`]; [`Error::WindowNotMultiple`] or
    /// [`Error::SlideNotMultiple`] (stream `WindowedDStream`) when `window` or `slide` is not
    /// a multiple of this stream's slide; [`Error::ZeroSlide`] if this stream's slide is 0.
    ///
    /// # Examples
    /// ```
    /// use dstream_compat::{Error, StreamingContext};
    ///
    /// let ssc = StreamingContext::new(1000)?;
    /// let input = ssc.queue_stream(vec![vec![1], vec![2], vec![3], vec![4]]);
    /// // Slide 2 s, window 1 s: the batches at 1000 and 3000 are in no window.
    /// let gaps = input.window(1000, 2000)?.collect_batches()?;
    /// assert!(matches!(input.window(1500, 1000), Err(Error::WindowNotMultiple { .. })));
    /// ssc.start()?;
    /// ssc.run_batches(4)?;
    /// let got: Vec<(i64, Vec<i32>)> =
    ///     gaps.take().into_iter().map(|(t, b)| (t, b.into_vec())).collect();
    /// assert_eq!(got, [(2000, vec![2]), (4000, vec![4])]);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn window(&self, window: i64, slide: i64) -> Result<DStream<T>> {
        check_window(names::WINDOWED, window, slide, &self.node.meta)?;
        let mut meta = self.ctx.new_meta(names::WINDOWED, slide);
        meta.window = Some(window);
        let op = WindowOp {
            parent: Rc::clone(&self.node),
            window,
        };
        Ok(DStream::from_node(self.ctx.clone(), Node::new(meta, op)))
    }

    /// Spark's `DStream.reduceByWindow(reduceFunc, windowDuration, slideDuration)`: one record
    /// per window, `f` folded over its records; **no record** for an empty window. Built as
    /// Spark builds it: `reduce(f)`, `window`, `reduce(f)`.
    ///
    /// # Errors
    /// As [`window`](Self::window).
    pub fn reduce_by_window(
        &self,
        f: impl Fn(&T, &T) -> T + 'static,
        window: i64,
        slide: i64,
    ) -> Result<DStream<T>> {
        let f: crate::pair::ReduceFn<T> = Rc::new(f);
        let g = Rc::clone(&f);
        Ok(self
            .reduce(move |a, b| f(a, b))
            .window(window, slide)?
            .reduce(move |a, b| g(a, b)))
    }

    /// Spark's `DStream.reduceByWindow(reduceFunc, invReduceFunc, windowDuration,
    /// slideDuration)`: the incremental form. Built as Spark builds it: `map` to `((), x)`,
    /// the incremental [`reduce_by_key_and_window_inv`](Self::reduce_by_key_and_window_inv)
    /// on that single key with 1 partition, `map` to the value. So there is no record until
    /// the first record arrives, and after that an empty window gives the inverse-reduced
    /// value (`[0]` for a sum).
    ///
    /// # Errors
    /// As [`reduce_by_key_and_window_inv`](Self::reduce_by_key_and_window_inv).
    pub fn reduce_by_window_inv(
        &self,
        reduce: impl Fn(&T, &T) -> T + 'static,
        inverse: impl Fn(&T, &T) -> T + 'static,
        window: i64,
        slide: i64,
    ) -> Result<DStream<T>> {
        let spec = InverseReduce::new(reduce, inverse).with_partitions(Partitions::ONE);
        Ok(self
            .map(|x| ((), x.clone()))
            .reduce_by_key_and_window_inv(spec, window, slide)?
            .map(|(_, v)| v.clone()))
    }

    /// Spark's `DStream.countByWindow(windowDuration, slideDuration)`: the number of records
    /// in each window. Built as Spark builds it, `map` to 1 then the incremental
    /// [`reduce_by_window_inv`](Self::reduce_by_window_inv) with `+` and `-`: so the output is
    /// empty until the first record arrives, and `[0]` for every empty window after that.
    ///
    /// # Errors
    /// As [`reduce_by_key_and_window_inv`](Self::reduce_by_key_and_window_inv).
    pub fn count_by_window(&self, window: i64, slide: i64) -> Result<DStream<i64>> {
        self.map(|_| 1_i64)
            .reduce_by_window_inv(|a, b| a + b, |a, b| a - b, window, slide)
    }

    /// Spark's `DStream.slice(fromTime, toTime)`: the batches of this stream at its valid
    /// times from `from` to `to` ms, both included. A bound that is not a multiple of the slide
    /// (relative to the zero time) is floored to one, and Spark's warning is recorded in
    /// [`StreamingContext::warnings`] (`toTime` first): `slice(1500, 3500)` with 1 s batches
    /// gives the batches at 1000, 2000, 3000. Times at or before the zero time are skipped;
    /// `from > to` gives nothing; times after the current batch are computed (an input
    /// stream gives what was pushed for them, or empty batches). A batch no longer
    /// remembered is computed again.
    ///
    /// # Errors
    /// [`Error::NotInitialized`] before `start()`, or for a stream that no output operation
    /// depends on; errors of computing a batch.
    ///
    /// # Examples
    /// ```
    /// use dstream_compat::StreamingContext;
    ///
    /// let ssc = StreamingContext::new(1000)?;
    /// let input = ssc.queue_stream(vec![vec![1], vec![2], vec![3], vec![4]]);
    /// input.foreach_batch(|_, _| {})?;
    /// ssc.start()?;
    /// ssc.run_batches(4)?;
    /// let sliced: Vec<Vec<i32>> =
    ///     input.slice(1500, 3500)?.into_iter().map(|b| b.into_vec()).collect();
    /// assert_eq!(sliced, [vec![1], vec![2], vec![3]]);
    /// assert_eq!(ssc.warnings(), [
    ///     "toTime (3500 ms) is not a multiple of slideDuration (1000 ms)",
    ///     "fromTime (1500 ms) is not a multiple of slideDuration (1000 ms)",
    /// ]);
    /// # Ok::<(), dstream_compat::Error>(())
    /// ```
    pub fn slice(&self, from: i64, to: i64) -> Result<Vec<Batch<T>>> {
        self.node.slice(from, to)
    }

    /// Spark's `DStream.foreachRDD((rdd, time) => ...)`: registers an output operation that
    /// gets every batch of this stream, with its time in ms, during
    /// [`StreamingContext::run_batch`]. Only output operations make streams compute.
    ///
    /// # Errors
    /// [`Error::AlreadyStarted`] after `start()`.
    pub fn foreach_batch(&self, f: impl FnMut(i64, &[T]) + 'static) -> Result<()> {
        let func: BatchFn<T> = Box::new(f);
        self.ctx.register_output(Rc::new(ForEach {
            parent: Rc::clone(&self.node),
            func: RefCell::new(func),
            pending: RefCell::new(None),
        }))
    }

    /// Registers an output operation that keeps every batch of this stream with its time
    /// (what Spark's tests do with `foreachRDD` and `collect`).
    ///
    /// # Errors
    /// [`Error::AlreadyStarted`] after `start()`.
    pub fn collect_batches(&self) -> Result<BatchCollector<T>> {
        let collector = BatchCollector {
            batches: Rc::new(RefCell::new(Vec::new())),
        };
        let sink = collector.clone();
        let func: BatchFn<T> = Box::new(move |time, records: &[T]| {
            sink.batches
                .borrow_mut()
                .push((time, Batch::from(records.to_vec())));
        });
        self.ctx.register_output(Rc::new(ForEach {
            parent: Rc::clone(&self.node),
            func: RefCell::new(func),
            pending: RefCell::new(None),
        }))?;
        Ok(collector)
    }
}

impl<T: Clone + Eq + Hash + 'static> DStream<T> {
    /// Spark's `DStream.countByValue(numPartitions)`: per batch, each distinct record with its
    /// number of occurrences. Built as `map` to `(x, 1)` and `reduce_by_key`.
    pub fn count_by_value(&self, partitions: Partitions) -> DStream<(T, i64)> {
        self.map(|x| (x.clone(), 1_i64))
            .reduce_by_key(|a, b| a + b, partitions)
    }

    /// Spark's `DStream.countByValueAndWindow(windowDuration, slideDuration, numPartitions)`:
    /// each distinct record of the window with its number of occurrences. Built as Spark
    /// builds it: `map` to `(x, 1)`, then the incremental
    /// [`reduce_by_key_and_window_inv`](Self::reduce_by_key_and_window_inv) with `+`, `-` and
    /// the filter `count != 0`, so records whose count drops to 0 disappear.
    ///
    /// # Errors
    /// As [`reduce_by_key_and_window_inv`](Self::reduce_by_key_and_window_inv).
    pub fn count_by_value_and_window(
        &self,
        window: i64,
        slide: i64,
        partitions: Partitions,
    ) -> Result<DStream<(T, i64)>> {
        let spec = InverseReduce::new(|a: &i64, b: &i64| a + b, |a: &i64, b: &i64| a - b)
            .with_partitions(partitions)
            .with_filter(|_, count| *count != 0);
        self.map(|x| (x.clone(), 1_i64))
            .reduce_by_key_and_window_inv(spec, window, slide)
    }
}

/// The construction checks of a windowed stream over `parent` (Spark's `WindowedDStream` and
/// `ReducedWindowedDStream` constructors, plus our rejection of negative durations).
pub(crate) fn check_window(
    stream: &'static str,
    window: i64,
    slide: i64,
    parent: &crate::graph::Meta,
) -> Result<()> {
    for (what, duration) in [("window", window), ("slide", slide)] {
        if duration < 0 {
            return Err(Error::NegativeDuration {
                stream,
                what,
                duration,
            });
        }
    }
    let parent_slide = parent.slide;
    if !is_multiple_of(window, parent_slide, parent.name)? {
        return Err(Error::WindowNotMultiple {
            stream,
            window,
            parent_slide,
        });
    }
    if !is_multiple_of(slide, parent_slide, parent.name)? {
        return Err(Error::SlideNotMultiple {
            stream,
            slide,
            parent_slide,
        });
    }
    Ok(())
}

fn deps<P: 'static>(parent: &Rc<Node<P>>) -> Vec<Rc<dyn AnyNode>> {
    vec![Rc::clone(parent) as Rc<dyn AnyNode>]
}

struct MapOp<T, U> {
    parent: Rc<Node<T>>,
    f: Rc<dyn Fn(&T) -> U>,
}

impl<T: 'static, U: 'static> Compute<U> for MapOp<T, U> {
    fn compute(&self, _this: &Node<U>, time: i64) -> Result<Option<Batch<U>>> {
        Ok(self
            .parent
            .get_or_compute(time)?
            .map(|b| Batch::from(b.iter().map(|x| (self.f)(x)).collect::<Vec<_>>())))
    }

    fn dependencies(&self) -> Vec<Rc<dyn AnyNode>> {
        deps(&self.parent)
    }
}

struct FilterOp<T> {
    parent: Rc<Node<T>>,
    keep: Rc<dyn Fn(&T) -> bool>,
}

impl<T: Clone + 'static> Compute<T> for FilterOp<T> {
    fn compute(&self, _this: &Node<T>, time: i64) -> Result<Option<Batch<T>>> {
        Ok(self.parent.get_or_compute(time)?.map(|b| {
            Batch::from(
                b.iter()
                    .filter(|x| (self.keep)(x))
                    .cloned()
                    .collect::<Vec<_>>(),
            )
        }))
    }

    fn dependencies(&self) -> Vec<Rc<dyn AnyNode>> {
        deps(&self.parent)
    }
}

struct FlatMapOp<T, U> {
    parent: Rc<Node<T>>,
    each: FlatMapFn<T, U>,
}

impl<T: 'static, U: 'static> Compute<U> for FlatMapOp<T, U> {
    fn compute(&self, _this: &Node<U>, time: i64) -> Result<Option<Batch<U>>> {
        Ok(self.parent.get_or_compute(time)?.map(|b| {
            let mut out = Vec::new();
            for x in b.iter() {
                (self.each)(x, &mut out);
            }
            Batch::from(out)
        }))
    }

    fn dependencies(&self) -> Vec<Rc<dyn AnyNode>> {
        deps(&self.parent)
    }
}

struct TransformOp<T, U> {
    parent: Rc<Node<T>>,
    f: TransformFn<T, U>,
}

impl<T: 'static, U: 'static> Compute<U> for TransformOp<T, U> {
    fn compute(&self, _this: &Node<U>, time: i64) -> Result<Option<Batch<U>>> {
        Ok(self
            .parent
            .get_or_compute(time)?
            .map(|b| Batch::from((self.f)(time, &b))))
    }

    fn dependencies(&self) -> Vec<Rc<dyn AnyNode>> {
        deps(&self.parent)
    }
}

/// Spark's `WindowedDStream.compute`: the union of the parent's batches in
/// `[t - window + p, t]`.
struct WindowOp<T> {
    parent: Rc<Node<T>>,
    window: i64,
}

impl<T: Clone + 'static> Compute<T> for WindowOp<T> {
    fn compute(&self, _this: &Node<T>, time: i64) -> Result<Option<Batch<T>>> {
        let p = self.parent.meta.slide;
        let from = time.saturating_sub(self.window).saturating_add(p);
        let batches = self.parent.slice(from, time)?;
        Ok(Some(concat(&batches)))
    }

    fn dependencies(&self) -> Vec<Rc<dyn AnyNode>> {
        deps(&self.parent)
    }
}

pub(crate) fn concat<T: Clone>(batches: &[Batch<T>]) -> Batch<T> {
    if let [only] = batches {
        return only.clone();
    }
    let mut out = Vec::with_capacity(batches.iter().map(|b| b.len()).sum());
    for b in batches {
        out.extend_from_slice(b);
    }
    Batch::from(out)
}

/// Spark's `UnionDStream.compute`: every parent's batch at the time.
pub(crate) struct UnionOp<T> {
    pub(crate) parents: Vec<Rc<Node<T>>>,
}

impl<T: Clone + 'static> Compute<T> for UnionOp<T> {
    fn compute(&self, _this: &Node<T>, time: i64) -> Result<Option<Batch<T>>> {
        let mut batches = Vec::with_capacity(self.parents.len());
        for parent in &self.parents {
            // Parents share the slide, so each has a batch at every valid time of the union.
            if let Some(b) = parent.get_or_compute(time)? {
                batches.push(b);
            }
        }
        Ok(Some(concat(&batches)))
    }

    fn dependencies(&self) -> Vec<Rc<dyn AnyNode>> {
        self.parents
            .iter()
            .map(|p| Rc::clone(p) as Rc<dyn AnyNode>)
            .collect()
    }
}
