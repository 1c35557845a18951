//! Helpers shared by the CLI's end-to-end tests: an isolated `trail` command and the samples.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

/// Returns the repository's root folder.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Returns the bundled sample home (`examples/home`).
pub fn examples_home() -> PathBuf {
    repo_root().join("examples/home")
}

/// A `trail` command isolated from the machine: empty HOME, its own store, no colour.
pub fn trail(home: &Path, store: &Path) -> Command {
    let mut c = Command::cargo_bin("trail").unwrap();
    c.env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .arg("--store")
        .arg(store)
        .arg("--color")
        .arg("never");
    c
}

/// Runs a command; returns (exit code, stdout, stderr).
pub fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
