//! The interception pipeline: the few things the gateway changes, as named stages in the order
//! a message meets them. The session routes; the stages decide. A stage that has nothing to
//! say returns `None`, and the session then forwards the original bytes.
//!
//! - `tools/list` results: [`scan`] (descriptions and pins, per page), then [`catalog`]
//!   (compile the tool catalog once per version).
//! - `tools/call` requests: [`validate`] (answer bad calls here; the server never sees them).
//! - `tools/call` answers: [`shape`] (upstream failures into the error contract, redacted),
//!   then [`output`] (structuredContent against outputSchema), then [`limit`] (size).
//! - every failed call: [`audit`] (one structured log line, never a value).

pub mod audit;
pub mod catalog;
pub mod limit;
pub mod output;
pub mod scan;
pub mod shape;
pub mod validate;

use crate::envelope::Outcome;
use crate::identity::{ClientIdentity, Era};
use serde_json::Value;
use toolwarden_core::contract::ToolError;
use toolwarden_core::pin::Lockfile;
use toolwarden_core::policy::ErrorPolicyConfig;
use toolwarden_core::scan::ScanConfig;

/// A `tools/call` as the pipeline sees it.
#[derive(Debug, Clone)]
pub struct CallInfo {
    pub tool: String,
    pub arguments: Option<Value>,
    pub era: Era,
}

/// What to do with a `tools/call` before it reaches the server.
#[derive(Debug)]
pub enum CallVerdict {
    /// Send the original bytes.
    Forward,
    /// Send the call with these arguments instead; `meta` is added to the result's `_meta`.
    ForwardArguments { arguments: Value, meta: Value },
    /// Answer the client with this result (or JSON-RPC error); the server never sees the call.
    Answer(Reply, ToolError),
}

/// An answer the gateway writes in place of (or without) the server's.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Result(Value),
    Error {
        code: i64,
        message: String,
        data: Value,
    },
}

/// What the pipeline made of the server's answer to a call.
#[derive(Debug, Default)]
pub struct Review {
    /// The answer to send instead of the server's bytes.
    pub replacement: Option<Reply>,
    /// The failure to log, when the call failed.
    pub failure: Option<ToolError>,
}

#[derive(Debug, Clone, Default)]
pub struct PipelineConfig {
    pub errors: ErrorPolicyConfig,
    pub scan: ScanConfig,
    pub lockfile: Option<Lockfile>,
}

pub struct Pipeline {
    errors: ErrorPolicyConfig,
    scan: scan::ScanStage,
    catalog: catalog::CatalogStage,
}

impl Default for Pipeline {
    fn default() -> Self {
        Pipeline::new(PipelineConfig::default())
    }
}

impl Pipeline {
    pub fn new(config: PipelineConfig) -> Pipeline {
        Pipeline {
            errors: config.errors,
            scan: scan::ScanStage::new(config.scan, config.lockfile),
            catalog: catalog::CatalogStage::default(),
        }
    }

    /// Whether calls should wait for the tool catalog when none is known yet: only when there
    /// is something to check them against.
    pub fn needs_catalog(&self) -> bool {
        self.errors.validate_arguments || !self.errors.tools.is_empty()
    }

    pub fn install_catalog(&mut self, tools: Vec<Value>) {
        // Clients list tools again and again; an unchanged catalog is neither rescanned nor
        // recompiled.
        if self.catalog.compiled().is_some() && self.catalog.definitions() == tools.as_slice() {
            return;
        }
        self.scan.review_catalog(&tools);
        self.catalog.install(tools);
    }

    /// The tool definitions of the last complete catalog.
    pub fn catalog(&self) -> &[Value] {
        self.catalog.definitions()
    }

    /// How long a call to `tool` may wait for the server, when the policy bounds it.
    pub fn call_timeout(&self, tool: &str) -> Option<std::time::Duration> {
        self.errors
            .resolve(tool)
            .call_timeout_ms
            .map(std::time::Duration::from_millis)
    }

    /// Whether any call can time out: when none can, no deadline is ever looked for.
    pub fn has_call_timeouts(&self) -> bool {
        self.errors.call_timeout_ms.is_some()
            || self
                .errors
                .tools
                .values()
                .any(|tool| tool.call_timeout_ms.is_some())
    }

    /// Whether the catalog lists a tool of this name (names it does not list are caller input).
    pub fn knows_tool(&self, name: &str) -> bool {
        self.catalog
            .compiled()
            .is_some_and(|catalog| catalog.get(name).is_some())
    }

    pub fn check_call(&self, call: &CallInfo, client: &ClientIdentity) -> CallVerdict {
        if let Some(refusal) = self.scan.refusal(&call.tool) {
            return CallVerdict::Answer(Reply::Result(refusal.to_call_result(None)), refusal);
        }
        match self.catalog.compiled() {
            Some(catalog) => validate::check(catalog, &self.errors, call, client),
            // Without a catalog nothing can be checked; the call goes on as it came.
            None => CallVerdict::Forward,
        }
    }

    /// Looks at the server's answer to a call.
    pub fn review_outcome(&self, call: &CallInfo, outcome: Outcome<'_>) -> Review {
        let policy = self.errors.resolve(&call.tool);
        let discovery = self
            .catalog
            .compiled()
            .map(|catalog| catalog.discovery_tools())
            .unwrap_or_default();
        let tool = self
            .catalog
            .compiled()
            .and_then(|catalog| catalog.get(&call.tool));
        if tool.is_none()
            && let Some(review) =
                shape::unknown_tool(self.catalog.compiled(), &self.errors, call, outcome)
        {
            return review;
        }
        let mut review = shape::review(call, outcome, &policy, discovery);
        if review.failure.is_none()
            && policy.validate_output
            && let Some(tool) = tool
        {
            review = output::review(tool, outcome, review);
        }
        limit::apply(&mut review, outcome, policy.max_result_bytes);
        review
    }

    /// Indexes of tools to withhold from a `tools/list` page the client will see.
    pub fn on_tools_page(&mut self, tools: &[Value]) -> Vec<usize> {
        self.scan.review_page(tools)
    }
}
