//! How a result row's key is written: one `key` column or a composite key's columns
//! ([`KeyColumns`]), and each interned key encoded once ([`EncodedKeys`]).

use crate::keys::split_key_parts;
use crate::rows::encode_str;
use crate::sink::OutputFormat;

/// How the key is written: as one `key` column, or as one column per field of a composite key
/// (its text split by [`split_key_parts`]), each named by its field.
#[derive(Debug, Default, Clone)]
pub(super) struct KeyColumns {
    /// Per field of a composite key, its JSON member name `"name":`; empty for one `key`.
    json_names: Vec<Vec<u8>>,
}

impl KeyColumns {
    /// One column per name, if there are several; else the one `key` column.
    pub(super) fn new(names: &[String]) -> Self {
        let json_names = match names.len() {
            0 | 1 => Vec::new(),
            _ => names
                .iter()
                .map(|name| {
                    let mut b = Vec::new();
                    encode_str(OutputFormat::Jsonl, name, &mut b);
                    b.push(b':');
                    b
                })
                .collect(),
        };
        Self { json_names }
    }

    /// Whether the key has a column per field.
    pub(super) fn composite(&self) -> bool {
        !self.json_names.is_empty()
    }

    /// Appends the key `text` in `format`: one cell, or a composite key's fields, joined by
    /// commas in CSV, as members with their names in JSON (a missing field is empty).
    pub(super) fn encode(&self, format: OutputFormat, text: &str, out: &mut Vec<u8>) {
        if !self.composite() {
            encode_str(format, text, out);
            return;
        }
        let parts = split_key_parts(text);
        for (i, name) in self.json_names.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            if format == OutputFormat::Jsonl {
                out.extend_from_slice(name);
            }
            encode_str(format, parts.get(i).map_or("", |p| p), out);
        }
    }
}

/// Encoded key texts in one buffer, with a span per key id: a result row's copy of its key
/// reads from a few dense arrays (cache-resident for ~100 k keys) instead of a separate
/// allocation per key, which cost a cache miss per row.
#[derive(Debug, Default)]
pub(super) struct EncodedKeys {
    /// Per key id: its encoded text's `(start, end)` in `bytes`, or `UNSET`.
    spans: Vec<(usize, usize)>,
    bytes: Vec<u8>,
}

const UNSET: (usize, usize) = (usize::MAX, 0);

/// An encoded key's text as [`EncodedKeys::row_text`] gives it.
pub(super) enum KeyText<'a> {
    /// The [`BLOCK`] bytes the text starts, and its length.
    Block(&'a [u8; BLOCK], usize),
    /// A text longer than [`BLOCK`].
    Whole(&'a [u8]),
}

/// The size of the block [`EncodedKeys::block`] gives: zero bytes pad the buffer's end to it.
pub(super) const BLOCK: usize = 32;

impl EncodedKeys {
    pub(super) fn get(&self, index: usize) -> Option<&[u8]> {
        match self.spans.get(index) {
            Some(&(start, end)) if (start, end) != UNSET => self.bytes.get(start..end),
            _ => None,
        }
    }

    /// Key `index`'s text for a row: a short one (at most [`BLOCK`] bytes) as the block of
    /// [`BLOCK`] bytes it starts and its length, to be copied whole and cut to the length (a
    /// fixed move instead of a `memcpy` call); a longer one as it is.
    #[inline]
    pub(super) fn row_text(&self, index: usize) -> Option<KeyText<'_>> {
        match self.spans.get(index) {
            Some(&(start, end)) if (start, end) != UNSET => {
                let block = self.bytes.get(start..start + BLOCK);
                match block.and_then(|b| <&[u8; BLOCK]>::try_from(b).ok()) {
                    Some(block) if end - start <= BLOCK => Some(KeyText::Block(block, end - start)),
                    _ => self.bytes.get(start..end).map(KeyText::Whole),
                }
            }
            _ => None,
        }
    }

    pub(super) fn insert(
        &mut self,
        index: usize,
        format: OutputFormat,
        text: &str,
        columns: &KeyColumns,
    ) {
        // The padding goes, the text comes, the padding comes back.
        let start = self.bytes.len().saturating_sub(BLOCK);
        self.bytes.truncate(start);
        columns.encode(format, text, &mut self.bytes);
        let end = self.bytes.len();
        self.bytes.resize(end + BLOCK, 0);
        if self.spans.len() <= index {
            self.spans.resize(index + 1, UNSET);
        }
        self.spans[index] = (start, end);
    }
}
