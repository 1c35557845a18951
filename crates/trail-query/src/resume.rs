//! How to reopen a session in its own agent: the CLI's `resume`, the TUI's `r` key and the
//! MCP server share it.

use serde::Serialize;
use trail_store::SessionRow;

use crate::{Query, QueryError, Result};

/// How to reopen a session: a program, its arguments and the folder to run it in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reopen {
    /// The session reopened (a subagent's root session).
    pub session_id: String,
    pub program: &'static str,
    pub args: Vec<String>,
    pub cwd: Option<String>,
}

impl Reopen {
    /// The command as one POSIX shell line (`cd DIR && PROGRAM ARGS`).
    pub fn shell(&self) -> String {
        let mut parts = vec![self.program.to_string()];
        parts.extend(self.args.iter().map(|a| shell_quote(a)));
        let cmd = parts.join(" ");
        match &self.cwd {
            Some(dir) => format!("cd {} && {cmd}", shell_quote(dir)),
            None => cmd,
        }
    }
}

impl Query {
    /// The command that reopens a session (a subagent reopens its root: its parent holds the
    /// conversation). A source whose agent cannot resume from a command line is an error that
    /// says how to read the session instead.
    pub fn reopen(&self, id_or_prefix: &str) -> Result<Reopen> {
        let store = self.reader(|| crate::Need::SessionTable)?;
        let mut id = store.resolve_session_id(id_or_prefix.trim())?;
        let mut row = store.session(&id)?;
        let mut seen = vec![id.clone()];
        while let Some(parent) = row.parent_session_id.clone() {
            // A link cycle (corrupt data) must not loop forever.
            if seen.contains(&parent) {
                break;
            }
            match store.find_session(&parent)? {
                Some(p) => {
                    seen.push(parent.clone());
                    id = parent;
                    row = p;
                }
                None => break,
            }
        }
        let native = store.native_id(&id)?;
        reopen_command(&row, native.as_deref())
            .ok_or_else(|| QueryError::Invalid(cannot_reopen(&row, &id)))
    }
}

/// Why a session has no command that reopens it: its agent has none (the registry's `resume`
/// is empty), or the agent reopens a session from its folder and this one recorded none.
fn cannot_reopen(row: &SessionRow, id: &str) -> String {
    let source = trail_sources::find(&row.source).map(trail_sources::info);
    let name = source.map_or(row.source.as_str(), |s| s.name);
    match source.and_then(|s| s.resume) {
        None => format!(
            "{name} has no command that reopens a session ({id}); read it with `trail show {id}`"
        ),
        Some(_) => format!(
            "{name} reopens a session from its folder, and {id} recorded none; read it with `trail show {id}`"
        ),
    }
}

/// Returns how to reopen a session of this source, if its agent can.
pub fn reopen_command(row: &SessionRow, native: Option<&str>) -> Option<Reopen> {
    // The agent's own id: the native id, else the store id without a `<source>:` prefix.
    let own = native.map(str::to_string).unwrap_or_else(|| {
        row.id
            .strip_prefix(&format!("{}:", row.source))
            .unwrap_or(&row.id)
            .to_string()
    });
    let cwd = row.cwd.clone();
    // The registry's template: `{id}` is the agent's own id, `{cwd}` the folder. One without
    // `{id}` finds the session by the folder it runs in, so it needs one.
    let template = trail_sources::info(trail_sources::find(&row.source)?).resume?;
    if !template.contains("{id}") {
        cwd.as_ref()?;
    }
    let mut words = template.split_whitespace();
    let program = words.next()?;
    let args = words
        .map(|w| {
            w.replace("{id}", &own)
                .replace("{cwd}", cwd.as_deref().unwrap_or(""))
        })
        .collect();
    Some(Reopen {
        session_id: row.id.to_string(),
        program,
        args,
        cwd,
    })
}

/// Quotes `s` for a POSIX shell when it needs it (`'it'\''s'`).
pub fn shell_quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(source: &str, id: &str, cwd: Option<&str>) -> SessionRow {
        SessionRow {
            id: id.into(),
            source: source.into(),
            cwd: cwd.map(str::to_string),
            ..SessionRow::default()
        }
    }

    #[test]
    fn each_agent_reopens_its_own_way() {
        let r = |s: &str, native: Option<&str>| {
            reopen_command(&row(s, "abc-1", Some("/home/me/my proj")), native).map(|r| r.shell())
        };
        assert_eq!(
            r("claude-code", Some("abc-1")).unwrap(),
            "cd '/home/me/my proj' && claude --resume abc-1"
        );
        assert_eq!(
            r("copilot-cli", None).unwrap(),
            "cd '/home/me/my proj' && copilot --resume abc-1"
        );
        assert_eq!(
            r("codex", Some("0199")).unwrap(),
            "cd '/home/me/my proj' && codex resume 0199"
        );
        assert_eq!(
            r("copilot-vscode", None).unwrap(),
            "cd '/home/me/my proj' && code '/home/me/my proj'"
        );
        assert_eq!(
            reopen_command(&row("opencode", "opencode:ses_1", None), None)
                .unwrap()
                .shell(),
            "opencode --session ses_1"
        );
        assert!(reopen_command(&row("vscode-export", "x", None), None).is_none());
        assert_eq!(
            r("aider", None).unwrap(),
            "cd '/home/me/my proj' && aider --restore-chat-history"
        );
        assert!(reopen_command(&row("aider", "x", None), None).is_none());
        assert_eq!(
            r("mistral-vibe", Some("3f0c2a9e")).unwrap(),
            "cd '/home/me/my proj' && vibe --resume 3f0c2a9e"
        );
        assert_eq!(
            r("kiro", Some("5b2f0a11")).unwrap(),
            "cd '/home/me/my proj' && kiro-cli chat --resume-id 5b2f0a11"
        );
        assert_eq!(
            reopen_command(
                &row("hermes", "hermes:20260501_093000_c0ffee01", None),
                None
            )
            .unwrap()
            .shell(),
            "hermes --resume 20260501_093000_c0ffee01"
        );
        // Antigravity and Visual Studio have no resume command.
        assert!(r("antigravity", None).is_none());
        assert!(r("visual-studio-copilot", None).is_none());
    }

    /// Issue 42's sources, each with the flag its own CLI takes (checked against each agent's
    /// source or reference: see the registry's notes).
    #[test]
    fn each_new_agent_reopens_with_its_own_flag() {
        let r = |s: &str, native: &str| {
            reopen_command(&row(s, "x", Some("/w")), Some(native)).map(|r| r.shell())
        };
        let cases = [
            ("pi", "0f1e", "pi --session 0f1e"),
            ("qwen-code", "0a0a", "qwen --resume 0a0a"),
            ("kimi", "7a7a", "kimi --session 7a7a"),
            ("droid", "3c3c", "droid --resume 3c3c"),
            ("iflow", "4d4d", "iflow --resume session-4d4d"),
            ("mistral-vibe", "3f0c", "vibe --resume 3f0c"),
            ("kiro", "5b2f", "kiro-cli chat --resume-id 5b2f"),
            ("hermes", "2026", "hermes --resume 2026"),
            ("crush", "c0ffee", "crush --session c0ffee"),
            (
                "goose",
                "20251108_1",
                "goose session --resume --session-id 20251108_1",
            ),
            ("grok", "019f", "grok --resume 019f"),
        ];
        for (source, native, want) in cases {
            assert_eq!(
                r(source, native).as_deref(),
                Some(format!("cd /w && {want}").as_str()),
                "{source}"
            );
        }
        for source in ["zed", "antigravity", "visual-studio-copilot"] {
            assert!(r(source, "x").is_none(), "{source}");
        }
    }

    #[test]
    fn an_agent_without_a_resume_command_is_named_in_the_refusal() {
        let msg = cannot_reopen(&row("zed", "zed:abc", None), "zed:abc");
        assert!(
            msg.starts_with("Zed has no command that reopens a session (zed:abc)"),
            "{msg}"
        );
        let msg = cannot_reopen(&row("aider", "aider:abc", None), "aider:abc");
        assert!(msg.contains("from its folder"), "{msg}");
    }

    #[test]
    fn every_registry_template_reopens_its_sessions() {
        for s in trail_sources::sources() {
            let r = row(s.id(), &format!("{}:abc", s.id()), Some("/w"));
            let reopen = reopen_command(&r, Some("abc"));
            assert_eq!(reopen.is_some(), s.resume.is_some(), "{}", s.id());
            if let (Some(reopen), Some(t)) = (reopen, s.resume) {
                assert!(t.starts_with(reopen.program), "{t}");
                assert!(!reopen.args.iter().any(|a| a.contains('{')), "{t}");
            }
        }
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(shell_quote("abc-1.rs"), "abc-1.rs");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
