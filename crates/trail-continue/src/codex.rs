//! Codex CLI target: a rollout `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-
//! <uuid>.jsonl`, resumed with `codex resume <uuid>`.
//!
//! What Codex's loader checks (openai/codex, `codex-rs/rollout/src`):
//! - `list.rs` `find_thread_path_by_id_str`: the id must parse as a UUID; the state database is
//!   asked first and, when it has no row, the file is found under `sessions/` by its name
//!   (`parse_timestamp_uuid_from_filename`: `rollout-` + `[year]-[month]-[day]T[hour]-[minute]-
//!   [second]` + `-<uuid>.jsonl`), and Codex then repairs its database row itself;
//! - `list.rs` `read_session_meta_line`: the first record must be the `session_meta`;
//! - `recorder.rs` `load_rollout_items`: every line is a `RolloutLine` (`timestamp`, `type`,
//!   `payload`); the first `session_meta`'s `id` is the thread id ("failed to parse thread ID
//!   from rollout file" otherwise); `history_mode`, when present, must be a known mode (we
//!   write none);
//! - `list.rs` `read_head_summary` (the `codex resume` picker): `session_meta` gives `id`,
//!   `cwd`, `git.branch`, `cli_version`, `timestamp` and `source` (only `cli` and `vscode`
//!   sessions are listed), and the first `event_msg` `user_message` gives the preview.
//!
//! `session_meta` carries what Codex writes itself (corpus, 0.50 to 0.146): `id` (and
//! `session_id`, equal to it, as 0.146 writes), `timestamp`,
//! `cwd`, `originator`, `cli_version`, `source`, `git {branch}`. The conversation is
//! `response_item`s (the model-visible history: `message` with `input_text` / `output_text`,
//! `function_call` with `arguments` as a JSON string and `call_id`, `function_call_output`
//! with `output` text), each prompt and answer echoed as an `event_msg` (`user_message`,
//! `agent_message`), which is what Codex's TUI shows when it replays a resumed thread.

use std::path::Path;

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use crate::transcript::{Step, Transcript};
use crate::{ContinueOptions, Location, Result};

/// `session_meta.originator`: who wrote the rollout.
pub const ORIGINATOR: &str = "trail";

pub(crate) fn locate(home: &Path, id: &str, now: DateTime<Utc>) -> Location {
    let sessions = home.join("sessions");
    if let Some(existing) = find_rollout(&sessions, id) {
        return Location {
            path: existing,
            exists: true,
            companions: Vec::new(),
        };
    }
    let path = sessions
        .join(now.format("%Y").to_string())
        .join(now.format("%m").to_string())
        .join(now.format("%d").to_string())
        .join(format!(
            "rollout-{}-{id}.jsonl",
            now.format("%Y-%m-%dT%H-%M-%S")
        ));
    Location {
        path,
        exists: false,
        companions: Vec::new(),
    }
}

/// Finds `sessions/YYYY/MM/DD/rollout-*-<id>.jsonl` (the date is the one of the first run).
fn find_rollout(sessions: &Path, id: &str) -> Option<std::path::PathBuf> {
    let suffix = format!("-{id}.jsonl");
    let dirs = |p: &Path| -> Vec<std::path::PathBuf> {
        std::fs::read_dir(p)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default()
    };
    for year in dirs(sessions) {
        for month in dirs(&year) {
            for day in dirs(&month) {
                let candidate = std::fs::read_dir(&day)
                    .ok()?
                    .filter_map(|e| e.ok())
                    .find(|e| {
                        let name = e.file_name();
                        let name = name.to_string_lossy();
                        name.starts_with("rollout-") && name.ends_with(&suffix)
                    });
                if let Some(c) = candidate {
                    return Some(c.path());
                }
            }
        }
    }
    None
}

pub(crate) fn render(t: &Transcript, id: &str, options: &ContinueOptions) -> Result<Vec<u8>> {
    let now = options
        .now
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let times = t.timestamps(&now);
    let mut out = Vec::with_capacity(t.steps.len() * 512);
    let mut line = |ts: &str, ty: &str, payload: Value| {
        let v = json!({"timestamp": ts, "type": ty, "payload": payload});
        serde_json::to_writer(&mut out, &v).expect("a JSON value serializes");
        out.push(b'\n');
    };
    let mut meta = json!({
        "id": id,
        // Newer builds also carry `session_id` (equal to `id` for a thread of its own, as in
        // the corpus's 0.146 rollouts); older builds ignore it.
        "session_id": id,
        "timestamp": now,
        "cwd": t.cwd,
        "originator": ORIGINATOR,
        "cli_version": env!("CARGO_PKG_VERSION"),
        "source": "cli",
    });
    if let Some(b) = &t.branch {
        meta["git"] = json!({"branch": b});
    }
    line(&now, "session_meta", meta);
    for (step, ts) in t.steps.iter().zip(times) {
        match step {
            Step::Prompt { text, .. } => {
                line(
                    ts,
                    "response_item",
                    json!({"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": text}]}),
                );
                line(
                    ts,
                    "event_msg",
                    json!({"type": "user_message", "message": text, "images": [],
                           "local_images": [], "text_elements": []}),
                );
            }
            Step::Answer { text, .. } => {
                line(
                    ts,
                    "response_item",
                    json!({"type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": text}]}),
                );
                line(
                    ts,
                    "event_msg",
                    json!({"type": "agent_message", "message": text}),
                );
            }
            Step::Tool(tool) => {
                let arguments = serde_json::to_string(&tool.input).expect("a JSON map serializes");
                line(
                    ts,
                    "response_item",
                    json!({"type": "function_call", "name": crate::ids::tool_name(&tool.name),
                           "arguments": arguments, "call_id": tool.call_id}),
                );
                // Codex pairs every call with an output by call_id before sending history.
                let output = match (&tool.output, tool.is_error) {
                    (Some(o), false) => o.clone(),
                    (Some(o), true) => format!("(the tool reported an error)\n{o}"),
                    (None, _) => "(no result was recorded)".to_string(),
                };
                line(
                    ts,
                    "response_item",
                    json!({"type": "function_call_output", "call_id": tool.call_id,
                           "output": output}),
                );
            }
        }
    }
    Ok(out)
}
