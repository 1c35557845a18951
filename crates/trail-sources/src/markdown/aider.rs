//! Aider: `.aider.chat.history.md` in the project folder, dated by `.aider.input.history`
//! beside it. See `docs/formats/aider.md`.
//!
//! # Layout (checked in `Aider-AI/aider`, `aider/io.py` and `aider/coders/`)
//! The chat history is Markdown that Aider only ever appends to (`append_chat_history`):
//! - `# aider chat started at YYYY-MM-DD HH:MM:SS` (local time, no zone) opens a run of Aider:
//!   one session here.
//! - `#### <line>  ` lines are what the user typed (`user_input`); a multi-line input is one
//!   `####` line per line, so consecutive `####` lines are one prompt. An empty input is
//!   `#### <blank>`. Inside an answer's code fence or edit block such lines are the answer's,
//!   except after ^C: Aider writes `> ^C again to exit`, then the answer as far as it came, whose
//!   fence may never close; there a `#### ` line at column 0 starts the next prompt.
//! - The model's answer is written whole after it arrived (`ai_output`: a blank line, the answer
//!   stripped, two newlines). It holds the edits: SEARCH/REPLACE blocks (`<<<<<<< SEARCH`,
//!   `=======`, `>>>>>>> REPLACE`, the file named on one of the three lines before), whole
//!   files (`whole` edit format: a file name, then a fenced block) or unified diffs (`udiff`).
//! - `> <text>  ` lines are Aider's own output (`tool_output`, `tool_warning`, `tool_error`,
//!   confirmations with their answer): the announcements (`Aider v0.86.1`, `Model: X with diff
//!   edit format`), `Tokens: 2.4k sent, 104 received. Cost: $0.00042 message, $0.00042
//!   session.` after each request (with `cache write` and `cache hit` counts when the provider
//!   caches; then `Cost:` goes on the next line, without `> `), `Applied edit to <file>`,
//!   `Commit <hash> <message>`, `Running <command>`.
//! - The input history (prompt_toolkit's `FileHistory`) holds every line typed at any of
//!   Aider's prompts, confirmations included: `# <time with microseconds>` then `+<line>` per
//!   line.
//!
//! # Mapping
//! - Session id `aider:<start>-<path hash>` (the header's time `YYYYMMDDTHHMMSS` and 8 hex digits
//!   of the XXH3 of the history file's absolute path; a second session started the same second
//!   adds `-2`...), cwd the history file's folder. Header times are taken as UTC, as trail does
//!   for every time without a zone.
//! - A prompt is `(User, Prompt)`, typed; its time is that of the same text in the input history
//!   (the first entry after the previous matched one, not before the session start, within the
//!   next [`INPUT_LOOKAHEAD`] entries), else the last time known (the previous prompt's or the
//!   session start). Everything after a prompt carries its time. A confirmation answered for a group
//!   (`#### Question (Y)es/(N)o... [Yes]: a`) is `(User, Meta)`.
//! - An answer is split, in order, into its prose, `(Assistant, Text)` with the session's
//!   current model, and its edits (a reasoning section in Aider's tags is `Thinking`): each
//!   edit block (file name, fences and markers) is a tool call named [`EDIT_TOOL`] whose input
//!   is `{"file", "search", "replace"}` (`search` empty for a new or whole file). `Applied edit
//!   to X` is the result of the calls for X, `Skipping edits to X` and a SEARCH block that failed
//!   to match in X make their results errors; `Applied edit` also records X (absolute, under
//!   the cwd) in the session's files.
//! - `Running <cmd>` (and a typed `/run <cmd>` or `!<cmd>`) is a tool call [`RUN_TOOL`] with
//!   `{"command"}`; Aider logs no output for it.
//! - `Tokens:` is one usage row (key `tokens@<line>`): input = sent - cache write (Aider counts
//!   cache writes in `sent`), cache write, cache hit as cache read, received as output, and the
//!   message cost as logged. Counts are as rounded as Aider prints them (`2.4k`).
//! - `Commit <hash> <msg>` is a commit ref; the other status lines of a run of consecutive
//!   ones are one `(System, Meta)` message.
//!
//! # Incremental parsing
//! The history only grows, so `appendable` is true. The state holds the open session (the last
//! one: a session is open until the next header) and the input history offset already matched.
//! An answer is written in one piece, so a parse that stops at the end of the file gives the
//! same messages as one that reads past it, with two cases handled here: an answer not yet
//! followed by its blank line (still being written) is left for the next index
//! (`bytes_parsed` stops before it), and a run of status lines the end of the file cut is
//! written as far as it goes, then written again under the same `seq` (which replaces it)
//! when the next parse reads more of it.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::json;
use trail_model::{
    time, truncate_chars, turns, FileTouch, Message, MessageKind, ParseIssue, PromptSource,
    RefType, Role, Session, SessionMeta, SessionRef, SourceKind, TitleRank, UpdateMode, Usage,
};

use crate::{ids, refs, FileParse, ParseRequest, Source, SourceError};

/// The chat history's name in a project folder (Aider's default `--chat-history-file`).
pub const CHAT_HISTORY: &str = ".aider.chat.history.md";
/// The input history's name beside it (`--input-history-file`).
pub const INPUT_HISTORY: &str = ".aider.input.history";
/// The tool name of an edit. Its input is `{"file": PATH, "search": OLD, "replace": NEW}`,
/// which `trail diff` reads: keep the shape.
pub const EDIT_TOOL: &str = "aider_edit";
/// The tool name of a shell command Aider ran. Its input is `{"command": CMD}`.
pub const RUN_TOOL: &str = "aider_run";
/// How many input history entries past the last matched one are searched for a prompt.
pub const INPUT_LOOKAHEAD: usize = 100;

const HEADER: &str = "# aider chat started at ";
const TITLE_CHARS: usize = 200;
/// Version of the resume state layout; a mismatch makes the next parse start over.
const STATE_VERSION: u32 = 1;
/// Most bytes one parse reads when the ingest asks for pieces: a history is mostly short
/// messages (status lines, prompts, edits), several times a transcript's per byte.
const PIECE_BYTES: u64 = 8 << 20;

/// Version of this parser, stored with every file it read (see `Source::parser_version`).
/// 1: the first version.
/// 2: a leading BOM is skipped; a `#### ` line after an answer cut by ^C starts a prompt even
///    inside the answer's unclosed fence (issue 40).
pub const PARSER_VERSION: u32 = 2;

/// Aider's chat histories.
pub struct Aider;

impl Source for Aider {
    fn parser_version(&self) -> u32 {
        PARSER_VERSION
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Aider
    }

    /// Roots are chat history files (what [`Source::project_markers`] finds) or folders that
    /// hold one.
    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for root in roots {
            if root.is_file() && is_history_name(root) {
                out.push(root.clone());
            } else if root.is_dir() {
                let f = root.join(CHAT_HISTORY);
                if f.is_file() {
                    out.push(f);
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        if is_history_name(path) {
            return true;
        }
        let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
        text.lines()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| l.starts_with(HEADER))
    }

    fn appendable(&self, _path: &Path) -> bool {
        true
    }

    fn project_markers(&self) -> &'static [&'static str] {
        &[CHAT_HISTORY]
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        parse_file(request)
    }
}

/// `.aider.chat.history.md`, or any `<name>.chat.history.md` (`--chat-history-file`).
fn is_history_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n == CHAT_HISTORY || n.ends_with(".aider.chat.history.md"))
}

/// The input history beside a chat history: `X.chat.history.md` -> `X.input.history`.
pub fn input_history_of(chat: &Path) -> Option<PathBuf> {
    let name = chat.file_name()?.to_str()?;
    let stem = name.strip_suffix("chat.history.md")?;
    Some(chat.with_file_name(format!("{stem}input.history")))
}

// ---------------------------------------------------------------------------------------------
// Resume state

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct State {
    version: u32,
    /// Bytes of the input history already used to date prompts.
    input_offset: u64,
    /// The previous session's start as written, and how many sessions began that second.
    last_start: Option<String>,
    same_start: u32,
    /// The session still open at the end of the parsed bytes.
    open: Option<Open>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Open {
    native: String,
    /// The header's time as written (the writer's local time).
    start_local: Option<String>,
    created_at: Option<String>,
    updated_at: Option<String>,
    title: Option<String>,
    /// The title is a command (`/add x`): a later plain prompt replaces it.
    title_is_command: bool,
    agent_version: Option<String>,
    model: Option<String>,
    edit_format: Option<String>,
    models: Vec<String>,
    seq: u32,
    turns: u32,
    /// The time of the current prompt, else the session start: what usage rows are dated by.
    now: Option<String>,
    last_text_seq: Option<u32>,
    /// Edit calls of the last answer still waiting for Aider to say what became of them.
    pending_edits: Vec<PendingEdit>,
    files: BTreeSet<String>,
    refs: BTreeSet<String>,
    /// The run of status lines being read, one `Meta` message.
    #[serde(default)]
    status_run: Option<StatusRun>,
}

/// Consecutive status lines, shown as one `Meta` message. Its `seq` is taken when the run
/// begins; a run still open at the end of the parsed bytes is written as far as it goes, and
/// written again under the same `seq` (replacing it) when the next parse finds more of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct StatusRun {
    seq: u32,
    turn: Option<u32>,
    timestamp: Option<String>,
    lines: Vec<String>,
    /// Lines already written in an earlier message.
    written: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct PendingEdit {
    file: String,
    call_id: String,
}

// ---------------------------------------------------------------------------------------------
// Parsing

/// What this parse produced for the open session.
#[derive(Debug, Default)]
struct Delta {
    messages: Vec<Message>,
    files: Vec<FileTouch>,
    refs: Vec<SessionRef>,
    usage: Vec<Usage>,
}

/// Lines of the block being read: a prompt or an answer.
#[derive(Debug)]
enum Block {
    None,
    Prompt { lines: Vec<String>, line: u64 },
    Text(TextBlock),
}

#[derive(Debug)]
struct TextBlock {
    lines: Vec<String>,
    /// Offset and 1-based number of the block's first line.
    offset: u64,
    line: u64,
    /// An open code fence: its character and length.
    fence: Option<(u8, usize)>,
    /// Inside a SEARCH/REPLACE block.
    in_edit: bool,
    /// An answer cut by ^C (Aider writes `> ^C again to exit` before it): its fence may never
    /// close, so a `#### ` line still starts a prompt (issue 40).
    cut: bool,
}

impl TextBlock {
    /// Whether `####` and `>` lines are part of the answer here (code and edit blocks hold
    /// Markdown headings, quotes and comments).
    fn protects(&self) -> bool {
        self.fence.is_some() || self.in_edit
    }

    fn observe(&mut self, line: &str) {
        let t = line.trim();
        if is_search_marker(t) {
            self.in_edit = true;
            return;
        }
        if self.in_edit {
            if is_replace_marker(t) {
                self.in_edit = false;
            }
            return;
        }
        if let Some((c, n, rest)) = fence_marker(line) {
            match self.fence {
                None => self.fence = Some((c, n)),
                Some((fc, fnum)) if fc == c && n >= fnum && rest.trim().is_empty() => {
                    self.fence = None
                }
                Some(_) => {}
            }
        }
    }
}

struct Parser {
    path_tag: String,
    cwd: Option<String>,
    st: State,
    /// The session that was open when this parse resumed: its messages are an append.
    resumed: Option<String>,
    delta: Delta,
    sessions: Vec<Session>,
    inputs: InputHistory,
    block: Block,
    /// A `Tokens:` row whose `Cost:` may come on the next line.
    pending_usage: Option<Usage>,
    /// The last status line was a ^C: the answer that follows was cut.
    interrupted: bool,
}

fn parse_file(request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
    let path = request.path;
    let resumed = request.resume.and_then(|r| {
        let st: State = serde_json::from_slice(r.state).ok()?;
        (st.version == STATE_VERSION).then_some((st, r.offset, r.line))
    });
    let (st, start, start_line) = match resumed {
        Some((st, off, line)) => (st, off, line),
        None => (
            State {
                version: STATE_VERSION,
                ..State::default()
            },
            0,
            0,
        ),
    };
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let path_tag = format!(
        "{:08x}",
        xxhash_rust::xxh3::xxh3_64(abs.as_os_str().as_encoded_bytes()) as u32
    );
    let cwd = abs.parent().map(|p| p.display().to_string());
    let inputs = input_history_of(path)
        .map(|p| InputHistory::read(&p, st.input_offset))
        .unwrap_or_default();
    let mut p = Parser {
        path_tag,
        cwd,
        resumed: st.open.as_ref().map(|o| o.native.clone()),
        st,
        delta: Delta::default(),
        sessions: Vec::new(),
        inputs,
        block: Block::None,
        pending_usage: None,
        interrupted: false,
    };

    let mut file = File::open(path).map_err(|e| SourceError::io(path, e))?;
    if start > 0 {
        file.seek(SeekFrom::Start(start))
            .map_err(|e| SourceError::io(path, e))?;
    }
    let mut reader = BufReader::with_capacity(256 << 10, file);
    let mut buf: Vec<u8> = Vec::with_capacity(16 << 10);
    let mut offset = start;
    let mut line_no = start_line;
    let mut bytes_read = 0u64;
    let mut issues: Vec<ParseIssue> = Vec::new();
    let mut more = false;
    let display = path.display().to_string();
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| SourceError::io(path, e))?;
        if n == 0 {
            break;
        }
        bytes_read += n as u64;
        if buf.last() != Some(&b'\n') {
            // A line still being written: the next index reads it whole.
            break;
        }
        let mut content: &[u8] = &buf;
        if offset == 0 {
            content = crate::whole::strip_bom(content);
        }
        while let Some((last, rest)) = content.split_last() {
            if *last == b'\n' || *last == b'\r' {
                content = rest;
            } else {
                break;
            }
        }
        let text = match std::str::from_utf8(content) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(_) => {
                issues.push(ParseIssue {
                    path: display.clone(),
                    line: Some(line_no + 1),
                    byte_offset: Some(offset),
                    excerpt: None,
                    reason: "invalid UTF-8 replaced".to_string(),
                });
                String::from_utf8_lossy(content)
            }
        };
        // Stop between blocks once the budget is spent (never inside an answer).
        if request
            .max_bytes
            .map(|b| b.min(PIECE_BYTES))
            .is_some_and(|b| bytes_read - n as u64 >= b)
            && p.at_boundary(&text)
        {
            p.flush_block();
            more = true;
            break;
        }
        line_no += 1;
        p.line(line_no, offset, &text);
        offset += n as u64;
    }
    let (bytes_parsed, lines) = if more {
        (offset, line_no)
    } else {
        p.finish_blocks(offset, line_no)
    };
    p.flush_usage();
    p.write_status_run(true);
    p.st.input_offset = p.inputs.consumed_offset();
    if let Some(open) = p.st.open.clone() {
        let session = p.emit(open);
        if let Some(s) = session {
            p.sessions.push(s);
        }
    }
    let state = serde_json::to_vec(&p.st).ok();
    Ok(FileParse {
        sessions: p.sessions,
        issues,
        bytes_parsed,
        bytes_read,
        lines,
        state,
        more,
        ..FileParse::default()
    })
}

/// What kind of line it is, outside an answer's code.
enum LineKind<'a> {
    Header(&'a str),
    Prompt(&'a str),
    Status(&'a str),
    Text,
}

fn classify(line: &str) -> LineKind<'_> {
    if let Some(rest) = line.strip_prefix(HEADER) {
        return LineKind::Header(rest.trim());
    }
    if let Some(rest) = line.strip_prefix("####") {
        if rest.is_empty() {
            return LineKind::Prompt("");
        }
        if let Some(r) = rest.strip_prefix(' ') {
            // `user_input` ends every line with two spaces (a Markdown line break).
            return LineKind::Prompt(r.strip_suffix("  ").unwrap_or(r));
        }
    }
    if line == ">" {
        return LineKind::Status("");
    }
    if let Some(rest) = line.strip_prefix("> ") {
        return LineKind::Status(rest.trim_end());
    }
    LineKind::Text
}

impl Parser {
    /// Whether `line` starts something new (a status line or a header), where a parse may stop.
    fn at_boundary(&self, line: &str) -> bool {
        if self.pending_usage.is_some() {
            return false;
        }
        if line.starts_with(HEADER) {
            return true;
        }
        if let Block::Text(t) = &self.block {
            if t.protects() {
                return false;
            }
        }
        matches!(classify(line), LineKind::Status(_))
    }

    fn line(&mut self, number: u64, offset: u64, line: &str) {
        if let Some(mut u) = self.pending_usage.take() {
            if let Some(c) = cost_continuation(line) {
                u.cost_usd = Some(c);
                self.push_usage(u);
                return;
            }
            self.push_usage(u);
        }
        if line.starts_with(HEADER) {
            self.flush_block();
            let LineKind::Header(at) = classify(line) else {
                return;
            };
            self.start_session(Some(at));
            return;
        }
        if let Block::Text(t) = &mut self.block {
            let prompt_after_cut = t.cut && (line == "####" || line.starts_with("#### "));
            if t.protects() && !line.starts_with("> Tokens: ") && !prompt_after_cut {
                t.observe(line);
                t.lines.push(line.to_string());
                return;
            }
        }
        match classify(line) {
            LineKind::Header(_) => {}
            LineKind::Prompt(text) => {
                self.interrupted = false;
                if let Block::Prompt { lines, .. } = &mut self.block {
                    lines.push(text.to_string());
                } else {
                    self.flush_block();
                    self.block = Block::Prompt {
                        lines: vec![text.to_string()],
                        line: number,
                    };
                }
            }
            LineKind::Status(text) => {
                self.flush_block();
                self.interrupted = text.starts_with("^C ");
                self.status(number, text);
            }
            LineKind::Text => {
                if !matches!(self.block, Block::Text(_)) {
                    self.flush_block();
                    self.block = Block::Text(TextBlock {
                        lines: Vec::new(),
                        offset,
                        line: number,
                        fence: None,
                        in_edit: false,
                        cut: std::mem::take(&mut self.interrupted),
                    });
                }
                if let Block::Text(t) = &mut self.block {
                    t.observe(line);
                    t.lines.push(line.to_string());
                }
            }
        }
    }

    /// Ends the parse at the end of the file: returns `(bytes_parsed, lines)`. An answer whose
    /// closing blank line is not written yet is left for the next parse.
    fn finish_blocks(&mut self, offset: u64, line_no: u64) -> (u64, u64) {
        if let Block::Text(t) = &self.block {
            if t.lines.last().is_some_and(|l| !l.trim().is_empty()) {
                let at = (t.offset, t.line - 1);
                self.block = Block::None;
                return at;
            }
        }
        self.flush_block();
        (offset, line_no)
    }

    fn flush_block(&mut self) {
        match std::mem::replace(&mut self.block, Block::None) {
            Block::None => {}
            Block::Prompt { lines, line } => self.prompt(line, lines),
            Block::Text(t) => self.answer(t.line, &t.lines),
        }
    }

    fn flush_usage(&mut self) {
        if let Some(u) = self.pending_usage.take() {
            self.push_usage(u);
        }
    }

    // --- sessions

    fn start_session(&mut self, at: Option<&str>) {
        self.flush_usage();
        self.write_status_run(false);
        if let Some(open) = self.st.open.take() {
            if let Some(s) = self.emit(open) {
                self.sessions.push(s);
            }
        }
        let compact = at
            .map(|a| {
                a.chars()
                    .filter(|c| c.is_ascii_digit())
                    .take(14)
                    .collect::<String>()
            })
            .filter(|d| d.len() == 14)
            .map(|d| format!("{}T{}", &d[..8], &d[8..]))
            .unwrap_or_else(|| "start".to_string());
        if self.st.last_start.as_deref() == Some(compact.as_str()) {
            self.st.same_start += 1;
        } else {
            self.st.last_start = Some(compact.clone());
            self.st.same_start = 1;
        }
        let mut native = format!("{compact}-{}", self.path_tag);
        if self.st.same_start > 1 {
            native.push_str(&format!("-{}", self.st.same_start));
        }
        let created = at.and_then(time::normalize);
        self.inputs.skip_before(at);
        self.st.open = Some(Open {
            native,
            start_local: at.map(str::to_string),
            created_at: created.clone(),
            updated_at: created.clone(),
            now: created,
            ..Open::default()
        });
    }

    fn open(&mut self) -> &mut Open {
        if self.st.open.is_none() {
            // Lines before any header (a history edited by hand): a session of their own.
            self.start_session(None);
        }
        self.st.open.as_mut().expect("opened above")
    }

    /// Builds the session (Replace) or the delta (Append) of `open` from what this parse made.
    fn emit(&mut self, open: Open) -> Option<Session> {
        let delta = std::mem::take(&mut self.delta);
        let append = self.resumed.as_deref() == Some(open.native.as_str());
        if append
            && delta.messages.is_empty()
            && delta.usage.is_empty()
            && delta.files.is_empty()
            && delta.refs.is_empty()
        {
            return None;
        }
        if !append && delta.messages.is_empty() && delta.usage.is_empty() {
            return None;
        }
        let mut meta = SessionMeta::new(
            ids::session_id(SourceKind::Aider, &open.native),
            SourceKind::Aider,
            open.native.clone(),
        );
        meta.title = open.title.clone();
        if meta.title.is_some() {
            meta.title_rank = TitleRank::FIRST_PROMPT;
        }
        meta.cwd = self.cwd.clone();
        meta.created_at = open.created_at.clone();
        meta.updated_at = open.updated_at.clone();
        meta.agent_version = open.agent_version.clone();
        if let Some(f) = &open.edit_format {
            meta.metadata = Some(json!({ "edit_format": f }));
        }
        let mut s = Session::new(meta);
        s.mode = if append {
            UpdateMode::Append
        } else {
            UpdateMode::Replace
        };
        s.messages = delta.messages;
        // A status run's message takes the seq its run began with.
        s.messages.sort_by_key(|m| m.seq);
        if !append {
            s.turns = turns::build_turns(&s.messages);
        }
        s.turn_count = open.turns;
        s.files = delta.files;
        s.refs = delta.refs;
        s.usage = delta.usage;
        for m in &open.models {
            s.observe_model(m);
        }
        Some(s)
    }

    fn push(&mut self, mut m: Message) -> u32 {
        let open = self.open();
        m.seq = open.seq;
        open.seq += 1;
        m.on_main_chain = true;
        m.turn_index = open.turns.checked_sub(1);
        if let Some(ts) = &m.timestamp {
            if open.created_at.as_deref().is_none_or(|c| ts.as_str() < c) {
                open.created_at = Some(ts.clone());
            }
            if open.updated_at.as_deref().is_none_or(|u| ts.as_str() > u) {
                open.updated_at = Some(ts.clone());
            }
        }
        let seq = m.seq;
        self.delta.messages.push(m);
        seq
    }

    fn add_ref(&mut self, r: SessionRef) {
        let key = refs::key(&r);
        if self.open().refs.insert(key) {
            self.delta.refs.push(r);
        }
    }

    fn add_refs_from(&mut self, text: &str) {
        let (turn, at) = {
            let o = self.open();
            (o.turns.checked_sub(1), o.now.clone())
        };
        let found: Vec<SessionRef> = refs::session_refs(text, false, turn, at.as_deref()).collect();
        for r in found {
            self.add_ref(r);
        }
    }

    // --- prompts

    fn prompt(&mut self, line: u64, lines: Vec<String>) {
        let text = lines.join("\n");
        let text = text.trim_end_matches('\n').to_string();
        if text == "<blank>" || text.trim().is_empty() {
            return;
        }
        self.write_status_run(false);
        if is_confirmation(&text) {
            let now = self.open().now.clone();
            self.push(Message::new(Role::User, MessageKind::Meta, text).with_timestamp(now));
            return;
        }
        let start = self.open().start_local.clone();
        let at = self.inputs.find(&text, start.as_deref());
        let open = self.open();
        open.turns += 1;
        if at.is_some() {
            open.now = at;
        }
        let at = open.now.clone();
        let command = text.starts_with('/') || text.starts_with('!');
        if open.title.is_none() || (open.title_is_command && !command) {
            open.title = Some(truncate_chars(text.trim(), TITLE_CHARS).to_string());
            open.title_is_command = command;
        }
        self.push(
            Message::prompt(text.clone())
                .with_timestamp(at)
                .with_prompt_source(PromptSource::Typed),
        );
        self.add_refs_from(&text);
        let typed_run = text
            .strip_prefix("/run ")
            .or_else(|| text.strip_prefix('!'))
            .map(str::trim)
            .filter(|c| !c.is_empty());
        if let Some(cmd) = typed_run {
            self.run_call(line, cmd);
        }
    }

    fn run_call(&mut self, line: u64, command: &str) {
        let now = self.open().now.clone();
        self.push(
            Message::new(Role::Assistant, MessageKind::ToolCall, command.to_string())
                .with_tool_name(RUN_TOOL.to_string())
                .with_call_id(format!("run-{line}"))
                .with_input(json!({ "command": command }).to_string())
                .with_timestamp(now),
        );
    }

    // --- answers

    fn answer(&mut self, line: u64, lines: &[String]) {
        let first = lines.iter().position(|l| !l.trim().is_empty());
        let last = lines.iter().rposition(|l| !l.trim().is_empty());
        let (Some(first), Some(last)) = (first, last) else {
            return;
        };
        self.write_status_run(false);
        let text = lines[first..=last].join("\n");
        let (model, now, format) = {
            let o = self.open();
            (o.model.clone(), o.now.clone(), o.edit_format.clone())
        };
        let (thinking, answer) = split_reasoning(&text);
        if let Some(t) = thinking.filter(|t| !t.trim().is_empty()) {
            self.push(
                Message::thinking(t)
                    .with_model(model.clone())
                    .with_timestamp(now.clone()),
            );
        }
        if answer.trim().is_empty() {
            return;
        }
        // The answer in order: its prose as text messages, each edit block as a tool call in
        // its place (the block itself is the call's input, not text).
        let answer_lines: Vec<&str> = answer.lines().collect();
        let edits = locate_edits(&answer_lines, format.as_deref());
        self.open().pending_edits.clear();
        let mut first_seq = None;
        let mut cursor = 0;
        let mut k = 0;
        for f in edits
            .into_iter()
            .chain(std::iter::once(Located::end(answer_lines.len())))
        {
            let prose = answer_lines[cursor..f.start].join("\n");
            let prose = prose.trim_matches('\n');
            if !prose.trim().is_empty() {
                let seq = self.push(
                    Message::answer(prose.to_string())
                        .with_model(model.clone())
                        .with_timestamp(now.clone()),
                );
                first_seq.get_or_insert(seq);
                self.add_refs_from(prose);
            }
            cursor = f.end;
            let Some(e) = f.block else {
                break;
            };
            k += 1;
            let call_id = format!("edit-{}-{k}", line + first as u64);
            let seq = self.push(
                Message::new(Role::Assistant, MessageKind::ToolCall, e.file.clone())
                    .with_tool_name(EDIT_TOOL.to_string())
                    .with_call_id(call_id.clone())
                    .with_input(
                        json!({ "file": e.file, "search": e.search, "replace": e.replace })
                            .to_string(),
                    )
                    .with_model(model.clone())
                    .with_timestamp(now.clone()),
            );
            first_seq.get_or_insert(seq);
            self.open().pending_edits.push(PendingEdit {
                file: e.file,
                call_id,
            });
        }
        if first_seq.is_some() {
            self.open().last_text_seq = first_seq;
        }
    }

    // --- status lines

    fn status(&mut self, line: u64, text: &str) {
        if let Some(u) = usage_line(text) {
            let (model, now, seq) = {
                let o = self.open();
                (o.model.clone(), o.now.clone(), o.last_text_seq)
            };
            let mut u = u;
            u.request_key = format!("tokens@{line}");
            u.model = model;
            u.timestamp = now;
            u.message_seq = seq;
            if u.cost_usd.is_none() {
                self.pending_usage = Some(u);
            } else {
                self.push_usage(u);
            }
            return;
        }
        if let Some(file) = text.strip_prefix("Applied edit to ") {
            self.edit_outcome(file.trim(), text, false);
            self.file_touched(file.trim());
            return;
        }
        if let Some(file) = text
            .strip_prefix("Did not apply edit to ")
            .and_then(|r| r.strip_suffix(" (--dry-run)"))
        {
            self.edit_outcome(file.trim(), text, false);
            return;
        }
        if let Some(file) = text.strip_prefix("Skipping edits to ") {
            self.edit_outcome(file.trim(), text, true);
            return;
        }
        if let Some(file) = failed_match_file(text) {
            self.edit_outcome(file, text, true);
        }
        if let Some(cmd) = text.strip_prefix("Running ") {
            if !cmd.trim().is_empty() {
                self.run_call(line, cmd.trim());
                return;
            }
        }
        if let Some(v) = text.strip_prefix("Aider v") {
            let v = v.split_whitespace().next().unwrap_or_default().to_string();
            if !v.is_empty() {
                self.open().agent_version = Some(v);
            }
        }
        if let Some(c) = model_re().captures(text) {
            let model = c[1].to_string();
            let format = c[2].to_string();
            let o = self.open();
            if !o.models.contains(&model) {
                o.models.push(model.clone());
            }
            o.model = Some(model);
            o.edit_format = Some(format);
        }
        if let Some(c) = commit_re().captures(text) {
            let (turn, at) = {
                let o = self.open();
                (o.turns.checked_sub(1), o.now.clone())
            };
            self.add_ref(SessionRef {
                ref_type: RefType::Commit,
                value: c[1].to_ascii_lowercase(),
                turn_index: turn,
                created_at: at,
            });
        }
        let open = self.open();
        if open.status_run.is_none() {
            open.status_run = Some(StatusRun {
                seq: open.seq,
                turn: open.turns.checked_sub(1),
                timestamp: open.now.clone(),
                lines: Vec::new(),
                written: 0,
            });
            open.seq += 1;
        }
        if let Some(run) = open.status_run.as_mut() {
            run.lines.push(text.to_string());
        }
    }

    /// Writes the status run's message (when it has lines not written yet); `keep` leaves the
    /// run open for lines a later parse may find.
    fn write_status_run(&mut self, keep: bool) {
        let Some(open) = self.st.open.as_mut() else {
            return;
        };
        let Some(mut run) = open.status_run.take() else {
            return;
        };
        if run.lines.len() > run.written {
            self.delta.messages.push(
                Message::new(Role::System, MessageKind::Meta, run.lines.join("\n"))
                    .with_seq(run.seq)
                    .with_timestamp(run.timestamp.clone())
                    .with_main_chain(true)
                    .with_turn(run.turn),
            );
            run.written = run.lines.len();
        }
        if keep {
            open.status_run = Some(run);
        }
    }

    fn push_usage(&mut self, u: Usage) {
        self.open();
        self.delta.usage.push(u);
    }

    /// Writes the results of the pending edit calls for `file`.
    fn edit_outcome(&mut self, file: &str, text: &str, is_error: bool) {
        let now = self.open().now.clone();
        let pending = std::mem::take(&mut self.open().pending_edits);
        let (done, rest): (Vec<_>, Vec<_>) = pending.into_iter().partition(|e| e.file == file);
        self.open().pending_edits = rest;
        for e in done {
            self.push(
                Message::new(Role::Tool, MessageKind::ToolResult, "")
                    .with_tool_name(EDIT_TOOL.to_string())
                    .with_call_id(e.call_id)
                    .with_output(text.to_string())
                    .with_error(is_error)
                    .with_timestamp(now.clone()),
            );
        }
    }

    fn file_touched(&mut self, file: &str) {
        let abs = match &self.cwd {
            Some(cwd) if !Path::new(file).is_absolute() => {
                Path::new(cwd).join(file).display().to_string()
            }
            _ => file.to_string(),
        };
        let (turn, now) = {
            let o = self.open();
            (o.turns.checked_sub(1), o.now.clone())
        };
        if self.open().files.insert(abs.clone()) {
            self.delta.files.push(FileTouch {
                path: abs,
                tool_name: Some(EDIT_TOOL.to_string()),
                turn_index: turn,
                first_seen_at: now,
            });
        }
    }
}

/// `#### Question (Y)es/(N)o/(A)ll... [Yes]: a`: a confirmation answered for a whole group,
/// which Aider logs as user input.
fn is_confirmation(text: &str) -> bool {
    !text.contains('\n') && text.contains("(Y)es/(N)o") && text.contains("]: ")
}

fn model_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^(?:Main model|Model|Models): (\S+) with (\S+) edit format")
            .expect("valid regex")
    })
}

fn commit_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^Commit ([0-9a-fA-F]{7,40}) ").expect("valid regex"))
}

fn tokens_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        let n = r"([0-9][0-9.,]*[kKmM]?)";
        Regex::new(&format!(
            r"^Tokens: {n} sent(?:, {n} cache write)?(?:, {n} cache hit)?, {n} received\.(?:\s+Cost: \$([0-9.]+) (?:message|request), \$[0-9.]+ session\.)?"
        ))
        .expect("valid regex")
    })
}

/// `Cost: $0.02 message, $0.05 session.` on the line after a `Tokens:` line (Aider writes the
/// usage report on two lines when a request both wrote and read the cache).
fn cost_continuation(line: &str) -> Option<f64> {
    let rest = line.strip_prefix("Cost: $")?;
    let (num, tail) = rest.split_once(' ')?;
    (tail.starts_with("message,") || tail.starts_with("request,"))
        .then(|| num.parse().ok())
        .flatten()
}

/// A token count as Aider prints it: `104`, `1,234`, `2.4k`, `10k`, `1.2M`.
fn count(s: &str) -> u64 {
    let s = s.replace(',', "");
    let (num, mul) = match s.chars().last() {
        Some('k' | 'K') => (&s[..s.len() - 1], 1e3),
        Some('m' | 'M') => (&s[..s.len() - 1], 1e6),
        _ => (s.as_str(), 1.0),
    };
    num.parse::<f64>()
        .ok()
        .filter(|f| f.is_finite() && *f >= 0.0)
        .map_or(0, |f| (f * mul).round() as u64)
}

/// Reads a `Tokens:` status line (key, model and time are filled by the caller).
fn usage_line(text: &str) -> Option<Usage> {
    let c = tokens_re().captures(text)?;
    let get = |i: usize| c.get(i).map_or(0, |m| count(m.as_str()));
    let sent = get(1);
    let cache_write = get(2);
    let cache_hit = get(3);
    let received = get(4);
    let cost = c.get(5).and_then(|m| m.as_str().parse::<f64>().ok());
    Some(Usage {
        input_tokens: sent.saturating_sub(cache_write),
        output_tokens: received,
        cache_creation_tokens: cache_write,
        cache_read_tokens: cache_hit,
        cost_usd: cost,
        tokens_known: crate::shared::blocks::any_count(&[sent, received, cache_write, cache_hit]),
        ..Usage::default()
    })
}

/// The file a `SearchReplaceNoExactMatch` line names.
fn failed_match_file(text: &str) -> Option<&str> {
    let (_, rest) = text.split_once("failed to exactly match lines in ")?;
    Some(rest.trim())
}

// ---------------------------------------------------------------------------------------------
// Reasoning

/// Splits Aider's reasoning section off an answer: `<thinking-content-...>` tags (how Aider
/// wraps a model's reasoning), `<think>` tags, or the `► THINKING` / `► ANSWER` markers Aider
/// shows them as.
fn split_reasoning(text: &str) -> (Option<String>, String) {
    let t = text.trim_start();
    if t.starts_with("<thinking-content-") || t.starts_with("<think>") {
        let open_end = t.find('>').map_or(0, |i| i + 1);
        let tag = &t[1..open_end.saturating_sub(1)];
        let close = format!("</{tag}>");
        if let Some(end) = t.find(&close) {
            let thinking = t[open_end..end].trim().to_string();
            let answer = t[end + close.len()..].trim().to_string();
            return (Some(thinking), answer);
        }
    }
    if let Some(rest) = t
        .strip_prefix("-----\n**► THINKING**")
        .or_else(|| t.strip_prefix("**► THINKING**"))
    {
        if let Some(end) = rest.find("**► ANSWER**") {
            let thinking = rest[..end].trim().trim_end_matches('-').trim().to_string();
            let answer = rest[end + "**► ANSWER**".len()..].trim().to_string();
            return (Some(thinking), answer);
        }
    }
    (None, text.to_string())
}

// ---------------------------------------------------------------------------------------------
// Edits

/// One edit an answer asks for: replace `search` with `replace` in `file` (`search` empty: a
/// new file or the whole file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditBlock {
    pub file: String,
    pub search: String,
    pub replace: String,
}

fn is_search_marker(t: &str) -> bool {
    let lt = t.bytes().take_while(|b| *b == b'<').count();
    (5..=9).contains(&lt) && {
        let rest = t[lt..].trim_end();
        rest == " SEARCH" || rest == " SEARCH>"
    }
}

fn is_divider(t: &str) -> bool {
    let n = t.bytes().take_while(|b| *b == b'=').count();
    (5..=9).contains(&n) && t[n..].trim().is_empty()
}

fn is_replace_marker(t: &str) -> bool {
    let n = t.bytes().take_while(|b| *b == b'>').count();
    (5..=9).contains(&n) && t[n..].trim_end() == " REPLACE"
}

/// A fence line: up to three spaces, then three or more backticks or tildes. Returns the
/// character, the run's length and what follows.
fn fence_marker(line: &str) -> Option<(u8, usize, &str)> {
    let indent = line.bytes().take_while(|b| *b == b' ').count();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let c = *rest.as_bytes().first()?;
    if c != b'`' && c != b'~' {
        return None;
    }
    let n = rest.bytes().take_while(|b| *b == c).count();
    (n >= 3).then(|| (c, n, &rest[n..]))
}

/// A file name as Aider finds it on a line before an edit: stripped of `:`, `#`, backticks and
/// `*`; a fence or `...` is no name.
fn file_name_of(line: &str) -> Option<String> {
    let t = line.trim();
    if t == "..." || t.starts_with("```") || t.starts_with("~~~") {
        return None;
    }
    let t = t.trim_end_matches(':').trim_start_matches('#').trim();
    let t = t.trim_matches('`').trim_matches('*').replace("\\_", "_");
    (!t.is_empty()).then_some(t)
}

/// Finds the file of a SEARCH block in the (up to three) lines before it, going back only
/// through fences, as Aider's `find_filename` does.
fn file_before(lines: &[&str], at: usize) -> Option<(String, usize)> {
    for back in 1..=3 {
        let i = at.checked_sub(back)?;
        let l = lines[i];
        if let Some(name) = file_name_of(l) {
            return Some((name, i));
        }
        // Only fence lines may stand between a file name and its block.
        fence_marker(l)?;
    }
    None
}

/// Returns the edits of an answer: SEARCH/REPLACE blocks always, whole files for the `whole`
/// edit formats, unified diff hunks for the `udiff` ones.
pub fn edit_blocks(answer: &str, edit_format: Option<&str>) -> Vec<EditBlock> {
    let lines: Vec<&str> = answer.lines().collect();
    locate_edits(&lines, edit_format)
        .into_iter()
        .filter_map(|l| l.block)
        .collect()
}

/// An edit and the lines of the answer it takes (`start..end`: its file name, fences and
/// markers included).
struct Located {
    block: Option<EditBlock>,
    start: usize,
    end: usize,
}

impl Located {
    /// The end of the answer (no block).
    fn end(n: usize) -> Located {
        Located {
            block: None,
            start: n,
            end: n,
        }
    }
}

/// Finds the edits of an answer with their spans, in order and without overlaps.
fn locate_edits(lines: &[&str], edit_format: Option<&str>) -> Vec<Located> {
    let mut out = search_replace_blocks(lines);
    match edit_format {
        Some(f) if f.ends_with("whole") => out.extend(whole_files(lines)),
        Some(f) if f.starts_with("udiff") => out.extend(udiff_hunks(lines)),
        _ => {}
    }
    out.sort_by_key(|l| l.start);
    let mut kept: Vec<Located> = Vec::with_capacity(out.len());
    for l in out {
        if kept.last().is_none_or(|p| l.start >= p.end) {
            kept.push(l);
        }
    }
    kept
}

fn joined(lines: &[&str]) -> String {
    let mut s = String::new();
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    s
}

fn search_replace_blocks(lines: &[&str]) -> Vec<Located> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        if !is_search_marker(lines[i].trim()) {
            i += 1;
            continue;
        }
        let named = file_before(lines, i);
        let file = named
            .as_ref()
            .map(|(f, _)| f.clone())
            .or_else(|| current.clone());
        let start = i + 1;
        let Some(div) = (start..lines.len()).find(|&j| is_divider(lines[j].trim())) else {
            break;
        };
        let Some(end) = (div + 1..lines.len()).find(|&j| is_replace_marker(lines[j].trim())) else {
            break;
        };
        if let Some(file) = file {
            current = Some(file.clone());
            // The span: from the file name (or the opening fence before it, `diff-fenced`)
            // to the closing fence after the marker.
            let mut from = named.map_or(i, |(_, at)| at);
            if from > 0 && fence_marker(lines[from - 1]).is_some() && from < i {
                from -= 1;
            } else if from == i && i > 0 && fence_marker(lines[i - 1]).is_some() {
                from = i - 1;
            }
            let mut to = end + 1;
            if lines
                .get(to)
                .and_then(|l| fence_marker(l))
                .is_some_and(|(_, _, rest)| rest.trim().is_empty())
            {
                to += 1;
            }
            out.push(Located {
                block: Some(EditBlock {
                    file,
                    search: joined(&lines[start..div]),
                    replace: joined(&lines[div + 1..end]),
                }),
                start: from,
                end: to,
            });
        }
        i = end + 1;
    }
    out
}

/// `whole` format: a file name alone on a line, then the file in a fence.
fn whole_files(lines: &[&str]) -> Vec<Located> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some((c, n, _)) = fence_marker(lines[i]) else {
            i += 1;
            continue;
        };
        let close = (i + 1..lines.len()).find(|&j| {
            fence_marker(lines[j])
                .is_some_and(|(cc, nn, rest)| cc == c && nn >= n && rest.trim().is_empty())
        });
        let Some(close) = close else {
            break;
        };
        let name = i
            .checked_sub(1)
            .and_then(|p| file_name_of(lines[p]))
            .filter(|n| !n.contains(' '));
        let body = &lines[i + 1..close];
        let has_markers = body.iter().any(|l| is_search_marker(l.trim()));
        if let (Some(file), false) = (name, has_markers) {
            out.push(Located {
                block: Some(EditBlock {
                    file,
                    search: String::new(),
                    replace: joined(body),
                }),
                start: i - 1,
                end: close + 1,
            });
        }
        i = close + 1;
    }
    out
}

/// `udiff` format: ```` ```diff ```` blocks of `--- path` / `+++ path` and `@@ ... @@` hunks;
/// each hunk is an edit whose search is its context and `-` lines, its replace its context and
/// `+` lines. The first hunk of a block takes the block's lines, the others none.
fn udiff_hunks(lines: &[&str]) -> Vec<Located> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].trim_start().starts_with("```diff") {
            i += 1;
            continue;
        }
        let close = (i + 1..lines.len())
            .find(|&j| lines[j].trim_start().starts_with("```"))
            .unwrap_or(lines.len());
        let mut edits: Vec<EditBlock> = Vec::new();
        let mut file: Option<String> = None;
        let mut hunk: Option<(Vec<&str>, Vec<&str>)> = None;
        let mut flush = |file: &Option<String>, hunk: &mut Option<(Vec<&str>, Vec<&str>)>| {
            if let (Some(f), Some((s, r))) = (file, hunk.take()) {
                if !s.is_empty() || !r.is_empty() {
                    edits.push(EditBlock {
                        file: f.clone(),
                        search: joined(&s),
                        replace: joined(&r),
                    });
                }
            }
        };
        for &l in &lines[i + 1..close] {
            if let Some(p) = l.strip_prefix("+++ ") {
                flush(&file, &mut hunk);
                file = Some(p.trim().to_string());
            } else if l.starts_with("--- ") {
                flush(&file, &mut hunk);
            } else if l.starts_with("@@") {
                flush(&file, &mut hunk);
                hunk = Some((Vec::new(), Vec::new()));
            } else if let Some((s, r)) = hunk.as_mut() {
                if let Some(x) = l.strip_prefix('-') {
                    s.push(x);
                } else if let Some(x) = l.strip_prefix('+') {
                    r.push(x);
                } else {
                    let x = l.strip_prefix(' ').unwrap_or(l);
                    s.push(x);
                    r.push(x);
                }
            }
        }
        flush(&file, &mut hunk);
        let end = (close + 1).min(lines.len());
        for (k, e) in edits.into_iter().enumerate() {
            out.push(Located {
                block: Some(e),
                start: if k == 0 { i } else { end },
                end,
            });
        }
        i = end;
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Input history

/// One input: when it was typed (the writer's local time, as written) and its text.
#[derive(Debug, Clone)]
struct InputEntry {
    at: String,
    text: String,
    /// Offset just past the entry.
    end: u64,
}

#[derive(Debug, Default)]
struct InputHistory {
    entries: Vec<InputEntry>,
    /// The next entry to look at.
    cursor: usize,
    /// Where reading started (entries before it were used by earlier parses).
    base: u64,
}

impl InputHistory {
    /// Reads `path` from `from` (from 0 when the file is now shorter: it was replaced).
    fn read(path: &Path, from: u64) -> InputHistory {
        let Ok(bytes) = std::fs::read(path) else {
            return InputHistory {
                base: from,
                ..InputHistory::default()
            };
        };
        let from = if (from as usize) <= bytes.len() {
            from as usize
        } else {
            0
        };
        let mut entries = Vec::new();
        let mut cur: Option<(String, Vec<String>)> = None;
        let mut pos = from;
        let mut last_end = from as u64;
        for raw in bytes[from..].split_inclusive(|b| *b == b'\n') {
            pos += raw.len();
            if raw.last() != Some(&b'\n') {
                break;
            }
            let line = String::from_utf8_lossy(raw);
            let line = line
                .trim_start_matches('\u{feff}')
                .trim_end_matches(['\n', '\r']);
            if let Some(ts) = line.strip_prefix("# ") {
                if let Some((at, lines)) = cur.take() {
                    entries.push(InputEntry {
                        at,
                        text: normalize_input(&lines.join("\n")),
                        end: last_end,
                    });
                }
                cur = Some((ts.trim().to_string(), Vec::new()));
            } else if let Some(l) = line.strip_prefix('+') {
                if let Some((_, lines)) = cur.as_mut() {
                    lines.push(l.to_string());
                    last_end = pos as u64;
                }
            }
        }
        if let Some((at, lines)) = cur.take() {
            entries.push(InputEntry {
                at,
                text: normalize_input(&lines.join("\n")),
                end: last_end,
            });
        }
        InputHistory {
            entries,
            cursor: 0,
            base: from as u64,
        }
    }

    /// Passes entries typed before `start` (a session's header time): they belong to earlier
    /// sessions.
    fn skip_before(&mut self, start: Option<&str>) {
        let Some(start) = start else {
            return;
        };
        while self
            .entries
            .get(self.cursor)
            .is_some_and(|e| e.at.as_str() < start)
        {
            self.cursor += 1;
        }
    }

    /// Returns the time (normalized) of the input `prompt` came from, and moves past it.
    fn find(&mut self, prompt: &str, start: Option<&str>) -> Option<String> {
        let want = normalize_input(prompt);
        let end = (self.cursor + INPUT_LOOKAHEAD).min(self.entries.len());
        let found = (self.cursor..end).find(|&i| {
            let e = &self.entries[i];
            e.text == want && start.is_none_or(|s| e.at.as_str() >= s)
        })?;
        self.cursor = found + 1;
        time::normalize(&self.entries[found].at)
    }

    /// The offset of the first entry not used yet, for the next parse.
    fn consumed_offset(&self) -> u64 {
        match self.cursor.checked_sub(1) {
            Some(i) => self.entries[i].end,
            None => self.base,
        }
    }
}

/// An input compared line by line without trailing spaces or surrounding blank lines (the chat
/// history strips them).
fn normalize_input(s: &str) -> String {
    let lines: Vec<&str> = s.lines().map(str::trim_end).collect();
    lines.join("\n").trim_matches('\n').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_as_printed() {
        assert_eq!(count("104"), 104);
        assert_eq!(count("2.4k"), 2400);
        assert_eq!(count("10k"), 10_000);
        assert_eq!(count("1,234"), 1234);
        assert_eq!(count("1.2M"), 1_200_000);
    }

    #[test]
    fn usage_lines_old_and_new() {
        let u = usage_line(
            "Tokens: 2.4k sent, 104 received. Cost: $0.00042 message, $0.00042 session.",
        )
        .unwrap();
        assert_eq!((u.input_tokens, u.output_tokens), (2400, 104));
        assert_eq!(u.cost_usd, Some(0.00042));
        let u = usage_line("Tokens: 12k sent, 3.1k cache write, 8.2k cache hit, 345 received.")
            .unwrap();
        assert_eq!(u.input_tokens, 12_000 - 3_100);
        assert_eq!(u.cache_creation_tokens, 3_100);
        assert_eq!(u.cache_read_tokens, 8_200);
        assert_eq!(u.cost_usd, None);
        let u = usage_line("Tokens: 1,234 sent, 56 received. Cost: $0.01 request, $0.05 session.")
            .unwrap();
        assert_eq!((u.input_tokens, u.cost_usd), (1234, Some(0.01)));
        assert!(usage_line("Tokens are nice").is_none());
        assert_eq!(
            cost_continuation("Cost: $0.02 message, $0.05 session."),
            Some(0.02)
        );
    }

    #[test]
    fn markers() {
        assert!(is_search_marker("<<<<<<< SEARCH"));
        assert!(is_search_marker("<<<<<<<<< SEARCH>"));
        assert!(!is_search_marker("<<<< SEARCH"));
        assert!(is_divider("======="));
        assert!(is_replace_marker(">>>>>>> REPLACE"));
        assert_eq!(fence_marker("````typescript").map(|f| f.1), Some(4));
        assert_eq!(file_name_of("**src/a.py**:").as_deref(), Some("src/a.py"));
    }
}
