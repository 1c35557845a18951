//! Conversations written in order where a record may be written again to go back to it (a
//! rewind replayed into the same file, as Mistral Vibe and Kiro CLI recordings show): the
//! conversation continues after the replayed record, and what followed its first copy becomes
//! an abandoned branch, off the main chain.

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
