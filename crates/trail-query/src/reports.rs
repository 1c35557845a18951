//! Report data: usage, standup, tips and improve as plain structs, so a frontend (or a model)
//! formats them and never computes them.

use serde::{Deserialize, Serialize};
use trail_report::{
    BlockOptions, BlocksReport, DayZone, Filter, GroupBy, ImproveReport, PriceTable, Standup,
    Status, StatusRequest, Tips, UsageOptions, UsageReport,
};

use crate::time::Clock;
use crate::{Need, Query, QueryError, Result, SessionFilter};

/// The reports there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportKind {
    Usage,
    Standup,
    Tips,
    Improve,
}

impl ReportKind {
    /// Reads a report's name.
    pub fn parse(s: &str) -> Result<ReportKind> {
        match s {
            "usage" => Ok(ReportKind::Usage),
            "standup" => Ok(ReportKind::Standup),
            "tips" => Ok(ReportKind::Tips),
            "improve" => Ok(ReportKind::Improve),
            _ => Err(QueryError::Invalid(format!(
                "unknown report {s:?}; one of: usage, standup, tips, improve"
            ))),
        }
    }
}

/// What a report covers: the sessions' filter, its dates days of `tz`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ReportFilter {
    #[serde(flatten)]
    pub filter: SessionFilter,
    /// `UTC` (default), `local`, `+05:30`, `Europe/Paris`.
    pub tz: Option<String>,
}

impl ReportFilter {
    /// The zone the report's days are in.
    pub fn zone(&self) -> Result<DayZone> {
        match self.tz.as_deref() {
            None | Some("") => Ok(DayZone::utc()),
            Some(tz) => DayZone::parse(tz).map_err(QueryError::Invalid),
        }
    }

    /// Resolves the filter against `clock` (whose zone is replaced by the filter's).
    pub fn resolve(&self, clock: &Clock) -> Result<(Filter, DayZone)> {
        let zone = self.zone()?;
        let clock = Clock {
            now: clock.now,
            zone: zone.clone(),
        };
        Ok((self.filter.resolve(&clock)?, zone))
    }
}

impl Query {
    /// Tokens and cost grouped by `by`.
    pub fn usage(
        &self,
        f: &ReportFilter,
        by: GroupBy,
        prices: &PriceTable,
        clock: &Clock,
    ) -> Result<UsageReport> {
        self.usage_with(f, by, prices, clock, &UsageOptions::default())
    }

    /// Tokens and cost grouped by `by`, with per-model rows (`breakdown`); grouped by session,
    /// subagents' spend counts in their top-level session.
    pub fn usage_with(
        &self,
        f: &ReportFilter,
        by: GroupBy,
        prices: &PriceTable,
        clock: &Clock,
        options: &UsageOptions,
    ) -> Result<UsageReport> {
        let (filter, zone) = f.resolve(clock)?;
        // The rollup's days are UTC days: another zone, or a range cut inside a day, reads
        // the requests themselves.
        let rows = !zone.is_utc() || filter.since.is_some() || filter.until.is_some();
        Ok(trail_report::usage_with(
            &*self.reader(|| Need::Usage {
                filter: filter.clone(),
                rows,
            })?,
            &filter,
            by,
            prices,
            &zone,
            options,
        )?)
    }

    /// Usage in 5-hour blocks (ccusage's rule), or only the block active at `clock.now`.
    pub fn blocks(
        &self,
        f: &ReportFilter,
        prices: &PriceTable,
        clock: &Clock,
        options: &BlockOptions,
    ) -> Result<BlocksReport> {
        let (filter, zone) = f.resolve(clock)?;
        Ok(trail_report::blocks(
            &*self.reader(|| Need::Usage {
                filter: filter.clone(),
                rows: true,
            })?,
            &filter,
            prices,
            &zone,
            clock.now,
            options,
        )?)
    }

    /// An agent's status line: the session's cost, today's (days of `clock.zone`), the active
    /// block and the context used.
    pub fn status(
        &self,
        request: &StatusRequest,
        prices: &PriceTable,
        clock: &Clock,
    ) -> Result<Status> {
        Ok(trail_report::status(
            &*self.reader(|| Need::Usage {
                filter: Filter::default(),
                rows: true,
            })?,
            request,
            prices,
            &clock.zone,
            clock.now,
        )?)
    }

    /// What happened in the range (default: the last 24 hours), by repository and branch.
    pub fn standup(&self, f: &ReportFilter, clock: &Clock) -> Result<Standup> {
        let (filter, zone) = f.resolve(clock)?;
        let mut report = trail_report::standup(
            &*self.reader(|| Need::Activity(filter.clone()))?,
            &filter,
            clock.now,
        )?;
        report.time_zone = zone.name().to_string();
        Ok(report)
    }

    /// Usage patterns with their numbers.
    pub fn tips(&self, f: &ReportFilter, prices: &PriceTable, clock: &Clock) -> Result<Tips> {
        let (filter, _) = f.resolve(clock)?;
        Ok(trail_report::tips(
            &*self.reader(|| Need::Activity(filter.clone()))?,
            &filter,
            prices,
        )?)
    }

    /// Where the agents struggled, with evidence.
    pub fn improve(&self, f: &ReportFilter, clock: &Clock) -> Result<ImproveReport> {
        let (filter, _) = f.resolve(clock)?;
        Ok(trail_report::improve(
            &*self.reader(|| Need::Activity(filter.clone()))?,
            &filter,
        )?)
    }
}

/// Reads a usage grouping's name.
pub fn parse_group(s: &str) -> Result<GroupBy> {
    Ok(match s {
        "day" => GroupBy::Day,
        "week" => GroupBy::Week,
        "month" => GroupBy::Month,
        "model" => GroupBy::Model,
        "session" => GroupBy::Session,
        "repo" => GroupBy::Repo,
        "source" => GroupBy::Source,
        _ => {
            return Err(QueryError::Invalid(format!(
                "unknown grouping {s:?}; one of: day, week, month, model, session, repo, source"
            )))
        }
    })
}
