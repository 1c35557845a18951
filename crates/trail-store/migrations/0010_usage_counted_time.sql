-- trail store, migration 10 (issue 19): the status line and `usage --active` find the active
-- 5-hour block by walking the counted requests' timestamps back from now to the last pause of
-- more than 5 hours. With only `idx_usage_timestamp` every step also read the row for
-- `counted`; this partial index holds exactly the rows walked, so the walk reads the index
-- alone (its WHERE clause repeats `counted = 1`, which is what lets SQLite use it).
CREATE INDEX IF NOT EXISTS idx_usage_counted_time ON usage(timestamp) WHERE counted = 1;
