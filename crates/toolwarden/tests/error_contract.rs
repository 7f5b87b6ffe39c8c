//! The error contract (DESIGN.md 1.1) through the real binary in front of the demo server:
//! the exact text and `_meta` a model receives for each kind of failure.

mod support;

use serde_json::{Value, json};
use support::Peer;

const MARKER: &str = "ghp_Zx81TqLm0pVw7RkY2nB5cJ4hD6fG9sA3eU1i";

fn gateway_with(config: &str) -> (Peer, tempdir::Dir) {
    let dir = tempdir::Dir::new("contract");
    let path = dir.write("toolwarden.toml", config);
    let mut gateway = Peer::gateway_demo(&["--config", &path], &[]);
    gateway.initialize("gemini-cli-mcp-client");
    gateway.list_tools();
    (gateway, dir)
}

fn result_of(response: &Value) -> &Value {
    response.get("result").unwrap_or(response)
}

#[test]
fn invalid_arguments_are_answered_by_the_warden_with_every_field() {
    let (mut gateway, _dir) = gateway_with("");
    let response = gateway.call(1, "add", json!({"a": MARKER, "wait_for_previous": true}));
    insta::assert_json_snapshot!("invalid_arguments", response);
    assert!(!response.to_string().contains(MARKER));
}

#[test]
fn a_misspelt_parameter_gets_a_did_you_mean() {
    let (mut gateway, _dir) = gateway_with("");
    let response = gateway.call(2, "echo", json!({"txt": "hello world"}));
    insta::assert_json_snapshot!("unknown_key_did_you_mean", response);
}

#[test]
fn unknown_tools_are_protocol_errors_that_never_echo_the_name() {
    let (mut gateway, _dir) = gateway_with("");
    let response = gateway.call(3, "get_usr", json!({}));
    insta::assert_json_snapshot!("unknown_tool_protocol_error", response);
    let response = gateway.call(4, "exfiltrate_everything_now", json!({}));
    assert!(!response.to_string().contains("exfiltrate"));
}

#[test]
fn unknown_tools_can_be_error_results_by_policy() {
    let (mut gateway, _dir) = gateway_with("[errors]\nunknown_tool = \"error_result\"\n");
    let response = gateway.call(5, "get_usr", json!({}));
    insta::assert_json_snapshot!("unknown_tool_error_result", response);
}

#[test]
fn an_internal_error_that_echoes_a_value_becomes_a_clean_error_result() {
    // With validation off for `divide`, its own -32603 "Internal error: ..." reaches us.
    let (mut gateway, _dir) = gateway_with("[errors.tools.divide]\nvalidate_arguments = false\n");
    let response = gateway.call(6, "divide", json!({"a": MARKER, "b": 2}));
    insta::assert_json_snapshot!("internal_error_echo", response);
    assert!(!response.to_string().contains(MARKER));
    let response = gateway.call(7, "divide", json!({"a": 1, "b": 0}));
    insta::assert_json_snapshot!("internal_error_plain", response);
}

#[test]
fn upstream_error_results_are_cleaned_scrubbed_classified_and_hinted() {
    let (mut gateway, _dir) = gateway_with("");
    let secret = "sk-proj-Q2w3E4r5T6y7U8i9O0pAsDfGhJkL";
    let response = gateway.call(
        8,
        "search_docs",
        json!({"query": "quarterly revenue forecast", "api_key": secret, "limit": 5}),
    );
    insta::assert_json_snapshot!("permission_denied_echo_and_secret", response);
    assert!(!response.to_string().contains(secret));
    assert!(!response.to_string().contains("quarterly revenue"));

    let response = gateway.call(9, "get_user", json!({"user_id": "u-4242"}));
    insta::assert_json_snapshot!("not_found_with_discovery_hint", response);

    let response = gateway.call(10, "sync_cache", json!({}));
    insta::assert_json_snapshot!("empty_message", response);

    let response = gateway.call(
        11,
        "send_email",
        json!({"to": "ops@example.com", "subject": "Weekly report", "body": "All good."}),
    );
    insta::assert_json_snapshot!("rate_limited", response);
}

#[test]
fn non_conforming_structured_content_becomes_output_invalid() {
    let (mut gateway, _dir) = gateway_with("");
    let response = gateway.call(12, "get_weather", json!({"city": "Lyon"}));
    insta::assert_json_snapshot!("output_invalid", response);
    assert!(result_of(&response).get("structuredContent").is_none());
}

#[test]
fn oversized_results_are_cut_keeping_head_and_tail() {
    let (mut gateway, _dir) = gateway_with("[errors]\nmax_result_bytes = 4096\n");
    let response = gateway.call(13, "read_log", json!({}));
    let text = result_of(&response)["content"][0]["text"].as_str().unwrap();
    assert!(text.len() <= 4096, "{}", text.len());
    assert!(text.starts_with("2026-11-02T10:00:00.000Z"));
    assert!(text.trim_end().ends_with("END OF LOG"), "the tail survives");
    assert!(
        text.contains("toolwarden cut"),
        "a marker says what was cut"
    );
    assert!(result_of(&response).get("isError").is_none());
}

#[test]
fn a_hanging_call_times_out_and_the_gateway_keeps_serving() {
    let (mut gateway, _dir) = gateway_with("[errors]\ncall_timeout_ms = 300\n");
    let started = std::time::Instant::now();
    let response = gateway.call(16, "slow_task", json!({"ms": 20000}));
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let meta = &result_of(&response)["_meta"]["toolwarden/error"];
    assert_eq!(meta["kind"], "timeout", "{response}");
    assert_eq!(meta["tool"], "slow_task");
    let response = gateway.call(17, "echo", json!({"text": "next"}));
    assert_eq!(result_of(&response)["content"][0]["text"], "next");
}

#[test]
fn strip_policy_forwards_without_the_unknown_keys_and_says_so() {
    let (mut gateway, _dir) = gateway_with("[errors.tools.echo]\nunknown_arguments = \"strip\"\n");
    let response = gateway.call(
        14,
        "echo",
        json!({"text": "kept", "wait_for_previous": true}),
    );
    let result = result_of(&response);
    assert_eq!(result["content"][0]["text"], "kept");
    assert_eq!(
        result["_meta"]["toolwarden/stripped_arguments"],
        json!(["/wait_for_previous"])
    );
}

#[test]
fn modern_requests_get_results_shaped_for_their_era() {
    let (mut gateway, _dir) = gateway_with("");
    let response = gateway.request(json!({"jsonrpc":"2.0","id":15,"method":"tools/call","params":{
        "name":"add","arguments":{"a":1},
        "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},
                 "io.modelcontextprotocol/clientInfo":{"name":"gemini-cli-mcp-client","version":"2"}}}}));
    assert_eq!(response["result"]["resultType"], "complete");
    assert_eq!(
        response["result"]["_meta"]["toolwarden/error"]["kind"],
        "invalid_arguments"
    );
}

#[test]
fn every_failure_is_one_log_line_at_the_right_level_without_values() {
    let dir = tempdir::Dir::new("logs");
    let path = dir.write("toolwarden.toml", "");
    let mut gateway = Peer::gateway_demo(&["--log-format", "json", "--config", &path], &[]);
    gateway.initialize("gemini-cli-mcp-client");
    gateway.list_tools();
    gateway.call(1, "add", json!({"a": MARKER}));
    gateway.call(2, "get_weather", json!({"city": "Oslo"}));
    gateway.call(3, "echo", json!({"text": MARKER}));
    gateway.close_stdin();
    gateway.wait();
    let logs = gateway.stderr_text();
    assert!(!logs.contains(MARKER), "{logs}");
    let lines: Vec<Value> = logs
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .filter(|line: &Value| line["message"] == "tool call failed")
        .collect();
    assert_eq!(lines.len(), 2, "{logs}");
    assert_eq!(lines[0]["level"], "WARN");
    assert_eq!(lines[0]["kind"], "invalid_arguments");
    assert_eq!(lines[0]["tool"], "add");
    assert_eq!(lines[0]["client"], "gemini-cli-mcp-client");
    assert_eq!(lines[1]["level"], "ERROR");
    assert_eq!(lines[1]["kind"], "output_invalid");
    assert!(lines[1]["latency_ms"].as_f64().is_some());
}

mod tempdir {
    pub struct Dir(std::path::PathBuf);

    impl Dir {
        pub fn new(name: &str) -> Dir {
            use std::sync::atomic::{AtomicU32, Ordering};
            static NEXT: AtomicU32 = AtomicU32::new(0);
            let path = std::env::temp_dir().join(format!(
                "toolwarden-{name}-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&path).unwrap();
            Dir(path)
        }

        pub fn write(&self, file: &str, text: &str) -> String {
            let path = self.0.join(file);
            std::fs::write(&path, text).unwrap();
            path.to_string_lossy().into_owned()
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A schema the gateway cannot use (a remote `$ref`, never fetched; a reference cycle) is an
/// operator fault, logged once; calls to that tool go on unvalidated instead of being refused.
#[test]
fn unusable_schemas_are_logged_once_and_their_calls_forwarded() {
    let mut gateway = Peer::gateway_demo(&[], &["--bad-schemas"]);
    gateway.initialize("schema-faults");
    gateway.list_tools();
    gateway.list_tools();
    for (id, tool) in [(1, "fetch_remote_schema"), (2, "cyclic_schema")] {
        let response = gateway.call(id, tool, json!({"anything": 1, "goes": 2}));
        assert_eq!(
            result_of(&response)["content"][0]["text"],
            "Received 2 arguments.",
            "{response}"
        );
    }
    let response = gateway.call(3, "add", json!({"a": "x", "b": 1}));
    assert_eq!(
        result_of(&response)["_meta"]["toolwarden/error"]["kind"],
        "invalid_arguments"
    );
    gateway.close_stdin();
    gateway.wait();
    let logs = gateway.stderr_text();
    let remote = logs
        .lines()
        .filter(|line| line.contains("fetch_remote_schema"))
        .count();
    assert_eq!(remote, 1, "logged once across two listings: {logs}");
    assert!(logs.contains("ERROR"), "{logs}");
}
