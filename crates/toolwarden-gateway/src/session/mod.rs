//! The session: a synchronous state machine that turns each frame from either side into the
//! lines to send on. It owns everything the gateway remembers (who the peers are, which
//! requests wait for an answer, the tool catalog) and never does I/O itself, so it is tested
//! without processes or pipes.
//!
//! Invariant: every client request that enters gets exactly one answer, from the server, from
//! the pipeline, or from the session when the server is gone.

use crate::envelope::{self, IdKey, Invalid, Message, Outcome};
use crate::framing::Frame;
use crate::identity::{self, ClientIdentity, Era, ServerIdentity};
use crate::jsonrpc::{self, code};
use crate::pipeline::{CallInfo, CallVerdict, Pipeline, Reply, audit};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::VecDeque;
use std::time::{Duration, Instant};
use toolwarden_core::contract::{ErrorKind, Source, ToolError};

#[derive(Debug, Clone)]
pub struct SessionConfig {
    pub max_line_bytes: usize,
    /// How long calls wait for a catalog the gateway fetches itself before going on unchecked.
    pub catalog_fetch_timeout: Duration,
    /// A bound on pages of a catalog fetch, against a server whose cursors never end.
    pub max_catalog_pages: usize,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            max_line_bytes: 16 * 1024 * 1024,
            catalog_fetch_timeout: Duration::from_secs(10),
            max_catalog_pages: 100,
        }
    }
}

/// Lines to write, each without its newline.
#[derive(Default, Debug)]
pub struct Outbox {
    pub to_server: Vec<Vec<u8>>,
    pub to_client: Vec<Vec<u8>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MethodKind {
    Initialize,
    ToolsList { first_page: bool },
    ToolsCall,
    Other,
}

struct ClientRequest {
    method: MethodKind,
    /// The id as the client wrote it, when the gateway had to renumber the request.
    original_id: Option<Box<RawValue>>,
    era: Era,
    batch: Option<u64>,
    started: Instant,
    call: Option<CallInfo>,
    /// Added to the `_meta` of the call's result (e.g. which arguments were stripped).
    result_meta: Option<Value>,
    /// When the gateway stops waiting for the server's answer.
    deadline: Option<Instant>,
}

enum Pending {
    Client(Box<ClientRequest>),
    /// The gateway's own `tools/list`; `abandoned` once calls stopped waiting for it.
    CatalogPage {
        abandoned: bool,
    },
    /// A call answered with a timeout: a late answer from the server is dropped.
    TimedOut,
}

struct Batch {
    outstanding: usize,
    sealed: bool,
    responses: Vec<Vec<u8>>,
}

struct HeldCall {
    line: Vec<u8>,
    batch: Option<u64>,
    /// The request's id, so that a duplicate is refused while the call is held.
    key: IdKey,
}

#[derive(Default)]
struct CatalogState {
    known: bool,
    stale: bool,
    /// Tools gathered from the pages of a listing in progress (the client's or our own).
    gathering: Option<Vec<Value>>,
    fetch: Option<CatalogFetch>,
    /// Set when our own fetch failed: calls then go on unchecked until a catalog arrives.
    unavailable: bool,
    version: u64,
}

struct CatalogFetch {
    deadline: Instant,
    pages: usize,
    meta: Option<Value>,
}

pub struct Session {
    config: SessionConfig,
    pub client: ClientIdentity,
    pub server: ServerIdentity,
    // FxHash: ids are chosen by the peers, but a collision costs a little time, never
    // correctness, and SipHash showed in profiles of the hot path.
    pending: FxHashMap<IdKey, Pending>,
    batches: FxHashMap<u64, Batch>,
    next_batch: u64,
    next_own_id: u64,
    held: VecDeque<HeldCall>,
    catalog: CatalogState,
    pipeline: Pipeline,
}

#[derive(Deserialize)]
struct CallParams {
    name: Option<Value>,
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct ToolsPage {
    #[serde(default)]
    tools: Vec<Value>,
    #[serde(rename = "nextCursor")]
    next_cursor: Option<String>,
}

#[derive(Deserialize)]
struct CancelParams {
    #[serde(rename = "requestId")]
    request_id: Option<Box<RawValue>>,
}

#[derive(Deserialize)]
struct CursorParams {
    cursor: Option<Value>,
}

impl Session {
    pub fn new(config: SessionConfig, pipeline: Pipeline) -> Session {
        Session {
            config,
            client: ClientIdentity::default(),
            server: ServerIdentity::default(),
            pending: FxHashMap::default(),
            batches: FxHashMap::default(),
            next_batch: 0,
            next_own_id: 0,
            held: VecDeque::new(),
            catalog: CatalogState::default(),
            pipeline,
        }
    }

    /// The tool definitions of the last complete catalog.
    pub fn catalog(&self) -> &[Value] {
        self.pipeline.catalog()
    }

    pub fn catalog_version(&self) -> u64 {
        self.catalog.version
    }

    /// Client requests still waiting for an answer.
    pub fn waiting(&self) -> usize {
        self.pending
            .values()
            .filter(|pending| matches!(pending, Pending::Client(_)))
            .count()
            + self.held.len()
    }

    /// True while calls wait for the catalog before they can be sent upstream.
    pub fn holds_calls(&self) -> bool {
        !self.held.is_empty()
    }

    /// When `on_deadline` should next be called.
    pub fn next_deadline(&self) -> Option<Instant> {
        let fetch = self.catalog.fetch.as_ref().map(|fetch| fetch.deadline);
        if !self.pipeline.has_call_timeouts() {
            return fetch;
        }
        let calls = self.pending.values().filter_map(|pending| match pending {
            Pending::Client(request) => request.deadline,
            _ => None,
        });
        fetch.into_iter().chain(calls).min()
    }

    // ----- client -> server -----

    pub fn on_client_frame(&mut self, frame: Frame, out: &mut Outbox) {
        match frame {
            Frame::TooLong { length, head } => {
                let message = format!(
                    "toolwarden: the message is {length} bytes, over the limit of {} bytes",
                    self.config.max_line_bytes
                );
                match envelope::salvage_id(&head) {
                    Some(id) => out.to_client.push(jsonrpc::error_line(
                        &id,
                        code::INVALID_REQUEST,
                        &message,
                        None,
                    )),
                    None => tracing::warn!(
                        bytes = length,
                        "refused an over-long line from the client that carries no id"
                    ),
                }
            }
            Frame::Line(line) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    return;
                }
                if envelope::is_batch(&line) {
                    self.on_client_batch(&line, out);
                } else {
                    self.on_client_message(line, None, out);
                }
            }
        }
    }

    fn on_client_batch(&mut self, line: &[u8], out: &mut Outbox) {
        let elements = match envelope::split_batch(line) {
            Ok(elements) if !elements.is_empty() => elements,
            Ok(_) => {
                tracing::warn!("ignored an empty JSON-RPC batch from the client");
                return;
            }
            Err(invalid) => {
                self.answer_invalid(&invalid, None, out);
                return;
            }
        };
        let batch_id = self.next_batch;
        self.next_batch += 1;
        self.batches.insert(
            batch_id,
            Batch {
                outstanding: 0,
                sealed: false,
                responses: Vec::new(),
            },
        );
        for element in elements {
            self.on_client_message(element.get().as_bytes().to_vec(), Some(batch_id), out);
        }
        if let Some(batch) = self.batches.get_mut(&batch_id) {
            batch.sealed = true;
        }
        self.flush_batch(batch_id, out);
    }

    fn on_client_message(&mut self, line: Vec<u8>, batch: Option<u64>, out: &mut Outbox) {
        let message = match envelope::parse(&line) {
            Ok(message) => message,
            Err(invalid) => {
                self.answer_invalid(&invalid, batch, out);
                return;
            }
        };
        match message {
            Message::Request { id, method, params } => {
                let key = IdKey::from_raw(id);
                if matches!(self.pending.get(&key), Some(Pending::Client(_)))
                    || self.held.iter().any(|held| held.key == key)
                {
                    let id = id.get().to_owned();
                    self.reply(
                        batch,
                        jsonrpc::error_line(
                            &id,
                            code::INVALID_REQUEST,
                            "toolwarden: a request with this id is still waiting for its answer",
                            None,
                        ),
                        out,
                    );
                    return;
                }
                let era = self.client.learn_from_request_meta(params);
                let kind = match method.as_ref() {
                    "initialize" => {
                        self.client.learn_from_initialize(params);
                        MethodKind::Initialize
                    }
                    "tools/list" => MethodKind::ToolsList {
                        first_page: !has_cursor(params),
                    },
                    "tools/call" => MethodKind::ToolsCall,
                    _ => MethodKind::Other,
                };
                let id_raw: Box<RawValue> = id.to_owned();
                let call = if kind == MethodKind::ToolsCall {
                    match parse_call(params, era) {
                        Ok(call) => Some(call),
                        Err(reason) => {
                            self.reply(
                                batch,
                                jsonrpc::error_line(
                                    id_raw.get(),
                                    code::INVALID_PARAMS,
                                    reason,
                                    None,
                                ),
                                out,
                            );
                            return;
                        }
                    }
                } else {
                    None
                };
                drop(method);
                if kind == MethodKind::ToolsCall && self.must_wait_for_catalog() {
                    self.start_catalog_fetch(params, out);
                    if let Some(state) = batch.and_then(|batch| self.batches.get_mut(&batch)) {
                        state.outstanding += 1;
                    }
                    self.held.push_back(HeldCall { line, batch, key });
                    return;
                }
                self.forward_request(line, id_raw, key, kind, era, batch, call, out);
            }
            Message::Notification { method, params } => {
                if method == "notifications/cancelled" {
                    self.forget_cancelled(params, out);
                }
                out.to_server.push(line);
            }
            // The client answering a request of the server's (sampling, roots, elicitation).
            Message::Response { .. } => out.to_server.push(line),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn forward_request(
        &mut self,
        line: Vec<u8>,
        id: Box<RawValue>,
        key: IdKey,
        method: MethodKind,
        era: Era,
        batch: Option<u64>,
        call: Option<CallInfo>,
        out: &mut Outbox,
    ) {
        let mut line = line;
        let mut result_meta = None;
        if let Some(call) = &call {
            match self.pipeline.check_call(call, &self.client) {
                CallVerdict::Forward => {}
                CallVerdict::ForwardArguments { arguments, meta } => {
                    match with_arguments(&line, arguments) {
                        Some(rewritten) => line = rewritten,
                        None => {
                            tracing::error!("could not rewrite a call's arguments; sent as it came")
                        }
                    }
                    result_meta = Some(meta);
                }
                CallVerdict::Answer(reply, failure) => {
                    audit::failed_call(&failure, self.client.name.as_deref(), Duration::ZERO);
                    let line = reply_line(id.get(), reply, era);
                    self.reply(batch, line, out);
                    return;
                }
            }
        }
        // Our own requests use ids of their own; a client id that happens to equal one of
        // them is renumbered on the way up and restored on the way down.
        let (key, original_id) = if self.pending.contains_key(&key) {
            let fresh = self.fresh_own_id();
            match with_id(&line, &fresh) {
                Some(rewritten) => {
                    line = rewritten;
                    (own_key(&fresh), Some(id))
                }
                None => (key, None),
            }
        } else {
            (key, None)
        };
        if let Some(batch) = batch.and_then(|batch| self.batches.get_mut(&batch)) {
            batch.outstanding += 1;
        }
        let deadline = call
            .as_ref()
            .and_then(|call| self.pipeline.call_timeout(&call.tool))
            .map(|timeout| Instant::now() + timeout);
        self.pending.insert(
            key,
            Pending::Client(Box::new(ClientRequest {
                method,
                original_id,
                era,
                batch,
                started: Instant::now(),
                call,
                result_meta,
                deadline,
            })),
        );
        if let MethodKind::ToolsList { first_page: true } = method {
            self.catalog.gathering = Some(Vec::new());
        }
        out.to_server.push(line);
    }

    fn forget_cancelled(&mut self, params: Option<&RawValue>, out: &mut Outbox) {
        let Some(params) = params else { return };
        let Ok(CancelParams {
            request_id: Some(id),
        }) = serde_json::from_str(params.get())
        else {
            return;
        };
        let key = IdKey::from_raw(&id);
        // The server need not answer a cancelled request; stop waiting so that its end does
        // not produce an answer the client no longer expects.
        if let Some(Pending::Client(request)) = self.pending.get(&key) {
            let batch = request.batch;
            self.pending.remove(&key);
            self.settle(batch);
            if let Some(batch) = batch {
                self.flush_batch(batch, out);
            }
        }
    }

    fn answer_invalid(&mut self, invalid: &Invalid, batch: Option<u64>, out: &mut Outbox) {
        let (code, text) = match invalid {
            Invalid::Parse { reason, .. } => (
                code::PARSE_ERROR,
                format!("toolwarden: parse error: {reason}"),
            ),
            Invalid::Shape { reason, .. } => (
                code::INVALID_REQUEST,
                format!("toolwarden: invalid request: {reason}"),
            ),
        };
        match invalid.id() {
            Some(id) => {
                let line = jsonrpc::error_line(id, code, &text, None);
                self.reply(batch, line, out);
            }
            None => {
                tracing::warn!(code, problem = %text, "a line from the client could not be answered: it carries no usable id")
            }
        }
    }

    // ----- server -> client -----

    pub fn on_server_frame(&mut self, frame: Frame, out: &mut Outbox) {
        match frame {
            Frame::TooLong { length, head } => {
                let id = envelope::salvage_id(&head);
                let waiting = id.as_deref().and_then(|id| {
                    let raw: Box<RawValue> = serde_json::from_str(id).ok()?;
                    let key = IdKey::from_raw(&raw);
                    match self.pending.remove(&key)? {
                        Pending::Client(request) => {
                            let reply_id = request.original_id.as_deref().map_or_else(
                                || id.to_owned(),
                                |original| original.get().to_owned(),
                            );
                            Some((reply_id, request))
                        }
                        Pending::CatalogPage { .. } => {
                            self.catalog_fetch_failed(out);
                            None
                        }
                        Pending::TimedOut => None,
                    }
                });
                tracing::error!(
                    bytes = length,
                    limit = self.config.max_line_bytes,
                    "the server sent a message over the size limit; it was dropped"
                );
                if let Some((id, request)) = waiting {
                    let text = format!(
                        "The server's answer was {length} bytes, over toolwarden's limit of {} bytes.",
                        self.config.max_line_bytes
                    );
                    self.answer_failed_with_id(&id, *request, ErrorKind::UpstreamError, &text, out);
                }
            }
            Frame::Line(line) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    return;
                }
                if envelope::is_batch(&line) {
                    match envelope::split_batch(&line) {
                        Ok(elements) => {
                            for element in elements {
                                self.on_server_message(element.get().as_bytes().to_vec(), out);
                            }
                        }
                        Err(_) => {
                            tracing::warn!("the server sent a line that is not JSON; dropped")
                        }
                    }
                } else {
                    self.on_server_message(line, out);
                }
            }
        }
    }

    fn on_server_message(&mut self, line: Vec<u8>, out: &mut Outbox) {
        let message = match envelope::parse(&line) {
            Ok(message) => message,
            Err(invalid) => {
                tracing::warn!(problem = ?invalid, "the server sent a line that is not a JSON-RPC message; dropped");
                return;
            }
        };
        match message {
            Message::Response { id, outcome } => {
                let key = IdKey::from_raw(id);
                match self.pending.remove(&key) {
                    Some(Pending::Client(request)) => {
                        let replacement = self.inspect_response(&request, outcome);
                        self.answer_client(line, &key, *request, replacement, out);
                    }
                    Some(Pending::CatalogPage { abandoned }) => {
                        self.on_catalog_page(outcome, abandoned, out);
                    }
                    Some(Pending::TimedOut) => {
                        tracing::debug!("dropped the late answer to a call that timed out");
                    }
                    // A late answer to a cancelled request, or one the client made up: the
                    // client decides what it means.
                    None => out.to_client.push(line),
                }
            }
            Message::Notification { method, .. } => {
                if method == "notifications/tools/list_changed" {
                    self.catalog.stale = true;
                    self.catalog.unavailable = false;
                }
                out.to_client.push(line);
            }
            Message::Request { .. } => out.to_client.push(line),
        }
    }

    /// Learns from a server's answer and lets the pipeline replace it.
    fn inspect_response(&mut self, request: &ClientRequest, outcome: Outcome<'_>) -> Option<Reply> {
        match (request.method, outcome) {
            (MethodKind::Initialize, Outcome::Result(result)) => {
                self.server.learn_from_initialize(result);
                None
            }
            (MethodKind::ToolsList { .. }, Outcome::Result(result)) => {
                self.on_client_tools_page(result).map(Reply::Result)
            }
            (MethodKind::ToolsCall, outcome) => {
                let call = request.call.as_ref()?;
                let review = self.pipeline.review_outcome(call, outcome);
                let latency = request.started.elapsed();
                match &review.failure {
                    Some(failure) => {
                        audit::failed_call(failure, self.client.name.as_deref(), latency)
                    }
                    None => audit::succeeded_call(&call.tool, latency),
                }
                let mut replacement = review.replacement;
                if let Some(meta) = &request.result_meta {
                    let base = match (replacement.take(), outcome) {
                        (Some(Reply::Result(result)), _) => Some(result),
                        (Some(error @ Reply::Error { .. }), _) => return Some(error),
                        (None, Outcome::Result(result)) => serde_json::from_str(result.get()).ok(),
                        (None, Outcome::Error(_)) => None,
                    };
                    replacement = base.map(|result| Reply::Result(merge_meta(result, meta)));
                }
                replacement
            }
            _ => None,
        }
    }

    /// Sends the server's answer on: its original bytes, unless replaced or renumbered.
    fn answer_client(
        &mut self,
        line: Vec<u8>,
        key: &IdKey,
        request: ClientRequest,
        replacement: Option<Reply>,
        out: &mut Outbox,
    ) {
        let id_text = request
            .original_id
            .as_deref()
            .map(RawValue::get)
            .map(str::to_owned);
        let line = match (replacement, id_text) {
            (Some(reply), id) => {
                // The key is the id's exact JSON text: no need to parse the answer again.
                let id = id.unwrap_or_else(|| key.to_json().into_owned());
                reply_line(&id, reply, request.era)
            }
            (None, Some(id)) => with_id_raw(&line, &id).unwrap_or(line),
            (None, None) => line,
        };
        self.settle(request.batch);
        self.reply(request.batch, line, out);
    }

    /// Gathers the pages of a `tools/list` the client is making; the pipeline may drop tools.
    fn on_client_tools_page(&mut self, result: &RawValue) -> Option<Value> {
        let page: ToolsPage = serde_json::from_str(result.get()).ok()?;
        let removed = self.pipeline.on_tools_page(&page.tools);
        if let Some(gathering) = self.catalog.gathering.as_mut() {
            gathering.extend(page.tools);
            if page.next_cursor.is_none() {
                let tools = self.catalog.gathering.take().unwrap_or_default();
                self.install_catalog(tools);
            }
        }
        if removed.is_empty() {
            return None;
        }
        let mut full: Value = serde_json::from_str(result.get()).ok()?;
        if let Some(tools) = full.get_mut("tools").and_then(Value::as_array_mut) {
            let mut index = 0;
            tools.retain(|_| {
                let keep = !removed.contains(&index);
                index += 1;
                keep
            });
        }
        Some(full)
    }

    fn install_catalog(&mut self, tools: Vec<Value>) {
        self.catalog.known = true;
        self.catalog.stale = false;
        self.catalog.unavailable = false;
        self.catalog.version += 1;
        tracing::debug!(
            tools = tools.len(),
            version = self.catalog.version,
            "tool catalog updated"
        );
        self.pipeline.install_catalog(tools);
    }

    // ----- the gateway's own catalog fetch -----

    fn must_wait_for_catalog(&self) -> bool {
        self.pipeline.needs_catalog()
            && (!self.catalog.known || self.catalog.stale)
            && !self.catalog.unavailable
    }

    fn start_catalog_fetch(&mut self, call_params: Option<&RawValue>, out: &mut Outbox) {
        if self.catalog.fetch.is_some() {
            return;
        }
        let params: Option<Value> =
            call_params.and_then(|params| serde_json::from_str(params.get()).ok());
        let meta = identity::protocol_meta(params.as_ref());
        self.catalog.fetch = Some(CatalogFetch {
            deadline: Instant::now() + self.config.catalog_fetch_timeout,
            pages: 0,
            meta,
        });
        self.catalog.gathering = Some(Vec::new());
        self.request_catalog_page(None, out);
    }

    fn request_catalog_page(&mut self, cursor: Option<String>, out: &mut Outbox) {
        let Some(fetch) = self.catalog.fetch.as_mut() else {
            return;
        };
        fetch.pages += 1;
        let mut params = serde_json::Map::new();
        if let Some(cursor) = cursor {
            params.insert("cursor".into(), Value::String(cursor));
        }
        if let Some(meta) = &fetch.meta {
            params.insert("_meta".into(), meta.clone());
        }
        let id = self.fresh_own_id();
        out.to_server.push(jsonrpc::request_line(
            &id,
            "tools/list",
            &Value::Object(params),
        ));
        self.pending
            .insert(own_key(&id), Pending::CatalogPage { abandoned: false });
    }

    fn on_catalog_page(&mut self, outcome: Outcome<'_>, abandoned: bool, out: &mut Outbox) {
        if abandoned {
            return;
        }
        let page = match outcome {
            Outcome::Result(result) => serde_json::from_str::<ToolsPage>(result.get()).ok(),
            Outcome::Error(_) => None,
        };
        let Some(page) = page else {
            tracing::warn!("the server refused toolwarden's own tools/list; calls go on unchecked");
            self.catalog_fetch_failed(out);
            return;
        };
        self.catalog
            .gathering
            .get_or_insert_with(Vec::new)
            .extend(page.tools);
        let pages = self.catalog.fetch.as_ref().map_or(0, |fetch| fetch.pages);
        match page.next_cursor {
            Some(cursor) if pages < self.config.max_catalog_pages => {
                self.request_catalog_page(Some(cursor), out);
            }
            _ => {
                self.catalog.fetch = None;
                let tools = self.catalog.gathering.take().unwrap_or_default();
                self.install_catalog(tools);
                self.release_held(out);
            }
        }
    }

    fn catalog_fetch_failed(&mut self, out: &mut Outbox) {
        self.catalog.fetch = None;
        self.catalog.gathering = None;
        self.catalog.unavailable = true;
        for pending in self.pending.values_mut() {
            if let Pending::CatalogPage { abandoned } = pending {
                *abandoned = true;
            }
        }
        self.release_held(out);
    }

    fn release_held(&mut self, out: &mut Outbox) {
        let held: Vec<HeldCall> = self.held.drain(..).collect();
        for call in held {
            self.settle(call.batch);
            self.on_client_message(call.line, call.batch, out);
            if let Some(batch) = call.batch {
                self.flush_batch(batch, out);
            }
        }
    }

    /// Gives up on a catalog fetch, and on calls, past their deadlines.
    pub fn on_deadline(&mut self, now: Instant, out: &mut Outbox) {
        if self
            .catalog
            .fetch
            .as_ref()
            .is_some_and(|fetch| fetch.deadline <= now)
        {
            tracing::warn!(
                "the server did not answer toolwarden's own tools/list in time; calls go on unchecked"
            );
            self.catalog_fetch_failed(out);
        }
        if self.pipeline.has_call_timeouts() {
            self.expire_calls(now, out);
        }
    }

    /// Answers calls the server took too long with: a `timeout` error result for the client,
    /// `notifications/cancelled` for the server, and a tombstone that drops its late answer.
    fn expire_calls(&mut self, now: Instant, out: &mut Outbox) {
        let expired: Vec<IdKey> = self
            .pending
            .iter()
            .filter_map(|(key, pending)| match pending {
                Pending::Client(request) if request.deadline.is_some_and(|at| at <= now) => {
                    Some(key.clone())
                }
                _ => None,
            })
            .collect();
        for key in expired {
            let Some(Pending::Client(request)) =
                self.pending.insert(key.clone(), Pending::TimedOut)
            else {
                continue;
            };
            let upstream_id = key.to_json().into_owned();
            let cancel = serde_json::json!({
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {
                    "requestId": serde_json::from_str::<Value>(&upstream_id).unwrap_or(Value::Null),
                    "reason": "toolwarden: the call timed out",
                },
            });
            out.to_server
                .push(serde_json::to_vec(&cancel).unwrap_or_default());
            let text = format!(
                "The server did not answer within {} ms; toolwarden cancelled the call.",
                request.started.elapsed().as_millis()
            );
            let id = request
                .original_id
                .as_deref()
                .map_or(upstream_id, |id| id.get().to_owned());
            self.answer_failed_with_id(&id, *request, ErrorKind::Timeout, &text, out);
        }
    }

    fn fresh_own_id(&mut self) -> String {
        loop {
            self.next_own_id += 1;
            let id = format!("toolwarden-{}", self.next_own_id);
            if !self.pending.contains_key(&own_key(&id)) {
                return id;
            }
        }
    }

    // ----- endings -----

    /// The server is gone: every request still waiting gets its one answer now.
    pub fn on_server_gone(&mut self, why: &str, out: &mut Outbox) {
        let held: Vec<HeldCall> = self.held.drain(..).collect();
        let pending: Vec<(IdKey, Pending)> = self.pending.drain().collect();
        let mut requests: Vec<(String, ClientRequest)> = Vec::new();
        for (key, pending) in pending {
            if let Pending::Client(request) = pending {
                let id = request
                    .original_id
                    .as_deref()
                    .map(|id| id.get().to_owned())
                    .unwrap_or_else(|| key.to_json().into_owned());
                requests.push((id, *request));
            }
        }
        requests.sort_by_key(|(_, request)| request.started);
        let text = format!("The MCP server {why} before answering.");
        for (id, request) in requests {
            self.answer_failed_with_id(&id, request, ErrorKind::UpstreamUnavailable, &text, out);
        }
        for call in held {
            if let Ok(Message::Request { id, params, .. }) = envelope::parse(&call.line) {
                let era = ClientIdentity::default().learn_from_request_meta(params);
                let request = ClientRequest {
                    method: MethodKind::ToolsCall,
                    original_id: None,
                    era,
                    batch: call.batch,
                    started: Instant::now(),
                    call: parse_call(params, era).ok(),
                    result_meta: None,
                    deadline: None,
                };
                let id = id.get().to_owned();
                self.answer_failed_with_id(
                    &id,
                    request,
                    ErrorKind::UpstreamUnavailable,
                    &text,
                    out,
                );
            }
        }
        let batches: Vec<u64> = self.batches.keys().copied().collect();
        for batch in batches {
            if let Some(state) = self.batches.get_mut(&batch) {
                state.outstanding = 0;
            }
            self.flush_batch(batch, out);
        }
    }

    /// Answers a request the server will not answer: a `tools/call` gets an error result the
    /// model can read; anything else a JSON-RPC error.
    fn answer_failed_with_id(
        &mut self,
        id: &str,
        request: ClientRequest,
        kind: ErrorKind,
        text: &str,
        out: &mut Outbox,
    ) {
        let line = match (&request.method, &request.call) {
            (MethodKind::ToolsCall, Some(call)) => {
                let mut error = ToolError::new(kind, Source::Warden, text);
                // A name the catalog does not know is caller input, never repeated.
                error.tool = self
                    .pipeline
                    .knows_tool(&call.tool)
                    .then(|| call.tool.clone());
                error.hint = Some(
                    match kind {
                        ErrorKind::Timeout => {
                            "Try again later or ask for less; tell the user if it keeps timing out."
                        }
                        ErrorKind::UpstreamError => {
                            "The answer was too large to pass on: ask for less, or tell the user."
                        }
                        _ => {
                            "This is not something the arguments can fix; tell the user the tool's server stopped."
                        }
                    }
                    .to_owned(),
                );
                audit::failed_call(
                    &error,
                    self.client.name.as_deref(),
                    request.started.elapsed(),
                );
                let result = shape_for_era(error.to_call_result(None), request.era);
                jsonrpc::result_line(id, &result)
            }
            _ => jsonrpc::error_line(
                id,
                code::INTERNAL_ERROR,
                &format!("toolwarden: {text}"),
                None,
            ),
        };
        self.settle(request.batch);
        self.reply(request.batch, line, out);
    }

    // ----- batches -----

    /// Sends an answer to the client, or keeps it for its batch.
    fn reply(&mut self, batch: Option<u64>, line: Vec<u8>, out: &mut Outbox) {
        match batch.and_then(|batch| self.batches.get_mut(&batch)) {
            Some(state) => state.responses.push(line),
            None => out.to_client.push(line),
        }
        if let Some(batch) = batch {
            self.flush_batch(batch, out);
        }
    }

    /// A request of a batch that was waiting (sent upstream or held) has stopped waiting.
    fn settle(&mut self, batch: Option<u64>) {
        if let Some(state) = batch.and_then(|batch| self.batches.get_mut(&batch)) {
            state.outstanding = state.outstanding.saturating_sub(1);
        }
    }

    fn flush_batch(&mut self, batch: u64, out: &mut Outbox) {
        let ready = self
            .batches
            .get(&batch)
            .is_some_and(|state| state.sealed && state.outstanding == 0);
        if !ready {
            return;
        }
        let Some(state) = self.batches.remove(&batch) else {
            return;
        };
        if state.responses.is_empty() {
            return;
        }
        let mut line = Vec::with_capacity(
            state.responses.iter().map(Vec::len).sum::<usize>() + state.responses.len() + 1,
        );
        line.push(b'[');
        for (index, response) in state.responses.iter().enumerate() {
            if index > 0 {
                line.push(b',');
            }
            line.extend_from_slice(response);
        }
        line.push(b']');
        out.to_client.push(line);
    }
}

/// The key of an id the gateway made (a plain string, so its JSON text is just quoted).
fn own_key(id: &str) -> IdKey {
    IdKey::Text(format!("\"{id}\"").into())
}

fn has_cursor(params: Option<&RawValue>) -> bool {
    params
        .and_then(|params| serde_json::from_str::<CursorParams>(params.get()).ok())
        .is_some_and(|params| params.cursor.is_some_and(|cursor| !cursor.is_null()))
}

fn parse_call(params: Option<&RawValue>, era: Era) -> Result<CallInfo, &'static str> {
    let params = params.ok_or("toolwarden: tools/call needs params with the tool's name")?;
    let parsed: CallParams = serde_json::from_str(params.get())
        .map_err(|_| "toolwarden: tools/call params must be an object")?;
    let Some(Value::String(tool)) = parsed.name else {
        return Err("toolwarden: tools/call params need a string \"name\"");
    };
    Ok(CallInfo {
        tool,
        arguments: parsed.arguments,
        era,
    })
}

/// The response line for an answer the gateway makes.
fn reply_line(id: &str, reply: Reply, era: Era) -> Vec<u8> {
    match reply {
        Reply::Result(result) => jsonrpc::result_line(id, &shape_for_era(result, era)),
        Reply::Error {
            code,
            message,
            data,
        } => jsonrpc::error_line(id, code, &message, Some(data)),
    }
}

/// Results the gateway makes for a modern-era request carry `resultType`, as the server's would.
fn shape_for_era(mut result: Value, era: Era) -> Value {
    if era == Era::Modern
        && let Some(object) = result.as_object_mut()
    {
        object
            .entry("resultType")
            .or_insert_with(|| Value::String("complete".into()));
    }
    result
}

fn merge_meta(mut result: Value, meta: &Value) -> Value {
    if let (Some(object), Some(extra)) = (result.as_object_mut(), meta.as_object()) {
        let target = object
            .entry("_meta")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Some(target) = target.as_object_mut() {
            for (key, value) in extra {
                target.insert(key.clone(), value.clone());
            }
        }
    }
    result
}

/// The line with its `id` replaced (the slow path taken only on id collisions).
fn with_id(line: &[u8], id: &str) -> Option<Vec<u8>> {
    let mut message: serde_json::Map<String, Value> = serde_json::from_slice(line).ok()?;
    message.insert("id".into(), Value::String(id.to_owned()));
    serde_json::to_vec(&message).ok()
}

fn with_id_raw(line: &[u8], raw_id: &str) -> Option<Vec<u8>> {
    let mut message: serde_json::Map<String, Value> = serde_json::from_slice(line).ok()?;
    message.insert("id".into(), serde_json::from_str(raw_id).ok()?);
    serde_json::to_vec(&message).ok()
}

fn with_arguments(line: &[u8], arguments: Value) -> Option<Vec<u8>> {
    let mut message: Value = serde_json::from_slice(line).ok()?;
    let params = message.get_mut("params")?.as_object_mut()?;
    params.insert("arguments".into(), arguments);
    serde_json::to_vec(&message).ok()
}

#[cfg(test)]
mod tests;
