//! Standup, tips, improve and usage on a store whose content the test writes itself (issue 5).
//! Time is fixed: every report gets `NOW`.

use chrono::{DateTime, Utc};
use trail_model::{
    Message, MessageKind, RefType, Role, Session, SessionId, SessionMeta, SessionRef, SourceKind,
    Usage,
};
use trail_report::{markdown, Filter, GroupBy, PriceTable};
use trail_store::{FileRecord, Store};

const NOW: &str = "2026-11-21T12:00:00.000Z";

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(NOW)
        .unwrap()
        .with_timezone(&Utc)
}

/// Builds a session message by message.
struct S {
    session: Session,
    seq: u32,
    turn: Option<u32>,
}

impl S {
    fn new(id: &str, source: SourceKind, repo: Option<&str>, branch: &str, cwd: &str) -> S {
        let mut meta = SessionMeta::new(SessionId::new(id), source, id);
        meta.repository = repo.map(str::to_string);
        meta.branch = Some(branch.to_string());
        meta.cwd = Some(cwd.to_string());
        S {
            session: Session::new(meta),
            seq: 0,
            turn: None,
        }
    }

    fn msg(&mut self, ts: &str, role: Role, kind: MessageKind, text: &str) -> &mut Message {
        if kind == MessageKind::Prompt {
            self.turn = Some(self.turn.map_or(0, |t| t + 1));
        }
        self.session.meta.observe_timestamp(ts);
        let m = Message {
            seq: self.seq,
            native_id: Some(format!("{}-{}", self.session.meta.id, self.seq)),
            role: Some(role),
            kind: Some(kind),
            text: text.to_string(),
            timestamp: Some(ts.to_string()),
            on_main_chain: true,
            turn_index: self.turn,
            ..Message::default()
        };
        self.seq += 1;
        self.session.messages.push(m);
        self.session.messages.last_mut().unwrap()
    }

    fn prompt(&mut self, ts: &str, text: &str) -> &mut Self {
        if self.session.meta.title.is_none() {
            self.session.meta.title = Some(text.to_string());
        }
        self.msg(ts, Role::User, MessageKind::Prompt, text);
        self
    }

    fn answer(&mut self, ts: &str, text: &str) -> &mut Self {
        self.msg(ts, Role::Assistant, MessageKind::Text, text);
        self
    }

    fn tool(&mut self, ts: &str, name: &str, input: &str, output: &str, error: bool) -> &mut Self {
        let id = format!("call-{}", self.seq);
        let m = self.msg(ts, Role::Assistant, MessageKind::ToolCall, "");
        m.tool_name = Some(name.into());
        m.tool_call_id = Some(id.clone());
        m.tool_input = Some(input.into());
        let r = self.msg(ts, Role::Tool, MessageKind::ToolResult, "");
        r.tool_name = Some(name.into());
        r.tool_call_id = Some(id);
        r.tool_output = Some(output.into());
        r.is_error = error;
        self
    }

    fn event(&mut self, ts: &str, role: Role, kind: MessageKind, text: &str) -> &mut Self {
        self.msg(ts, role, kind, text);
        self
    }

    fn rewound(&mut self, ts: &str, text: &str) -> &mut Self {
        let turn = self.turn;
        let m = self.msg(ts, Role::User, MessageKind::Prompt, text);
        m.on_main_chain = false;
        m.turn_index = None;
        self.turn = turn;
        self
    }

    fn usage(
        &mut self,
        ts: &str,
        model: &str,
        input: u64,
        output: u64,
        write: u64,
        read: u64,
    ) -> &mut Self {
        let n = self.session.usage.len();
        self.session.usage.push(Usage {
            request_key: format!("msg_{}_{n}:req_{n}", self.session.meta.id),
            message_id: Some(format!("msg_{}_{n}", self.session.meta.id)),
            model: Some(model.into()),
            timestamp: Some(ts.into()),
            input_tokens: input,
            output_tokens: output,
            cache_creation_tokens: write,
            cache_read_tokens: read,
            tokens_known: true,
            ..Usage::default()
        });
        self.session.observe_model(model);
        self
    }

    fn reference(&mut self, kind: RefType, value: &str) -> &mut Self {
        self.session.add_ref(SessionRef {
            ref_type: kind,
            value: value.into(),
            turn_index: self.turn,
            created_at: None,
        });
        self
    }

    fn done(&mut self) -> Session {
        let mut s = self.session.clone();
        s.turn_count = self.turn.map_or(0, |t| t + 1);
        s
    }
}

fn fixture_store() -> Store {
    let mut store = Store::open_in_memory().unwrap();
    let widgets = "/work/widgets";
    // Yesterday evening, finished: a bug fix with a PR, edits and a failing test command.
    let fix = S::new(
        "aaaa1111-fix",
        SourceKind::ClaudeCode,
        Some("acme/widgets"),
        "fix-login",
        widgets,
    )
    .prompt(
        "2026-11-20T18:00:00.000Z",
        "Fix the login redirect loop when the session cookie expires",
    )
    .usage(
        "2026-11-20T18:00:05.000Z",
        "claude-sonnet-4-5-20250929",
        1_000,
        2_000,
        30_000,
        400_000,
    )
    .tool(
        "2026-11-20T18:01:00.000Z",
        "Edit",
        r#"{"file_path":"/work/widgets/src/auth.rs","old_string":"a","new_string":"b"}"#,
        "ok",
        false,
    )
    .tool(
        "2026-11-20T18:02:00.000Z",
        "Bash",
        r#"{"command":"npm test"}"#,
        "Error: cannot find module 'jest'",
        true,
    )
    .tool(
        "2026-11-20T18:03:00.000Z",
        "Edit",
        r#"{"file_path":"/work/widgets/src/auth.rs","old_string":"b","new_string":"c"}"#,
        "ok",
        false,
    )
    .tool(
        "2026-11-20T18:04:00.000Z",
        "Bash",
        r#"{"command":"npm test"}"#,
        "Error: cannot find module 'jest'",
        true,
    )
    .answer(
        "2026-11-20T18:05:00.000Z",
        "The redirect now stops after one attempt.",
    )
    .prompt("2026-11-20T18:10:00.000Z", "no, the test is still failing")
    .usage(
        "2026-11-20T18:10:05.000Z",
        "claude-sonnet-4-5-20250929",
        500,
        1_000,
        0,
        420_000,
    )
    .tool(
        "2026-11-20T18:11:00.000Z",
        "Write",
        r#"{"file_path":"/work/widgets/tests/auth_test.rs","content":"x"}"#,
        "ok",
        false,
    )
    .tool(
        "2026-11-20T18:11:30.000Z",
        "Bash",
        r#"{"command":"rm -rf build"}"#,
        "The user doesn't want to proceed with this tool use. The tool use was rejected.",
        true,
    )
    .event(
        "2026-11-20T18:12:00.000Z",
        Role::User,
        MessageKind::Meta,
        "[Request interrupted by user for tool use]",
    )
    .prompt("2026-11-20T18:20:00.000Z", "Open a pull request")
    .answer(
        "2026-11-20T18:21:00.000Z",
        "Opened https://github.com/acme/widgets/pull/42",
    )
    .reference(RefType::Pr, "acme/widgets#42")
    .reference(RefType::Commit, "1a2b3c4d5e6f")
    .done();
    // This morning, still going: same repository, another branch; a compaction, an API error
    // and a rewind.
    let docs = S::new(
        "bbbb2222-docs",
        SourceKind::ClaudeCode,
        Some("acme/widgets"),
        "main",
        widgets,
    )
    .prompt(
        "2026-11-21T10:00:00.000Z",
        "run the tests and summarize failures",
    )
    .usage(
        "2026-11-21T10:00:05.000Z",
        "claude-opus-4-5-20251101",
        2_000,
        3_000,
        50_000,
        100_000,
    )
    .tool(
        "2026-11-21T10:01:00.000Z",
        "Edit",
        r#"{"file_path":"/work/widgets/README.md"}"#,
        "String to replace not found in file",
        true,
    )
    .event(
        "2026-11-21T10:02:00.000Z",
        Role::System,
        MessageKind::Compaction,
        "compact_boundary",
    )
    .event(
        "2026-11-21T10:03:00.000Z",
        Role::System,
        MessageKind::Error,
        "API Error: 529 overloaded",
    )
    .rewound("2026-11-21T10:04:00.000Z", "rewrite the whole README")
    .prompt(
        "2026-11-21T11:30:00.000Z",
        "you didn't update the changelog",
    )
    .usage("2026-11-21T11:30:05.000Z", "claude-opus-5", 100, 50, 0, 0)
    .reference(RefType::Issue, "acme/widgets#7")
    .done();
    // A Copilot session in a folder without a known repository, one turn.
    let notes = S::new(
        "cccc3333-notes",
        SourceKind::CopilotVscode,
        None,
        "main",
        "/work/notes",
    )
    .prompt(
        "2026-11-21T09:00:00.000Z",
        "run the tests and summarize failures",
    )
    .answer("2026-11-21T09:01:00.000Z", "All 12 tests pass.")
    .done();
    // Three days ago: outside the default standup range.
    let old = S::new(
        "dddd4444-old",
        SourceKind::Codex,
        Some("acme/api"),
        "main",
        "/work/api",
    )
    .prompt(
        "2026-11-18T08:00:00.000Z",
        "Add rate limiting to the public endpoints",
    )
    .usage(
        "2026-11-18T08:00:05.000Z",
        "gpt-5-codex",
        10_000,
        500,
        0,
        5_000,
    )
    .done();
    let record = FileRecord {
        path: "/fixture".into(),
        source: Some(SourceKind::ClaudeCode),
        sessions: vec![fix, docs, notes, old],
        ..FileRecord::default()
    };
    store.write_batch(vec![record]).unwrap();
    store
}

fn all_time() -> Filter {
    Filter::default()
}

#[test]
fn standup_last_24_hours() {
    let store = fixture_store();
    let s = trail_report::standup(&store, &Filter::default(), now()).unwrap();
    insta::assert_snapshot!("standup_24h", markdown::standup(&s));
    insta::assert_snapshot!("standup_24h_prompt", markdown::standup_prompt(&s));
}

#[test]
fn standup_filters_by_repo_and_source() {
    let store = fixture_store();
    let f = Filter {
        repo: Some("notes".into()),
        ..Filter::default()
    };
    let s = trail_report::standup(&store, &f, now()).unwrap();
    assert_eq!(s.streams.len(), 1);
    assert_eq!(s.streams[0].folder.as_deref(), Some("/work/notes"));
    let f = Filter {
        source: Some(trail_model::SourceKind::Codex),
        since: Some("2026-11-15T00:00:00.000Z".into()),
        ..Filter::default()
    };
    let s = trail_report::standup(&store, &f, now()).unwrap();
    assert_eq!(s.streams.len(), 1);
    assert_eq!(s.streams[0].repository.as_deref(), Some("acme/api"));
}

#[test]
fn standup_empty_range() {
    let store = fixture_store();
    let later = DateTime::parse_from_rfc3339("2026-12-25T12:00:00Z")
        .unwrap()
        .with_timezone(&Utc);
    let s = trail_report::standup(&store, &Filter::default(), later).unwrap();
    assert!(s.streams.is_empty());
    insta::assert_snapshot!("standup_empty", markdown::standup(&s));
    let empty = Store::open_in_memory().unwrap();
    let s = trail_report::standup(&empty, &Filter::default(), now()).unwrap();
    assert!(markdown::standup(&s).contains("no sessions in the last 24 hours"));
}

#[test]
fn tips_all_time() {
    let store = fixture_store();
    let t = trail_report::tips(&store, &all_time(), PriceTable::shipped()).unwrap();
    insta::assert_snapshot!("tips_all", markdown::tips(&t));
}

/// Models are listed most used first, whatever they cost, and a request with no model recorded
/// is named so (the usage report's order is by cost, and its key for no model is empty).
#[test]
fn tips_models_are_listed_most_used_first() {
    let mut store = Store::open_in_memory().unwrap();
    let mut s = S::new(
        "eeee5555-models",
        SourceKind::CopilotCli,
        None,
        "main",
        "/work/m",
    );
    s.prompt("2026-11-20T09:00:00.000Z", "Rename the config loader");
    for (i, model) in [
        "a-rare-model",
        "",
        "z-common-model",
        "z-common-model",
        "z-common-model",
        "",
    ]
    .iter()
    .enumerate()
    {
        s.usage(&format!("2026-11-20T09:00:0{i}.000Z"), model, 100, 10, 0, 0);
    }
    let record = FileRecord {
        path: "/fixture-models".into(),
        source: Some(SourceKind::CopilotCli),
        sessions: vec![s.done()],
        ..FileRecord::default()
    };
    store.write_batch(vec![record]).unwrap();
    let t = trail_report::tips(&store, &all_time(), PriceTable::shipped()).unwrap();
    let models: Vec<(&str, i64)> = t
        .models
        .iter()
        .map(|m| (m.name.as_str(), m.count))
        .collect();
    assert_eq!(
        models,
        [
            ("z-common-model", 3),
            ("(no model recorded)", 2),
            ("a-rare-model", 1)
        ]
    );
    // The usage table by model names the row as its note on unpriced models does.
    let by_model =
        trail_report::usage(&store, &all_time(), GroupBy::Model, PriceTable::shipped()).unwrap();
    let table = markdown::usage(&by_model);
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("| (no model recorded) |")),
        "{table}"
    );
}

#[test]
fn tips_empty_range() {
    let store = fixture_store();
    let f = Filter {
        since: Some("2027-01-01T00:00:00.000Z".into()),
        ..Filter::default()
    };
    let t = trail_report::tips(&store, &f, PriceTable::shipped()).unwrap();
    insta::assert_snapshot!("tips_empty", markdown::tips(&t));
}

#[test]
fn improve_all_time() {
    let store = fixture_store();
    let r = trail_report::improve(&store, &all_time()).unwrap();
    insta::assert_snapshot!("improve_all", markdown::improve(&r));
    insta::assert_json_snapshot!("improve_all_json", r);
    assert!(markdown::improve_prompt(&r).contains("CLAUDE.md"));
}

#[test]
fn improve_empty_range() {
    let store = fixture_store();
    let f = Filter {
        since: Some("2027-01-01T00:00:00.000Z".into()),
        ..Filter::default()
    };
    let r = trail_report::improve(&store, &f).unwrap();
    insta::assert_snapshot!("improve_empty", markdown::improve(&r));
}

#[test]
fn usage_by_day_model_session_and_partial_days() {
    let store = fixture_store();
    let p = PriceTable::shipped();
    for by in [
        GroupBy::Day,
        GroupBy::Model,
        GroupBy::Session,
        GroupBy::Repo,
        GroupBy::Source,
        GroupBy::Week,
        GroupBy::Month,
    ] {
        let r = trail_report::usage(&store, &all_time(), by, p).unwrap();
        insta::assert_snapshot!(format!("usage_{by:?}").to_lowercase(), markdown::usage(&r));
    }
    // A range starting and ending inside days: only the requests in it count.
    let f = Filter {
        since: Some("2026-11-20T18:10:00.000Z".into()),
        until: Some("2026-11-21T11:00:00.000Z".into()),
        ..Filter::default()
    };
    let r = trail_report::usage(&store, &f, GroupBy::Day, p).unwrap();
    assert_eq!(r.totals.requests, 2);
    assert_eq!(r.totals.input_tokens, 500 + 2_000);
    // The unpriced model is listed, never silently $0.
    let r = trail_report::usage(&store, &all_time(), GroupBy::Model, p).unwrap();
    let unpriced: Vec<&str> = r.unpriced_models.iter().map(|u| u.model.as_str()).collect();
    assert_eq!(unpriced, ["claude-opus-5", "gpt-5-codex"]);
    assert!(markdown::usage(&r).contains("+ unpriced"));
}

#[test]
fn transcript_text_in_report_markdown_shows_as_text() {
    use trail_report::standup::{Standup, StandupSession, Stream};
    let hostile = "<img src=x onerror=alert(1)> [go](javascript:alert(2))";
    let s = Standup {
        since: "2026-11-20T00:00:00Z".into(),
        until: "2026-11-21T00:00:00Z".into(),
        default_range: true,
        time_zone: "UTC".into(),
        source: None,
        repo: None,
        streams: vec![Stream {
            repository: None,
            folder: Some("/tmp/<svg onload=alert(3)>".into()),
            branch: Some("<script>alert(4)</script>".into()),
            sessions: vec![StandupSession {
                id: "claude-code:s1".into(),
                short_id: "s1".into(),
                title: Some(hostile.into()),
                source: "claude-code".into(),
                started_at: None,
                updated_at: None,
                turns: 1,
                asked: vec![hostile.into()],
                in_progress: false,
            }],
            more_sessions: 0,
            key_files: vec![],
            refs: vec![],
        }],
    };
    let md = markdown::standup(&s);
    for live in ["<img", "<svg", "<script"] {
        assert!(!md.contains(live), "{live} in\n{md}");
    }
    // The link's bracket is escaped wherever it is written.
    assert_eq!(md.matches("[go](").count(), md.matches("\\[go](").count());
    assert!(md.contains("&lt;img src=x onerror=alert(1)> \\[go](javascript:alert(2))"));
    assert!(md.contains("## /tmp/&lt;svg onload=alert(3)> · &lt;script>alert(4)&lt;/script>"));
}

#[test]
fn transcript_quotes_in_improve_markdown_show_as_text() {
    use trail_report::improve::{Evidence, Finding, FindingKind, ImproveReport};
    let r = ImproveReport {
        filter: Filter::default(),
        sessions: 1,
        findings: vec![Finding {
            kind: FindingKind::ToolErrors,
            title: "Failed calls of Bash".into(),
            count: 1,
            sessions: 1,
            evidence: vec![Evidence {
                session_id: "claude-code:s1".into(),
                short_id: "s1".into(),
                turn: Some(1),
                timestamp: None,
                quote: "no, <iframe src=//evil.example></iframe>\n![x](https://t.example/p.png)"
                    .into(),
            }],
            suggestion: None,
        }],
        suggestions: vec![],
    };
    let md = markdown::improve(&r);
    assert!(!md.contains("<iframe"), "{md}");
    assert!(
        md.contains(
            "\"no, &lt;iframe src=//evil.example>&lt;/iframe> !\\[x](https://t.example/p.png)\""
        ),
        "{md}"
    );
}
