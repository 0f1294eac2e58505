//! How the fields of a job spec read from JSON or TOML: durations as integers of ms or as text
//! with units (`"5min"`), the parts (windows, triggers, evictors) as text in `windowctl`'s
//! grammar (`"sliding:1h:5min"`) or as tagged objects (`{"type": "sliding", ...}`, the form of
//! the conformance cases), and a few flags in the cases' spelling.

use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use window_core::{LateDataPolicy, TimeDomain};
use window_operator::EvictMoment;

use crate::duration::{parse_duration, parse_signed_duration};

/// A duration: an integer of ms (any sign: a negative one is refused by the rule it breaks, when
/// the job is built) or text with units, which must not be negative.
pub(crate) mod ms {
    use super::*;

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        d.deserialize_any(Millis { signed: false })
    }

    pub(crate) fn serialize<S: Serializer>(v: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(*v)
    }
}

/// A duration that may be negative in text too (an offset: `"-8h"`).
pub(crate) mod signed_ms {
    use super::*;

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        d.deserialize_any(Millis { signed: true })
    }

    pub(crate) fn serialize<S: Serializer>(v: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(*v)
    }
}

/// An optional duration.
pub(crate) mod opt_ms {
    use super::*;

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        #[derive(Deserialize)]
        struct Wrapped(#[serde(with = "super::ms")] i64);
        Ok(Option::<Wrapped>::deserialize(d)?.map(|w| w.0))
    }

    pub(crate) fn serialize<S: Serializer>(v: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
        v.serialize(s)
    }
}

struct Millis {
    signed: bool,
}

impl Visitor<'_> for Millis {
    type Value = i64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a duration: ms as an integer, or text with a unit (250ms, 5s, 1min, 1h, 2d)")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
        Ok(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
        i64::try_from(v).map_err(|_| E::custom(format!("{v} ms does not fit a 64-bit duration")))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<i64, E> {
        let parsed = if self.signed {
            parse_signed_duration(v)
        } else {
            parse_duration(v)
        };
        parsed.map_err(E::custom)
    }
}

/// A value written as text in its `FromStr` grammar (and serialized with `Display`).
pub(crate) mod text {
    use super::*;

    pub(crate) fn deserialize<'de, D, T>(d: D) -> Result<T, D::Error>
    where
        D: Deserializer<'de>,
        T: FromStr,
        T::Err: fmt::Display,
    {
        let text = String::deserialize(d)?;
        text.parse().map_err(de::Error::custom)
    }

    pub(crate) fn serialize<S: Serializer, T: fmt::Display>(
        v: &T,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }
}

/// A job's aggregate: text (`"sum"`, `"count,sum,max"`) or a list of names (`["count", "sum"]`,
/// read as the names joined by commas); written as text.
pub(crate) mod aggregate {
    use super::*;
    use crate::spec::JobAggregate;

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<JobAggregate, D::Error> {
        d.deserialize_any(Aggregate)
    }

    pub(crate) fn serialize<S: Serializer>(v: &JobAggregate, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    struct Aggregate;

    impl<'de> Visitor<'de> for Aggregate {
        type Value = JobAggregate;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an aggregate (\"sum\"), several (\"count,sum,max\") or a list of names")
        }

        fn visit_str<E: de::Error>(self, v: &str) -> Result<JobAggregate, E> {
            v.parse().map_err(E::custom)
        }

        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<JobAggregate, A::Error> {
            let mut names: Vec<String> = Vec::new();
            while let Some(name) = seq.next_element::<String>()? {
                names.push(name);
            }
            self.visit_str(&names.join(","))
        }
    }
}

/// A part written as text in `windowctl`'s grammar or as a tagged object.
pub(crate) mod text_or_object {
    use super::*;

    pub(crate) fn deserialize<'de, D, T>(d: D) -> Result<T, D::Error>
    where
        D: Deserializer<'de>,
        T: FromStr + Deserialize<'de>,
        T::Err: fmt::Display,
    {
        d.deserialize_any(TextOrObject(PhantomData))
    }

    pub(crate) fn serialize<S: Serializer, T: Serialize>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        v.serialize(s)
    }
}

/// [`text_or_object`] for an optional part.
pub(crate) mod opt_text_or_object {
    use super::*;

    pub(crate) fn deserialize<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
    where
        D: Deserializer<'de>,
        T: FromStr + Deserialize<'de>,
        T::Err: fmt::Display,
    {
        struct Wrapped<T>(T);
        impl<'de, T> Deserialize<'de> for Wrapped<T>
        where
            T: FromStr + Deserialize<'de>,
            T::Err: fmt::Display,
        {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                super::text_or_object::deserialize(d).map(Wrapped)
            }
        }
        Ok(Option::<Wrapped<T>>::deserialize(d)?.map(|w| w.0))
    }

    pub(crate) fn serialize<S: Serializer, T: Serialize>(
        v: &Option<T>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        v.serialize(s)
    }
}

struct TextOrObject<T>(PhantomData<T>);

impl<'de, T> Visitor<'de> for TextOrObject<T>
where
    T: FromStr + Deserialize<'de>,
    T::Err: fmt::Display,
{
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("text (sliding:1h:5min) or an object with a \"type\"")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        v.parse().map_err(E::custom)
    }

    fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<T, M::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map))
    }
}

/// `evict_after` (the cases' spelling): after the window function, or before (the default).
pub(crate) mod evict_after {
    use super::*;

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<EvictMoment, D::Error> {
        Ok(if bool::deserialize(d)? {
            EvictMoment::After
        } else {
            EvictMoment::Before
        })
    }

    pub(crate) fn serialize<S: Serializer>(v: &EvictMoment, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(*v == EvictMoment::After)
    }
}

/// `late_side_output` (the cases' spelling): late elements to the side output, or dropped.
pub(crate) mod side_output {
    use super::*;

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<LateDataPolicy, D::Error> {
        Ok(if bool::deserialize(d)? {
            LateDataPolicy::SideOutput
        } else {
            LateDataPolicy::Drop
        })
    }

    pub(crate) fn serialize<S: Serializer>(v: &LateDataPolicy, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(*v == LateDataPolicy::SideOutput)
    }
}

/// The time domain: `event` or `processing` (also `event_time`, `processing_time`).
pub(crate) mod time_domain {
    use super::*;

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<TimeDomain, D::Error> {
        let text = String::deserialize(d)?;
        parse(&text).map_err(de::Error::custom)
    }

    pub(crate) fn serialize<S: Serializer>(v: &TimeDomain, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match v {
            TimeDomain::EventTime => "event",
            TimeDomain::ProcessingTime => "processing",
        })
    }

    /// `event` or `processing`.
    pub(crate) fn parse(text: &str) -> Result<TimeDomain, String> {
        match text {
            "event" | "event_time" | "event-time" => Ok(TimeDomain::EventTime),
            "processing" | "processing_time" | "processing-time" => Ok(TimeDomain::ProcessingTime),
            other => Err(format!(
                "expected event or processing (also event_time, event-time, processing_time, \
                 processing-time), got '{other}'"
            )),
        }
    }
}

/// A finite number: as a number (also in `serde_json`'s arbitrary-precision form, which a
/// tagged object hands over as a one-entry map) or as text.
pub(crate) mod float {
    use super::*;

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        d.deserialize_any(Float)
    }

    pub(crate) fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(*v)
    }
}

struct Float;

impl Float {
    fn finite<E: de::Error>(v: f64) -> Result<f64, E> {
        if v.is_finite() {
            Ok(v)
        } else {
            Err(E::custom(format!("{v} is not a finite number")))
        }
    }
}

impl<'de> Visitor<'de> for Float {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a finite number")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        Self::finite(v)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
        let parsed: f64 = v
            .trim()
            .parse()
            .map_err(|_| E::custom(format!("'{v}' is not a number")))?;
        Self::finite(parsed)
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<f64, M::Error> {
        // serde_json's arbitrary-precision number: {"$serde_json::private::Number": "2.5"}.
        let Some((_, text)) = map.next_entry::<String, String>()? else {
            return Err(de::Error::custom("expected a number"));
        };
        self.visit_str(&text)
    }
}
