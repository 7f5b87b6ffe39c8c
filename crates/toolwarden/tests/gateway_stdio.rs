//! The stdio gateway, end to end: the real binary in front of real child processes.

mod support;

use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::{Peer, alive, exe};

/// `cat` as the server sends every line straight back, so whatever the client sent comes back
/// through the gateway twice (up, then down as a message "from the server"): any change the
/// gateway made shows.
#[test]
fn untouched_lines_pass_byte_for_byte_in_both_directions() {
    let mut gateway = Peer::gateway(&[], &["cat"]);
    let lines: [&[u8]; 6] = [
        br#"{ "jsonrpc" : "2.0" , "id" : 1 , "method" : "resources/read", "params" : {"uri":"file:///tmp/x", "z":1, "a":[1.50, 2e3]} }"#,
        br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":0.5,"total":1}}"#,
        "{\"jsonrpc\":\"2.0\",\"id\":\"\u{e9}\u{8a9e}\",\"method\":\"sampling/createMessage\",\"params\":{\"text\":\"caf\u{e9} \\u00e9 \\\" \\n\"}}".as_bytes(),
        br#"{"jsonrpc":"2.0","id":"srv-9","result":{"roots":[{"uri":"file:///home","name":"home"}],"extra":{"kept":null}}}"#,
        br#"{"jsonrpc":"2.0","id":42,"error":{"code":-32001,"message":"client refused","data":{"why":"x"}}}"#,
        br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"deep":{"deeper":[{}]}}}}"#,
    ];
    for line in lines {
        let mut framed = line.to_vec();
        framed.push(b'\n');
        gateway.send_raw(&framed);
        assert_eq!(
            gateway.recv_bytes(),
            line,
            "{}",
            String::from_utf8_lossy(line)
        );
    }
    gateway.close_stdin();
    assert!(gateway.wait().success());
}

/// The same conversation with the demo server, directly and through the gateway, gives the
/// same bytes: handshake, every page of tools/list, well-behaved calls, ping.
#[test]
fn a_demo_session_is_identical_directly_and_through_the_gateway() {
    let script = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello \u00e9"}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    ];
    let run = |mut peer: Peer| -> Vec<Vec<u8>> {
        let mut answers = Vec::new();
        for line in script {
            peer.send(line);
            if line.contains("\"id\"") {
                answers.push(peer.recv_bytes());
            }
        }
        answers
    };
    let direct = run(Peer::demo(&[]));
    let through = run(Peer::gateway_demo(&[], &[]));
    assert_eq!(direct.len(), 6);
    for (direct, through) in direct.iter().zip(&through) {
        assert_eq!(
            String::from_utf8_lossy(direct),
            String::from_utf8_lossy(through)
        );
    }
}

#[test]
fn the_gateways_own_requests_never_collide_with_the_clients_ids() {
    let mut gateway = Peer::gateway_demo(&[], &[]);
    gateway.initialize("collider");
    // A call before any tools/list makes the gateway fetch the catalog itself; the client
    // uses the ids the gateway would pick, and must see only its own answers, once each.
    let mut expected = Vec::new();
    for n in 1..=3 {
        let id = format!("toolwarden-{n}");
        gateway.send_json(&json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"echo","arguments":{"text":format!("call {n}")}}}));
        expected.push(id);
    }
    let mut seen = Vec::new();
    for _ in 0..3 {
        let answer = gateway.recv();
        assert!(answer.get("result").is_some(), "{answer}");
        let id = answer["id"].as_str().unwrap().to_owned();
        let n = id.trim_start_matches("toolwarden-");
        assert_eq!(answer["result"]["content"][0]["text"], format!("call {n}"));
        seen.push(id);
    }
    seen.sort();
    assert_eq!(seen, expected);
    gateway.expect_silence(Duration::from_millis(300));
}

#[test]
fn a_server_crash_answers_every_waiting_request_once_and_exits_with_its_status() {
    let mut gateway = Peer::gateway_demo(&[], &["--crash-tool"]);
    gateway.initialize("crash-test");
    gateway.list_tools();
    gateway.send(r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"slow_task","arguments":{"ms":10000}}}"#);
    gateway.send(r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"crash","arguments":{}}}"#);
    let mut answers: Vec<Value> = vec![gateway.recv(), gateway.recv()];
    answers.sort_by_key(|answer| answer["id"].as_i64());
    for (answer, id) in answers.iter().zip([10, 11]) {
        assert_eq!(answer["id"], id);
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        assert_eq!(
            answer["result"]["_meta"]["toolwarden/error"]["kind"],
            "upstream_unavailable"
        );
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("exit status 3"), "{text}");
    }
    gateway.expect_silence(Duration::from_millis(200));
    assert_eq!(gateway.wait().code(), Some(3));
}

#[test]
fn bad_lines_get_clear_errors_and_the_gateway_keeps_serving() {
    let config = std::env::temp_dir().join(format!("toolwarden-limit-{}.toml", std::process::id()));
    std::fs::write(&config, "[gateway]\nmax_line_bytes = 4096\n").unwrap();
    let mut gateway = Peer::gateway_demo(&["--config", config.to_str().unwrap()], &[]);
    gateway.initialize("bad-input");

    gateway.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list""#);
    let answer = gateway.recv();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(1), json!(-32700))
    );

    gateway.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"x\":\"\xc3\x28\"}\n");
    let answer = gateway.recv();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(2), json!(-32700))
    );

    gateway.send(r#"{"id":3,"method":"ping"}"#);
    assert_eq!(gateway.recv()["error"]["code"], -32600);
    gateway.send(r#"[]"#);
    gateway.send(r#"{"jsonrpc":"2.0","id":4,"method":["ping"]}"#);
    assert_eq!(gateway.recv()["error"]["code"], -32600);

    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{}"}}}}}}"#,
        "x".repeat(100_000)
    );
    gateway.send(&huge);
    let answer = gateway.recv();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(5), json!(-32600))
    );
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("over the limit of 4096 bytes")
    );

    gateway.send("total garbage without id");
    gateway.send_raw(b"\xff\xfe\xfd\n");
    let answer = gateway.request(json!({"jsonrpc":"2.0","id":6,"method":"ping"}));
    assert_eq!(answer, json!({"jsonrpc":"2.0","id":6,"result":{}}));
    let warnings = gateway.stderr_text();
    assert!(warnings.contains("could not be answered"), "{warnings}");
    let _ = std::fs::remove_file(config);
}

#[test]
fn a_batch_is_answered_as_one_array() {
    let mut gateway = Peer::gateway_demo(&[], &[]);
    gateway.initialize("batcher");
    gateway.list_tools();
    gateway.send(r#"[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}},{"jsonrpc":"2.0","method":"notifications/initialized"}]"#);
    let answer = gateway.recv();
    let answers = answer.as_array().expect("a batch answer");
    assert_eq!(answers.len(), 2);
    let mut ids: Vec<&str> = answers.iter().map(|a| a["id"].as_str().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, ["a", "b"]);
}

#[test]
fn server_to_client_requests_and_notifications_pass_through() {
    let mut gateway = Peer::gateway_demo(&[], &[]);
    gateway.initialize("roots-client");
    gateway.list_tools();
    gateway.send(r#"{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"list_roots","arguments":{},"_meta":{"progressToken":"p1"}}}"#);
    let mut saw_progress = false;
    let mut saw_log = false;
    loop {
        let message = gateway.recv();
        match message["method"].as_str() {
            Some("roots/list") => {
                let id = message["id"].clone();
                gateway.send_json(&json!({"jsonrpc":"2.0","id":id,"result":{"roots":[{"uri":"file:///work/project","name":"project"}]}}));
            }
            Some("notifications/progress") => saw_progress = true,
            Some("notifications/message") => saw_log = true,
            Some(other) => panic!("unexpected {other}"),
            None => {
                assert_eq!(message["id"], 77);
                let text = message["result"]["content"][0]["text"].as_str().unwrap();
                assert!(text.contains("file:///work/project"), "{text}");
                break;
            }
        }
    }
    assert!(saw_progress && saw_log);
}

#[test]
fn closing_stdin_ends_the_server_and_leaves_no_process_behind() {
    let dir = std::env::temp_dir().join(format!("toolwarden-procs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pidfile = dir.join("grandchild.pid");
    // A launcher like npx: a shell that starts a background worker, then the server. The
    // worker ignores SIGTERM and EOF, so only a group SIGKILL ends it.
    let script = format!(
        "(trap '' TERM; exec sleep 300) & echo $! > {}; exec {} demo-server",
        pidfile.display(),
        exe()
    );
    let mut gateway = Peer::gateway(
        &[
            "--config",
            &write_config(&dir, "[gateway]\nshutdown_grace_ms = 300\n"),
        ],
        &["sh", "-c", &script],
    );
    gateway.initialize("lifecycle");
    let grandchild: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(grandchild));
    let started = Instant::now();
    gateway.close_stdin();
    assert_eq!(gateway.wait().code(), Some(0));
    assert!(started.elapsed() < Duration::from_secs(5));
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(grandchild) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !alive(grandchild),
        "the server's worker outlived the gateway"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_server_that_ignores_eof_and_sigterm_is_killed() {
    let dir = std::env::temp_dir().join(format!("toolwarden-stubborn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = write_config(&dir, "[gateway]\nshutdown_grace_ms = 200\n");
    let mut gateway = Peer::gateway(
        &["--config", &config],
        &["sh", "-c", "trap '' TERM; while true; do sleep 1; done"],
    );
    let started = Instant::now();
    gateway.close_stdin();
    assert_eq!(gateway.wait().code(), Some(0));
    assert!(started.elapsed() < Duration::from_secs(5));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_missing_server_command_is_a_clear_startup_error() {
    let output = support::toolwarden()
        .args(["run", "--", "/nonexistent/mcp-server"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("could not start `/nonexistent/mcp-server`"),
        "{stderr}"
    );
}

#[test]
fn a_bad_config_file_names_the_line() {
    let dir = std::env::temp_dir().join(format!("toolwarden-badconfig-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = write_config(&dir, "[gateway]\nmax_line_bytes = 10\nmax_lines = 3\n");
    let output = support::toolwarden()
        .args(["run", "--config", &config, "--", "cat"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("line 3"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}

/// The round trip the issue asks to measure: 10,000 sequential calls, directly and through the
/// gateway, in one run. Prints both; asserts only that every call was answered.
#[test]
fn ten_thousand_sequential_calls_complete_through_the_gateway() {
    const CALLS: u64 = 10_000;
    let time = |mut peer: Peer| {
        peer.initialize("relay-count");
        peer.list_tools();
        let started = Instant::now();
        for id in 0..CALLS {
            peer.send_json(&json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ping"}}}));
            let answer = peer.recv();
            assert_eq!(answer["id"], id, "{answer}");
        }
        started.elapsed()
    };
    let direct = time(Peer::demo(&[]));
    let through = time(Peer::gateway_demo(&[], &[]));
    eprintln!(
        "10,000 sequential tools/call: direct {direct:?} ({:.1} us/call), through toolwarden {through:?} ({:.1} us/call)",
        direct.as_secs_f64() * 1e6 / CALLS as f64,
        through.as_secs_f64() * 1e6 / CALLS as f64
    );
}

fn write_config(dir: &std::path::Path, text: &str) -> String {
    let path = dir.join("toolwarden.toml");
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

/// A client that writes its calls and closes stdin at once (a pipe, a script) still gets the
/// server's answers, even for calls that waited for the catalog the gateway fetched itself.
#[test]
fn calls_sent_just_before_eof_are_still_answered_by_the_server() {
    let mut gateway = Peer::gateway_demo(&[], &[]);
    gateway.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}"#);
    gateway.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}"#);
    gateway.close_stdin();
    assert_eq!(gateway.recv()["id"], 1);
    let answer = gateway.recv();
    assert_eq!(answer["id"], 2);
    assert_eq!(
        answer["result"]["content"][0]["text"], "still here",
        "{answer}"
    );
    assert_eq!(gateway.wait().code(), Some(0));
}
