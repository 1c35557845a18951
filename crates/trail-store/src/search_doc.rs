//! What the search database holds for one session, as the writer hands it over: turn rows
//! for `turn_search` and Chronicle's `search_index` rows (turns and checkpoint sections). Plain
//! data and the functions that make Chronicle's rows; [`crate::search_db`] writes them,
//! [`crate::chronicle`] keeps Chronicle's tables.

use std::borrow::Cow;

/// One turn's row in `turn_search`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct TurnDoc {
    /// The turn (`messages.turn_index`), or -1 for the messages before the first prompt.
    pub turn: i64,
    pub first_at: Option<String>,
    pub last_at: Option<String>,
    /// Prompt, answer, tool input, tool output: each message's indexed text, one per line.
    pub columns: [String; 4],
    /// The filters of its messages' fields (`turn_sigs`, [`crate::search_sig`]).
    pub sigs: Vec<u8>,
}

impl TurnDoc {
    /// Starts a message's entry in the signatures; its fields follow ([`TurnDoc::add`]).
    pub(crate) fn begin_message(&mut self) -> usize {
        crate::search_sig::push_message(&mut self.sigs)
    }

    /// Adds a field of the message begun at `message` to the column `column` as the index
    /// holds it (without escape sequences, one per line, an empty one left out), and its filter
    /// to the signatures.
    pub(crate) fn add(&mut self, message: usize, column: usize, text: &str) {
        if let Some(text) = push_line(&mut self.columns[column], text) {
            crate::search_sig::push_field(&mut self.sigs, message, &text);
        }
    }

    /// A digest of everything the search database keeps of the turn (its columns, times and
    /// signatures; `turn_docs.digest`): a turn written again with the same digest keeps its
    /// row.
    pub(crate) fn digest(&self) -> i64 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let times = [self.first_at.as_deref(), self.last_at.as_deref()];
        for part in self.columns.iter().map(|c| Some(c.as_bytes())).chain(
            times
                .into_iter()
                .map(|t| t.map(str::as_bytes))
                .chain([Some(self.sigs.as_slice())]),
        ) {
            // Each part with its length (a missing time as its own mark): no two turns whose
            // parts differ give the same bytes.
            match part {
                Some(bytes) => {
                    h.update(&(bytes.len() as u64).to_le_bytes());
                    h.update(bytes);
                }
                None => h.update(&u64::MAX.to_le_bytes()),
            }
        }
        h.digest() as i64
    }
}

/// Adds a message's text to a turn's column as the index holds it: without escape sequences,
/// one message per line, empty ones left out. Returns the text added.
pub(crate) fn push_line<'t>(column: &mut String, text: &'t str) -> Option<Cow<'t, str>> {
    let text = crate::text::strip_ansi(text);
    if text.is_empty() {
        return None;
    }
    if !column.is_empty() {
        column.push('\n');
    }
    column.push_str(&text);
    Some(text)
}

/// One row of Chronicle's `search_index`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChronicleRow {
    pub rowid: i64,
    pub content: String,
    pub source_type: String,
    pub source_id: String,
}

/// What changes in the search database for one session.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionSearch {
    pub session_id: String,
    /// Every row of the session is given: rows stored before and not given go.
    pub replace: bool,
    /// Turns written whole (an existing row of the same turn is replaced).
    pub turns: Vec<TurnDoc>,
    /// Turns that no longer have any indexed message.
    pub removed_turns: Vec<i64>,
    /// Chronicle rows written whole (by rowid).
    pub rows: Vec<ChronicleRow>,
    pub removed_rows: Vec<i64>,
}

/// Chronicle's row for a turn: the prompt and the answer joined by a newline, without escape
/// sequences (issue 15).
pub(crate) fn chronicle_turn_row(
    session: &str,
    turn_id: i64,
    turn_index: i64,
    user: Option<&str>,
    assistant: Option<&str>,
) -> Option<ChronicleRow> {
    let content = match (user, assistant) {
        (Some(u), Some(a)) => format!("{u}\n{a}"),
        (Some(u), None) => u.to_string(),
        (None, Some(a)) => a.to_string(),
        (None, None) => return None,
    };
    Some(ChronicleRow {
        rowid: turn_id,
        content: crate::text::strip_ansi(&content).into_owned(),
        source_type: "turn".to_string(),
        source_id: format!("{session}:turn:{turn_index}"),
    })
}

/// FTS rowids of checkpoint sections start here (turn rows use their `turns.id`).
pub(crate) const CHECKPOINT_ROWID_BASE: i64 = 1 << 50;

/// The `search_index` rowid of a checkpoint's section.
pub(crate) fn checkpoint_rowid(checkpoint_id: i64, section: usize) -> i64 {
    CHECKPOINT_ROWID_BASE + checkpoint_id * 8 + section as i64
}
/// Chronicle's checkpoint sections, in `source_type` order.
pub(crate) const CHECKPOINT_SECTIONS: [&str; 6] = [
    "checkpoint_overview",
    "checkpoint_history",
    "checkpoint_work_done",
    "checkpoint_technical",
    "checkpoint_files",
    "checkpoint_next_steps",
];

/// Chronicle's rows for a checkpoint's sections (rowids from `CHECKPOINT_ROWID_BASE`).
pub(crate) fn chronicle_checkpoint_rows(
    session: &str,
    checkpoint_id: i64,
    number: i64,
    sections: [Option<&str>; 6],
) -> Vec<ChronicleRow> {
    let mut out = Vec::new();
    for (i, (text, kind)) in sections.iter().zip(CHECKPOINT_SECTIONS).enumerate() {
        if let Some(text) = text.filter(|t| !t.trim().is_empty()) {
            let short = kind.trim_start_matches("checkpoint_");
            out.push(ChronicleRow {
                rowid: checkpoint_rowid(checkpoint_id, i),
                content: crate::text::strip_ansi(text).into_owned(),
                source_type: kind.to_string(),
                source_id: format!("{session}:ckpt:{number}:{short}"),
            });
        }
    }
    out
}
