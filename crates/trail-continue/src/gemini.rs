//! Gemini CLI target: `<gemini home>/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<first 8
//! of id>.jsonl`, resumed with `gemini --resume <id>` from the session's folder.
//!
//! What Gemini CLI checks (google-gemini/gemini-cli):
//! - `packages/core/src/config/projectRegistry.ts`: the project folder under `tmp/` is the one
//!   `projects.json` maps the working folder to, else any `tmp/<slug>/` whose `.project_root`
//!   file holds that folder (`findExistingSlugForPath`), else a new slug from the folder's
//!   base name (`slugify`: lowercase, non-alphanumerics to `-`, `-N` on collision) claimed by
//!   writing `.project_root` (`ensureOwnershipMarkers`). We follow the same order and, for a
//!   project Gemini has not seen, create the slug folder and its marker as Gemini would (new
//!   files only; Gemini adds the registry entry itself on its next start);
//! - `packages/cli/src/utils/sessionUtils.ts` `getAllSessionFiles` / `findSession`: files in
//!   `chats/` named `session-*.json` or `session-*.jsonl`; the record must load, have a
//!   `sessionId`, at least one `user` or `gemini` message (`hasUserOrAssistantMessage`) and
//!   not be `kind: "subagent"`; `--resume <id>` matches `sessionId` exactly;
//! - `chatRecordingService.ts` (JSONL since PR #23749): the first line is the metadata
//!   (`sessionId`, `projectHash`, `startTime`, `lastUpdated`, `kind`), then one message per
//!   line (`id`, `timestamp`, `type` `user` | `gemini`, `content`); a `gemini` message holds
//!   its tool calls (`toolCalls[]`: `id`, `name`, `args`, `result` as `functionResponse`
//!   parts, `status`, `timestamp`).
//!
//! `projectHash` (the SHA-256 of the project folder) is left out of the metadata: nothing on
//! the listing and lookup path above reads it (trail finds the folder through `.project_root`).

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};

use crate::transcript::{Step, Transcript};
use crate::{ids, ContinueOptions, Location, Result};

const PROJECT_ROOT_FILE: &str = ".project_root";

/// Gemini's `slugify` of a folder's base name.
pub fn slugify(base: &str) -> String {
    let lowered: String = base
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let mut out = String::with_capacity(lowered.len());
    for c in lowered.chars() {
        if c == '-' && out.ends_with('-') {
            continue;
        }
        out.push(c);
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() {
        "project".to_string()
    } else {
        out
    }
}

/// The project folder Gemini uses for `cwd`, and whether it must be claimed (marker written).
fn project_dir(home: &Path, cwd: &str) -> (PathBuf, bool) {
    let tmp = home.join("tmp");
    let registered = std::fs::read_to_string(home.join("projects.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.get("projects")?.get(cwd)?.as_str().map(str::to_string));
    if let Some(slug) = registered {
        return (tmp.join(slug), false);
    }
    if let Ok(rd) = std::fs::read_dir(&tmp) {
        for e in rd.filter_map(|e| e.ok()) {
            let owner = std::fs::read_to_string(e.path().join(PROJECT_ROOT_FILE));
            if owner.is_ok_and(|o| o.trim() == cwd) {
                return (e.path(), false);
            }
        }
    }
    let base = Path::new(cwd)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let slug = slugify(&base);
    let mut n = 0;
    loop {
        let candidate = if n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        };
        if !tmp.join(&candidate).exists() {
            return (tmp.join(candidate), true);
        }
        n += 1;
    }
}

pub(crate) fn locate(home: &Path, cwd: &str, id: &str, now: DateTime<Utc>) -> Location {
    let (dir, claim) = project_dir(home, cwd);
    let chats = dir.join("chats");
    let short = &id[..8];
    let wanted = format!("\"sessionId\":\"{id}\"");
    if let Ok(rd) = std::fs::read_dir(&chats) {
        for e in rd.filter_map(|e| e.ok()) {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("session-")
                && name.ends_with(&format!("-{short}.jsonl"))
                && std::fs::read_to_string(e.path())
                    .is_ok_and(|t| t.lines().next().is_some_and(|l| l.contains(&wanted)))
            {
                return Location {
                    path: e.path(),
                    exists: true,
                    companions: Vec::new(),
                };
            }
        }
    }
    let path = chats.join(format!(
        "session-{}-{short}.jsonl",
        now.format("%Y-%m-%dT%H-%M")
    ));
    let companions = if claim {
        vec![(dir.join(PROJECT_ROOT_FILE), cwd.as_bytes().to_vec())]
    } else {
        Vec::new()
    };
    Location {
        path,
        exists: false,
        companions,
    }
}

pub(crate) fn render(t: &Transcript, id: &str, options: &ContinueOptions) -> Result<Vec<u8>> {
    let now = options
        .now
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let times = t.timestamps(&now);
    let mut out = Vec::with_capacity(t.steps.len() * 512);
    let mut write = |v: &Value| {
        serde_json::to_writer(&mut out, v).expect("a JSON value serializes");
        out.push(b'\n');
    };
    let mut meta = json!({
        "sessionId": id,
        "startTime": times.first().copied().unwrap_or(now.as_str()),
        "lastUpdated": now,
        "kind": "main",
    });
    if let Some(title) = &t.title {
        meta["summary"] = Value::String(title.clone());
    }
    write(&meta);
    // A gemini message holds one answer and the tool calls that follow it (calls with no
    // answer before them get a message with empty text), as Gemini records a model response.
    let mut pending: Option<Map<String, Value>> = None;
    let mut n = 0usize;
    let mut next_id = || {
        n += 1;
        ids::record_id(id, n)
    };
    let flush = |pending: &mut Option<Map<String, Value>>, write: &mut dyn FnMut(&Value)| {
        if let Some(m) = pending.take() {
            write(&Value::Object(m));
        }
    };
    for (step, ts) in t.steps.iter().zip(times) {
        match step {
            Step::Prompt { text, .. } => {
                flush(&mut pending, &mut write);
                write(&json!({"id": next_id(), "timestamp": ts, "type": "user",
                              "content": [{"text": text}]}));
            }
            Step::Answer { text, .. } => {
                // Each answer is one model response: a message of its own, which the tool
                // calls that follow it join.
                flush(&mut pending, &mut write);
                let mut m = model_message(next_id(), ts);
                m.insert("content".into(), Value::String(text.clone()));
                pending = Some(m);
            }
            Step::Tool(tool) => {
                let m = pending.get_or_insert_with(|| model_message(next_id(), ts));
                let name = ids::tool_name(&tool.name);
                let output = tool
                    .output
                    .clone()
                    .unwrap_or_else(|| "(no result was recorded)".to_string());
                let status = if tool.is_error || tool.output.is_none() {
                    "error"
                } else {
                    "success"
                };
                let call = json!({
                    "id": tool.call_id,
                    "name": name,
                    "args": tool.input,
                    "result": [{"functionResponse": {
                        "id": tool.call_id, "name": name, "response": {"output": output}
                    }}],
                    "status": status,
                    "timestamp": ts,
                });
                match m
                    .entry("toolCalls")
                    .or_insert_with(|| Value::Array(Vec::new()))
                {
                    Value::Array(calls) => calls.push(call),
                    other => *other = Value::Array(vec![call]),
                }
            }
        }
    }
    flush(&mut pending, &mut write);
    Ok(out)
}

fn model_message(id: String, ts: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("id".into(), Value::String(id));
    m.insert("timestamp".into(), Value::String(ts.to_string()));
    m.insert("type".into(), Value::String("gemini".into()));
    m.insert("content".into(), Value::String(String::new()));
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugify_follows_gemini() {
        assert_eq!(slugify("My App"), "my-app");
        assert_eq!(slugify("--garden__planner--"), "garden-planner");
        assert_eq!(slugify("日本"), "project");
    }
}
