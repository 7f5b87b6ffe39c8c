//! `toolwarden scan` and `toolwarden pin` through the real binary: a server, a saved listing,
//! client configuration files with servers that work, fail, hang or are remote; and pins
//! the gateway enforces.

mod support;

use serde_json::{Value, json};
use std::process::Output;
use support::{Peer, exe, toolwarden};

struct Dir(std::path::PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let path = std::env::temp_dir().join(format!("toolwarden-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Dir(path)
    }

    fn path(&self, file: &str) -> String {
        self.0.join(file).to_string_lossy().into_owned()
    }

    fn write(&self, file: &str, text: &str) -> String {
        let path = self.path(file);
        if let Some(parent) = std::path::Path::new(&path).parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(args: &[&str]) -> Output {
    toolwarden().args(args).output().unwrap()
}

fn json_of(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("{error}: {}", String::from_utf8_lossy(&output.stdout)))
}

#[test]
fn scanning_a_server_flags_the_poisoned_tool_in_every_format() {
    let output = run(&["scan", "--", exe(), "demo-server", "--poisoned"]);
    assert_eq!(output.status.code(), Some(1));
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(table.contains("send_note  prompt_injection"), "{table}");

    let output = run(&[
        "scan",
        "--format",
        "json",
        "--",
        exe(),
        "demo-server",
        "--poisoned",
    ]);
    let report = json_of(&output);
    let codes: Vec<&str> = report["targets"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| finding["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        ["invisible_unicode", "prompt_injection", "sensitive_path"]
    );

    let output = run(&[
        "scan",
        "--format",
        "sarif",
        "--",
        exe(),
        "demo-server",
        "--poisoned",
    ]);
    let sarif = json_of(&output);
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), 3);

    let output = run(&["scan", "--", exe(), "demo-server"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

#[test]
fn scanning_a_saved_listing_and_fail_on_thresholds() {
    let dir = Dir::new("scan-file");
    let listing = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": "fetch", "description": "Fetches a URL.\u{200b}", "inputSchema": {"type": "object"}},
        {"name": "notes", "description": "x".repeat(3000), "inputSchema": {"type": "object"}},
    ]}});
    let file = dir.write("tools.json", &listing.to_string());
    let report = json_of(&run(&["scan", "--format", "json", "--file", &file]));
    assert_eq!(report["targets"][0]["tools"], 2);
    assert_eq!(
        report["targets"][0]["findings"].as_array().unwrap().len(),
        2
    );
    // too_long is low severity: under the default threshold alone it does not fail.
    assert_eq!(run(&["scan", "--file", &file]).status.code(), Some(1));
    assert_eq!(
        run(&["scan", "--file", &file, "--fail-on", "high"])
            .status
            .code(),
        Some(0)
    );
    let config = dir.write("toolwarden.toml", "[[scan.allow]]\ntool = \"fetch\"\n");
    assert_eq!(
        run(&["scan", "--file", &file, "--config", &config])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        run(&[
            "scan",
            "--file",
            &file,
            "--config",
            &config,
            "--fail-on",
            "low"
        ])
        .status
        .code(),
        Some(1)
    );
    let missing = run(&["scan", "--file", &dir.path("nope.json")]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn scanning_a_client_config_goes_on_past_servers_that_fail_or_hang() {
    let dir = Dir::new("scan-client");
    let config = json!({"mcpServers": {
        "demo": {"command": exe(), "args": ["demo-server", "--poisoned"]},
        "clean": {"command": exe(), "args": ["demo-server"], "env": {"UNUSED": "1"}},
        "crashes": {"command": "sh", "args": ["-c", "echo starting >&2; exit 3"]},
        "hangs": {"command": "sleep", "args": ["300"]},
        "garbage": {"command": "sh", "args": ["-c", "while read line; do echo 'not json'; done"]},
        "remote": {"url": "https://mcp.example.invalid/sse"},
    }});
    let file = dir.write("Claude/claude_desktop_config.json", &config.to_string());
    let started = std::time::Instant::now();
    let output = run(&[
        "scan",
        "--format",
        "json",
        "--timeout",
        "2",
        "--client",
        &file,
    ]);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(output.status.code(), Some(1), "findings first");
    let report = json_of(&output);
    let status = |name: &str| -> String {
        report["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|target| target["name"] == name)
            .map(|target| target["status"].as_str().unwrap().to_owned())
            .unwrap()
    };
    assert_eq!(status("demo"), "scanned");
    assert_eq!(status("clean"), "scanned");
    assert_eq!(status("crashes"), "failed");
    assert_eq!(status("hangs"), "failed");
    assert_eq!(status("garbage"), "failed");
    assert_eq!(status("remote"), "skipped");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Claude Desktop"), "{stderr}");

    let only_failures = json!({"servers": {"crashes": {"type": "stdio", "command": "false"}}});
    let file = dir.write(".vscode/mcp.json", &only_failures.to_string());
    assert_eq!(run(&["scan", "--client", &file]).status.code(), Some(2));
}

#[test]
fn pins_are_written_verified_and_enforced_by_the_gateway() {
    let dir = Dir::new("pin");
    let lockfile = dir.path("toolwarden.lock");
    let output = run(&["pin", "--lockfile", &lockfile, "--", exe(), "demo-server"]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = std::fs::read_to_string(&lockfile).unwrap();
    assert!(
        text.contains("[tools.echo]") && text.contains("sha256:"),
        "{text}"
    );

    let verify = |extra: &[&str]| {
        let mut args = vec![
            "pin",
            "--verify",
            "--lockfile",
            lockfile.as_str(),
            "--",
            exe(),
            "demo-server",
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    assert_eq!(verify(&[]).status.code(), Some(0));
    let added = verify(&["--poisoned"]);
    assert_eq!(added.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&added.stdout).contains("send_note: added"));

    // A rug pull: the pinned hash of `echo` no longer matches what the server offers.
    let mut in_echo = false;
    let tampered: Vec<String> = text
        .lines()
        .map(|line| {
            if line.starts_with('[') {
                in_echo = line == "[tools.echo]";
            }
            if in_echo && line.starts_with("hash = ") {
                format!("hash = \"sha256:{}\"", "0".repeat(64))
            } else {
                line.to_owned()
            }
        })
        .collect();
    let tampered = tampered.join("\n");
    assert_ne!(tampered, text.trim_end());
    std::fs::write(&lockfile, &tampered).unwrap();
    let config = dir.write(
        "toolwarden.toml",
        "[scan]\nmode = \"strict\"\n[pin]\nlockfile = \"toolwarden.lock\"\n",
    );
    let mut gateway = Peer::gateway_demo(&["--config", &config], &[]);
    gateway.initialize("pinned");
    let names: Vec<String> = gateway
        .list_tools()
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect();
    assert!(!names.contains(&"echo".to_owned()), "{names:?}");
    assert!(names.contains(&"add".to_owned()));
    let response = gateway.call(1, "echo", json!({"text": "x"}));
    assert_eq!(
        response["result"]["_meta"]["toolwarden/error"]["kind"],
        "policy_denied"
    );
}
