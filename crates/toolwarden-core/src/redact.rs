//! Redaction of server error texts: the caller's own values are replaced by a reference to the
//! field they came from (`‹filter.owner›`), and secret-shaped strings are masked wherever they
//! appear (DESIGN.md 1.1, "Never echo a value the caller sent").
//!
//! Matching choices, each covered by a test below:
//! - A string value counts when it has 4 or more characters and at least one letter or digit
//!   (a run of dashes or spaces carries nothing worth hiding and would shred the text). A number
//!   counts when its decimal text has 4 or more digits; it only matches where it is not part of
//!   a longer digit run, so `1234` is not found inside `91234`.
//! - Besides the value as sent, its JSON-escaped form (a server embedding it in a JSON body) and
//!   its percent-encoded form (a server echoing a request URL) are matched.
//! - Matching ignores ASCII case, for every value: servers often normalise what they repeat
//!   (lower-cased e-mail addresses, upper-cased codes). The price is that a value which is also
//!   an ordinary word is hidden in any case; that loses a word of server text, never a value.
//! - One multi-pattern search, leftmost-longest: a longer value wins over a shorter one it
//!   contains.
//!
//! The matcher is built on every failed call, so its construction cost counts as much as its
//! search speed: a typical call's few values go into a SIMD packed searcher (built in a couple
//! of microseconds, run over an ASCII-lower-cased copy of the text); only sets too large for
//! it get an Aho-Corasick automaton, a contiguous NFA, which builds several times faster than a
//! DFA and searches nearly as fast.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, Input, MatchKind, Span, packed};
use regex::{Captures, Regex};
use serde_json::Value;

/// Values shorter than this (in characters, or in digits for numbers) are too common to hide.
const MIN_VALUE_CHARS: usize = 4;

/// The caller's values worth hiding, with the field each came from, ready to be searched for.
#[derive(Debug, Clone, Default)]
pub struct CallerValues {
    matcher: Option<EchoMatcher>,
    /// One entry per search pattern, in pattern order.
    patterns: Vec<PatternTarget>,
    /// Byte length of the shortest pattern: a shorter text cannot hold any value.
    shortest_pattern: usize,
}

/// Leftmost-longest, ASCII-case-insensitive search for the caller's values. Both variants
/// find exactly the same matches; they differ only in what they cost to build and run.
#[derive(Debug, Clone)]
enum EchoMatcher {
    /// Patterns lower-cased; searched in a lower-cased copy of the text (ASCII lower-casing
    /// keeps every byte offset).
    Packed(packed::Searcher),
    Automaton(AhoCorasick),
}

/// A found pattern: its byte range in the text and its index.
struct Found {
    start: usize,
    end: usize,
    pattern: usize,
}

impl EchoMatcher {
    fn build(pattern_texts: &[String]) -> Option<Self> {
        let packed = packed::Config::new()
            .match_kind(packed::MatchKind::LeftmostLongest)
            .builder()
            .extend(pattern_texts.iter().map(|text| text.to_ascii_lowercase()))
            .build();
        if let Some(searcher) = packed {
            return Some(EchoMatcher::Packed(searcher));
        }
        // The packed searcher takes only a few dozen patterns, and needs SIMD.
        [
            AhoCorasickKind::ContiguousNFA,
            AhoCorasickKind::NoncontiguousNFA,
        ]
        .into_iter()
        .find_map(|kind| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .ascii_case_insensitive(true)
                .kind(Some(kind))
                .build(pattern_texts)
                .ok()
        })
        .map(EchoMatcher::Automaton)
    }

    /// The text in the form `find` searches.
    fn prepare<'t>(&self, text: &'t str) -> Cow<'t, [u8]> {
        match self {
            EchoMatcher::Packed(_) => Cow::Owned(text.as_bytes().to_ascii_lowercase()),
            EchoMatcher::Automaton(_) => Cow::Borrowed(text.as_bytes()),
        }
    }

    /// The leftmost-longest match starting at or after `from`, in `prepared` (from `prepare`).
    fn find(&self, prepared: &[u8], from: usize) -> Option<Found> {
        if from >= prepared.len() {
            return None;
        }
        let span = Span::from(from..prepared.len());
        let found = match self {
            EchoMatcher::Packed(searcher) => searcher.find_in(prepared, span),
            EchoMatcher::Automaton(automaton) => automaton.find(Input::new(prepared).span(span)),
        }?;
        Some(Found {
            start: found.start(),
            end: found.end(),
            pattern: found.pattern().as_usize(),
        })
    }
}

#[derive(Debug, Clone)]
struct PatternTarget {
    /// The reference that replaces the value, e.g. `‹items[2].id›`.
    reference: String,
    /// Numbers must not be found inside a longer run of digits.
    digit_bounded: bool,
}

impl CallerValues {
    /// Collects the values of a call's `arguments`, at any depth. `None` (no arguments) hides
    /// nothing.
    pub fn from_arguments(arguments: Option<&Value>) -> Self {
        let mut collected = Vec::new();
        if let Some(arguments) = arguments {
            collect(arguments, &mut Vec::new(), &mut collected);
        }
        Self::from_collected(collected)
    }

    fn from_collected(collected: Vec<(String, String, bool)>) -> Self {
        let mut pattern_texts: Vec<String> = Vec::new();
        let mut patterns: Vec<PatternTarget> = Vec::new();
        let mut known_forms: HashMap<String, usize> = HashMap::new();
        for (text, reference, digit_bounded) in collected {
            for form in encoded_forms(&text, digit_bounded) {
                // The first field a value came from names it; a string sent elsewhere with the
                // same text lifts the digit-run restriction, since it was sent as text too.
                if let Some(&index) = known_forms.get(&form.to_ascii_lowercase()) {
                    if let Some(target) = patterns.get_mut(index) {
                        target.digit_bounded &= digit_bounded;
                    }
                    continue;
                }
                known_forms.insert(form.to_ascii_lowercase(), patterns.len());
                pattern_texts.push(form);
                patterns.push(PatternTarget {
                    reference: reference.clone(),
                    digit_bounded,
                });
            }
        }
        if pattern_texts.is_empty() {
            return CallerValues::default();
        }
        let shortest_pattern = pattern_texts.iter().map(String::len).min().unwrap_or(0);
        // A build failure (patterns beyond the automaton's size limits) must not let values
        // through: callers see `is_empty() == false` and `replace_echoes` hides the whole text.
        let matcher = EchoMatcher::build(&pattern_texts);
        CallerValues {
            matcher,
            patterns,
            shortest_pattern,
        }
    }

    /// True when the arguments held nothing worth hiding.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Number of distinct search patterns (values and their encodings).
    pub fn pattern_count(&self) -> usize {
        self.patterns.len()
    }

    /// Replaces every occurrence of a caller value in `text` by the reference to its field.
    pub fn replace_echoes<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if self.patterns.is_empty() {
            return Cow::Borrowed(text);
        }
        let Some(matcher) = &self.matcher else {
            return Cow::Owned("‹text withheld: it could not be checked for echoed values›".into());
        };
        if text.len() < self.shortest_pattern {
            return Cow::Borrowed(text);
        }
        let Cow::Owned(mut replaced) = self.replace_once(matcher, text) else {
            return Cow::Borrowed(text);
        };
        // A number glued to another value ("ab121234" for "ab12" and 1234) is inside a digit
        // run until its neighbour is replaced; further passes catch it. References only hold
        // digits as array indices, so two more passes settle every case worth settling.
        for _ in 0..2 {
            match self.replace_once(matcher, &replaced) {
                Cow::Owned(again) => replaced = again,
                Cow::Borrowed(_) => break,
            }
        }
        Cow::Owned(replaced)
    }

    fn replace_once<'t>(&self, matcher: &EchoMatcher, text: &'t str) -> Cow<'t, str> {
        let bytes = text.as_bytes();
        let prepared = matcher.prepare(text);
        let mut output = String::new();
        let mut copied_up_to = 0;
        let mut search_from = 0;
        while search_from < text.len() {
            let Some(Found {
                start,
                end,
                pattern,
            }) = matcher.find(&prepared, search_from)
            else {
                break;
            };
            let Some(target) = self.patterns.get(pattern) else {
                break;
            };
            let inside_digit_run = target.digit_bounded
                && (start
                    .checked_sub(1)
                    .and_then(|before| bytes.get(before))
                    .is_some_and(u8::is_ascii_digit)
                    || bytes.get(end).is_some_and(u8::is_ascii_digit));
            if inside_digit_run {
                // Any other digit pattern starting here is inside the same run; a string
                // pattern may still start one byte later.
                search_from = next_char_boundary(text, start);
                continue;
            }
            output.push_str(text.get(copied_up_to..start).unwrap_or_default());
            output.push_str(&target.reference);
            copied_up_to = end;
            search_from = end;
        }
        if copied_up_to == 0 && output.is_empty() {
            return Cow::Borrowed(text);
        }
        output.push_str(text.get(copied_up_to..).unwrap_or_default());
        Cow::Owned(output)
    }
}

fn next_char_boundary(text: &str, index: usize) -> usize {
    let mut next = index + 1;
    while next < text.len() && !text.is_char_boundary(next) {
        next += 1;
    }
    next
}

/// One step of a path into the arguments.
enum Step<'v> {
    Key(&'v str),
    Index(usize),
}

fn collect<'v>(
    value: &'v Value,
    path: &mut Vec<Step<'v>>,
    collected: &mut Vec<(String, String, bool)>,
) {
    match value {
        Value::String(text) => {
            let long_enough = text.chars().count() >= MIN_VALUE_CHARS;
            if long_enough && text.chars().any(char::is_alphanumeric) {
                collected.push((text.clone(), render_reference(path), false));
            }
        }
        Value::Number(number) => {
            let decimal = number.to_string();
            let digits = decimal.bytes().filter(u8::is_ascii_digit).count();
            if digits >= MIN_VALUE_CHARS {
                // The sign is not part of the value a server would repeat in `id 1234`.
                let unsigned = decimal.trim_start_matches('-').to_owned();
                collected.push((unsigned, render_reference(path), true));
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                path.push(Step::Index(index));
                collect(item, path, collected);
                path.pop();
            }
        }
        Value::Object(members) => {
            for (key, member) in members {
                path.push(Step::Key(key));
                collect(member, path, collected);
                path.pop();
            }
        }
        Value::Null | Value::Bool(_) => {}
    }
}

/// `‹query›`, `‹filter.owner›`, `‹items[2].id›`; keys that are not plain identifiers are
/// quoted (`‹headers["x-api"]›`) so the reference stays unambiguous.
fn render_reference(path: &[Step<'_>]) -> String {
    let mut rendered = String::from("‹");
    if path.is_empty() {
        rendered.push_str("arguments");
    }
    for (position, step) in path.iter().enumerate() {
        match step {
            Step::Key(key) if is_plain_identifier(key) => {
                if position > 0 {
                    rendered.push('.');
                }
                rendered.push_str(key);
            }
            Step::Key(key) => {
                rendered.push('[');
                rendered.push_str(&Value::String((*key).to_owned()).to_string());
                rendered.push(']');
            }
            Step::Index(index) => {
                rendered.push('[');
                rendered.push_str(&index.to_string());
                rendered.push(']');
            }
        }
    }
    rendered.push('›');
    rendered
}

fn is_plain_identifier(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|rest| rest.is_ascii_alphanumeric() || rest == '_' || rest == '-')
}

/// The value as sent, then the re-encodings a server is likely to repeat it in.
fn encoded_forms(text: &str, is_number: bool) -> Vec<String> {
    let mut forms = vec![text.to_owned()];
    if is_number {
        return forms;
    }
    let json = Value::String(text.to_owned()).to_string();
    if let Some(escaped) = json.get(1..json.len().saturating_sub(1))
        && escaped != text
    {
        forms.push(escaped.to_owned());
    }
    // Python's json.dumps (ensure_ascii) writes every non-ASCII character as \uXXXX.
    let ascii_json = ascii_json_escape(&json);
    if let Some(escaped) = ascii_json.get(1..ascii_json.len().saturating_sub(1))
        && !forms.iter().any(|known| known == escaped)
    {
        forms.push(escaped.to_owned());
    }
    let percent = percent_encode(text);
    if percent != text {
        forms.push(percent);
    }
    forms
}

fn ascii_json_escape(json: &str) -> String {
    let mut escaped = String::with_capacity(json.len());
    for character in json.chars() {
        if character.is_ascii() {
            escaped.push(character);
        } else {
            let mut units = [0u16; 2];
            for unit in character.encode_utf16(&mut units) {
                escaped.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    escaped
}

/// RFC 3986 percent-encoding of everything but unreserved characters.
fn percent_encode(text: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            encoded.push(char::from(byte));
        } else {
            encoded.push('%');
            encoded.push(char::from(HEX[usize::from(byte >> 4)]));
            encoded.push(char::from(HEX[usize::from(byte & 0x0f)]));
        }
    }
    encoded
}

/// Secret shapes, most specific first: at one position the first alternative that matches
/// wins, so `sk-ant-` is named before the generic `sk-`. Each group name is the marker's kind.
const SECRET_PATTERNS: &[(&str, &str)] = &[
    (
        "private_key",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\z)",
    ),
    (
        "jwt",
        r"(?-u:\b)eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",
    ),
    (
        "github_token",
        r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{20,255})",
    ),
    ("anthropic_key", r"(?-u:\b)sk-ant-[A-Za-z0-9_-]{16,}"),
    (
        "openai_key",
        r"(?-u:\b)sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}",
    ),
    ("slack_token", r"(?-u:\b)xox[baprs]-[A-Za-z0-9-]{10,}"),
    (
        "aws_access_key_id",
        r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)",
    ),
    ("google_api_key", r"(?-u:\b)AIza[0-9A-Za-z_-]{35}"),
    ("gitlab_token", r"(?-u:\b)glpat-[A-Za-z0-9_-]{20,}"),
    (
        "stripe_key",
        r"(?-u:\b)[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
    ),
    ("npm_token", r"(?-u:\b)npm_[A-Za-z0-9]{30,}"),
    (
        "authorization",
        r"(?i)(?-u:\b)(?:proxy-)?authorization[ \t]*[:=][ \t]*(?P<auth_scheme>(?:bearer|basic|token|digest)[ \t]+)?(?P<auth_value>[^\s,;‹]+)",
    ),
    (
        "bearer_token",
        r"(?i)(?-u:\b)bearer[ \t]+(?P<bearer_value>[A-Za-z0-9\-._~+/]{8,}=*)",
    ),
    (
        "url_password",
        r"(?P<url_prefix>(?-u:\b)[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@‹]*:)[^\s@/‹]+@",
    ),
    (
        "credential",
        r#"(?i)(?P<credential_key>(?-u:\b)(?:password|passwd|api[_-]?key|access[_-]?token|refresh[_-]?token|client[_-]?secret|secret[_-]?key)["']?(?:[ \t]*=[ \t]*["']?|[ \t]*:[ \t]*["']))[^\s"',;&‹]{4,}"#,
    ),
];

static SECRET_REGEX: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let alternation = SECRET_PATTERNS
        .iter()
        .map(|(kind, pattern)| format!("(?P<{kind}>{pattern})"))
        .collect::<Vec<_>>()
        .join("|");
    Regex::new(&alternation).ok()
});

/// Masks every secret-shaped string in `text` by `‹secret:<kind>›`, keeping the harmless
/// context around it (the scheme, user and host of a URL whose password is masked).
pub fn mask_secrets(text: &str) -> Cow<'_, str> {
    let Some(regex) = SECRET_REGEX.as_ref() else {
        // The patterns are fixed and tested; if they ever failed to compile, hiding the text
        // is the only safe answer.
        return Cow::Owned("‹text withheld: secret patterns unavailable›".into());
    };
    regex.replace_all(text, |captures: &Captures<'_>| {
        let kind = SECRET_PATTERNS
            .iter()
            .map(|(kind, _)| *kind)
            .find(|kind| captures.name(kind).is_some())
            .unwrap_or("token");
        let whole = captures.get(0).map_or("", |m| m.as_str());
        match kind {
            "authorization"
                if captures.name("auth_scheme").is_none()
                    && !looks_like_token(
                        captures.name("auth_value").map_or("", |m| m.as_str()),
                    ) =>
            {
                whole.to_owned()
            }
            "bearer_token"
                if !looks_like_token(captures.name("bearer_value").map_or("", |m| m.as_str())) =>
            {
                whole.to_owned()
            }
            "url_password" => format!(
                "{}‹secret:url_password›@",
                captures.name("url_prefix").map_or("", |m| m.as_str())
            ),
            "credential" => format!(
                "{}‹secret:credential›",
                captures.name("credential_key").map_or("", |m| m.as_str())
            ),
            "authorization" => "Authorization: ‹secret:authorization›".to_owned(),
            "bearer_token" => "Bearer ‹secret:bearer_token›".to_owned(),
            other => format!("‹secret:{other}›"),
        }
    })
}

/// Tells `Bearer eyJ0eXAi...` from `Bearer authentication required`: tokens carry digits or
/// punctuation, or are longer than ordinary words.
fn looks_like_token(value: &str) -> bool {
    value.chars().count() >= 20 || value.chars().any(|c| !c.is_ascii_alphabetic())
}

/// The caller's values replaced by field references (unless the server is trusted to echo),
/// then secret shapes masked (always). Borrows when nothing matched.
pub fn scrub<'t>(text: &'t str, caller: &CallerValues, trust_echoes: bool) -> Cow<'t, str> {
    let echoes_replaced = if trust_echoes {
        Cow::Borrowed(text)
    } else {
        caller.replace_echoes(text)
    };
    match echoes_replaced {
        Cow::Borrowed(unchanged) => mask_secrets(unchanged),
        Cow::Owned(replaced) => Cow::Owned(mask_secrets(&replaced).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn values(arguments: Value) -> CallerValues {
        CallerValues::from_arguments(Some(&arguments))
    }

    #[test]
    fn values_are_replaced_by_the_path_they_came_from() {
        let caller = values(json!({
            "query": "acme-widgets",
            "filter": {"owner": "octocat"},
            "items": [{"id": 1}, {"id": 2}, {"id": 98765}],
        }));
        let text = "No repo acme-widgets for octocat (item 98765).";
        assert_eq!(
            scrub(text, &caller, false),
            "No repo ‹query› for ‹filter.owner› (item ‹items[2].id›)."
        );
    }

    #[test]
    fn short_values_and_short_numbers_are_left_alone() {
        let caller = values(json!({"a": "abc", "b": 123, "c": true, "d": "----"}));
        assert!(caller.is_empty());
        assert_eq!(scrub("abc 123 ----", &caller, false), "abc 123 ----");
    }

    #[test]
    fn the_longer_value_wins_over_one_it_contains() {
        let caller = values(json!({"short": "acme", "long": "acme-widgets"}));
        assert_eq!(
            caller.replace_echoes("acme-widgets and acme"),
            "‹long› and ‹short›"
        );
    }

    #[test]
    fn numbers_match_only_whole_digit_runs() {
        let caller = values(json!({"id": 1234, "neg": -56789, "price": 1234.5}));
        assert_eq!(
            caller.replace_echoes("id 1234, not 91234 or 12345; -56789; cost 1234.50"),
            "id ‹id›, not 91234 or 12345; -‹neg›; cost 1234.50"
        );
        assert_eq!(caller.replace_echoes("cost 1234.5 USD"), "cost ‹price› USD");
        assert_eq!(caller.replace_echoes("user1234x"), "user‹id›x");
    }

    #[test]
    fn a_number_inside_a_run_does_not_hide_a_string_starting_later() {
        let caller = values(json!({"n": 1234, "code": "2345ab"}));
        assert_eq!(caller.replace_echoes("12345ab"), "1‹code›");
    }

    #[test]
    fn a_number_glued_to_another_value_is_caught() {
        let caller = values(json!({"code": "ab12", "n": 1234}));
        assert_eq!(caller.replace_echoes("x ab121234 y"), "x ‹code›‹n› y");
        assert_eq!(caller.replace_echoes("x 1234ab12 y"), "x ‹n›‹code› y");
    }

    #[test]
    fn json_escaped_and_percent_encoded_echoes_are_caught() {
        let caller = values(json!({"q": "say \"hi\" C:\\tmp", "path": "my dir/x y"}));
        assert_eq!(
            caller.replace_echoes(r#"{"q":"say \"hi\" C:\\tmp"}"#),
            r#"{"q":"‹q›"}"#
        );
        assert_eq!(
            caller.replace_echoes("GET /files/my%20dir%2Fx%20y failed"),
            "GET /files/‹path› failed"
        );
    }

    #[test]
    fn ascii_only_json_escapes_are_caught() {
        let caller = values(json!({"name": "zoë 😀 x"}));
        assert_eq!(
            caller.replace_echoes(r#"bad name "zo\u00eb \ud83d\ude00 x""#),
            r#"bad name "‹name›""#
        );
    }

    #[test]
    fn echoes_are_matched_ignoring_ascii_case() {
        let caller = values(json!({"email": "Alice@Example.com"}));
        assert_eq!(
            caller.replace_echoes("no user alice@example.com"),
            "no user ‹email›"
        );
    }

    #[test]
    fn odd_keys_and_top_level_values_get_unambiguous_references() {
        let caller = values(json!({"x.y": "value-one", "2nd": ["value-two"]}));
        assert_eq!(
            caller.replace_echoes("value-one value-two"),
            "‹[\"x.y\"]› ‹[\"2nd\"][0]›"
        );
        let top = CallerValues::from_arguments(Some(&json!("whole-thing")));
        assert_eq!(top.replace_echoes("whole-thing"), "‹arguments›");
        assert!(CallerValues::from_arguments(None).is_empty());
    }

    #[test]
    fn multibyte_text_around_matches_survives() {
        let caller = values(json!({"name": "zoë-1234"}));
        assert_eq!(
            caller.replace_echoes("→ zoë-1234 ← 日本"),
            "→ ‹name› ← 日本"
        );
    }

    #[test]
    fn trusted_servers_keep_echoes_but_never_secrets() {
        let caller = values(
            json!({"token": "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "q": "plain-value"}),
        );
        let text = "bad ghp_abcdefghijklmnopqrstuvwxyz0123456789 for plain-value";
        assert_eq!(
            scrub(text, &caller, true),
            "bad ‹secret:github_token› for plain-value"
        );
        assert_eq!(scrub(text, &caller, false), "bad ‹token› for ‹q›");
    }

    /// The reference semantics: one ASCII-case-insensitive leftmost-longest automaton.
    fn reference_matches(patterns: &[String], text: &str) -> Vec<(usize, usize, usize)> {
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .ascii_case_insensitive(true)
            .build(patterns)
            .unwrap();
        (0..text.len())
            .filter_map(|from| {
                automaton
                    .find(Input::new(text).span(from..text.len()))
                    .map(|m| (m.start(), m.end(), m.pattern().as_usize()))
            })
            .collect()
    }

    fn echo_matches(matcher: &EchoMatcher, text: &str) -> Vec<(usize, usize, usize)> {
        let prepared = matcher.prepare(text);
        (0..text.len())
            .filter_map(|from| matcher.find(&prepared, from))
            .map(|found| (found.start, found.end, found.pattern))
            .collect()
    }

    /// Patterns distinct ignoring ASCII case, as `from_collected` makes them.
    fn distinct_ignoring_case(candidates: Vec<String>) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        candidates
            .into_iter()
            .filter(|pattern| seen.insert(pattern.to_ascii_lowercase()))
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn every_matcher_finds_what_one_automaton_finds(
            candidates in proptest::collection::vec("[aAbB1é-]{1,6}", 1..12),
            text in "[aAbB1é -]{0,200}",
        ) {
            let patterns = distinct_ignoring_case(candidates);
            let matcher = EchoMatcher::build(&patterns).unwrap();
            proptest::prop_assert_eq!(
                echo_matches(&matcher, &text),
                reference_matches(&patterns, &text)
            );
        }
    }

    #[test]
    fn large_value_sets_fall_back_to_an_automaton_with_the_same_matches() {
        let patterns: Vec<String> = (0..300).map(|n| format!("Value-{n}")).collect();
        let matcher = EchoMatcher::build(&patterns).unwrap();
        assert!(matches!(matcher, EchoMatcher::Automaton(_)));
        let text = "value-12 VALUE-299, value-2999 and value-1x";
        assert_eq!(
            echo_matches(&matcher, text),
            reference_matches(&patterns, text)
        );
    }

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn a_typical_call_gets_the_packed_searcher() {
        let caller = values(json!({"path": "notes/today.md", "mode": "append", "n": 4096}));
        assert!(matches!(caller.matcher, Some(EchoMatcher::Packed(_))));
    }

    #[test]
    fn texts_shorter_than_every_value_are_borrowed() {
        let caller = values(json!({"q": "a-longer-value"}));
        assert!(matches!(caller.replace_echoes("short"), Cow::Borrowed(_)));
    }

    #[test]
    fn secret_patterns_compile() {
        assert!(SECRET_REGEX.is_some());
    }

    #[test]
    fn each_secret_shape_is_masked_by_kind() {
        let cases = [
            (
                "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                "‹secret:github_token›",
            ),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
                "‹secret:github_token›",
            ),
            (
                "sk-ant-api03-abcdefghijklmnopqrstuv",
                "‹secret:anthropic_key›",
            ),
            ("sk-proj-abcdefghijklmnopqrstuvwx", "‹secret:openai_key›"),
            ("sk-abcdefghijklmnopqrstuvwxyz", "‹secret:openai_key›"),
            ("xoxb-123456789012-abcdefghij", "‹secret:slack_token›"),
            ("AKIAIOSFODNN7EXAMPLE", "‹secret:aws_access_key_id›"),
            (
                "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
                "‹secret:google_api_key›",
            ),
            ("glpat-abcdefghij0123456789", "‹secret:gitlab_token›"),
            ("sk_live_abcdefghijklmnop1234", "‹secret:stripe_key›"),
            ("rk_live_abcdefghijklmnop1234", "‹secret:stripe_key›"),
            (
                "npm_abcdefghijklmnopqrstuvwxyz0123456789",
                "‹secret:npm_token›",
            ),
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "‹secret:jwt›",
            ),
            ("Bearer abc.def-ghi_jkl", "Bearer ‹secret:bearer_token›"),
            (
                "Authorization: Basic dXNlcjpwYXNz",
                "Authorization: ‹secret:authorization›",
            ),
            (
                "postgres://admin:hunter2@db.internal:5432/app",
                "postgres://admin:‹secret:url_password›@db.internal:5432/app",
            ),
            ("password=hunter22", "password=‹secret:credential›"),
            (
                r#""api_key": "abcd1234""#,
                r#""api_key": "‹secret:credential›""#,
            ),
        ];
        for (secret, masked) in cases {
            let text = format!("failed with {secret} here");
            assert_eq!(
                mask_secrets(&text),
                format!("failed with {masked} here"),
                "masking {secret}"
            );
        }
    }

    #[test]
    fn private_key_blocks_are_masked_whole_even_when_cut() {
        let pem = "key: -----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAK\n-----END RSA PRIVATE KEY----- done";
        assert_eq!(mask_secrets(pem), "key: ‹secret:private_key› done");
        let cut = "key: -----BEGIN PRIVATE KEY-----\\nMIIEow";
        assert_eq!(mask_secrets(cut), "key: ‹secret:private_key›");
    }

    #[test]
    fn ordinary_sentences_are_not_masked() {
        for text in [
            "password must be at least 8 characters",
            "the password: is required",
            "Bearer token missing",
            "see https://example.com:8080/path?q=1",
            "task-ant-colony and sk-short",
            "Authorization failed",
            "Authorization: required",
            "Bearer authentication required",
        ] {
            assert_eq!(mask_secrets(text), text);
        }
    }

    #[test]
    fn nothing_to_do_borrows() {
        let caller = values(json!({"q": "something"}));
        assert!(matches!(
            scrub("an ordinary failure", &caller, false),
            Cow::Borrowed(_)
        ));
    }
}
