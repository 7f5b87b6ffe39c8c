//! Reading the MCP servers a client's configuration file names, each client in its own format:
//! Claude Desktop's `claude_desktop_config.json`, Cursor's `mcp.json`, Gemini CLI's
//! `settings.json` (all `mcpServers`), and VS Code's `mcp.json` (`servers`, or `mcp.servers`
//! in its user settings).

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientFormat {
    ClaudeDesktop,
    Cursor,
    GeminiCli,
    VsCode,
    /// An `mcpServers` file whose client the name does not tell.
    Generic,
}

impl ClientFormat {
    pub fn label(self) -> &'static str {
        match self {
            ClientFormat::ClaudeDesktop => "Claude Desktop",
            ClientFormat::Cursor => "Cursor",
            ClientFormat::GeminiCli => "Gemini CLI",
            ClientFormat::VsCode => "VS Code",
            ClientFormat::Generic => "MCP client",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// A remote server: named in the report, never contacted (toolwarden follows no URL it
    /// is given).
    Remote { url: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerEntry {
    pub name: String,
    pub transport: Result<Transport, String>,
}

#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub format: ClientFormat,
    pub servers: Vec<ServerEntry>,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientConfigError {
    #[error("not JSON: {0}")]
    NotJson(String),
    #[error(
        "no MCP servers found: expected `mcpServers` (Claude Desktop, Cursor, Gemini CLI) or `servers` (VS Code)"
    )]
    NoServers,
}

pub fn parse(path: &Path, text: &str) -> Result<ClientConfig, ClientConfigError> {
    let value: Value = serde_json::from_str(strip_jsonc(text).as_str())
        .map_err(|error| ClientConfigError::NotJson(error.to_string()))?;
    let (format, servers) =
        if let Some(servers) = value.get("mcpServers").and_then(Value::as_object) {
            (format_from_name(path), servers)
        } else if let Some(servers) = value.get("servers").and_then(Value::as_object) {
            (ClientFormat::VsCode, servers)
        } else if let Some(servers) = value
            .get("mcp")
            .and_then(|mcp| mcp.get("servers"))
            .and_then(Value::as_object)
        {
            (ClientFormat::VsCode, servers)
        } else {
            return Err(ClientConfigError::NoServers);
        };
    let base = path.parent().unwrap_or(Path::new("."));
    Ok(ClientConfig {
        format,
        servers: servers
            .iter()
            .map(|(name, entry)| ServerEntry {
                name: name.clone(),
                transport: transport(entry, base),
            })
            .collect(),
    })
}

fn format_from_name(path: &Path) -> ClientFormat {
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("");
    let in_dir = |dir: &str| {
        path.parent()
            .and_then(Path::file_name)
            .is_some_and(|parent| parent == dir)
    };
    match name {
        "claude_desktop_config.json" => ClientFormat::ClaudeDesktop,
        "mcp.json" if in_dir(".cursor") => ClientFormat::Cursor,
        "mcp.json" if in_dir(".vscode") => ClientFormat::VsCode,
        "settings.json" if in_dir(".gemini") => ClientFormat::GeminiCli,
        "settings.json" => ClientFormat::GeminiCli,
        _ => ClientFormat::Generic,
    }
}

fn transport(entry: &Value, base: &Path) -> Result<Transport, String> {
    let entry = entry
        .as_object()
        .ok_or_else(|| "the entry is not an object".to_owned())?;
    let kind = entry.get("type").and_then(Value::as_str);
    let url = ["url", "httpUrl", "serverUrl"]
        .iter()
        .find_map(|key| entry.get(*key).and_then(Value::as_str));
    if let Some(url) = url
        && kind.is_none_or(|kind| kind != "stdio")
    {
        return Ok(Transport::Remote {
            url: url.to_owned(),
        });
    }
    let command = entry
        .get("command")
        .and_then(Value::as_str)
        .filter(|command| !command.is_empty())
        .ok_or_else(|| "no `command` (and no `url`)".to_owned())?;
    let args = match entry.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(args)) => args
            .iter()
            .map(|arg| match arg {
                Value::String(arg) => Ok(arg.clone()),
                Value::Number(number) => Ok(number.to_string()),
                _ => Err("an `args` item is not a string".to_owned()),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("`args` is not a list".to_owned()),
    };
    let env = string_map(entry, "env")?;
    let unresolved: Vec<&str> = std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .chain(env.values().map(String::as_str))
        .filter(|text| text.contains("${input:"))
        .collect();
    if !unresolved.is_empty() {
        return Err("needs values the client prompts for (`${input:...}`)".to_owned());
    }
    let cwd = entry
        .get("cwd")
        .and_then(Value::as_str)
        .map(|cwd| base.join(cwd));
    Ok(Transport::Stdio {
        command: command.to_owned(),
        args,
        env,
        cwd,
    })
}

fn string_map(entry: &Map<String, Value>, key: &str) -> Result<BTreeMap<String, String>, String> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(name, value)| match value {
                Value::String(value) => Ok((name.clone(), value.clone())),
                other => Ok((name.clone(), other.to_string())),
            })
            .collect(),
        Some(_) => Err(format!("`{key}` is not an object")),
    }
}

/// VS Code's and Gemini CLI's files are JSON with comments and trailing commas; strip both
/// (outside strings) so a strict parser reads them.
fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => {
                    if let Some(next) = chars.next() {
                        out.push(next);
                    }
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/' | '*')) => {
                if skip_comment(&mut chars) {
                    // A line comment ends at a newline, which stays: JSON errors keep their line.
                    out.push('\n');
                }
            }
            (',', _) => {
                // A comma followed only by whitespace and comments before `}` or `]` is trailing.
                if !matches!(next_significant(chars.clone()), Some('}') | Some(']')) {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

fn next_significant(mut chars: std::iter::Peekable<std::str::Chars<'_>>) -> Option<char> {
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            (c, _) if c.is_whitespace() => {}
            ('/', Some('/' | '*')) => {
                skip_comment(&mut chars);
            }
            (c, _) => return Some(c),
        }
    }
    None
}

/// Skips a comment whose `/` was just read and whose second character is next. Returns true
/// when it was a line comment that ended at a newline.
fn skip_comment(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> bool {
    match chars.next() {
        Some('/') => chars.by_ref().any(|next| next == '\n'),
        _ => {
            let mut previous = '\0';
            for next in chars.by_ref() {
                if previous == '*' && next == '/' {
                    break;
                }
                previous = next;
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(entry: &ServerEntry) -> (&str, &[String]) {
        match &entry.transport {
            Ok(Transport::Stdio { command, args, .. }) => (command.as_str(), args.as_slice()),
            other => panic!("not stdio: {other:?}"),
        }
    }

    #[test]
    fn claude_desktop() {
        let config = parse(
            Path::new("/home/u/.config/Claude/claude_desktop_config.json"),
            r#"{"mcpServers": {"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"DEBUG": "1"}}}}"#,
        )
        .unwrap();
        assert_eq!(config.format, ClientFormat::ClaudeDesktop);
        assert_eq!(config.servers[0].name, "filesystem");
        assert_eq!(stdio(&config.servers[0]).0, "npx");
        assert_eq!(stdio(&config.servers[0]).1.len(), 3);
    }

    #[test]
    fn cursor_with_a_remote_server() {
        let config = parse(
            Path::new("/p/.cursor/mcp.json"),
            r#"{"mcpServers": {"local": {"command": "uvx", "args": ["mcp-server-time"]}, "remote": {"url": "https://mcp.example.com/sse", "headers": {"Authorization": "Bearer x"}}}}"#,
        )
        .unwrap();
        assert_eq!(config.format, ClientFormat::Cursor);
        let remote = config.servers.iter().find(|s| s.name == "remote").unwrap();
        assert_eq!(
            remote.transport,
            Ok(Transport::Remote {
                url: "https://mcp.example.com/sse".into()
            })
        );
    }

    #[test]
    fn vs_code_with_comments_inputs_and_trailing_commas() {
        let config = parse(
            Path::new("/p/.vscode/mcp.json"),
            r#"{
              // Servers for this workspace
              "inputs": [{"type": "promptString", "id": "token", "password": true}],
              "servers": {
                "time": {"type": "stdio", "command": "python3", "args": ["-m", "mcp_server_time"],},
                "github": {"type": "stdio", "command": "docker", "env": {"TOKEN": "${input:token}"}},
                "web": {"type": "http", "url": "http://127.0.0.1:3000/mcp"}, /* remote */
              },
            }"#,
        )
        .unwrap();
        assert_eq!(config.format, ClientFormat::VsCode);
        let by_name = |name: &str| config.servers.iter().find(|s| s.name == name).unwrap();
        assert_eq!(stdio(by_name("time")).0, "python3");
        assert!(
            by_name("github")
                .transport
                .as_ref()
                .unwrap_err()
                .contains("${input:")
        );
        assert!(matches!(
            by_name("web").transport,
            Ok(Transport::Remote { .. })
        ));
    }

    #[test]
    fn gemini_cli_settings_with_other_keys_and_http_url() {
        let config = parse(
            Path::new("/home/u/.gemini/settings.json"),
            r#"{"theme": "Default", "mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"], "cwd": "work", "trust": false}, "api": {"httpUrl": "https://x.example/mcp"}}}"#,
        )
        .unwrap();
        assert_eq!(config.format, ClientFormat::GeminiCli);
        let time = config.servers.iter().find(|s| s.name == "time").unwrap();
        assert!(
            matches!(&time.transport, Ok(Transport::Stdio { cwd: Some(cwd), .. }) if cwd.ends_with("work"))
        );
    }

    #[test]
    fn broken_entries_are_reported_per_server() {
        let config = parse(
            Path::new("mcp.json"),
            r#"{"mcpServers": {"a": {"args": ["x"]}, "b": 7, "c": {"command": "ok", "args": "oops"}}}"#,
        )
        .unwrap();
        assert!(
            config
                .servers
                .iter()
                .all(|server| server.transport.is_err())
        );
        assert!(matches!(
            parse(Path::new("x.json"), "{}"),
            Err(ClientConfigError::NoServers)
        ));
        assert!(matches!(
            parse(Path::new("x.json"), "{"),
            Err(ClientConfigError::NotJson(_))
        ));
    }

    #[test]
    fn comment_markers_inside_strings_are_kept() {
        let config = parse(
            Path::new("mcp.json"),
            r#"{"mcpServers": {"u": {"command": "run", "args": ["http://a/b", "/* no */", "a,]"]}}}"#,
        )
        .unwrap();
        assert_eq!(
            stdio(&config.servers[0]).1,
            ["http://a/b", "/* no */", "a,]"]
        );
    }
}
