//! Stage `shape`: the server's own failures into the error contract. A protocol error on a
//! call becomes an error result (only those reach the model); an `isError` result keeps its
//! text, cleaned of mangling prefixes, with echoed caller values and secrets replaced.

use super::{CallInfo, Reply, Review};
use crate::envelope::Outcome;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use toolwarden_core::policy::ErrorPolicy;
use toolwarden_core::upstream::{UpstreamCall, reshape_error_result, reshape_protocol_error};

#[derive(Deserialize)]
struct RpcError {
    code: Option<i64>,
    message: Option<String>,
    data: Option<Value>,
}

#[derive(Deserialize)]
struct ErrorFlag {
    #[serde(rename = "isError")]
    is_error: Option<bool>,
}

pub fn review(
    call: &CallInfo,
    outcome: Outcome<'_>,
    policy: &ErrorPolicy,
    discovery_tools: &[String],
) -> Review {
    let upstream = UpstreamCall {
        tool: &call.tool,
        arguments: call.arguments.as_ref(),
        discovery_tools,
        trust_echoes: policy.trust_echoes,
    };
    match outcome {
        Outcome::Error(error) => {
            let error: RpcError = serde_json::from_str(error.get()).unwrap_or(RpcError {
                code: None,
                message: None,
                data: None,
            });
            let failure = reshape_protocol_error(
                &upstream,
                error.code.unwrap_or(0),
                error.message.as_deref().unwrap_or(""),
                error.data.as_ref(),
            );
            Review {
                replacement: Some(Reply::Result(failure.to_call_result(None))),
                failure: Some(failure),
            }
        }
        Outcome::Result(result) if is_error_result(result) => {
            let Ok(value) = serde_json::from_str::<Value>(result.get()) else {
                return Review::default();
            };
            let (reshaped, failure) = reshape_error_result(&upstream, &value);
            Review {
                replacement: Some(Reply::Result(reshaped)),
                failure: Some(failure),
            }
        }
        Outcome::Result(_) => Review::default(),
    }
}

/// Cheap for successes: most results never mention `isError`, and those that do are parsed
/// only for that one field.
fn is_error_result(result: &RawValue) -> bool {
    memchr::memmem::find(result.get().as_bytes(), b"\"isError\"").is_some()
        && serde_json::from_str::<ErrorFlag>(result.get())
            .is_ok_and(|flag| flag.is_error == Some(true))
}
