//! `toolwarden scan`: tool-description hygiene of a server, a saved `tools/list` response, or
//! every stdio server a client's configuration file names.

mod clients;
mod report;

use anyhow::Context;
use clients::Transport;
use report::{Outcome, ScanReport, Target};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toolwarden_check::probe::Probe;
use toolwarden_core::scan::{ScanConfig, Scanner, Severity};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Sarif,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Low,
    Medium,
    High,
    Never,
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Exit status: 0 when nothing at or above --fail-on was found, 1 when \
something was, 2 when a server or file could not be scanned (and nothing at or above --fail-on \
was found in the rest).\nRemote servers (a `url` in a client configuration) are listed, never contacted."
)]
pub struct ScanArgs {
    /// A saved `tools/list` response (the JSON-RPC response, its result, or an array of tools).
    #[arg(long, conflicts_with_all = ["client", "server"])]
    pub file: Option<PathBuf>,
    /// A client's configuration file: Claude Desktop's claude_desktop_config.json, Cursor's or
    /// VS Code's mcp.json, Gemini CLI's settings.json. Each stdio server it names is started.
    #[arg(long, conflicts_with = "server")]
    pub client: Option<PathBuf>,
    /// toolwarden's configuration file: its `[scan]` table (limit, accepted findings) applies.
    #[arg(long)]
    pub config: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// The lowest severity that makes the exit status 1.
    #[arg(long, value_enum, default_value_t = FailOn::Medium)]
    pub fail_on: FailOn,
    /// Seconds each server gets to start and answer.
    #[arg(long, default_value_t = 20.0)]
    pub timeout: f64,
    /// The server command and its arguments.
    #[arg(last = true, required_unless_present_any = ["file", "client"])]
    pub server: Vec<String>,
}

pub fn run(args: ScanArgs, config: ScanConfig) -> anyhow::Result<i32> {
    if !args.timeout.is_finite() || args.timeout <= 0.0 {
        anyhow::bail!("--timeout must be a positive number of seconds");
    }
    let timeout = Duration::from_secs_f64(args.timeout);
    let scanner = Scanner::new(config.options());
    let targets: Vec<Target> = if let Some(file) = &args.file {
        vec![scan_file(file, &scanner, &config)]
    } else if let Some(client) = &args.client {
        scan_client_config(client, &scanner, &config, timeout)?
    } else {
        let outcome = scan_server(&args.server, &[], None, timeout, &scanner, &config);
        vec![Target {
            name: server_label(&args.server),
            source: args.server.join(" "),
            file: None,
            outcome,
        }]
    };
    let report = ScanReport { targets };
    let text = match args.format {
        Format::Table => report::render_table(&report),
        Format::Json => report::render_json(&report),
        Format::Sarif => report::render_sarif(&report),
    };
    print!("{text}");
    let threshold = match args.fail_on {
        FailOn::Low => Some(Severity::Low),
        FailOn::Medium => Some(Severity::Medium),
        FailOn::High => Some(Severity::High),
        FailOn::Never => None,
    };
    Ok(report.exit_status(threshold))
}

fn scan_file(path: &Path, scanner: &Scanner, config: &ScanConfig) -> Target {
    let outcome = std::fs::read_to_string(path)
        .map_err(|error| format!("could not read the file: {error}"))
        .and_then(|text| tools_from_dump(&text))
        .map(|tools| scan_tools(None, tools, scanner, config));
    Target {
        name: path.file_name().map_or_else(
            || path.display().to_string(),
            |name| name.to_string_lossy().into_owned(),
        ),
        source: path.display().to_string(),
        file: Some(path.to_path_buf()),
        outcome: match outcome {
            Ok(scanned) => scanned,
            Err(error) => Outcome::Failed(error),
        },
    }
}

/// The tools of a saved listing: a JSON-RPC response, its `result`, or a bare array.
fn tools_from_dump(text: &str) -> Result<Vec<Value>, String> {
    let value: Value = serde_json::from_str(text).map_err(|error| format!("not JSON: {error}"))?;
    let tools = match &value {
        Value::Array(tools) => Some(tools),
        Value::Object(object) => object
            .get("tools")
            .or_else(|| object.get("result").and_then(|result| result.get("tools")))
            .and_then(Value::as_array),
        _ => None,
    };
    tools.cloned().ok_or_else(|| {
        "no `tools` array (expected a tools/list response, its result, or an array of tools)"
            .to_owned()
    })
}

fn scan_client_config(
    path: &Path,
    scanner: &Scanner,
    config: &ScanConfig,
    timeout: Duration,
) -> anyhow::Result<Vec<Target>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("could not read {}", path.display()))?;
    let client = clients::parse(path, &text).with_context(|| {
        format!(
            "could not read {} as a client configuration",
            path.display()
        )
    })?;
    eprintln!(
        "toolwarden scan: {} servers in {} ({})",
        client.servers.len(),
        path.display(),
        client.format.label()
    );
    // Servers start one after another: a client's servers may share state (a port, a lock).
    Ok(client
        .servers
        .into_iter()
        .map(|entry| {
            let (source, outcome) = match entry.transport {
                Ok(Transport::Stdio {
                    command,
                    args,
                    env,
                    cwd,
                }) => {
                    let mut full = vec![command];
                    full.extend(args);
                    let env: Vec<(String, String)> = env.into_iter().collect();
                    let outcome =
                        scan_server(&full, &env, cwd.as_deref(), timeout, scanner, config);
                    (full.join(" "), outcome)
                }
                Ok(Transport::Remote { url }) => (
                    url,
                    Outcome::Skipped(
                        "a remote server: toolwarden scan does not contact URLs".to_owned(),
                    ),
                ),
                Err(problem) => (
                    String::new(),
                    Outcome::Failed(format!("the entry is unusable: {problem}")),
                ),
            };
            Target {
                name: entry.name,
                source,
                file: Some(path.to_path_buf()),
                outcome,
            }
        })
        .collect())
}

fn scan_server(
    command: &[String],
    env: &[(String, String)],
    cwd: Option<&Path>,
    timeout: Duration,
    scanner: &Scanner,
    config: &ScanConfig,
) -> Outcome {
    let mut probe = match Probe::start_in(command, env, cwd, timeout) {
        Ok(probe) => probe,
        Err(error) => return Outcome::Failed(error.to_string()),
    };
    let listed = probe
        .initialize()
        .and_then(|initialized| probe.list_tools().map(|tools| (initialized, tools)));
    let evidence = probe.shutdown();
    match listed {
        Ok((initialized, tools)) => {
            let server = initialized
                .get("serverInfo")
                .and_then(|info| info.get("name"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            scan_tools(server, tools, scanner, config)
        }
        Err(error) => {
            let mut message = error.to_string();
            if let Some(last) = evidence.stderr_tail.back() {
                message.push_str(&format!(" (its last stderr line: {last})"));
            }
            Outcome::Failed(message)
        }
    }
}

fn scan_tools(
    server: Option<String>,
    tools: Vec<Value>,
    scanner: &Scanner,
    config: &ScanConfig,
) -> Outcome {
    let mut findings = Vec::new();
    for tool in &tools {
        let name = tool
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("(unnamed)")
            .to_owned();
        for finding in config.unallowed(&name, scanner.scan_tool(tool)) {
            findings.push((name.clone(), finding));
        }
    }
    Outcome::Scanned {
        server,
        tools: tools.len(),
        findings,
    }
}

fn server_label(command: &[String]) -> String {
    command
        .iter()
        .rev()
        .find(|arg| !arg.starts_with('-'))
        .map(|arg| {
            Path::new(arg)
                .file_name()
                .map_or_else(|| arg.clone(), |name| name.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "server".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dumps_are_read_in_every_shape() {
        let tools = r#"[{"name":"a"}]"#;
        assert_eq!(tools_from_dump(tools).unwrap().len(), 1);
        assert_eq!(
            tools_from_dump(&format!(r#"{{"tools":{tools}}}"#))
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            tools_from_dump(&format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":{tools}}}}}"#
            ))
            .unwrap()
            .len(),
            1
        );
        assert!(tools_from_dump(r#"{"x":1}"#).is_err());
        assert!(tools_from_dump("{").is_err());
    }

    #[test]
    fn allowed_findings_are_left_out() {
        let config: ScanConfig =
            toml::from_str("[[allow]]\ntool = \"a\"\ncode = \"too_long\"\n").unwrap();
        let scanner = Scanner::new(toolwarden_core::scan::ScanOptions {
            max_description_bytes: 10,
        });
        let tools =
            vec![serde_json::json!({"name": "a", "description": "a long description here"})];
        match scan_tools(None, tools.clone(), &scanner, &config) {
            Outcome::Scanned { findings, .. } => assert!(findings.is_empty()),
            other => panic!("{other:?}"),
        }
        match scan_tools(None, tools, &scanner, &ScanConfig::default()) {
            Outcome::Scanned { findings, .. } => assert_eq!(findings.len(), 1),
            other => panic!("{other:?}"),
        }
    }
}
