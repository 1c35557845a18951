//! VS Code "Export Chat" files (`chat.json`): one request per turn, in the shape VS Code's
//! "Chat: Import Chat..." opens (see `../shared/formats/vscode-chat-export.md`), from any
//! source.
//!
//! A prompt becomes `message` (text plus one text part); answer text becomes bare markdown
//! parts; reasoning becomes `thinking` parts; a tool call becomes a `toolInvocationSerialized`
//! part whose `resultDetails` carries the input and output (the shape VS Code uses for tools
//! with input/output details); an agent error becomes `result.errorDetails`. Adjacent answer
//! texts are separated by a blank line so that a reader joining adjacent parts (VS Code, and
//! trail's own `vscode-export` importer) gets the same answer back. Subagent transcripts are
//! not inlined: the tool call that started one carries its final report.

use std::io::Write;

use serde_json::{json, Value};
use trail_model::{MessageKind, SourceKind};
use trail_store::{ExportMessage, SessionRow};

use crate::{for_each_turn_message, Exporter, Result};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    None,
    Text,
    Thinking,
    Tool,
}

/// The request being written.
struct Open {
    turn: i64,
    model: Option<String>,
    timestamp_ms: Option<i64>,
    error: Option<String>,
    last: Part,
}

pub(crate) fn write_session(
    ex: &mut Exporter<'_>,
    s: &SessionRow,
    w: &mut dyn Write,
) -> Result<()> {
    // VS Code's own chats answer as "GitHub Copilot"; every other agent by its registry name.
    let own = [SourceKind::CopilotVscode, SourceKind::VscodeExport].map(SourceKind::as_str);
    let named = ex.options.agent_name.and_then(|name| name(&s.source));
    let responder = match named {
        Some(name) if !own.contains(&s.source.as_str()) => name,
        _ => "GitHub Copilot",
    };
    write!(
        w,
        "{{\n  \"requesterUsername\": \"user\",\n  \"responderUsername\": {},\n  \"initialLocation\": \"panel\",\n  \"requests\": [",
        Value::from(responder)
    )?;
    let store = ex.store;
    let prefix = request_prefix(&s.id);
    let mut open: Option<Open> = None;
    let mut count = 0usize;
    for_each_turn_message(store, &s.id, |turn, m: ExportMessage| -> Result<()> {
        let msg = &m.message;
        if open.as_ref().is_none_or(|o| o.turn != turn) {
            if let Some(o) = open.take() {
                close_request(w, &o, &prefix)?;
            }
            if count > 0 {
                w.write_all(b",")?;
            }
            count += 1;
            let prompt = if msg.kind == Some(MessageKind::Prompt) {
                ex.redact(msg.text.as_deref().unwrap_or("")).into_owned()
            } else {
                String::new()
            };
            let ts = msg.timestamp.as_deref().and_then(epoch_ms);
            open_request(w, &prefix, turn, &prompt, ts)?;
            open = Some(Open {
                turn,
                model: None,
                timestamp_ms: ts,
                error: None,
                last: Part::None,
            });
        }
        let o = open.as_mut().expect("opened above");
        if o.model.is_none() {
            if let Some(model) = &msg.model {
                o.model = Some(model.clone());
            }
        }
        let body = msg.text.as_deref().unwrap_or("");
        match msg.kind {
            Some(MessageKind::Text) if !body.trim().is_empty() => {
                let t = ex.redact(body);
                let value = if o.last == Part::Text {
                    format!("{}{}", trail_model::turns::RESPONSE_SEPARATOR, t)
                } else {
                    t.into_owned()
                };
                part(
                    w,
                    &mut o.last,
                    Part::Text,
                    &json!({"value": value, "supportThemeIcons": false, "supportHtml": false}),
                )?;
            }
            Some(MessageKind::Thinking) if !body.is_empty() => {
                let t = ex.redact(body);
                part(
                    w,
                    &mut o.last,
                    Part::Thinking,
                    &json!({"kind": "thinking", "value": t}),
                )?;
            }
            Some(MessageKind::ToolCall) => {
                let name = msg.tool_name.as_deref().unwrap_or("tool");
                let id = msg
                    .tool_call_id
                    .clone()
                    .unwrap_or_else(|| format!("{prefix}_tool{}", msg.seq));
                let input = ex.redact(msg.tool_input.as_deref().unwrap_or(""));
                let intent = ex.redact(body).trim().to_string();
                let summary = crate::text::tool_summary(&input);
                let invocation = if !intent.is_empty() {
                    intent
                } else if summary.is_empty() {
                    format!("Using `{name}`")
                } else {
                    format!("Using `{name}`: {summary}")
                };
                let mut v = json!({
                    "kind": "toolInvocationSerialized",
                    "invocationMessage": {"value": invocation, "supportThemeIcons": false, "supportHtml": false},
                    "isConfirmed": {"type": 1},
                    "isComplete": m.result.is_some(),
                    "source": {"type": "internal", "label": "Built-In"},
                    "toolCallId": id,
                    "toolId": name,
                });
                if m.result.is_none() {
                    // No result recorded: the input still travels, as VS Code's input data.
                    v["toolSpecificData"] = json!({"kind": "input", "rawInput": input});
                }
                if let Some(r) = &m.result {
                    let out = ex.redact(r.tool_output.as_deref().unwrap_or(""));
                    let output = if out.is_empty() {
                        json!([])
                    } else {
                        json!([{"type": "embed", "isText": true, "value": out}])
                    };
                    v["resultDetails"] =
                        json!({"input": input, "output": output, "isError": r.is_error});
                    if !out.is_empty() {
                        let verb = if r.is_error { "Failed" } else { "Ran" };
                        v["pastTenseMessage"] = json!({
                            "value": format!("{verb} `{name}`"),
                            "supportThemeIcons": false,
                            "supportHtml": false,
                        });
                    }
                }
                part(w, &mut o.last, Part::Tool, &v)?;
            }
            Some(MessageKind::Error) if o.error.is_none() && !body.trim().is_empty() => {
                o.error = Some(ex.redact(body).into_owned());
            }
            _ => {}
        }
        Ok(())
    })?;
    if let Some(o) = open.take() {
        close_request(w, &o, &prefix)?;
    }
    w.write_all(b"\n  ]\n}\n")?;
    Ok(())
}

fn request_prefix(session_id: &str) -> String {
    crate::file_stem(session_id)
}

fn open_request(
    w: &mut dyn Write,
    prefix: &str,
    turn: i64,
    prompt: &str,
    timestamp_ms: Option<i64>,
) -> Result<()> {
    let (lines, last_col) = end_position(prompt);
    let len16 = prompt.encode_utf16().count();
    let message = json!({
        "text": prompt,
        "parts": [{
            "range": {"start": 0, "endExclusive": len16},
            "editorRange": {
                "startLineNumber": 1, "startColumn": 1,
                "endLineNumber": lines, "endColumn": last_col,
            },
            "text": prompt,
            "kind": "text",
        }],
    });
    write!(
        w,
        "\n    {{\n      \"requestId\": {},\n      \"message\": ",
        Value::from(format!("request_{prefix}_{turn}"))
    )?;
    serde_json::to_writer(&mut *w, &message)?;
    w.write_all(b",\n      \"variableData\": {\"variables\": []},\n")?;
    if let Some(ts) = timestamp_ms {
        writeln!(w, "      \"timestamp\": {ts},")?;
    }
    w.write_all(b"      \"response\": [")?;
    Ok(())
}

fn part(w: &mut dyn Write, last: &mut Part, kind: Part, v: &Value) -> Result<()> {
    if *last != Part::None {
        w.write_all(b",")?;
    }
    w.write_all(b"\n        ")?;
    serde_json::to_writer(&mut *w, v)?;
    *last = kind;
    Ok(())
}

fn close_request(w: &mut dyn Write, o: &Open, prefix: &str) -> Result<()> {
    w.write_all(b"\n      ],\n")?;
    writeln!(
        w,
        "      \"responseId\": {},",
        Value::from(format!("response_{prefix}_{}", o.turn))
    )?;
    let result = match &o.error {
        Some(e) => json!({"errorDetails": {"message": e}}),
        None => json!({}),
    };
    w.write_all(b"      \"result\": ")?;
    serde_json::to_writer(&mut *w, &result)?;
    w.write_all(b",\n")?;
    let state = if o.error.is_some() { 3 } else { 1 };
    match o.timestamp_ms {
        Some(ts) => writeln!(
            w,
            "      \"modelState\": {{\"value\": {state}, \"completedAt\": {ts}}},"
        )?,
        None => writeln!(w, "      \"modelState\": {{\"value\": {state}}},")?,
    }
    if let Some(model) = &o.model {
        writeln!(w, "      \"modelId\": {},", Value::from(model.as_str()))?;
    }
    w.write_all(
        b"      \"followups\": [],\n      \"isCanceled\": false,\n      \"contentReferences\": [],\n      \"codeCitations\": []\n    }",
    )?;
    Ok(())
}

/// Returns the 1-based line number and the UTF-16 column after the last character of `s`.
fn end_position(s: &str) -> (usize, usize) {
    let lines = s.split('\n').count();
    let last = s.rsplit('\n').next().unwrap_or("");
    (lines, last.encode_utf16().count() + 1)
}

/// Converts the store's ISO-8601 UTC timestamp to epoch milliseconds.
fn epoch_ms(ts: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(ts)
        .ok()
        .map(|d| d.timestamp_millis())
}
