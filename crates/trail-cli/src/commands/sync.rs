//! `trail sync [URL]`: pushes the sessions that are new or changed since the last sync to a team
//! store on PostgreSQL, redacted unless `--no-redact`, within the config file's include and
//! exclude rules; `--dry-run` lists what would be pushed and removed.

use std::path::PathBuf;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use trail_postgres::{SyncOptions, SyncProgress, SyncRule, SyncRules, SyncSummary};
use trail_render::Redactor;
use trail_store::Store;

use crate::error::{CliError, CliResult};
use crate::output::Style;
use crate::{config, Ctx};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The team store (else $TRAIL_SYNC_URL, else `url` in the config file's [sync])
    #[arg(value_name = "postgres://...")]
    url: Option<String>,
    /// List what would be pushed and removed; send nothing
    #[arg(long)]
    dry_run: bool,
    /// Send text as it is (secrets are redacted by default)
    #[arg(long)]
    no_redact: bool,
    /// Also redact matches of this regular expression (repeatable)
    #[arg(long, value_name = "REGEX")]
    redact_pattern: Vec<String>,
    /// Print the summary as JSON
    #[arg(long)]
    json: bool,
    /// Sessions per transaction at most (tuning and tests)
    #[arg(long, hide = true, default_value_t = 0)]
    batch_sessions: usize,
}

/// The team store's URL: the argument, `TRAIL_SYNC_URL`, or the config file.
pub fn sync_url(ctx: &Ctx, arg: Option<&str>) -> CliResult<String> {
    let url = arg
        .map(str::to_string)
        .or_else(|| {
            ctx.env
                .get("TRAIL_SYNC_URL")
                .map(|v| v.to_string_lossy().into_owned())
        })
        .or_else(|| ctx.config.config.sync.url.clone())
        .ok_or_else(|| {
            CliError::usage("no team store: give postgres://..., set TRAIL_SYNC_URL, or url in [sync] of the config file")
        })?;
    if !trail_postgres::is_postgres_url(&url) {
        return Err(CliError::usage(format!(
            "{} is not a postgres://... URL",
            trail_postgres::redact_url(&url)
        )));
    }
    Ok(url)
}

struct Bar(ProgressBar);

impl SyncProgress for Bar {
    fn start(&self, sessions: u64) {
        self.0.set_length(sessions);
        self.0.enable_steady_tick(Duration::from_millis(120));
    }
    fn advance(&self, n: u64) {
        self.0.inc(n);
    }
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let url = sync_url(ctx, args.url.as_deref())?;
    if !ctx.store_path.exists() {
        return Err(
            CliError::usage(format!("no store at {} yet", ctx.store_path.display()))
                .with_hint("run `trail index` first"),
        );
    }
    let redactor = if args.no_redact {
        Redactor::disabled()
    } else {
        Redactor::new(&args.redact_pattern).map_err(CliError::usage)?
    };
    let home = ctx.env.home();
    let rules = SyncRules {
        include: expand(&ctx.config.config.sync.include, home.as_ref()),
        exclude: expand(&ctx.config.config.sync.exclude, home.as_ref()),
    };
    let host = ctx
        .config
        .config
        .sync
        .host
        .clone()
        .or_else(|| config::host_name(&ctx.env))
        .unwrap_or_else(|| "unknown".into());
    let store = Store::open(&ctx.store_path)?;
    let mut client = trail_postgres::connect(&url)?;
    let connect_again = || trail_postgres::connect(&url);
    let bar = (ctx.ui.stderr_tty && !args.json && !args.dry_run).then(|| {
        let pb = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        pb.set_style(
            ProgressStyle::with_template(
                "{spinner} syncing [{bar:30}] {pos}/{len} sessions ({eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        Bar(pb)
    });
    let progress: &dyn SyncProgress = match &bar {
        Some(b) => b,
        None => trail_postgres::NO_PROGRESS,
    };
    let summary = trail_postgres::sync(
        &store,
        &mut client,
        &SyncOptions {
            host,
            rules,
            redactor: &redactor,
            dry_run: args.dry_run,
            batch_sessions: args.batch_sessions,
            connect: Some(&connect_again),
        },
        progress,
    )?;
    if let Some(b) = &bar {
        b.0.finish_and_clear();
    }
    if args.json {
        ctx.ui.json(&summary)?;
        return Ok(0);
    }
    print(ctx, &summary, &url)?;
    Ok(0)
}

/// `~/` in a folder rule is the home folder.
fn expand(rules: &[SyncRule], home: Option<&PathBuf>) -> Vec<SyncRule> {
    rules
        .iter()
        .map(|r| SyncRule {
            folder: r
                .folder
                .as_ref()
                .map(|f| match (f.strip_prefix("~/"), home) {
                    (Some(rest), Some(h)) => h.join(rest).to_string_lossy().into_owned(),
                    _ => f.clone(),
                }),
            ..r.clone()
        })
        .collect()
}

fn print(ctx: &mut Ctx, s: &SyncSummary, url: &str) -> CliResult<()> {
    let p = &s.plan;
    let target = trail_postgres::redact_url(url);
    if s.dry_run {
        ctx.ui.line(&ctx.ui.paint(
            Style::Bold,
            &format!("Would push to {target} as {} from {}:", s.user, s.host),
        ))?;
        for (label, ids) in [
            ("new", &p.new),
            ("changed", &p.changed),
            ("remove", &p.removed),
        ] {
            for id in ids {
                ctx.ui.line(&format!("  {label:<8} {id}"))?;
            }
        }
    }
    let verb = if s.dry_run { "would push" } else { "pushed" };
    let mut line = format!(
        "{} {} sessions ({} new, {} changed) to {target}; {} unchanged, {} excluded by rules, {} removed",
        if s.dry_run { "Sync (dry run):" } else { "Synced:" },
        p.new.len() + p.changed.len(),
        p.new.len(),
        p.changed.len(),
        p.unchanged,
        p.excluded,
        p.removed.len(),
    );
    line = line.replacen("Synced: ", &format!("Synced: {verb} "), 1);
    line = line.replacen("Sync (dry run): ", &format!("Sync (dry run): {verb} "), 1);
    if !s.dry_run {
        line.push_str(&format!(
            "; {} messages, {:.1} MB in {:.1} s",
            s.messages,
            s.bytes as f64 / 1e6,
            s.elapsed_ms as f64 / 1000.0
        ));
    }
    ctx.ui.status(&line);
    if s.redacted {
        let total: u64 = s.redactions.values().sum();
        if total > 0 {
            let kinds: Vec<String> = s
                .redactions
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            ctx.ui
                .status(&format!("Redacted {total} secrets ({}).", kinds.join(", ")));
        }
    } else {
        ctx.ui.status("Not redacted (--no-redact).");
    }
    if !p.owned_by_others.is_empty() {
        ctx.ui.status(&format!(
            "{} sessions were left alone: another role pushed them first ({}).",
            p.owned_by_others.len(),
            p.owned_by_others
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if s.migrations > 0 {
        ctx.ui.status(&format!(
            "Applied {} migrations to the team store.",
            s.migrations
        ));
    }
    Ok(())
}
