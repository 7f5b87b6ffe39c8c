//! The report as SARIF 2.1.0 for code-scanning tools: one run per column, one result per
//! failed check per tool, the checks described as rules.

use super::Report;
use crate::checks::CHECKS;
use serde_json::{Value, json};

pub const SARIF_VERSION: &str = "2.1.0";
const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

fn rules() -> Vec<Value> {
    CHECKS
        .iter()
        .map(|check| {
            json!({
                "id": check.id,
                "name": check.id,
                "shortDescription": {"text": check.rule},
                "fullDescription": {"text": check.rule},
                "defaultConfiguration": {"level": "error"},
                "properties": {"scope": check.scope},
            })
        })
        .collect()
}

pub fn render_sarif(report: &Report) -> String {
    let runs: Vec<Value> = report
        .columns
        .iter()
        .map(|column| {
            let results: Vec<Value> = column
                .failures()
                .map(|failure| {
                    let rule_index = CHECKS.iter().position(|check| check.id == failure.check);
                    let subject = failure.tool.as_deref().unwrap_or("server");
                    json!({
                        "ruleId": failure.check,
                        "ruleIndex": rule_index,
                        "level": "error",
                        "message": {"text": format!("{} ({}): {}", subject, column.title, failure.reason)},
                        "locations": [{"logicalLocations": [{
                            "name": subject,
                            "fullyQualifiedName": format!("{}/{}", column.name, subject),
                            "kind": if failure.tool.is_some() { "function" } else { "module" },
                        }]}],
                        "properties": {"column": column.name},
                    })
                })
                .collect();
            let mut invocation = json!({
                "executionSuccessful": column.completed,
                "commandLine": column.command.join(" "),
            });
            if let (Some(error), Some(object)) = (&column.error, invocation.as_object_mut()) {
                object.insert(
                    "toolExecutionNotifications".into(),
                    json!([{"level": "error", "message": {"text": error}}]),
                );
            }
            json!({
                "tool": {"driver": {
                    "name": "toolwarden-check",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": "https://github.com/toolwarden/toolwarden",
                    "rules": rules(),
                }},
                "automationDetails": {"id": format!("toolwarden-check/{}/", column.name)},
                "invocations": [invocation],
                "results": results,
                "properties": {"score": column.score},
            })
        })
        .collect();
    let sarif = json!({"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": runs});
    serde_json::to_string_pretty(&sarif).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;

    /// The fields SARIF 2.1.0 requires of the objects we write (sarifLog: version, runs; run:
    /// tool; tool: driver; toolComponent: name; reportingDescriptor: id; result: message;
    /// message: text; invocation: executionSuccessful), plus the links between them.
    #[test]
    fn the_sarif_log_has_every_required_field() {
        let sarif: Value = serde_json::from_str(&render_sarif(&fixtures::report())).unwrap();
        assert_eq!(sarif["version"], "2.1.0");
        let runs = sarif["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2);
        for run in runs {
            let driver = &run["tool"]["driver"];
            assert!(driver["name"].is_string());
            let rules = driver["rules"].as_array().unwrap();
            assert_eq!(rules.len(), CHECKS.len());
            for rule in rules {
                assert!(rule["id"].is_string());
                assert!(rule["shortDescription"]["text"].is_string());
            }
            for invocation in run["invocations"].as_array().unwrap() {
                assert!(invocation["executionSuccessful"].is_boolean());
            }
            for result in run["results"].as_array().unwrap() {
                assert!(result["message"]["text"].is_string());
                let index = result["ruleIndex"].as_u64().unwrap() as usize;
                assert_eq!(rules[index]["id"], result["ruleId"]);
                assert!(matches!(
                    result["level"].as_str(),
                    Some("error" | "warning" | "note" | "none")
                ));
            }
        }
        let direct_results = runs[0]["results"].as_array().unwrap();
        assert_eq!(direct_results.len(), 2);
        assert_eq!(direct_results[0]["ruleId"], "invalid-input-is-tool-error");
        assert_eq!(
            direct_results[0]["locations"][0]["logicalLocations"][0]["name"],
            "add"
        );
        assert!(runs[1]["results"].as_array().unwrap().is_empty());
    }
}
