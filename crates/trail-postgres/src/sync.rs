//! `trail sync`: pushing a local store to the team store.
//!
//! 1. Each local session gets a digest of what the sync would send (its row, its counts, its
//!    usage rollup, whether it is redacted). The server keeps the digest it last received on the
//!    session's row (`sync_digest`), per store (`store_id`, a random id kept in the local
//!    store's `store_meta`): that is the watermark. A session whose digest matches is skipped
//!    without reading its messages, so a sync with nothing new reads one column per session.
//! 2. Include / exclude rules (repository, folder, agent) are applied locally, before anything
//!    is sent; a subagent follows its root session. Sessions this store pushed before that are
//!    now excluded, forgotten (`trail forget`) or gone from the store are deleted from the
//!    server.
//! 3. Sessions to push are sent in batches, each in one transaction: the old rows are deleted
//!    (cascading from `sessions`), the new ones copied in with `COPY ... FROM STDIN`, the digest
//!    with them. A sync killed at any moment leaves whole sessions, old or new, and the next
//!    sync sends what is still missing. Machines syncing at once touch different sessions;
//!    a session id another role already pushed is left alone and reported.
//! 4. Text is redacted on the way (trail-render's `Redactor`, as `trail export` does) unless
//!    the caller passes a disabled redactor (`--no-redact`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::time::Instant;

use postgres::Client;
use rusqlite::types::ValueRef;
use serde::Serialize;
use trail_render::{RedactionCounts, Redactor};
use trail_store::Store;

use crate::search_text::{
    push_turn_line, searched_fields, tsvector_text, turn_column, turn_tsvector_text, SEARCHED_KINDS,
};
use crate::tables::{Mirrored, CHILDREN, SESSIONS};
use crate::{schema, PgError, Result};

/// Changes when what a sync sends for a session changes (a new column, another redaction):
/// every session is then sent again once. 2: file snapshots are sent.
const SYNC_FORMAT: u32 = 2;

/// Messages per transaction at most (sessions are never split): a size known without reading
/// any text, so a sync that sends little reads little.
const BATCH_MESSAGES: i64 = 10_000;
/// Bytes read per transaction at most (after the session that crosses it): what bounds the
/// memory a sync holds, three batches at most (one being read, two being sent).
const BATCH_BYTES: u64 = 16 << 20;
/// Sessions per transaction at most.
const BATCH_SESSIONS: usize = 400;

/// One include or exclude rule: every field given must match.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SyncRule {
    /// The repository (`owner/name`); `*` matches any run of characters (`acme/*`).
    pub repo: Option<String>,
    /// The session's folder is this folder or inside it (`~` already expanded by the caller).
    pub folder: Option<String>,
    /// The agent (source name: `claude-code`, `codex`...).
    pub agent: Option<String>,
}

/// What leaves the machine: a session is pushed when it matches an include rule (or there are
/// none) and no exclude rule.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SyncRules {
    pub include: Vec<SyncRule>,
    pub exclude: Vec<SyncRule>,
}

impl SyncRule {
    fn matches(&self, s: &LocalSession) -> bool {
        if let Some(r) = &self.repo {
            match &s.repository {
                Some(repo) if glob(r, repo) => {}
                _ => return false,
            }
        }
        if let Some(f) = &self.folder {
            let f = f.trim_end_matches('/');
            match &s.cwd {
                Some(cwd) if cwd == f || cwd.starts_with(&format!("{f}/")) => {}
                _ => return false,
            }
        }
        if let Some(a) = &self.agent {
            if &s.source != a {
                return false;
            }
        }
        true
    }
}

impl SyncRules {
    fn allows(&self, s: &LocalSession) -> bool {
        (self.include.is_empty() || self.include.iter().any(|r| r.matches(s)))
            && !self.exclude.iter().any(|r| r.matches(s))
    }
}

/// `*` matches any run of characters; ASCII case is ignored (GitHub's names are).
fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.to_ascii_lowercase().chars().collect();
    let t: Vec<char> = text.to_ascii_lowercase().chars().collect();
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// How a sync runs.
pub struct SyncOptions<'a> {
    /// The pushing machine's name (`host` on the server).
    pub host: String,
    pub rules: SyncRules,
    /// Secrets become `[REDACTED:kind]` before they leave (a disabled redactor sends as is).
    pub redactor: &'a Redactor,
    /// Say what would be pushed and removed; send nothing.
    pub dry_run: bool,
    /// Sessions per transaction at most (0: the default, 400). Smaller batches commit more
    /// often (tests kill a sync between two).
    pub batch_sessions: usize,
    /// Opens another connection to the same server: with it, two batches are sent at once
    /// (each in its own transaction). Without it, one connection sends every batch.
    pub connect: Option<&'a (dyn Fn() -> Result<Client> + Sync)>,
}

/// Progress of a sync, for a progress bar.
pub trait SyncProgress {
    /// The push is about to send `sessions` sessions.
    fn start(&self, sessions: u64);
    /// `n` more sessions were committed.
    fn advance(&self, n: u64);
}

struct NoProgress;
impl SyncProgress for NoProgress {
    fn start(&self, _: u64) {}
    fn advance(&self, _: u64) {}
}

/// A progress sink that shows nothing.
pub const NO_PROGRESS: &dyn SyncProgress = &NoProgress;

/// What a sync would do (`--dry-run`) or did.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct SyncPlan {
    /// Sessions new on the server.
    pub new: Vec<String>,
    /// Sessions changed since the last sync.
    pub changed: Vec<String>,
    /// Sessions removed from the server: forgotten, excluded since, or gone from the store.
    pub removed: Vec<String>,
    /// Sessions left out by the include / exclude rules.
    pub excluded: usize,
    /// Sessions already on the server as they are.
    pub unchanged: usize,
    /// Sessions another role pushed first (left alone).
    pub owned_by_others: Vec<String>,
}

/// What a sync did.
#[derive(Debug, Clone, Serialize)]
pub struct SyncSummary {
    pub plan: SyncPlan,
    pub dry_run: bool,
    /// Messages sent.
    pub messages: u64,
    /// Bytes of text sent (before the protocol's own framing).
    pub bytes: u64,
    /// Secrets redacted, by kind.
    pub redactions: BTreeMap<String, u64>,
    pub redacted: bool,
    /// Migrations applied on the server.
    pub migrations: usize,
    pub elapsed_ms: u64,
    /// The role that pushed (`pushed_by`).
    pub user: String,
    pub host: String,
}

/// A local session as the plan sees it.
struct LocalSession {
    id: String,
    source: String,
    repository: Option<String>,
    cwd: Option<String>,
    parent: Option<String>,
    /// Messages it holds (`sessions.message_count`), to size batches.
    messages: i64,
    digest: String,
}

/// The `store_meta` key of the local store's id on team stores.
const STORE_ID: &str = "sync_store_id";

/// Pushes `store` to the team store `client` is connected to.
pub fn sync(
    store: &Store,
    client: &mut Client,
    o: &SyncOptions<'_>,
    progress: &dyn SyncProgress,
) -> Result<SyncSummary> {
    let started = Instant::now();
    let migrations = if o.dry_run {
        0
    } else {
        let before = schema::version(client)?;
        schema::ensure(client)?;
        (schema::CURRENT - before).max(0) as usize
    };
    let dry_run_on_empty = o.dry_run && schema::version(client)? == 0;
    let user: String = client.query_one("SELECT current_user::text", &[])?.get(0);
    let store_id = store_id(store, !o.dry_run)?;
    // One read transaction: the digests and the rows sent are of one state of the store, even
    // while `trail index` writes (WAL readers do not block it). Rolled back when dropped.
    let _snapshot = store.connection().unchecked_transaction()?;
    let local = local_sessions(store, o.redactor.enabled())?;
    let mut plan = SyncPlan::default();
    let included = included_sessions(&local, &o.rules, &mut plan);
    let (remote, others) = if dry_run_on_empty {
        (HashMap::new(), HashMap::new())
    } else {
        remote_sessions(client, &store_id, &user, &included)?
    };
    let to_push = plan_pushes(&included, &remote, &others, &mut plan);
    plan.removed = removed_sessions(store, client, &remote, &included, dry_run_on_empty)?;
    let mut summary = SyncSummary {
        plan,
        dry_run: o.dry_run,
        messages: 0,
        bytes: 0,
        redactions: BTreeMap::new(),
        redacted: o.redactor.enabled(),
        migrations,
        elapsed_ms: 0,
        user: user.clone(),
        host: o.host.clone(),
    };
    if o.dry_run {
        summary.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(summary);
    }
    if !summary.plan.removed.is_empty() {
        let mut tx = client.transaction()?;
        tx.execute(
            "DELETE FROM sessions WHERE id = ANY($1) AND pushed_by = current_user",
            &[&summary.plan.removed],
        )?;
        tx.commit()?;
    }
    let now = trail_store::now_iso();
    let counts = push_planned(
        store,
        client,
        &to_push,
        o,
        &store_id,
        &now,
        &mut summary,
        progress,
    )?;
    let total = included.len() as i64 - summary.plan.owned_by_others.len() as i64;
    client.execute(
        "INSERT INTO sync_stores (store_id, host, last_sync_at, sessions) VALUES ($1, $2, $3, $4)
         ON CONFLICT (store_id, pushed_by) DO UPDATE SET host = excluded.host,
             last_sync_at = excluded.last_sync_at, sessions = excluded.sessions",
        &[&store_id, &o.host, &now, &total],
    )?;
    summary.redactions = counts.0;
    summary.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(summary)
}

/// The sessions the include / exclude rules let through (a subagent goes with its root);
/// counts the others in `plan`.
fn included_sessions<'l>(
    local: &'l [LocalSession],
    rules: &SyncRules,
    plan: &mut SyncPlan,
) -> Vec<&'l LocalSession> {
    let roots = roots_of(local);
    let by_id: HashMap<&str, &LocalSession> = local.iter().map(|s| (s.id.as_str(), s)).collect();
    let mut included: Vec<&LocalSession> = Vec::new();
    for s in local {
        let root = roots
            .get(s.id.as_str())
            .and_then(|r| by_id.get(r))
            .copied()
            .unwrap_or(s);
        if rules.allows(root) && rules.allows(s) {
            included.push(s);
        } else {
            plan.excluded += 1;
        }
    }
    included
}

/// Session id -> digest.
type Digests = HashMap<String, String>;

/// What the server holds of this store (id -> digest), and the ids of `included` another role
/// holds (id -> that role).
fn remote_sessions(
    client: &mut Client,
    store_id: &str,
    user: &str,
    included: &[&LocalSession],
) -> Result<(Digests, HashMap<String, String>)> {
    let mut remote: Digests = HashMap::new();
    let mut others: HashMap<String, String> = HashMap::new();
    for r in client.query(
        "SELECT id, sync_digest FROM sessions WHERE store_id = $1 AND pushed_by = current_user",
        &[&store_id],
    )? {
        remote.insert(r.get(0), r.get(1));
    }
    let ids: Vec<&str> = included
        .iter()
        .filter(|s| !remote.contains_key(&s.id))
        .map(|s| s.id.as_str())
        .collect();
    for r in client.query(
        "SELECT id, pushed_by, store_id FROM sessions WHERE id = ANY($1)",
        &[&ids],
    )? {
        let (id, by): (String, String) = (r.get(0), r.get(1));
        if by != user {
            others.insert(id, by);
        } else {
            // This role pushed it from another store (a copied store): this one takes it.
            remote.insert(id, String::new());
        }
    }
    Ok((remote, others))
}

/// The sessions to push (new or changed), noting each in `plan`; another role's are left alone.
fn plan_pushes<'l>(
    included: &[&'l LocalSession],
    remote: &Digests,
    others: &HashMap<String, String>,
    plan: &mut SyncPlan,
) -> Vec<&'l LocalSession> {
    let mut to_push: Vec<&LocalSession> = Vec::new();
    for s in included {
        if others.contains_key(&s.id) {
            plan.owned_by_others.push(s.id.clone());
            continue;
        }
        match remote.get(&s.id) {
            Some(d) if *d == s.digest => plan.unchanged += 1,
            Some(_) => {
                plan.changed.push(s.id.clone());
                to_push.push(s);
            }
            None => {
                plan.new.push(s.id.clone());
                to_push.push(s);
            }
        }
    }
    to_push
}

/// The sessions to delete from the server: this store's that are no longer included, and
/// forgotten ones wherever this role pushed them (from any store).
fn removed_sessions(
    store: &Store,
    client: &mut Client,
    remote: &Digests,
    included: &[&LocalSession],
    dry_run_on_empty: bool,
) -> Result<Vec<String>> {
    let tombstones: Vec<String> = store.forgotten()?.into_iter().map(|f| f.id).collect();
    let included_ids: BTreeSet<&str> = included.iter().map(|s| s.id.as_str()).collect();
    let mut removed: BTreeSet<String> = remote
        .keys()
        .filter(|id| !included_ids.contains(id.as_str()))
        .cloned()
        .collect();
    if !dry_run_on_empty && !tombstones.is_empty() {
        for r in client.query(
            "SELECT id FROM sessions WHERE id = ANY($1) AND pushed_by = current_user",
            &[&tombstones],
        )? {
            removed.insert(r.get(0));
        }
    }
    Ok(removed.into_iter().collect())
}

/// Pushes the planned sessions in batches, over a second connection too when there is more
/// than one batch; returns the redactions made.
#[allow(clippy::too_many_arguments)]
fn push_planned(
    store: &Store,
    client: &mut Client,
    to_push: &[&LocalSession],
    o: &SyncOptions<'_>,
    store_id: &str,
    now: &str,
    summary: &mut SyncSummary,
    progress: &dyn SyncProgress,
) -> Result<RedactionCounts> {
    progress.start(to_push.len() as u64);
    let mut counts = RedactionCounts::default();
    let batch_limit = match o.batch_sessions {
        0 => BATCH_SESSIONS,
        n => n,
    };
    // A second connection when there will be more than one batch: two transactions at once.
    let messages: i64 = to_push.iter().map(|s| s.messages).sum();
    let several = to_push.len() > batch_limit || messages > BATCH_MESSAGES;
    let mut second = match (o.connect, several) {
        (Some(connect), true) => Some(connect()?),
        _ => None,
    };
    let mut clients: Vec<&mut Client> = vec![&mut *client];
    if let Some(c) = second.as_mut() {
        clients.push(c);
    }
    push_all(
        store,
        clients,
        to_push,
        batch_limit,
        o,
        store_id,
        now,
        summary,
        &mut counts,
        progress,
    )?;
    drop(second);
    Ok(counts)
}

/// The local store's id on team stores, made once.
fn store_id(store: &Store, create: bool) -> Result<String> {
    if let Some(id) = store.meta(STORE_ID)? {
        return Ok(id);
    }
    let seed = format!(
        "{}:{}:{:?}",
        std::process::id(),
        trail_store::now_iso(),
        Instant::now()
    );
    let id = format!(
        "{:032x}",
        xxhash_rust::xxh3::xxh3_128(format!("{seed}:{}", store.path().display()).as_bytes())
    );
    if create {
        store.connection().execute(
            "INSERT OR IGNORE INTO store_meta (key, value) VALUES (?1, ?2)",
            [STORE_ID, &id],
        )?;
        return Ok(store.meta(STORE_ID)?.unwrap_or(id));
    }
    Ok(id)
}

/// Every local session with the digest of what a sync sends for it.
fn local_sessions(store: &Store, redacted: bool) -> Result<Vec<LocalSession>> {
    let conn = store.connection();
    // The usage rollup moves when the cross-file dedupe recounts a request, which does not
    // touch the session's own row.
    let mut usage: HashMap<String, (i64, i64, f64)> = HashMap::new();
    {
        let mut stmt = conn.prepare(
            "SELECT session_id, sum(requests), sum(input_tokens + output_tokens
                 + cache_creation_tokens + cache_read_tokens), total(cost_usd)
             FROM usage_rollup GROUP BY session_id",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            usage.insert(r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?));
        }
    }
    let cols = SESSIONS.column_list();
    let mut stmt = conn.prepare(&format!("SELECT {cols} FROM sessions ORDER BY id"))?;
    let n = SESSIONS.columns.len();
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(&SYNC_FORMAT.to_le_bytes());
        h.update(&[redacted as u8]);
        for i in 0..n {
            match r.get_ref(i)? {
                ValueRef::Null => h.update(b"\x00N"),
                ValueRef::Integer(v) => h.update(&v.to_le_bytes()),
                ValueRef::Real(v) => h.update(&v.to_le_bytes()),
                ValueRef::Text(t) | ValueRef::Blob(t) => {
                    h.update(&(t.len() as u64).to_le_bytes());
                    h.update(t);
                }
            }
        }
        let id: String = r.get(0)?;
        if let Some((a, b, c)) = usage.get(&id) {
            h.update(&a.to_le_bytes());
            h.update(&b.to_le_bytes());
            h.update(&c.to_le_bytes());
        }
        out.push(LocalSession {
            source: r.get(8)?,
            repository: r.get(2)?,
            cwd: r.get(1)?,
            parent: r.get(12)?,
            messages: r.get(19)?,
            digest: format!("{:032x}", h.digest128()),
            id,
        });
    }
    Ok(out)
}

/// Each session's root (through parent links the store holds; 64 levels at most).
fn roots_of(local: &[LocalSession]) -> HashMap<&str, &str> {
    let parent: HashMap<&str, &str> = local
        .iter()
        .filter_map(|s| s.parent.as_deref().map(|p| (s.id.as_str(), p)))
        .collect();
    let ids: BTreeSet<&str> = local.iter().map(|s| s.id.as_str()).collect();
    let mut out = HashMap::new();
    for s in local {
        let mut at = s.id.as_str();
        for _ in 0..64 {
            match parent.get(at) {
                Some(p) if ids.contains(p) && *p != at => at = p,
                _ => break,
            }
        }
        out.insert(s.id.as_str(), at);
    }
    out
}

/// The columns of a `turn_search` row a sync sends.
const TURN_SEARCH_COLUMNS: &str = "session_id, turn_index, first_at, last_at, search_vector";

/// One session's rows in COPY's text format, one buffer per table (`sessions`, then
/// [`CHILDREN`] in order, then `turn_search`), read and redacted on the calling thread.
struct EncodedSession {
    id: String,
    tables: Vec<Vec<u8>>,
    messages: u64,
    bytes: u64,
}

/// What a sender did with a batch.
struct Sent {
    /// Sessions committed.
    sessions: u64,
    messages: u64,
    bytes: u64,
    /// Sessions left alone: another role pushed them first.
    taken: Vec<String>,
}

/// Reads and encodes one session (the local store is read on the calling thread only).
fn encode_session(
    conn: &rusqlite::Connection,
    s: &LocalSession,
    o: &SyncOptions<'_>,
    store_id: &str,
    now: &str,
    counts: &mut RedactionCounts,
) -> Result<EncodedSession> {
    let mut e = EncodedSession {
        id: s.id.clone(),
        tables: Vec::with_capacity(2 + CHILDREN.len()),
        messages: 0,
        bytes: 0,
    };
    e.tables
        .push(encode_session_row(conn, s, o, store_id, now, counts)?);
    let mut turns = BTreeMap::new();
    for table in CHILDREN {
        let (mut buf, messages) = encode_child(conn, table, &s.id, o.redactor, counts, &mut turns)?;
        // Held until sent: no growth slack.
        buf.shrink_to_fit();
        e.messages += messages;
        e.tables.push(buf);
    }
    // The turns' full-text rows, from the text just encoded (redacted as it was).
    let mut line = Vec::new();
    for (turn, doc) in &turns {
        push_text(&mut line, &s.id);
        line.push(b'\t');
        line.extend_from_slice(turn.to_string().as_bytes());
        for at in [&doc.first_at, &doc.last_at] {
            line.push(b'\t');
            match at {
                Some(at) => push_text(&mut line, at),
                None => line.extend_from_slice(b"\\N"),
            }
        }
        line.push(b'\t');
        push_text(&mut line, &turn_tsvector_text(&doc.columns));
        line.push(b'\n');
    }
    line.shrink_to_fit();
    e.tables.push(line);
    e.bytes = e.tables.iter().map(|t| t.len() as u64).sum();
    Ok(e)
}

/// The columns a COPY into `table` names (the session row carries who pushed it; a message
/// its search vector).
fn copy_columns(table: &Mirrored) -> String {
    let cols = table.column_list();
    match table.name {
        "sessions" => format!("{cols}, host, store_id, pushed_at, sync_digest, redacted"),
        "messages" => format!("{cols}, search_vector"),
        _ => cols,
    }
}

fn encode_session_row(
    conn: &rusqlite::Connection,
    s: &LocalSession,
    o: &SyncOptions<'_>,
    store_id: &str,
    now: &str,
    counts: &mut RedactionCounts,
) -> Result<Vec<u8>> {
    let cols = SESSIONS.column_list();
    let mut stmt = conn.prepare_cached(&format!("SELECT {cols} FROM sessions WHERE id = ?1"))?;
    let mut rows = stmt.query([&s.id])?;
    let mut line = Vec::new();
    while let Some(r) = rows.next()? {
        for (i, c) in SESSIONS.columns.iter().enumerate() {
            let v = r.get_ref(i)?;
            let redact = *c == "summary";
            push_value(&mut line, v, redact.then_some(o.redactor), counts);
            line.push(b'\t');
        }
        for v in [
            o.host.as_str(),
            store_id,
            now,
            s.digest.as_str(),
            if o.redactor.enabled() { "t" } else { "f" },
        ] {
            push_text(&mut line, v);
            line.push(b'\t');
        }
        line.pop();
        line.push(b'\n');
    }
    Ok(line)
}

/// One session's rows of a child table; the buffer and how many messages it holds. Messages
/// also add their searched text to their turn's row of `turn_search`.
fn encode_child(
    conn: &rusqlite::Connection,
    table: &Mirrored,
    session_id: &str,
    redactor: &Redactor,
    counts: &mut RedactionCounts,
    turns: &mut BTreeMap<i64, TurnText>,
) -> Result<(Vec<u8>, u64)> {
    let cols = table.column_list();
    let is_messages = table.name == "messages";
    let redacted: &[&str] = REDACTED
        .iter()
        .find(|(t, _)| *t == table.name)
        .map(|(_, c)| *c)
        .unwrap_or(&[]);
    let order = if table.has_id { " ORDER BY id" } else { "" };
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {cols} FROM {} WHERE session_id = ?1{order}",
        table.name
    ))?;
    let kind_at = table.columns.iter().position(|c| *c == "kind");
    let field_at = |name: &str| table.columns.iter().position(|c| *c == name);
    let (text_at, input_at, output_at) = (
        field_at("text"),
        field_at("tool_input"),
        field_at("tool_output"),
    );
    let (turn_at, time_at) = (field_at("turn_index"), field_at("timestamp"));
    let mut out = Vec::new();
    let mut messages = 0u64;
    let mut cells: Vec<Option<String>> = Vec::new();
    let mut rows = stmt.query([session_id])?;
    while let Some(r) = rows.next()? {
        cells.clear();
        for (i, c) in table.columns.iter().enumerate() {
            let v = r.get_ref(i)?;
            let redact = redacted.contains(c).then_some(redactor);
            let sent = push_value(&mut out, v, redact, counts);
            if is_messages {
                cells.push(sent);
            }
            out.push(b'\t');
        }
        if is_messages {
            messages += 1;
            let kind = kind_at
                .and_then(|k| r.get_ref(k).ok())
                .and_then(|v| v.as_str().ok().map(str::to_string));
            let searched = kind.as_deref().is_some_and(|k| SEARCHED_KINDS.contains(&k));
            if searched {
                let get = |at: Option<usize>| at.and_then(|i| cells[i].as_deref());
                let fields = searched_fields(get(text_at), get(input_at), get(output_at));
                push_text(&mut out, &tsvector_text(&fields));
                let turn = turn_at
                    .and_then(|i| r.get_ref(i).ok())
                    .and_then(|v| v.as_i64().ok())
                    .unwrap_or(-1);
                let doc = turns.entry(turn).or_default();
                let column = turn_column(kind.as_deref().unwrap_or(""));
                push_turn_line(&mut doc.columns[column], &fields[0]);
                push_turn_line(&mut doc.columns[2], &fields[1]);
                push_turn_line(&mut doc.columns[3], &fields[2]);
                let at = time_at
                    .and_then(|i| r.get_ref(i).ok())
                    .and_then(|v| v.as_str().ok().map(str::to_string));
                if let Some(at) = at {
                    if doc.first_at.as_deref().is_none_or(|f| at.as_str() < f) {
                        doc.first_at = Some(at.clone());
                    }
                    if doc.last_at.as_deref().is_none_or(|l| at.as_str() > l) {
                        doc.last_at = Some(at);
                    }
                }
            } else {
                out.extend_from_slice(b"\\N");
            }
        } else {
            out.pop();
        }
        out.push(b'\n');
    }
    Ok((out, messages))
}

/// Sends one encoded batch in one transaction.
fn send_batch(client: &mut Client, batch: &[EncodedSession], copy: CopyMode) -> Result<Sent> {
    let mut tx = client.transaction()?;
    // Two machines may push the same session id at once (a store copied between them): each
    // id is locked for the transaction, in one order everywhere (no deadlock), then whoever
    // holds it now is read again. Another role's session is left alone.
    let ids: Vec<&str> = batch.iter().map(|s| s.id.as_str()).collect();
    let mut keys: Vec<i64> = tx
        .query(
            "SELECT DISTINCT hashtextextended(id, 0) FROM unnest($1::text[]) AS id",
            &[&ids],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    keys.sort_unstable();
    // One statement takes them all, in the array's order.
    tx.execute(
        "SELECT count(pg_advisory_xact_lock(k)) FROM unnest($1::bigint[]) AS k",
        &[&keys],
    )?;
    let taken: BTreeSet<String> = tx
        .query(
            "SELECT id FROM sessions WHERE id = ANY($1) AND pushed_by <> current_user",
            &[&ids],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let kept: Vec<&EncodedSession> = batch.iter().filter(|s| !taken.contains(&s.id)).collect();
    let ids: Vec<&str> = kept.iter().map(|s| s.id.as_str()).collect();
    tx.execute(
        "DELETE FROM sessions WHERE id = ANY($1) AND pushed_by = current_user",
        &[&ids],
    )?;
    // Sessions first (children reference them), the turns' search rows last.
    let targets = std::iter::once(&SESSIONS)
        .chain(CHILDREN)
        .map(|t| (t.name, copy_columns(t)))
        .chain(std::iter::once((
            "turn_search",
            TURN_SEARCH_COLUMNS.to_string(),
        )));
    for (t, (name, all)) in targets.enumerate() {
        if kept.iter().all(|s| s.tables[t].is_empty()) {
            continue;
        }
        let target = stage(&mut tx, name, copy)?;
        let mut w = tx.copy_in(&format!("COPY {target} ({all}) FROM STDIN"))?;
        for s in &kept {
            w.write_all(&s.tables[t]).map_err(io_error)?;
        }
        w.finish()?;
        unstage(&mut tx, name, &all, copy)?;
    }
    tx.commit()?;
    Ok(Sent {
        sessions: kept.len() as u64,
        messages: kept.iter().map(|s| s.messages).sum(),
        bytes: kept.iter().map(|s| s.bytes).sum(),
        taken: taken.into_iter().collect(),
    })
}

/// Encodes batches on this thread and sends them over `clients`, one batch per connection at a
/// time: the server works on two transactions at once while the next batch is read. Each
/// batch commits on its own, so a sync killed at any moment leaves whole sessions.
#[allow(clippy::too_many_arguments)]
fn push_all(
    store: &Store,
    clients: Vec<&mut Client>,
    to_push: &[&LocalSession],
    batch_limit: usize,
    o: &SyncOptions<'_>,
    store_id: &str,
    now: &str,
    summary: &mut SyncSummary,
    counts: &mut RedactionCounts,
    progress: &dyn SyncProgress,
) -> Result<()> {
    use std::sync::mpsc;
    let conn = store.connection();
    let (job_tx, job_rx) = mpsc::sync_channel::<Vec<EncodedSession>>(0);
    let job_rx = std::sync::Mutex::new(job_rx);
    let (done_tx, done_rx) = mpsc::channel::<Result<Sent>>();
    let mut first_error: Option<PgError> = None;
    let apply =
        |r: Result<Sent>, summary: &mut SyncSummary, first_error: &mut Option<PgError>| match r {
            Ok(sent) => {
                for id in &sent.taken {
                    summary.plan.new.retain(|n| n != id);
                    summary.plan.changed.retain(|n| n != id);
                    summary.plan.owned_by_others.push(id.clone());
                }
                summary.messages += sent.messages;
                summary.bytes += sent.bytes;
                progress.advance(sent.sessions + sent.taken.len() as u64);
            }
            Err(e) => {
                if first_error.is_none() {
                    *first_error = Some(e);
                }
            }
        };
    std::thread::scope(|scope| {
        for client in clients {
            let job_rx = &job_rx;
            let done_tx = done_tx.clone();
            scope.spawn(move || {
                let mode = copy_mode(client);
                let mut failed = mode.is_err();
                if let Err(e) = &mode {
                    let _ = done_tx.send(Err(PgError::Server(e.to_string())));
                }
                loop {
                    let job = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => break,
                    };
                    let Ok(batch) = job else { break };
                    // After a failure, batches are taken and dropped (the encoder stops at the
                    // error it is sent), so the encoder never waits on a sender that is gone.
                    let (false, Ok(m)) = (failed, &mode) else {
                        continue;
                    };
                    let result = send_batch(client, &batch, *m);
                    failed = result.is_err();
                    let _ = done_tx.send(result);
                }
            });
        }
        drop(done_tx);
        let mut rest = to_push.iter().peekable();
        'batches: while rest.peek().is_some() {
            while let Ok(r) = done_rx.try_recv() {
                apply(r, summary, &mut first_error);
            }
            if first_error.is_some() {
                break;
            }
            // A batch ends at a count of sessions, of messages or of bytes read, whichever
            // comes first (sessions are never split).
            let mut batch: Vec<EncodedSession> = Vec::new();
            let (mut messages, mut bytes) = (0i64, 0u64);
            while let Some(s) = rest.next_if(|_| {
                batch.len() < batch_limit && messages < BATCH_MESSAGES && bytes < BATCH_BYTES
            }) {
                match encode_session(conn, s, o, store_id, now, counts) {
                    Ok(e) => {
                        messages += s.messages;
                        bytes += e.bytes;
                        batch.push(e);
                    }
                    Err(e) => {
                        first_error = Some(e);
                        break 'batches;
                    }
                }
            }
            if job_tx.send(batch).is_err() {
                break;
            }
        }
        drop(job_tx);
        for r in done_rx.iter() {
            apply(r, summary, &mut first_error);
        }
    });
    match first_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Columns whose text is redacted before it leaves.
const REDACTED: &[(&str, &[&str])] = &[
    ("messages", &["text", "tool_input", "tool_output", "extra"]),
    ("turns", &["user_message", "assistant_response"]),
    (
        "checkpoints",
        &[
            "title",
            "overview",
            "history",
            "work_done",
            "technical_details",
            "important_files",
            "next_steps",
        ],
    ),
    ("file_snapshots", &["content"]),
    ("workspace_artifacts", &["content"]),
];

/// A turn's row of `turn_search`: its four columns (prompts, answers, tool inputs, tool
/// outputs, as the local search database builds them) and its time range.
#[derive(Default)]
struct TurnText {
    columns: [String; 4],
    first_at: Option<String>,
    last_at: Option<String>,
}

/// How rows reach the tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CopyMode {
    /// `COPY` straight into the tables: row-level security does not apply to this role (the
    /// tables' owner, or a role with BYPASSRLS), so there is no policy to check.
    Direct,
    /// Through a staging table (see [`stage`]).
    Staged,
}

/// Whether this role copies straight into the tables, and the session's settings for a push.
fn copy_mode(client: &mut Client) -> Result<CopyMode> {
    // Large text (tool output) is compressed with lz4 when the server has it: several times
    // faster than the default pglz, at about its ratio. A server built without it keeps pglz.
    if client
        .batch_execute("SET default_toast_compression = 'lz4'")
        .is_err()
    {
        tracing::debug!("the server has no lz4 compression: pglz");
    }
    let tables: Vec<&str> = std::iter::once(SESSIONS.name)
        .chain(CHILDREN.iter().map(|t| t.name))
        .chain(std::iter::once("turn_search"))
        .collect();
    let active: bool = client
        .query_one(
            "SELECT coalesce(bool_or(row_security_active(t::regclass)), true)
             FROM unnest($1::text[]) AS t",
            &[&tables],
        )?
        .get(0);
    Ok(if active {
        CopyMode::Staged
    } else {
        CopyMode::Direct
    })
}

/// The table rows of `table` are copied into. PostgreSQL refuses `COPY FROM` into a table whose
/// row-level security applies to this role, so such a role copies into a temporary table of the
/// same shape (this connection's own, emptied at commit), then inserts, where the policies
/// apply. A role they do not apply to copies straight into the table.
fn stage(tx: &mut postgres::Transaction<'_>, table: &str, copy: CopyMode) -> Result<String> {
    if copy == CopyMode::Direct {
        return Ok(table.to_string());
    }
    let name = format!("trail_stage_{table}");
    tx.batch_execute(&format!(
        "CREATE TEMP TABLE IF NOT EXISTS {name} (LIKE {table} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
    ))?;
    Ok(name)
}

/// Moves the staged rows of `table` into it (the row-level security policies check each).
fn unstage(
    tx: &mut postgres::Transaction<'_>,
    table: &str,
    columns: &str,
    copy: CopyMode,
) -> Result<()> {
    if copy == CopyMode::Direct {
        return Ok(());
    }
    tx.batch_execute(&format!(
        "INSERT INTO {table} ({columns}) SELECT {columns} FROM trail_stage_{table};
         TRUNCATE trail_stage_{table};"
    ))?;
    Ok(())
}

fn io_error(e: std::io::Error) -> PgError {
    PgError::Server(format!("sending rows: {e}"))
}

/// Appends one value in COPY's text format; returns the text sent (for the messages' search
/// vector), after redaction.
fn push_value(
    line: &mut Vec<u8>,
    v: ValueRef<'_>,
    redactor: Option<&Redactor>,
    counts: &mut RedactionCounts,
) -> Option<String> {
    match v {
        ValueRef::Null => {
            line.extend_from_slice(b"\\N");
            None
        }
        ValueRef::Integer(i) => {
            line.extend_from_slice(i.to_string().as_bytes());
            None
        }
        ValueRef::Real(f) => {
            line.extend_from_slice(format!("{f:?}").as_bytes());
            None
        }
        ValueRef::Text(t) | ValueRef::Blob(t) => {
            let text = String::from_utf8_lossy(t);
            let text = match redactor {
                Some(r) if r.enabled() => r.redact(&text, counts).into_owned(),
                _ => text.into_owned(),
            };
            push_text(line, &text);
            Some(text)
        }
    }
}

/// Appends text escaped for COPY's text format (PostgreSQL text cannot hold NUL: dropped).
fn push_text(line: &mut Vec<u8>, text: &str) {
    for b in text.bytes() {
        match b {
            b'\\' => line.extend_from_slice(b"\\\\"),
            b'\t' => line.extend_from_slice(b"\\t"),
            b'\n' => line.extend_from_slice(b"\\n"),
            b'\r' => line.extend_from_slice(b"\\r"),
            0 => {}
            b => line.push(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_repositories() {
        assert!(glob("acme/*", "acme/secret"));
        assert!(glob("ACME/secret", "acme/secret"));
        assert!(!glob("acme/*", "other/acme"));
        assert!(glob("*", "x"));
        assert!(glob("*/priv*", "me/private-notes"));
    }

    #[test]
    fn copy_text_is_escaped() {
        let mut line = Vec::new();
        push_text(&mut line, "a\tb\nc\\d\0e");
        assert_eq!(line, b"a\\tb\\nc\\\\de");
    }
}
