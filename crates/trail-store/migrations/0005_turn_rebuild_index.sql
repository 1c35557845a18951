-- An append rebuilds the turns its new messages touch from the stored prompts and answers of
-- those turns. Without an index on the turn, that read went through every message of the
-- session, so a long log appended in pieces re-read its whole history at each piece. Partial:
-- only the rows the rebuild reads (its WHERE clause repeats these terms exactly, which is what
-- lets SQLite use the index).
CREATE INDEX idx_messages_turn_text ON messages(session_id, turn_index)
    WHERE on_main_chain = 1 AND kind IN ('prompt', 'text');
