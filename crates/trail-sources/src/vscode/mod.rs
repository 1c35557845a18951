//! VS Code: GitHub Copilot Chat sessions (current and legacy storage), chat exports, and the
//! editing sessions that hold Copilot's file edits.

pub mod copilot_vscode;
pub(crate) mod copilot_vscode_legacy;
pub mod vscode_editing;
pub mod vscode_export;
