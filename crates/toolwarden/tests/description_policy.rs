//! Tool-description hygiene through the real gateway: the demo server's poisoned tool is
//! reported in warn mode and withheld in strict mode, over every page of tools/list.

mod support;

use serde_json::json;
use support::Peer;

fn config(text: &str) -> (String, impl Drop) {
    struct Cleanup(std::path::PathBuf);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let path = std::env::temp_dir().join(format!(
        "toolwarden-scan-{}-{}.toml",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, text).unwrap();
    (path.to_string_lossy().into_owned(), Cleanup(path))
}

fn names(tools: &[serde_json::Value]) -> Vec<&str> {
    tools
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect()
}

#[test]
fn warn_mode_reports_the_poisoned_tool_and_passes_it_on() {
    let mut gateway = Peer::gateway_demo(&[], &["--poisoned"]);
    gateway.initialize("scan-warn");
    let tools = gateway.list_tools();
    assert!(names(&tools).contains(&"send_note"));
    gateway.close_stdin();
    gateway.wait();
    let logs = gateway.stderr_text();
    for code in ["prompt_injection", "sensitive_path", "invisible_unicode"] {
        assert!(
            logs.contains(&format!("code=\"{code}\"")),
            "{code} not logged: {logs}"
        );
    }
    assert!(logs.contains("WARN"), "{logs}");
    assert!(!logs.contains("withheld"), "{logs}");
}

#[test]
fn strict_mode_withholds_the_poisoned_tool_and_refuses_calls_to_it() {
    let (path, _cleanup) = config("[scan]\nmode = \"strict\"\n");
    // A small page size spreads the catalog over several pages.
    let mut gateway = Peer::gateway_demo(&["--config", &path], &["--poisoned", "--page-size", "3"]);
    gateway.initialize("scan-strict");
    let tools = gateway.list_tools();
    assert!(!names(&tools).contains(&"send_note"), "{:?}", names(&tools));
    assert!(names(&tools).contains(&"echo") && names(&tools).len() >= 12);
    let response = gateway.call(9, "send_note", json!({"note": "hello", "sidenote": "none"}));
    let result = &response["result"];
    assert_eq!(result["isError"], true);
    assert_eq!(result["_meta"]["toolwarden/error"]["kind"], "policy_denied");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("prompt_injection at /description"), "{text}");
    assert!(
        !text.contains("id_rsa") && !text.contains("IMPORTANT"),
        "{text}"
    );
    let response = gateway.call(10, "echo", json!({"text": "fine"}));
    assert_eq!(response["result"]["content"][0]["text"], "fine");
    gateway.close_stdin();
    gateway.wait();
    let logs = gateway.stderr_text();
    assert!(
        logs.contains("ERROR") && logs.contains("the tool is withheld"),
        "{logs}"
    );
}

#[test]
fn strict_mode_applies_to_calls_made_before_any_listing() {
    let (path, _cleanup) = config("[scan]\nmode = \"strict\"\n");
    let mut gateway = Peer::gateway_demo(&["--config", &path], &["--poisoned"]);
    gateway.initialize("scan-early-call");
    let response = gateway.call(1, "send_note", json!({"note": "hello", "sidenote": "none"}));
    assert_eq!(
        response["result"]["_meta"]["toolwarden/error"]["kind"],
        "policy_denied"
    );
}
