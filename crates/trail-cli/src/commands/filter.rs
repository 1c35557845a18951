//! The flags that choose sessions, shared by every command that reads them (search, list,
//! export, usage, standup, tips, improve): one clap struct flattened into each, read into the
//! query layer's [`SessionFilter`]. A command words a flag its own way with `mut_arg` (search's
//! `--repo` matches the repository alone; export's filters need `--all`).

use trail_query::SessionFilter;

/// Which sessions and when.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SessionArgs {
    /// Only sessions from this source (an id or an alias)
    #[arg(long, value_parser = crate::agents::source_parser())]
    pub source: Option<trail_model::SourceKind>,
    /// Only sessions whose repository (owner/name) or folder contains this text
    #[arg(long)]
    pub repo: Option<String>,
    /// Only activity since this time (7d, 24h, 2026-11-01)
    #[arg(long)]
    pub since: Option<String>,
    /// Only activity before this time
    #[arg(long)]
    pub until: Option<String>,
}

impl SessionArgs {
    /// Whether any flag was given.
    pub fn is_set(&self) -> bool {
        self.source.is_some() || self.repo.is_some() || self.since.is_some() || self.until.is_some()
    }

    /// The filter as the query layer reads it (times and the source resolved there).
    pub fn session_filter(&self) -> SessionFilter {
        SessionFilter {
            source: self.source.map(|s| s.as_str().to_string()),
            repo: self.repo.clone(),
            since: self.since.clone(),
            until: self.until.clone(),
            ..SessionFilter::default()
        }
    }
}
