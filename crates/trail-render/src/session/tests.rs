//! The walker on handmade sessions: what a recording sink receives, in order.

use trail_model::{MessageKind, SessionId};
use trail_store::{MessageRow, SessionRow};

use super::*;

/// Writes down every call, one line each.
#[derive(Default)]
struct Recorder(Vec<String>);

impl SessionSink for Recorder {
    type Error = std::convert::Infallible;

    fn turn(&mut self, turn: Option<i64>, at: Option<&str>) -> Result<(), Self::Error> {
        self.0
            .push(format!("turn {turn:?} at {}", at.unwrap_or("-")));
        Ok(())
    }

    fn part(&mut self, seq: i64, part: &Part<'_>) -> Result<(), Self::Error> {
        self.0.push(format!("{seq}: {part:?}"));
        Ok(())
    }

    fn subagent(&mut self, index: usize, row: &SessionRow) -> Result<(), Self::Error> {
        self.0.push(format!("subagent {index} {}", row.id));
        Ok(())
    }

    fn end_of_turns(&mut self) -> Result<(), Self::Error> {
        self.0.push("end".into());
        Ok(())
    }

    fn other_subagents(&mut self, rows: &[(usize, &SessionRow)]) -> Result<(), Self::Error> {
        let ids: Vec<String> = rows.iter().map(|(i, r)| format!("{i}={}", r.id)).collect();
        self.0.push(format!("others {}", ids.join(",")));
        Ok(())
    }

    fn off_branch(&mut self, count: u64) -> Result<(), Self::Error> {
        self.0.push(format!("off branch {count}"));
        Ok(())
    }
}

/// A main-chain message of `kind` in `turn`, at minute `seq` of one hour.
fn msg(seq: i64, turn: Option<i64>, kind: MessageKind, text: &str) -> MessageRow {
    MessageRow {
        seq,
        role: None,
        kind: Some(kind),
        text: Some(text.to_string()),
        tool_name: None,
        tool_call_id: None,
        tool_input: None,
        tool_output: None,
        is_error: false,
        model: None,
        timestamp: Some(format!("2026-11-20T12:{seq:02}:00Z")),
        is_sidechain: false,
        on_main_chain: true,
        turn_index: turn,
    }
}

fn call(seq: i64, turn: i64, id: &str) -> MessageRow {
    MessageRow {
        tool_name: Some("Bash".into()),
        tool_call_id: Some(id.into()),
        tool_input: Some("{\"command\":\"ls\"}".into()),
        ..msg(seq, Some(turn), MessageKind::ToolCall, "")
    }
}

fn result(seq: i64, turn: i64, id: &str, output: &str) -> MessageRow {
    MessageRow {
        tool_name: Some("Bash".into()),
        tool_call_id: Some(id.into()),
        tool_output: Some(output.into()),
        ..msg(seq, Some(turn), MessageKind::ToolResult, "")
    }
}

fn walk(messages: &[MessageRow], subagents: Subagents<'_>, untimed: bool) -> Vec<String> {
    let mut rec = Recorder::default();
    let Ok(()) = walk_messages(messages, Walker::new(subagents, untimed), &mut rec);
    rec.0
}

/// A session: a line before the first prompt, two turns, a tool call with its result, a
/// result no call holds, and two messages on an abandoned branch.
fn session() -> Vec<MessageRow> {
    let mut off = msg(6, Some(1), MessageKind::Text, "abandoned");
    off.on_main_chain = false;
    let mut off_call = call(7, 1, "gone");
    off_call.on_main_chain = false;
    vec![
        msg(0, None, MessageKind::Meta, "<command>"),
        msg(1, Some(0), MessageKind::Prompt, "hi"),
        call(2, 0, "c1"),
        result(3, 0, "c1", "a b"),
        result(4, 0, "orphan", "lost"),
        msg(5, Some(1), MessageKind::Prompt, "again"),
        off,
        off_call,
        msg(
            8,
            Some(1),
            MessageKind::Meta,
            "[Request interrupted by user]",
        ),
        msg(9, Some(1), MessageKind::Text, "done"),
    ]
}

#[test]
fn turns_tool_results_and_branches() {
    let got = walk(&session(), Subagents::none(), false);
    let want = [
        "turn Some(0) at 2026-11-20T12:01:00Z",
        "1: Prompt(\"hi\")",
        "2: ToolCall(ToolCall { name: \"Bash\", input: \"{\\\"command\\\":\\\"ls\\\"}\", call_id: Some(\"c1\"), result: Some(Outcome { seq: 3, output: Some(\"a b\"), is_error: false }) })",
        // The joined result is no part of its own; the orphan is.
        "4: ToolResult { name: \"Bash\", output: \"lost\", is_error: false }",
        "turn Some(1) at 2026-11-20T12:05:00Z",
        "5: Prompt(\"again\")",
        "8: Interrupt(\"[Request interrupted by user]\")",
        "9: Answer(\"done\")",
        "end",
        "off branch 2",
    ];
    assert_eq!(got, want);
}

#[test]
fn messages_before_the_first_prompt_only_when_asked() {
    let got = walk(&session(), Subagents::none(), true);
    // The first messages are outside any turn: no turn starts before them.
    assert_eq!(got[0], "0: Meta(\"<command>\")");
    assert_eq!(got[1], "turn Some(0) at 2026-11-20T12:01:00Z");
    // A message outside any turn after a turn starts the "before the first prompt" group.
    let mut late = session();
    late.push(msg(10, None, MessageKind::Meta, "late"));
    let got = walk(&late, Subagents::none(), true);
    assert_eq!(
        got[got.len() - 4..],
        [
            "turn None at 2026-11-20T12:10:00Z",
            "10: Meta(\"late\")",
            "end",
            "off branch 2"
        ]
    );
}

fn sub(id: &str, call: Option<&str>, created: &str) -> SessionRow {
    SessionRow {
        id: SessionId::new(id),
        parent_tool_call_id: call.map(str::to_string),
        created_at: Some(created.to_string()),
        ..SessionRow::default()
    }
}

#[test]
fn subagents_go_under_their_call_and_the_rest_after() {
    let subs = [
        sub("late-fork", None, "2026-11-20T12:30:00Z"),
        sub("by-c1", Some("c1"), "2026-11-20T12:02:30Z"),
        sub("by-gone", Some("gone"), "2026-11-20T12:07:30Z"),
        sub("fork", None, "2026-11-20T12:04:30Z"),
    ];
    let got = walk(&session(), Subagents::under_calls(&subs), false);
    assert_eq!(got[2].split(':').next(), Some("2"), "{got:?}");
    assert_eq!(got[3], "subagent 1 by-c1");
    // Exports: forks and subagents of calls not shown after the transcript, oldest first.
    assert_eq!(got[got.len() - 2], "others 3=fork,2=by-gone,0=late-fork");

    // The TUI: forks where their time falls, before the turn they precede.
    let messages = session();
    let got = walk(&messages, Subagents::forks_by_time(&subs, &messages), false);
    let at = |line: &str| got.iter().position(|l| l == line).unwrap();
    assert_eq!(
        at("subagent 3 fork") + 1,
        at("turn Some(1) at 2026-11-20T12:05:00Z")
    );
    assert_eq!(at("subagent 1 by-c1"), at("2: ToolCall(ToolCall { name: \"Bash\", input: \"{\\\"command\\\":\\\"ls\\\"}\", call_id: Some(\"c1\"), result: Some(Outcome { seq: 3, output: Some(\"a b\"), is_error: false }) })") + 1);
    // The call of `by-gone` is off the main chain; it and the late fork come last.
    assert_eq!(got[got.len() - 2], "others 2=by-gone,0=late-fork");
}

#[test]
fn classification_reads_kind_once() {
    let m = msg(
        0,
        Some(0),
        MessageKind::Meta,
        "[Request interrupted by user for tool use]",
    );
    assert!(matches!(
        Part::of(&m, None, false),
        Some(Part::Interrupt(_))
    ));
    let r = result(1, 0, "c", "x");
    assert_eq!(Part::of(&r, None, true), None);
    let unknown = MessageRow {
        kind: None,
        ..msg(2, Some(0), MessageKind::Text, "x")
    };
    assert_eq!(Part::of(&unknown, None, false), None);
}

/// A terminal that writes tones as `<Tone>` and marks `again` with `*`.
#[derive(Default)]
struct Screen(Vec<String>);

impl terminal::Terminal for &mut Screen {
    fn line(&mut self, text: &str) -> std::io::Result<()> {
        self.0.push(text.to_string());
        Ok(())
    }

    fn paint(&self, tone: crate::Tone, text: &str) -> String {
        format!("<{tone:?}>{text}")
    }

    fn mark(&self, text: &str) -> String {
        text.replace("again", "*again*")
    }
}

#[test]
fn the_terminal_transcript_paints_and_marks() {
    let mut screen = Screen::default();
    let mut sink = terminal::TerminalTranscript::new(&mut screen, false);
    walk_messages(&session(), Walker::new(Subagents::none(), false), &mut sink).unwrap();
    // A turn's rule is 60 columns wide.
    let rule = |label: &str| format!("<Rule>{label}{}", "─".repeat(60 - label.chars().count()));
    let (rule0, rule1) = (
        rule("── Turn 0 · 2026-11-20 12:01 "),
        rule("── Turn 1 · 2026-11-20 12:05 "),
    );
    let want = [
        "",
        &rule0,
        "<Ok>❯ <Bold>hi",
        "  <Ok>✓ <Tool>Bash ls",
        "",
        &rule1,
        "<Ok>❯ <Bold>*again*",
        "<Warn>  [Request interrupted by user]",
        "  done",
        "",
        "<Dim>2 messages on abandoned branches (rewinds, retries) are kept; see --json.",
    ];
    assert_eq!(screen.0, want);
}
