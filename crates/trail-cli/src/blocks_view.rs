//! Text views of the 5-hour blocks (`trail usage --by block`, `--active`) and the live view
//! (`--watch`). The figures come from trail-report; this module only lays them out.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use trail_query::{BlockOptions, Clock, Freshen, Query, ReportFilter};
use trail_report::blocks::{Block, BlocksReport};
use trail_report::markdown::{self, thousands, Emphasis};

use crate::commands::open_query;
use crate::error::CliResult;
use crate::output::{Style, Ui};
use crate::{config, Ctx};

/// The first line of every block view: what the figures are.
fn heading(ui: &Ui, title: &str, r: &BlocksReport) -> Vec<String> {
    vec![
        ui.paint(Style::Bold, &format!("{title} ({})", r.time_zone)),
        ui.paint(
            Style::Dim,
            &format!("Estimate from local logs: {}.", note(r)),
        ),
    ]
}

/// The report's estimate note without its leading "estimate from local logs: ".
fn note(r: &BlocksReport) -> &str {
    r.estimate
        .strip_prefix("estimate from local logs: ")
        .unwrap_or(r.estimate)
}

fn unpriced(out: &mut Vec<String>, ui: &Ui, r: &BlocksReport) {
    if r.unpriced_models.is_empty() {
        return;
    }
    out.push(ui.paint(
        Style::Yellow,
        "* unpriced models (tokens counted, cost not included):",
    ));
    for u in &r.unpriced_models {
        out.push(format!(
            "  {}: {} requests, {} tokens",
            u.model,
            thousands(u.requests),
            thousands(u.total_tokens)
        ));
    }
}

/// `--active` and `--watch`: the current block in detail.
pub fn active_lines(ui: &Ui, r: &BlocksReport, budget: Option<f64>) -> Vec<String> {
    let mut out = heading(ui, "Active 5-hour block", r);
    let Some(b) = r.active() else {
        out.push("No active block: no request in the last 5 hours.".into());
        return out;
    };
    out.extend(block_detail(ui, r, b, budget));
    unpriced(&mut out, ui, r);
    out
}

fn block_detail(ui: &Ui, r: &BlocksReport, b: &Block, budget: Option<f64>) -> Vec<String> {
    markdown::block_detail(r, b, budget)
        .into_iter()
        .map(|l| {
            let style = match l.emphasis {
                Emphasis::Plain => return format!("{}{}", l.label, l.value),
                Emphasis::Strong => Style::Bold,
                Emphasis::Good => Style::Green,
                Emphasis::Warn => Style::Yellow,
                Emphasis::Alert => Style::Red,
                Emphasis::Dim => return ui.paint(Style::Dim, &format!("{}{}", l.label, l.value)),
            };
            format!("{}{}", l.label, ui.paint(style, &l.value))
        })
        .collect()
}

/// `--watch` settings.
pub struct Watch {
    pub interval: Duration,
    /// Stop after this many refreshes (none: until Ctrl-C).
    pub count: Option<u64>,
    pub breakdown: bool,
}

/// Shows the cursor again however the view ends (Ctrl-C, an error, a closed pipe).
struct CursorGuard(bool);

impl Drop for CursorGuard {
    fn drop(&mut self) {
        if self.0 {
            let mut err = std::io::stdout();
            let _ = err.write_all(b"\x1b[?25h");
            let _ = err.flush();
        }
    }
}

/// The live view: every interval, index what changed, then draw the active block. On a
/// terminal the view is redrawn in place (cursor home, clear below); into a pipe each refresh
/// is printed as a new snapshot after a blank line. A team store (`--store postgres://...`) is
/// read as it is at each refresh: `trail sync` fills it, nothing is indexed.
pub fn watch(ctx: &mut Ctx, filter: &ReportFilter, w: &Watch) -> CliResult<u8> {
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // Without a handler (another one is set) Ctrl-C ends the process as usual.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }
    let tty = std::io::stdout().is_terminal();
    let _cursor = CursorGuard(tty);
    let freshen = Freshen {
        index: trail_ingest::IndexOptions {
            roots: config::source_roots(&ctx.env, ctx.home.as_deref(), &[]),
            ..trail_ingest::IndexOptions::default()
        },
        busy_wait: None,
    };
    // A failed index (a file that vanished mid-read) must not end the view: show the store as
    // it is and say so.
    let (query, mut refreshed) = if ctx.team_store.is_some() {
        let query = open_query(ctx)?;
        let refreshed = query.refresh(&freshen);
        (query, refreshed)
    } else {
        Query::open_fresh(&ctx.store_path, &freshen)?
    };
    let prices = ctx.config.price_table();
    let budget = ctx.config.config.usage.block_budget_usd;
    let mut drawn = 0u64;
    loop {
        let clock = Clock {
            now: ctx.now()?,
            zone: trail_query::DayZone::utc(),
        };
        let block_options = BlockOptions {
            breakdown: w.breakdown,
            active_only: true,
        };
        let report = query.blocks(filter, &prices, &clock, &block_options)?;
        let mut lines = active_lines(&ctx.ui, &report, budget);
        if let Some(e) = refreshed.error() {
            lines.push(ctx.ui.paint(Style::Yellow, &format!("index failed: {e}")));
        }
        lines.push(ctx.ui.paint(
            Style::Dim,
            &format!(
                "Refreshing every {}s; Ctrl-C to stop.",
                w.interval.as_secs_f64()
            ),
        ));
        if tty {
            // Home, then each line cleared to its end, then everything below cleared: no
            // flicker and no leftovers from a longer previous frame.
            let mut frame = String::from("\x1b[?25l\x1b[H");
            for l in &lines {
                frame.push_str(l);
                frame.push_str("\x1b[K\n");
            }
            frame.push_str("\x1b[J");
            if drawn == 0 {
                frame.insert_str(0, "\x1b[2J");
            }
            let mut out = std::io::stdout().lock();
            out.write_all(frame.as_bytes())?;
            out.flush()?;
        } else {
            if drawn > 0 {
                ctx.ui.line("")?;
            }
            for l in &lines {
                ctx.ui.line(l)?;
            }
            ctx.ui.flush()?;
        }
        drawn += 1;
        if w.count.is_some_and(|n| drawn >= n) {
            break;
        }
        let until = Instant::now() + w.interval;
        while Instant::now() < until && !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(50).min(w.interval));
        }
        if stop.load(Ordering::SeqCst) {
            break;
        }
        refreshed = query.refresh(&freshen);
    }
    Ok(0)
}
