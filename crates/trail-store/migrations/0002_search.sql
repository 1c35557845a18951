-- trail store, migration 2: full-text search over every message. Append-only.
--
-- Chronicle's `search_index` (turns and checkpoints) is left as it is, so Copilot's own search
-- query keeps working. `message_index` adds what a user looks for beyond it: prompts, answers,
-- the commands and paths in tool calls, tool outputs and errors.
--
-- It is an external-content FTS5 table: the text lives once, in `messages`, and FTS5 reads it
-- back (for snippet() and for deletes) through the view `message_search_source`. The view
-- decides what is indexed and caps what is long, so the indexed text and the text FTS5 reads
-- back are the same by construction:
--   * kinds: prompts, answers, tool calls, tool results, errors, summaries (not thinking,
--     injected context or unknown records);
--   * a tool input: its first 1,000 characters;
--   * a tool output: its first 600 and last 200 characters (errors are often at the end).
--   (Tool outputs are most of a history's bytes; these caps keep the index near 7% of the
--   corpus. See BENCHMARKS.md.)
-- The stored message is never cut; only what the index sees is.
--
-- The writer (trail-store's write.rs) is the only place that fills it: it inserts a message's
-- row right after the message, and issues FTS5 'delete' commands (reading the same view) before
-- it deletes or replaces messages. 'rebuild' re-derives the whole index from the view.

CREATE VIEW message_search_source AS
SELECT
    id,
    text,
    substr(tool_input, 1, 1000) AS tool_input,
    CASE WHEN length(tool_output) > 800
         THEN substr(tool_output, 1, 600) || char(10) || '…' || char(10) || substr(tool_output, -200)
         ELSE tool_output END AS tool_output
FROM messages
WHERE kind IN ('prompt', 'text', 'tool_call', 'tool_result', 'error', 'summary');

CREATE VIRTUAL TABLE message_index USING fts5(
    text,
    tool_input,
    tool_output,
    content = 'message_search_source',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

-- Buffer 16 MB of changes in memory before writing a segment (the default is 1 MB): fewer,
-- larger segments to merge while a big history is indexed (about 7% less indexing time).
INSERT INTO message_index (message_index, rank) VALUES ('hashsize', 16777216);

INSERT INTO message_index (message_index) VALUES ('rebuild');
