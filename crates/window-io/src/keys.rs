//! Keys read as text, interned to dense numeric ids so that events move without a `String`
//! each: a reader turns a key's bytes into a [`KeyId`] with one hash lookup in its own
//! [`KeyCache`], the operator keys its state by that `u32`, and the sink turns it back into
//! text with an index into its [`KeyTexts`].
//!
//! One [`KeyDictionary`] is shared by every source of a job (behind `Arc`), so that the same key
//! read from two inputs gets the same id. It is locked only when a reader meets a key its cache
//! has not seen, or a sink meets an id its copy does not hold yet: a key's id is made before any
//! event carrying it is handed on, so the sink always finds it. Ids are never reused; the
//! dictionary holds each distinct key of the run once (its text is shared by the caches and
//! the sink's copy, not copied).
//!
//! This plays the role of Flink's key serialization (a key becomes bytes once, at the source,
//! and is compared and hashed as such), with the difference that the ids are dense, so a key's
//! text is found again by index.

use std::collections::HashMap;
use std::sync::Arc;

use ahash::RandomState;
use parking_lot::RwLock;

/// A key interned by a [`KeyDictionary`]: ids count from 1 in the order keys were first seen.
///
/// Id 0, [`KeyId::default`], is the empty key: the one key of a job without keys (Flink's
/// `windowAll`), which a computation keys by `K::default()`. Readers never make it (they refuse
/// empty keys). Ids of different dictionaries are unrelated.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct KeyId(u32);

impl KeyId {
    /// The id's position in its dictionary (0 for the empty key, then 1, 2 ... in first-seen
    /// order).
    #[must_use]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The keys of a job, shared by its sources and sinks: text to id and id to text.
#[derive(Debug)]
pub struct KeyDictionary {
    inner: RwLock<Interned>,
}

#[derive(Debug)]
struct Interned {
    ids: HashMap<Arc<str>, KeyId, RandomState>,
    texts: Vec<Arc<str>>,
}

impl Default for KeyDictionary {
    /// A dictionary holding only the empty key (id 0).
    fn default() -> Self {
        let empty: Arc<str> = Arc::from("");
        let mut ids = HashMap::default();
        ids.insert(Arc::clone(&empty), KeyId(0));
        Self {
            inner: RwLock::new(Interned {
                ids,
                texts: vec![empty],
            }),
        }
    }
}

impl KeyDictionary {
    /// A dictionary holding only the empty key, ready to share.
    #[must_use]
    pub fn shared() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The id of `key`, made if it is new.
    ///
    /// # Panics
    /// After 2^32 distinct keys (the id is a `u32`).
    pub fn intern(&self, key: &str) -> KeyId {
        if let Some(&id) = self.inner.read().ids.get(key) {
            return id;
        }
        self.intern_text(Arc::from(key)).0
    }

    /// The id of `key` and its shared text, made if it is new.
    fn intern_text(&self, key: Arc<str>) -> (KeyId, Arc<str>) {
        let mut inner = self.inner.write();
        if let Some((text, &id)) = inner.ids.get_key_value(&*key) {
            return (id, Arc::clone(text));
        }
        let id = KeyId(u32::try_from(inner.texts.len()).expect("more than 2^32 distinct keys"));
        inner.texts.push(Arc::clone(&key));
        inner.ids.insert(Arc::clone(&key), id);
        (id, key)
    }

    /// The text of `id`, if this dictionary made it.
    #[must_use]
    pub fn text(&self, id: KeyId) -> Option<Arc<str>> {
        self.inner.read().texts.get(id.index()).cloned()
    }

    /// The number of distinct keys so far, the empty key included.
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner.read().texts.len()
    }

    /// Whether only the empty key is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 1
    }

    /// Appends the texts of the ids from `from` on to `out`.
    fn copy_from(&self, from: usize, out: &mut Vec<Arc<str>>) {
        let inner = self.inner.read();
        if let Some(new) = inner.texts.get(from..) {
            out.extend(new.iter().cloned());
        }
    }
}

/// A reader's view of a [`KeyDictionary`]: the keys it has met, looked up without a lock.
#[derive(Debug)]
pub struct KeyCache {
    dictionary: Arc<KeyDictionary>,
    ids: HashMap<Arc<str>, KeyId, RandomState>,
}

impl KeyCache {
    /// A cache over `dictionary`.
    #[must_use]
    pub fn new(dictionary: Arc<KeyDictionary>) -> Self {
        Self {
            dictionary,
            ids: HashMap::default(),
        }
    }

    /// The id of `key`: one hash lookup for a key met before; for a new one, the dictionary's
    /// id (made if no source had it).
    ///
    /// # Panics
    /// As [`KeyDictionary::intern`].
    #[inline]
    pub fn id(&mut self, key: &str) -> KeyId {
        match self.ids.get(key) {
            Some(&id) => id,
            None => self.miss(key),
        }
    }

    #[cold]
    fn miss(&mut self, key: &str) -> KeyId {
        let (id, text) = self.dictionary.intern_text(Arc::from(key));
        self.ids.insert(text, id);
        id
    }
}

/// A sink's view of a [`KeyDictionary`]: id to text by index, copying new texts from the
/// dictionary when an id is beyond what it holds.
#[derive(Debug)]
pub struct KeyTexts {
    dictionary: Arc<KeyDictionary>,
    texts: Vec<Arc<str>>,
}

impl KeyTexts {
    /// A view of `dictionary`.
    #[must_use]
    pub fn new(dictionary: Arc<KeyDictionary>) -> Self {
        Self {
            dictionary,
            texts: Vec::new(),
        }
    }

    /// The text of `id`; `None` for an id this dictionary did not make.
    #[inline]
    pub fn get(&mut self, id: KeyId) -> Option<&str> {
        if id.index() >= self.texts.len() {
            self.dictionary.copy_from(self.texts.len(), &mut self.texts);
        }
        self.texts.get(id.index()).map(|t| &**t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_dense_in_first_seen_order_and_shared_by_every_cache() {
        let dictionary = KeyDictionary::shared();
        let mut a = KeyCache::new(Arc::clone(&dictionary));
        let mut b = KeyCache::new(Arc::clone(&dictionary));
        assert!(dictionary.is_empty());
        assert_eq!(a.id("x").index(), 1);
        assert_eq!(b.id("y").index(), 2);
        assert_eq!(b.id("x").index(), 1, "x was made by the other cache");
        assert_eq!(a.id("y").index(), 2);
        assert_eq!(a.id("x").index(), 1);
        assert_eq!(dictionary.len(), 3);
        assert_eq!(dictionary.intern("z").index(), 3);
        assert_eq!(dictionary.text(KeyId(2)).as_deref(), Some("y"));
        assert_eq!(dictionary.text(KeyId::default()).as_deref(), Some(""));
        assert_eq!(dictionary.intern(""), KeyId::default());
        assert_eq!(dictionary.text(KeyId(4)), None);
    }

    #[test]
    fn texts_follow_the_dictionary_as_it_grows() {
        let dictionary = KeyDictionary::shared();
        let mut texts = KeyTexts::new(Arc::clone(&dictionary));
        let mut cache = KeyCache::new(Arc::clone(&dictionary));
        assert_eq!(texts.get(KeyId(1)), None);
        assert_eq!(texts.get(KeyId::default()), Some(""));
        let a = cache.id("a");
        assert_eq!(texts.get(a), Some("a"));
        let keys: Vec<KeyId> = ["b", "a", "c", "", "é,\"q\""]
            .iter()
            .map(|k| cache.id(k))
            .collect();
        let back: Vec<String> = keys
            .iter()
            .map(|&k| texts.get(k).unwrap().to_owned())
            .collect();
        assert_eq!(back, ["b", "a", "c", "", "é,\"q\""]);
    }

    #[test]
    fn many_threads_agree_on_every_id() {
        let dictionary = KeyDictionary::shared();
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let dictionary = Arc::clone(&dictionary);
                std::thread::spawn(move || {
                    let mut cache = KeyCache::new(dictionary);
                    (0..1000)
                        .map(|i| {
                            let key = format!("k{}", (i * 7 + t * 13) % 500);
                            (key.clone(), cache.id(&key))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut texts = KeyTexts::new(Arc::clone(&dictionary));
        for h in handles {
            for (key, id) in h.join().unwrap() {
                assert_eq!(texts.get(id), Some(key.as_str()));
            }
        }
        assert_eq!(dictionary.len(), 501);
    }
}
