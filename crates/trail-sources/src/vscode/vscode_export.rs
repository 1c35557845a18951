//! VS Code "Chat: Export Chat..." files (`chat.json` by default).
//!
//! An export is one pretty-printed JSON object `{requesterUsername?, responderUsername,
//! initialLocation, requests: [...]}` with the same request objects a stored session holds, but
//! no session id, title, version or dates. Files are named by the user, so discovery only lists
//! files under roots given explicitly (`trail import FILE`).
//!
//! The session id is derived from the content: `vscode-export:` followed by the XXH3-128 hash of
//! the file's bytes (hex), so importing the same file twice adds nothing. Requests are turned
//! into messages by the code [`crate::copilot_vscode`] uses for stored sessions.

use std::path::{Path, PathBuf};

use serde_json::Value;
use trail_model::{SessionId, SessionMeta, SourceKind};

use super::copilot_vscode_requests::build_session;
use crate::copilot_vscode::{has_version_before_requests, in_session_folder, looks_like_chat_json};
use crate::{discover, whole, FileParse, ParseRequest, Source, SourceError};

/// The prefix of every export session id.
pub const ID_PREFIX: &str = "vscode-export:";

/// Chats exported from VS Code with "Export Chat".
pub struct VscodeExport;

/// Returns the session id of an export with these bytes.
pub fn session_id_for(bytes: &[u8]) -> String {
    format!("{ID_PREFIX}{}", content_hash(bytes))
}

/// The hash of an export's content, the same whatever its line ends and byte-order mark (a
/// copy saved by a Windows editor is the same export).
fn content_hash(bytes: &[u8]) -> String {
    let bytes = crate::whole::strip_bom(bytes);
    let hash = if memchr::memchr(b'\r', bytes).is_some() {
        let mut lf = Vec::with_capacity(bytes.len());
        let mut rest = bytes;
        while let Some(i) = memchr::memmem::find(rest, b"\r\n") {
            lf.extend_from_slice(&rest[..i]);
            rest = &rest[i + 1..];
        }
        lf.extend_from_slice(rest);
        xxhash_rust::xxh3::xxh3_128(&lf)
    } else {
        xxhash_rust::xxh3::xxh3_128(bytes)
    };
    format!("{hash:032x}")
}

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 1: the first version.
/// 2: a `runSubagent` subagent's tools become its own linked session (issue 21).
/// 3: a leading BOM is skipped (and CRLF line ends do not change the id); bytes after the
///    document keep it, as a problem; token counts are read field by field (issue 40).
/// 4: the custom agent of a request or a subagent (`agent_description`, issue 45).
pub const PARSER_VERSION: u32 = 4;

impl Source for VscodeExport {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::VscodeExport
    }

    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        // Only explicit roots: a file is listed as is, a folder is searched for JSON files that
        // look like exports.
        let mut out = Vec::new();
        for root in roots {
            if root.is_file() {
                out.push(root.clone());
                continue;
            }
            out.extend(discover::walk_files(root, 8, |p| {
                discover::has_extension(p, "json") && head_is_export(p)
            }));
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        discover::has_extension(path, "json")
            && !in_session_folder(path)
            && looks_like_chat_json(head)
            && !has_version_before_requests(head)
    }

    fn appendable(&self, _path: &Path) -> bool {
        false
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        let path = request.path;
        let bytes = std::fs::read(path).map_err(|e| SourceError::io(path, e))?;
        let doc = whole::parse_json(path, &bytes)
            .map_err(|e| SourceError::format(path, format!("not a VS Code chat export: {e}")))?;
        let root = doc.value;
        if !matches!(root.get("requests"), Some(Value::Array(_))) {
            return Err(SourceError::format(
                path,
                "not a VS Code chat export: no `requests` array",
            ));
        }
        let hash = content_hash(&bytes);
        let meta = SessionMeta::new(
            SessionId::new(format!("{ID_PREFIX}{hash}")),
            SourceKind::VscodeExport,
            hash,
        );
        let mut out = FileParse {
            bytes_parsed: bytes.len() as u64,
            bytes_read: bytes.len() as u64,
            issues: doc.trailing.into_iter().collect(),
            ..FileParse::default()
        };
        let (session, notes) =
            build_session(meta, &root, &path.display().to_string(), &[], &mut out);
        out.notes.extend(notes);
        out.sessions.push(session);
        Ok(out)
    }
}

/// Reads a file's first 64 KiB (without a BOM) and checks the export shape.
fn head_is_export(path: &Path) -> bool {
    VscodeExport.detect(path, &whole::read_head(path))
}
