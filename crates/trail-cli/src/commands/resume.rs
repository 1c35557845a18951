//! `trail resume ID`: the command that reopens a session in its own agent, in its folder;
//! `--exec` runs it.

use std::path::Path;
use std::process::Command;

use crate::commands::open_query;
use crate::error::{CliError, CliResult};
use crate::Ctx;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Session id (a unique prefix is enough); a subagent resumes its parent
    id: String,
    /// Run the command (in the session's folder) instead of printing it
    #[arg(long)]
    exec: bool,
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let query = open_query(ctx)?;
    let reopen = query.reopen(&args.id)?;
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
