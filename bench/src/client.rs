//! The load generator's side of one connection: a child process spoken to in newline-delimited
//! JSON-RPC over its stdin and stdout, and a watchdog that kills it if a measurement overruns.

use serde::Deserialize;
use serde_json::value::RawValue;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::BenchError;

const READ_BUFFER_BYTES: usize = 256 * 1024;

/// The parts of a line the generator looks at.
#[derive(Deserialize)]
pub struct Reply<'a> {
    #[serde(borrow)]
    pub id: Option<&'a RawValue>,
    #[serde(borrow)]
    pub method: Option<&'a RawValue>,
    #[serde(borrow)]
    pub result: Option<&'a RawValue>,
    #[serde(borrow)]
    pub error: Option<&'a RawValue>,
}

pub struct Peer {
    child: Arc<Mutex<Child>>,
    pid: u32,
    writer: Option<ChildStdin>,
    pub reader: BufReader<ChildStdout>,
    line: Vec<u8>,
    finished: Arc<AtomicBool>,
    timed_out: Arc<AtomicBool>,
}

impl Peer {
    /// Starts `command` with its stderr going to `log`; the watchdog kills it after `limit`.
    pub fn spawn(command: &[String], log: &Path, limit: Duration) -> Result<Peer, BenchError> {
        let (program, args) = command
            .split_first()
            .ok_or_else(|| BenchError::Setup("empty command".to_owned()))?;
        let log_file = File::create(log)
            .map_err(|error| BenchError::io(format!("create {}", log.display()), error))?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log_file))
            .spawn()
            .map_err(|error| BenchError::io(format!("start {program}"), error))?;
        let pid = child.id();
        let writer = child
            .stdin
            .take()
            .ok_or_else(|| BenchError::Setup("the child has no stdin".to_owned()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| BenchError::Setup("the child has no stdout".to_owned()))?;
        let child = Arc::new(Mutex::new(child));
        let finished = Arc::new(AtomicBool::new(false));
        let timed_out = Arc::new(AtomicBool::new(false));
        watch(
            Arc::clone(&child),
            Arc::clone(&finished),
            Arc::clone(&timed_out),
            limit,
        );
        Ok(Peer {
            child,
            pid,
            writer: Some(writer),
            reader: BufReader::with_capacity(READ_BUFFER_BYTES, stdout),
            line: Vec::with_capacity(4096),
            finished,
            timed_out,
        })
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    pub fn send(&mut self, bytes: &[u8]) -> Result<(), BenchError> {
        let written = match self.writer.as_mut() {
            Some(writer) => writer.write_all(bytes),
            None => Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "stdin already closed",
            )),
        };
        written.map_err(|error| self.failure("write", error))
    }

    /// The next response line (a line with an id and no method), answering any request the
    /// peer makes of us with "method not found" and skipping notifications.
    pub fn next_response(&mut self) -> Result<&[u8], BenchError> {
        loop {
            self.line.clear();
            let read = self
                .reader
                .read_until(b'\n', &mut self.line)
                .map_err(|error| self.failure("read", error))?;
            if read == 0 {
                return Err(self.ended());
            }
            let reply: Reply<'_> = serde_json::from_slice(&self.line).map_err(|error| {
                BenchError::Protocol(format!("a line that is not JSON-RPC: {error}"))
            })?;
            match (reply.id, reply.method) {
                (Some(id), Some(_)) => {
                    let refusal = format!(
                        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{{\"code\":-32601,\"message\":\"Method not found\"}}}}\n",
                        id.get()
                    );
                    self.send(refusal.as_bytes())?;
                }
                (Some(_), None) => break,
                (None, _) => {}
            }
        }
        Ok(trim_newline(&self.line))
    }

    /// True when a whole line is already buffered, so reading it will not block.
    pub fn has_buffered_line(&self) -> bool {
        self.reader.buffer().contains(&b'\n')
    }

    /// Closes the peer's stdin and waits for it to leave.
    pub fn close(mut self) -> Result<(), BenchError> {
        self.writer = None;
        // Polled so that the watchdog can still take the lock and kill a process that stays.
        let outcome = loop {
            let exited = self
                .child
                .lock()
                .map_err(|_| BenchError::Setup("the watchdog panicked".to_owned()))?
                .try_wait();
            match exited {
                Ok(Some(_)) => break Ok(()),
                Ok(None) => thread::sleep(Duration::from_millis(2)),
                Err(error) => break Err(BenchError::io("wait for the process", error)),
            }
        };
        self.finished.store(true, Ordering::Release);
        if self.timed_out.load(Ordering::Acquire) {
            return Err(BenchError::Protocol(
                "the process overran its time limit and was killed".to_owned(),
            ));
        }
        outcome
    }

    fn ended(&self) -> BenchError {
        if self.timed_out.load(Ordering::Acquire) {
            BenchError::Protocol("the process overran its time limit and was killed".to_owned())
        } else {
            BenchError::Protocol("the process closed its stdout".to_owned())
        }
    }

    fn failure(&self, what: &str, error: io::Error) -> BenchError {
        if self.timed_out.load(Ordering::Acquire) {
            self.ended()
        } else {
            BenchError::io(what.to_owned(), error)
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if !self.finished.swap(true, Ordering::AcqRel)
            && let Ok(mut child) = self.child.lock()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Polls rather than blocks so that the child stays reachable for `close`.
fn watch(
    child: Arc<Mutex<Child>>,
    finished: Arc<AtomicBool>,
    timed_out: Arc<AtomicBool>,
    limit: Duration,
) {
    let deadline = Instant::now() + limit;
    thread::spawn(move || {
        while !finished.load(Ordering::Acquire) {
            if Instant::now() >= deadline {
                timed_out.store(true, Ordering::Release);
                if let Ok(mut child) = child.lock() {
                    let _ = child.kill();
                }
                return;
            }
            thread::sleep(Duration::from_millis(50));
        }
    });
}

fn trim_newline(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}
