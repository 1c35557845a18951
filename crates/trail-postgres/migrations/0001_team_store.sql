-- trail's team store on PostgreSQL (issue 20): the local store's tables (Chronicle's core and
-- trail's own) with the same names, columns and meanings, so SQL written for the local store
-- runs here, plus who pushed each row (`pushed_by`, the database role; `host` on sessions).
-- Types follow the local store: times are ISO-8601 UTC text, flags are 0/1 integers.
-- A session's rows hang off `sessions` (ON DELETE CASCADE): a changed session is replaced by
-- deleting its row and writing it again, in one transaction.

CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    cwd TEXT,
    repository TEXT,
    host_type TEXT,
    branch TEXT,
    summary TEXT,
    created_at TEXT,
    updated_at TEXT,
    source TEXT NOT NULL,
    native_id TEXT,
    agent_version TEXT,
    title_rank BIGINT NOT NULL DEFAULT 0,
    parent_session_id TEXT,
    parent_tool_call_id TEXT,
    parent_agent_ref TEXT,
    source_path TEXT,
    source_missing BIGINT NOT NULL DEFAULT 0,
    models TEXT,
    turn_count BIGINT NOT NULL DEFAULT 0,
    message_count BIGINT NOT NULL DEFAULT 0,
    input_tokens BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    cache_creation_tokens BIGINT NOT NULL DEFAULT 0,
    cache_read_tokens BIGINT NOT NULL DEFAULT 0,
    indexed_at TEXT,
    metadata TEXT,
    continues_session_id TEXT,
    continues_source TEXT,
    -- Who pushed it, from which machine and store, and the digest the next sync compares.
    pushed_by TEXT NOT NULL DEFAULT current_user,
    host TEXT NOT NULL,
    store_id TEXT NOT NULL,
    pushed_at TEXT NOT NULL,
    sync_digest TEXT NOT NULL,
    redacted BOOLEAN NOT NULL
);
CREATE INDEX idx_sessions_repo ON sessions(repository);
CREATE INDEX idx_sessions_cwd ON sessions(cwd);
CREATE INDEX idx_sessions_updated ON sessions(updated_at);
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX idx_sessions_store ON sessions(store_id);
CREATE INDEX idx_sessions_pushed_by ON sessions(pushed_by, host);

CREATE TABLE turns (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    id BIGINT,
    turn_index BIGINT NOT NULL,
    user_message TEXT,
    assistant_response TEXT,
    timestamp TEXT,
    pushed_by TEXT NOT NULL DEFAULT current_user,
    PRIMARY KEY (session_id, turn_index)
);

CREATE TABLE checkpoints (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    id BIGINT,
    checkpoint_number BIGINT NOT NULL,
    title TEXT,
    overview TEXT,
    history TEXT,
    work_done TEXT,
    technical_details TEXT,
    important_files TEXT,
    next_steps TEXT,
    created_at TEXT,
    pushed_by TEXT NOT NULL DEFAULT current_user,
    PRIMARY KEY (session_id, checkpoint_number)
);

CREATE TABLE session_files (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    id BIGINT,
    file_path TEXT NOT NULL,
    tool_name TEXT,
    turn_index BIGINT,
    first_seen_at TEXT,
    pushed_by TEXT NOT NULL DEFAULT current_user,
    PRIMARY KEY (session_id, file_path)
);
CREATE INDEX idx_session_files_path ON session_files(file_path);
-- `why` copies the sessions that touched a file of one name: a suffix match.
CREATE INDEX idx_session_files_path_reversed ON session_files(reverse(file_path) text_pattern_ops);

CREATE TABLE session_refs (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    id BIGINT,
    ref_type TEXT NOT NULL,
    ref_value TEXT NOT NULL,
    turn_index BIGINT,
    created_at TEXT,
    pushed_by TEXT NOT NULL DEFAULT current_user,
    PRIMARY KEY (session_id, ref_type, ref_value)
);
CREATE INDEX idx_session_refs_type_value ON session_refs(ref_type, ref_value);

CREATE TABLE messages (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    id BIGINT,
    seq BIGINT NOT NULL,
    native_id TEXT,
    parent_native_id TEXT,
    role TEXT,
    kind TEXT,
    tool_name TEXT,
    tool_call_id TEXT,
    is_error BIGINT NOT NULL DEFAULT 0,
    model TEXT,
    timestamp TEXT,
    is_sidechain BIGINT NOT NULL DEFAULT 0,
    on_main_chain BIGINT NOT NULL DEFAULT 1,
    turn_index BIGINT,
    agent_ref TEXT,
    prompt_source TEXT,
    text TEXT,
    tool_input TEXT,
    tool_output TEXT,
    extra TEXT,
    -- What full-text search sees of the message (text, then tool input, then tool output, the
    -- local store's caps and escape stripping applied), built by trail so that its words are
    -- the local store's (see trail-postgres `search_text`); NULL for kinds not searched.
    search_vector TSVECTOR,
    pushed_by TEXT NOT NULL DEFAULT current_user,
    PRIMARY KEY (session_id, seq)
);
CREATE INDEX idx_messages_search ON messages USING GIN (search_vector);

CREATE TABLE tool_calls (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    id BIGINT NOT NULL,
    tool_call_id TEXT,
    tool_name TEXT,
    call_seq BIGINT NOT NULL,
    result_seq BIGINT,
    is_error BIGINT NOT NULL DEFAULT 0,
    turn_index BIGINT,
    timestamp TEXT,
    pushed_by TEXT NOT NULL DEFAULT current_user,
    PRIMARY KEY (session_id, id)
);
CREATE INDEX idx_tool_calls_name ON tool_calls(tool_name);

CREATE TABLE usage (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    id BIGINT,
    request_key TEXT NOT NULL,
    message_id TEXT,
    message_seq BIGINT,
    model TEXT,
    timestamp TEXT,
    input_tokens BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    cache_creation_tokens BIGINT NOT NULL DEFAULT 0,
    cache_creation_1h_tokens BIGINT NOT NULL DEFAULT 0,
    cache_read_tokens BIGINT NOT NULL DEFAULT 0,
    reasoning_tokens BIGINT NOT NULL DEFAULT 0,
    cost_usd DOUBLE PRECISION,
    is_sidechain BIGINT NOT NULL DEFAULT 0,
    tokens_known BIGINT NOT NULL DEFAULT 1,
    has_speed BIGINT NOT NULL DEFAULT 0,
    counted BIGINT NOT NULL DEFAULT 1,
    web_search_requests BIGINT NOT NULL DEFAULT 0,
    premium_requests DOUBLE PRECISION NOT NULL DEFAULT 0,
    pushed_by TEXT NOT NULL DEFAULT current_user,
    PRIMARY KEY (session_id, request_key)
);
CREATE INDEX idx_usage_timestamp ON usage(timestamp);

CREATE TABLE usage_rollup (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    model TEXT NOT NULL,
    priced BIGINT NOT NULL,
    requests BIGINT NOT NULL,
    input_tokens BIGINT NOT NULL,
    output_tokens BIGINT NOT NULL,
    cache_creation_tokens BIGINT NOT NULL,
    cache_creation_1h_tokens BIGINT NOT NULL,
    cache_read_tokens BIGINT NOT NULL,
    reasoning_tokens BIGINT NOT NULL,
    input_over_200k BIGINT NOT NULL,
    output_over_200k BIGINT NOT NULL,
    cache_creation_over_200k BIGINT NOT NULL,
    cache_read_over_200k BIGINT NOT NULL,
    cost_usd DOUBLE PRECISION,
    first_at TEXT,
    last_at TEXT,
    web_search_requests BIGINT NOT NULL DEFAULT 0,
    premium_requests DOUBLE PRECISION NOT NULL DEFAULT 0,
    pushed_by TEXT NOT NULL DEFAULT current_user,
    PRIMARY KEY (session_id, day, model, priced)
);
CREATE INDEX idx_usage_rollup_day ON usage_rollup(day);

-- Chronicle's search table, as a view: one row per turn (its prompt and answer).
CREATE VIEW search_index AS
SELECT coalesce(user_message, '') || E'\n' || coalesce(assistant_response, '') AS content,
       session_id, 'turn'::text AS source_type,
       session_id || ':turn:' || turn_index AS source_id
FROM turns;

-- One row per store that pushed: when it last synced (the team's freshness).
CREATE TABLE sync_stores (
    store_id TEXT NOT NULL,
    pushed_by TEXT NOT NULL DEFAULT current_user,
    host TEXT NOT NULL,
    last_sync_at TEXT NOT NULL,
    sessions BIGINT NOT NULL,
    PRIMARY KEY (store_id, pushed_by)
);

-- Row-level security: everyone reads every row; a role writes only rows it pushed. The table
-- owner (the role that ran the migrations) is exempt unless FORCE is set, as PostgreSQL does.
DO $$
DECLARE t TEXT;
BEGIN
    FOREACH t IN ARRAY ARRAY['sessions', 'turns', 'checkpoints', 'session_files', 'session_refs',
                             'messages', 'tool_calls', 'usage', 'usage_rollup', 'sync_stores']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY read_all ON %I FOR SELECT USING (true)', t);
        EXECUTE format('CREATE POLICY write_own ON %I FOR INSERT WITH CHECK (pushed_by = current_user)', t);
        EXECUTE format('CREATE POLICY update_own ON %I FOR UPDATE USING (pushed_by = current_user) WITH CHECK (pushed_by = current_user)', t);
        EXECUTE format('CREATE POLICY delete_own ON %I FOR DELETE USING (pushed_by = current_user)', t);
    END LOOP;
END $$;

-- Two group roles (docs/team.md): `trail_writer`, granted to each developer's login role
-- (push: insert, update and delete its own rows, read everyone's), and `trail_reader`, which
-- may only SELECT: `trail sql` runs as it, in a read-only transaction.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'trail_writer') THEN
        CREATE ROLE trail_writer NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'trail_reader') THEN
        CREATE ROLE trail_reader NOLOGIN;
    END IF;
END $$;
GRANT SELECT ON sessions, turns, checkpoints, session_files, session_refs, messages, tool_calls,
    usage, usage_rollup, search_index, sync_stores TO trail_reader, trail_writer;
GRANT INSERT, UPDATE, DELETE ON sessions, turns, checkpoints, session_files, session_refs,
    messages, tool_calls, usage, usage_rollup, sync_stores TO trail_writer;
