//! Stage `validate`: every `tools/call` against its tool's `inputSchema`, before the server
//! sees it. Bad calls are answered here; unknown keys are refused or stripped by policy.

use super::{CallInfo, CallVerdict, Reply};
use crate::identity::ClientIdentity;
use toolwarden_core::call::{CallDecision, decide_call};
use toolwarden_core::catalog::Catalog;
use toolwarden_core::contract::{ErrorKind, Source, ToolError};
use toolwarden_core::policy::ErrorPolicyConfig;

/// The `_meta` key telling the client which arguments the gateway removed.
pub const STRIPPED_META_KEY: &str = "toolwarden/stripped_arguments";

pub fn check(
    catalog: &Catalog,
    policy: &ErrorPolicyConfig,
    call: &CallInfo,
    client: &ClientIdentity,
) -> CallVerdict {
    match decide_call(
        catalog,
        policy,
        &call.tool,
        call.arguments.as_ref(),
        client.name.as_deref(),
    ) {
        CallDecision::Forward => CallVerdict::Forward,
        CallDecision::ForwardStripped {
            arguments,
            stripped,
        } => {
            tracing::warn!(tool = %call.tool, stripped = ?stripped, "removed unknown arguments from a call, as the policy asks");
            CallVerdict::ForwardArguments {
                arguments,
                meta: serde_json::json!({ STRIPPED_META_KEY: stripped }),
            }
        }
        CallDecision::Refuse(error) => {
            CallVerdict::Answer(Reply::Result(error.to_call_result(None)), error)
        }
        CallDecision::ProtocolError {
            code,
            message,
            data,
        } => {
            // For the log only: the protocol error already carries its own data.
            let mut failure =
                ToolError::new(ErrorKind::UnknownTool, Source::Warden, message.clone());
            if catalog.get(&call.tool).is_some() {
                failure.kind = ErrorKind::InvalidArguments;
                failure.tool = Some(call.tool.clone());
            }
            failure.upstream_code = None;
            CallVerdict::Answer(
                Reply::Error {
                    code,
                    message,
                    data,
                },
                failure,
            )
        }
    }
}
