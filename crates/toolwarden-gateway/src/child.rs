//! The upstream server as a child process: its own process group, so that servers started
//! through `npx` or `uvx` (a launcher with the real server as a grandchild) can be ended as a
//! whole; and an orderly stop: EOF on stdin, then SIGTERM, then SIGKILL.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("no server command was given")]
    NoCommand,
    #[error("could not start `{program}`: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
}

pub struct ServerProcess {
    pub child: Child,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    /// The process group the server leads (its pid), for signalling it with its children.
    pub group: Option<i32>,
}

impl ServerProcess {
    pub fn spawn(command: &[String]) -> Result<ServerProcess, SpawnError> {
        let (program, args) = command.split_first().ok_or(SpawnError::NoCommand)?;
        let mut builder = Command::new(program);
        builder
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // The server's log is the client's to show: clients display a stdio server's stderr.
            .stderr(Stdio::inherit())
            .process_group(0)
            .kill_on_drop(true);
        // SAFETY: prctl is async-signal-safe; it makes the kernel end the server if this
        // process dies without running its shutdown (SIGKILL, a crash).
        unsafe {
            builder.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let mut child = builder.spawn().map_err(|source| SpawnError::Spawn {
            program: program.clone(),
            source,
        })?;
        let group = child.id().and_then(|pid| i32::try_from(pid).ok());
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(SpawnError::Spawn {
                program: program.clone(),
                source: std::io::Error::other("the child's pipes were not created"),
            });
        };
        Ok(ServerProcess {
            child,
            stdin,
            stdout,
            group,
        })
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}

/// Ends a server whose stdin has already been closed: waits `grace` for it to leave on its
/// own, then SIGTERMs its process group, waits `grace` again, then SIGKILLs the group. The
/// group is signalled even when the leader has exited, so no grandchild is left behind.
pub async fn stop(child: &mut Child, group: Option<i32>, grace: Duration) -> ExitStatus {
    let status = match tokio::time::timeout(grace, child.wait()).await {
        Ok(Ok(status)) => Some(status),
        _ => None,
    };
    let status = match status {
        Some(status) => status,
        None => {
            signal_group(group, libc::SIGTERM);
            match tokio::time::timeout(grace, child.wait()).await {
                Ok(Ok(status)) => status,
                _ => {
                    signal_group(group, libc::SIGKILL);
                    match child.wait().await {
                        Ok(status) => status,
                        Err(_) => std::os::unix::process::ExitStatusExt::from_raw(libc::SIGKILL),
                    }
                }
            }
        }
    };
    // Launchers may leave workers behind in the group after the leader exits.
    signal_group(group, libc::SIGTERM);
    status
}

pub fn signal_group(group: Option<i32>, signal: i32) {
    if let Some(group) = group.filter(|group| *group > 1) {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
        unsafe {
            libc::kill(-group, signal);
        }
    }
}

/// The exit code toolwarden reports for a server's exit status: its code, or 128 + the
/// signal that ended it, as shells do.
pub fn exit_code(status: &ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    }
}

/// Describes an exit status in words for error messages.
pub fn describe(status: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => "an unknown status".to_owned(),
    }
}
