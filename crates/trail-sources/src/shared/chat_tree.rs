//! Building a session whose records form a tree through an id and a parent id (Pi, Qwen Code,
//! Factory Droid): every record is kept as messages, the conversation (turns) is the path from
//! the active leaf up to its root, and messages on other branches are kept off the main chain.
//!
//! Messages carry their record's id in `native_id` and its parent's in `parent_native_id`
//! (several messages split from one record share both). Messages without an id (headers,
//! bookkeeping lines) are on the main chain.

use std::collections::{HashMap, HashSet};

use trail_model::turns::{assign_turn_indexes, build_turns};
use trail_model::Session;

use crate::linear::{derive_files_and_refs, PendingFile};

/// Marks the path from `leaf` (a record id) to its root as the main chain, assigns turns to
/// it, builds the turn rows, and derives files and refs. With no `leaf` (or an unknown one)
/// every message is on the main chain, in file order.
pub(crate) fn finish_tree_session(
    session: &mut Session,
    leaf: Option<&str>,
    files: Vec<PendingFile>,
    shell_tools: &[&str],
) {
    let chain = leaf.and_then(|l| chain_of(session, l));
    let mut order = Vec::new();
    for (i, m) in session.messages.iter_mut().enumerate() {
        m.on_main_chain = match (&chain, &m.native_id) {
            (Some(chain), Some(id)) => chain.contains(id.as_str()),
            _ => true,
        };
        m.turn_index = None;
        if m.on_main_chain {
            order.push(i);
        }
    }
    session.turn_count = assign_turn_indexes(&mut session.messages, &order);
    session.turns = build_turns(&session.messages);
    derive_files_and_refs(session, files, shell_tools);
}

/// Returns the record ids from `leaf` up to its root, or `None` when `leaf` is not a record
/// of the session. A parent loop stops the walk.
fn chain_of(session: &Session, leaf: &str) -> Option<HashSet<String>> {
    let mut parent: HashMap<&str, Option<&str>> = HashMap::new();
    for m in &session.messages {
        if let Some(id) = m.native_id.as_deref() {
            parent
                .entry(id)
                .or_insert_with(|| m.parent_native_id.as_deref());
        }
    }
    if !parent.contains_key(leaf) {
        return None;
    }
    let mut chain = HashSet::new();
    let mut at = Some(leaf);
    while let Some(id) = at {
        if !chain.insert(id.to_string()) {
            break;
        }
        at = parent.get(id).copied().flatten();
    }
    Some(chain)
}

#[cfg(test)]
mod tests {
    use trail_model::{Message, MessageKind, Role, SessionId, SessionMeta, SourceKind};

    use super::*;

    fn msg(id: &str, parent: Option<&str>, kind: MessageKind, text: &str) -> Message {
        Message::new(
            if kind == MessageKind::Prompt {
                Role::User
            } else {
                Role::Assistant
            },
            kind,
            text,
        )
        .with_native_id(id.to_string())
        .with_parent(parent.map(str::to_string))
    }

    #[test]
    fn the_leaf_path_is_the_conversation_and_other_branches_are_kept_aside() {
        let meta = SessionMeta::new(SessionId::new("s"), SourceKind::ClaudeCode, "s");
        let mut s = Session::new(meta);
        s.messages = vec![
            msg("a", None, MessageKind::Prompt, "first"),
            msg("b", Some("a"), MessageKind::Text, "abandoned"),
            msg("c", Some("a"), MessageKind::Text, "kept"),
            msg("d", Some("c"), MessageKind::Prompt, "second"),
        ];
        finish_tree_session(&mut s, Some("d"), Vec::new(), &[]);
        let on: Vec<bool> = s.messages.iter().map(|m| m.on_main_chain).collect();
        assert_eq!(on, [true, false, true, true]);
        assert_eq!(s.turn_count, 2);
        assert_eq!(s.turns[0].assistant_response.as_deref(), Some("kept"));
        assert_eq!(s.messages[1].turn_index, None);
    }

    #[test]
    fn a_parent_loop_ends_the_walk() {
        let meta = SessionMeta::new(SessionId::new("s"), SourceKind::ClaudeCode, "s");
        let mut s = Session::new(meta);
        s.messages = vec![
            msg("a", Some("b"), MessageKind::Prompt, "x"),
            msg("b", Some("a"), MessageKind::Text, "y"),
        ];
        finish_tree_session(&mut s, Some("b"), Vec::new(), &[]);
        assert!(s.messages.iter().all(|m| m.on_main_chain));
        assert_eq!(s.turn_count, 1);
    }
}
