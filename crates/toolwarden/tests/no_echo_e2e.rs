//! Property: whatever values a caller sends, in whatever wrong shape, no value of 4 or more
//! characters (or a number of 4 or more digits) ever comes back in a response from the gateway
//! or appears in its logs. Runs against the real binary and the demo server, whose tools
//! repeat what they receive.

mod support;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};
use support::Peer;

/// Values that cannot coincide with the gateway's own vocabulary: letters and digits mixed.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{2}[0-9]{2}[A-Za-z0-9]{0,24}",
        "ghp_[A-Za-z0-9]{36}",
        "sk-proj-[A-Za-z0-9]{24}",
        "eyJ[A-Za-z0-9]{10}\\.eyJ[A-Za-z0-9]{12}\\.[A-Za-z0-9_-]{16}",
        "[a-z]{3}[0-9]{3} [a-z]{2}[0-9]{2}[a-z]{4}",
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        token().prop_map(Value::String),
        (10_000u64..100_000_000_000u64).prop_map(|n| json!(n)),
    ]
}

fn nested() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 1..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{3,8}", inner, 1..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

fn collect_values(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::String(text) if text.chars().count() >= 4 => into.push(text.clone()),
        Value::Number(number) if number.to_string().len() >= 4 => into.push(number.to_string()),
        Value::Array(items) => items.iter().for_each(|item| collect_values(item, into)),
        Value::Object(map) => map.values().for_each(|item| collect_values(item, into)),
        _ => {}
    }
}

/// The calls of one case: wrong types, unknown keys, and values the demo tools repeat.
fn calls(a: &Value, b: &Value, c: &Value) -> Vec<(&'static str, Value)> {
    vec![
        ("add", json!({"a": a, "b": b})),
        ("echo", json!({"text": b, "wait_for_previous": c})),
        ("get_user", json!({"user_id": a})),
        ("get_user", json!({"user_id": c.to_string()})),
        (
            "search_docs",
            json!({"query": c.to_string(), "api_key": a.to_string(), "limit": 5}),
        ),
        ("search_docs", json!({"query": b, "api_key": a, "limit": c})),
        ("set_config", json!({"key": a, "value": b, "extra": c})),
        ("no_such_tool", json!({"x": a})),
    ]
}

#[test]
fn no_caller_value_is_echoed_in_responses_or_logs() {
    let mut gateway = Peer::gateway_demo(&["--log-format", "json"], &[]);
    gateway.initialize("gemini-cli-mcp-client");
    gateway.list_tools();
    let mut runner = TestRunner::new(Config {
        cases: 48,
        failure_persistence: None,
        ..Config::default()
    });
    // The runner takes a `Fn`: the one gateway and the bookkeeping live in cells.
    let gateway = std::cell::RefCell::new(gateway);
    let next_id = std::cell::Cell::new(1u64);
    let sent_values: std::cell::RefCell<Vec<String>> = std::cell::RefCell::new(Vec::new());
    let result = runner.run(&(nested(), nested(), nested()), |(a, b, c)| {
        for (tool, arguments) in calls(&a, &b, &c) {
            let mut values = Vec::new();
            collect_values(&arguments, &mut values);
            sent_values.borrow_mut().extend(values.iter().cloned());
            let response = gateway.borrow_mut().call(next_id.get(), tool, arguments);
            next_id.set(next_id.get() + 1);
            let text = response.to_string();
            for value in &values {
                if text.contains(value.as_str()) {
                    return Err(TestCaseError::fail(format!(
                        "`{value}` echoed by {tool}: {text}"
                    )));
                }
            }
        }
        Ok(())
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
    let mut gateway = gateway.into_inner();
    gateway.close_stdin();
    gateway.wait();
    let logs: Vec<Value> = gateway
        .stderr_text()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| json!({"raw": line})))
        .map(|mut line| {
            // Timestamps and latencies are the gateway's own digits, not the caller's.
            if let Some(object) = line.as_object_mut() {
                object.remove("timestamp");
                object.remove("latency_ms");
            }
            line
        })
        .collect();
    assert!(logs.len() > 10, "the failures were logged");
    let logs = serde_json::to_string(&logs).unwrap();
    for value in sent_values.borrow().iter() {
        assert!(!logs.contains(value.as_str()), "`{value}` in the logs");
    }
}
