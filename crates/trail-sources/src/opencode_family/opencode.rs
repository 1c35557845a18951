//! OpenCode (`sst/opencode`, now `anomalyco/opencode`): sessions in a SQLite store, or in the
//! older JSON tree, under OpenCode's data dir (`~/.local/share/opencode`, resolved by the CLI).
//!
//! # What was checked, and where
//! Read in the agent's own source (`anomalyco/opencode`, `packages/opencode/src/`):
//! - `storage/db.ts`: the store is `<data>/opencode.db`; non-release channels use
//!   `<data>/opencode-<channel>.db`. OpenCode opens it in WAL mode.
//! - `session/session.sql.ts`: tables `session(id, project_id, parent_id, slug, directory, title,
//!   version, ..., time_created, time_updated)`, `message(id, session_id, time_created,
//!   time_updated, data)` and `part(id, message_id, session_id, time_created, time_updated,
//!   data)`. `data` is the JSON of the message or part without its ids.
//! - `session/message-v2.ts`: a message is `{role: "user"|"assistant", time{created,
//!   completed?}, ...}`; an assistant message adds `parentID, modelID, providerID, path{cwd,
//!   root}, summary?, cost, tokens{input, output, reasoning, cache{read, write}}, error?`. Parts
//!   are `text` (`synthetic?`, `ignored?`), `reasoning`, `file` (`mime, filename?, url,
//!   source?{path}`), `tool` (`callID, tool, state{status: pending|running|completed|error,
//!   input, output?, error?, title?, metadata?, time{start, end?}}`), `step-start`,
//!   `step-finish` (per-step tokens), `snapshot`, `patch` (`hash, files[]`), `agent`, `subtask`,
//!   `retry` (`attempt, error`), `compaction` (`auto`). Messages are listed by
//!   `(time_created, id)`, parts by `(message_id, id)`.
//! - `storage/json-migration.ts` and `storage/storage.ts`: the older tree is
//!   `storage/session/<projectID>/<sessionID>.json`, `storage/message/<sessionID>/<msgID>.json`
//!   and `storage/part/<msgID>/<partID>.json`; ids come from the file paths. OpenCode imports
//!   the tree into the database once and leaves the files in place.
//! - `tool/task.ts`: a subagent is a child session (`parentID` = the caller's session); the
//!   caller's `task` tool part records the child id in `state.metadata.sessionId`.
//! - Token accounting (seen in `session.ts` `getUsage` quoted by third-party notes):
//!   `tokens.input` excludes cache reads and writes, `tokens.output` excludes reasoning.
//!
//! # Mapping
//! - Session ids are `opencode:<ses_...>` (OpenCode's ids are unique but not UUIDs). A title
//!   OpenCode generated as a placeholder (`New session - ...`, `Child session - ...`) is replaced
//!   by the first prompt. `directory` is the cwd (else an assistant message's `path.cwd`),
//!   `version` the agent version, `parent_id` a [`ParentLink`] whose `agent_ref` is the child
//!   id; the parent's `task` tool call carries the same `agent_ref`, and inside one database the
//!   link's `tool_call_id` is filled in.
//! - Every message of a part keeps the OpenCode message id as `native_id` (assistant messages
//!   have their user message as `parent_native_id`). A user's first real text part is the
//!   prompt; synthetic or later text, files, agents and subtasks are `(User, Meta)`.
//! - Usage: one [`Usage`] per assistant message (key: message id), counted at the message level
//!   only (`step-finish` parts repeat it per step). `output_tokens` = output + reasoning.
//!   All-zero tokens (an interrupted request) are `tokens_known = false`.
//! - `step-start`, `step-finish` and `snapshot` parts carry no content and make no message.
//!   Unknown part types become `(System, Unknown)` with the part JSON in `extra`.
//!
//! # Parse units
//! - A database file: every session in it (`appendable` is false).
//! - A JSON-tree session info file `storage/session/<project>/<id>.json`: that session, read
//!   with its message and part files. (OpenCode rewrites the info file whenever the session is
//!   touched, so its change tracks new messages.) When a root has a database, its JSON tree is
//!   not discovered: OpenCode has imported it into the database, and reading both would give
//!   every old session twice.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::Value;
use trail_model::{
    time, truncate_chars, Checkpoint, Message, MessageKind, ParentLink, ParseIssue, Role, Session,
    SessionId, SessionMeta, SourceKind, Usage,
};

use crate::json_fields::{jcount, jstr, value_text};
use crate::linear::{finish_linear_session, push_message, PendingFile};
use crate::sqlite_readonly::{
    cell_json, cell_text, column_names, db_error, is_sqlite_file, read_database, record_issue,
    table_names, SQLITE_MAGIC,
};
use crate::{discover, FileParse, ParseRequest, Source, SourceError};

/// Characters of a prompt used as a title.
const TITLE_CHARS: usize = 200;

/// OpenCode's SQLite store and older JSON tree.
pub struct Opencode;

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 2: the late-2026 format changes of issue 18.
/// 3: a leading BOM is skipped; bytes after a JSON document keep it, as a problem (issue 40).
/// 4: the agent a session ran under (`agent_description`, issue 45).
pub const PARSER_VERSION: u32 = 4;

/// One product that keeps OpenCode's store under its own data folder: OpenCode itself, and
/// the forks that rebuilt on its core (today's Kilo Code, MiMo Code, ICodeMate). They differ
/// only in the folder (the CLI's roots), the database's name and the source kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flavor {
    pub kind: SourceKind,
    /// Session ids are `<id_prefix>:<ses_...>`.
    pub id_prefix: &'static str,
    /// The flavor's own database name: `<db_stem>.db` and `<db_stem>-<channel>.db`. The forks'
    /// development channels keep OpenCode's `opencode-<channel>.db` names too.
    pub db_stem: &'static str,
    /// The name of its data folder (`~/.local/share/<folder>`).
    pub folder: &'static str,
}

/// OpenCode: `opencode.db`, `opencode-<channel>.db`.
pub const OPENCODE: Flavor = Flavor {
    kind: SourceKind::Opencode,
    id_prefix: "opencode",
    db_stem: "opencode",
    folder: "opencode",
};

/// Kilo Code since its 2026 rebuild (`Kilo-Org/kilocode`, `packages/core/src/database/
/// database.ts`): `kilo.db` on release channels, `opencode-<channel>.db` on the others, in
/// `$XDG_DATA_HOME/kilo` (`~/.local/share/kilo` on every OS; `packages/core/src/global.ts`).
pub const KILO: Flavor = Flavor {
    kind: SourceKind::KiloCode,
    id_prefix: "kilo-code",
    db_stem: "kilo",
    folder: "kilo",
};

/// MiMo Code (`XiaomiMiMo/MiMo-Code`): `mimocode.db` in `$XDG_DATA_HOME/mimocode`, or
/// `$MIMOCODE_HOME/data`.
pub const MIMO: Flavor = Flavor {
    kind: SourceKind::MimoCode,
    id_prefix: "mimo-code",
    db_stem: "mimocode",
    folder: "mimocode",
};

/// ICodeMate: OpenCode's store in `~/.local/share/icodemate` (its database name is not
/// published: `icodemate*.db` and OpenCode's own names are read).
pub const ICODEMATE: Flavor = Flavor {
    kind: SourceKind::Icodemate,
    id_prefix: "icodemate",
    db_stem: "icodemate",
    folder: "icodemate",
};

/// Every flavor, OpenCode first.
pub const FLAVORS: [Flavor; 4] = [OPENCODE, KILO, MIMO, ICODEMATE];

/// The store of one [`Flavor`].
pub struct OpencodeStore(pub Flavor);

impl Source for Opencode {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Opencode
    }

    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        OpencodeStore(OPENCODE).discover(roots)
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        OpencodeStore(OPENCODE).detect(path, head)
    }

    fn appendable(&self, _path: &Path) -> bool {
        false
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        OpencodeStore(OPENCODE).parse(request)
    }
}

impl OpencodeStore {
    /// Returns whether `path` is one of this flavor's files: a database by its name, or a
    /// JSON-tree session info file.
    pub fn owns_path(&self, path: &Path) -> bool {
        is_db_name(self.0, path) || is_session_info_path(path)
    }
}

impl Source for OpencodeStore {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        self.0.kind
    }

    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let flavor = self.0;
        let mut out = Vec::new();
        for root in roots {
            let dbs = discover::walk_files(root, 1, |p| is_db_name(flavor, p));
            if dbs.is_empty() {
                let tree = root.join("storage").join("session");
                out.extend(discover::walk_files(&tree, 2, is_session_info_path));
            } else {
                out.extend(dbs);
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        if is_db_name(self.0, path) {
            return db_flavor(path) == Some(self.0) && head.starts_with(SQLITE_MAGIC);
        }
        is_session_info_path(path)
            && folder_flavor(tree_data_dir(path)) == self.0
            && first_non_space(head) == Some(b'{')
    }

    fn appendable(&self, _path: &Path) -> bool {
        false
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        let path = request.path;
        if is_sqlite_file(path) {
            parse_db(self.0, path)
        } else {
            parse_tree(self.0, path)
        }
    }
}

fn first_non_space(head: &[u8]) -> Option<u8> {
    head.iter().copied().find(|b| !b.is_ascii_whitespace())
}

/// `<stem>.db` or `<stem>-<channel>.db` for the flavor's own stem or OpenCode's (`kilo.db`,
/// `opencode-beta.db`): the names discovery lists under the flavor's roots.
fn is_db_name(flavor: Flavor, path: &Path) -> bool {
    db_stem(path).is_some_and(|s| s == flavor.db_stem || s == OPENCODE.db_stem)
}

/// The stem a database name is made of (`kilo` for `kilo.db` and `kilo-dev.db`).
fn db_stem(path: &Path) -> Option<&'static str> {
    let stem = path.file_name()?.to_str()?.strip_suffix(".db")?;
    let of = |s: &str| {
        stem == s
            || stem
                .strip_prefix(s)
                .is_some_and(|r| r.len() > 1 && r.starts_with('-'))
    };
    FLAVORS.iter().map(|f| f.db_stem).find(|s| of(s))
}

/// The flavor a database given by path belongs to: by its own name (`kilo.db`), else, for
/// OpenCode's names that the forks' development channels use too, by the data folder it sits
/// in (`~/.local/share/kilo/opencode-dev.db` is Kilo's; anywhere else OpenCode's).
fn db_flavor(path: &Path) -> Option<Flavor> {
    let stem = db_stem(path)?;
    if stem != OPENCODE.db_stem {
        return FLAVORS.into_iter().find(|f| f.db_stem == stem);
    }
    Some(folder_flavor(path.parent()))
}

/// The flavor whose data folder is `dir` (by its name), OpenCode when none is.
fn folder_flavor(dir: Option<&Path>) -> Flavor {
    let name = dir.and_then(Path::file_name);
    FLAVORS
        .into_iter()
        .find(|f| name.is_some_and(|n| n == f.folder))
        .unwrap_or(OPENCODE)
}

/// The data folder of a JSON-tree session file (`<data>/storage/session/<project>/<id>.json`).
fn tree_data_dir(path: &Path) -> Option<&Path> {
    path.ancestors().nth(4)
}

/// `.../storage/session/<project>/<id>.json`.
fn is_session_info_path(path: &Path) -> bool {
    let name_ok = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".json") && !n.starts_with('.'));
    let session_dir = path.parent().and_then(Path::parent);
    let in_session = session_dir
        .and_then(Path::file_name)
        .is_some_and(|n| n == "session");
    let in_storage = session_dir
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .is_some_and(|n| n == "storage");
    name_ok && in_session && in_storage
}

// ---------------------------------------------------------------------------------------------
// OpenCode records, from either storage.
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Default)]
struct SessionInfo {
    id: String,
    parent_id: Option<String>,
    title: Option<String>,
    directory: Option<String>,
    version: Option<String>,
    created: Option<String>,
    updated: Option<String>,
}

impl SessionInfo {
    /// From the JSON tree's session file (the id comes from the file name).
    fn from_json(id: String, v: &Value) -> Self {
        SessionInfo {
            id,
            parent_id: nonempty(jstr(v, "parentID")),
            title: nonempty(jstr(v, "title")),
            directory: nonempty(jstr(v, "directory")),
            version: nonempty(jstr(v, "version")),
            created: v.pointer("/time/created").and_then(time::from_json),
            updated: v.pointer("/time/updated").and_then(time::from_json),
        }
    }

    /// From a `session` table row turned into a JSON object.
    fn from_row(id: String, row: &Value) -> Self {
        SessionInfo {
            id,
            parent_id: nonempty(jstr(row, "parent_id")),
            title: nonempty(jstr(row, "title")),
            directory: nonempty(jstr(row, "directory")),
            version: nonempty(jstr(row, "version")),
            created: row.get("time_created").and_then(time::from_json),
            updated: row.get("time_updated").and_then(time::from_json),
        }
    }
}

fn nonempty(s: Option<&str>) -> Option<String> {
    s.map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

struct RawPart {
    id: String,
    data: Value,
}

struct RawMessage {
    id: String,
    info: Value,
    parts: Vec<RawPart>,
}

fn session_id(flavor: Flavor, native: &str) -> SessionId {
    SessionId(format!("{}:{native}", flavor.id_prefix))
}

/// Titles OpenCode gives a session before it has generated one.
fn is_placeholder_title(t: &str) -> bool {
    t.starts_with("New session - ") || t.starts_with("Child session - ")
}

const SHELL_TOOLS: &[&str] = &["bash", "shell"];

struct Builder {
    session: Session,
    files: Vec<PendingFile>,
    first_prompt: Option<String>,
    cwd_fallback: Option<String>,
}

fn build_session(flavor: Flavor, info: SessionInfo, messages: &[RawMessage]) -> Session {
    let mut meta = SessionMeta::new(session_id(flavor, &info.id), flavor.kind, &info.id);
    meta.title = info.title.filter(|t| !is_placeholder_title(t));
    // `session.directory` is where the session ran. The project's worktree is not: a folder
    // outside any repository belongs to the `global` project, whose worktree is `/`
    // (`project/project.ts` `fromDirectory`), as is `path.root` of its messages. So `/` is
    // never taken for the cwd while a message's `path.cwd` says better.
    let directory = info.directory.clone();
    meta.cwd = info.directory.filter(|d| d != "/");
    meta.agent_version = info.version;
    if let Some(parent) = info.parent_id {
        meta.parent = Some(ParentLink {
            session_id: session_id(flavor, &parent),
            tool_call_id: None,
            agent_ref: Some(info.id.clone()),
        });
    }
    for ts in [info.created, info.updated].into_iter().flatten() {
        meta.observe_timestamp(&ts);
    }
    let mut b = Builder {
        session: Session::new(meta),
        files: Vec::new(),
        first_prompt: None,
        cwd_fallback: None,
    };
    for m in messages {
        map_message(&mut b, m);
    }
    let Builder {
        mut session,
        files,
        first_prompt,
        cwd_fallback,
    } = b;
    if session.meta.title.is_none() {
        session.meta.title = first_prompt;
    }
    if session.meta.cwd.is_none() {
        // A session that really ran in `/` keeps it, when nothing says better.
        session.meta.cwd = cwd_fallback.filter(|c| c != "/").or(directory);
    }
    finish_linear_session(&mut session, files, SHELL_TOOLS);
    session
}

fn base_message(
    native_id: &str,
    parent: Option<&str>,
    role: Role,
    kind: MessageKind,
    ts: &Option<String>,
) -> Message {
    Message::new(role, kind, "")
        .with_native_id(native_id.to_string())
        .with_parent(parent.map(str::to_string))
        .with_timestamp(ts.clone())
}

fn map_message(b: &mut Builder, m: &RawMessage) {
    let info = &m.info;
    let role = jstr(info, "role");
    let ts = info.pointer("/time/created").and_then(time::from_json);
    if let Some(ts) = &ts {
        b.session.meta.observe_timestamp(ts);
    }
    let is_assistant = role == Some("assistant");
    let is_user = role == Some("user");
    let model = if is_assistant {
        jstr(info, "modelID")
    } else {
        info.pointer("/model/modelID").and_then(Value::as_str)
    }
    .filter(|s| !s.is_empty())
    .map(str::to_string);
    if b.session.meta.agent_description.is_none() {
        // The agent (or, in older versions, the mode) the message ran under: build, plan...
        b.session.meta.agent_description = nonempty(jstr(info, "agent").or(jstr(info, "mode")));
    }
    if is_assistant {
        if let Some(model) = &model {
            b.session.observe_model(model);
        }
        if b.cwd_fallback.is_none() {
            b.cwd_fallback = nonempty(info.pointer("/path/cwd").and_then(Value::as_str));
        }
    }
    let parent = if is_assistant {
        jstr(info, "parentID")
    } else {
        None
    };
    let is_summary = is_assistant && info.get("summary") == Some(&Value::Bool(true));
    let first_seq = b.session.messages.len();
    let mut prompt_taken = false;

    if !is_user && !is_assistant {
        let mut msg = base_message(&m.id, None, Role::System, MessageKind::Unknown, &ts);
        msg.extra = Some(info.to_string());
        push_message(&mut b.session, msg);
        for part in &m.parts {
            let mut msg = base_message(&m.id, None, Role::System, MessageKind::Unknown, &ts);
            msg.extra = Some(part.data.to_string());
            push_message(&mut b.session, msg);
        }
        return;
    }
    let ctx = PartCtx {
        msg_id: &m.id,
        parent,
        is_user,
        is_summary,
        model: model.as_deref(),
        ts: &ts,
    };
    for part in &m.parts {
        map_part(b, &ctx, part, &mut prompt_taken);
    }
    if is_assistant {
        if let Some(err) = info.get("error").filter(|e| !e.is_null()) {
            let name = jstr(err, "name").unwrap_or("Error");
            let detail = err
                .pointer("/data/message")
                .and_then(Value::as_str)
                .or_else(|| jstr(err, "message"));
            let mut msg = base_message(&m.id, parent, Role::Assistant, MessageKind::Error, &ts);
            msg.text = match detail {
                Some(d) => format!("{name}: {d}"),
                None => name.to_string(),
            };
            msg.is_error = true;
            msg.model = model.clone();
            msg.extra = Some(err.to_string());
            push_message(&mut b.session, msg);
        }
        if let Some(tokens) = info.get("tokens").filter(|t| t.is_object()) {
            let input = jcount(tokens.get("input"));
            let output = jcount(tokens.get("output"));
            let reasoning = jcount(tokens.get("reasoning"));
            let cache_read = jcount(tokens.pointer("/cache/read"));
            let cache_write = jcount(tokens.pointer("/cache/write"));
            let known = input | output | reasoning | cache_read | cache_write != 0;
            let message_seq = (first_seq < b.session.messages.len())
                .then(|| u32::try_from(first_seq).ok())
                .flatten();
            b.session.usage.push(Usage {
                request_key: m.id.clone(),
                message_id: Some(m.id.clone()),
                message_seq,
                model: model.clone(),
                timestamp: ts.clone(),
                input_tokens: input,
                output_tokens: output.saturating_add(reasoning),
                cache_creation_tokens: cache_write,
                cache_read_tokens: cache_read,
                reasoning_tokens: reasoning,
                cost_usd: info
                    .get("cost")
                    .and_then(Value::as_f64)
                    .filter(|c| c.is_finite()),
                tokens_known: known,
                ..Usage::default()
            });
        }
    }
}

struct PartCtx<'a> {
    msg_id: &'a str,
    parent: Option<&'a str>,
    is_user: bool,
    is_summary: bool,
    model: Option<&'a str>,
    ts: &'a Option<String>,
}

fn part_time(part: &Value, pointer: &str, fallback: &Option<String>) -> Option<String> {
    part.pointer(pointer)
        .and_then(time::from_json)
        .or_else(|| fallback.clone())
}

fn next_checkpoint(session: &Session) -> u32 {
    u32::try_from(session.checkpoints.len() + 1).unwrap_or(u32::MAX)
}

fn map_part(b: &mut Builder, ctx: &PartCtx<'_>, part: &RawPart, prompt_taken: &mut bool) {
    let p = &part.data;
    let kind = jstr(p, "type").unwrap_or("");
    let (role_user, role_asst) = (Role::User, Role::Assistant);
    let own_role = if ctx.is_user { role_user } else { role_asst };
    let mk = |role: Role, kind: MessageKind, ts: &Option<String>| {
        let mut m = base_message(ctx.msg_id, ctx.parent, role, kind, ts);
        if role == Role::Assistant {
            m.model = ctx.model.map(str::to_string);
        }
        m
    };
    match kind {
        "text" => map_text(b, ctx, p, prompt_taken, &mk),
        "reasoning" => {
            let text = jstr(p, "text").unwrap_or("");
            if text.trim().is_empty() {
                return;
            }
            let ts = part_time(p, "/time/start", ctx.ts);
            let mut m = mk(Role::Assistant, MessageKind::Thinking, &ts);
            m.text = text.to_string();
            push_message(&mut b.session, m);
        }
        "tool" => map_tool(b, ctx, part, &mk),
        "file" => map_file(b, ctx, p, mk(own_role, MessageKind::Meta, ctx.ts)),
        "patch" => {
            if let Some(files) = p.get("files").and_then(Value::as_array) {
                let seq = b.session.messages.len().checked_sub(1);
                for f in files.iter().filter_map(Value::as_str) {
                    b.files.push(PendingFile {
                        seq: seq.and_then(|s| u32::try_from(s).ok()),
                        path: f.to_string(),
                        tool_name: Some("patch".into()),
                        timestamp: ctx.ts.clone(),
                    });
                }
            }
        }
        "agent" => {
            let mut m = mk(own_role, MessageKind::Meta, ctx.ts);
            m.text = format!("@{}", jstr(p, "name").unwrap_or(""));
            push_message(&mut b.session, m);
        }
        "subtask" => {
            let mut m = mk(own_role, MessageKind::Meta, ctx.ts);
            let agent = jstr(p, "agent").unwrap_or("");
            let prompt = jstr(p, "prompt").or_else(|| jstr(p, "description"));
            m.text = format!("[subtask @{agent}] {}", prompt.unwrap_or(""));
            m.extra = Some(p.to_string());
            push_message(&mut b.session, m);
        }
        "compaction" => {
            let auto = p.get("auto") == Some(&Value::Bool(true));
            let mut m = mk(Role::System, MessageKind::Compaction, ctx.ts);
            m.text = if auto {
                "Conversation compacted (automatic)".into()
            } else {
                "Conversation compacted".into()
            };
            push_message(&mut b.session, m);
            let number = next_checkpoint(&b.session);
            b.session.checkpoints.push(Checkpoint {
                number,
                title: Some("Compaction".into()),
                created_at: ctx.ts.clone(),
                ..Checkpoint::default()
            });
        }
        "retry" => {
            let ts = part_time(p, "/time/created", ctx.ts);
            let mut m = mk(Role::System, MessageKind::Error, &ts);
            let err = p.get("error").unwrap_or(&Value::Null);
            let detail = err
                .pointer("/data/message")
                .and_then(Value::as_str)
                .or_else(|| jstr(err, "message"))
                .unwrap_or("request failed");
            m.text = format!("retry {}: {detail}", jcount(p.get("attempt")));
            m.is_error = true;
            m.extra = Some(p.to_string());
            push_message(&mut b.session, m);
        }
        // Step boundaries (their tokens repeat the message's) and snapshots carry no content.
        "step-start" | "step-finish" | "snapshot" => {}
        _ => {
            let mut m = base_message(
                ctx.msg_id,
                ctx.parent,
                Role::System,
                MessageKind::Unknown,
                ctx.ts,
            );
            m.extra = Some(p.to_string());
            push_message(&mut b.session, m);
        }
    }
}

/// A text part: the prompt (the first typed text of a user message), a note, a summary
/// (which also makes or completes a checkpoint) or the agent's text.
fn map_text(
    b: &mut Builder,
    ctx: &PartCtx<'_>,
    p: &Value,
    prompt_taken: &mut bool,
    mk: &dyn Fn(Role, MessageKind, &Option<String>) -> Message,
) {
    let text = jstr(p, "text").unwrap_or("");
    if text.trim().is_empty() {
        return;
    }
    let ts = part_time(p, "/time/start", ctx.ts);
    let injected = p.get("synthetic") == Some(&Value::Bool(true))
        || p.get("ignored") == Some(&Value::Bool(true));
    let mut m = if ctx.is_user {
        if !injected && !*prompt_taken {
            *prompt_taken = true;
            if b.first_prompt.is_none() {
                let t = truncate_chars(text.trim(), TITLE_CHARS).to_string();
                b.first_prompt = Some(t);
            }
            mk(Role::User, MessageKind::Prompt, &ts)
        } else {
            mk(Role::User, MessageKind::Meta, &ts)
        }
    } else if ctx.is_summary {
        let number = next_checkpoint(&b.session);
        match b.session.checkpoints.last_mut() {
            Some(c) if c.overview.is_none() => c.overview = Some(text.to_string()),
            _ => b.session.checkpoints.push(Checkpoint {
                number,
                title: Some("Summary".into()),
                overview: Some(text.to_string()),
                created_at: ts.clone(),
                ..Checkpoint::default()
            }),
        }
        mk(Role::System, MessageKind::Summary, &ts)
    } else {
        mk(Role::Assistant, MessageKind::Text, &ts)
    };
    m.text = text.to_string();
    push_message(&mut b.session, m);
}

/// A file part: a note naming it, and the file when it is a local one.
fn map_file(b: &mut Builder, ctx: &PartCtx<'_>, p: &Value, mut m: Message) {
    let source_path = p.pointer("/source/path").and_then(Value::as_str);
    let url = jstr(p, "url").filter(|u| !u.starts_with("data:"));
    let label = jstr(p, "filename")
        .or(source_path)
        .or(url)
        .unwrap_or("attachment");
    m.text = format!("[file] {label}");
    let seq = push_message(&mut b.session, m);
    let file = source_path.map(str::to_string).or_else(|| {
        url.and_then(|u| u.strip_prefix("file://"))
            .map(str::to_string)
    });
    if let Some(path) = file {
        b.files.push(PendingFile {
            seq: Some(seq),
            path,
            tool_name: None,
            timestamp: ctx.ts.clone(),
        });
    }
}

fn map_tool(
    b: &mut Builder,
    ctx: &PartCtx<'_>,
    part: &RawPart,
    mk: &dyn Fn(Role, MessageKind, &Option<String>) -> Message,
) {
    let p = &part.data;
    let name = nonempty(jstr(p, "tool"));
    let call_id = nonempty(jstr(p, "callID")).unwrap_or_else(|| part.id.clone());
    let state = p.get("state").unwrap_or(&Value::Null);
    let input = state.get("input").filter(|v| !v.is_null());
    let start = part_time(state, "/time/start", ctx.ts);
    let mut call = mk(Role::Assistant, MessageKind::ToolCall, &start);
    call.tool_name = name.clone();
    call.tool_call_id = Some(call_id.clone());
    call.tool_input = input.map(Value::to_string);
    call.text = jstr(state, "title")
        .map(|t| t.lines().next().unwrap_or("").to_string())
        .unwrap_or_default();
    if name.as_deref() == Some("task") {
        call.agent_ref = nonempty(state.pointer("/metadata/sessionId").and_then(Value::as_str));
    }
    let agent_ref = call.agent_ref.clone();
    let seq = push_message(&mut b.session, call);
    if let Some(input) = input {
        for key in ["filePath", "file_path"] {
            if let Some(path) = input.get(key).and_then(Value::as_str) {
                b.files.push(PendingFile {
                    seq: Some(seq),
                    path: path.to_string(),
                    tool_name: name.clone(),
                    timestamp: start.clone(),
                });
            }
        }
    }
    let (output, mut is_error) = match jstr(state, "status") {
        Some("completed") => (
            state.get("output").map(value_text).unwrap_or_default(),
            false,
        ),
        Some("error") => (state.get("error").map(value_text).unwrap_or_default(), true),
        _ => return,
    };
    // Completed is not succeeded: OpenCode routes a call to an unknown tool, or with arguments
    // that do not parse, to its `invalid` tool, which completes; and its bash tool completes
    // with the command's exit code in `metadata.exit`.
    let exit = state.pointer("/metadata/exit").and_then(Value::as_i64);
    let shell = name.as_deref().is_some_and(|n| SHELL_TOOLS.contains(&n));
    if name.as_deref() == Some("invalid") || (shell && exit.is_some_and(|c| c != 0)) {
        is_error = true;
    }
    let end = part_time(state, "/time/end", &start);
    let mut result = mk(Role::Tool, MessageKind::ToolResult, &end);
    result.tool_name = name;
    result.tool_call_id = Some(call_id);
    result.tool_output = Some(output);
    result.is_error = is_error;
    result.agent_ref = agent_ref;
    push_message(&mut b.session, result);
}

/// Fills `tool_call_id` of child sessions whose parent's `task` call is in the same parse.
fn link_children(sessions: &mut [Session]) {
    let mut calls: HashMap<String, String> = HashMap::new();
    for s in sessions.iter() {
        for m in &s.messages {
            if let (MessageKind::ToolCall, Some(child), Some(call)) =
                (m.kind(), &m.agent_ref, &m.tool_call_id)
            {
                calls.entry(child.clone()).or_insert_with(|| call.clone());
            }
        }
    }
    for s in sessions.iter_mut() {
        let native = s.meta.native_id.clone();
        if let Some(link) = &mut s.meta.parent {
            if link.tool_call_id.is_none() {
                link.tool_call_id = calls.get(&native).cloned();
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// SQLite store.
// ---------------------------------------------------------------------------------------------

fn parse_db(flavor: Flavor, path: &Path) -> Result<FileParse, SourceError> {
    read_database(path, |conn| read_db(flavor, path, conn))
}

/// Parses a JSON data cell; a bad one becomes an issue naming the row.
fn parse_data(
    path: &Path,
    what: &str,
    raw: Option<String>,
    issues: &mut Vec<ParseIssue>,
) -> Option<Value> {
    let raw = raw.unwrap_or_default();
    match serde_json::from_str::<Value>(&raw) {
        Ok(v) => Some(v),
        Err(e) => {
            issues.push(record_issue(
                path,
                what,
                &raw,
                &format!("invalid JSON: {e}"),
            ));
            None
        }
    }
}

fn read_db(flavor: Flavor, path: &Path, conn: &Connection) -> Result<FileParse, SourceError> {
    let err = |e: rusqlite::Error| db_error(path, &e);
    let tables = table_names(conn).map_err(err)?;
    if !tables.contains("session") || !tables.contains("message") {
        return Err(SourceError::format(
            path,
            "not an OpenCode database: no session and message tables",
        ));
    }
    let mut out = FileParse::default();
    let msg_cols = column_names(conn, "message").map_err(err)?;
    let has_parts = tables.contains("part");
    let part_cols = if has_parts {
        column_names(conn, "part").map_err(err)?
    } else {
        HashSet::new()
    };

    // Sessions, plus sessions only messages mention.
    let mut infos: Vec<SessionInfo> = Vec::new();
    {
        let mut stmt = conn.prepare("SELECT * FROM session").map_err(err)?;
        let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
        let mut rows = stmt.query([]).map_err(err)?;
        while let Some(row) = rows.next().map_err(err)? {
            let mut obj = serde_json::Map::new();
            for (i, name) in names.iter().enumerate() {
                let v = row.get_ref(i).map(cell_json).unwrap_or(Value::Null);
                obj.insert(name.clone(), v);
            }
            let obj = Value::Object(obj);
            let Some(id) = nonempty(obj.get("id").map(value_text).as_deref()) else {
                out.issues
                    .push(record_issue(path, "session row", &obj.to_string(), "no id"));
                continue;
            };
            infos.push(SessionInfo::from_row(id, &obj));
        }
    }
    let known: HashSet<String> = infos.iter().map(|i| i.id.clone()).collect();
    {
        let mut stmt = conn
            .prepare("SELECT DISTINCT session_id FROM message")
            .map_err(err)?;
        let mut rows = stmt.query([]).map_err(err)?;
        while let Some(row) = rows.next().map_err(err)? {
            if let Some(id) = row.get_ref(0).ok().and_then(cell_text) {
                if !known.contains(&id) {
                    infos.push(SessionInfo {
                        id,
                        ..SessionInfo::default()
                    });
                }
            }
        }
    }
    infos.sort_by(|a, b| (&a.created, &a.id).cmp(&(&b.created, &b.id)));

    let msg_order = if msg_cols.contains("time_created") {
        "time_created, id"
    } else {
        "id"
    };
    let msg_sql =
        format!("SELECT id, data FROM message WHERE session_id = ?1 ORDER BY {msg_order}");
    let by_session = part_cols.contains("session_id");
    let part_sql = if by_session {
        "SELECT id, message_id, data FROM part WHERE session_id = ?1 ORDER BY message_id, id"
    } else {
        "SELECT id, message_id, data FROM part WHERE message_id = ?1 ORDER BY id"
    };
    let mut msg_stmt = conn.prepare(&msg_sql).map_err(err)?;
    let mut part_stmt = if has_parts {
        Some(conn.prepare(part_sql).map_err(err)?)
    } else {
        None
    };

    for info in infos {
        let mut messages: Vec<RawMessage> = Vec::new();
        {
            let mut rows = msg_stmt.query([&info.id]).map_err(err)?;
            while let Some(row) = rows.next().map_err(err)? {
                let id = row.get_ref(0).ok().and_then(cell_text).unwrap_or_default();
                let raw = row.get_ref(1).ok().and_then(cell_text);
                let what = format!("message row id={id}");
                if let Some(data) = parse_data(path, &what, raw, &mut out.issues) {
                    messages.push(RawMessage {
                        id,
                        info: data,
                        parts: Vec::new(),
                    });
                }
            }
        }
        if let Some(stmt) = part_stmt.as_mut() {
            let index: HashMap<String, usize> = messages
                .iter()
                .enumerate()
                .map(|(i, m)| (m.id.clone(), i))
                .collect();
            let keys: Vec<String> = if by_session {
                vec![info.id.clone()]
            } else {
                messages.iter().map(|m| m.id.clone()).collect()
            };
            for key in keys {
                let mut rows = stmt.query([&key]).map_err(err)?;
                while let Some(row) = rows.next().map_err(err)? {
                    let id = row.get_ref(0).ok().and_then(cell_text).unwrap_or_default();
                    let msg = row.get_ref(1).ok().and_then(cell_text).unwrap_or_default();
                    let raw = row.get_ref(2).ok().and_then(cell_text);
                    let what = format!("part row id={id}");
                    let Some(data) = parse_data(path, &what, raw, &mut out.issues) else {
                        continue;
                    };
                    match index.get(&msg) {
                        Some(&i) => messages[i].parts.push(RawPart { id, data }),
                        None => out.issues.push(record_issue(
                            path,
                            &what,
                            &msg,
                            "its message is missing or unreadable",
                        )),
                    }
                }
            }
        }
        let session = build_session(flavor, info, &messages);
        if !session.messages.is_empty() || session.meta.title.is_some() {
            out.sessions.push(session);
        }
    }
    link_children(&mut out.sessions);
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// JSON tree.
// ---------------------------------------------------------------------------------------------

/// Reads and parses one JSON file of the tree; failures become issues.
fn read_json_file(path: &Path, issues: &mut Vec<ParseIssue>, bytes: &mut u64) -> Option<Value> {
    let data = match fs::read(path) {
        Ok(d) => d,
        Err(e) => {
            issues.push(record_issue(path, "file", "", &format!("cannot read: {e}")));
            return None;
        }
    };
    *bytes += data.len() as u64;
    match crate::whole::parse_json(path, &data) {
        Ok(doc) => {
            issues.extend(doc.trailing);
            Some(doc.value)
        }
        Err(e) => {
            let text = String::from_utf8_lossy(&data);
            issues.push(record_issue(
                path,
                "file",
                &text,
                &format!("invalid JSON: {e}"),
            ));
            None
        }
    }
}

/// The `*.json` files of a folder, sorted by name (OpenCode ids sort by creation).
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && discover::has_extension(p, "json")
                && !p
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with('.'))
        })
        .collect();
    out.sort();
    out
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn parse_tree(flavor: Flavor, path: &Path) -> Result<FileParse, SourceError> {
    let data = fs::read(path).map_err(|e| SourceError::io(path, e))?;
    let doc = crate::whole::parse_json(path, &data)
        .map_err(|e| SourceError::format(path, format!("not an OpenCode session file: {e}")))?;
    let info = doc.value;
    if !info.is_object() {
        return Err(SourceError::format(
            path,
            "not an OpenCode session file: not a JSON object",
        ));
    }
    let mut out = FileParse {
        bytes_parsed: data.len() as u64,
        bytes_read: data.len() as u64,
        issues: doc.trailing.into_iter().collect(),
        ..FileParse::default()
    };
    let id = nonempty(Some(&stem(path)))
        .or_else(|| nonempty(jstr(&info, "id")))
        .unwrap_or_default();
    let storage = path
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut messages: Vec<(Option<f64>, RawMessage)> = Vec::new();
    for file in json_files(&storage.join("message").join(&id)) {
        let Some(v) = read_json_file(&file, &mut out.issues, &mut out.bytes_read) else {
            continue;
        };
        let msg_id = stem(&file);
        let created = v.pointer("/time/created").and_then(Value::as_f64);
        let mut parts = Vec::new();
        for pf in json_files(&storage.join("part").join(&msg_id)) {
            if let Some(pv) = read_json_file(&pf, &mut out.issues, &mut out.bytes_read) {
                parts.push(RawPart {
                    id: stem(&pf),
                    data: pv,
                });
            }
        }
        messages.push((
            created,
            RawMessage {
                id: msg_id,
                info: v,
                parts,
            },
        ));
    }
    messages.sort_by(|(ta, a), (tb, b)| {
        ta.unwrap_or(f64::MAX)
            .total_cmp(&tb.unwrap_or(f64::MAX))
            .then_with(|| a.id.cmp(&b.id))
    });
    let messages: Vec<RawMessage> = messages.into_iter().map(|(_, m)| m).collect();
    let session = build_session(flavor, SessionInfo::from_json(id, &info), &messages);
    out.sessions.push(session);
    Ok(out)
}
