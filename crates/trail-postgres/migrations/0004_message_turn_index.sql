-- trail team store, migration 4: a search hit reads its turn's messages to choose the one it
-- shows (`session_id` and the turn, -1 before the first prompt, as the search reads them);
-- without this index each hit scanned every message of its session.
CREATE INDEX idx_messages_turn ON messages (session_id, (coalesce(turn_index, -1)));
