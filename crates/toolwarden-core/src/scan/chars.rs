//! Which characters are suspicious on their own: control characters and invisible or
//! direction-changing Unicode. Also renders such characters visibly for excerpts.

use super::Severity;

/// What a single character is, as far as the scanner cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CharClass {
    Plain,
    /// C0/C1 control or DEL, other than `\n`, `\r`, `\t`.
    Control,
    /// Invisible or direction-changing; the severity says how likely it is to be an attack.
    Invisible(Severity),
}

/// True for characters that break a line; they collapse to one space in normalised text but
/// mark the start of a new line for line-anchored phrases.
pub(crate) fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

pub(crate) fn is_control(c: char) -> bool {
    let cp = u32::from(c);
    (cp < 0x20 && !matches!(c, '\n' | '\r' | '\t')) || (0x7F..=0x9F).contains(&cp)
}

pub(crate) fn is_variation_selector(c: char) -> bool {
    matches!(c, '\u{FE00}'..='\u{FE0F}' | '\u{E0100}'..='\u{E01EF}')
}

fn is_joiner(c: char) -> bool {
    matches!(c, '\u{200C}' | '\u{200D}')
}

/// Characters that render as nothing (or reorder text) whatever their neighbours are.
/// Joiners and variation selectors are not listed: they are legitimate in emoji sequences and
/// some scripts, so [`classify`] judges them by context.
fn invisible_severity(c: char) -> Option<Severity> {
    match c {
        // Bidi embeddings, overrides and isolates reorder what the reader sees; tag characters
        // carry hidden ASCII that models read and people do not.
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{E0000}'..='\u{E007F}' => {
            Some(Severity::High)
        }
        '\u{00AD}'
        | '\u{034F}'
        | '\u{061C}'
        | '\u{115F}'
        | '\u{1160}'
        | '\u{17B4}'
        | '\u{17B5}'
        | '\u{180E}'
        | '\u{200B}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{2060}'..='\u{2065}'
        | '\u{206A}'..='\u{206F}'
        | '\u{3164}'
        | '\u{FEFF}'
        | '\u{FFA0}'
        | '\u{FFF9}'..='\u{FFFB}'
        | '\u{1D173}'..='\u{1D17A}' => Some(Severity::Medium),
        _ => None,
    }
}

/// Classifies `c` given its neighbours (`None` at either end of the text).
///
/// A joiner between two non-ASCII characters is how emoji sequences and several scripts are
/// written; anywhere else it only hides something. A variation selector right after a non-ASCII
/// character picks a glyph variant; a run of them, or one after ASCII, encodes hidden data.
pub(crate) fn classify(prev: Option<char>, c: char, next: Option<char>) -> CharClass {
    if c.is_ascii() {
        return if is_control(c) {
            CharClass::Control
        } else {
            CharClass::Plain
        };
    }
    if is_control(c) {
        return CharClass::Control;
    }
    if let Some(severity) = invisible_severity(c) {
        return CharClass::Invisible(severity);
    }
    if is_joiner(c) {
        let between_non_ascii =
            prev.is_some_and(|p| !p.is_ascii()) && next.is_some_and(|n| !n.is_ascii());
        return if between_non_ascii {
            CharClass::Plain
        } else {
            CharClass::Invisible(Severity::Medium)
        };
    }
    if is_variation_selector(c) {
        return match prev {
            Some(p) if !p.is_ascii() && !is_variation_selector(p) => CharClass::Plain,
            _ => CharClass::Invisible(Severity::High),
        };
    }
    CharClass::Plain
}

/// True for every character [`classify`] may flag, regardless of context: the normaliser drops
/// them all so they cannot split a phrase.
pub(crate) fn is_droppable(c: char) -> bool {
    is_control(c) || invisible_severity(c).is_some() || is_joiner(c) || is_variation_selector(c)
}

/// Whether `c` should be shown as a code point in an excerpt rather than as itself.
pub(crate) fn needs_escape(c: char) -> bool {
    (is_droppable(c) || c.is_whitespace() && c != ' ') && !matches!(c, '\n' | '\r' | '\t')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_other_than_line_whitespace_are_flagged() {
        for c in ['\0', '\u{7}', '\u{1B}', '\u{7F}', '\u{85}', '\u{9F}'] {
            assert_eq!(classify(None, c, None), CharClass::Control, "{c:?}");
        }
        for c in ['\n', '\r', '\t', ' ', 'a'] {
            assert_eq!(classify(None, c, None), CharClass::Plain, "{c:?}");
        }
    }

    #[test]
    fn bidi_and_tags_are_high_zero_width_is_medium() {
        assert_eq!(
            classify(None, '\u{202E}', None),
            CharClass::Invisible(Severity::High)
        );
        assert_eq!(
            classify(None, '\u{E0069}', None),
            CharClass::Invisible(Severity::High)
        );
        assert_eq!(
            classify(None, '\u{200B}', None),
            CharClass::Invisible(Severity::Medium)
        );
        assert_eq!(
            classify(None, '\u{AD}', None),
            CharClass::Invisible(Severity::Medium)
        );
    }

    #[test]
    fn joiner_inside_emoji_sequence_is_plain() {
        assert_eq!(
            classify(Some('\u{1F468}'), '\u{200D}', Some('\u{1F469}')),
            CharClass::Plain
        );
        assert_eq!(
            classify(Some('g'), '\u{200D}', Some('n')),
            CharClass::Invisible(Severity::Medium)
        );
    }

    #[test]
    fn variation_selector_after_symbol_is_plain_but_runs_are_not() {
        assert_eq!(
            classify(Some('\u{26A0}'), '\u{FE0F}', None),
            CharClass::Plain
        );
        assert_eq!(
            classify(Some('\u{FE0F}'), '\u{FE0F}', None),
            CharClass::Invisible(Severity::High)
        );
        assert_eq!(
            classify(Some('a'), '\u{E0101}', None),
            CharClass::Invisible(Severity::High)
        );
    }

    #[test]
    fn non_breaking_spaces_are_escaped_in_excerpts_but_not_flagged() {
        assert_eq!(classify(None, '\u{A0}', None), CharClass::Plain);
        assert!(needs_escape('\u{A0}'));
        assert!(!needs_escape('\u{E9}'));
    }
}
