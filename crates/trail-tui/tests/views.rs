//! Every view of the browser drawn on ratatui's test backend at 80x24 and 160x48, over a
//! store built from the bundled samples and an escape-sequence fixture (insta snapshots).

mod common;

use ratatui::style::Color;
use trail_tui::Headless;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

/// Drives a browser at each size; the screen `drive` returns is the snapshot.
fn each_size(name: &str, mut drive: impl FnMut(&mut Headless) -> String) {
    let (_dir, store) = common::sample_store();
    for (w, h) in SIZES {
        let mut t = Headless::new(common::config(&store), w, h).unwrap();
        let screen = drive(&mut t);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen);
    }
}

#[test]
fn list_of_sessions() {
    each_size("list", |t| {
        let s = t.screen();
        assert!(s.contains("[all] ❯"), "{s}");
        assert!(s.contains("7 sessions"), "{s}");
        // The Claude sample's subagent is counted under its root, not listed.
        assert!(s.contains("+1"), "{s}");
        s
    });
}

#[test]
fn search_results_with_preview() {
    each_size("search", |t| {
        t.type_text("units");
        let s = t.screen();
        assert!(s.contains("❯ units"), "{s}");
        assert!(s.contains("weather-cli"), "{s}");
        assert!(s.contains("preview"), "{s}");
        s
    });
}

/// A misspelled word is searched as the index's near spelling, and the status line says so
/// (issue 43); the next search, spelled right, clears it.
#[test]
fn a_misspelled_word_shows_the_near_spelling() {
    let (_dir, store) = common::sample_store();
    let mut t = Headless::new(common::config(&store), 120, 30).unwrap();
    t.type_text("imperal");
    let s = t.screen();
    assert!(s.contains("weather-cli"), "{s}");
    assert_eq!(
        t.message(),
        Some("no match for \"imperal\"; showing \"imperial\"")
    );
    assert!(
        s.contains("no match for \"imperal\"; showing \"imperial\""),
        "{s}"
    );
    t.press("ctrl-u");
    t.type_text("imperial");
    assert_eq!(t.message(), None);
}

#[test]
fn filters_in_the_box() {
    let (_dir, store) = common::sample_store();
    let mut t = Headless::new(common::config(&store), 120, 30).unwrap();
    t.type_text("source:codex");
    let s = t.screen();
    assert!(s.contains("1 session") && !s.contains("1 sessions"), "{s}");
    assert!(s.contains("ingredient scaler"), "{s}");
    t.press("ctrl-u");
    t.type_text("repo:tidepool since:2026-01-01");
    let s = t.screen();
    assert!(s.contains("1 session") && s.contains("CSV export"), "{s}");
    // A bad filter value says what is wrong instead of failing.
    t.press("ctrl-u");
    t.type_text("source:nope x");
    assert!(t.screen().contains("unknown source"), "{}", t.screen());
}

#[test]
fn transcript_folded_and_unfolded() {
    each_size("transcript_folded", |t| {
        t.type_text("units");
        t.press("enter");
        let s = t.screen();
        assert!(s.contains("▸ ✓ Read"), "{s}");
        assert!(s.contains("↳ subagent"), "{s}");
        s
    });
    each_size("transcript_unfolded", |t| {
        t.type_text("units");
        t.press("enter");
        t.press("f");
        let s = t.screen();
        assert!(s.contains("▾ ✓ Read") && s.contains("── output ──"), "{s}");
        s
    });
}

#[test]
fn help_lists_every_key() {
    each_size("help", |t| {
        t.press("?");
        let s = t.screen();
        for k in ["ctrl-r", "resume", "export", "continue", "ctrl-c"] {
            assert!(s.contains(k), "{k} missing:\n{s}");
        }
        t.press("esc");
        assert!(!t.quit(), "a key on the help only closes it");
        assert!(!t.screen().contains("any key closes"));
        s
    });
}

#[test]
fn empty_and_missing_stores_say_how_to_index() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.db");
    let empty = dir.path().join("empty.db");
    drop(trail_store::Store::open(&empty).unwrap());
    for (name, path) in [("missing_store", &missing), ("empty_store", &empty)] {
        for (w, h) in SIZES {
            let mut t = Headless::new(common::config(path), w, h).unwrap();
            let s = t.screen();
            assert!(s.contains("trail index"), "{s}");
            assert!(s.contains("trail --home examples/home index"), "{s}");
            let s = s.replace(&dir.path().display().to_string(), "[TMP]");
            insta::assert_snapshot!(format!("{name}_{w}x{h}"), s);
            t.press("esc");
            assert!(t.quit());
        }
    }
    assert!(!missing.exists(), "the browser created a store");
}

#[test]
fn escape_sequences_render_inert() {
    let (_dir, store) = common::sample_store();
    for (w, h) in SIZES {
        let mut t = Headless::new(common::config(&store), w, h).unwrap();
        let mut screens = vec![t.buffer()];
        t.type_text("clipboard");
        screens.push(t.buffer());
        t.press("enter");
        screens.push(t.buffer());
        t.press("f");
        screens.push(t.buffer());
        let text = t.screen();
        assert!(text.contains("␛]52;c;"), "{text}");
        assert!(text.contains("␛[2J"), "{text}");
        insta::assert_snapshot!(format!("escapes_unfolded_{w}x{h}"), text);
        for buf in &screens {
            for cell in buf.content() {
                assert!(
                    !cell.symbol().chars().any(|c| c.is_control()),
                    "a control character reached a cell: {:?}",
                    cell.symbol()
                );
            }
        }
    }
}

#[test]
fn no_color_draws_without_colours() {
    let (_dir, store) = common::sample_store();
    let mut cfg = common::config(&store);
    cfg.no_color = true;
    let mut t = Headless::new(cfg, 80, 24).unwrap();
    t.type_text("units");
    t.press("enter");
    for cell in t.buffer().content() {
        assert_eq!(cell.fg, Color::Reset, "{:?}", cell.symbol());
        assert_eq!(cell.bg, Color::Reset, "{:?}", cell.symbol());
    }
}

#[test]
fn transcript_keys() {
    let (_dir, store) = common::sample_store();
    let mut t = Headless::new(common::config(&store), 80, 24).unwrap();
    t.type_text("units");
    t.press("enter");
    assert!(t.screen().contains("matching lines"), "{}", t.screen());
    t.press("G");
    t.press("N");
    t.press("g");
    t.press("n");
    // The subagent line opens the subagent's own transcript, and esc comes back.
    t.press("g");
    let mut opened = false;
    for _ in 0..60 {
        t.press("down");
        t.press("enter");
        if t.screen().contains("1 levels deep") {
            opened = true;
            break;
        }
        // Enter unfolded something: fold it again.
        t.press("enter");
    }
    assert!(opened, "{}", t.screen());
    assert!(
        t.screen().contains("subagent of 7c1e2f40"),
        "{}",
        t.screen()
    );
    t.press("esc");
    assert!(!t.screen().contains("levels deep"));
    t.press("y");
    assert!(
        t.message().unwrap().starts_with("id 7c1e2f40"),
        "{:?}",
        t.message()
    );
    // c asks which agent, then writes the session as a new Codex rollout (trail-continue)
    // and hands the loop Codex's resume command; a second time finds the same file.
    t.press("c");
    assert!(t.screen().contains("continue in"), "{}", t.screen());
    t.press("x");
    let m = t.message().unwrap().to_string();
    assert!(m.starts_with("Wrote ") && m.contains("for codex"), "{m}");
    let run = t
        .take_resume()
        .expect("c x asks to resume the continuation");
    assert_eq!(run.program, "codex");
    assert_eq!(run.args[0], "resume");
    let codex = store.parent().unwrap().join("codex").join("sessions");
    let written: Vec<_> = walk(&codex);
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(std::fs::read_to_string(&written[0])
        .unwrap()
        .contains(&run.args[1]));
    t.press("c");
    t.press("x");
    assert!(
        t.message().unwrap().starts_with("Found "),
        "{:?}",
        t.message()
    );
    assert_eq!(t.take_resume().unwrap().args, run.args);
    assert_eq!(walk(&codex).len(), 1);
    t.press("c");
    t.press("esc");
    assert_eq!(t.message(), Some("Continue cancelled"));
    assert!(t.take_resume().is_none());
    t.press("r");
    let r = t.take_resume().expect("r asks for the resume command");
    assert_eq!(r.program, "claude");
    t.press("e");
    t.press("m");
    let m = t.message().unwrap().to_string();
    assert!(m.starts_with("Exported to "), "{m}");
    let path = m
        .trim_start_matches("Exported to ")
        .split(" (")
        .next()
        .unwrap();
    assert!(std::fs::read_to_string(path).unwrap().contains("--units"));
    t.press("esc");
    t.press("esc");
    assert!(t.quit());
}

#[test]
fn resize_redraws() {
    let (_dir, store) = common::sample_store();
    let mut t = Headless::new(common::config(&store), 160, 48).unwrap();
    t.type_text("units");
    t.press("enter");
    t.resize(80, 24);
    let s = t.screen();
    assert_eq!(s.lines().count(), 24);
    assert!(s
        .lines()
        .all(|l| unicode_width::UnicodeWidthStr::width(l) <= 80));
    assert!(s.contains("weather-cli"), "{s}");
}

/// Every file under `dir`, sorted.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Issue 19: the usage panel shows the active 5-hour block as `trail usage --active` does,
/// from the list or a transcript; its key again refreshes it, Esc closes it.
#[test]
fn usage_panel_shows_the_active_block() {
    let (_dir, store) = common::sample_store();
    let mut cfg = common::config(&store);
    // An hour after the samples' last request (2026-11-20 14:02 UTC): a block is active.
    cfg.clock = Some(trail_query::Clock {
        now: chrono::DateTime::parse_from_rfc3339("2026-11-20T15:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc),
        zone: trail_report::zone::DayZone::utc(),
    });
    let mut t = Headless::new(cfg, 110, 24).unwrap();
    t.press("ctrl-b");
    t.settle();
    let screen = t.screen();
    for want in [
        "Usage · ctrl-b refreshes · Esc back",
        "Active 5-hour block (UTC)",
        "Estimate from local logs",
        "Block     2026-11-20 14:00 – 19:00, 4h00m left (now 15:00)",
        "Budget    $0.00 of $20.00 (0%)",
        "Tokens    31,172 (4 requests",
        "└ gemini-2.5-flash: $0.00*, 15,882 tokens, 2 requests",
    ] {
        assert!(screen.contains(want), "{want:?} not in\n{screen}");
    }
    // Again: refreshed, still open.
    t.press("ctrl-b");
    t.settle();
    assert!(t.screen().contains("Active 5-hour block"), "{}", t.screen());
    t.press("esc");
    t.settle();
    assert!(
        !t.screen().contains("Active 5-hour block"),
        "{}",
        t.screen()
    );

    // From an open transcript too.
    t.type_text("units");
    t.press("enter");
    t.settle();
    t.press("ctrl-b");
    t.settle();
    assert!(t.screen().contains("Active 5-hour block"), "{}", t.screen());
}
