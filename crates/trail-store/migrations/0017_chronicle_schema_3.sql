-- trail store, migration 17 (issue 45): Chronicle schema version 3, as the Copilot extension for
-- VS Code writes it (microsoft/vscode, extensions/copilot/src/platform/chronicle/node/
-- sessionStore.ts, SCHEMA_VERSION = 3): two columns on `sessions`.
--
-- `agent_name`: the agent as people name it (`VS Code agent`, `Copilot CLI`, `Claude Code`);
-- `agent_description`: the custom agent, subagent type or mode a source records. Sessions
-- written before stay NULL until the next `trail index` fills `agent_name` from their source
-- (`store_meta.fill_agent_names`) and re-reads the files of the sources that record more.
ALTER TABLE sessions ADD COLUMN agent_name TEXT;
ALTER TABLE sessions ADD COLUMN agent_description TEXT;
UPDATE schema_version SET version = 3;
INSERT INTO store_meta (key, value) VALUES ('fill_agent_names', '1')
    ON CONFLICT (key) DO UPDATE SET value = excluded.value;

-- Plans and context files a session recorded (a Claude Code plan, a Copilot CLI `plan.md`),
-- which Chronicle indexes with `source_type = 'workspace_artifact'`. AUTOINCREMENT: an id is
-- never reused, so a search_index rowid (`2^51 + id`) names one artifact for good.
CREATE TABLE workspace_artifacts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    file_path TEXT NOT NULL,
    content TEXT NOT NULL,
    UNIQUE (session_id, file_path)
);

-- Chronicle's `search_index` comes back into the store file, so that a plain SQLite client
-- opening the store alone runs Chronicle's search (issue 45). The table itself is made by the
-- next `trail index` (`chronicle.rs`), which fills it from the store in the same transaction:
-- made here empty, it would hide the search database's copy from readers until then. Here only
-- the list of each row's session, which replaces the search database's.
CREATE TABLE chronicle_rows (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL);
CREATE INDEX idx_chronicle_rows_session ON chronicle_rows (session_id);
