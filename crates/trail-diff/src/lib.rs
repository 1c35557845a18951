//! What a session changed, as unified diffs per file, from everything an agent records of it:
//!
//! - edit tool calls, read from their inputs: Claude Code `Edit` / `MultiEdit` / `Write`,
//!   Gemini CLI `replace` / `write_file`, Copilot CLI `edit` / `create`, Copilot Chat
//!   `replace_string_in_file` / `multi_replace_string_in_file` / `create_file` /
//!   `insert_edit_into_file`, OpenCode `edit` / `write`, Cline `replace_in_file` /
//!   `write_to_file` (and Roo Code's `apply_diff` / `search_and_replace`), Aider edit blocks
//!   (`aider_edit {file, search, replace}`), and any `apply_patch` body (Codex, Copilot Chat),
//!   whose hunks are normalised into the same edits;
//! - file snapshots the agent kept ([`FileSnapshot`]: Claude Code's `file-history` backups,
//!   VS Code's chat editing sessions), which are exact.
//!
//! Per file, snapshots win for the turns they cover; edits after the last snapshot apply to
//! its content. An edit to a file whose content is known (a snapshot, a whole-file write, a
//! file the session created) is applied to it, and its diff has the file's real line numbers
//! ([`FileChange::exact`]); otherwise the diff is of the edited text alone, its line numbers
//! relative to that text.
//!
//! Pure functions: the query layer reads the calls and snapshots from the store and calls
//! [`build`]. Diffs are computed with `similar` (Myers).

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;
use similar::{ChangeTag, DiffOp, TextDiff};
use trail_model::FileSnapshot;

/// Tool names whose calls may edit a file (what the store is asked for). Calls of other tools
/// are read too when their input holds an `apply_patch` body.
pub const EDIT_TOOLS: &[&str] = &[
    // Claude Code
    "Edit",
    "MultiEdit",
    "Write",
    // Gemini CLI
    "replace",
    "write_file",
    // Copilot CLI, OpenCode
    "edit",
    "create",
    "write",
    // Copilot Chat in VS Code
    "replace_string_in_file",
    "multi_replace_string_in_file",
    "create_file",
    "insert_edit_into_file",
    "apply_patch",
    // Cline, Roo Code, Kilo Code
    "replace_in_file",
    "write_to_file",
    "apply_diff",
    "search_and_replace",
    "delete_file",
    // Aider (its edit blocks, as recorded by trail)
    "aider_edit",
    // Anthropic's text editor tool, Cursor
    "str_replace",
    "str_replace_editor",
    "str_replace_based_edit_tool",
    "edit_file",
    "search_replace",
];

/// The marker that opens an `apply_patch` body.
pub const PATCH_BEGIN: &str = "*** Begin Patch";

/// One tool call to read edits from.
#[derive(Debug, Clone, Default)]
pub struct EditCall {
    /// Position in the session (orders the calls).
    pub seq: i64,
    pub tool_name: String,
    /// The call's input (JSON text, or a raw patch).
    pub input: String,
    pub turn: Option<u32>,
    pub timestamp: Option<String>,
    /// The result was an error: the edit did not happen, and is skipped.
    pub failed: bool,
}

/// What one edit does to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Replaces `old` by `new` (the first occurrence, or every one when `all`).
    Replace { old: String, new: String, all: bool },
    /// Writes the whole file.
    Write(String),
    /// Creates the file with this content (a patch's `Add File`): new, so the diff is exact.
    Create(String),
    /// A fragment of new code placed into the file where the agent's tool decided (Copilot's
    /// `insert_edit_into_file`, Cursor's `edit_file`): shown as added text.
    Fragment(String),
    /// Deletes the file.
    Delete,
    /// Renames the file to this path.
    Move(String),
}

/// An edit of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub path: String,
    pub op: Op,
}

/// What a change did to its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Created,
    Modified,
    Deleted,
    Renamed,
}

/// One change to one file: a tool call's edit, or the difference between two snapshots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileChange {
    /// The turn it was made in (for snapshots: the turn the earlier one was taken at).
    pub turn: Option<u32>,
    /// The tool, or the snapshot origin (`claude-file-history`, `vscode-chat-editing`).
    pub source: String,
    pub kind: ChangeKind,
    /// Whether the diff is of the whole file (real line numbers); else of the edited text.
    pub exact: bool,
    pub timestamp: Option<String>,
    /// The unified diff (`--- a/PATH`, `+++ b/PATH`, hunks); empty for a rename.
    pub diff: String,
    pub added: usize,
    pub removed: usize,
    /// For a rename: the new path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renamed_to: Option<String>,
}

/// Every change a session made to one file, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    pub path: String,
    pub changes: Vec<FileChange>,
    pub added: usize,
    pub removed: usize,
}

/// What a session changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionDiff {
    pub files: Vec<FileDiff>,
    pub added: usize,
    pub removed: usize,
}

impl SessionDiff {
    /// Returns the file whose path is `path`, or ends with it (or it with the file's) at a
    /// folder boundary, so `src/a.rs` finds `/home/u/app/src/a.rs` and back.
    pub fn for_path(&self, path: &str) -> Option<&FileDiff> {
        let want = normalize_path(path);
        self.files
            .iter()
            .find(|f| normalize_path(&f.path) == want)
            .or_else(|| {
                self.files.iter().find(|f| {
                    let have = normalize_path(&f.path);
                    ends_at_boundary(&have, &want) || ends_at_boundary(&want, &have)
                })
            })
    }

    /// Keeps only the changes made in turn `turn`.
    pub fn only_turn(mut self, turn: u32) -> SessionDiff {
        for f in &mut self.files {
            f.changes.retain(|c| c.turn == Some(turn));
        }
        self.files.retain(|f| !f.changes.is_empty());
        self.recount();
        self
    }

    fn recount(&mut self) {
        for f in &mut self.files {
            f.added = f.changes.iter().map(|c| c.added).sum();
            f.removed = f.changes.iter().map(|c| c.removed).sum();
        }
        self.added = self.files.iter().map(|f| f.added).sum();
        self.removed = self.files.iter().map(|f| f.removed).sum();
    }
}

fn normalize_path(p: &str) -> String {
    let p = p.replace('\\', "/");
    let p = p.trim_start_matches("./");
    // Windows drive letters compare without case.
    let b = p.as_bytes();
    if b.len() >= 2 && b[1] == b':' {
        let mut s = p.to_string();
        s[..1].make_ascii_lowercase();
        return s;
    }
    p.to_string()
}

fn ends_at_boundary(long: &str, short: &str) -> bool {
    !short.is_empty()
        && long.len() > short.len()
        && long.ends_with(short)
        && long.as_bytes()[long.len() - short.len() - 1] == b'/'
}

// ---------------------------------------------------------------------------------------------
// Reading edits from tool inputs

fn str_of<'v>(v: &'v Value, keys: &[&str]) -> Option<&'v str> {
    keys.iter().find_map(|k| v.get(*k).and_then(Value::as_str))
}

const PATH_KEYS: &[&str] = &[
    "file_path",
    "filePath",
    "path",
    "file",
    "target_file",
    "absolute_path",
    // Antigravity.
    "TargetFile",
];
// `oldText`/`newText`: Pi; `oldStr`/`newStr`: Kiro CLI's `write` (`strReplace`);
// `TargetContent`/`ReplacementContent`: Antigravity.
const OLD_KEYS: &[&str] = &[
    "old_string",
    "oldString",
    "old_str",
    "oldText",
    "search",
    "oldStr",
    "TargetContent",
];
const NEW_KEYS: &[&str] = &[
    "new_string",
    "newString",
    "new_str",
    "newText",
    "replace",
    "newStr",
    "ReplacementContent",
];
// `CodeContent`: Antigravity's `write_to_file`.
const CONTENT_KEYS: &[&str] = &["content", "file_text", "text", "contents", "CodeContent"];

/// Returns the edits a tool call's input describes (none for a call that edits nothing).
pub fn edits_of(tool_name: &str, input: &str) -> Vec<Edit> {
    if let Some(patch) = patch_text(input) {
        return parse_patch(&patch);
    }
    let Ok(v) = serde_json::from_str::<Value>(input) else {
        return Vec::new();
    };
    let path = str_of(&v, PATH_KEYS).map(str::to_string);
    let one = |op: Op| -> Vec<Edit> {
        match &path {
            Some(p) if !p.is_empty() => vec![Edit {
                path: p.clone(),
                op,
            }],
            _ => Vec::new(),
        }
    };
    let replace = |v: &Value| -> Option<Op> {
        Some(Op::Replace {
            old: str_of(v, OLD_KEYS)?.to_string(),
            new: str_of(v, NEW_KEYS).unwrap_or_default().to_string(),
            all: v
                .get("replace_all")
                .or_else(|| v.get("replaceAll"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    };
    match tool_name {
        "MultiEdit" => {
            let Some(p) = path.filter(|p| !p.is_empty()) else {
                return Vec::new();
            };
            v.get("edits")
                .and_then(Value::as_array)
                .map(|edits| {
                    edits
                        .iter()
                        .filter_map(replace)
                        .map(|op| Edit {
                            path: p.clone(),
                            op,
                        })
                        .collect()
                })
                .unwrap_or_default()
        }
        "multi_replace_string_in_file" => v
            .get("replacements")
            .and_then(Value::as_array)
            .map(|rs| {
                rs.iter()
                    .filter_map(|r| {
                        Some(Edit {
                            path: str_of(r, PATH_KEYS)?.to_string(),
                            op: replace(r)?,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default(),
        "replace_in_file" | "apply_diff" => {
            let diff = str_of(&v, &["diff"]).unwrap_or_default();
            let blocks = search_replace_blocks(diff);
            let Some(p) = path.filter(|p| !p.is_empty()) else {
                return Vec::new();
            };
            blocks
                .into_iter()
                .map(|(old, new)| Edit {
                    path: p.clone(),
                    op: Op::Replace {
                        old,
                        new,
                        all: false,
                    },
                })
                .collect()
        }
        "delete_file" => one(Op::Delete),
        "insert_edit_into_file" | "edit_file" => {
            match str_of(&v, &["code", "code_edit", "content"]) {
                Some(c) => one(Op::Fragment(c.to_string())),
                None => Vec::new(),
            }
        }
        "str_replace_editor" | "str_replace_based_edit_tool" => {
            match v.get("command").and_then(Value::as_str) {
                Some("create") => match str_of(&v, CONTENT_KEYS) {
                    Some(c) => one(Op::Write(c.to_string())),
                    None => Vec::new(),
                },
                Some("str_replace") => replace(&v).map(one).unwrap_or_default(),
                _ => Vec::new(),
            }
        }
        _ => {
            if let Some(op) = replace(&v) {
                return one(op);
            }
            match str_of(&v, CONTENT_KEYS) {
                Some(c) if is_write_tool(tool_name) => one(Op::Write(c.to_string())),
                _ => Vec::new(),
            }
        }
    }
}

fn is_write_tool(name: &str) -> bool {
    matches!(
        name,
        "Write"
            | "write"
            | "write_file"
            | "create"
            | "Create"
            | "create_file"
            | "write_to_file"
            // Kiro CLI's SQLite-era tool (Amazon Q's `fs_write`).
            | "fs_write"
    )
}

/// The `apply_patch` body in a call's input: the input itself, a JSON string, a string field
/// (`input`, `patch`), or an argument of a shell command (`["apply_patch", "*** Begin ..."]`).
pub fn patch_text(input: &str) -> Option<String> {
    if !input.contains(PATCH_BEGIN) {
        return None;
    }
    fn find(v: &Value) -> Option<String> {
        match v {
            Value::String(s) if s.contains(PATCH_BEGIN) => Some(s.clone()),
            Value::Array(a) => a.iter().find_map(find),
            Value::Object(o) => o.values().find_map(find),
            _ => None,
        }
    }
    let text = match serde_json::from_str::<Value>(input) {
        Ok(v) => find(&v)?,
        Err(_) => input.to_string(),
    };
    let start = text.find(PATCH_BEGIN)?;
    Some(text[start..].to_string())
}

/// Parses an `apply_patch` body (`*** Begin Patch` ... `*** End Patch`) into edits: an added
/// file is a whole-file write, a deleted one a delete, and each `@@` hunk of an updated file a
/// replacement of its context and removed lines by its context and added lines.
pub fn parse_patch(patch: &str) -> Vec<Edit> {
    enum Section {
        None,
        Add { path: String, lines: Vec<String> },
        Update { path: String },
    }
    let mut out: Vec<Edit> = Vec::new();
    let mut section = Section::None;
    let mut hunk_old: Vec<String> = Vec::new();
    let mut hunk_new: Vec<String> = Vec::new();
    let flush_hunk =
        |path: &str, old: &mut Vec<String>, new: &mut Vec<String>, out: &mut Vec<Edit>| {
            if old.is_empty() && new.is_empty() {
                return;
            }
            let join = |v: &[String]| {
                if v.is_empty() {
                    String::new()
                } else {
                    let mut s = v.join("\n");
                    s.push('\n');
                    s
                }
            };
            out.push(Edit {
                path: path.to_string(),
                op: Op::Replace {
                    old: join(old),
                    new: join(new),
                    all: false,
                },
            });
            old.clear();
            new.clear();
        };
    let close = |section: &mut Section,
                 old: &mut Vec<String>,
                 new: &mut Vec<String>,
                 out: &mut Vec<Edit>| {
        match std::mem::replace(section, Section::None) {
            Section::Add { path, lines } => {
                let mut content = lines.join("\n");
                if !lines.is_empty() {
                    content.push('\n');
                }
                out.push(Edit {
                    path,
                    op: Op::Create(content),
                });
            }
            Section::Update { path } => flush_hunk(&path, old, new, out),
            Section::None => {}
        }
    };
    for line in patch.lines() {
        if let Some(p) = line.strip_prefix("*** Add File: ") {
            close(&mut section, &mut hunk_old, &mut hunk_new, &mut out);
            section = Section::Add {
                path: p.trim().to_string(),
                lines: Vec::new(),
            };
        } else if let Some(p) = line.strip_prefix("*** Delete File: ") {
            close(&mut section, &mut hunk_old, &mut hunk_new, &mut out);
            out.push(Edit {
                path: p.trim().to_string(),
                op: Op::Delete,
            });
        } else if let Some(p) = line.strip_prefix("*** Update File: ") {
            close(&mut section, &mut hunk_old, &mut hunk_new, &mut out);
            section = Section::Update {
                path: p.trim().to_string(),
            };
        } else if let Some(to) = line.strip_prefix("*** Move to: ") {
            if let Section::Update { path } = &section {
                out.push(Edit {
                    path: path.clone(),
                    op: Op::Move(to.trim().to_string()),
                });
            }
        } else if line.starts_with("*** ") {
            // `*** End Patch`, `*** End of File`, `*** Begin Patch`.
            if line.starts_with("*** End Patch") {
                close(&mut section, &mut hunk_old, &mut hunk_new, &mut out);
            }
        } else {
            match &mut section {
                Section::Add { lines, .. } => {
                    lines.push(line.strip_prefix('+').unwrap_or(line).to_string());
                }
                Section::Update { path } => {
                    if line.starts_with("@@") {
                        let p = path.clone();
                        flush_hunk(&p, &mut hunk_old, &mut hunk_new, &mut out);
                    } else if let Some(r) = line.strip_prefix('-') {
                        hunk_old.push(r.to_string());
                    } else if let Some(a) = line.strip_prefix('+') {
                        hunk_new.push(a.to_string());
                    } else {
                        let c = line.strip_prefix(' ').unwrap_or(line);
                        hunk_old.push(c.to_string());
                        hunk_new.push(c.to_string());
                    }
                }
                Section::None => {}
            }
        }
    }
    close(&mut section, &mut hunk_old, &mut hunk_new, &mut out);
    out
}

/// Splits search/replace blocks into `(search, replace)` pairs: Cline's
/// `------- SEARCH` / `=======` / `+++++++ REPLACE`, the older `<<<<<<< SEARCH` /
/// `>>>>>>> REPLACE`, and Roo Code's with `:start_line:` and a `-------` line after the marker.
pub fn search_replace_blocks(diff: &str) -> Vec<(String, String)> {
    #[derive(PartialEq)]
    enum At {
        Out,
        Search,
        Replace,
    }
    let mut out = Vec::new();
    let mut at = At::Out;
    let mut old = String::new();
    let mut new = String::new();
    let mut search_started = false;
    for line in diff.split_inclusive('\n') {
        let t = line.trim_end_matches(['\n', '\r']);
        let tt = t.trim();
        match at {
            At::Out => {
                if tt.ends_with("SEARCH")
                    && (tt.starts_with("<<<<<<<") || tt.starts_with("-------"))
                {
                    at = At::Search;
                    old.clear();
                    new.clear();
                    search_started = false;
                }
            }
            At::Search => {
                if tt == "=======" {
                    at = At::Replace;
                } else if !search_started
                    && (tt.starts_with(":start_line:") || tt.starts_with(":end_line:"))
                {
                } else if !search_started && tt == "-------" {
                    search_started = true;
                } else {
                    search_started = true;
                    old.push_str(line);
                }
            }
            At::Replace => {
                if tt.ends_with("REPLACE")
                    && (tt.starts_with(">>>>>>>") || tt.starts_with("+++++++"))
                {
                    out.push((std::mem::take(&mut old), std::mem::take(&mut new)));
                    at = At::Out;
                } else {
                    new.push_str(line);
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Building the diff

/// Returns the unified diff of `before` into `after` for `path` (`None`: the file did not
/// exist), and the lines added and removed.
///
/// Only the region between the lines both texts share at their start and at their end is
/// diffed (with three lines of context around it), and the hunk headers are moved by the lines
/// left out: the answer is the one a diff of the whole texts gives (Myers in `similar` strips
/// the same common lines first), at the cost of the edited region, not of the file.
pub fn unified(path: &str, before: Option<&str>, after: Option<&str>) -> (String, usize, usize) {
    let old = before.unwrap_or("");
    let new = after.unwrap_or("");
    if old == new {
        return (String::new(), 0, 0);
    }
    // `similar` compacts a diff by sliding its changes over equal lines around them; a change
    // that slid to the window's edge, or left less context than a hunk shows, might slide
    // further in the whole texts: then the window grows, up to the whole texts.
    let mut margin = CONTEXT;
    loop {
        let w = window(old.as_bytes(), new.as_bytes(), margin);
        let (old_w, new_w) = (&old[w.start..w.old_end], &new[w.start..w.new_end]);
        let diff = TextDiff::from_lines(old_w, new_w);
        let equal_at_least =
            |op: Option<&DiffOp>| matches!(op, Some(DiffOp::Equal { len, .. }) if *len >= CONTEXT);
        let head_ok = w.start == 0 || equal_at_least(diff.ops().first());
        let tail_ok = w.old_end == old.len() || equal_at_least(diff.ops().last());
        if !(head_ok && tail_ok) {
            margin = margin.saturating_mul(8);
            continue;
        }
        let (text, added, removed) = render(&diff, path, before.is_some(), after.is_some());
        if w.lines_before == 0 {
            return (text, added, removed);
        }
        let mut out = String::with_capacity(text.len() + 16);
        for line in text.split_inclusive('\n') {
            match shift_hunk_header(line, w.lines_before) {
                Some(h) => out.push_str(&h),
                None => out.push_str(line),
            }
        }
        return (out, added, removed);
    }
}

/// The diff of two whole texts, as `similar` makes it: what [`unified`] answered before it
/// windowed (the tests compare the two).
#[cfg(test)]
fn unified_whole(path: &str, before: Option<&str>, after: Option<&str>) -> (String, usize, usize) {
    let diff = TextDiff::from_lines(before.unwrap_or(""), after.unwrap_or(""));
    render(&diff, path, before.is_some(), after.is_some())
}

/// A line diff as unified text (`/dev/null` for a side that did not exist), with the lines
/// added and removed.
fn render<'a>(
    diff: &'a TextDiff<'a, 'a, 'a, str>,
    path: &str,
    had_before: bool,
    has_after: bool,
) -> (String, usize, usize) {
    let (mut added, mut removed) = (0, 0);
    for c in diff.iter_all_changes() {
        match c.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    if added == 0 && removed == 0 {
        return (String::new(), 0, 0);
    }
    let a = if had_before {
        format!("a/{}", path.trim_start_matches('/'))
    } else {
        "/dev/null".to_string()
    };
    let b = if has_after {
        format!("b/{}", path.trim_start_matches('/'))
    } else {
        "/dev/null".to_string()
    };
    let text = diff
        .unified_diff()
        .context_radius(CONTEXT)
        .header(&a, &b)
        .to_string();
    (text, added, removed)
}

/// Lines of context around each hunk.
const CONTEXT: usize = 3;

/// The part of two texts a line diff has to look at: from `CONTEXT` lines before the first
/// line that differs to `CONTEXT` lines after the last, in bytes, and how many lines come before.
struct Window {
    start: usize,
    old_end: usize,
    new_end: usize,
    lines_before: usize,
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 64;
    let n = a.len().min(b.len());
    let mut i = 0;
    // Chunks compare with `memcmp`; the last bytes one by one.
    while i + CHUNK <= n && a[i..i + CHUNK] == b[i..i + CHUNK] {
        i += CHUNK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 64;
    let n = a.len().min(b.len());
    let (la, lb) = (a.len(), b.len());
    let mut i = 0;
    while i + CHUNK <= n && a[la - i - CHUNK..la - i] == b[lb - i - CHUNK..lb - i] {
        i += CHUNK;
    }
    while i < n && a[la - i - 1] == b[lb - i - 1] {
        i += 1;
    }
    i
}

fn count_newlines(b: &[u8]) -> usize {
    b.iter().filter(|&&c| c == b'\n').count()
}

/// Finds the lines two different texts share at their start and then at their end (as line
/// tokens, a line being its text and its `\n`), from byte comparisons.
fn window(old: &[u8], new: &[u8], margin: usize) -> Window {
    // Lines wholly inside the common bytes at the start are common lines.
    let prefix = common_prefix(old, new);
    let boundary = old[..prefix]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    let (old_rest, new_rest) = (&old[boundary..], &new[boundary..]);
    // At the end: the longest common byte suffix that starts a line in both texts.
    let suffix = common_suffix(old_rest, new_rest);
    let starts_line = |r: &[u8], k: usize| k == r.len() || r[r.len() - k - 1] == b'\n';
    let shared_end = if starts_line(old_rest, suffix) && starts_line(new_rest, suffix) {
        suffix
    } else {
        let region = &old_rest[old_rest.len() - suffix..];
        match region.iter().position(|&c| c == b'\n') {
            Some(q) => suffix - q - 1,
            None => 0,
        }
    };
    let suffix_lines = {
        let tail = &old[old.len() - shared_end..];
        count_newlines(tail) + usize::from(!tail.is_empty() && !tail.ends_with(b"\n"))
    };
    // `margin` lines before the first differing line...
    let mut start = boundary;
    for _ in 0..margin {
        if start == 0 {
            break;
        }
        start = old[..start - 1]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
    }
    // ... and after the last.
    let old_suffix_start = old.len() - shared_end;
    let mut end = old_suffix_start;
    for _ in 0..margin.min(suffix_lines) {
        end = old[end..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(old.len(), |i| end + i + 1);
    }
    Window {
        start,
        old_end: end,
        new_end: new.len() - shared_end + (end - old_suffix_start),
        lines_before: count_newlines(&old[..start]),
    }
}

/// Moves a hunk header (`@@ -A[,B] +C[,D] @@`) down by `by` lines; `None` for other lines.
fn shift_hunk_header(line: &str, by: usize) -> Option<String> {
    let body = line.strip_prefix("@@ -")?;
    let (inner, rest) = body.split_once(" @@")?;
    let (old, new) = inner.split_once(" +")?;
    let shift = |r: &str| -> Option<String> {
        let (start, len) = match r.split_once(',') {
            Some((s, l)) => (s, Some(l)),
            None => (r, None),
        };
        let start: usize = start.parse().ok()?;
        Some(match len {
            Some(l) => format!("{},{l}", start + by),
            None => format!("{}", start + by),
        })
    };
    Some(format!("@@ -{} +{} @@{rest}", shift(old)?, shift(new)?))
}

/// What is known of a file's content while the calls are replayed.
#[derive(Clone)]
enum Known {
    /// Not recorded.
    Unknown,
    /// The file did not exist.
    Absent,
    Text(String),
    /// (As the state after a change:) the change's new text.
    After,
}

fn with_newline(s: &str) -> String {
    if s.is_empty() || s.ends_with('\n') {
        s.to_string()
    } else {
        format!("{s}\n")
    }
}

/// Builds what a session changed from its edit calls (in any order: sorted by `seq`) and its
/// snapshots.
pub fn build(calls: &[EditCall], snapshots: &[FileSnapshot]) -> SessionDiff {
    build_inner(calls, snapshots, None)
}

/// [`build`] then [`SessionDiff::only_turn`], without diffing the changes of other turns
/// (every earlier edit is still applied: a turn's edits apply to the content they left).
pub fn build_turn(calls: &[EditCall], snapshots: &[FileSnapshot], turn: u32) -> SessionDiff {
    build_inner(calls, snapshots, Some(turn)).only_turn(turn)
}

fn build_inner(calls: &[EditCall], snapshots: &[FileSnapshot], only: Option<u32>) -> SessionDiff {
    let mut b = Builder {
        only,
        ..Builder::default()
    };
    b.snapshots(snapshots);
    let mut calls: Vec<&EditCall> = calls.iter().filter(|c| !c.failed).collect();
    calls.sort_by_key(|c| c.seq);
    for call in calls {
        for edit in edits_of(&call.tool_name, &call.input) {
            b.edit(call, edit);
        }
    }
    b.finish()
}

/// A session's changes being gathered: first from its snapshots (exact), then from its edit
/// calls for the turns the snapshots do not cover.
#[derive(Default)]
struct Builder {
    /// Only this turn's changes are diffed (the others are applied).
    only: Option<u32>,
    /// Paths in the order first changed.
    order: Vec<String>,
    listed: std::collections::HashSet<String>,
    /// Per path: (order key, change).
    changes: HashMap<String, Vec<(i64, FileChange)>>,
    /// Per path: its content as far as it is known.
    known: HashMap<String, Known>,
    /// Per path: snapshots cover turns before this one (None: every turn).
    covered: HashMap<String, Option<u32>>,
}

/// What one edit did: the content before and after, whether that is exact, the kind of
/// change, the file's state after it and where it moved to.
struct Applied {
    before: Option<String>,
    after: Option<String>,
    exact: bool,
    kind: ChangeKind,
    next: Known,
    renamed: Option<String>,
}

impl Builder {
    fn list(&mut self, path: &str) {
        if self.listed.insert(path.to_string()) {
            self.order.push(path.to_string());
        }
    }

    /// The changes between consecutive snapshots of each file.
    fn snapshots(&mut self, snapshots: &[FileSnapshot]) {
        let mut snaps: Vec<&FileSnapshot> = snapshots.iter().collect();
        snaps.sort_by(|a, b| a.path.cmp(&b.path).then(a.version.cmp(&b.version)));
        let mut by_path: Vec<(String, Vec<&FileSnapshot>)> = Vec::new();
        for s in snaps {
            match by_path.last_mut() {
                Some((p, v)) if *p == s.path => v.push(s),
                _ => by_path.push((s.path.clone(), vec![s])),
            }
        }
        for (path, list) in &by_path {
            for pair in list.windows(2) {
                self.snapshot_pair(path, pair[0], pair[1]);
            }
            if let Some(last) = list.last() {
                self.covered.insert(path.clone(), last.turn_index);
                self.known.insert(
                    path.clone(),
                    match &last.content {
                        Some(t) => Known::Text(t.clone()),
                        None => Known::Absent,
                    },
                );
            }
        }
    }

    fn snapshot_pair(&mut self, path: &str, a: &FileSnapshot, b: &FileSnapshot) {
        if a.content == b.content {
            return;
        }
        self.list(path);
        if self.only.is_some_and(|t| a.turn_index != Some(t)) {
            return;
        }
        let (diff, added, removed) = unified(path, a.content.as_deref(), b.content.as_deref());
        let kind = match (&a.content, &b.content) {
            (None, _) => ChangeKind::Created,
            (_, None) => ChangeKind::Deleted,
            _ => ChangeKind::Modified,
        };
        let key = i64::from(a.turn_index.unwrap_or(u32::MAX)) * 1_000_000 - 1;
        self.changes.entry(path.to_string()).or_default().push((
            key,
            FileChange {
                turn: a.turn_index,
                source: a.origin.clone(),
                kind,
                exact: true,
                timestamp: b.taken_at.clone().or_else(|| a.taken_at.clone()),
                diff,
                added,
                removed,
                renamed_to: None,
            },
        ));
    }

    /// One edit of a call, unless snapshots cover its turn.
    fn edit(&mut self, call: &EditCall, edit: Edit) {
        let path = edit.path.clone();
        if let Some(cover) = self.covered.get(&path) {
            match (cover, call.turn) {
                (None, _) => return,
                (Some(c), Some(t)) if t < *c => return,
                _ => {}
            }
        }
        let state = self.known.remove(&path).unwrap_or(Known::Unknown);
        let Applied {
            before,
            after,
            exact,
            kind,
            next,
            renamed,
        } = apply(edit.op, state, &mut self.known);
        let skip = self.only.is_some_and(|t| call.turn != Some(t));
        let differs = before.as_deref().unwrap_or("") != after.as_deref().unwrap_or("");
        let (diff, added, removed) = if kind == ChangeKind::Renamed || skip {
            (String::new(), 0, 0)
        } else {
            unified(&path, before.as_deref(), after.as_deref())
        };
        let next = match next {
            Known::After => after.map_or(Known::Absent, Known::Text),
            other => other,
        };
        self.known.insert(path.clone(), next);
        // A delete of a file whose content is unknown still says it happened. (A change
        // of another turn is not diffed: it counts where the diff would not be empty.)
        let recorded = matches!(kind, ChangeKind::Renamed | ChangeKind::Deleted)
            || if skip { differs } else { !diff.is_empty() };
        if !recorded {
            return;
        }
        self.list(&path);
        if skip {
            return;
        }
        self.changes.entry(path).or_default().push((
            i64::from(call.turn.unwrap_or(u32::MAX)) * 1_000_000 + call.seq.clamp(0, 999_999),
            FileChange {
                turn: call.turn,
                source: call.tool_name.clone(),
                kind,
                exact,
                timestamp: call.timestamp.clone(),
                diff,
                added,
                removed,
                renamed_to: renamed,
            },
        ));
    }

    fn finish(mut self) -> SessionDiff {
        let mut out = SessionDiff::default();
        for path in self.order {
            let mut list = self.changes.remove(&path).unwrap_or_default();
            list.sort_by_key(|(k, _)| *k);
            out.files.push(FileDiff {
                path,
                changes: list.into_iter().map(|(_, c)| c).collect(),
                added: 0,
                removed: 0,
            });
        }
        out.recount();
        out
    }
}

/// Applies one edit to a file in `state` (a move also makes the new path's state).
fn apply(op: Op, state: Known, known: &mut HashMap<String, Known>) -> Applied {
    let applied = |before, after, exact, kind, next| Applied {
        before,
        after,
        exact,
        kind,
        next,
        renamed: None,
    };
    match op {
        Op::Create(content) => {
            let before = match state {
                Known::Text(t) => Some(t),
                _ => None,
            };
            let kind = if before.is_some() {
                ChangeKind::Modified
            } else {
                ChangeKind::Created
            };
            applied(before, Some(content), true, kind, Known::After)
        }
        Op::Write(content) => {
            let (before, exact, kind) = match state {
                Known::Text(t) => (Some(t), true, ChangeKind::Modified),
                Known::Absent => (None, true, ChangeKind::Created),
                // A whole-file write whose previous content is not recorded: all of
                // it is shown as added.
                Known::Unknown | Known::After => (None, false, ChangeKind::Created),
            };
            applied(before, Some(content), exact, kind, Known::After)
        }
        Op::Replace { old, new, all } => match state {
            Known::Text(t) if !old.is_empty() && t.contains(&old) => {
                let after = if all {
                    t.replace(&old, &new)
                } else {
                    t.replacen(&old, &new, 1)
                };
                applied(
                    Some(t),
                    Some(after),
                    true,
                    ChangeKind::Modified,
                    Known::After,
                )
            }
            Known::Absent if old.is_empty() => {
                applied(None, Some(new), true, ChangeKind::Created, Known::After)
            }
            _ => applied(
                Some(with_newline(&old)),
                Some(with_newline(&new)),
                false,
                ChangeKind::Modified,
                Known::Unknown,
            ),
        },
        Op::Fragment(code) => applied(
            Some(String::new()),
            Some(with_newline(&code)),
            false,
            ChangeKind::Modified,
            Known::Unknown,
        ),
        Op::Delete => {
            let exact = matches!(state, Known::Text(_));
            let before = match state {
                Known::Text(t) => Some(t),
                _ => None,
            };
            applied(before, None, exact, ChangeKind::Deleted, Known::Absent)
        }
        Op::Move(to) => {
            known.insert(to.clone(), state);
            Applied {
                renamed: Some(to),
                ..applied(None, None, true, ChangeKind::Renamed, Known::Absent)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(seq: i64, tool: &str, input: Value, turn: u32) -> EditCall {
        EditCall {
            seq,
            tool_name: tool.into(),
            input: input.to_string(),
            turn: Some(turn),
            ..EditCall::default()
        }
    }

    #[test]
    fn claude_write_then_edit_is_exact() {
        let calls = [
            call(
                1,
                "Write",
                serde_json::json!({"file_path": "/p/a.txt", "content": "one\ntwo\nthree\n"}),
                0,
            ),
            call(
                2,
                "Edit",
                serde_json::json!({"file_path": "/p/a.txt", "old_string": "two", "new_string": "2"}),
                1,
            ),
        ];
        let d = build(&calls, &[]);
        assert_eq!(d.files.len(), 1);
        let f = &d.files[0];
        assert_eq!(f.changes.len(), 2);
        assert_eq!(f.changes[0].kind, ChangeKind::Created);
        assert!(
            !f.changes[0].exact,
            "the file's earlier content is not known"
        );
        assert_eq!(
            f.changes[1].diff,
            "--- a/p/a.txt\n+++ b/p/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
        );
        assert!(f.changes[1].exact);
        assert_eq!((d.added, d.removed), (4, 1));
        let t1 = d.clone().only_turn(1);
        assert_eq!(t1.files[0].changes.len(), 1);
        assert!(d.for_path("a.txt").is_some());
        assert!(d.for_path("/elsewhere/b.txt").is_none());
    }

    #[test]
    fn the_edit_tools_of_issue_42s_agents_are_read() {
        // Mistral Vibe `edit`, Hermes `patch`: the common replace shape.
        let vibe = edits_of(
            "edit",
            r#"{"file_path": "/w/a.rs", "old_string": "a - b", "new_string": "a + b"}"#,
        );
        assert_eq!(vibe.len(), 1);
        // Kiro CLI `write`: create, and `strReplace` with oldStr/newStr.
        let create = edits_of(
            "write",
            r#"{"command": "create", "path": "h.txt", "content": "hi"}"#,
        );
        assert!(matches!(&create[0].op, Op::Write(c) if c == "hi"));
        let kiro = edits_of(
            "write",
            r#"{"command": "strReplace", "path": "h.txt", "oldStr": "hi", "newStr": "ho"}"#,
        );
        assert!(matches!(&kiro[0].op, Op::Replace { old, new, .. } if old == "hi" && new == "ho"));
        let q = edits_of(
            "fs_write",
            r#"{"command": "create", "path": "q.txt", "file_text": "x"}"#,
        );
        assert!(matches!(&q[0].op, Op::Write(c) if c == "x"));
        // Antigravity `write_to_file` and `replace_file_content`.
        let ag = edits_of(
            "write_to_file",
            r#"{"TargetFile": "/w/m.go", "CodeContent": "package m"}"#,
        );
        assert_eq!(ag[0].path, "/w/m.go");
        let agr = edits_of(
            "replace_file_content",
            r#"{"TargetFile": "/w/m.go", "TargetContent": "m", "ReplacementContent": "n"}"#,
        );
        assert!(matches!(&agr[0].op, Op::Replace { old, .. } if old == "m"));
    }

    #[test]
    fn failed_edits_are_skipped() {
        let mut c = call(
            1,
            "Edit",
            serde_json::json!({"file_path": "a", "old_string": "x", "new_string": "y"}),
            0,
        );
        c.failed = true;
        assert!(build(&[c], &[]).files.is_empty());
    }

    #[test]
    fn patches_are_normalised() {
        let patch = "*** Begin Patch\n*** Add File: new.txt\n+hello\n+world\n*** Update File: src/a.rs\n@@ fn main\n fn main() {\n-    old();\n+    new();\n }\n*** Delete File: gone.txt\n*** End Patch\n";
        let edits = parse_patch(patch);
        assert_eq!(edits.len(), 3);
        assert_eq!(edits[0].op, Op::Create("hello\nworld\n".into()));
        assert_eq!(
            edits[1].op,
            Op::Replace {
                old: "fn main() {\n    old();\n}\n".into(),
                new: "fn main() {\n    new();\n}\n".into(),
                all: false
            }
        );
        assert_eq!(edits[2].op, Op::Delete);
        // In a shell command's arguments, as Codex writes it.
        let input = serde_json::json!({"command": ["apply_patch", patch]}).to_string();
        assert_eq!(edits_of("shell", &input).len(), 3);
    }

    #[test]
    fn search_replace_blocks_of_cline_and_roo() {
        let cline = "------- SEARCH\na\nb\n=======\na\nB\n+++++++ REPLACE\n";
        assert_eq!(
            search_replace_blocks(cline),
            vec![("a\nb\n".to_string(), "a\nB\n".to_string())]
        );
        let roo = "<<<<<<< SEARCH\n:start_line:3\n-------\nx\n=======\ny\n>>>>>>> REPLACE";
        assert_eq!(
            search_replace_blocks(roo),
            vec![("x\n".to_string(), "y\n".to_string())]
        );
    }

    #[test]
    fn snapshots_win_for_the_turns_they_cover() {
        let snap = |v: u32, turn: Option<u32>, c: &str| FileSnapshot {
            path: "/p/f.txt".into(),
            version: v,
            turn_index: turn,
            content: Some(c.into()),
            taken_at: None,
            origin: "claude-file-history".into(),
        };
        let snaps = [snap(1, Some(0), "a\n"), snap(2, Some(1), "b\n")];
        let calls = [
            // Covered by the snapshots (turn 0): not shown twice.
            call(
                1,
                "Edit",
                serde_json::json!({"file_path": "/p/f.txt", "old_string": "a", "new_string": "b"}),
                0,
            ),
            // After the last snapshot: applied to its content, exactly.
            call(
                2,
                "Edit",
                serde_json::json!({"file_path": "/p/f.txt", "old_string": "b", "new_string": "c"}),
                1,
            ),
        ];
        let d = build(&calls, &snaps);
        let f = &d.files[0];
        assert_eq!(f.changes.len(), 2);
        assert_eq!(f.changes[0].source, "claude-file-history");
        assert_eq!(
            f.changes[0].diff,
            "--- a/p/f.txt\n+++ b/p/f.txt\n@@ -1 +1 @@\n-a\n+b\n"
        );
        assert_eq!(f.changes[1].source, "Edit");
        assert!(f.changes[1].exact);
        assert_eq!(
            f.changes[1].diff,
            "--- a/p/f.txt\n+++ b/p/f.txt\n@@ -1 +1 @@\n-b\n+c\n"
        );
    }

    #[test]
    fn aider_edit_blocks() {
        let c = call(
            1,
            "aider_edit",
            serde_json::json!({"file": "hello.py", "search": "print('hi')\n", "replace": "print('hello')\n"}),
            0,
        );
        let d = build(&[c], &[]);
        assert_eq!(
            d.files[0].changes[0].diff,
            "--- a/hello.py\n+++ b/hello.py\n@@ -1 +1 @@\n-print('hi')\n+print('hello')\n"
        );
        assert!(!d.files[0].changes[0].exact);
    }

    /// Random texts of few distinct lines (so Myers has choices to make), with or without a
    /// last newline.
    fn text_strategy() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        (
            proptest::collection::vec(
                prop_oneof![Just("a"), Just("b"), Just(""), Just("c d"), Just("é")],
                0..40,
            ),
            any::<bool>(),
        )
            .prop_map(|(lines, last_newline)| {
                let mut s = lines.join("\n");
                if last_newline && !s.is_empty() {
                    s.push('\n');
                }
                s
            })
    }

    /// Edits of a text: replace lines `at..at+del` by `ins`.
    fn apply_line_edits(text: &str, edits: &[(usize, usize, Vec<String>)]) -> String {
        let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
        for (at, del, ins) in edits {
            let at = (*at).min(lines.len());
            let del = (*del).min(lines.len() - at);
            lines.splice(at..at + del, ins.iter().map(|l| format!("{l}\n")));
        }
        lines.concat()
    }

    #[test]
    fn windowed_diffs_match_whole_diffs_on_edge_cases() {
        let cases = [
            ("", "a\n"),
            ("a\n", ""),
            ("a", "a\n"),
            ("a\nb", "a\nb\nc"),
            ("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\nd\nX\nf\ng\nh\n"),
            ("a\na\na\na\na\n", "a\na\na\na\na\na\n"),
            ("x\nb\n", "b\n"),
            ("b\n", "x\nb\n"),
            (
                "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
                "1\n2\nX\n4\n5\n6\n7\n8\n9\nY\n11\n12\n",
            ),
        ];
        for (a, b) in cases {
            for (before, after) in [(Some(a), Some(b)), (None, Some(b)), (Some(a), None)] {
                assert_eq!(
                    unified("p", before, after),
                    unified_whole("p", before, after),
                    "{before:?} -> {after:?}"
                );
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// The windowed diff is byte for byte the diff of the whole texts, for any two texts.
        #[test]
        fn windowed_diff_is_the_whole_diff(a in text_strategy(), b in text_strategy(), absent in 0u8..4) {
            let before = (absent != 1).then_some(a.as_str());
            let after = (absent != 2).then_some(b.as_str());
            proptest::prop_assert_eq!(unified("x/y.rs", before, after), unified_whole("x/y.rs", before, after));
        }

        /// One turn's diff is the whole diff kept to that turn.
        #[test]
        fn a_turn_alone_is_the_whole_diff_kept_to_it(
            steps in proptest::collection::vec((0u32..4, 0usize..2, 0usize..3, "[ab]{1,2}", "[abx]{0,2}"), 1..20),
            turn in 0u32..4,
        ) {
            let files = ["/p/one.txt", "/p/two.txt"];
            let mut calls = vec![];
            for (i, (t, f, what, old, new)) in steps.iter().enumerate() {
                let input = match what {
                    0 => serde_json::json!({"file_path": files[*f], "content": "a\nb\na\nb\n"}),
                    _ => serde_json::json!({"file_path": files[*f], "old_string": old, "new_string": new, "replace_all": *what == 2}),
                };
                let tool = if *what == 0 { "Write" } else { "Edit" };
                calls.push(EditCall { seq: i as i64, tool_name: tool.into(), input: input.to_string(), turn: Some(*t), ..EditCall::default() });
            }
            proptest::prop_assert_eq!(build_turn(&calls, &[], turn), build(&calls, &[]).only_turn(turn));
        }

        /// ... and for a sequence of edits of one text, as a session replays them.
        #[test]
        fn windowed_diff_is_the_whole_diff_along_an_edit_sequence(
            start in text_strategy(),
            steps in proptest::collection::vec(
                proptest::collection::vec((0usize..45, 0usize..4, proptest::collection::vec(proptest::prelude::prop_oneof![proptest::strategy::Just("a".to_string()), proptest::strategy::Just("b".to_string()), proptest::strategy::Just(String::new())], 0..4)), 1..3),
                1..12),
        ) {
            let mut text = start;
            for step in &steps {
                let next = apply_line_edits(&text, step);
                proptest::prop_assert_eq!(unified("f", Some(&text), Some(&next)), unified_whole("f", Some(&text), Some(&next)));
                text = next;
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_any_input(tool in "[A-Za-z_]{0,12}", input in ".{0,400}") {
            let _ = edits_of(&tool, &input);
            let _ = parse_patch(&input);
            let _ = search_replace_blocks(&input);
            let _ = build(&[EditCall { seq: 0, tool_name: tool, input, turn: Some(0), ..EditCall::default() }], &[]);
        }

        #[test]
        fn applying_the_diff_of_a_replacement_gives_the_new_text(
            lines in proptest::collection::vec("[a-c]{0,3}", 0..8),
            pick in 0usize..8,
            repl in "[x-z]{1,3}",
        ) {
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            let old = lines.get(pick).cloned().unwrap_or_default();
            proptest::prop_assume!(!old.is_empty());
            let calls = [
                EditCall { seq: 0, tool_name: "Write".into(), input: serde_json::json!({"file_path": "f", "content": text}).to_string(), turn: Some(0), ..EditCall::default() },
                EditCall { seq: 1, tool_name: "Edit".into(), input: serde_json::json!({"file_path": "f", "old_string": old, "new_string": repl}).to_string(), turn: Some(1), ..EditCall::default() },
            ];
            let d = build(&calls, &[]);
            let last = d.files[0].changes.last().unwrap();
            proptest::prop_assert!(last.exact);
            proptest::prop_assert!(last.added >= 1 && last.removed >= 1);
        }
    }
}
