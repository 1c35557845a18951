//! The JSON API: the shapes of the CLI's `--json` (docs/json.md), strings redacted like the
//! pages. Errors are `{"error", "status", "hint"}` with 400 (the request) or 404 (an unknown
//! session).

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, Stream};
use serde::Serialize;
use serde_json::Value;
use trail_query::{Clock, DetailRequest, JsonHit, PriceTable};
use trail_render::Redactor;

use crate::error::WebError;
use crate::html::{query_string, redact};
use crate::params::Params;
use crate::Shared;

type Pairs = Query<Vec<(String, String)>>;

/// `value` as JSON with every string redacted.
fn json<T: Serialize>(redactor: &Redactor, value: &T) -> Result<Value, WebError> {
    let mut v = serde_json::to_value(value)
        .map_err(|e| WebError::internal(format!("cannot write JSON: {e}")))?;
    if redactor.enabled() {
        redact_strings(redactor, &mut v);
    }
    Ok(v)
}

fn redact_strings(redactor: &Redactor, v: &mut Value) {
    match v {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(r) = redact(redactor, s) {
                *s = r;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| redact_strings(redactor, i)),
        Value::Object(map) => map.values_mut().for_each(|i| redact_strings(redactor, i)),
        _ => {}
    }
}

fn respond(v: Value, headers: HeaderMap) -> Response {
    (
        headers,
        [(header::CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response()
}

/// Runs `f` with the request's parameters on a store handle and answers its value as JSON.
async fn answer<T, F>(state: Shared, params: Params, f: F) -> Response
where
    T: Serialize + Send + 'static,
    F: FnOnce(&trail_query::Query, &Params) -> Result<T, WebError> + Send + 'static,
{
    let s = state.clone();
    let result = state
        .pool
        .run(move |q| {
            let value = f(q, &params)?;
            json(&s.redactor, &value)
        })
        .await;
    match result {
        Ok(v) => respond(v, HeaderMap::new()),
        Err(e) => e.into_json().into_response(),
    }
}

/// `/api/sessions`: an array of sessions as `trail list --json`; the next page's cursor is in
/// `X-Next-Cursor` and a `Link: <...>; rel="next"` header.
pub(crate) async fn sessions(State(state): State<Shared>, Query(pairs): Pairs) -> Response {
    let params = Params::new(pairs);
    let request = match params.list_request() {
        Ok(r) => r,
        Err(e) => return e.into_json().into_response(),
    };
    let s = state.clone();
    let result = state
        .pool
        .run(move |q| {
            let page = q.list(&request, &Clock::utc_now())?;
            Ok((json(&s.redactor, &page.sessions)?, page.next_cursor))
        })
        .await;
    match result {
        Ok((v, next)) => {
            let mut headers = HeaderMap::new();
            if let Some(c) = next {
                let mut pairs: Vec<(&str, Option<String>)> = [
                    "source", "repo", "cwd", "branch", "model", "since", "until", "sort", "limit",
                    "all",
                ]
                .iter()
                .map(|k| (*k, params.get(k)))
                .collect();
                pairs.push(("cursor", Some(c.clone())));
                let borrowed: Vec<(&str, Option<&str>)> =
                    pairs.iter().map(|(k, v)| (*k, v.as_deref())).collect();
                let link = format!("</api/sessions{}>; rel=\"next\"", query_string(&borrowed));
                if let (Ok(cv), Ok(lv)) = (HeaderValue::from_str(&c), HeaderValue::from_str(&link))
                {
                    headers.insert("x-next-cursor", cv);
                    headers.insert(header::LINK, lv);
                }
            }
            respond(v, headers)
        }
        Err(e) => e.into_json().into_response(),
    }
}

/// `/api/sessions/{id}`: `trail show ID --json`; `from_turn`, `to_turn` or `turn` cut it.
pub(crate) async fn session(
    State(state): State<Shared>,
    Path(id): Path<String>,
    Query(pairs): Pairs,
) -> Response {
    answer(state, Params::new(pairs), move |q, p| {
        let one = p.turn("turn")?;
        Ok(q.detail(&DetailRequest {
            id,
            from_turn: p.turn("from_turn")?.or(one),
            to_turn: p.turn("to_turn")?.or(one),
        })?)
    })
    .await
}

/// `/api/sessions/ID/diff?turn=N`: what the session changed, as `trail diff --json`.
pub(crate) async fn session_diff(
    State(state): State<Shared>,
    Path(id): Path<String>,
    Query(pairs): Pairs,
) -> Response {
    answer(state, Params::new(pairs), move |q, p| {
        let turn = diff_turn(p)?;
        let id = q.resolve_id(&id)?;
        let diff = q.session_diff_of(&id, turn)?;
        Ok(serde_json::json!({
            "session_id": id,
            "turn": turn,
            "files": diff.files,
            "added": diff.added,
            "removed": diff.removed,
        }))
    })
    .await
}

/// The `turn` of a diff request: a turn number from 0.
pub(crate) fn diff_turn(p: &Params) -> Result<Option<u32>, WebError> {
    p.turn("turn")?
        .map(|t| {
            u32::try_from(t)
                .map_err(|_| WebError::bad_request(format!("turn must be 0 or more, not {t}")))
        })
        .transpose()
}

/// `/api/search?q=...`: an array of hits as `trail search --json`. When words of the query
/// were replaced by near spellings (`exact=1` turns that off), `X-Trail-Correction` says so
/// (percent-encoded: `no match for "imperal"; showing "imperial"`) and `X-Trail-Query` gives
/// the query searched.
pub(crate) async fn search(State(state): State<Shared>, Query(pairs): Pairs) -> Response {
    let params = Params::new(pairs);
    let s = state.clone();
    let result = state
        .pool
        .run(move |q| {
            let request = params.search_request()?;
            let results = q.search(&request, &Clock::utc_now())?;
            let hits: Vec<JsonHit> = results
                .hits
                .iter()
                .map(|h| JsonHit::new(h, &request.query))
                .collect();
            let correction = results.correction.map(|c| {
                [
                    redact(&s.redactor, &c.message()).into_owned(),
                    redact(&s.redactor, &c.query).into_owned(),
                ]
            });
            Ok((json(&s.redactor, &hits)?, correction))
        })
        .await;
    match result {
        Ok((v, correction)) => {
            let mut headers = HeaderMap::new();
            if let Some([message, query]) = correction {
                for (name, value) in [("x-trail-correction", message), ("x-trail-query", query)] {
                    if let Ok(v) = HeaderValue::from_str(&crate::html::enc(&value)) {
                        headers.insert(name, v);
                    }
                }
            }
            respond(v, headers)
        }
        Err(e) => e.into_json().into_response(),
    }
}

/// `/api/usage?by=day`: `trail usage --json`.
pub(crate) async fn usage(State(state): State<Shared>, Query(pairs): Pairs) -> Response {
    answer(state, Params::new(pairs), |q, p| {
        Ok(q.usage(
            &p.report_filter(),
            p.group_by()?,
            PriceTable::shipped(),
            &Clock::utc_now(),
        )?)
    })
    .await
}

/// `/api/standup`: `trail standup --json`.
pub(crate) async fn standup(State(state): State<Shared>, Query(pairs): Pairs) -> Response {
    answer(state, Params::new(pairs), |q, p| {
        Ok(q.standup(&p.report_filter(), &Clock::utc_now())?)
    })
    .await
}

/// `/api/tips`: `trail tips --json`.
pub(crate) async fn tips(State(state): State<Shared>, Query(pairs): Pairs) -> Response {
    answer(state, Params::new(pairs), |q, p| {
        Ok(q.tips(&p.report_filter(), PriceTable::shipped(), &Clock::utc_now())?)
    })
    .await
}

/// `/api/improve`: `trail improve --json`.
pub(crate) async fn improve(State(state): State<Shared>, Query(pairs): Pairs) -> Response {
    answer(state, Params::new(pairs), |q, p| {
        Ok(q.improve(&p.report_filter(), &Clock::utc_now())?)
    })
    .await
}

/// `/api/why?path=...&line=N`: `trail why --json`.
pub(crate) async fn why(State(state): State<Shared>, Query(pairs): Pairs) -> Response {
    answer(state, Params::new(pairs), |q, p| {
        let (request, line) = p.file_request()?;
        Ok(q.why(&request, line)?)
    })
    .await
}

/// `/api/events`: server-sent `index` events (`{sessions, last_indexed_at, generation}`), the
/// current state first, then after every index the server runs.
pub(crate) async fn events(
    State(state): State<Shared>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let rx = state.index_state.subscribe();
    let stream = stream::unfold((rx, true), |(mut rx, first)| async move {
        if !first && rx.changed().await.is_err() {
            return None;
        }
        let current = rx.borrow_and_update().clone();
        let event = Event::default()
            .event("index")
            .json_data(&current)
            .unwrap_or_else(|_| Event::default().event("index"));
        Some((Ok(event), (rx, false)))
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
