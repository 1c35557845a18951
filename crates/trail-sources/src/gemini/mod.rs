//! Gemini CLI chats: `<gemini home>/tmp/<project>/chats/session-*.json` (one JSON document,
//! rewritten whole) and `session-*.jsonl` (records keyed by message id), plus sub-agent chats
//! in `chats/<parent session id>/<id>.jsonl`.
//!
//! JSONL records are told apart by shape: a metadata header (`sessionId`, `projectHash`...),
//! a message (`id` + `type`; a later line with the same id replaces the earlier one in
//! place), `{"$set": {...}}` (metadata merge; with `messages` it rebuilds the list) and
//! `{"$rewindTo": id}` (drops that message and everything after it; an unknown id drops all).
//! Because earlier lines can be rewritten by later ones the format is not appendable: a
//! changed file is parsed again from the start.
//!
//! # Usage rule
//! One usage row per final `gemini` message that has `tokens` (replaced versions and
//! rewound messages are gone before counting, so nothing counts twice). Gemini's
//! `input` (prompt tokens) includes `cached`; `thoughts` and `tool` (tool-use prompt tokens)
//! are outside `input` and `output`. We store `input = input - cached + tool`,
//! `cache_read = cached`, `output = output + thoughts`, `reasoning = thoughts`, so the summed
//! columns equal Gemini's `total`. A message whose counters are all zero is kept with
//! `tokens_known = false`.
//!
//! # Project folder
//! The cwd comes from a `.project_root` file in the project folder, else from
//! `<gemini home>/projects.json` (by slug, or by the SHA-256 of a listed path for legacy
//! hash-named folders).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use trail_model::{
    time, turns, FileTouch, Message, MessageKind, ParentLink, Role, Session, SessionId,
    SessionMeta, SourceKind, UpdateMode, Usage,
};

use crate::shared::blocks::GeminiCounts;
use crate::{discover, ids, jsonl, refs, FileParse, ParseRequest, Source, SourceError};

/// Gemini CLI chat files.
pub struct Gemini;

const TITLE_CHARS: usize = 200;

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 1: the first version.
/// 2: a leading BOM is skipped (it lost the session header); bytes after a JSON chat keep it,
///    as a problem (issue 40).
pub const PARSER_VERSION: u32 = 2;

impl Source for Gemini {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::GeminiCli
    }

    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            out.extend(discover::walk_files(&root.join("tmp"), 5, is_chat_file));
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        if is_chat_file(path) {
            return true;
        }
        let json = discover::has_extension(path, "json") || discover::has_extension(path, "jsonl");
        json && memchr::memmem::find(head, b"\"sessionId\"").is_some()
            && memchr::memmem::find(head, b"\"projectHash\"").is_some()
    }

    fn appendable(&self, _path: &Path) -> bool {
        // JSONL lines can replace or rewind earlier messages; the JSON form is rewritten whole.
        false
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        let path = request.path;
        let mut conv = Conversation::default();
        let mut result = FileParse::default();
        if discover::has_extension(path, "jsonl") {
            let outcome = jsonl::read_lines(path, 0, 0, |_, line| {
                let v: Value =
                    serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
                match v {
                    Value::Object(o) => {
                        conv.record(o);
                        Ok(())
                    }
                    _ => Err("a chat record must be a JSON object".into()),
                }
            })?;
            result.issues = outcome.issues;
            result.bytes_parsed = outcome.bytes_parsed;
            result.bytes_read = outcome.bytes_read;
            result.lines = outcome.lines;
        } else {
            let bytes = std::fs::read(path).map_err(|e| SourceError::io(path, e))?;
            let doc = crate::whole::parse_json(path, &bytes)
                .map_err(|e| SourceError::format(path, format!("not a Gemini chat: {e}")))?;
            result.issues.extend(doc.trailing);
            let v = doc.value;
            let Value::Object(mut o) = v else {
                return Err(SourceError::format(
                    path,
                    "not a Gemini chat: not an object",
                ));
            };
            let messages = o.remove("messages");
            conv.merge_meta(&o);
            match messages {
                Some(Value::Array(list)) => conv.replace_all(list),
                Some(Value::Null) | None => {}
                Some(_) => {
                    return Err(SourceError::format(path, "`messages` is not a list"));
                }
            }
            result.bytes_parsed = bytes.len() as u64;
            result.bytes_read = bytes.len() as u64;
        }
        if conv.meta.is_empty() && conv.entries.is_empty() {
            return Ok(result);
        }
        let session = build_session(path, conv);
        tracing::debug!(
            path = %path.display(),
            messages = session.messages.len(),
            usage = session.usage.len(),
            "parsed gemini chat"
        );
        result.sessions.push(session);
        Ok(result)
    }
}

fn is_chat_file(path: &Path) -> bool {
    if !(discover::has_extension(path, "json") || discover::has_extension(path, "jsonl")) {
        return false;
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let parent = path.parent();
    let parent_name = parent.and_then(|p| p.file_name()).and_then(|n| n.to_str());
    let grand_name = parent
        .and_then(Path::parent)
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str());
    (parent_name == Some("chats") && name.starts_with("session-"))
        || (grand_name == Some("chats") && discover::has_extension(path, "jsonl"))
}

/// The reconstructed chat: merged metadata and messages in order.
#[derive(Default)]
struct Conversation {
    meta: Map<String, Value>,
    /// `(id, record)` in order; records without an id get none.
    entries: Vec<(Option<String>, Value)>,
    index: HashMap<String, usize>,
}

impl Conversation {
    fn record(&mut self, o: Map<String, Value>) {
        if let Some(target) = o.get("$rewindTo") {
            let pos = target
                .as_str()
                .and_then(|id| self.index.get(id).copied())
                .unwrap_or(0);
            self.entries.truncate(pos);
            self.reindex();
        } else if let Some(set) = o.get("$set") {
            if let Some(set) = set.as_object() {
                let mut set = set.clone();
                let messages = set.remove("messages");
                self.merge_meta(&set);
                if let Some(Value::Array(list)) = messages {
                    self.replace_all(list);
                }
            }
        } else if o.contains_key("type") && o.get("id").is_some_and(|i| !i.is_null()) {
            self.upsert(Value::Object(o));
        } else if o.contains_key("sessionId")
            || o.contains_key("projectHash")
            || o.contains_key("startTime")
        {
            self.merge_meta(&o);
        } else {
            self.entries.push((None, Value::Object(o)));
        }
    }

    fn merge_meta(&mut self, o: &Map<String, Value>) {
        for (k, v) in o {
            self.meta.insert(k.clone(), v.clone());
        }
    }

    fn replace_all(&mut self, list: Vec<Value>) {
        self.entries.clear();
        self.index.clear();
        for v in list {
            self.upsert(v);
        }
    }

    fn upsert(&mut self, v: Value) {
        let id = v.get("id").and_then(id_text);
        match id.as_ref().and_then(|i| self.index.get(i).copied()) {
            Some(pos) => {
                if let Some(slot) = self.entries.get_mut(pos) {
                    slot.1 = v;
                }
            }
            None => {
                if let Some(i) = &id {
                    self.index.insert(i.clone(), self.entries.len());
                }
                self.entries.push((id, v));
            }
        }
    }

    fn reindex(&mut self) {
        self.index.clear();
        for (pos, (id, _)) in self.entries.iter().enumerate() {
            if let Some(i) = id {
                self.index.insert(i.clone(), pos);
            }
        }
    }
}

fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn build_session(path: &Path, conv: Conversation) -> Session {
    let meta_str = |k: &str| {
        conv.meta
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let native = meta_str("sessionId").unwrap_or_else(|| {
        path.file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("unknown")
            .to_string()
    });
    let mut meta = SessionMeta::new(session_id_for(&native), SourceKind::GeminiCli, &native);
    meta.cwd = project_cwd(path, meta_str("projectHash").as_deref());
    let is_subagent = meta_str("kind").as_deref() == Some("subagent");
    let nested_parent = nested_parent_id(path);
    if is_subagent || nested_parent.is_some() {
        if let Some(parent) = nested_parent {
            meta.parent = Some(ParentLink {
                session_id: session_id_for(&parent),
                tool_call_id: None,
                agent_ref: Some(native.clone()),
            });
        }
    }
    for k in ["startTime", "lastUpdated"] {
        if let Some(t) = conv.meta.get(k).and_then(time::from_json) {
            meta.observe_timestamp(&t);
        }
    }
    let mut session = Session::new(meta);
    let mut b = Builder {
        session: &mut session,
        messages: Vec::new(),
    };
    for (n, (_, rec)) in conv.entries.iter().enumerate() {
        b.entry(n, rec);
    }
    let mut messages = b.messages;
    for (i, m) in messages.iter_mut().enumerate() {
        m.seq = u32::try_from(i).unwrap_or(u32::MAX);
        m.on_main_chain = true;
    }
    let order: Vec<usize> = (0..messages.len()).collect();
    session.turn_count = turns::assign_turn_indexes(&mut messages, &order);
    // Derived rows were recorded with the message position; fill in turn indexes.
    fix_turns(&mut session, &messages);
    session.turns = turns::build_turns(&messages);
    if session.meta.title.is_none() {
        session.meta.title = meta_str("summary").or_else(|| {
            messages
                .iter()
                .find(|m| m.kind == Some(MessageKind::Prompt) && !m.text.trim().is_empty())
                .map(|m| trail_model::truncate_chars(m.text.trim(), TITLE_CHARS).to_string())
        });
    }
    session.messages = messages;
    session.mode = UpdateMode::Replace;
    session
}

/// Files and refs were recorded with a message position in `turn_index`; map it to the
/// message's turn.
fn fix_turns(session: &mut Session, messages: &[Message]) {
    let turn_of = |pos: Option<u32>| {
        pos.and_then(|p| messages.get(p as usize))
            .and_then(|m| m.turn_index)
    };
    for f in &mut session.files {
        f.turn_index = turn_of(f.turn_index);
    }
    for r in &mut session.refs {
        r.turn_index = turn_of(r.turn_index);
    }
}

struct Builder<'a> {
    session: &'a mut Session,
    messages: Vec<Message>,
}

impl Builder<'_> {
    fn pos(&self) -> Option<u32> {
        u32::try_from(self.messages.len()).ok()
    }

    fn add_refs(&mut self, text: &str, git_output: bool, ts: Option<&str>) {
        let pos = self.pos();
        for r in refs::session_refs(text, git_output, pos, ts) {
            self.session.add_ref(r);
        }
    }

    fn push(&mut self, m: Message) {
        self.messages.push(m);
    }

    fn entry(&mut self, n: usize, rec: &Value) {
        let ts = rec.get("timestamp").and_then(time::from_json);
        if let Some(t) = &ts {
            self.session.meta.observe_timestamp(t);
        }
        let ts = ts.as_deref();
        let native_id = rec.get("id").and_then(id_text);
        let base = |role: Role, kind: MessageKind, text: String| {
            Message::new(role, kind, text)
                .with_native_id(native_id.clone())
                .with_timestamp(ts.map(str::to_string))
        };
        let t = rec.get("type").and_then(Value::as_str).unwrap_or_default();
        match t {
            "user" => {
                let text = match rec.get("displayContent") {
                    Some(d) if !d.is_null() => parts_text(d),
                    _ => parts_text(rec.get("content").unwrap_or(&Value::Null)),
                };
                self.add_refs(&text, false, ts);
                self.push(base(Role::User, MessageKind::Prompt, text));
            }
            "gemini" | "model" => self.model_message(n, rec, ts, native_id.clone()),
            "info" | "warning" => {
                let text = parts_text(rec.get("content").unwrap_or(&Value::Null));
                self.push(base(Role::System, MessageKind::Meta, text));
            }
            "error" => {
                let text = parts_text(rec.get("content").unwrap_or(&Value::Null));
                self.push(base(Role::System, MessageKind::Error, text));
            }
            _ => {
                let mut m = base(Role::System, MessageKind::Unknown, String::new());
                m.extra = Some(rec.to_string());
                self.push(m);
            }
        }
    }

    fn model_message(
        &mut self,
        n: usize,
        rec: &Value,
        ts: Option<&str>,
        native_id: Option<String>,
    ) {
        let model = rec
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .map(str::to_string);
        if let Some(m) = &model {
            self.session.observe_model(m);
        }
        let base = |role: Role, kind: MessageKind, text: String| {
            Message::new(role, kind, text)
                .with_native_id(native_id.clone())
                .with_model(model.clone())
                .with_timestamp(ts.map(str::to_string))
        };
        let start = self.messages.len();
        if let Some(thoughts) = rec.get("thoughts").and_then(Value::as_array) {
            for th in thoughts {
                let text = thought_text(th);
                if !text.is_empty() {
                    self.push(base(Role::Assistant, MessageKind::Thinking, text));
                }
            }
        }
        let content = rec
            .get("content")
            .filter(|c| !c.is_null())
            .or_else(|| rec.get("parts"))
            .unwrap_or(&Value::Null);
        let text = parts_text(content);
        if !text.is_empty() {
            self.add_refs(&text, false, ts);
            self.push(base(Role::Assistant, MessageKind::Text, text));
        }
        if let Some(calls) = rec.get("toolCalls").and_then(Value::as_array) {
            for call in calls {
                self.tool_call(call, ts, &base);
            }
        }
        if let Some(tokens) = rec.get("tokens").filter(|t| t.is_object()) {
            let n64 = |k: &str| tokens.get(k).and_then(Value::as_u64).unwrap_or(0);
            let counts = GeminiCounts {
                prompt: n64("input"),
                cached: n64("cached"),
                candidates: n64("output"),
                thoughts: n64("thoughts"),
                tool: n64("tool"),
                total: n64("total"),
            };
            let key = native_id.clone().unwrap_or_else(|| format!("index:{n}"));
            self.session.usage.push(
                counts.apply(Usage {
                    request_key: key,
                    message_id: native_id.clone(),
                    message_seq: (self.messages.len() > start)
                        .then(|| u32::try_from(start).ok())
                        .flatten(),
                    model: model.clone(),
                    timestamp: ts.map(str::to_string),
                    ..Usage::default()
                }),
            );
        }
    }

    fn tool_call(
        &mut self,
        call: &Value,
        ts: Option<&str>,
        base: &dyn Fn(Role, MessageKind, String) -> Message,
    ) {
        let name = call
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_string();
        let id = call.get("id").and_then(id_text);
        let call_ts = call
            .get("timestamp")
            .and_then(time::from_json)
            .or_else(|| ts.map(str::to_string));
        let args = call.get("args").cloned().unwrap_or(Value::Null);
        let input = args.to_string();
        self.add_refs(&input, false, call_ts.as_deref());
        for p in arg_paths(&args) {
            let pos = self.pos();
            self.session.add_file(FileTouch {
                path: p,
                tool_name: Some(name.clone()),
                turn_index: pos,
                first_seen_at: call_ts.clone(),
            });
        }
        let intent = call
            .get("description")
            .and_then(Value::as_str)
            .and_then(|d| d.lines().next())
            .unwrap_or("")
            .to_string();
        let mut m = base(Role::Assistant, MessageKind::ToolCall, intent);
        m.tool_name = Some(name.clone());
        m.tool_call_id = id.clone();
        m.tool_input = Some(input);
        m.timestamp = call_ts.clone();
        m.agent_ref = call
            .get("agentId")
            .and_then(Value::as_str)
            .map(str::to_string);
        self.push(m);

        let status = call.get("status").and_then(Value::as_str).unwrap_or("");
        let result = call.get("result").filter(|r| !r.is_null());
        if result.is_none() && matches!(status, "" | "executing" | "scheduled" | "validating") {
            return; // still running: no result yet
        }
        let (mut output, mut is_error) = result.map(result_text).unwrap_or_default();
        if output.is_empty() {
            if let Some(d) = call.get("resultDisplay").filter(|d| !d.is_null()) {
                output = match d {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
            }
        }
        if matches!(status, "error" | "cancelled") {
            is_error = true;
        }
        if exit_code(&output).is_some_and(|c| c != 0) {
            is_error = true;
        }
        if name == "run_shell_command" || name == "shell" {
            self.add_refs(&output, true, call_ts.as_deref());
        }
        let mut r = base(Role::Tool, MessageKind::ToolResult, String::new());
        r.model = None;
        r.tool_name = Some(name);
        r.tool_call_id = id;
        r.tool_output = Some(output);
        r.is_error = is_error;
        r.timestamp = call_ts;
        self.push(r);
    }
}

fn thought_text(th: &Value) -> String {
    match th {
        Value::String(s) => s.clone(),
        _ => {
            let subject = th.get("subject").and_then(Value::as_str).unwrap_or("");
            let desc = th.get("description").and_then(Value::as_str).unwrap_or("");
            match (subject.is_empty(), desc.is_empty()) {
                (false, false) => format!("{subject}: {desc}"),
                (false, true) => subject.to_string(),
                _ => desc.to_string(),
            }
        }
    }
}

/// The readable text of a `PartListUnion`: a string, a part, or a list of them. Text parts
/// are joined; function calls, responses and inline data add nothing.
fn parts_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let texts: Vec<String> = items
                .iter()
                .map(parts_text)
                .filter(|t| !t.is_empty())
                .collect();
            texts.join("\n")
        }
        Value::Object(o) => {
            if o.get("thought").and_then(Value::as_bool) == Some(true) {
                return String::new();
            }
            o.get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        }
        _ => String::new(),
    }
}

/// A tool result's text and whether it reports an error.
fn result_text(v: &Value) -> (String, bool) {
    let mut texts = Vec::new();
    let mut is_error = false;
    collect_result(v, &mut texts, &mut is_error);
    (texts.join("\n"), is_error)
}

fn collect_result(v: &Value, texts: &mut Vec<String>, is_error: &mut bool) {
    match v {
        Value::String(s) => texts.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| collect_result(x, texts, is_error)),
        Value::Object(o) => {
            if let Some(fr) = o.get("functionResponse") {
                let resp = fr.get("response").unwrap_or(&Value::Null);
                if let Some(e) = resp.get("error").filter(|e| !e.is_null()) {
                    *is_error = true;
                    texts.push(match e {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    });
                } else if let Some(out) = resp.get("output") {
                    texts.push(match out {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    });
                } else if !resp.is_null() {
                    texts.push(resp.to_string());
                }
            } else if let Some(t) = o.get("text").and_then(Value::as_str) {
                texts.push(t.to_string());
            }
        }
        _ => {}
    }
}

/// `Exit Code: N` as `run_shell_command` reports it (the label may follow a real newline or
/// an escaped `\n`).
fn exit_code(text: &str) -> Option<i64> {
    let at = text.rfind("Exit Code:")?;
    let rest = text.get(at + "Exit Code:".len()..)?.trim_start();
    let end = rest
        .char_indices()
        .find(|(i, c)| !(c.is_ascii_digit() || (*i == 0 && *c == '-')))
        .map_or(rest.len(), |(i, _)| i);
    rest.get(..end)?.parse().ok()
}

/// Paths a file tool names in its arguments.
fn arg_paths(args: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for k in ["file_path", "absolute_path", "path"] {
        if let Some(p) = args.get(k).and_then(Value::as_str) {
            if !p.is_empty() {
                out.push(p.to_string());
                break;
            }
        }
    }
    if let Some(paths) = args.get("paths").and_then(Value::as_array) {
        out.extend(paths.iter().filter_map(Value::as_str).map(str::to_string));
    }
    out
}

fn session_id_for(native: &str) -> SessionId {
    ids::session_id(SourceKind::GeminiCli, native)
}

/// `chats/<parent id>/<file>`: the parent session's id.
fn nested_parent_id(path: &Path) -> Option<String> {
    let parent = path.parent()?;
    let grand = parent.parent()?;
    if grand.file_name()? != "chats" {
        return None;
    }
    parent.file_name()?.to_str().map(str::to_string)
}

/// The project folder (`tmp/<project>`) a chat file lives in.
fn project_dir(path: &Path) -> Option<&Path> {
    let mut dir = path.parent()?;
    loop {
        if dir.file_name()? == "chats" {
            return dir.parent();
        }
        dir = dir.parent()?;
    }
}

/// The project's working directory: `.project_root` in the project folder, else
/// `projects.json` in the Gemini home (matching the folder's slug, or a path whose SHA-256 is
/// the folder's or the chat's project hash).
fn project_cwd(path: &Path, project_hash: Option<&str>) -> Option<String> {
    let dir = project_dir(path)?;
    if let Ok(bytes) = crate::whole::read(&dir.join(".project_root")) {
        let text = String::from_utf8_lossy(&bytes);
        let t = text.trim();
        if !t.is_empty() {
            return Some(t.to_string());
        }
    }
    let folder = dir.file_name()?.to_str()?;
    let home = dir.parent()?.parent()?;
    let registry = crate::whole::read_json_lenient(&home.join("projects.json"))?;
    let map = registry
        .get("projects")
        .and_then(Value::as_object)
        .or_else(|| registry.as_object())?;
    // Entries are `path -> slug` (or `slug -> path`): take whichever side looks like a path.
    for (k, v) in map {
        let Some(v) = v.as_str() else { continue };
        let (project_path, slug) = if v.starts_with('/') || v.contains('\\') {
            (v, k.as_str())
        } else {
            (k.as_str(), v)
        };
        if slug == folder {
            return Some(project_path.to_string());
        }
        let hash = sha256_hex(project_path.as_bytes());
        if hash == folder || project_hash == Some(hash.as_str()) {
            return Some(project_path.to_string());
        }
    }
    None
}

/// SHA-256 of `data` as lowercase hex (Gemini names legacy project folders with it).
fn sha256_hex(data: &[u8]) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    let bit_len = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bit_len.to_be_bytes());
    for chunk in msg.chunks_exact(64) {
        let mut w = [0u32; 64];
        for (i, word) in chunk.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_known_vectors() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn parts_text_skips_thought_parts() {
        let v = serde_json::json!([{"text": "a"}, {"text": "b", "thought": true}, "c"]);
        assert_eq!(parts_text(&v), "a\nc");
    }
}
