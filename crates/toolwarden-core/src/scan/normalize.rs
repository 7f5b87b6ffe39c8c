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
    // Branch-free per chunk so the compiler vectorises it, with an exit per chunk so text that
    // needs normalising (a line break early on) is rejected early.
    text.as_bytes()
        .chunks(64)
        .all(|chunk| !chunk.iter().fold(false, |acc, &b| acc | !is_plain(b)))
        && !text.starts_with(' ')
        && !text.ends_with(' ')
        && !text.contains("  ")
}

/// Printable ASCII, space included, that normalisation leaves as it is.
fn is_plain(b: u8) -> bool {
    (0x20..0x7F).contains(&b) && b != b'\\' && b != b'`'
}

/// Writes the normal form of `src` into `out`. Returns true when `src` holds anything other
/// than ASCII text and line whitespace (a non-ASCII or control character), i.e. when the
/// per-character checks have something to look at.
pub(crate) fn normalize_into(src: &str, out: &mut Normalized) -> bool {
    out.text.clear();
    out.line_starts.clear();
    out.line_starts.push(0);
    let mut state = Pending::default();
    let mut unusual = false;
    let bytes = src.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        // Runs of plain ASCII (most of any text) are copied whole.
        let run_len = bytes.get(i..).map_or(0, plain_run_len);
        if run_len > 1
            && let Some(run) = src.get(i..i + run_len)
        {
            i += run_len;
            copy_run(run, &mut state, out);
            continue;
        }
        // Byte at a time for the rest of ASCII, char at a time otherwise.
        if b.is_ascii() {
            i += 1;
            match b {
                b' ' | b'\t' => state.space = true,
                b'\n' | b'\r' | 0x0B | 0x0C => {
                    state.space = true;
                    state.line_break = true;
                }
                0x00..=0x1F | 0x7F => unusual = true,
                _ => {
                    state.flush(out);
                    out.text.push(fold_punctuation(char::from(b)));
                }
            }
            continue;
        }
        unusual = true;
        let Some(c) = src.get(i..).and_then(|rest| rest.chars().next()) else {
            break;
        };
        i += c.len_utf8();
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
    unusual
}

/// Length of the plain ASCII run at the start of `rest`, stopping before a second space in a
/// row so a run never holds a doubled space.
fn plain_run_len(rest: &[u8]) -> usize {
    let mut prev_space = false;
    for (i, &b) in rest.iter().enumerate() {
        let space = b == b' ';
        if !is_plain(b) || (space && prev_space) {
            return i;
        }
        prev_space = space;
    }
    rest.len()
}

/// Appends a run of plain ASCII without doubled spaces, merging its edge spaces with the
/// whitespace around it.
fn copy_run(run: &str, state: &mut Pending, out: &mut Normalized) {
    let mut run = run;
    if let Some(rest) = run.strip_prefix(' ') {
        state.space = true;
        run = rest;
    }
    let trailing_space = match run.strip_suffix(' ') {
        Some(rest) => {
            run = rest;
            true
        }
        None => false,
    };
    if !run.is_empty() {
        state.flush(out);
        out.text.push_str(run);
    }
    if trailing_space {
        state.space = true;
    }
}

/// Whitespace seen since the last character written.
#[derive(Default)]
struct Pending {
    space: bool,
    line_break: bool,
}

impl Pending {
    #[inline]
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
    fn runs_merge_their_edge_spaces_with_surrounding_whitespace() {
        assert_eq!(norm("a   b  \n c \t").text, "a b c");
        assert_eq!(norm("  x  ").text, "x");
        assert_eq!(norm("one two\nthree four").line_starts, vec![0, 8]);
        let long = "word  ".repeat(10_000);
        assert_eq!(norm(&long).text.len(), "word ".len() * 10_000 - 1);
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
