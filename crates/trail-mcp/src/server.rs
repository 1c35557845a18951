//! The MCP handler: routes `tools/*`, `resources/*` and `prompts/*` to trail-query through the
//! tool, resource and prompt modules, and turns every failure into an answer the model reads
//! (`isError` for tools), never a crash or a dropped connection.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use trail_query::{Clock, Query};
use trail_render::Redactor;

use crate::freshness::{run_index, Refresher};
use crate::output::{query_error, StoreState, ToolError, ToolOutput, ToolResult};
use crate::tools::{self, Ctx};
use crate::{prompts, resources, McpConfig, ServeError};

/// What the server tells a client about itself (shown to the model by most clients).
const INSTRUCTIONS: &str = "trail indexes the session history of every coding agent on this \
machine (Claude Code, Copilot, Codex, Gemini CLI, Cursor, OpenCode). Use it to recall past work: \
search, then get_session to read a hit; file_history for why a file changed; session_diff for \
what a session changed; report for usage and standups; continue_session to carry a session into \
another agent. Secrets in the history are redacted.";

/// The server; cheap to clone (the SDK clones it per connection).
#[derive(Clone)]
pub struct TrailServer {
    shared: Arc<Shared>,
}

struct Shared {
    config: McpConfig,
    redactor: Redactor,
    tools: Vec<Tool>,
    /// The read connection, opened at the first request that finds a store.
    query: Mutex<Option<Query>>,
    refresher: Refresher,
    /// The session get_session pages through.
    session_cache: tools::CacheSlot,
}

impl TrailServer {
    pub fn new(config: McpConfig) -> Result<TrailServer, ServeError> {
        let redactor = if config.redact {
            Redactor::new(&[])?
        } else {
            Redactor::disabled()
        };
        Ok(TrailServer {
            shared: Arc::new(Shared {
                config,
                redactor,
                tools: tools::definitions(),
                query: Mutex::new(None),
                refresher: Refresher::default(),
                session_cache: Default::default(),
            }),
        })
    }
}

impl Shared {
    /// Runs `f` with the open store, after refreshing it when it is stale. A store that does
    /// not exist yet is an error that says to index (the server never creates one unasked).
    fn with_query<T>(
        &self,
        f: impl FnOnce(&Query, StoreState) -> Result<T, ToolError>,
    ) -> Result<T, ToolError> {
        let mut guard = self.query.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            *guard = Some(Query::open(&self.config.store_path).map_err(query_error)?);
        }
        let query = guard.as_ref().expect("opened above");
        let mut state = StoreState {
            last_indexed_at: query.last_indexed_at().map_err(query_error)?,
            note: None,
        };
        if let Some(after) = self.config.refresh_after {
            state.note = self.refresher.refresh(
                &self.config.store_path,
                &self.config.index,
                state.last_indexed_at.as_deref(),
                after,
                self.config.refresh_budget,
            );
            if state.note.is_some() {
                state.last_indexed_at = query.last_indexed_at().map_err(query_error)?;
            }
        }
        f(query, state)
    }

    fn call(
        &self,
        name: &str,
        args: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> ToolResult {
        if name == "index" {
            return self.index(tools::parse_args(name, args)?);
        }
        // Arguments first: a malformed call is answered without touching the store.
        let run: Box<dyn FnOnce(&Ctx<'_>) -> ToolResult> = match name {
            "search" => {
                let a = tools::parse_args(name, args)?;
                Box::new(move |cx| tools::search(cx, a))
            }
            "list_sessions" => {
                let a = tools::parse_args(name, args)?;
                Box::new(move |cx| tools::list_sessions(cx, a))
            }
            "get_session" => {
                let a = tools::parse_args(name, args)?;
                Box::new(move |cx| tools::get_session(cx, &self.session_cache, a))
            }
            "file_history" => {
                let a = tools::parse_args(name, args)?;
                Box::new(move |cx| tools::file_history(cx, a))
            }
            "session_diff" => {
                let a = tools::parse_args(name, args)?;
                Box::new(move |cx| tools::session_diff(cx, a))
            }
            "sql" => {
                let a = tools::parse_args(name, args)?;
                Box::new(move |cx| tools::sql(cx, a))
            }
            "report" => {
                let a = tools::parse_args(name, args)?;
                Box::new(move |cx| tools::report(cx, a))
            }
            "continue_session" => {
                let a = tools::parse_args(name, args)?;
                let (homes, redact) = (&self.config.continue_homes, self.config.redact);
                Box::new(move |cx| tools::continue_session(cx, homes, redact, a))
            }
            other => {
                let names: Vec<&str> = self.tools.iter().map(|t| t.name.as_ref()).collect();
                return Err(ToolError(format!(
                    "unknown tool {other:?}; the tools are: {}",
                    names.join(", ")
                )));
            }
        };
        self.with_query(|query, store| {
            let cx = Ctx {
                query,
                clock: Clock::utc_now(),
                redactor: &self.redactor,
                max_chars: self.config.max_chars,
                store,
            };
            run(&cx)
        })
    }

    /// The `index` tool: waits for a background refresh, then runs an index of its own (this
    /// one may create the store: the model was asked to index).
    fn index(&self, a: tools::IndexArgs) -> ToolResult {
        let mut options = self.config.index.clone();
        if let Some(s) = a.source.as_deref().filter(|s| !s.is_empty()) {
            options.sources = vec![trail_query::parse_source(s).map_err(query_error)?];
        }
        self.refresher.wait();
        let summary =
            run_index(&self.config.store_path, &options).map_err(|e| ToolError(e.to_string()))?;
        let mut guard = self.query.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            *guard = Some(Query::open(&self.config.store_path).map_err(query_error)?);
        }
        let query = guard.as_ref().expect("opened above");
        let state = StoreState {
            last_indexed_at: query.last_indexed_at().map_err(query_error)?,
            note: None,
        };
        let total = query.session_count().map_err(query_error)?;
        Ok(tools::index_output(&summary, total, state))
    }
}

impl ServerHandler for TrailServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
        .with_server_info(
            Implementation::new("trail", env!("CARGO_PKG_VERSION"))
                .with_title("trail: coding-agent session history"),
        )
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.shared.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let shared = Arc::clone(&self.shared);
        let name = request.name.to_string();
        tracing::debug!(tool = %name, "tool call");
        let started = std::time::Instant::now();
        let result = tokio::task::spawn_blocking(move || {
            let result = shared.call(&name, request.arguments);
            (result, shared)
        })
        .await;
        let (result, shared) = match result {
            Ok(pair) => pair,
            Err(e) => {
                // A panic in a tool is a bug; the connection survives it.
                tracing::error!("tool call failed: {e}");
                return Ok(CallToolResult::error(vec![ContentBlock::text(
                    "internal error in trail's MCP server (see its stderr)",
                )])
                .into());
            }
        };
        tracing::debug!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            "tool done"
        );
        Ok(to_result(result, &shared.redactor).into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let shared = Arc::clone(&self.shared);
        let cursor = request.and_then(|r| r.cursor);
        blocking(move || shared.with_query(|q, _| resources::list(q, cursor.as_deref()))).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let shared = Arc::clone(&self.shared);
        let uri = request.uri;
        blocking(move || {
            let redactor = &shared.redactor;
            shared
                .with_query(|q, _| resources::read(q, &uri, redactor))
                .map(Into::into)
        })
        .await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let shared = Arc::clone(&self.shared);
        blocking(move || {
            let redactor = &shared.redactor;
            shared
                .with_query(|q, _| {
                    prompts::get(q, &request.name, request.arguments.as_ref(), redactor)
                })
                .map(Into::into)
        })
        .await
    }
}

/// Runs store work on the blocking pool; its errors become `invalid params` with the reason
/// (resources and prompts have no `isError`: the protocol error carries the message).
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ErrorData> {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(ToolError(reason))) => Err(ErrorData::invalid_params(reason, None)),
        Err(e) => {
            tracing::error!("request failed: {e}");
            Err(ErrorData::internal_error(
                "internal error in trail's MCP server",
                None,
            ))
        }
    }
}

/// Turns a tool's answer into the protocol's result, redacted: secrets never leave, whatever
/// path produced the text (an error can quote a query or an id).
fn to_result(result: ToolResult, redactor: &Redactor) -> CallToolResult {
    match result {
        Ok(mut out) => {
            out.redact(redactor);
            let ToolOutput { text, structured } = out;
            let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
            r.structured_content = Some(structured);
            r
        }
        Err(ToolError(reason)) => {
            let mut out = ToolOutput {
                text: reason,
                structured: serde_json::Value::Null,
            };
            out.redact(redactor);
            CallToolResult::error(vec![ContentBlock::text(out.text)])
        }
    }
}
