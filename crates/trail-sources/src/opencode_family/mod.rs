//! OpenCode and the agents built on it.

pub mod kilo;
pub mod opencode;
