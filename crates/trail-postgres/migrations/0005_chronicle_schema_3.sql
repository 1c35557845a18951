-- trail team store, migration 5 (issue 45): Chronicle schema 3's two columns on `sessions`, as
-- the local store's migration 17 adds them (`agent_name`: the agent as people name it;
-- `agent_description`: the custom agent, subagent type or mode), and the plans and context files
-- sessions recorded (`workspace_artifacts`), pushed redacted like the rest of a session's text.

ALTER TABLE sessions ADD COLUMN agent_name TEXT, ADD COLUMN agent_description TEXT;

CREATE TABLE workspace_artifacts (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    id BIGINT NOT NULL,
    file_path TEXT NOT NULL,
    content TEXT NOT NULL,
    pushed_by TEXT NOT NULL DEFAULT current_user,
    PRIMARY KEY (session_id, file_path)
);

ALTER TABLE workspace_artifacts ENABLE ROW LEVEL SECURITY;
CREATE POLICY read_all ON workspace_artifacts FOR SELECT USING (true);
CREATE POLICY write_own ON workspace_artifacts FOR INSERT WITH CHECK (pushed_by = current_user);
CREATE POLICY update_own ON workspace_artifacts FOR UPDATE USING (pushed_by = current_user) WITH CHECK (pushed_by = current_user);
CREATE POLICY delete_own ON workspace_artifacts FOR DELETE USING (pushed_by = current_user);

GRANT SELECT ON workspace_artifacts TO trail_reader, trail_writer;
GRANT INSERT, UPDATE, DELETE ON workspace_artifacts TO trail_writer;
