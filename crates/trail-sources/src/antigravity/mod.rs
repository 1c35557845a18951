//! Google Antigravity, IDE and CLI (`agy`): `~/.gemini/antigravity/` (IDE),
//! `~/.gemini/antigravity-cli/` (CLI), `~/.gemini/antigravity-ide/`. A conversation's steps are
//! logged to `brain/<conversation id>/.system_generated/logs/transcript.jsonl`, one step a
//! line, appended: `{step_index, source, type, status, created_at, content, thinking?,
//! tool_calls?}` ([`transcript`]).
//!
//! The conversation's SQLite store `conversations/<id>.db` holds the same steps and one
//! `gen_metadata` row per model request as protobuf blobs with no published schema. Only what
//! a test checks against the transcript of the same conversation is decoded ([`gen_metadata`]):
//! which step each request answered and the model it used. Its token counts and the step
//! payloads are not read, and the parse says so (a note `doctor` shows). The encrypted
//! `implicit/*.pb` and older `conversations/*.pb` files are not read either.

pub mod gen_metadata;
pub mod transcript;

use std::path::{Path, PathBuf};

use trail_model::SourceKind;

use crate::{discover, FileParse, ParseRequest, Source, SourceError};

/// Antigravity's step transcripts.
pub struct Antigravity;

/// The transcript's file name.
pub const TRANSCRIPT_FILE: &str = "transcript.jsonl";

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 1: the first version.
pub const PARSER_VERSION: u32 = 1;

impl Source for Antigravity {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Antigravity
    }

    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            out.extend(discover::walk_files(&root.join("brain"), 4, is_transcript));
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        is_transcript(path) && transcript::looks_like_steps(head)
    }

    fn appendable(&self, _path: &Path) -> bool {
        true
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        transcript::parse(request)
    }
}

/// `brain/<id>/.system_generated/logs/transcript.jsonl`.
fn is_transcript(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == TRANSCRIPT_FILE)
        && path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == "logs")
}

/// The conversation id: the `brain/<id>` folder holding the transcript.
pub(crate) fn conversation_id(path: &Path) -> Option<String> {
    let id = path.parent()?.parent()?.parent()?.file_name()?.to_str()?;
    Some(id.to_string())
}

/// The conversation's store, `<root>/conversations/<id>.db`, beside `<root>/brain`.
pub(crate) fn store_of(path: &Path) -> Option<PathBuf> {
    let brain_dir = path.parent()?.parent()?.parent()?;
    let root = brain_dir.parent()?.parent()?;
    let id = conversation_id(path)?;
    Some(root.join("conversations").join(format!("{id}.db")))
}
