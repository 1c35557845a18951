//! The conversation to carry, in a shape every target writes from: prompts, answers and tool
//! steps (a call paired with its result), redacted and capped, with the marker line first.

use std::collections::HashMap;

use serde_json::{Map, Value};
use trail_model::{continuation, MessageKind, Role};
use trail_query::SessionDetail;
use trail_render::RedactionCounts;

use crate::{CarryStats, ContinueError, ContinueOptions, Result};

/// One step of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Prompt {
        text: String,
        timestamp: Option<String>,
    },
    Answer {
        text: String,
        timestamp: Option<String>,
    },
    Tool(ToolStep),
}

/// A tool call and (when the source recorded one) its result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolStep {
    /// The source's call id, or a made-up one when it had none.
    pub call_id: String,
    pub name: String,
    /// Always a JSON object (a non-object input is wrapped as `{"input": ...}`).
    pub input: Map<String, Value>,
    pub output: Option<String>,
    pub is_error: bool,
    pub timestamp: Option<String>,
}

/// A session's conversation, ready to write.
#[derive(Debug, Clone)]
pub struct Transcript {
    pub original_id: String,
    pub original_source: String,
    pub cwd: String,
    pub branch: Option<String>,
    pub title: Option<String>,
    pub steps: Vec<Step>,
    pub stats: CarryStats,
}

impl Transcript {
    /// Builds the transcript of a session: the main conversation (abandoned branches and
    /// sidechains stay behind; subagents report through their tool call's result), thinking,
    /// meta records and errors left out.
    pub fn from_detail(detail: &SessionDetail, options: &ContinueOptions) -> Result<Transcript> {
        let s = &detail.session;
        // A recorded folder that is not an absolute path (a placeholder some trimmed logs
        // carry) is no place an agent can resume in: the caller's --cwd stands in.
        let cwd = s
            .cwd
            .clone()
            .filter(|c| std::path::Path::new(c).is_absolute())
            .or_else(|| options.cwd.clone())
            .ok_or_else(|| {
                ContinueError::Invalid(format!(
                    "session {} has no working folder and agents resume sessions by folder; name one with --cwd",
                    s.id
                ))
            })?;
        let mut carry = Carry {
            options,
            counts: RedactionCounts::default(),
            cut: 0,
        };
        let mut steps: Vec<Step> = Vec::new();
        // Call id -> index in `steps` of the newest call still waiting for its result.
        let mut open: HashMap<String, usize> = HashMap::new();
        let mut made_up = 0usize;
        for m in detail
            .messages
            .iter()
            .filter(|m| m.on_main_chain && !m.is_sidechain)
        {
            match m.kind {
                Some(MessageKind::Prompt) => {
                    let text = carry.text(m.text.as_deref().unwrap_or(""));
                    if !text.trim().is_empty() {
                        steps.push(Step::Prompt {
                            text,
                            timestamp: m.timestamp.clone(),
                        });
                    }
                }
                Some(MessageKind::Text) if m.role == Some(Role::Assistant) => {
                    let text = carry.text(m.text.as_deref().unwrap_or(""));
                    if !text.trim().is_empty() {
                        steps.push(Step::Answer {
                            text,
                            timestamp: m.timestamp.clone(),
                        });
                    }
                }
                Some(MessageKind::ToolCall) => {
                    let call_id = m.tool_call_id.clone().unwrap_or_else(|| {
                        made_up += 1;
                        format!("call_trail_{made_up}")
                    });
                    open.insert(call_id.clone(), steps.len());
                    steps.push(Step::Tool(ToolStep {
                        call_id,
                        name: m.tool_name.clone().unwrap_or_else(|| "tool".to_string()),
                        input: carry.input(m.tool_input.as_deref()),
                        // Some formats keep the output on the call itself.
                        output: m.tool_output.as_deref().map(|o| carry.output(o)),
                        is_error: m.is_error,
                        timestamp: m.timestamp.clone(),
                    }));
                }
                Some(MessageKind::ToolResult) => {
                    let raw = m.tool_output.as_deref().or(m.text.as_deref()).unwrap_or("");
                    let output = carry.output(raw);
                    let slot = m.tool_call_id.as_ref().and_then(|id| open.remove(id));
                    match slot.and_then(|i| match &mut steps[i] {
                        Step::Tool(t) => Some(t),
                        _ => None,
                    }) {
                        Some(t) => {
                            t.output = Some(output);
                            t.is_error |= m.is_error;
                        }
                        // A result whose call is not in the conversation: readable text.
                        None => steps.push(Step::Answer {
                            text: format!(
                                "Tool output ({}):\n{output}",
                                m.tool_name.as_deref().unwrap_or("tool")
                            ),
                            timestamp: m.timestamp.clone(),
                        }),
                    }
                }
                _ => {}
            }
        }
        if !steps.iter().any(|s| matches!(s, Step::Prompt { .. })) {
            return Err(ContinueError::Invalid(format!(
                "session {} has no prompt to continue from",
                s.id
            )));
        }
        let marker = continuation::marker_line(&s.source, &s.id);
        match steps.first_mut() {
            Some(Step::Prompt { text, .. }) => *text = format!("{marker}\n\n{text}"),
            _ => steps.insert(
                0,
                Step::Prompt {
                    text: marker,
                    timestamp: s.created_at.clone(),
                },
            ),
        }
        let title = s.title.as_deref().map(|t| carry.text(t));
        let stats = CarryStats {
            prompts: count(&steps, |s| matches!(s, Step::Prompt { .. })),
            answers: count(&steps, |s| matches!(s, Step::Answer { .. })),
            tool_calls: count(&steps, |s| matches!(s, Step::Tool(_))),
            cut: carry.cut,
            redactions: carry.counts.total(),
        };
        Ok(Transcript {
            original_id: s.id.to_string(),
            original_source: s.source.to_string(),
            cwd,
            branch: s.branch.clone().filter(|b| !b.is_empty()),
            title,
            steps,
            stats,
        })
    }

    /// The timestamp to give a step: its own, else the previous step's, else `fallback`.
    pub fn timestamps<'a>(&'a self, fallback: &'a str) -> Vec<&'a str> {
        let mut last = fallback;
        self.steps
            .iter()
            .map(|s| {
                let own = match s {
                    Step::Prompt { timestamp, .. } | Step::Answer { timestamp, .. } => timestamp,
                    Step::Tool(t) => &t.timestamp,
                };
                if let Some(t) = own.as_deref().filter(|t| !t.is_empty()) {
                    last = t;
                }
                last
            })
            .collect()
    }
}

fn count(steps: &[Step], f: impl Fn(&Step) -> bool) -> usize {
    steps.iter().filter(|s| f(s)).count()
}

/// Redaction and the size cap, applied to everything carried.
struct Carry<'a> {
    options: &'a ContinueOptions,
    counts: RedactionCounts,
    cut: usize,
}

impl Carry<'_> {
    fn text(&mut self, s: &str) -> String {
        self.options
            .redactor
            .redact(s, &mut self.counts)
            .into_owned()
    }

    fn output(&mut self, s: &str) -> String {
        let redacted = self.text(s);
        self.cap(redacted)
    }

    fn cap(&mut self, s: String) -> String {
        let cap = self.options.tool_output_cap;
        if s.len() <= cap {
            return s;
        }
        self.cut += 1;
        let mut end = cap;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!(
            "{}\n[cut by trail: {} of {} bytes kept]",
            &s[..end],
            end,
            s.len()
        )
    }

    /// Tool input as a JSON object, redacted; an input over the cap is kept as cut text.
    fn input(&mut self, raw: Option<&str>) -> Map<String, Value> {
        let Some(raw) = raw.filter(|r| !r.trim().is_empty()) else {
            return Map::new();
        };
        let redacted = self.text(raw);
        if redacted.len() > self.options.tool_output_cap {
            let cut = self.cap(redacted);
            return Map::from_iter([("input".to_string(), Value::String(cut))]);
        }
        match serde_json::from_str::<Value>(&redacted) {
            Ok(Value::Object(o)) => o,
            Ok(other) => Map::from_iter([("input".to_string(), other)]),
            // Not JSON (or no longer JSON once a secret was replaced): keep it as text.
            Err(_) => Map::from_iter([("input".to_string(), Value::String(redacted))]),
        }
    }
}
