//! Stage `audit`: one structured log line per failed call. Expected failures (the agent can
//! correct course) at WARN, operator faults and server bugs at ERROR, successes at DEBUG.
//! Only names, kinds, paths and codes are logged: never an argument value.

use std::time::Duration;
use toolwarden_core::contract::ToolError;

pub fn failed_call(failure: &ToolError, client: Option<&str>, latency: Duration) {
    let paths: Vec<&str> = failure
        .fields
        .iter()
        .map(|field| field.path.as_str())
        .collect();
    let latency_ms = latency.as_secs_f64() * 1000.0;
    let tool = failure.tool.as_deref().unwrap_or("(unknown)");
    let kind = failure.kind.as_str();
    let source = match failure.source {
        toolwarden_core::contract::Source::Warden => "warden",
        toolwarden_core::contract::Source::Upstream => "upstream",
    };
    let client = client.unwrap_or("");
    // tracing needs the level at compile time: one event per level, same fields.
    macro_rules! failed_call_event {
        ($level:expr) => {
            tracing::event!(
                $level,
                tool,
                kind,
                expected = failure.kind.expected(),
                source,
                fields = ?paths,
                client,
                upstream_code = failure.upstream_code,
                http_status = failure.http_status,
                latency_ms,
                "tool call failed"
            )
        };
    }
    if failure.kind.expected() {
        failed_call_event!(tracing::Level::WARN);
    } else {
        failed_call_event!(tracing::Level::ERROR);
    }
}

pub fn succeeded_call(tool: &str, latency: Duration) {
    tracing::debug!(
        tool,
        latency_ms = latency.as_secs_f64() * 1000.0,
        "tool call succeeded"
    );
}
