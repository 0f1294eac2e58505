//! The fluent API: a typed windowed job in the spirit of Flink's DataStream API.
//!
//! ```text
//! DataStream::from_collection(orders)                             // or from_source, socket_text_stream
//!     .assign_timestamps_and_watermarks(WatermarkStrategy::for_bounded_out_of_orderness(d)
//!         .with_timestamp_assigner(|o: &Order| o.ts))
//!     .key_by(|o: &Order| o.merchant)                             // any Hash + Eq + Clone key
//!     .window(SlidingEventTimeWindows::of(size, slide)?)          // typed durations
//!     .allowed_lateness(d).side_output_late_data()                // optional
//!     .aggregate(MapAggregate::new(|o: &Order| o.amount, NumericAggregate::Sum))?
//!     .collect()?                                                 // results, late elements
//! ```
//!
//! Each step is a type: a [`DataStream<T>`] of elements, a [`KeyedStream<K, T>`] once keyed,
//! a [`WindowedStream`] once windowed (with its trigger's type), and a [`WindowJob`] once the
//! window function is chosen, ready to run on the [`crate::Runtime`]. Sliding windows with the
//! default trigger and no evictor can choose a strategy ([`WindowedStream::strategy`]): Flink's
//! operator, key windows or sliced windows. Nothing runs until the job does.
//!
//! Sources hand over `(timestamp, element)` pairs; a stream without a timestamp assigner keeps
//! the source's timestamps (`from_collection` has none: `i64::MIN`, Flink's "no timestamp", which an
//! event-time window rejects).

mod windowed;

pub use windowed::{
    Collected, LateElement, StrategyStream, WindowJob, WindowResult, WindowedStream,
};

use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use window_assigners::{DefaultTrigger, GlobalWindows};
use window_core::Timestamp;
use window_io::{Event, InputSpec, OpenError};
use window_triggers::{CountTrigger, NeverTrigger, PurgingTrigger};

use crate::runtime::{IterSource, Read, Source};

/// Duration in ms, saturating at `i64::MAX` (watermark delays, lateness, intervals).
pub(crate) fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// How a stream's elements get their event timestamps and its watermarks (Flink's
/// `WatermarkStrategy`): bounded out-of-orderness, optional idleness, and a timestamp assigner.
pub struct WatermarkStrategy<T> {
    pub(crate) out_of_orderness: i64,
    pub(crate) idleness: Option<i64>,
    pub(crate) interval: i64,
    timestamps: Option<TimestampAssigner<T>>,
}

/// Gives an element its event timestamp in ms (Flink's `TimestampAssigner`).
type TimestampAssigner<T> = Arc<dyn Fn(&T) -> Timestamp + Send + Sync>;

impl<T> std::fmt::Debug for WatermarkStrategy<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatermarkStrategy")
            .field("out_of_orderness", &self.out_of_orderness)
            .field("idleness", &self.idleness)
            .field("interval", &self.interval)
            .finish_non_exhaustive()
    }
}

impl<T> Clone for WatermarkStrategy<T> {
    fn clone(&self) -> Self {
        Self {
            out_of_orderness: self.out_of_orderness,
            idleness: self.idleness,
            interval: self.interval,
            timestamps: self.timestamps.clone(),
        }
    }
}

impl<T> WatermarkStrategy<T> {
    /// The same delays, for another element type (a timestamp assigner does not carry over).
    fn cloned_without_assigner<U>(&self) -> WatermarkStrategy<U> {
        WatermarkStrategy {
            out_of_orderness: self.out_of_orderness,
            idleness: self.idleness,
            interval: self.interval,
            timestamps: None,
        }
    }

    /// Watermarks `delay` behind the largest timestamp seen, minus 1 ms (Flink's
    /// `forBoundedOutOfOrderness`).
    #[must_use]
    pub fn for_bounded_out_of_orderness(delay: Duration) -> Self {
        Self {
            out_of_orderness: millis(delay),
            idleness: None,
            interval: 0,
            timestamps: None,
        }
    }

    /// Timestamps never go back (Flink's `forMonotonousTimestamps`): out-of-orderness 0.
    #[must_use]
    pub fn for_monotonous_timestamps() -> Self {
        Self::for_bounded_out_of_orderness(Duration::ZERO)
    }

    /// Each element's event timestamp in ms (Flink's `withTimestampAssigner`).
    #[must_use]
    pub fn with_timestamp_assigner(
        mut self,
        f: impl Fn(&T) -> Timestamp + Send + Sync + 'static,
    ) -> Self {
        self.timestamps = Some(Arc::new(f));
        self
    }

    /// An input without elements for `timeout` of processing time stops holding the
    /// watermark back (Flink's `withIdleness`).
    #[must_use]
    pub fn with_idleness(mut self, timeout: Duration) -> Self {
        self.idleness = Some(millis(timeout));
        self
    }

    /// Watermarks every `interval` of processing time instead of after every element (Flink's
    /// `autoWatermarkInterval`, 200 ms by default there; after every element here, so that runs
    /// over bounded input are reproducible).
    #[must_use]
    pub fn with_watermark_interval(mut self, interval: Duration) -> Self {
        self.interval = millis(interval);
        self
    }
}

/// A source's batches with each element mapped by `f`, or dropped where it gives `None`.
struct FilterMapped<T, F> {
    inner: Box<dyn Source<(), T>>,
    scratch: Vec<Event<(), T>>,
    f: Arc<F>,
}

impl<T, U, F> Source<(), U> for FilterMapped<T, F>
where
    T: Send,
    F: Fn(T) -> Option<U> + Send + Sync,
{
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn read_batch(&mut self, batch: &mut Vec<Event<(), U>>, max: usize) -> Read {
        self.scratch.clear();
        let read = self.inner.read_batch(&mut self.scratch, max);
        let f = &self.f;
        batch.extend(self.scratch.drain(..).filter_map(|e| {
            f(e.value).map(|value| Event {
                timestamp: e.timestamp,
                key: (),
                value,
                line: e.line,
            })
        }));
        read
    }

    fn is_live(&self) -> bool {
        self.inner.is_live()
    }

    fn progress(&self) -> Option<window_io::Progress> {
        self.inner.progress()
    }
}

/// A source's batches with every event mapped by `f`.
struct Mapped<K0, V0, F> {
    inner: Box<dyn Source<K0, V0>>,
    scratch: Vec<Event<K0, V0>>,
    f: F,
}

impl<K0, V0, K, V, F> Source<K, V> for Mapped<K0, V0, F>
where
    K0: Send,
    V0: Send,
    F: FnMut(Event<K0, V0>) -> Event<K, V> + Send,
{
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn read_batch(&mut self, batch: &mut Vec<Event<K, V>>, max: usize) -> Read {
        self.scratch.clear();
        let read = self.inner.read_batch(&mut self.scratch, max);
        batch.extend(self.scratch.drain(..).map(&mut self.f));
        read
    }

    fn is_live(&self) -> bool {
        self.inner.is_live()
    }

    fn progress(&self) -> Option<window_io::Progress> {
        self.inner.progress()
    }
}

fn map_source<K0, V0, K, V, F>(inner: Box<dyn Source<K0, V0>>, f: F) -> Box<dyn Source<K, V>>
where
    K0: Send + 'static,
    V0: Send + 'static,
    K: 'static,
    V: 'static,
    F: FnMut(Event<K0, V0>) -> Event<K, V> + Send + 'static,
{
    Box::new(Mapped {
        inner,
        scratch: Vec::new(),
        f,
    })
}

/// A stream of elements `T` with event timestamps, from one or more sources (Flink's
/// `DataStream`).
pub struct DataStream<T> {
    sources: Vec<Box<dyn Source<(), T>>>,
    watermarks: WatermarkStrategy<T>,
}

impl<T> std::fmt::Debug for DataStream<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataStream")
            .field("sources", &self.sources.len())
            .field("watermarks", &self.watermarks)
            .finish()
    }
}

impl<T: Send + 'static> DataStream<T> {
    /// The elements of `items`, in order, without timestamps (assign them with
    /// [`DataStream::assign_timestamps_and_watermarks`]; Flink's `fromCollection`).
    pub fn from_collection<I>(items: I) -> Self
    where
        I: IntoIterator<Item = T>,
        I::IntoIter: Send + 'static,
    {
        let events = items.into_iter().zip(1..).map(|(value, line)| Event {
            timestamp: Timestamp::MIN,
            key: (),
            value,
            line,
        });
        Self::from_events(Box::new(IterSource::new("elements", events)))
    }

    fn from_events(source: Box<dyn Source<(), T>>) -> Self {
        Self {
            sources: vec![source],
            watermarks: WatermarkStrategy::for_monotonous_timestamps(),
        }
    }

    /// Each element mapped by `f` (Flink's `map`); timestamps stay.
    pub fn map<U, F>(self, f: F) -> DataStream<U>
    where
        U: Send + 'static,
        F: Fn(T) -> U + Send + Sync + 'static,
    {
        self.filter_map(move |t| Some(f(t)))
    }

    /// The elements for which `keep` holds (Flink's `filter`).
    #[must_use]
    pub fn filter<F>(self, keep: F) -> Self
    where
        F: Fn(&T) -> bool + Send + Sync + 'static,
    {
        self.filter_map(move |t| keep(&t).then_some(t))
    }

    /// Each element mapped by `f`, dropping those it maps to `None` (Flink's `flatMap` with at
    /// most one output).
    pub fn filter_map<U, F>(self, f: F) -> DataStream<U>
    where
        U: Send + 'static,
        F: Fn(T) -> Option<U> + Send + Sync + 'static,
    {
        let f = Arc::new(f);
        let sources = self
            .sources
            .into_iter()
            .map(|s| -> Box<dyn Source<(), U>> {
                Box::new(FilterMapped {
                    inner: s,
                    scratch: Vec::new(),
                    f: Arc::clone(&f),
                })
            })
            .collect();
        DataStream {
            sources,
            watermarks: self.watermarks.cloned_without_assigner(),
        }
    }

    /// This stream and `other` as one (Flink's `union`): the watermark is the minimum of theirs.
    #[must_use]
    pub fn union(mut self, other: DataStream<T>) -> Self {
        self.sources.extend(other.sources);
        self
    }

    /// Stamps timestamps (when the strategy has an assigner) and watermarks (Flink's
    /// `assignTimestampsAndWatermarks`).
    #[must_use]
    pub fn assign_timestamps_and_watermarks(self, strategy: WatermarkStrategy<T>) -> Self {
        let sources = match &strategy.timestamps {
            None => self.sources,
            Some(assigner) => self
                .sources
                .into_iter()
                .map(|s| {
                    let assigner = Arc::clone(assigner);
                    map_source(s, move |mut e: Event<(), T>| {
                        e.timestamp = assigner(&e.value);
                        e
                    })
                })
                .collect(),
        };
        Self {
            sources,
            watermarks: strategy,
        }
    }

    /// Partitions the stream by `key` (Flink's `keyBy`).
    pub fn key_by<K, F>(self, key: F) -> KeyedStream<K, T>
    where
        K: Hash + Eq + Clone + Send + 'static,
        F: Fn(&T) -> K + Send + Sync + 'static,
    {
        let key = Arc::new(key);
        let sources = self
            .sources
            .into_iter()
            .map(|s| {
                let key = Arc::clone(&key);
                map_source(s, move |e: Event<(), T>| Event {
                    timestamp: e.timestamp,
                    key: key(&e.value),
                    value: e.value,
                    line: e.line,
                })
            })
            .collect();
        KeyedStream {
            sources,
            out_of_orderness: self.watermarks.out_of_orderness,
            idleness: self.watermarks.idleness,
            interval: self.watermarks.interval,
        }
    }

    /// Every element in one window per window (Flink's `windowAll`): keyed by `()`.
    pub fn window_all<A>(self, assigner: A) -> WindowedStream<(), T, A, A::Trigger>
    where
        A: DefaultTrigger,
    {
        self.key_by(|_| ()).window(assigner)
    }
}

impl<K: Send + 'static, V: Send + 'static> DataStream<Event<K, V>> {
    /// The events of `source` (a file, a socket, ...), each with the source's timestamp, as the
    /// elements of a stream (Flink's `fromSource`).
    pub fn from_source(source: Box<dyn Source<K, V>>) -> Self {
        DataStream::from_events(map_source(source, |e: Event<K, V>| Event {
            timestamp: e.timestamp,
            key: (),
            line: e.line,
            value: e,
        }))
    }
}

impl DataStream<String> {
    /// The lines of text a TCP server at `address` (`host:port`) sends, as Flink's
    /// `socketTextStream` reads them; elements have no timestamps (processing time, or assign
    /// them).
    ///
    /// # Errors
    /// The connection fails.
    pub fn socket_text_stream(address: &str) -> Result<Self, OpenError> {
        let lines = window_io::open_lines(&InputSpec::Socket(address.to_owned()))?;
        Ok(DataStream::from_events(Box::new(LineSource { lines })))
    }
}

/// Lines of text as elements.
struct LineSource {
    lines: window_io::TextLines,
}

impl Source<(), String> for LineSource {
    fn name(&self) -> &str {
        self.lines.source_name()
    }

    fn read_batch(&mut self, batch: &mut Vec<Event<(), String>>, _max: usize) -> Read {
        // One line at a time: a socket must not hold a line back waiting for the next.
        match self.lines.next() {
            None => Read::End,
            Some(Ok((line, text))) => {
                batch.push(Event {
                    timestamp: Timestamp::MIN,
                    key: (),
                    value: text,
                    line,
                });
                Read::More
            }
            Some(Err(e)) if e.is_fatal() => Read::Failed(e.to_string()),
            Some(Err(e)) => Read::Rejected(e),
        }
    }

    fn is_live(&self) -> bool {
        true
    }

    fn progress(&self) -> Option<window_io::Progress> {
        Some(self.lines.progress())
    }
}

/// A stream partitioned by key (Flink's `KeyedStream`).
pub struct KeyedStream<K, T> {
    sources: Vec<Box<dyn Source<K, T>>>,
    out_of_orderness: i64,
    idleness: Option<i64>,
    interval: i64,
}

impl<K, T> std::fmt::Debug for KeyedStream<K, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyedStream")
            .field("sources", &self.sources.len())
            .field("out_of_orderness", &self.out_of_orderness)
            .finish_non_exhaustive()
    }
}

impl<K, T> KeyedStream<K, T> {
    /// Windows by `assigner`, with its default trigger (Flink's `window`).
    pub fn window<A>(self, assigner: A) -> WindowedStream<K, T, A, A::Trigger>
    where
        A: DefaultTrigger,
    {
        let trigger = assigner.default_trigger();
        WindowedStream::new(self, assigner, trigger)
    }

    /// Windows of `size` elements per key, fired and purged when full (Flink's
    /// `countWindow(size)`: global windows with a purging count trigger).
    ///
    /// # Errors
    /// A size of 0.
    pub fn count_window(
        self,
        size: u64,
    ) -> Result<
        WindowedStream<K, T, GlobalWindows<NeverTrigger>, PurgingTrigger<CountTrigger>>,
        String,
    > {
        let trigger = PurgingTrigger::of(CountTrigger::of(size)?);
        Ok(WindowedStream::new(self, GlobalWindows::create(), trigger))
    }
}
