//! `trail serve` as a user starts it: the URL printed, the viewer answering on loopback, a
//! warning for `--bind` to another address, a usage error without a store.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};

use common::*;

/// Stops the server when the test ends, however it ends.
struct Serving(Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn get(host_port: &str, path: &str) -> String {
    let mut s = TcpStream::connect(host_port).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host_port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

fn indexed_store(dir: &std::path::Path) -> std::path::PathBuf {
    let store = dir.join("t.db");
    let (code, _, err) = run(trail(dir, &store)
        .arg("--home")
        .arg(examples_home())
        .arg("index"));
    assert_eq!(code, 0, "{err}");
    store
}

fn start(cmd: &mut std::process::Command) -> (Serving, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_string();
    (Serving(child), url)
}

#[test]
fn serve_prints_its_url_and_answers_on_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let store = indexed_store(dir.path());
    let (_server, url) = start(trail(dir.path(), &store).args(["serve", "--port", "0"]));
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let host = url.trim_start_matches("http://").trim_end_matches('/');
    let page = get(host, "/");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("weather-cli"));
    let json = get(host, "/api/sessions?source=codex");
    assert!(json.contains("\"source\":\"codex\""));
}

#[test]
fn bind_elsewhere_warns_and_no_store_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = indexed_store(dir.path());
    let (mut server, url) =
        start(trail(dir.path(), &store).args(["serve", "--port", "0", "--bind", "0.0.0.0"]));
    assert!(url.starts_with("http://0.0.0.0:"), "{url}");
    let _ = server.0.kill();
    let mut err = String::new();
    server
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(err.contains("warning: serving on 0.0.0.0"), "{err}");

    let (code, _, err) =
        run(trail(dir.path(), &dir.path().join("none.db")).args(["serve", "--port", "0"]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no store") && err.contains("trail index"),
        "{err}"
    );
}
