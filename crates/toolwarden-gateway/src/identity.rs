//! Who is on each side: learned from `initialize` (legacy era) or from each request's `_meta`
//! (modern era), and used to name the client in hints and logs.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
const META_PREFIX: &str = "io.modelcontextprotocol/";

/// The protocol era of one request: results the gateway makes are shaped for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2025-11-25 and earlier: an `initialize` handshake, no per-request protocol `_meta`.
    Legacy,
    /// 2026-07-28: stateless, protocol version and client facts in every request's `_meta`.
    Modern,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientIdentity {
    pub name: Option<String>,
    pub version: Option<String>,
    pub protocol_version: Option<String>,
}

impl ClientIdentity {
    /// How hints name the client: `Gemini CLI (gemini-cli-mcp-client)` style, or its bare name.
    pub fn display_name(&self) -> Option<String> {
        let name = self.name.as_deref()?;
        let known = match name {
            n if n.starts_with("gemini-cli") => Some("Gemini CLI"),
            n if n.starts_with("claude-ai") || n.starts_with("claude-desktop") => {
                Some("Claude Desktop")
            }
            n if n.starts_with("claude-code") => Some("Claude Code"),
            n if n.starts_with("cursor") => Some("Cursor"),
            n if n.starts_with("codex") => Some("Codex"),
            n if n.starts_with("Visual Studio Code") || n.starts_with("vscode") => Some("VS Code"),
            _ => None,
        };
        Some(match known {
            Some(product) => format!("{product} ({name})"),
            None => name.to_owned(),
        })
    }
}

#[derive(Debug, Clone, Default)]
pub struct ServerIdentity {
    pub info: Option<Value>,
    pub capabilities: Option<Value>,
    pub protocol_version: Option<String>,
}

#[derive(Deserialize)]
struct Implementation {
    name: Option<String>,
    version: Option<String>,
}

#[derive(Deserialize)]
struct InitializeParams {
    #[serde(rename = "clientInfo")]
    client_info: Option<Implementation>,
    #[serde(rename = "protocolVersion")]
    protocol_version: Option<String>,
}

#[derive(Deserialize)]
struct InitializeResult {
    #[serde(rename = "serverInfo")]
    server_info: Option<Value>,
    capabilities: Option<Value>,
    #[serde(rename = "protocolVersion")]
    protocol_version: Option<String>,
}

#[derive(Deserialize)]
struct ParamsMeta {
    #[serde(rename = "_meta")]
    meta: Option<RequestMeta>,
}

#[derive(Deserialize)]
struct RequestMeta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: Option<String>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo")]
    client_info: Option<Implementation>,
}

impl ClientIdentity {
    pub fn learn_from_initialize(&mut self, params: Option<&RawValue>) {
        let Some(params) = params else { return };
        let Ok(parsed) = serde_json::from_str::<InitializeParams>(params.get()) else {
            return;
        };
        if let Some(info) = parsed.client_info {
            self.name = info.name;
            self.version = info.version;
        }
        self.protocol_version = parsed.protocol_version;
    }

    /// Reads the modern era's per-request `_meta`, when the request has one. Returns the
    /// request's era. Cheap for legacy requests: a substring test before any parsing.
    pub fn learn_from_request_meta(&mut self, params: Option<&RawValue>) -> Era {
        let Some(params) = params else {
            return Era::Legacy;
        };
        if memchr::memmem::find(params.get().as_bytes(), META_PREFIX.as_bytes()).is_none() {
            return Era::Legacy;
        }
        let Ok(ParamsMeta { meta: Some(meta) }) = serde_json::from_str::<ParamsMeta>(params.get())
        else {
            return Era::Legacy;
        };
        let Some(version) = meta.protocol_version else {
            return Era::Legacy;
        };
        self.protocol_version = Some(version);
        if let Some(info) = meta.client_info {
            self.name = info.name;
            self.version = info.version;
        }
        Era::Modern
    }
}

impl ServerIdentity {
    pub fn learn_from_initialize(&mut self, result: &RawValue) {
        if let Ok(parsed) = serde_json::from_str::<InitializeResult>(result.get()) {
            self.info = parsed.server_info;
            self.capabilities = parsed.capabilities;
            self.protocol_version = parsed.protocol_version;
        }
    }
}

/// The protocol keys of a request's `_meta` (version, capabilities, client info), to repeat
/// on requests the gateway sends upstream on that request's behalf in the modern era.
pub fn protocol_meta(params: Option<&Value>) -> Option<Value> {
    let meta = params?.get("_meta")?.as_object()?;
    let kept: serde_json::Map<String, Value> = meta
        .iter()
        .filter(|(key, _)| key.starts_with(META_PREFIX))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    (!kept.is_empty()).then_some(Value::Object(kept))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> &RawValue {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn learns_the_client_from_initialize() {
        let mut client = ClientIdentity::default();
        client.learn_from_initialize(Some(raw(
            r#"{"protocolVersion":"2025-06-18","clientInfo":{"name":"gemini-cli-mcp-client","version":"0.1"},"capabilities":{}}"#,
        )));
        assert_eq!(client.name.as_deref(), Some("gemini-cli-mcp-client"));
        assert_eq!(client.protocol_version.as_deref(), Some("2025-06-18"));
        assert_eq!(
            client.display_name().as_deref(),
            Some("Gemini CLI (gemini-cli-mcp-client)")
        );
    }

    #[test]
    fn learns_the_client_from_modern_meta() {
        let mut client = ClientIdentity::default();
        let era = client.learn_from_request_meta(Some(raw(
            r#"{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"codex","version":"2"}}}"#,
        )));
        assert_eq!(era, Era::Modern);
        assert_eq!(client.name.as_deref(), Some("codex"));
        assert_eq!(client.protocol_version.as_deref(), Some("2026-07-28"));
        let era = client.learn_from_request_meta(Some(raw(r#"{"name":"echo"}"#)));
        assert_eq!(era, Era::Legacy);
        assert_eq!(
            client.name.as_deref(),
            Some("codex"),
            "a legacy request changes nothing"
        );
    }

    #[test]
    fn keeps_only_protocol_meta_keys() {
        let params = serde_json::json!({"_meta": {"progressToken": 1, "io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
        assert_eq!(
            protocol_meta(Some(&params)),
            Some(serde_json::json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}))
        );
        assert_eq!(protocol_meta(Some(&serde_json::json!({}))), None);
    }
}
