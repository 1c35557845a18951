-- trail store, migration 8: full-text indexes see text without ANSI escape sequences, and
-- short session ids find their neighbours through an index. Append-only.
--
-- Coloured tool output (`ESC[31mRED ESC[0m`) was indexed as the token `31mred`, so searching
-- for RED found nothing (issue 15). The view `message_search_source` now passes every column
-- through `trail_strip_ansi` (a Rust function trail-store registers on each connection it
-- opens; see src/text.rs), so the text FTS5 indexes, deletes and reads back for snippet() is
-- the same by construction, as before. The caps are applied first, so the function sees at
-- most the 1,800 characters of a tool output that are indexed. The messages keep their bytes.
--
-- Only rows whose indexed text holds an escape change: they are deleted from the index with
-- the values the old view gives (before it is replaced), and inserted again through the new
-- view. A
-- full 'rebuild' would re-tokenize every message of a large store for nothing.

CREATE TEMP TABLE escaped_messages AS
SELECT id FROM messages
WHERE kind IN ('prompt', 'text', 'tool_call', 'tool_result', 'error', 'summary')
  AND (instr(text, char(27)) > 0 OR instr(text, char(155)) > 0 OR instr(text, char(157)) > 0
       OR instr(tool_input, char(27)) > 0 OR instr(tool_input, char(155)) > 0
       OR instr(tool_input, char(157)) > 0
       OR instr(tool_output, char(27)) > 0 OR instr(tool_output, char(155)) > 0
       OR instr(tool_output, char(157)) > 0);

INSERT INTO message_index (message_index, rowid, text, tool_input, tool_output)
SELECT 'delete', id, text, tool_input, tool_output FROM message_search_source
WHERE id IN (SELECT id FROM escaped_messages);

DROP VIEW message_search_source;

CREATE VIEW message_search_source AS
SELECT
    id,
    trail_strip_ansi(text) AS text,
    trail_strip_ansi(substr(tool_input, 1, 1000)) AS tool_input,
    trail_strip_ansi(
        CASE WHEN length(tool_output) > 800
             THEN substr(tool_output, 1, 600) || char(10) || '…' || char(10) || substr(tool_output, -200)
             ELSE tool_output END) AS tool_output
FROM messages
WHERE kind IN ('prompt', 'text', 'tool_call', 'tool_result', 'error', 'summary');

INSERT INTO message_index (rowid, text, tool_input, tool_output)
SELECT id, text, tool_input, tool_output FROM message_search_source
WHERE id IN (SELECT id FROM escaped_messages ORDER BY id);

DROP TABLE escaped_messages;

-- Chronicle's `search_index` holds its own copy of the text (a turn's prompt and answer, a
-- checkpoint section); the writer strips escapes before inserting it from now on.
UPDATE search_index SET content = trail_strip_ansi(content)
WHERE instr(content, char(27)) > 0 OR instr(content, char(155)) > 0
   OR instr(content, char(157)) > 0;

-- `trail list` shows the shortest id prefix that opens one session (Store::short_id); prefixes
-- resolve with LIKE, which ignores ASCII case, so the neighbours that matter are in NOCASE
-- order.
CREATE INDEX idx_sessions_id_nocase ON sessions (id COLLATE NOCASE);
