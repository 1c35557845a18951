-- Resume states move out of `source_files`: they can be megabytes, and a large blob stored in
-- the middle of a row makes every scan of the table (one per index run) read its overflow
-- pages. `source_files.state` stays, always NULL, because migrations are additive.
CREATE TABLE source_file_state (
    path TEXT PRIMARY KEY,
    state BLOB NOT NULL
);
INSERT INTO source_file_state (path, state)
    SELECT path, state FROM source_files WHERE state IS NOT NULL;
UPDATE source_files SET state = NULL;
