//! Key ids in snapshots that move between dictionaries.
//!
//! A [`KeyId`] is an index into its process's [`crate::KeyDictionary`], and a computation's
//! snapshot writes its keys through serde, as ids. A snapshot restored by another process (a
//! cluster's checkpoint resumed with another number of processes), or into a fresh dictionary,
//! must not read them as ids of the restoring dictionary. So a snapshot can be written
//! *renumbered* ([`renumbered`]): each distinct key id it writes becomes its place among the
//! keys the snapshot met (0, 1, 2 ... in first-written order), and the caller keeps those
//! keys' texts beside the bytes. The restoring side interns the texts in its own dictionary and
//! reads the snapshot *translated* ([`translated`]): number `n` becomes the id of the `n`th
//! text. This plays the role of Flink's key serializer in keyed-state snapshots, which write
//! each key's bytes; here the text is written once per snapshot, not once per state entry.
//!
//! Outside these scopes a key id is written and read as its `u32` (serde's newtype struct
//! `KeyId`, the bytes a derived implementation gives). The scopes are per thread: serde calls
//! the key's implementation on the thread that serializes, so a computation's `snapshot` and
//! `restore` (which run on the caller's thread) see them.

use std::cell::RefCell;
use std::collections::HashMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::KeyId;

/// What key ids mean on this thread right now.
enum Scope {
    /// Ids are ids.
    Plain,
    /// Written ids become their place in `order` (first written first).
    Renumber {
        places: HashMap<KeyId, u32>,
        order: Vec<KeyId>,
    },
    /// Read numbers are places in this list.
    Translate(Vec<KeyId>),
}

thread_local! {
    static SCOPE: RefCell<Scope> = const { RefCell::new(Scope::Plain) };
}

/// Puts the thread's previous scope back when dropped (also when `f` panics).
struct Restore(Option<Scope>);

impl Drop for Restore {
    fn drop(&mut self) {
        if let Some(previous) = self.0.take() {
            SCOPE.with(|s| *s.borrow_mut() = previous);
        }
    }
}

/// Enters `scope` on this thread until the returned guard drops; returns the guard and what
/// the scope was replaced by at the end (through [`Restore`]).
fn enter(scope: Scope) -> Restore {
    Restore(Some(
        SCOPE.with(|s| std::mem::replace(&mut *s.borrow_mut(), scope)),
    ))
}

/// Runs `f` (which writes a snapshot) with every key id it serializes written as its place
/// among the distinct ids written so far, and returns `f`'s result and those ids in place
/// order: the caller keeps their texts beside the bytes.
///
/// Scopes do not nest: a [`renumbered`] or [`translated`] inside `f` has its own numbering,
/// and this one continues after it.
pub fn renumbered<R>(f: impl FnOnce() -> R) -> (R, Vec<KeyId>) {
    let guard = enter(Scope::Renumber {
        places: HashMap::new(),
        order: Vec::new(),
    });
    let result = f();
    let ended = SCOPE.with(|s| std::mem::replace(&mut *s.borrow_mut(), Scope::Plain));
    drop(guard);
    match ended {
        Scope::Renumber { order, .. } => (result, order),
        // `f` left this thread's scope as it found it (each scope puts back its previous one).
        Scope::Plain | Scope::Translate(_) => (result, Vec::new()),
    }
}

/// Runs `f` (which reads a snapshot written [`renumbered`]) with every key number it
/// deserializes read as the id at that place of `ids` (the restoring dictionary's ids of the
/// texts the snapshot's keys had, in place order).
///
/// A number at or past `ids.len()` fails the deserialization (a serde error naming it), which
/// a computation's `restore` reports as an invalid snapshot.
pub fn translated<R>(ids: Vec<KeyId>, f: impl FnOnce() -> R) -> R {
    let _guard = enter(Scope::Translate(ids));
    f()
}

/// The wire form: serde's newtype struct `KeyId` around a `u32`, as a derive writes it.
#[derive(Serialize, Deserialize)]
#[serde(rename = "KeyId")]
struct Wire(u32);

impl Serialize for KeyId {
    /// Writes the id, or its place in a [`renumbered`] scope.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = SCOPE.with(|scope| match &mut *scope.borrow_mut() {
            Scope::Renumber { places, order } => *places.entry(*self).or_insert_with(|| {
                order.push(*self);
                // A snapshot holds fewer distinct keys than ids exist (`u32`).
                (order.len() - 1) as u32
            }),
            Scope::Plain | Scope::Translate(_) => self.raw(),
        });
        Wire(n).serialize(s)
    }
}

impl<'de> Deserialize<'de> for KeyId {
    /// Reads an id, or a place translated in a [`translated`] scope.
    ///
    /// # Errors
    /// Not a `u32`; in a [`translated`] scope, a place past its list.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Wire(n) = Wire::deserialize(d)?;
        SCOPE.with(|scope| match &*scope.borrow() {
            Scope::Translate(ids) => ids.get(n as usize).copied().ok_or_else(|| {
                D::Error::custom(format!(
                    "key number {n} is not among the snapshot's {} keys",
                    ids.len()
                ))
            }),
            Scope::Plain | Scope::Renumber { .. } => Ok(KeyId::from_raw(n)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KeyDictionary;

    /// A state keyed by id, as a computation's snapshot holds one.
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct State {
        entries: Vec<(KeyId, i64)>,
        timers: Vec<(i64, KeyId)>,
    }

    fn encode(state: &State) -> Vec<u8> {
        postcard::to_allocvec(state).expect("encodes")
    }

    #[test]
    fn plain_ids_are_the_derived_bytes() {
        // Outside a scope the bytes are a plain u32 newtype's.
        #[derive(Serialize)]
        #[serde(rename = "KeyId")]
        struct Derived(u32);
        let id = KeyId::from_raw(300);
        assert_eq!(
            postcard::to_allocvec(&id).unwrap(),
            postcard::to_allocvec(&Derived(300)).unwrap()
        );
        assert_eq!(serde_json::to_string(&id).unwrap(), "300");
        let back: KeyId = postcard::from_bytes(&postcard::to_allocvec(&id).unwrap()).unwrap();
        assert_eq!(back, id);
    }

    #[test]
    fn a_renumbered_snapshot_restores_into_another_dictionary() {
        // Process A met keys in one order, process B (the restoring one) in another.
        let a = KeyDictionary::default();
        for k in ["x", "y", "z", "w"] {
            a.intern(k);
        }
        let (y, w, z) = (a.intern("y"), a.intern("w"), a.intern("z"));
        let state = State {
            entries: vec![(w, 1), (y, 2), (w, 3)],
            timers: vec![(10, z), (20, y)],
        };
        let (bytes, keys) = renumbered(|| encode(&state));
        assert_eq!(keys, vec![w, y, z], "first-written order, each once");
        let texts: Vec<String> = keys
            .iter()
            .map(|k| a.text(*k).unwrap().to_string())
            .collect();
        assert_eq!(texts, ["w", "y", "z"]);

        let b = KeyDictionary::default();
        b.intern("z");
        b.intern("q");
        let ids: Vec<KeyId> = texts.iter().map(|t| b.intern(t)).collect();
        let back: State = translated(ids, || postcard::from_bytes(&bytes).unwrap());
        let named = |k: KeyId| b.text(k).unwrap().to_string();
        let entries: Vec<(String, i64)> =
            back.entries.iter().map(|&(k, v)| (named(k), v)).collect();
        let timers: Vec<(i64, String)> = back.timers.iter().map(|&(t, k)| (t, named(k))).collect();
        assert_eq!(entries, [("w".into(), 1), ("y".into(), 2), ("w".into(), 3)]);
        assert_eq!(timers, [(10, "z".into()), (20, "y".into())]);
        // The scope ended: ids are ids again.
        assert_eq!(
            postcard::to_allocvec(&y).unwrap(),
            postcard::to_allocvec(&Wire(2)).unwrap()
        );
    }

    #[test]
    fn a_number_past_the_list_is_an_error() {
        let state = State {
            entries: vec![(KeyId::from_raw(5), 1), (KeyId::from_raw(6), 1)],
            timers: Vec::new(),
        };
        // postcard drops serde's messages: JSON shows the one a restore reports.
        let (text, keys) = renumbered(|| serde_json::to_string(&state).unwrap());
        assert_eq!(keys.len(), 2);
        assert_eq!(text, r#"{"entries":[[0,1],[1,1]],"timers":[]}"#);
        let err = translated(vec![KeyId::from_raw(1)], || {
            serde_json::from_str::<State>(&text).unwrap_err()
        });
        assert!(
            err.to_string()
                .contains("key number 1 is not among the snapshot's 1 keys"),
            "{err}"
        );
    }

    #[test]
    fn scopes_end_even_when_the_closure_panics() {
        let caught = std::panic::catch_unwind(|| {
            renumbered(|| -> () { panic!("in the snapshot") });
        });
        assert!(caught.is_err());
        let id = KeyId::from_raw(7);
        assert_eq!(
            postcard::to_allocvec(&id).unwrap(),
            postcard::to_allocvec(&Wire(7)).unwrap()
        );
    }
}
