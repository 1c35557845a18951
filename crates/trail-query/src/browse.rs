//! What an interactive browser needs beyond `list` and `search`: a read-only handle for a
//! background thread, how many forks and subagents hang under each listed session, and the
//! filters a person types into a search box (`source:codex repo:web since:7d fix the bug`).

use std::collections::HashMap;

use serde::Serialize;

use crate::sessions::SessionFilter;
use crate::{Query, Result};

impl Query {
    /// Returns, for each of `ids` that has any, how many sessions descend from it (subagents,
    /// forks, their own subagents), so a list of root sessions can show `+N` beside each.
    pub fn descendant_counts(&self, ids: &[String]) -> Result<HashMap<String, i64>> {
        Ok(self
            .reader(|| crate::Need::SessionTable)?
            .descendant_counts(ids)?)
    }
}

/// A search box's text split into filters and the words to search for.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct InlineFilters {
    pub filter: SessionFilter,
    /// `role:user|assistant|tool` (searches only).
    pub role: Option<String>,
    /// The rest: what to search for (empty: list sessions).
    pub text: String,
}

impl InlineFilters {
    /// Splits `source:codex repo:web since:7d branch:main fix the bug` into filters and the
    /// words left (`fix the bug`). Known keys: `source`, `repo`, `cwd` (or `folder`),
    /// `branch`, `model`, `since`, `until`, `role`. A word whose key is not one of them
    /// (`http://x`, `foo:bar`) stays a search word, and so does a key with no value (`repo:`
    /// while it is being typed). A later key replaces an earlier one. Values are checked
    /// where they are used ([`Query::list`], [`Query::search`]), with the same messages as
    /// every other frontend.
    pub fn parse(text: &str) -> InlineFilters {
        let mut out = InlineFilters::default();
        let mut words: Vec<&str> = Vec::new();
        for word in text.split_whitespace() {
            let Some((key, value)) = word.split_once(':') else {
                words.push(word);
                continue;
            };
            let f = &mut out.filter;
            let slot = match key.to_ascii_lowercase().as_str() {
                "source" => &mut f.source,
                "repo" => &mut f.repo,
                "cwd" | "folder" => &mut f.cwd,
                "branch" => &mut f.branch,
                "model" => &mut f.model,
                "since" => &mut f.since,
                "until" => &mut f.until,
                "role" => &mut out.role,
                _ => {
                    words.push(word);
                    continue;
                }
            };
            if value.is_empty() {
                continue;
            }
            *slot = Some(value.to_string());
        }
        out.text = words.join(" ");
        out
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use trail_store::Store;

    use super::*;
    use crate::QueryError;

    #[test]
    fn filters_are_split_from_the_words() {
        let p = InlineFilters::parse("source:codex  fix repo:web since:7d the branch:main bug");
        assert_eq!(p.text, "fix the bug");
        assert_eq!(p.filter.source.as_deref(), Some("codex"));
        assert_eq!(p.filter.repo.as_deref(), Some("web"));
        assert_eq!(p.filter.since.as_deref(), Some("7d"));
        assert_eq!(p.filter.branch.as_deref(), Some("main"));
        assert_eq!(p.role, None);

        let p = InlineFilters::parse("http://x.test/a foo:bar role:tool folder:/src Model:opus");
        assert_eq!(p.text, "http://x.test/a foo:bar");
        assert_eq!(p.role.as_deref(), Some("tool"));
        assert_eq!(p.filter.cwd.as_deref(), Some("/src"));
        assert_eq!(p.filter.model.as_deref(), Some("opus"));

        // A key being typed filters nothing yet and searches nothing.
        let p = InlineFilters::parse("timeout repo:");
        assert_eq!(p.text, "timeout");
        assert_eq!(p.filter, SessionFilter::default());
        assert_eq!(InlineFilters::parse("").text, "");
    }

    #[test]
    fn subagents_count_under_their_root_and_read_only_opens_no_new_store() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        assert!(matches!(Query::open(&path), Err(QueryError::NoStore(_))));
        assert!(!path.exists(), "a read-only open created a store");
        let home = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/home");
        let mut store = Store::open(&path).unwrap();
        let opts = trail_ingest::IndexOptions::one_source(
            trail_model::SourceKind::ClaudeCode,
            home.join(".claude/projects"),
        );
        trail_ingest::index(&mut store, &opts, &trail_ingest::NoProgress).unwrap();
        drop(store);

        let q = Query::open(&path).unwrap();
        let root = q.resolve_id("7c1e2f40").unwrap();
        let subagents = q.children(&root).unwrap();
        assert!(!subagents.is_empty(), "the sample has a subagent");
        let counts = q
            .descendant_counts(&[root.clone(), subagents[0].id.to_string()])
            .unwrap();
        assert_eq!(counts.get(&root), Some(&(subagents.len() as i64)));
        // A leaf has nothing below it and is left out.
        assert_eq!(counts.get(subagents[0].id.as_str()), None);

        // A turn range reads exactly the messages of those turns.
        let whole = q
            .detail(&crate::DetailRequest {
                id: root.clone(),
                ..Default::default()
            })
            .unwrap();
        let one = q
            .detail(&crate::DetailRequest {
                id: root.clone(),
                from_turn: Some(1),
                to_turn: Some(1),
            })
            .unwrap();
        let expected: Vec<_> = whole
            .messages
            .iter()
            .filter(|m| m.turn_index == Some(1))
            .cloned()
            .collect();
        assert!(!expected.is_empty());
        assert_eq!(one.messages, expected);
        assert_eq!(one.subagents, whole.subagents);
    }
}
