//! Readers shared by several formats: JSON Lines, whole files (a byte-order mark skipped, JSON
//! documents with trailing bytes), JSON field helpers, linear transcripts, file references,
//! read-only SQLite, discovery walks, session ids, OpenAI-style chat records and rewinds replayed
//! into a file.

pub(crate) mod blocks;
pub(crate) mod chat_tree;
pub mod discover;
pub mod ids;
pub(crate) mod json_fields;
pub mod jsonl;
pub(crate) mod linear;
pub mod refs;
pub(crate) mod sqlite_readonly;
pub mod whole;
// h42b: OpenAI-style chat records (Mistral Vibe, Hermes) and rewinds replayed into a file.
pub(crate) mod openai_chat;
pub(crate) mod replay_chain;
// h42y: resuming the parse of a growing JSONL file from a saved parser.
pub(crate) mod resumable;
pub(crate) mod uri;
