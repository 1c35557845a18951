//! GitHub Copilot in Visual Studio (the Windows IDE): OpenTelemetry traces, one OTLP-JSON
//! envelope a line (`{resourceSpans:[{resource, scopeSpans:[{spans:[…]}]}]}`), in
//! `VSGitHubCopilotLogs/traces/*_VSGitHubCopilot_traces.jsonl` under the temporary folder
//! (Windows `%LOCALAPPDATA%\Temp`, macOS `~/Library/Caches`, Linux `~/.cache`).
//!
//! The spans that make a conversation (kenn-io/agentsview
//! `docs/internal/visual-studio-copilot-traces.md`, and the redacted corpus samples):
//! - `invoke_agent` (one per user request): `gen_ai.conversation.id`, `gen_ai.request.model`,
//!   `copilot_chat.mode`, `copilot_chat.initiator_type`; it opens a turn;
//! - `chat` (one per model request): `gen_ai.input.messages` (the whole history, as JSON text;
//!   the request's prompt is its last user message), `gen_ai.output.messages` (text, reasoning
//!   and tool-call parts), `gen_ai.usage.input_tokens` / `output_tokens`;
//! - `execute_tool`: `gen_ai.tool.name`, `gen_ai.tool.call.id`, `.arguments`, `.result`;
//!   a span status of `ERROR` marks a failure.
//!
//! Prompt and answer text are only there when Visual Studio captures content; without it a
//! turn keeps an empty prompt, its model, tools and tokens.
//!
//! One conversation can be split over several trace files: parsing any of them reads its
//! sibling trace files too and gives the whole conversation, so whichever file is read last
//! the stored session is complete. Files are therefore read whole (not appendable).
//!
//! # Usage rule
//! One usage row per `chat` span (keyed by its span id, so a span repeated in two files counts
//! once) with its input and output tokens.

mod spans;

use std::path::{Path, PathBuf};

use trail_model::SourceKind;

use crate::{discover, FileParse, ParseRequest, Source, SourceError};

/// Visual Studio Copilot trace files.
pub struct VisualStudioCopilot;

/// How trace files end.
pub const TRACE_SUFFIX: &str = "_VSGitHubCopilot_traces.jsonl";

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 1: the first version.
pub const PARSER_VERSION: u32 = 1;

impl Source for VisualStudioCopilot {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::VisualStudioCopilot
    }

    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            // The logs folder (`traces` below it) or the traces folder itself.
            let traces = root.join("traces");
            let base = if traces.is_dir() {
                traces
            } else {
                root.clone()
            };
            out.extend(discover::walk_files(&base, 1, is_trace_name));
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        if is_trace_name(path) {
            return true;
        }
        discover::has_extension(path, "jsonl")
            && memchr::memmem::find(head, b"\"resourceSpans\"").is_some()
            && memchr::memmem::find(head, b"\"vs-copilot\"").is_some()
    }

    fn appendable(&self, _path: &Path) -> bool {
        false
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        spans::parse(request.path)
    }
}

fn is_trace_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(TRACE_SUFFIX))
}

/// The other trace files of the folder `path` is in.
fn siblings(path: &Path) -> Vec<PathBuf> {
    let Some(dir) = path.parent() else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p != path && p.is_file() && is_trace_name(p))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}
