-- trail store, migration 3: what the reports need (issue 5). Append-only.
--
-- `usage` keeps one row per request *within* a session. The same request can also be stored in
-- several sessions: a resumed or forked Claude Code file repeats earlier history, and a `/btw`
-- sidechain replays its parent's messages under new request ids. Usage reports count each
-- request once across the whole store, with ccusage's rule:
--   * rows match on (message.id, requestId) (`request_key`), keeping the larger token total,
--     on a tie the one that reported `speed`, then the first stored;
--   * when either row is a sidechain they match on message.id alone and the non-sidechain
--     row wins.
-- `counted` holds the outcome (1: this row counts) and `usage_rollup` sums the counted rows
-- per session, UTC day and model, so `trail usage` never scans `usage`. The writer keeps both
-- up to date in the transaction that changes `usage` (trail-store `usage_rollup.rs`).

ALTER TABLE usage ADD COLUMN counted INTEGER NOT NULL DEFAULT 1;
CREATE INDEX idx_usage_message ON usage(message_id) WHERE message_id IS NOT NULL;

-- Message ids whose rows changed in the current write transaction; emptied before commit.
CREATE TABLE usage_dirty (message_id TEXT PRIMARY KEY) WITHOUT ROWID;

-- A deleted row (a session rewritten or removed) may have been the winner of its match.
CREATE TRIGGER usage_dirty_on_delete AFTER DELETE ON usage
WHEN OLD.message_id IS NOT NULL AND OLD.counted = 1
BEGIN
    INSERT OR IGNORE INTO usage_dirty (message_id) VALUES (OLD.message_id);
END;

-- Sums of counted usage rows. `priced` = 1 when the agent recorded no cost (the report prices
-- the tokens from its table); 0 when it did (`cost_usd` sums the recorded costs). The
-- `*_over_200k` columns sum, per request, the tokens of each kind past 200,000, for models
-- whose price rises above that size.
CREATE TABLE usage_rollup (
    session_id TEXT NOT NULL,
    day TEXT NOT NULL,
    model TEXT NOT NULL,
    priced INTEGER NOT NULL,
    requests INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cache_creation_tokens INTEGER NOT NULL,
    cache_creation_1h_tokens INTEGER NOT NULL,
    cache_read_tokens INTEGER NOT NULL,
    reasoning_tokens INTEGER NOT NULL,
    input_over_200k INTEGER NOT NULL,
    output_over_200k INTEGER NOT NULL,
    cache_creation_over_200k INTEGER NOT NULL,
    cache_read_over_200k INTEGER NOT NULL,
    cost_usd REAL,
    first_at TEXT,
    last_at TEXT,
    PRIMARY KEY (session_id, day, model, priced)
) WITHOUT ROWID;
CREATE INDEX idx_usage_rollup_day ON usage_rollup(day);

-- Backfill a store indexed before this migration.
UPDATE usage SET counted = w.keep
FROM (
    SELECT id,
        CASE WHEN message_id IS NULL THEN 1
        ELSE (row_number() OVER (
                  PARTITION BY message_id, CASE WHEN is_sidechain THEN '' ELSE request_key END
                  ORDER BY input_tokens + output_tokens + cache_creation_tokens
                           + cache_read_tokens DESC, has_speed DESC, id) = 1)
             AND NOT (is_sidechain AND min(is_sidechain) OVER (PARTITION BY message_id) = 0)
        END AS keep
    FROM usage
) AS w
WHERE usage.id = w.id AND usage.counted != w.keep;

INSERT INTO usage_rollup
SELECT session_id, coalesce(substr(timestamp, 1, 10), ''), coalesce(model, ''),
    cost_usd IS NULL, count(*), sum(input_tokens), sum(output_tokens),
    sum(cache_creation_tokens), sum(cache_creation_1h_tokens), sum(cache_read_tokens),
    sum(reasoning_tokens), sum(max(input_tokens - 200000, 0)),
    sum(max(output_tokens - 200000, 0)), sum(max(cache_creation_tokens - 200000, 0)),
    sum(max(cache_read_tokens - 200000, 0)), sum(cost_usd), min(timestamp), max(timestamp)
FROM usage WHERE counted = 1
GROUP BY session_id, 2, 3, 4;

-- `trail improve` reads rare messages and failed calls only; partial indexes find them without
-- scanning `messages`.
CREATE INDEX idx_messages_events ON messages(session_id) WHERE kind IN ('error', 'compaction');
CREATE INDEX idx_messages_interrupts ON messages(session_id)
    WHERE kind = 'meta' AND substr(text, 1, 28) = '[Request interrupted by user';
CREATE INDEX idx_messages_rewound ON messages(session_id)
    WHERE kind = 'prompt' AND on_main_chain = 0 AND is_sidechain = 0;
CREATE INDEX idx_messages_prompts ON messages(session_id) WHERE kind = 'prompt';
CREATE INDEX idx_tool_calls_errors ON tool_calls(session_id) WHERE is_error = 1;
