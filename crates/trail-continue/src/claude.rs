//! Claude Code target: `<projects>/<slug of cwd>/<session uuid>.jsonl`, resumed with
//! `claude --resume <uuid>` from the session's folder.
//!
//! Claude Code is closed source. What its loader needs comes from the public parsers that read
//! the same files (the shared notes `formats/claude-code.md`: microsoft/vscode-copilot-chat's
//! `claudeSessionParser.ts` and `_computeFolderSlug`, ccusage's `is_valid_usage_entry`,
//! claude-code-log's `models.py`) and from real files in the shared corpus (versions 1.0.98 to
//! 2.1.x):
//! - the folder: `claude --resume` looks in the project folder of the current directory, named
//!   by replacing path separators, spaces and dots with `-` (VS Code's `_computeFolderSlug`,
//!   "matches the Claude Code slug format"; the shared notes infer that Claude Code replaces
//!   every character that is not an ASCII letter or digit, which agrees with VS Code's rule on
//!   every path that rule handles, and also covers `_` and other punctuation, so that is the
//!   rule used here);
//! - the file stem is the session id, a UUID, equal to every record's `sessionId`;
//! - every record is a chain node: `uuid`, `parentUuid` (null for the first, then the previous
//!   record's, so the whole file is one chain ending at the last record, the leaf a loader
//!   resumes from), `sessionId`, `timestamp` (ISO-8601 UTC with milliseconds), `type` `user` or
//!   `assistant`, `isSidechain: false`, `userType: "external"`, `cwd`, `version` (semver;
//!   ccusage drops entries without one), `gitBranch` when known, and `message`;
//! - `message` is `{role, content}`: a prompt's content is a string; an assistant entry is an
//!   API message (`id`, `type: "message"`, `role`, `model`, `content` blocks, `stop_reason`,
//!   `stop_sequence`, `usage`); a tool call is a `tool_use` block (`id` matching
//!   `^[a-zA-Z0-9_-]+$`, `name`, `input` object) answered by the next user entry's
//!   `tool_result` block (`tool_use_id`, `content`, `is_error`) with `toolUseResult`;
//! - answers were not produced by Claude in this session, so their model is `<synthetic>`,
//!   the name Claude Code gives messages it made itself (usage readers skip them), with zero
//!   usage.

use std::path::Path;

use serde_json::{json, Value};

use crate::ids;
use crate::transcript::{Step, Transcript};
use crate::{ContinueOptions, Location, Result};

/// The `version` written on every record: a Claude Code release whose record layout this
/// module writes (the corpus holds 1.0.98 to 2.1.x files of this shape).
pub const RECORD_VERSION: &str = "2.0.0";

/// Returns Claude Code's project folder name for a working folder.
pub fn slug(cwd: &str) -> String {
    cwd.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

pub(crate) fn locate(projects: &Path, cwd: &str, id: &str) -> Location {
    let path = projects.join(slug(cwd)).join(format!("{id}.jsonl"));
    Location {
        exists: path.exists(),
        path,
        companions: Vec::new(),
    }
}

pub(crate) fn render(t: &Transcript, id: &str, options: &ContinueOptions) -> Result<Vec<u8>> {
    let now = options
        .now
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let times = t.timestamps(&now);
    let mut out = Vec::with_capacity(t.steps.len() * 512);
    let mut n = 0usize;
    let mut parent: Option<String> = None;
    let mut emit = |out: &mut Vec<u8>, ty: &str, ts: &str, message: Value, extra: Option<Value>| {
        let uuid = ids::record_id(id, n);
        n += 1;
        let mut rec = json!({
            "parentUuid": parent,
            "isSidechain": false,
            "userType": "external",
            "cwd": t.cwd,
            "sessionId": id,
            "version": RECORD_VERSION,
            "type": ty,
            "message": message,
            "uuid": uuid,
            "timestamp": ts,
        });
        if let Some(b) = &t.branch {
            rec["gitBranch"] = Value::String(b.clone());
        }
        if let Some(Value::Object(extra)) = extra {
            for (k, v) in extra {
                rec[k] = v;
            }
        }
        serde_json::to_writer(&mut *out, &rec).expect("a JSON value serializes");
        out.push(b'\n');
        parent = Some(uuid);
    };
    let assistant = |id: &str, n: usize, content: Value, stop: &str| {
        json!({
            "id": format!("msg_trail_{}", ids::name_uuid(&[id, "message", &n.to_string()]).replace('-', "")),
            "type": "message",
            "role": "assistant",
            "model": "<synthetic>",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": null,
            "usage": {
                "input_tokens": 0,
                "output_tokens": 0,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0
            }
        })
    };
    for (i, (step, ts)) in t.steps.iter().zip(times).enumerate() {
        match step {
            Step::Prompt { text, .. } => emit(
                &mut out,
                "user",
                ts,
                json!({"role": "user", "content": text}),
                None,
            ),
            Step::Answer { text, .. } => emit(
                &mut out,
                "assistant",
                ts,
                assistant(id, i, json!([{"type": "text", "text": text}]), "end_turn"),
                None,
            ),
            Step::Tool(tool) => {
                let tool_id = ids::tool_id(id, &tool.call_id);
                let call = json!([{
                    "type": "tool_use",
                    "id": tool_id,
                    "name": ids::tool_name(&tool.name),
                    "input": tool.input,
                }]);
                emit(
                    &mut out,
                    "assistant",
                    ts,
                    assistant(id, i, call, "tool_use"),
                    None,
                );
                // The API needs every tool_use answered by a tool_result in the next message.
                let output = tool
                    .output
                    .clone()
                    .unwrap_or_else(|| "(no result was recorded)".to_string());
                emit(
                    &mut out,
                    "user",
                    ts,
                    json!({"role": "user", "content": [{
                        "type": "tool_result",
                        "tool_use_id": tool_id,
                        "content": output,
                        "is_error": tool.is_error || tool.output.is_none(),
                    }]}),
                    Some(json!({"toolUseResult": output})),
                );
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slug_replaces_what_vs_codes_rule_replaces_and_more() {
        assert_eq!(
            slug("/home/demo/projects/weather-cli"),
            "-home-demo-projects-weather-cli"
        );
        assert_eq!(slug("/Users/me/my.proj"), "-Users-me-my-proj");
        assert_eq!(slug("/Users/me/my proj"), "-Users-me-my-proj");
        assert_eq!(slug("/srv/a_b"), "-srv-a-b");
    }
}
