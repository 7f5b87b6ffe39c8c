mod demo_server;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "toolwarden", version, about = "Keeps MCP tool calls honest.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs a built-in MCP server over stdio whose tools misbehave on purpose.
    DemoServer(demo_server::DemoArgs),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::DemoServer(args) => demo_server::run(&args),
    }
}
