//! `toolwarden check` against real third-party servers (installed by `.ci/run`: npm packages
//! in tests/real-servers, `mcp-server-time` from PyPI). Through the warden, every applicable
//! check must pass. Without the servers the tests skip locally and fail on CI.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Checks that cannot pass through the warden for a real reason, per server: (check, tool,
/// why). Empty today: every applicable check passes on every server below.
const ALLOWED_WARDEN_FAILURES: &[(&str, &str, &str)] = &[];

fn real_servers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/real-servers")
}

fn npm_server(package: &str) -> Option<PathBuf> {
    let entry = real_servers_dir()
        .join("node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    entry.is_file().then_some(entry)
}

/// Skips the test when a server is not installed, except on CI where it must be.
fn require(found: bool, what: &str) -> bool {
    if found {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{what} is not installed, and CI must have it (see .ci/run)"
    );
    eprintln!("SKIP: {what} is not installed; `.ci/run` installs it.");
    false
}

fn run_check(server: &[String], format: &str) -> (String, i32) {
    let output = Command::new(env!("CARGO_BIN_EXE_toolwarden"))
        .args(["check", "--format", format, "--"])
        .args(server)
        .output()
        .expect("run toolwarden check");
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        output.status.code().unwrap_or(-1),
    )
}

/// Runs the JSON and the text card at once (separate processes, separate servers), prints the
/// card, and checks the warden column.
fn grade(label: &str, server: &[String]) {
    let (json_run, text_run) = std::thread::scope(|scope| {
        let json = scope.spawn(|| run_check(server, "json"));
        let text = scope.spawn(|| run_check(server, "text"));
        (json.join().unwrap(), text.join().unwrap())
    });
    println!("==== {label} ====\n{}", text_run.0);
    let (json, status) = json_run;
    let report: Value =
        serde_json::from_str(&json).unwrap_or_else(|error| panic!("{error}: {json}"));
    assert_eq!(status, 0, "the run did not complete: {report:#}");
    for name in ["direct", "warden"] {
        let column = report["columns"]
            .as_array()
            .unwrap()
            .iter()
            .find(|column| column["name"] == name)
            .unwrap();
        assert_eq!(column["completed"], true, "{column:#}");
        assert!(
            !column["tools_checked"].as_array().unwrap().is_empty(),
            "{column:#}"
        );
        if name != "warden" {
            continue;
        }
        let unexpected: Vec<&Value> = column["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|result| result["verdict"] == "fail")
            .filter(|result| {
                !ALLOWED_WARDEN_FAILURES.iter().any(|(check, tool, _)| {
                    result["check"] == *check && result["tool"].as_str() == Some(tool)
                })
            })
            .collect();
        assert!(
            unexpected.is_empty(),
            "{label}: failures through the warden: {unexpected:#?}"
        );
    }
}

#[test]
fn server_everything() {
    let entry = npm_server("server-everything");
    if !require(entry.is_some(), "@modelcontextprotocol/server-everything") {
        return;
    }
    let entry = entry.unwrap().to_string_lossy().into_owned();
    grade("server-everything", &["node".into(), entry, "stdio".into()]);
}

#[test]
fn server_filesystem() {
    let entry = npm_server("server-filesystem");
    if !require(entry.is_some(), "@modelcontextprotocol/server-filesystem") {
        return;
    }
    let root = std::env::temp_dir().join(format!("toolwarden-check-fs-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("notes.txt"), "hello\n").unwrap();
    let entry = entry.unwrap().to_string_lossy().into_owned();
    grade(
        "server-filesystem",
        &["node".into(), entry, root.to_string_lossy().into_owned()],
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn mcp_server_time() {
    let installed = Command::new("python3")
        .args(["-c", "import mcp_server_time"])
        .output()
        .is_ok_and(|output| output.status.success());
    if !require(installed, "mcp-server-time (PyPI)") {
        return;
    }
    grade(
        "mcp-server-time",
        &["python3".into(), "-m".into(), "mcp_server_time".into()],
    );
}
