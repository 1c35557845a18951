//! Resources: the store's schema (what `trail sql --schema` prints) and each session as
//! Markdown (trail-render's exporter, redacted).

use rmcp::model::{
    ListResourcesResult, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
use trail_query::{ListRequest, Query};
use trail_render::{ExportOptions, Exporter, Format, Redactor};

use crate::output::{query_error, ToolError};

pub const SCHEMA_URI: &str = "trail://schema";
const SESSION_PREFIX: &str = "trail://session/";
/// Sessions listed per `resources/list` page.
const PAGE: usize = 50;

/// The schema, then the most recent sessions, a page at a time.
pub fn list(q: &Query, cursor: Option<&str>) -> Result<ListResourcesResult, ToolError> {
    let mut resources = Vec::new();
    if cursor.is_none() {
        resources.push(
            Resource::new(SCHEMA_URI, "schema")
                .with_title("trail store schema")
                .with_description(
                    "Every table and view of the store, a line on each column (for the sql tool).",
                )
                .with_mime_type("text/plain"),
        );
    }
    let page = q
        .list(
            &ListRequest {
                limit: PAGE,
                cursor: cursor.map(str::to_string),
                ..ListRequest::default()
            },
            &trail_query::Clock::utc_now(),
        )
        .map_err(query_error)?;
    for s in &page.sessions {
        let title = s.title.as_deref().unwrap_or("(untitled)");
        let title: String = title.chars().take(100).collect();
        resources.push(
            Resource::new(session_uri(&s.id), s.id.clone())
                .with_title(title)
                .with_description(format!(
                    "{} session, {} turns, last active {}",
                    s.source,
                    s.turns,
                    s.updated_at.as_deref().unwrap_or("?")
                ))
                .with_mime_type("text/markdown"),
        );
    }
    let mut result = ListResourcesResult::with_all_items(resources);
    result.next_cursor = page.next_cursor;
    Ok(result)
}

/// Any session by id (or unique prefix).
pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{SESSION_PREFIX}{{id}}"), "session")
            .with_title("A session as Markdown")
            .with_description(
                "One session's transcript as Markdown, secrets redacted; id or unique prefix.",
            )
            .with_mime_type("text/markdown"),
    ]
}

pub fn read(q: &Query, uri: &str, redactor: &Redactor) -> Result<ReadResourceResult, ToolError> {
    if uri == SCHEMA_URI {
        let text = q.schema_text().map_err(query_error)?;
        return Ok(ReadResourceResult::new(vec![ResourceContents::text(
            text, uri,
        )
        .with_mime_type("text/plain")]));
    }
    let Some(id) = uri.strip_prefix(SESSION_PREFIX) else {
        return Err(ToolError(format!(
            "unknown resource {uri:?}: trail serves {SCHEMA_URI} and {SESSION_PREFIX}ID"
        )));
    };
    let id = percent_decode(id).ok_or_else(|| ToolError(format!("{uri:?} is not a valid URI")))?;
    let session = q.session(&id).map_err(query_error)?;
    let rows = q
        .session_store(std::slice::from_ref(&session.id))
        .map_err(query_error)?;
    let mut markdown = Vec::new();
    Exporter::new(
        &rows,
        redactor,
        ExportOptions {
            agent_name: Some(trail_query::registry::name_of),
            ..ExportOptions::default()
        },
    )
    .write_session(&session, Format::Markdown, &mut markdown)
    .map_err(|e| ToolError(e.to_string()))?;
    let text = String::from_utf8_lossy(&markdown).into_owned();
    Ok(ReadResourceResult::new(vec![ResourceContents::text(
        text, uri,
    )
    .with_mime_type("text/markdown")]))
}

/// Returns the URI of a session: its id, with what a URI cannot hold percent-encoded.
pub fn session_uri(id: &str) -> String {
    let mut out = String::from(SESSION_PREFIX);
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_uris_round_trip() {
        for id in ["claude-code:4f1c", "vscode-export:a b/c", "é"] {
            let uri = session_uri(id);
            let back = percent_decode(uri.strip_prefix(SESSION_PREFIX).unwrap()).unwrap();
            assert_eq!(back, id);
        }
        assert_eq!(session_uri("codex:x"), "trail://session/codex:x");
        assert!(percent_decode("%zz").is_none());
    }
}
