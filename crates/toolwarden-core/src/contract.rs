//! The vocabulary of the error contract (DESIGN.md 1.1): the closed taxonomy of failure kinds
//! and the field-level issues every `invalid_arguments` error lists.
//!
//! These types are what `_meta["toolwarden/error"]` and the log lines are made of, so their
//! serialised names are part of the public contract and must not change casually.

use serde::{Deserialize, Serialize};

/// The `_meta` key under which toolwarden describes an error it made or reshaped.
pub const ERROR_META_KEY: &str = "toolwarden/error";

/// The closed set of failure kinds. `expected` tells whether the agent can correct course.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    InvalidArguments,
    UnknownTool,
    NotFound,
    PermissionDenied,
    PolicyDenied,
    RateLimited,
    Timeout,
    UpstreamUnavailable,
    UpstreamError,
    OutputInvalid,
    Internal,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 11] = [
        ErrorKind::InvalidArguments,
        ErrorKind::UnknownTool,
        ErrorKind::NotFound,
        ErrorKind::PermissionDenied,
        ErrorKind::PolicyDenied,
        ErrorKind::RateLimited,
        ErrorKind::Timeout,
        ErrorKind::UpstreamUnavailable,
        ErrorKind::UpstreamError,
        ErrorKind::OutputInvalid,
        ErrorKind::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidArguments => "invalid_arguments",
            ErrorKind::UnknownTool => "unknown_tool",
            ErrorKind::NotFound => "not_found",
            ErrorKind::PermissionDenied => "permission_denied",
            ErrorKind::PolicyDenied => "policy_denied",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::Timeout => "timeout",
            ErrorKind::UpstreamUnavailable => "upstream_unavailable",
            ErrorKind::UpstreamError => "upstream_error",
            ErrorKind::OutputInvalid => "output_invalid",
            ErrorKind::Internal => "internal",
        }
    }

    /// True where the agent itself can correct course; false where an operator must act or a
    /// server has a bug. Decides the log level: expected failures are WARN, the rest ERROR.
    pub fn expected(self) -> bool {
        match self {
            ErrorKind::InvalidArguments
            | ErrorKind::UnknownTool
            | ErrorKind::NotFound
            | ErrorKind::PermissionDenied
            | ErrorKind::PolicyDenied
            | ErrorKind::RateLimited
            | ErrorKind::Timeout => true,
            ErrorKind::UpstreamUnavailable
            | ErrorKind::UpstreamError
            | ErrorKind::OutputInvalid
            | ErrorKind::Internal => false,
        }
    }

    /// True where the same call may succeed if simply tried again later.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            ErrorKind::RateLimited | ErrorKind::Timeout | ErrorKind::UpstreamUnavailable
        )
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What is wrong with one field of the arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Problem {
    Type,
    Required,
    Unknown,
    Enum,
    Const,
    Format,
    Range,
    Pattern,
    Length,
    Count,
    Unique,
    Composition,
    Other,
}

impl Problem {
    pub fn as_str(self) -> &'static str {
        match self {
            Problem::Type => "type",
            Problem::Required => "required",
            Problem::Unknown => "unknown",
            Problem::Enum => "enum",
            Problem::Const => "const",
            Problem::Format => "format",
            Problem::Range => "range",
            Problem::Pattern => "pattern",
            Problem::Length => "length",
            Problem::Count => "count",
            Problem::Unique => "unique",
            Problem::Composition => "composition",
            Problem::Other => "other",
        }
    }
}

/// One failing field. Holds only what is safe to show: the path, schema-side facts (expected
/// type, allowed enum members, bounds) and the JSON type of what was sent, never the value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldIssue {
    /// JSON Pointer into the arguments object (`/items/2/id`).
    pub path: String,
    pub problem: Problem,
    /// Schema-side expectation in words: a JSON type name (`integer`, `string or null`), a
    /// format name, a bound (`<= 100`), a pattern. Comes from the schema, never from the value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// The allowed members for `enum`/`const` problems, taken from the schema.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<serde_json::Value>>,
    /// The JSON type name of what the caller sent (`string`, `object`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub got: Option<&'static str>,
}

/// JSON type name of a value, as JSON Schema spells it (integers are told apart from numbers).
pub fn json_type_name(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_round_trip_through_serde() {
        for kind in ErrorKind::ALL {
            let text = serde_json::to_string(&kind).unwrap();
            assert_eq!(text, format!("\"{}\"", kind.as_str()));
            let back: ErrorKind = serde_json::from_str(&text).unwrap();
            assert_eq!(back, kind);
        }
    }

    #[test]
    fn only_correctable_kinds_are_expected() {
        assert!(ErrorKind::InvalidArguments.expected());
        assert!(!ErrorKind::OutputInvalid.expected());
        assert!(!ErrorKind::Internal.expected());
        assert!(ErrorKind::RateLimited.retryable());
        assert!(!ErrorKind::InvalidArguments.retryable());
    }

    #[test]
    fn integers_are_told_apart_from_numbers() {
        assert_eq!(json_type_name(&serde_json::json!(3)), "integer");
        assert_eq!(json_type_name(&serde_json::json!(3.5)), "number");
        assert_eq!(json_type_name(&serde_json::json!("x")), "string");
    }
}
