//! `trail resume ID`: the command that reopens a session in its own agent, in its folder;
//! `--exec` runs it.

use std::path::Path;
use std::process::Command;

use trail_store::SessionRow;

use crate::commands::open_existing;
use crate::error::{CliError, CliResult};
use crate::util::shell_quote;
use crate::Ctx;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session id (a unique prefix is enough); a subagent resumes its parent
    id: String,
    /// Run the command (in the session's folder) instead of printing it
    #[arg(long)]
    exec: bool,
}

/// How to reopen a session: a program, its arguments and the folder to run it in.
#[derive(Debug, PartialEq)]
struct Reopen {
    program: &'static str,
    args: Vec<String>,
    cwd: Option<String>,
}

impl Reopen {
    fn shell(&self) -> String {
        let mut parts = vec![self.program.to_string()];
        parts.extend(self.args.iter().map(|a| shell_quote(a)));
        let cmd = parts.join(" ");
        match &self.cwd {
            Some(dir) => format!("cd {} && {cmd}", shell_quote(dir)),
            None => cmd,
        }
    }
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let store = open_existing(ctx)?;
    let mut id = store.resolve_session_id(&args.id)?;
    let mut row = store.session(&id)?;
    // A subagent cannot be resumed on its own: its parent holds the conversation.
    while let Some(parent) = row.parent_session_id.clone() {
        match store.session(&parent) {
            Ok(p) => {
                id = parent;
                row = p;
            }
            Err(_) => break,
        }
    }
    let native = store.native_id(&id)?;
    let reopen = reopen(&row, native.as_deref()).ok_or_else(|| {
        CliError::usage(format!(
            "{} sessions cannot be reopened from the command line ({id})",
            row.source
        ))
        .with_hint(format!("read it with `trail show {id}`"))
    })?;
    if !args.exec {
        ctx.ui.line(&reopen.shell())?;
        return Ok(0);
    }
    let mut cmd = Command::new(reopen.program);
    cmd.args(&reopen.args);
    if let Some(dir) = &reopen.cwd {
        if !Path::new(dir).is_dir() {
            return Err(CliError::usage(format!(
                "the session's folder {dir} does not exist any more"
            )));
        }
        cmd.current_dir(dir);
    }
    ctx.ui.flush()?;
    let status = cmd.status().map_err(|e| {
        CliError::from(anyhow::anyhow!("cannot run {}: {e}", reopen.program))
            .with_hint(format!("is {} installed and on PATH?", reopen.program))
    })?;
    Ok(status.code().unwrap_or(1).clamp(0, 255) as u8)
}

/// Returns how to reopen a session of this source, if its agent can.
fn reopen(row: &SessionRow, native: Option<&str>) -> Option<Reopen> {
    // The agent's own id: the native id, else the store id without a `<source>:` prefix.
    let own = native.map(str::to_string).unwrap_or_else(|| {
        row.id
            .strip_prefix(&format!("{}:", row.source))
            .unwrap_or(&row.id)
            .to_string()
    });
    let cwd = row.cwd.clone();
    let (program, args): (&'static str, Vec<String>) = match row.source.as_str() {
        "claude-code" => ("claude", vec!["--resume".into(), own]),
        "copilot-cli" => ("copilot", vec!["--resume".into(), own]),
        "codex" => ("codex", vec!["resume".into(), own]),
        "gemini-cli" => ("gemini", vec!["--resume".into(), own]),
        "opencode" => ("opencode", vec!["--session".into(), own]),
        // Chat panels reopen with their folder; the chat is in the panel's history.
        "copilot-vscode" | "vscode-export" => ("code", vec![cwd.clone()?]),
        "cursor" => ("cursor", vec![cwd.clone()?]),
        _ => return None,
    };
    Some(Reopen { program, args, cwd })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(source: &str, id: &str, cwd: Option<&str>) -> SessionRow {
        SessionRow {
            id: id.into(),
            source: source.into(),
            title: None,
            cwd: cwd.map(str::to_string),
            repository: None,
            branch: None,
            created_at: None,
            updated_at: None,
            turns: 0,
            messages: 0,
            input_tokens: 0,
            output_tokens: 0,
            cache_creation_tokens: 0,
            cache_read_tokens: 0,
            models: vec![],
            parent_session_id: None,
            parent_tool_call_id: None,
            agent_version: None,
            source_path: None,
            source_missing: false,
        }
    }

    #[test]
    fn each_agent_reopens_its_own_way() {
        let r = |s: &str, native: Option<&str>| {
            reopen(&row(s, "abc-1", Some("/home/me/my proj")), native).map(|r| r.shell())
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
            reopen(&row("opencode", "opencode:ses_1", None), None)
                .unwrap()
                .shell(),
            "opencode --session ses_1"
        );
        assert!(reopen(&row("vscode-export", "x", None), None).is_none());
    }
}
