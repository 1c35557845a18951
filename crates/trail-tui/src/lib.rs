//! `trail tui`: browse and search every indexed session in the terminal, as you type.
//!
//! Opens on the sessions of the git repository it was started in (all sessions outside one),
//! newest first, with forks and subagents counted under their root. Typing searches on every
//! keystroke; Enter opens a transcript; `r` resumes a session in its agent, `e` exports it.
//!
//! Every query runs on a worker thread with its own read-only [`trail_query::Query`], so the UI
//! never waits on the store; generations drop answers a newer keystroke made stale (see
//! `worker.rs`). The caller (the CLI) passes everything from the environment in a
//! [`TuiConfig`]: this crate reads no environment variable, no config file and no home folder.

mod app;
mod keys;
mod safe;
mod theme;
mod transcript;
mod ui;
mod worker;

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use anyhow::Context;
use crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event, KeyEventKind};
use crossterm::execute;
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::backend::{Backend, CrosstermBackend, TestBackend};
use ratatui::Terminal;
use trail_query::{Clock, Query, QueryError, Reopen};

pub use app::{Scope, StoreState};
pub use keys::{Key, Keymap};
pub use ratatui::style::Color;
pub use safe::visible;
pub use theme::{Colors, Theme};

/// Where `trail tui` was started: what the scope key cycles through.
#[derive(Debug, Clone, Default)]
pub struct Here {
    /// `owner/name` of the current git repository's remote.
    pub repository: Option<String>,
    /// The current folder.
    pub folder: Option<PathBuf>,
    /// The checked-out branch.
    pub branch: Option<String>,
    /// This machine's name.
    pub host: Option<String>,
}

/// Everything the browser needs, resolved by the caller.
#[derive(Debug, Clone)]
pub struct TuiConfig {
    /// The store's file.
    pub store: PathBuf,
    pub here: Here,
    pub colors: Colors,
    /// No colour at all (`NO_COLOR`, `--color never`).
    pub no_color: bool,
    pub keys: Keymap,
    /// Where `e` writes exports.
    pub export_dir: PathBuf,
    /// Where each agent the continue key can write into keeps its sessions (as for
    /// `trail resume --in`).
    pub continue_homes: trail_continue::TargetHomes,
    /// A fixed "now" (tests); none: the current time at each query.
    pub clock: Option<Clock>,
    /// Prices for the usage panel (the shipped table with the config file's overrides).
    pub prices: trail_report::PriceTable,
    /// The 5-hour block's budget in dollars (`usage.block_budget_usd`), shown as a percentage.
    pub block_budget_usd: Option<f64>,
}

/// How the browser ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The user quit (Esc on the list, Ctrl-C).
    Quit,
}

/// One event for the UI loop: a key or mouse event, or a worker's answer.
enum Msg {
    Input(Event),
    Reply(Box<worker::Reply>),
}

/// Opens the store, starts the worker and builds the app. Missing or empty stores give an
/// app that says how to index.
fn start(config: &TuiConfig, events: Sender<Msg>) -> anyhow::Result<app::App> {
    let gens = Arc::new(worker::Generations::default());
    let (results, results_inbox) = mpsc::channel();
    let (details, details_inbox) = mpsc::channel();
    let senders = worker::Senders { results, details };
    let state = match Query::open(&config.store) {
        Ok(query) => {
            let state = if query.session_count()? == 0 {
                StoreState::Empty
            } else {
                StoreState::Ready
            };
            // Two workers, each with its own read-only connection (see `worker::Senders`).
            let second = Query::open(&config.store)?;
            for (name, query, inbox) in [
                ("trail-tui-results", query, results_inbox),
                ("trail-tui-details", second, details_inbox),
            ] {
                let (clock, gens, events) = (config.clock.clone(), gens.clone(), events.clone());
                thread::Builder::new()
                    .name(name.into())
                    .spawn(move || {
                        worker::run(query, clock, inbox, events, gens, |r| {
                            Msg::Reply(Box::new(r))
                        })
                    })
                    .context("cannot start a query thread")?;
            }
            state
        }
        Err(QueryError::NoStore(p)) => StoreState::Missing(p),
        Err(e) => return Err(e.into()),
    };
    Ok(app::App::new(
        config,
        Theme::new(&config.colors, config.no_color),
        state,
        senders,
        gens,
    ))
}

fn now(config: &TuiConfig) -> chrono::DateTime<chrono::Utc> {
    config
        .clock
        .as_ref()
        .map(|c| c.now)
        .unwrap_or_else(chrono::Utc::now)
}

/// Runs the browser on the terminal until the user quits. The terminal is restored on return,
/// on error and on panic.
pub fn run(config: TuiConfig) -> anyhow::Result<Outcome> {
    let (events, inbox) = mpsc::channel();
    let mut app = start(&config, events.clone())?;
    install_panic_hook();
    let mut terminal = enter().context("cannot set up the terminal")?;
    let paused = Arc::new(AtomicBool::new(false));
    spawn_input(events, paused.clone());
    let result = event_loop(&mut terminal, &mut app, &inbox, &config, &paused);
    let restored = leave();
    result?;
    restored.context("cannot restore the terminal")?;
    Ok(Outcome::Quit)
}

fn event_loop<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut app::App,
    inbox: &Receiver<Msg>,
    config: &TuiConfig,
    paused: &AtomicBool,
) -> anyhow::Result<()>
where
    B::Error: Send + Sync + 'static,
{
    loop {
        terminal.draw(|f| ui::draw(f, app, now(config)))?;
        let Ok(msg) = inbox.recv() else { return Ok(()) };
        handle(app, msg);
        // Take whatever else is queued before drawing again: a burst of keys or answers
        // costs one frame.
        for msg in inbox.try_iter() {
            handle(app, msg);
        }
        if app.quit {
            return Ok(());
        }
        if let Some(reopen) = app.to_run.take() {
            paused.store(true, Ordering::SeqCst);
            // Let the input thread see the flag before the agent reads the terminal.
            thread::sleep(INPUT_POLL * 2);
            let said = resume(&reopen);
            paused.store(false, Ordering::SeqCst);
            terminal.clear()?;
            app.message = Some(said);
        }
    }
}

fn handle(app: &mut app::App, msg: Msg) {
    match msg {
        Msg::Input(Event::Key(k)) if k.kind != KeyEventKind::Release => app.on_key(k),
        Msg::Input(Event::Mouse(m)) => app.on_mouse(m),
        Msg::Input(_) => {}
        Msg::Reply(r) => app.on_reply(*r),
    }
}

/// How often the input thread checks whether it should stand aside for a resumed agent.
const INPUT_POLL: Duration = Duration::from_millis(50);

/// Reads the terminal's events on a thread of its own, so the UI loop waits on one channel for
/// keys and answers alike. While `paused` (an agent runs in the foreground) it reads nothing.
fn spawn_input(events: Sender<Msg>, paused: Arc<AtomicBool>) {
    thread::spawn(move || loop {
        if paused.load(Ordering::SeqCst) {
            thread::sleep(INPUT_POLL);
            continue;
        }
        match event::poll(INPUT_POLL) {
            Ok(true) => match event::read() {
                Ok(e) => {
                    if events.send(Msg::Input(e)).is_err() {
                        return;
                    }
                }
                Err(_) => return,
            },
            Ok(false) => {}
            Err(_) => return,
        }
    });
}

fn enter() -> io::Result<Terminal<CrosstermBackend<io::Stdout>>> {
    enable_raw_mode()?;
    let mut out = io::stdout();
    execute!(out, EnterAlternateScreen, EnableMouseCapture)?;
    Terminal::new(CrosstermBackend::new(out))
}

/// Leaves the alternate screen and raw mode; safe to call twice.
fn leave() -> io::Result<()> {
    let mut out = io::stdout();
    let a = execute!(
        out,
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let b = disable_raw_mode();
    out.flush()?;
    a.and(b)
}

/// Restores the terminal before a panic's message is printed, so it is readable and the shell
/// is usable.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = leave();
        previous(info);
    }));
}

/// Runs a resume command in the session's folder with the terminal given back to it; returns
/// what to tell the user afterwards.
fn resume(r: &Reopen) -> (String, bool) {
    if let Err(e) = leave() {
        return (format!("cannot leave the full screen to resume: {e}"), true);
    }
    let mut cmd = Command::new(r.program);
    cmd.args(&r.args);
    let mut note = String::new();
    match r.cwd.as_deref().map(std::path::Path::new) {
        Some(dir) if dir.is_dir() => {
            cmd.current_dir(dir);
        }
        Some(dir) => note = format!(" (its folder {} is gone; ran here)", dir.display()),
        None => {}
    }
    let said = match cmd.status() {
        Ok(s) if s.success() => (format!("{} exited{note}", r.program), false),
        Ok(s) => (format!("{} exited with {s}{note}", r.program), true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => (
            format!(
                "{} is not installed (not on PATH); the command was: {}",
                r.program,
                r.shell()
            ),
            true,
        ),
        Err(e) => (format!("cannot run {}: {e}", r.shell()), true),
    };
    if let Err(e) = enable_raw_mode()
        .and_then(|_| execute!(io::stdout(), EnterAlternateScreen, EnableMouseCapture))
    {
        return (format!("cannot return to the full screen: {e}"), true);
    }
    said
}

/// The browser without a terminal, for tests and benchmarks: keys in, a ratatui test buffer
/// out, every query answered before drawing.
pub struct Headless {
    app: app::App,
    inbox: Receiver<Msg>,
    terminal: Terminal<TestBackend>,
    config: TuiConfig,
}

impl Headless {
    /// Starts the browser on a `width` x `height` test screen and waits for its first answers.
    pub fn new(config: TuiConfig, width: u16, height: u16) -> anyhow::Result<Headless> {
        let (events, inbox) = mpsc::channel();
        let app = start(&config, events)?;
        let terminal = Terminal::new(TestBackend::new(width, height))?;
        let mut h = Headless {
            app,
            inbox,
            terminal,
            config,
        };
        h.settle();
        Ok(h)
    }

    /// Waits until every query asked for is answered (draws in between, as the real loop does).
    pub fn settle(&mut self) {
        loop {
            self.draw();
            if self.app.settled() {
                return;
            }
            match self.inbox.recv_timeout(Duration::from_secs(30)) {
                Ok(msg) => handle(&mut self.app, msg),
                Err(_) => panic!("the query thread did not answer within 30 s"),
            }
        }
    }

    /// Presses a key (then waits for the answers it asked for).
    pub fn key(&mut self, key: crossterm::event::KeyEvent) {
        handle(&mut self.app, Msg::Input(Event::Key(key)));
        self.settle();
    }

    /// Presses `key`, written as in the config (`enter`, `ctrl-r`, `N`).
    pub fn press(&mut self, key: &str) {
        let k = Key::parse(key).unwrap_or_else(|e| panic!("{e}"));
        let mut m = crossterm::event::KeyModifiers::NONE;
        if k.ctrl {
            m |= crossterm::event::KeyModifiers::CONTROL;
        }
        if k.alt {
            m |= crossterm::event::KeyModifiers::ALT;
        }
        self.key(crossterm::event::KeyEvent::new(k.code, m));
    }

    /// Types text into whatever has focus, one key at a time.
    pub fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.key(crossterm::event::KeyEvent::new(
                crossterm::event::KeyCode::Char(c),
                crossterm::event::KeyModifiers::NONE,
            ));
        }
    }

    /// Resizes the screen.
    pub fn resize(&mut self, width: u16, height: u16) {
        self.terminal.backend_mut().resize(width, height);
        self.settle();
    }

    /// Draws and returns the screen as text, one line per row.
    pub fn screen(&mut self) -> String {
        self.draw();
        let buf = self.terminal.backend().buffer();
        let mut out = String::new();
        for y in 0..buf.area.height {
            let mut line = String::new();
            for x in 0..buf.area.width {
                line.push_str(buf[(x, y)].symbol());
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// The test screen's buffer (styles included).
    pub fn buffer(&mut self) -> ratatui::buffer::Buffer {
        self.draw();
        self.terminal.backend().buffer().clone()
    }

    /// True once the user asked to quit.
    pub fn quit(&self) -> bool {
        self.app.quit
    }

    /// The status line's message, if any.
    pub fn message(&self) -> Option<&str> {
        self.app.message.as_ref().map(|(m, _)| m.as_str())
    }

    /// The resume command `r` asked for (a headless app never runs it).
    pub fn take_resume(&mut self) -> Option<Reopen> {
        self.app.to_run.take()
    }

    fn draw(&mut self) {
        let now = now(&self.config);
        let app = &mut self.app;
        // A test backend's draw cannot fail.
        let _ = self.terminal.draw(|f| ui::draw(f, app, now));
    }
}
