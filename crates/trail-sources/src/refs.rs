//! Extraction of `session_refs` (pull requests, issues, commits) from text.
//!
//! Recognized: GitHub URLs (`/pull/N`, `/issues/N`, `/commit/SHA`), `owner/repo#N`, and
//! git's commit summary line (`[main 1a2b3c4] subject`), which only tool output carries.

use std::sync::OnceLock;

use regex::Regex;
use trail_model::{RefType, SessionRef};

fn url_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"https?://github\.com/([A-Za-z0-9][A-Za-z0-9-]*)/([A-Za-z0-9._-]+)/(pull|issues|commit)/([0-9a-fA-F]+)",
        )
        .expect("valid regex")
    })
}

fn short_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?:^|[\s(\[])([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9._-]{1,100})#([0-9]{1,7})\b",
        )
        .expect("valid regex")
    })
}

fn git_commit_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?m)^\[[^\]\s]+(?: \(root-commit\))? ([0-9a-f]{7,40})\] ")
            .expect("valid regex")
    })
}

/// Returns the refs mentioned in `text` as `session_refs` rows of one turn and time.
pub fn session_refs(
    text: &str,
    git_output: bool,
    turn_index: Option<u32>,
    created_at: Option<&str>,
) -> impl Iterator<Item = SessionRef> {
    let created_at = created_at.map(str::to_string);
    extract(text, git_output)
        .into_iter()
        .map(move |(ref_type, value)| SessionRef {
            ref_type,
            value,
            turn_index,
            created_at: created_at.clone(),
        })
}

/// The key two refs of a session are the same by.
pub fn key(r: &SessionRef) -> String {
    format!("{}:{}", r.ref_type.as_str(), r.value)
}

/// Returns the refs mentioned in `text`, in order of appearance (may repeat).
/// `git_output` enables git's `[branch sha]` commit line, which only makes sense in tool output.
pub fn extract(text: &str, git_output: bool) -> Vec<(RefType, String)> {
    let mut out = Vec::new();
    if text.contains("github.com/") {
        for c in url_re().captures_iter(text) {
            let (owner, repo, kind, num) = (&c[1], &c[2], &c[3], &c[4]);
            let repo = repo.trim_end_matches(".git");
            match kind {
                "pull" if num.bytes().all(|b| b.is_ascii_digit()) => {
                    out.push((RefType::Pr, format!("{owner}/{repo}#{num}")))
                }
                "issues" if num.bytes().all(|b| b.is_ascii_digit()) => {
                    out.push((RefType::Issue, format!("{owner}/{repo}#{num}")))
                }
                "commit" if num.len() >= 7 => out.push((RefType::Commit, num.to_ascii_lowercase())),
                _ => {}
            }
        }
    }
    if text.contains('#') {
        for c in short_re().captures_iter(text) {
            let (owner, repo, num) = (&c[1], &c[2], &c[3]);
            // File paths such as `src/lib.rs#L10` are not refs; a repo name has no dot-extension
            // that looks like code.
            if repo.contains('/') || owner.chars().all(|ch| ch.is_ascii_digit()) {
                continue;
            }
            out.push((RefType::Issue, format!("{owner}/{repo}#{num}")));
        }
    }
    if git_output && text.contains("] ") {
        for c in git_commit_re().captures_iter(text) {
            out.push((RefType::Commit, c[1].to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_urls() {
        let refs = extract(
            "see https://github.com/acme/widgets/pull/42 and https://github.com/acme/widgets/issues/7 \
             and https://github.com/acme/widgets/commit/1A2B3C4D5E",
            false,
        );
        assert_eq!(
            refs,
            vec![
                (RefType::Pr, "acme/widgets#42".into()),
                (RefType::Issue, "acme/widgets#7".into()),
                (RefType::Commit, "1a2b3c4d5e".into()),
            ]
        );
    }

    #[test]
    fn short_form_and_git_output() {
        assert_eq!(
            extract("fixes acme/widgets#12.", false),
            vec![(RefType::Issue, "acme/widgets#12".into())]
        );
        assert_eq!(
            extract("[main 1a2b3c4] Fix the parser\n 1 file changed", true),
            vec![(RefType::Commit, "1a2b3c4".into())]
        );
        assert_eq!(
            extract("[feature/x (root-commit) abcdef0] init", true),
            vec![(RefType::Commit, "abcdef0".into())]
        );
        assert!(extract("[main 1a2b3c4] Fix", false).is_empty());
        assert!(extract("color #123456 and #5", false).is_empty());
    }
}
