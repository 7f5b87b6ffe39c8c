//! Which calls to send to one tool, derived from its schema: the mistakes real agents make.
//!
//! Safety first: a call that could change the world is only planned when the tool says it is
//! read-only (`readOnlyHint: true`) or the user allowed valid calls. Every other planned call
//! breaks the input schema, so a server that validates must refuse it.

use serde::Serialize;
use serde_json::{Map, Value, json};

/// The scheduling flag Gemini CLI injects into batched calls: the unknown key agents really send.
pub const UNKNOWN_KEY: &str = "wait_for_previous";

/// How deep sample values for nested objects go before giving up on required members.
const MAX_SAMPLE_DEPTH: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CallKind {
    /// A required parameter (or, without one, any parameter) sent with the wrong JSON type,
    /// carrying the marker.
    WrongType,
    /// An empty arguments object for a tool with required parameters.
    MissingRequired,
    /// Valid arguments plus `wait_for_previous`.
    UnknownKey,
    /// A required parameter sent under a misspelt name, carrying the marker.
    Misspelt,
    /// An optional parameter sent under a misspelt name, carrying the marker: the schema may
    /// allow the extra key, so this is an unknown-key call, sent only when valid calls are.
    MisspeltOptional,
    /// Valid arguments, to see a success and its `structuredContent`.
    Valid,
}

impl CallKind {
    /// Calls that break the input schema on purpose.
    pub fn is_invalid_input(self) -> bool {
        matches!(
            self,
            CallKind::WrongType | CallKind::MissingRequired | CallKind::Misspelt
        )
    }

    pub fn describe(self) -> &'static str {
        match self {
            CallKind::WrongType => "wrong type",
            CallKind::MissingRequired => "required parameters missing",
            CallKind::UnknownKey => "unknown key",
            CallKind::Misspelt => "misspelt parameter",
            CallKind::MisspeltOptional => "misspelt optional parameter",
            CallKind::Valid => "valid call",
        }
    }
}

/// One call the battery will send.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedCall {
    pub kind: CallKind,
    pub arguments: Value,
    /// The parameter names the call is about: the wrongly typed one, the missing ones, the one
    /// whose name was misspelt.
    pub parameters: Vec<String>,
    /// The misspelt name, for `Misspelt` calls.
    pub typo: Option<String>,
    pub carries_marker: bool,
}

/// A call the battery chose not to send, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct SkippedCall {
    pub kind: CallKind,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolPlan {
    pub calls: Vec<PlannedCall>,
    pub skipped: Vec<SkippedCall>,
}

/// Facts about a tool definition the battery and the grading both need.
#[derive(Debug, Clone)]
pub struct ToolShape<'a> {
    pub name: &'a str,
    pub properties: Map<String, Value>,
    pub required: Vec<String>,
    pub read_only: bool,
    pub output_schema: Option<&'a Value>,
}

impl<'a> ToolShape<'a> {
    pub fn of(tool: &'a Value) -> ToolShape<'a> {
        let input = tool.get("inputSchema");
        let properties = input
            .and_then(|schema| schema.get("properties"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let required = input
            .and_then(|schema| schema.get("required"))
            .and_then(Value::as_array)
            .map(|names| {
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        ToolShape {
            name: tool.get("name").and_then(Value::as_str).unwrap_or(""),
            properties,
            required,
            read_only: tool
                .pointer("/annotations/readOnlyHint")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            output_schema: tool.get("outputSchema").filter(|schema| schema.is_object()),
        }
    }
}

/// The calls to send to `tool`. `marker` goes into the wrong-type and misspelt calls.
pub fn plan(tool: &Value, marker: &str, allow_valid_calls: bool) -> ToolPlan {
    let shape = ToolShape::of(tool);
    let valid_calls_allowed = shape.read_only || allow_valid_calls;
    let mut plan = ToolPlan {
        calls: Vec::new(),
        skipped: Vec::new(),
    };
    let mut skip = |kind, reason: &str| {
        plan.skipped.push(SkippedCall {
            kind,
            reason: reason.to_owned(),
        })
    };
    let not_read_only =
        "not read-only: a valid call could change the world (--allow-valid-calls sends it)";

    let wrong_type = wrong_type_call(&shape, marker);
    let missing = if shape.required.is_empty() {
        skip(CallKind::MissingRequired, "no required parameters");
        None
    } else {
        Some(PlannedCall {
            kind: CallKind::MissingRequired,
            arguments: json!({}),
            parameters: shape.required.clone(),
            typo: None,
            carries_marker: false,
        })
    };
    if wrong_type.is_none() {
        let reason = if shape.properties.is_empty() {
            "no parameters"
        } else {
            "no parameter has a type that a wrong value can break"
        };
        skip(CallKind::WrongType, reason);
    }
    let unknown_key = if shape.properties.contains_key(UNKNOWN_KEY) {
        skip(
            CallKind::UnknownKey,
            "the tool declares `wait_for_previous` itself",
        );
        None
    } else if !valid_calls_allowed {
        skip(CallKind::UnknownKey, not_read_only);
        None
    } else {
        let mut arguments = valid_arguments(&shape);
        if let Some(object) = arguments.as_object_mut() {
            object.insert(UNKNOWN_KEY.to_owned(), Value::Bool(true));
        }
        Some(PlannedCall {
            kind: CallKind::UnknownKey,
            arguments,
            parameters: vec![UNKNOWN_KEY.to_owned()],
            typo: None,
            carries_marker: false,
        })
    };
    let misspelt = misspelt_call(&shape, marker, valid_calls_allowed);
    if misspelt.is_none() {
        let reason = if shape.properties.is_empty() {
            "no parameters"
        } else if shape.required.is_empty() {
            // Without a required parameter the call would be valid apart from the extra key.
            not_read_only
        } else {
            "no misspelling of a parameter name is free"
        };
        skip(CallKind::Misspelt, reason);
    }
    let valid = match shape.output_schema {
        None => {
            skip(
                CallKind::Valid,
                "no outputSchema to check a success against",
            );
            None
        }
        Some(_) if !valid_calls_allowed => {
            skip(CallKind::Valid, not_read_only);
            None
        }
        Some(_) => Some(PlannedCall {
            kind: CallKind::Valid,
            arguments: valid_arguments(&shape),
            parameters: Vec::new(),
            typo: None,
            carries_marker: false,
        }),
    };
    plan.calls = [wrong_type, missing, unknown_key, misspelt, valid]
        .into_iter()
        .flatten()
        .collect();
    plan
}

fn wrong_type_call(shape: &ToolShape<'_>, marker: &str) -> Option<PlannedCall> {
    let candidates = shape.required.iter().chain(
        shape
            .properties
            .keys()
            .filter(|name| !shape.required.contains(name)),
    );
    for name in candidates {
        let Some(schema) = shape.properties.get(name) else {
            continue;
        };
        let Some(value) = wrong_value(schema, marker) else {
            continue;
        };
        let mut arguments = valid_arguments(shape);
        if let Some(object) = arguments.as_object_mut() {
            object.insert(name.clone(), value);
        }
        return Some(PlannedCall {
            kind: CallKind::WrongType,
            arguments,
            parameters: vec![name.clone()],
            typo: None,
            carries_marker: true,
        });
    }
    None
}

fn misspelt_call(
    shape: &ToolShape<'_>,
    marker: &str,
    valid_calls_allowed: bool,
) -> Option<PlannedCall> {
    let (name, kind) = match shape.required.first() {
        Some(name) => (name, CallKind::Misspelt),
        None if valid_calls_allowed => {
            (shape.properties.keys().next()?, CallKind::MisspeltOptional)
        }
        None => return None,
    };
    let typo = misspell(name, &shape.properties)?;
    let mut arguments = valid_arguments(shape);
    if let Some(object) = arguments.as_object_mut() {
        object.remove(name);
        object.insert(typo.clone(), Value::String(marker.to_owned()));
    }
    Some(PlannedCall {
        kind,
        arguments,
        parameters: vec![name.clone()],
        typo: Some(typo),
        carries_marker: true,
    })
}

/// A near miss of `name` an agent could plausibly type, that is not another parameter.
pub fn misspell(name: &str, properties: &Map<String, Value>) -> Option<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut candidates = Vec::new();
    for index in 1..chars.len().saturating_sub(1) {
        if let (Some(left), Some(right)) = (chars.get(index), chars.get(index + 1))
            && left != right
        {
            let mut swapped = chars.clone();
            swapped.swap(index, index + 1);
            candidates.push(swapped.into_iter().collect::<String>());
        }
    }
    if chars.len() > 2 {
        let mut dropped = chars.clone();
        dropped.remove(chars.len() / 2);
        candidates.push(dropped.into_iter().collect());
    }
    if let Some(last) = chars.last() {
        candidates.push(format!("{name}{last}"));
    }
    candidates
        .into_iter()
        .find(|candidate| candidate != name && !properties.contains_key(candidate))
}

/// The JSON types a property schema admits, when it says.
fn admitted_types(schema: &Value) -> Option<Vec<String>> {
    let from_type = |schema: &Value| -> Option<Vec<String>> {
        match schema.get("type")? {
            Value::String(name) => Some(vec![name.clone()]),
            Value::Array(names) => Some(
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
            ),
            _ => None,
        }
    };
    if let Some(types) = from_type(schema) {
        return Some(types);
    }
    if let Some(members) = schema.get("enum").and_then(Value::as_array) {
        return Some(
            members
                .iter()
                .map(|member| toolwarden_core::contract::json_type_name(member).to_owned())
                .collect(),
        );
    }
    let alternatives = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)?;
    let mut types = Vec::new();
    for alternative in alternatives {
        types.extend(from_type(alternative)?);
    }
    Some(types)
}

/// A value of a type the schema does not admit, with the marker inside it.
fn wrong_value(schema: &Value, marker: &str) -> Option<Value> {
    let types = admitted_types(schema)?;
    let admits = |name: &str| types.iter().any(|admitted| admitted == name);
    if !admits("string") {
        Some(Value::String(marker.to_owned()))
    } else if !admits("array") {
        Some(json!([marker]))
    } else if !admits("object") {
        Some(json!({ "value": marker }))
    } else {
        None
    }
}

/// Arguments that satisfy the schema as far as a sample can: every required parameter filled.
pub fn valid_arguments(shape: &ToolShape<'_>) -> Value {
    let mut arguments = Map::new();
    for name in &shape.required {
        let schema = shape.properties.get(name).unwrap_or(&Value::Null);
        arguments.insert(name.clone(), sample_value(schema, 0));
    }
    Value::Object(arguments)
}

fn sample_value(schema: &Value, depth: usize) -> Value {
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|members| members.first())
    {
        return first.clone();
    }
    if let Some(value) = schema.get("default") {
        return value.clone();
    }
    if let Some(first) = schema
        .get("examples")
        .and_then(Value::as_array)
        .and_then(|examples| examples.first())
    {
        return first.clone();
    }
    let kind = admitted_types(schema)
        .and_then(|types| types.into_iter().find(|name| name != "null"))
        .unwrap_or_else(|| "string".to_owned());
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    match kind.as_str() {
        "integer" | "number" => {
            let low = bound("minimum").or(bound("exclusiveMinimum").map(|low| low + 1.0));
            let high = bound("maximum").or(bound("exclusiveMaximum").map(|high| high - 1.0));
            let pick = match (low, high) {
                (Some(low), _) => low.ceil(),
                (None, Some(high)) if high < 1.0 => high.floor(),
                _ => 1.0,
            };
            // Whole numbers in a range the schema allows convert exactly.
            #[allow(clippy::cast_possible_truncation)]
            let whole = pick as i64;
            json!(whole)
        }
        "boolean" => Value::Bool(false),
        "null" => Value::Null,
        "array" => {
            let count = schema
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .min(8);
            let items = schema.get("items").unwrap_or(&Value::Null);
            Value::Array((0..count).map(|_| sample_value(items, depth + 1)).collect())
        }
        "object" => {
            let mut object = Map::new();
            if depth < MAX_SAMPLE_DEPTH {
                let nested = ToolShape::of(&json!({"inputSchema": schema}))
                    .properties
                    .clone();
                for name in schema
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    let member = nested.get(name).unwrap_or(&Value::Null);
                    object.insert(name.to_owned(), sample_value(member, depth + 1));
                }
            }
            Value::Object(object)
        }
        _ => Value::String(sample_string(schema)),
    }
}

fn sample_string(schema: &Value) -> String {
    let by_format = match schema.get("format").and_then(Value::as_str) {
        Some("email") => Some("user@example.com"),
        Some("uri" | "url" | "uri-reference" | "iri") => Some("https://example.com/"),
        Some("date") => Some("2025-01-01"),
        Some("date-time") => Some("2025-01-01T00:00:00Z"),
        Some("time") => Some("12:00:00Z"),
        Some("uuid") => Some("00000000-0000-4000-8000-000000000000"),
        Some("ipv4") => Some("192.0.2.1"),
        _ => None,
    };
    if let Some(text) = by_format {
        return text.to_owned();
    }
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0);
    let max = schema.get("maxLength").and_then(Value::as_u64);
    let mut text = "sample".to_owned();
    while (text.len() as u64) < min.min(1024) {
        text.push('x');
    }
    if let Some(max) = max {
        text.truncate(usize::try_from(max).unwrap_or(usize::MAX));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARKER: &str = "ghp_TESTMARKER";

    fn add_tool() -> Value {
        json!({
            "name": "add",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"]
            },
            "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true}
        })
    }

    fn kinds(plan: &ToolPlan) -> Vec<CallKind> {
        plan.calls.iter().map(|call| call.kind).collect()
    }

    #[test]
    fn a_read_only_tool_gets_the_whole_battery() {
        let plan = plan(&add_tool(), MARKER, false);
        assert_eq!(
            kinds(&plan),
            vec![
                CallKind::WrongType,
                CallKind::MissingRequired,
                CallKind::UnknownKey,
                CallKind::Misspelt,
                CallKind::Valid
            ]
        );
        let wrong = &plan.calls[0];
        assert_eq!(wrong.arguments, json!({"a": MARKER, "b": 1}));
        assert_eq!(wrong.parameters, vec!["a"]);
        assert_eq!(
            plan.calls[2].arguments,
            json!({"a": 1, "b": 1, "wait_for_previous": true})
        );
        assert!(plan.skipped.is_empty());
    }

    #[test]
    fn a_tool_that_is_not_read_only_only_gets_calls_that_must_fail() {
        let mut tool = add_tool();
        tool["annotations"] = json!({"destructiveHint": true});
        let plan = plan(&tool, MARKER, false);
        assert_eq!(
            kinds(&plan),
            vec![
                CallKind::WrongType,
                CallKind::MissingRequired,
                CallKind::Misspelt
            ]
        );
        let misspelt = &plan.calls[2];
        // The real parameter is gone, so the call lacks a required parameter.
        assert!(misspelt.arguments.get("a").is_none());
        assert_eq!(misspelt.arguments["b"], 1);
        let skipped: Vec<_> = plan.skipped.iter().map(|skip| skip.kind).collect();
        assert_eq!(skipped, vec![CallKind::UnknownKey, CallKind::Valid]);
        assert!(plan.skipped[0].reason.contains("--allow-valid-calls"));
        let allowed = super::plan(&tool, MARKER, true);
        assert_eq!(allowed.calls.len(), 5);
    }

    #[test]
    fn string_parameters_get_an_array_carrying_the_marker() {
        let tool = json!({"name": "echo", "inputSchema": {"type": "object",
            "properties": {"text": {"type": "string"}}, "required": ["text"]}});
        let plan = plan(&tool, MARKER, false);
        assert_eq!(plan.calls[0].arguments, json!({"text": [MARKER]}));
        let misspelt = plan
            .calls
            .iter()
            .find(|c| c.kind == CallKind::Misspelt)
            .unwrap();
        assert_eq!(misspelt.typo.as_deref(), Some("txet"));
        assert_eq!(misspelt.arguments, json!({"txet": MARKER}));
    }

    #[test]
    fn a_misspelt_optional_parameter_is_an_unknown_key_call() {
        let tool = json!({"name": "wait", "inputSchema": {"type": "object",
            "properties": {"ms": {"type": "integer"}}}, "annotations": {"readOnlyHint": true}});
        let plan = plan(&tool, MARKER, false);
        let misspelt = plan.calls.iter().find(|c| c.typo.is_some()).unwrap();
        assert_eq!(misspelt.kind, CallKind::MisspeltOptional);
        assert!(!misspelt.kind.is_invalid_input());
        assert_eq!(misspelt.arguments, json!({"mss": MARKER}));
        let mut not_read_only = tool.clone();
        not_read_only["annotations"] = json!({});
        let plan = super::plan(&not_read_only, MARKER, false);
        assert!(plan.calls.iter().all(|c| c.typo.is_none()));
    }

    #[test]
    fn a_tool_without_parameters_is_mostly_not_applicable() {
        let tool = json!({"name": "list", "inputSchema": {"type": "object", "properties": {}}});
        let plan = plan(&tool, MARKER, false);
        assert!(plan.calls.is_empty());
        let reasons: Vec<_> = plan.skipped.iter().map(|s| s.reason.as_str()).collect();
        assert!(reasons.contains(&"no parameters"));
        assert!(reasons.contains(&"no required parameters"));
    }

    #[test]
    fn a_parameter_that_admits_everything_cannot_get_a_wrong_type() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object",
            "properties": {"x": {"type": ["string", "array", "object"]}, "y": {}},
            "required": ["x"]}});
        let plan = plan(&tool, MARKER, false);
        assert!(!kinds(&plan).contains(&CallKind::WrongType));
    }

    #[test]
    fn samples_respect_enums_formats_and_bounds() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object", "properties": {
            "key": {"type": "string", "enum": ["theme", "language"]},
            "to": {"type": "string", "format": "email"},
            "n": {"type": "integer", "minimum": 5},
            "id": {"type": "string", "minLength": 8},
            "tags": {"type": "array", "minItems": 1, "items": {"type": "string"}},
            "where": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}
        }, "required": ["key", "to", "n", "id", "tags", "where"]}});
        let arguments = valid_arguments(&ToolShape::of(&tool));
        assert_eq!(
            arguments,
            json!({"key": "theme", "to": "user@example.com", "n": 5, "id": "samplexx",
                   "tags": ["sample"], "where": {"x": 1}})
        );
    }

    #[test]
    fn misspellings_avoid_real_parameter_names() {
        let mut properties = Map::new();
        properties.insert("ab".into(), json!({}));
        properties.insert("abb".into(), json!({}));
        assert_eq!(misspell("ab", &properties), None);
        properties.remove("abb");
        assert_eq!(misspell("ab", &properties).as_deref(), Some("abb"));
        assert_eq!(misspell("path", &Map::new()).as_deref(), Some("ptah"));
    }
}
