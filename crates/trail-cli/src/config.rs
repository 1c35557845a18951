//! Resolves paths from flags, environment and the home directory. The only place that reads
//! the environment: libraries receive explicit paths.
//!
//! Precedence (highest first): flags, environment, defaults under the home directory.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use trail_ingest::Roots;
use trail_model::SourceKind;
use trail_sources::{Base, EnvAction, EnvOverride, Location, Os, Unreadable};

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
    default_store_path(env)
}

/// Returns the store path when neither `--store` nor `TRAIL_STORE` names one.
pub fn default_store_path(env: &Env) -> Option<PathBuf> {
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

/// This machine's name: `$HOSTNAME`, else `/etc/hostname`.
pub fn host_name(env: &Env) -> Option<String> {
    env.get("HOSTNAME")
        .map(|h| h.to_string_lossy().into_owned())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty())
}

/// Where the process runs, for the browser's scopes: the folder, its git repository
/// (`owner/name` of the remote) and branch, and the machine's name.
pub fn here(env: &Env) -> trail_tui::Here {
    let folder = std::env::current_dir().ok();
    let repository = folder.as_deref().and_then(trail_ingest::git::repository_of);
    let branch = folder.as_deref().and_then(trail_ingest::git::branch_of);
    let host = host_name(env);
    trail_tui::Here {
        repository,
        folder,
        branch,
        host,
    }
}

/// Returns where each source looks on this OS. `home` replaces the home directory (for the
/// bundled samples: `--home examples/home`); with it, environment overrides are ignored so the
/// samples never mix with real history. `overrides` are `--root SOURCE=PATH` flags, which win.
pub fn source_roots(env: &Env, home: Option<&Path>, overrides: &[(SourceKind, PathBuf)]) -> Roots {
    source_roots_on(Os::current(), env, home, overrides)
}

/// [`source_roots`] for `os`: each registry entry's locations on that OS, under their bases,
/// then its environment overrides in order.
pub fn source_roots_on(
    os: Os,
    env: &Env,
    home: Option<&Path>,
    overrides: &[(SourceKind, PathBuf)],
) -> Roots {
    let isolated = home.is_some();
    let home = home.map(Path::to_path_buf).or_else(|| env.home());
    let var = |k: &str| if isolated { None } else { env.get(k).cloned() };
    let base = |b: Base| base_dir(b, home.as_deref(), &var);
    let mut by: HashMap<SourceKind, Vec<PathBuf>> = HashMap::new();
    for info in trail_sources::sources() {
        let roots = roots_of(info.locations_on(os), info.env, &base, &var);
        if !roots.is_empty() {
            by.insert(info.kind, roots);
        }
    }
    for (kind, path) in overrides {
        by.insert(*kind, vec![path.clone()]);
    }
    Roots { by_source: by }
}

/// Returns the folder a registry [`Base`] stands for: its environment variable, else its
/// default under the home folder.
fn base_dir(
    base: Base,
    home: Option<&Path>,
    var: &dyn Fn(&str) -> Option<OsString>,
) -> Option<PathBuf> {
    let (key, default) = match base {
        Base::Home => return home.map(Path::to_path_buf),
        Base::XdgConfig => ("XDG_CONFIG_HOME", ".config"),
        Base::XdgData => ("XDG_DATA_HOME", ".local/share"),
        Base::XdgState => ("XDG_STATE_HOME", ".local/state"),
        Base::AppData => ("APPDATA", "AppData/Roaming"),
        Base::LocalAppData => ("LOCALAPPDATA", "AppData/Local"),
        Base::MacAppSupport => return home.map(|h| h.join("Library/Application Support")),
    };
    var(key)
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(default)))
}

/// Returns where the formats trail finds but cannot read lie on this OS (see
/// [`source_roots`] for `home`).
pub fn unreadable_roots(
    env: &Env,
    home: Option<&Path>,
) -> Vec<(&'static Unreadable, Vec<PathBuf>)> {
    let isolated = home.is_some();
    let home = home.map(Path::to_path_buf).or_else(|| env.home());
    let var = |k: &str| if isolated { None } else { env.get(k).cloned() };
    let base = |b: Base| base_dir(b, home.as_deref(), &var);
    trail_sources::UNREADABLE
        .iter()
        .map(|u| (u, roots_of(u.locations_on(Os::current()), &[], &base, &var)))
        .collect()
}

/// Returns one source's roots: its default locations, then each environment override (a
/// replacing one keeps only the locations marked `always`).
fn roots_of<'a>(
    locations: impl Iterator<Item = &'a Location>,
    env: &[EnvOverride],
    base: &dyn Fn(Base) -> Option<PathBuf>,
    var: &dyn Fn(&str) -> Option<OsString>,
) -> Vec<PathBuf> {
    let mut out: Vec<(PathBuf, bool)> = locations
        .filter_map(|l| Some((base(l.base)?.join(l.path), l.always)))
        .collect();
    for o in env {
        let Some(value) = var(o.var) else { continue };
        let at = |p: PathBuf| if o.path.is_empty() { p } else { p.join(o.path) };
        let named: Vec<PathBuf> = match o.action {
            EnvAction::ReplaceList => value
                .to_string_lossy()
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| at(PathBuf::from(s)))
                .collect(),
            EnvAction::Replace | EnvAction::Add => vec![at(PathBuf::from(value))],
        };
        if o.action == EnvAction::Add {
            out.extend(named.into_iter().map(|p| (p, false)));
        } else {
            out.retain(|(_, always)| *always);
            out.splice(0..0, named.into_iter().map(|p| (p, false)));
        }
    }
    out.into_iter().map(|(p, _)| p).collect()
}

/// Returns the folders holding projects that are searched for files kept inside projects
/// (Aider's chat histories, SpecStory's `.specstory/history`): `TRAIL_PROJECT_ROOTS`,
/// colon-separated (semicolons on Windows, as `PATH`), then the config file's
/// `index.project_roots` (`~/` is the home folder). With `--home` (the samples) both are
/// ignored.
pub fn project_roots(env: &Env, home: Option<&Path>, config: &Config) -> Vec<PathBuf> {
    if home.is_some() {
        return Vec::new();
    }
    let mut out: Vec<PathBuf> = env
        .get("TRAIL_PROJECT_ROOTS")
        .map(|v| {
            std::env::split_paths(v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    for r in &config.index.project_roots {
        let p = match (r.strip_prefix("~/"), env.home()) {
            (Some(rest), Some(h)) => h.join(rest),
            _ => PathBuf::from(r),
        };
        if !r.is_empty() && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// Returns the config file path: `--config`, else `TRAIL_CONFIG`, else
/// `$XDG_CONFIG_HOME/trail/config.toml` (default `~/.config/trail/config.toml`). The second value
/// says whether the user named it (then it must exist).
pub fn config_path(flag: Option<&Path>, env: &Env) -> Option<(PathBuf, bool)> {
    if let Some(p) = flag {
        return Some((p.to_path_buf(), true));
    }
    if let Some(p) = env.path("TRAIL_CONFIG") {
        return Some((p, true));
    }
    let config = env
        .path("XDG_CONFIG_HOME")
        .or_else(|| env.home().map(|h| h.join(".config")))?;
    Some((config.join("trail").join("config.toml"), false))
}

/// The config file (`config.toml`). Every section and key is optional; keys trail does not
/// know are reported as warnings, so a file written for a newer trail still loads. Documented
/// key by key in `docs/config.md`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Config {
    pub usage: UsageConfig,
    /// `[tui]`: the terminal browser's colours, keys and export folder.
    pub tui: TuiSection,
    /// Prices per model id, USD per million tokens; they replace the shipped ones.
    pub prices: BTreeMap<String, PriceConfig>,
    /// `[index]`: where `index` looks besides the agents' own folders.
    pub index: IndexConfig,
    /// `[sync]`: the team store and what may leave this machine.
    pub sync: SyncConfig,
}

/// `[index]`
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct IndexConfig {
    /// Folders holding projects, searched a few levels deep for the files agents keep inside
    /// a project (Aider's chat histories, SpecStory's copies), as `TRAIL_PROJECT_ROOTS` is.
    /// `~/` is the home folder.
    pub project_roots: Vec<String>,
}

/// `[sync]`: where `trail sync` pushes and what it may push (rules applied before anything is
/// sent; `[[sync.exclude]]` / `[[sync.include]]` with `repo`, `folder`, `agent`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SyncConfig {
    /// The team store (`postgres://...`); `TRAIL_SYNC_URL` and the command line win.
    pub url: Option<String>,
    /// This machine's name on the team store (default: the host name).
    pub host: Option<String>,
    /// Only sessions matching one of these are pushed (none: every session).
    pub include: Vec<trail_postgres::SyncRule>,
    /// Sessions matching any of these are never pushed.
    pub exclude: Vec<trail_postgres::SyncRule>,
}

/// `[usage]`
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct UsageConfig {
    /// What a 5-hour block may cost; the status line shows the active block's share of it.
    pub block_budget_usd: Option<f64>,
}

/// `[prices."model-id"]`: USD per million tokens.
#[derive(Debug, Clone, Deserialize)]
pub struct PriceConfig {
    pub input: f64,
    pub output: f64,
    /// Cache writes (5 minute, and 1 hour unless `cache_write_1h` is given).
    #[serde(default)]
    pub cache_write: f64,
    pub cache_write_1h: Option<f64>,
    #[serde(default)]
    pub cache_read: f64,
}

/// A config file read, with what it said that trail ignored.
#[derive(Debug, Clone, Default)]
pub struct LoadedConfig {
    pub config: Config,
    pub path: Option<PathBuf>,
    /// `unknown key usage.foo in PATH`: shown as warnings.
    pub warnings: Vec<String>,
}

impl LoadedConfig {
    /// The shipped price table with the file's prices applied.
    pub fn price_table(&self) -> trail_report::PriceTable {
        let shipped = trail_report::PriceTable::shipped();
        if self.config.prices.is_empty() {
            return shipped.clone();
        }
        let source = self
            .path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "config".into());
        let overrides: Vec<trail_report::PriceOverride> = self
            .config
            .prices
            .iter()
            .map(|(model, p)| trail_report::PriceOverride {
                model: model.clone(),
                input: p.input,
                output: p.output,
                cache_write: p.cache_write,
                cache_write_1h: p.cache_write_1h,
                cache_read: p.cache_read,
                source: source.clone(),
            })
            .collect();
        shipped.with_overrides(&overrides)
    }
}

/// Reads the config file. A missing default file is an empty config; a missing file the user
/// named, or one that does not parse, is an error (the message names the file and the place).
pub fn load_config(path: Option<(PathBuf, bool)>) -> Result<LoadedConfig, String> {
    let Some((path, named)) = path else {
        return Ok(LoadedConfig::default());
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !named => {
            return Ok(LoadedConfig::default())
        }
        Err(e) => {
            return Err(format!(
                "cannot read the config file {}: {e}",
                path.display()
            ))
        }
    };
    let (config, warnings) = parse_config(&text)
        .map_err(|e| format!("cannot read the config file {}: {e}", path.display()))?;
    let warnings = warnings
        .into_iter()
        .map(|k| format!("unknown key {k} in {} (ignored)", path.display()))
        .collect();
    Ok(LoadedConfig {
        config,
        path: Some(path),
        warnings,
    })
}

/// Parses config text; returns the config and the unknown keys (dotted paths).
pub fn parse_config(text: &str) -> Result<(Config, Vec<String>), String> {
    let mut unknown = Vec::new();
    let de = toml::Deserializer::parse(text).map_err(|e| e.to_string())?;
    let config: Config = serde_ignored::deserialize(de, |path| unknown.push(path.to_string()))
        .map_err(|e| e.to_string())?;
    for (model, p) in &config.prices {
        for (name, v) in [
            ("input", Some(p.input)),
            ("output", Some(p.output)),
            ("cache_write", Some(p.cache_write)),
            ("cache_write_1h", p.cache_write_1h),
            ("cache_read", Some(p.cache_read)),
        ] {
            if v.is_some_and(|v| !v.is_finite() || v < 0.0) {
                return Err(format!(
                    "prices.\"{model}\".{name} must be a price of 0 or more"
                ));
            }
        }
    }
    if config
        .usage
        .block_budget_usd
        .is_some_and(|b| !b.is_finite() || b <= 0.0)
    {
        return Err("usage.block_budget_usd must be more than 0".into());
    }
    Ok((config, unknown))
}

/// "Now" for the reports: the real clock, or `TRAIL_NOW` (an RFC 3339 time) so tests and
/// demos get the same output every run.
pub fn now(env: &Env) -> Result<chrono::DateTime<chrono::Utc>, String> {
    match env.get("TRAIL_NOW") {
        None => Ok(chrono::Utc::now()),
        Some(v) => {
            let v = v.to_string_lossy();
            chrono::DateTime::parse_from_rfc3339(&v)
                .map(|d| d.with_timezone(&chrono::Utc))
                .map_err(|e| format!("TRAIL_NOW={v:?} is not an RFC 3339 time: {e}"))
        }
    }
}

/// Where each agent trail can continue a session in (`resume --in`, the MCP tool
/// `continue_session`, the TUI's continue key) keeps its sessions: the first root
/// discovery uses for that source (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `GEMINI_CLI_HOME`, `--home`, the home
/// folder).
pub fn continue_homes(env: &Env, home: Option<&Path>) -> trail_continue::TargetHomes {
    let roots = source_roots(env, home, &[]);
    let first = |k: SourceKind| -> Option<PathBuf> {
        roots.by_source.get(&k).and_then(|v| v.first()).cloned()
    };
    trail_continue::TargetHomes {
        // A CLAUDE_CONFIG_DIR entry may name the config folder or its `projects/`.
        claude_projects: first(SourceKind::ClaudeCode).map(|p| {
            if p.file_name().is_some_and(|n| n == "projects") {
                p
            } else {
                p.join("projects")
            }
        }),
        codex_home: first(SourceKind::Codex),
        gemini_home: first(SourceKind::GeminiCli),
    }
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
    fn project_roots_are_colon_separated_and_ignored_for_samples() {
        let e = env(&[
            ("HOME", "/h"),
            ("TRAIL_PROJECT_ROOTS", "/code:/work/repos:"),
        ]);
        let none = Config::default();
        assert_eq!(
            project_roots(&e, None, &none),
            vec![PathBuf::from("/code"), PathBuf::from("/work/repos")]
        );
        assert!(project_roots(&e, Some(Path::new("/demo")), &none).is_empty());
        assert!(project_roots(&env(&[("HOME", "/h")]), None, &none).is_empty());
        // The config file's roots come after the environment's, `~/` expanded.
        let (c, unknown) =
            parse_config("[index]\nproject_roots = [\"~/src\", \"/code\"]\n").unwrap();
        assert!(unknown.is_empty());
        assert_eq!(
            project_roots(&e, None, &c),
            vec![
                PathBuf::from("/code"),
                PathBuf::from("/work/repos"),
                PathBuf::from("/h/src")
            ]
        );
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

    fn paths(v: &[&str]) -> Vec<PathBuf> {
        v.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn linux_defaults_per_source() {
        let r = source_roots_on(Os::Linux, &env(&[("HOME", "/h")]), None, &[]).by_source;
        assert_eq!(r[&SourceKind::Codex], paths(&["/h/.codex"]));
        assert_eq!(r[&SourceKind::GeminiCli], paths(&["/h/.gemini"]));
        assert_eq!(
            r[&SourceKind::Opencode],
            paths(&["/h/.local/share/opencode"])
        );
        assert_eq!(r[&SourceKind::CopilotCli], paths(&["/h/.copilot"]));
        assert_eq!(
            r[&SourceKind::Cursor],
            paths(&["/h/.config/Cursor", "/h/.cursor"])
        );
        assert_eq!(
            r[&SourceKind::CopilotVscode],
            paths(&[
                "/h/.config/Code",
                "/h/.config/Code - Insiders",
                "/h/.config/VSCodium",
                "/h/.config/Code - OSS"
            ])
        );
        assert_eq!(r[&SourceKind::Cline].len(), 7);
        assert_eq!(r[&SourceKind::Cline][6], PathBuf::from("/h/.cline/data"));
        assert_eq!(r[&SourceKind::RooCode], r[&SourceKind::Cline][..6]);
        // Kilo Code: the old task folders of every host, and today's OpenCode-format store.
        assert_eq!(r[&SourceKind::KiloCode][..6], r[&SourceKind::RooCode][..]);
        assert_eq!(
            r[&SourceKind::KiloCode][6..],
            paths(&["/h/.local/share/kilo"])
        );
        assert_eq!(r[&SourceKind::ClaudeHistory], r[&SourceKind::ClaudeCode]);
        // Sources found in projects or given by path have no fixed place.
        for k in [
            SourceKind::Aider,
            SourceKind::Specstory,
            SourceKind::VscodeExport,
        ] {
            assert!(!r.contains_key(&k), "{k}");
        }
    }

    #[test]
    fn every_env_override_moves_its_source() {
        let r = |pairs: &[(&str, &str)]| {
            let mut all = vec![("HOME", "/h")];
            all.extend_from_slice(pairs);
            source_roots_on(Os::Linux, &env(&all), None, &[]).by_source
        };
        assert_eq!(
            r(&[("CODEX_HOME", "/c")])[&SourceKind::Codex],
            paths(&["/c"])
        );
        assert_eq!(
            r(&[("GEMINI_CLI_HOME", "/g")])[&SourceKind::GeminiCli],
            paths(&["/g/.gemini"])
        );
        assert_eq!(
            r(&[("TRAIL_OPENCODE_DIR", "/o")])[&SourceKind::Opencode],
            paths(&["/o"])
        );
        assert_eq!(
            r(&[("XDG_DATA_HOME", "/x")])[&SourceKind::Opencode],
            paths(&["/x/opencode"])
        );
        assert_eq!(
            r(&[("XDG_STATE_HOME", "/s")])[&SourceKind::CopilotCli],
            paths(&["/h/.copilot", "/s/.copilot"])
        );
        assert_eq!(
            r(&[("XDG_STATE_HOME", "/s"), ("COPILOT_HOME", "/p")])[&SourceKind::CopilotCli],
            paths(&["/p"])
        );
        assert_eq!(
            r(&[("TRAIL_CURSOR_DIR", "/cu")])[&SourceKind::Cursor],
            paths(&["/cu"])
        );
        let xc = r(&[("XDG_CONFIG_HOME", "/xc")]);
        assert_eq!(xc[&SourceKind::CopilotVscode][0], PathBuf::from("/xc/Code"));
        assert_eq!(
            xc[&SourceKind::ClaudeCode][1],
            PathBuf::from("/xc/claude/projects")
        );

        let portable = r(&[("VSCODE_PORTABLE", "/port")]);
        let user_data = PathBuf::from("/port/user-data");
        assert_eq!(
            portable[&SourceKind::CopilotVscode].last(),
            Some(&user_data)
        );
        assert!(portable[&SourceKind::Cline].contains(&user_data));
        assert!(portable[&SourceKind::KiloCode].contains(&user_data));
        // TRAIL_VSCODE_DIR names the one VS Code host; Cline's CLI folder stays.
        let one = r(&[("VSCODE_PORTABLE", "/port"), ("TRAIL_VSCODE_DIR", "/v")]);
        assert_eq!(one[&SourceKind::CopilotVscode], paths(&["/v"]));
        assert_eq!(one[&SourceKind::RooCode], paths(&["/v"]));
        assert_eq!(one[&SourceKind::Cline], paths(&["/v", "/h/.cline/data"]));

        // A sample home ignores every override; `--root` wins over everything.
        let e = env(&[
            ("HOME", "/h"),
            ("CODEX_HOME", "/c"),
            ("XDG_DATA_HOME", "/x"),
        ]);
        let demo = source_roots_on(Os::Linux, &e, Some(Path::new("/demo")), &[]).by_source;
        assert_eq!(demo[&SourceKind::Codex], paths(&["/demo/.codex"]));
        assert_eq!(
            demo[&SourceKind::Opencode],
            paths(&["/demo/.local/share/opencode"])
        );
        let root = [(SourceKind::Codex, PathBuf::from("/r"))];
        let flagged = source_roots_on(Os::Linux, &e, None, &root).by_source;
        assert_eq!(flagged[&SourceKind::Codex], paths(&["/r"]));
    }

    #[test]
    fn only_this_os_locations_are_listed() {
        let e = env(&[("HOME", "/h")]);
        let linux = source_roots_on(Os::Linux, &e, None, &[]).by_source;
        for p in linux.values().flatten() {
            let p = p.to_string_lossy();
            assert!(!p.contains("Library/") && !p.contains("AppData"), "{p}");
        }
        let mac = source_roots_on(Os::MacOs, &e, None, &[]).by_source;
        assert_eq!(
            mac[&SourceKind::Cursor],
            paths(&["/h/Library/Application Support/Cursor", "/h/.cursor"])
        );
        let e = env(&[("USERPROFILE", "/u"), ("APPDATA", "/u/roaming")]);
        let win = source_roots_on(Os::Windows, &e, None, &[]).by_source;
        assert_eq!(
            win[&SourceKind::CopilotVscode][0],
            PathBuf::from("/u/roaming/Code")
        );
        assert_eq!(win[&SourceKind::CopilotVscode].len(), 4);
        assert_eq!(
            win[&SourceKind::Cursor],
            paths(&["/u/roaming/Cursor", "/u/.cursor"])
        );
    }

    #[test]
    fn config_path_precedence() {
        let e = env(&[("HOME", "/h"), ("TRAIL_CONFIG", "/t.toml")]);
        assert_eq!(
            config_path(Some(Path::new("/f.toml")), &e),
            Some(("/f.toml".into(), true))
        );
        assert_eq!(config_path(None, &e), Some(("/t.toml".into(), true)));
        let e = env(&[("HOME", "/h")]);
        assert_eq!(
            config_path(None, &e),
            Some(("/h/.config/trail/config.toml".into(), false))
        );
        let e = env(&[("HOME", "/h"), ("XDG_CONFIG_HOME", "/x")]);
        assert_eq!(
            config_path(None, &e),
            Some(("/x/trail/config.toml".into(), false))
        );
    }

    #[test]
    fn config_sections_defaults_and_unknown_keys() {
        let (c, unknown) = parse_config(
            r#"
            colour = "always"
            [usage]
            block_budget_usd = 25.5
            refresh = 3
            [prices."claude-sonnet-4-5"]
            input = 3
            output = 15.0
            cache_write = 3.75
            cache_read = 0.3
            "#,
        )
        .unwrap();
        assert_eq!(c.usage.block_budget_usd, Some(25.5));
        assert_eq!(c.prices["claude-sonnet-4-5"].output, 15.0);
        assert_eq!(c.prices["claude-sonnet-4-5"].cache_write_1h, None);
        assert_eq!(unknown, ["colour", "usage.refresh"]);
        let (_, unknown) =
            parse_config("[prices.m]\ninput = 1\noutput = 2\ncache_wrte = 1").unwrap();
        assert_eq!(unknown, ["prices.m.cache_wrte"]);
        let (empty, unknown) = parse_config("").unwrap();
        assert!(empty.prices.is_empty() && empty.usage.block_budget_usd.is_none());
        assert!(unknown.is_empty());
        for bad in [
            "[usage]\nblock_budget_usd = \"ten\"",
            "[usage]\nblock_budget_usd = -1",
            "[prices.m]\noutput = 1",
            "[prices.m]\ninput = 1\noutput = -2",
            "not toml",
        ] {
            assert!(parse_config(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_missing_default_file_is_an_empty_config_but_a_named_one_is_an_error() {
        let dir = std::env::temp_dir().join("trail-config-test-missing");
        let missing = dir.join("none.toml");
        assert!(load_config(Some((missing.clone(), false))).is_ok());
        assert!(load_config(Some((missing, true))).is_err());
    }
}
