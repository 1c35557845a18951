//! Turn signatures (`turn_sigs`): for each field of each indexed message of a turn (its text,
//! tool input and tool output, as the index holds them), a Bloom filter of the field's tokens.
//!
//! Why: tier 1 of coherent ranking (`search_rank.rs`) holds the turns where one field of one
//! message holds every word of the query. The index says only which turns may (a column
//! holding every word, a column holding all of the turn's messages of one kind), so each
//! candidate was read from the store's messages, whole: at 10 GiB a known-item query read 119
//! candidates, 3,500 messages, and nine candidates in ten turned out to have their words
//! scattered (tier 2). A signature tells most of those apart without reading a message: when
//! no field's filter holds every word's tokens, no field holds every word. A filter never
//! forgets a token it was given, so "no" is certain and only "maybe" reads the messages.
//!
//! What a filter holds must be a superset of the ASCII tokens FTS5's tokenizer (`unicode61
//! remove_diacritics 2`) reads from the field (a query's words are looked for here only when
//! they are ASCII, `Needles`). Tokens are read in Rust, character by character ([`fold`]):
//! ASCII letters and digits lowercased, Latin letters with diacritics folded as the tokenizer
//! folds them, diacritics dropped, and separators and letters of other scripts cutting the
//! token. A field with a character that reading does not know (a fullwidth letter, a symbol
//! of a rarer block) gets no filter, only a mark that it may hold anything: it is read.
//!
//! The filters also say which of a turn's messages to read: a candidate of tier 1 whose
//! filters say "maybe" has only those messages read whose fields may hold every word, and a
//! hit's snippet reads only those that may hold any word.
//!
//! Layout of a turn's blob: for each of its indexed messages in `seq` order (those
//! `turn_docs` builds the turn's row from), one byte, the number of its non-empty fields (0 to
//! 3), then one entry per field. An entry is one byte `b` and `8 << (b - 1)` bytes of filter
//! (`b` = 0: a field that may hold anything, no bytes). Each token sets [`PROBES`] bits of its
//! filter, from its 64-bit xxh3 hash (double hashing).

use xxhash_rust::xxh3::xxh3_64;

/// Bits each token sets.
const PROBES: u32 = 3;

/// Bits of filter per distinct token (with three probes, about 3 % false "maybe" per token
/// the field does not hold).
const BITS_PER_TOKEN: usize = 8;

/// The largest filter: 2^(10 - 1) words of 64 bits (4 KiB). A field with more than 4,096
/// distinct tokens (a long pasted log) says "maybe" more often.
const MAX_SIZE_BYTE: u8 = 10;

/// Starts a message in a turn's blob: its count of fields, none yet. Returns where the count
/// is, for [`push_field`].
pub(crate) fn push_message(sigs: &mut Vec<u8>) -> usize {
    sigs.push(0);
    sigs.len() - 1
}

/// Adds the filter of one field (as the index holds it: escape sequences stripped, tool fields
/// capped) to a turn's blob, in the message whose count is at `message`.
pub(crate) fn push_field(sigs: &mut Vec<u8>, message: usize, field: &str) {
    sigs[message] += 1;
    let Some(mut hashes) = token_hashes(field) else {
        sigs.push(0);
        return;
    };
    hashes.sort_unstable();
    hashes.dedup();
    let bits = (hashes.len() * BITS_PER_TOKEN).max(64).next_power_of_two();
    let size_byte = ((bits / 64).trailing_zeros() as u8 + 1).min(MAX_SIZE_BYTE);
    sigs.push(size_byte);
    let start = sigs.len();
    sigs.resize(start + filter_bytes(size_byte), 0);
    let filter = &mut sigs[start..];
    let mask = (filter.len() * 8 - 1) as u32;
    for h in hashes {
        for bit in probes(h, mask) {
            filter[(bit / 8) as usize] |= 1 << (bit % 8);
        }
    }
}

/// The bytes of a filter whose entry's size byte is `size_byte` (1 to [`MAX_SIZE_BYTE`]).
fn filter_bytes(size_byte: u8) -> usize {
    8 << (size_byte - 1)
}

/// The bits a token of hash `h` sets in a filter of `mask + 1` bits.
fn probes(h: u64, mask: u32) -> impl Iterator<Item = u32> {
    let (a, b) = (h as u32, (h >> 32) as u32 | 1);
    (0..PROBES).map(move |i| a.wrapping_add(i.wrapping_mul(b)) & mask)
}

/// The hashes of a superset of the tokens FTS5 reads in `field` that are ASCII (the only ones
/// an ASCII word of a query can match), or `None` when only FTS5 can say (a character
/// [`fold`] does not know).
fn token_hashes(field: &str) -> Option<Vec<u64>> {
    let mut hashes = Vec::new();
    let mut token: Vec<u8> = Vec::new();
    let mut end = |token: &mut Vec<u8>| {
        if !token.is_empty() {
            hashes.push(xxh3_64(token));
            token.clear();
        }
    };
    for c in field.chars() {
        match fold(c)? {
            Fold::Letter(b) => token.push(b),
            Fold::Drop => {}
            Fold::Split => end(&mut token),
        }
    }
    end(&mut token);
    Some(hashes)
}

/// What FTS5's tokenizer (`unicode61 remove_diacritics 2`) makes of a character, for the ASCII
/// tokens it reads.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fold {
    /// A letter or digit that folds to this ASCII one.
    Letter(u8),
    /// A diacritic the tokenizer drops from inside a token.
    Drop,
    /// A separator, or a letter that folds to one beyond ASCII: either way no ASCII token
    /// goes across it. (Where the tokenizer does not cut there, the pieces on either side are
    /// extra tokens in the filter, which only makes "maybe" more frequent.)
    Split,
}

/// How the tokenizer folds `c`, or `None` when that is not known here. Every answer is
/// asked of FTS5 by `every_fold_is_fts5s` for each character it covers.
fn fold(c: char) -> Option<Fold> {
    use Fold::{Letter as L, Split as S};
    if c.is_ascii() {
        return Some(if c.is_ascii_alphanumeric() {
            L(c.to_ascii_lowercase() as u8)
        } else {
            S
        });
    }
    if separates(c) || other_script(c) {
        return Some(S);
    }
    let cp = c as u32;
    LATIN
        .binary_search_by(|&(from, to, _)| {
            if to < cp {
                std::cmp::Ordering::Less
            } else if from > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .ok()
        .map(|i| LATIN[i].2)
}

/// Latin letters with diacritics (Latin-1, Latin Extended-A and -B, Latin Extended
/// Additional) and the combining diacritics: what the tokenizer folds each to, by ranges of
/// code points (as FTS5 answers, `every_fold_is_fts5s`).
#[rustfmt::skip]
const LATIN: &[(u32, u32, Fold)] = {
    use Fold::{Drop as D, Letter as L, Split as S};
    &[
    (0x00C0, 0x00C5, L(b'a')),
    (0x00C6, 0x00C6, S),
    (0x00C7, 0x00C7, L(b'c')),
    (0x00C8, 0x00CB, L(b'e')),
    (0x00CC, 0x00CF, L(b'i')),
    (0x00D0, 0x00D0, S),
    (0x00D1, 0x00D1, L(b'n')),
    (0x00D2, 0x00D6, L(b'o')),
    (0x00D7, 0x00D8, S),
    (0x00D9, 0x00DC, L(b'u')),
    (0x00DD, 0x00DD, L(b'y')),
    (0x00DE, 0x00DF, S),
    (0x00E0, 0x00E5, L(b'a')),
    (0x00E6, 0x00E6, S),
    (0x00E7, 0x00E7, L(b'c')),
    (0x00E8, 0x00EB, L(b'e')),
    (0x00EC, 0x00EF, L(b'i')),
    (0x00F0, 0x00F0, S),
    (0x00F1, 0x00F1, L(b'n')),
    (0x00F2, 0x00F6, L(b'o')),
    (0x00F7, 0x00F8, S),
    (0x00F9, 0x00FC, L(b'u')),
    (0x00FD, 0x00FD, L(b'y')),
    (0x00FE, 0x00FE, S),
    (0x00FF, 0x00FF, L(b'y')),
    (0x0100, 0x0105, L(b'a')),
    (0x0106, 0x010D, L(b'c')),
    (0x010E, 0x010F, L(b'd')),
    (0x0110, 0x0111, S),
    (0x0112, 0x011B, L(b'e')),
    (0x011C, 0x0123, L(b'g')),
    (0x0124, 0x0125, L(b'h')),
    (0x0126, 0x0127, S),
    (0x0128, 0x0130, L(b'i')),
    (0x0131, 0x0133, S),
    (0x0134, 0x0135, L(b'j')),
    (0x0136, 0x0137, L(b'k')),
    (0x0138, 0x0138, S),
    (0x0139, 0x013E, L(b'l')),
    (0x013F, 0x0142, S),
    (0x0143, 0x0148, L(b'n')),
    (0x0149, 0x014B, S),
    (0x014C, 0x0151, L(b'o')),
    (0x0152, 0x0153, S),
    (0x0154, 0x0159, L(b'r')),
    (0x015A, 0x0161, L(b's')),
    (0x0162, 0x0165, L(b't')),
    (0x0166, 0x0167, S),
    (0x0168, 0x0173, L(b'u')),
    (0x0174, 0x0175, L(b'w')),
    (0x0176, 0x0178, L(b'y')),
    (0x0179, 0x017E, L(b'z')),
    (0x017F, 0x017F, L(b's')),
    (0x0180, 0x019F, S),
    (0x01A0, 0x01A1, L(b'o')),
    (0x01A2, 0x01AE, S),
    (0x01AF, 0x01B0, L(b'u')),
    (0x01B1, 0x01CC, S),
    (0x01CD, 0x01CE, L(b'a')),
    (0x01CF, 0x01D0, L(b'i')),
    (0x01D1, 0x01D2, L(b'o')),
    (0x01D3, 0x01DC, L(b'u')),
    (0x01DD, 0x01DD, S),
    (0x01DE, 0x01DF, L(b'a')),
    (0x01E0, 0x01E5, S),
    (0x01E6, 0x01E7, L(b'g')),
    (0x01E8, 0x01E9, L(b'k')),
    (0x01EA, 0x01ED, L(b'o')),
    (0x01EE, 0x01EF, S),
    (0x01F0, 0x01F0, L(b'j')),
    (0x01F1, 0x01F3, S),
    (0x01F4, 0x01F5, L(b'g')),
    (0x01F6, 0x01F7, S),
    (0x01F8, 0x01F9, L(b'n')),
    (0x01FA, 0x01FB, L(b'a')),
    (0x01FC, 0x01FF, S),
    (0x0200, 0x0203, L(b'a')),
    (0x0204, 0x0207, L(b'e')),
    (0x0208, 0x020B, L(b'i')),
    (0x020C, 0x020F, L(b'o')),
    (0x0210, 0x0213, L(b'r')),
    (0x0214, 0x0217, L(b'u')),
    (0x0218, 0x0219, L(b's')),
    (0x021A, 0x021B, L(b't')),
    (0x021C, 0x021D, S),
    (0x021E, 0x021F, L(b'h')),
    (0x0220, 0x0225, S),
    (0x0226, 0x0227, L(b'a')),
    (0x0228, 0x0229, L(b'e')),
    (0x022A, 0x0231, L(b'o')),
    (0x0232, 0x0233, L(b'y')),
    (0x0234, 0x024F, S),
    (0x0300, 0x0304, D),
    (0x0305, 0x0305, S),
    (0x0306, 0x030C, D),
    (0x030D, 0x030E, S),
    (0x030F, 0x030F, D),
    (0x0310, 0x0310, S),
    (0x0311, 0x0311, D),
    (0x0312, 0x031A, S),
    (0x031B, 0x031B, D),
    (0x031C, 0x0322, S),
    (0x0323, 0x0328, D),
    (0x0329, 0x032C, S),
    (0x032D, 0x032E, D),
    (0x032F, 0x032F, S),
    (0x0330, 0x0331, D),
    (0x0332, 0x036F, S),
    (0x1E00, 0x1E01, L(b'a')),
    (0x1E02, 0x1E07, L(b'b')),
    (0x1E08, 0x1E09, L(b'c')),
    (0x1E0A, 0x1E13, L(b'd')),
    (0x1E14, 0x1E1D, L(b'e')),
    (0x1E1E, 0x1E1F, L(b'f')),
    (0x1E20, 0x1E21, L(b'g')),
    (0x1E22, 0x1E2B, L(b'h')),
    (0x1E2C, 0x1E2F, L(b'i')),
    (0x1E30, 0x1E35, L(b'k')),
    (0x1E36, 0x1E3D, L(b'l')),
    (0x1E3E, 0x1E43, L(b'm')),
    (0x1E44, 0x1E4B, L(b'n')),
    (0x1E4C, 0x1E53, L(b'o')),
    (0x1E54, 0x1E57, L(b'p')),
    (0x1E58, 0x1E5F, L(b'r')),
    (0x1E60, 0x1E69, L(b's')),
    (0x1E6A, 0x1E71, L(b't')),
    (0x1E72, 0x1E7B, L(b'u')),
    (0x1E7C, 0x1E7F, L(b'v')),
    (0x1E80, 0x1E89, L(b'w')),
    (0x1E8A, 0x1E8D, L(b'x')),
    (0x1E8E, 0x1E8F, L(b'y')),
    (0x1E90, 0x1E95, L(b'z')),
    (0x1E96, 0x1E96, L(b'h')),
    (0x1E97, 0x1E97, L(b't')),
    (0x1E98, 0x1E98, L(b'w')),
    (0x1E99, 0x1E99, L(b'y')),
    (0x1E9A, 0x1E9A, S),
    (0x1E9B, 0x1E9B, L(b's')),
    (0x1E9C, 0x1E9F, S),
    (0x1EA0, 0x1EB7, L(b'a')),
    (0x1EB8, 0x1EC7, L(b'e')),
    (0x1EC8, 0x1ECB, L(b'i')),
    (0x1ECC, 0x1EE3, L(b'o')),
    (0x1EE4, 0x1EF1, L(b'u')),
    (0x1EF2, 0x1EF9, L(b'y')),
    (0x1EFA, 0x1EFF, S),
    ]
};

/// Characters beyond ASCII that the tokenizer reads as separators (none is a letter, a digit
/// or a mark): Latin-1's spaces, punctuation and signs, general punctuation, currency signs,
/// arrows, mathematical operators, technical symbols, box drawing, shapes, miscellaneous
/// symbols and dingbats, CJK punctuation, fullwidth punctuation, emoji and the variation
/// selectors that follow them (`⚠️`), combining marks for symbols (a keycap), and the
/// replacement characters.
fn separates(c: char) -> bool {
    matches!(c as u32,
        0xA0..=0xA9 | 0xAB..=0xB1 | 0xB4 | 0xB6..=0xB8 | 0xBB | 0xBF
        | 0x2000..=0x206F
        | 0x20A0..=0x20C0
        | 0x2190..=0x245F
        | 0x2500..=0x2775
        | 0x2794..=0x27FF
        | 0x2900..=0x2BFF
        | 0x3000..=0x3004 | 0x3008..=0x3020 | 0x3030
        | 0x20D0..=0x20FF
        | 0xFE00..=0xFE19 | 0xFE30..=0xFE4F | 0xFFFC..=0xFFFD
        | 0xFF01..=0xFF0F | 0xFF1A..=0xFF20 | 0xFF3B..=0xFF40 | 0xFF5B..=0xFF65
        | 0x1F000..=0x1F0FF | 0x1F300..=0x1FAFF)
}

/// Scripts whose letters all fold to letters beyond ASCII (Greek, Cyrillic, Armenian, Hebrew,
/// Arabic, the Indic scripts, Thai, Georgian, Hangul, kana and CJK ideographs): to the ASCII
/// tokens, each of their characters is a [`Fold::Split`].
fn other_script(c: char) -> bool {
    matches!(c as u32,
        0x0370..=0x058F | 0x0590..=0x06FF | 0x0900..=0x0E7F | 0x10A0..=0x10FF
        | 0x1100..=0x11FF | 0x2E80..=0x2FDF | 0x3040..=0x31FF | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// What a field is asked, as token hashes: for each group of words (words joined by OR), its
/// words' tokens (a phrase's every token; a prefix's last token asks nothing); a field may
/// hold every word when it may hold a word of each group, or any word when it may hold one
/// word of some group.
#[derive(Debug, Clone)]
pub(crate) struct Probe {
    groups: Vec<Vec<Vec<u64>>>,
    every: bool,
}

impl Probe {
    /// `groups`: for each group, each of its words as the tokenizer reads it (its tokens, and
    /// whether the last is a prefix). `every`: a field must hold every group, else any.
    pub(crate) fn of<'a>(
        groups: impl IntoIterator<Item = Vec<(&'a [String], bool)>>,
        every: bool,
    ) -> Probe {
        let groups = groups
            .into_iter()
            .map(|g| {
                g.into_iter()
                    .map(|(tokens, prefix)| {
                        let whole = if prefix {
                            &tokens[..tokens.len().saturating_sub(1)]
                        } else {
                            tokens
                        };
                        whole.iter().map(|t| xxh3_64(t.as_bytes())).collect()
                    })
                    .collect()
            })
            .collect();
        Probe { groups, every }
    }

    /// For each message of a turn whose blob is `sigs`, whether one of its fields may hold
    /// what is asked. False only when each of its fields' filters misses a token of every
    /// word asked. `None` when the blob is not one this reads (cut short, or longer).
    pub(crate) fn messages(&self, sigs: &[u8]) -> Option<Vec<bool>> {
        let mut out = Vec::new();
        let mut rest = sigs;
        while let Some((&fields, after)) = rest.split_first() {
            rest = after;
            let mut may = false;
            for _ in 0..fields {
                let (&size_byte, after) = rest.split_first()?;
                let bytes = match size_byte {
                    0 => 0,
                    1..=MAX_SIZE_BYTE => filter_bytes(size_byte),
                    _ => return None,
                };
                let filter = after.get(..bytes)?;
                may = may || size_byte == 0 || self.held_by(filter);
                rest = &after[bytes..];
            }
            out.push(may);
        }
        Some(out)
    }

    fn held_by(&self, filter: &[u8]) -> bool {
        let mask = (filter.len() * 8 - 1) as u32;
        let set =
            |h: u64| probes(h, mask).all(|bit| filter[(bit / 8) as usize] & (1 << (bit % 8)) != 0);
        let held = |g: &Vec<Vec<u64>>| g.iter().any(|word| word.iter().all(|&h| set(h)));
        if self.every {
            self.groups.iter().all(held)
        } else {
            self.groups.iter().any(held)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tokens FTS5's tokenizer reads in `text`, as the index's tables are made.
    fn fts5_tokens(conn: &rusqlite::Connection, text: &str) -> Vec<String> {
        conn.execute("DELETE FROM t", []).unwrap();
        conn.execute("INSERT INTO t (rowid, x) VALUES (1, ?1)", [text])
            .unwrap();
        let mut stmt = conn
            .prepare("SELECT term FROM v WHERE doc = 1 ORDER BY offset")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
    }

    fn vocab() -> rusqlite::Connection {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'unicode61 remove_diacritics 2');
             CREATE VIRTUAL TABLE v USING fts5vocab(t, instance);",
        )
        .unwrap();
        conn
    }

    /// Every character [`fold`] knows is read by FTS5 as it says: between two ASCII letters,
    /// a separator cuts the token, a letter folds into it (a diacritic is dropped from it),
    /// and a letter beyond ASCII leaves no ASCII token there.
    #[test]
    fn every_fold_is_fts5s() {
        let conn = vocab();
        let mut wrong = Vec::new();
        for c in (0x80..=0x2FFFF).filter_map(char::from_u32) {
            let Some(f) = fold(c) else { continue };
            let tokens = fts5_tokens(&conn, &format!("ab{c}cd"));
            let right = match f {
                Fold::Letter(b) => tokens == [format!("ab{}cd", b as char)],
                Fold::Drop => tokens == ["abcd"],
                Fold::Split => {
                    tokens == ["ab", "cd"] || (tokens.len() == 1 && !tokens[0].is_ascii())
                }
            };
            if !right {
                wrong.push(format!("U+{:04X} {f:?}: {tokens:?}", c as u32));
            }
        }
        assert!(wrong.is_empty(), "FTS5 reads otherwise: {wrong:?}");
    }

    /// A probe asking every group of `q` (each word: its tokens separated by spaces, and
    /// whether the last is a prefix), or any word when `every` is false.
    fn probe_of(q: &[&[(&str, bool)]], every: bool) -> Probe {
        let owned: Vec<Vec<(Vec<String>, bool)>> = q
            .iter()
            .map(|g| {
                g.iter()
                    .map(|(w, prefix)| (w.split(' ').map(str::to_string).collect(), *prefix))
                    .collect()
            })
            .collect();
        Probe::of(
            owned
                .iter()
                .map(|g| g.iter().map(|(t, p)| (t.as_slice(), *p)).collect()),
            every,
        )
    }

    fn probe(q: &[&[(&str, bool)]]) -> Probe {
        probe_of(q, true)
    }

    /// A turn's blob of messages, each a list of fields.
    fn turn(messages: &[&[&str]]) -> Vec<u8> {
        let mut out = Vec::new();
        for fields in messages {
            let at = push_message(&mut out);
            for f in *fields {
                push_field(&mut out, at, f);
            }
        }
        out
    }

    /// A turn whose messages each have one field.
    fn sigs(fields: &[&str]) -> Vec<u8> {
        let messages: Vec<&[&str]> = fields.iter().map(std::slice::from_ref).collect();
        turn(&messages)
    }

    /// Whether some message may hold what `q` asks (a blob it cannot read: maybe).
    fn anywhere(q: &Probe, blob: &[u8]) -> bool {
        q.messages(blob).is_none_or(|m| m.contains(&true))
    }

    /// Words in one field are found; the same words spread over two fields are not (these
    /// filters are far from full); a field with a character not known here may hold
    /// anything.
    #[test]
    fn a_field_holding_every_word_is_told_from_words_spread_over_fields() {
        let q = probe(&[&[("cargo", false)], &[("build", false), ("check", false)]]);
        assert!(anywhere(&q, &sigs(&["why does Cargo check fail", "no"])));
        assert!(!anywhere(&q, &sigs(&["cargo fails", "the build fails"])));
        assert!(!anywhere(&q, &sigs(&[])));
        // Latin letters fold as FTS5 folds them; a character not known here may be anything.
        let cafe = probe(&[&[("cafe", false)], &[("build", false)]]);
        assert!(anywhere(&cafe, &sigs(&["Café—BUILD"])));
        assert!(!anywhere(&cafe, &sigs(&["cafébuild"])));
        assert!(anywhere(
            &q,
            &sigs(&["cargo fails", "ｆｕｌｌｗｉｄｔｈ build"])
        ));
        // Separators beyond ASCII cut tokens as FTS5 does.
        assert!(anywhere(&q, &sigs(&["cargo—build ✅"])));
        // A phrase asks each of its tokens; a prefix's last token asks nothing.
        let phrase = probe(&[&[("src main", false)], &[("depl", true)]]);
        assert!(anywhere(&phrase, &sigs(&["see src/main.rs"])));
        assert!(!anywhere(&phrase, &sigs(&["see src/lib.rs"])));
        // A blob cut short, or with a filter size this does not write, is not read.
        let mut cut = sigs(&["unrelated words"]);
        cut.pop();
        assert_eq!(q.messages(&cut), None);
        assert_eq!(q.messages(&[1, 11]), None);
    }

    /// Each message is answered on its own, whatever its number of fields (none included):
    /// every word in one of its fields, or any word in any of them.
    #[test]
    fn each_message_is_answered_by_its_own_fields() {
        let blob = turn(&[
            &["cargo build", "fails"],
            &[],
            &["nothing here", "cargo", "build fails"],
            &["cargo build fails"],
        ]);
        let every = probe(&[
            &[("cargo", false)],
            &[("build", false)],
            &[("fails", false)],
        ]);
        assert_eq!(every.messages(&blob), Some(vec![false, false, false, true]));
        let any = probe_of(&[&[("fails", false)], &[("nowhere", false)]], false);
        assert_eq!(any.messages(&blob), Some(vec![true, false, true, true]));
    }

    proptest::proptest! {
        /// A field's filter holds every ASCII token FTS5 reads in it.
        #[test]
        fn a_filter_holds_every_token_fts5_reads(
            text in "(Build|fails|x1|é|Ü|Æ|ß|—|’|…|✅|😀|⚠\u{fe0f}|²|ª|д|\u{301}|\u{305}|\u{a0}|\u{200b}|日本|[-/. _:\\n]|[a-z]{1,3}|[\u{80}-\u{2ff}]){0,16}",
        ) {
            let conn = vocab();
            let tokens = fts5_tokens(&conn, &text);
            let blob = sigs(&[&text]);
            proptest::prop_assert_eq!(blob[0], 1, "one field");
            if let Some(ours) = token_hashes(&text) {
                for t in tokens.iter().filter(|t| t.is_ascii()) {
                    proptest::prop_assert!(ours.contains(&xxh3_64(t.as_bytes())), "{:?} lost from {:?}", t, text);
                }
            }
            for t in tokens.iter().filter(|t| t.is_ascii()) {
                let q = probe(&[&[(t.as_str(), false)]]);
                proptest::prop_assert_eq!(q.messages(&blob), Some(vec![true]), "{:?} lost from {:?}", t, text);
            }
        }
    }
}
