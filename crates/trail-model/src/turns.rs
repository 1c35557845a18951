//! Turn building shared by every source: a turn is one prompt and everything the agent did
//! until the next prompt, on the conversation's main chain.

use crate::{Message, MessageKind, Role, Turn};

/// Assigns `turn_index` to the messages at `order` (indices into `messages`, in conversation
/// order). A prompt opens a new turn; messages before the first prompt get no turn.
/// Messages not in `order` are left as they are. Returns the number of turns.
pub fn assign_turn_indexes(messages: &mut [Message], order: &[usize]) -> u32 {
    let mut current: Option<u32> = None;
    let mut count = 0u32;
    for &i in order {
        let m = &mut messages[i];
        if m.kind == Some(MessageKind::Prompt) {
            current = Some(count);
            count += 1;
        }
        m.turn_index = current;
    }
    count
}

/// Separates assistant text blocks inside one turn's `assistant_response`.
pub const RESPONSE_SEPARATOR: &str = "\n\n";

/// Builds Chronicle turns from messages that carry `turn_index` (any order; main-chain
/// messages are taken in `seq` order). `user_message` is the prompt, `assistant_response`
/// joins the assistant's answer text.
pub fn build_turns<'a>(messages: impl IntoIterator<Item = &'a Message>) -> Vec<Turn> {
    let mut selected: Vec<&Message> = messages
        .into_iter()
        .filter(|m| m.on_main_chain && m.turn_index.is_some())
        .collect();
    selected.sort_by_key(|m| (m.turn_index, m.seq));
    let mut turns: Vec<Turn> = Vec::new();
    for m in selected {
        let idx = m.turn_index.unwrap_or_default();
        if turns.last().is_none_or(|t| t.index != idx) {
            turns.push(Turn {
                index: idx,
                timestamp: m.timestamp.clone(),
                ..Turn::default()
            });
        }
        let turn = turns.last_mut().expect("pushed above");
        match (m.kind(), m.role()) {
            (MessageKind::Prompt, _) if turn.user_message.is_none() => {
                turn.user_message = Some(m.text.clone());
                if m.timestamp.is_some() {
                    turn.timestamp = m.timestamp.clone();
                }
            }
            (MessageKind::Text, Role::Assistant) if !m.text.trim().is_empty() => {
                match &mut turn.assistant_response {
                    Some(r) => {
                        r.push_str(RESPONSE_SEPARATOR);
                        r.push_str(&m.text);
                    }
                    None => turn.assistant_response = Some(m.text.clone()),
                }
            }
            _ => {}
        }
    }
    turns
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(seq: u32, role: Role, kind: MessageKind, text: &str) -> Message {
        Message {
            seq,
            role: Some(role),
            kind: Some(kind),
            text: text.into(),
            on_main_chain: true,
            ..Message::default()
        }
    }

    #[test]
    fn prompts_open_turns_and_text_joins() {
        let mut ms = vec![
            msg(0, Role::System, MessageKind::Meta, "start"),
            msg(1, Role::User, MessageKind::Prompt, "fix it"),
            msg(2, Role::Assistant, MessageKind::Text, "looking"),
            msg(3, Role::Assistant, MessageKind::ToolCall, ""),
            msg(4, Role::Assistant, MessageKind::Text, "done"),
            msg(5, Role::User, MessageKind::Prompt, "thanks"),
        ];
        let order: Vec<usize> = (0..ms.len()).collect();
        assert_eq!(assign_turn_indexes(&mut ms, &order), 2);
        assert_eq!(ms[0].turn_index, None);
        assert_eq!(ms[4].turn_index, Some(0));
        let turns = build_turns(&ms);
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0].user_message.as_deref(), Some("fix it"));
        assert_eq!(
            turns[0].assistant_response.as_deref(),
            Some("looking\n\ndone")
        );
        assert_eq!(turns[1].assistant_response, None);
    }
}
