//! What to do with a `tools/call` before it reaches the server: forward it, forward it with
//! unknown keys removed, answer it with an error result, or answer it with a protocol error.
//!
//! Every text made here is built from paths, schema-side facts, JSON type names and names the
//! server defined. Argument values and unknown tool names never enter them.

use serde_json::{Map, Value};

use crate::catalog::{Catalog, CatalogTool};
use crate::contract::{ErrorKind, FieldIssue, Problem, Source, ToolError, json_type_name};
use crate::policy::{ErrorPolicyConfig, UnknownArguments, UnknownTool};
use crate::suggest::nearest;
use crate::validate::{ArgumentCheck, UnknownKey, looks_like_secret};

/// JSON-RPC "Invalid params".
pub const INVALID_PARAMS: i64 = -32602;

/// The argument key Gemini CLI adds to calls it batches.
pub const WAIT_FOR_PREVIOUS: &str = "wait_for_previous";

/// Issues spelled out in a message; the rest are only in `fields`.
const MAX_DESCRIBED: usize = 10;

/// Enum members spelled out in a message.
const MAX_MEMBERS_SHOWN: usize = 20;

/// Most tool names suggested for an unknown tool.
const MAX_TOOL_SUGGESTIONS: usize = 3;

#[derive(Debug, Clone, PartialEq)]
pub enum CallDecision {
    /// Send the call on as it came.
    Forward,
    /// Send these arguments instead; `stripped` lists the removed keys' paths, for the
    /// result's `_meta`.
    ForwardStripped {
        arguments: Value,
        stripped: Vec<String>,
    },
    /// Answer with this error result; the server never sees the call.
    Refuse(ToolError),
    /// Answer with a JSON-RPC error.
    ProtocolError {
        code: i64,
        message: String,
        data: Value,
    },
}

/// Decides what happens to a call of `name` with `arguments` (the request's `params.arguments`,
/// `None` when absent). `client_name` is who made the call, from `clientInfo` or the request's
/// `_meta`.
pub fn decide_call(
    catalog: &Catalog,
    policy: &ErrorPolicyConfig,
    name: &str,
    arguments: Option<&Value>,
    client_name: Option<&str>,
) -> CallDecision {
    let Some(tool) = catalog.get(name) else {
        return unknown_tool(catalog, policy, name);
    };
    let empty = Value::Object(Map::new());
    let arguments = match arguments {
        None | Some(Value::Null) => &empty,
        Some(object @ Value::Object(_)) => object,
        Some(other) => return arguments_not_object(tool, other),
    };
    let effective = policy.resolve(name);
    if !effective.validate_arguments {
        return CallDecision::Forward;
    }
    let Some(validator) = tool.input_validator() else {
        return CallDecision::Forward;
    };
    let check = validator.check(arguments, effective.unknown_arguments);
    if check.is_valid() {
        return CallDecision::Forward;
    }
    if effective.unknown_arguments == UnknownArguments::Strip && check.only_unknown_keys() {
        let mut stripped_arguments = arguments.clone();
        let stripped = check.strip_unknown_keys(&mut stripped_arguments);
        // Removing keys can break other rules (`minProperties`, conditionals), so the result
        // is checked again before it goes anywhere.
        let recheck = validator.check(&stripped_arguments, effective.unknown_arguments);
        if recheck.is_valid() {
            return CallDecision::ForwardStripped {
                arguments: stripped_arguments,
                stripped,
            };
        }
        return CallDecision::Refuse(invalid_arguments(tool, &recheck, client_name));
    }
    CallDecision::Refuse(invalid_arguments(tool, &check, client_name))
}

fn unknown_tool(catalog: &Catalog, policy: &ErrorPolicyConfig, wanted: &str) -> CallDecision {
    // The wanted name is caller input: it is compared with known names, never shown.
    let close = nearest(wanted, catalog.tool_names(), MAX_TOOL_SUGGESTIONS);
    let suggestion = match close.as_slice() {
        [] => None,
        [only] => Some(format!("Did you mean `{only}`?")),
        [first @ .., last] => {
            let first: Vec<String> = first.iter().map(|name| format!("`{name}`")).collect();
            Some(format!("Did you mean {} or `{last}`?", first.join(", ")))
        }
    };
    let mut error = ToolError::new(
        ErrorKind::UnknownTool,
        Source::Warden,
        "Unknown tool: this server has no tool by that name.",
    );
    error.hint = Some(match &suggestion {
        Some(suggestion) => {
            format!("{suggestion} Otherwise call tools/list to see the tools this server offers.")
        }
        None => "Call tools/list to see the tools this server offers.".to_owned(),
    });
    error.suggestion = suggestion;
    finish_unknown_tool(error, policy)
}

fn finish_unknown_tool(error: ToolError, policy: &ErrorPolicyConfig) -> CallDecision {
    match policy.unknown_tool {
        UnknownTool::ErrorResult => CallDecision::Refuse(error),
        UnknownTool::ProtocolError => {
            let message = match &error.suggestion {
                Some(suggestion) => format!("Unknown tool. {suggestion}"),
                None => {
                    "Unknown tool. Call tools/list to see the tools this server offers.".to_owned()
                }
            };
            CallDecision::ProtocolError {
                code: INVALID_PARAMS,
                message,
                data: error.to_error_data(),
            }
        }
    }
}

fn arguments_not_object(tool: &CatalogTool, sent: &Value) -> CallDecision {
    let got = json_type_name(sent);
    let mut error = ToolError::new(
        ErrorKind::InvalidArguments,
        Source::Warden,
        format!("Invalid params: arguments must be an object, got {got}."),
    );
    error.tool = Some(tool.name().to_owned());
    error.hint = Some(format!(
        "Send the arguments of `{}` as a JSON object of named parameters.",
        tool.name()
    ));
    error.fields = vec![FieldIssue {
        path: String::new(),
        problem: Problem::Type,
        expected: Some("object".to_owned()),
        allowed: None,
        got: Some(got),
    }];
    CallDecision::ProtocolError {
        code: INVALID_PARAMS,
        message: error.message.clone(),
        data: error.to_error_data(),
    }
}

/// The error result for arguments that break the tool's `inputSchema`.
pub fn invalid_arguments(
    tool: &CatalogTool,
    check: &ArgumentCheck,
    client_name: Option<&str>,
) -> ToolError {
    let name = tool.name();
    let client = client_label(client_name);
    let unknown_text = |issue: &FieldIssue| {
        let unknown = check
            .unknown_keys
            .iter()
            .find(|key| key.path == issue.path)?;
        Some(describe_unknown(name, unknown, &client))
    };
    let described = describe_issues(&check.issues, check.omitted, "the arguments", unknown_text);
    let mut error = ToolError::new(
        ErrorKind::InvalidArguments,
        Source::Warden,
        format!(
            "Invalid arguments for `{name}`: {}",
            end_sentence(described)
        ),
    );
    error.tool = Some(name.to_owned());
    error.hint = Some(hint(name, check));
    let did_you_mean: Vec<String> = check
        .unknown_keys
        .iter()
        .filter_map(|unknown| {
            let shown = unknown.shown_key.as_deref()?;
            let best = nearest(shown, unknown.known.iter().map(String::as_str), 1);
            let best = best.first()?;
            Some(format!("Did you mean `{best}` instead of `{shown}`?"))
        })
        .collect();
    if !did_you_mean.is_empty() {
        error.suggestion = Some(did_you_mean.join(" "));
    }
    error.fields = check.issues.clone();
    error
}

pub(crate) fn end_sentence(mut text: String) -> String {
    if !text.ends_with(['.', '?']) {
        text.push('.');
    }
    text
}

fn is_top_level(unknown: &UnknownKey) -> bool {
    unknown.path.matches('/').count() == 1
}

fn describe_unknown(tool: &str, unknown: &UnknownKey, client: &str) -> String {
    let path = &unknown.path;
    if is_top_level(unknown) && unknown.shown_key.as_deref() == Some(WAIT_FOR_PREVIOUS) {
        return format!(
            "`{path}` is a scheduling flag that {client} injected when batching calls, not a parameter of `{tool}`"
        );
    }
    let nearest_known = unknown
        .shown_key
        .as_deref()
        .and_then(|shown| {
            nearest(shown, unknown.known.iter().map(String::as_str), 1)
                .first()
                .map(|best| format!("; did you mean `{best}`?"))
        })
        .unwrap_or_default();
    if is_top_level(unknown) {
        format!("`{path}` is not a parameter of `{tool}`{nearest_known}")
    } else {
        format!("`{path}` is not an allowed key there{nearest_known}")
    }
}

/// The next action: what to do with each unknown key, then the rest.
fn hint(tool: &str, check: &ArgumentCheck) -> String {
    let mut actions: Vec<String> = Vec::new();
    for unknown in &check.unknown_keys {
        let action = match unknown.shown_key.as_deref() {
            Some(WAIT_FOR_PREVIOUS) if is_top_level(unknown) => {
                format!("leave out `{WAIT_FOR_PREVIOUS}`")
            }
            Some(shown) => {
                match nearest(shown, unknown.known.iter().map(String::as_str), 1).first() {
                    Some(best) => format!("use `{best}` instead of `{shown}`"),
                    None => format!("leave out `{}`", unknown.path),
                }
            }
            None => format!("leave out `{}`", unknown.path),
        };
        actions.push(action);
    }
    let others = check
        .issues
        .iter()
        .filter(|issue| issue.problem != Problem::Unknown)
        .count()
        + check.omitted;
    match (others, actions.is_empty()) {
        (0, _) => {}
        (1, true) => actions.push("fix this field".to_owned()),
        (_, true) => actions.push("fix these fields".to_owned()),
        (1, false) => actions.push("fix the other field".to_owned()),
        (_, false) => actions.push("fix the other fields".to_owned()),
    }
    let mut text = actions.join("; ");
    if let Some(first) = text.get(..1) {
        text = first.to_uppercase() + text.get(1..).unwrap_or_default();
    }
    format!("{text}, then call `{tool}` again.")
}

/// Issues in words, joined for a message: `` `/a` must be integer, got string; `/b` is
/// required``. `special` may supply the words for an issue (unknown keys name the tool).
pub fn describe_issues(
    issues: &[FieldIssue],
    omitted: usize,
    root_name: &str,
    special: impl Fn(&FieldIssue) -> Option<String>,
) -> String {
    let mut parts: Vec<String> = issues
        .iter()
        .take(MAX_DESCRIBED)
        .map(|issue| special(issue).unwrap_or_else(|| describe_issue(issue, root_name)))
        .collect();
    let more = issues.len().saturating_sub(MAX_DESCRIBED) + omitted;
    if more > 0 {
        parts.push(format!(
            "and {more} more {}",
            if more == 1 { "field" } else { "fields" }
        ));
    }
    parts.join("; ")
}

/// One issue in words. Everything in it comes from the issue, which holds no values.
pub fn describe_issue(issue: &FieldIssue, root_name: &str) -> String {
    let at = if issue.path.is_empty() {
        root_name.to_owned()
    } else {
        format!("`{}`", issue.path)
    };
    let expected = issue.expected.as_deref().unwrap_or("something else");
    let got = issue
        .got
        .map(|got| format!(", got {got}"))
        .unwrap_or_default();
    match issue.problem {
        Problem::Type | Problem::Composition => format!("{at} must be {expected}{got}"),
        Problem::Required => format!("{at} is required"),
        Problem::Unknown => format!("{at} is not an allowed key"),
        Problem::Enum => format!("{at} must be one of {}", members(issue)),
        Problem::Const => format!("{at} must be exactly {}", members(issue)),
        Problem::Format => format!("{at} must be a valid {expected} string"),
        Problem::Range => format!("{at} must be {expected}"),
        Problem::Pattern => format!("{at} must match the pattern `{expected}`"),
        Problem::Length | Problem::Count => format!("{at} must have {expected}"),
        Problem::Unique => format!("{at} must not contain duplicate items"),
        Problem::Other => match &issue.expected {
            Some(expected) => format!("{at} does not satisfy the schema (expected {expected})"),
            None => format!("{at} does not satisfy the schema"),
        },
    }
}

fn members(issue: &FieldIssue) -> String {
    let Some(allowed) = &issue.allowed else {
        return "the values the schema allows".to_owned();
    };
    let mut shown: Vec<String> = allowed
        .iter()
        .take(MAX_MEMBERS_SHOWN)
        .map(Value::to_string)
        .collect();
    if allowed.len() > MAX_MEMBERS_SHOWN {
        shown.push(format!("… ({} in all)", allowed.len()));
    }
    shown.join(", ")
}

/// Clients known by their `clientInfo.name`, shown with their product names.
const KNOWN_CLIENTS: &[(&str, &str)] = &[
    ("gemini-cli-mcp-client", "Gemini CLI"),
    ("gemini-cli", "Gemini CLI"),
];

/// Longest client name shown.
const MAX_CLIENT_CHARS: usize = 60;

/// How the client is named in a note: its product name when known, its own name otherwise,
/// "the client" when it gave none (or one that is not fit to show).
pub fn client_label(client_name: Option<&str>) -> String {
    let Some(name) = client_name.map(str::trim).filter(|name| !name.is_empty()) else {
        return "the client".to_owned();
    };
    if let Some((id, product)) = KNOWN_CLIENTS.iter().find(|(id, _)| *id == name) {
        return format!("{product} ({id})");
    }
    let printable = name.chars().all(|c| !c.is_control());
    if !printable || looks_like_secret(name) || name.chars().count() > MAX_CLIENT_CHARS {
        return "the client".to_owned();
    }
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn catalog() -> Catalog {
        Catalog::from_tools(&[
            json!({"name": "add", "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"]
            }}),
            json!({"name": "read_file", "inputSchema": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "encoding": {"enum": ["utf-8", "base64"]}},
                "required": ["path"]
            }}),
            json!({"name": "search_files", "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "pattern": "^[^*]+$"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                    "since": {"type": "string", "format": "date"},
                    "filters": {"type": "array", "items": {
                        "type": "object",
                        "properties": {"field": {"type": "string"}, "value": {"type": "string"}},
                        "required": ["field"]
                    }},
                    "owner": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
                },
                "required": ["query"]
            }}),
            json!({"name": "get_user", "inputSchema": {"type": "object",
                   "properties": {"user_id": {"type": "string"}}}}),
            json!({"name": "list_users", "inputSchema": {"type": "object", "properties": {}}}),
            json!({"name": "legacy", "inputSchema": {"type": "object",
                   "properties": {"x": {"type": "nope"}}}}),
        ])
    }

    /// A decision as the client would see it: the error result or the protocol error.
    fn render(decision: &CallDecision) -> Value {
        match decision {
            CallDecision::Forward => json!("forward"),
            CallDecision::ForwardStripped {
                arguments,
                stripped,
            } => json!({"forward_stripped": {"arguments": arguments, "stripped": stripped}}),
            CallDecision::Refuse(error) => json!({"result": error.to_call_result(None)}),
            CallDecision::ProtocolError {
                code,
                message,
                data,
            } => json!({"error": {"code": code, "message": message, "data": data}}),
        }
    }

    fn decide(name: &str, arguments: Value) -> CallDecision {
        decide_call(
            &catalog(),
            &ErrorPolicyConfig::default(),
            name,
            Some(&arguments),
            None,
        )
    }

    fn text_of(decision: &CallDecision) -> String {
        match decision {
            CallDecision::Refuse(error) => error.text(),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn valid_calls_are_forwarded() {
        assert_eq!(
            decide("add", json!({"a": 1, "b": 2})),
            CallDecision::Forward
        );
        assert_eq!(
            decide_call(
                &catalog(),
                &ErrorPolicyConfig::default(),
                "list_users",
                None,
                None
            ),
            CallDecision::Forward
        );
        assert_eq!(decide("list_users", Value::Null), CallDecision::Forward);
    }

    #[test]
    fn tools_with_broken_schemas_are_forwarded_unvalidated() {
        assert_eq!(
            decide("legacy", json!({"x": 1, "y": 2})),
            CallDecision::Forward
        );
    }

    #[test]
    fn validation_can_be_switched_off_per_tool() {
        let policy: ErrorPolicyConfig =
            toml::from_str("[tools.add]\nvalidate_arguments = false").unwrap();
        let decision = decide_call(&catalog(), &policy, "add", Some(&json!({"a": "x"})), None);
        assert_eq!(decision, CallDecision::Forward);
    }

    #[test]
    fn golden_type_and_required() {
        let decision = decide("add", json!({"a": "12345"}));
        assert_eq!(
            text_of(&decision),
            "Invalid arguments for `add`: `/b` is required; `/a` must be integer, got string.\nHint: Fix these fields, then call `add` again."
        );
        insta::assert_json_snapshot!(render(&decision));
    }

    #[test]
    fn golden_enum_lists_the_allowed_members() {
        let decision = decide(
            "read_file",
            json!({"path": "/etc/hosts", "encoding": "latin1"}),
        );
        insta::assert_json_snapshot!(render(&decision));
    }

    #[test]
    fn golden_range() {
        insta::assert_json_snapshot!(render(&decide(
            "search_files",
            json!({"query": "report", "limit": 1000})
        )));
    }

    #[test]
    fn golden_pattern() {
        insta::assert_json_snapshot!(render(&decide("search_files", json!({"query": "*.rs"}))));
    }

    #[test]
    fn golden_format() {
        insta::assert_json_snapshot!(render(&decide(
            "search_files",
            json!({"query": "report", "since": "last week"})
        )));
    }

    #[test]
    fn golden_nested_array_item_path() {
        insta::assert_json_snapshot!(render(&decide(
            "search_files",
            json!({"query": "report", "filters": [{"field": "a"}, {"field": 7, "value": "x"}, {"value": "y"}]})
        )));
    }

    #[test]
    fn golden_composition() {
        insta::assert_json_snapshot!(render(&decide(
            "search_files",
            json!({"query": "report", "owner": ["octocat"]})
        )));
    }

    #[test]
    fn golden_unknown_key_with_did_you_mean() {
        let decision = decide("read_file", json!({"pathh": "/etc/hosts"}));
        let CallDecision::Refuse(error) = &decision else {
            panic!("{decision:?}")
        };
        assert!(
            error
                .message
                .contains("`/pathh` is not a parameter of `read_file`; did you mean `path`?")
        );
        assert_eq!(
            error.suggestion.as_deref(),
            Some("Did you mean `path` instead of `pathh`?")
        );
        insta::assert_json_snapshot!(render(&decision));
    }

    #[test]
    fn golden_wait_for_previous_named_client() {
        let decision = decide_call(
            &catalog(),
            &ErrorPolicyConfig::default(),
            "read_file",
            Some(&json!({"path": "a.txt", "wait_for_previous": true})),
            Some("gemini-cli-mcp-client"),
        );
        assert!(text_of(&decision).contains("Gemini CLI (gemini-cli-mcp-client)"));
        insta::assert_json_snapshot!(render(&decision));
    }

    #[test]
    fn golden_wait_for_previous_unnamed_client() {
        let decision = decide(
            "read_file",
            json!({"path": "a.txt", "wait_for_previous": true}),
        );
        assert!(text_of(&decision).contains("the client injected"));
        insta::assert_json_snapshot!(render(&decision));
    }

    #[test]
    fn golden_unknown_tool_protocol_error() {
        let decision = decide("get_usr", json!({}));
        let rendered = render(&decision);
        assert!(!rendered.to_string().contains("get_usr\""));
        assert!(!rendered.to_string().contains("`get_usr`"));
        insta::assert_json_snapshot!(rendered);
    }

    #[test]
    fn golden_unknown_tool_error_result() {
        let policy: ErrorPolicyConfig = toml::from_str("unknown_tool = \"error_result\"").unwrap();
        let decision = decide_call(
            &catalog(),
            &policy,
            "totally_unrelated_name",
            Some(&json!({})),
            None,
        );
        insta::assert_json_snapshot!(render(&decision));
    }

    #[test]
    fn golden_strip_decision() {
        let policy: ErrorPolicyConfig =
            toml::from_str("[tools.read_file]\nunknown_arguments = \"strip\"").unwrap();
        let decision = decide_call(
            &catalog(),
            &policy,
            "read_file",
            Some(&json!({"path": "a.txt", "wait_for_previous": true})),
            None,
        );
        insta::assert_json_snapshot!(render(&decision));
        // Strip never hides real problems.
        let still_refused = decide_call(
            &catalog(),
            &policy,
            "read_file",
            Some(&json!({"wait_for_previous": true})),
            None,
        );
        assert!(matches!(still_refused, CallDecision::Refuse(_)));
    }

    #[test]
    fn golden_arguments_not_object() {
        let decision = decide("add", json!("a=1&b=2"));
        let CallDecision::ProtocolError { code, .. } = &decision else {
            panic!("{decision:?}")
        };
        assert_eq!(*code, INVALID_PARAMS);
        insta::assert_json_snapshot!(render(&decision));
    }

    #[test]
    fn unknown_names_and_secret_keys_are_never_shown() {
        let decision = decide("ghp_abcdefghijklmnopqrstuvwxyz0123456789", json!({"x": 1}));
        assert!(!render(&decision).to_string().contains("ghp_"));
        let decision = decide(
            "add",
            json!({"a": 1, "b": 2, "sk-proj-abcdef0123456789": "sk-proj-abcdef0123456789"}),
        );
        let rendered = render(&decision).to_string();
        assert!(!rendered.contains("sk-proj"), "{rendered}");
        assert!(rendered.contains("‹masked key›"));
    }

    #[test]
    fn client_labels() {
        assert_eq!(client_label(None), "the client");
        assert_eq!(client_label(Some("  ")), "the client");
        assert_eq!(
            client_label(Some("gemini-cli-mcp-client")),
            "Gemini CLI (gemini-cli-mcp-client)"
        );
        assert_eq!(client_label(Some("claude-ai")), "claude-ai");
        assert_eq!(client_label(Some("bad\u{1b}[31m")), "the client");
    }
}
