//! No value the caller sent survives a server's error text: whatever the server repeats, in
//! whatever position, quoted, JSON-escaped or in another letter case, the reshaped result, its
//! `_meta` and the error for the log hold a field reference instead.
//!
//! Generated values always mix letters and digits (or are long tokens, or numbers of four or
//! more digits that are not five digits long), so they cannot coincide with the fixed words,
//! tool names and JSON-RPC codes the reshaped text is made of.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use toolwarden_core::upstream::{UpstreamCall, reshape_error_result, reshape_protocol_error};

const KEYS: &[&str] = &[
    "query", "owner", "filter", "items", "id", "name", "token", "path",
];
const FILLERS: &[&str] = &[
    "User ",
    " not found",
    "failed for ",
    "; ",
    " value=",
    ", see ",
    "\n",
    " (",
    ")",
    " ",
    "Internal error: ",
    "could not open ",
    "{\"detail\": ",
    "}",
];
const PREFIXES: &[&str] = &[
    "",
    "Internal error: ",
    "MCP error -32603: ",
    "Error: ",
    "McpError: Error: ",
];

#[derive(Debug, Clone)]
enum Leaf {
    Text(String),
    Number(u64),
}

fn leaf() -> impl Strategy<Value = Leaf> {
    prop_oneof![
        4 => "[a-z]{2,6}[0-9]{2,5}[A-Za-z0-9]{0,12}".prop_map(Leaf::Text),
        2 => "[A-Z]{1,3}[0-9]{1,3}[a-z]{1,3}-[A-Za-z0-9]{1,8}".prop_map(Leaf::Text),
        1 => "ghp_[A-Za-z0-9]{36}".prop_map(Leaf::Text),
        1 => "sk-[A-Za-z0-9]{24,40}".prop_map(Leaf::Text),
        1 => "eyJ[A-Za-z0-9_-]{10,20}\\.eyJ[A-Za-z0-9_-]{10,30}\\.[A-Za-z0-9_-]{20,40}".prop_map(Leaf::Text),
        1 => "[a-z]{2,4}[0-9]{2,4}\"[a-z0-9]{2,4}\\\\[a-z0-9]{2,4}".prop_map(Leaf::Text),
        1 => "[a-z]{2,4}[0-9]{2,4} [a-z0-9/]{2,6}".prop_map(Leaf::Text),
        2 => (1_000u64..10_000).prop_map(Leaf::Number),
        2 => (100_000u64..1_000_000_000_000).prop_map(Leaf::Number),
    ]
}

fn leaf_value(leaf: &Leaf) -> Value {
    match leaf {
        Leaf::Text(text) => Value::String(text.clone()),
        Leaf::Number(number) => json!(number),
    }
}

/// Arguments nesting the leaves in objects and arrays under fixed keys.
fn arguments(leaves: &[Leaf], shape: &[u8]) -> Value {
    let mut root = Map::new();
    for (index, leaf) in leaves.iter().enumerate() {
        let key = KEYS[index % KEYS.len()];
        let nested = match shape.get(index).copied().unwrap_or(0) % 3 {
            0 => leaf_value(leaf),
            1 => json!({"inner": leaf_value(leaf)}),
            _ => json!([true, {"deep": [leaf_value(leaf)]}]),
        };
        let slot = format!("{key}{}", "_x".repeat(index / KEYS.len()));
        root.insert(slot, nested);
    }
    Value::Object(root)
}

#[derive(Debug, Clone, Copy)]
enum Rendering {
    Raw,
    JsonString,
    SingleQuoted,
    Upper,
    Lower,
    InUrl,
}

fn render(leaf: &Leaf, rendering: Rendering) -> String {
    match leaf {
        Leaf::Number(number) => match rendering {
            Rendering::JsonString | Rendering::SingleQuoted => format!("\"{number}\""),
            _ => number.to_string(),
        },
        Leaf::Text(text) => match rendering {
            Rendering::Raw => text.clone(),
            Rendering::JsonString => Value::String(text.clone()).to_string(),
            Rendering::SingleQuoted => format!("'{text}'"),
            Rendering::Upper => text.to_ascii_uppercase(),
            Rendering::Lower => text.to_ascii_lowercase(),
            Rendering::InUrl => format!(
                "https://api.example.com/v1/items/{}?x=1",
                text.replace(' ', "%20").replace('/', "%2F")
            ),
        },
    }
}

#[derive(Debug, Clone)]
enum Segment {
    Filler(usize),
    Echo(usize, u8),
    ServerSecret(String),
}

fn segment() -> impl Strategy<Value = Segment> {
    prop_oneof![
        3 => (0..FILLERS.len()).prop_map(Segment::Filler),
        4 => (any::<usize>(), any::<u8>()).prop_map(|(leaf, how)| Segment::Echo(leaf, how)),
        1 => prop_oneof![
            "ghp_[A-Za-z0-9]{36}",
            "AKIA[A-Z0-9]{16}",
            "xoxb-[0-9]{10,12}-[A-Za-z0-9]{12,20}",
        ]
        .prop_map(|secret| Segment::ServerSecret(format!(" {secret} "))),
    ]
}

fn compose(prefix: usize, segments: &[Segment], leaves: &[Leaf]) -> String {
    let mut text = PREFIXES[prefix % PREFIXES.len()].to_owned();
    for segment in segments {
        match segment {
            Segment::Filler(index) => text.push_str(FILLERS[*index]),
            Segment::Echo(index, how) => {
                let rendering = [
                    Rendering::Raw,
                    Rendering::JsonString,
                    Rendering::SingleQuoted,
                    Rendering::Upper,
                    Rendering::Lower,
                    Rendering::InUrl,
                ][usize::from(*how) % 6];
                text.push_str(&render(&leaves[index % leaves.len()], rendering));
            }
            Segment::ServerSecret(secret) => text.push_str(secret),
        }
    }
    text
}

fn all_strings(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::String(text) => into.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|item| all_strings(item, into)),
        Value::Object(members) => members.iter().for_each(|(key, member)| {
            into.push(key.clone());
            all_strings(member, into);
        }),
        _ => {}
    }
}

/// Digit runs standing alone, as a reader would see a number.
fn digit_runs(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter(|run| !run.is_empty())
        .collect()
}

fn assert_no_echo(
    output: &Value,
    leaves: &[Leaf],
    secrets: &[String],
) -> Result<(), TestCaseError> {
    let serialized = output.to_string();
    let mut strings = Vec::new();
    all_strings(output, &mut strings);
    let lowered: Vec<String> = strings.iter().map(|s| s.to_ascii_lowercase()).collect();
    for leaf in leaves {
        match leaf {
            Leaf::Text(text) => {
                let needle = text.to_ascii_lowercase();
                for string in &lowered {
                    prop_assert!(!string.contains(&needle), "{text:?} echoed in {string:?}");
                }
                let escaped = Value::String(text.clone()).to_string();
                let escaped_inner = &escaped[1..escaped.len() - 1];
                prop_assert!(
                    !serialized
                        .to_ascii_lowercase()
                        .contains(&escaped_inner.to_ascii_lowercase()),
                    "{text:?} echoed in {serialized}"
                );
            }
            Leaf::Number(number) => {
                let digits = number.to_string();
                prop_assert!(
                    !digit_runs(&serialized).contains(&digits.as_str()),
                    "{digits} echoed in {serialized}"
                );
            }
        }
    }
    for secret in secrets {
        prop_assert!(
            !serialized.contains(secret.trim()),
            "server secret kept: {serialized}"
        );
    }
    Ok(())
}

fn server_secrets(segments: &[Segment]) -> Vec<String> {
    segments
        .iter()
        .filter_map(|segment| match segment {
            Segment::ServerSecret(secret) => Some(secret.clone()),
            _ => None,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn error_results_never_echo_caller_values(
        leaves in prop::collection::vec(leaf(), 1..10),
        shape in prop::collection::vec(any::<u8>(), 10),
        prefix in any::<usize>(),
        segments in prop::collection::vec(segment(), 1..24),
        meta_echo in any::<usize>(),
    ) {
        let arguments = arguments(&leaves, &shape);
        let discovery = vec!["list_users".to_owned(), "search_items".to_owned()];
        let call = UpstreamCall {
            tool: "get_user",
            arguments: Some(&arguments),
            discovery_tools: &discovery,
            trust_echoes: false,
        };
        let text = compose(prefix, &segments, &leaves);
        let echoed_in_meta = render(&leaves[meta_echo % leaves.len()], Rendering::Raw);
        let result = json!({
            "isError": true,
            "content": [
                {"type": "text", "text": text},
                {"type": "resource", "resource": {"uri": "file:///log", "text": text}},
                {"type": "text", "text": format!("second item: {text}")},
            ],
            "structuredContent": {"echo": leaf_value(&leaves[0])},
            "_meta": {"vendor/request": echoed_in_meta, "vendor/nested": [{"q": text}]},
        });
        let (reshaped, error) = reshape_error_result(&call, &result);
        let secrets = server_secrets(&segments);
        assert_no_echo(&reshaped, &leaves, &secrets)?;
        let logged = json!({"text": error.text(), "meta": error.meta()});
        assert_no_echo(&logged, &leaves, &secrets)?;
        prop_assert_eq!(&reshaped["isError"], &json!(true));
        prop_assert!(reshaped.get("structuredContent").is_none());
    }

    #[test]
    fn protocol_errors_never_echo_caller_values(
        leaves in prop::collection::vec(leaf(), 1..10),
        shape in prop::collection::vec(any::<u8>(), 10),
        prefix in any::<usize>(),
        segments in prop::collection::vec(segment(), 0..24),
        code in prop::sample::select(vec![-32603i64, -32602, -32001, -32000, -32099]),
        use_data in any::<bool>(),
    ) {
        let arguments = arguments(&leaves, &shape);
        let call = UpstreamCall {
            tool: "get_user",
            arguments: Some(&arguments),
            discovery_tools: &[],
            trust_echoes: false,
        };
        let text = compose(prefix, &segments, &leaves);
        let (message, data) = if use_data {
            ("Internal error".to_owned(), json!({"message": text, "raw": leaf_value(&leaves[0])}))
        } else {
            (text, json!({"raw": leaf_value(&leaves[0])}))
        };
        let error = reshape_protocol_error(&call, code, &message, Some(&data));
        let secrets = server_secrets(&segments);
        assert_no_echo(&error.to_call_result(None), &leaves, &secrets)?;
        assert_no_echo(&error.to_error_data(), &leaves, &secrets)?;
        prop_assert!(!error.message.trim().is_empty());
    }
}
