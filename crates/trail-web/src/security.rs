//! What every request passes and every response carries: only the server's own `Host` (a page
//! on another site that resolves its name to 127.0.0.1, DNS rebinding, gets 421), only GET and
//! HEAD (the viewer never changes anything), and headers that keep the browser from running
//! anything but the one embedded script, from loading anything from elsewhere, and from
//! framing or sniffing the pages.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, LazyLock};

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::WebError;

/// The `Host` values this server answers to.
#[derive(Debug, Clone)]
pub(crate) struct AllowedHosts(Vec<String>);

impl AllowedHosts {
    /// The loopback names with the port, and the bound address itself.
    pub fn for_addr(addr: SocketAddr) -> AllowedHosts {
        let port = addr.port();
        let mut hosts = vec![
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("[::1]:{port}"),
        ];
        let own = match addr.ip() {
            IpAddr::V4(ip) => format!("{ip}:{port}"),
            IpAddr::V6(ip) => format!("[{ip}]:{port}"),
        };
        if !hosts.contains(&own) {
            hosts.push(own);
        }
        AllowedHosts(hosts)
    }

    fn allows(&self, host: &str) -> bool {
        self.0.iter().any(|h| h.eq_ignore_ascii_case(host))
    }
}

/// The Content-Security-Policy: nothing by default; the stylesheet and icon from this server;
/// the one embedded script by its hash; fetches and events to this server only.
pub(crate) static CSP: LazyLock<String> = LazyLock::new(|| {
    format!(
        "default-src 'none'; script-src '{}'; style-src 'self'; img-src 'self'; \
         connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        crate::assets::script_hash()
    )
});

pub(crate) async fn guard(
    State(hosts): State<Arc<AllowedHosts>>,
    request: Request,
    next: Next,
) -> Response {
    let api = request.uri().path().starts_with("/api/");
    let mut response = if request.method() != Method::GET && request.method() != Method::HEAD {
        let mut r = refuse(
            StatusCode::METHOD_NOT_ALLOWED,
            "this server only reads: GET and HEAD",
            api,
        );
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        r
    } else {
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_string);
        match host {
            Some(h) if hosts.allows(&h) => next.run(request).await,
            // Another name for this address: a page elsewhere trying to read it.
            _ => refuse(
                StatusCode::MISDIRECTED_REQUEST,
                "this server answers only to its own address (127.0.0.1, localhost or [::1] with its port)",
                api,
            ),
        }
    };
    let h = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&CSP) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    response
}

fn refuse(status: StatusCode, message: &str, api: bool) -> Response {
    let mut e = WebError::bad_request(message);
    e.status = status;
    if api {
        e = e.into_json();
    }
    e.into_response()
}
