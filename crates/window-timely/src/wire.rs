//! Keys across processes: a [`KeyId`] is an index into its process's [`KeyDictionary`], so an
//! element or a row that crosses to another process carries the key's text instead.
//!
//! timely moves typed data between the workers of one process and serializes only what goes to
//! another process; it serializes on the sending worker's thread (its `Pusher` writes the bytes
//! the send thread then copies to the socket) and deserializes on the receiving worker's thread
//! (its `Puller`). So each worker thread names its process's dictionary here
//! ([`use_dictionary`]), and the serde of the key fields ([`key_text`]) writes the text from it
//! and interns the text into it: the path within a process stays free of texts.
//!
//! Elements are routed to workers by a hash of the key's text ([`route`], through its key group,
//! [`crate::groups`]): every process maps a key to the same worker, whatever id its dictionary
//! gave it.

use std::cell::RefCell;
use std::sync::Arc;

use window_io::KeyDictionary;

thread_local! {
    /// The dictionary of the process, on each of its worker threads.
    static KEYS: RefCell<Option<Arc<KeyDictionary>>> = const { RefCell::new(None) };
}

/// Makes `keys` the dictionary that keys sent from or received on this thread are named by.
pub(crate) fn use_dictionary(keys: &Arc<KeyDictionary>) {
    KEYS.with(|k| *k.borrow_mut() = Some(Arc::clone(keys)));
}

/// The serde of a key field: its text in the thread's dictionary ([`use_dictionary`]).
pub(crate) mod key_text {
    use serde::de::{Error as _, Visitor};
    use serde::ser::Error as _;
    use serde::{Deserializer, Serializer};
    use window_io::KeyId;

    use super::KEYS;

    /// Writes the text of `key`.
    ///
    /// # Errors
    /// No dictionary on this thread, or one without this id (a bug: timely then panics).
    pub(crate) fn serialize<S: Serializer>(key: &KeyId, s: S) -> Result<S::Ok, S::Error> {
        let text = KEYS.with(|k| k.borrow().as_ref().and_then(|d| d.text(*key)));
        match text {
            Some(t) => s.serialize_str(&t),
            None => Err(S::Error::custom(format!(
                "key id {} has no text in this thread's dictionary",
                key.index()
            ))),
        }
    }

    /// Reads a key's text and interns it.
    ///
    /// # Errors
    /// Not a string, or no dictionary on this thread.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<KeyId, D::Error> {
        struct Text;
        impl Visitor<'_> for Text {
            type Value = KeyId;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key's text")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<KeyId, E> {
                KEYS.with(|k| k.borrow().as_ref().map(|d| d.intern(v)))
                    .ok_or_else(|| E::custom("no key dictionary on this thread"))
            }
        }
        d.deserialize_str(Text).map_err(D::Error::custom)
    }
}

/// A hash of a key's text that is the same in every process and on every machine (FNV-1a,
/// 64 bits; not a seeded or platform-dependent hash, which could send a key's elements to two
/// workers): where the exchange sends the key's elements. The output does not depend on it.
pub(crate) fn route(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in text.as_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    // FNV's low bits mix poorly; fold the high bits in (the exchange takes `% workers`).
    h ^ (h >> 29)
}
