//! The report as GitHub-flavoured Markdown: a table, then the failures.

use super::{Report, Score};
use crate::checks::CHECKS;
use std::fmt::Write;

fn cell(score: Option<Score>) -> String {
    match score {
        None => "-".into(),
        Some(score) => match score.percent {
            None => "n/a".into(),
            Some(_) if score.failed == 0 => format!("✅ {}/{}", score.passed, score.applicable()),
            Some(_) => format!("❌ {}/{}", score.passed, score.applicable()),
        },
    }
}

/// Keeps a reason from breaking the table or the list it sits in.
fn escape(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

pub fn render_markdown(report: &Report) -> String {
    let mut out = String::from("## toolwarden check\n\n| check |");
    for column in &report.columns {
        let _ = write!(out, " {} |", escape(&column.title));
    }
    out.push_str("\n|---|");
    for _ in &report.columns {
        out.push_str("---|");
    }
    out.push('\n');
    for check in CHECKS {
        let _ = write!(out, "| `{}` |", check.id);
        for column in &report.columns {
            let score = column
                .completed
                .then(|| column.check_score(check.id))
                .flatten();
            let _ = write!(out, " {} |", cell(score));
        }
        out.push('\n');
    }
    out.push_str("| **score** |");
    for column in &report.columns {
        let total = match (column.completed, column.score.percent) {
            (false, _) => "did not run".to_owned(),
            (true, None) => "n/a".to_owned(),
            (true, Some(percent)) => format!(
                "**{percent:.0}%** ({}/{})",
                column.score.passed,
                column.score.applicable()
            ),
        };
        let _ = write!(out, " {total} |");
    }
    out.push('\n');
    for column in &report.columns {
        let _ = write!(out, "\n### {}\n\n", escape(&column.title));
        if let Some(error) = &column.error {
            let _ = writeln!(out, "Could not run: {}", escape(error));
            continue;
        }
        let mut any = false;
        for failure in column.failures() {
            any = true;
            let tool = failure.tool.as_deref().unwrap_or("(server)");
            let _ = writeln!(
                out,
                "- `{}` `{}`: {}",
                failure.check,
                escape(tool),
                escape(&failure.reason)
            );
        }
        if !any {
            out.push_str("No failures.\n");
        }
        for note in &column.notes {
            let _ = writeln!(out, "\n_Note: {}_", escape(note));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;

    #[test]
    fn a_github_table_with_one_row_per_check() {
        let markdown = render_markdown(&fixtures::report());
        let table: Vec<&str> = markdown
            .lines()
            .filter(|line| line.starts_with('|'))
            .collect();
        assert_eq!(table.len(), CHECKS.len() + 3);
        assert_eq!(table[0], "| check | direct | through toolwarden |");
        assert_eq!(table[1], "|---|---|---|");
        assert!(
            table.iter().all(|row| row.matches('|').count() == 4),
            "{table:#?}"
        );
        assert!(markdown.contains("| `invalid-input-is-tool-error` | ❌ 0/1 | ✅ 1/1 |"));
        assert!(markdown.contains("- `unknown-tool-is-protocol-error` `(server)`: -32602"));
        assert!(markdown.contains("No failures."));
    }
}
