//! Rows of interned keys ([`ResultWriter::write_interned`] and its kin): each key's text
//! encoded once per output ([`super::key_cells::EncodedKeys`]), the window's `,start,end,` text
//! made once per firing round, and a lean CSV path for a numeric result
//! ([`ResultWriter::write_interned_number`]) that copies both as fixed blocks.

use std::io::{self, Write};

use super::key_cells::KeyText;
use super::{ResultWriter, KEY_BLOCK, WINDOW_BLOCK};
use crate::keys::{KeyId, KeyTexts};
use crate::rows::{push_number, push_result, Cell};
use crate::sink::OutputFormat;
use window_core::NumericResult;

impl<W: Write> ResultWriter<W> {
    /// Writes one result of an interned key: as [`ResultWriter::write_key_window_result`]
    /// with the key's text from `keys`, quoted or escaped once per key, not once per row. On a
    /// writer of several result columns `result` fills the first, the others are empty.
    ///
    /// # Errors
    ///
    /// Fails if the underlying writer fails, or if `keys` has no text for `key` (an id of
    /// another dictionary); nothing is written then.
    pub fn write_interned(
        &mut self,
        keys: &mut KeyTexts,
        key: KeyId,
        window: Option<(i64, i64)>,
        result: Option<f64>,
        empty: bool,
    ) -> io::Result<()> {
        let result = NumericResult::Float(result);
        self.write_interned_values(keys, key, window, std::slice::from_ref(&result), empty)
    }

    /// As [`ResultWriter::write_interned`], with the values of the result columns
    /// ([`ResultWriter::with_result_columns`]) in order, each a number (`None`: written empty)
    /// or an exact integer beyond 2^53 (`window_core::ExactNumeric`, written as its digits); a
    /// column without a value in `results` (all of them for `&[]`, an empty result) is written
    /// empty.
    ///
    /// # Errors
    ///
    /// As [`ResultWriter::write_interned`].
    pub fn write_interned_values(
        &mut self,
        keys: &mut KeyTexts,
        key: KeyId,
        window: Option<(i64, i64)>,
        results: &[NumericResult],
        empty: bool,
    ) -> io::Result<()> {
        if self.result_columns == 1 {
            self.write_interned_with::<true>(keys, key, window, results, empty)
        } else {
            self.write_interned_with::<false>(keys, key, window, results, empty)
        }
    }

    /// As [`ResultWriter::write_interned`], for a result that is an exact integer an `f64`
    /// cannot hold (a sum of integers beyond 2^53, `window_core::ExactNumeric`): written as
    /// its digits. On a writer of several result columns it fills the first.
    ///
    /// # Errors
    ///
    /// As [`ResultWriter::write_interned`].
    pub fn write_interned_integer(
        &mut self,
        keys: &mut KeyTexts,
        key: KeyId,
        window: Option<(i64, i64)>,
        value: i128,
        empty: bool,
    ) -> io::Result<()> {
        let result = NumericResult::Integer(value);
        self.write_interned_values(keys, key, window, std::slice::from_ref(&result), empty)
    }

    /// Writes one numeric result of an interned key, not empty: what
    /// [`ResultWriter::write_interned`] writes with `Some(value)` and `empty` false. In CSV with
    /// one result column and no `empty` column (the output of every single-aggregate job) it
    /// takes a lean path: the key's encoded text, the window's cached `,start,end,` and the
    /// number, with one check of the buffer's room.
    ///
    /// # Errors
    ///
    /// As [`ResultWriter::write_interned`].
    #[inline]
    pub fn write_interned_number(
        &mut self,
        keys: &mut KeyTexts,
        key: KeyId,
        window: Option<(i64, i64)>,
        value: f64,
    ) -> io::Result<()> {
        if self.rows.format() != OutputFormat::Csv || self.result_columns != 1 || self.empty_column
        {
            return self.write_interned(keys, key, window, Some(value), false);
        }
        let index = self.encode_key(keys, key)?;
        self.set_window_text(window);
        let key_text = self.encoded_keys.row_text(index);
        let (window_block, window_len) = (&self.window_block, self.window_len);
        self.rows.write_csv_with(|buf| {
            // The blocks, up to 24 bytes of number and the line's end.
            let key_room = match key_text {
                Some(KeyText::Whole(text)) => text.len(),
                _ => KEY_BLOCK,
            };
            buf.reserve(key_room + WINDOW_BLOCK + 25);
            match key_text {
                Some(KeyText::Block(block, len)) => {
                    buf.extend_from_slice(block);
                    buf.truncate(buf.len() - KEY_BLOCK + len);
                }
                Some(KeyText::Whole(text)) => buf.extend_from_slice(text),
                None => {}
            }
            buf.extend_from_slice(window_block);
            buf.truncate(buf.len() - WINDOW_BLOCK + window_len);
            push_number(buf, value);
            buf.push(b'\n');
        })?;
        self.written += 1;
        Ok(())
    }

    /// Makes `window_block[..window_len]` the CSV text `,start,end,` of `window` (`,,,` for
    /// none), unless it is already (the test inlined: a row's; the text made apart: a firing
    /// round's).
    #[inline(always)]
    fn set_window_text(&mut self, window: Option<(i64, i64)>) {
        if self.last_window != Some(window) {
            self.make_window_text(window);
        }
    }

    #[inline(never)]
    fn make_window_text(&mut self, window: Option<(i64, i64)>) {
        // At most 43 bytes (two i64s of at most 20 bytes, three commas) in a block of 48: the
        // writes cannot run out of room.
        let mut text = io::Cursor::new([0; WINDOW_BLOCK]);
        let _ = text.write_all(b",");
        if let Some((start, end)) = window {
            let _ = text.write_all(itoa::Buffer::new().format(start).as_bytes());
            let _ = text.write_all(b",");
            let _ = text.write_all(itoa::Buffer::new().format(end).as_bytes());
        } else {
            let _ = text.write_all(b",");
        }
        let _ = text.write_all(b",");
        self.window_len = text.position() as usize;
        self.window_block = text.into_inner();
        self.last_window = Some(window);
    }

    /// The index of interned `key`, its text encoded for this output at its first row (the
    /// test inlined: a row's; the encoding apart: a key's).
    #[inline(always)]
    fn encode_key(&mut self, keys: &mut KeyTexts, key: KeyId) -> io::Result<usize> {
        let index = key.index();
        if self.encoded_keys.get(index).is_none() {
            self.insert_key(keys, key)?;
        }
        Ok(index)
    }

    #[inline(never)]
    fn insert_key(&mut self, keys: &mut KeyTexts, key: KeyId) -> io::Result<()> {
        let index = key.index();
        let text = keys.get(key).ok_or_else(|| {
            io::Error::other(format!("key id {index} is not in the key dictionary"))
        })?;
        let format = self.rows.format();
        self.encoded_keys
            .insert(index, format, text, &self.key_columns);
        Ok(())
    }

    /// [`ResultWriter::write_interned_values`] for one result column (`SINGLE`, the path of
    /// single aggregates, compiled apart so that it stays as lean as it was) or several.
    fn write_interned_with<const SINGLE: bool>(
        &mut self,
        keys: &mut KeyTexts,
        key: KeyId,
        window: Option<(i64, i64)>,
        results: &[NumericResult],
        empty: bool,
    ) -> io::Result<()> {
        let index = self.encode_key(keys, key)?;
        if self.rows.format() == OutputFormat::Csv {
            // The cells as `write_row` writes them, with the window's text reused.
            self.set_window_text(window);
            let encoded = self.encoded_keys.get(index).unwrap_or_default();
            let window_text = &self.window_block[..self.window_len];
            let empty_column = self.empty_column;
            let result_columns = self.result_columns;
            self.rows.write_csv_with(|buf| {
                buf.extend_from_slice(encoded);
                buf.extend_from_slice(window_text);
                if SINGLE {
                    if let Some(v) = results.first() {
                        push_result(buf, *v);
                    }
                } else {
                    for i in 0..result_columns {
                        if i > 0 {
                            buf.push(b',');
                        }
                        if let Some(v) = results.get(i) {
                            push_result(buf, *v);
                        }
                    }
                }
                if empty_column {
                    buf.extend_from_slice(if empty { b",true" } else { b",false" });
                }
                buf.push(b'\n');
            })?;
            self.written += 1;
            return Ok(());
        }
        let encoded = self.encoded_keys.get(index).unwrap_or_default();
        let cells = [
            Cell::Encoded(encoded),
            window.map(|w| w.0).into(),
            window.map(|w| w.1).into(),
        ];
        let shape = (self.result_columns, self.empty_column);
        if SINGLE {
            // As `write_row` does, without its test of the shape.
            let [key, start, end] = cells;
            let result = results.first().map_or(Cell::Null, |r| Cell::from(*r));
            let cells = [key, start, end, result, Cell::Bool(empty)];
            self.rows
                .write_row(&cells[..if self.empty_column { 5 } else { 4 }])?;
        } else {
            Self::write_several_row(&mut self.rows, shape, cells, results, empty)?;
        }
        self.written += 1;
        Ok(())
    }
}
