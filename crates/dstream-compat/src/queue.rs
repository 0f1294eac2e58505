//! Queue input streams ([`QueueInput`], [`Retention`]): prepared batches that become an input
//! stream's batches one per batch interval, as the input of the Spark harness that recorded
//! the conformance cases (the `i`-th batch pushed is the batch at `zero + (i + 1) · interval`).

use std::any::Any;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::rc::Rc;

use crate::batch::Batch;
use crate::codec::{CodecError, CodecResult, Codecs};
use crate::error::Result;
use crate::graph::{AnyNode, Compute, Meta, Node};
use crate::snapshot::StreamState;
use crate::time::since;

/// A queue input's handle and its stream operation, sharing one empty queue.
pub(crate) fn new_queue<T>(interval: i64, retention: Retention) -> (QueueInput<T>, QueueSource<T>) {
    let queue = Rc::new(RefCell::new(Queue {
        first_index: 0,
        pushed: 0,
        batches: VecDeque::new(),
    }));
    let op = QueueSource {
        queue: Rc::clone(&queue),
        interval,
        retention,
    };
    (QueueInput { queue }, op)
}

/// The handle that feeds a queue input stream (see [`StreamingContext::queue_input`](crate::StreamingContext::queue_input)).
pub struct QueueInput<T> {
    queue: Rc<RefCell<Queue<T>>>,
}

impl<T> fmt::Debug for QueueInput<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q = self.queue.borrow();
        f.debug_struct("QueueInput")
            .field("pushed", &q.pushed)
            .field("held", &q.batches.len())
            .finish()
    }
}

impl<T> QueueInput<T> {
    /// Appends the next batch: the `i`-th push (0-based) is the batch at
    /// `zero + (i + 1) · batch interval`.
    pub fn push(&self, batch: Vec<T>) {
        let mut q = self.queue.borrow_mut();
        q.pushed += 1;
        q.batches.push_back(Batch::from(batch));
    }

    /// How many batches were pushed so far (including those released since).
    #[must_use]
    pub fn pushed(&self) -> u64 {
        self.queue.borrow().pushed
    }
}

pub(crate) struct Queue<T> {
    /// Index (0-based batch number) of `batches[0]`.
    first_index: u64,
    pushed: u64,
    batches: VecDeque<Batch<T>>,
}

pub(crate) struct QueueSource<T> {
    queue: Rc<RefCell<Queue<T>>>,
    interval: i64,
    retention: Retention,
}

/// How long a queue input keeps the batches pushed into it
/// ([`StreamingContext::queue_input_with`](crate::StreamingContext::queue_input_with)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Retention {
    /// Every batch, for the life of the context.
    #[default]
    KeepAll,
    /// A batch until the stream forgets its time (its remember duration).
    UntilForgotten,
}

impl<T> QueueSource<T> {
    /// The 0-based batch number of a valid time (`zero + (i + 1) · interval`).
    fn index(&self, zero: i64, time: i64) -> i128 {
        since(time, zero) / i128::from(self.interval) - 1
    }
}

impl<T: Clone + 'static> Compute<T> for QueueSource<T> {
    fn compute(&self, this: &Node<T>, time: i64) -> Result<Option<Batch<T>>> {
        let zero = this.meta.zero.get().unwrap_or(0);
        let q = self.queue.borrow();
        let batch = u64::try_from(self.index(zero, time))
            .ok()
            .and_then(|i| i.checked_sub(q.first_index))
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| q.batches.get(i).cloned())
            .unwrap_or_else(Batch::empty);
        Ok(Some(batch))
    }

    fn dependencies(&self) -> Vec<Rc<dyn AnyNode>> {
        Vec::new()
    }

    fn forget_up_to(&self, meta: &Meta, up_to: i64) {
        if self.retention == Retention::KeepAll {
            return;
        }
        let Some(zero) = meta.zero.get() else { return };
        // Batch i is at zero + (i + 1) · interval <= up_to  <=>  i <= (up_to - zero) / interval - 1.
        let Ok(last) = u64::try_from(since(up_to, zero).div_euclid(i128::from(self.interval)) - 1)
        else {
            return;
        };
        let mut q = self.queue.borrow_mut();
        while q.first_index <= last && !q.batches.is_empty() {
            q.batches.pop_front();
            q.first_index += 1;
        }
    }

    fn detail(&self) -> String {
        match self.retention {
            Retention::KeepAll => "keeping all batches".to_owned(),
            Retention::UntilForgotten => "keeping batches until forgotten".to_owned(),
        }
    }

    // The batches pushed and not released are the input: nothing else can give them again.
    // The stream's own remembered batches are the same batches and are looked up again.
    fn snapshot(&self, _this: &Node<T>, codecs: &Codecs) -> CodecResult<StreamState> {
        codecs.check::<T>()?;
        let q = self.queue.borrow();
        let mut batches = Vec::with_capacity(q.batches.len());
        for batch in &q.batches {
            batches.push(codecs.encode_batch::<T>(batch)?);
        }
        Ok(StreamState::Queue {
            first_index: q.first_index,
            pushed: q.pushed,
            batches,
        })
    }

    fn decode_snapshot(
        &self,
        _this: &Node<T>,
        state: &StreamState,
        codecs: &Codecs,
        _zero: i64,
    ) -> CodecResult<Option<Box<dyn Any>>> {
        let StreamState::Queue {
            first_index,
            pushed,
            batches,
        } = state
        else {
            return Err(CodecError::Invalid(format!(
                "the snapshot holds {} for a queue input",
                state.what()
            )));
        };
        let (first_index, pushed) = (*first_index, *pushed);
        let held = u64::try_from(batches.len()).unwrap_or(u64::MAX);
        if first_index.checked_add(held) != Some(pushed) {
            return Err(CodecError::Invalid(format!(
                "a queue input holding {held} batches from batch {first_index} of {pushed} pushed"
            )));
        }
        if self.retention == Retention::KeepAll && first_index != 0 {
            return Err(CodecError::Invalid(format!(
                "a queue input that keeps all batches but released the first {first_index}"
            )));
        }
        codecs.check::<T>()?;
        let mut decoded = VecDeque::with_capacity(batches.len());
        for (i, bytes) in batches.iter().enumerate() {
            let records = codecs.decode_batch::<T>(bytes).map_err(|e| match e {
                CodecError::Invalid(why) => CodecError::Invalid(format!(
                    "queued batch {}: {why}",
                    first_index.saturating_add(i as u64)
                )),
                missing @ CodecError::Missing(_) => missing,
            })?;
            decoded.push_back(Batch::from(records));
        }
        Ok(Some(Box::new(Queue {
            first_index,
            pushed,
            batches: decoded,
        })))
    }

    fn install(&self, _this: &Node<T>, decoded: Box<dyn Any>) {
        if let Ok(queue) = decoded.downcast::<Queue<T>>() {
            *self.queue.borrow_mut() = *queue;
        }
    }
}
