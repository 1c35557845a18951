-- trail team store, migration 2: search by turn, as the local store does since its issue 12
-- (one full-text row per turn, every match ranked; a query's words may be in different
-- messages of a turn, and `NOT` excludes turns, not messages). `trail sync` builds each
-- turn's vector from the text it sends: prompts weight A, answers B, tool inputs C, tool
-- outputs D (see trail-postgres `search_text`).
CREATE TABLE turn_search (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    turn_index BIGINT NOT NULL,
    first_at TEXT,
    last_at TEXT,
    search_vector TSVECTOR NOT NULL,
    pushed_by TEXT NOT NULL DEFAULT current_user,
    PRIMARY KEY (session_id, turn_index)
);
CREATE INDEX idx_turn_search ON turn_search USING GIN (search_vector);

ALTER TABLE turn_search ENABLE ROW LEVEL SECURITY;
CREATE POLICY read_all ON turn_search FOR SELECT USING (true);
CREATE POLICY write_own ON turn_search FOR INSERT WITH CHECK (pushed_by = current_user);
CREATE POLICY update_own ON turn_search FOR UPDATE USING (pushed_by = current_user)
    WITH CHECK (pushed_by = current_user);
CREATE POLICY delete_own ON turn_search FOR DELETE USING (pushed_by = current_user);
GRANT SELECT ON turn_search TO trail_reader, trail_writer;
GRANT INSERT, UPDATE, DELETE ON turn_search TO trail_writer;

-- Sessions pushed before this migration: their turns' vectors from the messages' vectors
-- (each message's lexemes re-weighted by the column its kind goes to). Positions differ from
-- what a sync builds, so a phrase spanning two messages may not match until the session is
-- pushed again; everything else matches as a fresh sync's would.
INSERT INTO turn_search (session_id, turn_index, first_at, last_at, search_vector, pushed_by)
SELECT session_id, coalesce(turn_index, -1), min(timestamp), max(timestamp),
       string_agg(setweight(search_vector,
           (CASE kind WHEN 'prompt' THEN 'A' WHEN 'tool_call' THEN 'C'
                      WHEN 'tool_result' THEN 'D' ELSE 'B' END)::"char")::text, ' '
           ORDER BY seq)::tsvector,
       min(pushed_by)
FROM messages WHERE search_vector IS NOT NULL
GROUP BY session_id, coalesce(turn_index, -1);
