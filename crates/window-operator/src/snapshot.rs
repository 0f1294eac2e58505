//! Snapshots of the operator: its whole state written out, and an operator rebuilt from them
//! (Flink's checkpointed keyed state and timers of the `WindowOperator`: the window contents
//! and trigger states per (key, window), the merging window sets, the timers, and here also the
//! watermark, the processing time and the counters).
//!
//! The snapshot is *logical*: the live keys, each with its session windows; every window state
//! (key, window, contents, trigger state, live timers); the retired windows in their FIFO order;
//! the timers in the order they fire; the clocks and the counters. None of the structures built
//! for speed goes into it (the rings and the map of window states, the key slots and their free
//! list, the timers' buckets and caches): restore makes them again by inserting the entries
//! into a freshly built operator, which then emits exactly what the snapshotted one would have.
//!
//! Keys are written once and referred to by their place in the list, so that the timers, which
//! name keys by interned id, name them the same after a restore, where the ids differ. A timer
//! can outlive its key (a custom trigger's timer, a merged-away window's): it names the key as
//! gone, and the restored timer names a key that no slot ever has, so it fires nothing, as
//! before. Nothing is listed in a hash's order (window states are sorted by key and window,
//! orphan timers by time), so a snapshot's bytes follow from the operator's history alone.
//!
//! Everything that goes into a snapshot must be `serde`: the key, the window, the trigger's
//! state and the window function's accumulator. The operator's `WindowComputation` impl does
//! not ask for that (keys of any type run without snapshots); an operator made
//! [`WindowOperator::with_snapshots`] writes and loads them, any other answers
//! `SnapshotError::Unsupported`.
//!
//! Encoding: `postcard`, a [`Header`] first (what kind of computation, the assigner, trigger,
//! lateness, late-data policy and timer store it was built with) and the body after it; a
//! restore checks the header against its own configuration first and names what differs, then
//! decodes the whole body and rebuilds every structure aside, and swaps them in only when all
//! of it fits: a refused snapshot leaves the operator as it was.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::Hash;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use window_assigners::WindowAssigner;
use window_core::{LateDataPolicy, SnapshotError, Timestamp, WindowMetrics};
use window_triggers::Trigger;

use crate::function::WindowFunction;
use crate::keys::{KeyId, KeyTable};
use crate::merging::MergeScratch;
use crate::operator::{RetiredState, WindowOperator, WindowState};
use crate::retired::Retired;
use crate::states::WindowStates;
use crate::timers::{Domain, Marks, TimerListing, TimerStore};

/// The kind tag of this operator's snapshots.
const KIND: &str = "flink-window-operator";

/// Gone keys a snapshot may name (each is a distinct id of [`KeyId::gone`]).
const MAX_GONE: u32 = u32::MAX / 2;

/// How an operator writes and loads snapshots: functions made where the types are known to be
/// `serde` ([`WindowOperator::with_snapshots`]).
pub(crate) struct Codec<Op> {
    pub(crate) save: fn(&Op, &mut Vec<u8>) -> Result<(), SnapshotError>,
    pub(crate) load: fn(&mut Op, &[u8]) -> Result<(), SnapshotError>,
}

impl<Op> fmt::Debug for Codec<Op> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Codec")
    }
}

/// The answer of an operator made without [`WindowOperator::with_snapshots`].
pub(crate) fn unsupported() -> SnapshotError {
    SnapshotError::Unsupported(
        "a window operator made without with_snapshots() (its key, window, trigger state and \
         accumulator types must be serde)"
            .to_owned(),
    )
}

fn invalid(why: impl Into<String>) -> SnapshotError {
    SnapshotError::Invalid(why.into())
}

/// What a snapshot says about the operator that wrote it: the configuration facts a restore
/// can check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Header {
    kind: String,
    assigner: String,
    domain: String,
    trigger: String,
    allowed_lateness: i64,
    late_side_output: bool,
    marked_timers: bool,
}

impl Header {
    /// The first fact in which `self` (the snapshot's) differs from `own`, as a message.
    fn differences(&self, own: &Header) -> Option<String> {
        let fact = |what: &str, theirs: &dyn fmt::Display, ours: &dyn fmt::Display| {
            Some(format!(
                "the snapshot is of an operator with {what} {theirs}, this one has {ours}"
            ))
        };
        let store = |marked: bool| {
            if marked {
                "MarkedTimers"
            } else {
                "TimerService"
            }
        };
        if self.assigner != own.assigner {
            fact("window assigner", &self.assigner, &own.assigner)
        } else if self.domain != own.domain {
            fact("time domain", &self.domain, &own.domain)
        } else if self.trigger != own.trigger {
            fact("trigger", &self.trigger, &own.trigger)
        } else if self.allowed_lateness != own.allowed_lateness {
            fact(
                "allowed lateness (ms)",
                &self.allowed_lateness,
                &own.allowed_lateness,
            )
        } else if self.late_side_output != own.late_side_output {
            fact(
                "late side output",
                &self.late_side_output,
                &own.late_side_output,
            )
        } else if self.marked_timers != own.marked_timers {
            fact(
                "timer store",
                &store(self.marked_timers),
                &store(own.marked_timers),
            )
        } else {
            None
        }
    }
}

/// A key of a timer: the `n`th of the snapshot's keys, or the `n`th key gone before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
enum KeyRef {
    Live(u32),
    Gone(u32),
}

/// One live key and its session windows (merging assigners; in their order, which merging
/// reads).
#[derive(Serialize, Deserialize)]
struct KeyImage<K, W> {
    key: K,
    sessions: Vec<W>,
}

/// One window state. `S` and `A` are references when written, values when read.
#[derive(Serialize, Deserialize)]
struct StateImage<W, S, A> {
    key: u32,
    window: W,
    contents: Option<A>,
    trigger: S,
    /// Its live timers (MarkedTimers; empty with a TimerService).
    marks: Vec<(Domain, Timestamp)>,
}

/// One retired window (its only timer is its cleanup timer, at `cleanup`).
#[derive(Serialize, Deserialize)]
struct RetiredImage<W, S, A> {
    cleanup: Timestamp,
    key: u32,
    window: W,
    contents: Option<A>,
    trigger: S,
}

/// The timers as [`TimerListing`] lists them, keys by [`KeyRef`].
#[derive(Serialize, Deserialize)]
struct TimersImage<W> {
    watermark: Timestamp,
    event: Vec<(Timestamp, KeyRef, W)>,
    processing: Vec<(Timestamp, KeyRef, W)>,
    orphans: Vec<(Domain, Timestamp, KeyRef, W)>,
}

/// [`WindowMetrics`], field by field.
#[derive(Clone, Copy, Serialize, Deserialize)]
struct MetricsImage([u64; 8]);

impl From<WindowMetrics> for MetricsImage {
    fn from(m: WindowMetrics) -> Self {
        Self([
            m.elements,
            m.windows_created,
            m.native_windows,
            m.windows_fired,
            m.empty_results,
            m.late_elements,
            m.late_side_output,
            m.elements_in_no_window,
        ])
    }
}

impl From<MetricsImage> for WindowMetrics {
    fn from(MetricsImage(m): MetricsImage) -> Self {
        WindowMetrics {
            elements: m[0],
            windows_created: m[1],
            native_windows: m[2],
            windows_fired: m[3],
            empty_results: m[4],
            late_elements: m[5],
            late_side_output: m[6],
            elements_in_no_window: m[7],
        }
    }
}

/// The body of a snapshot, after its [`Header`].
#[derive(Serialize, Deserialize)]
struct Body<K, W, S, A> {
    keys: Vec<KeyImage<K, W>>,
    states: Vec<StateImage<W, S, A>>,
    retired: Vec<RetiredImage<W, S, A>>,
    timers: TimersImage<W>,
    processing_time: Timestamp,
    metrics: MetricsImage,
}

/// The restored parts, built aside before they replace the operator's.
struct Rebuilt<K, W, S, A, St> {
    keys: KeyTable<K, W>,
    windows: WindowStates<W, WindowState<S, A>>,
    retired: Retired<W, RetiredState<S, A>>,
    timers: St,
    /// Elements kept in the contents of the window states and retired windows.
    held: usize,
}

fn domain_slot(d: Domain) -> usize {
    match d {
        Domain::EventTime => 0,
        Domain::ProcessingTime => 1,
    }
}

impl<K, T, A, Tr, F, S> WindowOperator<K, T, A, Tr, F, S>
where
    K: Hash + Eq + Clone + Serialize + DeserializeOwned,
    A: WindowAssigner<T>,
    A::Window: Serialize + DeserializeOwned,
    Tr: Trigger<T, A::Window>,
    Tr::State: Serialize + DeserializeOwned,
    F: WindowFunction<T>,
    F::Acc: Serialize + DeserializeOwned,
    S: TimerStore<A::Window>,
{
    /// The operator, able to write its state to a snapshot and to load one
    /// ([`window_core::WindowComputation::snapshot`] and `restore`; without this they answer
    /// `SnapshotError::Unsupported`). Needs every type that goes into the snapshot to be serde:
    /// keys, windows, trigger states (every built-in trigger's is) and accumulators (Flink
    /// likewise needs serializers for keys and state). See the `snapshot` module docs for what
    /// a snapshot holds; a restore refuses, with `SnapshotError::Invalid`, bytes that are not a
    /// snapshot of an operator of this assigner, time domain, trigger, allowed lateness, late
    /// data policy and timer store, and leaves the operator unchanged then.
    #[must_use]
    pub fn with_snapshots(mut self) -> Self {
        self.codec = Some(Codec {
            save: Self::save_snapshot,
            load: Self::load_snapshot,
        });
        self
    }

    fn header(&self, marked_timers: bool) -> Header {
        Header {
            kind: KIND.to_owned(),
            assigner: self.assigner.describe(),
            domain: self.domain().name().to_owned(),
            trigger: self.trigger.describe(),
            allowed_lateness: self.config.allowed_lateness,
            late_side_output: self.config.late_data == LateDataPolicy::SideOutput,
            marked_timers,
        }
    }

    fn save_snapshot(&self, out: &mut Vec<u8>) -> Result<(), SnapshotError> {
        let listing = self.timers.listing()?;
        let header = self.header(listing.marked);
        let mut places = HashMap::new();
        let mut keys = Vec::with_capacity(self.keys.live());
        for (id, key) in self.keys.live_keys() {
            places.insert(id, u32::try_from(keys.len()).unwrap_or(u32::MAX));
            let sessions = self.keys.sessions(id).to_vec();
            keys.push(KeyImage { key, sessions });
        }
        let place = |id: &KeyId| {
            places.get(id).copied().ok_or_else(|| {
                SnapshotError::Unsupported("a window state of a key that is gone".to_owned())
            })
        };
        let mut states = Vec::with_capacity(self.windows.len());
        for (id, window, s) in self.windows.iter() {
            states.push(StateImage {
                key: place(&id)?,
                window,
                contents: s.contents.as_ref(),
                trigger: &s.trigger,
                marks: s.marks.iter().collect(),
            });
        }
        // The map's order is a hash's: sorted, so that the bytes follow from the history.
        states.sort_unstable_by_key(|s| (s.key, s.window));
        let mut retired = Vec::with_capacity(self.retired.len());
        for (cleanup, id, window, s) in self.retired.iter() {
            retired.push(RetiredImage {
                cleanup,
                key: place(&id)?,
                window,
                contents: s.contents.as_ref(),
                trigger: &s.trigger,
            });
        }
        let body = Body {
            keys,
            states,
            retired,
            timers: timers_image(listing, &places),
            processing_time: self.processing_time,
            metrics: self.metrics.into(),
        };
        let encode = |e: postcard::Error| SnapshotError::Unsupported(format!("encoding: {e}"));
        postcard::to_io(&header, &mut *out).map_err(encode)?;
        postcard::to_io(&body, &mut *out).map_err(encode)?;
        Ok(())
    }

    fn load_snapshot(&mut self, bytes: &[u8]) -> Result<(), SnapshotError> {
        // The kind first (the header's first field), to name a foreign snapshot as such.
        let no_header = |e: postcard::Error| invalid(format!("no {KIND} snapshot header ({e})"));
        let (kind, _) = postcard::take_from_bytes::<&str>(bytes).map_err(no_header)?;
        if kind != KIND {
            return Err(invalid(format!("a snapshot of {kind}, not of {KIND}")));
        }
        let (header, rest) = postcard::take_from_bytes::<Header>(bytes).map_err(no_header)?;
        // A fresh store says which kind it is as cheaply as it can.
        let own = self.header(S::default().listing()?.marked);
        if let Some(why) = header.differences(&own) {
            return Err(invalid(why));
        }
        let (body, rest) = postcard::take_from_bytes::<Body<K, A::Window, Tr::State, F::Acc>>(rest)
            .map_err(|e| invalid(format!("a torn {KIND} snapshot ({e})")))?;
        if !rest.is_empty() {
            return Err(invalid(format!(
                "{} bytes after the end of the {KIND} snapshot",
                rest.len()
            )));
        }
        let processing_time = body.processing_time;
        let metrics = body.metrics.into();
        let rebuilt = self.rebuild(body, header.marked_timers)?;
        self.keys = rebuilt.keys;
        self.windows = rebuilt.windows;
        self.retired = rebuilt.retired;
        self.timers = rebuilt.timers;
        self.held_elements = rebuilt.held;
        self.processing_time = processing_time;
        self.metrics = metrics;
        self.assigned.clear();
        self.merge_scratch = MergeScratch::default();
        Ok(())
    }

    /// The keys, window states, retired windows and timers of `body`, built as the operator's
    /// own structures (not yet in the operator).
    #[expect(
        clippy::type_complexity,
        reason = "the operator's own structures, as its fields name them"
    )]
    fn rebuild(
        &self,
        body: Body<K, A::Window, Tr::State, F::Acc>,
        marked: bool,
    ) -> Result<Rebuilt<K, A::Window, Tr::State, F::Acc, S>, SnapshotError> {
        let mut keys = KeyTable::new();
        let mut ids = Vec::with_capacity(body.keys.len());
        for k in body.keys {
            let id = keys.intern(&k.key);
            if keys.live() == ids.len() {
                return Err(invalid("a key listed twice"));
            }
            if !k.sessions.is_empty() {
                if !self.assigner.is_merging() {
                    return Err(invalid(
                        "session windows for an assigner that does not merge",
                    ));
                }
                *keys.sessions_mut(id) = k.sessions;
            }
            ids.push(id);
        }
        let live = |n: u32| {
            ids.get(n as usize)
                .copied()
                .ok_or_else(|| invalid(format!("key #{n} named, of {} keys listed", ids.len())))
        };
        let mut in_marks = [0; 2];
        let mut held = 0;
        let mut windows = WindowStates::new(self.windows.period());
        for s in body.states {
            let id = live(s.key)?;
            let mut marks = Marks::default();
            for (d, t) in s.marks {
                if marks.insert(d, t) {
                    in_marks[domain_slot(d)] += 1;
                }
            }
            held += Self::held_in(&self.function, &s.contents);
            let state = WindowState {
                contents: s.contents,
                trigger: s.trigger,
                marks,
            };
            if windows.insert(id, s.window, state).is_some() {
                return Err(invalid("a window state listed twice"));
            }
            keys.slot_mut(id).windows += 1;
        }
        let mut retired = Retired::default();
        let mut seen = HashSet::new();
        for r in body.retired {
            let id = live(r.key)?;
            let fits = self.retiring && r.cleanup == self.cleanup_time(&r.window);
            if !fits || windows.get(id, &r.window).is_some() || !seen.insert((id, r.window)) {
                return Err(invalid("a retired window that cannot be one"));
            }
            held += Self::held_in(&self.function, &r.contents);
            let state = RetiredState {
                contents: r.contents,
                trigger: r.trigger,
            };
            if retired.push(r.cleanup, id, r.window, state).is_err() {
                return Err(invalid("retired windows out of cleanup order"));
            }
            in_marks[0] += 1;
            keys.slot_mut(id).windows += 1;
        }
        let listing = timer_listing(body.timers, marked, &live)?;
        Ok(Rebuilt {
            keys,
            windows,
            retired,
            timers: S::from_listing(listing, in_marks)?,
            held,
        })
    }
}

/// The timers of `listing`, keys named by their place in the snapshot (`places`) or as gone.
fn timers_image<W: Ord + Copy>(
    listing: TimerListing<W>,
    places: &HashMap<KeyId, u32>,
) -> TimersImage<W> {
    let mut gone: HashMap<KeyId, u32> = HashMap::new();
    let mut key_ref = |id: KeyId| match places.get(&id) {
        Some(&n) => KeyRef::Live(n),
        None => {
            let next = u32::try_from(gone.len()).unwrap_or(u32::MAX);
            KeyRef::Gone(*gone.entry(id).or_insert(next))
        }
    };
    let mut entries = |list: Vec<(Timestamp, KeyId, W)>| {
        list.into_iter()
            .map(|(t, k, w)| (t, key_ref(k), w))
            .collect::<Vec<_>>()
    };
    let event = entries(listing.event);
    let processing = entries(listing.processing);
    // Orphans are a set, in a hash's order: sorted, as the window states are.
    let mut orphans = listing.orphans;
    orphans.sort_unstable_by_key(|&(d, t, k, w)| (domain_slot(d), t, k, w));
    let orphans = orphans
        .into_iter()
        .map(|(d, t, k, w)| (d, t, key_ref(k), w))
        .collect();
    TimersImage {
        watermark: listing.watermark,
        event,
        processing,
        orphans,
    }
}

/// The [`TimerListing`] of a snapshot's timers, keys made ids again (`live` for the listed
/// keys, [`KeyId::gone`] for the others).
fn timer_listing<W>(
    image: TimersImage<W>,
    marked: bool,
    live: &dyn Fn(u32) -> Result<KeyId, SnapshotError>,
) -> Result<TimerListing<W>, SnapshotError> {
    let id = |k: KeyRef| match k {
        KeyRef::Live(n) => live(n),
        KeyRef::Gone(n) if n < MAX_GONE => Ok(KeyId::gone(n)),
        KeyRef::Gone(n) => Err(invalid(format!("gone key #{n}, more than can be"))),
    };
    let entries = |list: Vec<(Timestamp, KeyRef, W)>| {
        list.into_iter()
            .map(|(t, k, w)| Ok((t, id(k)?, w)))
            .collect::<Result<Vec<_>, SnapshotError>>()
    };
    let event = entries(image.event)?;
    let processing = entries(image.processing)?;
    let orphans = image
        .orphans
        .into_iter()
        .map(|(d, t, k, w)| Ok((d, t, id(k)?, w)))
        .collect::<Result<Vec<_>, SnapshotError>>()?;
    Ok(TimerListing {
        marked,
        watermark: image.watermark,
        event,
        processing,
        orphans,
    })
}
