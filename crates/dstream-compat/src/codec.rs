//! The encodings of records in a snapshot, looked up by type at run time.
//!
//! The stream graph is heterogeneous: every stream has its own element type, and the graph-wide
//! steps see the streams only through [`AnyNode`](crate::graph::AnyNode), without their types
//! or any serde bound (the stream-building methods take any `Clone` type, `&'static str`
//! included). So the encodings are kept beside the graph, in a registry from [`TypeId`] to an
//! encoding that works on `&dyn Any`:
//!
//! * the scalar types and `String` are registered when a context is made;
//! * [`StreamingContext::register_snapshot_type`](crate::StreamingContext::register_snapshot_type)
//!   registers any `Serialize + DeserializeOwned` type (the element type of a queue input);
//! * the incremental window registers its `(K, V)` records as a *pair* of the encodings of `K`
//!   and `V`, looked up when a snapshot is written or read.
//!
//! Every encoding writes postcard's bytes of the value, so a pair encoded through the pair
//! rule and the same tuple registered directly give identical bytes: the bytes of a batch are
//! postcard's `Vec<T>` whichever way its type was registered.

use std::any::{type_name, Any, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::rc::Rc;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// Why records could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CodecError {
    /// No encoding is registered for this type (its name).
    Missing(&'static str),
    /// The encoding failed, or the bytes are not records of the type.
    Invalid(String),
}

/// The result of an encoding step.
pub(crate) type CodecResult<T> = std::result::Result<T, CodecError>;

/// One value's encoding, on a type-erased value.
trait ElemCodec {
    /// Whether every encoding this one is made of is registered.
    fn check(&self, codecs: &Codecs) -> CodecResult<()>;
    /// Appends the bytes of `value` (of the registered type) to `out`.
    fn encode(&self, value: &dyn Any, codecs: &Codecs, out: &mut Vec<u8>) -> CodecResult<()>;
    /// Reads one value of the registered type from the front of `input`; the rest after it.
    fn decode<'a>(&self, input: &'a [u8], codecs: &Codecs)
        -> CodecResult<(Box<dyn Any>, &'a [u8])>;
}

/// A type's own serde implementation, through postcard.
struct Serde<T>(PhantomData<fn() -> T>);

impl<T: Serialize + DeserializeOwned + 'static> ElemCodec for Serde<T> {
    fn check(&self, _codecs: &Codecs) -> CodecResult<()> {
        Ok(())
    }

    fn encode(&self, value: &dyn Any, _codecs: &Codecs, out: &mut Vec<u8>) -> CodecResult<()> {
        let value = value.downcast_ref::<T>().ok_or_else(wrong_type::<T>)?;
        let bytes = postcard::to_extend(value, std::mem::take(out))
            .map_err(|e| CodecError::Invalid(format!("encoding {}: {e}", type_name::<T>())))?;
        *out = bytes;
        Ok(())
    }

    fn decode<'a>(
        &self,
        input: &'a [u8],
        _codecs: &Codecs,
    ) -> CodecResult<(Box<dyn Any>, &'a [u8])> {
        let (value, rest) = postcard::take_from_bytes::<T>(input)
            .map_err(|e| CodecError::Invalid(format!("decoding {}: {e}", type_name::<T>())))?;
        Ok((Box::new(value), rest))
    }
}

/// A pair `(A, B)` as the encoding of `A` followed by that of `B` (postcard's tuple).
struct Pair<A, B>(PhantomData<fn() -> (A, B)>);

impl<A: 'static, B: 'static> ElemCodec for Pair<A, B> {
    fn check(&self, codecs: &Codecs) -> CodecResult<()> {
        codecs.check::<A>()?;
        codecs.check::<B>()
    }

    fn encode(&self, value: &dyn Any, codecs: &Codecs, out: &mut Vec<u8>) -> CodecResult<()> {
        let (a, b) = value
            .downcast_ref::<(A, B)>()
            .ok_or_else(wrong_type::<(A, B)>)?;
        codecs.encode_one(a, out)?;
        codecs.encode_one(b, out)
    }

    fn decode<'a>(
        &self,
        input: &'a [u8],
        codecs: &Codecs,
    ) -> CodecResult<(Box<dyn Any>, &'a [u8])> {
        let (a, rest) = codecs.decode_one::<A>(input)?;
        let (b, rest) = codecs.decode_one::<B>(rest)?;
        Ok((Box::new((a, b)), rest))
    }
}

fn wrong_type<T>() -> CodecError {
    CodecError::Invalid(format!("a value that is not a {}", type_name::<T>()))
}

/// How many records a batch may claim beyond one per remaining byte (records whose encoding
/// is empty, such as `()`); a larger claim is garbage, refused before it is looped over.
const MAX_EMPTY_RECORDS: u64 = 1 << 20;

/// The registry of encodings of one context, by type.
pub(crate) struct Codecs {
    by_type: RefCell<HashMap<TypeId, Rc<dyn ElemCodec>>>,
}

macro_rules! register_all {
    ($codecs:expr, $($t:ty),*) => { $( $codecs.register::<$t>(); )* };
}

impl Codecs {
    /// A registry holding the scalar types, `()`, `char` and `String`.
    pub(crate) fn with_builtins() -> Codecs {
        let codecs = Codecs {
            by_type: RefCell::new(HashMap::new()),
        };
        register_all!(
            codecs,
            (),
            bool,
            char,
            String,
            i8,
            i16,
            i32,
            i64,
            i128,
            isize,
            u8,
            u16,
            u32,
            u64,
            u128,
            usize,
            f32,
            f64
        );
        codecs
    }

    /// Registers `T`'s serde implementation (replacing any encoding of `T`; the bytes are the
    /// same for a pair).
    pub(crate) fn register<T: Serialize + DeserializeOwned + 'static>(&self) {
        self.by_type
            .borrow_mut()
            .insert(TypeId::of::<T>(), Rc::new(Serde::<T>(PhantomData)));
    }

    /// Registers `(A, B)` as a pair of the encodings of `A` and `B`, unless `(A, B)` has one.
    pub(crate) fn register_pair<A: 'static, B: 'static>(&self) {
        self.by_type
            .borrow_mut()
            .entry(TypeId::of::<(A, B)>())
            .or_insert_with(|| Rc::new(Pair::<A, B>(PhantomData)));
    }

    fn get<T: 'static>(&self) -> CodecResult<Rc<dyn ElemCodec>> {
        self.by_type
            .borrow()
            .get(&TypeId::of::<T>())
            .cloned()
            .ok_or(CodecError::Missing(type_name::<T>()))
    }

    /// Whether `T` can be encoded now (its encoding and those it is made of are registered).
    pub(crate) fn check<T: 'static>(&self) -> CodecResult<()> {
        self.get::<T>()?.check(self)
    }

    fn encode_one<T: 'static>(&self, value: &T, out: &mut Vec<u8>) -> CodecResult<()> {
        self.get::<T>()?.encode(value, self, out)
    }

    fn decode_one<'a, T: 'static>(&self, input: &'a [u8]) -> CodecResult<(T, &'a [u8])> {
        let (value, rest) = self.get::<T>()?.decode(input, self)?;
        let value = value.downcast::<T>().map_err(|_| wrong_type::<T>())?;
        Ok((*value, rest))
    }

    /// The bytes of a batch: postcard's `Vec<T>` (a varint length, then the records).
    pub(crate) fn encode_batch<T: 'static>(&self, records: &[T]) -> CodecResult<Vec<u8>> {
        let codec = self.get::<T>()?;
        let len = u64::try_from(records.len()).unwrap_or(u64::MAX);
        let mut out = postcard::to_extend(&len, Vec::new())
            .map_err(|e| CodecError::Invalid(format!("encoding a length: {e}")))?;
        for record in records {
            codec.encode(record, self, &mut out)?;
        }
        Ok(out)
    }

    /// The records of a batch written by [`encode_batch`](Self::encode_batch); every byte must
    /// be used.
    pub(crate) fn decode_batch<T: 'static>(&self, bytes: &[u8]) -> CodecResult<Vec<T>> {
        let codec = self.get::<T>()?;
        let (len, mut rest) = postcard::take_from_bytes::<u64>(bytes)
            .map_err(|e| CodecError::Invalid(format!("decoding a batch length: {e}")))?;
        let remaining = u64::try_from(rest.len()).unwrap_or(u64::MAX);
        if len > remaining.saturating_add(MAX_EMPTY_RECORDS) {
            return Err(CodecError::Invalid(format!(
                "a batch of {len} records in {remaining} bytes"
            )));
        }
        let mut records = Vec::with_capacity(usize::try_from(len.min(remaining)).unwrap_or(0));
        for _ in 0..len {
            let (value, after) = codec.decode(rest, self)?;
            let value = value.downcast::<T>().map_err(|_| wrong_type::<T>())?;
            records.push(*value);
            rest = after;
        }
        if !rest.is_empty() {
            return Err(CodecError::Invalid(format!(
                "{} bytes after the last record of a batch",
                rest.len()
            )));
        }
        Ok(records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_encodes_as_the_tuple_does() {
        let by_pair = Codecs::with_builtins();
        by_pair.register_pair::<String, i64>();
        let records = vec![("a".to_owned(), 1_i64), ("bc".to_owned(), -300)];
        let bytes = by_pair.encode_batch(&records).unwrap();
        assert_eq!(bytes, postcard::to_allocvec(&records).unwrap());
        let direct = Codecs::with_builtins();
        direct.register::<(String, i64)>();
        assert_eq!(direct.encode_batch(&records).unwrap(), bytes);
        assert_eq!(
            by_pair.decode_batch::<(String, i64)>(&bytes).unwrap(),
            records
        );
        assert_eq!(
            direct.decode_batch::<(String, i64)>(&bytes).unwrap(),
            records
        );
    }

    #[test]
    fn missing_types_and_bad_bytes_are_errors() {
        let codecs = Codecs::with_builtins();
        codecs.register_pair::<Vec<u8>, i64>();
        assert_eq!(
            codecs.check::<(Vec<u8>, i64)>(),
            Err(CodecError::Missing("alloc::vec::Vec<u8>"))
        );
        assert_eq!(
            codecs.check::<(i64, u8)>(),
            Err(CodecError::Missing("(i64, u8)"))
        );
        assert_eq!(
            codecs.encode_batch(&[(vec![1_u8], 2_i64)]),
            Err(CodecError::Missing("alloc::vec::Vec<u8>"))
        );
        assert!(matches!(
            codecs.decode_batch::<i64>(&[0xff; 12]),
            Err(CodecError::Invalid(_))
        ));
        // Two records claimed, one given; then one byte too many.
        assert!(matches!(
            codecs.decode_batch::<u8>(&[2, 7]),
            Err(CodecError::Invalid(_))
        ));
        assert!(matches!(
            codecs.decode_batch::<u8>(&[1, 7, 7]),
            Err(CodecError::Invalid(_))
        ));
        // A huge count of empty records is refused without looping over it.
        let huge = postcard::to_allocvec(&u64::MAX).unwrap();
        assert!(matches!(
            codecs.decode_batch::<()>(&huge),
            Err(CodecError::Invalid(_))
        ));
        assert_eq!(codecs.decode_batch::<()>(&[3]).unwrap(), vec![(), (), ()]);
    }
}
