//! In-process timing of the browser on a store (no terminal, no tmux): the first frame, and
//! each keystroke until its results and preview are drawn. `bench/tui.py` runs it next to the
//! terminal measurement, whose figures include tmux's own cost.
//!
//! usage: tui_bench STORE [RUNS] QUERY...

#![allow(clippy::print_stdout)]

use std::path::PathBuf;
use std::time::Instant;

use trail_tui::{Colors, Headless, Here, Keymap, TuiConfig};

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let store = PathBuf::from(args.next().expect("usage: tui_bench STORE [RUNS] QUERY..."));
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(3);
    let queries: Vec<String> = args.collect();
    let config = TuiConfig {
        export_dir: std::env::temp_dir(),
        store,
        here: Here::default(),
        colors: Colors::default(),
        no_color: false,
        keys: Keymap::default(),
        clock: None,
        continue_homes: Default::default(),
        prices: trail_report::PriceTable::shipped().clone(),
        block_budget_usd: None,
    };
    let mut firsts = Vec::new();
    let mut keys = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let mut h = Headless::new(config.clone(), 120, 40)?;
        firsts.push(t.elapsed().as_secs_f64() * 1e3);
        for q in &queries {
            let mut slowest = 0.0f64;
            for c in q.chars() {
                let t = Instant::now();
                h.type_text(&c.to_string());
                let ms = t.elapsed().as_secs_f64() * 1e3;
                slowest = slowest.max(ms);
                keys.push(ms);
            }
            println!("  {q:<28} slowest key {slowest:.1} ms");
            h.press("ctrl-u");
        }
    }
    let pct = |v: &mut Vec<f64>, p: f64| {
        v.sort_by(|a, b| a.total_cmp(b));
        v[((p / 100.0) * (v.len() - 1) as f64).round() as usize]
    };
    println!(
        "in-process first frame  median {:.1} ms",
        pct(&mut firsts, 50.0)
    );
    println!(
        "in-process keystroke    p50 {:.1} ms  p95 {:.1} ms  max {:.1} ms ({} keys; results and preview drawn)",
        pct(&mut keys, 50.0),
        pct(&mut keys, 95.0),
        keys.iter().cloned().fold(0.0, f64::max),
        keys.len()
    );
    Ok(())
}
