//! The CLI's views of the source registry: the `--source` / `--root` values and the hints that
//! name the agents trail reads. Every list comes from `trail_sources::sources()`.

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use trail_model::SourceKind;

/// Every source as a clap value: its id, its aliases, and its display name as help.
pub fn possible_values() -> Vec<PossibleValue> {
    trail_sources::sources()
        .iter()
        .map(|s| {
            PossibleValue::new(s.id())
                .aliases(s.aliases.iter().copied())
                .help(s.name)
        })
        .collect()
}

/// The `--source` value parser: an id or an alias, listed in `--help`.
pub fn source_parser() -> impl TypedValueParser<Value = SourceKind> {
    PossibleValuesParser::new(possible_values()).map(|name| {
        trail_sources::find(&name).expect("clap accepted only registry ids and aliases")
    })
}

/// Parses a source id or alias, naming every id when it is none.
pub fn parse_source(s: &str) -> Result<SourceKind, String> {
    trail_sources::find(s).ok_or_else(|| {
        let all: Vec<&str> = trail_sources::source_ids().collect();
        format!("unknown source {s:?}; one of: {}", all.join(", "))
    })
}

/// Parses `--root SOURCE=PATH`.
pub fn parse_root(s: &str) -> Result<(SourceKind, PathBuf), String> {
    let (k, p) = s
        .split_once('=')
        .ok_or_else(|| format!("expected SOURCE=PATH, got {s:?}"))?;
    Ok((parse_source(k)?, PathBuf::from(p)))
}

/// "trail reads the files of Claude Code, ... and Kilo Code": the hint for a file trail
/// cannot read.
pub fn reads_hint() -> String {
    let names: Vec<&str> = trail_sources::sources().iter().map(|s| s.name).collect();
    format!("trail reads the files of {}", join_and(&names))
}

/// `a, b and c`.
fn join_and(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_source_is_a_value_and_in_the_hint() {
        let values = possible_values();
        let hint = reads_hint();
        for kind in SourceKind::ALL {
            let info = trail_sources::info(kind);
            assert!(
                values.iter().any(|v| v.matches(kind.as_str(), false)),
                "{kind}"
            );
            for alias in info.aliases {
                assert!(values.iter().any(|v| v.matches(alias, false)), "{alias}");
                assert_eq!(parse_source(alias), Ok(kind));
            }
            assert!(hint.contains(info.name), "{}", info.name);
            assert_eq!(parse_source(kind.as_str()), Ok(kind));
        }
        assert!(parse_source("nope").unwrap_err().contains("claude-code"));
        assert_eq!(join_and(&["a", "b", "c"]), "a, b and c");
    }
}
