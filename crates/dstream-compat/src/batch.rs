//! [`Batch`]: the records of one stream at one batch time, Spark's RDD in this crate. A batch is
//! computed once and then shared, by the stream that remembers it and by every window that
//! slices it, so it is reference-counted and immutable.

use std::fmt;
use std::ops::Deref;
use std::rc::Rc;

/// The records of one stream at one batch time (Spark's `RDD[T]` of a DStream at a time),
/// shared and immutable; it dereferences to a slice.
///
/// The order of the records is deterministic (a window lists its batches in time order; a
/// per-key result lists keys in the order they first appear) but, as in Spark, not part of
/// the contract: compare batches as multisets.
///
/// # Examples
/// ```
/// use dstream_compat::Batch;
///
/// let batch = Batch::from(vec![1, 2, 3]);
/// assert_eq!(batch.len(), 3);
/// assert_eq!(&batch[..], &[1, 2, 3]);
/// ```
pub struct Batch<T>(Rc<Vec<T>>);

impl<T> Batch<T> {
    /// An empty batch.
    #[must_use]
    pub fn empty() -> Batch<T> {
        Batch(Rc::new(Vec::new()))
    }

    /// The records as a vector (moved out if this is the only handle, cloned otherwise).
    #[must_use]
    pub fn into_vec(self) -> Vec<T>
    where
        T: Clone,
    {
        Rc::try_unwrap(self.0).unwrap_or_else(|shared| (*shared).clone())
    }
}

impl<T> Clone for Batch<T> {
    fn clone(&self) -> Self {
        Batch(Rc::clone(&self.0))
    }
}

impl<T> Deref for Batch<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T> From<Vec<T>> for Batch<T> {
    fn from(records: Vec<T>) -> Self {
        Batch(Rc::new(records))
    }
}

impl<T: fmt::Debug> fmt::Debug for Batch<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

impl<T: PartialEq> PartialEq for Batch<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<T: Eq> Eq for Batch<T> {}
