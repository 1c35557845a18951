//! Kiro CLI sessions, in both of the stores current versions write:
//! - `<kiro home>/sessions/cli/<uuid>.jsonl` (`$KIRO_HOME`, default `~/.kiro`): one
//!   `{"version":"v1","kind":…,"data":…}` record a line, appended; beside it `<uuid>.json`,
//!   rewritten whole, with the session's folder, times, title, model and per-turn metering
//!   ([`cli_jsonl`]);
//! - `<data dir>/kiro-cli/data.sqlite3`, table `conversations_v2`: one JSON conversation state
//!   a row, the format of Kiro CLI's open predecessor, aws/amazon-q-developer-cli
//!   (`crates/chat-cli/src/cli/chat/conversation.rs`, `message.rs`) ([`sqlite`]).
//!
//! Kiro IDE's chats are the `kiro-ide` source ([`ide`]).

pub mod cli_jsonl;
pub mod ide;
pub mod sqlite;

use std::path::{Path, PathBuf};

use trail_model::SourceKind;

use crate::sqlite_readonly::{is_sqlite_file, SQLITE_MAGIC};
use crate::{discover, FileParse, ParseRequest, Source, SourceError};

/// Kiro CLI's JSONL sessions and its SQLite conversation store.
pub struct Kiro;

/// The conversation database's file name.
pub const DATABASE_FILE: &str = "data.sqlite3";

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 1: the first version.
pub const PARSER_VERSION: u32 = 1;

impl Source for Kiro {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Kiro
    }

    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            // The Kiro home (`sessions/cli` below it), or the sessions folder itself.
            let cli = root.join("sessions").join("cli");
            let base = if cli.is_dir() { cli } else { root.clone() };
            out.extend(discover::walk_files(&base, 1, |p| {
                discover::has_extension(p, "jsonl")
            }));
            // The data folder holding the conversation database.
            let db = root.join(DATABASE_FILE);
            if db.is_file() {
                out.push(db);
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        if is_database(path) {
            return head.starts_with(SQLITE_MAGIC) && sqlite::has_conversations(path);
        }
        discover::has_extension(path, "jsonl") && cli_jsonl::looks_like_session(head)
    }

    fn appendable(&self, path: &Path) -> bool {
        !is_database(path)
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        if is_database(request.path) && is_sqlite_file(request.path) {
            return sqlite::parse(request.path);
        }
        cli_jsonl::parse(request)
    }
}

fn is_database(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == DATABASE_FILE)
}
