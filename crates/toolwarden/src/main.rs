//! `toolwarden`: keeps MCP tool calls honest.

mod check_cmd;
mod demo_server;
mod logging;
mod pin_cmd;
mod scan_cmd;

use anyhow::Context;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use toolwarden_core::config::Config;
use toolwarden_core::pin::Lockfile;
use toolwarden_core::scan::ScanMode;
use toolwarden_gateway::pipeline::{Pipeline, PipelineConfig};
use toolwarden_gateway::relay::{self, RelayOptions};
use toolwarden_gateway::session::SessionConfig;

#[derive(Parser)]
#[command(
    name = "toolwarden",
    version,
    about = "Keeps MCP tool calls honest: useful errors for the model, no echoed secrets, no hidden instructions."
)]
struct Cli {
    /// Log format on stderr.
    #[arg(long, global = true, value_enum, default_value_t = logging::Format::Human)]
    log_format: logging::Format,
    /// Log filter, e.g. `warn` or `toolwarden=debug` (also read from TOOLWARDEN_LOG).
    #[arg(long, global = true)]
    log_level: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run an MCP server behind toolwarden on stdio: put this in a client's config in place of
    /// the server's command.
    Run {
        /// A TOML configuration file.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Override the config's `[scan] mode` for tool descriptions.
        #[arg(long, value_enum)]
        scan_mode: Option<ScanModeArg>,
        /// Run in front of the built-in demo server instead of a server command.
        #[arg(long, conflicts_with = "server")]
        demo: bool,
        /// The server command and its arguments.
        #[arg(last = true, required_unless_present = "demo")]
        server: Vec<String>,
    },
    /// Scan tool definitions for hidden characters and injected instructions: of a server,
    /// a saved tools/list response, or every server in a client's configuration file.
    Scan(scan_cmd::ScanArgs),
    /// Pin a server's tool definitions in a lockfile (or verify them against one).
    Pin(pin_cmd::PinArgs),
    /// A built-in MCP server (stdio) whose tools fail the way real servers do, to see and test
    /// what toolwarden changes.
    DemoServer(demo_server::DemoArgs),
    /// Grade a server's error hygiene with a battery of bad calls, directly and through
    /// toolwarden, side by side.
    Check(check_cmd::CheckArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.log_format, cli.log_level.as_deref());
    match run(cli.command) {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(error) => {
            eprintln!("toolwarden: {error:#}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> anyhow::Result<i32> {
    match command {
        Command::Run {
            config,
            scan_mode,
            demo,
            server,
        } => {
            let config_dir = config
                .as_deref()
                .and_then(std::path::Path::parent)
                .map(std::path::Path::to_path_buf);
            let mut config = load_config(config.as_deref())?;
            if let Some(mode) = scan_mode {
                config.scan.mode = mode.into();
            }
            let lockfile = match &config.pin.lockfile {
                Some(path) => Some(load_lockfile(&config_dir.unwrap_or_default().join(path))?),
                None => None,
            };
            let command = if demo { demo_command()? } else { server };
            let options = RelayOptions {
                command,
                session: SessionConfig {
                    max_line_bytes: config.gateway.max_line_bytes,
                    catalog_fetch_timeout: Duration::from_millis(
                        config.gateway.catalog_fetch_timeout_ms,
                    ),
                    ..SessionConfig::default()
                },
                grace: Duration::from_millis(config.gateway.shutdown_grace_ms),
            };
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("could not start the async runtime")?;
            if config.scan.mode != ScanMode::Off || !config.scan.tools.is_empty() {
                // The scanner's automaton takes milliseconds to build: on another thread, while
                // the server starts and the client says hello, not when tools are first listed.
                std::thread::spawn(|| toolwarden_core::scan::Scanner::default().warm_up());
            }
            let pipeline = move || {
                Pipeline::new(PipelineConfig {
                    errors: config.errors,
                    scan: config.scan,
                    lockfile,
                })
            };
            Ok(runtime.block_on(relay::run_stdio(options, pipeline))?)
        }
        Command::Scan(args) => {
            let config = load_config(args.config.as_deref())?;
            scan_cmd::run(args, config.scan)
        }
        Command::Pin(args) => pin_cmd::run(args),
        Command::DemoServer(args) => {
            demo_server::run(&args)?;
            Ok(0)
        }
        Command::Check(args) => check_cmd::run(args),
    }
}

/// `[scan] mode` on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScanModeArg {
    Warn,
    Strict,
    Off,
}

impl ScanModeArg {
    pub fn as_str(self) -> &'static str {
        match self {
            ScanModeArg::Warn => "warn",
            ScanModeArg::Strict => "strict",
            ScanModeArg::Off => "off",
        }
    }
}

impl From<ScanModeArg> for ScanMode {
    fn from(mode: ScanModeArg) -> ScanMode {
        match mode {
            ScanModeArg::Warn => ScanMode::Warn,
            ScanModeArg::Strict => ScanMode::Strict,
            ScanModeArg::Off => ScanMode::Off,
        }
    }
}

/// This very binary's `demo-server`, so the demo needs nothing installed.
fn demo_command() -> anyhow::Result<Vec<String>> {
    let exe = std::env::current_exe().context("could not find the toolwarden executable")?;
    Ok(vec![
        exe.to_string_lossy().into_owned(),
        "demo-server".to_owned(),
    ])
}

fn load_lockfile(path: &std::path::Path) -> anyhow::Result<Lockfile> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("could not read the lockfile {}", path.display()))?;
    Lockfile::parse(&text).with_context(|| format!("invalid lockfile {}", path.display()))
}

fn load_config(path: Option<&std::path::Path>) -> anyhow::Result<Config> {
    let Some(path) = path else {
        return Ok(Config::default());
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("could not read the config file {}", path.display()))?;
    Config::parse(&text).with_context(|| format!("invalid config file {}", path.display()))
}
