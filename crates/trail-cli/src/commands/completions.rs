//! `trail completions SHELL`: the shell's completion script for every command and flag, made
//! by clap_complete from the same definitions the parser uses, on stdout.

use std::io::Write;

use clap_complete::Shell;

use crate::error::CliResult;

/// Print the completion script for a shell (see the README for where it goes)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell: bash, zsh, fish, powershell or elvish
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Writes the script for `args.shell` of `command` (the whole `trail` command) to `out`.
///
/// Made in memory first: clap_complete panics when its writer fails, and a reader that stops
/// early (`trail completions bash | head`) is a closed pipe, which the caller treats as success.
pub fn write(args: &Args, command: &mut clap::Command, out: &mut dyn Write) -> CliResult<u8> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, command, "trail", &mut script);
    out.write_all(&script)?;
    out.flush()?;
    Ok(0)
}
