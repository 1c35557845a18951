//! `trail serve`: the web viewer on 127.0.0.1 (or `--bind ADDR`, with a warning), the URL
//! printed, optionally opened in the browser; `--watch` keeps the store fresh while serving.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use trail_render::Redactor;
use trail_web::{WatchConfig, WebConfig};

use crate::config;
use crate::error::{CliError, CliResult};
use crate::Ctx;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Port to listen on (0 picks a free one)
    #[arg(long, default_value_t = 7878)]
    port: u16,
    /// Listen on this address instead of 127.0.0.1 (anyone who can reach it can read your sessions)
    #[arg(long, value_name = "ADDR")]
    bind: Option<IpAddr>,
    /// Open the viewer in the default browser
    #[arg(long)]
    open: bool,
    /// Keep the store fresh: index when agents' files change (and every --watch-interval)
    #[arg(long)]
    watch: bool,
    /// With --watch, also index every this many seconds (0: only on changes)
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    watch_interval: u64,
    /// Show secrets as recorded instead of [REDACTED:kind]
    #[arg(long)]
    no_redact: bool,
    /// Also redact matches of this regular expression (repeatable)
    #[arg(long, value_name = "REGEX")]
    redact_pattern: Vec<String>,
}

pub fn run(ctx: &mut Ctx, args: Args) -> CliResult<u8> {
    let redactor = if args.no_redact {
        Redactor::disabled()
    } else {
        Redactor::new(&args.redact_pattern).map_err(CliError::usage)?
    };
    let bind = args.bind.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    if !bind.is_loopback() {
        eprintln!(
            "warning: serving on {bind}: anyone who can reach this address can read every session in the store; requests must name it (Host {bind}:PORT) or a loopback name, others are refused"
        );
    }
    let watch = args.watch.then(|| WatchConfig {
        roots: config::source_roots(&ctx.env, ctx.home.as_deref(), &[]),
        interval: (args.watch_interval > 0).then(|| Duration::from_secs(args.watch_interval)),
        debounce: Duration::from_millis(750),
    });
    let web = WebConfig {
        store: ctx.store_path.clone(),
        bind,
        port: args.port,
        redactor,
        watch,
        readers: 4,
    };
    let open = args.open;
    let ui = &mut ctx.ui;
    let result = trail_web::serve_blocking(web, |url| {
        let _ = ui.line(&format!("trail is serving {url} (Ctrl-C stops it)"));
        let _ = ui.flush();
        let _ = std::io::stdout().flush();
        if open {
            open_browser(url);
        }
    });
    match result {
        Ok(()) => Ok(0),
        Err(e) if e.is_caller_error() => {
            let mut err = CliError::usage(&e.message);
            if let Some(h) = &e.hint {
                err = err.with_hint(h.clone());
            }
            Err(err)
        }
        Err(e) => Err(e.into()),
    }
}

/// Opens `url` with the desktop's opener; failing to is only a note (the URL is printed).
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(opener)
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        eprintln!("note: cannot open a browser ({opener}: {e}); open {url} yourself");
    }
}
