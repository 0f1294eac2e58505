//! The field separator of CSV input (`windowctl run --delimiter`).

use std::fmt;
use std::str::FromStr;

/// The byte that separates the fields of a CSV input line: one ASCII character, a comma by
/// default (`;` for European spreadsheets' CSV, a tab for TSV). Quoting is the same as with
/// commas (`"a;b"` is one field). Results are always written with commas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Delimiter(u8);

impl Delimiter {
    /// The comma, the default.
    pub const COMMA: Delimiter = Delimiter(b',');

    /// The byte.
    pub fn byte(self) -> u8 {
        self.0
    }
}

impl Default for Delimiter {
    /// The comma.
    fn default() -> Self {
        Delimiter::COMMA
    }
}

impl fmt::Display for Delimiter {
    /// `tab` for a tab, else the character: what [`Delimiter::from_str`] reads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            b'\t' => f.write_str("tab"),
            b => write!(f, "{}", char::from(b)),
        }
    }
}

impl FromStr for Delimiter {
    type Err = String;

    /// One ASCII character (`;`, `|`, a tab), or `tab` or `\t` (the two characters) for a tab.
    ///
    /// # Errors
    /// Empty text, more than one character (a multi-byte character included), or a character
    /// that cannot separate fields: the double quote (CSV's quote), a line break, a character
    /// outside ASCII.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let byte = match s {
            "tab" | "TAB" | "\\t" | "\t" => b'\t',
            "" => return Err("a delimiter is one character, got none".to_owned()),
            _ => match s.as_bytes() {
                [b] if b.is_ascii() => *b,
                _ => {
                    return Err(format!(
                        "a delimiter is one ASCII character (or tab), got {s:?}"
                    ))
                }
            },
        };
        match byte {
            b'"' => {
                Err("the double quote cannot be the delimiter: it quotes CSV fields".to_owned())
            }
            b'\n' | b'\r' => {
                Err("a line break cannot be the delimiter: it ends records".to_owned())
            }
            _ => Ok(Delimiter(byte)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Delimiter;

    #[test]
    fn delimiters_are_one_ascii_character() {
        for (text, byte) in [
            (",", b','),
            (";", b';'),
            ("|", b'|'),
            ("tab", b'\t'),
            ("\\t", b'\t'),
            ("\t", b'\t'),
            (" ", b' '),
        ] {
            assert_eq!(
                text.parse::<Delimiter>().map(Delimiter::byte),
                Ok(byte),
                "{text:?}"
            );
        }
        for (text, why) in [
            ("", "got none"),
            (";;", "one ASCII character"),
            ("§", "one ASCII character"),
            ("\"", "double quote"),
            ("\n", "line break"),
        ] {
            let err = text.parse::<Delimiter>().unwrap_err();
            assert!(err.contains(why), "{text:?}: {err}");
        }
        assert_eq!(Delimiter::default().to_string(), ",");
        assert_eq!("tab".parse::<Delimiter>().unwrap().to_string(), "tab");
    }
}
