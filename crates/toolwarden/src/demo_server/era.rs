//! Which protocol era a request belongs to, and version negotiation for each era.

use serde_json::{Map, Value, json};

use super::jsonrpc::{RpcError, UNSUPPORTED_PROTOCOL_VERSION};

/// Versions answered through the `initialize` handshake, newest first.
pub const LEGACY_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// Versions spoken statelessly, with per-request `_meta`.
pub const MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];

pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// What a modern request declares about itself in `_meta`.
#[derive(Debug, Clone, PartialEq)]
pub struct ModernRequest {
    pub version: String,
    pub client_capabilities: Map<String, Value>,
    pub log_level: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Era {
    Legacy,
    Modern(ModernRequest),
}

/// The version the server answers `initialize` with: the client's when supported, else the latest.
pub fn negotiate_legacy(requested: Option<&str>) -> &'static str {
    LEGACY_VERSIONS
        .iter()
        .find(|supported| Some(**supported) == requested)
        .copied()
        .unwrap_or(LEGACY_VERSIONS[0])
}

/// A request is modern exactly when its `_meta` names a protocol version.
pub fn detect(params: &Value) -> Result<Era, RpcError> {
    let Some(meta) = params.get("_meta").and_then(Value::as_object) else {
        return Ok(Era::Legacy);
    };
    let Some(version) = meta.get(META_PROTOCOL_VERSION) else {
        return Ok(Era::Legacy);
    };
    let supported = version
        .as_str()
        .filter(|version| MODERN_VERSIONS.contains(version));
    let Some(version) = supported else {
        let requested = match version {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        return Err(RpcError::new(
            UNSUPPORTED_PROTOCOL_VERSION,
            format!("Unsupported protocol version: {requested}"),
        )
        .with_data(json!({"supported": MODERN_VERSIONS, "requested": requested})));
    };
    let Some(capabilities) = meta
        .get(META_CLIENT_CAPABILITIES)
        .and_then(Value::as_object)
    else {
        return Err(RpcError::invalid_params(format!(
            "Invalid params: _meta[\"{META_CLIENT_CAPABILITIES}\"] is required and must be an object"
        )));
    };
    Ok(Era::Modern(ModernRequest {
        version: version.to_owned(),
        client_capabilities: capabilities.clone(),
        log_level: meta
            .get(META_LOG_LEVEL)
            .and_then(Value::as_str)
            .map(str::to_owned),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo_server::jsonrpc::INVALID_PARAMS;

    #[test]
    fn legacy_negotiation_keeps_a_supported_version_and_falls_back_to_the_latest() {
        assert_eq!(negotiate_legacy(Some("2025-06-18")), "2025-06-18");
        assert_eq!(negotiate_legacy(Some("2024-11-05")), "2024-11-05");
        assert_eq!(negotiate_legacy(Some("1999-01-01")), "2025-11-25");
        assert_eq!(negotiate_legacy(Some("2026-07-28")), "2025-11-25");
        assert_eq!(negotiate_legacy(None), "2025-11-25");
    }

    #[test]
    fn requests_without_a_version_in_meta_are_legacy() {
        assert_eq!(detect(&Value::Null), Ok(Era::Legacy));
        assert_eq!(detect(&json!({"name": "echo"})), Ok(Era::Legacy));
        assert_eq!(
            detect(&json!({"_meta": {"progressToken": 1}})),
            Ok(Era::Legacy)
        );
    }

    #[test]
    fn a_modern_request_carries_its_capabilities_and_log_level() {
        let era = detect(&json!({"_meta": {
            META_PROTOCOL_VERSION: "2026-07-28",
            META_CLIENT_CAPABILITIES: {"roots": {}},
            META_LOG_LEVEL: "debug"
        }}));
        let Ok(Era::Modern(request)) = era else {
            panic!("expected a modern request, got {era:?}");
        };
        assert_eq!(request.version, "2026-07-28");
        assert!(request.client_capabilities.contains_key("roots"));
        assert_eq!(request.log_level.as_deref(), Some("debug"));
    }

    #[test]
    fn an_unsupported_modern_version_lists_what_is_supported() {
        let error = detect(&json!({"_meta": {
            META_PROTOCOL_VERSION: "2027-01-01",
            META_CLIENT_CAPABILITIES: {}
        }}))
        .unwrap_err();
        assert_eq!(error.code, UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            error.data,
            Some(json!({"supported": ["2026-07-28"], "requested": "2027-01-01"}))
        );
    }

    #[test]
    fn missing_capabilities_on_a_modern_request_are_invalid_params() {
        let error = detect(&json!({"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}})).unwrap_err();
        assert_eq!(error.code, INVALID_PARAMS);
        let error = detect(&json!({"_meta": {
            META_PROTOCOL_VERSION: "2026-07-28",
            META_CLIENT_CAPABILITIES: "all"
        }}))
        .unwrap_err();
        assert_eq!(error.code, INVALID_PARAMS);
    }
}
