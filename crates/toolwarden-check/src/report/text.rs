//! The report as a terminal table: one row per check, one column per server view.

use super::{ColumnReport, Report, Score};
use crate::checks::CHECKS;
use std::fmt::Write;

/// Whether to colour the output (the caller decides: a terminal, and `NO_COLOR` unset).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    Ansi,
}

/// Failures listed per column before the rest is summarised.
const MAX_FAILURE_LINES: usize = 40;

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const DIM: &str = "\x1b[2m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

fn paint(style: Style, colour: &str, text: &str) -> String {
    match style {
        Style::Plain => text.to_owned(),
        Style::Ansi => format!("{colour}{text}{RESET}"),
    }
}

/// A score cell, padded to `width` before colouring so the columns line up either way.
fn cell(score: Option<Score>, width: usize, style: Style) -> String {
    let Some(score) = score else {
        return format!("{:<width$}", "-");
    };
    let (text, colour) = match score.percent {
        None => ("n/a".to_owned(), DIM),
        Some(_) if score.failed == 0 => {
            (format!("✓ {}/{}", score.passed, score.applicable()), GREEN)
        }
        Some(_) => (format!("✗ {}/{}", score.passed, score.applicable()), RED),
    };
    paint(style, colour, &format!("{text:<width$}"))
}

fn total(score: &Score) -> String {
    match score.percent {
        Some(percent) => format!("{percent:.0}% ({}/{})", score.passed, score.applicable()),
        None => "n/a".into(),
    }
}

pub fn render_text(report: &Report, style: Style) -> String {
    let mut out = String::new();
    let first_completed = report.columns.iter().find(|column| column.completed);
    let server = first_completed
        .map(|column| {
            let name = column.server.name.as_deref().unwrap_or("unnamed server");
            let version = column.server.version.as_deref().unwrap_or("");
            format!("{name} {version}").trim_end().to_owned()
        })
        .unwrap_or_else(|| "the server".into());
    let tools = first_completed
        .map(|column| format!(", {} tools checked", column.tools_checked.len()))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "{}\n",
        paint(style, BOLD, &format!("toolwarden check: {server}{tools}"))
    );

    let check_width = CHECKS
        .iter()
        .map(|check| check.id.len())
        .max()
        .unwrap_or(10)
        + 2;
    let column_width = report
        .columns
        .iter()
        .map(|column| column.title.chars().count())
        .max()
        .unwrap_or(10)
        .max(14)
        + 2;
    let mut header = format!("{:<check_width$}", "check");
    for column in &report.columns {
        header.push_str(&format!("{:<column_width$}", column.title));
    }
    let _ = writeln!(out, "{}", paint(style, BOLD, header.trim_end()));
    for check in CHECKS {
        let mut line = format!("{:<check_width$}", check.id);
        for column in &report.columns {
            let score = column
                .completed
                .then(|| column.check_score(check.id))
                .flatten();
            line.push_str(&cell(score, column_width, style));
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    let mut line = format!("{:<check_width$}", "score");
    for column in &report.columns {
        let text = if column.completed {
            total(&column.score)
        } else {
            "did not run".into()
        };
        line.push_str(&format!("{text:<column_width$}"));
    }
    let _ = writeln!(out, "{}", paint(style, BOLD, line.trim_end()));

    for column in &report.columns {
        out.push('\n');
        render_details(&mut out, column, style);
    }
    out
}

fn render_details(out: &mut String, column: &ColumnReport, style: Style) {
    if let Some(error) = &column.error {
        let _ = writeln!(
            out,
            "{}: {}",
            column.title,
            paint(style, RED, &format!("could not run: {error}"))
        );
        for line in &column.stderr_tail {
            let _ = writeln!(out, "  stderr: {line}");
        }
        return;
    }
    let failures: Vec<_> = column.failures().collect();
    if failures.is_empty() {
        let _ = writeln!(
            out,
            "{}: {}",
            column.title,
            paint(style, GREEN, "no failures")
        );
    } else {
        let plural = if failures.len() == 1 { "" } else { "s" };
        let _ = writeln!(out, "{}: {} failure{plural}", column.title, failures.len());
        for failure in failures.iter().take(MAX_FAILURE_LINES) {
            let tool = failure.tool.as_deref().unwrap_or("(server)");
            let _ = writeln!(
                out,
                "  {} {}  {tool}: {}",
                paint(style, RED, "✗"),
                failure.check,
                failure.reason
            );
        }
        if failures.len() > MAX_FAILURE_LINES {
            let _ = writeln!(
                out,
                "  … and {} more (--format json lists them all)",
                failures.len() - MAX_FAILURE_LINES
            );
        }
    }
    for note in &column.notes {
        let _ = writeln!(out, "  {}", paint(style, DIM, &format!("note: {note}")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixtures;

    #[test]
    fn the_plain_table_lines_up_and_lists_failures() {
        let text = render_text(&fixtures::report(), Style::Plain);
        assert!(!text.contains('\x1b'));
        // Columns are counted in characters: the marks are several bytes long.
        let column_of =
            |line: &str, needle: &str| line[..line.find(needle).unwrap()].chars().count();
        let header = text.lines().find(|line| line.starts_with("check")).unwrap();
        let row = text
            .lines()
            .find(|line| line.starts_with("invalid-input-is-tool-error"))
            .unwrap();
        assert_eq!(column_of(row, "✗ 0/1"), column_of(header, "direct"));
        assert_eq!(
            column_of(row, "✓ 1/1"),
            column_of(header, "through toolwarden")
        );
        assert!(text.contains("score"));
        assert!(text.contains("33% (1/3)"));
        assert!(text.contains("direct: 2 failures"));
        assert!(text.contains("add: wrong type: protocol error -32602"));
        assert!(text.contains("through toolwarden: no failures"));
        assert!(text.contains("note: not listed here but listed direct: send_note"));
    }

    #[test]
    fn colour_only_when_asked() {
        let text = render_text(&fixtures::report(), Style::Ansi);
        assert!(text.contains(RED) && text.contains(GREEN));
    }
}
