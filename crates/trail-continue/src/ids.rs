//! Deterministic ids: the continuation's session id from (original id, target), and record
//! and tool-call ids inside the file from the session id.
//!
//! UUID version 5 is name-based (a hash of a namespace and a name, RFC 9562 section 5.5) with
//! SHA-1. We need the same property, the same name always gives the same id, but not
//! interoperability with other v5 generators, so the hash is the workspace's xxh3-128 over
//! our own namespace; the version (5) and variant bits are set as RFC 9562 lays them out, so
//! every agent's UUID check (Codex's `Uuid::parse_str`, Gemini's and Claude Code's string
//! forms) accepts it.

use xxhash_rust::xxh3::xxh3_128;

use crate::Target;

/// Separates trail's names from any other use of the hash.
const NAMESPACE: &[u8] = b"trail continuation v1\0";

/// Returns a version-5-shaped UUID (lowercase, hyphenated) hashed from `parts`.
pub fn name_uuid(parts: &[&str]) -> String {
    let mut buf = Vec::with_capacity(64);
    buf.extend_from_slice(NAMESPACE);
    for p in parts {
        buf.extend_from_slice(p.as_bytes());
        buf.push(0);
    }
    let mut b = xxh3_128(&buf).to_be_bytes();
    b[6] = (b[6] & 0x0f) | 0x50;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// The id of the continuation of `original` in `target`; `salt` is empty unless `--fresh`.
pub fn continuation_id(original: &str, target: Target, salt: &str) -> String {
    name_uuid(&[original, target.as_str(), salt])
}

/// A record's id inside a continuation (Claude `uuid`, Gemini message `id`).
pub fn record_id(session: &str, n: usize) -> String {
    name_uuid(&[session, "record", &n.to_string()])
}

/// Returns `s` when it is a valid tool-call id for Anthropic's API (`^[a-zA-Z0-9_-]+$`), else a
/// stable one derived from it.
pub fn tool_id(session: &str, s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return s.to_string();
    }
    format!(
        "toolu_trail_{}",
        name_uuid(&[session, "tool", s]).replace('-', "")
    )
}

/// Returns a tool name both APIs accept (`^[a-zA-Z0-9_-]{1,64}$`): other characters become
/// `_` (MCP names like `mcp__server__tool` pass unchanged).
pub fn tool_name(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if out.is_empty() {
        out.push_str("tool");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_distinct_and_uuid_shaped() {
        let a = continuation_id("7c1e2f40", Target::Codex, "");
        assert_eq!(a, continuation_id("7c1e2f40", Target::Codex, ""));
        assert_ne!(a, continuation_id("7c1e2f40", Target::ClaudeCode, ""));
        assert_ne!(a, continuation_id("7c1e2f40", Target::Codex, "1"));
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "5", "version nibble: {a}");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "variant: {a}");
        assert_eq!(tool_id("s", "toolu_01A-b"), "toolu_01A-b");
        assert!(tool_id("s", "read_file-17.3").starts_with("toolu_trail_"));
        assert_eq!(
            tool_name("mcp__github__get_issue"),
            "mcp__github__get_issue"
        );
        assert_eq!(tool_name("web.search"), "web_search");
        assert_eq!(tool_name(""), "tool");
    }
}
