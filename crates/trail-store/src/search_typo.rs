//! Typo tolerance (issue 43): when a query matches nothing, or far fewer turns than a near
//! spelling of one of its words would, search retries with the closest words of the index's
//! own vocabulary (FTS5's `fts5vocab` over `turn_search`: every term with the number of turns
//! that hold it). A word is replaced by a term at most two edits away (one for words of four
//! letters or fewer; an edit inserts, deletes or changes a letter, or swaps two neighbours),
//! the closest first, then the one in the most turns.
//!
//! The vocabulary is read by ranges of terms (FTS5 keeps them sorted): those that start as the
//! word does in its first two letters, those two letters swapped, or either dropped. A typo in
//! the first two letters that is not one of those is not corrected.

use serde::Serialize;

use crate::search_query::{lex, unlex, Lexeme};
use crate::{Result, Store};

/// A word found in at most this many turns may be a typo of a far more frequent one...
const RARE_TURNS: i64 = 3;
/// ...when the near spelling is in at least this many times as many turns.
const FAR_MORE: i64 = 30;

/// Words shorter than this are never corrected (too many near spellings).
const MIN_LETTERS: usize = 3;

/// What search did with a query it corrected.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Correction {
    /// Each word replaced: as typed, and the index's word shown instead.
    pub words: Vec<(String, String)>,
    /// The query searched instead.
    pub query: String,
    /// True when the typed query matched nothing (its hits are the corrected query's); false
    /// when it matched few turns (its hits come first, then the corrected query's).
    pub no_match: bool,
}

impl Correction {
    /// What a frontend says: `no match for "imperal"; showing "imperial"`.
    pub fn message(&self) -> String {
        let typed: Vec<&str> = self.words.iter().map(|(t, _)| t.as_str()).collect();
        let shown: Vec<&str> = self.words.iter().map(|(_, s)| s.as_str()).collect();
        if self.no_match {
            format!(
                "no match for \"{}\"; showing \"{}\"",
                typed.join(" "),
                shown.join(" ")
            )
        } else {
            format!(
                "few matches for \"{}\"; also showing \"{}\"",
                typed.join(" "),
                shown.join(" ")
            )
        }
    }
}

impl Store {
    /// The query with its misspelled words replaced, if any is (module doc); `no_match` says
    /// whether the typed query found nothing.
    pub(crate) fn correct_query(&self, query: &str, no_match: bool) -> Result<Option<Correction>> {
        if self.ensure_vocab().is_err() {
            return Ok(None);
        }
        let mut lexemes = lex(query);
        // Alternatives the user listed (`cargo OR npm`) are each meant as typed: only a query
        // that found nothing is corrected then.
        if !no_match && lexemes.iter().any(|l| matches!(l, Lexeme::Or)) {
            return Ok(None);
        }
        let mut words = Vec::new();
        let mut excluded = false;
        for l in lexemes.iter_mut() {
            match l {
                Lexeme::Not => excluded = true,
                Lexeme::And => excluded = false,
                Lexeme::Or => {}
                Lexeme::Term { text, prefix } => {
                    let typed = std::mem::take(&mut excluded);
                    if typed || *prefix || !is_plain_word(text) {
                        continue;
                    }
                    if let Some(better) = self.near_spelling(text)? {
                        words.push((text.clone(), better.clone()));
                        *text = better;
                    }
                }
            }
        }
        if words.is_empty() {
            return Ok(None);
        }
        Ok(Some(Correction {
            words,
            query: unlex(&lexemes),
            no_match,
        }))
    }

    /// The vocabulary of `turn_search` (`temp.turn_vocab`: term, doc, cnt).
    fn ensure_vocab(&self) -> Result<()> {
        self.conn.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.turn_vocab
                 USING fts5vocab(search, turn_search, row);",
        )?;
        Ok(())
    }

    /// How many turns hold `word` (a plain word, lowercased), counted up to `most`: enough to
    /// tell a rare word from a common one. The vocabulary's own count (`doc`) reads the word's
    /// whole doclist, 7 ms for a common word on the 1 GiB corpus, and every word of a query
    /// with fewer hits than asked for is looked up; a `MATCH` stops after `most` turns.
    fn term_turns(&self, word: &str, most: i64) -> Result<i64> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT count(*) FROM
                 (SELECT 1 FROM turn_search WHERE turn_search MATCH ?1 LIMIT ?2)",
        )?;
        Ok(stmt.query_row(rusqlite::params![format!("\"{word}\""), most], |r| r.get(0))?)
    }

    /// The index's word to show instead of `word`, if `word` is in very few turns (or none)
    /// and a near spelling is in far more.
    fn near_spelling(&self, word: &str) -> Result<Option<String>> {
        let word = word.to_ascii_lowercase();
        let have = self.term_turns(&word, RARE_TURNS + 1)?;
        if have > RARE_TURNS {
            return Ok(None);
        }
        let max = if word.len() <= 4 { 1 } else { 2 };
        let mut best: Option<(usize, i64, String)> = None;
        let mut stmt = self.conn.prepare_cached(
            "SELECT term, doc FROM temp.turn_vocab WHERE term >= ?1 AND term < ?2",
        )?;
        for prefix in scan_prefixes(&word) {
            let end = prefix_end(&prefix);
            let mut rows = stmt.query([&prefix, &end])?;
            while let Some(r) = rows.next()? {
                let term: String = r.get(0)?;
                if term == word || term.len().abs_diff(word.len()) > max {
                    continue;
                }
                let Some(d) = edit_distance(&word, &term, max) else {
                    continue;
                };
                let docs: i64 = r.get(1)?;
                let better = match &best {
                    None => true,
                    Some((bd, bdocs, bterm)) => {
                        (d, std::cmp::Reverse(docs), &term)
                            < (*bd, std::cmp::Reverse(*bdocs), bterm)
                    }
                };
                if better {
                    best = Some((d, docs, term));
                }
            }
        }
        // A word in no turn takes any near spelling; one in a few turns, one in far more.
        Ok(best
            .filter(|(_, docs, _)| have == 0 || *docs >= FAR_MORE * have)
            .map(|(_, _, term)| term))
    }
}

/// A word the vocabulary can answer for: one token of ASCII letters and digits, not a number.
fn is_plain_word(text: &str) -> bool {
    text.len() >= MIN_LETTERS
        && text.bytes().all(|b| b.is_ascii_alphanumeric())
        && text.bytes().any(|b| b.is_ascii_alphabetic())
}

/// The ranges of the vocabulary to read for `word` (module doc), by their first letters.
fn scan_prefixes(word: &str) -> Vec<String> {
    let b = word.as_bytes();
    let s = |v: &[u8]| String::from_utf8_lossy(v).into_owned();
    let mut out = vec![s(&b[..2]), s(&[b[1], b[0]]), s(&[b[0], b[2]]), s(&b[1..3])];
    out.sort();
    out.dedup();
    out
}

/// The first string after every string that starts with `prefix` (ASCII).
fn prefix_end(prefix: &str) -> String {
    let mut b = prefix.as_bytes().to_vec();
    if let Some(last) = b.last_mut() {
        *last += 1;
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// The optimal string alignment distance of `a` and `b` (insert, delete, change, swap two
/// neighbours), if at most `max`.
fn edit_distance(a: &str, b: &str, max: usize) -> Option<usize> {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (j, cell) in d.iter_mut().take(w).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        d[i * w] = i;
        let mut row_min = usize::MAX;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
            row_min = row_min.min(v);
        }
        if row_min > max {
            return None;
        }
    }
    let v = d[a.len() * w + b.len()];
    (v <= max).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("imperal", "imperial", 2), Some(1));
        assert_eq!(edit_distance("teh", "the", 2), Some(1));
        assert_eq!(edit_distance("strng", "string", 2), Some(1));
        assert_eq!(edit_distance("chnage", "change", 2), Some(1));
        assert_eq!(edit_distance("abc", "xyz", 2), None);
        assert_eq!(edit_distance("deploy", "deploy", 2), Some(0));
    }

    #[test]
    fn vocabulary_ranges() {
        assert_eq!(scan_prefixes("imperal"), ["im", "ip", "mi", "mp"]);
        assert_eq!(prefix_end("im"), "in");
        assert!(is_plain_word("imperal"));
        assert!(!is_plain_word("12345"));
        assert!(!is_plain_word("café"));
        assert!(!is_plain_word("ab"));
    }

    #[test]
    fn the_message_says_what_was_shown() {
        let c = Correction {
            words: vec![("imperal".into(), "imperial".into())],
            query: "imperial units".into(),
            no_match: true,
        };
        assert_eq!(
            c.message(),
            "no match for \"imperal\"; showing \"imperial\""
        );
    }
}
