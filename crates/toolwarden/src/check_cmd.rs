//! `toolwarden check`: the report card of a server's error hygiene, directly and through
//! toolwarden, side by side.

use anyhow::Context;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;
use toolwarden_check::report::{self, Report, Style};
use toolwarden_check::runner::{CheckOptions, ColumnSpec, run_check};

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A table for people, coloured on a terminal unless NO_COLOR is set.
    Text,
    /// The whole report: every check's rule, per-tool results with reasons, scores.
    Json,
    /// A GitHub-flavoured table and the failures.
    Markdown,
    /// SARIF 2.1.0, one run per column, one result per failed check per tool.
    Sarif,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Columns {
    /// The server directly and through toolwarden.
    Both,
    Direct,
    Warden,
}

/// Starts a server, sends it the bad calls real agents make, and grades the answers: directly
/// and through toolwarden, side by side.
///
/// Only calls that must fail validation are sent to tools that do not declare
/// `readOnlyHint: true`, unless --allow-valid-calls is given.
///
/// Exit status: 0 when the score meets --min-score (and --min-score-direct when given), 1 when
/// it does not, 2 when a column could not run at all (the server did not start, initialise or
/// list its tools).
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Exit status: 0 when the score meets --min-score (and --min-score-direct when given), \
1 when it does not, 2 when a column could not run at all.\n\
Only calls that must fail validation are sent to tools without readOnlyHint: true, unless --allow-valid-calls."
)]
pub struct CheckArgs {
    /// Grade the built-in demo server (with its poisoned tool) instead of a server command.
    /// Its toolwarden column runs in strict scan mode unless --config or --scan-mode says
    /// otherwise, so the poisoned tool is withheld there.
    #[arg(long, conflicts_with = "server")]
    pub demo: bool,
    /// Scan mode of the toolwarden column (as `toolwarden run --scan-mode`), over the config's.
    #[arg(long, value_enum)]
    pub scan_mode: Option<crate::ScanModeArg>,
    /// Configuration file for the toolwarden column (as `toolwarden run --config`).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Which columns to run.
    #[arg(long, value_enum, default_value_t = Columns::Both)]
    pub columns: Columns,
    /// Seconds to wait for each answer.
    #[arg(long, default_value_t = 10.0)]
    pub timeout: f64,
    /// Only these tools (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    pub tools: Vec<String>,
    /// At most this many tools get the battery, in listing order.
    #[arg(long, default_value_t = 50)]
    pub max_tools: usize,
    /// Also send valid calls (with and without an unknown key) to tools that do not say they
    /// are read-only. They may change the world.
    #[arg(long)]
    pub allow_valid_calls: bool,
    /// Lowest acceptable score in percent (0-100) of the toolwarden column, or of the direct
    /// column when it is the only one run.
    #[arg(long, default_value_t = 0.0)]
    pub min_score: f64,
    /// Lowest acceptable score in percent (0-100) of the direct column.
    #[arg(long)]
    pub min_score_direct: Option<f64>,
    /// The server command and its arguments.
    #[arg(last = true, required_unless_present = "demo")]
    pub server: Vec<String>,
}

pub fn run(args: CheckArgs) -> anyhow::Result<i32> {
    let exe = std::env::current_exe().context("could not find the toolwarden executable")?;
    let exe = exe.to_string_lossy().into_owned();
    let server = if args.demo {
        vec![exe.clone(), "demo-server".into(), "--poisoned".into()]
    } else {
        args.server.clone()
    };
    if !args.timeout.is_finite() || args.timeout <= 0.0 {
        anyhow::bail!("--timeout must be a positive number of seconds");
    }
    let mut warden = vec![exe, "run".to_owned()];
    if let Some(config) = &args.config {
        // Read here too, so a bad path is reported once, clearly, instead of as a dead column.
        std::fs::metadata(config)
            .with_context(|| format!("could not read the config file {}", config.display()))?;
        warden.push("--config".into());
        warden.push(config.to_string_lossy().into_owned());
    }
    let scan_mode = match (args.scan_mode, args.demo && args.config.is_none()) {
        (Some(mode), _) => Some(mode),
        (None, true) => Some(crate::ScanModeArg::Strict),
        (None, false) => None,
    };
    if let Some(mode) = scan_mode {
        warden.push("--scan-mode".into());
        warden.push(mode.as_str().into());
    }
    warden.push("--".into());
    warden.extend(server.iter().cloned());
    let mut columns = Vec::new();
    if args.columns != Columns::Warden {
        columns.push(ColumnSpec {
            name: "direct".into(),
            title: "direct".into(),
            command: server,
        });
    }
    if args.columns != Columns::Direct {
        columns.push(ColumnSpec {
            name: "warden".into(),
            title: "through toolwarden".into(),
            command: warden,
        });
    }
    let options = CheckOptions {
        timeout: Duration::from_secs_f64(args.timeout),
        max_tools: args.max_tools,
        only_tools: args.tools.clone(),
        allow_valid_calls: args.allow_valid_calls,
    };
    let report = run_check(&columns, &options);
    print!("{}", render(&report, args.format));
    Ok(exit_status(&report, args.min_score, args.min_score_direct))
}

fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Text => {
            let colour = std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
            report::render_text(report, if colour { Style::Ansi } else { Style::Plain })
        }
        Format::Json => format!("{}\n", report.to_json()),
        Format::Markdown => report::render_markdown(report),
        Format::Sarif => format!("{}\n", report::render_sarif(report)),
    }
}

/// 2 when a column did not run; 1 when a graded score is below its minimum; else 0. A column
/// where nothing applied has no score and meets any minimum.
fn exit_status(report: &Report, min_score: f64, min_score_direct: Option<f64>) -> i32 {
    if report.columns.iter().any(|column| !column.completed) {
        return 2;
    }
    let below = |name: &str, minimum: f64| {
        report
            .column(name)
            .and_then(|column| column.score.percent)
            .is_some_and(|percent| percent < minimum)
    };
    let main_column = if report.column("warden").is_some() {
        "warden"
    } else {
        "direct"
    };
    let direct_below = min_score_direct.is_some_and(|minimum| below("direct", minimum));
    if below(main_column, min_score) || direct_below {
        1
    } else {
        0
    }
}
