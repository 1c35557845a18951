//! Search latency on a store: each query run N times in one process (warm), p50/p90 printed.
//!
//! usage: cargo run --release -p trail-store --example search_bench -- STORE [RUNS] [QUERY...]

#![allow(clippy::print_stdout)]

use std::path::PathBuf;
use std::time::Instant;

use trail_store::{SearchOptions, Store};

fn main() {
    let mut args = std::env::args().skip(1);
    let store = PathBuf::from(
        args.next()
            .expect("usage: search_bench STORE [RUNS] [QUERY...]"),
    );
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(100);
    let queries: Vec<String> = args.collect();
    let store = Store::open_read_only(&store).expect("open store");
    println!(
        "{:<34} {:>7} {:>9} {:>9} {:>9}",
        "query", "hits", "p50 ms", "p90 ms", "ranked"
    );
    for q in &queries {
        let opts = SearchOptions {
            query: q.clone(),
            limit: 20,
            ..SearchOptions::default()
        };
        let mut times = Vec::with_capacity(runs);
        let mut last = None;
        for _ in 0..runs {
            let t = Instant::now();
            let r = store.search(&opts).expect("search");
            times.push(t.elapsed().as_secs_f64() * 1e3);
            last = Some(r);
        }
        times.sort_by(|a, b| a.total_cmp(b));
        let r = last.expect("ran");
        let pct = |p: f64| times[((times.len() as f64 * p) as usize).min(times.len() - 1)];
        println!(
            "{:<34} {:>7} {:>9.2} {:>9.2} {:>6}{}",
            q,
            r.hits.len(),
            pct(0.5),
            pct(0.9),
            r.ranked,
            if r.capped { "+" } else { "" }
        );
    }
}
