//! A client for the real `toolwarden` binary: spawns it with piped stdio, writes lines, and
//! reads lines with a timeout so that a bug fails a test instead of hanging the suite.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

pub const TIMEOUT: Duration = Duration::from_secs(20);

pub fn toolwarden() -> Command {
    Command::new(env!("CARGO_BIN_EXE_toolwarden"))
}

pub fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_toolwarden")
}

pub struct Peer {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Vec<u8>>,
    stderr: Receiver<String>,
}

impl Peer {
    pub fn spawn(mut command: Command) -> Peer {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("spawn toolwarden");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let (line_tx, lines) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if line.last() == Some(&b'\n') {
                            line.pop();
                        }
                        if line_tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let (err_tx, stderr_lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if err_tx.send(line).is_err() {
                    break;
                }
            }
        });
        Peer {
            child,
            stdin,
            lines,
            stderr: stderr_lines,
        }
    }

    /// `toolwarden run [extra args] -- <server...>`
    pub fn gateway(extra: &[&str], server: &[&str]) -> Peer {
        let mut command = toolwarden();
        command.arg("run").args(extra).arg("--").args(server);
        Peer::spawn(command)
    }

    /// The demo server behind the gateway.
    pub fn gateway_demo(extra: &[&str], demo_args: &[&str]) -> Peer {
        let mut server = vec![exe(), "demo-server"];
        server.extend_from_slice(demo_args);
        Peer::gateway(extra, &server)
    }

    /// The demo server alone.
    pub fn demo(demo_args: &[&str]) -> Peer {
        let mut command = toolwarden();
        command.arg("demo-server").args(demo_args);
        Peer::spawn(command)
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write");
        stdin.flush().expect("flush");
    }

    pub fn send(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.send_raw(&bytes);
    }

    pub fn send_json(&mut self, value: &Value) {
        self.send(&value.to_string());
    }

    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    pub fn recv_bytes(&mut self) -> Vec<u8> {
        match self.lines.recv_timeout(TIMEOUT) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                panic!("no line within {TIMEOUT:?}; stderr: {}", self.stderr_text())
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!("stdout closed; stderr: {}", self.stderr_text())
            }
        }
    }

    pub fn recv_text(&mut self) -> String {
        String::from_utf8(self.recv_bytes()).expect("utf-8 line")
    }

    pub fn recv(&mut self) -> Value {
        let line = self.recv_bytes();
        serde_json::from_slice(&line).unwrap_or_else(|error| {
            panic!("not JSON ({error}): {}", String::from_utf8_lossy(&line))
        })
    }

    /// Nothing more arrives within `wait`.
    pub fn expect_silence(&mut self, wait: Duration) {
        if let Ok(line) = self.lines.recv_timeout(wait) {
            panic!("unexpected line: {}", String::from_utf8_lossy(&line));
        }
    }

    /// Sends a request and returns its response, skipping notifications and requests.
    pub fn request(&mut self, value: Value) -> Value {
        let id = value["id"].clone();
        self.send_json(&value);
        loop {
            let message = self.recv();
            if message.get("id") == Some(&id) && message.get("method").is_none() {
                return message;
            }
        }
    }

    pub fn initialize(&mut self, client_name: &str) -> Value {
        let response = self.request(serde_json::json!({
            "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {"roots": {}},
                       "clientInfo": {"name": client_name, "version": "1.0.0"}}}));
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        response
    }

    /// All tools over all pages.
    pub fn list_tools(&mut self) -> Vec<Value> {
        let mut tools = Vec::new();
        let mut cursor: Option<Value> = None;
        for page in 0..100 {
            let mut params = serde_json::json!({});
            if let Some(cursor) = &cursor {
                params["cursor"] = cursor.clone();
            }
            let response = self.request(serde_json::json!({
                "jsonrpc": "2.0", "id": format!("list-{page}"), "method": "tools/list", "params": params}));
            let result = &response["result"];
            tools.extend(result["tools"].as_array().cloned().unwrap_or_default());
            match result.get("nextCursor") {
                Some(next) if !next.is_null() => cursor = Some(next.clone()),
                _ => return tools,
            }
        }
        panic!("tools/list never ended");
    }

    pub fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        self.request(serde_json::json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}))
    }

    pub fn wait(&mut self) -> ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            if started.elapsed() > TIMEOUT {
                let _ = self.child.kill();
                panic!("process did not exit within {TIMEOUT:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// What the process wrote to stderr so far.
    pub fn stderr_text(&mut self) -> String {
        let mut text = String::new();
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_millis(50)) {
            text.push_str(&line);
            text.push('\n');
        }
        text
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// True while a process with this pid exists (and is not a zombie we could reap).
pub fn alive(pid: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    !status
        .lines()
        .any(|line| line.starts_with("State:") && line.contains("Z"))
}
