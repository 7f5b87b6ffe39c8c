//! The gateway's own stdin and stdout as non-blocking, epoll-driven streams.
//!
//! `tokio::io::stdin` reads on a blocking thread pool, which costs a thread hand-off per read:
//! measurable on a relay whose whole budget is a few microseconds. Pipes and sockets (what an
//! MCP client gives us) can be registered with the reactor instead. Regular files and other
//! descriptors epoll refuses fall back to tokio's blocking implementation.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

pub type BoxedReader = Box<dyn AsyncRead + Unpin + Send>;
pub type BoxedWriter = Box<dyn AsyncWrite + Unpin + Send>;

pub fn stdin() -> BoxedReader {
    match NonBlockingFd::new(io::stdin().as_fd().try_clone_to_owned()) {
        Ok(fd) => Box::new(fd),
        Err(_) => Box::new(tokio::io::stdin()),
    }
}

pub fn stdout() -> BoxedWriter {
    match NonBlockingFd::new(io::stdout().as_fd().try_clone_to_owned()) {
        Ok(fd) => Box::new(fd),
        Err(_) => Box::new(tokio::io::stdout()),
    }
}

/// A descriptor switched to O_NONBLOCK for its lifetime; the original flags come back on drop,
/// because the open file description is shared with whoever started us.
struct NonBlockingFd {
    fd: AsyncFd<OwnedFd>,
    original_flags: i32,
}

impl NonBlockingFd {
    fn new(fd: io::Result<OwnedFd>) -> io::Result<NonBlockingFd> {
        let fd = fd?;
        let raw = fd.as_raw_fd();
        // SAFETY: fcntl on a descriptor we own; no memory is passed.
        let original_flags = unsafe { libc::fcntl(raw, libc::F_GETFL) };
        if original_flags < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: as above.
        if unsafe { libc::fcntl(raw, libc::F_SETFL, original_flags | libc::O_NONBLOCK) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the descriptor is owned by the AsyncFd and so stays open for as long as it
        // is registered.
        match unsafe { AsyncFd::register(fd) } {
            Ok(fd) => Ok(NonBlockingFd { fd, original_flags }),
            Err(error) => {
                // SAFETY: as above; restores what we changed before giving up.
                unsafe { libc::fcntl(raw, libc::F_SETFL, original_flags) };
                Err(error.into())
            }
        }
    }
}

impl Drop for NonBlockingFd {
    fn drop(&mut self) {
        // SAFETY: the descriptor is still open: AsyncFd closes it after this.
        unsafe {
            libc::fcntl(
                self.fd.get_ref().as_raw_fd(),
                libc::F_SETFL,
                self.original_flags,
            )
        };
    }
}

impl AsyncRead for NonBlockingFd {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.fd.poll_read_ready(cx))?;
            // Read into the uninitialised tail directly: zeroing a 64 KiB buffer before every
            // read would cost more than the read.
            // SAFETY: read(2) only writes into the memory; the bytes it reports are initialised
            // below, before `advance` makes them part of the filled region.
            let unfilled = unsafe { buf.unfilled_mut() };
            let result = guard.try_io(|inner| {
                let raw = inner.get_ref().as_raw_fd();
                // SAFETY: reading into memory we borrow, of the length we pass.
                let read = unsafe { libc::read(raw, unfilled.as_mut_ptr().cast(), unfilled.len()) };
                if read < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(read as usize)
                }
            });
            match result {
                Ok(Ok(read)) => {
                    // SAFETY: the kernel wrote `read` bytes at the start of the unfilled part.
                    unsafe { buf.assume_init(read) };
                    buf.advance(read);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(error)) => return Poll::Ready(Err(error)),
                Err(_would_block) => continue,
            }
        }
    }
}

impl AsyncWrite for NonBlockingFd {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.fd.poll_write_ready(cx))?;
            let result = guard.try_io(|inner| {
                let raw = inner.get_ref().as_raw_fd();
                // SAFETY: writing from a buffer we borrow, of the length we pass.
                let written = unsafe { libc::write(raw, data.as_ptr().cast(), data.len()) };
                if written < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(written as usize)
                }
            });
            match result {
                Ok(result) => return Poll::Ready(result),
                Err(_would_block) => continue,
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
