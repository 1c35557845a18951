//! Readers shared by several formats: JSON Lines, JSON field helpers, linear transcripts,
//! file references, read-only SQLite, discovery walks and session ids.

pub mod discover;
pub mod ids;
pub(crate) mod json_fields;
pub mod jsonl;
pub(crate) mod linear;
pub mod refs;
pub(crate) mod sqlite_readonly;
