//! Continuing sessions in other agents (issue 14): every session of the shared corpus and the
//! bundled samples, from every source, continued into every target, read back by trail's own
//! parser for the target; the written files checked field by field against what the target's
//! loader checks; idempotence, `fresh`, untouched target folders and redaction.

#![allow(clippy::print_stderr)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde_json::Value;
use trail_continue::{continue_session, ContinueOptions, Target, TargetHomes};
use trail_ingest::{IndexOptions, NoProgress};
use trail_model::{continuation, MessageKind, Role};
use trail_query::{DetailRequest, ListRequest, MessageRow, Query, SessionDetail};
use trail_render::Redactor;
use trail_store::Store;

fn samples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/home")
}

/// `../shared/corpus/<format>` beside the workspace, or `None` after saying it is skipped.
fn shared_corpus(format: &str) -> Option<PathBuf> {
    let base = match std::env::var_os("TRAIL_SHARED") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    };
    let dir = base.join("corpus").join(format);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipped: shared corpus {} not found", dir.display());
        None
    }
}

fn index(store_path: &Path, paths: Vec<PathBuf>) {
    let mut store = Store::open(store_path).unwrap();
    trail_ingest::index(
        &mut store,
        &IndexOptions {
            paths,
            ..IndexOptions::default()
        },
        &NoProgress,
    )
    .unwrap();
}

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-23T12:34:56.789Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn homes(root: &Path) -> TargetHomes {
    TargetHomes {
        claude_projects: Some(root.join(".claude/projects")),
        codex_home: Some(root.join(".codex")),
        gemini_home: Some(root.join(".gemini")),
    }
}

fn options(root: &Path, redact: bool) -> ContinueOptions {
    let mut o = ContinueOptions::new(homes(root)).unwrap();
    o.now = now();
    if !redact {
        o.redactor = Redactor::disabled();
    }
    // Sessions without a recorded folder (VS Code chats, Gemini chats without a marker).
    o.cwd = Some("/home/demo/projects/continued".into());
    o
}

/// Every file under `dir` with a hash of its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, u64> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.insert(p, xxhash_rust::xxh3::xxh3_64(&bytes));
            }
        }
    }
    out
}

fn main_chain(d: &SessionDetail) -> impl Iterator<Item = &MessageRow> {
    d.messages
        .iter()
        .filter(|m| m.on_main_chain && !m.is_sidechain)
}

fn texts(d: &SessionDetail, kind: &str) -> Vec<String> {
    main_chain(d)
        .filter(|m| m.kind.map(MessageKind::as_str) == Some(kind))
        .filter(|m| kind != "text" || m.role == Some(Role::Assistant))
        .map(|m| m.text.clone().unwrap_or_default())
        .filter(|t| !t.trim().is_empty())
        .collect()
}

/// What a continuation must carry, read from a session: prompts, answers (joined per turn:
/// Gemini holds a model turn's answers in one message), tool calls.
#[derive(Debug, PartialEq)]
struct Carried {
    prompts: Vec<String>,
    answers_by_turn: Vec<String>,
    tool_calls: usize,
    tool_results: usize,
}

fn carried(d: &SessionDetail) -> Carried {
    let mut prompts = texts(d, "prompt");
    if let Some(first) = prompts.first_mut() {
        *first = continuation::strip_marker(first).to_string();
        if first.is_empty() {
            prompts.remove(0);
        }
    }
    let mut by_turn: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for m in main_chain(d).filter(|m| {
        m.kind == Some(MessageKind::Text)
            && m.role == Some(Role::Assistant)
            && !m.text.as_deref().unwrap_or("").trim().is_empty()
            && !m.text.as_deref().unwrap_or("").starts_with("Tool output (")
    }) {
        by_turn
            .entry(m.turn_index.unwrap_or(-1))
            .or_default()
            .push(m.text.clone().unwrap_or_default().trim().to_string());
    }
    let tool_calls = main_chain(d)
        .filter(|m| m.kind == Some(MessageKind::ToolCall))
        .count();
    let tool_results = main_chain(d)
        .filter(|m| m.kind == Some(MessageKind::ToolResult))
        .count();
    Carried {
        prompts: prompts.into_iter().map(|p| p.trim().to_string()).collect(),
        answers_by_turn: by_turn.into_values().map(|v| v.join("\n\n")).collect(),
        tool_calls,
        tool_results,
    }
}

fn words(v: &[String]) -> Vec<String> {
    v.iter()
        .flat_map(|t| t.split_whitespace())
        .map(str::to_string)
        .collect()
}

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn is_iso_millis(s: &str) -> bool {
    DateTime::parse_from_rfc3339(s).is_ok() && s.ends_with('Z')
}

/// The checks Claude Code's loader makes, as the public parsers of its files record them
/// (shared notes `formats/claude-code.md`: microsoft/vscode-copilot-chat
/// `src/extension/chatSessions/claude/node/sessionParser/claudeSessionParser.ts`
/// `vChainNodeFields` / `vCommonMessageFields` / `isUserRequest` and `_computeFolderSlug`;
/// ryoppippi/ccusage `adapter/claude` `is_valid_usage_entry`), plus the Anthropic API's rules
/// for the history it is sent on resume (tool ids and names, every tool_use answered).
fn check_claude_file(path: &Path, id: &str, cwd: &str, projects: &Path) {
    // The project folder `claude --resume` looks in from `cwd`.
    assert_eq!(
        path.parent().unwrap(),
        projects.join(trail_continue::claude::slug(cwd))
    );
    assert_eq!(path.file_stem().unwrap().to_str().unwrap(), id);
    assert!(is_uuid(id));
    let recs = lines(path);
    assert!(!recs.is_empty());
    let tool_id = regex_like(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let mut parent = Value::Null;
    let mut open_tool: Option<String> = None;
    for (i, r) in recs.iter().enumerate() {
        // vChainNodeFields: uuid, parentUuid (the previous record: one chain, one leaf).
        let uuid = r["uuid"].as_str().unwrap();
        assert!(is_uuid(uuid), "record {i}");
        assert_eq!(
            r["parentUuid"], parent,
            "record {i} chains to the previous one"
        );
        parent = Value::String(uuid.to_string());
        // vCommonMessageFields.
        assert_eq!(r["sessionId"], id);
        assert!(is_iso_millis(r["timestamp"].as_str().unwrap()));
        assert_eq!(r["isSidechain"], false);
        assert_eq!(r["userType"], "external");
        assert_eq!(r["cwd"], cwd);
        // ccusage's is_valid_usage_entry: a semver-like version.
        let v = r["version"].as_str().unwrap();
        assert_eq!(v.split('.').count(), 3);
        assert!(v.split('.').all(|p| p.parse::<u32>().is_ok()));
        let ty = r["type"].as_str().unwrap();
        let msg = &r["message"];
        assert_eq!(msg["role"], ty, "message.role matches type");
        match ty {
            "user" => {
                if let Some(blocks) = msg["content"].as_array() {
                    let b = &blocks[0];
                    assert_eq!(b["type"], "tool_result");
                    assert_eq!(
                        b["tool_use_id"].as_str(),
                        open_tool.take().as_deref(),
                        "a tool_result answers the tool_use right before it"
                    );
                    assert!(b["content"].is_string());
                    assert!(b["is_error"].is_boolean());
                } else {
                    assert!(msg["content"].is_string(), "a prompt is a string");
                    assert!(open_tool.is_none(), "a tool_use left unanswered");
                }
            }
            "assistant" => {
                assert!(open_tool.is_none(), "a tool_use left unanswered");
                assert!(msg["id"].as_str().is_some_and(|s| !s.is_empty()));
                assert_eq!(msg["type"], "message");
                assert!(msg["model"].is_string());
                assert!(msg["usage"]["input_tokens"].is_u64());
                assert!(msg["usage"]["output_tokens"].is_u64());
                for b in msg["content"].as_array().unwrap() {
                    match b["type"].as_str().unwrap() {
                        "text" => assert!(b["text"].is_string()),
                        "tool_use" => {
                            let tid = b["id"].as_str().unwrap();
                            assert!(tool_id(tid), "tool_use id {tid}");
                            let name = b["name"].as_str().unwrap();
                            assert!(tool_id(name) && name.len() <= 64, "tool name {name}");
                            assert!(b["input"].is_object());
                            open_tool = Some(tid.to_string());
                        }
                        other => panic!("unexpected block {other}"),
                    }
                }
            }
            other => panic!("unexpected record type {other}"),
        }
    }
    assert!(open_tool.is_none(), "the last tool_use is answered");
}

fn regex_like(ok: impl Fn(char) -> bool) -> impl Fn(&str) -> bool {
    move |s: &str| !s.is_empty() && s.chars().all(&ok)
}

/// The checks Codex's loader makes (openai/codex `codex-rs/rollout/src/list.rs`
/// `find_thread_path_by_id_str`, `parse_timestamp_uuid_from_filename`,
/// `read_session_meta_line`, `read_head_summary`; `recorder.rs` `load_rollout_items`,
/// `get_rollout_history`; `protocol.rs` `SessionMeta` / `RolloutLine` / `ResponseItem`).
fn check_codex_file(path: &Path, id: &str, cwd: &str, home: &Path) {
    // find_thread_path_by_id_str: the id parses as a UUID and the file is under sessions/.
    assert!(is_uuid(id));
    let rel = path.strip_prefix(home.join("sessions")).unwrap();
    let parts: Vec<&str> = rel.iter().map(|p| p.to_str().unwrap()).collect();
    assert_eq!(parts.len(), 4, "sessions/YYYY/MM/DD/file");
    // parse_timestamp_uuid_from_filename: rollout-[year]-[month]-[day]T[hour]-[minute]-[second]-<uuid>.jsonl
    let name = parts[3];
    let core = name
        .strip_prefix("rollout-")
        .unwrap()
        .strip_suffix(".jsonl")
        .unwrap();
    let (ts, uuid) = core.split_at(19);
    assert_eq!(&uuid[1..], id);
    assert!(chrono::NaiveDateTime::parse_from_str(ts, "%Y-%m-%dT%H-%M-%S").is_ok());
    // rollout_date_parts: the folders are the name's date.
    assert_eq!(parts[0], &ts[..4]);
    assert_eq!(parts[1], &ts[5..7]);
    assert_eq!(parts[2], &ts[8..10]);
    let recs = lines(path);
    // read_session_meta_line: the first record is the session_meta; load_rollout_items takes
    // the thread id from it; SessionMeta's required fields.
    assert_eq!(recs[0]["type"], "session_meta");
    let meta = &recs[0]["payload"];
    assert_eq!(meta["id"], id);
    assert_eq!(
        meta["session_id"], id,
        "newer SessionMeta carries session_id too"
    );
    assert!(is_iso_millis(meta["timestamp"].as_str().unwrap()));
    assert_eq!(meta["cwd"], cwd);
    assert!(meta["originator"].is_string());
    assert!(meta["cli_version"].is_string());
    // read_head_summary lists only interactive sources (INTERACTIVE_SESSION_SOURCES).
    assert!(matches!(meta["source"].as_str(), Some("cli" | "vscode")));
    assert!(meta.get("history_mode").is_none());
    let mut calls: Vec<String> = Vec::new();
    let mut outputs: Vec<String> = Vec::new();
    let mut user_events = 0;
    for (i, r) in recs.iter().enumerate() {
        // RolloutLine: timestamp, type, payload.
        assert!(is_iso_millis(r["timestamp"].as_str().unwrap()), "line {i}");
        let p = &r["payload"];
        assert!(p.is_object(), "line {i}");
        match r["type"].as_str().unwrap() {
            "session_meta" => assert_eq!(i, 0),
            "response_item" => match p["type"].as_str().unwrap() {
                "message" => {
                    let role = p["role"].as_str().unwrap();
                    let want = if role == "user" {
                        "input_text"
                    } else {
                        assert_eq!(role, "assistant");
                        "output_text"
                    };
                    for c in p["content"].as_array().unwrap() {
                        assert_eq!(c["type"], want);
                        assert!(c["text"].is_string());
                    }
                }
                "function_call" => {
                    let args = p["arguments"].as_str().expect("arguments is a JSON string");
                    assert!(serde_json::from_str::<Value>(args).unwrap().is_object());
                    assert!(p["name"].as_str().is_some_and(|n| !n.is_empty()));
                    calls.push(p["call_id"].as_str().unwrap().to_string());
                }
                "function_call_output" => {
                    assert!(p["output"].is_string());
                    let id = p["call_id"].as_str().unwrap().to_string();
                    assert!(calls.contains(&id), "an output follows its call");
                    outputs.push(id);
                }
                other => panic!("unexpected response_item {other}"),
            },
            "event_msg" => match p["type"].as_str().unwrap() {
                "user_message" => {
                    user_events += 1;
                    assert!(p["message"].is_string());
                }
                "agent_message" => assert!(p["message"].is_string()),
                other => panic!("unexpected event {other}"),
            },
            other => panic!("unexpected line type {other}"),
        }
    }
    calls.sort();
    outputs.sort();
    assert_eq!(calls, outputs, "every function_call has its output");
    // read_head_summary: the picker's preview is the first user_message event.
    assert!(user_events > 0);
}

/// The checks Gemini CLI makes (google-gemini/gemini-cli
/// `packages/cli/src/utils/sessionUtils.ts` `getAllSessionFiles` / `findSession`,
/// `packages/core/src/config/projectRegistry.ts` `findExistingSlugForPath`,
/// `packages/core/src/services/chatRecordingService.ts` record shapes).
fn check_gemini_file(path: &Path, id: &str, cwd: &str, home: &Path) {
    let chats = path.parent().unwrap();
    assert_eq!(chats.file_name().unwrap(), "chats");
    let project = chats.parent().unwrap();
    assert_eq!(project.parent().unwrap(), home.join("tmp"));
    // findExistingSlugForPath: the project folder's .project_root names the working folder.
    assert_eq!(
        std::fs::read_to_string(project.join(".project_root"))
            .unwrap()
            .trim(),
        cwd
    );
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("session-") && name.ends_with(&format!("-{}.jsonl", &id[..8])));
    let recs = lines(path);
    // getAllSessionFiles: a sessionId, not a subagent, a user or gemini message.
    assert_eq!(recs[0]["sessionId"], id);
    assert_ne!(recs[0]["kind"], "subagent");
    assert!(is_iso_millis(recs[0]["startTime"].as_str().unwrap()));
    assert!(is_iso_millis(recs[0]["lastUpdated"].as_str().unwrap()));
    let mut ids = std::collections::HashSet::new();
    let mut spoken = 0;
    for m in &recs[1..] {
        assert!(
            ids.insert(m["id"].as_str().unwrap().to_string()),
            "ids unique"
        );
        assert!(is_iso_millis(m["timestamp"].as_str().unwrap()));
        match m["type"].as_str().unwrap() {
            "user" => {
                spoken += 1;
                assert!(m["content"][0]["text"].is_string());
            }
            "gemini" => {
                spoken += 1;
                assert!(m["content"].is_string());
                for c in m["toolCalls"].as_array().into_iter().flatten() {
                    assert!(c["id"].is_string() && c["name"].is_string());
                    assert!(c["args"].is_object());
                    assert!(matches!(c["status"].as_str(), Some("success" | "error")));
                    let fr = &c["result"][0]["functionResponse"];
                    assert_eq!(fr["id"], c["id"]);
                    assert_eq!(fr["name"], c["name"]);
                }
            }
            other => panic!("unexpected message type {other}"),
        }
    }
    assert!(spoken > 0);
}

/// Indexes the corpus of every source and the samples into one store.
fn source_store(dir: &Path) -> Option<Query> {
    let mut paths = vec![samples()];
    for f in [
        "claude-code",
        "codex",
        "copilot-cli",
        "gemini",
        "copilot-vscode",
        "vscode-export",
    ] {
        paths.push(shared_corpus(f)?);
    }
    let path = dir.join("source.db");
    index(&path, paths);
    Some(Query::open(&path).unwrap())
}

#[test]
fn every_source_continues_into_every_target_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let Some(q) = source_store(dir.path()) else {
        return;
    };
    let clock = trail_query::Clock::utc_now();
    let sessions = q.list(&ListRequest::default(), &clock).unwrap().sessions;
    let mut sources_done = std::collections::BTreeSet::new();
    let mut continued = 0;
    for row in &sessions {
        let original = q
            .detail(&DetailRequest {
                id: row.id.to_string(),
                ..DetailRequest::default()
            })
            .unwrap();
        let want = carried(&original);
        if want.prompts.is_empty() {
            continue; // nothing said: refused, tested below
        }
        for target in Target::ALL {
            let home = tempfile::tempdir().unwrap();
            let opts = options(home.path(), false);
            let c = continue_session(&q, &row.id, target, &opts).unwrap();
            assert!(c.created);
            let cwd = row
                .cwd
                .clone()
                .filter(|c| Path::new(c).is_absolute())
                .unwrap_or("/home/demo/projects/continued".into());
            match target {
                Target::ClaudeCode => check_claude_file(
                    &c.path,
                    &c.session_id,
                    &cwd,
                    &home.path().join(".claude/projects"),
                ),
                Target::Codex => {
                    check_codex_file(&c.path, &c.session_id, &cwd, &home.path().join(".codex"))
                }
                Target::GeminiCli => {
                    check_gemini_file(&c.path, &c.session_id, &cwd, &home.path().join(".gemini"))
                }
            }
            // Read back by trail's own parser for the target.
            let back_path = home.path().join("back.db");
            index(&back_path, vec![c.path.clone()]);
            let back_q = Query::open(&back_path).unwrap();
            let back = back_q
                .detail(&DetailRequest {
                    id: c.session_id.clone(),
                    ..DetailRequest::default()
                })
                .unwrap_or_else(|e| panic!("{} -> {target}: {e}", row.id));
            let ctx = format!("{} ({}) -> {target}", row.id, row.source);
            assert_eq!(back.session.source, target.as_str(), "{ctx}");
            assert_eq!(back.session.cwd.as_deref(), Some(cwd.as_str()), "{ctx}");
            if target != Target::GeminiCli {
                // Gemini CLI's format records no branch.
                assert_eq!(back.session.branch, row.branch, "{ctx}");
            }
            let got = carried(&back);
            assert_eq!(got.prompts, want.prompts, "{ctx}: prompts");
            // Word for word and in order (Gemini joins a model turn's answers in one message).
            assert_eq!(
                words(&got.answers_by_turn),
                words(&want.answers_by_turn),
                "{ctx}: answers"
            );
            assert_eq!(got.tool_calls, want.tool_calls, "{ctx}: tool calls");
            assert_eq!(
                got.tool_results, want.tool_calls,
                "{ctx}: every call answered"
            );
            assert_eq!(c.carried.tool_calls, want.tool_calls, "{ctx}");
            // The link, once indexed: this continuation continues the original.
            let first = texts(&back, "prompt").into_iter().next().unwrap();
            let link = continuation::parse_marker(&first).unwrap();
            assert_eq!(link.session_id, row.id, "{ctx}");
            assert_eq!(link.source, row.source, "{ctx}");
            continued += 1;
        }
        sources_done.insert(row.source.clone());
    }
    eprintln!("continued {continued} sessions from {sources_done:?}");
    for s in [
        "claude-code",
        "codex",
        "copilot-cli",
        "gemini-cli",
        "copilot-vscode",
        "vscode-export",
        "opencode",
    ] {
        assert!(sources_done.contains(s), "no session of {s} was continued");
    }
}

/// A store holding the bundled samples.
fn sample_store(dir: &Path) -> Query {
    let path = dir.join("samples.db");
    index(&path, vec![samples()]);
    Query::open(&path).unwrap()
}

/// A copy of the bundled home, so targets' folders already hold sessions of their own.
fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

const CLAUDE_SAMPLE: &str = "7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f";

#[test]
fn a_second_run_finds_the_first_and_fresh_writes_another() {
    let dir = tempfile::tempdir().unwrap();
    let q = sample_store(dir.path());
    for target in Target::ALL {
        let home = tempfile::tempdir().unwrap();
        let mut opts = options(home.path(), true);
        let first = continue_session(&q, "7c1e2f40", target, &opts).unwrap();
        assert!(first.created, "{target}");
        assert_eq!(first.original_id, CLAUDE_SAMPLE);
        let before = snapshot(home.path());
        // Later, at another time: the same id, the same file, nothing written.
        opts.now = now() + chrono::Duration::days(3);
        let second = continue_session(&q, CLAUDE_SAMPLE, target, &opts).unwrap();
        assert!(!second.created, "{target}");
        assert_eq!(second.session_id, first.session_id);
        assert_eq!(second.path, first.path);
        assert_eq!(
            snapshot(home.path()),
            before,
            "{target}: a second run writes nothing"
        );
        // --fresh: a new id and a new file beside the first.
        opts.fresh = true;
        let fresh = continue_session(&q, CLAUDE_SAMPLE, target, &opts).unwrap();
        assert!(fresh.created);
        assert_ne!(fresh.session_id, first.session_id);
        assert_ne!(fresh.path, first.path);
        let after = snapshot(home.path());
        let added: Vec<&PathBuf> = after.keys().filter(|p| !before.contains_key(*p)).collect();
        assert_eq!(added, vec![&fresh.path], "{target}");
        assert_eq!(
            std::fs::read_to_string(&fresh.path)
                .unwrap()
                .lines()
                .count(),
            std::fs::read_to_string(&first.path)
                .unwrap()
                .lines()
                .count()
        );
    }
}

#[test]
fn nothing_but_the_new_file_changes_in_the_targets_folder() {
    let dir = tempfile::tempdir().unwrap();
    let q = sample_store(dir.path());
    let home = tempfile::tempdir().unwrap();
    copy_tree(&samples(), home.path());
    // The Gemini sample's project folder: a session continued there joins it.
    let garden = "3b9e7c51-2a4d-4f80-b6c3-9d1e5a7f2c04";
    for (id, target) in [
        (CLAUDE_SAMPLE, Target::ClaudeCode),
        (CLAUDE_SAMPLE, Target::Codex),
        (garden, Target::GeminiCli),
        ("019a4c2e", Target::ClaudeCode),
        ("opencode:ses_4a1f", Target::Codex),
    ] {
        let before = snapshot(home.path());
        let c = continue_session(&q, id, target, &options(home.path(), true)).unwrap();
        let after = snapshot(home.path());
        for (path, hash) in &before {
            assert_eq!(
                after.get(path),
                Some(hash),
                "{id} -> {target}: {path:?} changed"
            );
        }
        let added: Vec<&PathBuf> = after.keys().filter(|p| !before.contains_key(*p)).collect();
        assert_eq!(added, vec![&c.path], "{id} -> {target}");
    }
    // The Claude continuation sits beside the original, in the same project folder.
    let claude_dir = home
        .path()
        .join(".claude/projects/-home-demo-projects-weather-cli");
    assert_eq!(
        std::fs::read_dir(&claude_dir)
            .unwrap()
            .filter(|e| e
                .as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "jsonl"))
            .count(),
        2
    );
}

#[test]
fn a_new_gemini_project_is_claimed_as_gemini_claims_one() {
    let dir = tempfile::tempdir().unwrap();
    let q = sample_store(dir.path());
    let home = tempfile::tempdir().unwrap();
    copy_tree(&samples(), home.path());
    let before = snapshot(home.path());
    let c = continue_session(
        &q,
        CLAUDE_SAMPLE,
        Target::GeminiCli,
        &options(home.path(), true),
    )
    .unwrap();
    let marker = home.path().join(".gemini/tmp/weather-cli/.project_root");
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap(),
        "/home/demo/projects/weather-cli"
    );
    let after = snapshot(home.path());
    let mut added: Vec<&PathBuf> = after.keys().filter(|p| !before.contains_key(*p)).collect();
    added.sort();
    let mut want = vec![&c.path, &marker];
    want.sort();
    assert_eq!(added, want);
    assert!(before.iter().all(|(p, h)| after.get(p) == Some(h)));
}

/// Secrets built at run time, so no secret-shaped string sits in the repository.
fn planted() -> [String; 3] {
    [
        format!("AKIA{}", "TRAILTESTKEY0001"),
        format!("ghp_{}", "Tr41lT3stT0k3n".repeat(3)),
        format!("sk-ant-{}", "api03-trailtest".repeat(3)),
    ]
}

/// A Claude Code session (written here, not copied) with secrets in a prompt, a tool's
/// input, its output and an answer, and one tool output of 100 KB.
fn secret_session(root: &Path) -> PathBuf {
    let [aws, gh, ant] = planted();
    let id = "5ec0e7a1-0000-4000-8000-000000000001";
    let dir = root.join("projects/-tmp-secret-proj");
    std::fs::create_dir_all(&dir).unwrap();
    let common = |uuid: &str, parent: Option<&str>, ts: &str| {
        serde_json::json!({"uuid": uuid, "parentUuid": parent, "sessionId": id, "timestamp": ts,
            "isSidechain": false, "userType": "external", "cwd": "/tmp/secret-proj",
            "version": "2.1.5", "gitBranch": "main"})
    };
    let mut recs = Vec::new();
    let mut r = common("u1", None, "2026-11-01T10:00:00.000Z");
    r["type"] = "user".into();
    r["message"] =
        serde_json::json!({"role": "user", "content": format!("deploy with key {aws} please")});
    recs.push(r);
    let mut r = common("a1", Some("u1"), "2026-11-01T10:00:01.000Z");
    r["type"] = "assistant".into();
    r["message"] = serde_json::json!({"id": "msg_1", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "content": [{"type": "tool_use", "id": "toolu_1",
        "name": "Bash", "input": {"command": format!("echo {gh} | gh auth login --with-token")}}],
        "usage": {"input_tokens": 1, "output_tokens": 1}});
    recs.push(r);
    let mut r = common("u2", Some("a1"), "2026-11-01T10:00:02.000Z");
    r["type"] = "user".into();
    let output = format!("using {ant}\n{}", "log line\n".repeat(100 * 1024 / 9));
    r["message"] = serde_json::json!({"role": "user", "content": [{"type": "tool_result",
        "tool_use_id": "toolu_1", "content": output, "is_error": false}]});
    recs.push(r);
    let mut r = common("a2", Some("u2"), "2026-11-01T10:00:03.000Z");
    r["type"] = "assistant".into();
    r["message"] = serde_json::json!({"id": "msg_2", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5", "content": [{"type": "text",
        "text": format!("Deployed; rotate {aws} now.")}],
        "usage": {"input_tokens": 1, "output_tokens": 1}});
    recs.push(r);
    let path = dir.join(format!("{id}.jsonl"));
    let text: String = recs.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn planted_secrets_do_not_reach_the_written_file_and_long_output_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let file = secret_session(dir.path());
    let store = dir.path().join("s.db");
    index(&store, vec![file]);
    let q = Query::open(&store).unwrap();
    for target in Target::ALL {
        let home = tempfile::tempdir().unwrap();
        let c = continue_session(&q, "5ec0e7a1", target, &options(home.path(), true)).unwrap();
        let written = std::fs::read_to_string(&c.path).unwrap();
        for secret in planted() {
            assert!(!written.contains(&secret), "{target}: a secret was written");
        }
        assert!(written.contains("[REDACTED:aws-access-key]"), "{target}");
        assert!(written.contains("[REDACTED:github-token]"), "{target}");
        assert!(written.contains("[REDACTED:anthropic-key]"), "{target}");
        assert!(
            c.carried.redactions >= 4,
            "{target}: {}",
            c.carried.redactions
        );
        // The 100 KB output is cut at the cap, with the marker.
        assert_eq!(c.carried.cut, 1, "{target}");
        assert!(written.contains("[cut by trail: 32768 of "), "{target}");
        // Claude Code keeps a tool's output twice (the tool_result and `toolUseResult`).
        let copies = if target == Target::ClaudeCode { 2 } else { 1 };
        assert!(
            // (JSON escapes each newline of the kept 32 KiB as two bytes.)
            written.len() < copies * 40 * 1024,
            "{target}: {} bytes",
            written.len()
        );
        // --no-redact writes them as recorded.
        let home = tempfile::tempdir().unwrap();
        let c = continue_session(&q, "5ec0e7a1", target, &options(home.path(), false)).unwrap();
        let written = std::fs::read_to_string(&c.path).unwrap();
        for secret in planted() {
            assert!(
                written.contains(&secret),
                "{target}: --no-redact keeps them"
            );
        }
    }
}

#[test]
fn sessions_that_cannot_be_continued_are_refused_as_the_callers_mistake() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.db");
    index(
        &store,
        vec![samples(), samples().join("../chat-export.json")],
    );
    let q = Query::open(&store).unwrap();
    let home = tempfile::tempdir().unwrap();
    // A VS Code "Export Chat" file records no folder: without --cwd there is nowhere to
    // resume it.
    let mut opts = options(home.path(), true);
    opts.cwd = None;
    let err = continue_session(&q, "vscode-export:", Target::ClaudeCode, &opts).unwrap_err();
    assert!(err.is_caller_error());
    assert!(err.to_string().contains("--cwd"), "{err}");
    // An unknown id, and a target whose folder the caller did not give.
    let err = continue_session(&q, "ffffffff", Target::Codex, &opts).unwrap_err();
    assert!(err.is_caller_error());
    opts.homes.codex_home = None;
    let err = continue_session(&q, CLAUDE_SAMPLE, Target::Codex, &opts).unwrap_err();
    assert!(err.is_caller_error());
    assert!(
        std::fs::read_dir(home.path()).unwrap().next().is_none(),
        "nothing written"
    );
}

#[test]
fn the_continuation_is_linked_both_ways_after_the_next_index() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    copy_tree(&samples(), home.path());
    let store = dir.path().join("s.db");
    index(&store, vec![home.path().to_path_buf()]);
    let q = Query::open(&store).unwrap();
    let c = continue_session(
        &q,
        CLAUDE_SAMPLE,
        Target::Codex,
        &options(home.path(), true),
    )
    .unwrap();
    drop(q);
    index(&store, vec![home.path().to_path_buf()]);
    let q = Query::open(&store).unwrap();
    let original = q
        .detail(&DetailRequest {
            id: CLAUDE_SAMPLE.into(),
            ..DetailRequest::default()
        })
        .unwrap();
    let link = trail_store::ContinuationLink {
        original_id: CLAUDE_SAMPLE.into(),
        original_source: "claude-code".into(),
        continuation_id: c.session_id.clone(),
        continuation_source: "codex".into(),
    };
    assert_eq!(original.continuations, vec![link.clone()]);
    let cont = q.session(&c.session_id).unwrap();
    assert_eq!(
        cont.parent_session_id, None,
        "a continuation is a main session"
    );
    assert_eq!(q.continuation_links(&[&c.session_id]).unwrap(), vec![link]);
    // It is listed among main sessions, and reopening it opens the continuation itself.
    let listed = q
        .list(&ListRequest::default(), &trail_query::Clock::utc_now())
        .unwrap();
    assert!(listed.sessions.iter().any(|s| s.id == c.session_id));
    assert_eq!(q.reopen(&c.session_id).unwrap().shell(), c.command.shell());
}

#[test]
fn a_continuation_whose_marker_is_gone_is_unlinked_on_reindex() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let q = sample_store(dir.path());
    let c = continue_session(
        &q,
        CLAUDE_SAMPLE,
        Target::ClaudeCode,
        &options(home.path(), true),
    )
    .unwrap();
    let store = dir.path().join("links.db");
    index(&store, vec![c.path.clone()]);
    let linked = Query::open(&store).unwrap();
    assert_eq!(
        linked.continuation_links(&[&c.session_id]).unwrap().len(),
        1
    );
    drop(linked);
    // The user edits the first line away (the file is theirs now): the link goes with it.
    let text = std::fs::read_to_string(&c.path).unwrap();
    let marker = continuation::marker_line("claude-code", CLAUDE_SAMPLE);
    std::fs::write(&c.path, text.replace(&format!("{marker}\\n\\n"), "")).unwrap();
    let mut s = Store::open(&store).unwrap();
    trail_ingest::index(
        &mut s,
        &IndexOptions {
            paths: vec![c.path.clone()],
            force: true,
            ..IndexOptions::default()
        },
        &NoProgress,
    )
    .unwrap();
    drop(s);
    let unlinked = Query::open(&store).unwrap();
    assert!(unlinked
        .continuation_links(&[&c.session_id])
        .unwrap()
        .is_empty());
}
