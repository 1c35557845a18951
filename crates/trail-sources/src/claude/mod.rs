//! Claude Code: session transcripts and the prompt history.

pub mod claude_code;
pub mod claude_history;
