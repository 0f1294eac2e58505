//! Reading a job file (`windowctl run --job FILE`): TOML or JSON by the file's extension, into
//! the one job description of the workspace, [`JobSpec`] (`window-job`), so that a job file
//! means what the conformance cases and the library mean by the same fields.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use engine::job::JobSpec;

/// The formats a job file can be in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum JobFormat {
    /// `.toml`.
    Toml,
    /// `.json`.
    Json,
}

impl JobFormat {
    /// The format a file's name says (its extension, in any case), if it says one.
    fn of(path: &Path) -> Option<JobFormat> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "toml" => Some(JobFormat::Toml),
            "json" => Some(JobFormat::Json),
            _ => None,
        }
    }
}

/// The job the file at `path` describes.
///
/// # Errors
/// A file that cannot be read (naming `--job` and the path), a name that is neither `.toml`
/// nor `.json`, or a file that is not a job: an unknown key, a missing one, a bad value (the
/// error names the file, and the key and line as the parser reports them).
pub(crate) fn load(path: &Path) -> Result<JobSpec> {
    let Some(format) = JobFormat::of(path) else {
        bail!(
            "--job {}: a job file is TOML (a .toml name) or JSON (a .json name); rename it to say which",
            path.display()
        );
    };
    let text =
        std::fs::read_to_string(path).with_context(|| format!("--job {}", path.display()))?;
    let parsed = match format {
        JobFormat::Toml => JobSpec::from_toml(&text),
        JobFormat::Json => JobSpec::from_json(&text),
    };
    parsed.map_err(|e| {
        let message = e.to_string();
        match format {
            // The TOML parser shows the line and marks the key or value at fault.
            JobFormat::Toml => anyhow!("{}: {}", path.display(), message.trim_end()),
            // The JSON parser gives a position, and names the key only for unknown or missing
            // ones: name the key at the position.
            JobFormat::Json => match json_error_key(&message, &text) {
                Some(key) => anyhow!("{}: {key}: {message}", path.display()),
                None => anyhow!("{}: {message}", path.display()),
            },
        }
    })
}

/// The key (`io.late_output`) at the position a JSON parser's `message` ends with ("at line L
/// column C", C bytes of line L read), in `text`.
fn json_error_key(message: &str, text: &str) -> Option<String> {
    let (_, at) = message.rsplit_once(" at line ")?;
    let (line, column) = at.split_once(" column ")?;
    let (line, column) = (line.parse::<usize>().ok()?, column.parse::<usize>().ok()?);
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let mut offset = (line_start + column).min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let (open, closed) = json_key_path(&text[..offset]);
    // A missing field is reported at the end of its object, which names it.
    if message.starts_with("missing field") {
        open
    } else {
        open.or(closed)
    }
}

/// An object being read, in [`json_key_path`].
#[derive(Debug)]
struct OpenObject {
    /// The last key read in it, or being read.
    key: Option<String>,
    /// Whether the next string is a key.
    expect_key: bool,
}

/// The keys of the objects open at the end of `prefix` (the start of a JSON text), outermost
/// first, each the last key read (or being read) in its object: `io.late_output`; and the keys
/// open before the last object closed, for a prefix that has closed the outermost one (a
/// parser that reads a value whole before checking it reports the position after the value).
fn json_key_path(prefix: &str) -> (Option<String>, Option<String>) {
    let path = |stack: &[Option<OpenObject>]| -> Option<String> {
        let keys: Vec<&str> = stack
            .iter()
            .filter_map(|o| o.as_ref()?.key.as_deref())
            .collect();
        (!keys.is_empty()).then(|| keys.join("."))
    };
    // One entry per open object (`Some`) or array (`None`).
    let mut stack: Vec<Option<OpenObject>> = Vec::new();
    let mut last_path = None;
    let mut string: Option<(String, bool)> = None;
    let mut escaped = false;
    for c in prefix.chars() {
        if let Some((text, is_key)) = string.as_mut() {
            match c {
                _ if escaped => {
                    escaped = false;
                    text.push(c);
                }
                '\\' => escaped = true,
                '"' => {
                    if let (true, Some(Some(object))) = (*is_key, stack.last_mut()) {
                        object.key = Some(std::mem::take(text));
                        object.expect_key = false;
                    }
                    string = None;
                }
                _ => text.push(c),
            }
            continue;
        }
        match c {
            '"' => {
                let is_key = matches!(stack.last(), Some(Some(o)) if o.expect_key);
                string = Some((String::new(), is_key));
            }
            '{' => stack.push(Some(OpenObject {
                key: None,
                expect_key: true,
            })),
            '[' => stack.push(None),
            '}' | ']' => {
                last_path = path(&stack);
                stack.pop();
            }
            ',' => {
                if let Some(Some(object)) = stack.last_mut() {
                    object.expect_key = true;
                }
            }
            _ => {}
        }
    }
    if let (Some((text, true)), Some(Some(object))) = (string, stack.last_mut()) {
        object.key = Some(text);
    }
    (path(&stack), last_path)
}

#[cfg(test)]
mod tests {
    use super::{json_error_key, json_key_path};

    #[test]
    fn the_key_at_a_json_position_is_the_innermost_one_read_there() {
        let open = |prefix: &str| json_key_path(prefix).0;
        assert_eq!(
            open(r#"{"a": 1, "io": {"late_output": 5"#).as_deref(),
            Some("io.late_output")
        );
        assert_eq!(open(r#"{"a": {"b": [1, {"c": "#).as_deref(), Some("a.b.c"));
        assert_eq!(open(r#"{"a": "x\"}", "aggreg"#).as_deref(), Some("aggreg"));
        assert_eq!(open(""), None);
        assert_eq!(
            json_key_path(r#"{"a": 1, "w": {"t": 1}}"#),
            (None, Some("w".to_owned()))
        );
        let text = "{\n  \"assigner\": \"tumbling:1h\",\n  \"allowed_lateness\": \"10x\"\n}\n";
        let message = "invalid duration \"10x\" at line 3 column 27";
        assert_eq!(
            json_error_key(message, text).as_deref(),
            Some("allowed_lateness")
        );
        let missing = "missing field `aggregate` at line 4 column 1";
        assert_eq!(json_error_key(missing, text), None);
        assert_eq!(json_error_key("no position", text), None);
    }
}
