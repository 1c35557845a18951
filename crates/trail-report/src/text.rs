//! Small text helpers shared by the reports.

/// Collapses whitespace and cuts `s` to at most `max` characters, ending with `…` when cut.
pub(crate) fn trim(s: &str, max: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= max {
        return one;
    }
    let mut out: String = one.chars().take(max.saturating_sub(1)).collect();
    out = out.trim_end().to_string();
    out.push('…');
    out
}

/// Shows `2026-01-31T00:34:50.049Z` as `2026-01-31 00:34`.
pub(crate) fn minute(ts: &str) -> String {
    if ts.len() >= 16 {
        format!("{} {}", &ts[..10], &ts[11..16])
    } else {
        ts.to_string()
    }
}

/// Returns `"1 turn"` or `"2 turns"`.
pub(crate) fn count(n: i64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
