//! The CLI's error type: its kind fixes the exit code.
//!
//! Exit codes: 0 success; 1 a runtime failure (or, for `search`, no hits); 2 a usage error
//! (bad flags, unknown session id, invalid query).

use std::fmt;

/// What went wrong, which decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The user asked for something that cannot be (bad arguments, unknown id).
    Usage,
    /// Something failed while doing it.
    Runtime,
}

/// An error with a kind and optional hints.
#[derive(Debug)]
pub struct CliError {
    pub kind: ErrorKind,
    pub error: anyhow::Error,
    pub hints: Vec<String>,
}

impl CliError {
    pub fn usage(msg: impl fmt::Display) -> Self {
        CliError {
            kind: ErrorKind::Usage,
            error: anyhow::anyhow!("{msg}"),
            hints: Vec::new(),
        }
    }
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }
    pub fn exit_code(&self) -> i32 {
        match self.kind {
            ErrorKind::Usage => 2,
            ErrorKind::Runtime => 1,
        }
    }
    /// Returns true when the error is a closed stdout (`trail list | head`).
    pub fn is_broken_pipe(&self) -> bool {
        self.error.chain().any(|e| {
            e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
        })
    }
}

impl<E: Into<anyhow::Error>> From<E> for CliError {
    fn from(e: E) -> Self {
        let error: anyhow::Error = e.into();
        if let Some(q) = error.downcast_ref::<trail_query::QueryError>() {
            return CliError {
                kind: if q.is_caller_error() {
                    ErrorKind::Usage
                } else {
                    ErrorKind::Runtime
                },
                hints: q.hint().map(str::to_string).into_iter().collect(),
                error,
            };
        }
        let kind = match error.downcast_ref::<trail_store::StoreError>() {
            Some(
                trail_store::StoreError::NotFound(_)
                | trail_store::StoreError::Ambiguous { .. }
                | trail_store::StoreError::InvalidQuery(_),
            ) => ErrorKind::Usage,
            _ => ErrorKind::Runtime,
        };
        CliError {
            kind,
            error,
            hints: Vec::new(),
        }
    }
}

pub type CliResult<T = ()> = Result<T, CliError>;
