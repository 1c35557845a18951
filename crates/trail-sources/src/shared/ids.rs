//! Session ids shared by the formats: the agent's UUID where it has one, else
//! `<source>:<native id>` (DESIGN section 3).

use trail_model::{SessionId, SourceKind};

/// Returns whether `s` is a UUID in its 8-4-4-4-12 hex form.
pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// Returns the store id for a native session id: the UUID lowercased, else
/// `<source>:<native>`.
pub fn session_id(source: SourceKind, native: &str) -> SessionId {
    if is_uuid(native) {
        SessionId::new(native.to_ascii_lowercase())
    } else {
        SessionId::new(format!("{}:{native}", source.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_and_fallbacks() {
        assert!(is_uuid("0f8fad5b-d9cb-469f-a165-70867728950e"));
        assert!(!is_uuid("copilot_stage0_small"));
        assert_eq!(
            session_id(SourceKind::Codex, "0F8FAD5B-D9CB-469F-A165-70867728950E").as_str(),
            "0f8fad5b-d9cb-469f-a165-70867728950e"
        );
        assert_eq!(session_id(SourceKind::Cursor, "x1").as_str(), "cursor:x1");
    }
}
