//! Coherent ranking is exact (issue 43): on a store of a few thousand turns whose prompts,
//! answers, tool inputs and tool outputs hold the query's words together, near each other,
//! spread out or in part, the top 10 of `Store::search` are the top 10 of a brute-force scorer
//! over every match, written here from the words the test placed: tier (all words in the
//! prompt / all in one message / spread over the turn); in the prompt tier, for two words or
//! more, the prompt's own bm25 among the tier's prompts, then the words near each other, and for
//! one word the prompt's own bm25 among every prompt; then FTS5's bm25 of the turn with the
//! index's column weights, then the newest.

use std::collections::HashMap;

use trail_model::{Message, MessageKind, Role, Session, SessionId, SessionMeta, SourceKind};
use trail_store::{FileRecord, SearchOptions, Store};

const SESSIONS: u32 = 40;
const TURNS: u32 = 75;
const QUERY_WORDS: [&str; 3] = ["alpha", "bravo", "charlie"];
/// The index's column weights: prompt, answer, tool input, tool output.
const WEIGHTS: [f64; 4] = [4.0, 1.0, 0.5, 0.25];

/// A small deterministic generator (no dependency, same numbers on every run).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Filler words and, sometimes, some or all of the query's words: side by side, or at least
/// 15 words apart (so that "near" never depends on where a window ends).
fn field(rng: &mut Lcg, min: u64, spread: u64) -> Vec<String> {
    let mut words: Vec<String> = (0..min + rng.next(spread))
        .map(|_| format!("f{}", rng.next(300)))
        .collect();
    if rng.next(10) < 4 {
        let mut put: Vec<&str> = QUERY_WORDS
            .iter()
            .copied()
            .filter(|_| rng.next(3) > 0)
            .collect();
        if put.is_empty() {
            put.push(QUERY_WORDS[rng.next(3) as usize]);
        }
        if rng.next(2) == 0 {
            let at = rng.next(words.len() as u64 + 1) as usize;
            for (k, w) in put.iter().enumerate() {
                words.insert(at + k, w.to_string());
            }
        } else {
            for (k, w) in put.iter().enumerate() {
                let at = (k * 16).min(words.len());
                words.insert(at, w.to_string());
                for _ in 0..16 {
                    words.insert(at + 1, format!("f{}", rng.next(300)));
                }
            }
        }
    }
    words
}

/// One message of a turn as the test knows it: its index column and its words.
struct Part {
    column: usize,
    words: Vec<String>,
}

struct Turn {
    session: String,
    source: SourceKind,
    turn: i64,
    parts: Vec<Part>,
}

impl Turn {
    fn count(&self, word: &str, column: usize) -> f64 {
        self.parts
            .iter()
            .filter(|p| p.column == column)
            .map(|p| p.words.iter().filter(|w| *w == word).count())
            .sum::<usize>() as f64
    }

    fn has(&self, word: &str) -> bool {
        (0..4).any(|c| self.count(word, c) > 0.0)
    }

    fn length(&self) -> f64 {
        self.parts.iter().map(|p| p.words.len()).sum::<usize>() as f64
    }
}

/// The tier of a matching turn for `words`: 0 all in the prompt, 1 all in one message, 2
/// spread out. One word: 0 or 1.
fn tier(t: &Turn, words: &[&str]) -> u8 {
    let holds = |p: &Part| words.iter().all(|w| p.words.iter().any(|x| x == w));
    if t.parts.iter().any(|p| p.column == 0 && holds(p)) {
        0
    } else if t.parts.iter().any(holds) {
        1
    } else {
        2
    }
}

fn prompt(t: &Turn) -> &[String] {
    &t.parts.iter().find(|p| p.column == 0).unwrap().words
}

/// The order within the prompt tier for two words or more, for each of `members` (the tier's
/// turns that pass the filters): FTS5's bm25 (fts5_aux.c) of the prompt alone, among the
/// members' prompts (so N, the words' document counts and the mean length are theirs: every
/// member holds every word, so each word's idf is FTS5's floor, 1e-6), then 0 when the words
/// are near each other in the prompt, else 1.
fn prompt_keys(turns: &[Turn], members: &[usize], words: &[&str]) -> Vec<Option<(f64, u8)>> {
    let (k1, b) = (1.2, 0.75);
    let n_docs = members.len() as f64;
    let avgdl = members
        .iter()
        .map(|&i| prompt(&turns[i]).len() as f64)
        .sum::<f64>()
        / n_docs;
    let idf: Vec<f64> = words
        .iter()
        .map(|w| {
            let n = members
                .iter()
                .filter(|&&i| prompt(&turns[i]).iter().any(|x| x == w))
                .count() as f64;
            let idf = ((n_docs - n + 0.5) / (n + 0.5)).ln();
            if idf <= 0.0 {
                1e-6
            } else {
                idf
            }
        })
        .collect();
    let mut keys = vec![None; turns.len()];
    if members.len() > trail_store::PROMPT_SCORE_MAX {
        // Too many to score: every member's score is the same, proximity decides.
        for &i in members {
            keys[i] = Some((f64::INFINITY, u8::from(!near(prompt(&turns[i]), words))));
        }
        return keys;
    }
    for &i in members {
        let p = prompt(&turns[i]);
        let dl = p.len() as f64;
        let score = -words
            .iter()
            .zip(&idf)
            .map(|(w, idf)| {
                let f = p.iter().filter(|x| x == w).count() as f64;
                idf * (f * (k1 + 1.0)) / (f + k1 * (1.0 - b + b * dl / avgdl))
            })
            .sum::<f64>();
        keys[i] = Some((score, u8::from(!near(p, words))));
    }
    keys
}

/// The order within the prompt tier for one word, for each of `members`: FTS5's bm25 of the
/// prompt alone on an index of every turn's prompt (so N, the word's document count and the
/// mean length are those of all the prompts, whatever the filters), then 1 (one word is never
/// "near" others).
fn prompt_index_keys(turns: &[Turn], members: &[usize], word: &str) -> Vec<Option<(f64, u8)>> {
    let (k1, b) = (1.2, 0.75);
    let n_docs = turns.len() as f64;
    let avgdl = turns.iter().map(|t| prompt(t).len() as f64).sum::<f64>() / n_docs;
    let n = turns
        .iter()
        .filter(|t| prompt(t).iter().any(|x| x == word))
        .count() as f64;
    let idf = ((n_docs - n + 0.5) / (n + 0.5)).ln();
    let idf = if idf <= 0.0 { 1e-6 } else { idf };
    let mut keys = vec![None; turns.len()];
    for &i in members {
        let p = prompt(&turns[i]);
        let f = p.iter().filter(|x| *x == word).count() as f64;
        let dl = p.len() as f64;
        let score = -idf * (f * (k1 + 1.0)) / (f + k1 * (1.0 - b + b * dl / avgdl));
        keys[i] = Some((score, 1));
    }
    keys
}

/// Whether some window of `words` holds every one of `query`, with at most 10 other tokens
/// between the first and the last (FTS5's `NEAR(..., 10)` for one-word phrases).
fn near(words: &[String], query: &[&str]) -> bool {
    let positions: Vec<Vec<usize>> = query
        .iter()
        .map(|q| (0..words.len()).filter(|&i| words[i] == *q).collect())
        .collect();
    words.iter().enumerate().any(|(start, _)| {
        positions.iter().all(|ps| ps.iter().any(|&p| p >= start))
            && positions
                .iter()
                .map(|ps| {
                    ps.iter()
                        .copied()
                        .find(|&p| p >= start)
                        .unwrap_or(usize::MAX)
                })
                .max()
                .is_some_and(|end| end - start < query.len() + 10)
    })
}

/// FTS5's bm25 (fts5_aux.c) over the whole turn with the index's column weights, summed over
/// the query's words; infinite for a turn that does not hold them all.
fn bm25(turns: &[Turn], words: &[&str]) -> Vec<f64> {
    let (k1, b) = (1.2, 0.75);
    let n_docs = turns.len() as f64;
    let avgdl = turns.iter().map(Turn::length).sum::<f64>() / n_docs;
    let idf: Vec<f64> = words
        .iter()
        .map(|w| {
            let n = turns.iter().filter(|t| t.has(w)).count() as f64;
            let idf = ((n_docs - n + 0.5) / (n + 0.5)).ln();
            if idf <= 0.0 {
                1e-6
            } else {
                idf
            }
        })
        .collect();
    turns
        .iter()
        .map(|t| {
            if !words.iter().all(|w| t.has(w)) {
                return f64::INFINITY;
            }
            let dl = t.length();
            -words
                .iter()
                .zip(&idf)
                .map(|(w, idf)| {
                    let f: f64 = (0..4).map(|c| WEIGHTS[c] * t.count(w, c)).sum();
                    idf * (f * (k1 + 1.0)) / (f + k1 * (1.0 - b + b * dl / avgdl))
                })
                .sum::<f64>()
        })
        .collect()
}

fn message(seq: u32, role: Role, kind: MessageKind, turn: u32) -> Message {
    Message {
        seq,
        role: Some(role),
        kind: Some(kind),
        turn_index: Some(turn),
        on_main_chain: true,
        timestamp: Some(format!(
            "2026-01-01T00:{:02}:{:02}Z",
            (seq / 60) % 60,
            seq % 60
        )),
        ..Message::default()
    }
}

/// A turn's messages: a prompt, one to three answers, zero to two tool calls with their
/// outputs; the test's record of each message's words.
fn turn_messages(rng: &mut Lcg, turn: u32, seq: &mut u32) -> (Vec<Message>, Vec<Part>) {
    let mut messages = Vec::new();
    let mut parts = Vec::new();
    let mut push = |role, kind, column: usize, words: Vec<String>, seq: &mut u32| {
        let mut m = message(*seq, role, kind, turn);
        let text = words.join(" ");
        match column {
            2 => {
                m.tool_name = Some("Bash".into());
                m.tool_input = Some(text);
            }
            3 => m.tool_output = Some(text),
            _ => m.text = text,
        }
        messages.push(m);
        parts.push(Part { column, words });
        *seq += 1;
    };
    push(Role::User, MessageKind::Prompt, 0, field(rng, 8, 30), seq);
    for _ in 0..rng.next(3) {
        push(
            Role::Assistant,
            MessageKind::ToolCall,
            2,
            field(rng, 3, 12),
            seq,
        );
        push(
            Role::Tool,
            MessageKind::ToolResult,
            3,
            field(rng, 10, 50),
            seq,
        );
    }
    for _ in 0..1 + rng.next(3) {
        push(
            Role::Assistant,
            MessageKind::Text,
            1,
            field(rng, 5, 40),
            seq,
        );
    }
    (messages, parts)
}

fn build() -> (tempfile::TempDir, Store, Vec<Turn>) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let mut rng = Lcg(43);
    let mut turns = Vec::new();
    let mut batch = Vec::new();
    for n in 0..SESSIONS {
        let id = format!("00000000-0000-4000-8000-{n:012}");
        let source = if n % 2 == 0 {
            SourceKind::Codex
        } else {
            SourceKind::GeminiCli
        };
        let mut s = Session::new(SessionMeta::new(SessionId::new(&id), source, &id));
        s.meta.created_at = Some("2026-01-01T00:00:00Z".into());
        let mut seq = 0;
        for t in 0..TURNS {
            let (messages, parts) = turn_messages(&mut rng, t, &mut seq);
            s.messages.extend(messages);
            turns.push(Turn {
                session: id.clone(),
                source,
                turn: t as i64,
                parts,
            });
        }
        s.turn_count = TURNS;
        batch.push(FileRecord {
            path: format!("/nowhere/{n}.jsonl"),
            source: Some(source),
            sessions: vec![s],
            bytes_parsed: 1,
            lines: 1,
            ..FileRecord::default()
        });
        if batch.len() == 10 {
            store.write_batch(std::mem::take(&mut batch)).unwrap();
        }
    }
    store.write_batch(batch).unwrap();
    (dir, store, turns)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The brute force's order of the matches `keep` lets through: each match's tier, prompt key
/// (prompt tier, two words or more) and bm25 of the turn, and the matches best first.
struct Brute {
    tiers: Vec<u8>,
    keys: Vec<Option<(f64, u8)>>,
    scores: Vec<f64>,
    order: Vec<usize>,
}

impl Brute {
    fn of(turns: &[Turn], words: &[&str], keep: impl Fn(&Turn) -> bool) -> Brute {
        let scores = bm25(turns, words);
        let tiers: Vec<u8> = turns.iter().map(|t| tier(t, words)).collect();
        let mut order: Vec<usize> = (0..turns.len())
            .filter(|&i| scores[i].is_finite() && keep(&turns[i]))
            .collect();
        let members: Vec<usize> = order.iter().copied().filter(|&i| tiers[i] == 0).collect();
        let keys = if words.len() >= 2 {
            prompt_keys(turns, &members, words)
        } else {
            prompt_index_keys(turns, &members, words[0])
        };
        order.sort_by(|&a, &b| {
            tiers[a]
                .cmp(&tiers[b])
                .then_with(|| match (keys[a], keys[b]) {
                    (Some(x), Some(y)) => x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)),
                    _ => std::cmp::Ordering::Equal,
                })
                .then(scores[a].total_cmp(&scores[b]))
        });
        Brute {
            tiers,
            keys,
            scores,
            order,
        }
    }

    /// Asserts that the hits are the brute force's first ones: at each rank, the hit's bm25
    /// is the one computed here, and its tier, prompt key and bm25 are those of the match the
    /// brute force has at that rank (ties may come in any order).
    fn assert_hits(&self, turns: &[Turn], hits: &[trail_store::SearchHit], what: &str) {
        for (rank, (hit, &w)) in hits.iter().zip(&self.order).enumerate() {
            let i = turns
                .iter()
                .position(|t| t.session == hit.session_id && Some(t.turn) == hit.turn)
                .unwrap();
            let what = format!("{what} #{rank}");
            let scores = &self.scores;
            assert!(
                close(hit.score, scores[i]),
                "{what}: {} {}",
                hit.score,
                scores[i]
            );
            assert_eq!(self.tiers[i], self.tiers[w], "{what}");
            match (self.keys[i], self.keys[w]) {
                (Some(x), Some(y)) => {
                    assert!(close(x.0, y.0), "{what}: prompt {} {}", x.0, y.0);
                    assert_eq!(x.1, y.1, "{what}: near");
                }
                (x, y) => assert_eq!(x.is_some(), y.is_some(), "{what}"),
            }
            assert!(
                close(scores[i], scores[w]),
                "{what}: {} {}",
                scores[i],
                scores[w]
            );
        }
    }
}

#[test]
fn the_top_ten_are_those_of_a_brute_force_scorer_over_every_match() {
    let (_dir, store, turns) = build();
    let queries: [&[&str]; 4] = [
        &["alpha", "bravo", "charlie"],
        &["alpha", "bravo"],
        &["charlie", "alpha"],
        &["bravo"],
    ];
    for words in queries {
        for source in [None, Some(SourceKind::GeminiCli)] {
            let brute = Brute::of(&turns, words, |t| source.is_none_or(|s| t.source == s));
            let matches = brute.order.len();
            assert!(matches >= 200, "{words:?}: {matches} matches");
            let hits = store
                .search(&SearchOptions {
                    query: words.join(" "),
                    filter: trail_store::Filter {
                        source,
                        ..Default::default()
                    },
                    limit: 10,
                    exact: true,
                    ..SearchOptions::default()
                })
                .unwrap()
                .hits;
            assert_eq!(hits.len(), 10, "{words:?}");
            brute.assert_hits(&turns, &hits, &format!("{words:?} {source:?}"));
            if words.len() == 3 && source.is_none() {
                // The prompt tier fills the page, and its order is not the turn's bm25: the
                // prompt's own score decides.
                let top: Vec<usize> = brute.order.iter().take(10).copied().collect();
                assert!(top.iter().all(|&i| brute.tiers[i] == 0));
                assert!(top
                    .windows(2)
                    .any(|w| brute.scores[w[0]] > brute.scores[w[1]]));
            }
        }
    }
    // Every tier is reached by some match of the three words.
    let words = ["alpha", "bravo", "charlie"];
    let brute = Brute::of(&turns, &words, |_| true);
    for t in 0..3 {
        assert!(
            brute.order.iter().any(|&i| brute.tiers[i] == t),
            "no turn of tier {t}"
        );
    }
}

/// A turn's messages: role, kind and text (a tool call's text is its input, a tool result's
/// its output).
type TurnMessages = Vec<(Role, MessageKind, String)>;

/// A store of the given sessions, each a list of turns.
fn small_store(sessions: &[Vec<TurnMessages>]) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let mut batch = Vec::new();
    for (n, turns) in sessions.iter().enumerate() {
        let id = format!("00000000-0000-4000-8000-{n:012}");
        let mut s = Session::new(SessionMeta::new(
            SessionId::new(&id),
            SourceKind::Codex,
            &id,
        ));
        s.meta.created_at = Some("2026-01-01T00:00:00Z".into());
        let mut seq = 0;
        for (t, messages) in turns.iter().enumerate() {
            for (role, kind, text) in messages {
                let mut m = message(seq, *role, *kind, t as u32);
                match kind {
                    MessageKind::ToolCall => {
                        m.tool_name = Some("Bash".into());
                        m.tool_input = Some(text.clone());
                    }
                    MessageKind::ToolResult => m.tool_output = Some(text.clone()),
                    _ => m.text = text.clone(),
                }
                s.messages.push(m);
                seq += 1;
            }
        }
        s.turn_count = turns.len() as u32;
        batch.push(FileRecord {
            path: format!("/nowhere/{n}.jsonl"),
            source: Some(SourceKind::Codex),
            sessions: vec![s],
            bytes_parsed: 1,
            lines: 1,
            ..FileRecord::default()
        });
    }
    store.write_batch(batch).unwrap();
    (dir, store)
}

/// The roles (user, assistant, tool) and kinds (prompt, text, tool call, tool result) the
/// small stores' turns are made of.
type RolesAndKinds = (
    (Role, Role, Role),
    (MessageKind, MessageKind, MessageKind, MessageKind),
);

fn roles_and_kinds() -> RolesAndKinds {
    (
        (Role::User, Role::Assistant, Role::Tool),
        (
            MessageKind::Prompt,
            MessageKind::Text,
            MessageKind::ToolCall,
            MessageKind::ToolResult,
        ),
    )
}

fn filler(tag: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("{tag}{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn sessions_found(store: &Store, query: &str) -> Vec<String> {
    store
        .search(&SearchOptions {
            query: query.into(),
            limit: 10,
            exact: true,
            ..SearchOptions::default()
        })
        .unwrap()
        .hits
        .into_iter()
        .map(|h| h.session_id)
        .collect()
}

/// Issue 43's example, on a fixture of its kind: two prompts hold `issue string change`, in
/// long turns (long prompts, long answers and tool output, so bm25 of the turn is low), and
/// thirty short turns hold the three words many times, scattered over a prompt, an answer and
/// a tool output (by bm25 of the turn, they come first). Both prompts' sessions are the first
/// two hits.
#[test]
fn the_sessions_whose_prompts_hold_every_word_come_first() {
    let ((user, asst, tool), (prompt, text, call, result)) = roles_and_kinds();
    let wanted = |tag: &str| {
        vec![vec![
            (
                user,
                prompt,
                format!(
                    "{} the issue is that a string may change {}",
                    filler(tag, 60),
                    filler(tag, 60)
                ),
            ),
            (asst, call, filler("call", 80)),
            (tool, result, filler("out", 150)),
            (asst, text, filler("answer", 200)),
        ]]
    };
    let mut sessions = vec![wanted("first"), wanted("second")];
    for n in 0..30 {
        sessions.push(vec![vec![
            (
                user,
                prompt,
                format!("issue issue issue {}", filler("p", n % 5)),
            ),
            (asst, call, "string string".to_string()),
            (tool, result, "change change change".to_string()),
            (asst, text, "string change issue string change".to_string()),
        ]]);
    }
    let (_dir, store) = small_store(&sessions);
    let found = sessions_found(&store, "issue string change");
    assert_eq!(found.len(), 10);
    let mut top: Vec<&str> = found[..2].iter().map(String::as_str).collect();
    top.sort();
    assert_eq!(
        top,
        [
            "00000000-0000-4000-8000-000000000000",
            "00000000-0000-4000-8000-000000000001"
        ]
    );
}

/// Within the prompt tier, the prompt's own bm25 comes before the turn's: a short prompt
/// holding the words ranks above a long one, whatever the answers; between prompts of the same
/// score, the one whose words are near each other comes first.
#[test]
fn the_prompt_tier_is_ordered_by_the_prompt_then_by_proximity() {
    let (user, asst) = (Role::User, Role::Assistant);
    let (prompt, text) = (MessageKind::Prompt, MessageKind::Text);
    let turn = |p: String, answer: String| vec![(user, prompt, p), (asst, text, answer)];
    let sessions = vec![
        // Long prompt, the words near each other, a short answer: best bm25 of the turn.
        vec![turn(
            format!("alpha bravo {}", filler("a", 40)),
            "short".to_string(),
        )],
        // Short prompt, the words far apart, a long answer.
        vec![turn(
            format!("alpha {} bravo", filler("b", 12)),
            filler("c", 300),
        )],
        // The same length and words as the one above, near each other, a longer answer.
        vec![turn(
            format!("alpha bravo {}", filler("d", 12)),
            filler("e", 600),
        )],
    ];
    let (_dir, store) = small_store(&sessions);
    let found = sessions_found(&store, "alpha bravo");
    assert_eq!(
        found,
        [
            "00000000-0000-4000-8000-000000000002",
            "00000000-0000-4000-8000-000000000001",
            "00000000-0000-4000-8000-000000000000"
        ]
    );
}

/// With few enough matches in the prompt tier, the hits reach the one-message and spread
/// tiers, in order: all the prompt tier's turns first (by the prompt's own score), then tier 1
/// by bm25, then tier 2.
#[test]
fn a_session_filter_reaches_the_lower_tiers_in_order() {
    let (_dir, store, turns) = build();
    let words = ["alpha", "bravo", "charlie"];
    for session in [
        "00000000-0000-4000-8000-000000000003",
        "00000000-0000-4000-8000-000000000017",
    ] {
        let brute = Brute::of(&turns, &words, |t| t.session == session);
        let hits = store
            .search(&SearchOptions {
                query: words.join(" "),
                session: Some(session.to_string()),
                limit: 500,
                exact: true,
                ..SearchOptions::default()
            })
            .unwrap()
            .hits;
        assert_eq!(hits.len(), brute.order.len(), "{session}");
        brute.assert_hits(&turns, &hits, session);
    }
}

/// A query of one word whose prompt tier fills the page shows that tier by the prompt's own
/// bm25 (an index of every prompt alone), then bm25 of the turn, whether the word is in nearly
/// every prompt (`ahem`, in 40 of 50 turns) or in a few (`rare`, 14). Turns whose answer alone
/// holds the word, with a better bm25 of the turn, never come before that tier. FTS5 scores
/// both here, on a table of the prompts this test makes and on the index's rows.
#[test]
fn one_word_shows_its_prompt_tier_by_the_prompts_own_bm25_whatever_its_size() {
    let (user, asst) = (Role::User, Role::Assistant);
    let (prompt, text) = (MessageKind::Prompt, MessageKind::Text);
    let mut sessions = Vec::new();
    for n in 0..40usize {
        // Every prompt holds `ahem` (1 to 3 times, in prompts of different lengths); one in three
        // holds `rare`; answers hold both words too, some of them often.
        let mut p = format!("{} {}", "ahem ".repeat(1 + n % 3), filler("p", 3 + n % 7));
        if n % 3 == 0 {
            p.push_str(&format!(" rare {}", "rare ".repeat(n % 4)));
        }
        let answer = format!("{} {}", "ahem rare ".repeat(n % 5), filler("a", 5 + n % 11));
        sessions.push(vec![vec![(user, prompt, p), (asst, text, answer)]]);
    }
    for n in 0..10usize {
        // Short turns whose answer alone holds the words many times.
        sessions.push(vec![vec![
            (user, prompt, format!("question {n}")),
            (asst, text, "ahem rare ahem rare ahem rare".to_string()),
        ]]);
    }
    let (_dir, store) = small_store(&sessions);
    let conn = store.connection();
    conn.execute_batch(
        "CREATE VIRTUAL TABLE temp.prompts_alone USING fts5(
             prompt, tokenize = 'unicode61 remove_diacritics 2')",
    )
    .unwrap();
    for (n, turns) in sessions.iter().enumerate() {
        conn.execute(
            "INSERT INTO temp.prompts_alone (rowid, prompt) VALUES (?1, ?2)",
            rusqlite::params![n as i64, turns[0][0].2],
        )
        .unwrap();
    }
    let session_of = |n: usize| format!("00000000-0000-4000-8000-{n:012}");
    for (word, members) in [("ahem", 40), ("rare", 14)] {
        // Each member's prompt score and bm25 of its turn, as FTS5 scores them.
        let by_prompt: HashMap<String, f64> = conn
            .prepare(
                "SELECT rowid, bm25(prompts_alone) FROM temp.prompts_alone
                 WHERE prompts_alone MATCH ?1",
            )
            .unwrap()
            .query_map([word], |r| {
                Ok((session_of(r.get::<_, i64>(0)? as usize), r.get(1)?))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let by_turn: HashMap<String, f64> = conn
            .prepare(
                "SELECT d.session_id, bm25(turn_search, 4.0, 1.0, 0.5, 0.25)
                 FROM turn_search t JOIN turn_docs d ON d.id = t.rowid
                 WHERE turn_search MATCH ?1",
            )
            .unwrap()
            .query_map([word], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(by_prompt.len(), members, "{word}");
        let key = |s: &String| (by_prompt[s], by_turn[s]);
        let mut expected: Vec<(f64, f64)> = by_prompt.keys().map(key).collect();
        expected.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let found = sessions_found(&store, word);
        assert_eq!(found.len(), 10, "{word}");
        for (rank, (session, want)) in found.iter().zip(&expected).enumerate() {
            let got = by_prompt
                .get(session)
                .map(|_| key(session))
                .unwrap_or_else(|| panic!("{word} #{rank}: {session} is not in the prompt tier"));
            assert!(
                close(got.0, want.0) && close(got.1, want.1),
                "{word} #{rank}: {got:?} {want:?}"
            );
        }
    }
    // The prompt score and the turn's bm25 disagree: the order is not the turn's.
    let turn_order = |word: &str| -> Vec<String> {
        conn.prepare(
            "SELECT d.session_id FROM turn_search t JOIN turn_docs d ON d.id = t.rowid
             WHERE turn_search MATCH ?1 ORDER BY bm25(turn_search, 4.0, 1.0, 0.5, 0.25)",
        )
        .unwrap()
        .query_map([format!("{{prompt}} : {word}")], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .take(10)
        .collect()
    };
    assert_ne!(sessions_found(&store, "ahem"), turn_order("ahem"));
}

/// A page is the head of the whole ranking, whatever the role and whether the search database
/// keeps signatures (without them the index lists tier 1's candidates; with them each match's
/// signatures tell): where tier 1 is short, the best of tier 2 fill the page. A search that
/// counted tier 1 twice once stopped reading tier 2 early and showed fewer hits than the page.
#[test]
fn a_page_is_the_head_of_the_whole_ranking() {
    let (_dir, store, _turns) = build();
    // A short tier 1: three turns whose answer holds both words, and twelve that scatter them
    // over an answer and a tool call (no one column holds both: not even candidates).
    let ((user, asst, _), (prompt, text, call, _)) = roles_and_kinds();
    let mut sessions = Vec::new();
    for n in 0..15usize {
        let mut turn = vec![(user, prompt, format!("question {n}"))];
        if n < 3 {
            turn.push((asst, text, format!("kilo lima {}", filler("a", n))));
        } else {
            turn.push((asst, text, format!("kilo {}", filler("a", n))));
            turn.push((asst, call, format!("lima {}", filler("c", n))));
        }
        sessions.push(vec![turn]);
    }
    let (_small_dir, small) = small_store(&sessions);
    for signed in [true, false] {
        if !signed {
            // A search database made before signatures (version 3).
            for s in [&store, &small] {
                s.connection()
                    .execute_batch("PRAGMA search.user_version = 3")
                    .unwrap();
            }
        }
        for query in ["alpha bravo charlie", "alpha bravo", "charlie alpha"] {
            for role in [
                None,
                Some(Role::Assistant),
                Some(Role::Tool),
                Some(Role::User),
            ] {
                let all = page_of(&store, query, role, 5000);
                for limit in [5, 10, 40] {
                    let page = page_of(&store, query, role, limit);
                    let want = &all[..limit.min(all.len())];
                    assert_eq!(page, want, "{query} {role:?} {limit} signed: {signed}");
                }
            }
        }
        for role in [None, Some(Role::Assistant)] {
            let all = page_of(&small, "kilo lima", role, 100);
            assert_eq!(all.len(), 15, "{role:?}");
            let page = page_of(&small, "kilo lima", role, 10);
            assert_eq!(page, all[..10], "{role:?} signed: {signed}");
        }
    }
}

/// The hits of `query` (session, turn, score) on a page of `limit`.
fn page_of(
    store: &Store,
    query: &str,
    role: Option<Role>,
    limit: usize,
) -> Vec<(String, Option<i64>, String)> {
    store
        .search(&SearchOptions {
            query: query.into(),
            role,
            limit,
            exact: true,
            ..SearchOptions::default()
        })
        .unwrap()
        .hits
        .into_iter()
        .map(|h| (h.session_id, h.turn, format!("{:.12}", h.score)))
        .collect()
}

/// Tier 1 is told from tier 2 by each turn's signatures before any message is read: a turn
/// whose words stand in one answer (among Latin letters with diacritics and punctuation beyond
/// ASCII, which the signatures fold and cut as the tokenizer does) stays above a short turn
/// that scatters them; without signatures (an index written before them) every candidate is
/// read, with the same hits; and signatures that say "scattered" are trusted, unread.
#[test]
fn the_signatures_tell_scattered_turns_without_reading_them() {
    let ((user, asst, tool), (prompt, text, call, result)) = roles_and_kinds();
    let sessions = vec![
        vec![vec![
            (user, prompt, "naïve question about the café".to_string()),
            (
                asst,
                text,
                format!("Déjà vu — CARGO’s build fails… {}", filler("why", 40)),
            ),
            (tool, result, filler("log", 120)),
        ]],
        vec![vec![
            (user, prompt, "short".to_string()),
            (asst, text, "cargo".to_string()),
            (asst, call, "build".to_string()),
            (tool, result, "fails".to_string()),
        ]],
    ];
    let (_dir, store) = small_store(&sessions);
    let (one, scattered) = (
        "00000000-0000-4000-8000-000000000000",
        "00000000-0000-4000-8000-000000000001",
    );
    let query = "cargo build fails";
    assert_eq!(sessions_found(&store, query), [one, scattered]);

    let sigs = |sql: &str| store.connection().execute_batch(sql).unwrap();
    sigs("CREATE TEMP TABLE kept AS SELECT * FROM search.turn_sigs; DELETE FROM search.turn_sigs;");
    assert_eq!(sessions_found(&store, query), [one, scattered], "unsigned");

    // The first turn's signatures, emptied: no field of it can hold every word, so it is
    // not read and falls to tier 2, where the scattered turn's bm25 is better.
    sigs(
        "INSERT INTO search.turn_sigs SELECT * FROM temp.kept;
         UPDATE search.turn_sigs SET sigs = x'' WHERE id = (
             SELECT id FROM search.turn_docs WHERE session_id = '00000000-0000-4000-8000-000000000000');",
    );
    assert_eq!(sessions_found(&store, query), [scattered, one]);
}
