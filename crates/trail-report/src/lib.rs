//! trail's reports: usage and cost, standup, tips and improve, computed from the store.
//!
//! Every report takes a [`Filter`] (time range, source, repository) and, where "now" matters,
//! an explicit `now`, and returns a plain serializable struct. Rendering to Markdown and the
//! LLM prompts live in [`markdown`]; the CLI draws text tables and colour itself. No report
//! logs message content.

pub mod blocks;
mod format;
pub mod improve;
pub mod markdown;
pub mod prices;
pub mod render;
pub mod standup;
pub mod statusline;
pub mod tips;
pub mod usage;
pub mod zone;

mod query;
mod text;

pub use blocks::{blocks, BlockOptions, BlocksReport};
pub use improve::{improve, Finding, FindingKind, ImproveReport};
pub use prices::PriceOverride;
pub use prices::{Price, PriceTable};
pub use standup::{standup, Standup};
pub use statusline::{status, Status, StatusRequest};
pub use tips::{tips, Tips};
pub use usage::{usage, usage_in, usage_with, GroupBy, UsageOptions, UsageReport, UsageRow};
pub use zone::DayZone;

/// Errors from the reports.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A query failed.
    #[error("report query failed: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] trail_store::StoreError),
    /// The shipped price table does not parse (a build defect).
    #[error("the price table is invalid: {0}")]
    Prices(String),
}

pub type Result<T, E = ReportError> = std::result::Result<T, E>;

/// What a report covers: the store's one filter (times resolved, source typed).
pub use trail_store::filter::{Filter, Timestamp};
