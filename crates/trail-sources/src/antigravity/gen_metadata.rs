//! The part of Antigravity's `conversations/<id>.db` that is read: table `gen_metadata`, one
//! protobuf blob per model request. Without a published schema, only fields whose meaning the
//! tests check against the transcript of the same conversation are decoded, all inside field 1
//! (the request's record):
//! - 21: the model's display name, as the transcript's `<USER_SETTINGS_CHANGE>` names it;
//! - 19: the model's id (`gemini-pro-default`), carried in the same record;
//! - 20 (repeated `{1: key, 2: value}`): `last_step_index`, the step before the
//!   `PLANNER_RESPONSE` step the request produced.
//!
//! Token counts (inside field 1's field 4) and the `steps` payloads are not decoded.

use std::path::Path;

use crate::sqlite_readonly::{open_direct, table_names};

/// One model request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The step the request's answer is (`last_step_index` + 1).
    pub answer_step: Option<i64>,
    /// The model id.
    pub model: Option<String>,
    /// The model's display name.
    pub display_model: Option<String>,
}

/// The requests of a conversation store, in order; empty when it cannot be read.
pub fn requests(db: &Path) -> Vec<Request> {
    let Ok(conn) = open_direct(db) else {
        return Vec::new();
    };
    if !table_names(&conn).is_ok_and(|t| t.contains("gen_metadata")) {
        return Vec::new();
    }
    let blobs = conn
        .prepare("SELECT data FROM gen_metadata ORDER BY idx")
        .and_then(|mut st| {
            st.query_map([], |r| r.get::<_, Option<Vec<u8>>>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .unwrap_or_default();
    blobs.into_iter().flatten().map(|b| decode(&b)).collect()
}

fn decode(blob: &[u8]) -> Request {
    let mut out = Request {
        answer_step: None,
        model: None,
        display_model: None,
    };
    let Some(record) = fields(blob).find(|f| f.number == 1).and_then(|f| f.bytes) else {
        return out;
    };
    for f in fields(record) {
        match (f.number, f.bytes) {
            (19, Some(b)) => out.model = text(b),
            (21, Some(b)) => out.display_model = text(b),
            (20, Some(b)) => {
                let key = fields(b).find(|x| x.number == 1).and_then(|x| x.bytes);
                let value = fields(b).find(|x| x.number == 2).and_then(|x| x.bytes);
                if key == Some(b"last_step_index".as_slice()) {
                    out.answer_step = value
                        .and_then(text)
                        .and_then(|v| v.parse::<i64>().ok())
                        .map(|i| i + 1);
                }
            }
            _ => {}
        }
    }
    out
}

fn text(b: &[u8]) -> Option<String> {
    std::str::from_utf8(b)
        .ok()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// One protobuf field: its number and, for length-delimited fields, its bytes.
struct Field<'a> {
    number: u64,
    bytes: Option<&'a [u8]>,
}

/// The top-level fields of a protobuf message; stops at the first malformed one.
fn fields(buf: &[u8]) -> impl Iterator<Item = Field<'_>> {
    let mut at = 0usize;
    std::iter::from_fn(move || {
        let (tag, n) = varint(buf.get(at..)?)?;
        at += n;
        let number = tag >> 3;
        let bytes = match tag & 7 {
            0 => {
                let (_, n) = varint(buf.get(at..)?)?;
                at += n;
                None
            }
            1 => {
                at = at.checked_add(8).filter(|&e| e <= buf.len())?;
                None
            }
            2 => {
                let (len, n) = varint(buf.get(at..)?)?;
                let start = at + n;
                let end = start.checked_add(usize::try_from(len).ok()?)?;
                let b = buf.get(start..end)?;
                at = end;
                Some(b)
            }
            5 => {
                at = at.checked_add(4).filter(|&e| e <= buf.len())?;
                None
            }
            _ => return None,
        };
        Some(Field { number, bytes })
    })
}

fn varint(buf: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, b) in buf.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(n: u8, bytes: &[u8]) -> Vec<u8> {
        let mut v = vec![(n << 3) | 2, u8::try_from(bytes.len()).unwrap()];
        v.extend_from_slice(bytes);
        v
    }

    #[test]
    fn a_request_record_is_decoded_and_junk_is_not_fatal() {
        let mut kv = field(1, b"last_step_index");
        kv.extend(field(2, b"6"));
        // A varint field first, then fields numbered above 15 (two-byte tags).
        let mut rec = vec![0x18, 0x05];
        for (n, b) in [
            (19u8, b"gemini-pro-default".to_vec()),
            (21, b"Gemini 3.1 Pro".to_vec()),
        ] {
            rec.extend([(n << 3) | 2 | 0x80, 0x01, u8::try_from(b.len()).unwrap()]);
            rec.extend(b);
        }
        rec.extend([
            (20u8 << 3) | 2 | 0x80,
            0x01,
            u8::try_from(kv.len()).unwrap(),
        ]);
        rec.extend(kv);
        let blob = field(1, &rec);
        let r = decode(&blob);
        assert_eq!(r.answer_step, Some(7));
        assert_eq!(r.model.as_deref(), Some("gemini-pro-default"));
        assert_eq!(r.display_model.as_deref(), Some("Gemini 3.1 Pro"));
        assert_eq!(decode(&[0xff, 0xff]).model, None);
    }
}
