-- trail store, migration 16 (issue 12): rows the writer looks up by a file's path.
--
-- Every file an index writes first deletes the title hints it left before (`DELETE FROM
-- title_hints WHERE path = ?`). Without an index that read the whole table once per file, a
-- cost per file that grows with the store: on the 3 GiB benchmark corpus (6,000 files, 3,712
-- hints) it was a tenth of the writer's CPU, 9x what it was on the 1 GiB corpus for 3x the
-- files.
CREATE INDEX IF NOT EXISTS idx_title_hints_path ON title_hints(path);

-- The same for the sessions of a file that disappeared (`mark_missing`): each such file read
-- every session, and agents delete old transcripts by the hundred.
CREATE INDEX IF NOT EXISTS idx_sessions_source_path ON sessions(source_path);
