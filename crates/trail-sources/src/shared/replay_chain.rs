//! Conversations written in order where a record may be written again to go back to it (a
//! rewind replayed into the same file, as Mistral Vibe and Kiro CLI recordings show): the
//! conversation continues after the replayed record, and what followed its first copy becomes
//! an abandoned branch, off the main chain.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde_json::Value;
use trail_model::UpdateMode;

use crate::jsonl::{self, LinesOutcome};
use crate::{FileParse, ParseRequest, SourceError};

/// The conversation's shape while its messages are read: each message's predecessor, and the
/// message the conversation ends at.
#[derive(Default)]
pub(crate) struct ReplayChain {
    before: Vec<Option<usize>>,
    tip: Option<usize>,
}

impl ReplayChain {
    /// Records the next message (index `len()`), continuing the conversation.
    pub fn push(&mut self) {
        self.before.push(self.tip);
        self.tip = Some(self.before.len() - 1);
    }

    /// The conversation continues after message `index` (a replay of its record).
    pub fn rewind_to(&mut self, index: usize) {
        if index < self.before.len() {
            self.tip = Some(index);
        }
    }

    /// The indexes of the messages on the main chain, in order.
    pub fn main_chain(&self) -> Vec<usize> {
        let mut chain = Vec::new();
        let mut at = self.tip;
        while let Some(i) = at {
            chain.push(i);
            at = self.before.get(i).copied().flatten();
        }
        chain.reverse();
        chain
    }
}

/// A parser of a JSONL log whose records may be replayed (a rewind written again), read with
/// [`parse_replaying`].
pub(crate) trait ReplayingLog: Sized {
    /// What a resumed parse needs of the lines before it (the file's stored state).
    type State: DeserializeOwned;

    /// A parser of the whole file.
    fn whole() -> Self;
    /// A parser of the lines after a previous parse, from its state; `None` when the state is
    /// of another layout (the file is read again from its start).
    fn resumed(state: Self::State) -> Option<Self>;
    /// Reads one record.
    fn record(&mut self, v: &Value);
    /// A resumed parse met a record of the lines before it.
    fn replayed(&self) -> bool;
    /// The parse's result.
    fn finish(self, path: &Path, outcome: LinesOutcome, mode: UpdateMode) -> FileParse;
}

/// Implements [`ReplayingLog`] for a format's `Parser` whose resume state is `State` with a
/// `version` field (a state of another version is not resumed from), given
/// `Parser::new(state, resumed)`, `Parser::record`, a `replayed` field and
/// `finish(path, parser, outcome, mode)` in the invoking module.
macro_rules! replaying_log {
    ($parser:ident, $state:ident, $version:expr) => {
        impl $crate::replay_chain::ReplayingLog for $parser {
            type State = $state;

            fn whole() -> Self {
                $parser::new($state::new(), false)
            }

            fn resumed(st: $state) -> Option<Self> {
                (st.version == $version).then(|| $parser::new(st, true))
            }

            fn record(&mut self, v: &serde_json::Value) {
                $parser::record(self, v)
            }

            fn replayed(&self) -> bool {
                self.replayed
            }

            fn finish(
                self,
                path: &std::path::Path,
                outcome: $crate::jsonl::LinesOutcome,
                mode: trail_model::UpdateMode,
            ) -> $crate::FileParse {
                finish(path, self, outcome, mode)
            }
        }
    };
}
pub(crate) use replaying_log;

/// Parses a replaying log: a resumed parse appends the new lines, unless a replay among them
/// moves the main chain back; then the file is read again, whole (a re-read bounded by
/// `max_bytes` would stop before the offset it resumed from, and the next resume would replay
/// again: no progress). `what` names a line in the problem a line that is not an object gives.
pub(crate) fn parse_replaying<P: ReplayingLog>(
    request: ParseRequest<'_>,
    what: &str,
) -> Result<FileParse, SourceError> {
    let path = request.path;
    let read = |p: &mut P, offset: u64, line: u64, budget: Option<u64>| {
        // Once a replay is seen, the rest is only counted: the file is read again.
        jsonl::read_objects_limited(path, offset, line, budget, what, |v| {
            p.record(v);
            !p.replayed()
        })
    };
    let resumed = request.resume.and_then(|r| {
        let st: P::State = serde_json::from_slice(r.state).ok()?;
        Some((P::resumed(st)?, r.offset, r.line))
    });
    if let Some((mut p, offset, line)) = resumed {
        let outcome = read(&mut p, offset, line, request.max_bytes)?;
        if !p.replayed() {
            return Ok(p.finish(path, outcome, UpdateMode::Append));
        }
        let mut p = P::whole();
        let outcome = read(&mut p, 0, 0, None)?;
        return Ok(p.finish(path, outcome, UpdateMode::Replace));
    }
    let mut p = P::whole();
    let outcome = read(&mut p, 0, 0, request.max_bytes)?;
    Ok(p.finish(path, outcome, UpdateMode::Replace))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewind_leaves_what_followed_off_the_chain() {
        let mut c = ReplayChain::default();
        for _ in 0..4 {
            c.push();
        }
        c.rewind_to(1);
        c.push();
        assert_eq!(c.main_chain(), [0, 1, 4]);
    }
}
