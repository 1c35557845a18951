//! Builders for [`Message`]: a message is made from its role and kind (and text), so no
//! parser can forget either; everything else is optional and set by name.
//!
//! Messages split from one agent record share its ids, time, model and branch: a parser
//! fills an [`Origin`] once per record and makes each message from it.

use crate::{Message, MessageKind, PromptSource, Role};

/// What the messages split from one record share: the record's ids, time, model and whether
/// it lies on a sidechain.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// The agent's own id for the record.
    pub native_id: Option<String>,
    /// The effective parent record's native id (tree-shaped formats).
    pub parent_native_id: Option<String>,
    /// ISO-8601 UTC.
    pub timestamp: Option<String>,
    pub model: Option<String>,
    pub is_sidechain: bool,
}

impl Origin {
    /// Returns a message of `role` and `kind` carrying this record's fields.
    pub fn message(&self, role: Role, kind: MessageKind, text: impl Into<String>) -> Message {
        Message {
            native_id: self.native_id.clone(),
            parent_native_id: self.parent_native_id.clone(),
            timestamp: self.timestamp.clone(),
            model: self.model.clone(),
            is_sidechain: self.is_sidechain,
            ..Message::new(role, kind, text)
        }
    }

    /// Returns the origin of a message: its ids, time, model and sidechain flag.
    pub fn of(m: &Message) -> Origin {
        Origin {
            native_id: m.native_id.clone(),
            parent_native_id: m.parent_native_id.clone(),
            timestamp: m.timestamp.clone(),
            model: m.model.clone(),
            is_sidechain: m.is_sidechain,
        }
    }
}

impl Message {
    /// Returns a message of `role` and `kind` with `text`; every other field is empty (seq 0,
    /// off the main chain until turns are assigned).
    pub fn new(role: Role, kind: MessageKind, text: impl Into<String>) -> Message {
        Message {
            role: Some(role),
            kind: Some(kind),
            text: text.into(),
            ..Message::default()
        }
    }

    /// Returns a message read back from the store, whose role and kind columns may hold a
    /// value this version does not know (read as `None`).
    pub fn from_db(
        seq: u32,
        role: Option<Role>,
        kind: Option<MessageKind>,
        text: impl Into<String>,
    ) -> Message {
        Message {
            seq,
            role,
            kind,
            text: text.into(),
            ..Message::default()
        }
    }

    /// Returns what a later record can refer to of this message, with `text` for its text: its
    /// seq, ids, role, kind, tool name and call id, subagent, flags and prompt source (no
    /// tool input or output, model, time, turn or extra).
    pub fn outline(&self, text: impl Into<String>) -> Message {
        Message {
            seq: self.seq,
            native_id: self.native_id.clone(),
            parent_native_id: self.parent_native_id.clone(),
            role: self.role,
            kind: self.kind,
            text: text.into(),
            tool_name: self.tool_name.clone(),
            tool_call_id: self.tool_call_id.clone(),
            is_error: self.is_error,
            is_sidechain: self.is_sidechain,
            agent_ref: self.agent_ref.clone(),
            prompt_source: self.prompt_source,
            ..Message::default()
        }
    }

    /// Returns a user's prompt.
    pub fn prompt(text: impl Into<String>) -> Message {
        Message::new(Role::User, MessageKind::Prompt, text)
    }

    /// Returns the assistant's answer text.
    pub fn answer(text: impl Into<String>) -> Message {
        Message::new(Role::Assistant, MessageKind::Text, text)
    }

    /// Returns the assistant's reasoning.
    pub fn thinking(text: impl Into<String>) -> Message {
        Message::new(Role::Assistant, MessageKind::Thinking, text)
    }

    /// Returns the assistant's call of tool `name` (no text, id or input yet).
    pub fn tool_call(name: impl Into<Option<String>>) -> Message {
        Message::new(Role::Assistant, MessageKind::ToolCall, "").with_tool_name(name)
    }

    /// Returns a tool's output, joined to its call by `call_id`.
    pub fn tool_result(
        call_id: impl Into<Option<String>>,
        output: impl Into<Option<String>>,
    ) -> Message {
        Message::new(Role::Tool, MessageKind::ToolResult, "")
            .with_call_id(call_id)
            .with_output(output)
    }

    /// Returns the message with the ids, time, model and sidechain flag of `origin`.
    pub fn with_origin(self, origin: &Origin) -> Message {
        Message {
            native_id: origin.native_id.clone(),
            parent_native_id: origin.parent_native_id.clone(),
            timestamp: origin.timestamp.clone(),
            model: origin.model.clone(),
            is_sidechain: origin.is_sidechain,
            ..self
        }
    }

    /// Returns the message with its position in the session.
    pub fn with_seq(mut self, seq: u32) -> Message {
        self.seq = seq;
        self
    }

    /// Returns the message with its readable text.
    pub fn with_text(mut self, text: impl Into<String>) -> Message {
        self.text = text.into();
        self
    }

    /// Returns the message with the agent's id for its record.
    pub fn with_native_id(mut self, id: impl Into<Option<String>>) -> Message {
        self.native_id = id.into();
        self
    }

    /// Returns the message with its parent record's id.
    pub fn with_parent(mut self, id: impl Into<Option<String>>) -> Message {
        self.parent_native_id = id.into();
        self
    }

    /// Returns the message with its time (ISO-8601 UTC).
    pub fn with_timestamp(mut self, ts: impl Into<Option<String>>) -> Message {
        self.timestamp = ts.into();
        self
    }

    /// Returns the message with the model that wrote it.
    pub fn with_model(mut self, model: impl Into<Option<String>>) -> Message {
        self.model = model.into();
        self
    }

    /// Returns the message with the tool it calls or reports on.
    pub fn with_tool_name(mut self, name: impl Into<Option<String>>) -> Message {
        self.tool_name = name.into();
        self
    }

    /// Returns the message with the id joining a tool call to its result.
    pub fn with_call_id(mut self, id: impl Into<Option<String>>) -> Message {
        self.tool_call_id = id.into();
        self
    }

    /// Returns the message with a tool call's input (JSON text).
    pub fn with_input(mut self, input: impl Into<Option<String>>) -> Message {
        self.tool_input = input.into();
        self
    }

    /// Returns the message with a tool's output.
    pub fn with_output(mut self, output: impl Into<Option<String>>) -> Message {
        self.tool_output = output.into();
        self
    }

    /// Returns the message marked as an error, or not.
    pub fn with_error(mut self, is_error: bool) -> Message {
        self.is_error = is_error;
        self
    }

    /// Returns the message marked as on a sidechain, or not.
    pub fn with_sidechain(mut self, is_sidechain: bool) -> Message {
        self.is_sidechain = is_sidechain;
        self
    }

    /// Returns the message marked as on the main chain, or not.
    pub fn with_main_chain(mut self, on_main_chain: bool) -> Message {
        self.on_main_chain = on_main_chain;
        self
    }

    /// Returns the message with the turn it belongs to.
    pub fn with_turn(mut self, turn_index: impl Into<Option<u32>>) -> Message {
        self.turn_index = turn_index.into();
        self
    }

    /// Returns the message with the subagent it spawned or reports on.
    pub fn with_agent_ref(mut self, agent_ref: impl Into<Option<String>>) -> Message {
        self.agent_ref = agent_ref.into();
        self
    }

    /// Returns the message with opaque JSON kept for what it does not model.
    pub fn with_extra(mut self, extra: impl Into<Option<String>>) -> Message {
        self.extra = extra.into();
        self
    }

    /// Returns the message with who wrote it (prompts).
    pub fn with_prompt_source(mut self, source: impl Into<Option<PromptSource>>) -> Message {
        self.prompt_source = source.into();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_has_its_role_and_kind_and_its_origin() {
        let origin = Origin {
            native_id: Some("n1".into()),
            parent_native_id: Some("p0".into()),
            timestamp: Some("2026-01-01T00:00:00Z".into()),
            model: Some("m".into()),
            is_sidechain: true,
        };
        let m = origin
            .message(Role::Assistant, MessageKind::ToolCall, "read")
            .with_tool_name("Read".to_string())
            .with_call_id("c1".to_string());
        assert_eq!(m.role, Some(Role::Assistant));
        assert_eq!(m.kind, Some(MessageKind::ToolCall));
        assert_eq!(m.text, "read");
        assert_eq!(m.native_id.as_deref(), Some("n1"));
        assert_eq!(m.parent_native_id.as_deref(), Some("p0"));
        assert_eq!(m.model.as_deref(), Some("m"));
        assert!(m.is_sidechain && !m.on_main_chain);
        assert_eq!(m.tool_call_id.as_deref(), Some("c1"));
        assert_eq!(Origin::of(&m), origin);
    }

    #[test]
    fn the_shorthands_name_their_role_and_kind() {
        let pairs = [
            (Message::prompt("a"), Role::User, MessageKind::Prompt),
            (Message::answer("a"), Role::Assistant, MessageKind::Text),
            (
                Message::thinking("a"),
                Role::Assistant,
                MessageKind::Thinking,
            ),
            (
                Message::tool_call(None),
                Role::Assistant,
                MessageKind::ToolCall,
            ),
            (
                Message::tool_result(None, None),
                Role::Tool,
                MessageKind::ToolResult,
            ),
        ];
        for (m, role, kind) in pairs {
            assert_eq!((m.role(), m.kind()), (role, kind));
        }
    }
}
