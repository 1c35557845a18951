//! `list` with `oldest_first`: the reverse order, paged with its own cursor, every session once.

use std::path::Path;

use trail_ingest::{index, NoProgress};
use trail_query::{Clock, ListRequest, Query};
use trail_store::Store;

fn sample_store(dir: &Path) -> Query {
    let home = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/home");
    let mut store = Store::open(&dir.join("t.db")).unwrap();
    // The format of each folder's files is detected.
    let opts = trail_ingest::IndexOptions {
        paths: vec![
            home.join(".claude"),
            home.join(".codex"),
            home.join(".gemini"),
        ],
        ..Default::default()
    };
    index(&mut store, &opts, &NoProgress).unwrap();
    Query::from_store(store)
}

fn ids(q: &Query, oldest_first: bool, limit: usize) -> Vec<String> {
    let clock = Clock::utc_now();
    let mut out = Vec::new();
    let mut cursor = None;
    loop {
        let page = q
            .list(
                &ListRequest {
                    limit,
                    cursor: cursor.clone(),
                    oldest_first,
                    ..ListRequest::default()
                },
                &clock,
            )
            .unwrap();
        out.extend(
            page.sessions
                .into_iter()
                .map(|s| s.updated_at.unwrap_or_default()),
        );
        match page.next_cursor {
            Some(c) => cursor = Some(c),
            None => return out,
        }
    }
}

#[test]
fn oldest_first_reverses_the_order_and_pages_through_everything() {
    let dir = tempfile::tempdir().unwrap();
    let q = sample_store(dir.path());
    let newest = ids(&q, false, 0);
    assert!(newest.len() >= 3, "{newest:?}");
    let mut oldest = ids(&q, true, 1);
    assert_eq!(oldest.len(), newest.len());
    assert!(oldest.windows(2).all(|w| w[0] <= w[1]), "{oldest:?}");
    oldest.reverse();
    assert_eq!(oldest, newest);
}

#[test]
fn read_only_handles_refuse_a_missing_store() {
    let dir = tempfile::tempdir().unwrap();
    let err = Query::open(&dir.path().join("none.db")).err().unwrap();
    assert!(err.is_caller_error());
}
