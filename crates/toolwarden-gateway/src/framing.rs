//! Newline-delimited framing with a hard limit on line length.
//!
//! MCP over stdio is one JSON-RPC message per line. A peer that never sends a newline must not
//! make us buffer forever, so a line over the limit is skipped as it streams past and reported
//! as [`Frame::TooLong`], keeping only a short head from which the request id may be salvaged.

use tokio::io::{AsyncRead, AsyncReadExt};

/// How much of an over-long line is kept to find its id in: ids come first in practice.
const SALVAGE_HEAD_BYTES: usize = 4096;
const READ_CHUNK: usize = 64 * 1024;

#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// One complete line, without its `\n` (and without a trailing `\r`).
    Line(Vec<u8>),
    /// A line over the limit: its total length and its first bytes.
    TooLong { length: usize, head: Vec<u8> },
}

/// Reads frames from a byte stream. `next_frame` is cancel-safe: a frame is only taken out of
/// the internal buffer when it is returned, so it can be used inside `tokio::select!`.
pub struct LineReader<R> {
    inner: R,
    buffer: Vec<u8>,
    /// Start of the unconsumed data in `buffer`.
    start: usize,
    /// How far `buffer[start..]` has already been searched for a newline.
    scanned: usize,
    max_line: usize,
    /// Set while skipping the rest of an over-long line.
    skipping: Option<Skipping>,
    eof: bool,
}

struct Skipping {
    length: usize,
    head: Vec<u8>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(inner: R, max_line: usize) -> Self {
        LineReader {
            inner,
            buffer: Vec::with_capacity(READ_CHUNK),
            start: 0,
            scanned: 0,
            max_line: max_line.max(1),
            skipping: None,
            eof: false,
        }
    }

    /// True when a complete frame can be returned without reading: the caller uses this to
    /// decide when to flush its output (after the last message of a burst, not after each).
    pub fn has_buffered_frame(&self) -> bool {
        memchr::memchr(b'\n', &self.buffer[self.start..]).is_some()
    }

    /// The next frame, or `None` at end of input. A final line without a newline still counts.
    pub async fn next_frame(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            if let Some(frame) = self.take_frame() {
                return Ok(Some(frame));
            }
            if self.eof {
                return Ok(self.take_last());
            }
            self.compact();
            if self.buffer.capacity() - self.buffer.len() < READ_CHUNK / 4 {
                self.buffer.reserve(READ_CHUNK);
            }
            let read = self.inner.read_buf(&mut self.buffer).await?;
            if read == 0 {
                self.eof = true;
            }
        }
    }

    fn take_frame(&mut self) -> Option<Frame> {
        let pending = &self.buffer[self.start..];
        let searched = self.scanned.min(pending.len());
        let newline = memchr::memchr(b'\n', &pending[searched..]).map(|at| at + searched);
        match (newline, self.skipping.take()) {
            (Some(at), Some(mut skipping)) => {
                skipping.length += at;
                self.advance(at + 1);
                Some(Frame::TooLong {
                    length: skipping.length,
                    head: skipping.head,
                })
            }
            (None, Some(mut skipping)) => {
                skipping.length += pending.len();
                let consumed = pending.len();
                self.skipping = Some(skipping);
                self.advance(consumed);
                None
            }
            (Some(at), None) if at <= self.max_line => {
                let mut line = pending[..at].to_vec();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                self.advance(at + 1);
                Some(Frame::Line(line))
            }
            (Some(at), None) => {
                let head = pending[..at.min(SALVAGE_HEAD_BYTES)].to_vec();
                self.advance(at + 1);
                Some(Frame::TooLong { length: at, head })
            }
            (None, None) => {
                if pending.len() <= self.max_line {
                    self.scanned = pending.len();
                    return None;
                }
                // Over the limit with no end in sight: keep a head, drop the rest as it streams.
                let head = pending[..SALVAGE_HEAD_BYTES.min(pending.len())].to_vec();
                let length = pending.len();
                self.skipping = Some(Skipping { length, head });
                self.advance(length);
                None
            }
        }
    }

    fn take_last(&mut self) -> Option<Frame> {
        if let Some(skipping) = self.skipping.take() {
            self.advance(self.buffer.len() - self.start);
            return Some(Frame::TooLong {
                length: skipping.length,
                head: skipping.head,
            });
        }
        let rest = &self.buffer[self.start..];
        if rest.iter().all(|byte| byte.is_ascii_whitespace()) {
            self.advance(rest.len());
            return None;
        }
        let mut line = rest.to_vec();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        self.advance(rest.len());
        Some(Frame::Line(line))
    }

    fn advance(&mut self, bytes: usize) {
        self.start += bytes;
        self.scanned = 0;
        if self.start >= self.buffer.len() {
            self.buffer.clear();
            self.start = 0;
        }
    }

    fn compact(&mut self) {
        if self.start > 0 {
            self.buffer.drain(..self.start);
            self.start = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], max: usize) -> Vec<Frame> {
        let mut reader = LineReader::new(input, max);
        let mut out = Vec::new();
        while let Some(frame) = reader.next_frame().await.unwrap() {
            out.push(frame);
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_and_strips_carriage_returns() {
        let got = frames(b"{\"a\":1}\r\n{\"b\":2}\n{\"c\":3}", 100).await;
        assert_eq!(
            got,
            vec![
                Frame::Line(b"{\"a\":1}".to_vec()),
                Frame::Line(b"{\"b\":2}".to_vec()),
                Frame::Line(b"{\"c\":3}".to_vec()),
            ]
        );
    }

    #[tokio::test]
    async fn over_long_lines_are_skipped_and_the_next_line_survives() {
        let mut input = b"{\"id\":7,\"x\":\"".to_vec();
        input.extend(std::iter::repeat_n(b'a', 500));
        input.extend(b"\"}\nok\n");
        let got = frames(&input, 64).await;
        assert_eq!(got.len(), 2);
        match &got[0] {
            Frame::TooLong { length, head } => {
                assert_eq!(*length, input.len() - 4);
                assert!(head.starts_with(b"{\"id\":7"));
            }
            other => panic!("expected TooLong, got {other:?}"),
        }
        assert_eq!(got[1], Frame::Line(b"ok".to_vec()));
    }

    #[tokio::test]
    async fn long_line_streamed_in_small_chunks_is_refused() {
        let (client, mut server) = tokio::io::duplex(16);
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            for _ in 0..100 {
                server.write_all(b"0123456789").await.unwrap();
            }
            server.write_all(b"\nnext\n").await.unwrap();
        });
        let mut reader = LineReader::new(client, 100);
        let first = reader.next_frame().await.unwrap().unwrap();
        assert!(matches!(first, Frame::TooLong { length: 1000, .. }));
        let second = reader.next_frame().await.unwrap().unwrap();
        assert_eq!(second, Frame::Line(b"next".to_vec()));
        writer.await.unwrap();
    }

    #[tokio::test]
    async fn blank_tail_is_not_a_frame() {
        assert_eq!(frames(b"x\n\n", 10).await.len(), 2);
        assert_eq!(frames(b"x\n  ", 10).await.len(), 1);
    }
}
