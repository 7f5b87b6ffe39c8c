//! `toolwarden pin`: writes a lockfile of a server's tool definitions, or verifies the server
//! against one. The gateway reads the same file (`[pin] lockfile`) to spot a rug pull.

use anyhow::Context;
use std::path::PathBuf;
use std::time::Duration;
use toolwarden_check::probe::Probe;
use toolwarden_core::pin::{Change, Lockfile};

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Exit status with --verify: 0 when every tool matches its pin, 1 when a \
tool was added, removed or changed, 2 when the server could not be listed."
)]
pub struct PinArgs {
    /// The lockfile to write (or, with --verify, to read).
    #[arg(long, short, default_value = "toolwarden.lock")]
    pub lockfile: PathBuf,
    /// Compare the server with the lockfile instead of writing it.
    #[arg(long)]
    pub verify: bool,
    /// Seconds the server gets to start and answer.
    #[arg(long, default_value_t = 20.0)]
    pub timeout: f64,
    /// The server command and its arguments.
    #[arg(last = true, required = true)]
    pub server: Vec<String>,
}

pub fn run(args: PinArgs) -> anyhow::Result<i32> {
    if !args.timeout.is_finite() || args.timeout <= 0.0 {
        anyhow::bail!("--timeout must be a positive number of seconds");
    }
    let mut probe = Probe::start(&args.server, Duration::from_secs_f64(args.timeout))
        .context("could not start the server")?;
    let tools = probe
        .initialize()
        .and_then(|_| probe.list_tools())
        .context("could not list the server's tools");
    probe.shutdown();
    let tools = tools?;
    if args.verify {
        let text = std::fs::read_to_string(&args.lockfile)
            .with_context(|| format!("could not read {}", args.lockfile.display()))?;
        let lockfile = Lockfile::parse(&text)
            .with_context(|| format!("invalid lockfile {}", args.lockfile.display()))?;
        let changes = lockfile.compare(&tools);
        for change in &changes {
            let what = match change.change {
                Change::Added => "added (not pinned)",
                Change::Removed => "removed",
                Change::Changed => "changed",
            };
            println!("{}: {what}", change.tool);
        }
        if changes.is_empty() {
            println!("{} tools match {}", tools.len(), args.lockfile.display());
            return Ok(0);
        }
        return Ok(1);
    }
    let lockfile = Lockfile::from_tools(&tools).context("the server's tools cannot be pinned")?;
    let text = lockfile.to_toml_string()?;
    std::fs::write(&args.lockfile, text)
        .with_context(|| format!("could not write {}", args.lockfile.display()))?;
    eprintln!(
        "toolwarden pin: {} tools pinned in {}",
        tools.len(),
        args.lockfile.display()
    );
    Ok(0)
}
