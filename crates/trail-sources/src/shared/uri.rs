//! URIs as VS Code serializes them (`UriComponents` objects or URI strings), turned into
//! local paths: VS Code's chat sessions, its editing sessions and Cursor's workspace folders
//! name files this way, and percent-encoded paths turn up in other agents' folders (Grok).

use serde_json::Value;

/// Decodes `%XX` escapes (invalid escapes are kept as they are).
pub(crate) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Turns a file URI's path (`/c:/x/y` or `/home/x`) and authority into a local path, the way
/// VS Code's `fsPath` does: Windows drive paths get a lower-case drive and backslashes.
fn file_path_from_parts(authority: &str, path: &str) -> String {
    let b = path.as_bytes();
    if b.len() >= 3 && b[0] == b'/' && b[1].is_ascii_alphabetic() && b[2] == b':' {
        let mut s = String::with_capacity(path.len());
        s.push(b[1].to_ascii_lowercase() as char);
        s.push_str(&path[2..].replace('/', "\\"));
        return s;
    }
    if !authority.is_empty() {
        return format!("\\\\{}{}", authority, path.replace('/', "\\"));
    }
    path.to_string()
}

/// Converts a serialized URI (a `UriComponents` object or a URI string) to a local path for
/// `file` URIs, or the URI text for others.
pub(crate) fn uri_to_path(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => {
            let s = s.trim();
            if s.is_empty() {
                return None;
            }
            if let Some(rest) = s.strip_prefix("file://") {
                let (authority, path) = match rest.find('/') {
                    Some(i) => (&rest[..i], &rest[i..]),
                    None => (rest, "/"),
                };
                let path = path.split(['?', '#']).next().unwrap_or_default();
                return Some(file_path_from_parts(
                    &percent_decode(authority),
                    &percent_decode(path),
                ));
            }
            Some(s.to_string())
        }
        Value::Object(o) => {
            let scheme = o.get("scheme").and_then(Value::as_str).unwrap_or_default();
            let path = o.get("path").and_then(Value::as_str).unwrap_or_default();
            let authority = o
                .get("authority")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if scheme == "file" {
                if let Some(fs) = o.get("fsPath").and_then(Value::as_str) {
                    if !fs.is_empty() {
                        return Some(fs.to_string());
                    }
                }
                if path.is_empty() {
                    return None;
                }
                return Some(file_path_from_parts(authority, path));
            }
            if let Some(ext) = o.get("external").and_then(Value::as_str) {
                if !ext.is_empty() {
                    return Some(ext.to_string());
                }
            }
            if scheme.is_empty() {
                return None;
            }
            let mut s = format!("{scheme}://{authority}{path}");
            if let Some(q) = o
                .get("query")
                .and_then(Value::as_str)
                .filter(|q| !q.is_empty())
            {
                s.push('?');
                s.push_str(q);
            }
            if let Some(f) = o
                .get("fragment")
                .and_then(Value::as_str)
                .filter(|f| !f.is_empty())
            {
                s.push('#');
                s.push_str(f);
            }
            Some(s)
        }
        _ => None,
    }
}

/// The path of a file a URI names: `file` URIs become local paths; `vscode-remote` URIs (WSL,
/// SSH, containers) give the path on the remote machine. Other schemes give None.
pub(crate) fn file_uri_path(v: &Value) -> Option<String> {
    match v {
        Value::Object(o) => match o.get("scheme").and_then(Value::as_str) {
            Some("file") => uri_to_path(v),
            Some("vscode-remote") => o
                .get("path")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
                .map(str::to_string),
            _ => None,
        },
        Value::String(s) => {
            let s = s.trim();
            if s.starts_with("file://") {
                uri_to_path(v)
            } else if let Some(rest) = s.strip_prefix("vscode-remote://") {
                let path = &rest[rest.find('/')?..];
                let path = path.split(['?', '#']).next().unwrap_or_default();
                Some(percent_decode(path))
            } else {
                None
            }
        }
        _ => None,
    }
}
