//! Resolves paths from flags, environment and the home directory. The only place that reads
//! the environment: libraries receive explicit paths.
//!
//! Precedence (highest first): flags, environment, defaults under the home directory.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use trail_ingest::Roots;
use trail_model::SourceKind;

use crate::tui_config::TuiSection;

/// The process environment, captured once so tests can substitute it.
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: HashMap<String, OsString>,
}

impl Env {
    pub fn from_process() -> Self {
        Env {
            vars: std::env::vars_os()
                .filter_map(|(k, v)| k.into_string().ok().map(|k| (k, v)))
                .collect(),
        }
    }

    /// Returns a non-empty variable.
    pub fn get(&self, key: &str) -> Option<&OsString> {
        self.vars.get(key).filter(|v| !v.is_empty())
    }

    fn path(&self, key: &str) -> Option<PathBuf> {
        self.get(key).map(PathBuf::from)
    }

    /// Returns the home directory (`$HOME`, or `%USERPROFILE%` on Windows).
    pub fn home(&self) -> Option<PathBuf> {
        self.path("HOME").or_else(|| self.path("USERPROFILE"))
    }
}

/// Returns the store path: `--store`, else `TRAIL_STORE`, else
/// `$XDG_DATA_HOME/trail/trail.db` (default `~/.local/share/trail/trail.db`).
pub fn store_path(flag: Option<&Path>, env: &Env) -> Option<PathBuf> {
    if let Some(p) = flag {
        return Some(p.to_path_buf());
    }
    if let Some(p) = env.path("TRAIL_STORE") {
        return Some(p);
    }
    let data = env
        .path("XDG_DATA_HOME")
        .or_else(|| env.home().map(|h| h.join(".local/share")))?;
    Some(data.join("trail").join("trail.db"))
}

/// Returns the data folder: `$XDG_DATA_HOME`, else `~/.local/share`.
pub fn data_dir(env: &Env) -> Option<PathBuf> {
    env.path("XDG_DATA_HOME")
        .or_else(|| env.home().map(|h| h.join(".local/share")))
}

/// Returns the config file path: `TRAIL_CONFIG`, else `$XDG_CONFIG_HOME/trail/config.toml`
/// (default `~/.config/trail/config.toml`). The second value says whether the user named it
/// (then it must exist).
pub fn config_path(env: &Env) -> Option<(PathBuf, bool)> {
    if let Some(p) = env.path("TRAIL_CONFIG") {
        return Some((p, true));
    }
    let config = env
        .path("XDG_CONFIG_HOME")
        .or_else(|| env.home().map(|h| h.join(".config")))?;
    Some((config.join("trail").join("config.toml"), false))
}

/// The config file (`config.toml`). Every section and key is optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Config {
    /// `[tui]`: the terminal browser's colours, keys and export folder.
    pub tui: TuiSection,
}

/// Reads the config file. A missing default file is an empty config; a missing file the user
/// named, or one that does not parse, is an error naming the file and the place.
pub fn load_config(path: Option<(PathBuf, bool)>) -> Result<Config, String> {
    let Some((path, named)) = path else {
        return Ok(Config::default());
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !named => {
            return Ok(Config::default())
        }
        Err(e) => {
            return Err(format!(
                "cannot read the config file {}: {e}",
                path.display()
            ))
        }
    };
    toml::from_str(&text)
        .map_err(|e| format!("cannot read the config file {}: {e}", path.display()))
}

/// Where the process runs, for the browser's scopes: the folder, its git repository
/// (`owner/name` of the remote) and branch, and the machine's name.
pub fn here(env: &Env) -> trail_tui::Here {
    let folder = std::env::current_dir().ok();
    let repository = folder.as_deref().and_then(trail_ingest::git::repository_of);
    let branch = folder.as_deref().and_then(trail_ingest::git::branch_of);
    let host = env
        .get("HOSTNAME")
        .map(|h| h.to_string_lossy().into_owned())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty());
    trail_tui::Here {
        repository,
        folder,
        branch,
        host,
    }
}

/// Returns where each source looks. `home` replaces the home directory (for the bundled
/// samples: `--home examples/home`); with it, environment overrides are ignored so the samples
/// never mix with real history. `overrides` are `--root SOURCE=PATH` flags, which win.
pub fn source_roots(env: &Env, home: Option<&Path>, overrides: &[(SourceKind, PathBuf)]) -> Roots {
    let isolated = home.is_some();
    let home = home.map(Path::to_path_buf).or_else(|| env.home());
    let var = |k: &str| if isolated { None } else { env.path(k) };
    let mut by: HashMap<SourceKind, Vec<PathBuf>> = HashMap::new();

    // Claude Code: CLAUDE_CONFIG_DIR (comma-separated) replaces the defaults.
    let claude = match (!isolated).then(|| env.get("CLAUDE_CONFIG_DIR")).flatten() {
        Some(list) => list
            .to_string_lossy()
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect(),
        None => {
            let mut v = Vec::new();
            if let Some(h) = &home {
                v.push(h.join(".claude/projects"));
            }
            let xdg = var("XDG_CONFIG_HOME").or_else(|| home.as_ref().map(|h| h.join(".config")));
            if let Some(x) = xdg {
                v.push(x.join("claude/projects"));
            }
            v
        }
    };
    by.insert(SourceKind::ClaudeCode, claude);

    if let Some(h) = &home {
        // VS Code and forks: user data folders on Linux, macOS and Windows.
        let mut vscode = Vec::new();
        let appdata = var("APPDATA").unwrap_or_else(|| h.join("AppData/Roaming"));
        let config = var("XDG_CONFIG_HOME").unwrap_or_else(|| h.join(".config"));
        for app in ["Code", "Code - Insiders", "VSCodium", "Code - OSS"] {
            vscode.push(config.join(app));
            vscode.push(h.join("Library/Application Support").join(app));
            vscode.push(appdata.join(app));
        }
        if let Some(p) = var("VSCODE_PORTABLE") {
            vscode.push(p.join("user-data"));
        }
        if let Some(p) = var("TRAIL_VSCODE_DIR") {
            vscode = vec![p];
        }
        by.insert(SourceKind::CopilotVscode, vscode);

        let copilot = if let Some(p) = var("COPILOT_HOME") {
            vec![p]
        } else {
            let mut v = vec![h.join(".copilot")];
            if let Some(s) = var("XDG_STATE_HOME") {
                v.push(s.join(".copilot"));
            }
            v
        };
        by.insert(SourceKind::CopilotCli, copilot);
        by.insert(
            SourceKind::Codex,
            vec![var("CODEX_HOME").unwrap_or_else(|| h.join(".codex"))],
        );
        by.insert(
            SourceKind::GeminiCli,
            vec![var("GEMINI_CLI_HOME")
                .map(|p| p.join(".gemini"))
                .unwrap_or_else(|| h.join(".gemini"))],
        );
        let data = var("XDG_DATA_HOME").unwrap_or_else(|| h.join(".local/share"));
        by.insert(
            SourceKind::Opencode,
            vec![var("TRAIL_OPENCODE_DIR").unwrap_or_else(|| data.join("opencode"))],
        );
        // Cursor's user-data folders (`state.vscdb`) and `~/.cursor`, whose
        // `projects/*/agent-transcripts/` hold the agent's messages.
        let mut cursor = vec![
            config.join("Cursor"),
            h.join("Library/Application Support/Cursor"),
            appdata.join("Cursor"),
            h.join(".cursor"),
        ];
        if let Some(p) = var("TRAIL_CURSOR_DIR") {
            cursor = vec![p];
        }
        by.insert(SourceKind::Cursor, cursor);
    }
    for (kind, path) in overrides {
        by.insert(*kind, vec![path.clone()]);
    }
    Roots { by_source: by }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        Env {
            vars: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), OsString::from(v)))
                .collect(),
        }
    }

    #[test]
    fn store_precedence() {
        let e = env(&[("HOME", "/h"), ("TRAIL_STORE", "/s.db")]);
        assert_eq!(
            store_path(Some(Path::new("/f.db")), &e),
            Some("/f.db".into())
        );
        assert_eq!(store_path(None, &e), Some("/s.db".into()));
        let e = env(&[("HOME", "/h")]);
        assert_eq!(
            store_path(None, &e),
            Some("/h/.local/share/trail/trail.db".into())
        );
        let e = env(&[("HOME", "/h"), ("XDG_DATA_HOME", "/x")]);
        assert_eq!(store_path(None, &e), Some("/x/trail/trail.db".into()));
    }

    #[test]
    fn claude_roots() {
        let e = env(&[("HOME", "/h")]);
        let r = source_roots(&e, None, &[]);
        assert_eq!(
            r.by_source[&SourceKind::ClaudeCode],
            vec![
                PathBuf::from("/h/.claude/projects"),
                "/h/.config/claude/projects".into()
            ]
        );
        let e = env(&[("HOME", "/h"), ("CLAUDE_CONFIG_DIR", "/a, /b/projects")]);
        let r = source_roots(&e, None, &[]);
        assert_eq!(
            r.by_source[&SourceKind::ClaudeCode],
            vec![PathBuf::from("/a"), "/b/projects".into()]
        );
        // A sample home ignores the environment.
        let r = source_roots(&e, Some(Path::new("/demo")), &[]);
        assert_eq!(
            r.by_source[&SourceKind::ClaudeCode][0],
            PathBuf::from("/demo/.claude/projects")
        );
    }
}
