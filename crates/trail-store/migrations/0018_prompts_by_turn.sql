-- trail store, migration 18 (issue 43): a turn's prompts found without reading its other
-- messages.
--
-- A search reads the prompts of the turns it shows (`Store::lone_whole_prompt`, and tier 0's
-- prompts when the search database does not keep them). Through `idx_messages_turn` every
-- message of the turn was read to test its kind: 0.5 to 1.3 ms of a 1 GiB two-word search
-- (BENCHMARKS.md). The prompts' index gains the turn; it still leads with the session for the
-- lookups that use it by name (`stand_ins.rs`).
DROP INDEX idx_messages_prompts;
CREATE INDEX idx_messages_prompts ON messages(session_id, turn_index) WHERE kind = 'prompt';
