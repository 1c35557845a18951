//! `trail why PATH[:LINE]`: the sessions and turns that read, edited or created a file, newest
//! first; with `:LINE`, the session behind that line (through `git blame`).

use trail_query::{FileHistoryRequest, FileTouchRow, Why, WhyVerdict};

use crate::commands::open_query;
use crate::error::CliResult;
use crate::output::{self, fit, Style};
use crate::Ctx;

/// Characters of a turn's prompt shown on a line.
const PROMPT_CHARS: usize = 90;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The file (absolute, or relative to this folder), optionally `:LINE`
    #[arg(value_name = "PATH[:LINE]")]
    target: String,
    /// The repository (owner/name) a path relative to its root belongs to
    #[arg(long)]
    repo: Option<String>,
    /// At most this many turns
    #[arg(long, default_value_t = 50)]
    limit: usize,
    /// Print {history, blame, verdict} as JSON (see docs/json.md)
    #[arg(long)]
    json: bool,
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let (path, line) = split_line(&args.target);
    let query = open_query(ctx)?;
    let base_dir = std::env::current_dir()
        .ok()
        .map(|d| d.to_string_lossy().into_owned());
    let why = query.why(
        &FileHistoryRequest {
            path: path.to_string(),
            repo: args.repo.clone(),
            base_dir,
            limit: args.limit,
        },
        line,
    )?;
    if args.json {
        ctx.ui.json(&why)?;
        return Ok(if why.history.touches.is_empty() { 1 } else { 0 });
    }
    print(ctx, &why, path)?;
    if why.history.touches.is_empty() {
        return Ok(1);
    }
    Ok(0)
}

/// Splits `src/lib.rs:42` into the path and the line; a path whose last `:` is not followed by
/// digits only is a path.
fn split_line(target: &str) -> (&str, Option<u32>) {
    match target.rsplit_once(':') {
        Some((p, l)) if !p.is_empty() && !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) => {
            (p, l.parse().ok())
        }
        _ => (target, None),
    }
}

fn print(ctx: &mut Ctx, why: &Why, path: &str) -> CliResult {
    let h = &why.history;
    let ui = &mut ctx.ui;
    let shown = h.absolute.clone().unwrap_or_else(|| path.to_string());
    let mut head = ui.paint(Style::Bold, &shown);
    if let Some(r) = &h.repository {
        head.push_str(&ui.paint(Style::Dim, &format!("  ({r})")));
    }
    ui.line(&head)?;
    if let Some(reason) = &why.blame_unavailable {
        ui.line(&ui.paint(
            Style::Dim,
            &format!("{}; the file's history follows.", output::one_line(reason)),
        ))?;
    }
    if let Some(b) = &why.blame {
        ui.line(&format!(
            "line {}: {}",
            b.line,
            output::one_line(&b.text).trim()
        ))?;
        match &b.commit {
            Some(c) => ui.line(&ui.paint(
                Style::Dim,
                &format!(
                    "commit {} by {} at {}: {}",
                    &c[..c.len().min(12)],
                    b.author.as_deref().unwrap_or("?"),
                    output::when(b.committed_at.as_deref()),
                    output::one_line(b.summary.as_deref().unwrap_or(""))
                ),
            ))?,
            None => ui.line(&ui.paint(Style::Dim, "not committed yet"))?,
        }
        match &why.verdict {
            Some(v) => {
                let (id, turn, how) = match v {
                    WhyVerdict::ReferencedCommit { session_id, turn } => {
                        (session_id, turn, "referenced this commit")
                    }
                    WhyVerdict::LastEditBefore {
                        session_id, turn, ..
                    } => (
                        session_id,
                        turn,
                        if b.commit.is_some() {
                            "last edited the file before this commit"
                        } else {
                            "last edited the file"
                        },
                    ),
                };
                let touch = h
                    .touches
                    .iter()
                    .find(|t| &t.session_id == id && &t.turn == turn);
                let title = touch
                    .and_then(|t| t.title.as_deref())
                    .map(|t| format!(" ({})", output::one_line(t)))
                    .unwrap_or_default();
                let at_turn = turn.map(|t| format!(", turn {t}")).unwrap_or_default();
                ui.line(&format!(
                    "{} session {}{at_turn}{title} {how}",
                    ui.paint(Style::Green, "→"),
                    ui.paint(Style::Yellow, id),
                ))?;
                ui.line(&ui.paint(Style::Cyan, &format!("  {}", open_command(id, *turn))))?;
            }
            None => ui.line("No session referenced this commit or edited the file before it.")?,
        }
    }
    if h.touches.is_empty() {
        ui.status(&format!(
            "No session read or edited {shown} (trail knows the files a session's tools named)."
        ));
        return Ok(());
    }
    ui.line("")?;
    ui.line(&ui.paint(
        Style::Bold,
        &format!(
            "{}  {}  {}  {}  {}",
            fit("WHEN", 16),
            fit("SOURCE", 14),
            fit("ACTION", 6),
            fit("SESSION / TURN", 24),
            "PROMPT"
        ),
    ))?;
    for t in &h.touches {
        print_touch(ui, t)?;
    }
    if let Some(c) = &why.change {
        ui.line("")?;
        ui.line(&format!(
            "What session {} changed in it (trail diff {}):",
            ui.paint(Style::Yellow, &c.session_id),
            c.session_id
        ))?;
        let one = trail_query::SessionDiff {
            added: c.file.added,
            removed: c.file.removed,
            files: vec![c.file.clone()],
        };
        crate::commands::diff::print(ui, &one)?;
    }
    Ok(())
}

fn print_touch(ui: &mut crate::output::Ui, t: &FileTouchRow) -> CliResult {
    let at = match t.turn {
        Some(turn) => format!("{} #{turn}", short(&t.session_id)),
        None => short(&t.session_id).to_string(),
    };
    let prompt = output::one_line(t.prompt.as_deref().or(t.title.as_deref()).unwrap_or(""));
    let action = match t.tool_name.as_deref() {
        Some(_) => t.action.clone(),
        None => "-".to_string(),
    };
    ui.line(&format!(
        "{}  {}  {}  {}  {}",
        ui.paint(Style::Dim, &fit(&output::when(t.timestamp.as_deref()), 16)),
        ui.paint(Style::Cyan, &fit(&t.source, 14)),
        fit(&action, 6),
        ui.paint(Style::Yellow, &fit(&at, 24)),
        fit(&prompt, PROMPT_CHARS).trim_end()
    ))?;
    Ok(())
}

fn short(id: &str) -> &str {
    match id.char_indices().nth(18) {
        Some((i, _)) => &id[..i],
        None => id,
    }
}

fn open_command(id: &str, turn: Option<i64>) -> String {
    match turn {
        Some(t) => format!("trail show {id} --turn {t}"),
        None => format!("trail show {id} --full"),
    }
}

#[cfg(test)]
mod tests {
    use super::split_line;

    #[test]
    fn a_trailing_line_number_is_split_off() {
        assert_eq!(split_line("src/lib.rs:42"), ("src/lib.rs", Some(42)));
        assert_eq!(split_line("src/lib.rs"), ("src/lib.rs", None));
        assert_eq!(split_line("C:/x/y.rs"), ("C:/x/y.rs", None));
        assert_eq!(split_line("a:b.rs:7"), ("a:b.rs", Some(7)));
        assert_eq!(split_line(":7"), (":7", None));
    }
}
