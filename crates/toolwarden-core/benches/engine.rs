//! Micro-benchmarks of the engine's work on the hot path: argument validation, call
//! decisions, reshaping a server's error, redaction, truncation and compiling a catalog.
//!
//! Run with `cargo bench -p toolwarden-core --bench engine`.

use divan::counter::BytesCount;
use divan::{Bencher, black_box};
use serde_json::{Value, json};
use toolwarden_core::call::decide_call;
use toolwarden_core::catalog::Catalog;
use toolwarden_core::policy::ErrorPolicyConfig;
use toolwarden_core::redact::{CallerValues, scrub};
use toolwarden_core::truncate::truncate_middle;
use toolwarden_core::upstream::{UpstreamCall, reshape_error_result};
use toolwarden_core::validate::{ArgumentValidator, UnknownArguments};

fn main() {
    divan::main();
}

/// A schema of the size real tools have: five documented parameters, an enum, bounds.
fn write_file_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Where to write, relative to the workspace."},
            "content": {"type": "string", "description": "The text to write."},
            "mode": {"type": "string", "enum": ["create", "overwrite", "append"]},
            "max_bytes": {"type": "integer", "minimum": 1, "maximum": 1048576},
            "dry_run": {"type": "boolean", "default": false}
        },
        "required": ["path", "content"],
        "additionalProperties": false
    })
}

fn valid_arguments() -> Value {
    json!({"path": "notes/today.md", "content": "Buy milk.\nCall the bank.", "mode": "append", "max_bytes": 4096})
}

/// Three faults at once: a wrong type, a missing required field, and the unknown key Gemini
/// CLI adds to batched calls.
fn invalid_arguments() -> Value {
    json!({"path": 42, "mode": "append", "wait_for_previous": true})
}

fn catalog_of(tools: usize) -> Vec<Value> {
    let mut definitions = vec![json!({
        "name": "write_file",
        "description": "Writes a file in the workspace.",
        "inputSchema": write_file_schema()
    })];
    definitions.extend((1..tools).map(|index| {
        json!({
            "name": format!("list_items_{index}"),
            "description": "Lists items of a collection, newest first, paginated with a cursor.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "scope": {"type": "string", "description": "The collection."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 500},
                    "cursor": {"type": "string"},
                    "order": {"type": "string", "enum": ["newest", "oldest"]}
                },
                "required": ["scope"]
            }
        })
    }));
    definitions
}

mod validate {
    use super::*;

    #[divan::bench]
    fn valid_call(bencher: Bencher) {
        let validator = ArgumentValidator::compile(&write_file_schema()).unwrap();
        let arguments = valid_arguments();
        bencher.bench_local(|| validator.check(black_box(&arguments), UnknownArguments::Reject));
    }

    #[divan::bench]
    fn invalid_call(bencher: Bencher) {
        let validator = ArgumentValidator::compile(&write_file_schema()).unwrap();
        let arguments = invalid_arguments();
        bencher.bench_local(|| validator.check(black_box(&arguments), UnknownArguments::Reject));
    }

    #[divan::bench]
    fn compile_schema() -> ArgumentValidator {
        ArgumentValidator::compile(black_box(&write_file_schema())).unwrap()
    }
}

mod decide {
    use super::*;

    #[divan::bench]
    fn forward_valid_call(bencher: Bencher) {
        let catalog = Catalog::from_tools(&catalog_of(20));
        let policy = ErrorPolicyConfig::default();
        let arguments = valid_arguments();
        bencher.bench_local(|| {
            decide_call(
                &catalog,
                &policy,
                black_box("write_file"),
                Some(black_box(&arguments)),
                Some("gemini-cli"),
            )
        });
    }

    /// The whole refusal: validation, field issues, message, hint and suggestion.
    #[divan::bench]
    fn refuse_invalid_call(bencher: Bencher) {
        let catalog = Catalog::from_tools(&catalog_of(20));
        let policy = ErrorPolicyConfig::default();
        let arguments = invalid_arguments();
        bencher.bench_local(|| {
            decide_call(
                &catalog,
                &policy,
                black_box("write_file"),
                Some(black_box(&arguments)),
                Some("gemini-cli"),
            )
        });
    }

    #[divan::bench]
    fn unknown_tool(bencher: Bencher) {
        let catalog = Catalog::from_tools(&catalog_of(20));
        let policy = ErrorPolicyConfig::default();
        let arguments = valid_arguments();
        bencher.bench_local(|| {
            decide_call(
                &catalog,
                &policy,
                black_box("write_fiel"),
                Some(black_box(&arguments)),
                None,
            )
        });
    }

    /// What the gateway does when a `tools/list` arrives: compile every tool's schemas.
    #[divan::bench(args = [20, 500])]
    fn compile_catalog(bencher: Bencher, tools: usize) {
        let definitions = catalog_of(tools);
        bencher.bench_local(|| Catalog::from_tools(black_box(&definitions)));
    }
}

mod shape {
    use super::*;

    /// A server's error that stacks prefixes and repeats two of the caller's values.
    fn server_error() -> Value {
        json!({
            "isError": true,
            "content": [{"type": "text", "text": "McpError: Internal error: Error: could not write notes/today.md: the file exists and mode append needs max_bytes above 4096 (token ghp_abcdefghijklmnopqrstuvwxyz0123456789)"}]
        })
    }

    #[divan::bench]
    fn reshape_error_result(bencher: Bencher) {
        let arguments = valid_arguments();
        let discovery = vec!["list_items_1".to_owned()];
        let result = server_error();
        bencher.bench_local(|| {
            let call = UpstreamCall {
                tool: "write_file",
                arguments: Some(&arguments),
                discovery_tools: &discovery,
                trust_echoes: false,
            };
            super::reshape_error_result(&call, black_box(&result))
        });
    }
}

mod redact {
    use super::*;

    fn error_text(bytes: usize) -> String {
        let sentence = "could not write notes/today.md: the disk is full; retry after 4096 ms. ";
        sentence.repeat(bytes / sentence.len() + 1)
    }

    #[divan::bench]
    fn caller_values_from_arguments(bencher: Bencher) {
        let arguments = valid_arguments();
        bencher.bench_local(|| CallerValues::from_arguments(Some(black_box(&arguments))));
    }

    /// Echo replacement and secret masking over error texts of typical and large size.
    #[divan::bench(args = [200, 64 * 1024])]
    fn scrub_text(bencher: Bencher, bytes: usize) {
        let caller = CallerValues::from_arguments(Some(&valid_arguments()));
        let text = error_text(bytes);
        bencher
            .counter(BytesCount::of_str(&text))
            .bench_local(|| scrub(black_box(&text), &caller, false));
    }

    /// A text with nothing to hide: the common case, which must not allocate.
    #[divan::bench]
    fn scrub_clean_text(bencher: Bencher) {
        let caller = CallerValues::from_arguments(Some(&valid_arguments()));
        let text = "the disk is full; free some space and retry.".repeat(5);
        bencher
            .counter(BytesCount::of_str(&text))
            .bench_local(|| scrub(black_box(&text), &caller, false));
    }
}

mod truncate {
    use super::*;

    /// The cut copies only the head and tail it keeps, so the time does not grow with the
    /// input: no bytes counter, which would report an absurd rate.
    #[divan::bench(args = [64 * 1024, 4 * 1024 * 1024])]
    fn truncate_middle_to_16k(bencher: Bencher, bytes: usize) {
        let line = "row 0042: ok, 3 items, checksum 9f8e7d\n";
        let mut text = line.repeat(bytes / line.len() + 1);
        text.push_str("Hint: narrow the query.");
        bencher.bench_local(|| truncate_middle(black_box(&text), 16 * 1024));
    }
}
