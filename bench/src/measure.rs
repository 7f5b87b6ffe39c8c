//! One measurement of one configuration: spawn, handshake, list the tools, then sequential calls
//! (one in flight) and a closed loop with many in flight, and the process's peak memory.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::BenchError;
use crate::client::{Peer, Reply};
use crate::stats::{mean, median, percentile};

/// Which arguments the calls carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Calls {
    /// `add` with two integers: every layer lets it through to the upstream.
    Valid,
    /// `add` with a string where an integer is required: a gateway that validates answers it
    /// itself; otherwise the upstream rejects it.
    Invalid,
}

#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    pub name: &'static str,
    pub about: &'static str,
    pub command: Vec<String>,
    pub calls: Calls,
    /// Whether the closed loop with many calls in flight runs.
    pub throughput: bool,
    /// Whose peak RSS is reported: the process the generator starts.
    pub rss_of: &'static str,
}

#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub warmup_calls: usize,
    pub calls: usize,
    pub window: Duration,
    pub in_flight: usize,
    pub list_repeats: usize,
    /// Hard limit on one measurement, enforced by killing the process.
    pub limit: Duration,
}

/// Every figure of one measurement. Times in microseconds.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    pub spawn_to_ready_us: f64,
    pub list_first_us: f64,
    pub list_median_us: f64,
    pub list_bytes: usize,
    pub tools_listed: usize,
    pub seq_calls: usize,
    pub seq_p50_us: f64,
    pub seq_p90_us: f64,
    pub seq_p99_us: f64,
    pub seq_mean_us: f64,
    pub throughput_calls_per_s: Option<f64>,
    pub peak_rss_kib: Option<u64>,
    /// Resident memory at the end, split into private (heap, stacks) and file-backed (the
    /// binary's code and read-only data, shared libraries): the latter is shared and clean.
    pub rss_anon_kib: Option<u64>,
    pub rss_file_kib: Option<u64>,
    /// Who produced the answers to the calls: `upstream`, or `warden` when toolwarden's own
    /// error metadata says it answered.
    pub answered_by: String,
}

impl Figures {
    /// The numeric figures by name, for medians and ratios across repetitions.
    pub fn metrics(&self) -> Vec<(&'static str, Option<f64>)> {
        vec![
            ("spawn_to_ready_us", Some(self.spawn_to_ready_us)),
            ("list_first_us", Some(self.list_first_us)),
            ("list_median_us", Some(self.list_median_us)),
            ("seq_p50_us", Some(self.seq_p50_us)),
            ("seq_p90_us", Some(self.seq_p90_us)),
            ("seq_p99_us", Some(self.seq_p99_us)),
            ("seq_mean_us", Some(self.seq_mean_us)),
            ("throughput_calls_per_s", self.throughput_calls_per_s),
            ("peak_rss_kib", self.peak_rss_kib.map(|kib| kib as f64)),
            ("rss_anon_kib", self.rss_anon_kib.map(|kib| kib as f64)),
            ("rss_file_kib", self.rss_file_kib.map(|kib| kib as f64)),
        ]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Success,
    ErrorResult,
    ProtocolError,
}

#[derive(Deserialize)]
struct ResultFlag {
    #[serde(rename = "isError", default)]
    is_error: bool,
}

pub fn measure(scenario: &Scenario, plan: &Plan, log: &Path) -> Result<Figures, BenchError> {
    let started = Instant::now();
    let mut peer = Peer::spawn(&scenario.command, log, plan.limit)?;
    let mut session = Session {
        peer: &mut peer,
        next_id: 0,
        request: Vec::with_capacity(256),
        calls: scenario.calls,
    };

    session.request_line(
        "initialize",
        r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"toolwarden-bench","version":"0.1.0"}}"#,
    );
    session.flush()?;
    let ready = session.peer.next_response()?;
    let ready_reply: Reply<'_> = parse_reply(ready)?;
    if ready_reply.result.is_none() {
        return Err(BenchError::Protocol(format!(
            "initialize failed: {}",
            String::from_utf8_lossy(ready)
        )));
    }
    let spawn_to_ready = started.elapsed();
    session
        .peer
        .send(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")?;

    let (list_first, list_bytes, tools_listed) = session.list_tools()?;
    let mut list_times = Vec::with_capacity(plan.list_repeats);
    for _ in 0..plan.list_repeats {
        list_times.push(micros(session.list_tools()?.0));
    }

    let mut answered_by = String::new();
    for index in 0..plan.warmup_calls {
        let (_, line) = session.call_round_trip()?;
        if index == 0 {
            answered_by = who_answered(&line);
        }
    }
    let mut latencies = Vec::with_capacity(plan.calls);
    for _ in 0..plan.calls {
        latencies.push(micros(session.call_round_trip()?.0));
    }
    latencies.sort_by(f64::total_cmp);

    let throughput = if scenario.throughput {
        Some(session.closed_loop(plan.in_flight, plan.window)?)
    } else {
        None
    };
    let status = std::fs::read_to_string(format!("/proc/{}/status", peer.pid())).ok();
    let memory = |field: &str| {
        status
            .as_deref()
            .and_then(|status| status_kib(status, field))
    };
    peer.close()?;

    let missing = || BenchError::Protocol("no sequential calls were measured".to_owned());
    Ok(Figures {
        spawn_to_ready_us: micros(spawn_to_ready),
        list_first_us: micros(list_first),
        list_median_us: median(&list_times).unwrap_or(micros(list_first)),
        list_bytes,
        tools_listed,
        seq_calls: latencies.len(),
        seq_p50_us: percentile(&latencies, 50.0).ok_or_else(missing)?,
        seq_p90_us: percentile(&latencies, 90.0).ok_or_else(missing)?,
        seq_p99_us: percentile(&latencies, 99.0).ok_or_else(missing)?,
        seq_mean_us: mean(&latencies).ok_or_else(missing)?,
        throughput_calls_per_s: throughput,
        peak_rss_kib: memory("VmHWM:"),
        rss_anon_kib: memory("RssAnon:"),
        rss_file_kib: memory("RssFile:"),
        answered_by,
    })
}

struct Session<'p> {
    peer: &'p mut Peer,
    next_id: u64,
    /// Requests written but not yet sent, so a burst leaves in one write.
    request: Vec<u8>,
    calls: Calls,
}

impl Session<'_> {
    fn request_line(&mut self, method: &str, params: &str) {
        let id = self.next_id;
        self.next_id += 1;
        // Writing into a Vec cannot fail.
        let _ = writeln!(
            self.request,
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#
        );
    }

    fn call_line(&mut self) {
        let params = match self.calls {
            Calls::Valid => r#"{"name":"add","arguments":{"a":2,"b":3}}"#,
            Calls::Invalid => r#"{"name":"add","arguments":{"a":"two","b":3}}"#,
        };
        self.request_line("tools/call", params);
    }

    fn flush(&mut self) -> Result<(), BenchError> {
        if !self.request.is_empty() {
            self.peer.send(&self.request)?;
            self.request.clear();
        }
        Ok(())
    }

    /// Round trip, size in bytes and number of tools of one `tools/list`.
    fn list_tools(&mut self) -> Result<(Duration, usize, usize), BenchError> {
        self.request_line("tools/list", "{}");
        let sent = Instant::now();
        self.flush()?;
        let line = self.peer.next_response()?;
        let elapsed = sent.elapsed();
        let reply: Value = serde_json::from_slice(line)
            .map_err(|error| BenchError::Protocol(format!("tools/list answer: {error}")))?;
        let tools = reply
            .pointer("/result/tools")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                BenchError::Protocol(format!("tools/list failed: {}", truncated(line)))
            })?;
        Ok((elapsed, line.len(), tools.len()))
    }

    /// One call and its answer, checked against what this scenario expects.
    fn call_round_trip(&mut self) -> Result<(Duration, Vec<u8>), BenchError> {
        self.call_line();
        let sent = Instant::now();
        self.flush()?;
        let line = self.peer.next_response()?;
        let elapsed = sent.elapsed();
        check(self.calls, line)?;
        Ok((elapsed, line.to_vec()))
    }

    /// Keeps `in_flight` calls outstanding for `window`; returns completed calls per second.
    fn closed_loop(&mut self, in_flight: usize, window: Duration) -> Result<f64, BenchError> {
        let start = Instant::now();
        let end = start + window;
        let mut outstanding = 0usize;
        let mut completed = 0u64;
        for _ in 0..in_flight {
            self.call_line();
            outstanding += 1;
        }
        self.flush()?;
        while outstanding > 0 {
            let line = self.peer.next_response()?;
            outstanding -= 1;
            check(self.calls, line)?;
            if Instant::now() < end {
                completed += 1;
                self.call_line();
                outstanding += 1;
            }
            // Replacements for every answer already buffered leave together.
            if !self.peer.has_buffered_line() {
                self.flush()?;
            }
        }
        Ok(completed as f64 / window.as_secs_f64())
    }
}

fn check(calls: Calls, line: &[u8]) -> Result<(), BenchError> {
    let outcome = outcome(line)?;
    let fits = match calls {
        Calls::Valid => outcome == Outcome::Success,
        Calls::Invalid => outcome != Outcome::Success,
    };
    if fits {
        Ok(())
    } else {
        Err(BenchError::Protocol(format!(
            "unexpected answer to a {:?} call: {}",
            calls,
            truncated(line)
        )))
    }
}

fn parse_reply(line: &[u8]) -> Result<Reply<'_>, BenchError> {
    serde_json::from_slice(line)
        .map_err(|error| BenchError::Protocol(format!("a line that is not JSON-RPC: {error}")))
}

fn outcome(line: &[u8]) -> Result<Outcome, BenchError> {
    let reply = parse_reply(line)?;
    match (reply.result, reply.error) {
        (_, Some(_)) => Ok(Outcome::ProtocolError),
        (Some(result), None) => {
            let flag: ResultFlag = serde_json::from_str(result.get())
                .map_err(|error| BenchError::Protocol(format!("a call result: {error}")))?;
            Ok(if flag.is_error {
                Outcome::ErrorResult
            } else {
                Outcome::Success
            })
        }
        (None, None) => Err(BenchError::Protocol(format!(
            "an answer with neither result nor error: {}",
            truncated(line)
        ))),
    }
}

fn who_answered(line: &[u8]) -> String {
    let source = serde_json::from_slice::<Value>(line)
        .ok()
        .and_then(|reply| {
            let meta = reply
                .pointer("/result/_meta")
                .or_else(|| reply.pointer("/error/data"))?;
            meta.get("toolwarden/error")?
                .get("source")?
                .as_str()
                .map(str::to_owned)
        });
    source.unwrap_or_else(|| "upstream".to_owned())
}

/// A `kB` figure of `/proc/<pid>/status`, e.g. `VmHWM:` (the peak resident set).
fn status_kib(status: &str, field: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

fn truncated(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    text.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_follow_result_error_and_is_error() {
        assert_eq!(
            outcome(br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#).unwrap(),
            Outcome::Success
        );
        assert_eq!(
            outcome(br#"{"jsonrpc":"2.0","id":1,"result":{"isError": true,"content":[]}}"#)
                .unwrap(),
            Outcome::ErrorResult
        );
        assert_eq!(
            outcome(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}"#).unwrap(),
            Outcome::ProtocolError
        );
        assert!(outcome(br#"{"jsonrpc":"2.0","id":1}"#).is_err());
    }

    #[test]
    fn the_warden_is_named_only_when_its_metadata_says_so() {
        let warden = br#"{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[],"_meta":{"toolwarden/error":{"source":"warden"}}}}"#;
        assert_eq!(who_answered(warden), "warden");
        let upstream = br#"{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[]}}"#;
        assert_eq!(who_answered(upstream), "upstream");
    }

    #[test]
    fn reads_memory_figures_from_proc_status() {
        let status = "Name:\tx\nVmHWM:\t   13664 kB\nRssAnon:\t    5040 kB\n";
        assert_eq!(status_kib(status, "VmHWM:"), Some(13664));
        assert_eq!(status_kib(status, "RssAnon:"), Some(5040));
        assert_eq!(status_kib(status, "RssFile:"), None);
        let own = std::fs::read_to_string("/proc/self/status").unwrap();
        assert!(status_kib(&own, "VmHWM:").unwrap() > 0);
    }
}
