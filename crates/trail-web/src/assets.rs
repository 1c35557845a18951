//! What the pages embed or load from this server: the stylesheet (the HTML export's, plus the
//! viewer's own), an icon, and the one script (inline, allowed by its hash). Nothing is loaded
//! from anywhere else: no fonts (system ones), no CDN.

use std::sync::LazyLock;

use axum::http::header;
use axum::response::IntoResponse;
use base64::Engine;
use sha2::{Digest, Sha256};

/// The one script every page embeds: search as you type, the new-sessions notice.
pub(crate) const SCRIPT: &str = include_str!("../assets/app.js");

const VIEWER_STYLE: &str = include_str!("../assets/style.css");
const ICON: &str = include_str!("../assets/icon.svg");

static STYLE: LazyLock<String> =
    LazyLock::new(|| format!("{}\n{VIEWER_STYLE}", trail_render::HTML_STYLE));

/// `sha256-<base64>` of [`SCRIPT`], as CSP's `script-src` names it.
pub(crate) fn script_hash() -> &'static str {
    static HASH: LazyLock<String> = LazyLock::new(|| {
        let digest = Sha256::digest(SCRIPT.as_bytes());
        format!(
            "sha256-{}",
            base64::engine::general_purpose::STANDARD.encode(digest)
        )
    });
    &HASH
}

pub(crate) async fn style() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "max-age=3600"),
        ],
        STYLE.as_str(),
    )
}

pub(crate) async fn icon() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "max-age=86400"),
        ],
        ICON,
    )
}
