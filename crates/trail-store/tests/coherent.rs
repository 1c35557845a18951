//! Coherent ranking is exact (issue 43): on a store of a few thousand turns whose prompts,
//! answers, tool inputs and tool outputs hold the query's words together, near each other,
//! spread out or in part, the top 10 of `Store::search` are the top 10 of a brute-force scorer
//! over every match, written here from the words the test placed: tier (all words in the
//! prompt, near each other / all in the prompt / all in one message / spread over the turn),
//! then FTS5's bm25 with the index's column weights, then the newest.

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

/// The tier of a matching turn for `words`: 0 all in the prompt within 10 tokens of each
/// other, 1 all in the prompt, 2 all in one message, 3 spread out. One word: 1 or 2.
fn tier(t: &Turn, words: &[&str]) -> u8 {
    let holds = |p: &Part| words.iter().all(|w| p.words.iter().any(|x| x == w));
    let prompt = t.parts.iter().find(|p| p.column == 0);
    if let Some(p) = prompt.filter(|p| holds(p)) {
        if words.len() >= 2 && near(&p.words, words) {
            return 0;
        }
        return 1;
    }
    if t.parts.iter().any(holds) {
        2
    } else {
        3
    }
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
            let scores = bm25(&turns, words);
            let keep =
                |i: usize| scores[i].is_finite() && source.is_none_or(|s| turns[i].source == s);
            let tiers: Vec<u8> = turns.iter().map(|t| tier(t, words)).collect();
            let mut want: Vec<usize> = (0..turns.len()).filter(|&i| keep(i)).collect();
            let matches = want.len();
            assert!(matches >= 200, "{words:?}: {matches} matches");
            want.sort_by(|&a, &b| {
                tiers[a]
                    .cmp(&tiers[b])
                    .then(scores[a].total_cmp(&scores[b]))
            });
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
            for (rank, (hit, &w)) in hits.iter().zip(&want).enumerate() {
                let i = turns
                    .iter()
                    .position(|t| t.session == hit.session_id && Some(t.turn) == hit.turn)
                    .unwrap();
                let what = format!("{words:?} {source:?} #{rank}");
                // The hit's score is bm25 as computed here, and the hit has the tier and the
                // score the brute-force order has at this rank (ties may come in any order).
                assert!(
                    close(hit.score, scores[i]),
                    "{what}: {} {}",
                    hit.score,
                    scores[i]
                );
                assert_eq!(tiers[i], tiers[w], "{what}");
                assert!(
                    close(scores[i], scores[w]),
                    "{what}: {} {}",
                    scores[i],
                    scores[w]
                );
            }
            // Every tier the brute force fills before rank 10 is exercised by some query.
            if words.len() == 3 && source.is_none() {
                let shown: Vec<u8> = want.iter().take(10).map(|&i| tiers[i]).collect();
                assert!(shown.contains(&0), "{shown:?}");
            }
        }
    }
    // Tier 2 and 3 are reached and ordered: a query whose prompt tiers are short.
    let words = ["alpha", "bravo", "charlie"];
    let tiers: Vec<u8> = turns.iter().map(|t| tier(t, &words)).collect();
    for t in 0..4 {
        assert!(
            tiers
                .iter()
                .zip(&turns)
                .filter(|(_, turn)| words.iter().all(|w| turn.has(w)))
                .any(|(x, _)| *x == t),
            "no turn of tier {t}"
        );
    }
}

/// With few enough matches in the prompt tiers, the hits reach the one-message and spread
/// tiers, in order: all the prompt tiers' turns first, then tier 2 by bm25, then tier 3.
#[test]
fn a_session_filter_reaches_the_lower_tiers_in_order() {
    let (_dir, store, turns) = build();
    let words = ["alpha", "bravo", "charlie"];
    let scores = bm25(&turns, &words);
    for session in [
        "00000000-0000-4000-8000-000000000003",
        "00000000-0000-4000-8000-000000000017",
    ] {
        let mut want: Vec<usize> = (0..turns.len())
            .filter(|&i| scores[i].is_finite() && turns[i].session == session)
            .collect();
        want.sort_by(|&a, &b| {
            tier(&turns[a], &words)
                .cmp(&tier(&turns[b], &words))
                .then(scores[a].total_cmp(&scores[b]))
        });
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
        assert_eq!(hits.len(), want.len(), "{session}");
        for (hit, &w) in hits.iter().zip(&want) {
            let i = turns
                .iter()
                .position(|t| t.session == hit.session_id && Some(t.turn) == hit.turn)
                .unwrap();
            assert_eq!(tier(&turns[i], &words), tier(&turns[w], &words));
            assert!(close(scores[i], scores[w]));
        }
    }
}
