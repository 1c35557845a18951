//! Helpers shared by the parser integration tests.

#![allow(dead_code, clippy::print_stderr)]

use std::path::{Path, PathBuf};

use trail_model::{MessageKind, Session};
use trail_sources::{FileParse, ParseRequest, Source, SourceError};

/// Returns `../shared/corpus/<format>` beside the workspace (or under `$TRAIL_SHARED`), or
/// `None` after saying the test is skipped: CI has `../shared`, a bare clone may not.
pub fn shared_corpus(format: &str) -> Option<PathBuf> {
    let base = match std::env::var_os("TRAIL_SHARED") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    };
    let dir = base.join("corpus").join(format);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipped: shared corpus {} not found", dir.display());
        None
    }
}

/// Returns the repo's own fixtures folder for a format.
pub fn fixtures(format: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format)
}

/// Lists the files of a folder, sorted.
pub fn files_in(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

/// Parses a whole file with `source`: no resume state, no byte limit.
pub fn parse_whole(source: &dyn Source, path: &Path) -> Result<FileParse, SourceError> {
    source.parse(ParseRequest {
        max_bytes: None,
        path,
        resume: None,
    })
}

/// Counts a session's messages of one kind.
pub fn count_kind(s: &Session, kind: MessageKind) -> usize {
    s.messages.iter().filter(|m| m.kind() == kind).count()
}

/// The one session a parse returned.
pub fn only(fp: &FileParse) -> &Session {
    assert_eq!(fp.sessions.len(), 1);
    &fp.sessions[0]
}

/// The session of a parse whose agent-side id is `id`.
pub fn by_native<'a>(fp: &'a FileParse, id: &str) -> &'a Session {
    fp.sessions
        .iter()
        .find(|s| s.meta.native_id == id)
        .unwrap_or_else(|| panic!("no session {id}"))
}

/// Copies the folder `from`, recursively, into a new temporary folder.
pub fn staged_copy(from: &Path) -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let p = e.unwrap().path();
            let dest = to.join(p.file_name().unwrap());
            if p.is_dir() {
                copy(&p, &dest);
            } else {
                std::fs::copy(&p, &dest).unwrap();
            }
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    copy(from, tmp.path());
    tmp
}

/// Checks that a file parsed whole gives what it gives when cut after each of its lines,
/// parsed, grown back and resumed where the first parse stopped: the first parse's sessions
/// with the deltas applied (new messages appended, relinks applied, usage rows replaced by
/// `request_key`, new files, refs and checkpoints added, facts replaced) equal the whole
/// parse's. `root` is the format's fixture folder (copied to a scratch folder, so files beside
/// the log come along) and `rel` the log's path in it. At most `max_whole` cuts may be parsed
/// again whole (a resumed parse does that when a new line changes a message already stored).
pub fn assert_resume_at_every_line(source: &dyn Source, root: &Path, rel: &str, max_whole: usize) {
    use std::collections::BTreeMap;
    use trail_model::UpdateMode;
    use trail_sources::Resume;

    let tmp = staged_copy(root);
    let path = tmp.path().join(rel);
    let all = std::fs::read(&path).unwrap();
    assert!(source.appendable(&path), "{rel} is appendable");
    let full = parse_whole(source, &path).unwrap();
    let cuts = all
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1);
    let mut whole = 0;
    for cut in std::iter::once(0).chain(cuts) {
        std::fs::write(&path, &all[..cut]).unwrap();
        let first = parse_whole(source, &path).unwrap();
        std::fs::write(&path, &all).unwrap();
        let state = first
            .state
            .clone()
            .expect("an appendable parse saves a state");
        let delta = source
            .parse(ParseRequest {
                max_bytes: None,
                path: &path,
                resume: Some(Resume {
                    offset: first.bytes_parsed,
                    line: first.lines,
                    state: &state,
                }),
            })
            .unwrap();
        if delta.sessions.iter().any(|s| s.mode == UpdateMode::Replace) {
            whole += 1;
            assert!(whole <= max_whole, "cut {cut}: parsed whole again");
            assert_eq!(delta.sessions, full.sessions, "cut {cut}");
            continue;
        }
        assert_eq!(delta.bytes_read, (all.len() - cut) as u64, "cut {cut}");
        assert_eq!(delta.bytes_parsed, full.bytes_parsed, "cut {cut}");
        assert_eq!(delta.lines, full.lines, "cut {cut}");
        let mut merged: BTreeMap<String, Session> = BTreeMap::new();
        for s in &first.sessions {
            merged.insert(s.meta.id.0.clone(), s.clone());
        }
        for d in &delta.sessions {
            assert_eq!(d.mode, UpdateMode::Append, "cut {cut}");
            assert!(d.turns.is_empty(), "cut {cut}");
            let m = merged
                .entry(d.meta.id.0.clone())
                .or_insert_with(|| Session::new(d.meta.clone()));
            if let Some(first_new) = d.messages.first() {
                assert_eq!(first_new.seq as usize, m.messages.len(), "cut {cut}");
            }
            m.messages.extend(d.messages.iter().cloned());
            for r in &d.relinks {
                let old = &mut m.messages[r.seq as usize];
                old.on_main_chain = r.on_main_chain;
                old.turn_index = r.turn_index;
            }
            for u in &d.usage {
                match m.usage.iter_mut().find(|x| x.request_key == u.request_key) {
                    Some(x) => *x = u.clone(),
                    None => m.usage.push(u.clone()),
                }
            }
            m.files.extend(d.files.iter().cloned());
            m.refs.extend(d.refs.iter().cloned());
            m.checkpoints.extend(d.checkpoints.iter().cloned());
            m.meta = d.meta.clone();
            m.models = d.models.clone();
            m.turn_count = d.turn_count;
        }
        assert_eq!(merged.len(), full.sessions.len(), "cut {cut}");
        for f in &full.sessions {
            let m = &merged[f.meta.id.as_str()];
            let id = f.meta.id.as_str();
            assert_eq!(m.messages, f.messages, "cut {cut} {id}");
            assert_eq!(
                trail_model::turns::build_turns(&m.messages),
                f.turns,
                "cut {cut} {id}"
            );
            assert_eq!(m.turn_count, f.turn_count, "cut {cut} {id}");
            let mut mu = m.usage.clone();
            let mut fu = f.usage.clone();
            mu.sort_by(|a, b| a.request_key.cmp(&b.request_key));
            fu.sort_by(|a, b| a.request_key.cmp(&b.request_key));
            assert_eq!(mu, fu, "cut {cut} {id}");
            let paths = |s: &Session| s.files.iter().map(|x| x.path.clone()).collect::<Vec<_>>();
            assert_eq!(paths(m), paths(f), "cut {cut} {id}");
            assert_eq!(m.refs.len(), f.refs.len(), "cut {cut} {id}");
            assert_eq!(m.checkpoints, f.checkpoints, "cut {cut} {id}");
            assert_eq!(m.models, f.models, "cut {cut} {id}");
            assert_eq!(m.meta, f.meta, "cut {cut} {id}");
        }
    }
}
