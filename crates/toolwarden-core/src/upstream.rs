//! Reshaping a server's own failures into the error contract (DESIGN.md 1.1): a protocol error
//! or an `isError` result from the server leaves here with a clean message (no stacked
//! "Internal error: " prefixes, never empty), the caller's values replaced by field references,
//! secrets masked, a kind from the taxonomy and a hint for the next action on the last line.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

use crate::classify::{Classification, classify};
use crate::contract::{ERROR_META_KEY, ErrorKind, Source, ToolError};
use crate::redact::{CallerValues, scrub};

/// The call a failure answers, as far as reshaping needs it.
#[derive(Debug, Clone, Copy)]
pub struct UpstreamCall<'a> {
    /// The tool's name; it is a known tool (unknown tools never reach the server).
    pub tool: &'a str,
    /// The call's `arguments`, whose values must not be echoed.
    pub arguments: Option<&'a Value>,
    /// The server's discovery tools (`list_users`, `search_repos`, ...) from its catalog.
    pub discovery_tools: &'a [String],
    /// Policy trusts this server to repeat the caller's values; secrets are masked anyway.
    pub trust_echoes: bool,
}

impl UpstreamCall<'_> {
    fn scrub_text(&self, caller: &CallerValues, text: &str) -> String {
        scrub(text, caller, self.trust_echoes).into_owned()
    }
}

/// Prefixes that wrap a message without adding to it: SDKs and frameworks stack them
/// ("McpError: MCP error -32603: Internal error: Error: disk full").
static MANGLING_PREFIX: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)\A\s*(?:internal error|mcp error[ \t]*-?[0-9]+|error (?:executing|calling|running|invoking) tool[ \t]+[`'"]?[^\s:`'"]*[`'"]?|tool execution failed|tool call failed|mcperror|error)[ \t]*:\s*"#,
    )
    .ok()
});

/// Whole messages that say only that something failed.
static CONTENTLESS_MESSAGE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\A\s*(?:internal error|unknown error|error|undefined|null|none|\[object object\]|an? (?:unknown |internal )?error (?:has )?occurred|mcp error(?:[ \t]*-?[0-9]+)?)[.!]?\s*\z",
    )
    .ok()
});

/// The message without its wrapping prefixes, trimmed; empty when nothing was said.
pub fn clean_message(message: &str) -> &str {
    let mut rest = message.trim();
    if let Some(prefix) = MANGLING_PREFIX.as_ref() {
        while let Some(found) = prefix.find(rest) {
            rest = rest.get(found.end()..).unwrap_or_default();
        }
    }
    let rest = rest.trim();
    let says_nothing = CONTENTLESS_MESSAGE
        .as_ref()
        .is_some_and(|regex| regex.is_match(rest));
    if says_nothing { "" } else { rest }
}

/// A JSON-RPC error the server answered a `tools/call` with, as a tool error. `data` is used
/// only for its `message`/`details` text, and only when the message itself says nothing.
pub fn reshape_protocol_error(
    call: &UpstreamCall<'_>,
    code: i64,
    message: &str,
    data: Option<&Value>,
) -> ToolError {
    let cleaned = Some(clean_message(message))
        .filter(|text| !text.is_empty())
        .or_else(|| data.and_then(data_text).map(clean_message))
        .filter(|text| !text.is_empty());
    let classification = classify(Some(code), cleaned.unwrap_or_default());
    let message = match cleaned {
        Some(text) => {
            let caller = CallerValues::from_arguments(call.arguments);
            call.scrub_text(&caller, text)
        }
        None => silent_failure_sentence(call.tool, classification.kind),
    };
    let mut error = tool_error(call, &classification, message);
    error.upstream_code = Some(code);
    error
}

fn data_text(data: &Value) -> Option<&str> {
    match data {
        Value::String(text) => Some(text),
        Value::Object(members) => ["message", "details"]
            .iter()
            .find_map(|key| members.get(*key).and_then(Value::as_str)),
        _ => None,
    }
}

/// A `CallToolResult` with `isError: true` from the server, reshaped: text items cleaned and
/// scrubbed (emptied ones dropped, the hint appended to the last), non-text items kept (the
/// text of embedded resources scrubbed), `structuredContent` dropped, the server's `_meta`
/// kept with its strings scrubbed and our key added, other fields kept. Returns the new result
/// and the error for the log line.
pub fn reshape_error_result(call: &UpstreamCall<'_>, result: &Value) -> (Value, ToolError) {
    let caller = CallerValues::from_arguments(call.arguments);
    let empty = Map::new();
    let fields = result.as_object().unwrap_or(&empty);

    let mut content = Vec::new();
    let mut cleaned_texts = Vec::new();
    let mut scrubbed_texts = Vec::new();
    let mut last_text_item = None;
    let items = fields.get("content").and_then(Value::as_array);
    for item in items.into_iter().flatten() {
        let mut item = item.clone();
        let item_type = item.get("type").and_then(Value::as_str).map(str::to_owned);
        match item_type.as_deref() {
            Some("text") => {
                let cleaned = clean_message(item.get("text").and_then(Value::as_str).unwrap_or(""));
                if cleaned.is_empty() {
                    continue;
                }
                let scrubbed = call.scrub_text(&caller, cleaned);
                cleaned_texts.push(cleaned.to_owned());
                item["text"] = Value::String(scrubbed.clone());
                scrubbed_texts.push(scrubbed);
                last_text_item = Some(content.len());
            }
            Some("resource") => {
                if let Some(Value::String(text)) = item
                    .get_mut("resource")
                    .and_then(|resource| resource.get_mut("text"))
                {
                    *text = call.scrub_text(&caller, text);
                }
            }
            _ => {}
        }
        content.push(item);
    }

    let classification = classify(None, &cleaned_texts.join("\n"));
    let message = if scrubbed_texts.is_empty() {
        let sentence = silent_failure_sentence(call.tool, classification.kind);
        last_text_item = Some(content.len());
        content.push(serde_json::json!({"type": "text", "text": sentence}));
        sentence
    } else {
        scrubbed_texts.join("\n")
    };
    let error = tool_error(call, &classification, message);

    if let Some(Some(Value::String(text))) =
        last_text_item.map(|index| content.get_mut(index).and_then(|item| item.get_mut("text")))
        && let Some(hint) = &error.hint
    {
        text.push_str("\nHint: ");
        text.push_str(hint);
    }

    let mut reshaped = Map::new();
    for (key, value) in fields {
        match key.as_str() {
            "content" | "isError" | "structuredContent" | "_meta" => {}
            // A protocol field whose value clients parse; it is never a caller value.
            "resultType" => {
                reshaped.insert(key.clone(), value.clone());
            }
            _ => {
                reshaped.insert(key.clone(), scrub_strings(value, call, &caller));
            }
        }
    }
    let mut meta = match fields.get("_meta") {
        Some(Value::Object(server_meta)) => server_meta
            .iter()
            .map(|(key, value)| (key.clone(), scrub_strings(value, call, &caller)))
            .collect(),
        _ => Map::new(),
    };
    meta.insert(ERROR_META_KEY.to_owned(), error.meta());
    reshaped.insert("content".into(), Value::Array(content));
    reshaped.insert("isError".into(), Value::Bool(true));
    reshaped.insert("_meta".into(), Value::Object(meta));
    (Value::Object(reshaped), error)
}

/// Strings at any depth scrubbed; keys, numbers and structure kept.
fn scrub_strings(value: &Value, call: &UpstreamCall<'_>, caller: &CallerValues) -> Value {
    match value {
        Value::String(text) => Value::String(call.scrub_text(caller, text)),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| scrub_strings(item, call, caller))
                .collect(),
        ),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(key, member)| (key.clone(), scrub_strings(member, call, caller)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn tool_error(
    call: &UpstreamCall<'_>,
    classification: &Classification,
    message: String,
) -> ToolError {
    let mut error = ToolError::new(classification.kind, Source::Upstream, message);
    error.tool = Some(call.tool.to_owned());
    error.retry_after_ms = classification.retry_after_ms;
    error.http_status = classification.http_status;
    error.hint = Some(hint(call, classification));
    error
}

fn silent_failure_sentence(tool: &str, kind: ErrorKind) -> String {
    format!("`{tool}` failed without an error message ({kind}).")
}

fn hint(call: &UpstreamCall<'_>, classification: &Classification) -> String {
    let tool = call.tool;
    match classification.kind {
        ErrorKind::NotFound => {
            let discovery = related_discovery_tools(tool, call.discovery_tools);
            if discovery.is_empty() {
                "Check that the value exists (a list or search tool of this server can show \
                 what does), then retry with an existing value."
                    .to_owned()
            } else {
                let names: Vec<String> = discovery.iter().map(|name| format!("`{name}`")).collect();
                format!(
                    "Call {} to see what exists, then retry with an existing value.",
                    names.join(" or ")
                )
            }
        }
        ErrorKind::RateLimited => match classification.retry_after_ms {
            Some(wait) => format!(
                "Wait {} before calling `{tool}` again.",
                human_duration(wait)
            ),
            None => format!(
                "Wait before calling `{tool}` again: the server is limiting how often it may be called."
            ),
        },
        ErrorKind::PermissionDenied => "Different arguments will not fix this: ask the user to \
             grant access or to check the server's credentials."
            .to_owned(),
        ErrorKind::InvalidArguments => format!(
            "Fix the arguments named in the message to match the input schema of `{tool}`, then call it again."
        ),
        ErrorKind::Timeout => "The call may have taken effect anyway: check before retrying, or \
             retry with a smaller request."
            .to_owned(),
        ErrorKind::UpstreamUnavailable => format!(
            "The service behind `{tool}` is unreachable: retry later, and tell the user if it persists."
        ),
        ErrorKind::UpstreamError
        | ErrorKind::Internal
        | ErrorKind::OutputInvalid
        | ErrorKind::PolicyDenied
        | ErrorKind::UnknownTool => "This is likely a fault in the server, not in the arguments: \
             do not retry the same call blindly; tell the user if it persists."
            .to_owned(),
    }
}

/// At most three discovery tools: only those sharing a noun with the failing tool when there
/// are any (`get_user` -> `list_users`, not `list_repos`), else the catalog's first ones.
fn related_discovery_tools<'d>(tool: &str, discovery_tools: &'d [String]) -> Vec<&'d str> {
    const VERBS: &[&str] = &[
        "get", "create", "update", "delete", "set", "add", "remove", "read", "write", "fetch",
        "run", "edit", "move", "list", "search", "find",
    ];
    let nouns = |name: &str| -> Vec<String> {
        name.split(['_', '-', '.'])
            .map(str::to_ascii_lowercase)
            .filter(|word| !word.is_empty() && !VERBS.contains(&word.as_str()))
            .map(|word| singular(&word).to_owned())
            .collect()
    };
    let wanted = nouns(tool);
    let mut ranked: Vec<(usize, &str)> = discovery_tools
        .iter()
        .map(|name| {
            let shared = nouns(name)
                .iter()
                .filter(|noun| wanted.contains(noun))
                .count();
            (shared, name.as_str())
        })
        .collect();
    // Stable: equally related tools keep the catalog's order.
    ranked.sort_by_key(|(shared, _)| std::cmp::Reverse(*shared));
    let any_related = ranked.first().is_some_and(|(shared, _)| *shared > 0);
    ranked
        .into_iter()
        .filter(|(shared, _)| !any_related || *shared > 0)
        .take(3)
        .map(|(_, name)| name)
        .collect()
}

fn singular(word: &str) -> &str {
    word.strip_suffix("ies")
        .or_else(|| {
            word.strip_suffix("es")
                .filter(|stem| stem.ends_with(['s', 'x', 'h']))
        })
        .or_else(|| word.strip_suffix('s').filter(|stem| !stem.ends_with('s')))
        .unwrap_or(word)
}

fn human_duration(milliseconds: u64) -> String {
    if milliseconds < 1_000 {
        return format!("{milliseconds} ms");
    }
    let tenths = milliseconds.div_ceil(100);
    if tenths.is_multiple_of(10) {
        format!("{} s", tenths / 10)
    } else {
        format!("{}.{} s", tenths / 10, tenths % 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call<'a>(tool: &'a str, arguments: &'a Value, discovery: &'a [String]) -> UpstreamCall<'a> {
        UpstreamCall {
            tool,
            arguments: Some(arguments),
            discovery_tools: discovery,
            trust_echoes: false,
        }
    }

    #[test]
    fn stacked_prefixes_are_stripped() {
        for (mangled, clean) in [
            ("Internal error: disk full", "disk full"),
            ("MCP error -32602: Invalid arguments", "Invalid arguments"),
            (
                "McpError: MCP error -32603: Internal error: Error: disk full",
                "disk full",
            ),
            (
                "Error executing tool sync_cache: cache locked",
                "cache locked",
            ),
            ("error calling tool `x`:  boom", "boom"),
            ("Tool execution failed: ERROR: boom", "boom"),
            ("TypeError: x is undefined", "TypeError: x is undefined"),
            ("Internal error", ""),
            ("MCP error -32603:", ""),
            ("  [object Object] ", ""),
            ("Error: undefined", ""),
            ("Errors: 3 rows rejected", "Errors: 3 rows rejected"),
        ] {
            assert_eq!(clean_message(mangled), clean, "{mangled}");
        }
    }

    #[test]
    fn only_discovery_tools_sharing_a_noun_are_named_when_there_are_some() {
        let discovery: Vec<String> = ["list_repos", "search_issues", "list_users", "find_user"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            related_discovery_tools("get_user", &discovery),
            ["list_users", "find_user"]
        );
        assert_eq!(
            related_discovery_tools("close_issue", &discovery),
            ["search_issues"]
        );
        assert_eq!(
            related_discovery_tools("reboot", &discovery),
            ["list_repos", "search_issues", "list_users"]
        );
        assert!(related_discovery_tools("x", &[]).is_empty());
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human_duration(250), "250 ms");
        assert_eq!(human_duration(1_500), "1.5 s");
        assert_eq!(human_duration(30_000), "30 s");
        assert_eq!(human_duration(1_001), "1.1 s");
    }

    #[test]
    fn data_message_fills_an_empty_message_and_is_scrubbed() {
        let arguments = json!({"path": "/srv/secret-plans.txt"});
        let error = reshape_protocol_error(
            &call("read_file", &arguments, &[]),
            -32603,
            "Internal error",
            Some(&json!({"message": "ENOENT: /srv/secret-plans.txt", "stack": "at x (y.js:1)"})),
        );
        assert_eq!(error.message, "ENOENT: ‹path›");
        assert_eq!(error.kind, ErrorKind::NotFound);
        assert!(!error.text().contains("y.js"));
    }

    #[test]
    fn trusted_servers_keep_echoes() {
        let arguments = json!({"query": "octocat"});
        let mut upstream = call("get_user", &arguments, &[]);
        upstream.trust_echoes = true;
        let error = reshape_protocol_error(&upstream, -32603, "octocat not found", None);
        assert_eq!(error.message, "octocat not found");
    }

    #[test]
    fn a_server_cannot_forge_our_meta_key() {
        let arguments = json!({});
        let result = json!({
            "isError": true,
            "content": [{"type": "text", "text": "boom"}],
            "_meta": {ERROR_META_KEY: {"kind": "not_found"}},
        });
        let (reshaped, _) = reshape_error_result(&call("t", &arguments, &[]), &result);
        assert_eq!(reshaped["_meta"][ERROR_META_KEY]["kind"], "upstream_error");
        assert_eq!(reshaped["_meta"][ERROR_META_KEY]["source"], "upstream");
    }

    #[test]
    fn non_object_results_get_the_silent_failure_sentence() {
        let arguments = json!({});
        let (reshaped, error) =
            reshape_error_result(&call("sync_cache", &arguments, &[]), &json!(null));
        assert_eq!(reshaped["isError"], true);
        assert_eq!(
            error.message,
            "`sync_cache` failed without an error message (upstream_error)."
        );
        assert!(reshaped["content"][0]["text"].as_str().unwrap().ends_with(
            "\nHint: This is likely a fault in the server, not in the arguments: do not retry the same call blindly; tell the user if it persists."
        ));
    }

    #[test]
    fn every_pattern_compiles() {
        assert!(MANGLING_PREFIX.is_some() && CONTENTLESS_MESSAGE.is_some());
    }

    fn snapshot_of_protocol_error(error: &ToolError) -> Value {
        error.to_call_result(None)
    }

    #[test]
    fn golden_internal_error_prefix_cleaned() {
        let arguments = json!({"key": "session-cache"});
        let error = reshape_protocol_error(
            &call("sync_cache", &arguments, &[]),
            -32603,
            "Internal error: Internal error: cache backend crashed while compacting",
            None,
        );
        insta::assert_json_snapshot!(snapshot_of_protocol_error(&error));
    }

    #[test]
    fn golden_mcp_error_32602_cleaned() {
        let arguments = json!({"a": "seven", "b": 2});
        let error = reshape_protocol_error(
            &call("add", &arguments, &[]),
            -32602,
            "MCP error -32602: Expected number, received string at a: seven",
            None,
        );
        insta::assert_json_snapshot!(snapshot_of_protocol_error(&error));
    }

    #[test]
    fn golden_empty_message() {
        let arguments = json!({});
        let error = reshape_protocol_error(&call("sync_cache", &arguments, &[]), -32603, "", None);
        insta::assert_json_snapshot!(snapshot_of_protocol_error(&error));
    }

    #[test]
    fn golden_echo_with_secret() {
        let arguments = json!({
            "repo": "acme/widgets",
            "auth": {"token": "ghp_0123456789abcdefghijABCDEFGHIJ012345"},
            "items": [{"id": 31337}],
        });
        let result = json!({
            "isError": true,
            "content": [{"type": "text", "text": "Error executing tool push_items: push to acme/widgets with token ghp_0123456789abcdefghijABCDEFGHIJ012345 failed for item 31337; server key sk-proj-ZZZZyyyyXXXXwwwwVVVVuuuu rejected"}],
            "structuredContent": {"repo": "acme/widgets"},
        });
        let (reshaped, _) = reshape_error_result(&call("push_items", &arguments, &[]), &result);
        insta::assert_json_snapshot!(reshaped);
    }

    #[test]
    fn golden_not_found_with_discovery_tools() {
        let arguments = json!({"user_id": "u-88213"});
        let discovery = vec!["list_repos".to_owned(), "list_users".to_owned()];
        let result = json!({
            "isError": true,
            "content": [{"type": "text", "text": "User u-88213 not found"}],
        });
        let (reshaped, _) =
            reshape_error_result(&call("get_user", &arguments, &discovery), &result);
        insta::assert_json_snapshot!(reshaped);
    }

    #[test]
    fn golden_rate_limit_with_retry_after() {
        let arguments = json!({"q": "weather in lisbon"});
        let error = reshape_protocol_error(
            &call("search_web", &arguments, &[]),
            -32603,
            "Error: 429 Too Many Requests: rate limit exceeded, try again in 1.5s",
            None,
        );
        insta::assert_json_snapshot!(snapshot_of_protocol_error(&error));
    }

    #[test]
    fn golden_http_503() {
        let arguments = json!({"city": "Lisbon"});
        let result = json!({
            "isError": true,
            "content": [{"type": "text", "text": "Weather API request failed with status code 503"}],
        });
        let (reshaped, _) = reshape_error_result(&call("get_forecast", &arguments, &[]), &result);
        insta::assert_json_snapshot!(reshaped);
    }

    #[test]
    fn golden_permission_denied() {
        let arguments = json!({"path": "/etc/shadow"});
        let error = reshape_protocol_error(
            &call("read_file", &arguments, &[]),
            -32603,
            "EACCES: permission denied, open '/etc/shadow'",
            None,
        );
        insta::assert_json_snapshot!(snapshot_of_protocol_error(&error));
    }

    #[test]
    fn golden_server_meta_preserved() {
        let arguments = json!({"sql": "select * from orders"});
        let result = json!({
            "isError": true,
            "resultType": "complete",
            "content": [
                {"type": "text", "text": "MCP error -32603: query failed: relation \"orders\" does not exist"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            ],
            "_meta": {"vendor.example/trace_id": "trace-7f3a", "vendor.example/echo": "select * from orders"},
            "vendorField": {"note": "kept"},
        });
        let (reshaped, _) = reshape_error_result(&call("run_query", &arguments, &[]), &result);
        insta::assert_json_snapshot!(reshaped);
    }
}
