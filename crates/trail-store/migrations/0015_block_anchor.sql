-- trail store, migration 15 (issue 19): the status line finds the active 5-hour block from a
-- remembered block start instead of walking every request back to the last pause of more than
-- 5 hours (a busy history can have none for months: the walk read all 63,586 requests of the
-- 1 GiB benchmark corpus on every run).
--
-- Blocks chain forward: where a block starts depends only on the requests before it. So "the
-- request at F starts a block" stays true for as long as no counted request at or before F is
-- added, removed or changed. `usage_watch` keeps what that needs, maintained by triggers so that
-- every path that writes `usage` (index, append, re-parse, forget, the rollup's `counted`
-- flips) keeps it without knowing: `generation` counts changes to counted requests, `low` is
-- the earliest timestamp any of them touched since the anchor was last saved ('' when a
-- touched row had no timestamp: that invalidates any anchor).
-- `block_anchor` holds the last block start the status line found, with the generation it was
-- computed at; it is trusted only while `low` is later than its first request.
CREATE TABLE IF NOT EXISTS usage_watch (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    generation INTEGER NOT NULL,
    low TEXT NOT NULL
);
INSERT OR IGNORE INTO usage_watch (id, generation, low) VALUES (1, 0, '');

CREATE TABLE IF NOT EXISTS block_anchor (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    generation INTEGER NOT NULL,
    first_request TEXT NOT NULL
);

CREATE TRIGGER IF NOT EXISTS usage_watch_insert AFTER INSERT ON usage WHEN NEW.counted = 1
BEGIN
    UPDATE usage_watch SET generation = generation + 1,
                           low = min(low, coalesce(NEW.timestamp, ''));
END;

CREATE TRIGGER IF NOT EXISTS usage_watch_delete AFTER DELETE ON usage WHEN OLD.counted = 1
BEGIN
    UPDATE usage_watch SET generation = generation + 1,
                           low = min(low, coalesce(OLD.timestamp, ''));
END;

CREATE TRIGGER IF NOT EXISTS usage_watch_update AFTER UPDATE OF counted, timestamp ON usage
WHEN OLD.counted = 1 OR NEW.counted = 1
BEGIN
    UPDATE usage_watch SET generation = generation + 1,
                           low = min(low, coalesce(OLD.timestamp, ''), coalesce(NEW.timestamp, ''));
END;
