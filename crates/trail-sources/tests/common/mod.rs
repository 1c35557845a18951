//! Helpers shared by the parser integration tests.

#![allow(dead_code, clippy::print_stderr)]

use std::path::{Path, PathBuf};

use trail_model::{MessageKind, Session};
use trail_sources::{FileParse, ParseRequest, Source, SourceError};

/// Returns `../shared/corpus/<format>` beside the workspace (or under `$TRAIL_SHARED`), or
/// `None` after saying the test is skipped: CI has `../shared`, a bare clone may not.
pub fn shared_corpus(format: &str) -> Option<PathBuf> {
    let base = match std::env::var_os("TRAIL_SHARED") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    };
    let dir = base.join("corpus").join(format);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipped: shared corpus {} not found", dir.display());
        None
    }
}

/// Returns the repo's own fixtures folder for a format.
pub fn fixtures(format: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format)
}

/// Lists the files of a folder, sorted.
pub fn files_in(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

/// Parses a whole file with `source`: no resume state, no byte limit.
pub fn parse_whole(source: &dyn Source, path: &Path) -> Result<FileParse, SourceError> {
    source.parse(ParseRequest {
        max_bytes: None,
        path,
        resume: None,
    })
}

/// Counts a session's messages of one kind.
pub fn count_kind(s: &Session, kind: MessageKind) -> usize {
    s.messages.iter().filter(|m| m.kind() == kind).count()
}

/// The one session a parse returned.
pub fn only(fp: &FileParse) -> &Session {
    assert_eq!(fp.sessions.len(), 1);
    &fp.sessions[0]
}

/// The session of a parse whose agent-side id is `id`.
pub fn by_native<'a>(fp: &'a FileParse, id: &str) -> &'a Session {
    fp.sessions
        .iter()
        .find(|s| s.meta.native_id == id)
        .unwrap_or_else(|| panic!("no session {id}"))
}
