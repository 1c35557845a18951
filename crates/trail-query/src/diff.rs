//! What a session changed (`trail diff`): the store's edit tool calls and file snapshots, turned
//! into unified diffs by `trail-diff` (`Store::session_diff`).

use trail_diff::SessionDiff;

use crate::{Need, Query, Result};

impl Query {
    /// Returns what session `id_or_prefix` changed, per file, from every record of it (edit
    /// tool inputs, `apply_patch` bodies, file snapshots); with `turn`, only the changes made
    /// in that turn. A session that changed nothing gives an empty diff.
    pub fn session_diff(&self, id_or_prefix: &str, turn: Option<u32>) -> Result<SessionDiff> {
        let id = self.resolve_id(id_or_prefix)?;
        self.session_diff_of(&id, turn)
    }

    /// [`Query::session_diff`] for an exact session id.
    pub fn session_diff_of(&self, id: &str, turn: Option<u32>) -> Result<SessionDiff> {
        // A team store copies the session's rows (its edit calls and file snapshots).
        Ok(self
            .reader(|| Need::SessionRows(vec![id.to_string()]))?
            .session_diff(id, turn)?)
    }
}
