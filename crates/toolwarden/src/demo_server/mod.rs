//! `toolwarden demo-server`: a real MCP server over stdio whose tools misbehave on purpose,
//! so every toolwarden feature can be shown and tested without installing anything.
//!
//! It speaks newline-delimited JSON-RPC 2.0 in both protocol eras: the legacy `initialize`
//! handshake (2024-11-05 to 2025-11-25) and the stateless 2026-07-28 protocol.

mod catalog;
mod era;
mod jsonrpc;
mod outbox;
mod server;
mod tools;

use std::io::{self, BufRead};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use outbox::Outbox;
use server::Server;

/// Options of the demo server.
#[derive(clap::Args, Debug, Clone)]
pub struct DemoArgs {
    /// Tools per `tools/list` page.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub page_size: u32,
    /// Size in bytes of the text `read_log` returns.
    #[arg(long, default_value_t = 1_048_576)]
    pub large_bytes: usize,
    /// How long `slow_task` waits when the call gives no `ms`.
    #[arg(long, default_value_t = 2000)]
    pub slow_ms: u64,
    /// How long `list_roots` waits for the client to answer `roots/list`.
    #[arg(long, default_value_t = 10_000)]
    pub roots_timeout_ms: u64,
    /// Also offer `send_note`, whose description hides instructions (tool poisoning).
    #[arg(long)]
    pub poisoned: bool,
    /// Also offer `crash`, which makes the server exit with status 3 without answering.
    #[arg(long)]
    pub crash_tool: bool,
    /// Also offer tools whose input schemas a gateway cannot use: one `$ref`s a remote URL,
    /// one is a reference cycle.
    #[arg(long)]
    pub bad_schemas: bool,
    /// After this many tool calls, add `extra_tool` and send `notifications/tools/list_changed`.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub list_changed_after: Option<u64>,
}

/// How long calls still running at end of input may take to finish before the process exits.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves one client on stdin/stdout until stdin closes.
pub fn run(args: &DemoArgs) -> anyhow::Result<()> {
    let server = Arc::new(Server::new(
        args.clone(),
        Outbox::new(Box::new(io::stdout())),
    ));
    let mut stdin = io::stdin().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = stdin
            .read_until(b'\n', &mut line)
            .context("reading a message from stdin")?;
        if read == 0 {
            break;
        }
        let written = match std::str::from_utf8(&line) {
            Ok(text) if text.trim().is_empty() => Ok(()),
            Ok(text) => server.handle_line(text.trim_end_matches(['\n', '\r'])),
            Err(_) => server.reject_unreadable_line(),
        };
        written.context("writing a message to stdout")?;
    }
    server.finish(SHUTDOWN_GRACE);
    Ok(())
}
