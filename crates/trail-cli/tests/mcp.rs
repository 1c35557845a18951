//! `trail mcp` driven by a real MCP client: the official Python SDK (`mcp` on PyPI) runs
//! `crates/trail-mcp/tests/mcp_client.py` against the built binary over stdio. The script
//! checks every tool with valid and invalid input, resources, prompts, the size cap on every
//! answer, 30 SQL write and escape attempts (store bytes unchanged), active sessions left out
//! of search, planted secrets absent from every answer, a 10 MB tool output paged, freshness,
//! and a missing store.
//!
//! Without python3 and `mcp` the test says it was skipped, except in CI (`CI=true`), where a
//! missing client fails it: `.ci/run` installs the pinned `mcp`.

#![allow(clippy::print_stderr)]

mod common;

use std::process::Command;

/// The `mcp` release the script is written against (`.ci/run` installs the same).
const MCP_VERSION: &str = "2.3.0";

fn python_with_mcp() -> Option<String> {
    for python in ["python3", "python"] {
        let ok = Command::new(python)
            .args(["-c", "import mcp, mcp_types"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some(python.to_string());
        }
    }
    None
}

#[test]
fn a_python_mcp_client_drives_trail_mcp() {
    let Some(python) = python_with_mcp() else {
        let why = format!(
            "python mcp package not installed (python3 -m pip install 'mcp=={MCP_VERSION}')"
        );
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{why}: CI must run the MCP client test");
        }
        eprintln!("skipped: {why}");
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let script = common::repo_root().join("crates/trail-mcp/tests/mcp_client.py");
    let out = Command::new(python)
        .arg(script)
        .arg("--trail")
        .arg(env!("CARGO_BIN_EXE_trail"))
        .arg("--work")
        .arg(work.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the MCP client checks failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    assert!(stdout.contains("all MCP client checks passed"), "{stdout}");
    // The server logs nothing of what it was asked (only failures of its own would show).
    assert!(
        !stderr.contains("zebracorn") && !stderr.contains("flaky"),
        "{stderr}"
    );
}
