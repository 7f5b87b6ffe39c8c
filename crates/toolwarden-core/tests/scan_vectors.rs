//! The shared description vectors: each text must give exactly its expected codes, each once.

use std::collections::BTreeSet;

use serde::Deserialize;
use toolwarden_core::scan::{FindingCode, Scanner};

#[derive(Deserialize)]
struct Vector {
    text: String,
    expect: Vec<FindingCode>,
}

fn vectors() -> Vec<Vector> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/vectors/descriptions.jsonl"
    );
    let body = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    body.lines()
        .filter(|line| !line.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", i + 1))
        })
        .collect()
}

#[test]
fn every_vector_gives_exactly_its_expected_codes() {
    let scanner = Scanner::default();
    let vectors = vectors();
    assert!(vectors.len() >= 30, "only {} vectors", vectors.len());
    let mut failures = Vec::new();
    for (i, v) in vectors.iter().enumerate() {
        let findings = scanner.scan_text(&v.text, "/description");
        let got: Vec<FindingCode> = findings.iter().map(|f| f.code).collect();
        let got_set: BTreeSet<FindingCode> = got.iter().copied().collect();
        let want: BTreeSet<FindingCode> = v.expect.iter().copied().collect();
        if got_set != want || got.len() != got_set.len() {
            failures.push(format!(
                "line {}: want {want:?}, got {got:?} for {:?}",
                i + 1,
                v.text.chars().take(100).collect::<String>()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_vector_finding_is_well_formed() {
    let scanner = Scanner::default();
    for v in vectors() {
        for f in scanner.scan_text(&v.text, "/description") {
            assert_eq!(f.pointer, "/description");
            assert!(!f.message.is_empty());
            assert!(f.excerpt.chars().count() <= 100, "{}", f.excerpt);
            assert!(
                f.excerpt.chars().all(|c| !c.is_control()),
                "{:?}",
                f.excerpt
            );
        }
    }
}
