//! Discovery and parsing of every agent's on-disk format, one module per format.
//!
//! A source lists candidate files under roots it is given (it never reads the environment or
//! the home directory: the CLI resolves roots) and turns one file's bytes into normalized
//! [`Session`]s plus [`ParseIssue`]s. A source never writes anything and never touches the
//! store. Bad records degrade that record only.

// One folder per agent family; readers used by several formats live in `shared/`.
mod claude;
mod cline_family;
pub mod codex;
pub mod copilot_cli;
pub mod cursor;
pub mod gemini;
mod markdown;
mod opencode_family;
mod registry;
pub mod relabel;
// h42c
pub mod crush;
pub mod goose;
pub mod grok;
mod shared;
mod vscode;
// h42a: Pi, Qwen Code, Kimi Code CLI, Factory Droid, iFlow CLI.
pub mod droid;
pub mod iflow;
pub mod kimi;
pub mod pi;
pub mod qwen;
pub mod zed;
// h42b: new sources of issue 42.
pub mod antigravity;
pub mod hermes;
pub mod kiro;
pub mod mistral_vibe;
pub mod visual_studio;
// h42x: chat-service data exports (import only).
mod chat_exports;

// The module paths other crates use (`trail_sources::claude_code`, ...), kept stable across the
// folder layout. Each format module has one entry in `registry.rs`.
pub use chat_exports::{chatgpt, claude_ai};
pub use claude::{claude_code, claude_history};
pub use cline_family::cline;
use cursor::cursor_transcripts;
pub use markdown::{aider, specstory};
pub use opencode_family::{kilo, opencode};
pub use registry::{
    display_name, find, info, name_of, source_ids, sources, Base, EnvAction, EnvOverride, Location,
    Os, Records, SourceInfo, Unreadable, UNREADABLE,
};
use shared::resumable;
use shared::{blocks, chat_tree, json_fields, linear, sqlite_readonly};
pub use shared::{discover, ids, jsonl, refs, whole};
use shared::{openai_chat, replay_chain, uri};
use vscode::copilot_vscode_legacy;
pub use vscode::{copilot_vscode, vscode_editing, vscode_export};

use std::path::{Path, PathBuf};

use trail_model::{ParseIssue, Session, SourceKind};

/// Errors that stop a whole file from being parsed (single bad records are [`ParseIssue`]s).
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not in the format its source expects (whole-file formats).
    #[error("{path}: {reason}")]
    Format { path: PathBuf, reason: String },
    /// A database the source reads could not be opened or queried.
    #[error("{path}: {reason}")]
    Database { path: PathBuf, reason: String },
}

impl SourceError {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        SourceError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
    pub fn format(path: &Path, reason: impl Into<String>) -> Self {
        SourceError::Format {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }
}

/// Where to resume an append-only file: the offset and line the previous parse stopped at,
/// and the state it returned.
#[derive(Debug, Clone, Copy)]
pub struct Resume<'a> {
    /// Byte offset of the first byte not yet parsed (start of a line).
    pub offset: u64,
    /// Lines before `offset`.
    pub line: u64,
    /// The opaque state the previous [`FileParse::state`] held.
    pub state: &'a [u8],
}

/// What to parse.
#[derive(Debug, Clone, Copy)]
pub struct ParseRequest<'a> {
    pub path: &'a Path,
    /// Present when the file only grew since the previous parse and the source is appendable.
    pub resume: Option<Resume<'a>>,
    /// For appendable formats: stop after about this many bytes (at a line end) and set
    /// [`FileParse::more`]; the caller resumes from `bytes_parsed`. Bounds memory on huge logs.
    pub max_bytes: Option<u64>,
}

/// The result of parsing one file.
#[derive(Debug, Default)]
pub struct FileParse {
    /// Sessions found (Replace) or deltas (Append) when resumed.
    pub sessions: Vec<Session>,
    pub issues: Vec<ParseIssue>,
    /// Offset where the next parse should start: the end of the last complete record. A torn
    /// last line is not included, so the next index picks it up.
    pub bytes_parsed: u64,
    /// Bytes actually read by this parse (excludes the resumed prefix).
    pub bytes_read: u64,
    /// Complete lines up to `bytes_parsed` (line-based formats).
    pub lines: u64,
    /// Opaque state to pass back in [`Resume::state`] (appendable formats only).
    pub state: Option<Vec<u8>>,
    /// Extra facts for `doctor` (for example "truncated values: 3").
    pub notes: Vec<String>,
    /// Titles naming a conversation by one of its message ids that this file does not hold
    /// (Claude Code `summary` entries whose `leafUuid` is in another file): (leaf id, title).
    pub title_hints: Vec<(String, String)>,
    /// The parse stopped at [`ParseRequest::max_bytes`]: resume from `bytes_parsed` for the rest.
    pub more: bool,
    /// Why a file of this format holds no session, when the source can say more than "no
    /// prompt, answer or event" (a log that lost its head names what is missing).
    pub no_session: Option<String>,
}

/// A candidate file found by discovery.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Candidate {
    pub source: SourceKind,
    pub path: PathBuf,
}

/// One agent format: discovery, detection and parsing.
pub trait Source: Send + Sync {
    /// Returns the format this module reads.
    fn kind(&self) -> SourceKind;

    /// Lists candidate files under `roots` (folders this source's files live in). Never follows
    /// symlink loops; missing roots are not an error.
    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf>;

    /// Returns whether `path`, with `head` (its first bytes), is in this format. Used when the
    /// user names files or folders directly.
    fn detect(&self, path: &Path, head: &[u8]) -> bool;

    /// Returns whether files of this format only ever grow, so an index can resume from the
    /// last offset.
    fn appendable(&self, path: &Path) -> bool;

    /// Returns paths, relative to a project folder, that hold this source's files (SpecStory:
    /// `.specstory/history`). The ingest looks for them in the folders other sessions ran in
    /// and under configured project roots ([`discover::project_markers`]), and passes the ones
    /// it finds to [`Source::discover`] as roots. Empty for sources with fixed locations.
    fn project_markers(&self) -> &'static [&'static str] {
        &[]
    }

    /// Returns whether this source's files are read after every other source's files are
    /// written, so the ingest can compare its sessions with theirs: Claude Code's prompt history
    /// stands in for transcripts Claude Code deleted, and must not repeat the ones the store
    /// holds. Sources with [`Source::project_markers`] are read after the others too.
    fn reads_after_others(&self) -> bool {
        false
    }

    /// Parses one file (or its new bytes when resumed).
    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError>;

    /// Returns whether a file of this format may hold so many sessions (a chat service's data
    /// export: thousands of conversations, hundreds of megabytes) that the ingest should take
    /// them one at a time from [`Source::parse_each`] and write them as they come, rather than
    /// hold the whole file's sessions.
    fn streams_sessions(&self) -> bool {
        false
    }

    /// Parses a whole file, handing each session to `each` as soon as it is made, in file
    /// order, with the bytes of the file read so far; returns the rest of the parse (problems,
    /// notes, byte and line counts) with no session in it. `each` returns false to stop early
    /// (the writer is gone). The default parses the file and then hands its sessions out.
    fn parse_each(
        &self,
        request: ParseRequest<'_>,
        each: &mut dyn FnMut(Session, u64) -> bool,
    ) -> Result<FileParse, SourceError> {
        let mut parsed = self.parse(request)?;
        for s in std::mem::take(&mut parsed.sessions) {
            if !each(s, parsed.bytes_read) {
                break;
            }
        }
        Ok(parsed)
    }

    /// Returns the version of this source's parser (each module's `PARSER_VERSION`).
    ///
    /// A fix that changes what the parser makes of the same bytes bumps it: the store records
    /// the version each file was parsed with, and the next index re-reads the files of this
    /// source stored under another version (and only those), unchanged or not.
    fn parser_version(&self) -> u32;
}

/// Returns every source's parser, in registry order (the order detection tries them).
pub fn registry() -> Vec<Box<dyn Source>> {
    sources().iter().map(|s| (s.make)()).collect()
}

/// Returns the first of `sources` that reads `path`, judged by its name and its first bytes
/// ([`whole::read_head`]: a leading byte-order mark is skipped here, once, for every format).
pub fn detect<'a>(sources: &'a [Box<dyn Source>], path: &Path) -> Option<&'a dyn Source> {
    let head = whole::read_head(path);
    sources
        .iter()
        .find(|s| s.detect(path, &head))
        .map(|s| s.as_ref())
}

/// Returns the source for `kind`, if it is built in.
pub fn source_for(kind: SourceKind) -> Option<Box<dyn Source>> {
    sources()
        .iter()
        .find(|s| s.kind == kind)
        .map(|s| (s.make)())
}
