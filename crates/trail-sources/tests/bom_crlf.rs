//! Issue 40, item 1: a UTF-8 byte-order mark and CRLF line ends change nothing.
//!
//! Every file trail reads, in the repo's own fixtures and in `../shared/corpus`, is copied with
//! a BOM in front and every line end made CRLF; the copy must give exactly the sessions, turns,
//! messages, tool calls and tokens of the original. Files are found by walking the whole tree
//! and asking the registry which source reads each one (as `trail index PATH` does), so the files
//! of sources added later are covered without a change here. Files no source reads are skipped
//! and counted; binary files (SQLite databases) are copied unchanged.

#![allow(clippy::print_stderr)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use trail_model::MessageKind;
use trail_sources::{registry, Source};

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What must not change: per session, its id, title, start, turns, messages by kind, tool
/// calls and token sums; per file, the number of sessions and of parse problems.
fn digest(sources: &[Box<dyn Source>], root: &Path) -> (BTreeMap<String, String>, usize) {
    let mut out = BTreeMap::new();
    let mut unread = 0;
    for path in files_under(root) {
        let rel = path.strip_prefix(root).unwrap().display().to_string();
        let Some(source) = trail_sources::detect(sources, &path) else {
            unread += 1;
            continue;
        };
        let parse = match common::parse_whole(source, &path) {
            Ok(p) => p,
            Err(e) => {
                out.insert(rel, format!("error: {e}"));
                continue;
            }
        };
        let mut text = format!(
            "source {} sessions {} issues {}\n",
            source.kind().as_str(),
            parse.sessions.len(),
            parse.issues.len()
        );
        for s in &parse.sessions {
            let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
            for m in &s.messages {
                *kinds.entry(m.kind().as_str()).or_default() += 1;
            }
            let tokens = s.usage.iter().fold([0u64; 4], |t, u| {
                [
                    t[0] + u.input_tokens,
                    t[1] + u.output_tokens,
                    t[2] + u.cache_read_tokens,
                    t[3] + u.cache_creation_tokens,
                ]
            });
            let text_chars: usize = s.messages.iter().map(|m| m.text.chars().count()).sum();
            text.push_str(&format!(
                "  {} native {} title {:?} created {:?} turns {} messages {} tool calls {} \
                 kinds {kinds:?} tokens {tokens:?} text chars {text_chars}\n",
                s.meta.id.0,
                s.meta.native_id,
                s.meta.title,
                s.meta.created_at,
                s.turn_count,
                s.messages.len(),
                common::count_kind(s, MessageKind::ToolCall),
            ));
        }
        out.insert(rel, text);
    }
    (out, unread)
}

/// Every file under `root`, sorted, at any depth (hidden folders included: `.specstory`).
fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Copies the tree at `from` to `to`; with `bom_crlf`, text files get a BOM and CRLF line ends.
fn copy_tree(from: &Path, to: &Path, bom_crlf: bool) {
    for f in files_under(from) {
        let dest = to.join(f.strip_prefix(from).unwrap());
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        let bytes = std::fs::read(&f).unwrap();
        let text = !bytes.starts_with(b"SQLite format 3\0") && std::str::from_utf8(&bytes).is_ok();
        let bytes = if bom_crlf && text && !bytes.is_empty() {
            bom_and_crlf(&bytes)
        } else {
            bytes
        };
        std::fs::write(&dest, bytes).unwrap();
    }
}

/// `bytes` with a BOM in front and every `\n` not already after a `\r` made `\r\n`.
fn bom_and_crlf(bytes: &[u8]) -> Vec<u8> {
    let mut out = BOM.to_vec();
    let mut prev = 0u8;
    for &b in bytes.strip_prefix(BOM).unwrap_or(bytes) {
        if b == b'\n' && prev != b'\r' {
            out.push(b'\r');
        }
        out.push(b);
        prev = b;
    }
    out
}

/// Parses the tree as it is and as a BOM-plus-CRLF copy, at the same path (ids and folders
/// derived from paths must match), and compares. Returns the number of files read.
fn assert_same_with_bom_crlf(tree: &Path) -> usize {
    let sources = registry();
    let tmp = tempfile::tempdir().unwrap();
    let at = tmp.path().join("tree");
    copy_tree(tree, &at, false);
    let (plain, unread) = digest(&sources, &at);
    std::fs::remove_dir_all(&at).unwrap();
    copy_tree(tree, &at, true);
    let (converted, unread_converted) = digest(&sources, &at);
    eprintln!(
        "{}: {} files read, {unread} read by no source (skipped)",
        tree.display(),
        plain.len()
    );
    assert_eq!(unread, unread_converted, "files read by no source");
    assert_eq!(
        plain.keys().collect::<Vec<_>>(),
        converted.keys().collect::<Vec<_>>(),
        "files detected"
    );
    for (file, want) in &plain {
        assert_eq!(&converted[file], want, "{file} with a BOM and CRLF");
    }
    plain.len()
}

#[test]
fn issue_40_bom_crlf_copy_of_every_fixture_reads_the_same() {
    let read = assert_same_with_bom_crlf(&common::fixtures(""));
    // Every format with a fixture: Claude Code, Codex, Copilot CLI and VS Code, Gemini, Aider,
    // SpecStory, Cline, OpenCode, Cursor... (counted with `find tests/fixtures -type f`).
    assert!(read >= 40, "{read} fixture files read");
}

#[test]
fn issue_40_bom_crlf_copy_of_every_corpus_file_reads_the_same() {
    let Some(any) = common::shared_corpus("") else {
        return;
    };
    let read = assert_same_with_bom_crlf(&any);
    assert!(read >= 40, "{read} corpus files read");
}
