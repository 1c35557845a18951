//! `trail serve`: a local web viewer over the query layer. Server-rendered pages (sessions,
//! a transcript through the HTML export's renderer, search, usage with SVG charts, standup,
//! tips, improve, a file's history), a JSON API under `/api/` with the shapes of the CLI's
//! `--json`, and server-sent events that tell open pages about new sessions while `watch`
//! keeps the store fresh.
//!
//! Safety: the caller binds loopback unless told otherwise; a request whose `Host` is not the
//! server's own is refused (DNS rebinding); only GET and HEAD are served; every response
//! carries a Content-Security-Policy that allows the one embedded script by its hash and no
//! other origin; transcript text is escaped and secrets redacted unless the caller turned
//! redaction off.
//!
//! No query logic here: every read is a `trail_query::Query` call, run on the blocking pool
//! over a few read-only handles. No printing and no environment: the CLI passes everything in.

mod api;
mod assets;
mod charts;
mod error;
mod html;
mod pages;
mod params;
mod pool;
mod security;
mod watch;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use axum::routing::get;
use axum::Router;
use tokio::net::TcpListener;
use trail_render::Redactor;

pub use error::WebError;
pub use watch::WatchConfig;

use crate::pool::Pool;
use crate::security::AllowedHosts;
use crate::watch::IndexState;

/// What `trail serve` was asked for.
pub struct WebConfig {
    /// The store to read (and, with `watch`, to index into).
    pub store: PathBuf,
    /// The address to listen on (loopback unless the user said `--bind`).
    pub bind: IpAddr,
    /// The port; 0 picks a free one.
    pub port: u16,
    /// Applied to every piece of transcript text shown or returned.
    pub redactor: Redactor,
    /// Keep the store fresh while serving.
    pub watch: Option<WatchConfig>,
    /// Read-only store handles queries run on at once.
    pub readers: usize,
}

impl WebConfig {
    /// Serves `store` on 127.0.0.1:`port`, secrets redacted, no watching, four readers.
    pub fn loopback(store: PathBuf, port: u16) -> WebConfig {
        WebConfig {
            store,
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port,
            redactor: Redactor::disabled(),
            watch: None,
            readers: 4,
        }
    }
}

/// What every handler shares.
pub(crate) struct AppState {
    pub pool: Arc<Pool>,
    pub redactor: Redactor,
    /// The latest index state; kept here so `/api/events` streams stay open without a
    /// watcher.
    pub index_state: tokio::sync::watch::Sender<IndexState>,
    pub watching: bool,
}

pub(crate) type Shared = Arc<AppState>;

/// A bound server, not yet answering.
pub struct WebServer {
    listener: TcpListener,
    router: Router,
    addr: SocketAddr,
    watcher: Option<watch::Watcher>,
}

impl WebServer {
    /// Checks the store, binds the address and builds the routes. A store that does not exist
    /// is an error unless `watch` is on (the first index makes it).
    pub async fn bind(config: WebConfig) -> Result<WebServer, WebError> {
        let (state_tx, _) = tokio::sync::watch::channel(IndexState::default());
        let mut watcher = None;
        if let Some(w) = config.watch.clone() {
            // The first index runs before the server answers, so the store exists; it is
            // synchronous work, kept off the async threads.
            let (store, publish) = (config.store.clone(), state_tx.clone());
            watcher = Some(
                tokio::task::spawn_blocking(move || watch::Watcher::start(store, w, publish))
                    .await
                    .map_err(|e| WebError::internal(format!("the first index failed: {e}")))??,
            );
        }
        let pool = Arc::new(Pool::new(config.store.clone(), config.readers.max(1)));
        // Fails early (and says how to make a store) when there is none.
        let initial = pool.run(IndexState::read).await?;
        state_tx.send_if_modified(|s| {
            if s.generation == 0 {
                *s = initial;
                true
            } else {
                false
            }
        });
        let listener = TcpListener::bind(SocketAddr::new(config.bind, config.port))
            .await
            .map_err(|e| WebError::bind(config.bind, config.port, e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| WebError::bind(config.bind, config.port, e))?;
        let state = Arc::new(AppState {
            pool,
            redactor: config.redactor,
            index_state: state_tx,
            watching: config.watch.is_some(),
        });
        let router = routes(state, AllowedHosts::for_addr(addr));
        Ok(WebServer {
            listener,
            router,
            addr,
            watcher,
        })
    }

    /// The address the server listens on (the port chosen when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL to open.
    pub fn url(&self) -> String {
        match self.addr.ip() {
            IpAddr::V6(ip) => format!("http://[{ip}]:{}/", self.addr.port()),
            IpAddr::V4(ip) => format!("http://{ip}:{}/", self.addr.port()),
        }
    }

    /// Answers requests until `shutdown` completes.
    pub async fn run(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), WebError> {
        let result = axum::serve(self.listener, self.router)
            .with_graceful_shutdown(shutdown)
            .await
            .map_err(WebError::serve);
        if let Some(w) = self.watcher {
            w.stop();
        }
        result
    }
}

/// Binds, calls `ready` with the server's URL, and serves until Ctrl-C, on a runtime of its
/// own (the CLI is synchronous).
pub fn serve_blocking(config: WebConfig, ready: impl FnOnce(&str)) -> Result<(), WebError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(WebError::serve)?;
    runtime.block_on(async move {
        let server = WebServer::bind(config).await?;
        ready(&server.url());
        server
            .run(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
    })
}

/// A server running on a thread of its own (tests and benchmarks).
pub struct RunningServer {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<(), WebError>>>,
}

impl RunningServer {
    /// Starts `config` on a new thread and returns once it listens.
    pub fn start(config: WebConfig) -> Result<RunningServer, WebError> {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .map_err(WebError::serve)?;
            runtime.block_on(async move {
                let server = match WebServer::bind(config).await {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = addr_tx.send(Err(e.to_string()));
                        return Ok(());
                    }
                };
                let _ = addr_tx.send(Ok(server.local_addr()));
                server
                    .run(async {
                        let _ = stop_rx.await;
                    })
                    .await
            })
        });
        match addr_rx.recv() {
            Ok(Ok(addr)) => Ok(RunningServer {
                addr,
                stop: Some(stop_tx),
                thread: Some(thread),
            }),
            Ok(Err(message)) => Err(WebError::start(message)),
            Err(_) => Err(WebError::start("the server thread stopped".into())),
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn routes(state: Shared, hosts: AllowedHosts) -> Router {
    Router::new()
        .route("/", get(pages::sessions))
        .route("/sessions", get(pages::sessions))
        .route("/sessions/{id}", get(pages::session))
        .route("/sessions/{id}/diff", get(pages::session_diff))
        .route("/search", get(pages::search))
        .route("/usage", get(pages::usage))
        .route("/standup", get(pages::standup))
        .route("/tips", get(pages::tips))
        .route("/improve", get(pages::improve))
        .route("/why", get(pages::why))
        .route("/assets/style.css", get(assets::style))
        .route("/assets/icon.svg", get(assets::icon))
        .route("/favicon.ico", get(assets::icon))
        .route("/api/sessions", get(api::sessions))
        .route("/api/sessions/{id}", get(api::session))
        .route("/api/sessions/{id}/diff", get(api::session_diff))
        .route("/api/search", get(api::search))
        .route("/api/usage", get(api::usage))
        .route("/api/standup", get(api::standup))
        .route("/api/tips", get(api::tips))
        .route("/api/improve", get(api::improve))
        .route("/api/why", get(api::why))
        .route("/api/events", get(api::events))
        .fallback(error::not_found)
        .with_state(state)
        // A panic becomes a 500 page; the guard outside it still adds the headers.
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            error::panic_response,
        ))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(hosts),
            security::guard,
        ))
}
