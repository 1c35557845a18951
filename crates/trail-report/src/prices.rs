//! The price table shipped with trail (`prices.json`, embedded at build time) and model-name
//! resolution.
//!
//! A model resolves by its exact id or an alias, then with provider prefixes and suffixes
//! dropped (`anthropic/`, `us.anthropic.`, `-v1:0`, `@20250929`), then without a trailing
//! `-YYYYMMDD` date. Nothing fuzzier: a model the table does not know is reported as unpriced,
//! never priced as another one or as $0.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::{ReportError, Result};

const PRICES_JSON: &str = include_str!("../prices.json");

/// Rates in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Rates {
    pub input: f64,
    pub output: f64,
    pub cache_write_5m: f64,
    pub cache_write_1h: f64,
    pub cache_read: f64,
}

/// One model's prices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// The canonical id (`claude-sonnet-4-5`).
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    #[serde(flatten)]
    pub rates: Rates,
    /// Rates for a request's tokens of a kind past 200,000, where the model has them.
    #[serde(default)]
    pub above_200k: Option<Rates>,
    /// When the figures were read from `source`.
    pub as_of: String,
    /// The public page the figures come from.
    pub source: String,
}

/// A per-use price (USD per 1,000 uses), with where it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerUse {
    pub usd_per_1000: f64,
    pub as_of: String,
    pub source: String,
}

#[derive(Deserialize)]
struct File {
    models: Vec<Price>,
    web_search: Option<PerUse>,
}

/// Token sums of one model to price.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tokens {
    pub input: i64,
    pub output: i64,
    /// Cache writes, 5 minute and 1 hour together.
    pub cache_creation: i64,
    /// The 1 hour part of `cache_creation`.
    pub cache_creation_1h: i64,
    pub cache_read: i64,
    /// Per request, the tokens of each kind past 200,000, summed.
    pub input_over_200k: i64,
    pub output_over_200k: i64,
    pub cache_creation_over_200k: i64,
    pub cache_read_over_200k: i64,
}

impl Tokens {
    /// Adds another request's (or group's) tokens.
    pub fn add(&mut self, o: &Tokens) {
        self.input += o.input;
        self.output += o.output;
        self.cache_creation += o.cache_creation;
        self.cache_creation_1h += o.cache_creation_1h;
        self.cache_read += o.cache_read;
        self.input_over_200k += o.input_over_200k;
        self.output_over_200k += o.output_over_200k;
        self.cache_creation_over_200k += o.cache_creation_over_200k;
        self.cache_read_over_200k += o.cache_read_over_200k;
    }
}

/// The price table.
#[derive(Debug, Clone)]
pub struct PriceTable {
    prices: Vec<Price>,
    by_name: HashMap<String, usize>,
    web_search: Option<PerUse>,
}

impl PriceTable {
    /// Returns the table shipped with trail.
    pub fn shipped() -> &'static PriceTable {
        static TABLE: OnceLock<PriceTable> = OnceLock::new();
        TABLE.get_or_init(|| {
            // The file is part of the build and covered by tests: failing here is a defect.
            PriceTable::from_json(PRICES_JSON).expect("prices.json is valid")
        })
    }

    /// Parses a table in the `prices.json` format.
    pub fn from_json(json: &str) -> Result<PriceTable> {
        let file: File =
            serde_json::from_str(json).map_err(|e| ReportError::Prices(e.to_string()))?;
        let mut by_name = HashMap::new();
        for (i, p) in file.models.iter().enumerate() {
            for name in std::iter::once(&p.id).chain(&p.aliases) {
                if by_name.insert(name.to_ascii_lowercase(), i).is_some() {
                    return Err(ReportError::Prices(format!("{name} is listed twice")));
                }
            }
        }
        Ok(PriceTable {
            prices: file.models,
            by_name,
            web_search: file.web_search,
        })
    }

    /// Returns the price of Claude's server-side web searches, if the table has one.
    pub fn web_search(&self) -> Option<&PerUse> {
        self.web_search.as_ref()
    }

    /// Returns the cost in USD of `searches` web searches (0 without a price).
    pub fn web_search_cost(&self, searches: i64) -> f64 {
        self.web_search
            .as_ref()
            .map_or(0.0, |p| searches as f64 * p.usd_per_1000 / 1000.0)
    }

    /// Returns every price.
    pub fn all(&self) -> &[Price] {
        &self.prices
    }

    /// Returns the price of a model as an agent recorded its name.
    pub fn resolve(&self, model: &str) -> Option<&Price> {
        let lower = model.trim().to_ascii_lowercase();
        let mut candidates = vec![lower.clone()];
        let mut base = lower.as_str();
        for prefix in [
            // GitHub Copilot names the models it serves `copilot/<model>`.
            "github-copilot/",
            "copilot/",
            "anthropic/",
            "anthropic.",
            "us.anthropic.",
            "eu.anthropic.",
            "apac.anthropic.",
        ] {
            if let Some(rest) = base.strip_prefix(prefix) {
                base = rest;
            }
        }
        let base = base.split('@').next().unwrap_or(base);
        let base = base.strip_suffix("-v1:0").unwrap_or(base);
        candidates.push(base.to_string());
        if let Some(undated) = strip_date(base) {
            candidates.push(undated.to_string());
        }
        // Copilot writes versions with dots (`claude-sonnet-4.6`), Anthropic with dashes.
        if let Some(dashed) = dots_to_dashes(base) {
            candidates.push(dashed);
        }
        candidates
            .iter()
            .find_map(|c| self.by_name.get(c))
            .map(|&i| &self.prices[i])
    }
}

/// Turns a dot between two digits into a dash (`claude-sonnet-4.6` -> `claude-sonnet-4-6`);
/// `None` when there is none.
fn dots_to_dashes(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut changed = false;
    for (i, c) in s.char_indices() {
        let between_digits = c == '.'
            && i > 0
            && b[i - 1].is_ascii_digit()
            && b.get(i + 1).is_some_and(u8::is_ascii_digit);
        if between_digits {
            out.push('-');
            changed = true;
        } else {
            out.push(c);
        }
    }
    changed.then_some(out)
}

/// Drops a trailing `-YYYYMMDD`.
fn strip_date(s: &str) -> Option<&str> {
    let (head, tail) = s.rsplit_once('-')?;
    (tail.len() == 8 && tail.bytes().all(|b| b.is_ascii_digit())).then_some(head)
}

impl Price {
    /// Returns the cost in USD of `t`.
    pub fn cost(&self, t: &Tokens) -> f64 {
        let r = &self.rates;
        let five_min = t.cache_creation - t.cache_creation_1h;
        let mut usd = t.input as f64 * r.input
            + t.output as f64 * r.output
            + five_min as f64 * r.cache_write_5m
            + t.cache_creation_1h as f64 * r.cache_write_1h
            + t.cache_read as f64 * r.cache_read;
        if let Some(a) = &self.above_200k {
            // Tokens past 200k were counted at the base rate above; add the difference.
            usd += t.input_over_200k as f64 * (a.input - r.input)
                + t.output_over_200k as f64 * (a.output - r.output)
                + t.cache_creation_over_200k as f64 * (a.cache_write_5m - r.cache_write_5m)
                + t.cache_read_over_200k as f64 * (a.cache_read - r.cache_read);
        }
        usd / 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_table_parses_and_resolves_aliases_and_dates() {
        let t = PriceTable::shipped();
        assert!(!t.all().is_empty());
        for p in t.all() {
            assert!(p.source.starts_with("https://"), "{} has a source", p.id);
            assert_eq!(p.as_of.len(), 10, "{} has a date", p.id);
        }
        let id = |m: &str| t.resolve(m).map(|p| p.id.as_str());
        assert_eq!(id("claude-sonnet-4-5-20250929"), Some("claude-sonnet-4-5"));
        assert_eq!(id("claude-sonnet-4-5-20991231"), Some("claude-sonnet-4-5"));
        assert_eq!(id("anthropic/claude-opus-4.5"), Some("claude-opus-4-5"));
        assert_eq!(
            id("us.anthropic.claude-haiku-4-5-20251001-v1:0"),
            Some("claude-haiku-4-5")
        );
        assert_eq!(id("claude-sonnet-4-5@20250929"), Some("claude-sonnet-4-5"));
        assert_eq!(id("claude-sonnet-4"), Some("claude-sonnet-4"));
        assert_eq!(id("claude-opus-5"), None);
        // Issue 18: GitHub Copilot's ids.
        assert_eq!(id("claude-sonnet-4.6"), Some("claude-sonnet-4-6"));
        assert_eq!(id("copilot/claude-sonnet-4.6"), Some("claude-sonnet-4-6"));
        assert_eq!(id("copilot/claude-haiku-4.5"), Some("claude-haiku-4-5"));
        assert_eq!(
            id("github-copilot/claude-opus-4.1"),
            Some("claude-opus-4-1")
        );
        assert_eq!(
            id("copilot/gpt-5.1"),
            None,
            "no guess for a model the table lacks"
        );
        assert_eq!(id("gpt-5-codex"), None);
    }

    #[test]
    fn cost_uses_1h_cache_rates_and_long_context_tiers() {
        let t = PriceTable::shipped();
        let sonnet = t.resolve("claude-sonnet-4-5").unwrap();
        let tokens = Tokens {
            input: 1_000_000,
            output: 1_000_000,
            cache_creation: 1_000_000,
            cache_creation_1h: 400_000,
            cache_read: 1_000_000,
            ..Tokens::default()
        };
        // 3 + 15 + 0.6 * 3.75 + 0.4 * 6 + 0.3
        assert!((sonnet.cost(&tokens) - 22.95).abs() < 1e-9);
        let long = Tokens {
            input: 300_000,
            input_over_200k: 100_000,
            ..Tokens::default()
        };
        // 200k at $3 + 100k at $6
        assert!((sonnet.cost(&long) - 1.2).abs() < 1e-9);
    }

    #[test]
    fn web_searches_cost_ten_dollars_a_thousand() {
        let t = PriceTable::shipped();
        let p = t.web_search().expect("a web search price");
        assert!(p.source.starts_with("https://") && p.as_of.len() == 10);
        assert!((t.web_search_cost(3) - 0.03).abs() < 1e-12);
        assert_eq!(t.web_search_cost(0), 0.0);
    }
}
