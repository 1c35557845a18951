//! One walk through a session's transcript, for every way of showing it.
//!
//! As with ripgrep's searcher and its `Sink`: the [`Walker`] knows what a transcript holds
//! (which messages are on the main chain, where a turn starts, which result belongs to which
//! tool call, where each subagent goes) and a [`SessionSink`] knows how to show each piece. The
//! Markdown and HTML exports, the web viewer's session page, `trail show` and the TUI's
//! transcript are sinks; none of them reads a message's kind or decides the order.
//!
//! The walker takes one message at a time, so an export streamed from the store keeps its
//! memory flat; [`walk_messages`] feeds it a loaded session ([`MessageRow`]s in `seq` order).

use std::collections::{HashMap, HashSet};

use trail_model::MessageKind;
use trail_store::{MessageRow, SessionRow};

pub mod terminal;

/// How a `meta` message that stands for the user's interrupting the agent starts.
const INTERRUPTED: &str = "[Request interrupted";

/// A tool call's recorded result, joined to the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome<'a> {
    /// The result message's `seq`.
    pub seq: i64,
    pub output: Option<&'a str>,
    pub is_error: bool,
}

/// A tool call and, when one was recorded, its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolCall<'a> {
    /// The tool's name (`tool` when the agent gave none).
    pub name: &'a str,
    /// Its input as recorded (JSON, usually), empty when none.
    pub input: &'a str,
    pub call_id: Option<&'a str>,
    pub result: Option<Outcome<'a>>,
}

/// One piece of a transcript, as the walker hands it to a sink. Texts are the stored ones,
/// unredacted and untrimmed: a sink redacts, trims and escapes as its format needs, and leaves
/// out what it does not show (blank answers, thinking, meta).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part<'a> {
    /// The user's prompt: starts a turn.
    Prompt(&'a str),
    /// Answer text from the assistant.
    Answer(&'a str),
    /// Model reasoning.
    Thinking(&'a str),
    /// A tool call with its result joined.
    ToolCall(ToolCall<'a>),
    /// A tool's result that no call shown holds.
    ToolResult {
        name: &'a str,
        output: &'a str,
        is_error: bool,
    },
    /// An error reported by the agent or the API.
    Error(&'a str),
    /// A compaction or conversation summary.
    Summary(&'a str),
    /// A compaction boundary.
    Compaction,
    /// The user stopped the agent (`[Request interrupted by user]`).
    Interrupt(&'a str),
    /// Other content the agent injected (commands, reminders, hook output).
    Meta(&'a str),
    /// A record trail does not read; its text names the record's type when the parser knows it.
    Unknown(&'a str),
}

impl<'a> Part<'a> {
    /// What message `m` is in a transcript: `result` is a tool call's joined result, `joined`
    /// says whether a tool result is shown with its call (and so is no part of its own). None
    /// for a joined result and for a kind this version does not know.
    pub fn of(m: &'a MessageRow, result: Option<Outcome<'a>>, joined: bool) -> Option<Part<'a>> {
        let text = m.text.as_deref().unwrap_or("");
        let name = m.tool_name.as_deref().unwrap_or("tool");
        Some(match m.kind? {
            MessageKind::Prompt => Part::Prompt(text),
            MessageKind::Text => Part::Answer(text),
            MessageKind::Thinking => Part::Thinking(text),
            MessageKind::ToolCall => Part::ToolCall(ToolCall {
                name,
                input: m.tool_input.as_deref().unwrap_or(""),
                call_id: m.tool_call_id.as_deref(),
                result,
            }),
            MessageKind::ToolResult if joined => return None,
            MessageKind::ToolResult => Part::ToolResult {
                name,
                output: m.tool_output.as_deref().unwrap_or(""),
                is_error: m.is_error,
            },
            MessageKind::Error => Part::Error(text),
            MessageKind::Summary => Part::Summary(text),
            MessageKind::Compaction => Part::Compaction,
            MessageKind::Meta if text.starts_with(INTERRUPTED) => Part::Interrupt(text),
            MessageKind::Meta => Part::Meta(text),
            MessageKind::Unknown => Part::Unknown(text),
        })
    }
}

/// Shows what the [`Walker`] finds, in the order it finds it:
/// `turn`, `part` and `subagent` calls for the transcript, then `end_of_turns`, then
/// `other_subagents` (when some are left), then `off_branch` (when messages were left out).
pub trait SessionSink {
    type Error;

    /// A new turn begins (`turn` numbered from 0, as stored), or with None, messages outside
    /// any turn (before the first prompt); `at` is the time of its first message shown.
    fn turn(&mut self, turn: Option<i64>, at: Option<&str>) -> Result<(), Self::Error>;

    /// One piece of the current turn, from message `seq`.
    fn part(&mut self, seq: i64, part: &Part<'_>) -> Result<(), Self::Error>;

    /// A subagent (or fork) of the session, right after the call that started it or, for a
    /// fork, where its start time falls; `index` is its place in the subagents given.
    fn subagent(&mut self, index: usize, row: &SessionRow) -> Result<(), Self::Error> {
        let _ = (index, row);
        Ok(())
    }

    /// The transcript is done (what the session changed goes here, in exports).
    fn end_of_turns(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }

    /// Subagents no message placed, oldest first, as (index, row).
    fn other_subagents(&mut self, rows: &[(usize, &SessionRow)]) -> Result<(), Self::Error> {
        rows.iter().try_for_each(|&(i, row)| self.subagent(i, row))
    }

    /// How many messages off the main chain (abandoned branches) were left out.
    fn off_branch(&mut self, count: u64) -> Result<(), Self::Error>;
}

/// Where a session's subagents go in its transcript.
pub struct Subagents<'s> {
    all: &'s [SessionRow],
    /// By the id of the tool call that started them.
    by_call: HashMap<&'s str, Vec<usize>>,
    /// Started by no call the transcript holds, oldest first.
    loose: Vec<usize>,
    /// Whether loose ones (forks) go where their start time falls, rather than at the end.
    forks_by_time: bool,
}

impl<'s> Subagents<'s> {
    /// No subagent in the transcript.
    pub fn none() -> Subagents<'static> {
        Subagents {
            all: &[],
            by_call: HashMap::new(),
            loose: Vec::new(),
            forks_by_time: false,
        }
    }

    /// Each subagent right after the tool call that started it; the others after the
    /// transcript (the exports).
    pub fn under_calls(all: &'s [SessionRow]) -> Subagents<'s> {
        let mut out = Subagents {
            all,
            ..Subagents::none()
        };
        for (i, a) in all.iter().enumerate() {
            match a.parent_tool_call_id.as_deref() {
                Some(call) => out.by_call.entry(call).or_default().push(i),
                None => out.loose.push(i),
            }
        }
        out
    }

    /// Each subagent right after the tool call of `messages` that started it; the others
    /// (forks) before the first message written after they started (the TUI).
    pub fn forks_by_time(all: &'s [SessionRow], messages: &[MessageRow]) -> Subagents<'s> {
        let calls: HashSet<&str> = messages
            .iter()
            .filter(|m| m.kind == Some(MessageKind::ToolCall))
            .filter_map(|m| m.tool_call_id.as_deref())
            .collect();
        let mut out = Subagents {
            all,
            forks_by_time: true,
            ..Subagents::none()
        };
        for (i, a) in all.iter().enumerate() {
            match a.parent_tool_call_id.as_deref() {
                Some(call) if calls.contains(call) => out.by_call.entry(call).or_default().push(i),
                _ => out.loose.push(i),
            }
        }
        out
    }

    /// The subagents tool call `call_id` started; each is handed out once.
    fn started_by(&mut self, call_id: Option<&str>) -> Vec<usize> {
        call_id
            .and_then(|id| self.by_call.remove(id))
            .unwrap_or_default()
    }

    /// The forks started before `at`, taken out.
    fn forks_before(&mut self, at: &str) -> Vec<usize> {
        if !self.forks_by_time {
            return Vec::new();
        }
        let all = self.all;
        let (before, after) = self
            .loose
            .iter()
            .partition(|&&s| all[s].created_at.as_deref().is_some_and(|c| c < at));
        self.loose = after;
        before
    }

    /// The subagents nothing placed, oldest first.
    fn rest(self) -> Vec<(usize, &'s SessionRow)> {
        let all = self.all;
        let mut rest: Vec<(usize, &SessionRow)> = self
            .by_call
            .into_values()
            .flatten()
            .chain(self.loose)
            .map(|i| (i, &all[i]))
            .collect();
        rest.sort_by(|(_, a), (_, b)| (&a.created_at, &a.id).cmp(&(&b.created_at, &b.id)));
        rest
    }
}

/// Walks one session's messages, in `seq` order, into a [`SessionSink`]: the one place that
/// decides what a transcript shows and in which order.
pub struct Walker<'s> {
    subagents: Subagents<'s>,
    /// Show messages outside any turn (`trail show --full`).
    untimed: bool,
    /// The turn of the last message shown; None before the first.
    current: Option<i64>,
    off_branch: u64,
}

impl<'s> Walker<'s> {
    /// A walker placing `subagents`; `untimed` shows messages outside any turn too.
    pub fn new(subagents: Subagents<'s>, untimed: bool) -> Walker<'s> {
        Walker {
            subagents,
            untimed,
            current: None,
            off_branch: 0,
        }
    }

    /// Takes the next message; `result` is a tool call's joined result, `joined` whether a
    /// tool result is shown with its call.
    pub fn message<S: SessionSink + ?Sized>(
        &mut self,
        sink: &mut S,
        m: &MessageRow,
        result: Option<Outcome<'_>>,
        joined: bool,
    ) -> Result<(), S::Error> {
        if !m.on_main_chain {
            self.off_branch += 1;
            return Ok(());
        }
        if m.turn_index.is_none() && !self.untimed {
            return Ok(());
        }
        if let Some(at) = m.timestamp.as_deref() {
            for i in self.subagents.forks_before(at) {
                sink.subagent(i, &self.subagents.all[i])?;
            }
        }
        if m.turn_index != self.current {
            self.current = m.turn_index;
            sink.turn(m.turn_index, m.timestamp.as_deref())?;
        }
        let Some(part) = Part::of(m, result, joined) else {
            return Ok(());
        };
        sink.part(m.seq, &part)?;
        if let Part::ToolCall(call) = part {
            for i in self.subagents.started_by(call.call_id) {
                sink.subagent(i, &self.subagents.all[i])?;
            }
        }
        Ok(())
    }

    /// Ends the walk: the transcript's end, the subagents left, the messages left out.
    pub fn finish<S: SessionSink + ?Sized>(self, sink: &mut S) -> Result<(), S::Error> {
        sink.end_of_turns()?;
        let rest = self.subagents.rest();
        if !rest.is_empty() {
            sink.other_subagents(&rest)?;
        }
        if self.off_branch > 0 {
            sink.off_branch(self.off_branch)?;
        }
        Ok(())
    }
}

/// Walks a loaded session's `messages` (in `seq` order) into `sink`, each tool call with the
/// last result recorded for its id.
pub fn walk_messages<S: SessionSink + ?Sized>(
    messages: &[MessageRow],
    mut walker: Walker<'_>,
    sink: &mut S,
) -> Result<(), S::Error> {
    let mut results: HashMap<&str, &MessageRow> = HashMap::new();
    let mut calls: HashSet<&str> = HashSet::new();
    for m in messages {
        match (m.kind, m.tool_call_id.as_deref()) {
            (Some(MessageKind::ToolResult), Some(id)) => {
                results.insert(id, m);
            }
            (Some(MessageKind::ToolCall), Some(id)) => {
                calls.insert(id);
            }
            _ => {}
        }
    }
    for m in messages {
        let id = m.tool_call_id.as_deref();
        let (result, joined) = match m.kind {
            Some(MessageKind::ToolCall) => (id.and_then(|id| results.get(id)), false),
            Some(MessageKind::ToolResult) => (None, id.is_some_and(|id| calls.contains(id))),
            _ => (None, false),
        };
        let result = result.map(|r| Outcome {
            seq: r.seq,
            output: r.tool_output.as_deref(),
            is_error: r.is_error,
        });
        walker.message(sink, m, result, joined)?;
    }
    walker.finish(sink)
}

#[cfg(test)]
mod tests;
