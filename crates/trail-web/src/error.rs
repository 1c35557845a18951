//! Errors as responses: the caller's mistake is a 400 (or 404 for an unknown id) with a
//! readable page or a JSON `{"error", "hint"}`; a failure of the store is a 500 that says what
//! failed; a panic is caught and answered as a 500 too.

use std::net::IpAddr;

use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use trail_query::QueryError;

use crate::html::Page;

/// An error answering a request, or starting the server.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct WebError {
    pub status: StatusCode,
    pub message: String,
    pub hint: Option<String>,
    /// Answer as JSON (the API) rather than as a page.
    pub json: bool,
}

impl WebError {
    pub(crate) fn bad_request(message: impl Into<String>) -> WebError {
        WebError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            hint: None,
            json: false,
        }
    }

    pub(crate) fn not_found(message: impl Into<String>) -> WebError {
        WebError {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
            hint: None,
            json: false,
        }
    }

    pub(crate) fn internal(message: impl Into<String>) -> WebError {
        WebError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
            hint: None,
            json: false,
        }
    }

    pub(crate) fn bind(ip: IpAddr, port: u16, e: std::io::Error) -> WebError {
        WebError::internal(format!("cannot listen on {ip}:{port}: {e}"))
    }

    pub(crate) fn serve(e: std::io::Error) -> WebError {
        WebError::internal(format!("the server stopped: {e}"))
    }

    pub(crate) fn start(message: String) -> WebError {
        WebError::internal(message)
    }

    /// True when the request (or the user's flags) was at fault, not the server.
    pub fn is_caller_error(&self) -> bool {
        self.status.is_client_error()
    }

    /// The same error, answered as JSON.
    pub(crate) fn into_json(mut self) -> WebError {
        self.json = true;
        self
    }
}

impl From<QueryError> for WebError {
    fn from(e: QueryError) -> WebError {
        let status = if e.is_not_found() {
            StatusCode::NOT_FOUND
        } else if e.is_caller_error() {
            StatusCode::BAD_REQUEST
        } else {
            tracing::error!(error = %e, "query failed");
            StatusCode::INTERNAL_SERVER_ERROR
        };
        WebError {
            status,
            hint: e.hint().map(str::to_string),
            message: e.to_string(),
            json: false,
        }
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        if self.json {
            let body = serde_json::json!({
                "error": self.message,
                "status": self.status.as_u16(),
                "hint": self.hint,
            });
            return (
                self.status,
                [(header::CONTENT_TYPE, "application/json")],
                body.to_string(),
            )
                .into_response();
        }
        let title = self
            .status
            .canonical_reason()
            .unwrap_or("Error")
            .to_string();
        let mut page = Page::new(&title, "");
        page.raw("<h1>");
        page.text(&title);
        page.raw("</h1>\n<p class=\"error-message\">");
        page.text(&self.message);
        page.raw("</p>\n");
        if let Some(h) = &self.hint {
            page.raw("<p class=\"muted\">");
            page.text(h);
            page.raw("</p>\n");
        }
        page.raw("<p><a href=\"/\">All sessions</a></p>\n");
        (self.status, page.finish()).into_response()
    }
}

/// Any path no route serves: a 404 page, or JSON under `/api/`.
pub(crate) async fn not_found(uri: Uri) -> Response {
    let e = WebError::not_found(format!("nothing at {}", uri.path()));
    if uri.path().starts_with("/api/") {
        e.into_json().into_response()
    } else {
        e.into_response()
    }
}

/// What a caught panic becomes (the panic's message is logged, not shown).
pub(crate) fn panic_response(err: Box<dyn std::any::Any + Send + 'static>) -> Response {
    let what = err
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| err.downcast_ref::<&str>().copied())
        .unwrap_or("a panic");
    tracing::error!(panic = what, "a request handler panicked");
    WebError::internal("the server failed answering this request (it keeps running)")
        .into_response()
}
