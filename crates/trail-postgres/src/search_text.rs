//! What full-text search sees, cut the way the local store cuts it, and the query syntax
//! translated to `tsquery`.
//!
//! The local store's FTS5 tokenizer (`unicode61 remove_diacritics 2`) makes a word of every run
//! of letters and digits, folds case and drops diacritics. PostgreSQL's parser does not: it keeps
//! `src/main.rs` as one file-name token, `foo-bar` as a compound plus its parts, and so on, so
//! `main` would not find `src/main.rs` there while it does locally. trail therefore builds the
//! `tsvector` itself (lexemes with positions, as `tsvector` input text) from the same text the
//! local index sees (the caps of `message_search_source`, escape sequences stripped), and
//! builds the `tsquery` from the same words: the server does the matching (GIN) and the ranking
//! (`ts_rank`), on exactly the local store's words.

use std::collections::BTreeMap;

use trail_model::Role;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

/// The message kinds search sees (the local view `message_search_source` says the same).
pub const SEARCHED_KINDS: [&str; 6] = [
    "prompt",
    "text",
    "tool_call",
    "tool_result",
    "error",
    "summary",
];

/// `tsvector` positions stop at this (PostgreSQL's limit); later words keep this position.
const MAX_POSITION: usize = 16_383;
/// PostgreSQL refuses longer lexemes; FTS5 would index them, but no one searches for them.
const MAX_LEXEME_BYTES: usize = 2_047;

/// The words of `text`: runs of letters and digits, lower-cased, diacritics dropped.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if c.is_alphanumeric() || (is_combining_mark(c) && !word.is_empty()) {
            word.push(c);
        } else if !word.is_empty() {
            out.push(fold(&word));
            word.clear();
        }
    }
    if !word.is_empty() {
        out.push(fold(&word));
    }
    out
}

fn fold(word: &str) -> String {
    // Nearly every word is ASCII: no decomposition needed.
    if word.is_ascii() {
        return word.to_ascii_lowercase();
    }
    word.nfd()
        .filter(|c| !is_combining_mark(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The three searched fields of a message as the local index sees them: text, the first 1,000
/// characters of the tool input, and the tool output (its first 600 and last 200 characters
/// when longer than 800), escape sequences stripped.
pub fn searched_fields(
    text: Option<&str>,
    tool_input: Option<&str>,
    tool_output: Option<&str>,
) -> [String; 3] {
    let strip = |s: &str| trail_store::strip_ansi(s).into_owned();
    let input: Option<String> = tool_input.map(|s| s.chars().take(1000).collect());
    let output = tool_output.map(|s| {
        let n = s.chars().count();
        if n > 800 {
            let head: String = s.chars().take(600).collect();
            let tail: String = s.chars().skip(n - 200).collect();
            format!("{head}\n…\n{tail}")
        } else {
            s.to_string()
        }
    });
    [
        text.map(strip).unwrap_or_default(),
        input.as_deref().map(strip).unwrap_or_default(),
        output.as_deref().map(strip).unwrap_or_default(),
    ]
}

/// The `tsvector` (as PostgreSQL's input text) of a message's three fields. Fields are weighted
/// A (text), B (tool input), C (tool output) for ranking, and a gap of one position between
/// fields keeps a phrase from matching across two of them (FTS5 phrases stay in one column).
pub fn tsvector_text(fields: &[String; 3]) -> String {
    weighted_tsvector_text(&[
        (fields[0].as_str(), 'A'),
        (fields[1].as_str(), 'B'),
        (fields[2].as_str(), 'C'),
    ])
}

/// The `tsvector` (as input text) of a turn's four columns, as the local `turn_search` holds
/// them: prompts A, answers B, tool inputs C, tool outputs D (the local bm25 weighs them 4, 1,
/// 0.5 and 0.25; [`TURN_RANK_WEIGHTS`] gives `ts_rank` the same ratios). A role filter becomes
/// a weight restriction of the query ([`role_weights`]), as it is a column filter locally.
pub fn turn_tsvector_text(columns: &[String; 4]) -> String {
    weighted_tsvector_text(&[
        (columns[0].as_str(), 'A'),
        (columns[1].as_str(), 'B'),
        (columns[2].as_str(), 'C'),
        (columns[3].as_str(), 'D'),
    ])
}

/// `ts_rank`'s weights {D, C, B, A} for a turn's vector: the local bm25 column weights (4, 1,
/// 0.5, 0.25) scaled into PostgreSQL's 0..1.
pub const TURN_RANK_WEIGHTS: &str = "{0.0625, 0.125, 0.25, 1.0}";

/// The turn vector's weights a role searches: what the user typed, what the assistant wrote
/// or called, what tools answered (the local store's column filters).
pub fn role_weights(role: Option<Role>) -> Option<&'static str> {
    match role? {
        Role::User => Some("A"),
        Role::Assistant => Some("BC"),
        Role::Tool => Some("D"),
        Role::System => None,
    }
}

/// The column of a turn a message's text goes to (as the local store's `turn_docs`): prompts,
/// answers (and errors, summaries), tool calls' text with tool inputs, tool results' text with
/// tool outputs.
pub fn turn_column(kind: &str) -> usize {
    match kind {
        "prompt" => 0,
        "tool_call" => 2,
        "tool_result" => 3,
        _ => 1,
    }
}

/// Appends a message's text to a turn column, a line per message (as the local store does, so
/// a phrase may run on from one message to the next in a column, as it may locally).
pub fn push_turn_line(column: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    if !column.is_empty() {
        column.push('\n');
    }
    column.push_str(text);
}

fn weighted_tsvector_text(fields: &[(&str, char)]) -> String {
    let mut lexemes: BTreeMap<String, Vec<(usize, char)>> = BTreeMap::new();
    let mut position = 0usize;
    for &(field, weight) in fields {
        for w in words(field) {
            position += 1;
            if w.len() > MAX_LEXEME_BYTES {
                continue;
            }
            lexemes
                .entry(w)
                .or_default()
                .push((position.min(MAX_POSITION), weight));
        }
        position += 1;
    }
    let mut out = String::new();
    for (lexeme, positions) in lexemes {
        if !out.is_empty() {
            out.push(' ');
        }
        push_quoted(&mut out, &lexeme);
        out.push(':');
        // At most 256 positions per lexeme are kept by PostgreSQL; keep the first ones.
        let mut last = 0;
        let mut first = true;
        for (p, weight) in positions.into_iter().take(256) {
            if p == last {
                continue;
            }
            last = p;
            if !first {
                out.push(',');
            }
            first = false;
            out.push_str(&p.to_string());
            out.push(weight);
        }
    }
    out
}

/// Quotes a lexeme for `tsvector` / `tsquery` input (`'` doubled, `\` escaped).
fn push_quoted(out: &mut String, lexeme: &str) {
    out.push('\'');
    for c in lexeme.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

/// One item of a user query: the local store's lexer's ([`trail_store::lex_query`]), each
/// term split into the words `to_tsvector('simple')` indexes.
#[derive(Debug, Clone, PartialEq)]
enum Lexeme {
    Term { words: Vec<String>, prefix: bool },
    And,
    Or,
    Not,
}

fn lex(q: &str) -> Vec<Lexeme> {
    let mut out: Vec<Lexeme> = trail_store::lex_query(q)
        .into_iter()
        .map(|l| match l {
            trail_store::QueryLexeme::Term { text, prefix } => Lexeme::Term {
                words: words(&text),
                prefix,
            },
            trail_store::QueryLexeme::And => Lexeme::And,
            trail_store::QueryLexeme::Or => Lexeme::Or,
            trail_store::QueryLexeme::Not => Lexeme::Not,
        })
        .collect();
    // A term without a letter or digit holds no word: the local store ignores it too.
    out.retain(|l| !matches!(l, Lexeme::Term { words, .. } if words.is_empty()));
    out
}

/// A query translated: the `tsquery` text, and the words worth marking in a snippet (each with
/// whether it is a prefix).
#[derive(Debug, Clone, PartialEq)]
pub struct TsQuery {
    pub text: String,
    pub marks: Vec<(String, bool)>,
}

/// Translates a query in the local store's syntax (see `trail_store::translate_query`) into
/// `tsquery` input text. A query the local store refuses is refused with its message, so both
/// engines accept the same queries and say the same things about the others.
pub fn translate(q: &str) -> Result<TsQuery, String> {
    translate_in(q, None)
}

/// [`translate`], every lexeme restricted to `weights` (`"A"`, `"BC"`...): the query matches
/// only in those parts of a turn, and `NOT` excludes only what is in them.
pub fn translate_in(q: &str, weights: Option<&str>) -> Result<TsQuery, String> {
    trail_store::translate_query(q)?;
    let lexemes = lex(q);
    let mut marks: Vec<(String, bool)> = Vec::new();
    let mut after_not = false;
    for l in &lexemes {
        match l {
            Lexeme::Term { words, prefix } => {
                if !after_not {
                    let n = words.len();
                    for (i, w) in words.iter().enumerate() {
                        let m = (w.clone(), *prefix && i + 1 == n);
                        if !marks.contains(&m) {
                            marks.push(m);
                        }
                    }
                }
                after_not = false;
            }
            Lexeme::Not => after_not = true,
            Lexeme::And | Lexeme::Or => {}
        }
    }
    // query := group ((AND)? group | NOT group)*; group := term (OR term)*. The local
    // translation succeeded, so the shape is valid.
    let mut out = String::new();
    let mut i = 0;
    let mut first = true;
    while i < lexemes.len() {
        let negate = match lexemes[i] {
            Lexeme::And => {
                i += 1;
                false
            }
            Lexeme::Not => {
                i += 1;
                true
            }
            _ => false,
        };
        let mut alternatives = Vec::new();
        while let Some(Lexeme::Term { words, prefix }) = lexemes.get(i) {
            alternatives.push(phrase(words, *prefix, weights.unwrap_or("")));
            i += 1;
            if lexemes.get(i) == Some(&Lexeme::Or) {
                i += 1;
            } else {
                break;
            }
        }
        if alternatives.is_empty() {
            return Err("the query cannot be read".to_string());
        }
        let group = format!("({})", alternatives.join(" | "));
        if first {
            out = group;
            first = false;
        } else if negate {
            out = format!("({out}) & !{group}");
        } else {
            out = format!("({out}) & {group}");
        }
    }
    Ok(TsQuery { text: out, marks })
}

fn phrase(words: &[String], prefix: bool, weights: &str) -> String {
    let n = words.len();
    let parts: Vec<String> = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let mut s = String::new();
            push_quoted(&mut s, w);
            let star = prefix && i + 1 == n;
            if star || !weights.is_empty() {
                s.push(':');
                if star {
                    s.push('*');
                }
                s.push_str(weights);
            }
            s
        })
        .collect();
    format!("({})", parts.join(" <-> "))
}

/// Whether `word` (folded) matches a mark.
fn marked(word: &str, marks: &[(String, bool)]) -> bool {
    marks.iter().any(|(m, prefix)| {
        if *prefix {
            word.starts_with(m.as_str())
        } else {
            word == m
        }
    })
}

/// Whether a field holds a marked word (the field a hit is shown from).
pub fn field_matches(field: &str, marks: &[(String, bool)]) -> bool {
    words(field).iter().any(|w| marked(w, marks))
}

/// A snippet of `text` around its first marked word: about `max_words` words, matches between
/// `start` and `end`, `…` where text was left out (as the local store's `snippet()` shows it).
pub fn snippet(
    text: &str,
    marks: &[(String, bool)],
    start: char,
    end: char,
    max_words: usize,
) -> String {
    // Word spans by byte offset, the same cut as `words`.
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut open: Option<usize> = None;
    for (i, c) in text.char_indices() {
        let inside = c.is_alphanumeric() || (is_combining_mark(c) && open.is_some());
        match (inside, open) {
            (true, None) => open = Some(i),
            (false, Some(s)) => {
                spans.push((s, i));
                open = None;
            }
            _ => {}
        }
    }
    if let Some(s) = open {
        spans.push((s, text.len()));
    }
    if spans.is_empty() {
        return String::new();
    }
    let hit = spans
        .iter()
        .position(|&(a, b)| marked(&fold(&text[a..b]), marks))
        .unwrap_or(0);
    let first = hit.saturating_sub(max_words / 4);
    let last = (first + max_words).min(spans.len());
    let from = if first == 0 { 0 } else { spans[first].0 };
    let to = if last == spans.len() {
        text.len()
    } else {
        spans[last - 1].1
    };
    let mut out = String::new();
    if first > 0 {
        out.push('…');
    }
    let mut at = from;
    for &(a, b) in &spans[first..last] {
        out.push_str(&text[at..a]);
        if marked(&fold(&text[a..b]), marks) {
            out.push(start);
            out.push_str(&text[a..b]);
            out.push(end);
        } else {
            out.push_str(&text[a..b]);
        }
        at = b;
    }
    out.push_str(&text[at..to]);
    if last < spans.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_cut_as_fts5_unicode61_cuts_them() {
        assert_eq!(words("src/main.rs:12"), ["src", "main", "rs", "12"]);
        assert_eq!(words("Café E0308 foo-bar"), ["cafe", "e0308", "foo", "bar"]);
        assert_eq!(words("  --release  "), ["release"]);
        assert!(words("*** --- ").is_empty());
    }

    #[test]
    fn queries_become_tsqueries() {
        let t = |q: &str| translate(q).unwrap().text;
        assert_eq!(t("cargo test"), "((('cargo'))) & (('test'))");
        assert_eq!(
            t("\"cargo test --release\""),
            "(('cargo' <-> 'test' <-> 'release'))"
        );
        assert_eq!(t("mismatch*"), "(('mismatch':*))");
        assert_eq!(
            t("timeout retry OR backoff"),
            "((('timeout'))) & (('retry') | ('backoff'))"
        );
        assert_eq!(t("a NOT b"), "((('a'))) & !(('b'))");
        assert_eq!(t("it's"), "(('it' <-> 's'))");
        assert!(translate("OR x").is_err());
        assert!(translate("--- ***").is_err());
        let marks = translate("alpha NOT beta gam*").unwrap().marks;
        assert_eq!(marks, [("alpha".into(), false), ("gam".into(), true)]);
    }

    #[test]
    fn tsvectors_keep_fields_apart_and_weighted() {
        let v = tsvector_text(&["fix bug".into(), "bug".into(), String::new()]);
        assert_eq!(v, "'bug':2A,4B 'fix':1A");
    }

    #[test]
    fn a_role_restricts_every_lexeme_to_its_columns() {
        let t = |q: &str, role| translate_in(q, role_weights(role)).unwrap().text;
        assert_eq!(t("a NOT b*", Some(Role::User)), "((('a':A))) & !(('b':*A))");
        assert_eq!(t("\"x y\"", Some(Role::Assistant)), "(('x':BC <-> 'y':BC))");
        assert_eq!(t("x", Some(Role::Tool)), "(('x':D))");
        assert_eq!(t("x", None), "(('x'))");
        let mut turn = [String::new(), String::new(), String::new(), String::new()];
        push_turn_line(&mut turn[turn_column("prompt")], "fix it");
        push_turn_line(&mut turn[turn_column("text")], "done");
        push_turn_line(&mut turn[turn_column("tool_call")], "ls");
        push_turn_line(&mut turn[turn_column("tool_result")], "src");
        push_turn_line(&mut turn[turn_column("error")], "it failed");
        assert_eq!(
            turn_tsvector_text(&turn),
            "'done':4B 'failed':6B 'fix':1A 'it':2A,5B 'ls':8C 'src':10D"
        );
    }

    #[test]
    fn snippets_mark_whole_words() {
        let marks = vec![("main".to_string(), false)];
        let s = snippet("open src/main.rs now", &marks, '[', ']', 24);
        assert_eq!(s, "open src/[main].rs now");
    }

    #[test]
    fn long_fields_are_cut_like_the_local_view() {
        let out: String = "x".repeat(900);
        let [_, _, o] = searched_fields(None, None, Some(&out));
        assert_eq!(o.chars().count(), 600 + 3 + 200);
        let [_, i, _] = searched_fields(None, Some(&"y".repeat(1200)), None);
        assert_eq!(i.len(), 1000);
    }
}
