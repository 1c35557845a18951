//! A few read-only store handles that queries run on, off the async threads (rusqlite is
//! synchronous): a query waits for a permit, takes an idle handle (or opens one), and gives it
//! back when done.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;
use trail_query::Query;

use crate::error::WebError;

pub(crate) struct Pool {
    path: PathBuf,
    idle: Mutex<Vec<Query>>,
    permits: Arc<Semaphore>,
}

impl Pool {
    pub fn new(path: PathBuf, size: usize) -> Pool {
        Pool {
            path,
            idle: Mutex::new(Vec::with_capacity(size)),
            permits: Arc::new(Semaphore::new(size)),
        }
    }

    /// Runs `f` on a read-only handle on the blocking pool.
    pub async fn run<T, F>(self: &Arc<Self>, f: F) -> Result<T, WebError>
    where
        T: Send + 'static,
        F: FnOnce(&Query) -> Result<T, WebError> + Send + 'static,
    {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| WebError::internal("the server is stopping"))?;
        let pool = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let idle = pool.idle.lock().map(|mut v| v.pop()).unwrap_or(None);
            let query = match idle {
                Some(q) => q,
                None => Query::open(&pool.path)?,
            };
            let result = f(&query);
            if let Ok(mut v) = pool.idle.lock() {
                v.push(query);
            }
            result
        })
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "a query task failed");
            WebError::internal("the query failed (see the server's log)")
        })?
    }
}
