-- trail store, migration 14: the full-text indexes move to a database file of their own
-- beside the store (`<store>-search`, attached as `search`), written by their own connection
-- and thread while the store's writer goes on (issue 12). See src/search_db.rs.
--
-- Here the store drops its copies; trail builds the search database from the store's rows
-- when it opens a store whose search database is new (so the first open after the upgrade
-- takes a while on a large store). Chronicle's `search_index` keeps its name and columns in
-- the attached schema, so `... FROM search_index WHERE search_index MATCH ?` runs unchanged.

DROP TABLE message_index;
DROP VIEW message_search_source;
DROP TABLE search_index;

-- Each batch of the writer is numbered (`store_meta.search_seq`) and lists the sessions it
-- wrote, so the search database can tell which batches it has not applied (a killed index)
-- and rebuild their sessions. Rows the search database has applied are deleted by the next
-- batch. `search_id` names this store, so a search database made for another one is rebuilt.
CREATE TABLE search_log (
    seq INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    PRIMARY KEY (seq, session_id)
) WITHOUT ROWID;
INSERT INTO store_meta (key, value) VALUES ('search_seq', '0');
INSERT INTO store_meta (key, value) VALUES ('search_id', lower(hex(randomblob(16))));

-- A turn's full-text row is rebuilt from its messages when an append touches it, and a hit's
-- messages are read to choose what to show: every message kind, by turn. This replaces the
-- partial index of migration 5 (prompts and answers on the main chain only), whose reads the
-- new index serves too.
DROP INDEX idx_messages_turn_text;
CREATE INDEX idx_messages_turn ON messages (session_id, turn_index);
