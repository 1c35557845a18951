//! What a query is: the one lexer of trail's query syntax (shared with the team store's
//! `tsquery` translation in trail-postgres), its translation to FTS5, and what ranking needs to
//! know of it ([`QueryShape`], [`Needles`], the column bits). `search.rs` and `search_rank.rs`
//! both build on this module; it depends on neither.

use crate::search_sig::Probe;
use crate::{Result, StoreError};

/// Terms a query may hold at most.
const MAX_TERMS: usize = 64;

// ---------------------------------------------------------------------------------------------
// Query translation

/// One lexical item of a user query: the one lexer of trail's query syntax, shared by the
/// SQLite (FTS5) translation here and the team store's (`tsquery`, trail-postgres).
#[derive(Debug, Clone, PartialEq)]
pub enum Lexeme {
    /// A word or a quoted phrase; `prefix` when it ended with `*`.
    Term {
        text: String,
        prefix: bool,
    },
    And,
    Or,
    Not,
}

/// Splits a user query into terms (words, "quoted phrases", with a trailing `*` for a prefix)
/// and the operators `AND`, `OR`, `NOT`.
pub fn lex(q: &str) -> Vec<Lexeme> {
    let mut out = Vec::new();
    let mut chars = q.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        if c == '"' {
            chars.next();
            let mut text = String::new();
            for c in chars.by_ref() {
                if c == '"' {
                    break;
                }
                text.push(c);
            }
            let mut prefix = false;
            while chars.peek() == Some(&'*') {
                chars.next();
                prefix = true;
            }
            out.push(Lexeme::Term { text, prefix });
            continue;
        }
        let mut word = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() || c == '"' {
                break;
            }
            word.push(c);
            chars.next();
        }
        out.push(match word.as_str() {
            "AND" => Lexeme::And,
            "OR" => Lexeme::Or,
            "NOT" => Lexeme::Not,
            _ => {
                let stem = word.trim_end_matches('*');
                Lexeme::Term {
                    prefix: stem.len() != word.len(),
                    text: stem.to_string(),
                }
            }
        });
    }
    out
}

/// Writes lexemes back as a query a user could type (what [`lex`] reads).
pub(crate) fn unlex(lexemes: &[Lexeme]) -> String {
    let words: Vec<String> = lexemes
        .iter()
        .map(|l| match l {
            Lexeme::And => "AND".to_string(),
            Lexeme::Or => "OR".to_string(),
            Lexeme::Not => "NOT".to_string(),
            Lexeme::Term { text, prefix } => {
                let star = if *prefix { "*" } else { "" };
                let bare = !text.is_empty()
                    && !text.contains(char::is_whitespace)
                    && !matches!(text.as_str(), "AND" | "OR" | "NOT");
                if bare {
                    format!("{text}{star}")
                } else {
                    format!("\"{text}\"{star}")
                }
            }
        })
        .collect();
    words.join(" ")
}

/// Quotes a term as an FTS5 string (so `-`, `:`, `.`, `(` in it are text, not syntax).
fn fts_string(text: &str, prefix: bool) -> Option<String> {
    // A term without a letter or digit holds no token; FTS5 would see an empty phrase.
    if !text.chars().any(char::is_alphanumeric) {
        return None;
    }
    let mut s = String::with_capacity(text.len() + 4);
    s.push('"');
    for c in text.chars() {
        if c == '"' {
            s.push('"');
        }
        s.push(c);
    }
    s.push('"');
    if prefix {
        s.push('*');
    }
    Some(s)
}

/// Translates a user query into an FTS5 expression.
///
/// Plain words must all match (`cargo test`); `"quoted phrases"` match in order; `word*`
/// matches a prefix; `A OR B` matches either (OR binds tighter than the implicit AND:
/// `timeout retry OR backoff` is `timeout AND (retry OR backoff)`); `A NOT B` excludes; `AND`
/// may be written. Every term is quoted, so punctuation inside words is text. Words without a
/// letter or digit are ignored. Errors name what is wrong in the user's terms.
pub fn translate_query(q: &str) -> Result<String, String> {
    translate(lex(q))
}

/// Translates lexed terms and operators (see [`translate_query`]).
fn translate(lexed: Vec<Lexeme>) -> Result<String, String> {
    let mut lexemes: Vec<Lexeme> = Vec::new();
    let mut terms = 0;
    for l in lexed {
        match l {
            Lexeme::Term { text, prefix } => {
                if let Some(s) = fts_string(&text, prefix) {
                    terms += 1;
                    lexemes.push(Lexeme::Term { text: s, prefix });
                }
            }
            op => lexemes.push(op),
        }
    }
    if terms == 0 {
        return Err("the query has no word to search for".to_string());
    }
    if terms > MAX_TERMS {
        return Err(format!(
            "the query has {terms} terms; at most {MAX_TERMS} are allowed"
        ));
    }
    // query := group ((AND)? group | NOT group)*; group := term (OR term)*
    let mut out = String::new();
    let mut i = 0;
    let mut first = true;
    while i < lexemes.len() {
        let op = match &lexemes[i] {
            Lexeme::And => {
                i += 1;
                Some("AND")
            }
            Lexeme::Not => {
                i += 1;
                Some("NOT")
            }
            Lexeme::Or => return Err(operator_error("OR", first)),
            Lexeme::Term { .. } => None,
        };
        if first && op.is_some() {
            let name = op.unwrap_or("AND");
            return Err(operator_error(name, true));
        }
        let (group, next) = parse_group(&lexemes, i, op.unwrap_or("AND"))?;
        i = next;
        if first {
            out = group;
            first = false;
        } else {
            // Parenthesize the left side so NOT applies to all of it, as written.
            out = format!("({out}) {} {group}", op.unwrap_or("AND"));
        }
    }
    Ok(out)
}

/// The query's words as one OR expression, leaving out what NOT excludes: what a hit's
/// messages are scored and marked with (a turn matches when its messages hold every word
/// between them; any one message may hold only some).
pub(crate) fn any_word_query(q: &str) -> Option<String> {
    let mut words: Vec<String> = included_terms(q)
        .into_iter()
        .filter_map(|(text, prefix)| fts_string(&text, prefix))
        .collect();
    words.dedup();
    (!words.is_empty()).then(|| words.join(" OR "))
}

/// The query's terms (text, prefix) in order, leaving out what NOT excludes.
fn included_terms(q: &str) -> Vec<(String, bool)> {
    included_groups(q).into_iter().flatten().collect()
}

/// The terms NOT does not exclude, in their groups: a term, or terms joined by OR.
fn included_groups(q: &str) -> Vec<Vec<(String, bool)>> {
    let lexemes = lex(q);
    let mut groups: Vec<Vec<(String, bool)>> = Vec::new();
    let mut excluded = false;
    for (i, l) in lexemes.iter().enumerate() {
        match l {
            Lexeme::Not => excluded = true,
            Lexeme::And => excluded = false,
            Lexeme::Or => {}
            Lexeme::Term { text, prefix } => {
                let joined = i > 0 && lexemes[i - 1] == Lexeme::Or;
                if !excluded {
                    match groups.last_mut() {
                        Some(group) if joined => group.push((text.clone(), *prefix)),
                        _ => groups.push(vec![(text.clone(), *prefix)]),
                    }
                }
                // NOT excludes a group: terms joined by OR.
                if lexemes.get(i + 1) != Some(&Lexeme::Or) {
                    excluded = false;
                }
            }
        }
    }
    groups
}

fn positive_lexemes(q: &str) -> Vec<Lexeme> {
    let lexemes = lex(q);
    let mut out = Vec::new();
    let mut i = 0;
    while i < lexemes.len() {
        if lexemes[i] != Lexeme::Not {
            out.push(lexemes[i].clone());
            i += 1;
            continue;
        }
        // Skip `NOT term (OR term)*`.
        i += 1;
        while matches!(lexemes.get(i), Some(Lexeme::Term { .. })) {
            i += 1;
            if lexemes.get(i) != Some(&Lexeme::Or) {
                break;
            }
            i += 1;
        }
    }
    out
}

/// Proximity: the query's terms within this many tokens of each other (FTS5's `NEAR` default).
const NEAR_TOKENS: usize = 10;

/// What coherent ranking needs to know of a query (issue 43): what one message must hold for
/// its turn to rank as coherent, and how to ask for the words near each other.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QueryShape {
    /// The query without what NOT excludes, as FTS5 text; `None` when nothing is left.
    pub positive: Option<String>,
    /// The groups (a term, or terms joined by OR) `positive` needs together.
    pub groups: usize,
    /// `NEAR(...)` of the query's terms, for two or more terms without OR.
    pub near: Option<String>,
}

impl QueryShape {
    pub(crate) fn of(q: &str) -> QueryShape {
        let lexemes: Vec<Lexeme> = positive_lexemes(q)
            .into_iter()
            .filter(|l| match l {
                Lexeme::Term { text, prefix } => fts_string(text, *prefix).is_some(),
                _ => true,
            })
            .collect();
        let groups = lexemes
            .iter()
            .enumerate()
            .filter(|(i, l)| {
                matches!(l, Lexeme::Term { .. }) && (*i == 0 || lexemes[i - 1] != Lexeme::Or)
            })
            .count();
        let mut terms: Vec<String> = lexemes
            .iter()
            .filter_map(|l| match l {
                Lexeme::Term { text, prefix } => fts_string(text, *prefix),
                _ => None,
            })
            .collect();
        terms.sort();
        terms.dedup();
        let near = (!lexemes.contains(&Lexeme::Or) && terms.len() >= 2)
            .then(|| format!("NEAR({}, {NEAR_TOKENS})", terms.join(" ")));
        QueryShape {
            positive: translate(lexemes).ok(),
            groups,
            near,
        }
    }
}

/// What a message must hold, as ASCII text, to match any word of the query: some alphanumeric
/// run of some word, lowercased. A hit turn's messages are checked against it before they go
/// into the in-memory full-text table that picks the best one and cuts its snippet: most of a
/// turn's messages hold none of the query's words, and tokenizing them was a fifth of a search.
/// Conservative: a message the tokenizer would match holds one of these as a substring (its
/// tokens are alphanumeric runs, ASCII folded to lowercase). `None` (check nothing) when a
/// word is not ASCII, since the tokenizer folds case and diacritics beyond ASCII.
pub(crate) struct Needles {
    /// Every alphanumeric run of every word, lowercased: a field that holds a word holds one.
    any: Vec<String>,
    /// For each group of words (a word, or words joined by OR), one run of each of its words:
    /// a field that holds every group holds one of each group's.
    groups: Vec<Vec<String>>,
    /// The groups again, each word as the tokenizer reads it (its runs, in order, the last a
    /// prefix when the word ended with `*`): what one field must hold, exactly. `None` when a
    /// word has no run (FTS5 drops it from the query, and the query's shape with it).
    phrases: Option<Vec<Vec<Phrase>>>,
}

/// A word of the query as the index's tokenizer reads it: consecutive tokens.
#[derive(Debug, Clone, PartialEq)]
struct Phrase {
    tokens: Vec<String>,
    /// The last token is a prefix (`deploy*`).
    prefix: bool,
}

/// A run of a field's text between ASCII separators, lowercased: `Sure` when it is ASCII (the
/// tokenizer reads it as one token, as written), `Unsure` when it holds a character beyond
/// ASCII (the tokenizer may fold it, drop its diacritics, or cut the run there).
#[derive(Debug, Clone, Copy)]
enum Run<'a> {
    Sure(&'a [u8]),
    Unsure(&'a str),
}

impl<'a> Run<'a> {
    fn sure(&self) -> Option<&'a [u8]> {
        match self {
            Run::Sure(t) => Some(t),
            Run::Unsure(_) => None,
        }
    }
}

impl Phrase {
    /// Whether `runs` surely hold this phrase: consecutive sure runs.
    fn found_in(&self, runs: &[Run<'_>]) -> bool {
        let Some((last, head)) = self.tokens.split_last() else {
            return false;
        };
        runs.windows(self.tokens.len()).any(|w| {
            let (w_last, w_head) = w.split_last().expect("a window of one or more");
            w_head
                .iter()
                .zip(head)
                .all(|(a, b)| a.sure() == Some(b.as_bytes()))
                && w_last.sure().is_some_and(|t| {
                    if self.prefix {
                        t.starts_with(last.as_bytes())
                    } else {
                        t == last.as_bytes()
                    }
                })
        })
    }

    /// Where in `runs` (all sure) this phrase starts, in order.
    fn starts_in(&self, runs: &[Run<'_>]) -> Vec<usize> {
        let n = self.tokens.len();
        if n == 0 || runs.len() < n {
            return Vec::new();
        }
        (0..=runs.len() - n)
            .filter(|&at| self.found_in(&runs[at..at + n]))
            .collect()
    }

    /// Whether `runs` may hold this phrase, read by the tokenizer: each of its tokens a sure
    /// run, or somewhere in an unsure one where each character is the token's or beyond ASCII
    /// (which folding may turn into it). Adjacency is not asked: false means surely not.
    fn may_be_in(&self, runs: &[Run<'_>]) -> bool {
        let last = self.tokens.len() - 1;
        self.tokens.iter().enumerate().all(|(k, t)| {
            let prefix = self.prefix && k == last;
            runs.iter().any(|r| match r {
                Run::Sure(s) if prefix => s.starts_with(t.as_bytes()),
                Run::Sure(s) => *s == t.as_bytes(),
                Run::Unsure(u) => may_fold_to(u, t),
            })
        })
    }
}

/// Whether some stretch of `run` may fold into `token` (ASCII): each of its characters the
/// token's, or one beyond ASCII.
fn may_fold_to(run: &str, token: &str) -> bool {
    run.char_indices().any(|(at, _)| {
        let mut chars = run[at..].chars();
        token.bytes().all(|b| {
            chars
                .next()
                .is_some_and(|c| !c.is_ascii() || c == char::from(b))
        })
    })
}

impl Needles {
    pub(crate) fn of(q: &str) -> Option<Needles> {
        let groups = included_groups(q);
        if groups.iter().flatten().any(|(text, _)| !text.is_ascii()) {
            return None;
        }
        let runs = |text: &str| -> Vec<String> {
            text.split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_ascii_lowercase)
                .collect()
        };
        let mut any: Vec<String> = groups.iter().flatten().flat_map(|(t, _)| runs(t)).collect();
        any.sort();
        any.dedup();
        // A word without a run (punctuation alone) is no word to FTS5: its group asks
        // nothing of a field here.
        let phrases = groups
            .iter()
            .map(|g| {
                g.iter()
                    .map(|(t, prefix)| {
                        let tokens = runs(t);
                        (!tokens.is_empty()).then_some(Phrase {
                            tokens,
                            prefix: *prefix,
                        })
                    })
                    .collect::<Option<Vec<Phrase>>>()
            })
            .collect::<Option<Vec<Vec<Phrase>>>>();
        let groups = groups
            .iter()
            .map(|g| {
                g.iter()
                    .map(|(t, _)| runs(t).into_iter().next())
                    .collect::<Option<Vec<String>>>()
            })
            .filter_map(|g| g.filter(|g| !g.is_empty()))
            .collect();
        (!any.is_empty()).then_some(Needles {
            any,
            groups,
            phrases,
        })
    }

    /// What a turn's signatures are asked (`search_sig.rs`) for the messages `keep` keeps:
    /// each group's words as the tokenizer reads them. `None` when a word has no run.
    pub(crate) fn probe(&self, keep: Keep) -> Option<Probe> {
        let phrases = self.phrases.as_ref()?;
        let groups = phrases.iter().map(|g| {
            g.iter()
                .map(|p| (p.tokens.as_slice(), p.prefix))
                .collect::<Vec<_>>()
        });
        Some(Probe::of(groups, keep == Keep::EveryWordInOneField))
    }

    /// Whether `lowered` (a field, ASCII folded to lowercase) holds, as a substring, a needle
    /// of each group of words.
    fn holds_a_needle_of_every_group(&self, lowered: &[u8]) -> bool {
        self.groups
            .iter()
            .all(|g| g.iter().any(|n| holds(lowered, n)))
    }

    /// Whether one of `fields` holds every group of the query, read as the index's tokenizer
    /// reads text: tokens are runs of letters and digits, ASCII folded to lowercase. That is
    /// what FTS5's `{field} : (query)` says of it, without putting the field into a table. A
    /// run with a character beyond ASCII is unsure (the tokenizer folds case and diacritics
    /// there, and may cut the run): it matches no word, and a field that holds one answers
    /// `None` (only the tokenizer can say) unless its sure runs hold every word. `None` too
    /// when a word has no run.
    pub(crate) fn one_field_holds_all(
        &self,
        fields: &[Option<&str>],
        lowered: &mut Vec<u8>,
    ) -> Option<bool> {
        let phrases = self.phrases.as_ref()?;
        let mut unsure = false;
        for field in fields.iter().flatten() {
            let ascii = field.is_ascii();
            lower_into(field, lowered);
            // The substring test first: most fields miss some group outright (sound only
            // where folding is ASCII's).
            if ascii && !self.holds_a_needle_of_every_group(lowered) {
                continue;
            }
            let runs: Vec<Run<'_>> = lowered
                .split(|b| b.is_ascii() && !b.is_ascii_alphanumeric())
                .filter(|r| !r.is_empty())
                .map(|r| match std::str::from_utf8(r) {
                    Ok(t) if !t.is_ascii() => Run::Unsure(t),
                    _ => Run::Sure(r),
                })
                .collect();
            if phrases.iter().all(|g| g.iter().any(|p| p.found_in(&runs))) {
                return Some(true);
            }
            // Beyond ASCII, surely not only when some group cannot be there however the
            // tokenizer reads the field.
            unsure |= !ascii && phrases.iter().all(|g| g.iter().any(|p| p.may_be_in(&runs)));
        }
        (!unsure).then_some(false)
    }

    /// Each of `texts` read once as the index's tokenizer reads ASCII text (its tokens: runs
    /// of letters and digits, lowercased): its length in tokens and where each of the query's
    /// phrases starts in it, enough for FTS5's score ([`AsciiReadings::bm25`]) and proximity
    /// ([`AsciiReadings::near`]) of a table holding them. `None` when a text is not ASCII or a
    /// word has no run (only the tokenizer can read them then).
    pub(crate) fn read_ascii(&self, texts: &[&str]) -> Option<AsciiReadings<'_>> {
        let groups = self.phrases.as_ref()?;
        if texts.iter().any(|t| !t.is_ascii()) {
            return None;
        }
        let phrases: Vec<&Phrase> = groups.iter().flatten().collect();
        let mut lowered = Vec::new();
        let texts = texts
            .iter()
            .map(|t| {
                lower_into(t, &mut lowered);
                let runs: Vec<Run<'_>> = lowered
                    .split(|b| !b.is_ascii_alphanumeric())
                    .filter(|r| !r.is_empty())
                    .map(Run::Sure)
                    .collect();
                AsciiReading {
                    tokens: runs.len(),
                    starts: phrases.iter().map(|p| p.starts_in(&runs)).collect(),
                }
            })
            .collect();
        Some(AsciiReadings {
            groups,
            phrases,
            texts,
        })
    }

    /// False only when no field can match: every field is ASCII and holds no needle.
    pub(crate) fn may_match(&self, fields: &[Option<&str>], lowered: &mut Vec<u8>) -> bool {
        fields.iter().flatten().any(|field| {
            !field.is_ascii() || {
                lower_into(field, lowered);
                self.any.iter().any(|n| holds(lowered, n))
            }
        })
    }

    /// False only when no one field can hold every word: each field is ASCII and misses
    /// every needle of some group.
    pub(crate) fn may_match_one_field(
        &self,
        fields: &[Option<&str>],
        lowered: &mut Vec<u8>,
    ) -> bool {
        fields.iter().flatten().any(|field| {
            !field.is_ascii() || {
                lower_into(field, lowered);
                self.holds_a_needle_of_every_group(lowered)
            }
        })
    }
}

/// Texts read by [`Needles::read_ascii`], for a table holding them alone, one row each.
pub(crate) struct AsciiReadings<'a> {
    groups: &'a [Vec<Phrase>],
    /// The groups' phrases in the query's order (FTS5's phrase numbers).
    phrases: Vec<&'a Phrase>,
    texts: Vec<AsciiReading>,
}

/// One text of [`AsciiReadings`]: its length in tokens and where each phrase starts in it.
struct AsciiReading {
    tokens: usize,
    starts: Vec<Vec<usize>>,
}

impl AsciiReadings<'_> {
    /// The score FTS5's `bm25()` gives each text that matches the query's words (its positive
    /// part, each word a phrase, in the query's order) on a table that holds these texts
    /// alone, one row each, in one column: what an in-memory FTS5 table of them would answer,
    /// without building one. `None` for a text that does not match.
    ///
    /// FTS5's formula (`fts5Bm25Function`): for each phrase, `idf * f * (k1 + 1) / (f + k1 *
    /// (1 - b + b * D / avgdl))` summed in phrase order and negated, with k1 = 1.2, b = 0.75,
    /// `f` the phrase's occurrences in the row, `D` the row's tokens, `avgdl` the table's mean,
    /// and `idf = ln((N - n + 0.5) / (n + 0.5))` over the N rows, `n` of which hold the phrase
    /// (1e-6 when that is not positive). The same operations in the same order give the same
    /// bits (`bm25_alone_is_fts5s_bm25`).
    pub(crate) fn bm25(&self) -> Vec<Option<f64>> {
        const K1: f64 = 1.2;
        const B: f64 = 0.75;
        let n_rows = self.texts.len() as i64;
        let tokens: usize = self.texts.iter().map(|t| t.tokens).sum();
        let avgdl = tokens as f64 / n_rows as f64;
        let idf: Vec<f64> = (0..self.phrases.len())
            .map(|i| {
                let hits = self
                    .texts
                    .iter()
                    .filter(|t| !t.starts[i].is_empty())
                    .count() as i64;
                let idf = (((n_rows - hits) as f64 + 0.5) / (hits as f64 + 0.5)).ln();
                if idf <= 0.0 {
                    1e-6
                } else {
                    idf
                }
            })
            .collect();
        self.texts
            .iter()
            .map(|t| {
                self.holds_every_group(t).then(|| {
                    let d = t.tokens as f64;
                    let mut score = 0.0;
                    for (idf, starts) in idf.iter().zip(&t.starts) {
                        let f = starts.len() as f64;
                        score += idf * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / avgdl)));
                    }
                    -score
                })
            })
            .collect()
    }

    /// Whether every word of the query stands near the others in each text, as FTS5's
    /// `NEAR(words, NEAR_TOKENS)` ([`QueryShape::near`]) says of a column holding it: some
    /// instance of each word starts at most its own length plus `NEAR_TOKENS` tokens before
    /// the last of them starts (`fts5ExprNearIsMatch`). For a query without OR.
    pub(crate) fn near(&self) -> Vec<bool> {
        self.texts
            .iter()
            .map(|t| {
                // The last word to start, at `last`: every word has an instance in its window.
                t.starts.iter().flatten().any(|&last| {
                    self.phrases.iter().zip(&t.starts).all(|(p, at)| {
                        let from = last.saturating_sub(p.tokens.len() + NEAR_TOKENS);
                        at.iter().any(|&s| (from..=last).contains(&s))
                    })
                })
            })
            .collect()
    }

    /// Whether FTS5 would match the text: some phrase of each group is in it.
    fn holds_every_group(&self, t: &AsciiReading) -> bool {
        let mut rest = t.starts.as_slice();
        self.groups.iter().all(|g| {
            let (group, next) = rest.split_at(g.len());
            rest = next;
            group.iter().any(|starts| !starts.is_empty())
        })
    }
}

fn lower_into(field: &str, lowered: &mut Vec<u8>) {
    lowered.clear();
    lowered.extend(field.bytes().map(|b| b.to_ascii_lowercase()));
}

fn holds(haystack: &[u8], needle: &str) -> bool {
    memchr::memmem::find(haystack, needle.as_bytes()).is_some()
}

fn operator_error(op: &str, at_start: bool) -> String {
    if at_start {
        format!("{op} needs a word before it (for example `error {op} warning`)")
    } else {
        format!("{op} needs a word after it (for example `error {op} warning`)")
    }
}

/// Parses `term (OR term)*` from `i`; returns the FTS5 text and the next index.
fn parse_group(lexemes: &[Lexeme], mut i: usize, after: &str) -> Result<(String, usize), String> {
    let mut alts: Vec<&str> = Vec::new();
    loop {
        match lexemes.get(i) {
            Some(Lexeme::Term { text, .. }) => {
                alts.push(text);
                i += 1;
            }
            Some(Lexeme::Or) => {
                return Err(if alts.is_empty() {
                    format!("{after} and OR cannot follow each other")
                } else {
                    "OR cannot follow OR".to_string()
                })
            }
            Some(Lexeme::And | Lexeme::Not) | None => {
                return Err(operator_error(
                    if alts.is_empty() { after } else { "OR" },
                    false,
                ))
            }
        }
        if lexemes.get(i) == Some(&Lexeme::Or) {
            i += 1;
            continue;
        }
        break;
    }
    let text = if alts.len() == 1 {
        alts[0].to_string()
    } else {
        format!("({})", alts.join(" OR "))
    };
    Ok((text, i))
}

// ---------------------------------------------------------------------------------------------
// What ranking needs of a query

pub(crate) const FIELDS: [&str; 3] = ["text", "tool_input", "tool_output"];

/// Every column of the turn index: prompt 8, answer 1, tool input 2, tool output 4.
pub(crate) const ALL_COLUMNS: u8 = 15;

/// Which messages of hit turns go into `temp.hit_text`: those whose fields may hold ...
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// ... any word of the query (to choose the best message and cut its snippet);
    AnyWord,
    /// ... every word in one field (to tell whether one message holds them all).
    EveryWordInOneField,
}

/// What one field of a message must match to hold the whole query (`positive`: the query
/// without what NOT excludes): all its words in the text, the tool input or the tool output.
pub(crate) fn whole_message_query(positive: &str) -> String {
    FIELDS
        .map(|f| format!("({{{f}}} : ({positive}))"))
        .join(" OR ")
}

/// Turns FTS5's complaints about a query into [`StoreError::InvalidQuery`]; the translator
/// should never let one through, this is the safety net.
pub(crate) fn fts_error(e: rusqlite::Error) -> StoreError {
    let msg = e.to_string();
    if msg.starts_with("fts5:") || msg.contains("malformed MATCH") {
        StoreError::InvalidQuery(format!("cannot search for that ({msg})"))
    } else {
        StoreError::Sqlite(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FTS5's answer: whether `{field} : (positive)` matches one of `fields`, in a table with
    /// the index's tokenizer.
    fn fts_holds_all(q: &str, fields: &[&str]) -> bool {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(text, tool_input, tool_output,
                 tokenize = 'unicode61 remove_diacritics 2');",
        )
        .unwrap();
        let mut row = [None, None, None];
        for (slot, f) in row.iter_mut().zip(fields) {
            *slot = Some(f.to_string());
        }
        conn.execute(
            "INSERT INTO t VALUES (?1, ?2, ?3)",
            rusqlite::params_from_iter(row),
        )
        .unwrap();
        let Some(positive) = QueryShape::of(q).positive else {
            return false;
        };
        conn.query_row(
            "SELECT count(*) FROM t WHERE t MATCH ?1",
            [whole_message_query(&positive)],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
            > 0
    }

    proptest::proptest! {
        /// Where the Rust reading of ASCII fields answers, it answers as FTS5 does: words,
        /// phrases, prefixes, OR and NOT, in any case, among separators of every kind.
        #[test]
        fn one_field_holds_all_as_fts5_says(
            q in "(deploy\\*|Build|fails|\"src/main\"|ab|a-b|x1|OR|NOT| ){1,12}",
            fields in proptest::collection::vec("(build|fails|src|main|Deploy|deployment|ab|a|b|x1|x|1|é|Ü|—|bÜild|fäils|ßrc|日本|dÉploy|[-/. _:]){0,14}", 1..4),
        ) {
            // A query that does not translate is refused before anything is ranked.
            if translate_query(&q).is_err() {
                return Ok(());
            }
            let Some(n) = Needles::of(&q) else { return Ok(()) };
            let refs: Vec<Option<&str>> = fields.iter().map(|f| Some(f.as_str())).collect();
            let mut buf = Vec::new();
            if let Some(ours) = n.one_field_holds_all(&refs, &mut buf) {
                let strs: Vec<&str> = fields.iter().map(String::as_str).collect();
                proptest::prop_assert_eq!(ours, fts_holds_all(&q, &strs), "{:?} {:?}", q, fields);
            }
        }
    }

    /// A table like `temp.hit_text` with each of `texts` in its own row (rowid: its index).
    fn one_row_each(texts: &[&str]) -> rusqlite::Connection {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(text, tool_input, tool_output,
                 tokenize = 'unicode61 remove_diacritics 2');",
        )
        .unwrap();
        for (i, text) in texts.iter().enumerate() {
            conn.execute(
                "INSERT INTO t (rowid, text) VALUES (?1, ?2)",
                rusqlite::params![i as i64, text],
            )
            .unwrap();
        }
        conn
    }

    /// FTS5's own scores of `texts`, one row each of a table like `temp.hit_text`, against
    /// `{text} : (positive)`: what `search_rank::prompt_scores` asked FTS5 before.
    fn fts_bm25_alone(q: &str, texts: &[&str]) -> Vec<Option<f64>> {
        let conn = one_row_each(texts);
        let positive = QueryShape::of(q).positive.unwrap();
        let mut stmt = conn
            .prepare("SELECT rowid, bm25(t) FROM t WHERE t MATCH ?1")
            .unwrap();
        let mut scores = vec![None; texts.len()];
        let rows = stmt
            .query_map([format!("{{text}} : ({positive})")], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?))
            })
            .unwrap();
        for row in rows {
            let (i, score) = row.unwrap();
            scores[i as usize] = Some(score);
        }
        scores
    }

    proptest::proptest! {
        /// Where the Rust score answers, it is FTS5's to the bit, and it scores the rows FTS5
        /// matches: words, phrases, prefixes, OR, NOT, repeated words, empty rows.
        #[test]
        fn bm25_alone_is_fts5s_bm25(
            q in "(deploy\\*|Build|fails|\"src/main\"|\"fails build\"|ab|a-b|x1|OR|NOT| ){1,12}",
            texts in proptest::collection::vec("(build|fails|src|main|Deploy|deployment|ab|a|b|x1|x|1|\n|[-/. _:]){0,24}", 1..8),
        ) {
            if translate_query(&q).is_err() || QueryShape::of(&q).positive.is_none() {
                return Ok(());
            }
            let Some(n) = Needles::of(&q) else { return Ok(()) };
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            if let Some(ours) = n.read_ascii(&refs).map(|r| r.bm25()) {
                let theirs = fts_bm25_alone(&q, &refs);
                let bits = |v: &[Option<f64>]| v.iter().map(|s| s.map(f64::to_bits)).collect::<Vec<_>>();
                proptest::prop_assert_eq!(bits(&ours), bits(&theirs), "{:?} {:?}", q, texts);
            }
        }
    }

    /// FTS5's answer to `{text} : NEAR(...)` for each of `texts` (one row each).
    fn fts_near(q: &str, texts: &[&str]) -> Vec<bool> {
        let conn = one_row_each(texts);
        let near = QueryShape::of(q).near.unwrap();
        let mut stmt = conn
            .prepare("SELECT rowid FROM t WHERE t MATCH ?1")
            .unwrap();
        let ids: Vec<i64> = stmt
            .query_map([format!("{{text}} : {near}")], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        (0..texts.len() as i64).map(|i| ids.contains(&i)).collect()
    }

    proptest::proptest! {
        /// Where the Rust reading answers, it is FTS5's NEAR: words and phrases far apart,
        /// close, repeated, overlapping, in either order.
        #[test]
        fn near_in_is_fts5s_near(
            q in "(build|fails|ab|x1|\"src/main\"|\"fails build\"|deploy\\*|a-b)( (build|fails|ab|x1|\"src/main\"|deploy\\*|a-b)){1,2}",
            parts in proptest::collection::vec(
                proptest::collection::vec(("(build|fails|src|main|deployment|ab|a-b|x1)[ /\n]", 0usize..14), 0..6),
                1..6,
            ),
        ) {
            if translate_query(&q).is_err() || QueryShape::of(&q).near.is_none() {
                return Ok(());
            }
            let Some(n) = Needles::of(&q) else { return Ok(()) };
            // Words with runs of filler between them: every distance around the window's edge.
            let texts: Vec<String> = parts
                .iter()
                .map(|p| p.iter().map(|(w, gap)| format!("{w}{}", "w ".repeat(*gap))).collect())
                .collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            if let Some(ours) = n.read_ascii(&refs).map(|r| r.near()) {
                proptest::prop_assert_eq!(ours, fts_near(&q, &refs), "{:?} {:?}", q, texts);
            }
        }
    }

    #[test]
    fn the_rust_score_leaves_text_beyond_ascii_to_fts5() {
        let n = Needles::of("build fails").unwrap();
        let bm25 = |texts: &[&str]| n.read_ascii(texts).map(|r| r.bm25());
        assert_eq!(bm25(&["build fails", "Büild fails"]), None);
        let scores = bm25(&["build fails", "build", ""]).unwrap();
        assert!(scores[0].is_some_and(|s| s < 0.0));
        assert_eq!(scores[1..], [None, None]);
    }

    #[test]
    fn a_field_that_is_not_ascii_leaves_it_to_fts5() {
        let n = Needles::of("build fails").unwrap();
        let mut buf = Vec::new();
        assert_eq!(
            n.one_field_holds_all(&[Some("Büild fails")], &mut buf),
            None
        );
        assert_eq!(
            n.one_field_holds_all(&[Some("Büild"), Some("build; it fails")], &mut buf),
            Some(true)
        );
        assert_eq!(
            n.one_field_holds_all(&[Some("build"), Some("fails")], &mut buf),
            Some(false)
        );
        // Phrases are consecutive tokens; a prefix matches the start of a token.
        let n = Needles::of("\"src/main\" deploy*").unwrap();
        assert_eq!(
            n.one_field_holds_all(&[Some("SRC main DEPLOYED")], &mut buf),
            Some(true)
        );
        assert_eq!(
            n.one_field_holds_all(&[Some("src x main deploy")], &mut buf),
            Some(false)
        );
    }

    #[test]
    fn words_phrases_prefixes_and_operators() {
        let t = |q: &str| translate_query(q).unwrap();
        assert_eq!(t("cargo test"), r#"("cargo") AND "test""#);
        assert_eq!(
            t(r#""cargo test" --release"#),
            r#"("cargo test") AND "--release""#
        );
        assert_eq!(t("pars*"), r#""pars"*"#);
        assert_eq!(
            t("timeout retry OR backoff"),
            r#"("timeout") AND ("retry" OR "backoff")"#
        );
        assert_eq!(t("error NOT warning"), r#"("error") NOT "warning""#);
        assert_eq!(t("a AND b"), r#"("a") AND "b""#);
        assert_eq!(t("src/main.rs:12"), r#""src/main.rs:12""#);
        assert_eq!(t(r#"say "hi"#), r#"("say") AND "hi""#);
        assert_eq!(t("or not and"), r#"(("or") AND "not") AND "and""#);
        assert_eq!(t("-> x"), r#""x""#);
    }

    #[test]
    fn needles_are_the_words_a_match_needs() {
        let n = Needles::of("Install ERROR NOT warning \"src/main.rs\" deploy*").unwrap();
        assert_eq!(n.any, ["deploy", "error", "install", "main", "rs", "src"]);
        assert_eq!(n.groups, [["install"], ["error"], ["src"], ["deploy"]]);
        let mut buf = Vec::new();
        assert!(n.may_match(&[Some("an Install step")], &mut buf));
        assert!(n.may_match(&[None, Some("DEPLOYMENT")], &mut buf));
        assert!(!n.may_match(&[Some("only a warning here"), None], &mut buf));
        // Not ASCII: the tokenizer folds what a byte search cannot, so it may match.
        assert!(n.may_match(&[Some("Érror")], &mut buf));
        assert!(Needles::of("café").is_none());
        assert!(Needles::of("NOT alone").is_none());
    }

    #[test]
    fn one_field_must_hold_a_needle_of_every_group() {
        let n = Needles::of("install error OR failure NOT warning").unwrap();
        assert_eq!(n.groups, [vec!["install"], vec!["error", "failure"]]);
        let mut buf = Vec::new();
        let one = |f: &[Option<&str>], buf: &mut Vec<u8>| n.may_match_one_field(f, buf);
        assert!(one(&[Some("Install failed: FAILURE")], &mut buf));
        assert!(one(&[Some("install"), Some("an install error")], &mut buf));
        // Each word in a field of its own: no one field holds both.
        assert!(!one(&[Some("install"), None, Some("error")], &mut buf));
        assert!(!one(&[Some("warning: install")], &mut buf));
        // Not ASCII: the tokenizer folds what a byte search cannot.
        assert!(one(&[Some("install Érror")], &mut buf));
    }

    #[test]
    fn bad_queries_say_why() {
        for q in [
            "",
            "   ",
            "->",
            "OR x",
            "x OR",
            "NOT x",
            "x NOT",
            "x AND",
            "a OR OR b",
            "x AND OR y",
        ] {
            assert!(translate_query(q).is_err(), "{q:?}");
        }
    }
}
