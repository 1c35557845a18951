//! The tables a sync copies, with the columns both sides share (the local store's names). The
//! snapshot a read makes copies the same columns back.

/// A table mirrored between the local store and the team store.
pub(crate) struct Mirrored {
    pub name: &'static str,
    /// Columns in the local store's order; `session_id` first for child tables.
    pub columns: &'static [&'static str],
    /// The local integer id (kept on the server for order; a snapshot lets SQLite assign
    /// new ones, inserting rows in this order).
    pub has_id: bool,
}

pub(crate) const SESSIONS: Mirrored = Mirrored {
    name: "sessions",
    columns: &[
        "id",
        "cwd",
        "repository",
        "host_type",
        "branch",
        "summary",
        "created_at",
        "updated_at",
        "source",
        "native_id",
        "agent_version",
        "title_rank",
        "parent_session_id",
        "parent_tool_call_id",
        "parent_agent_ref",
        "source_path",
        "source_missing",
        "models",
        "turn_count",
        "message_count",
        "input_tokens",
        "output_tokens",
        "cache_creation_tokens",
        "cache_read_tokens",
        "indexed_at",
        "metadata",
        "continues_session_id",
        "continues_source",
        "agent_name",
        "agent_description",
    ],
    has_id: false,
};

/// Child tables, in the order they are written (all reference `sessions`).
pub(crate) const CHILDREN: &[Mirrored] = &[
    Mirrored {
        name: "messages",
        columns: &[
            "session_id",
            "id",
            "seq",
            "native_id",
            "parent_native_id",
            "role",
            "kind",
            "tool_name",
            "tool_call_id",
            "is_error",
            "model",
            "timestamp",
            "is_sidechain",
            "on_main_chain",
            "turn_index",
            "agent_ref",
            "prompt_source",
            "text",
            "tool_input",
            "tool_output",
            "extra",
        ],
        has_id: true,
    },
    Mirrored {
        name: "turns",
        columns: &[
            "session_id",
            "id",
            "turn_index",
            "user_message",
            "assistant_response",
            "timestamp",
        ],
        has_id: true,
    },
    Mirrored {
        name: "checkpoints",
        columns: &[
            "session_id",
            "id",
            "checkpoint_number",
            "title",
            "overview",
            "history",
            "work_done",
            "technical_details",
            "important_files",
            "next_steps",
            "created_at",
        ],
        has_id: true,
    },
    Mirrored {
        name: "session_files",
        columns: &[
            "session_id",
            "id",
            "file_path",
            "tool_name",
            "turn_index",
            "first_seen_at",
        ],
        has_id: true,
    },
    Mirrored {
        name: "session_refs",
        columns: &[
            "session_id",
            "id",
            "ref_type",
            "ref_value",
            "turn_index",
            "created_at",
        ],
        has_id: true,
    },
    Mirrored {
        name: "tool_calls",
        columns: &[
            "session_id",
            "id",
            "tool_call_id",
            "tool_name",
            "call_seq",
            "result_seq",
            "is_error",
            "turn_index",
            "timestamp",
        ],
        has_id: true,
    },
    Mirrored {
        name: "usage",
        columns: &[
            "session_id",
            "id",
            "request_key",
            "message_id",
            "message_seq",
            "model",
            "timestamp",
            "input_tokens",
            "output_tokens",
            "cache_creation_tokens",
            "cache_creation_1h_tokens",
            "cache_read_tokens",
            "reasoning_tokens",
            "cost_usd",
            "is_sidechain",
            "tokens_known",
            "has_speed",
            "counted",
            "web_search_requests",
            "premium_requests",
        ],
        has_id: true,
    },
    Mirrored {
        name: "usage_rollup",
        columns: &[
            "session_id",
            "day",
            "model",
            "priced",
            "requests",
            "input_tokens",
            "output_tokens",
            "cache_creation_tokens",
            "cache_creation_1h_tokens",
            "cache_read_tokens",
            "reasoning_tokens",
            "input_over_200k",
            "output_over_200k",
            "cache_creation_over_200k",
            "cache_read_over_200k",
            "cost_usd",
            "first_at",
            "last_at",
            "web_search_requests",
            "premium_requests",
        ],
        has_id: false,
    },
    Mirrored {
        name: "file_snapshots",
        columns: &[
            "session_id",
            "file_path",
            "version",
            "turn_index",
            "content",
            "taken_at",
            "origin",
        ],
        has_id: false,
    },
    Mirrored {
        name: "workspace_artifacts",
        columns: &["session_id", "id", "file_path", "content"],
        has_id: true,
    },
];

impl Mirrored {
    /// The column list, comma-separated.
    pub fn column_list(&self) -> String {
        self.columns.join(", ")
    }

    /// The columns a snapshot copies: all but the local integer `id` (`sessions.id` is the
    /// session's own id and stays).
    pub fn columns_without_id(&self) -> Vec<&'static str> {
        self.columns
            .iter()
            .copied()
            .filter(|c| !self.has_id || *c != "id")
            .collect()
    }
}
