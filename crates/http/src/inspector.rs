//! The web inspector at `/inspector`: one page and its script and style sheet, embedded in the
//! binary (no CDN, works offline). The page holds no data; its script reads the admin API with
//! the key the operator enters, kept in the tab's sessionStorage. The Content-Security-Policy
//! lets the page load and fetch from this host only.

use axum::Router;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const INDEX: &str = include_str!("../inspector/index.html");
const SCRIPT: &str = include_str!("../inspector/app.js");
const STYLE: &str = include_str!("../inspector/app.css");

/// Nothing from anywhere but this host: no inline script, no frames, no form posts.
pub(crate) const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
     img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (CONTENT_TYPE, content_type),
            (CONTENT_SECURITY_POLICY, POLICY),
            (X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (REFERRER_POLICY, "no-referrer"),
            (CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

pub(crate) fn routes() -> Router {
    Router::new()
        .route("/inspector", get(|| async { asset("text/html; charset=utf-8", INDEX) }))
        .route("/inspector/", get(|| async { asset("text/html; charset=utf-8", INDEX) }))
        .route("/inspector/app.js", get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }))
        .route("/inspector/app.css", get(|| async { asset("text/css; charset=utf-8", STYLE) }))
}
