//! The query behind `trail export`: a session's messages streamed in order with each tool
//! call's result joined in. Nothing here loads a whole session in memory. (Subagents come from
//! `Store::subagent_sessions`, shared with `show`.)

use crate::{MessageRow, Store, StoreError};

/// A tool call's recorded result, joined to the call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResultRow {
    pub seq: i64,
    pub tool_output: Option<String>,
    pub is_error: bool,
}

/// One message as an exporter sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportMessage {
    pub message: MessageRow,
    /// For a tool call: its result, when one was recorded.
    pub result: Option<ToolResultRow>,
    /// For a tool result: whether it is joined to a call (exporters show it with the call).
    pub joined: bool,
}

impl Store {
    /// Calls `f` with every message of session `id` in `seq` order, tool results joined to
    /// their calls. Rows are read one at a time, so memory stays flat whatever the session's
    /// size. Stops at the first error `f` returns.
    pub fn for_each_export_message<E>(
        &self,
        id: &str,
        mut f: impl FnMut(ExportMessage) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E>
    where
        E: From<StoreError>,
    {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT m.seq, m.role, m.kind, m.text, m.tool_name, m.tool_call_id, m.tool_input,
                        m.tool_output, m.is_error, m.model, m.timestamp, m.is_sidechain,
                        m.on_main_chain, m.turn_index,
                        r.seq, r.tool_output, r.is_error,
                        CASE WHEN m.kind = 'tool_result' AND m.tool_call_id IS NOT NULL THEN
                          EXISTS (SELECT 1 FROM tool_calls t2 WHERE t2.session_id = m.session_id
                                  AND t2.tool_call_id = m.tool_call_id AND t2.result_seq = m.seq)
                        ELSE 0 END
                 FROM messages m
                 LEFT JOIN tool_calls t ON m.kind = 'tool_call' AND t.session_id = m.session_id
                      AND t.tool_call_id = m.tool_call_id AND t.call_seq = m.seq
                 LEFT JOIN messages r ON r.session_id = m.session_id AND r.seq = t.result_seq
                 WHERE m.session_id = ?1 ORDER BY m.seq",
            )
            .map_err(|e| E::from(StoreError::from(e)))?;
        let mut rows = stmt.query([id]).map_err(|e| E::from(StoreError::from(e)))?;
        while let Some(r) = rows.next().map_err(|e| E::from(StoreError::from(e)))? {
            let msg = export_row(r).map_err(|e| E::from(StoreError::from(e)))?;
            f(msg)?;
        }
        Ok(())
    }
}

fn export_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ExportMessage> {
    let message = crate::read::message_from_row(r)?;
    let result = match r.get::<_, Option<i64>>(14)? {
        Some(seq) => Some(ToolResultRow {
            seq,
            tool_output: r.get(15)?,
            is_error: r.get::<_, Option<i64>>(16)?.unwrap_or(0) != 0,
        }),
        None => None,
    };
    Ok(ExportMessage {
        message,
        result,
        joined: r.get::<_, i64>(17)? != 0,
    })
}
