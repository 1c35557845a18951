-- File snapshots (the local store's migration 0012): the contents an agent kept while a session
-- changed a file, so that `trail diff` and `why`'s change answer from the team store as they do
-- locally. Pushed redacted like the rest of a session's text (unless `--no-redact`).

CREATE TABLE file_snapshots (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    file_path TEXT NOT NULL,
    version BIGINT NOT NULL,
    turn_index BIGINT,
    content TEXT,
    taken_at TEXT,
    origin TEXT NOT NULL,
    pushed_by TEXT NOT NULL DEFAULT current_user,
    PRIMARY KEY (session_id, file_path, version)
);

ALTER TABLE file_snapshots ENABLE ROW LEVEL SECURITY;
CREATE POLICY read_all ON file_snapshots FOR SELECT USING (true);
CREATE POLICY write_own ON file_snapshots FOR INSERT WITH CHECK (pushed_by = current_user);
CREATE POLICY update_own ON file_snapshots FOR UPDATE USING (pushed_by = current_user) WITH CHECK (pushed_by = current_user);
CREATE POLICY delete_own ON file_snapshots FOR DELETE USING (pushed_by = current_user);

GRANT SELECT ON file_snapshots TO trail_reader, trail_writer;
GRANT INSERT, UPDATE, DELETE ON file_snapshots TO trail_writer;
