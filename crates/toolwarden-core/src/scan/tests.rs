use super::*;
use serde_json::json;

fn codes(findings: &[Finding]) -> Vec<(FindingCode, &str)> {
    findings
        .iter()
        .map(|f| (f.code, f.pointer.as_str()))
        .collect()
}

#[test]
fn placeholder_compiles() {
    let s = Scanner::default();
    assert!(s.scan_text("Adds two numbers.", "/description").is_empty());
    let _ = codes(&[]);
    let _ = json!({});
}
