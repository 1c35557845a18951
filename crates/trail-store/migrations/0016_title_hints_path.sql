-- trail store, migration 16 (issue 12): title hints by the file they came from.
--
-- Every file an index writes first deletes the hints it left before (`DELETE FROM title_hints
-- WHERE path = ?`). Without this index that read the whole table once per file, a cost per
-- file that grows with the store: on the 3 GiB benchmark corpus (6,000 files, 3,712 hints) it
-- was a tenth of the writer's CPU, 9x what it was on the 1 GiB corpus for 3x the files.
CREATE INDEX IF NOT EXISTS idx_title_hints_path ON title_hints(path);
