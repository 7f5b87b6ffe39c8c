//! Tool-description hygiene (DESIGN.md 1.2): finds hidden characters, prompt-injection phrasing,
//! requests for credential files, instructions aimed at other tools and oversize descriptions in
//! an MCP tool definition.
//!
//! Scanners are free to create: the phrase automaton is compiled once per process, on the first
//! scan (or at [`Scanner::warm_up`]), so creating a scanner never delays a client's
//! `initialize`.
//! Text that is plain single-line ASCII skips normalisation entirely, and a clean string
//! allocates nothing.

mod chars;
mod config;
mod excerpt;
mod normalize;
mod phrases;

use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use config::{AllowRule, ScanConfig, ScanMode, ToolScanConfig};

use chars::CharClass;
use normalize::{Normalized, is_already_normal, normalize_into};
use phrases::{PhraseMatcher, RULES};

/// How serious a finding is. Ordered: `Low < Medium < High`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Low,
    Medium,
    High,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
        }
    }

    /// The SARIF `level` for this severity.
    pub fn sarif_level(self) -> &'static str {
        match self {
            Severity::Low => "note",
            Severity::Medium => "warning",
            Severity::High => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The stable identity of a kind of finding; the serialised names are part of the public
/// contract (logs, SARIF rule ids, allow rules in config).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingCode {
    ControlCharacter,
    InvisibleUnicode,
    PromptInjection,
    SensitivePath,
    ToolShadowing,
    TooLong,
}

impl FindingCode {
    pub const ALL: [FindingCode; 6] = [
        FindingCode::ControlCharacter,
        FindingCode::InvisibleUnicode,
        FindingCode::PromptInjection,
        FindingCode::SensitivePath,
        FindingCode::ToolShadowing,
        FindingCode::TooLong,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FindingCode::ControlCharacter => "control_character",
            FindingCode::InvisibleUnicode => "invisible_unicode",
            FindingCode::PromptInjection => "prompt_injection",
            FindingCode::SensitivePath => "sensitive_path",
            FindingCode::ToolShadowing => "tool_shadowing",
            FindingCode::TooLong => "too_long",
        }
    }

    /// The severity findings of this code usually carry. Invisible characters are `Medium`
    /// unless the characters found are the ones used in attacks (bidi overrides, tag
    /// characters, variation-selector runs), which raise them to `High`.
    pub fn base_severity(self) -> Severity {
        match self {
            FindingCode::ControlCharacter | FindingCode::InvisibleUnicode => Severity::Medium,
            FindingCode::PromptInjection
            | FindingCode::SensitivePath
            | FindingCode::ToolShadowing => Severity::High,
            FindingCode::TooLong => Severity::Low,
        }
    }

    fn phrase_slot(self) -> Option<usize> {
        match self {
            FindingCode::PromptInjection => Some(0),
            FindingCode::SensitivePath => Some(1),
            FindingCode::ToolShadowing => Some(2),
            _ => None,
        }
    }
}

impl fmt::Display for FindingCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for FindingCode {
    type Err = UnknownFindingCode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FindingCode::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or(UnknownFindingCode)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("unknown finding code")]
pub struct UnknownFindingCode;

/// One problem found at one location of a tool definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub code: FindingCode,
    pub severity: Severity,
    /// JSON Pointer inside the tool definition (`/description`,
    /// `/inputSchema/properties/path/description`). A finding in a property name points at
    /// that property's schema and says so in `message`.
    pub pointer: String,
    /// About 80 characters around the first hit, hidden characters shown as `[U+200B]`.
    pub excerpt: String,
    /// One sentence saying what was found; never repeats the offending text.
    pub message: String,
}

/// Scanner settings that affect what is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanOptions {
    /// Descriptions longer than this many bytes are reported as `too_long`.
    pub max_description_bytes: usize,
}

impl Default for ScanOptions {
    fn default() -> Self {
        Self {
            max_description_bytes: 2048,
        }
    }
}

static PHRASES: LazyLock<PhraseMatcher> = LazyLock::new(|| {
    // The table is a compile-time constant; a unit test builds it, so this cannot fail at run
    // time unless the table itself is broken.
    PhraseMatcher::new(RULES).expect("the built-in phrase table compiles")
});

/// Schemas nest; past this depth the scanner stops descending (real schemas stay far below).
const MAX_DEPTH: usize = 64;

/// What kind of string is being scanned: descriptions also have a size limit, and property
/// names are reported with their own wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextKind {
    Description,
    Text,
    /// The tool's own name.
    Name,
    PropertyName,
}

impl TextKind {
    fn subject(self) -> &'static str {
        match self {
            TextKind::Description => "The description",
            TextKind::Text => "The text",
            TextKind::Name => "The tool name",
            TextKind::PropertyName => "The property name",
        }
    }
}

/// The description scanner. Cheap to create; the phrase automaton is shared and built on
/// first use.
#[derive(Debug, Clone)]
pub struct Scanner {
    options: ScanOptions,
    /// Held unforced: a DFA over the whole phrase table takes milliseconds to build, which
    /// belongs on the first scan, not on whatever path creates the scanner.
    phrases: &'static LazyLock<PhraseMatcher>,
}

impl Default for Scanner {
    fn default() -> Self {
        Self::new(ScanOptions::default())
    }
}

/// Per-scan state: the normalisation buffer, reused across every string of a tool.
struct Pass<'a> {
    own_name: Option<&'a str>,
    normalized: Normalized,
    pointer: String,
    findings: Vec<Finding>,
}

impl Scanner {
    pub fn new(options: ScanOptions) -> Self {
        Self::with_phrases(options, &PHRASES)
    }

    fn with_phrases(options: ScanOptions, phrases: &'static LazyLock<PhraseMatcher>) -> Self {
        Self { options, phrases }
    }

    pub fn options(&self) -> ScanOptions {
        self.options
    }

    /// Builds the shared phrase automaton now (a few milliseconds, once per process) so that
    /// the first scan does not pay for it; for callers with idle time before their first scan.
    pub fn warm_up(&self) {
        LazyLock::force(self.phrases);
    }

    /// Scans one MCP tool definition: `name`, `title`, `description`, `annotations.title`, and
    /// every string and property name inside `inputSchema` and `outputSchema`. Findings come in
    /// document order, each code at most once per location.
    pub fn scan_tool(&self, tool: &Value) -> Vec<Finding> {
        let Some(fields) = tool.as_object() else {
            return Vec::new();
        };
        let (normalized, pointer) = take_buffers();
        let mut pass = Pass {
            own_name: fields.get("name").and_then(Value::as_str),
            normalized,
            pointer,
            findings: Vec::new(),
        };
        for (key, kind) in [
            ("name", TextKind::Name),
            ("title", TextKind::Text),
            ("description", TextKind::Description),
        ] {
            if let Some(text) = fields.get(key).and_then(Value::as_str) {
                pass.pointer.clear();
                push_segment(&mut pass.pointer, key);
                self.scan_into(text, kind, &mut pass);
            }
        }
        if let Some(title) = fields
            .get("annotations")
            .and_then(|a| a.get("title"))
            .and_then(Value::as_str)
        {
            pass.pointer.clear();
            pass.pointer.push_str("/annotations/title");
            self.scan_into(title, TextKind::Text, &mut pass);
        }
        for key in ["inputSchema", "outputSchema"] {
            if let Some(schema) = fields.get(key) {
                pass.pointer.clear();
                push_segment(&mut pass.pointer, key);
                self.walk_schema(schema, None, 0, &mut pass);
            }
        }
        return_buffers(pass.normalized, pass.pointer);
        pass.findings
    }

    /// Scans a bare text as if it were a description found at `pointer` (so the size limit
    /// applies).
    pub fn scan_text(&self, text: &str, pointer: &str) -> Vec<Finding> {
        let (normalized, mut scratch_pointer) = take_buffers();
        scratch_pointer.push_str(pointer);
        let mut pass = Pass {
            own_name: None,
            normalized,
            pointer: scratch_pointer,
            findings: Vec::new(),
        };
        self.scan_into(text, TextKind::Description, &mut pass);
        return_buffers(pass.normalized, pass.pointer);
        pass.findings
    }

    fn walk_schema(&self, value: &Value, parent_key: Option<&str>, depth: usize, pass: &mut Pass) {
        if depth > MAX_DEPTH {
            return;
        }
        match value {
            Value::String(text) => {
                let kind = if parent_key == Some("description") {
                    TextKind::Description
                } else {
                    TextKind::Text
                };
                self.scan_into(text, kind, pass);
            }
            Value::Array(items) => {
                let base = pass.pointer.len();
                for (index, item) in items.iter().enumerate() {
                    let _ = write!(pass.pointer, "/{index}");
                    self.walk_schema(item, None, depth + 1, pass);
                    pass.pointer.truncate(base);
                }
            }
            Value::Object(map) => {
                let base = pass.pointer.len();
                let names_properties = parent_key == Some("properties");
                for (key, child) in map {
                    push_segment(&mut pass.pointer, key);
                    if names_properties {
                        self.scan_into(key, TextKind::PropertyName, pass);
                    }
                    self.walk_schema(child, Some(key), depth + 1, pass);
                    pass.pointer.truncate(base);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    fn scan_into(&self, text: &str, kind: TextKind, pass: &mut Pass) {
        let fast = is_already_normal(text);

        // Normalising also tells whether there is any non-ASCII or control character at all;
        // only then is the per-character pass worth running.
        if !fast && normalize_into(text, &mut pass.normalized) {
            self.check_characters(text, kind, pass);
        }

        if kind == TextKind::Description && text.len() > self.options.max_description_bytes {
            let message = format!(
                "{} is {} bytes long, over the {}-byte limit.",
                kind.subject(),
                text.len(),
                self.options.max_description_bytes
            );
            push_finding(
                pass,
                FindingCode::TooLong,
                FindingCode::TooLong.base_severity(),
                excerpt::excerpt(text, 0),
                message,
            );
        }

        if fast {
            let hits = self.phrase_hits(text, &[0], pass.own_name);
            self.push_phrase_findings(text, hits, kind, pass);
        } else {
            let normalized = std::mem::take(&mut pass.normalized);
            let hits = self.phrase_hits(&normalized.text, &normalized.line_starts, pass.own_name);
            self.push_phrase_findings(&normalized.text, hits, kind, pass);
            pass.normalized = normalized;
        }

        // Identifiers glue words with `_` and `-` (`ignore_previous_instructions`); read them
        // a second time as words. Paths such as `id_rsa` were already matched as written.
        if matches!(kind, TextKind::Name | TextKind::PropertyName) && text.contains(['_', '-']) {
            let spaced = text.replace(['_', '-'], " ");
            let mut normalized = std::mem::take(&mut pass.normalized);
            normalize_into(&spaced, &mut normalized);
            let hits = self.phrase_hits(&normalized.text, &normalized.line_starts, pass.own_name);
            self.push_phrase_findings(&normalized.text, hits, kind, pass);
            pass.normalized = normalized;
        }
    }

    /// The first hit and its label for each phrase code, indexed by `FindingCode::phrase_slot`.
    fn phrase_hits(
        &self,
        normal: &str,
        line_starts: &[usize],
        own_name: Option<&str>,
    ) -> [Option<(usize, &'static str)>; 3] {
        let mut first_hits: [Option<(usize, &'static str)>; 3] = [None; 3];
        self.phrases
            .for_each_hit(normal, line_starts, own_name, |hit| {
                if let Some(slot) = hit.code.phrase_slot().and_then(|i| first_hits.get_mut(i))
                    && slot.is_none_or(|(start, _)| hit.start < start)
                {
                    *slot = Some((hit.start, hit.label));
                }
            });
        first_hits
    }

    fn push_phrase_findings(
        &self,
        normal: &str,
        hits: [Option<(usize, &'static str)>; 3],
        kind: TextKind,
        pass: &mut Pass,
    ) {
        let codes = [
            FindingCode::PromptInjection,
            FindingCode::SensitivePath,
            FindingCode::ToolShadowing,
        ];
        for (code, hit) in codes.into_iter().zip(hits) {
            let Some((start, label)) = hit else {
                continue;
            };
            let message = match code {
                FindingCode::SensitivePath => format!(
                    "{} refers to a credential or configuration file ({label}).",
                    kind.subject()
                ),
                _ => format!("{} contains {label}.", kind.subject()),
            };
            push_finding(
                pass,
                code,
                code.base_severity(),
                excerpt::excerpt(normal, start),
                message,
            );
        }
    }

    fn check_characters(&self, text: &str, kind: TextKind, pass: &mut Pass) {
        let mut controls = 0usize;
        let mut first_control: Option<(usize, char)> = None;
        let mut invisibles = 0usize;
        let mut first_invisible: Option<(usize, char)> = None;
        let mut invisible_severity = FindingCode::InvisibleUnicode.base_severity();
        let mut tags = false;
        let mut prev: Option<char> = None;
        let mut iter = text.char_indices().peekable();
        while let Some((at, c)) = iter.next() {
            let next = iter.peek().map(|&(_, n)| n);
            match chars::classify(prev, c, next) {
                CharClass::Plain => {}
                CharClass::Control => {
                    controls += 1;
                    first_control.get_or_insert((at, c));
                }
                CharClass::Invisible(severity) => {
                    invisibles += 1;
                    first_invisible.get_or_insert((at, c));
                    invisible_severity = invisible_severity.max(severity);
                    tags |= matches!(c, '\u{E0000}'..='\u{E007F}');
                }
            }
            prev = Some(c);
        }
        if let Some((at, c)) = first_control {
            let message = format!(
                "{} contains {controls} control character{}, the first U+{:04X}.",
                kind.subject(),
                plural(controls),
                u32::from(c)
            );
            let severity = FindingCode::ControlCharacter.base_severity();
            push_finding(
                pass,
                FindingCode::ControlCharacter,
                severity,
                excerpt::excerpt(text, at),
                message,
            );
        }
        if let Some((at, c)) = first_invisible {
            let note = if tags {
                "; tag characters carry hidden text that models read"
            } else {
                ""
            };
            let message = format!(
                "{} contains {invisibles} invisible or direction-changing character{}, the first U+{:04X}{note}.",
                kind.subject(),
                plural(invisibles),
                u32::from(c)
            );
            push_finding(
                pass,
                FindingCode::InvisibleUnicode,
                invisible_severity,
                excerpt::excerpt(text, at),
                message,
            );
        }
    }
}

thread_local! {
    /// Buffers kept between scans on this thread: a `tools/list` of hundreds of tools then
    /// allocates them once instead of once per tool.
    static SCRATCH: RefCell<Option<(Normalized, String)>> = const { RefCell::new(None) };
}

fn take_buffers() -> (Normalized, String) {
    SCRATCH
        .try_with(|cell| cell.borrow_mut().take())
        .ok()
        .flatten()
        .unwrap_or_default()
}

fn return_buffers(normalized: Normalized, mut pointer: String) {
    pointer.clear();
    // Do not keep a buffer grown by one huge text alive for the life of the thread.
    if normalized.text.capacity() <= 64 * 1024 {
        let _ = SCRATCH.try_with(|cell| *cell.borrow_mut() = Some((normalized, pointer)));
    }
}

/// The first line of `text`, cut to excerpt length, hidden characters shown as `[U+200B]`:
/// safe to write into a human-readable file or a log.
pub(crate) fn visible_summary(text: &str) -> String {
    excerpt::excerpt(text.lines().next().unwrap_or_default(), 0)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Records a finding unless the same code is already reported at the same location (a
/// property name and its schema share a pointer).
fn push_finding(
    pass: &mut Pass,
    code: FindingCode,
    severity: Severity,
    excerpt: String,
    message: String,
) {
    if let Some(existing) = pass
        .findings
        .iter_mut()
        .find(|f| f.code == code && f.pointer == pass.pointer)
    {
        existing.severity = existing.severity.max(severity);
        return;
    }
    pass.findings.push(Finding {
        code,
        severity,
        pointer: pass.pointer.clone(),
        excerpt,
        message,
    });
}

/// Appends `/segment` with JSON Pointer escaping (`~` -> `~0`, `/` -> `~1`).
fn push_segment(pointer: &mut String, segment: &str) {
    pointer.push('/');
    for c in segment.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            _ => pointer.push(c),
        }
    }
}

#[cfg(test)]
mod tests;
