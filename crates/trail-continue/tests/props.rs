//! Property tests: whatever messages a session holds (any order, any text, calls without
//! results, results without calls, ids in any alphabet), every target's file is one JSON object
//! per line, starts with the marker naming the original, and answers every tool call, so the
//! agent's loader never meets a dangling call or a broken line.

use std::sync::LazyLock;

use proptest::prelude::*;
use serde_json::Value;
use trail_continue::{ContinueOptions, Target, TargetHomes, Transcript};
use trail_model::{continuation, MessageKind, Role};
use trail_query::{MessageRow, SessionDetail, SessionRow};

fn row() -> SessionRow {
    SessionRow {
        id: "opencode:ses_prop".into(),
        source: "opencode".into(),
        title: Some("a title".into()),
        cwd: Some("/home/p/proj ect".into()),
        branch: Some("main".into()),
        created_at: Some("2026-01-01T00:00:00.000Z".into()),
        ..SessionRow::default()
    }
}

fn message() -> impl Strategy<Value = MessageRow> {
    (
        prop_oneof![
            Just("prompt"),
            Just("text"),
            Just("tool_call"),
            Just("tool_result"),
            Just("thinking"),
            Just("error")
        ],
        prop_oneof![Just(Role::User), Just(Role::Assistant), Just(Role::Tool)],
        ".{0,40}",
        proptest::option::of("[a-z0-9_.:/ -]{0,12}"),
        proptest::option::of(prop_oneof![
            Just("{\"command\":\"ls\"}".to_string()),
            Just("[1,2]".to_string()),
            Just("not json".to_string()),
            ".{0,20}"
        ]),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(kind, role, text, call_id, input, is_error, main)| MessageRow {
                seq: 0,
                role: Some(role),
                kind: MessageKind::parse(kind),
                text: Some(text.clone()),
                tool_name: Some("a tool.name".into()),
                tool_call_id: call_id,
                tool_input: input,
                tool_output: (kind == "tool_result").then_some(text),
                is_error,
                model: None,
                timestamp: None,
                is_sidechain: false,
                on_main_chain: main,
                turn_index: None,
            },
        )
}

/// Built once: compiling the redactor's patterns is the slow part.
static OPTIONS: LazyLock<ContinueOptions> = LazyLock::new(|| {
    let mut o = ContinueOptions::new(TargetHomes::default()).unwrap();
    o.tool_output_cap = 16;
    o
});

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_target_writes_whole_lines_and_answers_every_call(
        messages in proptest::collection::vec(message(), 0..24)
    ) {
        let detail = SessionDetail {
            session: row(),
            messages,
            subagents: vec![],
            files: vec![],
            refs: vec![],
            checkpoints: vec![],
            continuations: vec![],
        };
        let opts = &*OPTIONS;
        let Ok(t) = Transcript::from_detail(&detail, opts) else {
            // Only a session with no prompt is refused.
            prop_assert!(!detail.messages.iter().any(|m| m.on_main_chain
                && m.kind == Some(MessageKind::Prompt)
                && !m.text.as_deref().unwrap_or("").trim().is_empty()));
            return Ok(());
        };
        for target in Target::ALL {
            let bytes = trail_continue::render(target, &t, "6f90d9c0-8a70-583d-b372-d664b3412f9e", opts).unwrap();
            let text = String::from_utf8(bytes).unwrap();
            let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
            let first_prompt = match target {
                Target::ClaudeCode => lines[0]["message"]["content"].as_str().unwrap().to_string(),
                Target::Codex => lines[1]["payload"]["content"][0]["text"].as_str().unwrap().to_string(),
                Target::GeminiCli => lines[1]["content"][0]["text"].as_str().unwrap().to_string(),
            };
            let marker = continuation::parse_marker(&first_prompt).unwrap();
            prop_assert_eq!(marker.session_id, "opencode:ses_prop");
            // Calls and results pair up one to one.
            let (calls, results) = match target {
                Target::ClaudeCode => (
                    text.matches("\"type\":\"tool_use\"").count(),
                    text.matches("\"type\":\"tool_result\"").count(),
                ),
                Target::Codex => (
                    text.matches("\"type\":\"function_call\"").count(),
                    text.matches("\"type\":\"function_call_output\"").count(),
                ),
                Target::GeminiCli => (
                    lines.iter().map(|l| l["toolCalls"].as_array().map_or(0, Vec::len)).sum::<usize>(),
                    text.matches("\"functionResponse\"").count(),
                ),
            };
            prop_assert_eq!(calls, results);
            prop_assert_eq!(calls, t.stats.tool_calls);
        }
    }
}
