//! Domain types shared by every trail crate: sessions, messages, turns, usage, parse issues.
//!
//! This crate does no I/O. Sources produce these types, the store persists them, reports and
//! renderers read them back.

mod build;
pub mod continuation;
pub mod time;
pub mod turns;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use build::Origin;

/// Identifies one agent format (and so one source module).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceKind {
    ClaudeCode,
    CopilotVscode,
    VscodeExport,
    CopilotCli,
    Codex,
    GeminiCli,
    Opencode,
    Cursor,
    Specstory,
    Aider,
    ClaudeHistory,
    /// Cline (`saoudrizwan.claude-dev`) in any VS Code host.
    Cline,
    /// Roo Code (`rooveterinaryinc.roo-cline`), a fork of Cline with the same task folders.
    RooCode,
    /// Kilo Code (`kilocode.kilo-code`), a fork of Roo Code and Cline; since its 2026 rebuild
    /// on OpenCode's core, OpenCode's store under `~/.local/share/kilo`. One kind for both.
    KiloCode,
    // h42a: Pi, Qwen Code, Kimi Code CLI, Factory Droid, iFlow CLI.
    /// Pi (and Oh My Pi, Prime Agent, OpenClaw/QClaw): JSONL trees of entries.
    Pi,
    /// Qwen Code (and Qoder): ChatRecord JSONL.
    QwenCode,
    /// Kimi Code CLI: `wire.jsonl` event logs.
    Kimi,
    /// Factory Droid: session JSONL with a `.settings.json` beside it.
    Droid,
    /// iFlow CLI: Claude-like session JSONL.
    Iflow,
    // end h42a
    // h42c: sources added for issue 42 (OpenCode forks, relabels, SQLite stores, exports).
    /// MiMo Code (Xiaomi), OpenCode's store under `~/.local/share/mimocode`.
    MimoCode,
    /// ICodeMate, OpenCode's store under `~/.local/share/icodemate`.
    Icodemate,
    /// TraeX (TRAE CLI 2.0): Codex rollouts under `~/.trae/cli`.
    Traex,
    /// OpenClaude: Claude Code JSONL under `~/.openclaude/projects`.
    Openclaude,
    /// Claude Cowork (Claude desktop's agent mode): Claude Code JSONL per session folder.
    ClaudeCowork,
    /// Crush (charmbracelet): a SQLite database per project, `.crush/crush.db`.
    Crush,
    /// Zed's agent panel threads (`threads/threads.db`, zstd-compressed JSON).
    Zed,
    /// Goose (Block): `sessions/sessions.db`, and older per-session JSONL.
    Goose,
    /// Grok Build (xAI): `~/.grok/sessions/<cwd>/<id>/updates.jsonl`.
    Grok,
    // h42b: new sources of issue 42.
    /// Mistral Vibe (`~/.vibe/logs/session`).
    MistralVibe,
    /// Kiro CLI (`~/.kiro/sessions/cli`, `kiro-cli/data.sqlite3`).
    Kiro,
    /// Kiro IDE (`globalStorage/kiro.kiroagent`: `.chat` files and `workspace-sessions`).
    KiroIde,
    /// Hermes Agent (`~/.hermes/state.db`, legacy `~/.hermes/sessions`).
    Hermes,
    /// Google Antigravity, IDE and CLI (`~/.gemini/antigravity*/brain`).
    Antigravity,
    /// GitHub Copilot in Visual Studio (OpenTelemetry traces in `VSGitHubCopilotLogs/traces`).
    VisualStudioCopilot,
    // h42x: chat-service data exports (import only, chats rather than coding sessions).
    /// A ChatGPT data export's `conversations.json`.
    ChatgptExport,
    /// A Claude.ai data export's `conversations.json`.
    ClaudeAiExport,
}

impl SourceKind {
    /// Every source, in the order `doctor` lists them.
    pub const ALL: [SourceKind; 36] = [
        SourceKind::ClaudeCode,
        SourceKind::CopilotVscode,
        SourceKind::VscodeExport,
        SourceKind::CopilotCli,
        SourceKind::Codex,
        SourceKind::GeminiCli,
        SourceKind::Opencode,
        SourceKind::Cursor,
        SourceKind::Specstory,
        SourceKind::Aider,
        SourceKind::ClaudeHistory,
        SourceKind::Cline,
        SourceKind::RooCode,
        SourceKind::KiloCode,
        // h42a
        SourceKind::Pi,
        SourceKind::QwenCode,
        SourceKind::Kimi,
        SourceKind::Droid,
        SourceKind::Iflow,
        // end h42a
        // h42c
        SourceKind::MimoCode,
        SourceKind::Icodemate,
        SourceKind::Traex,
        SourceKind::Openclaude,
        SourceKind::ClaudeCowork,
        SourceKind::Crush,
        SourceKind::Zed,
        SourceKind::Goose,
        SourceKind::Grok,
        // h42b
        SourceKind::MistralVibe,
        SourceKind::Kiro,
        SourceKind::KiroIde,
        SourceKind::Hermes,
        SourceKind::Antigravity,
        SourceKind::VisualStudioCopilot,
        // h42x
        SourceKind::ChatgptExport,
        SourceKind::ClaudeAiExport,
    ];

    /// Returns the stable identifier stored in `sessions.host_type`.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::ClaudeCode => "claude-code",
            SourceKind::CopilotVscode => "copilot-vscode",
            SourceKind::VscodeExport => "vscode-export",
            SourceKind::CopilotCli => "copilot-cli",
            SourceKind::Codex => "codex",
            SourceKind::GeminiCli => "gemini-cli",
            SourceKind::Opencode => "opencode",
            SourceKind::Cursor => "cursor",
            SourceKind::Specstory => "specstory",
            SourceKind::Aider => "aider",
            SourceKind::ClaudeHistory => "claude-history",
            SourceKind::Cline => "cline",
            SourceKind::RooCode => "roo-code",
            SourceKind::KiloCode => "kilo-code",
            // h42a
            SourceKind::Pi => "pi",
            SourceKind::QwenCode => "qwen-code",
            SourceKind::Kimi => "kimi",
            SourceKind::Droid => "droid",
            SourceKind::Iflow => "iflow",
            // end h42a
            // h42c
            SourceKind::MimoCode => "mimo-code",
            SourceKind::Icodemate => "icodemate",
            SourceKind::Traex => "traex",
            SourceKind::Openclaude => "openclaude",
            SourceKind::ClaudeCowork => "claude-cowork",
            SourceKind::Crush => "crush",
            SourceKind::Zed => "zed",
            SourceKind::Goose => "goose",
            SourceKind::Grok => "grok",
            // h42b
            SourceKind::MistralVibe => "mistral-vibe",
            SourceKind::Kiro => "kiro",
            SourceKind::KiroIde => "kiro-ide",
            SourceKind::Hermes => "hermes",
            SourceKind::Antigravity => "antigravity",
            SourceKind::VisualStudioCopilot => "visual-studio-copilot",
            // h42x
            SourceKind::ChatgptExport => "chatgpt-export",
            SourceKind::ClaudeAiExport => "claude-ai-export",
        }
    }

    /// Parses the identifier written by [`SourceKind::as_str`].
    pub fn parse(s: &str) -> Option<SourceKind> {
        SourceKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A session's source as a store names it: one this version reads ([`SourceKind`]), or a name
/// it does not know (written by a newer trail, or by another tool into a Chronicle store), kept
/// as written. Serialized as the bare name; compared, hashed and ordered by its name.
#[derive(Debug, Clone)]
pub enum Source {
    Known(SourceKind),
    Other(String),
}

impl Source {
    /// Reads a stored name.
    pub fn parse(name: &str) -> Source {
        SourceKind::parse(name).map_or_else(|| Source::Other(name.to_string()), Source::Known)
    }
    pub fn as_str(&self) -> &str {
        match self {
            Source::Known(k) => k.as_str(),
            Source::Other(s) => s,
        }
    }
    /// The source this version reads, if it is one.
    pub fn kind(&self) -> Option<SourceKind> {
        match self {
            Source::Known(k) => Some(*k),
            Source::Other(_) => None,
        }
    }
}

impl Default for Source {
    fn default() -> Self {
        Source::Other(String::new())
    }
}

impl From<SourceKind> for Source {
    fn from(k: SourceKind) -> Self {
        Source::Known(k)
    }
}

impl From<&str> for Source {
    fn from(s: &str) -> Self {
        Source::parse(s)
    }
}

impl From<String> for Source {
    fn from(s: String) -> Self {
        SourceKind::parse(&s).map_or(Source::Other(s), Source::Known)
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::ops::Deref for Source {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Source {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Source {
    fn eq(&self, other: &Source) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Source {}

impl std::hash::Hash for Source {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_str().hash(h)
    }
}

impl PartialOrd for Source {
    fn partial_cmp(&self, other: &Source) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Source {
    fn cmp(&self, other: &Source) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl std::borrow::Borrow<str> for Source {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<Source> for String {
    fn eq(&self, other: &Source) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Source> for &str {
    fn eq(&self, other: &Source) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<str> for Source {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Source {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Source {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<SourceKind> for Source {
    fn eq(&self, other: &SourceKind) -> bool {
        self.kind() == Some(*other)
    }
}

impl Serialize for Source {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Source {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        String::deserialize(d).map(Source::from)
    }
}

/// A session's id in the store: the agent's own globally unique id where it has one,
/// else `<source>:<native id>`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionId(pub String);

impl SessionId {
    pub fn new(s: impl Into<String>) -> Self {
        SessionId(s.into())
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::ops::Deref for SessionId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SessionId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for SessionId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for SessionId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for SessionId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for SessionId {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl PartialEq<SessionId> for String {
    fn eq(&self, other: &SessionId) -> bool {
        *self == other.0
    }
}

impl PartialEq<SessionId> for &str {
    fn eq(&self, other: &SessionId) -> bool {
        *self == other.0
    }
}

impl From<String> for SessionId {
    fn from(s: String) -> Self {
        SessionId(s)
    }
}

impl From<&str> for SessionId {
    fn from(s: &str) -> Self {
        SessionId(s.to_string())
    }
}

impl From<SessionId> for String {
    fn from(id: SessionId) -> Self {
        id.0
    }
}

/// Who produced a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    Tool,
    System,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::System => "system",
        }
    }
    pub fn parse(s: &str) -> Option<Role> {
        Some(match s {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            "system" => Role::System,
            _ => return None,
        })
    }
}

/// What a message is. A turn's `user_message` is its `Prompt`; its `assistant_response` joins
/// its `Text` messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    /// A prompt typed (or sent) by the user: starts a turn.
    Prompt,
    /// Answer text from the assistant.
    Text,
    /// Model reasoning.
    Thinking,
    /// A tool invocation (name and input).
    ToolCall,
    /// A tool's output.
    ToolResult,
    /// A compaction summary or a conversation summary.
    Summary,
    /// A compaction boundary marker.
    Compaction,
    /// An error reported by the agent or the API.
    Error,
    /// Meta content injected by the agent (commands, reminders, hook output, attachments).
    Meta,
    /// A record of a type this version does not know, kept as opaque JSON in `extra`.
    Unknown,
}

impl MessageKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MessageKind::Prompt => "prompt",
            MessageKind::Text => "text",
            MessageKind::Thinking => "thinking",
            MessageKind::ToolCall => "tool_call",
            MessageKind::ToolResult => "tool_result",
            MessageKind::Summary => "summary",
            MessageKind::Compaction => "compaction",
            MessageKind::Error => "error",
            MessageKind::Meta => "meta",
            MessageKind::Unknown => "unknown",
        }
    }
    pub fn parse(s: &str) -> Option<MessageKind> {
        Some(match s {
            "prompt" => MessageKind::Prompt,
            "text" => MessageKind::Text,
            "thinking" => MessageKind::Thinking,
            "tool_call" => MessageKind::ToolCall,
            "tool_result" => MessageKind::ToolResult,
            "summary" => MessageKind::Summary,
            "compaction" => MessageKind::Compaction,
            "error" => MessageKind::Error,
            "meta" => MessageKind::Meta,
            "unknown" => MessageKind::Unknown,
            _ => return None,
        })
    }
}

/// One normalized message, in file order (`seq`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Message {
    /// Position in the session, from 0, in the order the agent wrote it.
    pub seq: u32,
    /// The agent's own id for the record (Claude `uuid`, Copilot event `id`...), if any.
    /// Several messages split from one record share it.
    pub native_id: Option<String>,
    /// The effective parent record's native id (tree-shaped formats).
    pub parent_native_id: Option<String>,
    pub role: Option<Role>,
    pub kind: Option<MessageKind>,
    /// The readable text: prompt, answer, thinking, summary, error text.
    pub text: String,
    pub tool_name: Option<String>,
    /// Joins a `ToolCall` to its `ToolResult`.
    pub tool_call_id: Option<String>,
    /// Tool input as JSON text.
    pub tool_input: Option<String>,
    /// Tool output as text.
    pub tool_output: Option<String>,
    pub is_error: bool,
    pub model: Option<String>,
    /// ISO-8601 UTC.
    pub timestamp: Option<String>,
    pub is_sidechain: bool,
    /// Whether the message lies on the conversation the turns were built from (false for
    /// abandoned branches after a rewind).
    pub on_main_chain: bool,
    /// The turn this message belongs to (main chain only).
    pub turn_index: Option<u32>,
    /// The subagent this message spawned or reports on (Claude `toolUseResult.agentId`,
    /// Copilot CLI `task` tool call), used to link subagent sessions to their tool call.
    pub agent_ref: Option<String>,
    /// Opaque JSON for unknown records and parts, kept so nothing is lost.
    pub extra: Option<String>,
    /// Prompts only: who wrote it, when the format says ([`PromptSource`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_source: Option<PromptSource>,
}

/// Who wrote a prompt. Reports that count what people asked count only [`PromptSource::Typed`]
/// (and prompts whose format does not say).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptSource {
    /// Typed by a person at the agent's prompt.
    Typed,
    /// Typed by a person while the agent was busy, and sent when it finished (Claude Code's
    /// `queued_command`).
    Queued,
    /// Sent as a user turn by the agent itself or a hook (task notifications, reminders).
    System,
    /// Sent by a program driving the agent (an SDK or `-p` run).
    Sdk,
}

impl PromptSource {
    pub fn as_str(self) -> &'static str {
        match self {
            PromptSource::Typed => "typed",
            PromptSource::Queued => "queued",
            PromptSource::System => "system",
            PromptSource::Sdk => "sdk",
        }
    }
    pub fn parse(s: &str) -> Option<PromptSource> {
        Some(match s {
            "typed" => PromptSource::Typed,
            "queued" => PromptSource::Queued,
            "system" => PromptSource::System,
            "sdk" => PromptSource::Sdk,
            _ => return None,
        })
    }
    /// Returns whether a person wrote the prompt (typed now or queued while the agent worked).
    pub fn by_person(self) -> bool {
        matches!(self, PromptSource::Typed | PromptSource::Queued)
    }
}

impl Message {
    pub fn role(&self) -> Role {
        self.role.unwrap_or(Role::System)
    }
    pub fn kind(&self) -> MessageKind {
        self.kind.unwrap_or(MessageKind::Unknown)
    }
}

/// A Chronicle `turns` row: one user prompt and everything the agent did until the next.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Turn {
    pub index: u32,
    pub user_message: Option<String>,
    pub assistant_response: Option<String>,
    pub timestamp: Option<String>,
}

/// A Chronicle `checkpoints` row (compactions, summaries).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Checkpoint {
    pub number: u32,
    pub title: Option<String>,
    pub overview: Option<String>,
    pub history: Option<String>,
    pub work_done: Option<String>,
    pub technical_details: Option<String>,
    pub important_files: Option<String>,
    pub next_steps: Option<String>,
    pub created_at: Option<String>,
}

/// A file a tool read or wrote (Chronicle `session_files`; first occurrence wins).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileTouch {
    pub path: String,
    pub tool_name: Option<String>,
    pub turn_index: Option<u32>,
    pub first_seen_at: Option<String>,
}

/// Kinds of reference a session mentions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RefType {
    Pr,
    Issue,
    Commit,
}

impl RefType {
    pub fn as_str(self) -> &'static str {
        match self {
            RefType::Pr => "pr",
            RefType::Issue => "issue",
            RefType::Commit => "commit",
        }
    }
}

/// A Chronicle `session_refs` row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRef {
    pub ref_type: RefType,
    pub value: String,
    pub turn_index: Option<u32>,
    pub created_at: Option<String>,
}

/// Token usage of one API request, deduplicated per format.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// The key requests are deduplicated by (Claude: `message.id:requestId`), unique per session.
    pub request_key: String,
    /// Claude `message.id`: the sidechain-replay rule matches on it alone.
    pub message_id: Option<String>,
    pub message_seq: Option<u32>,
    pub model: Option<String>,
    pub timestamp: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Cache writes (5 minute and 1 hour together).
    pub cache_creation_tokens: u64,
    /// The part of `cache_creation_tokens` written with a 1 hour lifetime.
    pub cache_creation_1h_tokens: u64,
    pub cache_read_tokens: u64,
    /// Reasoning tokens where reported separately (already inside `output_tokens`).
    pub reasoning_tokens: u64,
    /// Cost recorded by the agent itself, if any.
    pub cost_usd: Option<f64>,
    pub is_sidechain: bool,
    /// Whether token counts are known: some agents record zeros they never measured.
    pub tokens_known: bool,
    /// Tie breaker in ccusage's dedupe: an entry with `speed` wins a tie.
    pub has_speed: bool,
    /// Web searches the API ran during the request (Claude `server_tool_use.
    /// web_search_requests`), billed per search on top of the tokens.
    #[serde(default)]
    pub web_search_requests: u64,
    /// GitHub Copilot premium requests the request used (its model's multiplier applied). A
    /// unit of its own: a plan's allowance, never dollars.
    #[serde(default)]
    pub premium_requests: f64,
}

impl Usage {
    /// Returns input + output + cache write + cache read, the total ccusage compares
    /// (saturating: the counts are a file's, and a corrupt one can hold any number).
    pub fn total(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.output_tokens)
            .saturating_add(self.cache_creation_tokens)
            .saturating_add(self.cache_read_tokens)
    }
}

/// Links a subagent (or fork) session to the session and tool call that started it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ParentLink {
    pub session_id: SessionId,
    /// The tool call in the parent that started this session, when known.
    pub tool_call_id: Option<String>,
    /// The agent's id for the subagent (Claude `agentId`), used to find the tool call.
    pub agent_ref: Option<String>,
}

/// Ranks of a session title, lowest first (stored in `sessions.title_rank`).
pub struct TitleRank;

impl TitleRank {
    /// No title.
    pub const NONE: u8 = 0;
    /// Taken from the first prompt.
    pub const FIRST_PROMPT: u8 = 1;
    /// A summary: written by the agent in the session's file, or in another file.
    pub const SUMMARY: u8 = 2;
    /// A title the user gave (`/rename`).
    pub const USER: u8 = 3;
}

/// Session-level facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    pub id: SessionId,
    pub source: SourceKind,
    pub native_id: String,
    pub title: Option<String>,
    /// How much the title is worth, so a better one is never replaced by a worse one:
    /// [`TitleRank`]. 0 lets the store decide (1 when there is a title).
    #[serde(default)]
    pub title_rank: u8,
    pub cwd: Option<String>,
    /// `owner/name`.
    pub repository: Option<String>,
    pub branch: Option<String>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    pub agent_version: Option<String>,
    pub parent: Option<ParentLink>,
    /// Facts the format records that have no field of their own, as a JSON object (a Claude
    /// Code workflow run's name, status, tokens and phases; a Cursor composer's mode...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Value>,
    /// The agent as people name it (Chronicle schema 3's `sessions.agent_name`): Copilot's own
    /// values (`VS Code agent`, `Copilot CLI`) for Copilot's sources, the source's display
    /// name for the others. A parser may leave it out: the ingest fills it from the source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_name: Option<String>,
    /// What the source records of a custom agent, subagent type or mode (Chronicle's
    /// `sessions.agent_description`): a Claude Code subagent's type, a Copilot custom agent,
    /// an OpenCode agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_description: Option<String>,
}

impl SessionMeta {
    pub fn new(id: SessionId, source: SourceKind, native_id: impl Into<String>) -> Self {
        SessionMeta {
            id,
            source,
            native_id: native_id.into(),
            title: None,
            title_rank: 0,
            cwd: None,
            repository: None,
            branch: None,
            created_at: None,
            updated_at: None,
            agent_version: None,
            parent: None,
            metadata: None,
            agent_name: None,
            agent_description: None,
        }
    }

    /// Widens `created_at`/`updated_at` to include `ts`.
    pub fn observe_timestamp(&mut self, ts: &str) {
        if self.created_at.as_deref().is_none_or(|c| ts < c) {
            self.created_at = Some(ts.to_string());
        }
        if self.updated_at.as_deref().is_none_or(|u| ts > u) {
            self.updated_at = Some(ts.to_string());
        }
    }
}

/// Whether a parse result replaces everything known of a session or extends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum UpdateMode {
    /// Everything stored for the session is replaced by this result.
    Replace,
    /// The result holds only new messages (and changes to derived fields of older ones).
    Append,
}

/// Derived fields of an already stored message that changed after an append (a new branch
/// became the main chain, so turn membership moved).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relink {
    pub seq: u32,
    pub turn_index: Option<u32>,
    pub on_main_chain: bool,
}

/// A parsed session, or the delta to apply to a stored one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub meta: SessionMeta,
    pub mode: UpdateMode,
    /// Every message (Replace) or only the new ones (Append).
    pub messages: Vec<Message>,
    /// Append only: older messages whose derived fields changed.
    pub relinks: Vec<Relink>,
    /// Turns to write. Replace: all of them. Append: empty, the store rebuilds the turns the
    /// new messages and relinks touch from the stored messages.
    pub turns: Vec<Turn>,
    /// The number of turns the session has now (used to drop turns past the end on append).
    pub turn_count: u32,
    pub checkpoints: Vec<Checkpoint>,
    pub files: Vec<FileTouch>,
    pub refs: Vec<SessionRef>,
    pub usage: Vec<Usage>,
    /// Models seen, in order of first use.
    pub models: Vec<String>,
    /// File contents the agent kept while the session changed them (Claude Code's
    /// file-history backups, VS Code's chat editing snapshots), for `trail diff`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub snapshots: Vec<FileSnapshot>,
    /// Plans and context files the session recorded (a Claude Code plan, a Copilot CLI
    /// `plan.md`): Chronicle indexes them with `source_type = 'workspace_artifact'`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<WorkspaceArtifact>,
}

/// A plan or context file a session recorded, by its path (or a name standing for one) and its
/// text. A later artifact of the same path replaces an earlier one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceArtifact {
    pub path: String,
    pub content: String,
}

impl Session {
    pub fn new(meta: SessionMeta) -> Self {
        Session {
            meta,
            mode: UpdateMode::Replace,
            messages: Vec::new(),
            relinks: Vec::new(),
            turns: Vec::new(),
            turn_count: 0,
            checkpoints: Vec::new(),
            files: Vec::new(),
            refs: Vec::new(),
            usage: Vec::new(),
            models: Vec::new(),
            snapshots: Vec::new(),
            artifacts: Vec::new(),
        }
    }

    /// Records a model in first-use order (a placeholder such as `default` is no model: see
    /// [`model_name`]).
    pub fn observe_model(&mut self, model: &str) {
        if model_name(Some(model)).is_some() && !self.models.iter().any(|m| m == model) {
            self.models.push(model.to_string());
        }
    }

    /// Adds a file unless already listed (first occurrence wins, as in Chronicle).
    pub fn add_file(&mut self, touch: FileTouch) {
        if !touch.path.is_empty() && !self.files.iter().any(|f| f.path == touch.path) {
            self.files.push(touch);
        }
    }

    /// Adds a ref unless already listed.
    pub fn add_ref(&mut self, r: SessionRef) {
        if !self
            .refs
            .iter()
            .any(|x| x.ref_type == r.ref_type && x.value == r.value)
        {
            self.refs.push(r);
        }
    }
}

/// One file's content at one point of a session, as the agent kept it: Claude Code's
/// `file-history` backups, VS Code's chat editing snapshots. Consecutive snapshots of a path
/// (by `version`) are what the session changed in between; `trail diff` compares them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSnapshot {
    /// The file's path as the agent names it.
    pub path: String,
    /// Orders the snapshots of one path, from 0.
    pub version: u32,
    /// The turn at whose start the file had this content (before that turn's edits). `None`:
    /// the file as the session left it, after its last turn.
    pub turn_index: Option<u32>,
    /// The content; `None` when the file did not exist at that point.
    pub content: Option<String>,
    /// When the agent took it (ISO-8601 UTC), if recorded.
    pub taken_at: Option<String>,
    /// Which record it comes from: `claude-file-history`, `vscode-chat-editing`.
    pub origin: String,
}

/// A problem found while parsing a file: reported, the rest still indexed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParseIssue {
    pub path: String,
    /// 1-based line number, when the format is line-based.
    pub line: Option<u64>,
    /// Byte offset of the start of the bad record.
    pub byte_offset: Option<u64>,
    /// Up to 200 characters of the bad line.
    pub excerpt: Option<String>,
    pub reason: String,
}

/// Returns `model` unless it names no model: empty, or a placeholder an agent writes when the
/// user kept its default (`default`, `<provider>/default`), which says nothing about the model
/// that answered (issue 40).
pub fn model_name(model: Option<&str>) -> Option<&str> {
    let m = model?.trim();
    let last = m.rsplit('/').next().unwrap_or(m);
    (!m.is_empty() && !last.eq_ignore_ascii_case("default")).then_some(m)
}

/// Returns at most `max` characters of `s`, on a char boundary.
pub fn truncate_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_is_its_name_known_or_not() {
        let known = Source::parse("claude-code");
        assert_eq!(known.kind(), Some(SourceKind::ClaudeCode));
        assert_eq!(known, SourceKind::ClaudeCode);
        // A name this version does not read is kept as written, and still compares by name.
        let other = Source::from("some-future-agent".to_string());
        assert_eq!(other.kind(), None);
        assert_eq!(other, "some-future-agent");
        assert_eq!(Source::Other("claude-code".into()), known);
        assert_eq!(serde_json::to_string(&known).unwrap(), r#""claude-code""#);
        let back: Source = serde_json::from_str(r#""some-future-agent""#).unwrap();
        assert_eq!(back, other);
        let mut names = std::collections::HashSet::new();
        names.insert(known);
        assert!(names.contains("claude-code"));
    }
}
