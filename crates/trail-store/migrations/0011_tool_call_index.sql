-- trail store, migration 11 (issue 17): a file's history (`trail why`, the MCP tool
-- `file_history`) reads the tool calls of each session that touched the file, to find every
-- turn that named it. Through the `(session_id, seq)` key that read walked every message of
-- the session, tool outputs included (most of a session's bytes); this partial index holds
-- only tool calls, so the read touches those rows alone (4x less time on the 1 GiB store).
-- Its WHERE clause is repeated by the query, which is what lets SQLite use it.
CREATE INDEX IF NOT EXISTS idx_messages_tool_calls ON messages(session_id, seq)
    WHERE kind = 'tool_call';
