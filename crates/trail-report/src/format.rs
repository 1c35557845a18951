//! The number and label formats every rendering of the reports shares (Markdown, HTML,
//! terminal, the CLI's own tables); `trail_report::markdown` re-exports them.

use crate::usage::{GroupBy, UsageReport};

/// Formats USD with cents (`$1,234.56`).
pub fn usd(v: f64) -> String {
    let cents = (v * 100.0).round() as i64;
    format!("${}.{:02}", thousands(cents / 100), (cents % 100).abs())
}

/// Formats Copilot premium requests with at most two decimals, no trailing zeros (`1.5`,
/// `0.33`, `12`): multipliers such as 0.33 make fractions.
pub fn premium(n: f64) -> String {
    let s = format!("{n:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Formats an integer with thousands separators.
pub fn thousands(n: i64) -> String {
    let s = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && matches!((s.len() - i) % 3, 0) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// Returns the header of the first column for a grouping.
pub fn group_label(by: GroupBy) -> &'static str {
    match by {
        GroupBy::Day => "Day",
        GroupBy::Week => "Week of",
        GroupBy::Month => "Month",
        GroupBy::Model => "Model",
        GroupBy::Session => "Session",
        GroupBy::Repo => "Repository",
        GroupBy::Source => "Source",
    }
}

/// The first column's heading of a usage report: the grouping, and for days, weeks and months in
/// another zone than UTC, that zone (`Day (Europe/Paris)`).
pub fn usage_key_label(r: &UsageReport) -> String {
    let label = group_label(r.group_by);
    match r.group_by {
        GroupBy::Day | GroupBy::Week | GroupBy::Month if r.time_zone != "UTC" => {
            format!("{label} ({})", r.time_zone)
        }
        _ => label.to_string(),
    }
}

/// `2h05m`, `45m`.
pub fn hours_minutes(minutes: i64) -> String {
    if minutes >= 60 {
        format!("{}h{:02}m", minutes / 60, minutes % 60)
    } else {
        format!("{minutes}m")
    }
}
