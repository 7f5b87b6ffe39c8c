//! The toolwarden gateway: JSON-RPC framing, the stdio transports, the session state machine,
//! the interception pipeline and the supervision of the server process.

pub mod child;
pub mod envelope;
pub mod framing;
pub mod identity;
pub mod jsonrpc;
pub mod pipeline;
pub mod relay;
pub mod session;
pub mod stdio;
