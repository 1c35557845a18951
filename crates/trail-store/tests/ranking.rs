//! Search ranks every match exactly (issue 12): on a store where a word matches thousands of
//! turns, the top 10 are the 10 best of all of them, as an independent computation of FTS5's
//! bm25 says: the turns whose prompt holds the word first, by the prompt's own bm25 among every
//! prompt (issue 44), then by bm25 of the turn, each hit's score the one a full `ORDER BY rank`
//! gives its turn; the best turn is found even when it is the oldest (the search it replaces
//! ranked only the 500 most recently indexed matches).

use trail_model::{Message, MessageKind, Role, Session, SessionId, SessionMeta, SourceKind};
use trail_store::{FileRecord, SearchOptions, Store};

const SESSIONS: u32 = 60;
const TURNS: u32 = 100;
const WORD: &str = "widget";

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

/// The words of one turn: (prompt, answer). Filler words are `fNNN`; `WORD` appears in about
/// 40% of the turns, 1 to 4 times, in the prompt or the answer.
fn turn_words(rng: &mut Lcg) -> (Vec<String>, Vec<String>) {
    let mut prompt: Vec<String> = (0..3 + rng.next(30))
        .map(|_| format!("f{}", rng.next(500)))
        .collect();
    let mut answer: Vec<String> = (0..5 + rng.next(80))
        .map(|_| format!("f{}", rng.next(500)))
        .collect();
    if rng.next(10) < 4 {
        for _ in 0..1 + rng.next(4) {
            let target = if rng.next(2) == 0 {
                &mut prompt
            } else {
                &mut answer
            };
            let at = rng.next(target.len() as u64 + 1) as usize;
            target.insert(at, WORD.to_string());
        }
    }
    (prompt, answer)
}

fn message(seq: u32, role: Role, kind: MessageKind, turn: u32, text: &str) -> Message {
    Message {
        seq,
        role: Some(role),
        kind: Some(kind),
        turn_index: Some(turn),
        text: text.to_string(),
        on_main_chain: true,
        timestamp: Some(format!("2026-01-01T00:00:{:02}Z", seq % 60)),
        ..Message::default()
    }
}

/// One turn as the test knows it: where it is, and its words per column.
struct Turn {
    session: String,
    source: SourceKind,
    turn: i64,
    prompt: Vec<String>,
    answer: Vec<String>,
}

/// FTS5's bm25 (fts5_aux.c) with `turn_search`'s weights (prompt 4, answer 1; the tool
/// columns are empty here), computed from the words the test wrote.
fn bm25(turns: &[Turn], word: &str) -> Vec<f64> {
    bm25_of(turns, |t| {
        let f = 4.0 * count(&t.prompt, word) + count(&t.answer, word);
        (f, (t.prompt.len() + t.answer.len()) as f64)
    })
}

/// FTS5's bm25 of each turn's prompt alone among every prompt (the index of prompts, one
/// column, weight 1), computed from the words the test wrote.
fn prompt_bm25(turns: &[Turn], word: &str) -> Vec<f64> {
    bm25_of(turns, |t| (count(&t.prompt, word), t.prompt.len() as f64))
}

fn count(words: &[String], word: &str) -> f64 {
    words.iter().filter(|w| *w == word).count() as f64
}

/// FTS5's bm25 of one word over one document per turn, `doc` giving the word's weighted
/// frequency in it and its length; infinite for a document without the word.
fn bm25_of(turns: &[Turn], doc: impl Fn(&Turn) -> (f64, f64)) -> Vec<f64> {
    let (k1, b) = (1.2, 0.75);
    let docs: Vec<(f64, f64)> = turns.iter().map(doc).collect();
    let n_docs = docs.len() as f64;
    let avgdl = docs.iter().map(|d| d.1).sum::<f64>() / n_docs;
    let n_match = docs.iter().filter(|d| d.0 > 0.0).count() as f64;
    let mut idf = ((n_docs - n_match + 0.5) / (n_match + 0.5)).ln();
    if idf <= 0.0 {
        idf = 1e-6;
    }
    docs.iter()
        .map(|&(f, dl)| {
            if f == 0.0 {
                return f64::INFINITY;
            }
            -idf * (f * (k1 + 1.0)) / (f + k1 * (1.0 - b + b * dl / avgdl))
        })
        .collect()
}

fn build() -> (tempfile::TempDir, Store, Vec<Turn>) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("t.db")).unwrap();
    let mut rng = Lcg(12);
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
        for t in 0..TURNS {
            let (mut prompt, mut answer) = turn_words(&mut rng);
            // The best turn of all (the word most often, in the shortest turn) is the first
            // one written: the oldest match.
            if n == 0 && t == 0 {
                prompt = vec![WORD.to_string(); 4];
                answer = vec!["f1".to_string()];
            }
            s.messages.push(message(
                2 * t,
                Role::User,
                MessageKind::Prompt,
                t,
                &prompt.join(" "),
            ));
            s.messages.push(message(
                2 * t + 1,
                Role::Assistant,
                MessageKind::Text,
                t,
                &answer.join(" "),
            ));
            turns.push(Turn {
                session: id.clone(),
                source,
                turn: t as i64,
                prompt,
                answer,
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
        // Several batches: several segments, as a real index leaves.
        if batch.len() == 15 {
            store.write_batch(std::mem::take(&mut batch)).unwrap();
        }
    }
    store.write_batch(batch).unwrap();
    (dir, store, turns)
}

/// The 10 best matches (indexes into the turns), best first: by the prompt's score (the
/// turns whose prompt holds the word first), then bm25 of the turn.
fn best_ten(prompts: &[f64], scores: &[f64], keep: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len())
        .filter(|&i| scores[i].is_finite() && keep(i))
        .collect();
    order.sort_by(|&a, &b| {
        prompts[a]
            .total_cmp(&prompts[b])
            .then(scores[a].total_cmp(&scores[b]))
    });
    order.truncate(10);
    order
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn the_top_ten_are_the_best_of_thousands_of_matches() {
    let (_dir, store, turns) = build();
    let scores = bm25(&turns, WORD);
    let matches = scores.iter().filter(|s| s.is_finite()).count();
    assert!(
        matches >= 2000,
        "the query must match thousands of turns: {matches}"
    );

    // FTS5's own full ranking of every match.
    let full: Vec<(String, i64, f64)> = store
        .connection()
        .prepare(
            "SELECT d.session_id, d.turn_index, t.rank FROM turn_search t
             JOIN turn_docs d ON d.id = t.rowid
             WHERE turn_search MATCH ?1 ORDER BY rank",
        )
        .unwrap()
        .query_map([WORD], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(full.len(), matches);

    let search = |source: Option<&str>| {
        store
            .search(&SearchOptions {
                query: WORD.to_string(),
                filter: trail_store::Filter {
                    source: source.map(|s| trail_model::SourceKind::parse(s).unwrap()),
                    ..Default::default()
                },
                limit: 10,
                ..SearchOptions::default()
            })
            .unwrap()
            .hits
    };
    let prompts = prompt_bm25(&turns, WORD);
    let position = |hit: &trail_store::SearchHit| {
        turns
            .iter()
            .position(|t| t.session == hit.session_id && Some(t.turn) == hit.turn)
            .unwrap()
    };
    // Each hit is a turn with the keys of the brute force's match at its rank (ties may come
    // in any order), and its score is its turn's bm25 as FTS5 ranks it in full.
    let assert_best = |hits: &[trail_store::SearchHit], want: &[usize]| {
        assert_eq!(hits.len(), 10);
        for (rank, (hit, &i)) in hits.iter().zip(want).enumerate() {
            let t = position(hit);
            assert!(
                close(prompts[t], prompts[i]),
                "{rank}: {} {}",
                prompts[t],
                prompts[i]
            );
            assert!(
                close(scores[t], scores[i]),
                "{rank}: {} {}",
                scores[t],
                scores[i]
            );
            assert!(
                close(hit.score, scores[t]),
                "{rank}: {} {}",
                hit.score,
                scores[t]
            );
            let ranked = full
                .iter()
                .find(|(s, turn, _)| *s == hit.session_id && Some(*turn) == hit.turn)
                .unwrap();
            assert!(
                close(hit.score, ranked.2),
                "{rank}: {} {}",
                hit.score,
                ranked.2
            );
        }
    };
    let hits = search(None);
    assert_best(&hits, &best_ten(&prompts, &scores, |_| true));
    assert!(
        hits.iter().all(|h| prompts[position(h)].is_finite()),
        "the prompt tier fills the page"
    );
    // The oldest turn written is the best match, and is found.
    assert_eq!(
        (hits[0].session_id.as_str(), hits[0].turn),
        (turns[0].session.as_str(), Some(0))
    );
    assert!(hits[0].snippet.contains(WORD), "{}", hits[0].snippet);

    // With a filter, the best 10 of the turns that pass it.
    let hits = search(Some("gemini-cli"));
    assert!(hits.iter().all(|h| h.source == "gemini-cli"));
    assert_best(
        &hits,
        &best_ten(&prompts, &scores, |i| {
            turns[i].source == SourceKind::GeminiCli
        }),
    );
}
