//! The upstream MCP server the benchmark talks to: single-threaded, std only, answering from
//! precomputed bytes where it can, so that whatever sits in front of it is what gets measured.
//!
//! It offers `echo` and `add` (plus filler tools of realistic size when asked for a large
//! catalog) and rejects bad `add` arguments itself, the way a real server does, so a call the
//! gateway lets through still gets a sensible answer.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::borrow::Cow;
use std::io::{self, BufRead, BufReader, BufWriter, Write};

const PROTOCOL_VERSION: &str = "2025-11-25";
const IO_BUFFER_BYTES: usize = 64 * 1024;

#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct InitializeParams {
    #[serde(rename = "protocolVersion")]
    protocol_version: Option<String>,
}

/// Serves MCP on stdin/stdout until stdin ends. `tool_count` is the catalog size (at least the
/// two real tools).
pub fn serve(tool_count: usize) -> io::Result<()> {
    let tools_result = serde_json::to_string(&json!({ "tools": catalog(tool_count) }))
        .map_err(io::Error::other)?;
    let mut input = BufReader::with_capacity(IO_BUFFER_BYTES, crate::stdio::stdin_file()?);
    let mut output = BufWriter::with_capacity(IO_BUFFER_BYTES, crate::stdio::stdout_file()?);
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if let Some(answer) = answer(&line, &tools_result) {
            output.write_all(answer.as_bytes())?;
            output.write_all(b"\n")?;
        }
        // One flush per burst: answers to pipelined requests leave in one write.
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()
}

/// The answer line for one incoming line, `None` for notifications and responses.
fn answer(line: &[u8], tools_result: &str) -> Option<String> {
    let message: Incoming<'_> = match serde_json::from_slice(line) {
        Ok(message) => message,
        Err(_) => {
            return Some(
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#
                    .to_owned(),
            );
        }
    };
    let id = message.id?.get();
    let method = message.method?;
    let params = message.params.map(RawValue::get);
    let body = match method.as_ref() {
        "initialize" => {
            let requested = params
                .and_then(|params| serde_json::from_str::<InitializeParams>(params).ok())
                .and_then(|params| params.protocol_version)
                .unwrap_or_else(|| PROTOCOL_VERSION.to_owned());
            let result = json!({
                "protocolVersion": requested,
                "capabilities": {"tools": {"listChanged": false}},
                "serverInfo": {"name": "bench-upstream", "version": env!("CARGO_PKG_VERSION")},
            });
            format!(r#""result":{result}"#)
        }
        "tools/list" => format!(r#""result":{tools_result}"#),
        "tools/call" => call(params),
        "ping" => r#""result":{}"#.to_owned(),
        _ => r#""error":{"code":-32601,"message":"Method not found"}"#.to_owned(),
    };
    Some(format!(r#"{{"jsonrpc":"2.0","id":{id},{body}}}"#))
}

fn call(params: Option<&str>) -> String {
    let Some(call) = params.and_then(|params| serde_json::from_str::<CallParams<'_>>(params).ok())
    else {
        return r#""error":{"code":-32602,"message":"Invalid params: a tools/call needs a name"}"#
            .to_owned();
    };
    let arguments = call.arguments.unwrap_or(Value::Null);
    match call.name.as_ref() {
        "echo" => match arguments.get("text").and_then(Value::as_str) {
            Some(text) => text_result(text, false),
            None => text_result("Invalid arguments: `text` must be a string.", true),
        },
        "add" => match (
            arguments.get("a").and_then(Value::as_i64),
            arguments.get("b").and_then(Value::as_i64),
        ) {
            (Some(a), Some(b)) => text_result(&a.saturating_add(b).to_string(), false),
            _ => text_result("Invalid arguments: `a` and `b` must be integers.", true),
        },
        name if name.starts_with("tool_") => text_result("done", false),
        _ => r#""error":{"code":-32602,"message":"Unknown tool"}"#.to_owned(),
    }
}

fn text_result(text: &str, is_error: bool) -> String {
    let result = json!({"content": [{"type": "text", "text": text}], "isError": is_error});
    format!(r#""result":{result}"#)
}

/// `echo` and `add`, then filler tools shaped like those of real servers (a paragraph of
/// description, a handful of documented parameters, an enum, required fields) up to `count`.
pub fn catalog(count: usize) -> Vec<Value> {
    let mut tools = vec![
        json!({
            "name": "echo",
            "description": "Returns the text it is given.",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The text to return."}},
                "required": ["text"],
                "additionalProperties": false
            }
        }),
        json!({
            "name": "add",
            "description": "Adds two integers and returns the sum.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "a": {"type": "integer", "description": "The first addend."},
                    "b": {"type": "integer", "description": "The second addend."}
                },
                "required": ["a", "b"],
                "additionalProperties": false
            }
        }),
    ];
    tools.extend((tools.len()..count).map(filler_tool));
    tools
}

const SUBJECTS: [&str; 6] = [
    "issues in a project tracker",
    "files in the workspace",
    "rows of a database table",
    "messages in a channel",
    "calendar events",
    "deployments of a service",
];

const VERBS: [&str; 5] = ["Lists", "Searches", "Updates", "Archives", "Summarises"];

fn filler_tool(index: usize) -> Value {
    let subject = SUBJECTS[index % SUBJECTS.len()];
    let verb = VERBS[index % VERBS.len()];
    let description = format!(
        "{verb} {subject}. Results are returned newest first and paginated; pass the cursor \
         from the previous page to continue. Filters combine with AND. Dates are ISO 8601 in \
         UTC. The call is read-only unless `apply` is true, in which case the change is \
         recorded in the audit log with the caller's identity. Large result sets are \
         truncated to `limit` entries; narrow the query rather than raising the limit. \
         Returns an error when the scope does not exist or the caller lacks access to it."
    );
    json!({
        "name": format!("tool_{index:04}"),
        "title": format!("{verb} {subject} ({index})"),
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {
                "scope": {"type": "string", "description": "The project, folder or channel to work in, by its identifier."},
                "query": {"type": "string", "description": "Free text matched against titles and bodies; quotes keep phrases together."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50, "description": "Most entries returned in one page."},
                "cursor": {"type": "string", "description": "The cursor from the previous page, to continue a listing."},
                "order": {"type": "string", "enum": ["newest", "oldest", "relevance"], "description": "Sort order of the results."},
                "apply": {"type": "boolean", "default": false, "description": "Make the change instead of describing what would change."}
            },
            "required": ["scope"],
            "additionalProperties": false
        },
        "annotations": {"readOnlyHint": false, "idempotentHint": true}
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer_value(line: &str) -> Value {
        let tools = serde_json::to_string(&json!({"tools": catalog(2)})).unwrap();
        serde_json::from_str(&answer(line.as_bytes(), &tools).unwrap()).unwrap()
    }

    #[test]
    fn adds_valid_integers() {
        let got = answer_value(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#,
        );
        assert_eq!(got["id"], 7);
        assert_eq!(got["result"]["content"][0]["text"], "5");
        assert_eq!(got["result"]["isError"], false);
    }

    #[test]
    fn rejects_wrong_types_without_echoing_them() {
        let got = answer_value(
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"add","arguments":{"a":"seven","b":3}}}"#,
        );
        assert_eq!(got["id"], "x");
        assert_eq!(got["result"]["isError"], true);
        assert!(!got.to_string().contains("seven"));
    }

    #[test]
    fn notifications_get_no_answer() {
        let tools = String::new();
        assert!(
            answer(
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                &tools
            )
            .is_none()
        );
    }

    #[test]
    fn initialize_echoes_the_requested_version() {
        let got = answer_value(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        );
        assert_eq!(got["result"]["protocolVersion"], "2025-06-18");
    }

    #[test]
    fn large_catalogs_have_realistic_tools() {
        let tools = catalog(500);
        assert_eq!(tools.len(), 500);
        let bytes = serde_json::to_string(&tools).unwrap().len();
        assert!(bytes / 500 > 1000, "{bytes} bytes for 500 tools");
        let names: std::collections::HashSet<_> =
            tools.iter().map(|tool| tool["name"].to_string()).collect();
        assert_eq!(names.len(), 500);
    }
}
