use super::*;
use serde_json::json;

fn session() -> Session {
    Session::new(SessionConfig::default(), Pipeline::default())
}

fn line(text: &str) -> Frame {
    Frame::Line(text.as_bytes().to_vec())
}

fn client(session: &mut Session, text: &str) -> Outbox {
    let mut out = Outbox::default();
    session.on_client_frame(line(text), &mut out);
    out
}

fn server(session: &mut Session, text: &str) -> Outbox {
    let mut out = Outbox::default();
    session.on_server_frame(line(text), &mut out);
    out
}

fn json_lines(lines: &[Vec<u8>]) -> Vec<Value> {
    lines
        .iter()
        .map(|line| serde_json::from_slice(line).unwrap())
        .collect()
}

fn text(lines: &[Vec<u8>]) -> Vec<&str> {
    lines
        .iter()
        .map(|line| std::str::from_utf8(line).unwrap())
        .collect()
}

const TOOLS_PAGE: &str = r#"{"jsonrpc":"2.0","id":"toolwarden-1","result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}"#;

/// A session that has seen a full catalog, so calls are not held.
fn listed_session() -> Session {
    let mut session = session();
    client(
        &mut session,
        r#"{"jsonrpc":"2.0","id":100,"method":"tools/list"}"#,
    );
    server(
        &mut session,
        r#"{"jsonrpc":"2.0","id":100,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}"#,
    );
    session
}

#[test]
fn untouched_messages_pass_byte_for_byte_both_ways() {
    let mut session = listed_session();
    let request = r#"{ "jsonrpc" : "2.0", "id":7, "method":"resources/read", "params":{"uri":"file:///x","x-extra":[1, 2]} }"#;
    let out = client(&mut session, request);
    assert_eq!(text(&out.to_server), [request]);
    assert!(out.to_client.is_empty());
    let response =
        r#"{"jsonrpc":"2.0","id":7,"result":{"contents":[],"unknownField":{"kept":true}}}"#;
    assert_eq!(text(&server(&mut session, response).to_client), [response]);
    let call = r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":3}}}"#;
    assert_eq!(text(&client(&mut session, call).to_server), [call]);
    for from_server in [
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1}}"#,
        r#"{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[]}}"#,
        r#"{"jsonrpc":"2.0","id":"s2","method":"roots/list"}"#,
    ] {
        assert_eq!(
            text(&server(&mut session, from_server).to_client),
            [from_server]
        );
    }
    for from_client in [
        r#"{"jsonrpc":"2.0","id":"s2","result":{"roots":[]}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    ] {
        assert_eq!(
            text(&client(&mut session, from_client).to_server),
            [from_client]
        );
    }
}

#[test]
fn learns_both_sides_from_the_handshake() {
    let mut session = session();
    client(
        &mut session,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"gemini-cli-mcp-client","version":"1"}}}"#,
    );
    server(
        &mut session,
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"1"}}}"#,
    );
    assert_eq!(
        session.client.name.as_deref(),
        Some("gemini-cli-mcp-client")
    );
    assert_eq!(
        session.server.capabilities,
        Some(json!({"tools":{"listChanged":true}}))
    );
    assert_eq!(
        session.server.protocol_version.as_deref(),
        Some("2025-11-25")
    );
}

#[test]
fn a_call_before_any_listing_fetches_the_catalog_on_its_own_ids() {
    let mut session = session();
    let call =
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
    let out = client(&mut session, call);
    assert!(out.to_client.is_empty());
    let sent = json_lines(&out.to_server);
    assert_eq!(
        sent,
        [json!({"jsonrpc":"2.0","id":"toolwarden-1","method":"tools/list","params":{}})]
    );

    let out = server(
        &mut session,
        r#"{"jsonrpc":"2.0","id":"toolwarden-1","result":{"tools":[{"name":"echo"}],"nextCursor":"p2"}}"#,
    );
    assert!(
        out.to_client.is_empty(),
        "own answers never reach the client"
    );
    assert_eq!(
        json_lines(&out.to_server),
        [
            json!({"jsonrpc":"2.0","id":"toolwarden-2","method":"tools/list","params":{"cursor":"p2"}})
        ]
    );
    let out = server(
        &mut session,
        r#"{"jsonrpc":"2.0","id":"toolwarden-2","result":{"tools":[{"name":"add"}]}}"#,
    );
    assert!(out.to_client.is_empty());
    assert_eq!(
        text(&out.to_server),
        [call],
        "the held call goes on as it came"
    );
    assert_eq!(session.catalog().len(), 2);
    assert_eq!(session.catalog_version(), 1);
}

#[test]
fn modern_calls_fetch_the_catalog_with_their_protocol_meta() {
    let mut session = session();
    let out = client(
        &mut session,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":9,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    );
    assert_eq!(
        json_lines(&out.to_server)[0]["params"]["_meta"],
        json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}})
    );
}

#[test]
fn a_client_id_equal_to_an_own_id_is_renumbered_and_restored() {
    let mut session = session();
    client(
        &mut session,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#,
    );
    // The client picks the very id of the gateway's fetch, which is still in flight.
    let out = client(
        &mut session,
        r#"{"jsonrpc":"2.0","id":"toolwarden-1","method":"ping"}"#,
    );
    let sent = json_lines(&out.to_server);
    assert_eq!(sent.len(), 1);
    let upstream_id = sent[0]["id"].as_str().unwrap().to_owned();
    assert_ne!(upstream_id, "toolwarden-1");
    let out = server(
        &mut session,
        &format!(r#"{{"jsonrpc":"2.0","id":"{upstream_id}","result":{{}}}}"#),
    );
    assert_eq!(
        json_lines(&out.to_client),
        [json!({"jsonrpc":"2.0","id":"toolwarden-1","result":{}})]
    );
    // And the fetch's own answer is still recognised as ours.
    let out = server(&mut session, TOOLS_PAGE);
    assert_eq!(out.to_client.len(), 0);
    assert_eq!(out.to_server.len(), 1, "the held call is released");
}

#[test]
fn when_the_server_dies_every_waiting_request_gets_one_answer() {
    let mut session = listed_session();
    client(
        &mut session,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"secret-value"}}}"#,
    );
    client(
        &mut session,
        r#"{"jsonrpc":"2.0","id":"two","method":"resources/list"}"#,
    );
    client(
        &mut session,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    );
    assert_eq!(session.waiting(), 3);
    let mut out = Outbox::default();
    session.on_server_gone("exited (exit status 3)", &mut out);
    let answers = json_lines(&out.to_client);
    assert_eq!(answers.len(), 3);
    assert_eq!(session.waiting(), 0);
    let call = &answers[0];
    assert_eq!(call["id"], 1);
    assert_eq!(call["result"]["isError"], true);
    assert_eq!(
        call["result"]["_meta"]["toolwarden/error"]["kind"],
        "upstream_unavailable"
    );
    assert!(
        call["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("exited (exit status 3)")
    );
    assert!(call["result"].get("resultType").is_none());
    assert_eq!(answers[1]["id"], "two");
    assert_eq!(answers[1]["error"]["code"], -32603);
    assert_eq!(answers[2]["result"]["resultType"], "complete");
    assert!(!String::from_utf8_lossy(&out.to_client.concat()).contains("secret-value"));
}

#[test]
fn held_calls_are_answered_when_the_server_dies() {
    let mut session = session();
    client(
        &mut session,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}}"#,
    );
    let mut out = Outbox::default();
    session.on_server_gone("exited (exit status 1)", &mut out);
    let answers = json_lines(&out.to_client);
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["id"], 5);
    assert_eq!(answers[0]["result"]["isError"], true);
}

#[test]
fn bad_lines_get_errors_and_the_next_request_still_works() {
    let mut session = listed_session();
    let out = client(
        &mut session,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"#,
    );
    assert_eq!(json_lines(&out.to_client)[0]["error"]["code"], -32700);
    assert_eq!(json_lines(&out.to_client)[0]["id"], 4);
    let out = client(&mut session, "not json at all");
    assert!(out.to_client.is_empty() && out.to_server.is_empty());
    let mut out = Outbox::default();
    session.on_client_frame(
        Frame::Line(b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"\xff\"}".to_vec()),
        &mut out,
    );
    assert_eq!(json_lines(&out.to_client)[0]["error"]["code"], -32700);
    let out = client(&mut session, r#"{"id":9,"method":"ping"}"#);
    assert_eq!(json_lines(&out.to_client)[0]["error"]["code"], -32600);
    let out = client(
        &mut session,
        r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"arguments":{}}}"#,
    );
    assert_eq!(json_lines(&out.to_client)[0]["error"]["code"], -32602);
    let ping = r#"{"jsonrpc":"2.0","id":11,"method":"ping"}"#;
    assert_eq!(text(&client(&mut session, ping).to_server), [ping]);
}

#[test]
fn over_long_lines_are_refused_with_their_id() {
    let mut session = session();
    let mut out = Outbox::default();
    session.on_client_frame(
        Frame::TooLong {
            length: 20_000_000,
            head: br#"{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"#.to_vec(),
        },
        &mut out,
    );
    let answer = &json_lines(&out.to_client)[0];
    assert_eq!(answer["id"], "big");
    assert_eq!(answer["error"]["code"], -32600);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("20000000 bytes")
    );
}

#[test]
fn an_over_long_answer_from_the_server_still_answers_the_call() {
    let mut session = listed_session();
    client(
        &mut session,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}"#,
    );
    let mut out = Outbox::default();
    session.on_server_frame(
        Frame::TooLong {
            length: 99_000_000,
            head: br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"aaaa"#
                .to_vec(),
        },
        &mut out,
    );
    let answer = &json_lines(&out.to_client)[0];
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["result"]["isError"], true);
    assert_eq!(
        answer["result"]["_meta"]["toolwarden/error"]["kind"],
        "upstream_error"
    );
    assert_eq!(session.waiting(), 0);
}

#[test]
fn batches_are_split_upstream_and_answered_as_one_array() {
    let mut session = listed_session();
    let out = client(
        &mut session,
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"x"}},{"id":3}]"#,
    );
    assert_eq!(
        out.to_server.len(),
        3,
        "two requests and a notification go up one by one"
    );
    assert!(
        out.to_client.is_empty(),
        "the batch answer waits for every response"
    );
    assert!(
        server(
            &mut session,
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#
        )
        .to_client
        .is_empty()
    );
    let out = server(&mut session, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    let answers = json_lines(&out.to_client);
    assert_eq!(answers.len(), 1);
    let array = answers[0].as_array().unwrap();
    assert_eq!(array.len(), 3);
    let ids: Vec<&Value> = array.iter().map(|answer| &answer["id"]).collect();
    assert!(ids.contains(&&json!(1)) && ids.contains(&&json!(2)) && ids.contains(&&json!(3)));
}

#[test]
fn a_cancelled_request_is_not_answered_by_the_gateway() {
    let mut session = listed_session();
    client(
        &mut session,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#,
    );
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    assert_eq!(text(&client(&mut session, cancel).to_server), [cancel]);
    let mut out = Outbox::default();
    session.on_server_gone("exited", &mut out);
    assert!(out.to_client.is_empty());
}

#[test]
fn a_duplicate_id_in_flight_is_refused() {
    let mut session = listed_session();
    client(&mut session, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    let out = client(&mut session, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    assert!(out.to_server.is_empty());
    assert_eq!(json_lines(&out.to_client)[0]["error"]["code"], -32600);
}

#[test]
fn list_changed_makes_the_next_call_refresh_the_catalog() {
    let mut session = listed_session();
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#;
    assert_eq!(text(&client(&mut session, call).to_server), [call]);
    server(
        &mut session,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
    );
    let note = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
    assert_eq!(text(&server(&mut session, note).to_client), [note]);
    let out = client(&mut session, &call.replace("\"id\":1", "\"id\":2"));
    assert_eq!(json_lines(&out.to_server)[0]["method"], "tools/list");
    server(&mut session, TOOLS_PAGE);
    assert_eq!(session.catalog_version(), 2);
}

#[test]
fn a_catalog_fetch_that_times_out_releases_the_calls() {
    let mut session = session();
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#;
    client(&mut session, call);
    let deadline = session.next_deadline().unwrap();
    let mut out = Outbox::default();
    session.on_deadline(deadline, &mut out);
    assert_eq!(text(&out.to_server), [call]);
    // The late answer to the abandoned fetch is swallowed.
    assert!(server(&mut session, TOOLS_PAGE).to_client.is_empty());
    assert!(session.next_deadline().is_none());
}

#[test]
fn junk_from_the_server_is_dropped() {
    let mut session = listed_session();
    assert!(
        server(&mut session, "Server listening on port 3000")
            .to_client
            .is_empty()
    );
    assert!(
        server(&mut session, r#"{"jsonrpc":"2.0"}"#)
            .to_client
            .is_empty()
    );
}

#[test]
fn a_call_past_its_timeout_is_answered_cancelled_upstream_and_its_late_answer_dropped() {
    let errors: toolwarden_core::policy::ErrorPolicyConfig =
        toml::from_str("call_timeout_ms = 50").unwrap();
    let pipeline = Pipeline::new(crate::pipeline::PipelineConfig {
        errors,
        ..Default::default()
    });
    let mut session = Session::new(SessionConfig::default(), pipeline);
    client(
        &mut session,
        r#"{"jsonrpc":"2.0","id":100,"method":"tools/list"}"#,
    );
    server(
        &mut session,
        r#"{"jsonrpc":"2.0","id":100,"result":{"tools":[{"name":"slow","inputSchema":{"type":"object"}}]}}"#,
    );
    assert!(session.next_deadline().is_none());
    client(
        &mut session,
        r#"{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"slow"}}"#,
    );
    let deadline = session.next_deadline().expect("a deadline for the call");
    let mut out = Outbox::default();
    session.on_deadline(deadline, &mut out);
    let answer = &json_lines(&out.to_client)[0];
    assert_eq!(answer["id"], "c1");
    assert_eq!(
        answer["result"]["_meta"]["toolwarden/error"]["kind"],
        "timeout"
    );
    assert_eq!(
        answer["result"]["_meta"]["toolwarden/error"]["retryable"],
        true
    );
    assert_eq!(
        json_lines(&out.to_server)[0],
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"toolwarden: the call timed out"}})
    );
    assert!(session.next_deadline().is_none());
    let late = server(
        &mut session,
        r#"{"jsonrpc":"2.0","id":"c1","result":{"content":[]}}"#,
    );
    assert!(late.to_client.is_empty(), "exactly one answer per request");
}

#[test]
fn a_duplicate_of_a_held_call_is_refused() {
    let mut session = session();
    let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}"#;
    client(&mut session, call);
    let out = client(&mut session, call);
    assert!(out.to_server.is_empty());
    assert_eq!(json_lines(&out.to_client)[0]["error"]["code"], -32600);
    let out = server(&mut session, TOOLS_PAGE);
    assert_eq!(
        text(&out.to_server),
        [call],
        "the held one still goes on, once"
    );
}
