//! `trail resume ID`: the command that reopens a session in its own agent, in its folder;
//! `--exec` runs it. `trail resume ID --in AGENT` first writes the session as a new session of
//! another agent (`trail-continue`), then prints (or runs) that agent's resume command.

use std::path::{Path, PathBuf};
use std::process::Command;

use trail_continue::{ContinueOptions, Target};
use trail_query::Reopen;
use trail_render::Redactor;

use crate::commands::open_query;
use crate::config;
use crate::error::{CliError, CliResult};
use crate::Ctx;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session id (a unique prefix is enough); a subagent resumes its parent
    id: String,
    /// Continue the session in this agent instead: claude-code, codex or gemini-cli (written as a new session in its folder)
    #[arg(long = "in", value_name = "AGENT", value_parser = parse_target)]
    into: Option<Target>,
    /// With --in: write a new continuation even if one was written before
    #[arg(long, requires = "into")]
    fresh: bool,
    /// With --in: do not redact secrets in what is written
    #[arg(long, requires = "into")]
    no_redact: bool,
    /// With --in: bytes of one tool output kept (the rest is cut with a marker)
    #[arg(long, requires = "into", value_name = "BYTES", default_value_t = trail_continue::DEFAULT_TOOL_OUTPUT_CAP)]
    max_tool_output: usize,
    /// With --in: the folder to continue in when the session recorded none (VS Code chats)
    #[arg(long, requires = "into", value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Print what was done as JSON (with --in: the file, the new id and the command)
    #[arg(long, conflicts_with = "exec")]
    json: bool,
    /// Run the command (in the session's folder) instead of printing it
    #[arg(long)]
    exec: bool,
}

fn parse_target(s: &str) -> Result<Target, String> {
    s.parse::<Target>().map_err(|e| e.to_string())
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let query = open_query(ctx)?;
    let reopen = match args.into {
        None => {
            let reopen = query.reopen(&args.id)?;
            if args.json {
                ctx.ui.json(&reopen)?;
                return Ok(0);
            }
            reopen
        }
        Some(target) => {
            let mut options =
                ContinueOptions::new(config::continue_homes(&ctx.env, ctx.home.as_deref()))?;
            options.fresh = args.fresh;
            options.cwd = args.cwd.as_ref().map(|d| absolute(d)).transpose()?;
            options.tool_output_cap = args.max_tool_output.max(1);
            if args.no_redact {
                options.redactor = Redactor::disabled();
            }
            let c = trail_continue::continue_session(&query, &args.id, target, &options)?;
            if args.json {
                let shell = c.command.shell();
                ctx.ui.json(&serde_json::json!({
                    "original_id": c.original_id,
                    "original_source": c.original_source,
                    "target": c.target,
                    "session_id": c.session_id,
                    "path": c.path,
                    "created": c.created,
                    "command": c.command,
                    "shell": shell,
                    "carried": c.carried,
                }))?;
                return Ok(0);
            }
            let what = if c.created {
                "Wrote"
            } else {
                "Found the continuation written before:"
            };
            let redacted = if c.carried.redactions > 0 {
                format!(", {} secrets redacted", c.carried.redactions)
            } else {
                String::new()
            };
            ctx.ui.status(&format!(
                "{what} {} ({} prompts, {} answers, {} tool calls{redacted}).",
                c.path.display(),
                c.carried.prompts,
                c.carried.answers,
                c.carried.tool_calls
            ));
            c.command
        }
    };
    if !args.exec {
        ctx.ui.line(&reopen.shell())?;
        return Ok(0);
    }
    exec(ctx, &reopen)
}

fn exec(ctx: &mut Ctx, reopen: &Reopen) -> CliResult<u8> {
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

/// An absolute form of a folder given on the command line (agents key sessions by it).
fn absolute(dir: &Path) -> CliResult<String> {
    let abs = std::path::absolute(dir)
        .map_err(|e| CliError::usage(format!("cannot use --cwd {}: {e}", dir.display())))?;
    Ok(abs.to_string_lossy().into_owned())
}
