//! The `[scan]` policy: what to do with findings, and which findings a user has accepted.

use serde::{Deserialize, Serialize};

use super::{Finding, FindingCode, ScanOptions};

/// What the gateway does with a tool that has findings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScanMode {
    /// Log the findings and pass the tool on.
    #[default]
    Warn,
    /// Drop the tool from `tools/list` and refuse calls to it (or refuse to start).
    Strict,
    /// Do not scan.
    Off,
}

/// Accepts findings the user has reviewed. Every given field must match; `code` and
/// `pointer` left out match anything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AllowRule {
    /// A tool name, or `*` for every tool.
    pub tool: String,
    pub code: Option<FindingCode>,
    /// A JSON Pointer inside the tool definition; it also covers everything beneath it
    /// (`/inputSchema` accepts findings anywhere in the input schema).
    pub pointer: Option<String>,
}

impl AllowRule {
    pub fn matches(&self, tool: &str, finding: &Finding) -> bool {
        (self.tool == "*" || self.tool == tool)
            && self.code.is_none_or(|code| code == finding.code)
            && self
                .pointer
                .as_deref()
                .is_none_or(|p| pointer_covers(p, &finding.pointer))
    }
}

fn pointer_covers(rule: &str, pointer: &str) -> bool {
    rule.is_empty()
        || pointer == rule
        || pointer
            .strip_prefix(rule)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The scanner's policy, embeddable as the `[scan]` table of the binary's TOML config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScanConfig {
    pub mode: ScanMode,
    pub max_description_bytes: usize,
    pub allow: Vec<AllowRule>,
    /// Per-tool modes (`[scan.tools.NAME] mode = "off"`), by tool name.
    pub tools: std::collections::BTreeMap<String, ToolScanConfig>,
}

/// What one tool may change of the scan policy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolScanConfig {
    pub mode: Option<ScanMode>,
}

impl Default for ScanConfig {
    fn default() -> Self {
        Self {
            mode: ScanMode::default(),
            max_description_bytes: ScanOptions::default().max_description_bytes,
            allow: Vec::new(),
            tools: std::collections::BTreeMap::new(),
        }
    }
}

impl ScanConfig {
    /// The options to build the [`super::Scanner`] with.
    pub fn options(&self) -> ScanOptions {
        ScanOptions {
            max_description_bytes: self.max_description_bytes,
        }
    }

    /// True when the user has accepted this finding for this tool.
    /// The mode for one tool: its own when it has one, the global one otherwise.
    pub fn mode_for(&self, tool: &str) -> ScanMode {
        self.tools
            .get(tool)
            .and_then(|tool| tool.mode)
            .unwrap_or(self.mode)
    }

    pub fn allows(&self, tool: &str, finding: &Finding) -> bool {
        self.allow.iter().any(|rule| rule.matches(tool, finding))
    }

    /// The findings of `tool` that no allow rule accepts.
    pub fn unallowed(&self, tool: &str, findings: Vec<Finding>) -> Vec<Finding> {
        findings
            .into_iter()
            .filter(|f| !self.allows(tool, f))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::Severity;

    fn finding(code: FindingCode, pointer: &str) -> Finding {
        Finding {
            code,
            severity: Severity::High,
            pointer: pointer.to_owned(),
            excerpt: String::new(),
            message: String::new(),
        }
    }

    #[derive(Deserialize)]
    struct Wrapper {
        scan: ScanConfig,
    }

    #[test]
    fn defaults_from_an_empty_table() {
        let w: Wrapper = toml::from_str("[scan]\n").unwrap();
        assert_eq!(w.scan, ScanConfig::default());
        assert_eq!(w.scan.mode, ScanMode::Warn);
        assert_eq!(w.scan.max_description_bytes, 2048);
    }

    #[test]
    fn parses_a_full_table_and_rejects_unknown_keys() {
        let w: Wrapper = toml::from_str(
            r#"
[scan]
mode = "strict"
max_description_bytes = 4096
allow = [
  { tool = "fetch", code = "too_long" },
  { tool = "*", code = "sensitive_path", pointer = "/inputSchema" },
]
"#,
        )
        .unwrap();
        assert_eq!(w.scan.mode, ScanMode::Strict);
        assert_eq!(w.scan.options().max_description_bytes, 4096);
        assert_eq!(w.scan.allow.len(), 2);
        assert!(toml::from_str::<Wrapper>("[scan]\nmodes = \"warn\"\n").is_err());
        assert!(toml::from_str::<Wrapper>("[scan]\nmode = \"loud\"\n").is_err());
        assert!(
            toml::from_str::<Wrapper>("[scan]\nallow = [{ tool = \"x\", cod = \"too_long\" }]\n")
                .is_err()
        );
    }

    #[test]
    fn allow_rules_match_tool_code_and_pointer_subtree() {
        let config = ScanConfig {
            allow: vec![
                AllowRule {
                    tool: "fetch".into(),
                    code: Some(FindingCode::TooLong),
                    pointer: None,
                },
                AllowRule {
                    tool: "*".into(),
                    code: Some(FindingCode::SensitivePath),
                    pointer: Some("/inputSchema".into()),
                },
            ],
            ..ScanConfig::default()
        };
        assert!(config.allows("fetch", &finding(FindingCode::TooLong, "/description")));
        assert!(!config.allows("other", &finding(FindingCode::TooLong, "/description")));
        assert!(!config.allows(
            "fetch",
            &finding(FindingCode::PromptInjection, "/description")
        ));
        let nested = "/inputSchema/properties/path/description";
        assert!(config.allows("any", &finding(FindingCode::SensitivePath, nested)));
        assert!(!config.allows("any", &finding(FindingCode::SensitivePath, "/inputSchemaX")));
        assert!(!config.allows("any", &finding(FindingCode::SensitivePath, "/description")));
        let kept = config.unallowed(
            "fetch",
            vec![
                finding(FindingCode::TooLong, "/description"),
                finding(FindingCode::PromptInjection, "/description"),
            ],
        );
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].code, FindingCode::PromptInjection);
    }
}
