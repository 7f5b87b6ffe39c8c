//! Drives the real `toolwarden demo-server` binary over its stdin/stdout.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Long enough for a loaded machine, short enough that a hang fails the suite instead of stalling it.
const READ_TIMEOUT: Duration = Duration::from_secs(15);

struct Demo {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Messages read while waiting for something else (notifications, server requests).
    backlog: VecDeque<Value>,
    next_id: u64,
}

impl Demo {
    fn start(extra_args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolwarden"))
            .arg("demo-server")
            .args(extra_args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the binary starts");
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Demo {
            stdin: child.stdin.take(),
            child,
            lines,
            backlog: VecDeque::new(),
            next_id: 0,
        }
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        self.send_raw(&line);
    }

    fn read(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(READ_TIMEOUT)
            .expect("the server answers in time");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not a JSON line: {line}"))
    }

    /// The next message that satisfies `wanted`; everything else goes to the backlog.
    fn read_until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(at) = self.backlog.iter().position(&wanted) {
            return self.backlog.remove(at).unwrap();
        }
        loop {
            let message = self.read();
            if wanted(&message) {
                return message;
            }
            self.backlog.push_back(message);
        }
    }

    fn response_to(&mut self, id: &Value) -> Value {
        let id = id.clone();
        self.read_until(move |m| m["id"] == id && m.get("method").is_none())
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = json!(self.next_id);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response_to(&id)
    }

    fn initialize(&mut self, capabilities: Value) -> Value {
        let response = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": {"name": "demo-test", "version": "1.0"}
            }),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        response
    }

    fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// Closes stdin and waits for the process to exit.
    fn finish(mut self) -> (ExitStatus, Vec<Value>) {
        self.stdin = None;
        let status = self.wait_exit();
        let mut rest: Vec<Value> = self.backlog.drain(..).collect();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(200)) {
            rest.push(serde_json::from_str(&line).unwrap());
        }
        (status, rest)
    }

    fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + READ_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {response}"))
}

fn is_error(response: &Value) -> bool {
    response["result"]["isError"] == json!(true)
}

fn all_tools(demo: &mut Demo, meta: Option<Value>) -> (Vec<Value>, usize) {
    let mut tools = Vec::new();
    let mut pages = 0;
    let mut cursor: Option<String> = None;
    loop {
        let mut params = json!({});
        if let Some(cursor) = &cursor {
            params["cursor"] = json!(cursor);
        }
        if let Some(meta) = &meta {
            params["_meta"] = meta.clone();
        }
        let response = demo.request("tools/list", params);
        pages += 1;
        tools.extend(
            response["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .cloned(),
        );
        match response["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return (tools, pages),
        }
    }
}

fn names(tools: &[Value]) -> Vec<&str> {
    tools.iter().filter_map(|t| t["name"].as_str()).collect()
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "demo-test", "version": "1.0"}
    })
}

#[test]
fn legacy_handshake_and_paginated_catalog() {
    let mut demo = Demo::start(&[]);
    let init = demo.initialize(json!({}));
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["result"]["serverInfo"]["name"], "toolwarden-demo");
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true);
    let old = demo.request(
        "initialize",
        json!({"protocolVersion": "2024-11-05", "capabilities": {}}),
    );
    assert_eq!(old["result"]["protocolVersion"], "2024-11-05");
    let future = demo.request(
        "initialize",
        json!({"protocolVersion": "2099-01-01", "capabilities": {}}),
    );
    assert_eq!(future["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(demo.request("ping", json!({}))["result"], json!({}));

    let (tools, pages) = all_tools(&mut demo, None);
    assert_eq!(tools.len(), 13);
    assert_eq!(pages, 3);
    let listed = names(&tools);
    for name in [
        "echo",
        "add",
        "divide",
        "search_docs",
        "set_config",
        "sync_cache",
        "list_users",
        "get_user",
        "get_weather",
        "read_log",
        "slow_task",
        "send_email",
        "list_roots",
    ] {
        assert!(listed.contains(&name), "{name} is listed");
    }
    assert!(!listed.contains(&"send_note") && !listed.contains(&"crash"));

    let bad_cursor = demo.request("tools/list", json!({"cursor": "not-a-cursor"}));
    assert_eq!(bad_cursor["error"]["code"], -32602);
    let set_level = demo.request("logging/setLevel", json!({"level": "warning"}));
    assert_eq!(set_level["result"], json!({}));
    assert_eq!(
        demo.request("resources/list", json!({}))["error"]["code"],
        -32601
    );

    let (status, rest) = demo.finish();
    assert!(status.success());
    assert!(rest.is_empty(), "unexpected messages: {rest:?}");
}

#[test]
fn page_size_is_configurable() {
    let mut demo = Demo::start(&["--page-size", "50"]);
    demo.initialize(json!({}));
    let (tools, pages) = all_tools(&mut demo, None);
    assert_eq!((tools.len(), pages), (13, 1));
}

#[test]
fn tools_misbehave_as_documented() {
    let mut demo = Demo::start(&["--large-bytes", "200000"]);
    demo.initialize(json!({}));

    let echo = demo.call("echo", json!({"text": "hello"}));
    assert_eq!(text(&echo), "hello");
    assert!(!is_error(&echo));

    let sum = demo.call("add", json!({"a": 2, "b": 3}));
    assert_eq!(text(&sum), "5");
    assert_eq!(sum["result"]["structuredContent"], json!({"sum": 5}));
    let bad_add = demo.call("add", json!({"a": "ghp_notreallyasecret", "b": 3}));
    assert!(is_error(&bad_add));
    assert!(text(&bad_add).starts_with("MCP error -32602: Invalid arguments for tool add: ["));
    assert!(text(&bad_add).contains("\"received\": \"ghp_notreallyasecret\""));

    let bad_divide = demo.call("divide", json!({"a": "abc", "b": 2}));
    assert_eq!(bad_divide["error"]["code"], -32603);
    assert_eq!(
        bad_divide["error"]["message"],
        "Internal error: invalid type: string \"abc\", expected f64"
    );
    let by_zero = demo.call("divide", json!({"a": 1, "b": 0}));
    assert_eq!(
        by_zero["error"]["message"],
        "Internal error: division by zero"
    );
    assert_eq!(text(&demo.call("divide", json!({"a": 7, "b": 2}))), "3.5");

    let leaked = demo.call(
        "search_docs",
        json!({"query": "refunds", "api_key": "sk-live-9f8e7d6c", "limit": 5}),
    );
    assert!(is_error(&leaked));
    assert_eq!(
        text(&leaked),
        "Search for 'refunds' failed: upstream returned 401 Unauthorized for key sk-live-9f8e7d6c"
    );
    let found = demo.call(
        "search_docs",
        json!({"query": "refunds", "api_key": "demo-123"}),
    );
    assert!(!is_error(&found) && text(&found).contains("Getting started"));

    let config = demo.call(
        "set_config",
        json!({"kye": "theme", "vaule": "dark", "wait_for_previous": true}),
    );
    assert!(!is_error(&config));
    assert_eq!(text(&config), "Setting theme updated to default.");

    let sync = demo.call("sync_cache", json!({}));
    assert!(is_error(&sync));
    assert_eq!(text(&sync), "");

    assert!(text(&demo.call("list_users", json!({}))).contains("u-1001"));
    let user = demo.call("get_user", json!({"user_id": "u-1003"}));
    assert!(text(&user).contains("Alan Turing"));
    let missing = demo.call("get_user", json!({"user_id": "u-4242"}));
    assert!(is_error(&missing));
    assert_eq!(
        text(&missing),
        "Error executing tool get_user: User 'u-4242' not found"
    );

    let weather = demo.call("get_weather", json!({"city": "Porto"}));
    assert!(!is_error(&weather));
    assert_eq!(
        weather["result"]["structuredContent"],
        json!({"temperature": "warm", "unit": "kelvin"})
    );

    let log = demo.call("read_log", json!({}));
    let log_text = text(&log);
    assert!(log_text.len() <= 200_000 && log_text.len() > 199_000);
    assert!(log_text.ends_with("\nEND OF LOG"));

    let mail = demo.call(
        "send_email",
        json!({"to": "a@b.c", "subject": "s", "body": "b"}),
    );
    assert!(is_error(&mail));
    assert_eq!(
        text(&mail),
        "429 Too Many Requests: rate limit exceeded, retry after 30 seconds"
    );

    let unknown = demo.call("delete_everything_now", json!({}));
    assert_eq!(unknown["error"]["code"], -32602);
    assert_eq!(
        unknown["error"]["message"],
        "Unknown tool: delete_everything_now"
    );

    let (status, _) = demo.finish();
    assert!(status.success());
}

#[test]
fn slow_calls_do_not_block_others_and_can_be_cancelled() {
    let mut demo = Demo::start(&[]);
    demo.initialize(json!({}));
    demo.send(
        &json!({"jsonrpc": "2.0", "id": "slow", "method": "tools/call",
        "params": {"name": "slow_task", "arguments": {"ms": 1500}, "_meta": {"progressToken": 8}}}),
    );
    demo.send(
        &json!({"jsonrpc": "2.0", "id": "quick", "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "first"}}}),
    );
    let first = demo.read_until(|m| m.get("id").is_some());
    assert_eq!(first["id"], "quick");
    let slow = demo.response_to(&json!("slow"));
    assert!(text(&slow).contains("1500 ms"));
    let progress = demo.read_until(|m| m["method"] == "notifications/progress");
    assert_eq!(progress["params"]["progressToken"], 8);
    assert_eq!(progress["params"]["total"], 1500);

    demo.send(&json!({"jsonrpc": "2.0", "id": 77, "method": "tools/call",
        "params": {"name": "slow_task", "arguments": {"ms": 60000}}}));
    demo.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 77, "reason": "no longer needed"}}),
    );
    assert_eq!(demo.request("ping", json!({}))["result"], json!({}));
    let started = Instant::now();
    let (status, rest) = demo.finish();
    assert!(status.success());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a cancelled call held the exit"
    );
    assert!(
        !rest.iter().any(|m| m["id"] == 77),
        "a cancelled call was answered"
    );
}

#[test]
fn modern_era_is_stateless_and_marks_results() {
    let mut demo = Demo::start(&[]);
    let discover = demo.request("server/discover", json!({"_meta": modern_meta()}));
    let result = &discover["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "toolwarden-demo"
    );
    assert!(result["ttlMs"].is_u64());

    let (tools, _) = all_tools(&mut demo, Some(modern_meta()));
    assert_eq!(tools.len(), 13);
    let listing = demo.request("tools/list", json!({"_meta": modern_meta()}));
    assert_eq!(listing["result"]["resultType"], "complete");
    assert_eq!(listing["result"]["cacheScope"], "public");

    let call = demo.request(
        "tools/call",
        json!({"name": "get_user", "arguments": {"user_id": "nobody"}, "_meta": modern_meta()}),
    );
    assert_eq!(call["result"]["resultType"], "complete");
    assert!(is_error(&call));

    let no_caps = demo.request(
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
    );
    assert_eq!(no_caps["error"]["code"], -32602);
    let mut unsupported_meta = modern_meta();
    unsupported_meta["io.modelcontextprotocol/protocolVersion"] = json!("2031-02-03");
    let unsupported = demo.request("tools/list", json!({"_meta": unsupported_meta}));
    assert_eq!(unsupported["error"]["code"], -32022);
    assert_eq!(
        unsupported["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "2031-02-03"})
    );
    assert_eq!(
        demo.request("ping", json!({"_meta": modern_meta()}))["error"]["code"],
        -32601
    );

    let (status, rest) = demo.finish();
    assert!(status.success());
    assert!(rest.is_empty(), "unexpected messages: {rest:?}");
}

#[test]
fn malformed_lines_get_errors_and_the_server_keeps_going() {
    let mut demo = Demo::start(&[]);
    demo.send_raw(b"this is not json\n");
    let parse = demo.read();
    assert_eq!(parse["error"]["code"], -32700);
    assert_eq!(parse["id"], Value::Null);

    demo.send_raw(b"\xff\xfe{}\n");
    assert_eq!(demo.read()["error"]["code"], -32700);

    demo.send_raw(b"\n   \n[1, 2]\n");
    let batch = demo.read();
    assert_eq!(batch["error"]["code"], -32600);
    assert_eq!(batch["id"], Value::Null);

    demo.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":5}\n");
    let no_method = demo.read();
    assert_eq!(no_method["error"]["code"], -32600);
    assert_eq!(no_method["id"], 5);

    demo.send_raw(b"{\"jsonrpc\":\"1.0\",\"id\":6,\"method\":\"ping\"}\n");
    assert_eq!(demo.read()["error"]["code"], -32600);

    demo.send(&json!({"jsonrpc": "2.0", "method": "notifications/whatever"}));
    demo.send(&json!({"jsonrpc": "2.0", "id": "demo-srv-99", "result": {}}));
    assert_eq!(demo.request("ping", json!({}))["result"], json!({}));

    let (status, rest) = demo.finish();
    assert!(status.success());
    assert!(rest.is_empty(), "unexpected messages: {rest:?}");
}

#[test]
fn eof_alone_exits_cleanly() {
    let demo = Demo::start(&[]);
    let (status, rest) = demo.finish();
    assert_eq!(status.code(), Some(0));
    assert!(rest.is_empty());
}

#[test]
fn list_roots_round_trips_through_the_client() {
    let mut demo = Demo::start(&[]);
    demo.initialize(json!({"roots": {"listChanged": true}}));
    demo.send(
        &json!({"jsonrpc": "2.0", "id": 40, "method": "tools/call", "params": {
            "name": "list_roots", "arguments": {}, "_meta": {"progressToken": "tok-1"}
        }}),
    );
    let ask = demo.read_until(|m| m["method"] == "roots/list");
    let ask_id = ask["id"].clone();
    assert!(
        ask_id
            .as_str()
            .is_some_and(|id| id.starts_with("demo-srv-"))
    );
    demo.send(&json!({"jsonrpc": "2.0", "id": ask_id, "result": {
        "roots": [{"uri": "file:///home/me/project", "name": "project"}, {"uri": "file:///tmp"}]
    }}));
    let answer = demo.response_to(&json!(40));
    assert!(!is_error(&answer));
    assert!(text(&answer).contains("file:///home/me/project (project)"));
    assert!(text(&answer).contains("file:///tmp"));
    let log = demo.read_until(|m| m["method"] == "notifications/message");
    assert_eq!(log["params"]["level"], "info");
    let progress = demo.read_until(|m| m["method"] == "notifications/progress");
    assert_eq!(progress["params"]["progressToken"], "tok-1");

    demo.send(&json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"name": "list_roots"}}));
    let ask = demo.read_until(|m| m["method"] == "roots/list");
    demo.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "error": {"code": -32601, "message": "roots not supported"}}));
    let refused = demo.response_to(&json!(41));
    assert!(is_error(&refused));
    assert!(text(&refused).contains("roots not supported"));

    // A roots request left unanswered fails the call once input ends, and the server still exits.
    demo.send(&json!({"jsonrpc": "2.0", "id": 42, "method": "tools/call", "params": {"name": "list_roots"}}));
    demo.read_until(|m| m["method"] == "roots/list");
    let (status, rest) = demo.finish();
    assert!(status.success());
    let unanswered = rest
        .iter()
        .find(|m| m["id"] == 42)
        .expect("the pending call is answered");
    assert!(is_error(unanswered));
}

#[test]
fn poisoned_catalog_carries_hidden_instructions() {
    let mut demo = Demo::start(&["--poisoned", "--page-size", "100"]);
    demo.initialize(json!({}));
    let (tools, _) = all_tools(&mut demo, None);
    let note = tools
        .iter()
        .find(|t| t["name"] == "send_note")
        .expect("send_note is listed");
    let description = note["description"].as_str().unwrap();
    assert!(description.contains("<IMPORTANT>"));
    assert!(description.contains("~/.ssh/id_rsa"));
    assert!(description.contains('\u{200B}'));
    let saved = demo.call("send_note", json!({"note": "hi", "sidenote": "x"}));
    assert_eq!(text(&saved), "Note saved.");
}

#[test]
fn crash_tool_kills_the_server_without_an_answer() {
    let mut demo = Demo::start(&["--crash-tool"]);
    demo.initialize(json!({}));
    let (tools, _) = all_tools(&mut demo, None);
    assert!(names(&tools).contains(&"crash"));
    demo.send(
        &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "crash"}}),
    );
    let status = demo.wait_exit();
    assert_eq!(status.code(), Some(3));
    while let Ok(line) = demo.lines.recv_timeout(Duration::from_millis(200)) {
        let message: Value = serde_json::from_str(&line).unwrap();
        assert_ne!(message["id"], 9, "the crash was answered");
    }
}

#[test]
fn catalog_changes_after_the_configured_calls() {
    let mut demo = Demo::start(&["--list-changed-after", "2", "--page-size", "100"]);
    demo.initialize(json!({}));
    demo.call("echo", json!({"text": "one"}));
    let (before, _) = all_tools(&mut demo, None);
    assert!(!names(&before).contains(&"extra_tool"));
    demo.call("echo", json!({"text": "two"}));
    demo.read_until(|m| m["method"] == "notifications/tools/list_changed");
    let (after, _) = all_tools(&mut demo, None);
    assert!(names(&after).contains(&"extra_tool"));
    assert!(!is_error(&demo.call("extra_tool", json!({}))));
}
