//! What each self-contained tool does, including the ways it misbehaves on purpose.
//!
//! Tools that need the connection (waiting, asking the client) live in `server.rs`.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::jsonrpc::{INTERNAL_ERROR, RpcError};

/// How a tool call ends: a `CallToolResult`, or a JSON-RPC error as some servers send.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Result(Value),
    Error(RpcError),
}

pub fn text_result(text: impl Into<String>, is_error: bool) -> Outcome {
    let mut result = json!({"content": [{"type": "text", "text": text.into()}]});
    if is_error && let Some(object) = result.as_object_mut() {
        object.insert("isError".to_owned(), Value::Bool(true));
    }
    Outcome::Result(result)
}

const USERS: [(&str, &str); 3] = [
    ("u-1001", "Ada Lovelace"),
    ("u-1002", "Grace Hopper"),
    ("u-1003", "Alan Turing"),
];

/// Runs a tool that needs nothing but its arguments; `None` when the name is not one of them.
pub fn call_plain(name: &str, args: &Map<String, Value>, large_bytes: usize) -> Option<Outcome> {
    let outcome = match name {
        "echo" => echo(args),
        "add" => add(args),
        "divide" => divide(args),
        "search_docs" => search_docs(args),
        "set_config" => set_config(args),
        // A real failure mode: the server flags an error and says nothing about it.
        "sync_cache" => text_result("", true),
        "list_users" => list_users(),
        "get_user" => get_user(args),
        "get_weather" => get_weather(args),
        "read_log" => text_result(log_text(large_bytes), false),
        "send_email" => text_result(
            "429 Too Many Requests: rate limit exceeded, retry after 30 seconds",
            true,
        ),
        "send_note" => text_result("Note saved.", false),
        "fetch_remote_schema" | "cyclic_schema" => {
            text_result(format!("Received {} arguments.", args.len()), false)
        }
        "extra_tool" => text_result("The extra tool is here since the catalog changed.", false),
        _ => return None,
    };
    Some(outcome)
}

fn string_arg<'a>(args: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

fn echo(args: &Map<String, Value>) -> Outcome {
    match string_arg(args, "text") {
        Some(text) => text_result(text, false),
        None => text_result(
            "Invalid arguments: `text` is required and must be a string.",
            true,
        ),
    }
}

/// Mirrors the TypeScript SDK: input validation fails inside the tool handler and comes back as
/// an error result whose text is a protocol error code followed by zod's issue list.
fn add(args: &Map<String, Value>) -> Outcome {
    let mut issues = Vec::new();
    let mut operands = Vec::new();
    for key in ["a", "b"] {
        match args.get(key) {
            Some(value) => match value.as_i64() {
                Some(number) => operands.push(number),
                None => issues.push(json!({
                    "code": "invalid_type",
                    "expected": "integer",
                    "received": value,
                    "path": [key],
                    "message": format!("Expected integer, received {}", zod_type_name(value)),
                })),
            },
            None => issues.push(json!({
                "code": "invalid_type",
                "expected": "integer",
                "received": "undefined",
                "path": [key],
                "message": "Required",
            })),
        }
    }
    if !issues.is_empty() {
        let listing = serde_json::to_string_pretty(&issues).unwrap_or_default();
        return text_result(
            format!("MCP error -32602: Invalid arguments for tool add: {listing}"),
            true,
        );
    }
    let sum = operands
        .iter()
        .try_fold(0_i64, |sum, n| sum.checked_add(*n));
    match sum {
        Some(sum) => Outcome::Result(json!({
            "content": [{"type": "text", "text": sum.to_string()}],
            "structuredContent": {"sum": sum}
        })),
        None => text_result("The sum does not fit in a 64-bit integer.", true),
    }
}

fn zod_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(number) if number.is_f64() => "float",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[derive(Deserialize)]
struct DivideArgs {
    a: f64,
    b: f64,
}

/// Mirrors a Rust server that lets serde's message escape as an internal error.
fn divide(args: &Map<String, Value>) -> Outcome {
    let parsed = serde_json::from_value::<DivideArgs>(Value::Object(args.clone()));
    match parsed {
        Err(error) => Outcome::Error(RpcError::new(
            INTERNAL_ERROR,
            format!("Internal error: {error}"),
        )),
        Ok(DivideArgs { a, b }) => {
            if b == 0.0 {
                Outcome::Error(RpcError::new(
                    INTERNAL_ERROR,
                    "Internal error: division by zero",
                ))
            } else {
                text_result((a / b).to_string(), false)
            }
        }
    }
}

/// Mirrors a server that pastes the upstream failure, secret included, into its error text.
fn search_docs(args: &Map<String, Value>) -> Outcome {
    let query = string_arg(args, "query").unwrap_or_default();
    let api_key = string_arg(args, "api_key").unwrap_or_default();
    if !api_key.starts_with("demo-") {
        return text_result(
            format!(
                "Search for '{query}' failed: upstream returned 401 Unauthorized for key {api_key}"
            ),
            true,
        );
    }
    let limit = match args.get("limit") {
        None => 3,
        Some(limit) => match limit.as_u64().filter(|n| (1..=50).contains(n)) {
            Some(limit) => limit,
            None => return text_result("`limit` must be an integer from 1 to 50.", true),
        },
    };
    let pages = [
        ("Getting started", "/docs/getting-started"),
        ("Configuration reference", "/docs/configuration"),
        ("Troubleshooting", "/docs/troubleshooting"),
    ];
    let lines: Vec<String> = pages
        .iter()
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .enumerate()
        .map(|(rank, (title, path))| format!("{}. {title} ({path})", rank + 1))
        .collect();
    text_result(lines.join("\n"), false)
}

/// Mirrors a careless destructive tool: unknown and missing arguments never stop it.
fn set_config(args: &Map<String, Value>) -> Outcome {
    let key = string_arg(args, "key").unwrap_or("theme");
    let value = string_arg(args, "value").unwrap_or("default");
    text_result(format!("Setting {key} updated to {value}."), false)
}

fn list_users() -> Outcome {
    let lines: Vec<String> = USERS
        .iter()
        .map(|(id, name)| format!("{id}: {name}"))
        .collect();
    text_result(lines.join("\n"), false)
}

fn get_user(args: &Map<String, Value>) -> Outcome {
    let user_id = string_arg(args, "user_id").unwrap_or_default();
    match USERS.iter().find(|(id, _)| *id == user_id) {
        Some((id, name)) => text_result(json!({"id": id, "name": name}).to_string(), false),
        None => text_result(
            format!("Error executing tool get_user: User '{user_id}' not found"),
            true,
        ),
    }
}

/// Mirrors a server whose structured output drifted away from its declared output schema.
fn get_weather(args: &Map<String, Value>) -> Outcome {
    let city = string_arg(args, "city").unwrap_or("the city");
    Outcome::Result(json!({
        "content": [{"type": "text", "text": format!("It is warm in {city}.")}],
        "structuredContent": {"temperature": "warm", "unit": "kelvin"}
    }))
}

pub const LOG_END: &str = "END OF LOG";

/// About `bytes` bytes of plausible log lines (never more), ending with `END OF LOG`.
pub fn log_text(bytes: usize) -> String {
    let budget = bytes.saturating_sub(LOG_END.len());
    let mut text = String::with_capacity(bytes);
    let mut line_number = 0_u64;
    loop {
        let line = format!(
            "2026-11-02T10:{:02}:{:02}.{:03}Z INFO worker-{} processed batch {:06} in {} ms\n",
            (line_number / 60) % 60,
            line_number % 60,
            line_number % 1000,
            line_number % 8,
            line_number,
            3 + line_number % 17,
        );
        if text.len() + line.len() > budget {
            break;
        }
        text.push_str(&line);
        line_number += 1;
    }
    text.push_str(LOG_END);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    fn call(name: &str, value: Value) -> Outcome {
        call_plain(name, &args(value), 4096).unwrap()
    }

    fn text_of(outcome: &Outcome) -> (String, bool) {
        let Outcome::Result(result) = outcome else {
            panic!("expected a result, got {outcome:?}");
        };
        (
            result["content"][0]["text"].as_str().unwrap().to_owned(),
            result["isError"] == json!(true),
        )
    }

    #[test]
    fn add_sums_valid_input_with_structured_content() {
        let outcome = call("add", json!({"a": 2, "b": 40}));
        assert_eq!(text_of(&outcome), ("42".to_owned(), false));
        let Outcome::Result(result) = outcome else {
            unreachable!()
        };
        assert_eq!(result["structuredContent"], json!({"sum": 42}));
    }

    #[test]
    fn add_reports_bad_input_like_the_typescript_sdk() {
        let (text, is_error) = text_of(&call("add", json!({"a": "ghp_secret", "c": 1})));
        assert!(is_error);
        let listing = text
            .strip_prefix("MCP error -32602: Invalid arguments for tool add: ")
            .unwrap();
        let issues: Value = serde_json::from_str(listing).unwrap();
        assert_eq!(issues[0]["received"], "ghp_secret");
        assert_eq!(issues[0]["path"], json!(["a"]));
        assert_eq!(issues[1]["path"], json!(["b"]));
        assert_eq!(issues[1]["message"], "Required");
        let (text, is_error) = text_of(&call("add", json!({"a": 1.5, "b": 1})));
        assert!(is_error && text.contains("received float"));
    }

    #[test]
    fn divide_leaks_serde_messages_as_internal_errors() {
        assert_eq!(
            call("divide", json!({"a": "abc", "b": 1})),
            Outcome::Error(RpcError::new(
                INTERNAL_ERROR,
                "Internal error: invalid type: string \"abc\", expected f64"
            ))
        );
        assert_eq!(
            call("divide", json!({"a": 1, "b": 0})),
            Outcome::Error(RpcError::new(
                INTERNAL_ERROR,
                "Internal error: division by zero"
            ))
        );
        assert_eq!(text_of(&call("divide", json!({"a": 9, "b": 4}))).0, "2.25");
    }

    #[test]
    fn search_docs_echoes_the_key_unless_it_is_a_demo_key() {
        let (text, is_error) = text_of(&call(
            "search_docs",
            json!({"query": "billing", "api_key": "sk-live-1234"}),
        ));
        assert!(is_error);
        assert_eq!(
            text,
            "Search for 'billing' failed: upstream returned 401 Unauthorized for key sk-live-1234"
        );
        let (text, is_error) = text_of(&call(
            "search_docs",
            json!({"query": "billing", "api_key": "demo-key", "limit": 2}),
        ));
        assert!(!is_error);
        assert_eq!(text.lines().count(), 2);
        let (_, is_error) = text_of(&call(
            "search_docs",
            json!({"query": "x", "api_key": "demo-key", "limit": 99}),
        ));
        assert!(is_error);
    }

    #[test]
    fn set_config_swallows_unknown_and_missing_arguments() {
        let (text, is_error) =
            text_of(&call("set_config", json!({"kye": "theme", "valu": "dark"})));
        assert!(!is_error);
        assert_eq!(text, "Setting theme updated to default.");
    }

    #[test]
    fn sync_cache_fails_with_an_empty_message() {
        assert_eq!(
            text_of(&call("sync_cache", json!({}))),
            (String::new(), true)
        );
    }

    #[test]
    fn users_are_found_by_id_and_unknown_ids_are_echoed() {
        assert!(
            text_of(&call("list_users", json!({})))
                .0
                .contains("u-1003: Alan Turing")
        );
        let (text, is_error) = text_of(&call("get_user", json!({"user_id": "u-1002"})));
        assert!(!is_error && text.contains("Grace Hopper"));
        let (text, is_error) = text_of(&call("get_user", json!({"user_id": "u-9999"})));
        assert!(is_error);
        assert_eq!(
            text,
            "Error executing tool get_user: User 'u-9999' not found"
        );
    }

    #[test]
    fn get_weather_breaks_its_own_output_schema() {
        let Outcome::Result(result) = call("get_weather", json!({"city": "Lisbon"})) else {
            panic!("expected a result");
        };
        assert_eq!(
            result["structuredContent"],
            json!({"temperature": "warm", "unit": "kelvin"})
        );
        assert!(result.get("isError").is_none());
    }

    #[test]
    fn the_log_fills_its_budget_and_ends_with_the_marker() {
        for bytes in [0, 10, 200, 65_536] {
            let log = log_text(bytes);
            assert!(log.ends_with(LOG_END));
            assert!(log.len() <= bytes.max(LOG_END.len()));
            assert!(log.len() + 100 > bytes, "{} for {bytes}", log.len());
        }
    }

    #[test]
    fn send_email_is_rate_limited_and_unknown_names_are_not_handled_here() {
        let (text, is_error) = text_of(&call("send_email", json!({})));
        assert!(is_error && text.starts_with("429 Too Many Requests"));
        assert!(call_plain("slow_task", &Map::new(), 0).is_none());
    }
}
