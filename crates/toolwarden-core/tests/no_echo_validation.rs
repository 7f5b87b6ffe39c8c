//! Whatever a caller sends, in whatever wrong shape, none of its values comes back in a call
//! decision: not in the message, the hint, the suggestion, the fields, nor the protocol error.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use toolwarden_core::call::{CallDecision, decide_call};
use toolwarden_core::catalog::Catalog;
use toolwarden_core::policy::ErrorPolicyConfig;

fn catalog() -> Catalog {
    Catalog::from_tools(&[
        json!({"name": "add", "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"]
        }}),
        json!({"name": "read_file", "inputSchema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1},
                "encoding": {"enum": ["utf-8", "base64"]},
                "max_bytes": {"type": "integer", "minimum": 1, "maximum": 100}
            },
            "required": ["path"]
        }}),
        json!({"name": "search_issues", "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "pattern": "^[a-z ]+$", "maxLength": 50},
                "since": {"type": "string", "format": "date-time"},
                "labels": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 3},
                "assignee": {"anyOf": [{"type": "string", "format": "email"}, {"type": "null"}]},
                "owner": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "filters": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"field": {"type": "string"}, "op": {"const": "eq"}},
                    "required": ["field"],
                    "additionalProperties": false
                }},
                "options": {"type": "object", "additionalProperties": {"type": "boolean"}}
            },
            "required": ["query"]
        }}),
        json!({"name": "create_record", "inputSchema": {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "record": {"$ref": "#/definitions/record"},
                "kind": {"oneOf": [
                    {"type": "object", "properties": {"type": {"const": "user"}}, "required": ["type"]},
                    {"type": "object", "properties": {"type": {"const": "team"}}, "required": ["type"]}
                ]}
            },
            "definitions": {"record": {
                "type": "object",
                "properties": {"id": {"type": "integer", "multipleOf": 2}, "tags": {"type": "array", "minItems": 1}},
                "required": ["id"]
            }},
            "additionalProperties": false
        }}),
    ])
}

const TOOLS: [&str; 4] = ["add", "read_file", "search_issues", "create_record"];

const KEYS: [&str; 17] = [
    "a",
    "b",
    "path",
    "pathh",
    "encoding",
    "max_bytes",
    "query",
    "since",
    "labels",
    "assignee",
    "owner",
    "filters",
    "options",
    "record",
    "kind",
    "wait_for_previous",
    "userId",
];

/// Strings that cannot coincide with any text the decision is built from: a random prefix of
/// six or more letters and at least one digit, or a credential shape.
fn sent_string() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{6,10}[0-9]{1,4}[a-zA-Z0-9 ._-]{0,20}",
        "ghp_[A-Za-z0-9]{36}",
        "sk-(proj-)?[A-Za-z0-9]{32,48}",
        "eyJ[A-Za-z0-9_-]{10,30}\\.eyJ[A-Za-z0-9_-]{10,40}\\.[A-Za-z0-9_-]{20,43}",
        "https://[a-z]{5,8}:[a-z0-9]{8,12}@[a-z]{6,10}[0-9]\\.example",
    ]
}

/// Numbers far from every bound the schemas declare.
fn sent_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (10_000_000i64..i64::MAX).prop_map(Value::from),
        (i64::MIN..-10_000_000i64).prop_map(Value::from),
        (10_000_000.0f64..1e15).prop_map(|f| json!(f)),
    ]
}

fn sent_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        sent_string().prop_map(Value::String),
        sent_number(),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Null),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    prop::sample::select(KEYS.to_vec()).prop_map(str::to_owned),
                    "[a-z]{3,8}"
                ],
                inner,
                0..4
            )
            .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

fn sent_arguments() -> impl Strategy<Value = Value> {
    let object = prop::collection::btree_map(
        prop_oneof![
            3 => prop::sample::select(KEYS.to_vec()).prop_map(str::to_owned),
            1 => "[a-z_]{3,12}",
            1 => sent_string(),
        ],
        sent_value(),
        0..6,
    )
    .prop_map(|map| Value::Object(map.into_iter().collect::<Map<String, Value>>()));
    prop_oneof![4 => object, 1 => sent_value()]
}

/// Every string of 4+ characters and every number of 4+ digits, at any depth.
fn collect_values(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) if text.chars().count() >= 4 => out.push(text.clone()),
        Value::Number(number) => {
            let text = number.to_string();
            if text.chars().filter(char::is_ascii_digit).count() >= 4 {
                out.push(text);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_values(item, out)),
        Value::Object(map) => map.values().for_each(|item| collect_values(item, out)),
        _ => {}
    }
}

/// The decision as it leaves toolwarden, minus the arguments a strip forwards to the server
/// (those are meant to carry the caller's values).
fn rendered(decision: &CallDecision) -> String {
    let shown = match decision {
        CallDecision::Forward => json!("forward"),
        CallDecision::ForwardStripped { stripped, .. } => json!({"stripped": stripped}),
        CallDecision::Refuse(error) => {
            json!({"result": error.to_call_result(None), "text": error.text()})
        }
        CallDecision::ProtocolError {
            code,
            message,
            data,
        } => json!({"code": code, "message": message, "data": data}),
    };
    // Compare against the raw characters too, not only their JSON escapes.
    format!("{shown}\n{}", unescape(&shown))
}

fn unescape(value: &Value) -> String {
    let mut out = Vec::new();
    collect_all_strings(value, &mut out);
    out.join("\n")
}

fn collect_all_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(text) => out.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|item| collect_all_strings(item, out)),
        Value::Object(map) => map.values().for_each(|item| collect_all_strings(item, out)),
        _ => {}
    }
}

fn policies() -> Vec<ErrorPolicyConfig> {
    [
        "",
        "unknown_arguments = \"strip\"",
        "unknown_arguments = \"allow\"\nunknown_tool = \"error_result\"",
    ]
    .iter()
    .map(|text| toml::from_str(text).unwrap())
    .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn no_argument_value_is_echoed(
        tool in prop::sample::select(TOOLS.to_vec()),
        arguments in sent_arguments(),
        client in prop::option::of(prop_oneof![Just("gemini-cli-mcp-client"), Just("claude-ai")]),
    ) {
        let catalog = catalog();
        let mut values = Vec::new();
        collect_values(&arguments, &mut values);
        for policy in policies() {
            let decision = decide_call(&catalog, &policy, tool, Some(&arguments), client);
            let text = rendered(&decision);
            for value in &values {
                prop_assert!(!text.contains(value.as_str()), "{value} echoed in {text}");
            }
        }
    }

    #[test]
    fn no_unknown_tool_name_is_echoed(name in sent_string(), arguments in sent_arguments()) {
        let catalog = catalog();
        for policy in policies() {
            let text = rendered(&decide_call(&catalog, &policy, &name, Some(&arguments), None));
            prop_assert!(!text.contains(name.as_str()), "{name} echoed in {text}");
        }
    }

    #[test]
    fn no_output_value_is_echoed(content in sent_value()) {
        let catalog = Catalog::from_tools(&[json!({
            "name": "get_weather",
            "inputSchema": {"type": "object"},
            "outputSchema": {
                "type": "object",
                "properties": {
                    "temperature": {"type": "number", "maximum": 60},
                    "conditions": {"enum": ["sunny", "rain"]},
                    "hourly": {"type": "array", "items": {"type": "object",
                        "properties": {"t": {"type": "number"}}, "required": ["t"]}}
                },
                "required": ["temperature"]
            }
        })]);
        let tool = catalog.get("get_weather").unwrap();
        let issues = tool.check_output(&content);
        let error = tool.output_invalid(issues);
        let text = format!("{}\n{}", error.to_call_result(None), error.text());
        let mut values = Vec::new();
        collect_values(&content, &mut values);
        for value in &values {
            prop_assert!(!text.contains(value.as_str()), "{value} echoed in {text}");
        }
    }
}

#[test]
fn the_generators_produce_failing_calls() {
    // Guards the property above against vacuity: wrong shapes must actually be refused.
    let catalog = catalog();
    let decision = decide_call(
        &catalog,
        &ErrorPolicyConfig::default(),
        "add",
        Some(&json!({"a": "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "b": 123456789})),
        None,
    );
    let CallDecision::Refuse(error) = &decision else {
        panic!("{decision:?}")
    };
    assert_eq!(error.fields.len(), 1);
    assert!(!rendered(&decision).contains("ghp_"));
}
