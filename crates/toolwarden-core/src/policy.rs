//! The error policy: how strictly calls are checked and how failures are answered, set globally
//! in the configuration file with per-tool overrides.
//!
//! ```toml
//! unknown_arguments = "reject"
//! max_result_bytes = 262144
//!
//! [tools.write_file]
//! unknown_arguments = "strip"
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::validate::UnknownArguments;

/// How a call to a tool the catalog does not know is answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnknownTool {
    /// A JSON-RPC error -32602, as the specification asks.
    #[default]
    ProtocolError,
    /// An error result, for clients that never show protocol errors to the model.
    ErrorResult,
}

pub const DEFAULT_MAX_RESULT_BYTES: usize = 256 * 1024;

/// The global policy as written in the configuration file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ErrorPolicyConfig {
    pub unknown_arguments: UnknownArguments,
    pub unknown_tool: UnknownTool,
    /// True for servers trusted not to repeat caller values in their error texts; their
    /// texts are then passed on without replacing echoed values.
    pub trust_echoes: bool,
    pub max_result_bytes: usize,
    pub validate_arguments: bool,
    pub validate_output: bool,
    /// How long a call may wait for the server's answer before the gateway answers with a
    /// `timeout` error and cancels it upstream. None: wait as long as the client does.
    pub call_timeout_ms: Option<u64>,
    /// Per-tool overrides, by tool name.
    pub tools: BTreeMap<String, ToolOverrides>,
}

impl Default for ErrorPolicyConfig {
    fn default() -> Self {
        ErrorPolicyConfig {
            unknown_arguments: UnknownArguments::Reject,
            unknown_tool: UnknownTool::ProtocolError,
            trust_echoes: false,
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            validate_arguments: true,
            validate_output: true,
            call_timeout_ms: None,
            tools: BTreeMap::new(),
        }
    }
}

/// The settings one tool may change. `unknown_tool` is absent on purpose: it concerns names
/// that match no tool, so no tool's section could ever apply it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolOverrides {
    pub unknown_arguments: Option<UnknownArguments>,
    pub trust_echoes: Option<bool>,
    pub max_result_bytes: Option<usize>,
    pub validate_arguments: Option<bool>,
    pub validate_output: Option<bool>,
    pub call_timeout_ms: Option<u64>,
}

/// The effective policy for one tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorPolicy {
    pub unknown_arguments: UnknownArguments,
    pub unknown_tool: UnknownTool,
    pub trust_echoes: bool,
    pub max_result_bytes: usize,
    pub validate_arguments: bool,
    pub validate_output: bool,
    pub call_timeout_ms: Option<u64>,
}

impl ErrorPolicyConfig {
    /// The policy for `tool`: its overrides where it has them, the global values elsewhere.
    pub fn resolve(&self, tool: &str) -> ErrorPolicy {
        let overrides = self.tools.get(tool);
        ErrorPolicy {
            unknown_arguments: overrides
                .and_then(|o| o.unknown_arguments)
                .unwrap_or(self.unknown_arguments),
            unknown_tool: self.unknown_tool,
            trust_echoes: overrides
                .and_then(|o| o.trust_echoes)
                .unwrap_or(self.trust_echoes),
            max_result_bytes: overrides
                .and_then(|o| o.max_result_bytes)
                .unwrap_or(self.max_result_bytes),
            validate_arguments: overrides
                .and_then(|o| o.validate_arguments)
                .unwrap_or(self.validate_arguments),
            validate_output: overrides
                .and_then(|o| o.validate_output)
                .unwrap_or(self.validate_output),
            call_timeout_ms: overrides
                .and_then(|o| o.call_timeout_ms)
                .or(self.call_timeout_ms),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_config_gives_the_documented_defaults() {
        let config: ErrorPolicyConfig = toml::from_str("").unwrap();
        assert_eq!(config, ErrorPolicyConfig::default());
        let policy = config.resolve("any_tool");
        assert_eq!(
            policy,
            ErrorPolicy {
                unknown_arguments: UnknownArguments::Reject,
                unknown_tool: UnknownTool::ProtocolError,
                trust_echoes: false,
                max_result_bytes: 262_144,
                validate_arguments: true,
                validate_output: true,
                call_timeout_ms: None,
            }
        );
    }

    #[test]
    fn per_tool_overrides_win_over_global_values() {
        let config: ErrorPolicyConfig = toml::from_str(
            r#"
            unknown_arguments = "allow"
            unknown_tool = "error_result"
            trust_echoes = true
            max_result_bytes = 1000
            validate_output = false

            [tools.write_file]
            unknown_arguments = "strip"
            max_result_bytes = 50

            [tools.search]
            trust_echoes = false
            validate_arguments = false
            validate_output = true
            "#,
        )
        .unwrap();
        let global = config.resolve("other");
        assert_eq!(global.unknown_arguments, UnknownArguments::Allow);
        assert_eq!(global.unknown_tool, UnknownTool::ErrorResult);
        assert!(global.trust_echoes);
        assert_eq!(global.max_result_bytes, 1000);
        assert!(global.validate_arguments);
        assert!(!global.validate_output);

        let write_file = config.resolve("write_file");
        assert_eq!(write_file.unknown_arguments, UnknownArguments::Strip);
        assert_eq!(write_file.max_result_bytes, 50);
        assert!(write_file.trust_echoes);

        let search = config.resolve("search");
        assert!(!search.trust_echoes);
        assert!(!search.validate_arguments);
        assert!(search.validate_output);
        assert_eq!(search.unknown_arguments, UnknownArguments::Allow);
    }

    #[test]
    fn misspelt_keys_and_values_are_refused() {
        assert!(toml::from_str::<ErrorPolicyConfig>("unknown_argument = \"reject\"").is_err());
        assert!(toml::from_str::<ErrorPolicyConfig>("unknown_arguments = \"drop\"").is_err());
        assert!(
            toml::from_str::<ErrorPolicyConfig>("[tools.x]\nunknown_tool = \"error_result\"")
                .is_err()
        );
        assert!(toml::from_str::<ErrorPolicyConfig>("[tools.x]\nmax_bytes = 3").is_err());
    }
}
