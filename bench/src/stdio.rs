//! Our own stdin and stdout as plain files: std's `Stdout` is line-buffered and its `Stdin`
//! adds a buffer of its own, and both take a lock per call; the benchmark's processes want
//! exactly one read or write system call where they ask for one.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;

pub fn stdin_file() -> io::Result<File> {
    Ok(File::from(io::stdin().as_fd().try_clone_to_owned()?))
}

pub fn stdout_file() -> io::Result<File> {
    Ok(File::from(io::stdout().as_fd().try_clone_to_owned()?))
}
