//! Normalised text for phrase matching: invisible and control characters removed so they cannot
//! split a phrase, every run of whitespace (any Unicode space, line breaks included) collapsed to
//! one ASCII space, and look-alike punctuation folded to ASCII. Letter case is left alone: the
//! matcher compares ASCII case-insensitively, and keeping case makes excerpts readable.

use super::chars::{is_droppable, is_line_break};

/// Reusable output of [`normalize_into`], so a scan allocates once per tool, not per string.
#[derive(Debug, Default)]
pub(crate) struct Normalized {
    pub(crate) text: String,
    /// Byte offsets in `text` where a line begins (always holds 0).
    pub(crate) line_starts: Vec<usize>,
}

/// True when `text` is already in normal form: printable ASCII only, no doubled spaces, nothing
/// the normaliser would rewrite. Most real descriptions that fit on one line take this path.
pub(crate) fn is_already_normal(text: &str) -> bool {
    // Written as separate whole-slice passes: each one vectorises, which beats a single
    // byte-by-byte loop that tracks the previous byte.
    let bytes = text.as_bytes();
    bytes
        .iter()
        .all(|&b| (0x20..0x7F).contains(&b) && b != b'\\' && b != b'`')
        && !text.starts_with(' ')
        && !text.ends_with(' ')
        && !text.contains("  ")
}

pub(crate) fn normalize_into(src: &str, out: &mut Normalized) {
    out.text.clear();
    out.line_starts.clear();
    out.line_starts.push(0);
    let mut state = Pending::default();
    let mut rest = src;
    while !rest.is_empty() {
        // Copy runs of ordinary printable ASCII in one go; only the rest goes char by char.
        let run = rest
            .bytes()
            .position(|b| !is_plain_ascii(b))
            .unwrap_or(rest.len());
        if run > 0 {
            let (plain, tail) = rest.split_at(run);
            state.flush(out);
            out.text.push_str(plain);
            rest = tail;
            continue;
        }
        let mut chars = rest.chars();
        let Some(c) = chars.next() else {
            break;
        };
        rest = chars.as_str();
        if is_line_break(c) {
            state.space = true;
            state.line_break = true;
        } else if c.is_whitespace() {
            state.space = true;
        } else if is_droppable(c) {
            // Dropped without ending a word: `Ig<ZWSP>nore` must read as `Ignore`.
        } else {
            state.flush(out);
            out.text.push(fold_punctuation(c));
        }
    }
}

/// Whitespace seen since the last character written.
#[derive(Default)]
struct Pending {
    space: bool,
    line_break: bool,
}

impl Pending {
    fn flush(&mut self, out: &mut Normalized) {
        if self.space && !out.text.is_empty() {
            out.text.push(' ');
            if self.line_break {
                out.line_starts.push(out.text.len());
            }
        }
        self.space = false;
        self.line_break = false;
    }
}

/// Printable ASCII other than space and the characters [`fold_punctuation`] rewrites.
fn is_plain_ascii(b: u8) -> bool {
    (0x21..0x7F).contains(&b) && b != b'\\' && b != b'`'
}

/// Maps typographic and full-width look-alikes to the ASCII the phrase table is written in.
fn fold_punctuation(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '`' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{2024}' => '.',
        '\\' => '/',
        // Full-width ASCII (U+FF01..U+FF5E) sits at a fixed offset from ASCII.
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(u32::from(c) - 0xFEE0).unwrap_or(c),
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> Normalized {
        let mut n = Normalized::default();
        normalize_into(s, &mut n);
        n
    }

    #[test]
    fn whitespace_runs_and_line_breaks_collapse_to_one_space() {
        let n = norm("  Ignore \u{A0}\u{3000} previous\r\n\tinstructions  ");
        assert_eq!(n.text, "Ignore previous instructions");
        assert_eq!(n.line_starts, vec![0, "Ignore previous ".len()]);
    }

    #[test]
    fn invisible_characters_do_not_split_words() {
        assert_eq!(norm("Ig\u{200B}no\u{E0041}re\u{0}").text, "Ignore");
    }

    #[test]
    fn look_alike_punctuation_folds_to_ascii() {
        assert_eq!(
            norm("don\u{2019}t \u{FF49}gnore C:\\Users").text,
            "don't ignore C:/Users"
        );
    }

    #[test]
    fn fast_path_only_for_text_already_normal() {
        assert!(is_already_normal(
            "Read a file. Only works within allowed directories."
        ));
        assert!(!is_already_normal("two  spaces"));
        assert!(!is_already_normal("line\nbreak"));
        assert!(!is_already_normal("caf\u{E9}"));
        assert!(!is_already_normal(" leading"));
        assert!(!is_already_normal("trailing "));
        assert!(!is_already_normal("back\\slash"));
    }
}
