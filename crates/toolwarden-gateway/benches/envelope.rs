//! Micro-benchmark of the only parsing every message pays for: the JSON-RPC envelope.
//!
//! Run with `cargo bench -p toolwarden-gateway --bench envelope`.

use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use toolwarden_gateway::envelope;

fn main() {
    divan::main();
}

/// A `tools/call` request of about `bytes` bytes, its bulk in the arguments the envelope
/// parser must skip over.
fn call_line(bytes: usize) -> Vec<u8> {
    let head = r#"{"jsonrpc":"2.0","id":4711,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"notes/today.md","content":""#;
    let tail = r#""},"_meta":{"progressToken":"p-4711"}}}"#;
    let filler = "Buy milk. Call the bank. \\\"Quoted\\\" text and unicode \\u00e9. ";
    let room = bytes.saturating_sub(head.len() + tail.len());
    let mut content = filler.repeat(room / filler.len() + 1);
    content.truncate(room);
    // The cut must not split an escape sequence.
    while content.ends_with('\\') {
        content.pop();
    }
    format!("{head}{content}{tail}").into_bytes()
}

/// A response the gateway only routes by id.
fn result_line(bytes: usize) -> Vec<u8> {
    let head = r#"{"jsonrpc":"2.0","id":4711,"result":{"content":[{"type":"text","text":""#;
    let tail = r#""}],"isError":false}}"#;
    let room = bytes.saturating_sub(head.len() + tail.len());
    format!("{head}{}{tail}", "x".repeat(room)).into_bytes()
}

#[divan::bench(args = [1024, 64 * 1024])]
fn parse_request(bencher: Bencher, bytes: usize) {
    let line = call_line(bytes);
    assert!(envelope::parse(&line).is_ok());
    bencher
        .counter(BytesCount::new(line.len()))
        .bench_local(|| envelope::parse(black_box(&line)).is_ok());
}

#[divan::bench(args = [1024, 64 * 1024])]
fn parse_response(bencher: Bencher, bytes: usize) {
    let line = result_line(bytes);
    assert!(envelope::parse(&line).is_ok());
    bencher
        .counter(BytesCount::new(line.len()))
        .bench_local(|| envelope::parse(black_box(&line)).is_ok());
}

/// The UTF-8 check `parse` runs before serde, alone, to see its share.
#[divan::bench(args = [1024, 64 * 1024])]
fn utf8_check_alone(bencher: Bencher, bytes: usize) {
    let line = call_line(bytes);
    bencher
        .counter(BytesCount::new(line.len()))
        .bench_local(|| std::str::from_utf8(black_box(&line)).is_ok());
}
