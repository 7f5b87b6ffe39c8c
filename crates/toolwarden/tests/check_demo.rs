//! `toolwarden check` against the built-in demo server, direct and through the warden, run as
//! the real binary.

use serde_json::Value;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn check(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolwarden"))
        .arg("check")
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .expect("run toolwarden check")
}

fn json_report(args: &[&str]) -> (Value, i32) {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let output = check(&all);
    let text = String::from_utf8(output.stdout).expect("utf-8");
    let report = serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}: {text}"));
    (report, output.status.code().expect("exit code"))
}

fn column<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["columns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|column| column["name"] == name)
        .unwrap_or_else(|| panic!("no {name} column"))
}

fn verdict<'a>(column: &'a Value, check: &str, tool: Option<&str>) -> &'a Value {
    let result = column["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|result| result["check"] == check && result["tool"].as_str() == tool)
        .unwrap_or_else(|| panic!("no {check} result for {tool:?}"));
    &result["verdict"]
}

#[test]
fn the_demo_is_graded_directly_and_through_the_warden() {
    let (report, status) = json_report(&["--demo"]);
    assert_eq!(status, 0, "{report:#}");
    assert_eq!(report["format_version"], 1);
    let direct = column(&report, "direct");
    let warden = column(&report, "warden");
    assert_eq!(direct["completed"], true, "{direct:#}");
    assert_eq!(warden["completed"], true, "{warden:#}");
    assert_eq!(direct["server"]["name"], "toolwarden-demo");

    // The demo server misbehaves on purpose; the warden repairs each of these.
    for (check, tool) in [
        ("invalid-input-is-tool-error", Some("divide")),
        ("error-message-is-useful", Some("add")),
        ("marker-not-echoed", Some("add")),
        ("unknown-key-is-reported", Some("echo")),
        ("unknown-tool-is-protocol-error", None),
        ("output-matches-schema", Some("get_weather")),
    ] {
        assert_eq!(
            verdict(direct, check, tool),
            "fail",
            "direct {check} {tool:?}"
        );
        assert_eq!(
            verdict(warden, check, tool),
            "pass",
            "warden {check} {tool:?}"
        );
    }
    // The poisoned tool is found directly.
    assert_eq!(
        verdict(direct, "descriptions-are-clean", Some("send_note")),
        "fail"
    );
    assert_eq!(
        verdict(direct, "descriptions-are-clean", Some("add")),
        "pass"
    );

    // `--demo` runs its warden column in strict scan mode: the poisoned tool is withheld, and
    // nothing fails through the warden.
    assert_eq!(warden["score"]["failed"], 0, "{warden:#}");
    assert!(
        !warden["tools_listed"]
            .as_array()
            .unwrap()
            .contains(&"send_note".into())
    );
    let direct_percent = direct["score"]["percent"].as_f64().unwrap();
    let warden_percent = warden["score"]["percent"].as_f64().unwrap();
    assert!(
        warden_percent > direct_percent + 20.0,
        "{direct_percent} vs {warden_percent}"
    );
}

#[test]
fn in_warn_scan_mode_the_poisoned_tool_is_the_only_warden_failure() {
    let (report, _) = json_report(&["--demo", "--scan-mode", "warn"]);
    let warden = column(&report, "warden");
    let failures: Vec<&Value> = warden["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|result| result["verdict"] == "fail")
        .collect();
    assert!(!failures.is_empty(), "{warden:#}");
    for failure in failures {
        assert_eq!(failure["check"], "descriptions-are-clean", "{failure:#}");
        assert_eq!(failure["tool"], "send_note", "{failure:#}");
    }
}

#[test]
fn in_strict_scan_mode_the_warden_column_is_clean() {
    let config = std::env::temp_dir().join(format!(
        "toolwarden-check-strict-{}.toml",
        std::process::id()
    ));
    std::fs::write(&config, "[scan]\nmode = \"strict\"\n").unwrap();
    let (report, status) = json_report(&[
        "--demo",
        "--config",
        config.to_str().unwrap(),
        "--min-score",
        "100",
    ]);
    let _ = std::fs::remove_file(&config);
    assert_eq!(status, 0, "{report:#}");
    let warden = column(&report, "warden");
    assert!(
        !warden["tools_listed"]
            .as_array()
            .unwrap()
            .contains(&"send_note".into())
    );
    assert_eq!(warden["score"]["failed"], 0, "{warden:#}");
    let notes = warden["notes"].to_string();
    assert!(notes.contains("send_note"), "{notes}");
}

#[test]
fn calls_that_could_change_the_world_are_only_sent_when_allowed() {
    let (report, _) = json_report(&["--demo", "--columns", "direct", "--tools", "set_config"]);
    let direct = column(&report, "direct");
    assert_eq!(direct["tools_checked"], serde_json::json!(["set_config"]));
    let unknown_key = direct["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "unknown-key-is-reported")
        .unwrap();
    assert_eq!(unknown_key["verdict"], "n/a");
    assert!(
        unknown_key["reason"]
            .as_str()
            .unwrap()
            .contains("not read-only")
    );

    let (report, _) = json_report(&[
        "--demo",
        "--columns",
        "direct",
        "--tools",
        "set_config",
        "--allow-valid-calls",
    ]);
    // set_config swallows unknown keys: with valid calls allowed, that is seen.
    let direct = column(&report, "direct");
    assert_eq!(
        verdict(direct, "unknown-key-is-reported", Some("set_config")),
        "fail"
    );
}

#[test]
fn min_scores_set_the_exit_status() {
    let (_, status) = json_report(&["--demo", "--min-score", "50"]);
    assert_eq!(status, 0);
    let (_, status) = json_report(&["--demo", "--min-score-direct", "95"]);
    assert_eq!(status, 1);
    let (_, status) = json_report(&["--demo", "--columns", "direct", "--min-score", "95"]);
    assert_eq!(status, 1);
}

#[test]
fn text_markdown_and_sarif_renderings() {
    let output = check(&["--demo", "--tools", "add,echo"]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0));
    // Not a terminal: no colour.
    assert!(!text.contains('\x1b'), "{text}");
    assert!(text.contains("through toolwarden"), "{text}");
    assert!(text.contains("invalid-input-is-tool-error"), "{text}");

    let output = check(&["--demo", "--tools", "add", "--format", "markdown"]);
    let markdown = String::from_utf8(output.stdout).unwrap();
    assert!(
        markdown.contains("| check | direct | through toolwarden |"),
        "{markdown}"
    );

    let output = check(&["--demo", "--tools", "add", "--format", "sarif"]);
    let sarif: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let direct = &sarif["runs"][0];
    assert_eq!(direct["tool"]["driver"]["name"], "toolwarden-check");
    let results = direct["results"].as_array().unwrap();
    assert!(
        results.iter().any(|r| r["ruleId"] == "marker-not-echoed"),
        "{sarif:#}"
    );
}

#[test]
fn a_server_that_cannot_start_is_exit_status_2() {
    let output = check(&["--", "/nonexistent/mcp-server"]);
    assert_eq!(output.status.code(), Some(2));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("could not run"), "{text}");
}

#[test]
fn a_hanging_server_is_reported_within_the_timeout() {
    let started = Instant::now();
    let (report, status) = json_report(&[
        "--columns",
        "direct",
        "--timeout",
        "0.5",
        "--",
        "sh",
        "-c",
        "cat > /dev/null",
    ]);
    assert_eq!(status, 2);
    let direct = column(&report, "direct");
    assert_eq!(direct["completed"], false);
    assert!(
        direct["error"].as_str().unwrap().contains("initialize"),
        "{direct:#}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_server_that_prints_junk_and_answers_garbage_is_graded_not_fatal() {
    // Answers the handshake and the listing, prints a banner, then answers every call with a
    // result that is not an object.
    let script = r#"
read init; echo 'Server starting...'
echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"junk"}}}'
read initialized; read list
echo '{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}]}}'
id=3; while read call; do echo "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":7}"; id=$((id+1)); done
"#;
    let (report, status) = json_report(&[
        "--columns",
        "direct",
        "--timeout",
        "2",
        "--",
        "sh",
        "-c",
        script,
    ]);
    assert_eq!(status, 0, "{report:#}");
    let direct = column(&report, "direct");
    assert_eq!(direct["completed"], true);
    assert_eq!(verdict(direct, "stdout-is-json-rpc", None), "fail");
    assert_eq!(
        verdict(direct, "invalid-input-is-tool-error", Some("t")),
        "fail"
    );
}
