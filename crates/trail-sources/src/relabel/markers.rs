//! The folders that tell a relabelled agent's files from Codex's and Claude Code's, apart from
//! the relabels themselves: Codex and Claude Code read them to leave such files alone, and the
//! relabels read Codex and Claude Code, so the rule lives below both (no import cycle).

use std::path::Path;

use trail_model::SourceKind;

/// TraeX's folder.
pub(super) const TRAEX: &[&str] = &[".trae"];
/// OpenClaude's folder.
pub(super) const OPENCLAUDE: &[&str] = &[".openclaude"];
/// Claude Cowork's folder.
pub(super) const CLAUDE_COWORK: &[&str] = &["local-agent-mode-sessions"];

/// Every relabel's kind with its folders.
const ALL: [(SourceKind, &[&str]); 3] = [
    (SourceKind::Traex, TRAEX),
    (SourceKind::Openclaude, OPENCLAUDE),
    (SourceKind::ClaudeCowork, CLAUDE_COWORK),
];

/// Returns the relabelled agent whose folder `path` sits in, if any: Codex and Claude Code do
/// not claim such files when they are given by path.
pub fn claimed(path: &Path) -> Option<SourceKind> {
    ALL.iter()
        .find(|(_, markers)| has_marker(markers, path))
        .map(|(kind, _)| *kind)
}

/// Like [`claimed`], and also by the file's first bytes (a TraeX rollout outside `~/.trae`).
pub fn claimed_by(path: &Path, head: &[u8]) -> Option<SourceKind> {
    claimed(path).or_else(|| is_trae_rollout(head).then_some(SourceKind::Traex))
}

/// Whether a rollout's `session_meta` names TRAE CLI's model provider (`trae`). Read as bytes:
/// the line may be longer than the head (base instructions follow the provider), and TRAE CLI
/// writes compact JSON as Codex does.
pub(super) fn is_trae_rollout(head: &[u8]) -> bool {
    let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let has = |needle: &[u8]| first.windows(needle.len()).any(|w| w == needle);
    has(br#""type":"session_meta""#) && has(br#""model_provider":"trae""#)
}

/// Whether a component of `path` is one of `markers`.
pub(super) fn has_marker(markers: &[&str], path: &Path) -> bool {
    path.components()
        .any(|c| markers.iter().any(|m| c.as_os_str() == *m))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn every_relabel_is_claimed_by_its_folder() {
        for r in super::super::RELABELS {
            let p = PathBuf::from("/home/u").join(r.markers[0]).join("s.jsonl");
            assert_eq!(claimed(&p), Some(r.kind));
        }
        assert_eq!(claimed(Path::new("/home/u/.codex/s.jsonl")), None);
    }
}
