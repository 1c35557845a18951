-- What a session changed, as the agent kept it: Claude Code's file-history backups and VS Code's
-- chat editing snapshots (issue 16). One row per content of a file at one point of the session;
-- `trail diff` compares consecutive versions of a path. Kept here, not read from the agent's
-- folder at query time, so the diff stays readable after the agent deletes its files.
CREATE TABLE IF NOT EXISTS file_snapshots (
    session_id TEXT NOT NULL REFERENCES sessions(id),
    file_path TEXT NOT NULL,
    version INTEGER NOT NULL,
    turn_index INTEGER,
    content TEXT,
    taken_at TEXT,
    origin TEXT NOT NULL,
    PRIMARY KEY (session_id, file_path, version)
) WITHOUT ROWID;
