-- Issue 18: the agents change their formats every few weeks, and a parser fix must reach the
-- sessions already stored.
--
-- `source_files.parser_version`: the version of the source's parser that read the file. The
-- ingest re-reads a file whose stored version differs from its source's current one, so a fix
-- to one source re-indexes that source's files only. Files stored before this migration were
-- read by the first version of every parser.
ALTER TABLE source_files ADD COLUMN parser_version INTEGER NOT NULL DEFAULT 1;

-- Who wrote a prompt: 'typed' (a person at the prompt), 'queued' (typed while a tool ran and
-- sent when it finished), 'system' (text the agent or a hook sent as a user turn), 'sdk' (a
-- program driving the agent). NULL when the format does not say; reports count a prompt as
-- typed unless it says otherwise.
ALTER TABLE messages ADD COLUMN prompt_source TEXT;

-- Facts a format records about a session that have no column of their own, as JSON (for
-- example a Claude Code workflow run's name, status, tokens and phases).
ALTER TABLE sessions ADD COLUMN metadata TEXT;

-- Per-request units that are not tokens: Claude's server-side web searches (billed per
-- search) and GitHub Copilot premium requests (a plan's allowance, never dollars). The rollup
-- sums them per day and model like the tokens; a Claude Code or Copilot CLI file stored before
-- this migration is read again by its new parser version, which fills them.
ALTER TABLE usage ADD COLUMN web_search_requests INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage ADD COLUMN premium_requests REAL NOT NULL DEFAULT 0;
ALTER TABLE usage_rollup ADD COLUMN web_search_requests INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_rollup ADD COLUMN premium_requests REAL NOT NULL DEFAULT 0;
