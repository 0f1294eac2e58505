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

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Arc;

use ahash::RandomState;
use hashbrown::HashTable;
use parking_lot::RwLock;

/// A key interned by a [`KeyDictionary`]: ids count from 1 in the order keys were first seen.
///
/// Id 0, [`KeyId::default`], is the empty key: the one key of a job without keys (Flink's
/// `windowAll`), which a computation keys by `K::default()`. Readers never make it (they refuse
/// empty keys). Ids of different dictionaries are unrelated.
///
/// Serde writes it as its `u32`, or renumbered for a snapshot that moves between dictionaries
/// ([`crate::portable`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId(u32);

impl KeyId {
    /// The id's position in its dictionary (0 for the empty key, then 1, 2 ... in first-seen
    /// order).
    #[must_use]
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The id as its `u32` (for [`crate::portable`]'s serde).
    pub(crate) fn raw(self) -> u32 {
        self.0
    }

    /// The id `n` (for [`crate::portable`]'s serde).
    pub(crate) fn from_raw(n: u32) -> Self {
        Self(n)
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

    /// The text of the key whose id has index `index` ([`KeyId::index`]), if this dictionary
    /// made it (for tables indexed by key id).
    #[must_use]
    pub fn text_at(&self, index: usize) -> Option<Arc<str>> {
        self.inner.read().texts.get(index).cloned()
    }

    /// The texts of every key after the empty one, in id order (ids 1, 2 ...): what a
    /// checkpoint keeps of the dictionary, since the computation's state names keys by id.
    #[must_use]
    pub fn texts(&self) -> Vec<String> {
        let inner = self.inner.read();
        inner.texts.iter().skip(1).map(|t| t.to_string()).collect()
    }

    /// A dictionary holding the empty key and `texts` as ids 1, 2 ... (what
    /// [`KeyDictionary::texts`] listed), ready to share: a job resumed from a checkpoint gives
    /// every key its id of before.
    ///
    /// # Errors
    /// A text that is empty or listed twice (the listing was not a dictionary's), named by its
    /// position.
    pub fn restored(texts: Vec<String>) -> Result<Arc<Self>, String> {
        let d = Self::default();
        for (i, text) in texts.into_iter().enumerate() {
            let id = d.intern(&text);
            if id.index() != i + 1 {
                return Err(format!(
                    "key {} of the checkpoint's key list is empty or repeats an earlier one",
                    i + 1
                ));
            }
        }
        Ok(Arc::new(d))
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
///
/// Its table holds a 16-byte [`Slot`] per key met: a key of up to [`Slot::INLINE`] bytes (every
/// key of the bundled and benchmark data) lies in the slot itself, so that a look-up reads the
/// table's control byte and one slot and follows no pointer; a longer key's slot names its text
/// in a side list. (A `HashMap<Arc<str>, KeyId>` read a 24-byte bucket and then the key's text
/// behind the `Arc`, elsewhere in the heap: one more cache miss per event when the keys outgrow
/// the cache, which made the key look-up about half of the reader's time on the 10,000 keys of
/// the Flink workload.)
#[derive(Debug)]
pub struct KeyCache<S = RandomState> {
    dictionary: Arc<KeyDictionary>,
    slots: HashTable<Slot>,
    /// The texts of the keys longer than [`Slot::INLINE`] bytes, by [`Slot::long_index`].
    long: Vec<Arc<str>>,
    hasher: S,
}

/// One key of a [`KeyCache`]: its id, and its bytes (padded with zeros) when they fit, else the
/// index of its text in the cache's long texts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    bytes: [u8; Slot::INLINE],
    /// The key's length in bytes, or [`Slot::LONG`].
    len: u8,
    id: KeyId,
}

impl Slot {
    /// The longest key kept in the slot.
    const INLINE: usize = 11;
    /// The `len` of a slot whose key is in the long texts.
    const LONG: u8 = u8::MAX;

    /// The slot of a key of at most [`Slot::INLINE`] bytes (`None` for a longer one), with `id`.
    #[inline]
    fn inline(key: &[u8], id: KeyId) -> Option<Slot> {
        let mut bytes = [0; Slot::INLINE];
        bytes.get_mut(..key.len())?.copy_from_slice(key);
        Some(Slot {
            bytes,
            len: key.len() as u8,
            id,
        })
    }

    /// The slot of a long key whose text is the cache's long text `index`.
    fn long(index: usize, id: KeyId) -> Slot {
        let index = u32::try_from(index).expect("fewer long keys than ids");
        let mut bytes = [0; Slot::INLINE];
        bytes[..4].copy_from_slice(&index.to_le_bytes());
        Slot {
            bytes,
            len: Slot::LONG,
            id,
        }
    }

    /// The index in the long texts of a slot whose `len` is [`Slot::LONG`].
    fn long_index(&self) -> usize {
        let [a, b, c, d, ..] = self.bytes;
        u32::from_le_bytes([a, b, c, d]) as usize
    }

    /// The key's bytes.
    fn key<'a>(&'a self, long: &'a [Arc<str>]) -> &'a [u8] {
        match self.len {
            Slot::LONG => long[self.long_index()].as_bytes(),
            len => &self.bytes[..usize::from(len)],
        }
    }
}

impl KeyCache {
    /// A cache over `dictionary`.
    #[must_use]
    pub fn new(dictionary: Arc<KeyDictionary>) -> Self {
        Self::with_hasher(dictionary, RandomState::new())
    }
}

impl<S: BuildHasher> KeyCache<S> {
    /// A cache over `dictionary` hashing keys with `hasher` (tests make every key collide).
    fn with_hasher(dictionary: Arc<KeyDictionary>, hasher: S) -> Self {
        Self {
            dictionary,
            slots: HashTable::new(),
            long: Vec::new(),
            hasher,
        }
    }

    /// The id of `key`: one hash lookup for a key met before; for a new one, the dictionary's
    /// id (made if no source had it).
    ///
    /// # Panics
    /// As [`KeyDictionary::intern`].
    #[inline]
    pub fn id(&mut self, key: &str) -> KeyId {
        let bytes = key.as_bytes();
        let hash = self.hasher.hash_one(bytes);
        let found = match Slot::inline(bytes, KeyId::default()) {
            // A short key: its slot is equal in bytes and length (the padding is zeros).
            Some(probe) => self
                .slots
                .find(hash, |s| s.bytes == probe.bytes && s.len == probe.len),
            None => {
                let long = &self.long;
                self.slots.find(hash, |s| {
                    s.len == Slot::LONG && long[s.long_index()].as_bytes() == bytes
                })
            }
        };
        match found {
            Some(slot) => slot.id,
            None => self.miss(key, hash),
        }
    }

    #[cold]
    fn miss(&mut self, key: &str, hash: u64) -> KeyId {
        let (id, text) = self.dictionary.intern_text(Arc::from(key));
        let slot = Slot::inline(key.as_bytes(), id).unwrap_or_else(|| {
            self.long.push(text);
            Slot::long(self.long.len() - 1, id)
        });
        let (long, hasher) = (&self.long, &self.hasher);
        self.slots
            .insert_unique(hash, slot, |s| hasher.hash_one(s.key(long)));
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

/// Ends one part of a composite key's text and starts the next (U+001F, the unit separator).
const PART_SEPARATOR: char = '\u{1f}';

/// Escapes [`PART_SEPARATOR`] and itself inside a part (U+001E, the record separator): followed by
/// `s` it stands for the separator, by `e` for itself.
const PART_ESCAPE: char = '\u{1e}';

/// Appends `part` to the text of a composite key: after [`PART_SEPARATOR`] unless it is the
/// first, with [`PART_SEPARATOR`] and [`PART_ESCAPE`] escaped, so that the parts are found again
/// whatever they hold.
pub fn push_key_part(text: &mut String, part: &str, first: bool) {
    if !first {
        text.push(PART_SEPARATOR);
    }
    if !part.contains([PART_SEPARATOR, PART_ESCAPE]) {
        text.push_str(part);
        return;
    }
    for c in part.chars() {
        match c {
            PART_SEPARATOR => text.extend([PART_ESCAPE, 's']),
            PART_ESCAPE => text.extend([PART_ESCAPE, 'e']),
            c => text.push(c),
        }
    }
}

/// The text of a composite key, a tuple of fields (Flink's `keyBy` on several fields): its parts
/// joined by [`push_key_part`]. Two different tuples of the same length never give the same text
/// (a separator inside a part is escaped), so one interned text stands for one tuple; a sink
/// writing one column per part splits it again with [`split_key_parts`].
#[must_use]
pub fn join_key_parts<S: AsRef<str>>(parts: &[S]) -> String {
    let mut text = String::new();
    for (i, part) in parts.iter().enumerate() {
        push_key_part(&mut text, part.as_ref(), i == 0);
    }
    text
}

/// The parts of a composite key's text, as [`join_key_parts`] joined them (borrowed unless a
/// part had to be escaped). A text with no separator is one part: itself.
#[must_use]
pub fn split_key_parts(text: &str) -> Vec<Cow<'_, str>> {
    text.split(PART_SEPARATOR)
        .map(|part| {
            if !part.contains(PART_ESCAPE) {
                return Cow::Borrowed(part);
            }
            let mut out = String::with_capacity(part.len());
            let mut chars = part.chars();
            while let Some(c) = chars.next() {
                if c != PART_ESCAPE {
                    out.push(c);
                    continue;
                }
                match chars.next() {
                    Some('s') => out.push(PART_SEPARATOR),
                    Some('e') => out.push(PART_ESCAPE),
                    // Not made by `push_key_part`: kept as it is.
                    Some(other) => out.extend([PART_ESCAPE, other]),
                    None => out.push(PART_ESCAPE),
                }
            }
            Cow::Owned(out)
        })
        .collect()
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

    /// The cache's slots against a plain map: keys of every length around the inline limit
    /// (empty, 11 and 12 bytes, multi-byte UTF-8, long ones), met in a seeded random order, get
    /// the dictionary's ids, the same every time, across the table's growth.
    #[test]
    fn the_cache_gives_the_ids_a_plain_map_gives_for_keys_of_every_length() {
        assert_eq!(std::mem::size_of::<Slot>(), 16);
        cache_against_a_plain_map(RandomState::new(), 20_000);
        // Every key of the same hash: only the slot comparison tells keys apart.
        let same = std::hash::BuildHasherDefault::<Constant>::default();
        cache_against_a_plain_map(same, 3_000);
    }

    /// A hasher giving every key the same hash.
    #[derive(Default)]
    struct Constant;

    impl std::hash::Hasher for Constant {
        fn finish(&self) -> u64 {
            7
        }

        fn write(&mut self, _: &[u8]) {}
    }

    fn cache_against_a_plain_map(hasher: impl BuildHasher, steps: usize) {
        let dictionary = KeyDictionary::shared();
        let mut cache = KeyCache::with_hasher(Arc::clone(&dictionary), hasher);
        let mut reference: HashMap<String, KeyId> = HashMap::new();
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // NUL too: a short key is its bytes padded with zeros, so only the length tells "a" from
        // "a\0".
        let alphabet = ["a", "\0", "é", "0", "\u{1f}", ","];
        for _ in 0..steps {
            let len = (next() % 26) as usize;
            let key: String = (0..len % 20)
                .map(|i| alphabet[((next() >> 8) as usize + i) % (2 + len % 4)])
                .collect();
            let id = cache.id(&key);
            let expected = *reference
                .entry(key.clone())
                .or_insert_with(|| dictionary.intern(&key));
            assert_eq!(id, expected, "{key:?}");
            assert_eq!(dictionary.text(id).as_deref(), Some(key.as_str()));
        }
        assert!(reference.keys().any(|k| k.len() == Slot::INLINE));
        assert!(reference.keys().any(|k| k.len() == Slot::INLINE + 1));
        assert!(reference.keys().any(|k| k.len() > 20));
        assert!(reference.len() > steps / 20, "{}", reference.len());
        for (key, &id) in &reference {
            assert_eq!(cache.id(key), id, "{key:?}");
        }
        assert_eq!(
            dictionary.len(),
            reference.len() + usize::from(!reference.contains_key(""))
        );
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

    /// Issue 16, item 13: tuples whose parts hold the separator, the escape or commas get texts
    /// of their own, and split back into their parts.
    #[test]
    fn composite_key_texts_are_one_per_tuple_and_split_back() {
        let s = PART_SEPARATOR.to_string();
        let e = PART_ESCAPE.to_string();
        let tuples: Vec<Vec<String>> = vec![
            vec!["a,b".into(), "c".into()],
            vec!["a".into(), "b,c".into()],
            vec!["a".into(), "b".into()],
            vec![format!("a{s}b"), "c".into()],
            vec!["a".into(), format!("b{s}c")],
            vec!["a".into(), "b".into(), "c".into()],
            vec![format!("a{e}"), "b".into()],
            vec!["a".into(), format!("{e}b")],
            vec![format!("a{e}s"), "b".into()],
            vec![format!("{e}{e}s{s}"), format!("{s}{e}")],
            vec!["é".into(), "\"q\"".into()],
        ];
        let texts: Vec<String> = tuples.iter().map(|t| join_key_parts(t)).collect();
        for (i, (tuple, text)) in tuples.iter().zip(&texts).enumerate() {
            let back: Vec<String> = split_key_parts(text)
                .into_iter()
                .map(Cow::into_owned)
                .collect();
            assert_eq!(&back, tuple, "{text:?}");
            for (j, other) in texts.iter().enumerate().skip(i + 1) {
                assert_ne!(text, other, "{tuple:?} and {:?}", tuples[j]);
            }
        }
        assert_eq!(join_key_parts(&["a", "b"]), format!("a{s}b"));
        assert_eq!(split_key_parts("plain"), vec![Cow::Borrowed("plain")]);
    }
}
