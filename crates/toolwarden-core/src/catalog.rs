//! The tool catalog: what a server's `tools/list` pages declared, compiled once per catalog
//! version so each call only looks a tool up and runs its validator.

use std::collections::HashMap;

use serde_json::Value;

use crate::call::{describe_issues, end_sentence};
use crate::contract::{ErrorKind, FieldIssue, Source, ToolError};
use crate::suggest::discovery_tools;
use crate::validate::{ArgumentValidator, SchemaError, UnknownArguments};

/// A fault in the server's tool definitions, for the operator's log (logged once per catalog).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogProblem {
    #[error("tool definition #{index} has no string `name`; it is left out of the catalog")]
    NameMissing { index: usize },
    #[error(
        "tool `{name}` is defined more than once; the first definition is used (definition #{index} ignored)"
    )]
    DuplicateName { name: String, index: usize },
    #[error("tool `{tool}` has no inputSchema; calls to it are forwarded unvalidated")]
    InputSchemaMissing { tool: String },
    #[error(
        "the inputSchema of tool `{tool}` cannot be used ({error}); calls to it are forwarded unvalidated"
    )]
    InputSchema { tool: String, error: SchemaError },
    #[error(
        "the outputSchema of tool `{tool}` cannot be used ({error}); its results are not checked"
    )]
    OutputSchema { tool: String, error: SchemaError },
}

/// One tool as the gateway needs it.
#[derive(Debug)]
pub struct CatalogTool {
    name: String,
    input: Option<ArgumentValidator>,
    output: Option<ArgumentValidator>,
    read_only: bool,
    parameters: Vec<String>,
}

impl CatalogTool {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `None` when the tool has no usable `inputSchema`: its calls are forwarded unvalidated.
    pub fn input_validator(&self) -> Option<&ArgumentValidator> {
        self.input.as_ref()
    }

    pub fn output_validator(&self) -> Option<&ArgumentValidator> {
        self.output.as_ref()
    }

    /// The server's `readOnlyHint` (a hint, untrusted unless the server is).
    pub fn read_only(&self) -> bool {
        self.read_only
    }

    /// Top-level parameter names, for did-you-mean.
    pub fn parameter_names(&self) -> &[String] {
        &self.parameters
    }

    /// How `structured_content` breaks the tool's `outputSchema`; empty when it conforms or
    /// when the tool declares none. Extra properties are allowed unless the schema forbids them.
    pub fn check_output(&self, structured_content: &Value) -> Vec<FieldIssue> {
        match &self.output {
            Some(validator) => validator.validate(structured_content, UnknownArguments::Allow),
            None => Vec::new(),
        }
    }

    /// The error result that replaces a success whose `structuredContent` breaks the
    /// `outputSchema`: a server bug the model cannot fix by changing its call.
    pub fn output_invalid(&self, issues: Vec<FieldIssue>) -> ToolError {
        let described = describe_issues(&issues, 0, "structuredContent", |_| None);
        let mut error = ToolError::new(
            ErrorKind::OutputInvalid,
            Source::Upstream,
            format!(
                "`{}` returned structuredContent that does not match its outputSchema: {}",
                self.name,
                end_sentence(described)
            ),
        );
        error.tool = Some(self.name.clone());
        error.hint = Some(format!(
            "This is a bug in the server behind `{}`, not in the call; other arguments will not fix it. Tell the user the tool returned malformed data.",
            self.name
        ));
        error.fields = issues;
        error
    }
}

/// Every tool of a server, by name.
#[derive(Debug, Default)]
pub struct Catalog {
    tools: Vec<CatalogTool>,
    by_name: HashMap<String, usize>,
    discovery: Vec<String>,
    problems: Vec<CatalogProblem>,
}

impl Catalog {
    /// Builds the catalog from the tool definitions of all `tools/list` pages, in order.
    pub fn from_tools(tools: &[Value]) -> Catalog {
        let mut catalog = Catalog::default();
        for (index, definition) in tools.iter().enumerate() {
            let Some(name) = definition.get("name").and_then(Value::as_str) else {
                catalog.problems.push(CatalogProblem::NameMissing { index });
                continue;
            };
            if catalog.by_name.contains_key(name) {
                catalog.problems.push(CatalogProblem::DuplicateName {
                    name: name.to_owned(),
                    index,
                });
                continue;
            }
            let tool = catalog.compile_tool(name, definition);
            catalog.by_name.insert(name.to_owned(), catalog.tools.len());
            catalog.tools.push(tool);
        }
        catalog.discovery = discovery_tools(catalog.tools.iter().map(CatalogTool::name))
            .into_iter()
            .map(str::to_owned)
            .collect();
        catalog
    }

    fn compile_tool(&mut self, name: &str, definition: &Value) -> CatalogTool {
        let input_schema = definition.get("inputSchema");
        let input = match input_schema {
            None => {
                self.problems.push(CatalogProblem::InputSchemaMissing {
                    tool: name.to_owned(),
                });
                None
            }
            Some(schema) => match ArgumentValidator::compile(schema) {
                Ok(validator) => Some(validator),
                Err(error) => {
                    self.problems.push(CatalogProblem::InputSchema {
                        tool: name.to_owned(),
                        error,
                    });
                    None
                }
            },
        };
        let output = definition.get("outputSchema").and_then(|schema| {
            ArgumentValidator::compile(schema)
                .map_err(|error| {
                    self.problems.push(CatalogProblem::OutputSchema {
                        tool: name.to_owned(),
                        error,
                    })
                })
                .ok()
        });
        let parameters = match &input {
            Some(validator) => validator.parameter_names().to_vec(),
            None => input_schema
                .and_then(|schema| schema.get("properties"))
                .and_then(Value::as_object)
                .map(|properties| properties.keys().cloned().collect())
                .unwrap_or_default(),
        };
        let read_only = definition
            .pointer("/annotations/readOnlyHint")
            .and_then(Value::as_bool)
            == Some(true);
        CatalogTool {
            name: name.to_owned(),
            input,
            output,
            read_only,
            parameters,
        }
    }

    pub fn get(&self, name: &str) -> Option<&CatalogTool> {
        self.by_name
            .get(name)
            .and_then(|&index| self.tools.get(index))
    }

    pub fn tools(&self) -> &[CatalogTool] {
        &self.tools
    }

    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(CatalogTool::name)
    }

    /// Tools that list or search things, for not-found hints.
    pub fn discovery_tools(&self) -> &[String] {
        &self.discovery
    }

    /// Faults in the definitions, for the operator's log.
    pub fn problems(&self) -> &[CatalogProblem] {
        &self.problems
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Problem;
    use serde_json::json;

    fn weather_tool() -> Value {
        json!({
            "name": "get_weather",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
            "outputSchema": {
                "type": "object",
                "properties": {"temperature": {"type": "number"}},
                "required": ["temperature"]
            },
            "annotations": {"readOnlyHint": true}
        })
    }

    #[test]
    fn tools_are_compiled_and_found_by_name() {
        let catalog = Catalog::from_tools(&[
            weather_tool(),
            json!({"name": "list_cities", "inputSchema": {"type": "object"}}),
            json!({"name": "delete_city", "inputSchema": {"type": "object",
                   "properties": {"id": {"type": "integer"}}},
                   "annotations": {"readOnlyHint": false}}),
        ]);
        assert!(catalog.problems().is_empty());
        assert_eq!(catalog.len(), 3);
        let weather = catalog.get("get_weather").unwrap();
        assert!(weather.read_only());
        assert!(weather.input_validator().is_some());
        assert_eq!(weather.parameter_names(), ["city"]);
        assert!(!catalog.get("delete_city").unwrap().read_only());
        assert!(catalog.get("get_weathr").is_none());
        assert_eq!(catalog.discovery_tools(), ["list_cities"]);
        assert_eq!(
            catalog.tool_names().collect::<Vec<_>>(),
            ["get_weather", "list_cities", "delete_city"]
        );
    }

    #[test]
    fn broken_definitions_are_reported_not_fatal() {
        let catalog = Catalog::from_tools(&[
            json!({"inputSchema": {"type": "object"}}),
            json!({"name": 7}),
            json!({"name": "a", "inputSchema": {"type": "object", "properties": {"x": {"type": "strng"}}}}),
            json!({"name": "a", "inputSchema": {"type": "object"}}),
            json!({"name": "b"}),
            json!({"name": "c", "inputSchema": {"type": "object"},
                   "outputSchema": {"$ref": "https://example.com/out.json"}}),
        ]);
        let problems = catalog.problems();
        assert_eq!(problems.len(), 6, "{problems:?}");
        assert_eq!(problems[0], CatalogProblem::NameMissing { index: 0 });
        assert_eq!(problems[1], CatalogProblem::NameMissing { index: 1 });
        assert!(matches!(&problems[2], CatalogProblem::InputSchema { tool, .. } if tool == "a"));
        assert_eq!(
            problems[3],
            CatalogProblem::DuplicateName {
                name: "a".into(),
                index: 3
            }
        );
        assert_eq!(
            problems[4],
            CatalogProblem::InputSchemaMissing { tool: "b".into() }
        );
        assert!(matches!(&problems[5], CatalogProblem::OutputSchema { tool, .. } if tool == "c"));
        // The broken tool stays callable, unvalidated, with its parameter names kept.
        let broken = catalog.get("a").unwrap();
        assert!(broken.input_validator().is_none());
        assert_eq!(broken.parameter_names(), ["x"]);
        assert_eq!(catalog.len(), 3);
        assert!(problems[2].to_string().contains("forwarded unvalidated"));
    }

    #[test]
    fn output_is_checked_against_the_output_schema() {
        let catalog = Catalog::from_tools(&[weather_tool()]);
        let weather = catalog.get("get_weather").unwrap();
        assert!(
            weather
                .check_output(&json!({"temperature": 21.5, "unit": "C"}))
                .is_empty()
        );
        let issues = weather.check_output(&json!({"temperature": "warm 1234"}));
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].problem, Problem::Type);
        let error = weather.output_invalid(issues);
        assert_eq!(error.kind, ErrorKind::OutputInvalid);
        assert_eq!(error.source, Source::Upstream);
        assert_eq!(error.tool.as_deref(), Some("get_weather"));
        assert_eq!(
            error.message,
            "`get_weather` returned structuredContent that does not match its outputSchema: `/temperature` must be number, got string."
        );
        assert!(!error.text().contains("warm"));
        assert_eq!(error.fields.len(), 1);
    }

    #[test]
    fn tools_without_output_schema_accept_any_output() {
        let catalog =
            Catalog::from_tools(&[json!({"name": "x", "inputSchema": {"type": "object"}})]);
        assert!(catalog.get("x").unwrap().check_output(&json!(5)).is_empty());
    }
}
