//! The pages: server-rendered HTML, every transcript-derived text redacted and escaped.

use std::io::{self, Write};

use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use trail_query::{
    highlight_terms, Clock, GroupBy, PriceTable, Query as Store, SearchHit, SessionRow,
    UsageReport, WhyVerdict, HIT_END, HIT_START,
};
use trail_render::{tokens, when, ExportOptions, Exporter, HtmlView, Redactor};
use trail_report::markdown::usd;
use trail_report::render;

use crate::charts::{self, Bar};
use crate::error::WebError;
use crate::html::{cut, enc, esc, one_line, query_string, session_href, turn_href, Page};
use crate::params::Params;
use crate::Shared;

type Pairs = Query<Vec<(String, String)>>;

/// Bytes of a streamed transcript sent at once.
const CHUNK: usize = 32 << 10;

/// A `<select>` of `options` (value, label) with `current` selected.
fn select(name: &str, label: &str, options: &[(&str, &str)], current: Option<&str>) -> String {
    let mut s = format!("<label>{label}<select name=\"{name}\">");
    for (value, text) in options {
        let sel = if Some(*value) == current || (current.is_none() && value.is_empty()) {
            " selected"
        } else {
            ""
        };
        s.push_str(&format!(
            "<option value=\"{}\"{sel}>{}</option>",
            esc(value),
            esc(text)
        ));
    }
    s.push_str("</select></label>");
    s
}

fn input(name: &str, label: &str, value: Option<&str>, placeholder: &str) -> String {
    format!(
        "<label>{label}<input name=\"{name}\" value=\"{}\" placeholder=\"{}\"></label>",
        esc(value.unwrap_or("")),
        esc(placeholder)
    )
}

/// The agent filter: every source in the registry, by its display name.
pub(crate) fn source_options() -> Vec<(&'static str, &'static str)> {
    let mut options = vec![("", "any")];
    options.extend(
        trail_query::registry::sources()
            .iter()
            .map(|s| (s.id(), s.name)),
    );
    options
}

fn source_select(p: &Params) -> String {
    select(
        "source",
        "Agent",
        &source_options(),
        p.get("source").as_deref(),
    )
}

/// The filters every report takes.
fn report_form(p: &Params, action: &str, extra: &str) -> String {
    format!(
        "<form class=\"filters\" method=\"get\" action=\"{action}\">{}{}{}{}{}{extra}<button type=\"submit\">Show</button></form>\n",
        source_select(p),
        input("repo", "Repository or folder", p.get("repo").as_deref(), "owner/name"),
        input("since", "Since", p.get("since").as_deref(), "7d, 2026-11-01"),
        input("until", "Until", p.get("until").as_deref(), "2026-11-20"),
        input("tz", "Time zone", p.get("tz").as_deref(), "UTC, local, Europe/Paris"),
    )
}

fn place(s: &SessionRow) -> &str {
    s.repository.as_deref().or(s.cwd.as_deref()).unwrap_or("-")
}

/// `/` and `/sessions`: filters, a page of sessions, the next page's link.
pub(crate) async fn sessions(State(state): State<Shared>, Query(pairs): Pairs) -> Response {
    let p = Params::new(pairs);
    let s = state.clone();
    let known = state.index_state.borrow().sessions;
    let watching = state.watching;
    let result = state
        .pool
        .run(move |q| sessions_page(q, &s.redactor, &p, known, watching))
        .await;
    result.into_response()
}

fn sessions_page(
    q: &Store,
    redactor: &Redactor,
    p: &Params,
    known: i64,
    watching: bool,
) -> Result<Response, WebError> {
    let request = p.list_request()?;
    let page = q.list(&request, &Clock::utc_now())?;
    let mut out = Page::new("Sessions", "/");
    out.raw("<h1>Sessions</h1>\n");
    out.fmt(format_args!(
        "<p id=\"new-sessions\" class=\"notice\" hidden data-sessions=\"{known}\"><span class=\"count\"></span> new sessions since this page was loaded — <a href=\"\">reload</a></p>\n"
    ));
    if watching {
        out.raw("<p class=\"muted\">The store is kept fresh while this server runs.</p>\n");
    }
    let sort = p.get("sort");
    out.raw(&format!(
        "<form class=\"filters\" method=\"get\" action=\"/\">{}{}{}{}{}{}<label>Subagents<input type=\"checkbox\" name=\"all\"{}></label><button type=\"submit\">Filter</button></form>\n",
        source_select(p),
        input("repo", "Repository or folder", p.get("repo").as_deref(), "owner/name"),
        input("branch", "Branch", p.get("branch").as_deref(), "main"),
        input("since", "Since", p.get("since").as_deref(), "7d, 2026-11-01"),
        input("until", "Until", p.get("until").as_deref(), "2026-11-20"),
        select(
            "sort",
            "Sort",
            &[("newest", "newest first"), ("oldest", "oldest first")],
            Some(sort.as_deref().unwrap_or("newest")),
        ),
        if request.include_subagents { " checked" } else { "" },
    ));
    if page.sessions.is_empty() {
        out.raw("<p class=\"muted\">No sessions match.</p>\n");
    } else {
        out.raw("<table class=\"sessions\">\n<thead><tr><th>Last activity</th><th>Agent</th><th>Repository or folder</th><th>Branch</th><th class=\"num\">Turns</th><th class=\"num\">Tokens</th><th>Title</th></tr></thead>\n<tbody>\n");
        for s in &page.sessions {
            out.raw("<tr><td>");
            out.text(&when(s.updated_at.as_deref()));
            out.raw("</td><td>");
            out.text(&s.source);
            out.raw("</td><td>");
            out.red(redactor, place(s));
            out.raw("</td><td>");
            out.red(redactor, s.branch.as_deref().unwrap_or("-"));
            out.fmt(format_args!(
                "</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"title\"><a href=\"{}\">",
                s.turns,
                tokens(s.total_tokens()),
                esc(&session_href(&s.id))
            ));
            out.red(
                redactor,
                &cut(&one_line(s.title.as_deref().unwrap_or("(untitled)")), 160),
            );
            out.raw("</a>");
            if s.chat {
                out.raw(" <span class=\"muted\">(chat)</span>");
            }
            if s.source_missing {
                out.raw(" <span class=\"muted\">(file gone; trail's copy)</span>");
            }
            out.raw("</td></tr>\n");
        }
        out.raw("</tbody>\n</table>\n");
    }
    out.raw("<div class=\"pager\">");
    let keep = |cursor: Option<&str>| {
        let mut pairs: Vec<(&str, Option<String>)> = [
            "source", "repo", "branch", "since", "until", "sort", "limit", "all",
        ]
        .iter()
        .map(|k| (*k, p.get(k)))
        .collect();
        pairs.push(("cursor", cursor.map(str::to_string)));
        let borrowed: Vec<(&str, Option<&str>)> =
            pairs.iter().map(|(k, v)| (*k, v.as_deref())).collect();
        format!("/{}", query_string(&borrowed))
    };
    if request.cursor.is_some() {
        out.fmt(format_args!(
            "<a href=\"{}\">First page</a>",
            esc(&keep(None))
        ));
    }
    if let Some(c) = &page.next_cursor {
        out.fmt(format_args!(
            "<a rel=\"next\" href=\"{}\">Next page</a>",
            esc(&keep(Some(c)))
        ));
    }
    out.raw("</div>\n");
    Ok(out.finish().into_response())
}

/// A writer that hands the page to the response body in chunks as it is written; it fails
/// once the client is gone, which stops the rendering.
struct ChannelWriter {
    tx: tokio::sync::mpsc::Sender<Bytes>,
    buf: Vec<u8>,
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::take(&mut self.buf));
        self.tx
            .blocking_send(chunk)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the client left"))
    }
}

/// `/sessions/{id}`: the HTML export's transcript in the viewer's page, streamed; `?q=` marks
/// a search's words.
pub(crate) async fn session(
    State(state): State<Shared>,
    Path(id): Path<String>,
    Query(pairs): Pairs,
) -> Response {
    let p = Params::new(pairs);
    // The row first, so an unknown id is a 404 before anything is streamed.
    let row = match state.pool.run(move |q| Ok(q.session(&id)?)).await {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Bytes>(4);
    let s = state.clone();
    tokio::spawn(async move {
        let pool = s.pool.clone();
        let result = pool
            .run(move |q| {
                let mut w = ChannelWriter {
                    tx,
                    buf: Vec::with_capacity(CHUNK + 4096),
                };
                write_session_page(q, &s.redactor, &row, &p, &mut w)
                    .and_then(|_| w.flush().map_err(|e| WebError::internal(e.to_string())))
            })
            .await;
        if let Err(e) = result {
            tracing::debug!(error = %e, "a transcript stopped streaming");
        }
    });
    let stream = futures_util::stream::poll_fn(move |cx| {
        rx.poll_recv(cx).map(|c| c.map(Ok::<Bytes, io::Error>))
    });
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        Body::from_stream(stream),
    )
        .into_response()
}

fn write_session_page(
    q: &Store,
    redactor: &Redactor,
    row: &SessionRow,
    p: &Params,
    w: &mut ChannelWriter,
) -> Result<(), WebError> {
    let io = |e: io::Error| WebError::internal(e.to_string());
    let title =
        crate::html::redact(redactor, row.title.as_deref().unwrap_or("(untitled)")).into_owned();
    w.write_all(crate::html::head(&cut(&one_line(&title), 120), "").as_bytes())
        .map_err(io)?;
    let search = p.get("q");
    let terms = search.as_deref().map(highlight_terms).unwrap_or_default();
    let mut links = format!(
        "<p class=\"muted\"><a href=\"/\">All sessions</a> · <a href=\"/api/sessions/{}\">JSON</a> · <a href=\"/sessions/{}/diff\">Changes</a>",
        enc(&row.id),
        enc(&row.id)
    );
    if let Some(parent) = &row.parent_session_id {
        links.push_str(&format!(
            " · <a href=\"{}\">Parent session</a>",
            esc(&session_href(parent))
        ));
    }
    if let Some(s) = &search {
        links.push_str(&format!(
            " · marking <mark>{}</mark> (<a href=\"{}\">clear</a>, <a href=\"/search{}\">back to the search</a>)",
            esc(s),
            esc(&session_href(&row.id)),
            esc(&query_string(&[("q", Some(s))]))
        ));
    }
    links.push_str("</p>\n");
    w.write_all(links.as_bytes()).map_err(io)?;
    let rows = q.session_store(std::slice::from_ref(&row.id))?;
    let mut exporter = Exporter::new(
        &rows,
        redactor,
        ExportOptions {
            thinking: true,
            ..ExportOptions::default()
        },
    );
    exporter
        .write_html_view(
            row,
            HtmlView {
                highlight: terms,
                session_href: Some("/sessions/".into()),
            },
            w,
        )
        .map_err(|e| WebError::internal(e.to_string()))?;
    w.write_all(crate::html::foot().as_bytes()).map_err(io)?;
    Ok(())
}

/// `/sessions/ID/diff?turn=N`: what a session changed, per file, as unified diffs.
pub(crate) async fn session_diff(
    State(state): State<Shared>,
    Path(id): Path<String>,
    Query(pairs): Pairs,
) -> Response {
    let p = Params::new(pairs);
    let s = state.clone();
    state
        .pool
        .run(move |q| {
            let r = &s.redactor;
            let turn = crate::api::diff_turn(&p)?;
            let row = q.session(&id)?;
            let diff = q.session_diff_of(&row.id, turn)?;
            let title = row.title.as_deref().unwrap_or("(untitled)");
            let mut out = Page::new("Changes", "");
            out.raw("<h1>Changes: ");
            out.red(r, &cut(&one_line(title), 120));
            out.raw("</h1>\n");
            out.fmt(format_args!(
                "<p class=\"muted\"><a href=\"{}\">The session</a> · <a href=\"/api/sessions/{}/diff{}\">JSON</a>",
                esc(&session_href(&row.id)),
                enc(&row.id),
                esc(&query_string(&[("turn", turn.map(|t| t.to_string()).as_deref())]))
            ));
            if let Some(t) = turn {
                out.fmt(format_args!(
                    " · turn {t} only (<a href=\"/sessions/{}/diff\">every turn</a>)",
                    enc(&row.id)
                ));
            }
            out.raw("</p>\n");
            if diff.files.is_empty() {
                out.raw("<p id=\"no-changes\">This session changed no file that its records show (trail reads edit tool calls, patches and the file snapshots agents keep).</p>\n");
                return Ok(out.finish().into_response());
            }
            out.fmt(format_args!(
                "<p>{} files changed, <span class=\"ok\">+{}</span> <span class=\"err\">−{}</span></p>\n",
                diff.files.len(),
                diff.added,
                diff.removed
            ));
            for f in &diff.files {
                out.raw("<section class=\"file-diff\"><h2><code>");
                // Transcript text: control characters shown as symbols, as in the exports.
                out.red(r, &trail_render::terminal_safe(&f.path));
                out.fmt(format_args!(
                    "</code> <span class=\"ok\">+{}</span> <span class=\"err\">−{}</span></h2>\n",
                    f.added, f.removed
                ));
                for c in &f.changes {
                    out.raw("<p class=\"muted\">");
                    if let Some(t) = c.turn {
                        out.fmt(format_args!(
                            "<a href=\"{}#turn-{t}\">turn {t}</a> · ",
                            esc(&session_href(&row.id))
                        ));
                    }
                    let heading = trail_render::change_heading(c);
                    let heading = heading.split_once(" · ").map_or(heading.as_str(), |(_, rest)| rest);
                    out.red(r, &trail_render::terminal_safe(heading));
                    out.raw("</p>\n");
                    let body = crate::html::redact(r, &c.diff);
                    out.diff(&trail_render::terminal_safe(&body));
                }
                out.raw("</section>\n");
            }
            Ok(out.finish().into_response())
        })
        .await
        .into_response()
}

/// Writes a hit's snippet escaped, its matches in `<mark>`.
fn snippet_html(redactor: &Redactor, snippet: &str) -> String {
    let text = crate::html::redact(redactor, &one_line(snippet)).into_owned();
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find(HIT_START) {
        out.push_str(&esc(&rest[..start]));
        let after = &rest[start + HIT_START.len_utf8()..];
        let end = after.find(HIT_END).unwrap_or(after.len());
        out.push_str("<mark>");
        out.push_str(&esc(&after[..end]));
        out.push_str("</mark>");
        rest = after.get(end + HIT_END.len_utf8()..).unwrap_or("");
    }
    out.push_str(&esc(rest));
    out
}

fn hit_html(redactor: &Redactor, h: &SearchHit, query: &str) -> String {
    let mut href = format!(
        "{}{}",
        session_href(&h.session_id),
        query_string(&[("q", Some(query))])
    );
    if let Some(t) = h.turn {
        href.push_str(&format!("#turn-{t}"));
    }
    let mut facts = vec![h.source.clone()];
    if let Some(p) = h.repository.as_deref().or(h.cwd.as_deref()) {
        facts.push(crate::html::redact(redactor, p).into_owned());
    }
    if let Some(t) = h.turn {
        facts.push(format!("turn {t}"));
    }
    facts.push(when(h.timestamp.as_deref()));
    format!(
        "<li class=\"hit\"><a class=\"hit-title\" href=\"{}\">{}</a><span class=\"muted\"> {}</span><div class=\"snippet\">{}</div></li>\n",
        esc(&href),
        esc(&crate::html::redact(redactor, &cut(&one_line(h.title.as_deref().unwrap_or("(untitled)")), 160))),
        esc(&facts.join(" · ")),
        snippet_html(redactor, &h.snippet)
    )
}

/// `/search?q=...`: a plain form (results without JavaScript); the script searches as you type.
pub(crate) async fn search(State(state): State<Shared>, Query(pairs): Pairs) -> Response {
    let p = Params::new(pairs);
    let s = state.clone();
    state
        .pool
        .run(move |q| Ok(search_page(q, &s.redactor, &p)))
        .await
        .into_response()
}

fn search_page(q: &Store, redactor: &Redactor, p: &Params) -> Response {
    let query = p.get("q");
    let mut out = Page::new(
        &query
            .as_deref()
            .map(|s| format!("Search: {s}"))
            .unwrap_or_else(|| "Search".into()),
        "/search",
    );
    out.raw("<h1>Search</h1>\n");
    out.raw(&format!(
        "<form id=\"search-form\" class=\"filters\" method=\"get\" action=\"/search\"><label>Words, \"a phrase\", prefix*, OR, NOT<input type=\"search\" name=\"q\" value=\"{}\" autofocus autocomplete=\"off\"></label>{}{}{}{}{}{}<button type=\"submit\">Search</button></form>\n",
        esc(query.as_deref().unwrap_or("")),
        source_select(p),
        input("repo", "Repository or folder", p.get("repo").as_deref(), "owner/name"),
        input("branch", "Branch", p.get("branch").as_deref(), "main"),
        input("since", "Since", p.get("since").as_deref(), "7d"),
        select(
            "role",
            "Who wrote it",
            &[("", "anyone"), ("user", "user"), ("assistant", "assistant"), ("tool", "tool")],
            p.get("role").as_deref(),
        ),
        select(
            "sort",
            "Order",
            &[("relevance", "best first"), ("recent", "newest first")],
            Some(p.get("sort").as_deref().unwrap_or("relevance")),
        ),
    ));
    out.raw("<div id=\"results\">\n");
    let mut status = StatusCode::OK;
    if let Some(text) = &query {
        let result = p
            .search_request()
            .and_then(|r| q.search(&r, &Clock::utc_now()).map_err(WebError::from));
        if let Ok(Some(c)) = result.as_ref().map(|r| r.correction.as_ref()) {
            correction_note(&mut out, redactor, p, c);
        }
        match result {
            Ok(results) if results.hits.is_empty() => {
                out.raw("<p class=\"muted\">No matches.</p>\n");
            }
            Ok(results) => {
                out.raw("<ol class=\"hits\">\n");
                for h in &results.hits {
                    out.raw(&hit_html(redactor, h, text));
                }
                out.raw("</ol>\n");
                if results.capped {
                    out.fmt(format_args!(
                        "<p class=\"muted\">Ranked the {} most recently indexed matches; add words or filters to narrow it.</p>\n",
                        results.ranked
                    ));
                }
            }
            Err(e) => {
                status = e.status;
                out.raw("<p class=\"error-message\">");
                out.text(&e.message);
                out.raw("</p>\n");
                if let Some(h) = &e.hint {
                    out.raw("<p class=\"muted\">");
                    out.text(h);
                    out.raw("</p>\n");
                }
            }
        }
    }
    out.raw("</div>\n");
    (status, out.finish()).into_response()
}

/// Says which words were replaced by near spellings, with a link that searches them as typed.
fn correction_note(out: &mut Page, redactor: &Redactor, p: &Params, c: &trail_query::Correction) {
    let keys = [
        "q", "source", "repo", "branch", "since", "role", "sort", "cwd", "model", "until",
    ];
    let mut pairs: Vec<(&str, Option<String>)> = keys.iter().map(|k| (*k, p.get(k))).collect();
    pairs.push(("exact", Some("1".to_string())));
    let borrowed: Vec<(&str, Option<&str>)> =
        pairs.iter().map(|(k, v)| (*k, v.as_deref())).collect();
    out.raw("<p class=\"muted correction\">");
    out.text(&crate::html::redact(redactor, &c.message()));
    out.fmt(format_args!(
        " · <a href=\"/search{}\">search as typed</a></p>\n",
        esc(&query_string(&borrowed))
    ));
}

fn usage_bars(r: &UsageReport, cost: bool) -> Vec<Bar> {
    r.rows
        .iter()
        .map(|row| Bar {
            label: row.label.clone().unwrap_or_else(|| row.key.clone()),
            value: if cost {
                row.cost_usd
            } else {
                row.total_tokens as f64
            },
            shown: if cost {
                usd(row.cost_usd)
            } else {
                format!(
                    "{} tokens · {}",
                    tokens(row.total_tokens),
                    usd(row.cost_usd)
                )
            },
        })
        .collect()
}

/// Day bars with the days that had no usage put back as empty bars, so the time axis is even
/// (only when every key is a date and the span is at most a few years).
fn fill_days(bars: Vec<Bar>) -> Vec<Bar> {
    use chrono::NaiveDate;
    let dates: Option<Vec<NaiveDate>> = bars
        .iter()
        .map(|b| NaiveDate::parse_from_str(&b.label, "%Y-%m-%d").ok())
        .collect();
    let Some(dates) = dates else {
        return bars;
    };
    let (Some(lo), Some(hi)) = (dates.iter().min().copied(), dates.iter().max().copied()) else {
        return bars;
    };
    if (hi - lo).num_days() > 1500 {
        return bars;
    }
    let mut by_day: std::collections::HashMap<NaiveDate, Bar> =
        dates.into_iter().zip(bars).collect();
    lo.iter_days()
        .take_while(|d| *d <= hi)
        .map(|d| {
            by_day.remove(&d).unwrap_or_else(|| Bar {
                label: d.format("%Y-%m-%d").to_string(),
                value: 0.0,
                shown: "nothing".into(),
            })
        })
        .collect()
}

/// Renders a page on the pool: `render` gets a read handle, the request's parameters and the
/// redactor, and returns the page (or the error page).
async fn page(
    state: Shared,
    pairs: Vec<(String, String)>,
    render: impl FnOnce(&Store, &Params, &Redactor) -> Result<Page, WebError> + Send + 'static,
) -> Response {
    let p = Params::new(pairs);
    let s = state.clone();
    state
        .pool
        .run(move |q| render(q, &p, &s.redactor).map(|page| page.finish().into_response()))
        .await
        .into_response()
}

/// `/usage`: tokens and cost by day, model and agent, as SVG charts and tables.
pub(crate) async fn usage(State(state): State<Shared>, Query(pairs): Pairs) -> Response {
    page(state, pairs, move |q, p, r| {
            let f = p.report_filter();
            let clock = Clock::utc_now();
            let prices = PriceTable::shipped();
            let by_day = q.usage(&f, GroupBy::Day, prices, &clock)?;
            let by_model = q.usage(&f, GroupBy::Model, prices, &clock)?;
            let by_source = q.usage(&f, GroupBy::Source, prices, &clock)?;
            let mut out = Page::new("Usage", "/usage");
            out.raw("<h1>Usage</h1>\n");
            out.raw(&report_form(p, "/usage", ""));
            let t = &by_day.totals;
            out.fmt(format_args!(
                "<div class=\"cards\"><div class=\"card\"><b>{}</b>tokens</div><div class=\"card\"><b>{}</b>cost</div><div class=\"card\"><b>{}</b>requests</div><div class=\"card\"><b>{}</b>days with usage (time zone {})</div></div>\n",
                tokens(t.total_tokens),
                usd(t.cost_usd),
                t.requests,
                by_day.rows.len(),
                esc(&by_day.time_zone)
            ));
            out.raw("<h2>By day</h2>\n");
            out.raw(&charts::columns("Tokens by day", &fill_days(usage_bars(&by_day, false)), "tokens"));
            out.raw(&charts::columns("Cost by day (USD)", &fill_days(usage_bars(&by_day, true)), "cost"));
            // The tables are the usage report's own (trail_report::render), as HTML.
            out.raw("<h2>By model</h2>\n");
            out.raw(&charts::rows("Tokens by model", &usage_bars(&by_model, false), "tokens"));
            out.doc(r, |sink| render::usage_table(&by_model, sink));
            out.raw("<h2>By agent</h2>\n");
            out.raw(&charts::rows("Tokens by agent", &usage_bars(&by_source, false), "tokens"));
            out.doc(r, |sink| render::usage_table(&by_source, sink));
            out.raw("<h2>Days</h2>\n");
            out.doc(r, |sink| {
                render::usage_table(&by_day, sink);
                render::unpriced_models(&by_day.unpriced_models, sink);
            });
            Ok(out)
    })
    .await
}

/// `/standup`: what happened (default: the last 24 hours) by repository and branch.
pub(crate) async fn standup(State(state): State<Shared>, Query(pairs): Pairs) -> Response {
    page(state, pairs, move |q, p, r| {
        let report = q.standup(&p.report_filter(), &Clock::utc_now())?;
        let mut out = Page::new("Standup", "/standup");
        out.raw("<h1>Standup</h1>\n");
        out.raw(&report_form(p, "/standup", ""));
        out.raw("<p class=\"muted\">");
        out.text(&format!(
            "{} to {} ({})",
            when(Some(&report.since)),
            when(Some(&report.until)),
            report.time_zone
        ));
        out.raw("</p>\n");
        out.doc(r, |sink| render::standup_body(&report, sink));
        Ok(out)
    })
    .await
}

/// `/tips`: usage patterns with their numbers, then advice.
pub(crate) async fn tips(State(state): State<Shared>, Query(pairs): Pairs) -> Response {
    page(state, pairs, move |q, p, r| {
        let t = q.tips(&p.report_filter(), PriceTable::shipped(), &Clock::utc_now())?;
        let mut out = Page::new("Tips", "/tips");
        out.raw("<h1>Tips</h1>\n");
        out.raw(&report_form(p, "/tips", ""));
        out.doc(r, |sink| render::tips_body(&t, sink));
        let counts = |title: &str, items: &[trail_report::tips::Count]| {
            let bars: Vec<Bar> = items
                .iter()
                .map(|c| Bar {
                    label: c.name.clone(),
                    value: c.count as f64,
                    shown: c.count.to_string(),
                })
                .collect();
            charts::rows(title, &bars, "tokens")
        };
        if t.sessions > 0 {
            out.raw("<h2>Agents and models</h2>\n");
            out.raw(&counts("Sessions by agent", &t.agents));
            out.raw(&counts("Requests by model", &t.models));
        }
        Ok(out)
    })
    .await
}

/// `/improve`: where the agents struggled, each finding with its evidence.
pub(crate) async fn improve(State(state): State<Shared>, Query(pairs): Pairs) -> Response {
    page(state, pairs, move |q, p, r| {
        let report = q.improve(&p.report_filter(), &Clock::utc_now())?;
        let mut out = Page::new("Improve", "/improve");
        out.raw("<h1>Where the agents struggled</h1>\n");
        out.raw(&report_form(p, "/improve", ""));
        out.fmt(format_args!(
            "<p class=\"muted\">{} sessions looked at.</p>\n",
            report.sessions
        ));
        out.doc(r, |sink| render::improve_body(&report, sink));
        Ok(out)
    })
    .await
}

/// `/why?path=...&line=N`: the sessions that touched a file; with a line, the one behind it.
pub(crate) async fn why(State(state): State<Shared>, Query(pairs): Pairs) -> Response {
    page(state, pairs, move |q, p, r| {
            let mut out = Page::new("File history", "/why");
            out.raw("<h1>File history</h1>\n");
            out.raw(&format!(
                "<form class=\"filters\" method=\"get\" action=\"/why\">{}{}{}<button type=\"submit\">Show</button></form>\n",
                input("path", "File (absolute, or relative with a repository)", p.get("path").as_deref(), "/home/me/project/src/main.rs"),
                input("line", "Line", p.get("line").as_deref(), "42"),
                input("repo", "Repository", p.get("repo").as_deref(), "owner/name"),
            ));
            if p.get("path").is_none() {
                out.raw("<p class=\"muted\">Name a file to see the sessions and turns that read, edited or created it; with a line, the session behind that line (through git blame).</p>\n");
                return Ok(out);
            }
            let (request, line) = p.file_request()?;
            let why = q.why(&request, line)?;
            let h = &why.history;
            out.raw("<p>");
            out.red(r, h.absolute.as_deref().or(h.relative.as_deref()).unwrap_or(&request.path));
            if let Some(repo) = &h.repository {
                out.raw(" <span class=\"muted\">(");
                out.red(r, repo);
                out.raw(")</span>");
            }
            out.raw("</p>\n");
            if let Some(b) = &why.blame {
                out.fmt(format_args!("<p>Line {}: <code>", b.line));
                out.red(r, b.text.trim());
                out.raw("</code><br><span class=\"muted\">");
                match &b.commit {
                    Some(c) => out.red(
                        r,
                        &format!(
                            "commit {} by {} at {}: {}",
                            &c[..c.len().min(12)],
                            b.author.as_deref().unwrap_or("?"),
                            when(b.committed_at.as_deref()),
                            b.summary.as_deref().unwrap_or("")
                        ),
                    ),
                    None => out.raw("not committed yet"),
                }
                out.raw("</span></p>\n");
                match &why.verdict {
                    Some(WhyVerdict::ReferencedCommit { session_id, turn }) => out.fmt(format_args!(
                        "<p class=\"notice\">The session behind it: <a href=\"{}\">{}</a> (it referenced this commit).</p>\n",
                        esc(&turn_href(session_id, *turn)),
                        esc(session_id)
                    )),
                    Some(WhyVerdict::LastEditBefore { session_id, turn, .. }) => out.fmt(format_args!(
                        "<p class=\"notice\">Probably: <a href=\"{}\">{}</a> (the last session that edited the file before the commit).</p>\n",
                        esc(&turn_href(session_id, *turn)),
                        esc(session_id)
                    )),
                    None => out.raw("<p class=\"muted\">No session is known to be behind this line.</p>\n"),
                }
            }
            if h.touches.is_empty() {
                out.raw("<p class=\"muted\">No session touched this file.</p>\n");
            } else {
                out.raw("<table><thead><tr><th>When</th><th>Action</th><th>Agent</th><th>Session and turn</th><th>Prompt</th></tr></thead><tbody>\n");
                for t in &h.touches {
                    out.raw("<tr><td>");
                    out.text(&when(t.timestamp.as_deref()));
                    out.raw("</td><td>");
                    out.text(&t.action);
                    if let Some(tool) = &t.tool_name {
                        out.raw(" <span class=\"muted\">");
                        out.text(tool);
                        out.raw("</span>");
                    }
                    out.raw("</td><td>");
                    out.text(&t.source);
                    out.fmt(format_args!("</td><td><a href=\"{}\">", esc(&turn_href(&t.session_id, t.turn))));
                    out.red(r, &cut(&one_line(t.title.as_deref().unwrap_or("(untitled)")), 80));
                    out.raw("</a>");
                    if let Some(turn) = t.turn {
                        out.fmt(format_args!(" <span class=\"muted\">turn {turn}</span>"));
                    }
                    out.raw("</td><td>");
                    out.red(r, &cut(&one_line(t.prompt.as_deref().unwrap_or("")), 160));
                    out.raw("</td></tr>\n");
                }
                out.raw("</tbody></table>\n");
            }
            Ok(out)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_filter_offers_every_source_by_name() {
        let options = source_options();
        for kind in trail_model::SourceKind::ALL {
            let name = trail_query::registry::display_name(kind);
            assert!(options.contains(&(kind.as_str(), name)), "{kind}");
        }
        let html = source_select(&Params::default());
        assert!(html.contains("value=\"claude-code\""), "{html}");
    }

    fn bar(label: &str, value: f64) -> Bar {
        Bar {
            label: label.into(),
            value,
            shown: String::new(),
        }
    }

    #[test]
    fn day_bars_get_their_empty_days_back() {
        let filled = fill_days(vec![bar("2026-11-20", 3.0), bar("2026-11-23", 1.0)]);
        let labels: Vec<&str> = filled.iter().map(|b| b.label.as_str()).collect();
        assert_eq!(
            labels,
            ["2026-11-20", "2026-11-21", "2026-11-22", "2026-11-23"]
        );
        assert_eq!(filled[1].value, 0.0);
        // Not dates: left alone.
        assert_eq!(fill_days(vec![bar("claude", 1.0)]).len(), 1);
    }
}
