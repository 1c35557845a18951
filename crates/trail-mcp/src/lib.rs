//! `trail mcp`: an MCP server over stdio, so that any agent that speaks the Model Context
//! Protocol can search and read the session history trail indexed, its own included.
//!
//! Tools: `search`, `list_sessions`, `get_session`, `file_history`, `sql`, `report`, `index`,
//! `continue_session` (writes the session as a new one in another agent through
//! trail-continue, the code `trail resume --in` and the TUI's continue key use).
//! Resources: the store's schema and each session as Markdown. Prompts: `standup`, `tips`,
//! `improve`. Every answer is computed by trail-query (never a query of our own), redacted by
//! trail-render's redactor unless the user opted out, and capped in size.
//!
//! stdout is the protocol channel: nothing else is ever written there. Logs go to stderr
//! through `tracing` and never carry message content. The CLI reads the environment and the
//! home folder and hands everything in through [`McpConfig`].

mod agents;
mod freshness;
mod output;
mod prompts;
mod resources;
mod server;
mod tools;

use std::path::PathBuf;
use std::time::Duration;

pub use agents::{snippet, Agent, Snippet, SERVER_NAME};
use trail_ingest::IndexOptions;

/// The default cap on one response's characters (text and structured content together).
pub const DEFAULT_MAX_CHARS: usize = 20_000;

/// Everything the server needs, resolved by the caller.
#[derive(Debug, Clone)]
pub struct McpConfig {
    /// The store to read (and to refresh, and that the `index` tool writes).
    pub store_path: PathBuf,
    /// Where the incremental index looks (the CLI's discovery roots).
    pub index: IndexOptions,
    /// Replace secrets in everything sent with `[REDACTED:kind]` (on unless `--no-redact`).
    pub redact: bool,
    /// At most this many characters in one response.
    pub max_chars: usize,
    /// Before answering, index what changed when the last index is older than this; `None`
    /// never refreshes (benchmarks, and a store someone else keeps fresh).
    pub refresh_after: Option<Duration>,
    /// How long an answer waits for that refresh before it answers with what is stored.
    pub refresh_budget: Duration,
    /// Where each agent `continue_session` can write into keeps its sessions (resolved by
    /// the CLI as for `trail resume --in`); a target left `None` cannot be written.
    pub continue_homes: trail_continue::TargetHomes,
}

impl McpConfig {
    /// Returns the defaults for a store and discovery roots: redaction on, 20,000 characters,
    /// refresh when the last index is over a minute old, wait at most 2 s for it.
    pub fn new(store_path: PathBuf, index: IndexOptions) -> McpConfig {
        McpConfig {
            store_path,
            index,
            redact: true,
            max_chars: DEFAULT_MAX_CHARS,
            refresh_after: Some(Duration::from_secs(60)),
            refresh_budget: Duration::from_secs(2),
            continue_homes: trail_continue::TargetHomes::default(),
        }
    }
}

/// Why the server stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The async runtime could not start.
    #[error("cannot start the server's runtime: {0}")]
    Runtime(#[from] std::io::Error),
    /// The redactor could not be built.
    #[error(transparent)]
    Redact(#[from] trail_render::RedactError),
    /// The MCP session could not be established or broke.
    #[error("MCP session failed: {0}")]
    Protocol(String),
}

/// Serves MCP on stdin/stdout until the client disconnects.
pub fn serve_stdio(config: McpConfig) -> Result<(), ServeError> {
    use rmcp::ServiceExt;

    let server = server::TrailServer::new(config)?;
    // One client per process: a single-threaded runtime is enough; tool calls run on the
    // blocking pool so a slow query never stalls reading the next message.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| ServeError::Protocol(e.to_string()))?;
        let reason = running
            .waiting()
            .await
            .map_err(|e| ServeError::Protocol(e.to_string()))?;
        tracing::info!(?reason, "MCP client disconnected");
        Ok(())
    })
}
