//! The stdio relay: the client on our stdin/stdout, the server as a child process. One task
//! reads both sides, drives the session and writes both sides. Writes go through a buffer per
//! destination that is drained as the pipe accepts bytes, so a peer slow to read never stops
//! us reading the other peer (the classic proxy deadlock), and a burst of messages costs one
//! write system call, with no channel or second task per message.

use crate::child::{self, ServerProcess, SpawnError};
use crate::framing::LineReader;
use crate::pipeline::Pipeline;
use crate::session::{Outbox, Session, SessionConfig};
use crate::stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::signal::unix::{SignalKind, signal};

#[derive(Debug, Clone)]
pub struct RelayOptions {
    pub command: Vec<String>,
    pub session: SessionConfig,
    /// How long the server gets to leave after EOF, and again after SIGTERM.
    pub grace: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    #[error("could not set up signal handling: {0}")]
    Signals(std::io::Error),
}

/// Runs the gateway until the client leaves or the server dies. Returns the process exit code:
/// 0 after an orderly end started by the client, the server's own status when it ended first.
/// The pipeline is built by `make_pipeline` after the server has been spawned, so that its
/// set-up overlaps the server's own start.
pub async fn run_stdio(
    options: RelayOptions,
    make_pipeline: impl FnOnce() -> Pipeline,
) -> Result<i32, RelayError> {
    let server = ServerProcess::spawn(&options.command)?;
    tracing::debug!(pid = server.pid(), command = ?options.command, "server started");
    let ServerProcess {
        mut child,
        stdin: server_stdin,
        stdout: mut server_stdout,
        group,
    } = server;
    let max_line = options.session.max_line_bytes;
    let mut session = Session::new(options.session.clone(), make_pipeline());

    let mut to_client = Sink::new(stdio::stdout());
    let mut to_server = Some(Sink::new(server_stdin));
    // Set once the server's stdin is to be closed: when its queued lines are out.
    let mut closing_server = false;

    let mut client_reader = LineReader::new(stdio::stdin(), max_line);
    let mut server_reader = LineReader::new(&mut server_stdout, max_line);
    let mut client_open = true;
    // One long-lived future for all stop signals: making a `recv()` future per signal on
    // every turn of the loop is measurable on the hot path.
    let stop = stop_signals()?;
    tokio::pin!(stop);
    let mut stop_signal: Option<i32> = None;
    let mut out = Outbox::default();

    // Runs until the server's stdout ends: after the client leaves, the server may still be
    // answering calls that were in flight, and those answers are still delivered.
    let server_ended_first = loop {
        let deadline = session.next_deadline();
        // Write when there is nothing more to read right away (or a lot is queued): a burst of
        // messages then leaves in one write.
        let idle = !server_reader.has_buffered_frame() && !client_reader.has_buffered_frame();
        let flush_client = to_client.pending() && (idle || to_client.is_large());
        let flush_server = to_server
            .as_ref()
            .is_some_and(|sink| sink.pending() && (idle || sink.is_large()));
        tokio::select! {
            frame = server_reader.next_frame() => match frame {
                Ok(Some(frame)) => session.on_server_frame(frame, &mut out),
                Ok(None) | Err(_) => break client_open,
            },
            frame = client_reader.next_frame(), if client_open => match frame {
                Ok(Some(frame)) => session.on_client_frame(frame, &mut out),
                Ok(None) | Err(_) => client_open = false,
            },
            () = sleep_until(deadline), if deadline.is_some() => {
                session.on_deadline(Instant::now(), &mut out);
            }
            signal = &mut stop, if stop_signal.is_none() => {
                stop_signal = Some(signal);
                client_open = false;
                to_server = None;
                child::signal_group(group, libc::SIGTERM);
            }
            () = to_client.drain(), if flush_client => {}
            () = drain_option(&mut to_server), if flush_server => {}
        }
        for line in out.to_client.drain(..) {
            to_client.push(&line);
        }
        match to_server.as_mut() {
            Some(sink) => out.to_server.drain(..).for_each(|line| sink.push(&line)),
            None => out.to_server.clear(),
        }
        // After the client's EOF, calls it sent that still wait for the catalog are sent on
        // first; then the server's stdin is closed once its queued lines are out.
        if !client_open && !closing_server && to_server.is_some() && !session.holds_calls() {
            closing_server = true;
            if stop_signal.is_none() {
                escalate_after(group, options.grace);
            }
        }
        if closing_server && !to_server.as_ref().is_some_and(Sink::pending) {
            to_server = None;
        }
    };
    drop(to_server);

    let status = child::stop(&mut child, group, options.grace).await;
    let why = if server_ended_first {
        format!("exited ({})", child::describe(&status))
    } else {
        "was stopped".to_owned()
    };
    if server_ended_first {
        tracing::error!(status = %child::describe(&status), "the server exited");
    }
    session.on_server_gone(&why, &mut out);
    for line in out.to_client.drain(..) {
        to_client.push(&line);
    }
    // A client that stopped reading must not keep us alive.
    let _ = tokio::time::timeout(options.grace, to_client.drain()).await;
    Ok(match (stop_signal, server_ended_first) {
        (Some(signal), _) => 128 + signal,
        (None, true) => child::exit_code(&status),
        (None, false) => 0,
    })
}

/// After the client's EOF the server gets its stdin closed (by the writer task) and `grace` to
/// leave; this watchdog escalates to SIGTERM, then SIGKILL, of its process group if it stays.
fn escalate_after(group: Option<i32>, grace: Duration) {
    tokio::spawn(async move {
        tokio::time::sleep(grace).await;
        child::signal_group(group, libc::SIGTERM);
        tokio::time::sleep(grace).await;
        child::signal_group(group, libc::SIGKILL);
    });
}

/// Resolves with the number of the first of SIGTERM, SIGINT or SIGHUP to arrive.
fn stop_signals() -> Result<impl std::future::Future<Output = i32>, RelayError> {
    let mut terminate = signal(SignalKind::terminate()).map_err(RelayError::Signals)?;
    let mut interrupt = signal(SignalKind::interrupt()).map_err(RelayError::Signals)?;
    let mut hangup = signal(SignalKind::hangup()).map_err(RelayError::Signals)?;
    Ok(async move {
        tokio::select! {
            _ = terminate.recv() => libc::SIGTERM,
            _ = interrupt.recv() => libc::SIGINT,
            _ = hangup.recv() => libc::SIGHUP,
        }
    })
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
        None => std::future::pending().await,
    }
}

/// Lines waiting for one destination, written as fast as its pipe takes them.
struct Sink<W> {
    writer: W,
    buffer: Vec<u8>,
    written: usize,
    /// Set when a write failed: the reader is gone, and further lines are dropped.
    failed: bool,
}

/// Capacity kept between bursts; a buffer grown by a huge message is given back.
const SINK_KEEP_BYTES: usize = 1024 * 1024;

impl<W: AsyncWrite + Unpin> Sink<W> {
    fn new(writer: W) -> Sink<W> {
        Sink {
            writer,
            buffer: Vec::with_capacity(64 * 1024),
            written: 0,
            failed: false,
        }
    }

    fn push(&mut self, line: &[u8]) {
        if !self.failed {
            self.buffer.extend_from_slice(line);
            self.buffer.push(b'\n');
        }
    }

    fn is_large(&self) -> bool {
        self.buffer.len() - self.written >= 64 * 1024
    }

    fn pending(&self) -> bool {
        !self.failed && self.written < self.buffer.len()
    }

    /// Writes until the buffer is empty or the writer fails. Cancel-safe: bytes count as
    /// written only once the write that took them has returned.
    async fn drain(&mut self) {
        while self.written < self.buffer.len() {
            match self.writer.write(&self.buffer[self.written..]).await {
                Ok(0) | Err(_) => {
                    self.failed = true;
                    self.buffer = Vec::new();
                    self.written = 0;
                    tracing::debug!("a peer stopped reading; its output is dropped");
                    return;
                }
                Ok(written) => self.written += written,
            }
        }
        let _ = self.writer.flush().await;
        self.buffer.clear();
        self.written = 0;
        if self.buffer.capacity() > SINK_KEEP_BYTES {
            self.buffer = Vec::with_capacity(64 * 1024);
        }
    }
}

async fn drain_option<W: AsyncWrite + Unpin>(sink: &mut Option<Sink<W>>) {
    match sink {
        Some(sink) => sink.drain().await,
        None => std::future::pending().await,
    }
}
