//! The stdio relay: the client on our stdin/stdout, the server as a child process. One task
//! reads both sides and drives the session; one writer task per destination, so that a peer
//! slow to read never stops us reading the other peer (the classic proxy deadlock).

use crate::child::{self, ServerProcess, SpawnError};
use crate::framing::LineReader;
use crate::pipeline::Pipeline;
use crate::session::{Outbox, Session, SessionConfig};
use crate::stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

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

type Line = Vec<u8>;

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

    let (to_client, client_writer) = spawn_writer(stdio::stdout());
    let (to_server, server_writer) = spawn_writer(server_stdin);
    let mut to_server = Some(to_server);

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
        }
        dispatch(&mut out, &to_client, to_server.as_ref());
        // After the client's EOF, calls it sent that still wait for the catalog are sent on
        // first; then dropping the sender closes the server's stdin once queued lines are out.
        if !client_open && to_server.is_some() && !session.holds_calls() {
            to_server = None;
            if stop_signal.is_none() {
                escalate_after(group, options.grace);
            }
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
    dispatch(&mut out, &to_client, None);
    drop(to_client);
    let _ = client_writer.await;
    let _ = server_writer.await;
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

fn dispatch(
    out: &mut Outbox,
    to_client: &mpsc::UnboundedSender<Line>,
    to_server: Option<&mpsc::UnboundedSender<Line>>,
) {
    for line in out.to_client.drain(..) {
        let _ = to_client.send(line);
    }
    match to_server {
        Some(to_server) => {
            for line in out.to_server.drain(..) {
                let _ = to_server.send(line);
            }
        }
        None => {
            if !out.to_server.is_empty() {
                tracing::debug!(
                    lines = out.to_server.len(),
                    "dropped lines for a server that is going away"
                );
                out.to_server.clear();
            }
        }
    }
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

/// A writer task: writes each queued line and its newline, and flushes when the queue is empty,
/// so a burst of messages costs one write system call rather than one per message.
fn spawn_writer<W>(writer: W) -> (mpsc::UnboundedSender<Line>, tokio::task::JoinHandle<()>)
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (sender, mut receiver) = mpsc::unbounded_channel::<Line>();
    let task = tokio::spawn(async move {
        let mut writer = BufWriter::with_capacity(64 * 1024, writer);
        while let Some(line) = receiver.recv().await {
            if write_line(&mut writer, &line).await.is_err() {
                break;
            }
            let mut failed = false;
            while let Ok(line) = receiver.try_recv() {
                if write_line(&mut writer, &line).await.is_err() {
                    failed = true;
                    break;
                }
            }
            if failed || writer.flush().await.is_err() {
                break;
            }
        }
        let _ = writer.shutdown().await;
    });
    (sender, task)
}

async fn write_line<W: AsyncWrite + Unpin>(
    writer: &mut BufWriter<W>,
    line: &[u8],
) -> std::io::Result<()> {
    writer.write_all(line).await?;
    writer.write_all(b"\n").await
}
