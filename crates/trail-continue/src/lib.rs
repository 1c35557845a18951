//! Continues a session in another agent: `trail resume ID --in AGENT`, the TUI's continue key
//! and the MCP tool `continue_session` all call [`continue_session`].
//!
//! The session's conversation (every prompt and answer in order, tool calls and results as the
//! target's own tool records, the working folder and the branch) is written as a **new**
//! session file in the target agent's own format and place; nothing existing is changed. Its
//! first prompt starts with a line naming the original session
//! ([`trail_model::continuation::marker_line`]), which is how trail links the two after the next
//! index. Secrets are redacted and long tool output is cut before anything is written.
//!
//! The new session's id is derived from the original id and the target ([`ids`]), so a second
//! run finds the file the first one wrote and points at it; [`ContinueOptions::fresh`] salts
//! the id with the time to write another.
//!
//! One module per target format: [`claude`] (Claude Code), [`codex`] (Codex CLI), [`gemini`]
//! (Gemini CLI). Copilot CLI is not a target: its session folder (`session-state/<id>/`
//! with `events.jsonl` and `workspace.yaml`) is read by a closed-source CLI whose resume checks
//! are published nowhere (github/copilot-sdk publishes the event schema, not the loader), so
//! no written file could be checked against what `copilot --resume` requires.
//!
//! No environment, no home folder, no printing: the caller passes each target's folder.

pub mod claude;
pub mod codex;
pub mod gemini;
pub mod ids;
mod transcript;
mod write;

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use trail_query::{DetailRequest, Query, QueryError, Reopen};
use trail_render::Redactor;

pub use transcript::{Step, ToolStep, Transcript};

/// Tool output (and tool input) longer than this many bytes is cut, with a marker.
pub const DEFAULT_TOOL_OUTPUT_CAP: usize = 32 * 1024;

/// An agent a session can be continued in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    ClaudeCode,
    Codex,
    GeminiCli,
}

impl Target {
    /// Every target, in the order help text lists them.
    pub const ALL: [Target; 3] = [Target::ClaudeCode, Target::Codex, Target::GeminiCli];

    /// The target's source name (`claude-code`, `codex`, `gemini-cli`).
    pub fn as_str(self) -> &'static str {
        match self {
            Target::ClaudeCode => "claude-code",
            Target::Codex => "codex",
            Target::GeminiCli => "gemini-cli",
        }
    }

    /// Reads a target by its source name, or the agent's command name (`claude`, `gemini`).
    pub fn parse(s: &str) -> Option<Target> {
        match s {
            "claude-code" | "claude" => Some(Target::ClaudeCode),
            "codex" => Some(Target::Codex),
            "gemini-cli" | "gemini" => Some(Target::GeminiCli),
            _ => None,
        }
    }
}

impl std::str::FromStr for Target {
    type Err = ContinueError;

    fn from_str(s: &str) -> Result<Target> {
        Target::parse(s).ok_or_else(|| {
            let all: Vec<&str> = Target::ALL.iter().map(|t| t.as_str()).collect();
            ContinueError::Invalid(format!(
                "cannot continue in {s:?}; one of: {} (Copilot CLI's resume checks are not published, so trail does not write its sessions)",
                all.join(", ")
            ))
        })
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where each target agent keeps its sessions. The CLI resolves these the way discovery does
/// (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `GEMINI_CLI_HOME`, the home folder); a target left
/// `None` cannot be written.
#[derive(Debug, Clone, Default)]
pub struct TargetHomes {
    /// Claude Code's `projects` folder (`~/.claude/projects`).
    pub claude_projects: Option<PathBuf>,
    /// Codex's home (`$CODEX_HOME`, `~/.codex`), holding `sessions/`.
    pub codex_home: Option<PathBuf>,
    /// Gemini CLI's folder (`~/.gemini`), holding `tmp/<project>/chats/`.
    pub gemini_home: Option<PathBuf>,
}

/// How to continue.
#[derive(Debug)]
pub struct ContinueOptions {
    pub homes: TargetHomes,
    /// Write a new continuation even when one exists (its id is salted with `now`).
    pub fresh: bool,
    /// Applied to every text written; [`Redactor::disabled`] for `--no-redact`.
    pub redactor: Redactor,
    /// Bytes of one tool output (or input) kept; the rest is cut with a marker.
    pub tool_output_cap: usize,
    /// The time the continuation is made: file names, the session's start, `--fresh` salts.
    pub now: DateTime<Utc>,
    /// The working folder to continue in when the session recorded none (VS Code chats,
    /// Gemini chats without a project marker); a recorded folder wins.
    pub cwd: Option<String>,
}

impl ContinueOptions {
    /// Options with redaction on, the default cap, and the current time.
    pub fn new(homes: TargetHomes) -> Result<ContinueOptions> {
        Ok(ContinueOptions {
            homes,
            fresh: false,
            redactor: Redactor::new(&[]).map_err(|e| ContinueError::Invalid(e.to_string()))?,
            tool_output_cap: DEFAULT_TOOL_OUTPUT_CAP,
            now: Utc::now(),
            cwd: None,
        })
    }
}

/// What was carried over.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CarryStats {
    pub prompts: usize,
    pub answers: usize,
    pub tool_calls: usize,
    /// Tool outputs (or inputs) cut at the cap.
    pub cut: usize,
    /// Secrets replaced by `[REDACTED:kind]`.
    pub redactions: u64,
}

/// A continuation written (or found).
#[derive(Debug, Clone, Serialize)]
pub struct Continuation {
    /// The session continued (its store id).
    pub original_id: String,
    pub original_source: String,
    pub target: Target,
    /// The new session's id in the target agent (also its store id after the next index).
    pub session_id: String,
    /// The file written, or the one an earlier run wrote.
    pub path: PathBuf,
    /// False when an earlier run had already written this continuation.
    pub created: bool,
    /// The target agent's resume command, to run in the session's folder.
    pub command: Reopen,
    /// What the file holds (counted from this run's transcript, also when the file existed).
    pub carried: CarryStats,
}

/// Errors continuing a session.
#[derive(Debug, thiserror::Error)]
pub enum ContinueError {
    /// The session could not be read (unknown id, no store...).
    #[error(transparent)]
    Query(#[from] QueryError),
    /// The caller gave no folder for this target.
    #[error("no folder is known for {0} sessions")]
    NoHome(Target),
    /// The session cannot be continued as asked (no working folder, nothing said...).
    #[error("{0}")]
    Invalid(String),
    /// Writing the new session failed.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl ContinueError {
    /// True when the caller asked for something that cannot be (exit 2, MCP `isError`).
    pub fn is_caller_error(&self) -> bool {
        match self {
            ContinueError::Query(e) => e.is_caller_error(),
            ContinueError::NoHome(_) | ContinueError::Invalid(_) => true,
            ContinueError::Io { .. } => false,
        }
    }
}

pub type Result<T, E = ContinueError> = std::result::Result<T, E>;

/// Where a target's file for one continuation goes, and whether it is already there.
pub(crate) struct Location {
    pub path: PathBuf,
    pub exists: bool,
    /// Files to create beside the session file when it is new (Gemini's project marker).
    pub companions: Vec<(PathBuf, Vec<u8>)>,
}

/// Renders a transcript as the bytes of a new `target` session file with id `id`.
pub fn render(
    target: Target,
    transcript: &Transcript,
    id: &str,
    options: &ContinueOptions,
) -> Result<Vec<u8>> {
    match target {
        Target::ClaudeCode => claude::render(transcript, id, options),
        Target::Codex => codex::render(transcript, id, options),
        Target::GeminiCli => gemini::render(transcript, id, options),
    }
}

/// Continues session `id` (an id or a unique prefix) in `target`: writes the new session file,
/// or finds the one an earlier run wrote, and returns it with the command that resumes it.
pub fn continue_session(
    query: &Query,
    id: &str,
    target: Target,
    options: &ContinueOptions,
) -> Result<Continuation> {
    let detail = query.detail(&DetailRequest {
        id: id.to_string(),
        from_turn: None,
        to_turn: None,
    })?;
    let transcript = Transcript::from_detail(&detail, options)?;
    let salt = if options.fresh {
        options
            .now
            .timestamp_nanos_opt()
            .unwrap_or_default()
            .to_string()
    } else {
        String::new()
    };
    let new_id = ids::continuation_id(&transcript.original_id, target, &salt);
    let (location, bytes) = match target {
        Target::ClaudeCode => {
            let projects = options
                .homes
                .claude_projects
                .as_deref()
                .ok_or(ContinueError::NoHome(target))?;
            let loc = claude::locate(projects, &transcript.cwd, &new_id);
            let bytes = (!loc.exists).then(|| render(target, &transcript, &new_id, options));
            (loc, bytes)
        }
        Target::Codex => {
            let home = options
                .homes
                .codex_home
                .as_deref()
                .ok_or(ContinueError::NoHome(target))?;
            let loc = codex::locate(home, &new_id, options.now);
            let bytes = (!loc.exists).then(|| render(target, &transcript, &new_id, options));
            (loc, bytes)
        }
        Target::GeminiCli => {
            let home = options
                .homes
                .gemini_home
                .as_deref()
                .ok_or(ContinueError::NoHome(target))?;
            let loc = gemini::locate(home, &transcript.cwd, &new_id, options.now);
            let bytes = (!loc.exists).then(|| render(target, &transcript, &new_id, options));
            (loc, bytes)
        }
    };
    let created = match bytes {
        Some(bytes) => {
            for (path, content) in &location.companions {
                write::write_new(path, content).map_err(|source| ContinueError::Io {
                    path: path.clone(),
                    source,
                })?;
            }
            write::write_new(&location.path, &bytes?).map_err(|source| ContinueError::Io {
                path: location.path.clone(),
                source,
            })?
        }
        None => false,
    };
    let (program, args) = match target {
        Target::ClaudeCode => ("claude", vec!["--resume".to_string(), new_id.clone()]),
        Target::Codex => ("codex", vec!["resume".to_string(), new_id.clone()]),
        Target::GeminiCli => ("gemini", vec!["--resume".to_string(), new_id.clone()]),
    };
    Ok(Continuation {
        original_id: transcript.original_id.clone(),
        original_source: transcript.original_source.clone(),
        target,
        session_id: new_id.clone(),
        path: location.path,
        created,
        command: Reopen {
            session_id: new_id,
            program,
            args,
            cwd: Some(transcript.cwd.clone()),
        },
        carried: transcript.stats.clone(),
    })
}
