//! Which fields of its input records a job reads, checked before anything is opened: their names
//! (or column numbers, `--no-header`), a composite key's fields and the output columns they
//! become, and whether the job reads a key (not for `--window-all`) and needs a value (not for a
//! count). The readers apply the rules ([`engine::io::FieldUse`], `window-io`'s `fields`); this
//! names the flag or job-file key at fault.

use anyhow::{bail, Result};
use engine::core::NumericAggregate;
use engine::io::sink::{KEY_WINDOW_RESULT_COLUMNS, LATE_COLUMNS};
use engine::io::{FieldNames, FieldUse, InputFormat, InputSpec};
use engine::job::{EvictorSpec, JobAggregate, JobSpec, TriggerSpec, WindowSpec};

use crate::args::default_fields;
use crate::resolve::{Field, Origins, KEY_FIELD, NO_HEADER, TIME_FIELD, VALUE_FIELD};

/// The fields of a job's records.
#[derive(Debug, Clone)]
pub(crate) struct Fields {
    /// The time, key and value fields, as the readers take them.
    pub(crate) names: FieldNames,
    /// CSV inputs have no header: the fields are column numbers.
    pub(crate) no_header: bool,
    /// What the job reads of each record besides its time.
    pub(crate) reads: FieldUse,
    /// The output columns of a composite key, one per key field (empty for one `key` column).
    pub(crate) key_columns: Vec<String>,
}

/// The fields `spec` reads from `inputs`.
///
/// # Errors
/// `--no-header` with a JSON-lines input, or with a field that is not a column number from 1;
/// an empty or repeated key field; key fields whose output columns would repeat a name of the
/// output.
pub(super) fn fields(
    spec: &JobSpec,
    inputs: &[(InputSpec, InputFormat)],
    late_output: bool,
    o: Origins<'_>,
) -> Result<Fields> {
    let io = &spec.io;
    let no_header = io.no_header;
    if let Some((json, _)) = inputs
        .iter()
        .find(|(_, f)| no_header && *f == InputFormat::Jsonl)
    {
        bail!(
            "{}: {} is JSON lines, whose fields are named by its members; --no-header and \
             column numbers are for CSV",
            o.subject(NO_HEADER),
            json.source_name()
        );
    }
    let default = default_fields(no_header);
    let names = FieldNames {
        time: io.time_field.clone().unwrap_or(default.time),
        key: io.key_field.clone().unwrap_or(default.key),
        value: io.value_field.clone().unwrap_or(default.value),
    };
    let reads = FieldUse {
        key: !spec.window_all,
        value: needs_values(spec),
    };
    let keys = names.key_fields();
    for (i, key) in keys.iter().enumerate() {
        if key.is_empty() {
            bail!(
                "{} {:?}: a key field has no name",
                o.subject(KEY_FIELD),
                names.key
            );
        }
        if keys[..i].contains(key) {
            bail!(
                "{} {}: the key field {key} is named twice",
                o.subject(KEY_FIELD),
                names.key
            );
        }
    }
    if no_header {
        let mut given = vec![(TIME_FIELD, names.time.as_str())];
        given.extend(keys.iter().map(|k| (KEY_FIELD, *k)));
        given.push((VALUE_FIELD, names.value.as_str()));
        for (field, text) in given {
            column_number(field, text, o)?;
        }
    }
    let key_columns = match (keys.len(), reads.key) {
        (2.., true) => {
            let results = crate::output::ResultColumns::of(spec);
            key_columns(&keys, late_output, results.names(), o)?
        }
        _ => Vec::new(),
    };
    Ok(Fields {
        names,
        no_header,
        reads,
        key_columns,
    })
}

/// Checks that `text`, the setting of `field`, is a column number from 1.
fn column_number(field: Field, text: &str, o: Origins<'_>) -> Result<()> {
    match text.parse::<u64>() {
        Ok(0) => bail!(
            "{} 0: column numbers count from 1 (as cut -f and awk's $1)",
            o.subject(field)
        ),
        Ok(_) if text.bytes().all(|b| b.is_ascii_digit()) => Ok(()),
        _ => bail!(
            "{} {text}: with {} the input has no header line, so fields are column numbers \
             counted from 1 (as cut -f), not names",
            o.subject(field),
            o.name(NO_HEADER)
        ),
    }
}

/// The output columns of the key fields `keys`: each named by its field, `key1`, `key2` ...
/// (its place in the key) for a column number.
///
/// # Errors
/// Two columns of one name, or a key column named as another column of the results (its
/// result columns, `aggregates`, included), or of the late output, when there is one.
fn key_columns(
    keys: &[&str],
    late_output: bool,
    aggregates: &[&str],
    o: Origins<'_>,
) -> Result<Vec<String>> {
    let columns: Vec<String> = keys
        .iter()
        .enumerate()
        .map(|(i, key)| match key.bytes().all(|b| b.is_ascii_digit()) {
            true => format!("key{}", i + 1),
            false => (*key).to_owned(),
        })
        .collect();
    let mut taken: Vec<&str> = KEY_WINDOW_RESULT_COLUMNS[1..].to_vec();
    taken.extend_from_slice(aggregates);
    if late_output {
        taken.extend(LATE_COLUMNS.iter().filter(|c| **c != "key"));
    }
    for (i, column) in columns.iter().enumerate() {
        if taken.contains(&column.as_str()) || columns[..i].contains(column) {
            bail!(
                "{} {}: each key field becomes an output column named after it (key1, key2 ... \
                 for column numbers), and {column} is already a column of the output",
                o.subject(KEY_FIELD),
                keys.join(",")
            );
        }
    }
    Ok(columns)
}

/// Whether the job reads the values of its elements: every aggregate but a count does, and so
/// do session windows whose gap is the value, delta triggers and delta evictors.
fn needs_values(spec: &JobSpec) -> bool {
    fn trigger(t: &TriggerSpec) -> bool {
        match t {
            TriggerSpec::Delta { .. } => true,
            TriggerSpec::Purging { inner } => trigger(inner),
            _ => false,
        }
    }
    !matches!(
        spec.aggregate,
        JobAggregate::Numeric(NumericAggregate::Count)
    ) || spec.window == WindowSpec::DynamicSession
        || matches!(spec.evictor, Some(EvictorSpec::Delta { .. }))
        || trigger(&spec.trigger)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::Given;

    fn spec(text: &str) -> JobSpec {
        JobSpec::from_toml(text).unwrap()
    }

    #[test]
    fn only_a_count_without_value_rules_needs_no_values() {
        let job = |extra: &str| {
            spec(&format!(
                "assigner = \"tumbling:1s\"\naggregate = \"count\"\n{extra}"
            ))
        };
        assert!(!needs_values(&job("")));
        assert!(!needs_values(&job("evictor = \"count:2\"")));
        assert!(!needs_values(&job("trigger = \"purging:count:2\"")));
        assert!(needs_values(&job("trigger = \"purging:delta:2\"")));
        assert!(needs_values(&job("evictor = \"delta:2\"")));
        let session = spec("assigner = \"session:value\"\naggregate = \"count\"\n");
        assert!(needs_values(&session));
        let sum = spec("assigner = \"tumbling:1s\"\naggregate = \"sum\"\n");
        assert!(needs_values(&sum));
    }

    #[test]
    fn composite_key_columns_are_named_by_their_fields() {
        let given = Given::default();
        let o = Origins::new(None, &given);
        assert_eq!(
            key_columns(&["carrier", "dest"], true, &[], o).unwrap(),
            ["carrier", "dest"]
        );
        assert_eq!(
            key_columns(&["2", "3"], false, &[], o).unwrap(),
            ["key1", "key2"]
        );
        let e = key_columns(&["result", "b"], false, &[], o)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--key-field result,b: each key field"), "{e}");
        assert!(key_columns(&["a", "watermark"], false, &[], o).is_ok());
        assert!(key_columns(&["a", "watermark"], true, &[], o).is_err());
        assert!(key_columns(&["2", "key1"], false, &[], o).is_err());
        // Issue #16 trial: a key column named as a column of several aggregates.
        assert!(key_columns(&["count", "sum"], false, &["count", "sum"], o).is_err());
        assert!(key_columns(&["a", "max"], false, &["count", "sum"], o).is_ok());
    }
}
