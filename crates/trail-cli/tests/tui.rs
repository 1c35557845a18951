//! `trail tui` as a person runs it: the real binary in a pseudo-terminal (a private tmux
//! server), driven by keys, read back from the screen tmux keeps.
//!
//! Without tmux these tests say they were skipped, except under CI (`CI` set), where tmux is
//! installed by `.ci/run` and its absence is a failure.

#![allow(clippy::print_stderr)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use assert_cmd::cargo::cargo_bin;

/// True when tmux can run here; panics under CI when it cannot.
fn tmux_available() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
        assert!(
            !ci,
            "tmux is required for the TUI tests under CI (.ci/run installs it)"
        );
        eprintln!("skipped: tmux not found (install tmux to run the TUI's terminal tests)");
    }
    ok
}

/// A tmux server of the test's own, killed when the test ends.
struct Tmux {
    socket: String,
    exit_file: PathBuf,
}

impl Tmux {
    /// Starts `trail ARGS` in a `width` x `height` pane, in folder `cwd`, with an empty home.
    fn start(name: &str, dir: &Path, cwd: &Path, args: &[&str], width: u16, height: u16) -> Tmux {
        let socket = format!("trail-test-{}-{name}", std::process::id());
        let exit_file = dir.join(format!("{name}.exit"));
        let home = dir.join("home");
        std::fs::create_dir_all(&home).unwrap();
        // `bin` first on PATH: a test puts stand-ins for agents there.
        let mut line = format!(
            "env -i PATH='{}':/usr/bin:/bin HOME='{}' TERM=xterm-256color HOSTNAME=testbox '{}'",
            dir.join("bin").display(),
            home.display(),
            cargo_bin("trail").display()
        );
        for a in args {
            line.push_str(&format!(" '{a}'"));
        }
        // The pane stays open after trail exits, so the restored screen can be inspected.
        line.push_str(&format!("; echo $? > '{}'; sleep 30", exit_file.display()));
        let t = Tmux { socket, exit_file };
        let status = t
            .cmd()
            .args([
                "new-session",
                "-d",
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
            ])
            .arg("-c")
            .arg(cwd)
            .arg(line)
            .status()
            .unwrap();
        assert!(status.success(), "tmux new-session failed");
        t
    }

    fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"]);
        c
    }

    fn screen(&self) -> String {
        let out = self.cmd().args(["capture-pane", "-p"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the screen shows `text`; panics with the screen after 15 s.
    fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(text) {
                return s;
            }
            assert!(
                start.elapsed() < Duration::from_secs(15),
                "{text:?} never appeared; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types text literally.
    fn type_text(&self, text: &str) {
        assert!(self
            .cmd()
            .args(["send-keys", "-l", text])
            .status()
            .unwrap()
            .success());
    }

    /// Presses keys by tmux name (`Enter`, `Escape`, `C-r`).
    fn press(&self, key: &str) {
        assert!(self
            .cmd()
            .args(["send-keys", key])
            .status()
            .unwrap()
            .success());
    }

    fn pane_flag(&self, flag: &str) -> String {
        let out = self
            .cmd()
            .args(["display-message", "-p", &format!("#{{{flag}}}")])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Waits for trail to exit; returns its exit code.
    fn exit_code(&self) -> i32 {
        let start = Instant::now();
        loop {
            if let Ok(s) = std::fs::read_to_string(&self.exit_file) {
                if let Ok(code) = s.trim().parse() {
                    return code;
                }
            }
            assert!(
                start.elapsed() < Duration::from_secs(15),
                "trail did not exit; the screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The terminal is back to normal: main screen, no mouse reporting, cursor shown.
    fn assert_restored(&self) {
        assert_eq!(
            self.pane_flag("alternate_on"),
            "0",
            "still on the alternate screen"
        );
        assert_eq!(
            self.pane_flag("mouse_any_flag"),
            "0",
            "mouse reporting left on"
        );
        assert_eq!(self.pane_flag("cursor_flag"), "1", "cursor left hidden");
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
    }
}

/// A store indexed from the bundled samples.
fn sample_store(dir: &Path) -> PathBuf {
    let store = dir.join("t.db");
    let (code, _, err) = common::run(
        common::trail(dir, &store)
            .arg("--home")
            .arg(common::examples_home())
            .arg("index"),
    );
    assert_eq!(code, 0, "{err}");
    store
}

#[test]
fn search_open_and_quit_in_a_terminal() {
    if !tmux_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = sample_store(dir.path());
    let store = store.display().to_string();
    let t = Tmux::start(
        "search",
        dir.path(),
        dir.path(),
        &["--store", &store, "tui"],
        100,
        30,
    );
    // Outside a repository it opens on every session, the search box focused.
    let s = t.wait_for("6 sessions");
    assert!(s.contains("[all] ❯"), "{s}");
    t.type_text("imperial");
    let s = t.wait_for("hits");
    assert!(s.contains("weather-cli"), "{s}");
    t.press("Enter");
    // The preview already shows `── turn 0`: wait for the transcript's own header.
    let s = t.wait_for("matching lines");
    assert!(s.contains("── turn 0"), "{s}");
    assert!(s.contains("❯ Add a `--units` flag"), "{s}");
    t.press("f");
    t.wait_for("── output ──");
    // `d` shows what the session changed (its Edit calls as diffs), Esc goes back.
    t.press("d");
    let s = t.wait_for("Changes · 7c1e2f40");
    assert!(s.contains("weather-cli/src/cli.rs  +2 -0"), "{s}");
    assert!(s.contains("+    pub units: Units,"), "{s}");
    t.press("Escape");
    t.wait_for("── output ──");
    // `r` runs the resume command outside the full screen (here a stand-in `claude` that
    // records its arguments and waits for a line), then comes back.
    let record = dir.path().join("claude-args");
    std::fs::create_dir_all(dir.path().join("bin")).unwrap();
    let fake = dir.path().join("bin/claude");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho \"$@\" > '{}'\necho stand-in claude running\nread line\n",
            record.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    t.press("r");
    t.wait_for("stand-in claude running");
    assert_eq!(
        t.pane_flag("alternate_on"),
        "0",
        "the agent runs on the main screen"
    );
    t.press("Enter");
    let s = t.wait_for("claude exited");
    assert!(s.contains("── turn 0"), "back in the transcript:\n{s}");
    assert_eq!(
        std::fs::read_to_string(&record).unwrap().trim(),
        "--resume 7c1e2f40-5b3a-4d8e-9f21-0a6b3c4d5e6f"
    );
    // `c` then `x` continues the session in Codex: a new rollout under the (empty) home's
    // ~/.codex/sessions, then a stand-in `codex` is run on it and the TUI comes back.
    let record = dir.path().join("codex-args");
    let fake = dir.path().join("bin/codex");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho \"$@\" > '{}'\necho stand-in codex running\nread line\n",
            record.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    t.press("c");
    t.wait_for("continue in");
    t.press("x");
    t.wait_for("stand-in codex running");
    t.press("Enter");
    let s = t.wait_for("codex exited");
    assert!(s.contains("── turn 0"), "back in the transcript:\n{s}");
    let args = std::fs::read_to_string(&record).unwrap();
    let new_id = args
        .trim()
        .strip_prefix("resume ")
        .expect("codex resume ID");
    let sessions = dir.path().join("home/.codex/sessions");
    let rollout = walk(&sessions)
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with(&format!("{new_id}.jsonl")))
        .unwrap_or_else(|| panic!("no rollout for {new_id} under {}", sessions.display()));
    assert!(std::fs::read_to_string(rollout)
        .unwrap()
        .contains("--units"));
    t.press("Escape");
    t.wait_for("❯ imperial");
    t.press("Escape");
    assert_eq!(t.exit_code(), 0);
    t.assert_restored();
}

#[test]
fn opens_on_the_repository_it_starts_in_and_widens() {
    if !tmux_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = sample_store(dir.path());
    let store = store.display().to_string();
    // A checkout whose origin is the codex sample's repository.
    let checkout = dir.path().join("recipe-box");
    std::fs::create_dir_all(&checkout).unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .arg("-C")
            .arg(&checkout)
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "git {args:?} failed");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&[
        "remote",
        "add",
        "origin",
        "git@github.com:demo-org/recipe-box.git",
    ]);
    let t = Tmux::start("repo", dir.path(), &checkout, &["--store", &store], 100, 30);
    // `trail` alone on a terminal is the browser.
    let s = t.wait_for("[repo demo-org/recipe-box]");
    let s = if s.contains("1 session") {
        s
    } else {
        t.wait_for("1 session")
    };
    assert!(!s.contains("1 sessions"), "{s}");
    assert!(s.contains("ingredient scaler"), "{s}");
    assert!(!s.contains("weather-cli"), "{s}");
    for label in ["[folder ", "[branch main]", "[host testbox]", "[all]"] {
        t.press("C-r");
        t.wait_for(label);
    }
    let s = t.wait_for("6 sessions");
    assert!(
        s.contains("weather-cli") && s.contains("ingredient scaler"),
        "{s}"
    );
    t.press("C-c");
    assert_eq!(t.exit_code(), 0);
    t.assert_restored();
}

/// Issue 40, seen on the screen: the count said "1 hits", a hit in a tool input showed its
/// JSON escapes (`String,\n    #[arg`), and the preview cut words in two (`p` / `ick`).
#[test]
fn issue_40_one_hit_readable_snippet_and_whole_words() {
    if !tmux_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = common::screens_home(dir.path());
    let store = dir.path().join("t.db");
    let (code, _, err) = common::run(
        common::trail(dir.path(), &store)
            .arg("--home")
            .arg(&home)
            .arg("index"),
    );
    assert_eq!(code, 0, "{err}");
    let store = store.display().to_string();
    // 100 columns: the preview sits under the list, as wide as the pane; 60: a narrow pane.
    for (name, width) in [("wide", 100), ("narrow", 60)] {
        let t = Tmux::start(
            name,
            dir.path(),
            dir.path(),
            &["--store", &store, "tui"],
            width,
            40,
        );
        t.wait_for("1 session");
        t.type_text("zanzibar");
        let s = t.wait_for("1 hit");
        assert!(!s.contains("1 hits") && !s.contains("1 sessions"), "{s}");
        let s = t.wait_for("#[arg(long)]");
        assert!(!s.contains("\\n"), "JSON escapes on the screen:\n{s}");
        // Every word of the prompt is whole somewhere on the screen (the preview shows it).
        let s = t.wait_for("── turn 0");
        let s = if s.contains("unchanged") {
            s
        } else {
            t.wait_for("unchanged")
        };
        for word in common::SCREENS_PROMPT.split_whitespace() {
            assert!(s.contains(word), "{word:?} is cut on the screen:\n{s}");
        }
        t.press("C-c");
        assert_eq!(t.exit_code(), 0);
    }
}

#[test]
fn without_a_terminal_trail_alone_prints_the_help() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = common::run(&mut common::trail(dir.path(), &dir.path().join("t.db")));
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("Usage:") && err.contains("tui"), "{err}");
    let (code, _, err) =
        common::run(common::trail(dir.path(), &dir.path().join("t.db")).arg("tui"));
    assert_eq!(code, 2);
    assert!(err.contains("needs a terminal"), "{err}");
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
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
    out
}
