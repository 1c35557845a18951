//! trail's team store on PostgreSQL (issue 20).
//!
//! - [`schema`]: the server's tables (the local store's, plus who pushed each row), versioned
//!   migrations applied under an advisory lock (`trail db migrate`, or the first `trail sync`).
//! - [`sync`]: pushing a local store: the sessions new or changed since the last sync (a digest
//!   per session kept on the server), each batch in one transaction, redacted by default,
//!   include / exclude rules applied before anything is sent, tombstones of `trail forget`.
//! - [`read`]: [`PgBackend`], the `trail_query::RemoteBackend` behind
//!   `trail --store postgres://...`: search on `tsvector` + GIN, read-only SQL as a SELECT-only
//!   role, and snapshots for every other read (so answers are the local store's).
//! - [`search_text`]: the words full-text search sees, cut exactly as the local store's FTS5
//!   tokenizer cuts them, and the query syntax translated to `tsquery`.
//!
//! Connections use the synchronous `postgres` crate over rustls (see ARCHITECTURE.md). No
//! printing, no environment: the CLI passes URLs, rules and the redactor in.

pub mod read;
pub mod schema;
pub mod search_text;
pub mod sync;
mod tables;
#[cfg(feature = "test-server")]
pub mod test_server;

use std::sync::Arc;

pub use read::{PgBackend, TeamScope};
pub use sync::{
    sync, SyncOptions, SyncPlan, SyncProgress, SyncRule, SyncRules, SyncSummary, NO_PROGRESS,
};

/// Errors from the team store.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// The URL cannot be read.
    #[error("{0}")]
    Url(String),
    /// The server could not be reached or refused the connection.
    #[error("cannot connect to {url}: {message}")]
    Connect { url: String, message: String },
    /// A statement failed on the server.
    #[error("{0}")]
    Server(String),
    /// The local store failed.
    #[error(transparent)]
    Store(#[from] trail_store::StoreError),
    /// The server's schema is newer than this trail.
    #[error("the team store has schema version {found}, newer than this trail supports ({supported}); upgrade trail")]
    TooNew { found: i64, supported: i64 },
    /// The server's schema is older and this role may not migrate it.
    #[error(
        "the team store needs its migrations ({0}); run `trail db migrate` as the database's owner"
    )]
    NeedsMigration(String),
}

impl From<postgres::Error> for PgError {
    fn from(e: postgres::Error) -> Self {
        PgError::Server(server_message(&e))
    }
}

impl From<rusqlite::Error> for PgError {
    fn from(e: rusqlite::Error) -> Self {
        PgError::Store(e.into())
    }
}

impl From<PgError> for trail_query::QueryError {
    fn from(e: PgError) -> Self {
        match e {
            PgError::Store(s) => trail_query::QueryError::Store(s),
            PgError::Url(m) => trail_query::QueryError::Invalid(m),
            other => trail_query::QueryError::Remote(other.to_string()),
        }
    }
}

/// The server's own message (with its detail and hint), not the client's wrapper.
pub(crate) fn server_message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut m = db.message().to_string();
            if let Some(d) = db.detail() {
                m.push_str(&format!(" ({d})"));
            }
            if let Some(h) = db.hint() {
                m.push_str(&format!("; {h}"));
            }
            m
        }
        None => {
            // The client's own errors ("error performing TLS handshake") keep the cause in
            // their source chain.
            let mut m = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                m.push_str(&format!(": {s}"));
                source = s.source();
            }
            m
        }
    }
}

pub type Result<T, E = PgError> = std::result::Result<T, E>;

/// Whether `s` names a PostgreSQL store (`postgres://` or `postgresql://`).
pub fn is_postgres_url(s: &str) -> bool {
    s.starts_with("postgres://") || s.starts_with("postgresql://")
}

/// A URL with its password replaced by `***`, for messages and logs.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            let hidden = if userinfo.contains(':') { ":***" } else { "" };
            format!("{scheme}://{user}{hidden}@{host}{tail}")
        }
        None => url.to_string(),
    }
}

/// Connects to `url`. TLS is rustls: `sslmode=require` insists on it, `prefer` (the default)
/// uses it when the server offers it, `disable` never does. The server's certificate is always
/// verified (stricter than libpq's `require`): against the public web roots, plus the file
/// `sslrootcert=PATH` names (a team's private CA, or a self-signed server's certificate).
pub fn connect(url: &str) -> Result<postgres::Client> {
    let (url_for_driver, root_cert) = split_root_cert(url);
    let config: postgres::Config = url_for_driver
        .parse()
        .map_err(|e: postgres::Error| PgError::Url(format!("{}: {e}", redact_url(url))))?;
    let tls = tls_connector(root_cert.as_deref())?;
    config.connect(tls).map_err(|e| PgError::Connect {
        url: redact_url(url),
        message: server_message(&e),
    })
}

/// Takes `sslrootcert=PATH` out of the URL (the driver does not read it; trail does).
fn split_root_cert(url: &str) -> (String, Option<String>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), None);
    };
    let mut root = None;
    let kept: Vec<&str> = query
        .split('&')
        .filter(|kv| match kv.strip_prefix("sslrootcert=") {
            Some(path) => {
                root = Some(percent_decode(path));
                false
            }
            None => !kv.is_empty(),
        })
        .collect();
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    (url, root)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn tls_connector(root_cert: Option<&str>) -> Result<tokio_postgres_rustls::MakeRustlsConnect> {
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(path) = root_cert {
        let certs = rustls_pki_types::CertificateDer::pem_file_iter(path)
            .map_err(|e| PgError::Url(format!("sslrootcert {path}: {e}")))?;
        for cert in certs {
            let cert = cert.map_err(|e| PgError::Url(format!("sslrootcert {path}: {e}")))?;
            roots
                .add(cert)
                .map_err(|e| PgError::Url(format!("sslrootcert {path}: {e}")))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| PgError::Url(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_password_in_messages() {
        assert_eq!(
            redact_url("postgres://alice:s3cret@db.example:5432/trail?sslmode=require"),
            "postgres://alice:***@db.example:5432/trail?sslmode=require"
        );
        assert_eq!(
            redact_url("postgres://alice@db/trail"),
            "postgres://alice@db/trail"
        );
        assert_eq!(redact_url("postgres://db/trail"), "postgres://db/trail");
    }

    #[test]
    fn sslrootcert_is_taken_out_of_the_url() {
        let (url, root) =
            split_root_cert("postgres://a@h/db?sslmode=require&sslrootcert=%2Ftmp%2Fca.crt");
        assert_eq!(url, "postgres://a@h/db?sslmode=require");
        assert_eq!(root.as_deref(), Some("/tmp/ca.crt"));
        assert_eq!(split_root_cert("postgres://h/db").1, None);
    }
}
