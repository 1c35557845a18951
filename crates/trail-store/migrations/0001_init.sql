-- trail store, migration 1. Append-only: never edit a shipped migration, add a new file.
--
-- Chronicle-compatible core (GitHub Copilot's session-store.db, schema version 2): the same
-- tables, columns, keys and indexes, so SQL written for Copilot's store runs unchanged. Our
-- own columns on core tables are additive; richer data lives in tables of our own below.

CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version (version) VALUES (2);

CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT,
    repository TEXT,
    host_type TEXT,
    branch TEXT,
    summary TEXT,
    created_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    -- trail's own columns
    source TEXT NOT NULL,
    native_id TEXT,
    agent_version TEXT,
    title_rank INTEGER NOT NULL DEFAULT 0,
    parent_session_id TEXT,
    parent_tool_call_id TEXT,
    parent_agent_ref TEXT,
    source_path TEXT,
    source_missing INTEGER NOT NULL DEFAULT 0,
    models TEXT,
    turn_count INTEGER NOT NULL DEFAULT 0,
    message_count INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    indexed_at TEXT
);

CREATE TABLE turns (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    turn_index INTEGER NOT NULL,
    user_message TEXT,
    assistant_response TEXT,
    timestamp TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE(session_id, turn_index)
);

CREATE TABLE checkpoints (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    checkpoint_number INTEGER NOT NULL,
    title TEXT,
    overview TEXT,
    history TEXT,
    work_done TEXT,
    technical_details TEXT,
    important_files TEXT,
    next_steps TEXT,
    created_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE(session_id, checkpoint_number)
);

CREATE TABLE session_files (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    file_path TEXT NOT NULL,
    tool_name TEXT,
    turn_index INTEGER,
    first_seen_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE(session_id, file_path)
);

CREATE TABLE session_refs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    ref_type TEXT NOT NULL,
    ref_value TEXT NOT NULL,
    turn_index INTEGER,
    created_at TEXT DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE(session_id, ref_type, ref_value)
);

-- Rows are addressed by rowid (see trail-store's search module): a turn's row is its
-- turns.id, so replacing it never scans the index.
CREATE VIRTUAL TABLE search_index USING fts5(
    content,
    session_id UNINDEXED,
    source_type UNINDEXED,
    source_id UNINDEXED
);

CREATE INDEX idx_sessions_repo ON sessions(repository);
CREATE INDEX idx_sessions_cwd ON sessions(cwd);
CREATE INDEX idx_session_files_path ON session_files(file_path);
CREATE INDEX idx_session_refs_type_value ON session_refs(ref_type, ref_value);
CREATE INDEX idx_turns_session ON turns(session_id);
CREATE INDEX idx_checkpoints_session ON checkpoints(session_id);

-- trail's own tables -------------------------------------------------------------------------

CREATE INDEX idx_sessions_updated ON sessions(updated_at);
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);

-- Every normalized message, in order, including abandoned branches and sidechains.
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    seq INTEGER NOT NULL,
    native_id TEXT,
    parent_native_id TEXT,
    role TEXT,
    kind TEXT,
    tool_name TEXT,
    tool_call_id TEXT,
    is_error INTEGER NOT NULL DEFAULT 0,
    model TEXT,
    timestamp TEXT,
    is_sidechain INTEGER NOT NULL DEFAULT 0,
    on_main_chain INTEGER NOT NULL DEFAULT 1,
    turn_index INTEGER,
    agent_ref TEXT,
    -- Large columns last: SQLite reads a row's columns in order, so the small ones above stay
    -- cheap to reach.
    text TEXT,
    tool_input TEXT,
    tool_output TEXT,
    extra TEXT,
    UNIQUE(session_id, seq)
);
CREATE INDEX idx_messages_native ON messages(native_id) WHERE native_id IS NOT NULL;
CREATE INDEX idx_messages_agent_ref ON messages(session_id, agent_ref) WHERE agent_ref IS NOT NULL;

-- One row per tool call, joined to its result.
CREATE TABLE tool_calls (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    tool_call_id TEXT,
    tool_name TEXT,
    call_seq INTEGER NOT NULL,
    result_seq INTEGER,
    is_error INTEGER NOT NULL DEFAULT 0,
    turn_index INTEGER,
    timestamp TEXT
);
CREATE INDEX idx_tool_calls_session ON tool_calls(session_id, tool_call_id);
CREATE INDEX idx_tool_calls_name ON tool_calls(tool_name);

-- Token usage: one row per deduplicated API request.
CREATE TABLE usage (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    request_key TEXT NOT NULL,
    message_id TEXT,
    message_seq INTEGER,
    model TEXT,
    timestamp TEXT,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
    cache_creation_1h_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL,
    is_sidechain INTEGER NOT NULL DEFAULT 0,
    tokens_known INTEGER NOT NULL DEFAULT 1,
    has_speed INTEGER NOT NULL DEFAULT 0,
    UNIQUE(session_id, request_key)
);
CREATE INDEX idx_usage_timestamp ON usage(timestamp);

-- What was read of each source file, so the next index can skip it or resume it.
CREATE TABLE source_files (
    path TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    bytes_parsed INTEGER NOT NULL,
    lines INTEGER NOT NULL DEFAULT 0,
    head_hash INTEGER,
    tail_hash INTEGER,
    state BLOB,
    sessions TEXT NOT NULL DEFAULT '[]',
    issue_count INTEGER NOT NULL DEFAULT 0,
    notes TEXT,
    missing INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    indexed_at TEXT NOT NULL
);

-- Problems met while parsing: reported with file and line, the rest still indexed.
CREATE TABLE parse_issues (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    source TEXT NOT NULL,
    line INTEGER,
    byte_offset INTEGER,
    excerpt TEXT,
    reason TEXT NOT NULL,
    found_at TEXT NOT NULL
);
CREATE INDEX idx_parse_issues_path ON parse_issues(path);

-- Titles that name a conversation by one of its message ids, possibly in another file
-- (Claude Code `summary` entries with `leafUuid`).
CREATE TABLE title_hints (
    leaf_native_id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    path TEXT NOT NULL
);
