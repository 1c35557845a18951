//! OpenCode and the agents built on it.

pub mod opencode;
