//! Prints a summary of what a source parses from a file (a development aid).
use std::path::Path;

use trail_sources::{registry, ParseRequest};

#[allow(clippy::print_stdout)]
fn main() {
    for arg in std::env::args().skip(1) {
        let path = Path::new(&arg);
        let head = std::fs::read(path)
            .map(|b| b[..b.len().min(65536)].to_vec())
            .unwrap_or_default();
        for src in registry() {
            if !src.detect(path, &head) {
                continue;
            }
            let parse = src
                .parse(ParseRequest {
                    max_bytes: None,
                    path,
                    resume: None,
                })
                .expect("parse");
            println!(
                "{} [{}] bytes={} lines={} issues={}",
                arg,
                src.kind(),
                parse.bytes_parsed,
                parse.lines,
                parse.issues.len()
            );
            for i in &parse.issues {
                println!("  issue line {:?}: {}", i.line, i.reason);
            }
            for s in &parse.sessions {
                let tools = s
                    .messages
                    .iter()
                    .filter(|m| m.kind == Some(trail_model::MessageKind::ToolCall))
                    .count();
                let tok: u64 = s.usage.iter().map(|u| u.total()).sum();
                println!(
                    "  session {} title={:?} parent={:?} msgs={} turns={} tools={} usage_rows={} tokens={} files={} refs={} ckpt={} models={:?} cwd={:?} branch={:?} {:?}..{:?}",
                    s.meta.id, s.meta.title, s.meta.parent.as_ref().map(|p| (&p.session_id.0, &p.tool_call_id)), s.messages.len(), s.turns.len(), tools, s.usage.len(), tok,
                    s.files.len(), s.refs.len(), s.checkpoints.len(), s.models, s.meta.cwd, s.meta.branch, s.meta.created_at, s.meta.updated_at
                );
            }
            break;
        }
    }
}
