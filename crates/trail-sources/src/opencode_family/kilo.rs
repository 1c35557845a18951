//! Kilo Code, both generations, as one source (`kilo-code`).
//!
//! Kilo Code began as a fork of Roo Code and Cline and kept their task folders in its VS Code
//! extension's `globalStorage` ([`crate::cline`]). Its 2026 rebuild on OpenCode's core (beta
//! 2026-03-10, GA 2026-04-02) moved the extension and the new `kilo` CLI to OpenCode's store
//! under `$XDG_DATA_HOME/kilo` (`~/.local/share/kilo` on every OS): `kilo.db`, or the JSON
//! tree of its earliest releases ([`crate::opencode`] with [`opencode::KILO`]). The task
//! folders stopped growing then but stay on disk.
//!
//! A user sees one agent, so both generations share the `kilo-code` kind: this source lists
//! both under the roots it is given (the VS Code hosts and the data folder) and hands each file
//! to the reader of its generation, told apart by the file's name (a database or a
//! `storage/session` file is the store; a `ui_messages.json` or `api_conversation_history.json`
//! is a task). Old task sessions keep their ids; store sessions are `kilo-code:<ses_...>`.

use std::path::{Path, PathBuf};

use trail_model::SourceKind;

use crate::cline::{self, ClineTasks};
use crate::opencode::{self, OpencodeStore};
use crate::{FileParse, ParseRequest, Source, SourceError};

/// Kilo Code's task folders and its OpenCode-format store.
pub struct KiloCode;

fn tasks() -> ClineTasks {
    ClineTasks::kilo_code()
}

fn store() -> OpencodeStore {
    OpencodeStore(opencode::KILO)
}

impl Source for KiloCode {
    fn kind(&self) -> SourceKind {
        SourceKind::KiloCode
    }

    /// The sum of both readers' versions: a bump of either changes it, so the files are re-read.
    fn parser_version(&self) -> u32 {
        cline::PARSER_VERSION + opencode::PARSER_VERSION
    }

    fn discover(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let mut out = tasks().discover(roots);
        out.extend(store().discover(roots));
        out.sort();
        out.dedup();
        out
    }

    fn detect(&self, path: &Path, head: &[u8]) -> bool {
        store().detect(path, head) || tasks().detect(path, head)
    }

    fn appendable(&self, _path: &Path) -> bool {
        // The store is a database; the extension rewrites its task files whole.
        false
    }

    fn parse(&self, request: ParseRequest<'_>) -> Result<FileParse, SourceError> {
        if store().owns_path(request.path) {
            store().parse(request)
        } else {
            tasks().parse(request)
        }
    }
}
