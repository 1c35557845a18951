-- Issue 20: `trail forget ID...` removes sessions for good and leaves a tombstone, so that a
-- later index does not bring them back from the agent's files (unless `--restore`) and the next
-- `trail sync` removes them from the team store too. `source_path` is the file the session came
-- from: `--restore` makes the next index read it again.
-- Idempotent (IF NOT EXISTS): migration numbers may be re-ordered when branches merge.
CREATE TABLE IF NOT EXISTS forgotten_sessions (
    id TEXT PRIMARY KEY,
    source TEXT,
    source_path TEXT,
    forgotten_at TEXT NOT NULL
) WITHOUT ROWID;
