//! VS Code: GitHub Copilot Chat sessions (current and legacy storage), chat exports, and the
//! editing sessions that hold Copilot's file edits.

pub mod copilot_vscode;
pub(crate) mod copilot_vscode_legacy;
pub(crate) mod copilot_vscode_requests;
pub mod vscode_editing;
pub mod vscode_export;
