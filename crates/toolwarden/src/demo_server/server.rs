//! Routing: one incoming line in, the right answer (or none) out.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::DemoArgs;
use super::catalog::{self, CatalogOptions};
use super::era::{self, Era, META_SERVER_INFO, MODERN_VERSIONS};
use super::jsonrpc::{
    self, INVALID_REQUEST, Incoming, MISSING_CLIENT_CAPABILITY, PARSE_ERROR, RpcError,
};
use super::outbox::{AskError, ClientRequests, Outbox};
use super::tools::{self, Outcome, text_result};

const SERVER_NAME: &str = "toolwarden-demo";
const INSTRUCTIONS: &str = "A demonstration server whose tools fail the way real servers do: \
    echoed secrets, empty errors, leaked internal errors, schema drift, rate limits.";
const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];
const DISCOVER_TTL_MS: u64 = 3_600_000;
/// Small enough for a quick sleep to notice a cancellation promptly.
const SLEEP_SLICE: Duration = Duration::from_millis(20);
/// How often a long `slow_task` reports progress when the caller asked for it.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(500);
/// Marks a modern `list_roots` retry as ours; opaque to the client.
const ROOTS_REQUEST_STATE: &str = "list_roots:awaiting-roots";

fn server_info() -> Value {
    json!({"name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION")})
}

fn server_capabilities() -> Value {
    json!({"tools": {"listChanged": true}, "logging": {}})
}

/// What the legacy handshake told us about the client.
#[derive(Debug, Default)]
struct Session {
    /// `None` until `initialize`: a client that never initialised is asked anyway.
    client_declared_roots: Option<bool>,
    min_log_level: Option<usize>,
}

/// What a running `tools/call` knows about the request that started it.
struct CallContext {
    era: Era,
    params: Value,
    cancelled: Arc<AtomicBool>,
}

impl CallContext {
    fn progress_token(&self) -> Option<&Value> {
        self.params.pointer("/_meta/progressToken")
    }
}

pub struct Server {
    settings: DemoArgs,
    outbox: Outbox,
    client_requests: ClientRequests,
    session: Mutex<Session>,
    calls_started: AtomicU64,
    catalog_grown: AtomicBool,
    running: Mutex<HashMap<String, Arc<AtomicBool>>>,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

/// `1` and `"1"` are different JSON-RPC ids, so the key keeps the JSON form.
fn id_key(id: &Value) -> String {
    id.to_string()
}

impl Server {
    pub fn new(settings: DemoArgs, outbox: Outbox) -> Self {
        Self {
            settings,
            outbox,
            client_requests: ClientRequests::default(),
            session: Mutex::new(Session::default()),
            calls_started: AtomicU64::new(0),
            catalog_grown: AtomicBool::new(false),
            running: Mutex::new(HashMap::new()),
            workers: Mutex::new(Vec::new()),
        }
    }

    fn session(&self) -> std::sync::MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn catalog_options(&self) -> CatalogOptions {
        CatalogOptions {
            poisoned: self.settings.poisoned,
            crash_tool: self.settings.crash_tool,
            bad_schemas: self.settings.bad_schemas,
            extra_tool: self.catalog_grown.load(Ordering::SeqCst),
        }
    }

    pub fn handle_line(self: &Arc<Self>, line: &str) -> io::Result<()> {
        match jsonrpc::classify(line) {
            Incoming::Unparseable => self.outbox.send(&jsonrpc::error_response(
                &Value::Null,
                &RpcError::new(PARSE_ERROR, "Parse error"),
            )),
            Incoming::Invalid { id, reason } => self.outbox.send(&jsonrpc::error_response(
                &id,
                &RpcError::new(INVALID_REQUEST, format!("Invalid Request: {reason}")),
            )),
            Incoming::Response { id, outcome } => {
                // An answer nobody waits for (late, or after a timeout) is dropped, as the spec allows.
                self.client_requests.deliver(&id, outcome);
                Ok(())
            }
            Incoming::Notification { method, params } => {
                self.handle_notification(&method, &params);
                Ok(())
            }
            Incoming::Request { id, method, params } => self.handle_request(id, &method, params),
        }
    }

    /// Invalid UTF-8 is as unreadable as invalid JSON.
    pub fn reject_unreadable_line(&self) -> io::Result<()> {
        self.outbox.send(&jsonrpc::error_response(
            &Value::Null,
            &RpcError::new(PARSE_ERROR, "Parse error: the line is not UTF-8"),
        ))
    }

    fn handle_notification(&self, method: &str, params: &Value) {
        if method == "notifications/cancelled"
            && let Some(request_id) = params.get("requestId")
            && let Some(flag) = self
                .running
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(&id_key(request_id))
        {
            flag.store(true, Ordering::SeqCst);
        }
    }

    fn handle_request(self: &Arc<Self>, id: Value, method: &str, params: Value) -> io::Result<()> {
        let answer = match era::detect(&params) {
            Err(error) => Err(error),
            Ok(era) if method == "tools/call" => return self.start_call(id, params, era),
            Ok(era) => self
                .answer(method, &params, &era)
                .map(|r| finish_result(r, &era)),
        };
        self.send_answer(&id, answer)
    }

    fn send_answer(&self, id: &Value, answer: Result<Value, RpcError>) -> io::Result<()> {
        match answer {
            Ok(result) => self.outbox.send(&jsonrpc::result_response(id, result)),
            Err(error) => self.outbox.send(&jsonrpc::error_response(id, &error)),
        }
    }

    fn answer(&self, method: &str, params: &Value, era: &Era) -> Result<Value, RpcError> {
        if !(params.is_null() || params.is_object()) {
            return Err(RpcError::invalid_params(
                "Invalid params: must be an object",
            ));
        }
        match (method, era) {
            ("initialize", Era::Legacy) => Ok(self.initialize(params)),
            ("ping", Era::Legacy) => Ok(json!({})),
            ("logging/setLevel", Era::Legacy) => self.set_log_level(params),
            ("server/discover", Era::Modern(_)) => Ok(json!({
                "supportedVersions": MODERN_VERSIONS,
                "capabilities": server_capabilities(),
                "serverInfo": server_info(),
                "instructions": INSTRUCTIONS,
                "ttlMs": DISCOVER_TTL_MS,
                "cacheScope": "public",
            })),
            ("tools/list", _) => self.list_tools(params, era),
            _ => Err(RpcError::method_not_found(method)),
        }
    }

    fn initialize(&self, params: &Value) -> Value {
        let requested = params.get("protocolVersion").and_then(Value::as_str);
        self.session().client_declared_roots =
            Some(params.pointer("/capabilities/roots").is_some());
        json!({
            "protocolVersion": era::negotiate_legacy(requested),
            "capabilities": server_capabilities(),
            "serverInfo": server_info(),
            "instructions": INSTRUCTIONS,
        })
    }

    fn set_log_level(&self, params: &Value) -> Result<Value, RpcError> {
        let level = params.get("level").and_then(Value::as_str);
        let Some(index) = level.and_then(|level| LOG_LEVELS.iter().position(|l| *l == level))
        else {
            return Err(RpcError::invalid_params(format!(
                "Invalid params: `level` must be one of {}",
                LOG_LEVELS.join(", ")
            )));
        };
        self.session().min_log_level = Some(index);
        Ok(json!({}))
    }

    fn list_tools(&self, params: &Value, era: &Era) -> Result<Value, RpcError> {
        let cursor = match params.get("cursor") {
            None | Some(Value::Null) => None,
            Some(Value::String(cursor)) => Some(cursor.as_str()),
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "Invalid params: `cursor` must be a string",
                ));
            }
        };
        let tools = catalog::tools(self.catalog_options());
        let page_size = usize::try_from(self.settings.page_size).unwrap_or(usize::MAX);
        let (page, next) = catalog::page(&tools, cursor, page_size)
            .map_err(|_| RpcError::invalid_params("Invalid params: invalid cursor"))?;
        let mut result = json!({"tools": page});
        if let Some(object) = result.as_object_mut() {
            if let Some(next) = next {
                object.insert("nextCursor".to_owned(), Value::String(next));
            }
            if matches!(era, Era::Modern(_)) {
                // The catalog can change at run time, so a listing is never fresh for long.
                object.insert("ttlMs".to_owned(), json!(0));
                object.insert("cacheScope".to_owned(), json!("public"));
            }
        }
        Ok(result)
    }

    fn start_call(self: &Arc<Self>, id: Value, params: Value, era: Era) -> io::Result<()> {
        let name = match params.get("name") {
            Some(Value::String(name)) => name.clone(),
            _ => {
                return self.send_answer(
                    &id,
                    Err(RpcError::invalid_params(
                        "Invalid params: `name` must be a string",
                    )),
                );
            }
        };
        let args = match params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(args)) => args.clone(),
            Some(_) => {
                return self.send_answer(
                    &id,
                    Err(RpcError::invalid_params(
                        "Invalid params: `arguments` must be an object",
                    )),
                );
            }
        };
        if !catalog::tool_names(self.catalog_options()).contains(&name) {
            return self.send_answer(
                &id,
                Err(RpcError::invalid_params(format!("Unknown tool: {name}"))),
            );
        }
        if name == "crash" {
            // Dies like a segfaulting server would: no answer, no cleanup.
            std::process::exit(3);
        }
        let call_number = self.calls_started.fetch_add(1, Ordering::SeqCst) + 1;
        let grows_catalog = self.settings.list_changed_after == Some(call_number);
        let cancelled = Arc::new(AtomicBool::new(false));
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id_key(&id), Arc::clone(&cancelled));
        let context = CallContext {
            era,
            params,
            cancelled,
        };
        let server = Arc::clone(self);
        let worker =
            thread::spawn(move || server.run_call(&id, &name, &args, &context, grows_catalog));
        let mut workers = self.workers.lock().unwrap_or_else(PoisonError::into_inner);
        workers.retain(|worker| !worker.is_finished());
        workers.push(worker);
        Ok(())
    }

    fn run_call(
        &self,
        id: &Value,
        name: &str,
        args: &Map<String, Value>,
        context: &CallContext,
        grows_catalog: bool,
    ) {
        let outcome = self.execute(name, args, context);
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id_key(id));
        // A cancelled call gets no answer, as the cancellation rules allow; a write failure means
        // the client is gone and there is nobody left to tell.
        if let Some(outcome) = outcome
            && !context.cancelled.load(Ordering::SeqCst)
        {
            let answer = match outcome {
                Outcome::Result(result) => Ok(finish_result(result, &context.era)),
                Outcome::Error(error) => Err(error),
            };
            let _ = self.send_answer(id, answer);
        }
        if grows_catalog {
            self.catalog_grown.store(true, Ordering::SeqCst);
            let _ = self.outbox.send(&jsonrpc::notification(
                "notifications/tools/list_changed",
                json!({}),
            ));
        }
    }

    /// `None` when the call was cancelled and must not be answered.
    fn execute(
        &self,
        name: &str,
        args: &Map<String, Value>,
        context: &CallContext,
    ) -> Option<Outcome> {
        match name {
            "slow_task" => self.slow_task(args, context),
            "list_roots" => self.list_roots(context),
            _ => Some(
                tools::call_plain(name, args, self.settings.large_bytes).unwrap_or_else(|| {
                    Outcome::Error(RpcError::invalid_params(format!("Unknown tool: {name}")))
                }),
            ),
        }
    }

    fn slow_task(&self, args: &Map<String, Value>, context: &CallContext) -> Option<Outcome> {
        let wait_ms = match args.get("ms") {
            None | Some(Value::Null) => self.settings.slow_ms,
            Some(ms) => match ms.as_u64() {
                Some(ms) => ms,
                None => return Some(text_result("`ms` must be a non-negative integer.", true)),
            },
        };
        let started = Instant::now();
        let deadline = started + Duration::from_millis(wait_ms);
        let mut next_report = started + PROGRESS_INTERVAL;
        loop {
            if context.cancelled.load(Ordering::SeqCst) {
                return None;
            }
            let now = Instant::now();
            let left = deadline.saturating_duration_since(now);
            if left.is_zero() {
                break;
            }
            if now >= next_report {
                let elapsed_ms =
                    u64::try_from(now.duration_since(started).as_millis()).unwrap_or(u64::MAX);
                self.report_progress(context, elapsed_ms, wait_ms, "Still working");
                next_report += PROGRESS_INTERVAL;
            }
            thread::sleep(left.min(SLEEP_SLICE));
        }
        Some(text_result(
            format!("Slow task finished after {wait_ms} ms."),
            false,
        ))
    }

    fn list_roots(&self, context: &CallContext) -> Option<Outcome> {
        self.log(
            &context.era,
            "info",
            "list_roots: asking the client for its roots",
        );
        self.progress(context, 0, "Asking the client for its roots");
        let outcome = match &context.era {
            Era::Legacy => self.ask_client_for_roots(context),
            Era::Modern(request) => {
                if !request.client_capabilities.contains_key("roots") {
                    return Some(Outcome::Error(
                        RpcError::new(
                            MISSING_CLIENT_CAPABILITY,
                            "Missing required client capability: roots",
                        )
                        .with_data(json!({"requiredCapabilities": {"roots": {}}})),
                    ));
                }
                // The modern era has no server-to-client requests: ask through an
                // input_required result, and read the answer from the client's retry.
                match context.params.pointer("/inputResponses/roots") {
                    None => Ok(json!({
                        "resultType": "input_required",
                        "inputRequests": {"roots": {"method": "roots/list", "params": {}}},
                        "requestState": ROOTS_REQUEST_STATE,
                    })),
                    Some(answer) => Ok(answer.clone()),
                }
                .map(|answer| {
                    if answer.get("resultType").is_some() {
                        Outcome::Result(answer)
                    } else {
                        describe_roots(&answer)
                    }
                })
            }
        };
        match outcome {
            Err(AskError::Cancelled) => None,
            Err(error) => Some(text_result(
                format!("Could not list the client's roots: {error}."),
                true,
            )),
            Ok(outcome) => {
                if !is_input_required(&outcome) {
                    self.progress(context, 1, "The client answered");
                }
                Some(outcome)
            }
        }
    }

    fn ask_client_for_roots(&self, context: &CallContext) -> Result<Outcome, AskError> {
        if self.session().client_declared_roots == Some(false) {
            return Ok(text_result(
                "The client did not declare the roots capability, so its roots cannot be listed.",
                true,
            ));
        }
        let timeout = Duration::from_millis(self.settings.roots_timeout_ms);
        let answer = self.client_requests.ask(
            &self.outbox,
            "roots/list",
            json!({}),
            timeout,
            &context.cancelled,
        )?;
        Ok(match answer {
            Ok(result) => describe_roots(&result),
            Err(error) => {
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("no reason given");
                text_result(format!("The client refused roots/list: {message}"), true)
            }
        })
    }

    fn progress(&self, context: &CallContext, progress: u64, message: &str) {
        self.report_progress(context, progress, 1, message);
    }

    fn report_progress(&self, context: &CallContext, progress: u64, total: u64, message: &str) {
        if let Some(token) = context.progress_token() {
            let _ = self.outbox.send(&jsonrpc::notification(
                "notifications/progress",
                json!({"progressToken": token, "progress": progress, "total": total, "message": message}),
            ));
        }
    }

    /// Legacy clients get every message at or above `logging/setLevel`; modern ones only
    /// when the request asked for a level, as 2026-07-28 requires.
    fn log(&self, era: &Era, level: &str, message: &str) {
        let threshold = match era {
            Era::Legacy => self.session().min_log_level.unwrap_or(0),
            Era::Modern(request) => {
                let requested = request.log_level.as_deref();
                match requested.and_then(|wanted| LOG_LEVELS.iter().position(|l| *l == wanted)) {
                    Some(threshold) => threshold,
                    None => return,
                }
            }
        };
        let severity = LOG_LEVELS.iter().position(|l| *l == level).unwrap_or(0);
        if severity >= threshold {
            let _ = self.outbox.send(&jsonrpc::notification(
                "notifications/message",
                json!({"level": level, "logger": SERVER_NAME, "data": message}),
            ));
        }
    }

    /// Input is over: calls waiting on the client fail now, the others get `grace` to finish.
    pub fn finish(&self, grace: Duration) {
        self.client_requests.close();
        self.wait_for_calls(grace);
    }

    fn wait_for_calls(&self, grace: Duration) {
        let deadline = Instant::now() + grace;
        loop {
            let mut workers = self.workers.lock().unwrap_or_else(PoisonError::into_inner);
            workers.retain(|worker| !worker.is_finished());
            if workers.is_empty() || Instant::now() >= deadline {
                return;
            }
            drop(workers);
            thread::sleep(SLEEP_SLICE);
        }
    }
}

fn is_input_required(outcome: &Outcome) -> bool {
    matches!(outcome, Outcome::Result(result) if result["resultType"] == "input_required")
}

fn describe_roots(answer: &Value) -> Outcome {
    let Some(roots) = answer.get("roots").and_then(Value::as_array) else {
        return text_result("The client's roots/list answer had no `roots` array.", true);
    };
    if roots.is_empty() {
        return text_result("The client shares no roots.", false);
    }
    let lines: Vec<String> = roots
        .iter()
        .map(|root| {
            let uri = root
                .get("uri")
                .and_then(Value::as_str)
                .unwrap_or("(no uri)");
            match root.get("name").and_then(Value::as_str) {
                Some(name) => format!("{uri} ({name})"),
                None => uri.to_owned(),
            }
        })
        .collect();
    text_result(
        format!(
            "The client shares {} root(s):\n{}",
            roots.len(),
            lines.join("\n")
        ),
        false,
    )
}

/// Modern results say they are complete and name the server; legacy ones stay as they were.
fn finish_result(mut result: Value, era: &Era) -> Value {
    if let (Era::Modern(_), Some(object)) = (era, result.as_object_mut()) {
        object
            .entry("resultType")
            .or_insert_with(|| Value::String("complete".to_owned()));
        let meta = object.entry("_meta").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(META_SERVER_INFO.to_owned(), server_info());
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo_server::era::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
    use crate::demo_server::jsonrpc::{
        INVALID_PARAMS, METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION,
    };
    use crate::demo_server::outbox::test_support::SharedBuffer;

    fn settings() -> DemoArgs {
        DemoArgs {
            page_size: 5,
            large_bytes: 1024,
            slow_ms: 2000,
            roots_timeout_ms: 2000,
            poisoned: false,
            crash_tool: false,
            bad_schemas: false,
            list_changed_after: None,
        }
    }

    fn server(settings: DemoArgs) -> (Arc<Server>, SharedBuffer) {
        let buffer = SharedBuffer::default();
        let server = Arc::new(Server::new(settings, Outbox::new(Box::new(buffer.clone()))));
        (server, buffer)
    }

    /// Sends one line and returns everything written once running calls are done.
    fn exchange(server: &Arc<Server>, buffer: &SharedBuffer, line: &Value) -> Vec<Value> {
        let before = buffer.lines().len();
        server.handle_line(&line.to_string()).unwrap();
        server.wait_for_calls(Duration::from_secs(5));
        buffer.lines().split_off(before)
    }

    fn modern_meta() -> Value {
        json!({META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {}})
    }

    #[test]
    fn initialize_negotiates_and_announces_capabilities() {
        let (server, buffer) = server(settings());
        let out = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}
            }}),
        );
        assert_eq!(out.len(), 1);
        let result = &out[0]["result"];
        assert_eq!(result["protocolVersion"], "2025-03-26");
        assert_eq!(
            result["capabilities"],
            json!({"tools": {"listChanged": true}, "logging": {}})
        );
        assert_eq!(result["serverInfo"]["name"], "toolwarden-demo");
        assert!(result.get("resultType").is_none());
    }

    #[test]
    fn legacy_only_and_modern_only_methods_stay_in_their_era() {
        let (server, buffer) = server(settings());
        let ping = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        );
        assert_eq!(ping[0]["result"], json!({}));
        let modern_ping = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"_meta": modern_meta()}}),
        );
        assert_eq!(modern_ping[0]["error"]["code"], METHOD_NOT_FOUND);
        let legacy_discover = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 3, "method": "server/discover"}),
        );
        assert_eq!(legacy_discover[0]["error"]["code"], METHOD_NOT_FOUND);
        let discover = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 4, "method": "server/discover", "params": {"_meta": modern_meta()}}),
        );
        let result = &discover[0]["result"];
        assert_eq!(result["resultType"], "complete");
        assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
        assert_eq!(result["_meta"][META_SERVER_INFO]["name"], "toolwarden-demo");
        assert_eq!(result["cacheScope"], "public");
    }

    #[test]
    fn modern_version_and_capability_errors_come_first() {
        let (server, buffer) = server(settings());
        let unsupported = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
                META_PROTOCOL_VERSION: "2030-01-01", META_CLIENT_CAPABILITIES: {}
            }}}),
        );
        assert_eq!(
            unsupported[0]["error"]["code"],
            UNSUPPORTED_PROTOCOL_VERSION
        );
        assert_eq!(unsupported[0]["error"]["data"]["requested"], "2030-01-01");
        let missing = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "echo", "arguments": {"text": "hi"},
                "_meta": {META_PROTOCOL_VERSION: "2026-07-28"}
            }}),
        );
        assert_eq!(missing[0]["error"]["code"], INVALID_PARAMS);
    }

    #[test]
    fn unknown_tools_and_malformed_calls_are_protocol_errors() {
        let (server, buffer) = server(settings());
        let unknown = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "crash"}}),
        );
        assert_eq!(unknown[0]["error"]["code"], INVALID_PARAMS);
        assert_eq!(unknown[0]["error"]["message"], "Unknown tool: crash");
        let bad_arguments = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": [1]}}),
        );
        assert_eq!(bad_arguments[0]["error"]["code"], INVALID_PARAMS);
        let no_name = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {}}),
        );
        assert_eq!(no_name[0]["error"]["code"], INVALID_PARAMS);
    }

    #[test]
    fn modern_tool_results_are_marked_complete() {
        let (server, buffer) = server(settings());
        let out = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {
                "name": "echo", "arguments": {"text": "hi"}, "_meta": modern_meta()
            }}),
        );
        assert_eq!(out[0]["id"], "a");
        assert_eq!(out[0]["result"]["resultType"], "complete");
        assert_eq!(out[0]["result"]["content"][0]["text"], "hi");
    }

    #[test]
    fn notifications_get_no_answer_and_bad_lines_do() {
        let (server, buffer) = server(settings());
        let none = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        assert!(none.is_empty());
        server.handle_line("{oops").unwrap();
        server.handle_line(r#"{"jsonrpc":"2.0","id":9}"#).unwrap();
        let out = buffer.lines();
        assert_eq!(out[0]["error"]["code"], PARSE_ERROR);
        assert_eq!(out[0]["id"], Value::Null);
        assert_eq!(out[1]["error"]["code"], INVALID_REQUEST);
        assert_eq!(out[1]["id"], 9);
    }

    #[test]
    fn log_level_filters_legacy_messages() {
        let (server, buffer) = server(settings());
        let bad = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "loud"}}),
        );
        assert_eq!(bad[0]["error"]["code"], INVALID_PARAMS);
        server.log(&Era::Legacy, "info", "shown");
        exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "error"}}),
        );
        let before = buffer.lines().len();
        server.log(&Era::Legacy, "info", "hidden");
        server.log(&Era::Legacy, "critical", "shown again");
        let after = buffer.lines().split_off(before);
        assert_eq!(after.len(), 1);
        assert_eq!(after[0]["params"]["data"], "shown again");
    }

    #[test]
    fn the_catalog_grows_after_the_configured_number_of_calls() {
        let (server, buffer) = server(DemoArgs {
            list_changed_after: Some(2),
            page_size: 50,
            ..settings()
        });
        let call = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "list_users"}});
        let first = exchange(&server, &buffer, &call(1));
        assert_eq!(first.len(), 1);
        let second = exchange(&server, &buffer, &call(2));
        assert_eq!(second.len(), 2);
        assert_eq!(second[1]["method"], "notifications/tools/list_changed");
        let listing = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
        );
        let names: Vec<&str> = listing[0]["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|tool| tool["name"].as_str())
            .collect();
        assert!(names.contains(&"extra_tool"));
        assert!(listing[0]["result"].get("nextCursor").is_none());
    }

    #[test]
    fn a_cancelled_slow_call_stops_without_an_answer() {
        let (server, buffer) = server(settings());
        server
            .handle_line(
                &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
                    "name": "slow_task", "arguments": {"ms": 60_000}
                }})
                .to_string(),
            )
            .unwrap();
        let started = Instant::now();
        server
            .handle_line(
                &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}})
                    .to_string(),
            )
            .unwrap();
        server.finish(Duration::from_secs(30));
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(buffer.lines().is_empty());
    }

    #[test]
    fn modern_list_roots_asks_through_input_required() {
        let (server, buffer) = server(settings());
        let meta =
            json!({META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {"roots": {}}});
        let first = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list_roots", "_meta": meta}}),
        );
        assert_eq!(first[0]["result"]["resultType"], "input_required");
        assert_eq!(
            first[0]["result"]["inputRequests"]["roots"]["method"],
            "roots/list"
        );
        let state = first[0]["result"]["requestState"].clone();
        let retry = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "list_roots", "_meta": meta, "requestState": state,
                "inputResponses": {"roots": {"roots": [{"uri": "file:///work", "name": "work"}]}}
            }}),
        );
        assert_eq!(retry[0]["result"]["resultType"], "complete");
        let text = retry[0]["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("file:///work (work)"));
        let without_roots = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_roots", "_meta": modern_meta()}}),
        );
        assert_eq!(without_roots[0]["error"]["code"], MISSING_CLIENT_CAPABILITY);
    }

    #[test]
    fn legacy_list_roots_respects_the_declared_capabilities() {
        let (server, buffer) = server(settings());
        exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}
            }}),
        );
        let out = exchange(
            &server,
            &buffer,
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_roots"}}),
        );
        let answer = out.iter().find(|message| message["id"] == 2).unwrap();
        assert_eq!(answer["result"]["isError"], true);
        assert!(!out.iter().any(|message| message["method"] == "roots/list"));
    }
}
