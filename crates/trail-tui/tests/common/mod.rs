//! Stores built from fixtures for the TUI's tests: the bundled samples and a session whose
//! prompt and tool output hold escape sequences.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use trail_ingest::{index, IndexOptions, NoProgress, Roots};
use trail_model::SourceKind;
use trail_query::{Clock, DayZone};
use trail_store::Store;
use trail_tui::{Colors, Here, Keymap, TuiConfig};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Roots of every source under `home`.
pub fn roots_under(home: &Path) -> Roots {
    let mut roots = Roots::default();
    for (k, p) in [
        (SourceKind::ClaudeCode, ".claude/projects"),
        (SourceKind::CopilotVscode, ".config/Code"),
        (SourceKind::CopilotCli, ".copilot"),
        (SourceKind::Codex, ".codex"),
        (SourceKind::GeminiCli, ".gemini"),
        (SourceKind::Opencode, ".local/share/opencode"),
    ] {
        roots.by_source.insert(k, vec![home.join(p)]);
    }
    roots
}

/// A store with the bundled samples and the escape-sequence fixture.
pub fn sample_store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let mut store = Store::open(&path).unwrap();
    for home in [
        repo_root().join("examples/home"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/escapes"),
    ] {
        let opts = IndexOptions {
            roots: roots_under(&home),
            ..IndexOptions::default()
        };
        let summary = index(&mut store, &opts, &NoProgress).unwrap();
        assert!(summary.failures.is_empty(), "{:?}", summary.failures);
    }
    (dir, path)
}

/// "Now" for every test: a few days after the samples.
pub fn clock() -> Clock {
    let now: DateTime<Utc> = DateTime::parse_from_rfc3339("2026-11-23T12:00:00Z")
        .unwrap()
        .with_timezone(&Utc);
    Clock {
        now,
        zone: DayZone::utc(),
    }
}

/// A config over `store`, started outside any repository.
pub fn config(store: &Path) -> TuiConfig {
    TuiConfig {
        store: store.to_path_buf(),
        here: Here {
            repository: None,
            folder: Some(PathBuf::from("/home/demo")),
            branch: None,
            host: Some("devbox".into()),
        },
        colors: Colors::default(),
        no_color: false,
        keys: Keymap::default(),
        export_dir: store.parent().unwrap().join("exports"),
        clock: Some(clock()),
        prices: trail_report::PriceTable::shipped().clone(),
        block_budget_usd: Some(20.0),
        continue_homes: trail_continue::TargetHomes {
            claude_projects: Some(store.parent().unwrap().join("claude").join("projects")),
            codex_home: Some(store.parent().unwrap().join("codex")),
            gemini_home: Some(store.parent().unwrap().join("gemini")),
        },
    }
}
