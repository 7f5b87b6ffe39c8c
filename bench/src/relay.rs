//! The floor: one extra process that copies bytes both ways between its own stdio and a child's,
//! with no parsing and no buffering beyond one read. No gateway can be faster than this hop.

use std::io::{self, Read, Write};
use std::process::{Command, Stdio};
use std::thread;

const COPY_BUFFER_BYTES: usize = 64 * 1024;

/// Runs `command` as a child and relays until the child's stdout ends. Returns its exit code.
pub fn run(command: &[String]) -> io::Result<i32> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "relay: no command given"))?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let child_stdin = child
        .stdin
        .take()
        .ok_or_else(|| io::Error::other("relay: the child has no stdin"))?;
    let mut child_stdout = child
        .stdout
        .take()
        .ok_or_else(|| io::Error::other("relay: the child has no stdout"))?;
    let mut our_stdin = crate::stdio::stdin_file()?;
    let mut our_stdout = crate::stdio::stdout_file()?;
    // Not joined: it may sit in a read of our stdin after the child is gone, and process exit
    // ends it. Dropping the child's stdin when our stdin ends tells the child to finish.
    thread::spawn(move || copy(&mut our_stdin, child_stdin));
    let copied = copy(&mut child_stdout, &mut our_stdout);
    let status = child.wait()?;
    copied?;
    Ok(status.code().unwrap_or(1))
}

fn copy(from: &mut impl Read, mut to: impl Write) -> io::Result<()> {
    let mut buffer = vec![0u8; COPY_BUFFER_BYTES];
    loop {
        let read = match from.read(&mut buffer) {
            Ok(0) => return Ok(()),
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        to.write_all(buffer.get(..read).unwrap_or_default())?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_every_byte_across_reads() {
        let input: Vec<u8> = (0..200_000u32).map(|n| (n % 251) as u8).collect();
        let mut output = Vec::new();
        copy(&mut input.as_slice(), &mut output).unwrap();
        assert_eq!(output, input);
    }
}
