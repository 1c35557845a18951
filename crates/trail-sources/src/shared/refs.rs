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

/// Whether `c` is a word character as the regex crate's Unicode `\w` (and so `\b`) sees it.
fn is_word_char(c: char) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    let mut buf = [0u8; 4];
    RE.get_or_init(|| Regex::new(r"\A\w\z").expect("valid regex"))
        .is_match(c.encode_utf8(&mut buf))
}

/// The short form `owner/repo#N`: what the regex
/// `(?:^|[\s(\[])([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9._-]{1,100})#([0-9]{1,7})\b`
/// finds, found from each `#` instead of by a regex. That regex has no literal to look for
/// first and its Unicode `\b` sends non-ASCII text to the slowest engine: it was a third of
/// all indexing time on tool outputs, which hold `#` on most lines. Returns the owner, repo and
/// number of each match, in order.
fn short_refs(text: &str) -> Vec<(&str, &str, &str)> {
    let bytes = text.as_bytes();
    let repo_byte = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    let owner_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'-';
    let mut out = Vec::new();
    for hash in memchr::memchr_iter(b'#', bytes) {
        // The number: 1 to 7 digits, then a word boundary.
        let digits = bytes[hash + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 || digits > 7 {
            continue;
        }
        let end = hash + 1 + digits;
        if text[end..].chars().next().is_some_and(is_word_char) {
            continue;
        }
        // The repo: everything back to a `/` (no `/` in a repo name), 1 to 100 bytes.
        let repo_start = hash
            - bytes[..hash]
                .iter()
                .rev()
                .take_while(|&&b| repo_byte(b))
                .count();
        let repo_len = hash - repo_start;
        if repo_len == 0 || repo_len > 100 || repo_start == 0 || bytes[repo_start - 1] != b'/' {
            continue;
        }
        // The owner: from the start of the text or a space, `(` or `[`, 1 to 39 bytes, not
        // starting with `-`.
        let slash = repo_start - 1;
        let owner_start = slash
            - bytes[..slash]
                .iter()
                .rev()
                .take_while(|&&b| owner_byte(b))
                .count();
        let owner_len = slash - owner_start;
        if owner_len == 0 || owner_len > 39 || bytes[owner_start] == b'-' {
            continue;
        }
        let delimited = owner_start == 0 || {
            let before = text[..owner_start].chars().next_back();
            before.is_some_and(|c| c.is_whitespace() || c == '(' || c == '[')
        };
        if delimited {
            out.push((
                &text[owner_start..slash],
                &text[repo_start..hash],
                &text[hash + 1..end],
            ));
        }
    }
    out
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
        for (owner, repo, num) in short_refs(text) {
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

    /// The regex the short-form scanner replaces, as the oracle it must agree with.
    fn short_refs_by_regex(text: &str) -> Vec<(&str, &str, &str)> {
        let re = Regex::new(
            r"(?:^|[\s(\[])([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9._-]{1,100})#([0-9]{1,7})\b",
        )
        .unwrap();
        re.captures_iter(text)
            .map(|c| {
                let g = |i| c.get(i).unwrap().as_str();
                (g(1), g(2), g(3))
            })
            .collect()
    }

    #[test]
    fn short_form_scanner_edges() {
        for text in [
            "acme/widgets#12",
            "(acme/widgets#12) [a/b#3] x/y#4",
            "a/b#1 c/d#2",
            "a/b#12345678 c/d#1",
            "a/b#1é and a/b#1_ and a/b#1. and a/b#1\u{301}",
            "-a/b#1 .a/b#1 a.b/c#1 a/b/c#1 1/2#3",
            "é a/b#1 \u{3000}a/b#2",
            "# 12 #12 /b#1 a/#1",
        ] {
            assert_eq!(short_refs(text), short_refs_by_regex(text), "{text:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]

        #[test]
        fn short_form_scanner_agrees_with_the_regex(
            text in "([a-c0-9./#_( \\[\t-]|é|\u{301}|\u{3000}|²){0,40}"
        ) {
            proptest::prop_assert_eq!(short_refs(&text), short_refs_by_regex(&text));
        }
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
