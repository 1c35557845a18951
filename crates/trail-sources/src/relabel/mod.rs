//! Agents that write a format trail reads already, under their own folders: each is a source
//! of its own (its name in `list`, `--source` filters, `usage --by source`), read by the
//! existing reader.
//!
//! - TraeX (TRAE CLI 2.0): Codex rollouts field for field (`originator` is even `codex-tui`),
//!   in `~/.trae/cli/sessions/YYYY/MM/DD/` and `~/.trae/cli/archived_sessions/`.
//! - OpenClaude (`Gitlawb/openclaude`, `src/utils/sessionStorage.ts`): Claude Code's JSONL in
//!   `~/.openclaude/projects/` (`OPENCLAUDE_CONFIG_DIR`).
//! - Claude Cowork (Claude desktop's agent mode): per-session folders
//!   `local-agent-mode-sessions/<account>/<workspace>/local_<session>/` whose
//!   `.claude/projects/` holds Claude Code's JSONL.
//!
//! A file given by path is told apart by the folder it sits in ([`Relabel::markers`]); Codex
//! and Claude Code leave such files to these sources ([`claimed`]). A TraeX rollout also says
//! so itself: its `session_meta` names the model provider `trae` (TRAE CLI's own; the corpus's
//! real rollout does), so one given by path outside `~/.trae` is TraeX's too ([`claimed_by`]).
//! OpenClaude's and Cowork's lines hold nothing that tells them from Claude Code's. Sessions
//! keep their UUID ids; the rare non-UUID id (`codex:<id>`) takes this source's prefix.

use std::path::{Path, PathBuf};

use trail_model::{SessionId, SourceKind};
use walkdir::WalkDir;

mod markers;

pub use markers::{claimed, claimed_by};

use crate::claude_code::ClaudeCode;
use crate::codex::Codex;
use crate::{FileParse, ParseRequest, Source, SourceError};

/// A format trail reads, under another agent's name.
pub struct Relabel {
    pub kind: SourceKind,
    /// The reader of the format.
    pub inner: &'static dyn Source,
    /// The reader's test of a file's content, without its test of the folder.
    pub detect_format: fn(&Path, &[u8]) -> bool,
    /// Folder names that mark this agent's files in a path given by the user.
    pub markers: &'static [&'static str],
    /// Whether the Claude Code JSONL sits in per-session `.claude/projects/` folders below the
    /// root (Cowork) rather than in `<root>/projects/`.
    pub nested_projects: bool,
    /// A test of a file's first bytes that marks it as this agent's wherever it lies.
    pub content_marker: Option<fn(&[u8]) -> bool>,
}

static CODEX: Codex = Codex;
static CLAUDE_CODE: ClaudeCode = ClaudeCode;

/// TraeX: Codex rollouts under `~/.trae/cli`.
pub const TRAEX: Relabel = Relabel {
    kind: SourceKind::Traex,
    inner: &CODEX,
    detect_format: crate::codex::detect_format,
    markers: markers::TRAEX,
    nested_projects: false,
    content_marker: Some(markers::is_trae_rollout),
};

/// OpenClaude: Claude Code JSONL under `~/.openclaude/projects`.
pub const OPENCLAUDE: Relabel = Relabel {
    kind: SourceKind::Openclaude,
    inner: &CLAUDE_CODE,
    detect_format: crate::claude_code::detect_format,
    markers: markers::OPENCLAUDE,
    nested_projects: false,
    content_marker: None,
};

/// Claude Cowork: Claude Code JSONL in per-session folders of `local-agent-mode-sessions`.
pub const CLAUDE_COWORK: Relabel = Relabel {
    kind: SourceKind::ClaudeCowork,
    inner: &CLAUDE_CODE,
    detect_format: crate::claude_code::detect_format,
    markers: markers::CLAUDE_COWORK,
    nested_projects: true,
    content_marker: None,
};

/// Every relabel.
pub const RELABELS: [Relabel; 3] = [TRAEX, OPENCLAUDE, CLAUDE_COWORK];

fn has_marker(r: &Relabel, path: &Path) -> bool {
    markers::has_marker(r.markers, path)
}

impl Source for Relabel {
    fn kind(&self) -> SourceKind {
        self.kind
    }

    fn parser_version(&self) -> u32 {
        self.inner.parser_version()
    }

    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        if !self.nested_projects {
            return self.inner.discover(roots);
        }
        let projects: Vec<PathBuf> = roots.iter().flat_map(|r| nested_projects(r)).collect();
        self.inner.discover(&projects)
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        let marked = has_marker(self, path) || self.content_marker.is_some_and(|m| m(head));
        marked && (self.detect_format)(path, head)
    }

    fn appendable(&self, path: &Path) -> bool {
        self.inner.appendable(path)
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        let mut fp = self.inner.parse(request)?;
        let from = format!("{}:", self.inner.kind().as_str());
        let to = format!("{}:", self.kind.as_str());
        let rename = |id: &mut SessionId| {
            if let Some(rest) = id.0.strip_prefix(&from) {
                *id = SessionId(format!("{to}{rest}"));
            }
        };
        for s in &mut fp.sessions {
            s.meta.source = self.kind;
            rename(&mut s.meta.id);
            if let Some(p) = &mut s.meta.parent {
                rename(&mut p.session_id);
            }
        }
        Ok(fp)
    }
}

/// The `.claude/projects` folders below a Cowork root (at most five levels down:
/// `<account>/<workspace>/local_<session>/.claude/projects`).
fn nested_projects(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = WalkDir::new(root)
        .follow_links(true)
        .max_depth(5)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_type().is_dir()
                && e.file_name() == "projects"
                && e.path()
                    .parent()
                    .and_then(Path::file_name)
                    .is_some_and(|n| n == ".claude")
        })
        .map(|e| e.into_path())
        .collect();
    out.sort();
    out
}
