//! Runs the battery against each column's server (in parallel: they are separate processes)
//! and grades what came back.

use crate::battery::{self, PlannedCall};
use crate::checks::{
    self, Answer, ObservedCall, ServerObservation, ToolObservation, UnknownToolObservation,
};
use crate::marker;
use crate::probe::{Probe, ProbeError};
use crate::report::{ColumnReport, Report, ServerInfo};
use serde_json::{Value, json};
use std::time::Duration;

/// What to send and how long to wait.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// Per request.
    pub timeout: Duration,
    /// At most this many tools get the battery, in listing order.
    pub max_tools: usize,
    /// Only these tools, when not empty.
    pub only_tools: Vec<String>,
    /// Also send valid calls to tools that do not say they are read-only.
    pub allow_valid_calls: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            timeout: Duration::from_secs(10),
            max_tools: 50,
            only_tools: Vec::new(),
            allow_valid_calls: false,
        }
    }
}

/// One column of the report: a name (`direct`, `warden`) and the command that starts the server
/// as that column's client sees it.
#[derive(Debug, Clone)]
pub struct ColumnSpec {
    pub name: String,
    pub title: String,
    pub command: Vec<String>,
}

/// Runs every column and returns the report. Never panics on what a server does: a server
/// that cannot be started or talked to becomes a column with `completed: false`.
pub fn run_check(columns: &[ColumnSpec], options: &CheckOptions) -> Report {
    let marker = marker::secret_marker();
    let unknown_tool = format!("fetch_records_{}", marker::random_alphanumerics(12));
    let mut reports: Vec<ColumnReport> = std::thread::scope(|scope| {
        let running: Vec<_> = columns
            .iter()
            .map(|spec| {
                let (marker, unknown_tool) = (&marker, &unknown_tool);
                scope.spawn(move || run_column(spec, options, marker, unknown_tool))
            })
            .collect();
        running
            .into_iter()
            .zip(columns)
            .map(|(handle, spec)| {
                handle.join().unwrap_or_else(|_| {
                    ColumnReport::failed(spec, "the probe thread panicked".into(), Vec::new())
                })
            })
            .collect()
    });
    note_hidden_tools(&mut reports);
    Report::new(reports)
}

/// Tools the first column lists that a later one does not: what the warden took away.
fn note_hidden_tools(reports: &mut [ColumnReport]) {
    let Some((first, rest)) = reports.split_first_mut() else {
        return;
    };
    if !first.completed {
        return;
    }
    for report in rest.iter_mut().filter(|report| report.completed) {
        let hidden: Vec<String> = first
            .tools_checked
            .iter()
            .filter(|name| !report.tools_listed_names.contains(name))
            .cloned()
            .collect();
        if !hidden.is_empty() {
            report.notes.push(format!(
                "not listed here but listed {}: {}",
                first.title,
                hidden.join(", ")
            ));
        }
    }
}

fn run_column(
    spec: &ColumnSpec,
    options: &CheckOptions,
    marker: &str,
    unknown_tool: &str,
) -> ColumnReport {
    let mut probe = match Probe::start(&spec.command, options.timeout) {
        Ok(probe) => probe,
        Err(error) => return ColumnReport::failed(spec, error.to_string(), Vec::new()),
    };
    match observe(&mut probe, options, marker, unknown_tool) {
        Ok((info, listed, observation, notes)) => {
            let evidence = probe.shutdown();
            let observation = ServerObservation {
                junk_count: evidence.junk_count,
                junk_lines: evidence.junk_lines,
                ..observation
            };
            let results = checks::grade(&observation);
            let mut report = ColumnReport::completed(spec, info, listed, &observation, results);
            report.notes.extend(notes);
            report
        }
        Err(error) => {
            let evidence = probe.shutdown();
            ColumnReport::failed(
                spec,
                error.to_string(),
                evidence.stderr_tail.into_iter().collect(),
            )
        }
    }
}

type Observed = (ServerInfo, Vec<String>, ServerObservation, Vec<String>);

fn observe(
    probe: &mut Probe,
    options: &CheckOptions,
    marker: &str,
    unknown_tool: &str,
) -> Result<Observed, ProbeError> {
    let initialized = probe.initialize()?;
    let info = ServerInfo {
        name: text_at(&initialized, "/serverInfo/name"),
        version: text_at(&initialized, "/serverInfo/version"),
        protocol_version: text_at(&initialized, "/protocolVersion"),
    };
    let listed = probe.list_tools()?;
    let listed_names: Vec<String> = listed
        .iter()
        .filter_map(|tool| tool.get("name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect();
    let mut notes = Vec::new();
    let missing: Vec<&str> = options
        .only_tools
        .iter()
        .filter(|name| !listed_names.contains(name))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        notes.push(format!("asked for but not listed: {}", missing.join(", ")));
    }
    let selected: Vec<&Value> = listed
        .iter()
        .filter(|tool| {
            options.only_tools.is_empty()
                || tool
                    .get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|name| options.only_tools.iter().any(|only| only == name))
        })
        .collect();
    if selected.len() > options.max_tools {
        notes.push(format!(
            "{} of {} tools checked (--max-tools)",
            options.max_tools,
            selected.len()
        ));
    }
    let mut tools = Vec::new();
    for definition in selected.into_iter().take(options.max_tools) {
        let name = definition.get("name").and_then(Value::as_str).unwrap_or("");
        let plan = battery::plan(definition, marker, options.allow_valid_calls);
        let calls = plan
            .calls
            .into_iter()
            .map(|call| {
                let answer = send(probe, name, &call);
                ObservedCall { call, answer }
            })
            .collect();
        tools.push(ToolObservation {
            definition: definition.clone(),
            calls,
            skipped: plan.skipped,
        });
    }
    let answer = answer_of(probe.call_tool(unknown_tool, &json!({})));
    let observation = ServerObservation {
        marker: marker.to_owned(),
        tools,
        unknown_tool: UnknownToolObservation {
            name: unknown_tool.to_owned(),
            answer,
        },
        junk_count: 0,
        junk_lines: Vec::new(),
    };
    Ok((info, listed_names, observation, notes))
}

fn send(probe: &mut Probe, tool: &str, call: &PlannedCall) -> Answer {
    answer_of(probe.call_tool(tool, &call.arguments))
}

fn answer_of(response: Result<crate::probe::Response, ProbeError>) -> Answer {
    match response {
        Ok(response) => Answer::from_response(&response.message, response.raw),
        Err(error) => Answer::Failed {
            reason: error.to_string(),
        },
    }
}

fn text_at(value: &Value, pointer: &str) -> Option<String> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_owned)
}
