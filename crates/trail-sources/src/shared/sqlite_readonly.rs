//! Read-only access to other tools' SQLite databases, shared by the SQLite-backed sources
//! (OpenCode, Cursor, Codex's state database...).
//!
//! A database is opened with `mode=ro` so no write lock is ever taken; when the owner's locks
//! or an unreadable WAL stop that, a private copy (with its `-wal` and `-journal`) is read
//! instead. Also the cell and issue helpers every such reader uses.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, ErrorCode, OpenFlags};
use serde_json::Value;
use trail_model::{truncate_chars, ParseIssue};

use crate::{FileParse, SourceError};

/// The first bytes of every SQLite database file.
pub(crate) const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";
/// Characters of a bad value kept in its parse issue.
const EXCERPT_CHARS: usize = 200;

/// Returns whether the file at `path` starts with the SQLite header.
pub(crate) fn is_sqlite_file(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 16];
    match fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)) {
        Ok(()) => head == SQLITE_MAGIC,
        Err(_) => false,
    }
}

/// A private copy of a database (and its `-wal`/`-journal`), removed with its folder on drop.
/// Drop the [`Connection`] reading it first.
#[derive(Debug)]
pub(crate) struct TempCopy {
    dir: PathBuf,
    db: PathBuf,
}

impl TempCopy {
    /// The copied database file.
    #[allow(dead_code)]
    pub(crate) fn path(&self) -> &Path {
        &self.db
    }
}

impl Drop for TempCopy {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Opens `path` read-only without taking write locks (`mode=ro` URI). When the owner's locks
/// or an unreadable WAL stop that (busy, locked, cannot open the shared memory...), copies the
/// database with its `-wal` and `-journal` into a private temporary folder and opens the copy.
/// The returned [`TempCopy`] must outlive the connection.
pub(crate) fn open_readonly(path: &Path) -> Result<(Connection, Option<TempCopy>), SourceError> {
    fs::metadata(path).map_err(|e| SourceError::io(path, e))?;
    match open_direct(path) {
        Ok(conn) => Ok((conn, None)),
        Err(e) if !wants_copy(&e) => Err(db_error(path, &e)),
        Err(first) => {
            let copy = make_copy(path).map_err(|e| SourceError::Database {
                path: path.to_path_buf(),
                reason: format!("{first}; copying the database failed: {e}"),
            })?;
            let conn = open_copy(&copy.db).map_err(|e| db_error(path, &e))?;
            Ok((conn, Some(copy)))
        }
    }
}

pub(crate) fn db_error(path: &Path, e: &rusqlite::Error) -> SourceError {
    SourceError::Database {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// Opens `path` read-only (`mode=ro`), never copying it: for small lookups made once per file,
/// where copying a locked database each time would cost more than the lookup is worth.
pub(crate) fn open_direct(path: &Path) -> rusqlite::Result<Connection> {
    let uri = format!("{}?mode=ro", file_uri(path));
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(uri, flags)?;
    conn.busy_timeout(Duration::from_millis(250))?;
    probe(&conn)?;
    Ok(conn)
}

fn open_copy(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    probe(&conn)?;
    Ok(conn)
}

/// Reads the schema, which is where a held lock or an unreadable WAL shows up.
fn probe(conn: &Connection) -> rusqlite::Result<()> {
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })?;
    Ok(())
}

/// Whether an open failure comes from another process holding the database.
fn wants_copy(e: &rusqlite::Error) -> bool {
    match e.sqlite_error_code() {
        Some(code) => !matches!(
            code,
            ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt | ErrorCode::OutOfMemory
        ),
        None => false,
    }
}

/// A `file:` URI for SQLite with every byte outside the unreserved set percent-encoded.
fn file_uri(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let bytes = abs.as_os_str().as_encoded_bytes();
    let mut out = String::from("file://");
    let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if drive {
        out.push('/');
    }
    for &b in bytes {
        let b = if b == b'\\' && cfg!(windows) { b'/' } else { b };
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/' | b':') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

fn make_copy(path: &Path) -> std::io::Result<TempCopy> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let base = std::env::temp_dir();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut made = None;
    for _ in 0..32 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("trail-sqlite-{}-{n}-{nanos}", std::process::id()));
        let mut builder = fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        match builder.create(&dir) {
            Ok(()) => {
                made = Some(dir);
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    let dir = made.ok_or_else(|| std::io::Error::other("no free temporary folder name"))?;
    let name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "db".into());
    let copy = TempCopy {
        db: dir.join(&name),
        dir,
    };
    fs::copy(path, &copy.db)?;
    for suffix in ["-wal", "-journal"] {
        let src = with_suffix(path, suffix);
        match fs::copy(&src, with_suffix(&copy.db, suffix)) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(copy)
}

/// Names of the tables in a database.
pub(crate) fn table_names(conn: &Connection) -> rusqlite::Result<HashSet<String>> {
    let mut stmt = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
    rows.collect()
}

/// Names of the columns of `table`.
pub(crate) fn column_names(conn: &Connection, table: &str) -> rusqlite::Result<HashSet<String>> {
    let mut stmt = conn.prepare(&format!("PRAGMA table_info(\"{table}\")"))?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(1))?;
    rows.collect()
}

/// The database's tables, when it has every one of `required`; else a format error naming
/// what `what` (the agent's database) lacks.
pub(crate) fn require_tables(
    conn: &Connection,
    path: &Path,
    required: &[&str],
    what: &str,
) -> Result<HashSet<String>, SourceError> {
    let tables = table_names(conn).map_err(|e| db_error(path, &e))?;
    if required.iter().all(|t| tables.contains(*t)) {
        return Ok(tables);
    }
    let names = match required {
        [one] => format!("no {one} table"),
        [init @ .., last] => format!("no {} and {last} tables", init.join(", ")),
        [] => unreachable!("a required table is missing, so one is named"),
    };
    Err(SourceError::format(path, format!("not a {what}: {names}")))
}

/// Every row of a query as JSON objects keyed by column name ([`cell_json`] values).
pub(crate) fn rows_as_json(conn: &Connection, sql: &str) -> rusqlite::Result<Vec<Value>> {
    let mut stmt = conn.prepare(sql)?;
    let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
    let mut out = Vec::new();
    let mut it = stmt.query([])?;
    while let Some(row) = it.next()? {
        let mut obj = serde_json::Map::new();
        for (i, name) in names.iter().enumerate() {
            obj.insert(
                name.clone(),
                row.get_ref(i).map(cell_json).unwrap_or(Value::Null),
            );
        }
        out.push(Value::Object(obj));
    }
    Ok(out)
}

/// A TEXT or BLOB cell as text (invalid UTF-8 replaced).
pub(crate) fn cell_text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Text(b) | ValueRef::Blob(b) => Some(String::from_utf8_lossy(b).into_owned()),
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Null => None,
    }
}

/// A cell as a JSON value (text and blobs as strings).
pub(crate) fn cell_json(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        ValueRef::Text(b) | ValueRef::Blob(b) => {
            Value::String(String::from_utf8_lossy(b).into_owned())
        }
    }
}

/// A parse issue about one database row or JSON file (no line numbers).
pub(crate) fn record_issue(path: &Path, what: &str, excerpt: &str, reason: &str) -> ParseIssue {
    ParseIssue {
        path: path.display().to_string(),
        line: None,
        byte_offset: None,
        excerpt: Some(truncate_chars(excerpt, EXCERPT_CHARS).to_string()),
        reason: format!("{what}: {reason}"),
    }
}

/// Reads a whole SQLite database read-only with `read` (from a private copy when the owner
/// holds it), noting the copy, and counts the file as parsed.
pub(crate) fn read_database(
    path: &Path,
    read: impl FnOnce(&Connection) -> Result<FileParse, SourceError>,
) -> Result<FileParse, SourceError> {
    let (conn, copy) = open_readonly(path)?;
    let result = read(&conn);
    drop(conn);
    let mut out = result?;
    if copy.is_some() {
        out.notes
            .push("the database was busy: read a private copy".to_string());
    }
    drop(copy);
    let size = fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    out.bytes_parsed = size;
    out.bytes_read = size;
    Ok(out)
}
