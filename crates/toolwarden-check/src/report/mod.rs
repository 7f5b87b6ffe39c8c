//! The report card: the graded results of every column, with scores, and its renderings.
//!
//! The JSON form is this module's types serialised as they are; its shape is documented on the
//! types and versioned by [`FORMAT_VERSION`].

mod markdown;
mod sarif;
mod text;

pub use markdown::render_markdown;
pub use sarif::render_sarif;
pub use text::{Style, render_text};

use crate::checks::{CHECKS, Check, CheckResult, ServerObservation, Verdict};
use crate::runner::ColumnSpec;
use serde::Serialize;

/// Bumped when a field of the JSON report changes meaning or disappears.
pub const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub format_version: u32,
    /// Every check, with the rule it applies.
    pub checks: Vec<Check>,
    pub columns: Vec<ColumnReport>,
}

impl Report {
    pub fn new(columns: Vec<ColumnReport>) -> Report {
        Report {
            format_version: FORMAT_VERSION,
            checks: CHECKS.to_vec(),
            columns,
        }
    }

    pub fn column(&self, name: &str) -> Option<&ColumnReport> {
        self.columns.iter().find(|column| column.name == name)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|error| {
            format!("{{\"error\": \"the report could not be serialised: {error}\"}}")
        })
    }
}

/// What the server said about itself in `initialize`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ServerInfo {
    pub name: Option<String>,
    pub version: Option<String>,
    pub protocol_version: Option<String>,
}

/// passed / applicable, where applicable = passed + failed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Score {
    pub passed: usize,
    pub failed: usize,
    pub not_applicable: usize,
    /// 0 to 100; `None` when nothing applied.
    pub percent: Option<f64>,
}

impl Score {
    pub fn of<'a>(results: impl IntoIterator<Item = &'a CheckResult>) -> Score {
        let mut score = Score::default();
        for result in results {
            match result.verdict {
                Verdict::Pass => score.passed += 1,
                Verdict::Fail => score.failed += 1,
                Verdict::NotApplicable => score.not_applicable += 1,
            }
        }
        let applicable = score.passed + score.failed;
        if applicable > 0 {
            // Counts are far below 2^52, so the conversion is exact.
            #[allow(clippy::cast_precision_loss)]
            let percent = 100.0 * score.passed as f64 / applicable as f64;
            score.percent = Some((percent * 10.0).round() / 10.0);
        }
        score
    }

    pub fn applicable(&self) -> usize {
        self.passed + self.failed
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CheckSummary {
    pub id: &'static str,
    pub score: Score,
}

/// One server as one client sees it: directly, or through toolwarden.
#[derive(Debug, Clone, Serialize)]
pub struct ColumnReport {
    /// `direct` or `warden`.
    pub name: String,
    /// For people: "direct", "through toolwarden".
    pub title: String,
    pub command: Vec<String>,
    /// False when the server could not be started, initialised or listed: then `error` says
    /// why and there are no results.
    pub completed: bool,
    pub error: Option<String>,
    pub server: ServerInfo,
    /// Every tool name `tools/list` returned.
    #[serde(rename = "tools_listed")]
    pub tools_listed_names: Vec<String>,
    /// The tools the battery ran against (after --tools and --max-tools).
    pub tools_checked: Vec<String>,
    pub score: Score,
    pub checks: Vec<CheckSummary>,
    pub results: Vec<CheckResult>,
    pub notes: Vec<String>,
    /// The server's last stderr lines, kept when the column did not complete.
    pub stderr_tail: Vec<String>,
}

impl ColumnReport {
    pub fn failed(spec: &ColumnSpec, error: String, stderr_tail: Vec<String>) -> ColumnReport {
        ColumnReport {
            name: spec.name.clone(),
            title: spec.title.clone(),
            command: spec.command.clone(),
            completed: false,
            error: Some(error),
            server: ServerInfo::default(),
            tools_listed_names: Vec::new(),
            tools_checked: Vec::new(),
            score: Score::default(),
            checks: Vec::new(),
            results: Vec::new(),
            notes: Vec::new(),
            stderr_tail,
        }
    }

    pub fn completed(
        spec: &ColumnSpec,
        server: ServerInfo,
        tools_listed: Vec<String>,
        observation: &ServerObservation,
        results: Vec<CheckResult>,
    ) -> ColumnReport {
        let checks = CHECKS
            .iter()
            .map(|check| CheckSummary {
                id: check.id,
                score: Score::of(results.iter().filter(|result| result.check == check.id)),
            })
            .collect();
        ColumnReport {
            name: spec.name.clone(),
            title: spec.title.clone(),
            command: spec.command.clone(),
            completed: true,
            error: None,
            server,
            tools_listed_names: tools_listed,
            tools_checked: observation
                .tools
                .iter()
                .map(|tool| tool.name().to_owned())
                .collect(),
            score: Score::of(&results),
            checks,
            results,
            notes: Vec::new(),
            stderr_tail: Vec::new(),
        }
    }

    pub fn check_score(&self, id: &str) -> Option<Score> {
        self.checks
            .iter()
            .find(|summary| summary.id == id)
            .map(|summary| summary.score)
    }

    pub fn failures(&self) -> impl Iterator<Item = &CheckResult> {
        self.results
            .iter()
            .filter(|result| result.verdict == Verdict::Fail)
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;
    use crate::checks::{CheckResult, Verdict};

    pub fn spec(name: &str, title: &str) -> ColumnSpec {
        ColumnSpec {
            name: name.into(),
            title: title.into(),
            command: vec!["server".into()],
        }
    }

    fn result(
        check: &'static str,
        tool: Option<&str>,
        verdict: Verdict,
        reason: &str,
    ) -> CheckResult {
        CheckResult {
            check,
            tool: tool.map(str::to_owned),
            verdict,
            reason: reason.into(),
        }
    }

    /// A two-column report: the direct server fails two checks, the warden none.
    pub fn report() -> Report {
        use crate::checks::*;
        let direct_results = vec![
            result(
                INVALID_INPUT_IS_TOOL_ERROR,
                Some("add"),
                Verdict::Fail,
                "wrong type: protocol error -32602: the model may never see it",
            ),
            result(
                INVALID_INPUT_IS_TOOL_ERROR,
                Some("list"),
                Verdict::NotApplicable,
                "no parameters",
            ),
            result(
                UNKNOWN_TOOL_PROTOCOL_ERROR,
                None,
                Verdict::Fail,
                "-32602, but the unknown name came back in /error/message",
            ),
            result(
                STDOUT_IS_JSON_RPC,
                None,
                Verdict::Pass,
                "only JSON-RPC on stdout",
            ),
        ];
        let warden_results: Vec<CheckResult> = direct_results
            .iter()
            .map(|r| CheckResult {
                verdict: if r.verdict == Verdict::Fail {
                    Verdict::Pass
                } else {
                    r.verdict
                },
                ..r.clone()
            })
            .collect();
        let observation = ServerObservation {
            marker: String::new(),
            tools: Vec::new(),
            unknown_tool: crate::checks::UnknownToolObservation {
                name: String::new(),
                answer: crate::checks::Answer::Failed {
                    reason: String::new(),
                },
            },
            junk_count: 0,
            junk_lines: Vec::new(),
        };
        let info = ServerInfo {
            name: Some("demo".into()),
            version: Some("1.0".into()),
            protocol_version: Some("2025-11-25".into()),
        };
        let mut direct = ColumnReport::completed(
            &spec("direct", "direct"),
            info.clone(),
            vec!["add".into(), "list".into()],
            &observation,
            direct_results,
        );
        direct.tools_checked = vec!["add".into(), "list".into()];
        let mut warden = ColumnReport::completed(
            &spec("warden", "through toolwarden"),
            info,
            vec!["add".into(), "list".into()],
            &observation,
            warden_results,
        );
        warden.tools_checked = direct.tools_checked.clone();
        warden
            .notes
            .push("not listed here but listed direct: send_note".into());
        Report::new(vec![direct, warden])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_count_only_applicable_results() {
        let report = fixtures::report();
        let direct = report.column("direct").unwrap();
        assert_eq!(direct.score.passed, 1);
        assert_eq!(direct.score.failed, 2);
        assert_eq!(direct.score.not_applicable, 1);
        assert_eq!(direct.score.percent, Some(33.3));
        let warden = report.column("warden").unwrap();
        assert_eq!(warden.score.percent, Some(100.0));
        let unknown = direct
            .check_score(crate::checks::OUTPUT_MATCHES_SCHEMA)
            .unwrap();
        assert_eq!(unknown.percent, None);
    }

    #[test]
    fn the_json_form_has_the_documented_fields() {
        let json: serde_json::Value = serde_json::from_str(&fixtures::report().to_json()).unwrap();
        assert_eq!(json["format_version"], FORMAT_VERSION);
        assert_eq!(json["checks"][0]["id"], "invalid-input-is-tool-error");
        assert!(json["checks"][0]["rule"].as_str().unwrap().len() > 20);
        let column = &json["columns"][0];
        for field in [
            "name",
            "title",
            "command",
            "completed",
            "error",
            "server",
            "tools_listed",
            "tools_checked",
            "score",
            "checks",
            "results",
            "notes",
        ] {
            assert!(column.get(field).is_some(), "{field}");
        }
        assert_eq!(column["results"][1]["verdict"], "n/a");
        assert_eq!(column["results"][2]["tool"], serde_json::Value::Null);
        assert_eq!(column["score"]["percent"], 33.3);
    }
}
