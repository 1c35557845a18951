-- Facts about the store itself, by key. `last_index_at` is when an index run last finished
-- (even one that found nothing new), so frontends can say how fresh their answers are and the
-- MCP server can decide whether to refresh before it answers.
CREATE TABLE store_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
