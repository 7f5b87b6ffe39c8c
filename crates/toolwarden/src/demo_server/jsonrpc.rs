//! JSON-RPC 2.0 framing for the demo server: what an incoming line is, and how answers look.

use serde_json::{Map, Value, json};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// A JSON-RPC error object, before it is wrapped in a response.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }

    pub fn method_not_found(method: &str) -> Self {
        Self::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }
}

/// What one line read from the client turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// The client's answer to a request the server sent it.
    Response {
        id: Value,
        outcome: Result<Value, Value>,
    },
    /// Valid JSON that is no JSON-RPC message; `id` is the request id when one could be read.
    Invalid {
        id: Value,
        reason: &'static str,
    },
    Unparseable,
}

fn is_valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

pub fn classify(line: &str) -> Incoming {
    let Ok(message) = serde_json::from_str::<Value>(line) else {
        return Incoming::Unparseable;
    };
    let Value::Object(object) = message else {
        // Batches were removed from MCP in 2025-06-18, so an array is as invalid as a scalar.
        return Incoming::Invalid {
            id: Value::Null,
            reason: "a message must be a JSON object",
        };
    };
    classify_object(object)
}

fn classify_object(mut object: Map<String, Value>) -> Incoming {
    let id = object.remove("id");
    let answerable_id = match &id {
        Some(id) if is_valid_id(id) => id.clone(),
        _ => Value::Null,
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Incoming::Invalid {
            id: answerable_id,
            reason: "`jsonrpc` must be \"2.0\"",
        };
    }
    if let Some(id) = &id
        && !is_valid_id(id)
    {
        return Incoming::Invalid {
            id: Value::Null,
            reason: "`id` must be a string or an integer",
        };
    }
    let params = object.remove("params").unwrap_or(Value::Null);
    match (object.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => Incoming::Request { id, method, params },
        (Some(Value::String(method)), None) => Incoming::Notification { method, params },
        (Some(_), _) => Incoming::Invalid {
            id: answerable_id,
            reason: "`method` must be a string",
        },
        (None, Some(id)) => match (object.remove("result"), object.remove("error")) {
            (Some(result), None) => Incoming::Response {
                id,
                outcome: Ok(result),
            },
            (None, Some(error)) => Incoming::Response {
                id,
                outcome: Err(error),
            },
            _ => Incoming::Invalid {
                id: answerable_id,
                reason: "a response needs exactly one of `result` and `error`",
            },
        },
        (None, None) => Incoming::Invalid {
            id: Value::Null,
            reason: "a message needs a `method` or an `id`",
        },
    }
}

pub fn result_response(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub fn error_response(id: &Value, error: &RpcError) -> Value {
    let mut body = json!({"code": error.code, "message": error.message});
    if let (Some(data), Some(body)) = (&error.data, body.as_object_mut()) {
        body.insert("data".to_owned(), data.clone());
    }
    json!({"jsonrpc": "2.0", "id": id, "error": body})
}

pub fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

pub fn request(id: &str, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_notifications_and_responses_are_told_apart() {
        assert_eq!(
            classify(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#),
            Incoming::Request {
                id: json!(7),
                method: "ping".into(),
                params: Value::Null
            }
        );
        assert_eq!(
            classify(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Incoming::Notification {
                method: "notifications/initialized".into(),
                params: Value::Null
            }
        );
        assert_eq!(
            classify(r#"{"jsonrpc":"2.0","id":"demo-srv-1","result":{"roots":[]}}"#),
            Incoming::Response {
                id: json!("demo-srv-1"),
                outcome: Ok(json!({"roots": []}))
            }
        );
        assert_eq!(
            classify(r#"{"jsonrpc":"2.0","id":"demo-srv-2","error":{"code":-1,"message":"no"}}"#),
            Incoming::Response {
                id: json!("demo-srv-2"),
                outcome: Err(json!({"code": -1, "message": "no"}))
            }
        );
    }

    #[test]
    fn broken_input_is_classified_with_the_id_when_one_is_usable() {
        assert_eq!(classify("{not json"), Incoming::Unparseable);
        assert!(matches!(
            classify("[1,2]"),
            Incoming::Invalid {
                id: Value::Null,
                ..
            }
        ));
        assert!(matches!(
            classify(r#"{"id":3,"method":"ping"}"#),
            Incoming::Invalid { id, .. } if id == json!(3)
        ));
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#),
            Incoming::Invalid {
                id: Value::Null,
                ..
            }
        ));
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","id":4,"method":5}"#),
            Incoming::Invalid { id, .. } if id == json!(4)
        ));
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0","id":4}"#),
            Incoming::Invalid { .. }
        ));
        assert!(matches!(
            classify(r#"{"jsonrpc":"2.0"}"#),
            Incoming::Invalid { .. }
        ));
    }

    #[test]
    fn error_data_is_only_present_when_given() {
        let plain = error_response(&json!(1), &RpcError::method_not_found("x/y"));
        assert_eq!(plain["error"]["code"], json!(METHOD_NOT_FOUND));
        assert!(plain["error"].get("data").is_none());
        let with_data = error_response(
            &json!(1),
            &RpcError::new(UNSUPPORTED_PROTOCOL_VERSION, "v").with_data(json!({"a": 1})),
        );
        assert_eq!(with_data["error"]["data"], json!({"a": 1}));
    }
}
