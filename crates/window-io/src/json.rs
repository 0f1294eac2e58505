//! The JSON-lines fast path: one object read without building a `serde_json::Value`, only the
//! three configured members kept, as slices of the line ([`RawValue`]), the key borrowed where it
//! has no escapes. Every other member is skipped (still checked as JSON).
//!
//! The fast path takes only lines it can read completely and exactly: the time an integer (or a
//! string holding one), the key a non-empty string or a number (its text as written, see
//! [`number_key`]), the value
//! a finite number (or a string holding one). Anything else (a missing or null member, another
//! type, a malformed line, a repeated member whose last value is bad) returns `None`, and the
//! caller parses the line again the slow way, which gives the error message. Repeated members
//! keep the last value, as a `serde_json` map does.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::source::FieldNames;

/// The three members as read: raw JSON text.
#[derive(Default)]
struct Members<'a> {
    time: Option<&'a RawValue>,
    key: Option<&'a RawValue>,
    value: Option<&'a RawValue>,
}

/// Reads one object's members named by `names`.
struct Seed<'n> {
    names: &'n FieldNames,
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Members<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Members<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let mut members = Members::default();
        while let Some(name) = map.next_key::<Name<'de>>()? {
            let slot = if *name.0 == *self.names.time {
                &mut members.time
            } else if *name.0 == *self.names.key {
                &mut members.key
            } else if *name.0 == *self.names.value {
                &mut members.value
            } else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            *slot = Some(map.next_value::<&'de RawValue>()?);
        }
        Ok(members)
    }
}

/// A member name, borrowed from the line unless it has escapes.
struct Name<'a>(Cow<'a, str>);

impl<'de> serde::Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(NameVisitor)
    }
}

struct NameVisitor;

impl<'de> Visitor<'de> for NameVisitor {
    type Value = Name<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Name(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Name(Cow::Owned(v.to_owned())))
    }
}

/// A JSON string's contents, borrowed unless it has escapes; `None` if `raw` is not a string.
fn string(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    if !text.starts_with('"') {
        return None;
    }
    match serde_json::from_str::<&str>(text) {
        Ok(s) => Some(Cow::Borrowed(s)),
        // Escapes: unescaped into a String.
        Err(_) => serde_json::from_str::<String>(text).ok().map(Cow::Owned),
    }
}

/// Whether `raw` is a JSON number (it is valid JSON, so its first byte tells).
fn is_number(raw: &RawValue) -> bool {
    raw.get()
        .as_bytes()
        .first()
        .is_some_and(|b| *b == b'-' || b.is_ascii_digit())
}

/// The event of one JSON object line, if the fast path can read it exactly: (time, key,
/// value). `parse_time` and `parse_value` read a string member's text.
pub(crate) fn fast_record<'a>(
    text: &'a str,
    names: &FieldNames,
    parse_time: impl Fn(&str) -> Option<i64>,
    parse_value: impl Fn(&str) -> Option<window_core::Number>,
) -> Option<(i64, Cow<'a, str>, window_core::Number)> {
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let mut d = serde_json::Deserializer::from_str(text);
    let members = Seed { names }.deserialize(&mut d).ok()?;
    d.end().ok()?;
    let time = members.time?;
    let timestamp = if is_number(time) {
        // An integer of the i64 range (the text rule's small-integer path first); a fraction
        // or exponent goes the slow way.
        parse_time(time.get())?
    } else {
        parse_time(&string(time)?)?
    };
    let key = members.key?;
    let key = if is_number(key) {
        // A number's text as written (`1e2`, `1.50`): see [`number_key`].
        Cow::Borrowed(key.get())
    } else {
        string(key)?
    };
    if key.is_empty() {
        return None;
    }
    let value = members.value?;
    let value = if is_number(value) {
        parse_value(value.get())?
    } else {
        parse_value(&string(value)?)?
    };
    let finite = !matches!(value, window_core::Number::Float(f) if !f.is_finite());
    finite.then_some((timestamp, key, value))
}

/// The text of member `name` of the JSON object `text` as written, when it is a number: a
/// numeric key is its literal text (`100`, `1e2`, `1E2`, `1.50` and `100.0` are five keys), as a
/// CSV key is, not the number `serde_json` would print (`1e+2` for `1e2`). A repeated member
/// gives its last value, as a `serde_json` map does. `None` when the line is not an object or
/// the member is not a number.
pub(crate) fn number_key<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let members: std::collections::HashMap<Cow<'_, str>, &'a RawValue> =
        serde_json::from_str(text).ok()?;
    let member = members.get(name).copied()?;
    is_number(member).then(|| member.get())
}
