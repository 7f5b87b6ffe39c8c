//! The JSON-RPC envelope: only `jsonrpc`, `id`, `method` and which of `params`/`result`/`error`
//! are present, borrowed from the line as raw JSON. Nothing else of a message is parsed here,
//! so a message no stage wants can be forwarded as the bytes it came in.

use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

#[derive(Deserialize)]
struct RawEnvelope<'a> {
    #[serde(borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a RawValue>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

/// One JSON-RPC message, borrowed from its line.
#[derive(Debug)]
pub enum Message<'a> {
    Request {
        id: &'a RawValue,
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    Notification {
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    Response {
        id: &'a RawValue,
        outcome: Outcome<'a>,
    },
}

#[derive(Debug, Clone, Copy)]
pub enum Outcome<'a> {
    Result(&'a RawValue),
    Error(&'a RawValue),
}

/// Why a line is not a usable JSON-RPC message, with the id to answer to when one was found.
#[derive(Debug, PartialEq, Eq)]
pub enum Invalid {
    /// Not JSON (or not UTF-8): JSON-RPC's -32700.
    Parse { id: Option<String>, reason: String },
    /// JSON, but not a JSON-RPC 2.0 message: -32600.
    Shape {
        id: Option<String>,
        reason: &'static str,
    },
}

impl Invalid {
    pub fn id(&self) -> Option<&str> {
        match self {
            Invalid::Parse { id, .. } | Invalid::Shape { id, .. } => id.as_deref(),
        }
    }
}

/// True when the line holds a JSON array (a JSON-RPC batch).
pub fn is_batch(line: &[u8]) -> bool {
    line.iter()
        .find(|byte| !byte.is_ascii_whitespace())
        .is_some_and(|byte| *byte == b'[')
}

/// Splits a batch line into its elements, each still raw.
pub fn split_batch(line: &[u8]) -> Result<Vec<&RawValue>, Invalid> {
    serde_json::from_slice::<Vec<&RawValue>>(line).map_err(|error| Invalid::Parse {
        id: None,
        reason: parse_reason(&error),
    })
}

pub fn parse(line: &[u8]) -> Result<Message<'_>, Invalid> {
    // serde_json skips the bytes of fields it ignores without checking them, so invalid UTF-8
    // there would pass; a peer must never receive a line that is not UTF-8.
    let Ok(text) = std::str::from_utf8(line) else {
        return Err(Invalid::Parse {
            id: salvage_id(line),
            reason: "the line is not valid UTF-8".to_owned(),
        });
    };
    // From the checked `&str`: serde_json then need not validate each string again.
    let envelope: RawEnvelope<'_> = match serde_json::from_str(text) {
        Ok(envelope) => envelope,
        Err(error) => return Err(classify_failure(line, &error)),
    };
    let id = envelope.id.filter(|id| id.get() != "null");
    let answer_id = || {
        id.filter(|id| is_valid_id(id))
            .map(|id| id.get().to_owned())
    };
    if envelope.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
        return Err(Invalid::Shape {
            id: answer_id(),
            reason: "the message lacks \"jsonrpc\": \"2.0\"",
        });
    }
    if let Some(id) = id
        && !is_valid_id(id)
    {
        return Err(Invalid::Shape {
            id: None,
            reason: "the id must be a string or an integer",
        });
    }
    match (envelope.method, envelope.result, envelope.error) {
        (Some(method), None, None) => {
            let Ok(method) = serde_json::from_str::<Cow<'_, str>>(method.get()) else {
                return Err(Invalid::Shape {
                    id: answer_id(),
                    reason: "the method must be a string",
                });
            };
            if envelope
                .params
                .is_some_and(|params| !matches!(params.get().as_bytes().first(), Some(b'{' | b'[')))
            {
                return Err(Invalid::Shape {
                    id: answer_id(),
                    reason: "params must be an object",
                });
            }
            Ok(match id {
                Some(id) => Message::Request {
                    id,
                    method,
                    params: envelope.params,
                },
                None => Message::Notification {
                    method,
                    params: envelope.params,
                },
            })
        }
        (None, Some(result), None) => match id {
            Some(id) => Ok(Message::Response {
                id,
                outcome: Outcome::Result(result),
            }),
            None => Err(Invalid::Shape {
                id: None,
                reason: "a response must carry an id",
            }),
        },
        (None, None, Some(error)) => match id {
            Some(id) => Ok(Message::Response {
                id,
                outcome: Outcome::Error(error),
            }),
            // An error response to something that could not be parsed: nothing to route.
            None => Err(Invalid::Shape {
                id: None,
                reason: "an error response without an id",
            }),
        },
        _ => Err(Invalid::Shape {
            id: answer_id(),
            reason: "a message must have exactly one of method, result or error",
        }),
    }
}

fn is_valid_id(id: &RawValue) -> bool {
    let text = id.get();
    text.starts_with('"')
        || (text.bytes().all(|b| b.is_ascii_digit() || b == b'-') && !text.is_empty())
}

fn classify_failure(line: &[u8], error: &serde_json::Error) -> Invalid {
    use serde_json::error::Category;
    match error.classify() {
        // Valid JSON, wrong shape (not an object, duplicate keys, ...).
        Category::Data => Invalid::Shape {
            id: salvage_id(line),
            reason: "a JSON-RPC message must be a JSON object",
        },
        Category::Syntax | Category::Eof | Category::Io => Invalid::Parse {
            id: salvage_id(line),
            reason: parse_reason(error),
        },
    }
}

fn parse_reason(error: &serde_json::Error) -> String {
    // serde_json's syntax messages name a position and a class of token, never the input.
    match error.classify() {
        serde_json::error::Category::Io => "the line could not be read".to_owned(),
        _ if error.to_string().contains("invalid unicode")
            || error.to_string().contains("UTF-8") =>
        {
            "the line is not valid UTF-8".to_owned()
        }
        _ => format!("the line is not valid JSON (column {})", error.column()),
    }
}

/// Finds the raw text of a top-level `"id"` in the start of a message that could not be parsed
/// as a whole (broken, truncated or over-long), so its sender still gets an answer. Only a
/// string or integer id is taken; anything unexpected gives up rather than guessing.
pub fn salvage_id(bytes: &[u8]) -> Option<String> {
    let mut scanner = Scanner { bytes, at: 0 };
    scanner.skip_whitespace();
    scanner.expect(b'{')?;
    loop {
        scanner.skip_whitespace();
        let key_start = scanner.at;
        scanner.skip_string()?;
        let key = bytes.get(key_start..scanner.at)?;
        scanner.skip_whitespace();
        scanner.expect(b':')?;
        scanner.skip_whitespace();
        let value_start = scanner.at;
        if key == b"\"id\"" {
            match bytes.get(value_start)? {
                b'"' => scanner.skip_string()?,
                b'-' | b'0'..=b'9' => scanner.skip_number()?,
                _ => return None,
            }
            let raw = std::str::from_utf8(bytes.get(value_start..scanner.at)?).ok()?;
            return (raw.starts_with('"') || raw.parse::<i64>().is_ok()).then(|| raw.to_owned());
        }
        scanner.skip_value()?;
        scanner.skip_whitespace();
        scanner.expect(b',')?;
    }
}

struct Scanner<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    fn skip_whitespace(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn skip_string(&mut self) -> Option<()> {
        self.expect(b'"')?;
        loop {
            match self.peek()? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return Some(());
                }
                _ => self.at += 1,
            }
        }
    }

    fn skip_number(&mut self) -> Option<()> {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
        {
            self.at += 1;
        }
        // A number running into the end of the salvaged head may be cut short.
        (self.at > start && self.at < self.bytes.len()).then_some(())
    }

    fn skip_value(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.skip_string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.at += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.at += 1;
                }
            }
            _ => {
                while self
                    .peek()
                    .is_some_and(|b| !matches!(b, b',' | b'}') && !b.is_ascii_whitespace())
                {
                    self.at += 1;
                }
                Some(())
            }
        }
    }
}

/// A request id as a map key. Integer ids are kept as numbers so `1` and `1.0`-free clients
/// need no allocation; string ids keep their JSON text, escapes included, which is exact.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum IdKey {
    Number(i64),
    Text(Box<str>),
}

impl IdKey {
    pub fn from_raw(raw: &RawValue) -> IdKey {
        let text = raw.get();
        match text.parse::<i64>() {
            Ok(number) => IdKey::Number(number),
            Err(_) => IdKey::Text(text.into()),
        }
    }

    /// The id as JSON text, to write into a response.
    pub fn to_json(&self) -> Cow<'_, str> {
        match self {
            IdKey::Number(number) => Cow::Owned(number.to_string()),
            IdKey::Text(text) => Cow::Borrowed(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_notifications_and_responses_are_told_apart() {
        let request = parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#);
        assert!(
            matches!(request, Ok(Message::Request { ref method, .. }) if method == "tools/list")
        );
        let note = parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert!(matches!(note, Ok(Message::Notification { .. })));
        let response = parse(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#);
        assert!(matches!(
            response,
            Ok(Message::Response {
                outcome: Outcome::Result(_),
                ..
            })
        ));
        let error = parse(br#"{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"x"}}"#);
        assert!(matches!(
            error,
            Ok(Message::Response {
                outcome: Outcome::Error(_),
                ..
            })
        ));
    }

    #[test]
    fn escaped_method_names_are_decoded() {
        let parsed = parse(br#"{"jsonrpc":"2.0","id":1,"method":"tools\/call"}"#);
        assert!(
            matches!(parsed, Ok(Message::Request { ref method, .. }) if method == "tools/call")
        );
    }

    #[test]
    fn bad_shapes_keep_the_id_to_answer_to() {
        assert_eq!(
            parse(br#"{"id":5,"method":"x"}"#).unwrap_err().id(),
            Some("5")
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":"q","method":7}"#)
                .unwrap_err()
                .id(),
            Some("\"q\"")
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":3,"result":{},"error":{}}"#)
                .unwrap_err()
                .id(),
            Some("3")
        );
        assert_eq!(parse(br#"[1,2]"#).unwrap_err().id(), None);
        assert!(matches!(parse(b"42"), Err(Invalid::Shape { .. })));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":{"x":1},"method":"m"}"#),
            Err(Invalid::Shape { id: None, .. })
        ));
    }

    #[test]
    fn broken_json_salvages_the_id() {
        let parsed = parse(br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"#);
        assert!(matches!(parsed, Err(Invalid::Parse { id: Some(ref id), .. }) if id == "12"));
        let parsed = parse(b"{\"jsonrpc\":\"2.0\",\"id\":\"k\\\"1\",\"method\":\"\xff\xfe\"}");
        assert!(
            matches!(parsed, Err(Invalid::Parse { id: Some(ref id), .. }) if id == "\"k\\\"1\"")
        );
        assert!(matches!(
            parse(b"not json"),
            Err(Invalid::Parse { id: None, .. })
        ));
    }

    #[test]
    fn salvage_skips_nested_values_and_refuses_guesses() {
        assert_eq!(
            salvage_id(br#"{"params":{"id":9,"a":[1,{"b":"}"}]},"id":"x"#),
            None,
            "an id string cut short is not an id"
        );
        assert_eq!(
            salvage_id(br#"{"params":{"id":9,"a":[1,{"b":"}"}]},"id":"x","#).as_deref(),
            Some("\"x\"")
        );
        assert_eq!(salvage_id(br#"{"jsonrpc":"2.0","id":123"#), None);
        assert_eq!(salvage_id(br#"{"id":true}"#), None);
        assert_eq!(salvage_id(br#"{"id":1.5,"#), None);
    }

    #[test]
    fn batches_are_recognised_and_split() {
        assert!(is_batch(b"  [{}]"));
        assert!(!is_batch(b"{}"));
        let parts = split_batch(br#"[{"a":1}, {"b":2}]"#).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[1].get(), r#"{"b":2}"#);
    }

    #[test]
    fn id_keys_are_exact() {
        let raw = serde_json::from_str::<&RawValue>("42").unwrap();
        assert_eq!(IdKey::from_raw(raw), IdKey::Number(42));
        let raw = serde_json::from_str::<&RawValue>("\"42\"").unwrap();
        assert_eq!(IdKey::from_raw(raw), IdKey::Text("\"42\"".into()));
        assert_ne!(IdKey::Number(42), IdKey::Text("\"42\"".into()));
    }
}
