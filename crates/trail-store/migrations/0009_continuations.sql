-- A session written by `trail resume ID --in AGENT` names the session it continues in its first
-- prompt's first line; the writer copies that here so `show` and `list` can link the two both
-- ways. Not `parent_session_id`: that marks subagents, which `list` hides and `resume` walks up
-- from, while a continuation is a session of its own.
ALTER TABLE sessions ADD COLUMN continues_session_id TEXT;
ALTER TABLE sessions ADD COLUMN continues_source TEXT;
CREATE INDEX idx_sessions_continues ON sessions(continues_session_id)
    WHERE continues_session_id IS NOT NULL;
