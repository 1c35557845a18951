//! The line a continued session starts with, naming the session it continues.
//!
//! `trail resume ID --in AGENT` writes a session's conversation as a new session in another
//! agent's format; its first prompt begins with [`marker_line`]. When trail later indexes that
//! session, the store reads the line back ([`parse_marker`]) and links the two sessions both
//! ways. The link lives in the agent's own file rather than in trail's store, so it survives a
//! store rebuilt from scratch, and it needs no field the target agent does not know: every
//! format can hold a line of prompt text.

/// What a continued session's first line says about its origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinuedFrom {
    /// The original session's source (`claude-code`, `codex`...).
    pub source: String,
    /// The original session's id in the store.
    pub session_id: String,
}

const PREFIX: &str = "Continued from ";
const MIDDLE: &str = " session ";
const SUFFIX: &str = " (trail)";

/// Returns the first line of a continuation: `Continued from <source> session <id> (trail)`.
pub fn marker_line(source: &str, session_id: &str) -> String {
    format!("{PREFIX}{source}{MIDDLE}{session_id}{SUFFIX}")
}

/// Reads the marker from the first line of `text`, if it is one.
pub fn parse_marker(text: &str) -> Option<ContinuedFrom> {
    let first = text.lines().next()?.trim_end();
    let rest = first.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
    let (source, session_id) = rest.split_once(MIDDLE)?;
    let valid = |s: &str| !s.is_empty() && !s.contains(char::is_whitespace);
    (valid(source) && valid(session_id)).then(|| ContinuedFrom {
        source: source.to_string(),
        session_id: session_id.to_string(),
    })
}

/// Returns `text` without its marker line (and the blank line after it), for comparing a
/// continuation's first prompt with the original's.
pub fn strip_marker(text: &str) -> &str {
    if parse_marker(text).is_none() {
        return text;
    }
    let rest = text.split_once('\n').map_or("", |(_, r)| r);
    rest.strip_prefix('\n').unwrap_or(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_round_trips_and_rejects_lookalikes() {
        let line = marker_line("claude-code", "7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f");
        let text = format!("{line}\n\nfix the test");
        assert_eq!(
            parse_marker(&text),
            Some(ContinuedFrom {
                source: "claude-code".into(),
                session_id: "7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f".into()
            })
        );
        assert_eq!(strip_marker(&text), "fix the test");
        assert_eq!(strip_marker("fix the test"), "fix the test");
        for bad in [
            "Continued from claude-code session abc",
            "Continued from  session abc (trail)",
            "Continued from a b session c (trail)",
            "I continued from codex session x (trail)",
        ] {
            assert_eq!(parse_marker(bad), None, "{bad}");
        }
    }
}
