//! Validation of `tools/call` arguments against a tool's `inputSchema`, producing field issues
//! that carry only schema-side facts, paths and JSON type names.
//!
//! The validator library's own messages repeat the values that failed (`"ghp_..." is not of type
//! "integer"`), so nothing here ever formats one of its errors: issues are built from the error
//! kind, the instance path and the schema.

use std::collections::HashSet;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, Retrieve, Uri, ValidationError, Validator};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::contract::{FieldIssue, Problem, json_type_name};

/// What to do with argument keys a schema does not list when the schema itself is silent about
/// extra keys at the top level (most servers omit `additionalProperties`).
///
/// Keys an explicit `additionalProperties: false` (or `unevaluatedProperties: false`) forbids are
/// reported under every policy, `Allow` included: the schema itself says the call is invalid, so
/// the server would refuse it anyway.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnknownArguments {
    /// Report them: a typo on a destructive tool must not run with defaults.
    #[default]
    Reject,
    /// Report them as `unknown` so the caller can remove them and forward the rest.
    Strip,
    /// Ignore them.
    Allow,
}

/// Why a tool's schema could not be compiled. An operator fault: the gateway logs it once and
/// forwards calls to that tool unvalidated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    #[error(
        "the schema refers to `{uri}`, which it does not contain; remote schemas are never fetched"
    )]
    RemoteReference { uri: String },
    #[error("the schema is not valid JSON Schema: {reason} (at `{location}`)")]
    Invalid { reason: String, location: String },
}

/// Most issues a single validation reports; the rest are counted. A broken 10 000-item array
/// must not produce a 10 000-line error.
pub const MAX_ISSUES: usize = 50;

/// Longest unknown key shown as it was sent; longer keys are cut.
const MAX_KEY_CHARS: usize = 40;

/// A compiled `inputSchema` (or `outputSchema`), built once per catalog version.
pub struct ArgumentValidator {
    schema: Value,
    validator: Validator,
    top_level: TopLevelKeys,
}

impl std::fmt::Debug for ArgumentValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgumentValidator")
            .field("draft", &self.validator.draft())
            .field("parameters", &self.top_level.names)
            .finish_non_exhaustive()
    }
}

/// The result of checking one call's arguments.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArgumentCheck {
    /// Every failing field, unknown keys included, each reported once, at most [`MAX_ISSUES`].
    pub issues: Vec<FieldIssue>,
    /// One entry per `unknown` issue, with what is needed to strip it or suggest a parameter.
    pub unknown_keys: Vec<UnknownKey>,
    /// Issues left out beyond [`MAX_ISSUES`].
    pub omitted: usize,
}

/// An argument key the schema does not know.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownKey {
    /// The safe JSON Pointer shown to the model (secret-shaped keys masked, long keys cut).
    pub path: String,
    /// The key as it may be shown, `None` when it had to be masked or cut (then it is not
    /// compared with parameter names either).
    pub shown_key: Option<String>,
    /// The parameter names the schema defines at that level, for did-you-mean.
    pub known: Vec<String>,
    /// Where the key sits, raw, for stripping. Caller input: never shown.
    location: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

impl ArgumentCheck {
    pub fn is_valid(&self) -> bool {
        self.issues.is_empty()
    }

    /// True when the only problems are unknown keys, so stripping them leaves a call the schema
    /// accepts as far as this check could tell.
    pub fn only_unknown_keys(&self) -> bool {
        self.omitted == 0
            && !self.issues.is_empty()
            && self
                .issues
                .iter()
                .all(|issue| issue.problem == Problem::Unknown)
    }

    /// Removes every unknown key from `arguments` and returns their safe paths.
    pub fn strip_unknown_keys(&self, arguments: &mut Value) -> Vec<String> {
        let mut stripped = Vec::new();
        for unknown in &self.unknown_keys {
            if remove_at(arguments, &unknown.location) {
                stripped.push(unknown.path.clone());
            }
        }
        stripped
    }
}

fn remove_at(root: &mut Value, location: &[Step]) -> bool {
    let Some((last, parents)) = location.split_last() else {
        return false;
    };
    let mut current = root;
    for step in parents {
        let next = match (step, current) {
            (Step::Key(key), Value::Object(map)) => map.get_mut(key),
            (Step::Index(index), Value::Array(items)) => items.get_mut(*index),
            _ => None,
        };
        match next {
            Some(value) => current = value,
            None => return false,
        }
    }
    match (last, current) {
        (Step::Key(key), Value::Object(map)) => map.remove(key).is_some(),
        _ => false,
    }
}

/// Refuses every URI: a tool schema is validated with what it contains, never with what a
/// server (or whoever controls the URI) serves later.
struct RefuseEveryUri;

impl Retrieve for RefuseEveryUri {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("refused to fetch {uri}").into())
    }
}

impl ArgumentValidator {
    /// Compiles a schema: JSON Schema 2020-12 unless its `$schema` names another draft.
    /// An unrecognised `$schema` is read as 2020-12 rather than fetched.
    pub fn compile(input_schema: &Value) -> Result<ArgumentValidator, SchemaError> {
        let mut options = jsonschema::options()
            .with_retriever(RefuseEveryUri)
            .should_validate_formats(true)
            .should_ignore_unknown_formats(true);
        if Draft::default().detect(input_schema) == Draft::Unknown {
            options = options.with_draft(Draft::Draft202012);
        }
        let validator = options
            .build(input_schema)
            .map_err(|error| schema_error(&error))?;
        Ok(ArgumentValidator {
            top_level: TopLevelKeys::from_schema(input_schema),
            schema: input_schema.clone(),
            validator,
        })
    }

    /// Parameter names the schema defines at the top level.
    pub fn parameter_names(&self) -> &[String] {
        &self.top_level.names
    }

    /// Every failing field of `arguments`; empty when the call is valid. `Reject` and `Strip`
    /// report unknown keys alike (use [`ArgumentValidator::check`] to strip them).
    pub fn validate(&self, arguments: &Value, unknown: UnknownArguments) -> Vec<FieldIssue> {
        self.check(arguments, unknown).issues
    }

    /// Like [`ArgumentValidator::validate`], with the unknown keys' locations.
    pub fn check(&self, arguments: &Value, unknown: UnknownArguments) -> ArgumentCheck {
        let silent_extras = match unknown {
            UnknownArguments::Allow => Vec::new(),
            UnknownArguments::Reject | UnknownArguments::Strip => {
                self.top_level.unlisted_keys(arguments)
            }
        };
        // The common case (a valid call) costs one `is_valid` pass and a key scan.
        if silent_extras.is_empty() && self.validator.is_valid(arguments) {
            return ArgumentCheck::default();
        }
        let mut collector = Collector::new(&self.schema, arguments);
        for error in self.validator.iter_errors(arguments) {
            collector.add_error(&error);
        }
        for key in silent_extras {
            collector.add_unknown(&[], key, self.top_level.names.clone());
        }
        collector.finish()
    }
}

fn schema_error(error: &ValidationError<'_>) -> SchemaError {
    if let ValidationErrorKind::Referencing(jsonschema::ReferencingError::Unretrievable {
        uri,
        ..
    }) = error.kind()
    {
        return SchemaError::RemoteReference { uri: uri.clone() };
    }
    let location = match error.instance_path().as_str() {
        "" => "/".to_owned(),
        path => path.to_owned(),
    };
    SchemaError::Invalid {
        reason: error.masked().to_string(),
        location,
    }
}

/// The top-level parameter names and whether the schema says anything about other keys.
#[derive(Debug)]
struct TopLevelKeys {
    names: Vec<String>,
    name_set: HashSet<String>,
    patterns: Vec<regex::Regex>,
    /// True when the top level names no parameters, or decides extra keys itself
    /// (`additionalProperties`/`unevaluatedProperties`, then the validator reports them), or has
    /// a pattern we cannot evaluate: no key is reported as unlisted by us.
    open: bool,
}

impl TopLevelKeys {
    fn from_schema(schema: &Value) -> TopLevelKeys {
        let mut keys = TopLevelKeys {
            names: Vec::new(),
            name_set: HashSet::new(),
            patterns: Vec::new(),
            open: false,
        };
        let mut declares_keys = false;
        let mut seen_refs = HashSet::new();
        keys.gather(schema, schema, &mut declares_keys, &mut seen_refs, 0);
        // A schema that lists no parameters at all (`{"type": "object"}`) is free-form: there
        // is nothing a key could be "unknown" against.
        if !declares_keys {
            keys.open = true;
        }
        keys
    }

    fn gather(
        &mut self,
        root: &Value,
        node: &Value,
        declares_keys: &mut bool,
        seen_refs: &mut HashSet<String>,
        depth: usize,
    ) {
        // Composition chains are short in real schemas; the bound keeps cycles harmless.
        if depth > 16 {
            self.open = true;
            return;
        }
        let Some(object) = node.as_object() else {
            return;
        };
        if object.contains_key("additionalProperties")
            || object.contains_key("unevaluatedProperties")
        {
            self.open = true;
        }
        if let Some(properties) = object.get("properties").and_then(Value::as_object) {
            *declares_keys = true;
            for name in properties.keys() {
                if self.name_set.insert(name.clone()) {
                    self.names.push(name.clone());
                }
            }
        }
        if let Some(patterns) = object.get("patternProperties").and_then(Value::as_object) {
            *declares_keys = true;
            for pattern in patterns.keys() {
                match regex::Regex::new(pattern) {
                    Ok(regex) => self.patterns.push(regex),
                    Err(_) => self.open = true,
                }
            }
        }
        for keyword in ["allOf", "anyOf", "oneOf"] {
            if let Some(members) = object.get(keyword).and_then(Value::as_array) {
                for member in members {
                    self.gather(root, member, declares_keys, seen_refs, depth + 1);
                }
            }
        }
        for keyword in ["then", "else"] {
            if let Some(member) = object.get(keyword) {
                self.gather(root, member, declares_keys, seen_refs, depth + 1);
            }
        }
        if let Some(members) = object.get("dependentSchemas").and_then(Value::as_object) {
            for member in members.values() {
                self.gather(root, member, declares_keys, seen_refs, depth + 1);
            }
        }
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            match resolve_local(root, reference) {
                Some(target) if seen_refs.insert(reference.to_owned()) => {
                    self.gather(root, target, declares_keys, seen_refs, depth + 1);
                }
                Some(_) => {}
                None => self.open = true,
            }
        }
    }

    fn unlisted_keys<'a>(&self, arguments: &'a Value) -> Vec<&'a str> {
        if self.open {
            return Vec::new();
        }
        let Some(object) = arguments.as_object() else {
            return Vec::new();
        };
        object
            .keys()
            .filter(|key| {
                !self.name_set.contains(key.as_str())
                    && !self.patterns.iter().any(|regex| regex.is_match(key))
            })
            .map(String::as_str)
            .collect()
    }
}

/// Resolves `#` and `#/json/pointer` references within the schema itself.
fn resolve_local<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(&percent_decode(pointer)?)
}

fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        if byte == b'%' {
            let hex = text.get(index + 1..index + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(byte);
            index += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Turns validator errors into issues, deduplicated and capped.
struct Collector<'a> {
    schema: &'a Value,
    arguments: &'a Value,
    check: ArgumentCheck,
    seen: HashSet<(String, Problem)>,
}

impl<'a> Collector<'a> {
    fn new(schema: &'a Value, arguments: &'a Value) -> Self {
        Collector {
            schema,
            arguments,
            check: ArgumentCheck::default(),
            seen: HashSet::new(),
        }
    }

    fn finish(self) -> ArgumentCheck {
        self.check
    }

    fn push(&mut self, issue: FieldIssue) -> bool {
        if !self.seen.insert((issue.path.clone(), issue.problem)) {
            return false;
        }
        if self.check.issues.len() >= MAX_ISSUES {
            self.check.omitted += 1;
            return false;
        }
        self.check.issues.push(issue);
        true
    }

    fn add_unknown(&mut self, parent: &[Step], key: &str, known: Vec<String>) {
        let mut location = parent.to_vec();
        location.push(Step::Key(key.to_owned()));
        let shown_key = shown_key(key);
        let path = safe_pointer(&location);
        let issue = FieldIssue {
            path: path.clone(),
            problem: Problem::Unknown,
            expected: None,
            allowed: None,
            got: None,
        };
        if self.push(issue) {
            self.check.unknown_keys.push(UnknownKey {
                path,
                shown_key,
                known,
                location,
            });
        }
    }

    fn add_error(&mut self, error: &ValidationError<'_>) {
        let location = steps_of(self.arguments, error.instance_path().as_str());
        let path = safe_pointer(&location);
        let got = Some(json_type_name(error.instance()));
        let schema_path = error.schema_path().as_str();
        let issue = |problem: Problem, expected: Option<String>| FieldIssue {
            path: path.clone(),
            problem,
            expected,
            allowed: None,
            got,
        };
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                let known = self.sibling_names(schema_path);
                for key in unexpected {
                    self.add_unknown(&location, key, known.clone());
                }
            }
            ValidationErrorKind::Required { property } => {
                let mut required = location.clone();
                required.push(Step::Key(property.as_str().unwrap_or_default().to_owned()));
                self.push(FieldIssue {
                    path: safe_pointer(&required),
                    problem: Problem::Required,
                    expected: self.required_type(schema_path, property.as_str()),
                    allowed: None,
                    got: None,
                });
            }
            ValidationErrorKind::Type { kind } => {
                // The schema's own order reads better ("string or null") than the set's.
                let declared = self
                    .schema_at(schema_path)
                    .and_then(|declared| types_of_type_keyword(declared))
                    .map(|names| names.join(" or "));
                let expected = declared.unwrap_or_else(|| type_kind_words(kind));
                self.push(issue(Problem::Type, Some(expected)));
            }
            ValidationErrorKind::Enum { options } => {
                let allowed = match options.as_ref() {
                    Value::Array(members) => members.clone(),
                    other => vec![other.clone()],
                };
                self.push(FieldIssue {
                    allowed: Some(allowed),
                    ..issue(Problem::Enum, None)
                });
            }
            ValidationErrorKind::Constant { expected_value } => {
                self.push(FieldIssue {
                    allowed: Some(vec![expected_value.as_ref().clone()]),
                    ..issue(Problem::Const, None)
                });
            }
            ValidationErrorKind::Format { format } => {
                self.push(issue(Problem::Format, Some(format.clone())));
            }
            ValidationErrorKind::ContentEncoding { content_encoding } => {
                self.push(issue(Problem::Format, Some(content_encoding.clone())));
            }
            ValidationErrorKind::FromUtf8 { .. } => {
                self.push(issue(Problem::Format, Some("UTF-8 text".to_owned())));
            }
            ValidationErrorKind::ContentMediaType { content_media_type } => {
                self.push(issue(Problem::Format, Some(content_media_type.clone())));
            }
            ValidationErrorKind::Minimum { limit } => {
                self.push(issue(Problem::Range, Some(format!(">= {limit}"))));
            }
            ValidationErrorKind::Maximum { limit } => {
                self.push(issue(Problem::Range, Some(format!("<= {limit}"))));
            }
            ValidationErrorKind::ExclusiveMinimum { limit } => {
                self.push(issue(Problem::Range, Some(format!("> {limit}"))));
            }
            ValidationErrorKind::ExclusiveMaximum { limit } => {
                self.push(issue(Problem::Range, Some(format!("< {limit}"))));
            }
            ValidationErrorKind::MultipleOf { multiple_of } => {
                self.push(issue(
                    Problem::Range,
                    Some(format!("a multiple of {multiple_of}")),
                ));
            }
            ValidationErrorKind::Pattern { pattern } => {
                self.push(issue(Problem::Pattern, Some(pattern.clone())));
            }
            ValidationErrorKind::BacktrackLimitExceeded { .. }
            | ValidationErrorKind::RegexEngineFailure { .. } => {
                let pattern = self
                    .schema_at(schema_path)
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                self.push(issue(Problem::Pattern, pattern));
            }
            ValidationErrorKind::MinLength { limit } => {
                self.push(issue(Problem::Length, Some(at_least(*limit, "character"))));
            }
            ValidationErrorKind::MaxLength { limit } => {
                self.push(issue(Problem::Length, Some(at_most(*limit, "character"))));
            }
            ValidationErrorKind::MinItems { limit } => {
                self.push(issue(Problem::Count, Some(at_least(*limit, "item"))));
            }
            ValidationErrorKind::MaxItems { limit } => {
                self.push(issue(Problem::Count, Some(at_most(*limit, "item"))));
            }
            ValidationErrorKind::AdditionalItems { limit } => {
                let limit = u64::try_from(*limit).unwrap_or(u64::MAX);
                self.push(issue(Problem::Count, Some(at_most(limit, "item"))));
            }
            ValidationErrorKind::MinProperties { limit } => {
                self.push(issue(Problem::Count, Some(at_least(*limit, "property"))));
            }
            ValidationErrorKind::MaxProperties { limit } => {
                self.push(issue(Problem::Count, Some(at_most(*limit, "property"))));
            }
            ValidationErrorKind::UniqueItems => {
                self.push(issue(Problem::Unique, Some("unique items".to_owned())));
            }
            ValidationErrorKind::AnyOf { context }
            | ValidationErrorKind::OneOfNotValid { context } => {
                self.add_composition(error, schema_path, context, &path, got);
            }
            ValidationErrorKind::OneOfMultipleValid { .. } => {
                let expected = self.alternatives_words(schema_path);
                self.push(issue(
                    Problem::Composition,
                    Some(format!("exactly one of {expected}")),
                ));
            }
            ValidationErrorKind::Contains => {
                self.push(issue(
                    Problem::Count,
                    Some("at least one item matching the schema".to_owned()),
                ));
            }
            ValidationErrorKind::UnevaluatedItems { .. } => {
                self.push(issue(
                    Problem::Count,
                    Some("no items beyond those the schema lists".to_owned()),
                ));
            }
            ValidationErrorKind::FalseSchema => {
                self.push(issue(Problem::Other, Some("no value at all".to_owned())));
            }
            ValidationErrorKind::Not { .. } => {
                self.push(issue(
                    Problem::Other,
                    Some("a value the schema does not exclude".to_owned()),
                ));
            }
            ValidationErrorKind::PropertyNames { .. } => {
                self.push(issue(
                    Problem::Other,
                    Some("property names the schema allows".to_owned()),
                ));
            }
            ValidationErrorKind::Custom { .. } | ValidationErrorKind::Referencing(_) => {
                self.push(issue(Problem::Other, None));
            }
        }
    }

    /// Under `anyOf`/`oneOf` the nested errors carry values, so the issue is built from the
    /// schema's alternatives. When exactly one alternative accepts the sent JSON type (the
    /// usual `T or null`), its own issues are far more useful than "must be T or null", so those
    /// are reported instead.
    fn add_composition(
        &mut self,
        error: &ValidationError<'_>,
        schema_path: &str,
        context: &[Vec<ValidationError<'static>>],
        path: &str,
        got: Option<&'static str>,
    ) {
        let alternatives = self.alternatives(schema_path);
        let sent = error.instance();
        let admitting: Vec<usize> = alternatives
            .iter()
            .enumerate()
            .filter(|(_, types)| types.as_ref().is_none_or(|types| admits(types, sent)))
            .map(|(index, _)| index)
            .collect();
        if let [only] = admitting.as_slice()
            && let Some(errors) = context.get(*only)
            && !errors.is_empty()
        {
            for inner in errors {
                self.add_error(inner);
            }
            return;
        }
        self.push(FieldIssue {
            path: path.to_owned(),
            problem: Problem::Composition,
            // When several alternatives take the sent type, type names cannot tell them apart.
            expected: Some(if admitting.len() >= 2 {
                alternatives_count_words(alternatives.len())
            } else {
                words_for_alternatives(&alternatives)
            }),
            allowed: None,
            got,
        });
    }

    fn schema_at(&self, schema_path: &str) -> Option<&'a Value> {
        if schema_path.is_empty() {
            return Some(self.schema);
        }
        self.schema.pointer(schema_path)
    }

    /// The type names each `anyOf`/`oneOf` alternative allows (`None`: any type).
    fn alternatives(&self, schema_path: &str) -> Vec<Option<Vec<&'static str>>> {
        let Some(Value::Array(members)) = self.schema_at(schema_path) else {
            return Vec::new();
        };
        members
            .iter()
            .map(|member| types_of(self.schema, member, 0))
            .collect()
    }

    fn alternatives_words(&self, schema_path: &str) -> String {
        words_for_alternatives(&self.alternatives(schema_path))
    }

    /// The parameter names of the object schema that owns an `additionalProperties` keyword.
    fn sibling_names(&self, schema_path: &str) -> Vec<String> {
        let owner = schema_path
            .rsplit_once('/')
            .and_then(|(parent, _)| self.schema_at(parent));
        owner
            .and_then(|schema| schema.get("properties"))
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The declared type of a missing required property, when the schema says.
    fn required_type(&self, schema_path: &str, property: Option<&str>) -> Option<String> {
        let owner = schema_path
            .rsplit_once('/')
            .and_then(|(parent, _)| self.schema_at(parent))?;
        let declared = owner.get("properties")?.get(property?)?;
        types_of(self.schema, declared, 0).map(|types| types.join(" or "))
    }
}

/// The JSON types a schema allows, following local `$ref`s; `None` when it does not say.
fn types_of(root: &Value, schema: &Value, depth: usize) -> Option<Vec<&'static str>> {
    if depth > 8 {
        return None;
    }
    let object = schema.as_object()?;
    if let Some(declared) = object.get("type") {
        return types_of_type_keyword(declared);
    }
    if let Some(constant) = object.get("const") {
        return Some(vec![json_type_name(constant)]);
    }
    if let Some(Value::Array(members)) = object.get("enum") {
        let mut names: Vec<&'static str> = Vec::new();
        for member in members {
            let name = json_type_name(member);
            if !names.contains(&name) {
                names.push(name);
            }
        }
        return Some(names);
    }
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        return resolve_local(root, reference).and_then(|target| types_of(root, target, depth + 1));
    }
    if object.contains_key("properties") {
        return Some(vec!["object"]);
    }
    if object.contains_key("items") || object.contains_key("prefixItems") {
        return Some(vec!["array"]);
    }
    None
}

/// The names a `type` keyword lists, in the schema's order.
fn types_of_type_keyword(declared: &Value) -> Option<Vec<&'static str>> {
    let names: Vec<&'static str> = match declared {
        Value::String(name) => static_type_name(name).into_iter().collect(),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .filter_map(static_type_name)
            .collect(),
        _ => Vec::new(),
    };
    (!names.is_empty()).then_some(names)
}

fn static_type_name(name: &str) -> Option<&'static str> {
    Some(match name {
        "null" => "null",
        "boolean" => "boolean",
        "integer" => "integer",
        "number" => "number",
        "string" => "string",
        "array" => "array",
        "object" => "object",
        _ => return None,
    })
}

fn admits(types: &[&'static str], value: &Value) -> bool {
    let sent = json_type_name(value);
    types
        .iter()
        .any(|declared| *declared == sent || (*declared == "number" && sent == "integer"))
}

fn words_for_alternatives(alternatives: &[Option<Vec<&'static str>>]) -> String {
    let mut names: Vec<&'static str> = Vec::new();
    let mut any_shape = false;
    for alternative in alternatives {
        match alternative {
            Some(types) => {
                for name in types {
                    if !names.contains(name) {
                        names.push(name);
                    }
                }
            }
            None => any_shape = true,
        }
    }
    if names.is_empty() || any_shape {
        return format!(
            "one of the {} alternatives the schema lists",
            alternatives.len()
        );
    }
    names.join(" or ")
}

fn alternatives_count_words(count: usize) -> String {
    format!("one of the {count} alternatives the schema lists")
}

fn type_kind_words(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(single) => single.as_str().to_owned(),
        TypeKind::Multiple(set) => set
            .iter()
            .map(|single| single.as_str())
            .collect::<Vec<_>>()
            .join(" or "),
    }
}

fn at_least(limit: u64, unit: &str) -> String {
    format!("at least {limit} {}", plural(limit, unit))
}

fn at_most(limit: u64, unit: &str) -> String {
    format!("at most {limit} {}", plural(limit, unit))
}

fn plural(count: u64, unit: &str) -> String {
    match (count, unit) {
        (1, _) => unit.to_owned(),
        (_, "property") => "properties".to_owned(),
        _ => format!("{unit}s"),
    }
}

/// Splits an instance pointer into steps, telling array indices from object keys by the value
/// actually walked (a key may be all digits).
fn steps_of(arguments: &Value, pointer: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut current = Some(arguments);
    for raw in pointer.split('/').skip(1) {
        let segment = raw.replace("~1", "/").replace("~0", "~");
        let step = match (current, segment.parse::<usize>()) {
            (Some(Value::Array(_)), Ok(index)) => Step::Index(index),
            _ => Step::Key(segment),
        };
        current = match (&step, current) {
            (Step::Index(index), Some(Value::Array(items))) => items.get(*index),
            (Step::Key(key), Some(Value::Object(map))) => map.get(key),
            _ => None,
        };
        steps.push(step);
    }
    steps
}

/// The JSON Pointer shown for a location: keys are caller input, so secret-shaped ones are
/// masked and overlong ones cut.
fn safe_pointer(location: &[Step]) -> String {
    let mut pointer = String::new();
    for step in location {
        pointer.push('/');
        match step {
            Step::Index(index) => pointer.push_str(&index.to_string()),
            Step::Key(key) => {
                let shown = shown_segment(key);
                pointer.push_str(&shown.replace('~', "~0").replace('/', "~1"));
            }
        }
    }
    pointer
}

fn shown_key(key: &str) -> Option<String> {
    let fit = !looks_like_secret(key)
        && key.chars().count() <= MAX_KEY_CHARS
        && !key.chars().any(char::is_control);
    fit.then(|| key.to_owned())
}

fn shown_segment(key: &str) -> String {
    if looks_like_secret(key) {
        return "‹masked key›".to_owned();
    }
    if key.chars().count() > MAX_KEY_CHARS {
        let head: String = key.chars().take(MAX_KEY_CHARS).collect();
        return format!("{head}…");
    }
    key.chars()
        .map(|c| if c.is_control() { '\u{FFFD}' } else { c })
        .collect()
}

/// Token prefixes of common providers; a key containing one is a pasted credential.
const SECRET_MARKERS: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "sk-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xapp-",
    "AKIA",
    "ASIA",
    "AIza",
    "eyJ",
    "-----BEGIN",
    "Bearer ",
    "bearer ",
    "Basic ",
];

/// True for keys that look like credentials rather than parameter names: known token
/// prefixes, passwords in URLs, or long mixed-case alphanumeric runs with several digits.
pub(crate) fn looks_like_secret(key: &str) -> bool {
    if SECRET_MARKERS.iter().any(|marker| key.contains(marker)) {
        return true;
    }
    if key.contains("://") && key.contains('@') {
        return true;
    }
    let length = key.chars().count();
    let token_chars = key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '=' | '_' | '-' | '.'));
    let digits = key.chars().filter(char::is_ascii_digit).count();
    let upper = key.chars().any(|c| c.is_ascii_uppercase());
    let lower = key.chars().any(|c| c.is_ascii_lowercase());
    (length >= 20 && token_chars && digits >= 3 && upper && lower)
        || (length >= 32 && token_chars && digits >= 6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn issues(schema: Value, arguments: Value) -> Vec<FieldIssue> {
        ArgumentValidator::compile(&schema)
            .unwrap()
            .validate(&arguments, UnknownArguments::Reject)
    }

    fn paths_and_problems(issues: &[FieldIssue]) -> Vec<(String, &'static str)> {
        issues
            .iter()
            .map(|issue| (issue.path.clone(), issue.problem.as_str()))
            .collect()
    }

    fn add_schema() -> Value {
        json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"]
        })
    }

    #[test]
    fn a_valid_call_has_no_issues() {
        assert!(issues(add_schema(), json!({"a": 1, "b": 2})).is_empty());
    }

    #[test]
    fn every_failing_field_is_listed_with_schema_side_facts() {
        let found = issues(
            add_schema(),
            json!({"a": "ghp_secret", "wait_for_previous": true}),
        );
        assert_eq!(
            found,
            vec![
                FieldIssue {
                    path: "/b".into(),
                    problem: Problem::Required,
                    expected: Some("integer".into()),
                    allowed: None,
                    got: None,
                },
                FieldIssue {
                    path: "/a".into(),
                    problem: Problem::Type,
                    expected: Some("integer".into()),
                    allowed: None,
                    got: Some("string"),
                },
                FieldIssue {
                    path: "/wait_for_previous".into(),
                    problem: Problem::Unknown,
                    expected: None,
                    allowed: None,
                    got: None,
                },
            ]
        );
    }

    #[test]
    fn problems_map_from_each_keyword() {
        let schema = json!({
            "type": "object",
            "properties": {
                "mode": {"enum": ["fast", "slow"]},
                "version": {"const": "v1"},
                "when": {"type": "string", "format": "date-time"},
                "count": {"type": "integer", "minimum": 1, "maximum": 100},
                "step": {"type": "integer", "multipleOf": 5},
                "slug": {"type": "string", "pattern": "^[a-z]+$"},
                "name": {"type": "string", "minLength": 3},
                "tags": {"type": "array", "maxItems": 2, "uniqueItems": true},
                "kind": {"type": ["string", "null"]}
            }
        });
        let found = issues(
            schema,
            json!({
                "mode": "medium", "version": "v2", "when": "tomorrow", "count": 1000,
                "step": 7, "slug": "Not A Slug", "name": "ab", "tags": [1, 1, 2],
                "kind": 5
            }),
        );
        let by_path = |path: &str| {
            found
                .iter()
                .filter(|issue| issue.path == path)
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(by_path("/mode")[0].problem, Problem::Enum);
        assert_eq!(
            by_path("/mode")[0].allowed,
            Some(vec![json!("fast"), json!("slow")])
        );
        assert_eq!(by_path("/version")[0].problem, Problem::Const);
        assert_eq!(by_path("/version")[0].allowed, Some(vec![json!("v1")]));
        assert_eq!(by_path("/when")[0].problem, Problem::Format);
        assert_eq!(by_path("/when")[0].expected.as_deref(), Some("date-time"));
        assert_eq!(by_path("/count")[0].problem, Problem::Range);
        assert_eq!(by_path("/count")[0].expected.as_deref(), Some("<= 100"));
        assert_eq!(
            by_path("/step")[0].expected.as_deref(),
            Some("a multiple of 5")
        );
        assert_eq!(by_path("/slug")[0].problem, Problem::Pattern);
        assert_eq!(by_path("/slug")[0].expected.as_deref(), Some("^[a-z]+$"));
        assert_eq!(by_path("/name")[0].problem, Problem::Length);
        assert_eq!(
            by_path("/name")[0].expected.as_deref(),
            Some("at least 3 characters")
        );
        let tags: Vec<Problem> = by_path("/tags").iter().map(|issue| issue.problem).collect();
        assert!(tags.contains(&Problem::Count) && tags.contains(&Problem::Unique));
        assert_eq!(
            by_path("/kind")[0].expected.as_deref(),
            Some("string or null")
        );
        assert_eq!(by_path("/kind")[0].got, Some("integer"));
    }

    #[test]
    fn nested_paths_point_into_arrays_and_objects() {
        let schema = json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {
                "type": "object",
                "properties": {"id": {"type": "integer"}},
                "required": ["id"],
                "additionalProperties": false
            }}}
        });
        let found = issues(
            schema,
            json!({"items": [{"id": 1}, {"id": 2}, {"id": "x", "idd": 3}, {}]}),
        );
        assert_eq!(
            paths_and_problems(&found),
            vec![
                ("/items/2/id".to_owned(), "type"),
                ("/items/2/idd".to_owned(), "unknown"),
                ("/items/3/id".to_owned(), "required"),
            ]
        );
    }

    #[test]
    fn composition_reports_the_alternatives_types_once() {
        let schema = json!({
            "type": "object",
            "properties": {"target": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}
        });
        let found = issues(schema, json!({"target": {"deep": "sk-abcdef123456"}}));
        assert_eq!(
            found,
            vec![FieldIssue {
                path: "/target".into(),
                problem: Problem::Composition,
                expected: Some("string or integer".into()),
                allowed: None,
                got: Some("object"),
            }]
        );
    }

    #[test]
    fn alternatives_of_the_same_type_are_counted_not_named() {
        let schema = json!({
            "type": "object",
            "properties": {"kind": {"oneOf": [
                {"type": "object", "properties": {"type": {"const": "user"}}, "required": ["type"]},
                {"type": "object", "properties": {"type": {"const": "team"}}, "required": ["type"]}
            ]}}
        });
        let found = issues(schema, json!({"kind": {"type": "robot"}}));
        assert_eq!(
            paths_and_problems(&found),
            vec![("/kind".into(), "composition")]
        );
        assert_eq!(
            found[0].expected.as_deref(),
            Some("one of the 2 alternatives the schema lists")
        );
    }

    #[test]
    fn nullable_composition_reports_the_one_fitting_alternative() {
        let schema = json!({
            "type": "object",
            "properties": {"day": {"anyOf": [
                {"type": "string", "format": "date"}, {"type": "null"}
            ]}}
        });
        let found = issues(schema, json!({"day": "next tuesday"}));
        assert_eq!(paths_and_problems(&found), vec![("/day".into(), "format")]);
    }

    #[test]
    fn unknown_keys_follow_the_policy() {
        let validator = ArgumentValidator::compile(&add_schema()).unwrap();
        let extra = json!({"a": 1, "b": 2, "pathh": "x"});
        assert_eq!(
            validator.validate(&extra, UnknownArguments::Reject)[0].problem,
            Problem::Unknown
        );
        assert_eq!(
            validator.validate(&extra, UnknownArguments::Strip)[0].problem,
            Problem::Unknown
        );
        assert!(
            validator
                .validate(&extra, UnknownArguments::Allow)
                .is_empty()
        );
    }

    #[test]
    fn explicit_additional_properties_false_is_reported_once_under_every_policy() {
        let schema = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "additionalProperties": false
        });
        let validator = ArgumentValidator::compile(&schema).unwrap();
        for policy in [
            UnknownArguments::Reject,
            UnknownArguments::Strip,
            UnknownArguments::Allow,
        ] {
            let found = validator.validate(&json!({"path": "a", "pathh": "b"}), policy);
            assert_eq!(
                paths_and_problems(&found),
                vec![("/pathh".into(), "unknown")]
            );
        }
    }

    #[test]
    fn pattern_properties_and_free_form_schemas_know_their_keys() {
        let patterned = json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "patternProperties": {"^x-": {"type": "string"}}
        });
        assert!(issues(patterned, json!({"name": "a", "x-trace": "b"})).is_empty());
        let free_form = json!({"type": "object"});
        assert!(issues(free_form, json!({"anything": 1})).is_empty());
        let via_all_of = json!({
            "allOf": [{"properties": {"a": {}}}, {"$ref": "#/$defs/more"}],
            "$defs": {"more": {"properties": {"b": {}}}}
        });
        assert_eq!(
            paths_and_problems(&issues(via_all_of, json!({"a": 1, "b": 2, "c": 3}))),
            vec![("/c".into(), "unknown")]
        );
    }

    #[test]
    fn secret_shaped_and_overlong_keys_are_not_shown() {
        let found = issues(
            add_schema(),
            json!({"a": 1, "b": 2, "ghp_abcdefghijklmnop1234567890": 1,
                   "a_very_long_parameter_name_that_goes_on_and_on_forever": 2}),
        );
        let paths: Vec<&str> = found.iter().map(|issue| issue.path.as_str()).collect();
        assert!(paths.contains(&"/‹masked key›"));
        assert!(paths.contains(&"/a_very_long_parameter_name_that_goes_on_…"));
        assert!(!paths.iter().any(|path| path.contains("ghp_")));
    }

    #[test]
    fn stripping_removes_exactly_the_unknown_keys() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "opts": {"type": "object", "properties": {"deep": {}},
                         "additionalProperties": false}
            }
        });
        let validator = ArgumentValidator::compile(&schema).unwrap();
        let mut arguments = json!({"path": "a", "wait_for_previous": true,
                                   "opts": {"deep": 1, "deeper": 2}});
        let check = validator.check(&arguments, UnknownArguments::Strip);
        assert!(check.only_unknown_keys());
        let stripped = check.strip_unknown_keys(&mut arguments);
        assert_eq!(stripped, vec!["/opts/deeper", "/wait_for_previous"]);
        assert_eq!(arguments, json!({"path": "a", "opts": {"deep": 1}}));
        assert!(
            validator
                .validate(&arguments, UnknownArguments::Reject)
                .is_empty()
        );
    }

    #[test]
    fn remote_references_are_refused_without_fetching() {
        let error =
            ArgumentValidator::compile(&json!({"$ref": "https://example.com/x.json"})).unwrap_err();
        assert!(
            matches!(&error, SchemaError::RemoteReference { uri } if uri == "https://example.com/x.json"),
            "{error:?}"
        );
        assert!(error.to_string().contains("never fetched"));
    }

    #[test]
    fn draft_07_schemas_are_read_as_draft_07() {
        // `exclusiveMaximum` is a boolean in draft-04 and a number from draft-06 on; draft-07's
        // `definitions` and `dependencies` must work.
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"n": {"$ref": "#/definitions/small"}},
            "definitions": {"small": {"type": "integer", "exclusiveMaximum": 10}},
            "dependencies": {"n": ["unit"]}
        });
        let found = issues(schema, json!({"n": 10}));
        assert_eq!(
            paths_and_problems(&found),
            vec![("/n".into(), "range"), ("/unit".into(), "required")]
        );
    }

    #[test]
    fn draft_04_and_unknown_meta_schemas_compile_offline() {
        let draft4 = json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object",
            "properties": {"n": {"type": "integer", "maximum": 10, "exclusiveMaximum": true}}
        });
        assert_eq!(
            issues(draft4, json!({"n": 10}))[0].expected.as_deref(),
            Some("< 10")
        );
        let custom = json!({"$schema": "https://example.com/meta", "type": "object"});
        assert!(ArgumentValidator::compile(&custom).is_ok());
    }

    #[test]
    fn recursive_trees_validate() {
        let schema = json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/node"}},
            "$defs": {"node": {
                "type": "object",
                "properties": {"name": {"type": "string"},
                               "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                "required": ["name"]
            }}
        });
        let tree = json!({"root": {"name": "a", "children": [
            {"name": "b", "children": [{"name": "c"}, {"children": []}]}
        ]}});
        assert_eq!(
            paths_and_problems(&issues(schema, tree)),
            vec![("/root/children/0/children/1/name".into(), "required")]
        );
    }

    #[test]
    fn pathological_cycles_compile_and_validate_in_bounded_time() {
        // A reference cycle constrains nothing: the validator treats it as accepting, which
        // is what matters here (no hang, no stack overflow), while the rest of the schema
        // still applies.
        for schema in [
            json!({"$ref": "#"}),
            json!({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}),
        ] {
            let validator = ArgumentValidator::compile(&schema).unwrap();
            assert!(
                validator
                    .validate(
                        &json!({"x": {"y": [1, {"z": 2}]}}),
                        UnknownArguments::Reject
                    )
                    .is_empty()
            );
        }
        let mixed = json!({
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/a"}, "n": {"type": "integer"}},
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}
        });
        assert_eq!(
            paths_and_problems(&issues(mixed, json!({"x": {"y": 1}, "n": "one"}))),
            vec![("/n".into(), "type")]
        );
    }

    #[test]
    fn validators_can_be_shared_across_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<ArgumentValidator>();
    }

    #[test]
    fn expectations_behind_references_come_from_the_target() {
        let schema = json!({
            "type": "object",
            "properties": {"owner": {"$ref": "#/$defs/login"}, "team": {"$ref": "#/$defs/team"}},
            "required": ["team"],
            "$defs": {
                "login": {"type": ["string", "null"]},
                "team": {"type": "object", "properties": {"slug": {"type": "string"}}}
            }
        });
        let found = issues(schema, json!({"owner": 1}));
        assert_eq!(found[0].path, "/team");
        assert_eq!(found[0].expected.as_deref(), Some("object"));
        assert_eq!(found[1].path, "/owner");
        assert_eq!(found[1].expected.as_deref(), Some("string or null"));
    }

    #[test]
    fn issues_are_capped() {
        let schema = json!({
            "type": "object",
            "properties": {"ids": {"type": "array", "items": {"type": "integer"}}}
        });
        let ids: Vec<Value> = (0..200).map(|i| json!(format!("id-{i}"))).collect();
        let validator = ArgumentValidator::compile(&schema).unwrap();
        let check = validator.check(&json!({"ids": ids}), UnknownArguments::Reject);
        assert_eq!(check.issues.len(), MAX_ISSUES);
        assert_eq!(check.omitted, 200 - MAX_ISSUES);
    }

    #[test]
    fn secrets_are_told_from_parameter_names() {
        for secret in [
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "sk-proj-abc",
            "eyJhbGciOiJIUzI1NiJ9",
            "https://user:pw@example.com",
            "A1b2C3d4E5f6G7h8I9j0K",
        ] {
            assert!(looks_like_secret(secret), "{secret}");
        }
        for name in [
            "path",
            "file_path",
            "userId",
            "wait_for_previous",
            "max_results",
        ] {
            assert!(!looks_like_secret(name), "{name}");
        }
    }
}
