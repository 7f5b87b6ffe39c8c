//! The interception pipeline: what the gateway does to the few messages it changes. The session
//! routes; this decides. Every hook returns "leave it" by default, and the session then forwards
//! the original bytes.

use crate::envelope::Outcome;
use crate::identity::{ClientIdentity, Era};
use serde_json::Value;

/// A `tools/call` as the pipeline sees it.
#[derive(Debug, Clone)]
pub struct CallInfo {
    pub tool: String,
    pub arguments: Option<Value>,
    pub era: Era,
}

/// What to do with a `tools/call` before it reaches the server.
#[derive(Debug)]
pub enum CallVerdict {
    /// Send the original bytes.
    Forward,
    /// Send the call with these arguments instead; `meta` is added to the result's `_meta`.
    ForwardArguments { arguments: Value, meta: Value },
    /// Answer the client with this `CallToolResult`; the server never sees the call.
    Answer(Value),
    /// Answer the client with a JSON-RPC error.
    Refuse {
        code: i64,
        message: String,
        data: Value,
    },
}

#[derive(Default)]
pub struct Pipeline {
    catalog: Vec<Value>,
}

impl Pipeline {
    /// Whether calls should wait for the tool catalog when none is known yet.
    pub fn needs_catalog(&self) -> bool {
        true
    }

    pub fn install_catalog(&mut self, tools: Vec<Value>) {
        self.catalog = tools;
    }

    pub fn catalog(&self) -> &[Value] {
        &self.catalog
    }

    pub fn check_call(&self, _call: &CallInfo, _client: &ClientIdentity) -> CallVerdict {
        CallVerdict::Forward
    }

    /// A replacement `result` for the server's answer to a call, or `None` to forward it as is.
    pub fn on_call_outcome(&self, _call: &CallInfo, _outcome: Outcome<'_>) -> Option<Value> {
        None
    }

    /// A replacement `tools/list` result (tools removed by policy), or `None`.
    pub fn on_tools_page(&self, _tools: &[Value]) -> Option<Vec<usize>> {
        None
    }
}
