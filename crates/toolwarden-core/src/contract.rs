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

/// Who produced the failure: toolwarden itself (the server never saw the call) or the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Warden,
    Upstream,
}

/// A tool-call failure in its final, safe form. Everything in it may be shown to the model and
/// written to logs: builders of this type are responsible for never putting a caller's value in.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub kind: ErrorKind,
    /// The tool's name when it is a known tool; `None` for unknown tools, whose names are
    /// caller input and so never echoed.
    pub tool: Option<String>,
    pub source: Source,
    /// What failed and why, one or two sentences.
    pub message: String,
    /// The next action, shown after `Hint: `.
    pub hint: Option<String>,
    pub fields: Vec<FieldIssue>,
    pub suggestion: Option<String>,
    pub retry_after_ms: Option<u64>,
    /// The JSON-RPC error code the server answered with, when it answered with one.
    pub upstream_code: Option<i64>,
    /// The HTTP status of the server's own upstream API, when its text shows one.
    pub http_status: Option<u16>,
}

impl ToolError {
    pub fn new(kind: ErrorKind, source: Source, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            tool: None,
            source,
            message: message.into(),
            hint: None,
            fields: Vec::new(),
            suggestion: None,
            retry_after_ms: None,
            upstream_code: None,
            http_status: None,
        }
    }

    /// The text a model reads: the message, then the hint on its own last line, so that
    /// truncation (which keeps the tail) never loses the next action.
    pub fn text(&self) -> String {
        match &self.hint {
            Some(hint) => format!("{}\nHint: {}", self.message, hint),
            None => self.message.clone(),
        }
    }

    /// The value of `_meta["toolwarden/error"]`.
    pub fn meta(&self) -> serde_json::Value {
        let mut meta = serde_json::json!({
            "kind": self.kind,
            "expected": self.kind.expected(),
            "retryable": self.kind.retryable(),
            "tool": self.tool,
            "source": self.source,
            "fields": self.fields,
            "suggestion": self.suggestion,
            "retry_after_ms": self.retry_after_ms,
            "upstream_code": self.upstream_code,
        });
        if let (Some(status), Some(object)) = (self.http_status, meta.as_object_mut()) {
            object.insert("http_status".into(), status.into());
        }
        meta
    }

    /// A `CallToolResult` with `isError: true`. `server_meta` is the server's own `_meta`, kept
    /// as it was with our key added beside its keys.
    pub fn to_call_result(
        &self,
        server_meta: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> serde_json::Value {
        let mut meta = server_meta.unwrap_or_default();
        meta.insert(ERROR_META_KEY.to_owned(), self.meta());
        serde_json::json!({
            "content": [{"type": "text", "text": self.text()}],
            "isError": true,
            "_meta": meta,
        })
    }

    /// The `data` of a JSON-RPC error made from this failure (used for unknown tools, which the
    /// specification wants as protocol errors).
    pub fn to_error_data(&self) -> serde_json::Value {
        serde_json::json!({ ERROR_META_KEY: self.meta(), "hint": self.hint })
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
    fn error_result_keeps_server_meta_and_puts_the_hint_last() {
        let mut error = ToolError::new(ErrorKind::NotFound, Source::Upstream, "No such user.");
        error.tool = Some("get_user".into());
        error.hint = Some("Call `list_users` to see the ids that exist.".into());
        let mut server_meta = serde_json::Map::new();
        server_meta.insert("vendor/trace".into(), "abc".into());
        let result = error.to_call_result(Some(server_meta));
        assert_eq!(result["isError"], true);
        assert_eq!(
            result["content"][0]["text"],
            "No such user.\nHint: Call `list_users` to see the ids that exist."
        );
        assert_eq!(result["_meta"]["vendor/trace"], "abc");
        let meta = &result["_meta"][ERROR_META_KEY];
        assert_eq!(meta["kind"], "not_found");
        assert_eq!(meta["expected"], true);
        assert_eq!(meta["source"], "upstream");
        assert!(result.get("structuredContent").is_none());
    }

    #[test]
    fn integers_are_told_apart_from_numbers() {
        assert_eq!(json_type_name(&serde_json::json!(3)), "integer");
        assert_eq!(json_type_name(&serde_json::json!(3.5)), "number");
        assert_eq!(json_type_name(&serde_json::json!("x")), "string");
    }
}
