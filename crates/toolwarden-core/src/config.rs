//! The configuration file (`--config toolwarden.toml`): one TOML document whose tables are the
//! policies of each part. Every key has a default that is right for most users, so an empty
//! file (or none) is a valid configuration; an unknown key is an error, not a silent no-op.

use crate::policy::ErrorPolicyConfig;
use crate::scan::ScanConfig;
use serde::Deserialize;
use std::path::PathBuf;

/// ```toml
/// [gateway]
/// max_line_bytes = 16777216
///
/// [errors]
/// unknown_arguments = "reject"   # or "strip", "allow"
/// unknown_tool = "protocol_error" # or "error_result"
/// max_result_bytes = 262144
///
/// [errors.tools.write_file]
/// unknown_arguments = "strip"
///
/// [scan]
/// mode = "warn"                   # or "strict" (withhold poisoned tools), "off"
///
/// [pin]
/// lockfile = "toolwarden.lock"
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub gateway: GatewayConfig,
    pub errors: ErrorPolicyConfig,
    pub scan: ScanConfig,
    pub pin: PinConfig,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PinConfig {
    /// A lockfile written by `toolwarden pin`: tools whose definitions differ from it are
    /// reported, and withheld in strict scan mode. Relative to the config file's directory.
    pub lockfile: Option<PathBuf>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GatewayConfig {
    /// Messages longer than this (in bytes) are refused instead of buffered.
    pub max_line_bytes: usize,
    /// How long the server gets to exit after its stdin closes, and again after SIGTERM.
    pub shutdown_grace_ms: u64,
    /// How long calls wait for a tool catalog the gateway fetches itself.
    pub catalog_fetch_timeout_ms: u64,
}

impl Default for GatewayConfig {
    fn default() -> Self {
        GatewayConfig {
            max_line_bytes: 16 * 1024 * 1024,
            shutdown_grace_ms: 2000,
            catalog_fetch_timeout_ms: 10_000,
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ConfigError {
    /// The 1-based line of the problem, when known.
    pub line: Option<usize>,
    pub message: String,
}

impl Config {
    /// Parses a configuration file's text. The error names the line and what is wrong there.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        toml::from_str(text).map_err(|error| {
            let line = error
                .span()
                .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
            let message = match line {
                Some(line) => format!("line {line}: {}", error.message()),
                None => error.message().to_owned(),
            };
            ConfigError { line, message }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_file_is_the_defaults() {
        let config = Config::parse("").unwrap();
        assert_eq!(config.gateway.max_line_bytes, 16 * 1024 * 1024);
    }

    #[test]
    fn error_policies_are_read_globally_and_per_tool() {
        let config = Config::parse(
            "[errors]\nunknown_tool = \"error_result\"\n[errors.tools.write_file]\nunknown_arguments = \"strip\"\n",
        )
        .unwrap();
        assert_eq!(
            config.errors.resolve("write_file").unknown_arguments,
            crate::policy::UnknownArguments::Strip
        );
        assert_eq!(
            config.errors.resolve("read_file").unknown_arguments,
            crate::policy::UnknownArguments::Reject
        );
    }

    #[test]
    fn errors_name_the_line() {
        let error = Config::parse("[gateway]\nmax_line_bytes = 10\nbogus = 1\n").unwrap_err();
        assert_eq!(error.line, Some(3));
        assert!(error.message.starts_with("line 3: "), "{}", error.message);
        let error = Config::parse("[gateway]\nmax_line_bytes = \"big\"\n").unwrap_err();
        assert_eq!(error.line, Some(2));
    }
}
