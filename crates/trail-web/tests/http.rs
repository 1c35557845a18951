//! Every page and API endpoint against a running server: status, content, filters, paging,
//! 404 for an unknown id, 400 for a bad argument, the Host check, read-only methods, the
//! security headers, server-sent events, and --watch picking up a new session.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use base64::Engine;
use common::*;
use sha2::{Digest, Sha256};

fn ids_in(body: &str) -> Vec<String> {
    body.split("href=\"/sessions/")
        .skip(1)
        .map(|s| s.split('"').next().unwrap().to_string())
        .collect()
}

#[test]
fn sessions_page_lists_filters_sorts_and_pages() {
    let s = server();
    let all = get(&s, "/");
    assert_eq!(all.status, 200);
    assert!(all.header("content-type").unwrap().starts_with("text/html"));
    assert!(
        all.body.contains("weather-cli: --units flag and PR"),
        "{}",
        all.body
    );
    let every = ids_in(&all.body);
    assert!(every.len() >= 5, "{every:?}");
    assert!(every.iter().any(|i| i == HOSTILE_ID));
    assert_eq!(get(&s, "/sessions").body.len(), all.body.len());

    // Filters: agent, repository or folder, branch, time.
    let codex = get(&s, "/?source=codex");
    assert_eq!(codex.status, 200);
    assert!(codex.body.contains("<td>codex</td>"));
    assert!(!codex.body.contains("<td>claude-code</td>"));
    let long = get(&s, "/?repo=tmp%2Flong");
    assert_eq!(ids_in(&long.body), vec![LONG_ID.to_string()]);
    let branch = get(&s, "/?branch=feature%2Funits");
    assert!(ids_in(&branch.body).contains(&SAMPLE_CLAUDE_ID.to_string()));
    assert!(!ids_in(&branch.body).contains(&LONG_ID.to_string()));
    // Sessions started before October: the long fixture and the Copilot CLI sample (February).
    let old = get(&s, "/?until=2026-10-02");
    let old_ids = ids_in(&old.body);
    assert!(old_ids.contains(&LONG_ID.to_string()), "{old_ids:?}");
    assert!(
        !old_ids.contains(&SAMPLE_CLAUDE_ID.to_string()),
        "{old_ids:?}"
    );
    let none = get(&s, "/?since=2099-01-01");
    assert!(none.body.contains("No sessions match."));

    // Sort both ways.
    let oldest = ids_in(&get(&s, "/?sort=oldest").body);
    let mut reversed = every.clone();
    reversed.reverse();
    assert_eq!(oldest, reversed);

    // Paging with the query layer's cursor: every session once.
    let mut seen = Vec::new();
    let mut path = "/?limit=2".to_string();
    for _ in 0..20 {
        let page = get(&s, &path);
        assert_eq!(page.status, 200);
        let ids = ids_in(&page.body);
        assert!(ids.len() <= 2);
        seen.extend(ids);
        match page.body.split("rel=\"next\" href=\"").nth(1) {
            Some(rest) => path = rest.split('"').next().unwrap().replace("&amp;", "&"),
            None => break,
        }
    }
    assert_eq!(seen, every);

    // Bad arguments are 400 pages that say why.
    for bad in [
        "/?source=notanagent",
        "/?since=whenever",
        "/?limit=0",
        "/?sort=sideways",
        "/?cursor=zz",
    ] {
        let r = get(&s, bad);
        assert_eq!(r.status, 400, "{bad}");
        assert!(
            r.body.contains("class=\"error-message\""),
            "{bad}: {}",
            r.body
        );
    }
}

#[test]
fn session_page_renders_the_transcript_with_anchors_marks_and_subagents() {
    let s = server();
    let r = get(&s, &format!("/sessions/{SAMPLE_CLAUDE_ID}?q=imperial"));
    assert_eq!(r.status, 200);
    assert!(r.body.contains("<section class=\"turn\" id=\"turn-0\">"));
    assert!(r.body.contains("<details class=\"tool\">"));
    assert!(
        r.body.contains("<details class=\"subagent\">"),
        "subagents nest under their call"
    );
    assert!(r.body.contains("<mark>imperial</mark>") || r.body.contains("<mark>Imperial</mark>"));
    assert!(r.body.ends_with("</html>\n"));
    // A unique prefix is enough.
    assert_eq!(get(&s, "/sessions/7c1e2f40").status, 200);

    // The long transcript streams whole.
    let long = get(&s, &format!("/sessions/{LONG_ID}"));
    assert_eq!(long.status, 200);
    assert_eq!(long.header("transfer-encoding"), Some("chunked"));
    assert_eq!(
        long.body.matches("<section class=\"turn\" id=").count(),
        LONG_TURNS
    );
    assert!(long
        .body
        .contains(&format!("id=\"turn-{}\"", LONG_TURNS - 1)));

    let missing = get(&s, "/sessions/ffffffff-nope");
    assert_eq!(missing.status, 404);
    assert!(
        missing.body.contains("no session matches"),
        "{}",
        missing.body
    );
}

#[test]
fn hostile_transcript_is_escaped_and_secrets_redacted() {
    let s = server();
    for path in [
        format!("/sessions/{HOSTILE_ID}"),
        "/".to_string(),
        "/search?q=pwned".to_string(),
        "/improve?since=2020-01-01".to_string(),
        "/standup?since=2020-01-01".to_string(),
        "/tips?since=2020-01-01".to_string(),
    ] {
        let r = get(&s, &path);
        assert_eq!(r.status, 200, "{path}");
        let b = &r.body;
        // The only script is the embedded one, once, at the end.
        assert_eq!(b.matches("<script").count(), 1, "{path}");
        for payload in [
            "<img src=x",
            "<svg onload",
            "<iframe",
            "href=\"javascript:",
            "<style>body",
            "<body onload",
            "<meta http-equiv=\"refresh\"",
        ] {
            assert!(!b.contains(payload), "{path} carries {payload}");
        }
        assert!(!b.contains("ghp_A1b2C3"), "{path} shows the token");
    }
    let page = get(&s, &format!("/sessions/{HOSTILE_ID}")).body;
    assert!(page.contains("&lt;script&gt;window.__pwned=1"));
    assert!(page.contains("[REDACTED:github-token]"));
    let api = get(&s, &format!("/api/sessions/{HOSTILE_ID}")).body;
    assert!(!api.contains("ghp_A1b2C3") && api.contains("[REDACTED:github-token]"));

    // --no-redact shows it as recorded (still escaped).
    let config = trail_web::WebConfig::loopback(shared_store().to_path_buf(), 0);
    let open = trail_web::RunningServer::start(config).unwrap();
    let page = get(&open, &format!("/sessions/{HOSTILE_ID}")).body;
    assert!(page.contains("ghp_A1b2C3"));
    assert_eq!(page.matches("<script").count(), 1);
}

#[test]
fn session_changes_page_and_api() {
    let s = server();
    let r = get(&s, &format!("/sessions/{SAMPLE_CLAUDE_ID}/diff"));
    assert_eq!(r.status, 200);
    assert!(r.body.contains("<section class=\"file-diff\"><h2><code>/home/demo/projects/weather-cli/src/cli.rs</code>"), "{}", r.body);
    assert!(
        r.body
            .contains("<span class=\"da\">+    pub units: Units,</span>"),
        "{}",
        r.body
    );
    // The session page links to it and carries the same changes at its end.
    let page = get(&s, &format!("/sessions/{SAMPLE_CLAUDE_ID}")).body;
    assert!(page.contains(&format!(
        "<a href=\"/sessions/{SAMPLE_CLAUDE_ID}/diff\">Changes</a>"
    )));
    assert!(page.contains("<section class=\"changes\" id=\"changes\">"));
    // The API is `trail diff --json`.
    let api = get(&s, &format!("/api/sessions/{SAMPLE_CLAUDE_ID}/diff?turn=0"));
    assert_eq!(api.status, 200);
    let v: serde_json::Value = serde_json::from_str(&api.body).unwrap();
    assert_eq!(v["session_id"], SAMPLE_CLAUDE_ID);
    assert_eq!(v["turn"], 0);
    assert_eq!(v["files"][0]["changes"][0]["source"], "Edit");
    // A turn that changed nothing, a bad turn, an unknown session.
    let none = get(&s, &format!("/sessions/{SAMPLE_CLAUDE_ID}/diff?turn=9"));
    assert!(none.body.contains("id=\"no-changes\""));
    assert_eq!(
        get(&s, &format!("/api/sessions/{SAMPLE_CLAUDE_ID}/diff?turn=x")).status,
        400
    );
    assert_eq!(get(&s, "/sessions/ffffffff-nope/diff").status, 404);
    // Hostile text in a diff is escaped, and its escapes shown as symbols.
    let hostile = get(&s, &format!("/sessions/{HOSTILE_ID}/diff")).body;
    assert!(
        hostile.contains("&lt;script&gt;window.__pwned=21&lt;/script&gt;"),
        "{hostile}"
    );
    assert!(!hostile.contains("<img src=x") && !hostile.contains('\u{1b}'));
    assert_eq!(hostile.matches("<script").count(), 1);
}

#[test]
fn search_page_works_as_a_plain_form() {
    let s = server();
    let form = get(&s, "/search");
    assert_eq!(form.status, 200);
    assert!(form.body.contains("id=\"search-form\"") && form.body.contains("method=\"get\""));
    assert!(!form.body.contains("class=\"hit\""));

    let r = get(&s, "/search?q=imperial");
    assert_eq!(r.status, 200);
    assert!(r.body.contains("class=\"hit\""));
    assert!(r.body.contains(&format!(
        "href=\"/sessions/{SAMPLE_CLAUDE_ID}?q=imperial#turn-"
    )));
    assert!(r.body.contains("<mark>"));

    let filtered = get(&s, "/search?q=imperial&source=codex");
    assert!(!filtered.body.contains(SAMPLE_CLAUDE_ID));
    let long = get(&s, "/search?q=longsession&limit=3&sort=recent");
    assert_eq!(long.body.matches("class=\"hit\"").count(), 3);
    assert!(get(&s, "/search?q=zzzznothing")
        .body
        .contains("No matches."));

    // A misspelled word is searched as the index's near spelling, and the page says so, with
    // a link that searches it as typed (issue 43).
    let typo = get(&s, "/search?q=imperal");
    assert!(typo.body.contains(SAMPLE_CLAUDE_ID), "{}", typo.body);
    assert!(
        typo.body
            .contains("no match for &quot;imperal&quot;; showing &quot;imperial&quot;"),
        "{}",
        typo.body
    );
    assert!(typo.body.contains("href=\"/search?q=imperal&amp;exact=1\""));
    let exact = get(&s, "/search?q=imperal&exact=1");
    assert!(exact.body.contains("No matches.") && !exact.body.contains("showing"));

    for bad in [
        "/search?q=x&limit=abc",
        "/search?q=x&role=nobody",
        "/search?q=x&sort=up",
        "/search?q=x&since=never",
    ] {
        let r = get(&s, bad);
        assert_eq!(r.status, 400, "{bad}");
        assert!(r.body.contains("error-message"));
        assert!(
            r.body.contains("id=\"search-form\""),
            "the form stays to fix the query"
        );
    }
}

#[test]
fn report_pages_render_charts_and_tables() {
    let s = server();
    let usage = get(&s, "/usage?since=2020-01-01");
    assert_eq!(usage.status, 200);
    assert_eq!(usage.body.matches("<svg class=\"chart\"").count(), 4);
    assert!(usage.body.contains("Tokens by model") && usage.body.contains("claude-sonnet-4-5"));
    assert!(usage.body.contains("<rect class=\"bar tokens\""));
    let agent = get(&s, "/usage?since=2020-01-01&source=codex");
    assert!(!agent.body.contains("<td>claude-code</td>"));
    assert_eq!(get(&s, "/usage?tz=Mars%2FOlympus").status, 400);

    let standup = get(&s, "/standup?since=2020-01-01");
    assert_eq!(standup.status, 200);
    assert!(standup.body.contains("weather-cli"));
    assert!(get(&s, "/standup").body.contains("Standup"));

    let tips = get(&s, "/tips?since=2020-01-01");
    assert_eq!(tips.status, 200);
    assert!(tips.body.contains("Longest sessions") && tips.body.contains("Bash"));
    // The reports are trail-report's own documents through trail-render's HTML sink: a section
    // per work stream, numbers in numeric cells, sessions linked to their pages.
    assert!(
        standup.body.contains("<section class=\"stream\"><h2>"),
        "{}",
        standup.body
    );
    assert!(
        standup.body.contains("<a href=\"/sessions/"),
        "{}",
        standup.body
    );
    assert!(
        tips.body.contains("<th class=\"num\">Calls</th>"),
        "{}",
        tips.body
    );
    assert!(tips.body.contains("<a href=\"/sessions/"), "{}", tips.body);

    let improve = get(&s, "/improve?since=2020-01-01");
    assert_eq!(improve.status, 200);
    assert!(improve.body.contains("Where the agents struggled"));

    for bad in [
        "/usage?since=x",
        "/standup?until=x",
        "/tips?source=x",
        "/improve?since=x",
    ] {
        assert_eq!(get(&s, bad).status, 400, "{bad}");
    }
}

#[test]
fn file_history_page_and_api() {
    let s = server();
    let form = get(&s, "/why");
    assert_eq!(form.status, 200);
    assert!(form.body.contains("name=\"path\""));
    let r = get(
        &s,
        "/why?path=%2Fhome%2Fdemo%2Fprojects%2Fweather-cli%2Fsrc%2Frender.rs",
    );
    assert_eq!(r.status, 200);
    let api = get(
        &s,
        "/api/why?path=%2Fhome%2Fdemo%2Fprojects%2Fweather-cli%2Fsrc%2Frender.rs",
    );
    assert_eq!(api.status, 200);
    let v = api.json();
    let touches = v["history"]["touches"].as_array().unwrap();
    assert!(!touches.is_empty(), "{v}");
    assert_eq!(touches[0]["session_id"], SAMPLE_CLAUDE_ID);
    assert!(r
        .body
        .contains(&format!("href=\"/sessions/{SAMPLE_CLAUDE_ID}#turn-")));
    assert_eq!(get(&s, "/api/why").status, 400);
    assert_eq!(get(&s, "/why?path=%2Fx&line=zero").status, 400);
}

#[test]
fn api_returns_the_cli_shapes() {
    let s = server();
    let list = get(&s, "/api/sessions?limit=2");
    assert_eq!(list.status, 200);
    assert_eq!(list.header("content-type"), Some("application/json"));
    let rows = list.json();
    assert_eq!(rows.as_array().unwrap().len(), 2);
    for key in [
        "id",
        "source",
        "title",
        "updated_at",
        "turns",
        "models",
        "source_missing",
    ] {
        assert!(rows[0].get(key).is_some(), "{key}");
    }
    let cursor = list.header("x-next-cursor").unwrap().to_string();
    assert!(list.header("link").unwrap().contains("rel=\"next\""));
    let next = get(&s, &format!("/api/sessions?limit=2&cursor={cursor}")).json();
    assert_ne!(next[0]["id"], rows[0]["id"]);
    assert_ne!(next[0]["id"], rows[1]["id"]);
    let codex = get(&s, "/api/sessions?source=codex").json();
    assert!(codex
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["source"] == "codex"));
    assert_eq!(get(&s, "/api/sessions?source=nope").status, 400);

    let detail = get(&s, &format!("/api/sessions/{SAMPLE_CLAUDE_ID}")).json();
    assert_eq!(detail["session"]["id"], SAMPLE_CLAUDE_ID);
    assert!(detail["messages"].as_array().unwrap().len() > 3);
    assert!(detail["subagents"].as_array().is_some());
    let one = get(&s, &format!("/api/sessions/{LONG_ID}?turn=7")).json();
    assert!(one["messages"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["turn_index"] == 7));
    assert_eq!(
        get(&s, &format!("/api/sessions/{LONG_ID}?turn=9999")).status,
        400
    );
    let missing = get(&s, "/api/sessions/ffffffff-nope");
    assert_eq!(missing.status, 404);
    assert!(missing.json()["error"]
        .as_str()
        .unwrap()
        .contains("no session"));

    let hits = get(&s, "/api/search?q=imperial").json();
    let hit = &hits[0];
    assert_eq!(hit["session_id"], SAMPLE_CLAUDE_ID);
    assert!(hit["snippet"].as_str().unwrap().contains("**"));
    assert!(hit["open"].as_str().unwrap().starts_with("trail show "));
    assert_eq!(hits[0].get("correction"), None);
    let typo = get(&s, "/api/search?q=imperal");
    assert_eq!(typo.json()[0]["session_id"], SAMPLE_CLAUDE_ID);
    assert_eq!(
        typo.header("x-trail-correction"),
        Some("no%20match%20for%20%22imperal%22%3B%20showing%20%22imperial%22")
    );
    assert_eq!(typo.header("x-trail-query"), Some("imperial"));
    let exact = get(&s, "/api/search?q=imperal&exact=1");
    assert_eq!(exact.json(), serde_json::json!([]));
    assert_eq!(exact.header("x-trail-correction"), None);
    let empty = get(&s, "/api/search?q=");
    assert_eq!(empty.status, 400);
    assert!(empty.json()["error"].as_str().unwrap().contains("empty"));
    assert_eq!(get(&s, "/api/search?q=x&role=robot").status, 400);

    let usage = get(&s, "/api/usage?since=2020-01-01&by=model").json();
    assert_eq!(usage["group_by"], "model");
    assert!(usage["totals"]["total_tokens"].as_i64().unwrap() > 0);
    assert_eq!(get(&s, "/api/usage?by=planet").status, 400);
    let standup = get(&s, "/api/standup?since=2020-01-01").json();
    assert!(!standup["streams"].as_array().unwrap().is_empty());
    let tips = get(&s, "/api/tips?since=2020-01-01").json();
    assert!(tips["sessions"].as_i64().unwrap() >= 5);
    let improve = get(&s, "/api/improve?since=2020-01-01").json();
    assert!(improve["findings"].is_array());

    let nothing = get(&s, "/api/nothing");
    assert_eq!(nothing.status, 404);
    assert!(nothing.json()["error"].is_string());
    assert_eq!(get(&s, "/nothing-here").status, 404);
}

#[test]
fn only_its_own_host_and_only_reads() {
    let s = server();
    let addr = s.addr();
    let port = addr.port();
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ] {
        assert_eq!(request(addr, "GET", "/", Some(&host)).status, 200, "{host}");
    }
    for host in [
        "evil.example",
        "evil.example:80",
        &format!("attacker.test:{port}"),
        "127.0.0.1",
    ] {
        let r = request(addr, "GET", "/api/sessions", Some(host));
        assert_eq!(r.status, 421, "{host}");
        assert!(r.json()["error"].as_str().unwrap().contains("own address"));
    }
    assert_eq!(request(addr, "GET", "/", None).status, 421);
    let post = request(addr, "POST", "/api/sessions", Some(&addr.to_string()));
    assert_eq!(post.status, 405);
    assert_eq!(post.header("allow"), Some("GET, HEAD"));
    assert_eq!(
        request(addr, "DELETE", "/", Some(&addr.to_string())).status,
        405
    );
    assert_eq!(
        request(addr, "HEAD", "/", Some(&addr.to_string())).status,
        200
    );
}

#[test]
fn security_headers_allow_only_the_embedded_script() {
    let s = server();
    let page = get(&s, "/search");
    let csp = page
        .header("content-security-policy")
        .expect("a CSP")
        .to_string();
    assert!(csp.contains("default-src 'none'"));
    assert!(csp.contains("frame-ancestors 'none'"));
    assert!(
        !csp.contains("unsafe-inline") && !csp.contains("http"),
        "{csp}"
    );
    // The script-src hash is the page's one script.
    let script = page
        .body
        .split("<script>")
        .nth(1)
        .unwrap()
        .split("</script>")
        .next()
        .unwrap();
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(script.as_bytes()));
    assert!(
        csp.contains(&format!("script-src 'sha256-{hash}'")),
        "{csp}"
    );
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(page.header("referrer-policy"), Some("no-referrer"));
    // On every response: API, errors, assets, refusals.
    for path in [
        "/api/sessions",
        "/sessions/nope",
        "/assets/style.css",
        "/assets/icon.svg",
    ] {
        assert!(
            get(&s, path).header("content-security-policy").is_some(),
            "{path}"
        );
    }
    let refused = request(s.addr(), "GET", "/", Some("evil.example"));
    assert!(refused.header("content-security-policy").is_some());
    // Nothing is loaded from elsewhere.
    let css = get(&s, "/assets/style.css");
    assert_eq!(css.status, 200);
    assert!(!css.body.contains("url(") && !css.body.contains("@import"));
    for path in [
        "/",
        "/search",
        "/usage",
        &format!("/sessions/{SAMPLE_CLAUDE_ID}"),
    ] {
        let b = get(&s, path).body;
        assert!(
            !b.contains("src=\"http") && !b.contains("href=\"http"),
            "{path}"
        );
    }
}

/// Reads server-sent events until one `index` event's data satisfies `done`.
fn wait_for_event(
    addr: std::net::SocketAddr,
    done: impl Fn(&serde_json::Value) -> bool,
    timeout: Duration,
) -> serde_json::Value {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(timeout)).unwrap();
    write!(
        stream,
        "GET /api/events HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let reader = BufReader::new(stream);
    let started = Instant::now();
    let mut event = String::new();
    for line in reader.lines() {
        let line = line.expect("events keep coming");
        if let Some(name) = line.strip_prefix("event: ") {
            event = name.to_string();
        }
        if let Some(data) = line.strip_prefix("data: ") {
            if event == "index" {
                let v: serde_json::Value = serde_json::from_str(data).unwrap();
                if done(&v) {
                    return v;
                }
            }
        }
        assert!(started.elapsed() < timeout, "no matching event in time");
    }
    panic!("the event stream ended");
}

#[test]
fn events_tell_the_current_state() {
    let s = server();
    let v = wait_for_event(s.addr(), |_| true, Duration::from_secs(10));
    let count = v["sessions"].as_i64().unwrap();
    assert!(count >= 6, "{v}");
    let page = get(&s, "/").body;
    assert!(page.contains(&format!("data-sessions=\"{count}\"")));
}

#[test]
fn watch_indexes_new_sessions_and_tells_open_pages() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("projects");
    std::fs::create_dir_all(&root).unwrap();
    write_long_session(&root, "20000000-0000-4000-8000-000000000001", 2);
    let mut roots = trail_ingest::Roots::default();
    roots
        .by_source
        .insert(trail_model::SourceKind::ClaudeCode, vec![root.clone()]);
    let mut config = trail_web::WebConfig::loopback(dir.path().join("watched.db"), 0);
    config.watch = Some(trail_web::WatchConfig {
        roots,
        interval: None,
        debounce: Duration::from_millis(200),
    });
    // The first index makes the store before the server answers.
    let s = trail_web::RunningServer::start(config).unwrap();
    let first = wait_for_event(s.addr(), |_| true, Duration::from_secs(10));
    assert_eq!(first["sessions"], 1);
    assert!(get(&s, "/").body.contains("kept fresh"));

    // An agent writes a new session: the watcher indexes it and the event says so.
    let addr = s.addr();
    let waiter = std::thread::spawn(move || {
        wait_for_event(addr, |v| v["sessions"] == 2, Duration::from_secs(30))
    });
    std::thread::sleep(Duration::from_millis(300));
    let staging = dir.path().join("staging");
    let file = write_long_session(&staging, "20000000-0000-4000-8000-000000000002", 3);
    let target = root.join("-tmp-long").join(file.file_name().unwrap());
    std::fs::rename(&file, &target).unwrap();
    let v = waiter.join().unwrap();
    assert!(v["generation"].as_u64().unwrap() >= 2);
    let list = get(&s, "/api/sessions").json();
    assert_eq!(list.as_array().unwrap().len(), 2);
}

#[test]
fn a_missing_store_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let err = trail_web::RunningServer::start(trail_web::WebConfig::loopback(
        dir.path().join("none.db"),
        0,
    ))
    .err()
    .expect("no store, no server");
    assert!(err.to_string().contains("no store"), "{err}");
}
