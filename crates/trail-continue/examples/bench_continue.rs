//! Times continuing a 300-turn session into Claude Code and into Codex (issue 14's target:
//! <= 100 ms each).
//!
//!     cargo run --release -p trail-continue --example bench_continue [-- STORE]
//!
//! Writes a 300-turn Claude Code session (each turn: a prompt, an answer, a shell call with
//! 2 KB of output, a closing answer; generated here, deterministic), indexes it into STORE (a
//! copy of the 1 GiB synthetic store, say; default: a new store in a temporary folder), then
//! continues it into each target 7 times (`fresh`, so every run writes a new file into a
//! temporary home) and prints min / median / max wall time per target. What is timed is the
//! whole `continue_session` call: the session read from the store, the transcript (redaction
//! on), rendering and the write.

#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use trail_continue::{continue_session, ContinueOptions, Target, TargetHomes};
use trail_ingest::{IndexOptions, NoProgress};
use trail_query::Query;
use trail_store::Store;

const TURNS: usize = 300;
const RUNS: usize = 7;
const SESSION: &str = "b3c0a11e-0300-4000-8000-000000000300";

fn main() {
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let store_path = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| tmp.path().join("bench.db"));
    let file = write_session(tmp.path());
    let t = Instant::now();
    let mut store = Store::open(&store_path).expect("the store opens");
    trail_ingest::index(
        &mut store,
        &IndexOptions {
            paths: vec![file.clone()],
            ..IndexOptions::default()
        },
        &NoProgress,
    )
    .expect("the session indexes");
    drop(store);
    let size = std::fs::metadata(&store_path).map(|m| m.len()).unwrap_or(0);
    println!(
        "session: {TURNS} turns, {} KiB; store {} ({:.1} MiB), indexed in {:.0} ms",
        std::fs::metadata(&file).unwrap().len() / 1024,
        store_path.display(),
        size as f64 / (1024.0 * 1024.0),
        t.elapsed().as_secs_f64() * 1000.0
    );
    let query = Query::open(&store_path).expect("the store opens");
    for target in [Target::ClaudeCode, Target::Codex] {
        let home = tempfile::tempdir().expect("a temporary home");
        let mut options = ContinueOptions::new(TargetHomes {
            claude_projects: Some(home.path().join(".claude/projects")),
            codex_home: Some(home.path().join(".codex")),
            gemini_home: Some(home.path().join(".gemini")),
        })
        .expect("options");
        options.fresh = true;
        let mut ms = Vec::with_capacity(RUNS);
        let mut bytes = 0;
        for run in 0..RUNS {
            options.now += chrono::Duration::seconds(run as i64 + 1);
            let t = Instant::now();
            let c = continue_session(&query, SESSION, target, &options).expect("continues");
            ms.push(t.elapsed().as_secs_f64() * 1000.0);
            assert!(c.created);
            bytes = std::fs::metadata(&c.path).unwrap().len();
        }
        ms.sort_by(f64::total_cmp);
        println!(
            "{:<12} min {:6.1} ms  median {:6.1} ms  max {:6.1} ms  ({RUNS} runs, {} KiB written)",
            target.as_str(),
            ms[0],
            ms[RUNS / 2],
            ms[RUNS - 1],
            bytes / 1024
        );
    }
}

/// A deterministic 300-turn Claude Code session under `root/projects/<slug>/`.
fn write_session(root: &Path) -> PathBuf {
    let dir = root.join("projects/-home-bench-project");
    std::fs::create_dir_all(&dir).unwrap();
    let mut out = String::new();
    let mut parent: Option<String> = None;
    let mut n = 0u64;
    let mut push = |out: &mut String, ty: &str, body: serde_json::Value| {
        n += 1;
        let uuid = format!("00000000-0000-4000-8000-{n:012}");
        let secs = n * 7;
        let v = serde_json::json!({
            "parentUuid": parent, "isSidechain": false, "userType": "external",
            "cwd": "/home/bench/project", "sessionId": SESSION, "version": "2.1.5",
            "gitBranch": "main", "type": ty, "message": body, "uuid": uuid,
            "timestamp": format!("2026-11-01T{:02}:{:02}:{:02}.000Z", secs / 3600 % 24, secs / 60 % 60, secs % 60),
        });
        out.push_str(&v.to_string());
        out.push('\n');
        parent = Some(uuid);
    };
    let words = [
        "parser", "store", "index", "turn", "session", "cursor", "branch", "folder", "error",
        "test", "build", "render", "query", "token", "usage", "format",
    ];
    let text = |seed: usize, len: usize| -> String {
        (0..len)
            .map(|i| words[(seed * 31 + i * 7) % words.len()])
            .collect::<Vec<_>>()
            .join(" ")
    };
    let assistant = |content: serde_json::Value, id: usize| {
        serde_json::json!({"id": format!("msg_{id}"), "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": content, "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 20}})
    };
    for t in 0..TURNS {
        push(
            &mut out,
            "user",
            serde_json::json!({"role": "user", "content": text(t, 80)}),
        );
        push(
            &mut out,
            "assistant",
            assistant(
                serde_json::json!([{"type": "text", "text": text(t + 1, 60)}]),
                t * 3,
            ),
        );
        let tool = format!("toolu_{t:06}");
        push(
            &mut out,
            "assistant",
            assistant(
                serde_json::json!([{"type": "tool_use", "id": tool, "name": "Bash",
                    "input": {"command": format!("cargo test -p crate{t}")}}]),
                t * 3 + 1,
            ),
        );
        push(
            &mut out,
            "user",
            serde_json::json!({"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": tool, "content": text(t + 2, 300), "is_error": false}]}),
        );
        push(
            &mut out,
            "assistant",
            assistant(
                serde_json::json!([{"type": "text", "text": text(t + 3, 120)}]),
                t * 3 + 2,
            ),
        );
    }
    let path = dir.join(format!("{SESSION}.jsonl"));
    std::fs::write(&path, out).unwrap();
    path
}
