//! Claude Code: `~/.claude/projects/<slug>/<session>.jsonl`, one JSON entry per line.
//!
//! Entries form a tree through `uuid`/`parentUuid` (effective parent: `logicalParentUuid`, then
//! `parentUuid`, which makes compaction boundaries transparent). Every entry with a `uuid` is a
//! chain node and is kept as a message, whatever its type; branches from rewinds are kept too,
//! but turns are built from the latest main chain only: the path from the last written
//! non-sidechain node up to its root, plus structural side branches (tool results, progress,
//! attachments) hanging off it.
//!
//! Files and sessions:
//! - `<slug>/<id>.jsonl` is a main session, id = its `sessionId` (the file stem).
//! - `<slug>/<id>/subagents/agent-<agentId>.jsonl` (new layout) and `<slug>/agent-<agentId>.jsonl`
//!   (old layout, whose entries carry the *parent's* `sessionId`) are subagent sessions with id
//!   `<parent>:agent-<agentId>`, linked to the parent and, through `toolUseResult.agentId` or the
//!   `agent-<agentId>.meta.json` sidecar, to the tool call that started them.
//! - Old versions wrote Task subagents inline in the main file (`isSidechain: true`). Each inline
//!   sidechain tree becomes its own subagent session `<parent>:sidechain-<root uuid>`, so its
//!   lines never count as the parent's turns or tokens.
//!
//! Usage: one row per API request, deduplicated by (`message.id`, `requestId`) keeping the larger
//! total (Claude streams one content block per line, each repeating the usage); `<synthetic>`
//! messages are skipped; an entry without a requestId is deduplicated by (`message.id`,
//! timestamp); one lacking a message id (or with an empty requestId) is counted once per line.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use trail_model::{
    time, truncate_chars, turns, Checkpoint, FileTouch, Message, MessageKind, Origin, ParentLink,
    PromptSource, Relink, Role, Session, SessionId, SessionMeta, SessionRef, SourceKind, TitleRank,
    UpdateMode, Usage, WorkspaceArtifact,
};

use crate::jsonl::{self, LinePos};
use crate::{discover, refs, FileParse, ParseRequest, Source, SourceError};

/// Model name Claude Code gives messages it generated locally.
const SYNTHETIC_MODEL: &str = "<synthetic>";
/// Tools whose input names a file they read or write.
const FILE_TOOLS: &[&str] = &[
    "Read",
    "Edit",
    "MultiEdit",
    "Write",
    "NotebookEdit",
    "NotebookRead",
];
/// Tools whose output is shell output (scanned for git's commit lines).
const SHELL_TOOLS: &[&str] = &["Bash", "BashOutput", "bash"];

/// The Claude Code source.
pub struct ClaudeCode;

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 2: the late-2026 format changes of issue 18.
/// 3: `!` command output and task notifications fold into their turn; inline sidechains link
///    to the file's main session (issue 21).
/// 4: `file-history` backups named by `file-history-snapshot` entries become snapshots for
///    `trail diff` (issue 16).
/// 5: a leading BOM is skipped; `origin.kind` tells who wrote a prompt, and a turn Claude Code
///    started itself (`task-notification`) is a system prompt that names nothing (issue 40).
/// 6: a subagent's type (`agent_description`) and plans as workspace artifacts (issue 45).
pub const PARSER_VERSION: u32 = 6;

impl Source for ClaudeCode {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::ClaudeCode
    }

    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            // A root may be the config dir (holding `projects/`) or `projects/` itself.
            let projects = if root.join("projects").is_dir() {
                root.join("projects")
            } else {
                root.clone()
            };
            // Workflow runs sit deeper (`<slug>/<session>/subagents/workflows/<run>/`); their
            // journals are read by the run's agents, not as files of their own.
            out.extend(discover::walk_files(&projects, 8, |p| {
                discover::has_extension(p, "jsonl") && !is_workflow_journal(p)
            }));
        }
        // `Path`'s own order splits both paths into components at every comparison: a tenth
        // of a no-change run over 20,000 files.
        discover::sort_walked(&mut out);
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        // Agents writing this JSONL in their own folders (OpenClaude, Claude Cowork) read it
        // as theirs; Qwen Code and iFlow write records of the same envelope (`uuid`,
        // `sessionId`).
        crate::relabel::claimed(path).is_none()
            && detect_format(path, head)
            && !crate::qwen::is_chat_record(head)
            && !crate::iflow::is_iflow_record(head)
    }

    fn appendable(&self, _path: &Path) -> bool {
        true
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        parse_file(request)
    }
}

/// Returns whether a file is Claude Code JSONL by its extension and first lines (whatever
/// folder it sits in).
pub fn detect_format(path: &Path, head: &[u8]) -> bool {
    discover::has_extension(path, "jsonl") && detect_head(head)
}

/// Returns whether the first lines are Claude Code entries: a top-level `sessionId` with a
/// `uuid` or a `type`, or a `summary` entry's `leafUuid`. Only top-level keys count: Copilot
/// CLI's `session.start` carries `sessionId` inside `data` and its events have a `type` too,
/// and a substring test read those logs as Claude Code (issue 21). A first line longer than
/// the head cannot be parsed and is judged by its opening instead.
fn detect_head(head: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(rename = "sessionId")]
        session_id: Option<IgnoredAny>,
        uuid: Option<IgnoredAny>,
        #[serde(rename = "type")]
        ty: Option<String>,
        #[serde(rename = "leafUuid")]
        leaf_uuid: Option<IgnoredAny>,
    }
    let text = String::from_utf8_lossy(head);
    let whole_lines = text.ends_with('\n') || head.len() < (64 << 10);
    let mut lines = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(20)
        .peekable();
    while let Some(line) = lines.next() {
        match serde_json::from_str::<Probe>(line) {
            Ok(p) => {
                // Another agent's event vocabulary (`session.start`, `user.message`...).
                if p.ty.as_deref().is_some_and(|t| t.contains('.')) {
                    return false;
                }
                if p.leaf_uuid.is_some()
                    || (p.session_id.is_some() && (p.uuid.is_some() || p.ty.is_some()))
                {
                    return true;
                }
            }
            Err(_) if lines.peek().is_none() && !whole_lines => {
                // The head cut this line: judge by the keys it opens with.
                let opening = line.trim_start();
                let first_type_dotted = opening
                    .split_once("\"type\":\"")
                    .and_then(|(_, rest)| rest.split_once('"'))
                    .is_some_and(|(t, _)| t.contains('.'));
                return opening.starts_with('{')
                    && !first_type_dotted
                    && (opening.contains("\"leafUuid\"")
                        || (opening.contains("\"sessionId\"")
                            && (opening.contains("\"uuid\"") || opening.contains("\"type\""))));
            }
            Err(_) => {}
        }
    }
    false
}

/// What a file is, from its path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
enum FileRole {
    /// `<id>.jsonl`.
    Main,
    /// `agent-<agentId>.jsonl`, in either layout; `parent_hint` is the session folder name of
    /// the new layout. `workflow_run` is the run folder of an agent a `Workflow` tool call
    /// launched (`<session>/subagents/workflows/<run>/agent-<agentId>.jsonl`).
    Subagent {
        agent_id: String,
        parent_hint: Option<String>,
        #[serde(default)]
        workflow_run: Option<String>,
    },
    /// `<session>/subagents/workflows/<run>/journal.jsonl`: the run's record of started and
    /// finished agents (`{type: started|result, key, agentId, result}`), not a conversation.
    /// The run's agents read it beside them; it makes no session of its own.
    WorkflowJournal,
}

/// `<session>/subagents/workflows/<run>/<file>`: the run folder and the `subagents` folder,
/// borrowed from `path` (discovery asks this of every file it walks).
fn workflow_dirs(path: &Path) -> Option<(&Path, &Path)> {
    let run_dir = path.parent()?;
    let workflows = run_dir.parent()?;
    let subagents = workflows.parent()?;
    (workflows.file_name()? == "workflows" && subagents.file_name()? == "subagents")
        .then_some((run_dir, subagents))
}

/// Whether `path` is a workflow run's journal ([`FileRole::WorkflowJournal`]).
fn is_workflow_journal(path: &Path) -> bool {
    path.file_stem().is_some_and(|s| s == "journal") && workflow_dirs(path).is_some()
}

fn file_role(path: &Path) -> FileRole {
    if is_workflow_journal(path) {
        return FileRole::WorkflowJournal;
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir_name = |d: Option<&Path>| {
        d.and_then(|d| d.file_name())
            .map(|n| n.to_string_lossy().into_owned())
    };
    let parent_dir = path.parent();
    // The run folder's name, and the session folder's.
    let workflow = workflow_dirs(path).map(|(run_dir, subagents)| {
        (
            dir_name(Some(run_dir)).unwrap_or_default(),
            dir_name(subagents.parent()),
        )
    });
    match stem.strip_prefix("agent-") {
        Some(agent_id) => match workflow {
            Some((run, session)) => FileRole::Subagent {
                agent_id: agent_id.to_string(),
                parent_hint: session,
                workflow_run: Some(run),
            },
            None => FileRole::Subagent {
                agent_id: agent_id.to_string(),
                parent_hint: parent_dir
                    .filter(|d| d.file_name().is_some_and(|n| n == "subagents"))
                    .and_then(|d| dir_name(d.parent())),
                workflow_run: None,
            },
        },
        None => FileRole::Main,
    }
}

// ---------------------------------------------------------------------------------------------
// Raw entries (only the fields trail uses; everything else is skipped without allocation)
// ---------------------------------------------------------------------------------------------

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawEntry {
    #[serde(rename = "type")]
    ty: Option<String>,
    subtype: Option<String>,
    uuid: Option<String>,
    parent_uuid: Option<String>,
    logical_parent_uuid: Option<String>,
    session_id: Option<String>,
    timestamp: Option<serde_json::Value>,
    is_sidechain: Option<bool>,
    cwd: Option<String>,
    version: Option<String>,
    git_branch: Option<String>,
    is_meta: Option<bool>,
    is_compact_summary: Option<bool>,
    is_api_error_message: Option<bool>,
    request_id: Option<String>,
    message: Option<RawMessage>,
    #[serde(default, deserialize_with = "result_refs_of")]
    tool_use_result: ResultRefs,
    summary: Option<String>,
    leaf_uuid: Option<String>,
    custom_title: Option<String>,
    ai_title: Option<String>,
    content: Option<Box<RawValue>>,
    level: Option<String>,
    attachment: Option<Box<RawValue>>,
    #[serde(rename = "costUSD")]
    cost_usd: Option<f64>,
    pr_url: Option<String>,
    compact_metadata: Option<Box<RawValue>>,
    /// Who wrote a user entry's prompt: `typed`, `queued`, `system`, `sdk` (v2.1.1xx+).
    prompt_source: Option<String>,
    /// Why a user entry's turn started: `{"kind": "human" | "cli" | "task-notification" | ...}`.
    /// Kept raw: some writers put a string here.
    origin: Option<Box<RawValue>>,
    /// On the entries a `--fork-session` (or background) transcript copies from the session it
    /// started from: `{sessionId, messageUuid}` of the original entry.
    forked_from: Option<ForkedFrom>,
    /// `file-history-snapshot` entries: the prompt's uuid and the backups taken for it.
    /// Kept raw: other entry types may use these names for other shapes.
    message_id: Option<Box<RawValue>>,
    snapshot: Option<Box<RawValue>>,
}

/// A `file-history-snapshot` entry's `snapshot`: every file Claude Code tracks, with the
/// backup of its content at that prompt (`~/.claude/file-history/<session>/<backupFileName>`;
/// a null name: the file did not exist then).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct FileHistorySnapshot {
    #[serde(default)]
    tracked_file_backups: HashMap<String, TrackedBackup>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct TrackedBackup {
    backup_file_name: Option<String>,
    version: Option<u32>,
    backup_time: Option<String>,
}

/// A backup named by a snapshot entry, waiting for its prompt's turn.
struct PendingBackup {
    message_id: String,
    path: String,
    backup: Option<String>,
    version: u32,
    at: Option<String>,
}

/// `origin` of the snapshots read from `file-history`.
pub const FILE_HISTORY_ORIGIN: &str = "claude-file-history";

/// Largest backup read into a snapshot.
const MAX_BACKUP_BYTES: u64 = 8 << 20;

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ForkedFrom {
    session_id: Option<String>,
}

/// The part of an `attachment` trail reads: its type, and a queued command's prompt.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawAttachment {
    #[serde(rename = "type")]
    ty: Option<String>,
    prompt: Option<Content>,
    command_mode: Option<String>,
    origin: Option<Box<RawValue>>,
}

#[derive(Deserialize, Default)]
struct RawMessage {
    id: Option<String>,
    model: Option<String>,
    content: Option<Content>,
    usage: Option<RawUsage>,
}

#[derive(Deserialize, Default)]
struct RawUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: u64,
    cache_creation: Option<CacheCreation>,
    speed: Option<IgnoredAny>,
    server_tool_use: Option<ServerToolUse>,
}

/// Server-side tools the API ran during a request (billed per use, not per token).
#[derive(Deserialize, Default)]
struct ServerToolUse {
    #[serde(default)]
    web_search_requests: u64,
}

#[derive(Deserialize, Default)]
struct CacheCreation {
    #[serde(default)]
    ephemeral_5m_input_tokens: u64,
    #[serde(default)]
    ephemeral_1h_input_tokens: u64,
}

#[derive(Deserialize, Default)]
struct Block {
    #[serde(rename = "type")]
    ty: Option<String>,
    text: Option<String>,
    thinking: Option<String>,
    id: Option<String>,
    name: Option<String>,
    input: Option<Box<RawValue>>,
    tool_use_id: Option<String>,
    content: Option<Content>,
    is_error: Option<bool>,
    /// Images carry `{media_type, data}`; other blocks reuse the name for other shapes.
    source: Option<Box<RawValue>>,
}

#[derive(Deserialize, Default)]
struct ImageSource {
    media_type: Option<String>,
    url: Option<String>,
}

/// `message.content` and `tool_result.content`: a string or an array of blocks.
enum Content {
    Text(String),
    Blocks(Vec<Block>),
    Other,
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Content;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or an array of content blocks")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Content, E> {
                Ok(Content::Text(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Content, E> {
                Ok(Content::Text(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
                let mut blocks = Vec::new();
                while let Some(b) = seq.next_element::<BlockOrOther>()? {
                    if let BlockOrOther::Block(b) = b {
                        blocks.push(*b);
                    }
                }
                Ok(Content::Blocks(blocks))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Content, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Content::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Content, E> {
                Ok(Content::Other)
            }
            fn visit_none<E: de::Error>(self) -> Result<Content, E> {
                Ok(Content::Other)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Content, E> {
                Ok(Content::Other)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Content, E> {
                Ok(Content::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Content, E> {
                Ok(Content::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Content, E> {
                Ok(Content::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// A content array element: a block object, or anything else (skipped).
enum BlockOrOther {
    Block(Box<Block>),
    Other,
}

impl<'de> Deserialize<'de> for BlockOrOther {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        if v.is_object() {
            Block::deserialize(v)
                .map(|b| BlockOrOther::Block(Box::new(b)))
                .map_err(de::Error::custom)
        } else {
            Ok(BlockOrOther::Other)
        }
    }
}

/// The ids a `toolUseResult` names: `agentId` (a Task/Agent subagent) and `runId` (a
/// `Workflow` run, v2.1.154+, whose agents live under `subagents/workflows/<runId>/`).
#[derive(Default)]
struct ResultRefs {
    agent_id: Option<String>,
    run_id: Option<String>,
}

/// Reads only `agentId` and `runId` from `toolUseResult` (which can be a string, an array or a
/// large object repeating the whole tool output) without building the rest.
fn result_refs_of<'de, D: Deserializer<'de>>(d: D) -> Result<ResultRefs, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = ResultRefs;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut found = ResultRefs::default();
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                match key.as_ref() {
                    "agentId" => found.agent_id = map.next_value::<Option<String>>()?,
                    "runId" => found.run_id = map.next_value::<Option<String>>()?,
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(found)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(ResultRefs::default())
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok(ResultRefs::default())
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(ResultRefs::default())
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(ResultRefs::default())
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(ResultRefs::default())
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(ResultRefs::default())
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(ResultRefs::default())
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(ResultRefs::default())
        }
    }
    d.deserialize_any(V)
}

// ---------------------------------------------------------------------------------------------
// Resumable state
// ---------------------------------------------------------------------------------------------

/// Structural facts about one stored message: enough to recompute chains and turns on append
/// without the text. Stored in a state through [`stored_nodes`].
#[derive(Debug, Clone)]
struct Node {
    /// Which session of the file (index into `State::sessions`).
    slot: u32,
    seq: u32,
    uuid: Option<String>,
    parent: Option<String>,
    kind: MessageKind,
    sidechain: bool,
    turn: Option<u32>,
    main: bool,
    /// A queued command: written off the chain (often without a uuid) while the assistant's
    /// message went on, yet part of the conversation where it was written.
    queued: bool,
}

/// How [`State::nodes`] is stored: the state of a long log is mostly its nodes, and a resumed
/// parse reads, writes and compresses all of it at every append (a fifth of an append's CPU on a
/// 40 MB file). So keys are one letter, a field at its usual value is left out, and a parent
/// that is the node before's `uuid` (nearly every one) is left out too. A state written with
/// the full names (trail before 2026-11-27) reads as before: they are the aliases.
mod stored_nodes {
    use std::borrow::Cow;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use trail_model::MessageKind;

    use super::Node;

    /// Borrows the ids it writes (`Cow`): a state is written after every parse.
    #[derive(Serialize, Deserialize)]
    struct Stored<'a> {
        #[serde(rename = "s", alias = "slot")]
        slot: u32,
        #[serde(rename = "q", alias = "seq")]
        seq: u32,
        #[serde(
            rename = "u",
            alias = "uuid",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        uuid: Option<Cow<'a, str>>,
        /// Left out: the `uuid` of the node before. `null`: no parent.
        #[serde(
            rename = "p",
            alias = "parent",
            default,
            deserialize_with = "present",
            skip_serializing_if = "Option::is_none"
        )]
        parent: Option<Option<Cow<'a, str>>>,
        #[serde(rename = "k", alias = "kind")]
        kind: MessageKind,
        #[serde(
            rename = "c",
            alias = "sidechain",
            default,
            skip_serializing_if = "is_false"
        )]
        sidechain: bool,
        #[serde(
            rename = "t",
            alias = "turn",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        turn: Option<u32>,
        #[serde(
            rename = "m",
            alias = "main",
            default = "yes",
            skip_serializing_if = "is_true"
        )]
        main: bool,
        #[serde(
            rename = "w",
            alias = "queued",
            default,
            skip_serializing_if = "is_false"
        )]
        queued: bool,
    }

    /// A `p` that is there, even as `null` (absent is `None`, through `default`).
    fn present<'de, 'a, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Option<Cow<'a, str>>>, D::Error> {
        Option::<String>::deserialize(d).map(|p| Some(p.map(Cow::Owned)))
    }

    fn is_false(b: &bool) -> bool {
        !*b
    }

    fn is_true(b: &bool) -> bool {
        *b
    }

    fn yes() -> bool {
        true
    }

    pub(super) fn serialize<S: Serializer>(nodes: &[Node], s: S) -> Result<S::Ok, S::Error> {
        let mut before: Option<&str> = None;
        s.collect_seq(nodes.iter().map(|n| {
            let parent = match (n.parent.as_deref(), before) {
                (Some(p), Some(b)) if p == b => None,
                (p, _) => Some(p.map(Cow::Borrowed)),
            };
            before = n.uuid.as_deref();
            Stored {
                slot: n.slot,
                seq: n.seq,
                uuid: n.uuid.as_deref().map(Cow::Borrowed),
                parent,
                kind: n.kind,
                sidechain: n.sidechain,
                turn: n.turn,
                main: n.main,
                queued: n.queued,
            }
        }))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Node>, D::Error> {
        let stored = Vec::<Stored>::deserialize(d)?;
        let mut nodes: Vec<Node> = Vec::with_capacity(stored.len());
        for n in stored {
            let parent = match n.parent {
                Some(p) => p.map(Cow::into_owned),
                None => match nodes.last().and_then(|b| b.uuid.clone()) {
                    Some(b) => Some(b),
                    None => return Err(serde::de::Error::custom("a node's parent is missing")),
                },
            };
            nodes.push(Node {
                slot: n.slot,
                seq: n.seq,
                uuid: n.uuid.map(Cow::into_owned),
                parent,
                kind: n.kind,
                sidechain: n.sidechain,
                turn: n.turn,
                main: n.main,
                queued: n.queued,
            });
        }
        Ok(nodes)
    }
}

/// Per-session accumulated facts.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SessionState {
    meta: SessionMeta,
    /// A [`TitleRank`]: 3 custom title, 2 ai-title or summary, 1 first prompt, 0 none.
    title_rank: u8,
    next_seq: u32,
    checkpoints: u32,
    models: Vec<String>,
    /// Dedupe key -> total tokens kept.
    usage: HashMap<String, u64>,
    /// For inline sidechain sessions: the root uuid.
    sidechain_root: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct State {
    role: FileRole,
    sessions: Vec<SessionState>,
    #[serde(with = "stored_nodes")]
    nodes: Vec<Node>,
    /// `summary` entries whose `leafUuid` is not (yet) in this file.
    pending_summaries: Vec<(String, String)>,
    /// Prompt text of Task/Agent tool calls by tool_use id, to link inline sidechains.
    task_prompts: Vec<(String, String)>,
    /// Tool name by tool_use id, so a result parsed later (an append) knows its tool.
    #[serde(default)]
    call_names: HashMap<String, String>,
}

/// Work in progress for one session during a parse.
struct Building {
    session: Session,
    /// Index of the first message that is new in this parse.
    new_from: usize,
}

// ---------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------

fn parse_file(request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
    let path = request.path;
    let role = file_role(path);
    let (mut state, start, start_line, appending) = match request.resume {
        Some(r) => match serde_json::from_slice::<State>(r.state) {
            Ok(s) if s.role == role => (s, r.offset, r.line, true),
            _ => (new_state(role.clone()), 0, 0, false),
        },
        None => (new_state(role.clone()), 0, 0, false),
    };
    if role == FileRole::WorkflowJournal {
        // A run's record, read by its agents: nothing of its own to index.
        let len = std::fs::metadata(path)
            .map_err(|e| SourceError::io(path, e))?
            .len();
        return Ok(FileParse {
            bytes_parsed: len,
            notes: vec!["workflow journal: read with the run's agents".into()],
            ..FileParse::default()
        });
    }
    let meta_sidecar = match &role {
        FileRole::Subagent { agent_id, .. } => read_meta_sidecar(path, agent_id),
        FileRole::Main | FileRole::WorkflowJournal => None,
    };
    let agent_type = match &role {
        FileRole::Subagent { agent_id, .. } => read_agent_type(path, agent_id),
        FileRole::Main | FileRole::WorkflowJournal => None,
    };
    let workflow_meta = match &role {
        FileRole::Subagent {
            agent_id,
            workflow_run: Some(run),
            ..
        } => Some(workflow_agent_metadata(path, run, agent_id)),
        _ => None,
    };
    // A main session's Workflow runs are described in `<session>/workflows/<run>.json`.
    let workflows_dir = (role == FileRole::Main).then(|| path.with_extension("").join("workflows"));
    // Claude Code keeps backups of the files a session edits in
    // `<config>/file-history/<session id>/`, beside `projects/`.
    let file_history_dir = (role == FileRole::Main)
        .then(|| {
            let config = path.parent()?.parent()?.parent()?;
            Some(config.join("file-history").join(path.file_stem()?))
        })
        .flatten()
        .filter(|d| d.is_dir());

    let mut uuid_slot = HashMap::new();
    for n in &state.nodes {
        if let Some(u) = &n.uuid {
            uuid_slot.entry(u.clone()).or_insert((n.slot, n.sidechain));
        }
    }
    let mut parser = Parser {
        uuid_slot,
        state: &mut state,
        building: HashMap::new(),
        file_stem: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        meta_sidecar,
        agent_type,
        workflow_meta,
        workflows_dir,
        file_history_dir,
        backups: Vec::new(),
    };
    let outcome =
        jsonl::read_lines_limited(path, start, start_line, request.max_bytes, |pos, line| {
            parser.line(pos, line)
        })?;
    let mut sessions = parser.finish(appending);
    sessions.retain(|s| {
        !(s.mode == UpdateMode::Replace
            && s.messages.is_empty()
            && s.meta.title.is_none()
            && s.meta.created_at.is_none())
    });
    let title_hints = state.pending_summaries.clone();
    let state_bytes = serde_json::to_vec(&state).ok();
    Ok(FileParse {
        more: outcome.more,
        title_hints,
        sessions,
        issues: outcome.issues,
        bytes_parsed: outcome.bytes_parsed,
        bytes_read: outcome.bytes_read,
        lines: outcome.lines,
        state: state_bytes,
        ..FileParse::default()
    })
}

fn new_state(role: FileRole) -> State {
    State {
        role,
        sessions: Vec::new(),
        nodes: Vec::new(),
        pending_summaries: Vec::new(),
        task_prompts: Vec::new(),
        call_names: HashMap::new(),
    }
}

/// Reads `agent-<id>.meta.json` beside a subagent file for the spawning tool call id.
fn read_meta_sidecar(path: &Path, agent_id: &str) -> Option<String> {
    let meta = path.with_file_name(format!("agent-{agent_id}.meta.json"));
    let v = crate::whole::read_json_lenient(&meta)?;
    ["toolUseId", "toolUseID", "tool_use_id"]
        .iter()
        .find_map(|k| v.get(*k).and_then(|x| x.as_str()).map(str::to_string))
}

/// Reads the subagent's type (`agentType`) from `agent-<id>.meta.json` beside a subagent file.
fn read_agent_type(path: &Path, agent_id: &str) -> Option<String> {
    let meta = path.with_file_name(format!("agent-{agent_id}.meta.json"));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(meta).ok()?).ok()?;
    let t = v.get("agentType")?.as_str()?.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// The plans a session's `ExitPlanMode` calls presented (their `plan` input), as Chronicle's
/// workspace artifacts: by the plan file's path when the call names it, else as `plan.md`. A
/// later plan of the same path replaces an earlier one.
fn plan_artifacts(messages: &[Message]) -> Vec<WorkspaceArtifact> {
    let mut out: Vec<WorkspaceArtifact> = Vec::new();
    for m in messages {
        if m.kind != Some(MessageKind::ToolCall) || m.tool_name.as_deref() != Some("ExitPlanMode") {
            continue;
        }
        let Some(input) = m
            .tool_input
            .as_deref()
            .and_then(|i| serde_json::from_str::<serde_json::Value>(i).ok())
        else {
            continue;
        };
        let Some(plan) = input.get("plan").and_then(|p| p.as_str()) else {
            continue;
        };
        let path = input
            .get("planFilePath")
            .and_then(|p| p.as_str())
            .filter(|p| !p.is_empty())
            .unwrap_or("plan.md")
            .to_string();
        out.retain(|a| a.path != path);
        out.push(WorkspaceArtifact {
            path,
            content: plan.to_string(),
        });
    }
    out
}

/// Reads a workflow run's file (`<session>/workflows/<run>.json`): its name, status, tokens,
/// phases and agents, without the script it ran.
fn read_workflow_run(path: &Path) -> Option<serde_json::Value> {
    let v = crate::whole::read_json_lenient(path)?;
    let obj = v.as_object()?;
    let mut out = serde_json::Map::new();
    for key in [
        "runId",
        "workflowName",
        "status",
        "summary",
        "timestamp",
        "durationMs",
        "agentCount",
        "totalTokens",
        "totalToolCalls",
        "defaultModel",
        "scriptPath",
        "error",
    ] {
        if let Some(x) = obj.get(key).filter(|x| !x.is_null()) {
            out.insert(key.to_string(), x.clone());
        }
    }
    let phases: Vec<serde_json::Value> = obj
        .get("phases")
        .and_then(|p| p.as_array())
        .map(|a| a.iter().filter_map(|p| p.get("title").cloned()).collect())
        .unwrap_or_default();
    out.insert("phases".into(), serde_json::Value::Array(phases));
    let agents: Vec<serde_json::Value> = obj
        .get("workflowProgress")
        .and_then(|p| p.as_array())
        .map(|a| {
            a.iter()
                .filter(|p| p.get("type").and_then(|t| t.as_str()) == Some("workflow_agent"))
                .map(|p| {
                    let mut agent = serde_json::Map::new();
                    for key in [
                        "agentId",
                        "label",
                        "phaseTitle",
                        "model",
                        "state",
                        "tokens",
                        "toolCalls",
                        "durationMs",
                    ] {
                        if let Some(x) = p.get(key).filter(|x| !x.is_null()) {
                            agent.insert(key.to_string(), x.clone());
                        }
                    }
                    serde_json::Value::Object(agent)
                })
                .collect()
        })
        .unwrap_or_default();
    out.insert("agents".into(), serde_json::Value::Array(agents));
    Some(serde_json::Value::Object(out))
}

/// Builds a workflow agent's session metadata from its run: the run's file (two folders up
/// from `subagents/`, `<session>/workflows/<run>.json`) and the run's `journal.jsonl` beside
/// the agent, whose `result` line for this agent is what the agent handed back.
fn workflow_agent_metadata(path: &Path, run: &str, agent_id: &str) -> serde_json::Value {
    let run_dir = path.parent();
    let session_dir = run_dir
        .and_then(Path::parent)
        .and_then(Path::parent)
        .and_then(Path::parent);
    let mut out = serde_json::Map::new();
    out.insert("workflowRunId".into(), run.into());
    if let Some(info) = session_dir
        .and_then(|d| read_workflow_run(&d.join("workflows").join(format!("{run}.json"))))
    {
        out.insert("workflowRun".into(), info);
    }
    if let Some(journal) = run_dir.and_then(|d| std::fs::read(d.join("journal.jsonl")).ok()) {
        let mut started = false;
        for line in String::from_utf8_lossy(&journal).lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if v.get("agentId").and_then(|a| a.as_str()) != Some(agent_id) {
                continue;
            }
            match v.get("type").and_then(|t| t.as_str()) {
                Some("started") => started = true,
                Some("result") => {
                    if let Some(r) = v.get("result") {
                        out.insert("journalResult".into(), r.clone());
                    }
                }
                _ => {}
            }
        }
        out.insert("journalStarted".into(), started.into());
    }
    serde_json::Value::Object(out)
}

struct Parser<'a> {
    state: &'a mut State,
    /// Sessions touched by this parse, by slot.
    building: HashMap<u32, Building>,
    file_stem: String,
    /// uuid -> (slot, sidechain) of the first node with that uuid.
    uuid_slot: HashMap<String, (u32, bool)>,
    meta_sidecar: Option<String>,
    /// A subagent's type, from the same sidecar (`agentType`).
    agent_type: Option<String>,
    /// A workflow agent's run facts (`sessions.metadata`).
    workflow_meta: Option<serde_json::Value>,
    /// Where a main session's workflow run files are.
    workflows_dir: Option<PathBuf>,
    /// Where a main session's file backups are (`file-history/<session>`), when it exists.
    file_history_dir: Option<PathBuf>,
    /// Backups named by this parse's `file-history-snapshot` entries.
    backups: Vec<PendingBackup>,
}

/// A `system` chain node: a compaction, an error or a note.
fn system_message(entry: &RawEntry, base: &Origin) -> Message {
    let sub = entry.subtype.as_deref().unwrap_or("");
    let text = raw_text(entry.content.as_deref());
    let (role, kind) = match sub {
        "compact_boundary" => (Role::System, MessageKind::Compaction),
        "api_error" | "error" | "api_refusal" => (Role::System, MessageKind::Error),
        _ if entry.level.as_deref() == Some("error") => (Role::System, MessageKind::Error),
        _ => (Role::System, MessageKind::Meta),
    };
    let extra = if kind == MessageKind::Compaction {
        entry.compact_metadata.as_ref().map(|m| m.get().to_string())
    } else {
        None
    };
    let text = if text.is_empty() {
        sub.to_string()
    } else {
        text
    };
    base.message(role, kind, text)
        .with_error(kind == MessageKind::Error)
        .with_extra(extra)
}

/// An `attachment` chain node: a queued prompt, or a note holding the attachment.
fn attachment_message(entry: &RawEntry, base: &Origin) -> Message {
    match queued_prompt(entry.attachment.as_deref()) {
        Some((text, source)) => queued_message(
            text,
            source,
            base.parent_native_id.clone(),
            base.timestamp.clone(),
        )
        .with_native_id(base.native_id.clone())
        .with_sidechain(base.is_sidechain),
        None => base
            .message(
                Role::System,
                MessageKind::Meta,
                attachment_summary(entry.attachment.as_deref()),
            )
            .with_extra(entry.attachment.as_ref().map(|a| a.get().to_string())),
    }
}

impl Parser<'_> {
    fn line(&mut self, pos: LinePos, line: &str) -> Result<(), String> {
        let entry: RawEntry =
            serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
        let ty = entry
            .ty
            .as_deref()
            .ok_or_else(|| "entry has no \"type\"".to_string())?
            .to_string();
        let ts = entry.timestamp.as_ref().and_then(time::from_json);
        let _ = pos;
        if self.metadata_entry(&ty, &entry, &ts) {
            return Ok(());
        }
        // A prompt typed while a tool ran can be written as a `queued_command` attachment
        // without a uuid, between the records of one assistant message: it is still a prompt.
        if ty == "attachment" && entry.uuid.is_none() {
            self.queued_attachment(&entry, &ts);
            return Ok(());
        }
        // Only chain nodes (entries with a uuid) become messages; other metadata lines
        // (queue operations, file snapshots, modes) carry nothing to index.
        let Some(uuid) = entry.uuid.clone() else {
            return Ok(());
        };
        // A `--fork-session` or background transcript starts by copying its origin's chain,
        // same uuids: those turns are the origin's, shown and searched there only. The copy
        // links the session to its origin (`metadata.forkedFrom`).
        if let Some(origin) = self.replayed_from(&entry) {
            let slot = self.main_slot(&entry);
            let st = &mut self.state.sessions[slot as usize];
            if st.meta.metadata.is_none() {
                st.meta.metadata = Some(serde_json::json!({ "forkedFrom": origin }));
                self.building(slot);
            }
            return Ok(());
        }
        let parent = entry
            .logical_parent_uuid
            .clone()
            .or_else(|| entry.parent_uuid.clone());
        let sidechain = entry.is_sidechain.unwrap_or(false);
        let slot = self.slot_for(&entry, sidechain, parent.as_deref(), &uuid);
        self.observe_session_meta(slot, &entry, &ts);
        let base = Origin {
            native_id: Some(uuid.clone()),
            parent_native_id: parent.clone(),
            timestamp: ts.clone(),
            model: None,
            is_sidechain: sidechain,
        };
        let mut out: Vec<Message> = Vec::new();
        match ty.as_str() {
            "user" => self.user_messages(&entry, &base, &mut out),
            "assistant" => self.assistant_messages(slot, &entry, &base, ts.as_deref(), &mut out),
            "system" => out.push(system_message(&entry, &base)),
            "attachment" => out.push(attachment_message(&entry, &base)),
            "progress" => {
                out.push(base.message(Role::System, MessageKind::Meta, ""));
            }
            _ => {
                // An unknown chain node: keep it (and the raw line) so the chain stays whole;
                // its text names its type, for `show`.
                out.push(
                    base.message(Role::System, MessageKind::Unknown, ty.clone())
                        .with_extra(line.to_string()),
                );
            }
        }
        if out.is_empty() {
            out.push(base.message(Role::System, MessageKind::Meta, ""));
        }
        for m in out {
            self.push_message(slot, m);
        }
        Ok(())
    }

    /// Reads the entries that describe a session instead of adding to its chain (summaries,
    /// titles, file-history snapshots, PR links); false for any other entry.
    fn metadata_entry(&mut self, ty: &str, entry: &RawEntry, ts: &Option<String>) -> bool {
        match ty {
            "summary" => {
                if let Some(summary) = entry.summary.as_deref().filter(|s| !junk_title(s)) {
                    let leaf = entry.leaf_uuid.clone().unwrap_or_default();
                    self.state
                        .pending_summaries
                        .push((leaf, summary.to_string()));
                }
            }
            "custom-title" | "ai-title" => {
                let (title, rank) = if ty == "custom-title" {
                    (entry.custom_title.as_deref(), TitleRank::USER)
                } else {
                    (entry.ai_title.as_deref(), TitleRank::SUMMARY)
                };
                if let Some(t) = title.filter(|t| !t.trim().is_empty()) {
                    let slot = self.main_slot(entry);
                    self.set_title(slot, t, rank);
                }
            }
            "file-history-snapshot" => self.file_history_snapshot(entry, ts),
            "pr-link" => {
                if let Some(url) = entry.pr_url.as_deref() {
                    let slot = self.main_slot(entry);
                    let b = self.building(slot);
                    for (rt, value) in refs::extract(url, false) {
                        b.session.add_ref(SessionRef {
                            ref_type: rt,
                            value,
                            turn_index: None,
                            created_at: ts.clone(),
                        });
                    }
                }
            }
            _ => return false,
        }
        true
    }

    /// Notes the backups a `file-history-snapshot` entry names (read when the session's
    /// `file-history` folder exists).
    fn file_history_snapshot(&mut self, entry: &RawEntry, ts: &Option<String>) {
        let snapshot = entry
            .snapshot
            .as_deref()
            .and_then(|r| serde_json::from_str::<FileHistorySnapshot>(r.get()).ok());
        let mid = entry
            .message_id
            .as_deref()
            .and_then(|r| serde_json::from_str::<String>(r.get()).ok());
        let (Some(snapshot), Some(mid)) = (snapshot.as_ref(), &mid) else {
            return;
        };
        if self.file_history_dir.is_none() {
            return;
        }
        let mut files: Vec<_> = snapshot.tracked_file_backups.iter().collect();
        files.sort_by(|a, b| a.0.cmp(b.0));
        for (path, b) in files {
            self.backups.push(PendingBackup {
                message_id: mid.clone(),
                path: path.clone(),
                backup: b.backup_file_name.clone(),
                version: b.version.unwrap_or(0),
                at: b
                    .backup_time
                    .as_deref()
                    .and_then(time::normalize)
                    .or_else(|| ts.clone()),
            });
        }
    }

    /// A `queued_command` attachment without a uuid: a prompt, after the session's last node.
    fn queued_attachment(&mut self, entry: &RawEntry, ts: &Option<String>) {
        let Some((text, source)) = queued_prompt(entry.attachment.as_deref()) else {
            return;
        };
        let slot = self.main_slot(entry);
        if let Some(ts) = ts {
            self.state.sessions[slot as usize]
                .meta
                .observe_timestamp(ts);
        }
        let parent = self
            .state
            .nodes
            .iter()
            .rev()
            .filter(|n| n.slot == slot)
            .find_map(|n| n.uuid.clone());
        self.push_message(slot, queued_message(text, source, parent, ts.clone()));
    }

    /// The session facts a chain node carries: its time, folder, branch and agent version.
    fn observe_session_meta(&mut self, slot: u32, entry: &RawEntry, ts: &Option<String>) {
        let st = &mut self.state.sessions[slot as usize];
        if let Some(ts) = ts {
            st.meta.observe_timestamp(ts);
        }
        if st.meta.cwd.is_none() {
            st.meta.cwd = entry.cwd.clone().filter(|c| !c.is_empty());
        }
        if let Some(b) = entry.git_branch.as_deref().filter(|b| !b.is_empty()) {
            if b != "HEAD" || st.meta.branch.is_none() {
                st.meta.branch = Some(b.to_string());
            }
        }
        if let Some(v) = entry.version.as_deref() {
            st.meta.agent_version = Some(v.to_string());
        }
    }

    fn user_messages(&mut self, entry: &RawEntry, base: &Origin, out: &mut Vec<Message>) {
        let content = entry.message.as_ref().and_then(|m| m.content.as_ref());
        let mut text = String::new();
        let mut results: Vec<Message> = Vec::new();
        match content {
            Some(Content::Text(t)) => text.push_str(t),
            Some(Content::Blocks(blocks)) => {
                for b in blocks {
                    match b.ty.as_deref() {
                        Some("text") => push_para(&mut text, b.text.as_deref().unwrap_or("")),
                        Some("image") => push_para(&mut text, &image_placeholder(b)),
                        Some("document") => push_para(&mut text, "[document]"),
                        Some("tool_result") => {
                            let output = content_text(b.content.as_ref());
                            let refs = &entry.tool_use_result;
                            // A Workflow call's result names its run: its agents link to the
                            // call through the run id, and the run's file describes it.
                            let run = refs.run_id.as_deref().and_then(|run| {
                                let dir = self.workflows_dir.as_ref()?;
                                read_workflow_run(&dir.join(format!("{run}.json")))
                            });
                            results.push(
                                Message::tool_result(b.tool_use_id.clone(), output)
                                    .with_origin(base)
                                    .with_error(b.is_error.unwrap_or(false))
                                    .with_agent_ref(
                                        refs.agent_id.clone().or_else(|| refs.run_id.clone()),
                                    )
                                    .with_extra(run.map(|r| r.to_string())),
                            );
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        out.extend(results);
        // The VS Code extension wraps the editor's state in `<ide_opened_file>` and
        // `<ide_selection>`: context the person did not type, kept apart from the prompt.
        let (context, typed) = split_ide_context(&text);
        if !context.is_empty() {
            out.push(base.message(Role::User, MessageKind::Meta, context));
            text = typed;
        }
        if text.is_empty() {
            return;
        }
        let kind = if entry.is_compact_summary == Some(true) {
            MessageKind::Summary
        } else if entry.is_meta == Some(true) || is_interrupt(&text) || is_injected(&text) {
            MessageKind::Meta
        } else {
            MessageKind::Prompt
        };
        let role = if kind == MessageKind::Summary {
            Role::System
        } else {
            Role::User
        };
        let prompt_source = (kind == MessageKind::Prompt)
            .then(|| prompt_source_of(entry.prompt_source.as_deref(), entry.origin.as_deref()))
            .flatten();
        out.push(
            base.message(role, kind, text)
                .with_prompt_source(prompt_source),
        );
    }

    fn assistant_messages(
        &mut self,
        slot: u32,
        entry: &RawEntry,
        base: &Origin,
        ts: Option<&str>,
        out: &mut Vec<Message>,
    ) {
        let msg = entry.message.as_ref();
        let model = msg
            .and_then(|m| m.model.clone())
            .filter(|m| !m.is_empty() && m != SYNTHETIC_MODEL);
        let api_error = entry.is_api_error_message == Some(true);
        if let Some(Content::Blocks(blocks)) = msg.and_then(|m| m.content.as_ref()) {
            for b in blocks {
                let m = self.block_message(b, base, api_error);
                out.push(m.with_model(model.clone()));
            }
        } else if let Some(Content::Text(t)) = msg.and_then(|m| m.content.as_ref()) {
            out.push(
                base.message(Role::Assistant, answer_kind(api_error), t.clone())
                    .with_model(model.clone())
                    .with_error(api_error),
            );
        }
        let st = &mut self.state.sessions[slot as usize];
        if let Some(m) = &model {
            if !st.models.iter().any(|x| x == m) {
                st.models.push(m.clone());
            }
        }
        self.record_usage(slot, entry, base, model, ts);
    }

    /// One content block of an assistant message (a Task or Agent call's prompt is noted for
    /// its subagent).
    fn block_message(&mut self, b: &Block, base: &Origin, api_error: bool) -> Message {
        match b.ty.as_deref() {
            Some("text") => base
                .message(
                    Role::Assistant,
                    answer_kind(api_error),
                    b.text.clone().unwrap_or_default(),
                )
                .with_error(api_error),
            Some("thinking") | Some("redacted_thinking") => base.message(
                Role::Assistant,
                MessageKind::Thinking,
                b.thinking.clone().unwrap_or_default(),
            ),
            Some("tool_use") | Some("server_tool_use") | Some("mcp_tool_use") => {
                let input = b.input.as_ref().map(|i| i.get().to_string());
                if let (Some(id), Some(name), Some(input)) = (&b.id, &b.name, &input) {
                    if name == "Task" || name == "Agent" {
                        if let Some(p) = task_prompt(input) {
                            self.state.task_prompts.push((id.clone(), p));
                        }
                    }
                }
                Message::tool_call(b.name.clone())
                    .with_origin(base)
                    .with_call_id(b.id.clone())
                    .with_input(input)
            }
            Some(other) if other.ends_with("tool_result") => {
                Message::tool_result(b.tool_use_id.clone(), content_text(b.content.as_ref()))
                    .with_origin(base)
                    .with_error(b.is_error.unwrap_or(false))
            }
            _ => base
                .message(Role::Assistant, MessageKind::Unknown, "")
                .with_extra(format!(
                    "{{\"type\":{}}}",
                    serde_json::to_string(b.ty.as_deref().unwrap_or("")).unwrap_or_default()
                )),
        }
    }

    /// The message's usage, once per request: streamed chunks repeat it (the largest is
    /// kept); synthetic messages have none.
    fn record_usage(
        &mut self,
        slot: u32,
        entry: &RawEntry,
        base: &Origin,
        model: Option<String>,
        ts: Option<&str>,
    ) {
        let Some(msg) = entry.message.as_ref() else {
            return;
        };
        let Some(u) = &msg.usage else { return };
        if msg.model.as_deref() == Some(SYNTHETIC_MODEL) {
            return;
        }
        let cache_creation = match &u.cache_creation {
            Some(c)
                if crate::shared::blocks::any_count(&[
                    c.ephemeral_5m_input_tokens,
                    c.ephemeral_1h_input_tokens,
                ]) =>
            {
                c.ephemeral_5m_input_tokens
                    .saturating_add(c.ephemeral_1h_input_tokens)
            }
            _ => u.cache_creation_input_tokens,
        };
        let usage = Usage {
            request_key: String::new(),
            message_id: msg.id.clone(),
            message_seq: None,
            model: model.clone(),
            timestamp: ts.map(str::to_string),
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_creation_tokens: cache_creation,
            cache_creation_1h_tokens: u
                .cache_creation
                .as_ref()
                .map(|c| c.ephemeral_1h_input_tokens)
                .unwrap_or(0),
            cache_read_tokens: u.cache_read_input_tokens,
            reasoning_tokens: 0,
            cost_usd: entry.cost_usd,
            is_sidechain: entry.is_sidechain.unwrap_or(false),
            tokens_known: true,
            has_speed: u.speed.is_some(),
            web_search_requests: u
                .server_tool_use
                .as_ref()
                .map_or(0, |s| s.web_search_requests),
            premium_requests: 0.0,
        };
        let key = match (msg.id.as_deref(), entry.request_id.as_deref()) {
            (Some(id), Some(req)) if !id.is_empty() && !req.is_empty() => format!("{id}:{req}"),
            // No requestId: lines repeating a message id at the same instant are chunks of one
            // streamed message (ccusage's daily report keys these by message id and time too;
            // docs/usage.md).
            (Some(id), None) if !id.is_empty() => {
                format!("{id}:at:{}", ts.unwrap_or(""))
            }
            _ => format!("line:{}", base.native_id.as_deref().unwrap_or("")),
        };
        let st = &mut self.state.sessions[slot as usize];
        let total = usage.total();
        let seq = st.next_seq;
        match st.usage.get(&key) {
            Some(&prev) if prev >= total => {}
            _ => {
                st.usage.insert(key.clone(), total);
                let b = self.building(slot);
                b.session.usage.retain(|x| x.request_key != key);
                b.session.usage.push(Usage {
                    request_key: key,
                    message_seq: Some(seq),
                    ..usage
                });
            }
        }
    }

    /// Returns the session a chain node of a main file was copied from, when it is a replay:
    /// it says so (`forkedFrom`), or it carries another session's id in a file named by its
    /// own session id.
    fn replayed_from(&self, entry: &RawEntry) -> Option<String> {
        if self.state.role != FileRole::Main || entry.is_sidechain == Some(true) {
            return None;
        }
        let own = self.file_stem.as_str();
        let forked = entry
            .forked_from
            .as_ref()
            .and_then(|f| f.session_id.clone())
            .filter(|s| !s.is_empty() && s != own);
        if forked.is_some() {
            return forked;
        }
        entry
            .session_id
            .clone()
            .filter(|s| !s.is_empty() && s != own && looks_like_uuid(own))
    }

    /// Returns the slot of the main session of this file (created on first use).
    fn main_slot(&mut self, entry: &RawEntry) -> u32 {
        if let Some(i) = self
            .state
            .sessions
            .iter()
            .position(|s| s.sidechain_root.is_none())
        {
            return i as u32;
        }
        let native = entry
            .session_id
            .clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| self.file_stem.clone());
        let meta = match &self.state.role {
            FileRole::Main => {
                // The file stem is the session id; fall back to it for entries without one.
                let id = if self.file_stem.is_empty() {
                    native.clone()
                } else {
                    self.file_stem.clone()
                };
                SessionMeta::new(SessionId::new(id.clone()), SourceKind::ClaudeCode, id)
            }
            FileRole::Subagent {
                agent_id,
                parent_hint,
                workflow_run,
            } => {
                // Workflow agents carry `<parent>#agent-<agentId>` as their sessionId.
                let native = match native.split_once("#agent-") {
                    Some((parent, _)) => parent.to_string(),
                    None => native,
                };
                let parent = parent_hint.clone().unwrap_or(native);
                let id = format!("{parent}:agent-{agent_id}");
                let mut meta = SessionMeta::new(
                    SessionId::new(id.clone()),
                    SourceKind::ClaudeCode,
                    format!("agent-{agent_id}"),
                );
                meta.parent = Some(ParentLink {
                    session_id: SessionId::new(parent),
                    tool_call_id: self.meta_sidecar.clone(),
                    // A workflow agent is found through its run: the Workflow call's result
                    // names the run, not the agent.
                    agent_ref: Some(workflow_run.clone().unwrap_or_else(|| agent_id.clone())),
                });
                meta.metadata = self.workflow_meta.clone();
                meta.agent_description = self.agent_type.clone();
                meta
            }
            FileRole::WorkflowJournal => SessionMeta::new(
                SessionId::new(native.clone()),
                SourceKind::ClaudeCode,
                native,
            ),
        };
        self.new_session(meta, None)
    }

    fn new_session(&mut self, meta: SessionMeta, sidechain_root: Option<String>) -> u32 {
        self.state.sessions.push(SessionState {
            meta,
            title_rank: 0,
            next_seq: 0,
            checkpoints: 0,
            models: Vec::new(),
            usage: HashMap::new(),
            sidechain_root,
        });
        (self.state.sessions.len() - 1) as u32
    }

    /// Picks the session a chain node belongs to. In a main file, inline sidechain trees become
    /// their own sessions.
    fn slot_for(
        &mut self,
        entry: &RawEntry,
        sidechain: bool,
        parent: Option<&str>,
        uuid: &str,
    ) -> u32 {
        let main = self.main_slot(entry);
        if !sidechain || self.state.role != FileRole::Main {
            return main;
        }
        // A sidechain node continues its parent's sidechain session; a sidechain node whose
        // parent is on the main chain (or unknown) starts a new one.
        if let Some(&(slot, parent_sidechain)) = parent.and_then(|p| self.uuid_slot.get(p)) {
            if parent_sidechain && slot != main {
                return slot;
            }
        }
        // The parent is this file's main session, whatever id it was given: the entries'
        // `sessionId` differs from it when the file was renamed, and a link to that id would
        // point at no session (issue 21: an inline subagent split from its Task call).
        let parent_id = self.state.sessions[main as usize].meta.id.clone();
        let short: String = uuid.chars().take(8).collect();
        let id = format!("{parent_id}:sidechain-{short}");
        if let Some(i) = self
            .state
            .sessions
            .iter()
            .position(|s| s.meta.id.as_str() == id)
        {
            return i as u32;
        }
        let mut meta = SessionMeta::new(
            SessionId::new(id),
            SourceKind::ClaudeCode,
            format!("sidechain-{uuid}"),
        );
        meta.parent = Some(ParentLink {
            session_id: parent_id,
            tool_call_id: None,
            agent_ref: None,
        });
        self.new_session(meta, Some(uuid.to_string()))
    }

    fn set_title(&mut self, slot: u32, title: &str, rank: u8) {
        let st = &mut self.state.sessions[slot as usize];
        if rank >= st.title_rank {
            st.title_rank = rank;
            st.meta.title_rank = rank;
            st.meta.title = Some(clean_title(title));
            // A title alone (`/rename` appended to a session) still updates the session.
            self.building(slot);
        }
    }

    fn building(&mut self, slot: u32) -> &mut Building {
        let st = &self.state.sessions[slot as usize];
        self.building.entry(slot).or_insert_with(|| Building {
            session: Session::new(st.meta.clone()),
            new_from: 0,
        })
    }

    fn push_message(&mut self, slot: u32, mut m: Message) {
        let st = &mut self.state.sessions[slot as usize];
        m.seq = st.next_seq;
        st.next_seq += 1;
        let kind = m.kind();
        // A prompt Claude Code sent itself (a task notification) does not name the session.
        if kind == MessageKind::Prompt
            && st.title_rank < 1
            && m.prompt_source != Some(PromptSource::System)
        {
            let t = clean_title(&strip_system_reminders(&m.text));
            if !t.is_empty() {
                st.title_rank = TitleRank::FIRST_PROMPT;
                st.meta.title_rank = TitleRank::FIRST_PROMPT;
                st.meta.title = Some(t);
            }
        }
        // Inline sidechain: link to the Task call whose prompt matches its first prompt.
        if st.sidechain_root.is_some()
            && kind == MessageKind::Prompt
            && st
                .meta
                .parent
                .as_ref()
                .is_some_and(|p| p.tool_call_id.is_none())
        {
            let want = m.text.trim();
            if let Some((id, _)) = self
                .state
                .task_prompts
                .iter()
                .find(|(_, p)| p.trim() == want)
            {
                if let Some(p) = st.meta.parent.as_mut() {
                    p.tool_call_id = Some(id.clone());
                }
            }
        }
        if let Some(u) = &m.native_id {
            self.uuid_slot
                .entry(u.clone())
                .or_insert((slot, m.is_sidechain));
        }
        self.state.nodes.push(Node {
            slot,
            seq: m.seq,
            uuid: m.native_id.clone(),
            parent: m.parent_native_id.clone(),
            kind,
            sidechain: m.is_sidechain,
            turn: None,
            main: false,
            queued: m.native_id.is_none() || m.prompt_source == Some(PromptSource::Queued),
        });
        let b = self.building(slot);
        b.session.messages.push(m);
    }

    /// Resolves chains, turns, titles and derived rows for every session of the file.
    fn finish(mut self, appending: bool) -> Vec<Session> {
        // A workflow run's facts as of this parse (the run goes on after its agents' lines).
        if let Some(meta) = &self.workflow_meta {
            for (slot, st) in self.state.sessions.iter_mut().enumerate() {
                if st.meta.metadata.as_ref() != Some(meta) {
                    st.meta.metadata = Some(meta.clone());
                    let meta = st.meta.clone();
                    self.building
                        .entry(slot as u32)
                        .or_insert_with(|| Building {
                            session: Session::new(meta),
                            new_from: 0,
                        });
                }
            }
        }
        // Summaries label the conversation holding their leaf.
        let pending = std::mem::take(&mut self.state.pending_summaries);
        let mut still_pending = Vec::new();
        for (leaf, summary) in pending {
            let slot = self
                .state
                .nodes
                .iter()
                .find(|n| n.uuid.as_deref() == Some(leaf.as_str()))
                .map(|n| n.slot);
            match slot {
                Some(slot) => self.set_title(slot, &summary, TitleRank::SUMMARY),
                None => still_pending.push((leaf, summary)),
            }
        }
        // A summary whose leaf lies in another file still describes this project's work; use
        // it as the main session's title only if nothing better exists.
        if !still_pending.is_empty() && !self.state.sessions.is_empty() {
            let (_, s) = still_pending[still_pending.len() - 1].clone();
            if let Some(main) = self
                .state
                .sessions
                .iter()
                .position(|s| s.sidechain_root.is_none())
            {
                if self.state.sessions[main].title_rank == TitleRank::NONE {
                    self.set_title(main as u32, &s, TitleRank::FIRST_PROMPT);
                }
            }
        }
        self.state.pending_summaries = still_pending;

        let slots = self.state.sessions.len() as u32;
        let mut result = Vec::new();
        for slot in 0..slots {
            let changed = self.relink_slot(slot);
            let touched = self.building.contains_key(&slot) || !changed.is_empty();
            if !touched && appending {
                continue;
            }
            let st = self.state.sessions[slot as usize].clone();
            let mut b = self.building.remove(&slot).unwrap_or_else(|| Building {
                session: Session::new(st.meta.clone()),
                new_from: 0,
            });
            let _ = b.new_from;
            let session = &mut b.session;
            session.meta = st.meta.clone();
            session.models = st.models.clone();
            // Apply derived fields to new messages and collect relinks for old ones.
            let first_new_seq = session
                .messages
                .first()
                .map(|m| m.seq)
                .unwrap_or(st.next_seq);
            let node_of: HashMap<u32, &Node> = self
                .state
                .nodes
                .iter()
                .filter(|n| n.slot == slot)
                .map(|n| (n.seq, n))
                .collect();
            for m in &mut session.messages {
                if let Some(n) = node_of.get(&m.seq) {
                    m.turn_index = n.turn;
                    m.on_main_chain = n.main;
                }
            }
            session.relinks = changed
                .into_iter()
                .filter(|seq| *seq < first_new_seq)
                .filter_map(|seq| {
                    node_of.get(&seq).map(|n| Relink {
                        seq,
                        turn_index: n.turn,
                        on_main_chain: n.main,
                    })
                })
                .collect();
            session.turn_count = self
                .state
                .nodes
                .iter()
                .filter(|n| n.slot == slot)
                .filter_map(|n| n.turn)
                .max()
                .map(|t| t + 1)
                .unwrap_or(0);
            derive_rows(
                session,
                &mut self.state.sessions[slot as usize],
                &mut self.state.call_names,
            );
            if appending {
                session.mode = UpdateMode::Append;
            } else {
                session.mode = UpdateMode::Replace;
                session.turns = turns::build_turns(&session.messages);
            }
            session.meta = self.state.sessions[slot as usize].meta.clone();
            result.push(b.session);
        }
        self.attach_backups(&mut result);
        for session in &mut result {
            session.artifacts = plan_artifacts(&session.messages);
        }
        result
    }

    /// Turns the backups this parse met into snapshots of the session holding their prompt, at
    /// that prompt's turn (a backup is the file as it was when the turn began). One snapshot
    /// per backup version; a later entry naming the same version adds nothing.
    fn attach_backups(&mut self, result: &mut [Session]) {
        let Some(dir) = self.file_history_dir.clone() else {
            return;
        };
        let mut seen: HashSet<(String, u32)> = HashSet::new();
        for b in std::mem::take(&mut self.backups) {
            let Some(node) = self
                .state
                .nodes
                .iter()
                .find(|n| n.uuid.as_deref() == Some(b.message_id.as_str()))
            else {
                continue;
            };
            let (Some(turn), slot) = (node.turn, node.slot) else {
                continue;
            };
            if !seen.insert((b.path.clone(), b.version)) {
                continue;
            }
            let id = &self.state.sessions[slot as usize].meta.id;
            let Some(session) = result.iter_mut().find(|s| &s.meta.id == id) else {
                continue;
            };
            let content = match &b.backup {
                None => None,
                Some(name) => {
                    // A backup names a file of this session's folder, never a path elsewhere.
                    if name.contains(['/', '\\']) || name.starts_with('.') {
                        continue;
                    }
                    let p = dir.join(name);
                    match std::fs::metadata(&p) {
                        Ok(m) if m.len() <= MAX_BACKUP_BYTES => match std::fs::read(&p) {
                            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
                            Err(_) => continue,
                        },
                        _ => continue,
                    }
                }
            };
            session.snapshots.push(trail_model::FileSnapshot {
                path: b.path,
                version: b.version,
                turn_index: Some(turn),
                content,
                taken_at: b.at,
                origin: FILE_HISTORY_ORIGIN.to_string(),
            });
        }
    }

    /// Recomputes the main chain and turn indexes of one session's nodes; returns the seqs whose
    /// derived fields changed.
    fn relink_slot(&mut self, slot: u32) -> Vec<u32> {
        let idx: Vec<usize> = (0..self.state.nodes.len())
            .filter(|&i| self.state.nodes[i].slot == slot)
            .collect();
        if idx.is_empty() {
            return Vec::new();
        }
        let nodes = &self.state.nodes;
        // uuid -> first node index (a record split into several messages shares its uuid; the
        // chain continues from its last message).
        let mut last_of_uuid: HashMap<&str, usize> = HashMap::new();
        let mut all_of_uuid: HashMap<&str, Vec<usize>> = HashMap::new();
        for &i in &idx {
            if let Some(u) = nodes[i].uuid.as_deref() {
                last_of_uuid.insert(u, i);
                all_of_uuid.entry(u).or_default().push(i);
            }
        }
        let pos_in_idx: HashMap<usize, usize> =
            idx.iter().enumerate().map(|(p, &i)| (i, p)).collect();
        let sidechain_file = self.state.role != FileRole::Main;
        let eligible = |i: usize| {
            sidechain_file
                || !nodes[i].sidechain
                || self.state.sessions[slot as usize].sidechain_root.is_some()
        };
        // The latest leaf: the last written eligible node.
        let Some(&leaf) = idx.iter().rev().find(|&&i| eligible(i)) else {
            return Vec::new();
        };
        // Walk up from the leaf (cycles broken by the visited set; a missing parent ends the
        // walk, so orphans are roots).
        let mut on_path: HashSet<usize> = HashSet::new();
        let mut cur = Some(leaf);
        while let Some(i) = cur {
            if !on_path.insert(i) {
                break;
            }
            // Messages split from one record: all of them are on the path.
            if let Some(same) = nodes[i].uuid.as_deref().and_then(|u| all_of_uuid.get(u)) {
                on_path.extend(same.iter().copied().filter(|&j| j < i));
            }
            let parent = nodes[i]
                .parent
                .as_deref()
                .and_then(|p| last_of_uuid.get(p).copied())
                .filter(|&p| p != i);
            cur = match parent {
                Some(p) => Some(p),
                // A root (or an orphan whose parent is elsewhere): the conversation before it
                // in the file continues into it, so stitch it to the last eligible node
                // written earlier that is not on the path yet.
                None => {
                    let pos = pos_in_idx.get(&i).copied().unwrap_or(0);
                    idx[..pos]
                        .iter()
                        .rev()
                        .copied()
                        .find(|&j| eligible(j) && !on_path.contains(&j))
                }
            };
        }
        // Structural side branches (tool results, progress, attachments) hanging off the path
        // belong to the turn; branches starting with a prompt or answer are rewinds/retries.
        let mut main: HashSet<usize> = on_path.clone();
        for &i in &idx {
            if main.contains(&i) || !eligible(i) {
                continue;
            }
            let parent = nodes[i]
                .parent
                .as_deref()
                .and_then(|p| last_of_uuid.get(p).copied());
            let structural = nodes[i].queued
                || matches!(
                    nodes[i].kind,
                    MessageKind::ToolResult | MessageKind::Meta | MessageKind::Unknown
                );
            if let Some(p) = parent {
                if main.contains(&p) && structural && p < i {
                    main.insert(i);
                }
            }
        }
        // Assign turns in file order.
        let mut changed = Vec::new();
        let mut current: Option<u32> = None;
        let mut count = 0u32;
        for &i in &idx {
            let is_main = main.contains(&i);
            let n = &nodes[i];
            let turn = if is_main {
                if n.kind == MessageKind::Prompt {
                    current = Some(count);
                    count += 1;
                }
                current
            } else {
                None
            };
            if n.turn != turn || n.main != is_main {
                changed.push((i, turn, is_main));
            }
        }
        let mut seqs = Vec::with_capacity(changed.len());
        for (i, turn, is_main) in changed {
            let n = &mut self.state.nodes[i];
            n.turn = turn;
            n.main = is_main;
            seqs.push(n.seq);
        }
        seqs
    }
}

/// Derives files, refs and checkpoints from the session's messages (new ones on append).
fn derive_rows(session: &mut Session, st: &mut SessionState, calls: &mut HashMap<String, String>) {
    let mut files = Vec::new();
    let mut found_refs = Vec::new();
    let mut checkpoints = Vec::new();
    for m in &session.messages {
        match m.kind() {
            MessageKind::ToolCall => {
                let name = m.tool_name.clone().unwrap_or_default();
                if let Some(id) = &m.tool_call_id {
                    calls.insert(id.clone(), name.clone());
                }
                if let Some(input) = &m.tool_input {
                    if FILE_TOOLS.contains(&name.as_str()) {
                        if let Some(p) = file_path_of(input) {
                            files.push(FileTouch {
                                path: p,
                                tool_name: Some(name.clone()),
                                turn_index: m.turn_index,
                                first_seen_at: m.timestamp.clone(),
                            });
                        }
                    }
                    for r in refs::extract(input, false) {
                        found_refs.push((r, m.turn_index, m.timestamp.clone()));
                    }
                }
            }
            MessageKind::ToolResult => {
                let shell = m
                    .tool_call_id
                    .as_ref()
                    .and_then(|id| calls.get(id))
                    .is_some_and(|n| SHELL_TOOLS.contains(&n.as_str()));
                if let Some(out) = &m.tool_output {
                    for r in refs::extract(out, shell) {
                        found_refs.push((r, m.turn_index, m.timestamp.clone()));
                    }
                }
            }
            MessageKind::Prompt | MessageKind::Text => {
                for r in refs::extract(&m.text, false) {
                    found_refs.push((r, m.turn_index, m.timestamp.clone()));
                }
            }
            MessageKind::Summary => {
                st.checkpoints += 1;
                let title = first_line_title(&m.text);
                checkpoints.push(Checkpoint {
                    number: st.checkpoints,
                    title: Some(title),
                    overview: Some(m.text.clone()),
                    created_at: m.timestamp.clone(),
                    ..Checkpoint::default()
                });
            }
            _ => {}
        }
    }
    // Fill tool names on results so shows and reports need no join.
    for m in &mut session.messages {
        if m.kind() == MessageKind::ToolResult && m.tool_name.is_none() {
            if let Some(n) = m.tool_call_id.as_ref().and_then(|id| calls.get(id)) {
                m.tool_name = Some(n.clone());
            }
        }
    }
    for f in files {
        session.add_file(f);
    }
    for ((rt, value), turn, ts) in found_refs {
        session.add_ref(SessionRef {
            ref_type: rt,
            value,
            turn_index: turn,
            created_at: ts,
        });
    }
    session.checkpoints.extend(checkpoints);
}

fn file_path_of(input: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct P {
        file_path: Option<String>,
        notebook_path: Option<String>,
        path: Option<String>,
    }
    let p: P = serde_json::from_str(input).ok()?;
    p.file_path
        .or(p.notebook_path)
        .or(p.path)
        .filter(|s| !s.is_empty())
}

fn task_prompt(input: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct P {
        prompt: Option<String>,
    }
    serde_json::from_str::<P>(input).ok()?.prompt
}

/// Returns the text of a tool_result's content (string, or the text blocks joined).
fn content_text(c: Option<&Content>) -> String {
    match c {
        Some(Content::Text(t)) => t.clone(),
        Some(Content::Blocks(blocks)) => {
            let mut s = String::new();
            for b in blocks {
                match b.ty.as_deref() {
                    Some("text") => push_para(&mut s, b.text.as_deref().unwrap_or("")),
                    Some("image") => push_para(&mut s, &image_placeholder(b)),
                    Some(other) => push_para(&mut s, &format!("[{other}]")),
                    None => {}
                }
            }
            s
        }
        _ => String::new(),
    }
}

fn image_placeholder(b: &Block) -> String {
    let src = b
        .source
        .as_ref()
        .and_then(|r| serde_json::from_str::<ImageSource>(r.get()).ok());
    let src = src.as_ref();
    match (
        src.and_then(|s| s.media_type.as_deref()),
        src.and_then(|s| s.url.as_deref()),
    ) {
        (_, Some(url)) => format!("[image: {url}]"),
        (Some(mt), None) => format!("[image: {mt}]"),
        (None, None) => "[image]".to_string(),
    }
}

fn push_para(s: &mut String, t: &str) {
    if t.is_empty() {
        return;
    }
    if !s.is_empty() {
        s.push_str("\n\n");
    }
    s.push_str(t);
}

fn raw_text(v: Option<&RawValue>) -> String {
    match v.map(|r| serde_json::from_str::<serde_json::Value>(r.get())) {
        Some(Ok(serde_json::Value::String(s))) => s,
        Some(Ok(serde_json::Value::Null)) | None | Some(Err(_)) => String::new(),
        Some(Ok(other)) => other.to_string(),
    }
}

/// Returns the prompt of a `queued_command` attachment (`{prompt, commandMode}`) and who
/// wrote it: a person (`prompt` mode, or none) or Claude Code itself (a `task-notification`).
fn queued_prompt(v: Option<&RawValue>) -> Option<(String, PromptSource)> {
    let a: RawAttachment = serde_json::from_str(v?.get()).ok()?;
    if a.ty.as_deref() != Some("queued_command") {
        return None;
    }
    let text = match a.prompt {
        Some(Content::Text(t)) => t,
        Some(c @ Content::Blocks(_)) => content_text(Some(&c)),
        _ => return None,
    };
    let source = match a.command_mode.as_deref() {
        _ if origin_source(a.origin.as_deref()) == Some(PromptSource::System) => {
            PromptSource::System
        }
        None | Some("prompt") | Some("bash") => PromptSource::Queued,
        Some(_) => PromptSource::System,
    };
    (!text.trim().is_empty()).then_some((text, source))
}

/// Who wrote a user entry's prompt, from its `promptSource` and its `origin`. An origin that
/// is not a person (a `task-notification`: Claude Code started the turn itself) wins over the
/// declared source; otherwise the declared source wins, then the origin (issue 40).
fn prompt_source_of(declared: Option<&str>, origin: Option<&RawValue>) -> Option<PromptSource> {
    let by_origin = origin_source(origin);
    match (by_origin, declared.and_then(PromptSource::parse)) {
        (Some(PromptSource::System), _) => Some(PromptSource::System),
        (_, Some(d)) => Some(d),
        (o, None) => o,
    }
}

/// Reads `origin.kind`: `human` and `cli` are a person at the prompt (typed); any other kind
/// (`task-notification`, `peer`...) is Claude Code or another agent starting a turn. `None`
/// when there is no origin or it has no kind.
fn origin_source(origin: Option<&RawValue>) -> Option<PromptSource> {
    #[derive(Deserialize)]
    struct Origin {
        kind: Option<String>,
    }
    let kind = serde_json::from_str::<Origin>(origin?.get()).ok()?.kind?;
    match kind.as_str() {
        "" => None,
        "human" | "user" | "cli" => Some(PromptSource::Typed),
        _ => Some(PromptSource::System),
    }
}

/// A queued command as a message: a prompt a person queued, or meta text Claude Code queued.
fn queued_message(
    text: String,
    source: PromptSource,
    parent: Option<String>,
    ts: Option<String>,
) -> Message {
    let kind = if source.by_person() && !is_injected(&text) {
        MessageKind::Prompt
    } else {
        MessageKind::Meta
    };
    Message::new(Role::User, kind, text)
        .with_parent(parent)
        .with_timestamp(ts)
        .with_prompt_source((kind == MessageKind::Prompt).then_some(source))
}

/// An assistant's text is an error's when the API reported one.
fn answer_kind(api_error: bool) -> MessageKind {
    if api_error {
        MessageKind::Error
    } else {
        MessageKind::Text
    }
}

/// Wrappers the VS Code extension puts around editor state it sends with a prompt.
const IDE_TAGS: [(&str, &str); 2] = [
    ("<ide_opened_file>", "</ide_opened_file>"),
    ("<ide_selection>", "</ide_selection>"),
];

/// Splits a user entry's text into the IDE context it carries (the wrapped parts) and what
/// the person typed (the rest, trimmed). Text without wrappers is all typed.
fn split_ide_context(text: &str) -> (String, String) {
    if !IDE_TAGS.iter().any(|(open, _)| text.contains(open)) {
        return (String::new(), text.to_string());
    }
    let mut context = String::new();
    let mut typed = String::new();
    let mut rest = text;
    loop {
        let next = IDE_TAGS
            .iter()
            .filter_map(|(open, close)| rest.find(open).map(|i| (i, *open, *close)))
            .min_by_key(|(i, _, _)| *i);
        let Some((start, open, close)) = next else {
            typed.push_str(rest);
            break;
        };
        typed.push_str(&rest[..start]);
        let after = &rest[start + open.len()..];
        let (inner, tail) = match after.find(close) {
            Some(end) => (&after[..end], &after[end + close.len()..]),
            None => (after, ""),
        };
        push_para(&mut context, inner.trim());
        rest = tail;
    }
    (context, typed.trim().to_string())
}

/// Returns whether a file stem is a session id (a UUID), as Claude Code names main sessions.
fn looks_like_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

fn attachment_summary(v: Option<&RawValue>) -> String {
    #[derive(Deserialize)]
    struct A {
        #[serde(rename = "type")]
        ty: Option<String>,
        #[serde(rename = "hookName")]
        hook_name: Option<String>,
    }
    let Some(v) = v else { return String::new() };
    match serde_json::from_str::<A>(v.get()) {
        Ok(a) => match (a.ty, a.hook_name) {
            (Some(t), Some(h)) => format!("[attachment: {t} {h}]"),
            (Some(t), None) => format!("[attachment: {t}]"),
            _ => "[attachment]".to_string(),
        },
        Err(_) => "[attachment]".to_string(),
    }
}

fn is_interrupt(text: &str) -> bool {
    text.starts_with("[Request interrupted by user")
}

/// Text Claude Code injects as a user entry that the user did not type. Injected entries are
/// `Meta`, so they stay in the turn of the command or agent they report on instead of opening
/// a turn of their own: slash-command output (`<local-command-stdout>`), the output of a `!`
/// shell command (`<bash-stdout>`/`<bash-stderr>`, after the `<bash-input>` prompt the user
/// typed) and a background agent reporting back (`<task-notification>`, issue 21).
fn is_injected(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("<local-command-stdout>")
        || t.starts_with("<local-command-stderr>")
        || t.starts_with("<bash-stdout>")
        || t.starts_with("<bash-stderr>")
        || t.starts_with("<task-notification>")
        || t.starts_with("<local-command-caveat>")
        || t.starts_with(
            "Caveat: The messages below were generated by the user while running local commands",
        )
}

/// Removes `<system-reminder>...</system-reminder>` blocks.
pub fn strip_system_reminders(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<system-reminder>") {
        out.push_str(&rest[..start]);
        match rest[start..].find("</system-reminder>") {
            Some(end) => rest = &rest[start + end + "</system-reminder>".len()..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Makes a one-line title: command tags become the command, whitespace collapses, 120 chars.
fn clean_title(text: &str) -> String {
    let text = text.trim();
    let text = match (text.find("<command-name>"), text.find("</command-name>")) {
        (Some(a), Some(b)) if b > a => {
            let name = &text[a + "<command-name>".len()..b];
            let args = text
                .find("<command-args>")
                .zip(text.find("</command-args>"))
                .map(|(x, y)| text[x + "<command-args>".len()..y].trim().to_string())
                .unwrap_or_default();
            if args.is_empty() {
                name.to_string()
            } else {
                format!("{name} {args}")
            }
        }
        _ => text.to_string(),
    };
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    truncate_chars(&collapsed, 120).to_string()
}

fn first_line_title(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    truncate_chars(line.trim(), 80).to_string()
}

/// Summaries that are API failures, not titles.
fn junk_title(s: &str) -> bool {
    let s = s.trim();
    s.is_empty() || s.starts_with("API Error") || s.starts_with("Invalid API key")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_from_paths() {
        assert_eq!(file_role(Path::new("/p/-x/abc.jsonl")), FileRole::Main);
        assert_eq!(
            file_role(Path::new("/p/-x/abc/subagents/agent-a1.jsonl")),
            FileRole::Subagent {
                agent_id: "a1".into(),
                parent_hint: Some("abc".into()),
                workflow_run: None,
            }
        );
        assert_eq!(
            file_role(Path::new(
                "/p/-x/abc/subagents/workflows/wf_1/agent-a1.jsonl"
            )),
            FileRole::Subagent {
                agent_id: "a1".into(),
                parent_hint: Some("abc".into()),
                workflow_run: Some("wf_1".into()),
            }
        );
        assert_eq!(
            file_role(Path::new(
                "/p/-x/abc/subagents/workflows/wf_1/journal.jsonl"
            )),
            FileRole::WorkflowJournal
        );
        assert_eq!(
            file_role(Path::new("/p/-x/agent-a1.jsonl")),
            FileRole::Subagent {
                agent_id: "a1".into(),
                parent_hint: None,
                workflow_run: None,
            }
        );
    }

    #[test]
    fn titles_are_cleaned() {
        assert_eq!(
            clean_title("<command-message>init is analyzing</command-message>\n<command-name>/init</command-name>"),
            "/init"
        );
        assert_eq!(clean_title("  fix\n the   test "), "fix the test");
        assert_eq!(
            strip_system_reminders("a<system-reminder>x</system-reminder>b"),
            "ab"
        );
    }
}
