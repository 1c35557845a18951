//! Which workspace folder each Cursor composer belongs to, from the per-workspace databases
//! beside the global one (`User/workspaceStorage/*/state.vscdb`); read by the global store's
//! parser and by the agent transcripts' (`cursor_transcripts`).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;

use crate::json_fields::jstr;
use crate::sqlite_readonly::{cell_text, open_readonly, table_names};

/// Decodes a `file://` URI to a path (`None` for other schemes).
fn uri_to_path(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(n) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(n);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    let mut path = String::from_utf8_lossy(&out).into_owned();
    // `file:///c:/x` is `c:/x`.
    let b = path.as_bytes();
    if b.len() >= 3 && b[0] == b'/' && b[1].is_ascii_alphabetic() && b[2] == b':' {
        path.remove(0);
    }
    (!path.is_empty()).then_some(path)
}

/// Maps composer ids to their workspace folder from `User/workspaceStorage/*/`; also returns
/// how many workspace databases could not be read. Composers claimed by two folders are left
/// out.
pub(crate) fn workspace_folders(global_db: &Path) -> (HashMap<String, String>, usize) {
    let mut map: HashMap<String, String> = HashMap::new();
    let mut ambiguous: HashSet<String> = HashSet::new();
    let mut unreadable = 0;
    let Some(global_dir) = global_db
        .parent()
        .filter(|p| p.file_name().is_some_and(|n| n == "globalStorage"))
    else {
        return (map, 0);
    };
    let Some(ws_root) = global_dir.parent().map(|p| p.join("workspaceStorage")) else {
        return (map, 0);
    };
    let Ok(entries) = fs::read_dir(&ws_root) else {
        return (map, 0);
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let folder = crate::whole::read_json_lenient(&dir.join("workspace.json"))
            .and_then(|v| jstr(&v, "folder").and_then(uri_to_path));
        let Some(folder) = folder else {
            continue;
        };
        let db = dir.join("state.vscdb");
        if !db.is_file() {
            continue;
        }
        let ids = match read_workspace_composers(&db) {
            Ok(ids) => ids,
            Err(()) => {
                unreadable += 1;
                continue;
            }
        };
        for id in ids {
            match map.get(&id) {
                Some(existing) if *existing != folder => {
                    ambiguous.insert(id);
                }
                _ => {
                    map.insert(id, folder.clone());
                }
            }
        }
    }
    for id in &ambiguous {
        map.remove(id);
    }
    (map, unreadable)
}

fn read_workspace_composers(db: &Path) -> Result<Vec<String>, ()> {
    let (conn, copy) = open_readonly(db).map_err(|_| ())?;
    let value = read_item(&conn, "composer.composerData");
    drop(conn);
    drop(copy);
    let value = value?;
    let Some(v) = value
        .flatten()
        .and_then(|raw| serde_json::from_str::<Value>(&raw).ok())
    else {
        return Ok(Vec::new());
    };
    Ok(v.get("allComposers")
        .and_then(Value::as_array)
        .map(|all| {
            all.iter()
                .filter_map(|c| jstr(c, "composerId"))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default())
}

/// One `ItemTable` value (`None` when the table or the key is absent).
fn read_item(conn: &Connection, key: &str) -> Result<Option<Option<String>>, ()> {
    let tables = table_names(conn).map_err(|_| ())?;
    if !tables.contains("ItemTable") {
        return Ok(None);
    }
    conn.query_row("SELECT value FROM ItemTable WHERE key = ?1", [key], |r| {
        Ok(r.get_ref(0).ok().and_then(cell_text))
    })
    .optional()
    .map_err(|_| ())
}
