//! Writing the JSON-RPC messages the gateway makes itself. Ids are written back as the exact
//! JSON text they arrived as.

use serde_json::Value;
use toolwarden_core::contract::ERROR_META_KEY;

/// JSON-RPC 2.0 error codes the gateway uses for its own answers.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// A response line (without its newline) carrying `result`.
pub fn result_line(id: &str, result: &Value) -> Vec<u8> {
    let mut line = Vec::with_capacity(64);
    line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    line.extend_from_slice(id.as_bytes());
    line.extend_from_slice(br#","result":"#);
    // Writing a Value into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut line, result);
    line.push(b'}');
    line
}

/// An error response line made by the gateway. `data` always names toolwarden as the source,
/// so a client (or a person reading a log) never mistakes it for the server's own error.
pub fn error_line(id: &str, code: i64, message: &str, data: Option<Value>) -> Vec<u8> {
    let data = data.unwrap_or_else(|| serde_json::json!({ ERROR_META_KEY: {"source": "warden"} }));
    let error = serde_json::json!({"code": code, "message": message, "data": data});
    let mut line = Vec::with_capacity(96);
    line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    line.extend_from_slice(id.as_bytes());
    line.extend_from_slice(br#","error":"#);
    let _ = serde_json::to_writer(&mut line, &error);
    line.push(b'}');
    line
}

/// A request line the gateway sends upstream on its own behalf.
pub fn request_line(id: &str, method: &str, params: &Value) -> Vec<u8> {
    let request =
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    serde_json::to_vec(&request).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_valid_json_with_the_exact_id() {
        let line = error_line("\"a\\\"b\"", code::PARSE_ERROR, "bad", None);
        let value: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["id"], "a\"b");
        assert_eq!(value["error"]["code"], -32700);
        assert_eq!(value["error"]["data"][ERROR_META_KEY]["source"], "warden");
        let line = result_line("7", &serde_json::json!({"ok": true}));
        let value: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"jsonrpc":"2.0","id":7,"result":{"ok":true}})
        );
    }
}
