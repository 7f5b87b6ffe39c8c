//! Stage `shape`: the server's own failures into the error contract. A protocol error on a
//! call becomes an error result (only those reach the model); an `isError` result keeps its
//! text, cleaned of mangling prefixes, with echoed caller values and secrets replaced.

use super::{CallInfo, Reply, Review};
use crate::envelope::Outcome;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use toolwarden_core::call::{CallDecision, INVALID_PARAMS, decide_call};
use toolwarden_core::catalog::Catalog;
use toolwarden_core::contract::{ErrorKind, Source, ToolError};
use toolwarden_core::policy::{ErrorPolicy, ErrorPolicyConfig};
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

/// A call the gateway could not check (no catalog yet, or one that lacks the tool) that the
/// server refused with -32602: most likely an unknown tool, whose name the server's message
/// repeats. It is answered as the gateway answers unknown tools itself, without the name.
pub fn unknown_tool(
    catalog: Option<&Catalog>,
    policy: &ErrorPolicyConfig,
    call: &CallInfo,
    outcome: Outcome<'_>,
) -> Option<Review> {
    let Outcome::Error(error) = outcome else {
        return None;
    };
    let error: RpcError = serde_json::from_str(error.get()).ok()?;
    if error.code != Some(INVALID_PARAMS) {
        return None;
    }
    let empty = Catalog::from_tools(&[]);
    let decision = decide_call(catalog.unwrap_or(&empty), policy, &call.tool, None, None);
    let (reply, failure) = match decision {
        CallDecision::ProtocolError {
            code,
            message,
            data,
        } => {
            let failure = ToolError::new(ErrorKind::UnknownTool, Source::Upstream, message.clone());
            (
                Reply::Error {
                    code,
                    message,
                    data,
                },
                failure,
            )
        }
        CallDecision::Refuse(failure) => (Reply::Result(failure.to_call_result(None)), failure),
        CallDecision::Forward | CallDecision::ForwardStripped { .. } => return None,
    };
    Some(Review {
        replacement: Some(reply),
        failure: Some(failure),
    })
}

/// Cheap for successes: SDKs write `"isError": false` on every result, so the result is only
/// parsed when some `"isError"` key is followed by `true` (a quote inside a JSON string is
/// escaped, so the key's exact bytes cannot appear in a string value).
fn is_error_result(result: &RawValue) -> bool {
    let bytes = result.get().as_bytes();
    let key = b"\"isError\"";
    let flagged = memchr::memmem::find_iter(bytes, key).any(|at| {
        bytes[at + key.len()..]
            .iter()
            .copied()
            .find(|byte| !byte.is_ascii_whitespace() && *byte != b':')
            == Some(b't')
    });
    flagged
        && serde_json::from_str::<ErrorFlag>(result.get())
            .is_ok_and(|flag| flag.is_error == Some(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> &RawValue {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn a_server_refusing_an_unchecked_call_with_minus_32602_gets_our_unknown_tool_answer() {
        let call = CallInfo {
            tool: "exfiltrate_now".into(),
            arguments: None,
            era: crate::identity::Era::Legacy,
        };
        let error = raw(r#"{"code":-32602,"message":"Unknown tool: exfiltrate_now"}"#);
        let review = unknown_tool(
            None,
            &ErrorPolicyConfig::default(),
            &call,
            Outcome::Error(error),
        )
        .expect("answered");
        match review.replacement {
            Some(Reply::Error {
                code,
                message,
                data,
            }) => {
                assert_eq!(code, -32602);
                assert!(
                    !message.contains("exfiltrate") && !data.to_string().contains("exfiltrate")
                );
            }
            other => panic!("{other:?}"),
        }
        let other = raw(r#"{"code":-32603,"message":"boom"}"#);
        assert!(
            unknown_tool(
                None,
                &ErrorPolicyConfig::default(),
                &call,
                Outcome::Error(other)
            )
            .is_none()
        );
    }

    #[test]
    fn only_a_top_level_true_flag_is_an_error() {
        assert!(is_error_result(raw(r#"{"content":[],"isError" : true}"#)));
        assert!(!is_error_result(raw(r#"{"content":[],"isError":false}"#)));
        assert!(!is_error_result(raw(r#"{"content":[]}"#)));
        assert!(!is_error_result(raw(
            r#"{"structuredContent":{"isError":true},"isError":false}"#
        )));
        assert!(!is_error_result(raw(
            r#"{"content":[{"type":"text","text":"\"isError\": true"}]}"#
        )));
    }
}
