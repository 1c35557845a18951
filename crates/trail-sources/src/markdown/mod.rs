//! Markdown transcripts: Aider's chat history and SpecStory's exports.

pub mod aider;
pub mod specstory;
