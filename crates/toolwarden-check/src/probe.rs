//! A small JSON-RPC client over a child process's stdio, made to survive servers that crash,
//! hang, print junk or answer garbage: every such failure comes back as a [`ProbeError`] within
//! the request timeout, never as a hang or a panic.

use serde_json::{Value, json};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The protocol version offered in the legacy `initialize` handshake.
pub const PROTOCOL_VERSION: &str = "2025-11-25";
/// How the probe introduces itself to servers.
pub const CLIENT_NAME: &str = "toolwarden-check";

/// A server that keeps handing out cursors is not allowed to keep the probe busy forever.
const MAX_TOOL_PAGES: usize = 100;
/// Longer lines are cut; a probe needs the head of an answer, not a gigabyte of it.
const MAX_LINE_BYTES: u64 = 64 * 1024 * 1024;
/// How many stderr lines and junk stdout lines are kept as evidence.
const EVIDENCE_LINES: usize = 20;
/// How long a server gets to exit on its own once its stdin is closed, and again after SIGTERM.
const EXIT_GRACE: Duration = Duration::from_secs(2);

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("the server command is empty")]
    EmptyCommand,
    #[error("could not start `{program}`: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("no answer to `{method}` within {} ms", timeout.as_millis())]
    Timeout { method: String, timeout: Duration },
    #[error("the server closed its output{}", stderr_suffix(.stderr_tail))]
    Exited { stderr_tail: Vec<String> },
    #[error("could not write to the server: {0}")]
    Write(std::io::Error),
    #[error("`{method}` failed with JSON-RPC error {code}: {message}")]
    Rpc {
        method: String,
        code: i64,
        message: String,
    },
    #[error("the answer to `{method}` is not what the protocol requires: {problem}")]
    Malformed { method: String, problem: String },
}

fn stderr_suffix(tail: &[String]) -> String {
    match tail.last() {
        Some(line) => format!(" (last stderr line: {line})"),
        None => String::new(),
    }
}

/// One JSON-RPC response, kept both parsed and as the exact line the server wrote, so that
/// "never echoed" can be checked on the raw bytes.
#[derive(Debug, Clone)]
pub struct Response {
    pub raw: String,
    pub message: Value,
}

enum Incoming {
    Response(Response),
    Closed,
}

/// What the server did besides answering: kept for the report.
#[derive(Debug, Default, Clone)]
pub struct Evidence {
    /// Lines on stdout that are not JSON-RPC messages.
    pub junk_lines: Vec<String>,
    pub junk_count: usize,
    pub stderr_tail: VecDeque<String>,
}

type SharedStdin = Arc<Mutex<Option<ChildStdin>>>;

/// A running server and the client end of its stdio.
pub struct Probe {
    child: Child,
    stdin: SharedStdin,
    incoming: Receiver<Incoming>,
    evidence: Arc<Mutex<Evidence>>,
    next_id: u64,
    timeout: Duration,
    closed: bool,
}

impl Probe {
    /// Starts `command` in its own process group (servers started through `npx` or `uvx` have
    /// grandchildren, and all of them must go at the end).
    pub fn start(command: &[String], timeout: Duration) -> Result<Probe, ProbeError> {
        Probe::start_in(command, &[], None, timeout)
    }

    /// As [`Probe::start`], with extra environment variables and a working directory, as a
    /// client's configuration file may give them.
    pub fn start_in(
        command: &[String],
        env: &[(String, String)],
        cwd: Option<&std::path::Path>,
        timeout: Duration,
    ) -> Result<Probe, ProbeError> {
        let (program, args) = command.split_first().ok_or(ProbeError::EmptyCommand)?;
        let mut builder = Command::new(program);
        builder
            .args(args)
            .envs(env.iter().map(|(name, value)| (name, value)));
        if let Some(cwd) = cwd {
            builder.current_dir(cwd);
        }
        let mut child = builder
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|source| ProbeError::Spawn {
                program: program.clone(),
                source,
            })?;
        let stdin: SharedStdin = Arc::new(Mutex::new(child.stdin.take()));
        let evidence = Arc::new(Mutex::new(Evidence::default()));
        let (sender, incoming) = channel();
        if let Some(stdout) = child.stdout.take() {
            let stdin = Arc::clone(&stdin);
            let evidence = Arc::clone(&evidence);
            std::thread::spawn(move || read_stdout(stdout, &sender, &stdin, &evidence));
        }
        if let Some(stderr) = child.stderr.take() {
            let evidence = Arc::clone(&evidence);
            std::thread::spawn(move || read_stderr(stderr, &evidence));
        }
        Ok(Probe {
            child,
            stdin,
            incoming,
            evidence,
            next_id: 0,
            timeout,
            closed: false,
        })
    }

    /// The legacy handshake: `initialize`, then `notifications/initialized`. Returns the
    /// server's `initialize` result.
    pub fn initialize(&mut self) -> Result<Value, ProbeError> {
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {"roots": {"listChanged": false}},
            "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")},
        });
        let response = self.request("initialize", params)?;
        let result = expect_result("initialize", &response)?;
        self.notify("notifications/initialized", json!({}))?;
        Ok(result)
    }

    /// Every tool the server lists, over all pages.
    pub fn list_tools(&mut self) -> Result<Vec<Value>, ProbeError> {
        let mut tools = Vec::new();
        let mut cursor: Option<Value> = None;
        for _ in 0..MAX_TOOL_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({ "cursor": cursor }),
                None => json!({}),
            };
            let response = self.request("tools/list", params)?;
            let result = expect_result("tools/list", &response)?;
            let Some(page) = result.get("tools").and_then(Value::as_array) else {
                return Err(ProbeError::Malformed {
                    method: "tools/list".into(),
                    problem: "the result has no `tools` array".into(),
                });
            };
            tools.extend(page.iter().cloned());
            cursor = result
                .get("nextCursor")
                .filter(|cursor| !cursor.is_null())
                .cloned();
            if cursor.is_none() {
                return Ok(tools);
            }
        }
        Err(ProbeError::Malformed {
            method: "tools/list".into(),
            problem: format!("still handing out cursors after {MAX_TOOL_PAGES} pages"),
        })
    }

    /// One `tools/call`; the answer may be a result or a JSON-RPC error, both are returned.
    pub fn call_tool(&mut self, name: &str, arguments: &Value) -> Result<Response, ProbeError> {
        self.request(
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
        )
    }

    /// Sends a request and waits for the response with the same id. Answers to earlier requests
    /// that timed out are dropped on the way.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Response, ProbeError> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.incoming.recv_timeout(left) {
                Ok(Incoming::Response(response)) => {
                    if response.message.get("id").and_then(Value::as_u64) == Some(id) {
                        return Ok(response);
                    }
                }
                Ok(Incoming::Closed) | Err(RecvTimeoutError::Disconnected) => {
                    self.closed = true;
                    return Err(ProbeError::Exited {
                        stderr_tail: self.evidence().stderr_tail.into_iter().collect(),
                    });
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(ProbeError::Timeout {
                        method: method.to_owned(),
                        timeout: self.timeout,
                    });
                }
            }
        }
    }

    pub fn notify(&mut self, method: &str, params: Value) -> Result<(), ProbeError> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    fn send(&mut self, message: &Value) -> Result<(), ProbeError> {
        if self.closed {
            return Err(ProbeError::Exited {
                stderr_tail: self.evidence().stderr_tail.into_iter().collect(),
            });
        }
        match write_line(&self.stdin, message) {
            Ok(()) => Ok(()),
            // A server that died before reading is a server that exited, not a local I/O fault.
            Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                // Give the stderr reader a moment to collect the last words.
                std::thread::sleep(Duration::from_millis(50));
                Err(ProbeError::Exited {
                    stderr_tail: self.evidence().stderr_tail.into_iter().collect(),
                })
            }
            Err(error) => Err(ProbeError::Write(error)),
        }
    }

    /// A copy of what the server did besides answering, so far.
    pub fn evidence(&self) -> Evidence {
        self.evidence
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Closes the server's stdin, gives it a moment to exit, then ends its whole process group.
    pub fn shutdown(mut self) -> Evidence {
        self.stop();
        self.evidence()
    }

    fn stop(&mut self) {
        self.stdin
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let group = libc::pid_t::try_from(self.child.id()).ok();
        if !wait_for_exit(&mut self.child, EXIT_GRACE) {
            signal_group(group, libc::SIGTERM);
            if !wait_for_exit(&mut self.child, EXIT_GRACE) {
                signal_group(group, libc::SIGKILL);
                let _ = self.child.wait();
            }
        }
        // The leader may be gone while grandchildren it started still hold the group.
        signal_group(group, libc::SIGKILL);
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.stop();
        }
    }
}

fn wait_for_exit(child: &mut Child, grace: Duration) -> bool {
    let deadline = Instant::now() + grace;
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return true,
            Ok(None) if Instant::now() >= deadline => return false,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

fn signal_group(group: Option<libc::pid_t>, signal: libc::c_int) {
    if let Some(group) = group.filter(|group| *group > 0) {
        // SAFETY: kill(2) takes plain integers and touches no memory of ours; a negative pid
        // addresses the process group the child leads (it was started with process_group(0)).
        unsafe {
            libc::kill(-group, signal);
        }
    }
}

fn write_line(stdin: &SharedStdin, message: &Value) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    let mut guard = stdin.lock().unwrap_or_else(PoisonError::into_inner);
    match guard.as_mut() {
        Some(stdin) => {
            stdin.write_all(&line)?;
            stdin.flush()
        }
        None => Err(std::io::Error::new(
            std::io::ErrorKind::BrokenPipe,
            "stdin already closed",
        )),
    }
}

/// The code and message of a JSON-RPC error object, with 0 and "" for what is missing.
pub fn error_parts(error: &Value) -> (i64, String) {
    (
        error.get("code").and_then(Value::as_i64).unwrap_or(0),
        error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
    )
}

fn expect_result(method: &str, response: &Response) -> Result<Value, ProbeError> {
    if let Some(error) = response.message.get("error") {
        let (code, message) = error_parts(error);
        return Err(ProbeError::Rpc {
            method: method.to_owned(),
            code,
            message,
        });
    }
    match response.message.get("result") {
        Some(result) if result.is_object() => Ok(result.clone()),
        _ => Err(ProbeError::Malformed {
            method: method.to_owned(),
            problem: "the response has neither an object `result` nor an `error`".into(),
        }),
    }
}

fn read_stdout(
    stdout: impl Read,
    sender: &Sender<Incoming>,
    stdin: &SharedStdin,
    evidence: &Mutex<Evidence>,
) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut line = Vec::new();
        match reader
            .by_ref()
            .take(MAX_LINE_BYTES)
            .read_until(b'\n', &mut line)
        {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        match classify_line(text) {
            Line::Response(message) => {
                let response = Response {
                    raw: text.to_owned(),
                    message,
                };
                if sender.send(Incoming::Response(response)).is_err() {
                    break;
                }
            }
            Line::Request { id, method } => {
                // A server blocked on an unanswered request of its own would stall every call.
                let _ = write_line(stdin, &answer_server_request(id, &method));
            }
            Line::Notification => {}
            Line::Junk => {
                let mut evidence = evidence.lock().unwrap_or_else(PoisonError::into_inner);
                evidence.junk_count += 1;
                if evidence.junk_lines.len() < EVIDENCE_LINES {
                    evidence.junk_lines.push(text.chars().take(200).collect());
                }
            }
        }
    }
    let _ = sender.send(Incoming::Closed);
}

fn read_stderr(stderr: impl Read, evidence: &Mutex<Evidence>) {
    let mut reader = BufReader::new(stderr);
    loop {
        let mut line = Vec::new();
        match reader.by_ref().take(64 * 1024).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line).trim_end().to_owned();
        let mut evidence = evidence.lock().unwrap_or_else(PoisonError::into_inner);
        if evidence.stderr_tail.len() == EVIDENCE_LINES {
            evidence.stderr_tail.pop_front();
        }
        evidence.stderr_tail.push_back(text);
    }
}

enum Line {
    Response(Value),
    Request { id: Value, method: String },
    Notification,
    Junk,
}

fn classify_line(text: &str) -> Line {
    let Ok(message) = serde_json::from_str::<Value>(text) else {
        return Line::Junk;
    };
    let Some(object) = message.as_object() else {
        return Line::Junk;
    };
    match (
        object.get("method").and_then(Value::as_str),
        object.get("id"),
    ) {
        (Some(method), Some(id)) => Line::Request {
            id: id.clone(),
            method: method.to_owned(),
        },
        (Some(_), None) => Line::Notification,
        (None, Some(_)) if object.contains_key("result") || object.contains_key("error") => {
            Line::Response(message)
        }
        _ => Line::Junk,
    }
}

/// The probe shares no roots and supports nothing else a server may ask of a client.
fn answer_server_request(id: Value, method: &str) -> Value {
    match method {
        "roots/list" => json!({"jsonrpc": "2.0", "id": id, "result": {"roots": []}}),
        "ping" => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
        _ => json!({
            "jsonrpc": "2.0", "id": id,
            "error": {"code": -32601, "message": "Method not found"}
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    const SHORT: Duration = Duration::from_millis(500);

    #[test]
    fn a_hanging_server_times_out() {
        let mut probe = Probe::start(&shell("cat > /dev/null"), SHORT).unwrap();
        let started = Instant::now();
        let error = probe.initialize().unwrap_err();
        assert!(matches!(error, ProbeError::Timeout { .. }), "{error}");
        assert!(started.elapsed() < Duration::from_secs(3));
        probe.shutdown();
    }

    #[test]
    fn a_crashing_server_is_reported_with_its_stderr() {
        let mut probe = Probe::start(&shell("echo boom >&2; exit 3"), SHORT).unwrap();
        let error = probe.initialize().unwrap_err();
        let ProbeError::Exited { stderr_tail } = &error else {
            panic!("{error}");
        };
        std::thread::sleep(Duration::from_millis(100));
        let tail = probe.evidence().stderr_tail;
        assert!(
            stderr_tail.iter().chain(tail.iter()).any(|l| l == "boom"),
            "{error}"
        );
        // Every later request fails at once instead of waiting for the timeout.
        assert!(matches!(probe.list_tools(), Err(ProbeError::Exited { .. })));
    }

    #[test]
    fn junk_lines_are_kept_as_evidence_and_answers_still_arrive() {
        let script = r#"read line; echo 'Starting server...'; echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}'; cat > /dev/null"#;
        let mut probe = Probe::start(&shell(script), Duration::from_secs(5)).unwrap();
        let result = probe.initialize().unwrap();
        assert_eq!(result["protocolVersion"], "2025-11-25");
        let evidence = probe.shutdown();
        assert_eq!(evidence.junk_count, 1);
        assert_eq!(evidence.junk_lines, vec!["Starting server...".to_owned()]);
    }

    #[test]
    fn garbage_answers_are_malformed() {
        let script = r#"read line; echo '{"jsonrpc":"2.0","id":1,"result":42}'; cat > /dev/null"#;
        let mut probe = Probe::start(&shell(script), Duration::from_secs(5)).unwrap();
        let error = probe.initialize().unwrap_err();
        assert!(matches!(error, ProbeError::Malformed { .. }), "{error}");
    }

    #[test]
    fn server_requests_are_answered() {
        // The server asks for roots before answering, and answers with what it got back.
        let script = r#"read init; echo '{"jsonrpc":"2.0","id":"s1","method":"roots/list"}'; read answer; printf '{"jsonrpc":"2.0","id":1,"result":{"got":%s}}\n' "$answer"; cat > /dev/null"#;
        let mut probe = Probe::start(&shell(script), Duration::from_secs(5)).unwrap();
        let result = probe.initialize().unwrap();
        assert_eq!(result["got"]["id"], "s1");
        assert_eq!(result["got"]["result"]["roots"], json!([]));
    }

    #[test]
    fn unknown_server_requests_get_method_not_found() {
        let answer = answer_server_request(json!(7), "sampling/createMessage");
        assert_eq!(answer["error"]["code"], -32601);
        assert_eq!(answer["id"], 7);
        assert_eq!(answer_server_request(json!(1), "ping")["result"], json!({}));
    }

    #[test]
    fn the_process_group_is_killed_at_the_end() {
        // The grandchild ignores stdin closing; only the group kill ends it.
        let script = "sleep 30 & echo $! >&2; cat > /dev/null";
        let probe = Probe::start(&shell(script), SHORT).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let pid: i32 = probe.evidence().stderr_tail[0].parse().unwrap();
        probe.shutdown();
        std::thread::sleep(Duration::from_millis(200));
        // A zombie waiting for a reaper counts as gone.
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let alive = status
            .lines()
            .any(|line| line.starts_with("State:") && !line.contains("Z"));
        assert!(!alive, "the grandchild {pid} survived: {status}");
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let error = Probe::start(&["/nonexistent/server".into()], SHORT)
            .err()
            .unwrap();
        assert!(matches!(error, ProbeError::Spawn { .. }));
        assert!(matches!(
            Probe::start(&[], SHORT).err().unwrap(),
            ProbeError::EmptyCommand
        ));
    }
}
