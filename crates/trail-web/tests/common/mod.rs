//! Shared by the web tests: a store built once per test binary (the bundled samples, a hostile
//! session, a generated 300-turn session), servers on port 0, and a raw HTTP/1.1 client (it
//! can send any `Host` header, which the DNS-rebinding tests need).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use trail_ingest::{IndexOptions, NoProgress};
use trail_render::Redactor;
use trail_store::Store;
use trail_web::{RunningServer, WebConfig};

pub const HOSTILE_ID: &str = "0badc0de-0000-4000-8000-00000000bad1";
pub const LONG_ID: &str = "10000000-0000-4000-8000-000000000300";
pub const LONG_TURNS: usize = 300;
pub const SAMPLE_CLAUDE_ID: &str = "7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f";

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Writes a Claude Code session of `turns` turns (a prompt, a tool call and its result, an
/// answer each) under `root/-tmp-long/`.
pub fn write_long_session(root: &Path, id: &str, turns: usize) -> PathBuf {
    let dir = root.join("-tmp-long");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{id}.jsonl"));
    let mut out = String::new();
    let mut parent = serde_json::Value::Null;
    let mut n = 0;
    let mut line = |kind: &str, message: serde_json::Value, parent: &mut serde_json::Value| {
        n += 1;
        let uuid = format!("l-{n:05}");
        let v = serde_json::json!({
            "parentUuid": parent.clone(), "isSidechain": false, "userType": "external",
            "cwd": "/tmp/long", "sessionId": id, "version": "2.1.14", "gitBranch": "main",
            "type": kind, "uuid": uuid,
            "timestamp": format!("2026-10-01T{:02}:{:02}:{:02}.000Z", (n / 3600) % 24, (n / 60) % 60, n % 60),
            "message": message,
        });
        out.push_str(&v.to_string());
        out.push('\n');
        *parent = serde_json::Value::String(uuid);
    };
    for t in 0..turns {
        line(
            "user",
            serde_json::json!({"role": "user", "content": format!("Turn {t}: refactor module_{t} and run the tests for longsession")}),
            &mut parent,
        );
        line(
            "assistant",
            serde_json::json!({"id": format!("msg_{t}a"), "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [{"type": "tool_use", "id": format!("toolu_{t}"), "name": "Bash",
                    "input": {"command": format!("cargo test -p module_{t}")}}],
                "usage": {"input_tokens": 100, "output_tokens": 50, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1000}}),
            &mut parent,
        );
        line(
            "user",
            serde_json::json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{t}"),
                "content": format!("running 12 tests\n{}test result: ok. 12 passed", "test module_x::case ... ok\n".repeat(12)), "is_error": false}]}),
            &mut parent,
        );
        line(
            "assistant",
            serde_json::json!({"id": format!("msg_{t}b"), "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [{"type": "text", "text": format!("module_{t} is refactored and its 12 tests pass. {}", "The change keeps the public API. ".repeat(6))}],
                "usage": {"input_tokens": 120, "output_tokens": 80, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1100}}),
            &mut parent,
        );
    }
    std::fs::write(&path, out).unwrap();
    path
}

/// Indexes the bundled samples, the hostile fixture and a long session into `store`.
pub fn build_store(dir: &Path) -> PathBuf {
    let home = manifest().join("../../examples/home");
    let long_root = dir.join("long");
    write_long_session(&long_root, LONG_ID, LONG_TURNS);
    let store_path = dir.join("trail.db");
    let mut store = Store::open(&store_path).unwrap();
    let options = IndexOptions {
        paths: vec![
            home.join(".claude"),
            home.join(".codex"),
            home.join(".gemini"),
            home.join(".copilot"),
            manifest().join("tests/fixtures/claude"),
            long_root,
        ],
        ..IndexOptions::default()
    };
    let summary = trail_ingest::index(&mut store, &options, &NoProgress).unwrap();
    assert!(summary.failures.is_empty(), "{:?}", summary.failures);
    store_path
}

/// The store every test of a binary reads (built once; never written by the server).
pub fn shared_store() -> &'static Path {
    static STORE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = STORE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = build_store(dir.path());
        (dir, path)
    });
    path
}

/// A server over the shared store on a free loopback port, secrets redacted.
pub fn server() -> RunningServer {
    let mut config = WebConfig::loopback(shared_store().to_path_buf(), 0);
    config.redactor = Redactor::new(&[]).unwrap();
    RunningServer::start(config).unwrap()
}

/// A response read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// Sends `method path` with `host` (None: no Host header) and reads the whole response
/// (`Connection: close`; chunked bodies decoded).
pub fn request(addr: SocketAddr, method: &str, path: &str, host: Option<&str>) -> Reply {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if let Some(h) = host {
        req.push_str(&format!("Host: {h}\r\n"));
    }
    if method == "POST" {
        req.push_str("Content-Length: 0\r\n");
    }
    req.push_str("\r\n");
    stream.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    parse_reply(&raw)
}

/// GET with the server's own Host.
pub fn get(server: &RunningServer, path: &str) -> Reply {
    let addr = server.addr();
    request(addr, "GET", path, Some(&addr.to_string()))
}

fn parse_reply(raw: &[u8]) -> Reply {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a complete response head");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    if chunked {
        body = dechunk(&body);
    }
    Reply {
        status,
        headers,
        body: String::from_utf8(body).expect("UTF-8 body"),
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(eol) = b.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = usize::from_str_radix(
            String::from_utf8_lossy(&b[..eol])
                .split(';')
                .next()
                .unwrap()
                .trim(),
            16,
        )
        .unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + size]);
        b = &b[eol + 2 + size + 2..];
    }
}

/// Percent-encodes a query value.
pub fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
