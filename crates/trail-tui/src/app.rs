//! The browser's state and what each key does to it. Drawing is in `ui.rs`; queries go to
//! the worker and come back as [`Reply`]s.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use trail_query::{
    InlineFilters, ListRequest, Reopen, SearchHit, SearchRequest, SearchResults, SessionFilter,
    SessionPage, SessionRow,
};
use trail_render::Format;

use crate::keys::Keymap;
use crate::theme::Theme;
use crate::transcript::{terms_of, Transcript};
use crate::worker::{Failure, Generations, Kind, Reply, Request, Senders};
use crate::Here;

/// Sessions asked for per page of the list.
const PAGE: usize = 200;
/// Search hits asked for: a tall screen's worth. Each hit costs the store a snippet, so
/// asking for more than can be seen slows every keystroke (100 hits cost about twice 50).
const HITS: usize = 50;
/// Rows a mouse wheel step moves.
const WHEEL: isize = 3;

/// Which sessions the box searches before its own filters: the scope key cycles these.
#[derive(Debug, Clone, PartialEq)]
pub enum Scope {
    Repository(String),
    Folder(String),
    Branch {
        repository: Option<String>,
        branch: String,
    },
    /// Sessions recorded on this machine. A local store holds only this machine's sessions,
    /// so this is every session until a shared store tags sessions with their host.
    Host(String),
    All,
}

impl Scope {
    /// The scope as the prompt shows it.
    pub fn label(&self) -> String {
        match self {
            Scope::Repository(r) => format!("repo {r}"),
            Scope::Folder(f) => format!("folder {f}"),
            Scope::Branch { branch, .. } => format!("branch {branch}"),
            Scope::Host(h) => format!("host {h}"),
            Scope::All => "all".to_string(),
        }
    }

    fn filter(&self) -> SessionFilter {
        let mut f = SessionFilter::default();
        match self {
            Scope::Repository(r) => f.repo = Some(r.clone()),
            Scope::Folder(d) => f.cwd = Some(d.clone()),
            Scope::Branch { repository, branch } => {
                f.repo = repository.clone();
                f.branch = Some(branch.clone());
            }
            Scope::Host(_) | Scope::All => {}
        }
        f
    }
}

/// The scopes available from where `trail tui` started, narrowest first.
pub fn scopes(here: &Here) -> Vec<Scope> {
    let mut v = Vec::new();
    if let Some(r) = &here.repository {
        v.push(Scope::Repository(r.clone()));
    }
    if let Some(f) = &here.folder {
        v.push(Scope::Folder(f.display().to_string()));
    }
    if let Some(b) = &here.branch {
        v.push(Scope::Branch {
            repository: here.repository.clone(),
            branch: b.clone(),
        });
    }
    v.push(Scope::Host(
        here.host.clone().unwrap_or_else(|| "this machine".into()),
    ));
    v.push(Scope::All);
    v
}

/// What the list shows.
#[derive(Debug)]
pub enum Results {
    /// Waiting for the first answer.
    Loading,
    Sessions {
        rows: Vec<SessionRow>,
        /// `+N`: forks and subagents under each listed session.
        below: HashMap<String, i64>,
        next: Option<String>,
    },
    Hits(Vec<SearchHit>),
    Failed(String),
}

/// The store as found at start.
#[derive(Debug, Clone, PartialEq)]
pub enum StoreState {
    Ready,
    /// No store file at this path.
    Missing(PathBuf),
    /// A store without a single session.
    Empty,
}

/// Something shown over the views.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Overlay {
    None,
    Help,
    /// Asking Markdown or HTML for the current session (the open transcript's, else the
    /// list's selection).
    ExportFormat,
    /// Asking which agent to continue the current session in.
    ContinueTarget,
}

/// A full-screen view of lines over the list or a transcript: what a session changed (the
/// diff key) or the active 5-hour block (the usage key). Esc closes it.
pub struct Panel {
    pub kind: PanelKind,
    /// The header line's subject (a session id, or what the usage panel shows).
    pub title: String,
    /// Each line and what it is.
    pub lines: Vec<(PanelLine, String)>,
    /// The first line on screen.
    pub offset: usize,
}

/// `estimate from local logs: ...` as the first words of a line.
fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Which panel is open (its key closes it, or refreshes the usage panel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PanelKind {
    Diff,
    Usage,
}

/// What a line of a panel is (it picks the colour).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PanelLine {
    File,
    Change,
    Header,
    Hunk,
    Added,
    Removed,
    Context,
    Note,
    Strong,
    Warn,
    Alert,
}

impl Panel {
    /// Lays out the active 5-hour block as `trail usage --active` prints it, with `budget`
    /// (the config file's `usage.block_budget_usd`).
    pub fn usage(r: &trail_report::BlocksReport, budget: Option<f64>) -> Panel {
        use trail_report::markdown::{block_detail, Emphasis};
        let mut lines = vec![
            (
                PanelLine::Strong,
                format!("Active 5-hour block ({})", r.time_zone),
            ),
            (PanelLine::Note, format!("{}.", capitalized(r.estimate))),
            (PanelLine::Context, String::new()),
        ];
        match r.active() {
            None => lines.push((
                PanelLine::Context,
                "No active block: no request in the last 5 hours.".to_string(),
            )),
            Some(b) => {
                for l in block_detail(r, b, budget) {
                    let kind = match l.emphasis {
                        Emphasis::Plain => PanelLine::Context,
                        Emphasis::Strong => PanelLine::Strong,
                        Emphasis::Good => PanelLine::Added,
                        Emphasis::Warn => PanelLine::Warn,
                        Emphasis::Alert => PanelLine::Alert,
                        Emphasis::Dim => PanelLine::Note,
                    };
                    lines.push((kind, format!("{}{}", l.label, l.value)));
                }
            }
        }
        Panel {
            kind: PanelKind::Usage,
            title: "Usage".to_string(),
            lines,
            offset: 0,
        }
    }

    /// Lays out a session's changes as `trail diff` prints them.
    pub fn new(id: String, diff: &trail_query::SessionDiff) -> Panel {
        let mut lines = Vec::new();
        if diff.files.is_empty() {
            lines.push((
                PanelLine::Note,
                "This session changed no file that its records show.".to_string(),
            ));
        }
        for f in &diff.files {
            lines.push((
                PanelLine::File,
                format!("{}  +{} -{}", f.path, f.added, f.removed),
            ));
            for c in &f.changes {
                lines.push((
                    PanelLine::Change,
                    format!("  {}", trail_render::change_heading(c)),
                ));
                for l in c.diff.lines() {
                    let kind = if l.starts_with("+++") || l.starts_with("---") {
                        PanelLine::Header
                    } else if l.starts_with('+') {
                        PanelLine::Added
                    } else if l.starts_with('-') {
                        PanelLine::Removed
                    } else if l.starts_with("@@") {
                        PanelLine::Hunk
                    } else {
                        PanelLine::Context
                    };
                    lines.push((kind, format!("  {l}")));
                }
            }
            lines.push((PanelLine::Context, String::new()));
        }
        Panel {
            kind: PanelKind::Diff,
            title: id,
            lines,
            offset: 0,
        }
    }

    fn scroll(&mut self, by: isize, height: usize) {
        let max = self.lines.len().saturating_sub(height.max(1));
        self.offset = self.offset.saturating_add_signed(by).min(max);
    }
}

/// The browser.
pub struct App {
    pub theme: Theme,
    pub keys: Keymap,
    pub store: StoreState,
    export_dir: PathBuf,
    continue_homes: trail_continue::TargetHomes,
    prices: trail_report::PriceTable,
    block_budget_usd: Option<f64>,
    requests: Senders,
    gens: Arc<Generations>,
    received: [u64; 3],
    /// Resumes and exports asked for and not answered yet.
    in_flight: usize,

    pub input: String,
    /// Keys go to the list instead of the box (Tab).
    pub focus_list: bool,
    pub scopes: Vec<Scope>,
    pub scope: usize,
    /// The first list of the starting scope came back empty: widen to everything once.
    widen_if_empty: bool,
    pub results: Results,
    pub selected: usize,
    pub list_offset: usize,
    /// Rows of the list on screen at the last draw (page keys and paging use it).
    pub list_height: usize,
    pub preview: Option<Transcript>,
    /// The preview's turn still to put the cursor on (once laid out).
    pub preview_turn: Option<Option<i64>>,
    /// Open transcripts: the last is shown; Esc goes back one.
    pub transcripts: Vec<Transcript>,
    /// A transcript's turn to go to once it is laid out.
    pub transcript_turn: Option<Option<i64>>,
    pub transcript_height: usize,
    pub overlay: Overlay,
    /// What the open transcript's session changed (`d`), or the usage panel, shown over the
    /// list or the transcript; Esc closes it.
    pub panel: Option<Panel>,
    /// A line for the status bar; true when it is an error.
    pub message: Option<(String, bool)>,
    pub quit: bool,
    /// A resume to run outside the alternate screen (the loop takes it).
    pub to_run: Option<Reopen>,
    /// The status line shows the last search's near spellings (cleared by the next search).
    correction_shown: bool,
    loading_more: bool,
    /// The box changed and its answer has not come yet (the prompt says so).
    pub searching: bool,
}

impl App {
    /// A browser over a worker reached through `requests`.
    pub fn new(
        config: &crate::TuiConfig,
        theme: Theme,
        store: StoreState,
        requests: Senders,
        gens: Arc<Generations>,
    ) -> App {
        let scopes = scopes(&config.here);
        let mut app = App {
            theme,
            keys: config.keys.clone(),
            store,
            export_dir: config.export_dir.clone(),
            continue_homes: config.continue_homes.clone(),
            prices: config.prices.clone(),
            block_budget_usd: config.block_budget_usd,
            requests,
            gens,
            received: [0; 3],
            in_flight: 0,
            input: String::new(),
            focus_list: false,
            widen_if_empty: matches!(scopes.first(), Some(Scope::Repository(_))),
            scopes,
            scope: 0,
            results: Results::Loading,
            selected: 0,
            list_offset: 0,
            list_height: 10,
            preview: None,
            preview_turn: None,
            transcripts: Vec::new(),
            transcript_turn: None,
            transcript_height: 10,
            overlay: Overlay::None,
            panel: None,
            message: None,
            correction_shown: false,
            quit: false,
            to_run: None,
            loading_more: false,
            searching: false,
        };
        // The first scope is the repository's when there is one; else everything.
        if !app.widen_if_empty {
            app.scope = app.scopes.len() - 1;
        }
        if app.store == StoreState::Ready {
            app.refresh();
        }
        app
    }

    /// True when no answer is awaited (tests draw then).
    pub fn settled(&self) -> bool {
        self.store != StoreState::Ready
            || (self.in_flight == 0
                && [Kind::Results, Kind::Preview, Kind::Transcript]
                    .iter()
                    .all(|&k| self.received[k as usize] >= self.gens.newest(k)))
    }

    fn send(&mut self, r: Request) {
        // The worker is gone only when the app is shutting down.
        let _ = self.requests.send(r);
    }

    /// Runs the box's query again (after typing or a scope change).
    pub fn refresh(&mut self) {
        if self.store != StoreState::Ready {
            return;
        }
        let typed = InlineFilters::parse(&self.input);
        let filter = merge(self.scopes[self.scope].filter(), typed.filter);
        let gen = self.gens.bump(Kind::Results);
        self.loading_more = false;
        self.searching = true;
        if typed.text.trim().is_empty() {
            self.send(Request::List {
                gen,
                req: ListRequest {
                    filter,
                    include_subagents: false,
                    limit: PAGE,
                    cursor: None,
                    ..ListRequest::default()
                },
                append: false,
            });
        } else {
            self.send(Request::Search {
                gen,
                req: SearchRequest {
                    query: typed.text,
                    filter,
                    role: typed.role,
                    limit: HITS,
                    ..SearchRequest::default()
                },
            });
        }
    }

    /// The words of the box to mark in previews and transcripts.
    fn terms(&self) -> Vec<String> {
        terms_of(&InlineFilters::parse(&self.input).text)
    }

    fn row_count(&self) -> usize {
        match &self.results {
            Results::Sessions { rows, .. } => rows.len(),
            Results::Hits(h) => h.len(),
            _ => 0,
        }
    }

    /// The selected session's id and the turn to show.
    fn selection(&self) -> Option<(String, Option<i64>)> {
        match &self.results {
            Results::Sessions { rows, .. } => rows
                .get(self.selected)
                .map(|s| (s.id.to_string(), (s.turns > 0).then_some(0))),
            Results::Hits(h) => h.get(self.selected).map(|h| (h.session_id.clone(), h.turn)),
            _ => None,
        }
    }

    fn request_preview(&mut self) {
        let Some((id, turn)) = self.selection() else {
            self.preview = None;
            return;
        };
        if self
            .preview
            .as_ref()
            .is_some_and(|p| p.session().id == id && self.preview_turn == Some(turn))
        {
            return;
        }
        let gen = self.gens.bump(Kind::Preview);
        self.send(Request::Preview { gen, id, turn });
    }

    fn select(&mut self, index: usize) {
        let n = self.row_count();
        if n == 0 {
            return;
        }
        self.selected = index.min(n - 1);
        self.request_preview();
        self.maybe_next_page();
    }

    fn move_selection(&mut self, delta: isize) {
        self.select(self.selected.saturating_add_signed(delta));
    }

    /// Near the end of a page of sessions: ask for the next.
    fn maybe_next_page(&mut self) {
        let Results::Sessions { rows, next, .. } = &self.results else {
            return;
        };
        let Some(cursor) = next.clone() else { return };
        if self.loading_more || self.selected + self.list_height < rows.len() {
            return;
        }
        let typed = InlineFilters::parse(&self.input);
        if !typed.text.trim().is_empty() {
            return;
        }
        self.loading_more = true;
        let filter = merge(self.scopes[self.scope].filter(), typed.filter);
        let gen = self.gens.bump(Kind::Results);
        self.send(Request::List {
            gen,
            req: ListRequest {
                filter,
                include_subagents: false,
                limit: PAGE,
                cursor: Some(cursor),
                ..ListRequest::default()
            },
            append: true,
        });
    }

    fn open_selected(&mut self) {
        let Some((id, turn)) = self.selection() else {
            return;
        };
        let turn = match self.results {
            Results::Hits(_) => turn,
            _ => None,
        };
        self.open_transcript(id, turn);
    }

    fn open_transcript(&mut self, id: String, turn: Option<i64>) {
        let gen = self.gens.bump(Kind::Transcript);
        let terms = self.terms();
        self.message = Some(("Opening…".into(), false));
        self.send(Request::Transcript {
            gen,
            id,
            turn,
            terms,
        });
    }

    /// The session the actions (resume, export, id) apply to.
    fn current_session(&self) -> Option<String> {
        if let Some(t) = self.transcripts.last() {
            return Some(t.session().id.to_string());
        }
        self.selection().map(|(id, _)| id)
    }

    /// Handles one answer from the worker.
    pub fn on_reply(&mut self, reply: Reply) {
        match reply {
            Reply::List {
                gen,
                append,
                result,
            } => self.on_list(gen, append, result),
            Reply::Search { gen, result } => self.on_search(gen, result),
            Reply::Preview { gen, turn, result } => {
                if !self.fresh(Kind::Preview, gen) {
                    return;
                }
                self.preview = result.ok().map(|d| Transcript::new(d, self.terms(), false));
                self.preview_turn = Some(turn);
            }
            Reply::Transcript {
                gen,
                turn,
                terms,
                result,
            } => {
                if !self.fresh(Kind::Transcript, gen) {
                    return;
                }
                self.message = None;
                match result {
                    Ok(d) => {
                        self.transcripts.push(Transcript::new(d, terms, true));
                        self.transcript_turn = Some(turn);
                    }
                    Err(e) => self.message = Some((e, true)),
                }
            }
            Reply::Reopen(r) => {
                self.in_flight = self.in_flight.saturating_sub(1);
                match r {
                    Ok(r) => self.to_run = Some(r),
                    Err(e) => self.message = Some((e, true)),
                }
            }
            Reply::Continued(r) => self.on_continued(r),
            Reply::Usage(result) => self.on_usage(result),
            Reply::Diff { id, result } => {
                self.in_flight = self.in_flight.saturating_sub(1);
                match result {
                    Ok(d) if self.current_session().as_deref() == Some(id.as_str()) => {
                        self.message = None;
                        self.panel = Some(Panel::new(id, &d));
                    }
                    Ok(_) => {}
                    Err(e) => self.message = Some((e, true)),
                }
            }
            Reply::Exported(r) => {
                self.in_flight = self.in_flight.saturating_sub(1);
                self.message = Some(match r {
                    Ok((path, 0)) => (format!("Exported to {}", path.display()), false),
                    Ok((path, n)) => (
                        format!("Exported to {} ({n} secrets redacted)", path.display()),
                        false,
                    ),
                    Err(e) => (e, true),
                });
            }
        }
    }

    /// A page of the session list (appended to the list when `append`).
    fn on_list(
        &mut self,
        gen: u64,
        append: bool,
        result: Result<(SessionPage, HashMap<String, i64>), Failure>,
    ) {
        if !self.fresh(Kind::Results, gen) {
            return;
        }
        self.loading_more = false;
        match result {
            Ok((page, counts)) => {
                if append {
                    if let Results::Sessions { rows, below, next } = &mut self.results {
                        rows.extend(page.sessions);
                        below.extend(counts);
                        *next = page.next_cursor;
                        return;
                    }
                }
                let empty = page.sessions.is_empty();
                self.results = Results::Sessions {
                    rows: page.sessions,
                    below: counts,
                    next: page.next_cursor,
                };
                if std::mem::take(&mut self.widen_if_empty) && empty && self.input.is_empty() {
                    // The repository has no sessions: start on everything instead.
                    self.scope = self.scopes.len() - 1;
                    self.refresh();
                    return;
                }
                self.reset_selection();
            }
            Err(e) => self.results = Results::Failed(e),
        }
    }

    /// Search hits, and the status line's note of words replaced by near spellings.
    fn on_search(&mut self, gen: u64, result: Result<SearchResults, Failure>) {
        if !self.fresh(Kind::Results, gen) {
            return;
        }
        self.widen_if_empty = false;
        match result {
            Ok(r) => {
                // Words replaced by near spellings: the status line says which.
                if let Some(c) = &r.correction {
                    self.message = Some((c.message(), false));
                } else if self.correction_shown {
                    self.message = None;
                }
                self.correction_shown = r.correction.is_some();
                self.results = Results::Hits(r.hits);
                self.reset_selection();
            }
            Err(e) => self.results = Results::Failed(e),
        }
    }

    /// A session continued in another agent: resumed like `r` resumes (the loop leaves the
    /// full screen and runs the target agent on the new session, in the session's folder).
    fn on_continued(&mut self, r: Result<trail_continue::Continuation, Failure>) {
        self.in_flight = self.in_flight.saturating_sub(1);
        match r {
            // Then resumed like `r` resumes: the loop leaves the full screen and runs
            // the target agent on the new session, in the session's folder.
            Ok(c) => {
                let what = if c.created { "Wrote" } else { "Found" };
                self.message = Some((
                    format!(
                        "{what} {} for {} ({} prompts, {} answers); resuming it: {}",
                        c.path.display(),
                        c.target,
                        c.carried.prompts,
                        c.carried.answers,
                        c.command.shell()
                    ),
                    false,
                ));
                self.to_run = Some(c.command);
            }
            Err(e) => self.message = Some((e, true)),
        }
    }

    /// The active block's usage panel (keeping its scroll offset).
    fn on_usage(&mut self, result: Result<trail_report::BlocksReport, Failure>) {
        self.in_flight = self.in_flight.saturating_sub(1);
        match result {
            Ok(r) => {
                self.message = None;
                let offset = self.panel.as_ref().map_or(0, |p| p.offset);
                let mut panel = Panel::usage(&r, self.block_budget_usd);
                panel.offset = offset;
                self.panel = Some(panel);
            }
            Err(e) => self.message = Some((e, true)),
        }
    }

    /// Records an answer of `kind`; false when a newer request made it stale.
    fn fresh(&mut self, kind: Kind, gen: u64) -> bool {
        if gen < self.gens.newest(kind) {
            return false;
        }
        if kind == Kind::Results {
            self.searching = false;
        }
        self.received[kind as usize] = gen;
        true
    }

    fn reset_selection(&mut self) {
        self.selected = 0;
        self.list_offset = 0;
        self.preview = None;
        self.preview_turn = None;
        self.request_preview();
    }

    /// Handles a key press.
    pub fn on_key(&mut self, k: KeyEvent) {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && k.code == KeyCode::Char('c') {
            self.quit = true;
            return;
        }
        match self.overlay {
            Overlay::Help => {
                self.overlay = Overlay::None;
                return;
            }
            Overlay::ExportFormat => {
                self.overlay = Overlay::None;
                let format = match k.code {
                    KeyCode::Char('m') | KeyCode::Char('M') => Format::Markdown,
                    KeyCode::Char('h') | KeyCode::Char('H') => Format::Html,
                    _ => {
                        self.message = Some(("Export cancelled".into(), false));
                        return;
                    }
                };
                if let Some(id) = self.current_session() {
                    self.in_flight += 1;
                    self.message = Some(("Exporting…".into(), false));
                    let dir = self.export_dir.clone();
                    self.send(Request::Export { id, format, dir });
                }
                return;
            }
            Overlay::ContinueTarget => {
                self.overlay = Overlay::None;
                let target = match k.code {
                    KeyCode::Char('c') | KeyCode::Char('C') => trail_continue::Target::ClaudeCode,
                    KeyCode::Char('x') | KeyCode::Char('X') => trail_continue::Target::Codex,
                    KeyCode::Char('g') | KeyCode::Char('G') => trail_continue::Target::GeminiCli,
                    _ => {
                        self.message = Some(("Continue cancelled".into(), false));
                        return;
                    }
                };
                if let Some(id) = self.current_session() {
                    self.in_flight += 1;
                    self.message = Some((format!("Writing the session for {target}…"), false));
                    let homes = self.continue_homes.clone();
                    self.send(Request::Continue { id, target, homes });
                }
                return;
            }
            Overlay::None => {}
        }
        if k.code == KeyCode::F(1) {
            self.overlay = Overlay::Help;
            return;
        }
        // The usage panel opens from anywhere; its key again refreshes it.
        if self.keys.usage.matches(&k) && self.store == StoreState::Ready {
            self.in_flight += 1;
            self.message = Some(("Reading usage…".into(), false));
            let prices = Box::new(self.prices.clone());
            self.send(Request::Usage { prices });
            return;
        }
        if self.panel.is_some() {
            self.on_panel_key(k);
        } else if !self.transcripts.is_empty() {
            self.on_transcript_key(k);
        } else {
            self.on_list_key(k);
        }
    }

    /// Resume, continue, export, id: the same keys on the list (focused) and in a transcript.
    fn on_action_key(&mut self, k: &KeyEvent) -> bool {
        let keys = self.keys.clone();
        if keys.resume.matches(k) {
            if let Some(id) = self.current_session() {
                self.in_flight += 1;
                self.send(Request::Reopen { id });
            }
        } else if keys.continue_elsewhere.matches(k) {
            if self.current_session().is_some() {
                self.overlay = Overlay::ContinueTarget;
            }
        } else if keys.export.matches(k) {
            if self.current_session().is_some() {
                self.overlay = Overlay::ExportFormat;
            }
        } else if keys.copy_id.matches(k) {
            if let Some(id) = self.current_session() {
                self.message = Some((
                    format!("id {id}  (shift+drag selects it while the mouse is captured)"),
                    false,
                ));
            }
        } else if keys.help.matches(k) {
            self.overlay = Overlay::Help;
        } else {
            return false;
        }
        true
    }

    fn on_list_key(&mut self, k: KeyEvent) {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        let alt = k.modifiers.contains(KeyModifiers::ALT);
        if self.keys.scope.matches(&k) {
            self.scope = (self.scope + 1) % self.scopes.len();
            self.widen_if_empty = false;
            self.message = Some((format!("Scope: {}", self.scopes[self.scope].label()), false));
            self.refresh();
            return;
        }
        let page = self.list_height.max(1) as isize;
        match k.code {
            KeyCode::Esc => self.quit = true,
            KeyCode::Enter => self.open_selected(),
            KeyCode::Tab | KeyCode::BackTab => self.focus_list = !self.focus_list,
            KeyCode::Up => self.move_selection(-1),
            KeyCode::Down => self.move_selection(1),
            KeyCode::Char('p') if ctrl => self.move_selection(-1),
            KeyCode::Char('n') if ctrl => self.move_selection(1),
            KeyCode::PageUp => self.move_selection(-page),
            KeyCode::PageDown => self.move_selection(page),
            KeyCode::Char('u') if ctrl => {
                self.input.clear();
                self.refresh();
            }
            KeyCode::Char('w') if ctrl => {
                let kept = self.input.trim_end().rfind(' ').map_or(0, |i| i + 1);
                self.input.truncate(kept);
                self.refresh();
            }
            _ if self.focus_list => self.on_focused_list_key(k),
            KeyCode::Char('?') if self.input.is_empty() => self.overlay = Overlay::Help,
            KeyCode::Backspace if self.input.pop().is_some() => self.refresh(),
            KeyCode::Char(c) if !ctrl && !alt => {
                self.input.push(c);
                self.refresh();
            }
            _ => {}
        }
    }

    fn on_focused_list_key(&mut self, k: KeyEvent) {
        if self.on_action_key(&k) {
            return;
        }
        match k.code {
            KeyCode::Char('j') => self.move_selection(1),
            KeyCode::Char('k') => self.move_selection(-1),
            KeyCode::Home | KeyCode::Char('g') => self.select(0),
            KeyCode::End | KeyCode::Char('G') => self.select(usize::MAX),
            KeyCode::Char(' ') => self.open_selected(),
            KeyCode::Char('/') => self.focus_list = false,
            KeyCode::Backspace => {
                self.focus_list = false;
                if self.input.pop().is_some() {
                    self.refresh();
                }
            }
            KeyCode::Char(c)
                if !k
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                // Typing goes back to the box.
                self.focus_list = false;
                self.input.push(c);
                self.refresh();
            }
            _ => {}
        }
    }

    fn on_transcript_key(&mut self, k: KeyEvent) {
        let keys = self.keys.clone();
        let height = self.transcript_height.max(1);
        if self.on_action_key(&k) {
            return;
        }
        if keys.diff.matches(&k) {
            if let Some(id) = self.current_session() {
                self.in_flight += 1;
                self.message = Some(("Reading what the session changed…".into(), false));
                self.send(Request::Diff { id });
            }
            return;
        }
        let Some(t) = self.transcripts.last_mut() else {
            return;
        };
        if keys.toggle_all.matches(&k) {
            t.toggle_all();
        } else if keys.next_match.matches(&k) || keys.prev_match.matches(&k) {
            let forward = keys.next_match.matches(&k);
            if t.match_count() == 0 {
                self.message = Some(("No matches in this transcript".into(), false));
            } else if !t.jump_match(forward) {
                self.message = Some((
                    if forward {
                        "No more matches below"
                    } else {
                        "No more matches above"
                    }
                    .into(),
                    false,
                ));
            }
        } else if keys.top.matches(&k) {
            t.top();
        } else if keys.bottom.matches(&k) {
            t.bottom();
        } else {
            match k.code {
                KeyCode::Esc | KeyCode::Char('q') | KeyCode::Left => {
                    self.transcripts.pop();
                    self.message = None;
                }
                KeyCode::Up | KeyCode::Char('k') => t.move_by(-1),
                KeyCode::Down | KeyCode::Char('j') => t.move_by(1),
                KeyCode::PageUp => t.move_by(-(height as isize)),
                KeyCode::PageDown => t.move_by(height as isize),
                KeyCode::Home => t.top(),
                KeyCode::End => t.bottom(),
                KeyCode::Enter | KeyCode::Char(' ') => {
                    if let Some(sub) = t.subagent_at_cursor() {
                        let id = sub.id.to_string();
                        self.open_transcript(id, None);
                    } else {
                        t.toggle_at_cursor();
                    }
                }
                _ => {}
            }
        }
    }

    /// Keys of the diff view: scroll, and back to the transcript.
    fn on_panel_key(&mut self, k: KeyEvent) {
        let height = self.transcript_height.max(1);
        let keys = self.keys.clone();
        let Some(d) = self.panel.as_mut() else {
            return;
        };
        if keys.top.matches(&k) {
            d.offset = 0;
            return;
        }
        if keys.bottom.matches(&k) {
            d.scroll(isize::MAX / 2, height);
            return;
        }
        match k.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Left => self.panel = None,
            _ if d.kind == PanelKind::Diff && keys.diff.matches(&k) => self.panel = None,
            KeyCode::Up | KeyCode::Char('k') => d.scroll(-1, height),
            KeyCode::Down | KeyCode::Char('j') => d.scroll(1, height),
            KeyCode::PageUp => d.scroll(-(height as isize), height),
            KeyCode::PageDown | KeyCode::Char(' ') => d.scroll(height as isize, height),
            _ => {}
        }
    }

    /// Handles the mouse wheel.
    pub fn on_mouse(&mut self, m: MouseEvent) {
        let delta = match m.kind {
            MouseEventKind::ScrollUp => -WHEEL,
            MouseEventKind::ScrollDown => WHEEL,
            _ => return,
        };
        if let Some(d) = self.panel.as_mut() {
            d.scroll(delta, self.transcript_height);
        } else if let Some(t) = self.transcripts.last_mut() {
            t.scroll_by(delta, self.transcript_height);
        } else if self.overlay == Overlay::None {
            self.move_selection(delta);
        }
    }
}

/// `base` with every filter `typed` sets replacing its own.
fn merge(mut base: SessionFilter, typed: SessionFilter) -> SessionFilter {
    for (slot, v) in [
        (&mut base.source, typed.source),
        (&mut base.repo, typed.repo),
        (&mut base.cwd, typed.cwd),
        (&mut base.branch, typed.branch),
        (&mut base.model, typed.model),
        (&mut base.since, typed.since),
        (&mut base.until, typed.until),
    ] {
        if v.is_some() {
            *slot = v;
        }
    }
    base
}
