//! Readers shared by several formats: JSON Lines, whole files (a byte-order mark skipped, JSON
//! documents with trailing bytes), JSON field helpers, linear transcripts, file references,
//! read-only SQLite, discovery walks and session ids.

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
