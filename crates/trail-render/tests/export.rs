//! Export end to end: golden files of the bundled samples and of real corpus sessions in every
//! format, planted secrets, hostile HTML, the VS Code round trip, and the JSON schema.

#![allow(clippy::print_stderr)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use trail_ingest::{index, IndexOptions, NoProgress, Roots};
use trail_model::{Message, MessageKind, Role, Session, SessionId, SessionMeta, SourceKind};
use trail_render::{ExportOptions, Exporter, Format, RedactionCounts, Redactor};
use trail_sources::{ParseRequest, Source};
use trail_store::{FileRecord, ListFilter, SessionRow, Store};

const FORMATS: [Format; 4] = [Format::Markdown, Format::Html, Format::Json, Format::Vscode];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn corpus() -> Option<PathBuf> {
    let p = repo().join("../shared/corpus");
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("skipped: shared corpus not found at {}", p.display());
        None
    }
}

/// Roots of every source under the bundled sample home.
fn sample_roots() -> Roots {
    let home = repo().join("examples/home");
    let mut roots = Roots::default();
    let mut put = |k: SourceKind, p: &str| {
        roots.by_source.insert(k, vec![home.join(p)]);
    };
    put(SourceKind::ClaudeCode, ".claude/projects");
    put(SourceKind::CopilotVscode, ".config/Code");
    put(SourceKind::CopilotCli, ".copilot");
    put(SourceKind::Codex, ".codex");
    put(SourceKind::GeminiCli, ".gemini");
    put(SourceKind::Opencode, ".local/share/opencode");
    roots
}

fn sample_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let opts = IndexOptions {
        roots: sample_roots(),
        ..IndexOptions::default()
    };
    index(&mut store, &opts, &NoProgress).unwrap();
    let opts = IndexOptions {
        paths: vec![repo().join("examples/chat-export.json")],
        ..IndexOptions::default()
    };
    index(&mut store, &opts, &NoProgress).unwrap();
    (dir, store)
}

fn store_of(paths: Vec<PathBuf>) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let opts = IndexOptions {
        paths,
        ..IndexOptions::default()
    };
    let summary = index(&mut store, &opts, &NoProgress).unwrap();
    assert!(summary.failures.is_empty(), "{:?}", summary.failures);
    (dir, store)
}

fn top_sessions(store: &Store) -> Vec<SessionRow> {
    let mut v = store
        .list_sessions(&ListFilter {
            include_subagents: false,
            ..ListFilter::default()
        })
        .unwrap();
    v.sort_by(|a, b| a.id.cmp(&b.id));
    v
}

fn export(
    store: &Store,
    s: &SessionRow,
    format: Format,
    redactor: &Redactor,
) -> (String, RedactionCounts) {
    let mut ex = Exporter::new(
        store,
        redactor,
        ExportOptions {
            thinking: true,
            agent_name: Some(trail_sources::name_of),
        },
    );
    let mut out = Vec::new();
    ex.write_session(s, format, &mut out).unwrap();
    (String::from_utf8(out).unwrap(), ex.counts().clone())
}

fn ext(f: Format) -> &'static str {
    match f {
        Format::Markdown => "md",
        Format::Html => "html",
        Format::Json => "json",
        Format::Vscode => "vscode",
    }
}

fn schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(repo().join("docs/session.schema.json")).unwrap();
    jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
}

fn assert_valid(validator: &jsonschema::Validator, doc: &str, what: &str) {
    let v: serde_json::Value = serde_json::from_str(doc).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&v)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:?}");
}

#[test]
fn golden_samples_every_format() {
    let (_dir, store) = sample_store();
    let sessions = top_sessions(&store);
    assert_eq!(
        sessions.len(),
        7,
        "one session per sample source plus the export"
    );
    let redactor = Redactor::new(&[]).unwrap();
    let validator = schema();
    for s in &sessions {
        for f in FORMATS {
            let (out, _) = export(&store, s, f, &redactor);
            if f == Format::Json {
                assert_valid(&validator, &out, &s.id);
            }
            let name = format!("sample_{}_{}", trail_render::file_stem(&s.id), ext(f));
            insta::assert_snapshot!(name, out);
        }
    }
}

/// Small real sessions from the shared corpus, one or two per source.
const CORPUS_GOLDEN: &[&str] = &[
    "claude-code/agentsessions-fixture-parent-with-subagent.jsonl",
    "codex/cass-fixture-codex-rollout-tool-call-0.42.jsonl",
    "copilot-cli/agentsessions-fixture-copilot-cli-small.jsonl",
    "copilot-vscode/abdxd9-orbital-clash-session-v3.json",
    "gemini/agentsessions-fixture-gemini-chat.json",
    "vscode-export/konashevich-joplin-plugin-docs-chat.json",
];

#[test]
fn golden_corpus_every_format() {
    let Some(corpus) = corpus() else { return };
    let (_dir, store) = store_of(CORPUS_GOLDEN.iter().map(|p| corpus.join(p)).collect());
    let sessions = top_sessions(&store);
    // The Claude fixture's subagent is nested in its parent, not a session of its own here.
    assert!(
        sessions.len() >= CORPUS_GOLDEN.len() - 1,
        "{}",
        sessions.len()
    );
    let redactor = Redactor::new(&[]).unwrap();
    let validator = schema();
    for s in &sessions {
        for f in FORMATS {
            let (out, _) = export(&store, s, f, &redactor);
            if f == Format::Json {
                assert_valid(&validator, &out, &s.id);
            }
            let name = format!("corpus_{}_{}", trail_render::file_stem(&s.id), ext(f));
            insta::assert_snapshot!(name, out);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Planted secrets

/// (kind, the text planted, the part that must never leave redacted).
const SECRETS: &[(&str, &str, &str)] = &[
    ("aws-access-key", "key AKIAIOSFODNN7EXAMPLQ here", "AKIAIOSFODNN7EXAMPLQ"),
    (
        "aws-secret-key",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ",
    ),
    ("github-token", "ghp_R2d2C3poL7kS9wQ4eT6yU8iO0pA1sD3fG5hJ", "ghp_R2d2C3poL7kS9wQ4eT6yU8iO0pA1sD3fG5hJ"),
    ("github-token", "gho_Zx8Cv7Bn6Mm5Ll4Kk3Jj2Hh1Gg0Ff9Dd8Ss7A", "gho_Zx8Cv7Bn6Mm5Ll4Kk3Jj2Hh1Gg0Ff9Dd8Ss7A"),
    ("github-token", "ghu_Qw1Er2Ty3Ui4Op5As6Df7Gh8Jk9Lz0Xc1Vb2N", "ghu_Qw1Er2Ty3Ui4Op5As6Df7Gh8Jk9Lz0Xc1Vb2N"),
    ("github-token", "ghs_Mn0Bv9Cx8Zl7Kj6Hg5Fd4Sa3Po2Iu1Yt0Re9W", "ghs_Mn0Bv9Cx8Zl7Kj6Hg5Fd4Sa3Po2Iu1Yt0Re9W"),
    (
        "github-token",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789",
    ),
    (
        "anthropic-key",
        "ANTHROPIC key sk-ant-api03-Xy7Wv6Ut5Sr4Qp3On2Ml1Kj0Ih9Gf8Ed7Cb6Aa-ZZ",
        "sk-ant-api03-Xy7Wv6Ut5Sr4Qp3On2Ml1Kj0Ih9Gf8Ed7Cb6Aa-ZZ",
    ),
    (
        "openai-key",
        "openai sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90Uv12",
        "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90Uv12",
    ),
    ("slack-token", "xoxb-2048-4096-Abc123Def456Ghi789", "xoxb-2048-4096-Abc123Def456Ghi789"),
    ("google-api-key", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    ("stripe-key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    (
        "jwt",
        "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
        "eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    (
        "bearer-token",
        "curl -H 'Authorization: Bearer q1w2e3r4t5y6u7i8o9p0AsDfGh' https://api.example.com",
        "q1w2e3r4t5y6u7i8o9p0AsDfGh",
    ),
    (
        "basic-auth",
        "Authorization: Basic YWxpY2U6c2VzYW1lLW9wZW4tMjAyNg==",
        "YWxpY2U6c2VzYW1lLW9wZW4tMjAyNg==",
    ),
    (
        "private-key",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq7BFUAnkt5ZQn3WZ2pE1XamplePrivKeyBody\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEAq7BFUAnkt5ZQn3WZ2pE1XamplePrivKeyBody",
    ),
    (
        "url-password",
        "psql postgres://alice:Tr0ub4dorAnd3@db.example.com:5432/app",
        "Tr0ub4dorAnd3",
    ),
    ("env-secret", "CLIENT_SECRET=Zq9Xw8Cv7Bn6Mm5", "Zq9Xw8Cv7Bn6Mm5"),
    ("env-secret", "export DEPLOY_TOKEN=Yt5Re4Wq3Az2Sx1", "Yt5Re4Wq3Az2Sx1"),
    ("env-secret", "PASSWORD=correcthorsebatterystaple", "correcthorsebatterystaple"),
    ("custom", "ticket ACME-SECRET-778899 is internal", "ACME-SECRET-778899"),
];

/// Ordinary text that looks a little like a secret and must be left alone.
const LOOK_ALIKES: &[&str] = &[
    "9fceb02d0ae598e95dc970b74767f19372d61af8",
    "123e4567-e89b-12d3-a456-426614174000",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "MAX_TOKENS=4096",
    "API_TOKEN=$GITHUB_TOKEN",
];

fn planted_text() -> String {
    let mut s = String::from("Planted:\n");
    for (_, text, _) in SECRETS {
        s.push_str(text);
        s.push('\n');
    }
    for l in LOOK_ALIKES {
        s.push_str(l);
        s.push('\n');
    }
    s
}

fn plant(session: &mut Session) {
    let text = planted_text();
    session.meta.title = Some(format!(
        "{} {}",
        session.meta.title.clone().unwrap_or_default(),
        SECRETS[2].1
    ));
    let mut seen_prompt = false;
    for m in &mut session.messages {
        match m.kind() {
            MessageKind::Prompt if !seen_prompt => {
                // Secrets first, so no format's trimming hides them.
                m.text = format!("{text}{}", m.text);
                seen_prompt = true;
            }
            MessageKind::Text => m.text = format!("{text}{}", m.text),
            MessageKind::ToolCall => {
                let mut v: serde_json::Value = m
                    .tool_input
                    .as_deref()
                    .and_then(|i| serde_json::from_str(i).ok())
                    .unwrap_or(serde_json::json!({}));
                if let Some(o) = v.as_object_mut() {
                    o.insert("aaa_planted".into(), text.clone().into());
                } else {
                    v = serde_json::json!({"aaa_planted": text, "input": v});
                }
                m.tool_input = Some(v.to_string());
            }
            MessageKind::ToolResult => {
                m.tool_output = Some(format!(
                    "{text}{}",
                    m.tool_output.clone().unwrap_or_default()
                ));
            }
            _ => {}
        }
    }
}

/// A hand-built session for a source without a sample (Cursor keeps a SQLite database).
fn handmade(source: SourceKind, native: &str) -> Session {
    let id = format!("{}:{native}", source.as_str());
    let mut s = Session::new(SessionMeta::new(SessionId::new(id), source, native));
    s.meta.title = Some("Handmade session".into());
    s.meta.observe_timestamp("2026-11-20T12:00:00.000Z");
    let mk = |seq: u32, role: Role, kind: MessageKind, text: &str| Message {
        seq,
        role: Some(role),
        kind: Some(kind),
        text: text.into(),
        on_main_chain: true,
        turn_index: Some(0),
        timestamp: Some("2026-11-20T12:00:00.000Z".into()),
        ..Message::default()
    };
    s.messages.push(mk(
        0,
        Role::User,
        MessageKind::Prompt,
        "Check the deploy script",
    ));
    s.messages
        .push(mk(1, Role::Assistant, MessageKind::Text, "Reading it."));
    let mut call = mk(2, Role::Assistant, MessageKind::ToolCall, "");
    call.tool_name = Some("read_file".into());
    call.tool_call_id = Some("call-1".into());
    call.tool_input = Some(r#"{"path":"deploy.sh"}"#.into());
    s.messages.push(call);
    let mut result = mk(3, Role::Tool, MessageKind::ToolResult, "");
    result.tool_name = Some("read_file".into());
    result.tool_call_id = Some("call-1".into());
    result.tool_output = Some("#!/bin/sh\nmake deploy".into());
    s.messages.push(result);
    s.messages.push(mk(
        4,
        Role::Assistant,
        MessageKind::Text,
        "It runs make deploy.",
    ));
    s.turn_count = 1;
    s.turns = trail_model::turns::build_turns(&s.messages);
    s
}

fn write_sessions(store: &mut Store, path: &str, source: SourceKind, sessions: Vec<Session>) {
    store
        .write_batch(vec![FileRecord {
            path: path.to_string(),
            source: Some(source),
            sessions,
            ..FileRecord::default()
        }])
        .unwrap();
}

/// Parses every sample file with its own source, plants secrets everywhere, and stores it.
fn planted_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let roots = sample_roots();
    let mut sources_seen = Vec::new();
    let fixtures = repo().join("crates/trail-sources/tests/fixtures");
    for source in trail_sources::registry() {
        let files: Vec<PathBuf> = match source.kind() {
            SourceKind::VscodeExport => vec![repo().join("examples/chat-export.json")],
            // SpecStory lives in project folders, none of which the sample home has.
            SourceKind::Specstory => vec![repo()
                .join("crates/trail-sources/tests/fixtures/specstory")
                .join("2026-03-02_10-00Z-tidy-the-parser.md")],
            // The sample home keeps its transcripts: its prompt history would repeat them.
            SourceKind::ClaudeHistory => vec![repo()
                .join("crates/trail-sources/tests/fixtures/claude-history/.claude/history.jsonl")],
            // Aider writes into project folders too.
            SourceKind::Aider => vec![repo()
                .join("crates/trail-sources/tests/fixtures/aider/recipe-box")
                .join(".aider.chat.history.md")],
            // Cline and its forks keep tasks under VS Code hosts the sample home lacks.
            SourceKind::Cline | SourceKind::RooCode | SourceKind::KiloCode => {
                let hosts = repo().join("crates/trail-sources/tests/fixtures/cline");
                source.discover(&[hosts.join("Code"), hosts.join("Cursor")])
            }
            // h42c: the sources whose fixtures are files in the repo.
            SourceKind::Openclaude => source.discover(&[fixtures.join("openclaude/.openclaude")]),
            SourceKind::ClaudeCowork => {
                source.discover(&[fixtures.join("claude-cowork/local-agent-mode-sessions")])
            }
            SourceKind::Goose => source.discover(&[fixtures.join("goose")]),
            SourceKind::Grok => source.discover(&[fixtures.join("grok")]),
            // Stores built by their tests (no file here) or only in the shared corpus: handmade
            // sessions below.
            SourceKind::MimoCode
            | SourceKind::Icodemate
            | SourceKind::Traex
            | SourceKind::Crush
            | SourceKind::Zed => Vec::new(),
            // h42b: the new sources of issue 42, from their fixtures.
            SourceKind::MistralVibe
            | SourceKind::Kiro
            | SourceKind::KiroIde
            | SourceKind::Hermes
            | SourceKind::Antigravity
            | SourceKind::VisualStudioCopilot => {
                let folder = match source.kind() {
                    SourceKind::MistralVibe => "mistral-vibe",
                    SourceKind::Kiro => "kiro",
                    SourceKind::KiroIde => "kiro-ide/User/globalStorage/kiro.kiroagent",
                    SourceKind::Hermes => "hermes",
                    SourceKind::Antigravity => "antigravity",
                    _ => "visual-studio-copilot",
                };
                source.discover(&[repo()
                    .join("crates/trail-sources/tests/fixtures")
                    .join(folder)])
            }
            // h42x: the chat exports, from their fixtures.
            SourceKind::ChatgptExport => vec![fixtures.join("chatgpt-export/conversations.json")],
            SourceKind::ClaudeAiExport => {
                vec![fixtures.join("claude-ai-export/conversations.json")]
            }
            k => source.discover(roots.by_source.get(&k).map(Vec::as_slice).unwrap_or(&[])),
        };
        for f in files {
            let parsed = source
                .parse(ParseRequest {
                    max_bytes: None,
                    path: &f,
                    resume: None,
                })
                .unwrap();
            let mut sessions = parsed.sessions;
            for s in &mut sessions {
                plant(s);
            }
            if !sessions.is_empty() {
                sources_seen.push(source.kind());
            }
            write_sessions(
                &mut store,
                &f.display().to_string(),
                source.kind(),
                sessions,
            );
        }
    }
    let mut cursor = handmade(SourceKind::Cursor, "composer-1");
    plant(&mut cursor);
    write_sessions(
        &mut store,
        "/nowhere/state.vscdb",
        SourceKind::Cursor,
        vec![cursor],
    );
    sources_seen.push(SourceKind::Cursor);
    for kind in [
        SourceKind::MimoCode,
        SourceKind::Icodemate,
        SourceKind::Traex,
        SourceKind::Crush,
        SourceKind::Zed,
        SourceKind::Pi,
        SourceKind::QwenCode,
        SourceKind::Kimi,
        SourceKind::Droid,
        SourceKind::Iflow,
    ] {
        let mut s = handmade(kind, "handmade-1");
        plant(&mut s);
        write_sessions(&mut store, &format!("/nowhere/{kind}"), kind, vec![s]);
        sources_seen.push(kind);
    }
    sources_seen.sort();
    sources_seen.dedup();
    assert_eq!(
        sources_seen.len(),
        SourceKind::ALL.len(),
        "{sources_seen:?}"
    );
    (dir, store)
}

fn custom_redactor() -> Redactor {
    Redactor::new(&[r"ACME-SECRET-[0-9]{6}".to_string()]).unwrap()
}

#[test]
fn planted_secrets_never_leave_redacted() {
    let kinds: std::collections::BTreeSet<&str> = SECRETS.iter().map(|s| s.0).collect();
    assert!(
        SECRETS.len() >= 15 && kinds.len() >= 15,
        "{} secrets of {} kinds",
        SECRETS.len(),
        kinds.len()
    );
    let (_dir, store) = planted_store();
    let redactor = custom_redactor();
    let mut total = RedactionCounts::default();
    for s in top_sessions(&store) {
        for f in FORMATS {
            let (out, counts) = export(&store, &s, f, &redactor);
            for (kind, _, needle) in SECRETS {
                if let Some(at) = out.find(needle) {
                    let from = out[..at].char_indices().rev().nth(120).map_or(0, |c| c.0);
                    panic!(
                        "{kind} {needle:?} leaked in {} {}: {}",
                        s.id,
                        ext(f),
                        &out[from..at + needle.len()]
                    );
                }
            }
            for l in LOOK_ALIKES {
                assert!(
                    out.contains(l),
                    "look-alike {l:?} was changed in {} {}",
                    s.id,
                    ext(f)
                );
            }
            total.add(&counts);
        }
    }
    for kind in kinds {
        assert!(
            total.0.get(kind).copied().unwrap_or(0) > 0,
            "{kind} never counted: {total:?}"
        );
    }
}

#[test]
fn no_redact_keeps_every_secret() {
    let (_dir, store) = planted_store();
    let redactor = Redactor::disabled();
    for s in top_sessions(&store) {
        for f in FORMATS {
            let (out, counts) = export(&store, &s, f, &redactor);
            assert_eq!(counts.total(), 0);
            for (kind, _, needle) in SECRETS {
                assert!(
                    out.contains(needle),
                    "{kind} {needle:?} missing from {} {}",
                    s.id,
                    ext(f)
                );
            }
        }
    }
}

#[test]
fn the_store_keeps_the_originals() {
    let (_dir, store) = planted_store();
    let s = &top_sessions(&store)[0];
    let _ = export(&store, s, Format::Markdown, &custom_redactor());
    let detail = store.session_detail(&s.id).unwrap();
    let all: String = detail
        .messages
        .iter()
        .filter_map(|m| m.text.clone())
        .collect();
    assert!(all.contains(SECRETS[0].2));
}

// ---------------------------------------------------------------------------------------------
// Hostile HTML

const PAYLOADS: &str = "</script><script>alert(1)</script>\n<img src=x onerror=alert(2)>\n\
[click](javascript:alert(3)) <a href=\"javascript:alert(4)\">x</a>\n\
<svg onload=alert(5)><iframe src=//evil.example></iframe>\n\"><body onload=alert(6)>'\n\
<style>body{display:none}</style><!-- --><![CDATA[x]]>";

#[test]
fn hostile_html_has_no_executable_markup() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let mut s = handmade(SourceKind::ClaudeCode, "hostile");
    s.meta.title = Some(PAYLOADS.into());
    s.meta.branch = Some("<script>b()</script>".into());
    s.meta.cwd = Some("/tmp/\"><script>c()</script>".into());
    s.models = vec!["<img src=x onerror=m()>".into()];
    for m in &mut s.messages {
        m.text = format!("{PAYLOADS}{}", m.text);
        if let Some(i) = &m.tool_input {
            m.tool_input = Some(format!(
                "{{\"command\":{}, \"x\":{i}}}",
                serde_json::Value::from(PAYLOADS)
            ));
        }
        if m.tool_output.is_some() {
            m.tool_output = Some(PAYLOADS.into());
        }
        m.tool_name = m
            .tool_name
            .as_ref()
            .map(|_| "<script>t()</script>".to_string());
    }
    // Across messages: a link definition in the prompt for a reference in the answer, and a
    // fence the prompt leaves open, which the answer's first fence would otherwise close (the
    // answer's code then read as prose).
    s.messages[0]
        .text
        .push_str("\n\n[x]: javascript:alert(10)\n\n~~~");
    s.messages[1].text = format!(
        "~~~\n<img src=x onerror=alert(11)>\n\n[use][x]\n\n{}",
        s.messages[1].text
    );
    let mut thinking = s.messages[1].clone();
    thinking.seq = 5;
    thinking.kind = Some(MessageKind::Thinking);
    s.messages.push(thinking);
    write_sessions(
        &mut store,
        "/nowhere/hostile.jsonl",
        SourceKind::ClaudeCode,
        vec![s],
    );
    let sessions = top_sessions(&store);
    let off = Redactor::disabled();
    let mut ex = Exporter::new(
        &store,
        &off,
        ExportOptions {
            thinking: true,
            agent_name: Some(trail_sources::name_of),
        },
    );
    let mut pages = Vec::new();
    let mut out = Vec::new();
    ex.write_session(&sessions[0], Format::Html, &mut out)
        .unwrap();
    pages.push(String::from_utf8(out).unwrap());
    let mut out = Vec::new();
    ex.write_html_index(&sessions, &mut out).unwrap();
    pages.push(String::from_utf8(out).unwrap());
    for page in &pages {
        assert_inert(page);
        let doc = scraper::Html::parse_document(page);
        let styles = doc
            .select(&scraper::Selector::parse("style").unwrap())
            .count();
        assert_eq!(styles, 1, "only our own stylesheet");
    }
    // The payloads are shown as text.
    let doc = scraper::Html::parse_document(&pages[0]);
    let text: String = doc.root_element().text().collect();
    assert!(text.contains("</script><script>alert(1)</script>"));
    assert!(text.contains("<img src=x onerror=alert(2)>"));

    // The Markdown export, as a CommonMark renderer that passes raw HTML through (pandoc, a
    // static site generator) makes it a page: the same payloads, shown and never run.
    let mut out = Vec::new();
    ex.write_session(&sessions[0], Format::Markdown, &mut out)
        .unwrap();
    let markdown = String::from_utf8(out).unwrap();
    let mut page = String::new();
    pulldown_cmark::html::push_html(&mut page, pulldown_cmark::Parser::new(&markdown));
    assert_inert(&page);
    let doc = scraper::Html::parse_document(&page);
    assert_eq!(
        doc.select(&scraper::Selector::parse("style").unwrap())
            .count(),
        0
    );
    let text: String = doc.root_element().text().collect();
    assert!(
        text.contains("</script><script>alert(1)</script>"),
        "{markdown}"
    );
    assert!(text.contains("<img src=x onerror=alert(2)>"));
    assert!(text.contains("[click](javascript:alert(3))"));
}

/// No element or attribute in `page` that runs script, loads a page or fetches anything.
fn assert_inert(page: &str) {
    let doc = scraper::Html::parse_document(page);
    let all = scraper::Selector::parse("*").unwrap();
    for el in doc.select(&all) {
        let name = el.value().name();
        assert!(
            !matches!(
                name,
                "script" | "img" | "svg" | "iframe" | "object" | "embed" | "base" | "link" | "form"
            ),
            "<{name}> element in the output"
        );
        for (attr, value) in el.value().attrs() {
            assert!(
                !attr.to_ascii_lowercase().starts_with("on"),
                "{attr}= on <{name}>"
            );
            assert!(
                !value.to_ascii_lowercase().contains("javascript:"),
                "{attr}={value:?}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// VS Code round trip

/// A tool call: name, id, input, output (when not empty), error.
type ToolView = (String, Option<String>, String, Option<String>, bool);

#[derive(Debug, PartialEq)]
struct TurnView {
    prompt: String,
    answer: String,
    tools: Vec<ToolView>,
}

fn turns_of(messages: impl Iterator<Item = (Message, Option<(String, bool)>)>) -> Vec<TurnView> {
    let mut out: Vec<TurnView> = Vec::new();
    let mut current = None;
    for (m, result) in messages {
        if !m.on_main_chain {
            continue;
        }
        let Some(t) = m.turn_index else { continue };
        if current != Some(t) {
            current = Some(t);
            out.push(TurnView {
                prompt: String::new(),
                answer: String::new(),
                tools: Vec::new(),
            });
        }
        let turn = out.last_mut().unwrap();
        match m.kind() {
            MessageKind::Prompt => turn.prompt = m.text.clone(),
            MessageKind::Text if !m.text.trim().is_empty() => {
                if !turn.answer.is_empty() {
                    turn.answer.push_str(trail_model::turns::RESPONSE_SEPARATOR);
                }
                turn.answer.push_str(&m.text);
            }
            MessageKind::ToolCall => {
                let (output, is_error) = match result {
                    Some((o, e)) => ((!o.is_empty()).then_some(o), e),
                    None => (None, false),
                };
                turn.tools.push((
                    m.tool_name.clone().unwrap_or_else(|| "tool".into()),
                    m.tool_call_id.clone(),
                    m.tool_input.clone().unwrap_or_default(),
                    output,
                    is_error,
                ));
            }
            _ => {}
        }
    }
    out
}

fn stored_turns(store: &Store, id: &str) -> Vec<TurnView> {
    let mut rows = Vec::new();
    store
        .for_each_export_message(id, |m| -> Result<(), trail_store::StoreError> {
            rows.push(m);
            Ok(())
        })
        .unwrap();
    turns_of(rows.into_iter().map(|m| {
        let r = &m.message;
        let msg = Message {
            seq: r.seq as u32,
            role: r.role,
            kind: r.kind,
            text: r.text.clone().unwrap_or_default(),
            tool_name: r.tool_name.clone(),
            tool_call_id: r.tool_call_id.clone(),
            tool_input: r.tool_input.clone(),
            on_main_chain: r.on_main_chain,
            turn_index: r.turn_index.map(|t| t as u32),
            ..Message::default()
        };
        let result = m
            .result
            .map(|x| (x.tool_output.unwrap_or_default(), x.is_error));
        (msg, result)
    }))
}

fn imported_turns(session: &Session) -> Vec<TurnView> {
    let results: HashMap<String, (String, bool)> = session
        .messages
        .iter()
        .filter(|m| m.kind() == MessageKind::ToolResult)
        .filter_map(|m| {
            Some((
                m.tool_call_id.clone()?,
                (m.tool_output.clone().unwrap_or_default(), m.is_error),
            ))
        })
        .collect();
    turns_of(session.messages.iter().map(|m| {
        let r = m
            .tool_call_id
            .as_ref()
            .and_then(|id| results.get(id).cloned());
        (
            m.clone(),
            if m.kind() == MessageKind::ToolCall {
                r
            } else {
                None
            },
        )
    }))
}

fn round_trip(store: &Store, dir: &Path) -> usize {
    let mut checked = 0;
    for s in top_sessions(store) {
        if reuses_a_tool_call_id(store, &s.id) {
            // Calls and results are joined by id in every format; a file that gives several
            // calls one id (the trimmed Copilot CLI corpus fixture: "[trimmed for fixture]")
            // cannot be joined the same way twice.
            continue;
        }
        let (out, _) = export(store, &s, Format::Vscode, &Redactor::disabled());
        let path = dir.join(trail_render::file_name(&s.id, Format::Vscode));
        std::fs::write(&path, &out).unwrap();
        let head = &out.as_bytes()[..out.len().min(64 << 10)];
        let exporter = trail_sources::vscode_export::VscodeExport;
        assert!(
            exporter.detect(&path, head),
            "{} is not detected as an export",
            s.id
        );
        let parsed = exporter
            .parse(ParseRequest {
                max_bytes: None,
                path: &path,
                resume: None,
            })
            .unwrap();
        assert!(parsed.issues.is_empty(), "{:?}", parsed.issues);
        assert_eq!(parsed.sessions.len(), 1);
        let back = imported_turns(&parsed.sessions[0]);
        let mut want = stored_turns(store, &s.id);
        // Tool calls without an id get one in the file; compare the rest.
        for (a, b) in want.iter_mut().zip(&back) {
            for (x, y) in a.tools.iter_mut().zip(&b.tools) {
                if x.1.is_none() {
                    x.1 = y.1.clone();
                }
            }
        }
        assert_eq!(want.len(), s.turns as usize, "{}", s.id);
        assert_eq!(back, want, "{} ({})", s.id, s.source);
        checked += 1;
    }
    checked
}

/// Returns true when several tool calls of the session share one id.
fn reuses_a_tool_call_id(store: &Store, id: &str) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut reused = false;
    store
        .for_each_export_message(id, |m| -> Result<(), trail_store::StoreError> {
            if m.message.kind == Some(MessageKind::ToolCall) {
                if let Some(call) = &m.message.tool_call_id {
                    reused |= !seen.insert(call.clone());
                }
            }
            Ok(())
        })
        .unwrap();
    reused
}

#[test]
fn vscode_round_trip_samples_of_every_source() {
    let (_dir, store) = sample_store();
    let out = tempfile::tempdir().unwrap();
    assert_eq!(round_trip(&store, out.path()), 7);
    let (_dir, planted) = planted_store();
    assert!(round_trip(&planted, out.path()) >= 8);
}

#[test]
fn vscode_round_trip_corpus() {
    let Some(corpus) = corpus() else { return };
    let mut paths: Vec<PathBuf> = CORPUS_GOLDEN.iter().map(|p| corpus.join(p)).collect();
    for e in std::fs::read_dir(corpus.join("vscode-export")).unwrap() {
        paths.push(e.unwrap().path());
    }
    paths.sort();
    paths.dedup();
    let (_dir, store) = store_of(paths);
    let out = tempfile::tempdir().unwrap();
    assert!(round_trip(&store, out.path()) >= 14);
}

#[test]
fn html_index_links_every_session() {
    let (_dir, store) = sample_store();
    let sessions = top_sessions(&store);
    let off = Redactor::disabled();
    let mut ex = Exporter::new(&store, &off, ExportOptions::default());
    let mut out = Vec::new();
    ex.write_html_index(&sessions, &mut out).unwrap();
    let doc = scraper::Html::parse_document(&String::from_utf8(out).unwrap());
    let hrefs: Vec<String> = doc
        .select(&scraper::Selector::parse("a[href]").unwrap())
        .map(|a| a.value().attr("href").unwrap().to_string())
        .collect();
    let want: Vec<String> = sessions
        .iter()
        .map(|s| trail_render::file_name(&s.id, Format::Html))
        .collect();
    assert_eq!(hrefs, want);
}
