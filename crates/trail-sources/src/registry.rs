//! The one list of sources: for each, its id, display name and aliases, where it keeps its
//! files on each OS, the environment variables that move them, what it records, how to resume
//! one of its sessions, and its parser.
//!
//! Every other list (the CLI's values and help, `doctor`, hints, the MCP schemas, the TUI and
//! web filters, `sql --schema`'s notes, the README's table) is derived from [`sources()`].
//! This crate never reads the environment: the CLI resolves [`Base`] and [`EnvOverride`] into
//! paths for the OS it runs on.
//!
//! Adding a source: a module implementing [`Source`], a `SourceKind` variant (with `ALL` and
//! `as_str`) in trail-model, and one [`SourceInfo`] entry in [`SOURCES`].

use std::path::PathBuf;

use trail_model::SourceKind;

use crate::{aider, claude_code, claude_history, cline, codex, copilot_cli, copilot_vscode};
use crate::{cursor, gemini, opencode, specstory, vscode_export, Source};
use crate::{droid, iflow, kimi, pi, qwen};
// h42c
use crate::{crush, goose, grok, kilo, relabel, zed};
// h42b
use crate::{antigravity, hermes, kiro, mistral_vibe, visual_studio};
// h42x
use crate::{chatgpt, claude_ai};

/// An operating system a location applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    MacOs,
    Windows,
    /// Linux and macOS.
    Unix,
    /// Every OS.
    All,
}

impl Os {
    /// The OS this program was built for (Linux for any other Unix).
    pub const fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }

    /// Returns whether a location marked `self` applies on `os` (one of Linux, MacOs, Windows).
    pub fn includes(self, os: Os) -> bool {
        match self {
            Os::All => true,
            Os::Unix => os != Os::Windows,
            own => own == os,
        }
    }

    /// The name `doctor` and the README use.
    pub fn name(self) -> &'static str {
        match self {
            Os::Linux => "Linux",
            Os::MacOs => "macOS",
            Os::Windows => "Windows",
            Os::Unix => "Linux and macOS",
            Os::All => "every OS",
        }
    }
}

/// The folder a location is relative to. The CLI resolves each (the environment variable, else
/// the default under the home folder; with `--home` always the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base {
    /// `~` (`$HOME`, `%USERPROFILE%`).
    Home,
    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    XdgConfig,
    /// `$XDG_DATA_HOME`, else `~/.local/share`.
    XdgData,
    /// `$XDG_STATE_HOME`, else `~/.local/state`.
    XdgState,
    /// `%APPDATA%`, else `~/AppData/Roaming`.
    AppData,
    /// `%LOCALAPPDATA%`, else `~/AppData/Local`.
    LocalAppData,
    /// `~/Library/Application Support`.
    MacAppSupport,
}

impl Base {
    /// How the README and `doctor` write it.
    pub fn shown(self) -> &'static str {
        match self {
            Base::Home => "~",
            Base::XdgConfig => "~/.config",
            Base::XdgData => "~/.local/share",
            Base::XdgState => "~/.local/state",
            Base::AppData => "%APPDATA%",
            Base::LocalAppData => "%LOCALAPPDATA%",
            Base::MacAppSupport => "~/Library/Application Support",
        }
    }
}

/// One default place a source's files live: `path` under `base`, on `os`. The path is a root
/// given to [`Source::discover`], not a file pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    pub os: Os,
    pub base: Base,
    pub path: &'static str,
    /// An [`EnvAction::Replace`] override keeps this location (Cline's CLI folder is not a VS
    /// Code host, so `TRAIL_VSCODE_DIR` does not replace it).
    pub always: bool,
}

impl Location {
    pub const fn new(os: Os, base: Base, path: &'static str) -> Location {
        Location {
            os,
            base,
            path,
            always: false,
        }
    }

    /// The same location, kept when an override replaces the others.
    pub const fn always(self) -> Location {
        Location {
            always: true,
            ..self
        }
    }
}

/// What an environment variable does to a source's locations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvAction {
    /// The variable names one folder (joined with [`EnvOverride::path`]) that replaces the
    /// default locations and earlier overrides (except [`Location::always`] ones).
    Replace,
    /// As `Replace`, with a comma-separated list of folders (`CLAUDE_CONFIG_DIR`).
    ReplaceList,
    /// The folder is added to the locations.
    Add,
}

/// An environment variable that moves or adds a source's locations. Overrides apply in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvOverride {
    pub var: &'static str,
    /// Joined to the variable's folder ("" for the folder itself).
    pub path: &'static str,
    pub action: EnvAction,
}

const fn replace(var: &'static str, path: &'static str) -> EnvOverride {
    EnvOverride {
        var,
        path,
        action: EnvAction::Replace,
    }
}

const fn add(var: &'static str, path: &'static str) -> EnvOverride {
    EnvOverride {
        var,
        path,
        action: EnvAction::Add,
    }
}

/// What a source's files record (and so what trail can show of its sessions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Records {
    /// Token counts (usage, cost).
    pub tokens: bool,
    /// Tool calls with their results.
    pub tool_calls: bool,
    /// File edits or file versions `trail diff` reads.
    pub file_edits: bool,
    /// Subagents or forks linked to their parent session.
    pub subagents: bool,
    /// Chats, not coding sessions (chat-service data exports).
    pub chats_only: bool,
}

/// Every record kind a coding agent's full transcript has.
const FULL: Records = Records {
    tokens: true,
    tool_calls: true,
    file_edits: true,
    subagents: true,
    chats_only: false,
};

/// Messages only: no tokens, tool calls, file edits or subagents.
const TEXT_ONLY: Records = Records {
    tokens: false,
    tool_calls: false,
    file_edits: false,
    subagents: false,
    chats_only: false,
};

/// The rows below say what a source lacks: `FULL.without_subagents()`.
impl Records {
    const fn without_tokens(self) -> Records {
        Records {
            tokens: false,
            ..self
        }
    }

    const fn without_file_edits(self) -> Records {
        Records {
            file_edits: false,
            ..self
        }
    }

    const fn without_subagents(self) -> Records {
        Records {
            subagents: false,
            ..self
        }
    }
}

/// Everything one source is.
#[derive(Clone, Copy)]
pub struct SourceInfo {
    pub kind: SourceKind,
    /// Display name: "Claude Code".
    pub name: &'static str,
    /// Other names users type for it (`--source claude`), lower case. The first is the short
    /// name the TUI's list shows.
    pub aliases: &'static [&'static str],
    /// Default places, per OS. Empty for sources found in projects or given by path.
    pub locations: &'static [Location],
    /// Environment variables that replace or add places, applied in order.
    pub env: &'static [EnvOverride],
    pub records: Records,
    /// The command that reopens a session: `{id}` is the agent's own session id (a word may put
    /// a literal prefix before it: iFlow's `session-{id}`), `{cwd}` the session's folder. The command runs in the session's folder; one without `{id}` finds the
    /// session by its folder, so a session without a folder cannot be reopened.
    pub resume: Option<&'static str>,
    /// The parser.
    pub make: fn() -> Box<dyn Source>,
}

impl std::fmt::Debug for SourceInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceInfo")
            .field("kind", &self.kind)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl SourceInfo {
    /// The id stored in `sessions.source` (`claude-code`).
    pub fn id(&self) -> &'static str {
        self.kind.as_str()
    }

    /// Returns the locations that apply on `os`.
    pub fn locations_on(&self, os: Os) -> impl Iterator<Item = &'static Location> {
        self.locations.iter().filter(move |l| l.os.includes(os))
    }
}

/// The user-data folder of a VS Code-style app on each OS.
macro_rules! user_data {
    ($($app:literal),* $(,)?) => {
        &[$(
            Location::new(Os::Linux, Base::XdgConfig, $app),
            Location::new(Os::MacOs, Base::MacAppSupport, $app),
            Location::new(Os::Windows, Base::AppData, $app),
        )*]
    };
}

/// The VS Code hosts Cline and its forks install into; `.always()` keeps Cline's CLI folder.
macro_rules! cline_hosts {
    ($($extra:expr),* $(,)?) => {
        &[
            Location::new(Os::Linux, Base::XdgConfig, "Code"),
            Location::new(Os::MacOs, Base::MacAppSupport, "Code"),
            Location::new(Os::Windows, Base::AppData, "Code"),
            Location::new(Os::Linux, Base::XdgConfig, "Code - Insiders"),
            Location::new(Os::MacOs, Base::MacAppSupport, "Code - Insiders"),
            Location::new(Os::Windows, Base::AppData, "Code - Insiders"),
            Location::new(Os::Linux, Base::XdgConfig, "VSCodium"),
            Location::new(Os::MacOs, Base::MacAppSupport, "VSCodium"),
            Location::new(Os::Windows, Base::AppData, "VSCodium"),
            Location::new(Os::Linux, Base::XdgConfig, "Code - OSS"),
            Location::new(Os::MacOs, Base::MacAppSupport, "Code - OSS"),
            Location::new(Os::Windows, Base::AppData, "Code - OSS"),
            Location::new(Os::Linux, Base::XdgConfig, "Cursor"),
            Location::new(Os::MacOs, Base::MacAppSupport, "Cursor"),
            Location::new(Os::Windows, Base::AppData, "Cursor"),
            Location::new(Os::Linux, Base::XdgConfig, "Windsurf"),
            Location::new(Os::MacOs, Base::MacAppSupport, "Windsurf"),
            Location::new(Os::Windows, Base::AppData, "Windsurf"),
            $($extra,)*
        ]
    };
}

/// `VSCODE_PORTABLE` adds a portable install's data folder; `TRAIL_VSCODE_DIR` names the one
/// user-data folder to read.
const VSCODE_ENV: &[EnvOverride] = &[
    add("VSCODE_PORTABLE", "user-data"),
    replace("TRAIL_VSCODE_DIR", ""),
];

const CLAUDE_LOCATIONS: &[Location] = &[
    Location::new(Os::All, Base::Home, ".claude/projects"),
    Location::new(Os::All, Base::XdgConfig, "claude/projects"),
];

const CLAUDE_ENV: &[EnvOverride] = &[EnvOverride {
    var: "CLAUDE_CONFIG_DIR",
    path: "",
    action: EnvAction::ReplaceList,
}];

/// Every source, in the order detection tries them (the first whose `detect` accepts a file
/// given by path reads it) and `doctor` lists them.
pub static SOURCES: &[SourceInfo] = &[
    SourceInfo {
        kind: SourceKind::ClaudeCode,
        name: "Claude Code",
        aliases: &["claude"],
        locations: CLAUDE_LOCATIONS,
        env: CLAUDE_ENV,
        records: FULL,
        resume: Some("claude --resume {id}"),
        make: || Box::new(claude_code::ClaudeCode),
    },
    SourceInfo {
        kind: SourceKind::ClaudeHistory,
        name: "Claude Code prompt history",
        aliases: &[],
        // `history.jsonl` beside `projects/` in the same config folders.
        locations: CLAUDE_LOCATIONS,
        env: CLAUDE_ENV,
        records: TEXT_ONLY,
        resume: None,
        make: || Box::new(claude_history::ClaudeHistory),
    },
    SourceInfo {
        kind: SourceKind::CopilotVscode,
        name: "GitHub Copilot Chat (VS Code)",
        aliases: &["vscode", "copilot-chat"],
        locations: user_data!["Code", "Code - Insiders", "VSCodium", "Code - OSS"],
        env: VSCODE_ENV,
        records: FULL,
        resume: Some("code {cwd}"),
        make: || Box::new(copilot_vscode::CopilotVscode),
    },
    SourceInfo {
        kind: SourceKind::VscodeExport,
        name: "VS Code chat export",
        aliases: &["export"],
        locations: &[],
        env: &[],
        records: FULL
            .without_tokens()
            .without_file_edits()
            .without_subagents(),
        resume: Some("code {cwd}"),
        make: || Box::new(vscode_export::VscodeExport),
    },
    SourceInfo {
        kind: SourceKind::CopilotCli,
        name: "GitHub Copilot CLI",
        aliases: &["copilot"],
        locations: &[Location::new(Os::All, Base::Home, ".copilot")],
        env: &[
            add("XDG_STATE_HOME", ".copilot"),
            replace("COPILOT_HOME", ""),
        ],
        records: FULL,
        resume: Some("copilot --resume {id}"),
        make: || Box::new(copilot_cli::CopilotCli),
    },
    SourceInfo {
        kind: SourceKind::Codex,
        name: "Codex",
        aliases: &[],
        locations: &[Location::new(Os::All, Base::Home, ".codex")],
        env: &[replace("CODEX_HOME", "")],
        records: FULL,
        resume: Some("codex resume {id}"),
        make: || Box::new(codex::Codex),
    },
    SourceInfo {
        kind: SourceKind::GeminiCli,
        name: "Gemini CLI",
        aliases: &["gemini"],
        locations: &[Location::new(Os::All, Base::Home, ".gemini")],
        env: &[replace("GEMINI_CLI_HOME", ".gemini")],
        records: FULL,
        resume: Some("gemini --resume {id}"),
        make: || Box::new(gemini::Gemini),
    },
    SourceInfo {
        kind: SourceKind::Opencode,
        name: "OpenCode",
        aliases: &[],
        locations: &[Location::new(Os::All, Base::XdgData, "opencode")],
        env: &[replace("TRAIL_OPENCODE_DIR", "")],
        records: FULL,
        resume: Some("opencode --session {id}"),
        make: || Box::new(opencode::Opencode),
    },
    SourceInfo {
        kind: SourceKind::Cursor,
        name: "Cursor",
        aliases: &[],
        // The user-data folders (`state.vscdb`) and `~/.cursor`, whose
        // `projects/*/agent-transcripts/` hold the agent's messages.
        locations: &[
            Location::new(Os::Linux, Base::XdgConfig, "Cursor"),
            Location::new(Os::MacOs, Base::MacAppSupport, "Cursor"),
            Location::new(Os::Windows, Base::AppData, "Cursor"),
            Location::new(Os::All, Base::Home, ".cursor"),
        ],
        env: &[replace("TRAIL_CURSOR_DIR", "")],
        records: FULL,
        resume: Some("cursor {cwd}"),
        make: || Box::new(cursor::Cursor),
    },
    SourceInfo {
        kind: SourceKind::Specstory,
        name: "SpecStory",
        aliases: &[],
        // Found in projects (`.specstory/history`), see `Source::project_markers`.
        locations: &[],
        env: &[],
        records: FULL
            .without_tokens()
            .without_file_edits()
            .without_subagents(),
        resume: None,
        make: || Box::new(specstory::Specstory),
    },
    SourceInfo {
        kind: SourceKind::Aider,
        name: "Aider",
        aliases: &[],
        // Found in projects (`.aider.chat.history.md`), see `Source::project_markers`.
        locations: &[],
        env: &[],
        records: FULL.without_subagents(),
        resume: Some("aider --restore-chat-history"),
        make: || Box::new(aider::Aider),
    },
    SourceInfo {
        kind: SourceKind::Cline,
        name: "Cline",
        aliases: &[],
        locations: cline_hosts![Location::new(Os::All, Base::Home, ".cline/data").always()],
        env: VSCODE_ENV,
        records: CLINE,
        resume: None,
        make: || Box::new(cline::ClineTasks::cline()),
    },
    SourceInfo {
        kind: SourceKind::RooCode,
        name: "Roo Code",
        aliases: &["roo"],
        locations: cline_hosts![],
        env: VSCODE_ENV,
        records: CLINE,
        resume: None,
        make: || Box::new(cline::ClineTasks::roo_code()),
    },
    SourceInfo {
        kind: SourceKind::KiloCode,
        name: "Kilo Code",
        aliases: &["kilo"],
        // The old task folders in VS Code hosts, and the OpenCode-format store of today's Kilo
        // (`~/.local/share/kilo` on every OS).
        locations: cline_hosts![Location::new(Os::All, Base::XdgData, "kilo").always()],
        env: VSCODE_ENV,
        records: FULL,
        resume: Some("kilo --session {id}"),
        make: || Box::new(kilo::KiloCode),
    },
    // h42c: sources added for issue 42.
    SourceInfo {
        kind: SourceKind::MimoCode,
        name: "MiMo Code",
        aliases: &["mimo"],
        locations: &[Location::new(Os::All, Base::XdgData, "mimocode")],
        env: &[replace("MIMOCODE_HOME", "data")],
        records: FULL,
        resume: None,
        make: || Box::new(opencode::OpencodeStore(opencode::MIMO)),
    },
    SourceInfo {
        kind: SourceKind::Icodemate,
        name: "ICodeMate",
        aliases: &["icm"],
        locations: &[Location::new(Os::All, Base::XdgData, "icodemate")],
        env: &[],
        records: FULL,
        resume: None,
        make: || Box::new(opencode::OpencodeStore(opencode::ICODEMATE)),
    },
    SourceInfo {
        kind: SourceKind::Traex,
        name: "TraeX",
        aliases: &["trae-cli"],
        locations: &[Location::new(Os::All, Base::Home, ".trae/cli")],
        env: &[],
        records: FULL,
        resume: None,
        make: || Box::new(relabel::TRAEX),
    },
    SourceInfo {
        kind: SourceKind::Openclaude,
        name: "OpenClaude",
        aliases: &["oclaude"],
        locations: &[Location::new(Os::All, Base::Home, ".openclaude")],
        env: &[replace("OPENCLAUDE_CONFIG_DIR", "")],
        records: FULL,
        resume: Some("openclaude --resume {id}"),
        make: || Box::new(relabel::OPENCLAUDE),
    },
    SourceInfo {
        kind: SourceKind::ClaudeCowork,
        name: "Claude Cowork",
        aliases: &["cowork"],
        locations: &[
            Location::new(
                Os::Linux,
                Base::XdgConfig,
                "Claude/local-agent-mode-sessions",
            ),
            Location::new(
                Os::MacOs,
                Base::MacAppSupport,
                "Claude/local-agent-mode-sessions",
            ),
            Location::new(
                Os::Windows,
                Base::AppData,
                "Claude/local-agent-mode-sessions",
            ),
        ],
        env: &[],
        records: FULL,
        resume: None,
        make: || Box::new(relabel::CLAUDE_COWORK),
    },
    SourceInfo {
        kind: SourceKind::Crush,
        name: "Crush",
        aliases: &[],
        // The global data folder holding `projects.json` (which names each project's
        // `.crush/crush.db`), and `~/.crush`.
        locations: &[
            Location::new(Os::Unix, Base::XdgData, "crush"),
            Location::new(Os::Windows, Base::LocalAppData, "crush"),
            Location::new(Os::All, Base::Home, ".crush"),
        ],
        env: &[replace("CRUSH_GLOBAL_DATA", "")],
        records: FULL,
        // Crush's root command: `--session <id>`, looked up in the folder's own store (so it runs
        // in the session's folder).
        resume: Some("crush --session {id}"),
        make: || Box::new(crush::Crush),
    },
    SourceInfo {
        kind: SourceKind::Zed,
        name: "Zed",
        aliases: &[],
        locations: &[
            Location::new(Os::Linux, Base::XdgData, "zed"),
            Location::new(Os::MacOs, Base::MacAppSupport, "Zed"),
            Location::new(Os::Windows, Base::LocalAppData, "Zed"),
        ],
        env: &[],
        records: FULL.without_file_edits(),
        // Zed's agent threads are reopened in the editor, not from a command line.
        resume: None,
        make: || Box::new(zed::Zed),
    },
    SourceInfo {
        kind: SourceKind::Goose,
        name: "Goose",
        aliases: &[],
        locations: &[
            Location::new(Os::Unix, Base::XdgData, "goose"),
            Location::new(Os::Windows, Base::AppData, "Block/goose/data"),
            Location::new(Os::All, Base::Home, ".goose"),
        ],
        env: &[replace("GOOSE_PATH_ROOT", "data")],
        records: FULL.without_file_edits(),
        // goose-cli: `session --resume --session-id <id>` (ids such as `20251108_1`; legacy JSONL
        // sessions were imported under their file names).
        resume: Some("goose session --resume --session-id {id}"),
        make: || Box::new(goose::Goose),
    },
    SourceInfo {
        kind: SourceKind::Grok,
        name: "Grok Build",
        aliases: &[],
        locations: &[Location::new(Os::All, Base::Home, ".grok")],
        env: &[replace("GROK_HOME", "")],
        records: FULL.without_file_edits(),
        // Grok Build: `--resume [SESSION]` resumes a session by its id.
        resume: Some("grok --resume {id}"),
        make: || Box::new(grok::Grok),
    },
    // h42a: Pi, Qwen Code, Kimi Code CLI, Factory Droid, iFlow CLI.
    SourceInfo {
        kind: SourceKind::Pi,
        name: "Pi",
        aliases: &["pi-agent", "oh-my-pi", "prime-agent", "openclaw", "qclaw"],
        locations: &[
            Location::new(Os::All, Base::Home, ".pi/agent"),
            Location::new(Os::All, Base::Home, ".omp/agent").always(),
            Location::new(Os::All, Base::Home, ".prime/agent").always(),
            Location::new(Os::All, Base::Home, ".openclaw/agents").always(),
            Location::new(Os::All, Base::Home, ".kimi_openclaw/agents").always(),
            Location::new(Os::All, Base::Home, ".qclaw/agents").always(),
            Location::new(Os::All, Base::Home, ".clawdbot").always(),
        ],
        env: &[replace("PI_CODING_AGENT_DIR", "")],
        records: FULL.without_subagents(),
        // Pi's `--session <path|id>` takes a session id prefix (`cli/session-path.ts`); the forks
        // (Oh My Pi, OpenClaw...) get Pi's command too.
        resume: Some("pi --session {id}"),
        make: || Box::new(pi::Pi),
    },
    SourceInfo {
        kind: SourceKind::QwenCode,
        name: "Qwen Code",
        aliases: &["qwen", "qoder"],
        locations: &[
            Location::new(Os::All, Base::Home, ".qwen"),
            Location::new(Os::All, Base::Home, ".qoder"),
            Location::new(Os::All, Base::Home, ".qoderwork"),
            Location::new(
                Os::MacOs,
                Base::MacAppSupport,
                "Qoder/SharedClientCache/cli",
            ),
        ],
        env: &[],
        records: FULL,
        // Qwen Code: `--resume <session-id>` (`-r`; `--continue` is the latest).
        resume: Some("qwen --resume {id}"),
        make: || Box::new(qwen::QwenCode),
    },
    SourceInfo {
        kind: SourceKind::Kimi,
        name: "Kimi Code CLI",
        aliases: &["kimi-cli", "kimi-code"],
        locations: &[
            Location::new(Os::All, Base::Home, ".kimi-code"),
            Location::new(Os::All, Base::Home, ".kimi").always(),
        ],
        env: &[replace("KIMI_CODE_HOME", "")],
        records: FULL,
        // kimi-cli: `--session <id>` (`-S`; `--continue` is the folder's latest).
        resume: Some("kimi --session {id}"),
        make: || Box::new(kimi::Kimi),
    },
    SourceInfo {
        kind: SourceKind::Droid,
        name: "Factory Droid",
        aliases: &["factory", "factory-droid"],
        locations: &[Location::new(Os::All, Base::Home, ".factory")],
        env: &[],
        records: FULL.without_subagents(),
        // Droid: `--resume [sessionId]` (`-r`; Factory's CLI reference).
        resume: Some("droid --resume {id}"),
        make: || Box::new(droid::Droid),
    },
    SourceInfo {
        kind: SourceKind::Iflow,
        name: "iFlow CLI",
        aliases: &["iflow-cli"],
        locations: &[Location::new(Os::All, Base::Home, ".iflow")],
        env: &[],
        records: FULL.without_subagents(),
        // iFlow (a Gemini CLI fork, closed source): `--resume <session id>`; its ids keep the
        // `session-` prefix trail strips.
        resume: Some("iflow --resume session-{id}"),
        make: || Box::new(iflow::Iflow),
    },
    // h42b: Mistral Vibe, Kiro CLI, Hermes Agent, Antigravity, Visual Studio Copilot.
    SourceInfo {
        kind: SourceKind::MistralVibe,
        name: "Mistral Vibe",
        aliases: &["vibe"],
        locations: &[Location::new(Os::All, Base::Home, ".vibe")],
        env: &[replace("VIBE_HOME", "")],
        records: FULL,
        // mistral-vibe's `vibe/cli/entrypoint.py`: `--resume SESSION_ID` (`-c` continues the
        // latest).
        resume: Some("vibe --resume {id}"),
        make: || Box::new(mistral_vibe::MistralVibe),
    },
    SourceInfo {
        kind: SourceKind::Kiro,
        name: "Kiro CLI",
        aliases: &["kiro-cli"],
        // `~/.kiro/sessions/cli` (JSONL), and the newer `kiro-cli/data.sqlite3`.
        locations: &[
            Location::new(Os::All, Base::Home, ".kiro"),
            Location::new(Os::Linux, Base::XdgData, "kiro-cli").always(),
            Location::new(Os::MacOs, Base::MacAppSupport, "kiro-cli").always(),
            Location::new(Os::Windows, Base::LocalAppData, "kiro-cli").always(),
        ],
        env: &[replace("KIRO_HOME", "")],
        records: FULL.without_subagents(),
        // kiro-cli: `chat --resume-id <id>` (`chat --resume` is the folder's latest).
        resume: Some("kiro-cli chat --resume-id {id}"),
        make: || Box::new(kiro::Kiro),
    },
    // h42z: Kiro IDE, the VS Code fork (its agent extension's storage folder).
    SourceInfo {
        kind: SourceKind::KiroIde,
        name: "Kiro IDE",
        aliases: &["kiro-desktop"],
        locations: KIRO_IDE_LOCATIONS,
        env: &[],
        records: TEXT_ONLY,
        // Kiro IDE has no command that reopens a chat by its id.
        resume: None,
        make: || Box::new(kiro::ide::KiroIde),
    },
    SourceInfo {
        kind: SourceKind::Hermes,
        name: "Hermes Agent",
        aliases: &["hermes-agent"],
        locations: &[Location::new(Os::All, Base::Home, ".hermes")],
        env: &[replace("HERMES_HOME", "")],
        records: FULL,
        // Hermes Agent: `--resume <session_id>` (`-r`; `--continue` is the latest).
        resume: Some("hermes --resume {id}"),
        make: || Box::new(hermes::Hermes),
    },
    SourceInfo {
        kind: SourceKind::Antigravity,
        name: "Antigravity",
        aliases: &["agy"],
        locations: &[
            Location::new(Os::All, Base::Home, ".gemini/antigravity"),
            Location::new(Os::All, Base::Home, ".gemini/antigravity-cli"),
            Location::new(Os::All, Base::Home, ".gemini/antigravity-ide"),
        ],
        env: &[],
        records: FULL.without_tokens().without_subagents(),
        // Antigravity documents no command that reopens a conversation by its id.
        resume: None,
        make: || Box::new(antigravity::Antigravity),
    },
    SourceInfo {
        kind: SourceKind::VisualStudioCopilot,
        name: "Visual Studio Copilot",
        aliases: &["vs"],
        locations: &[
            Location::new(Os::Windows, Base::LocalAppData, "Temp/VSGitHubCopilotLogs"),
            Location::new(Os::MacOs, Base::Home, "Library/Caches/VSGitHubCopilotLogs"),
            Location::new(Os::Linux, Base::Home, ".cache/VSGitHubCopilotLogs"),
        ],
        env: &[add("XDG_CACHE_HOME", "VSGitHubCopilotLogs")],
        records: FULL.without_file_edits().without_subagents(),
        // Visual Studio's Copilot chats have no command line.
        resume: None,
        make: || Box::new(visual_studio::VisualStudioCopilot),
    },
    // h42x: chat-service data exports, import only (no location: discovery never looks).
    SourceInfo {
        kind: SourceKind::ChatgptExport,
        name: "ChatGPT data export",
        aliases: &["chatgpt"],
        locations: &[],
        env: &[],
        records: CHAT_EXPORT,
        resume: None,
        make: || Box::new(chatgpt::ChatgptExport),
    },
    SourceInfo {
        kind: SourceKind::ClaudeAiExport,
        name: "Claude.ai data export",
        aliases: &["claude-ai", "claude.ai"],
        locations: &[],
        env: &[],
        records: CHAT_EXPORT,
        resume: None,
        make: || Box::new(claude_ai::ClaudeAiExport),
    },
];

/// Kiro IDE's agent storage folder: the VS Code-style user-data folder on each OS, and a
/// remote host's `~/.kiro-server/data` (Kiro's server for remote development).
const KIRO_IDE_LOCATIONS: &[Location] = &[
    Location::new(
        Os::Linux,
        Base::XdgConfig,
        "Kiro/User/globalStorage/kiro.kiroagent",
    ),
    Location::new(
        Os::MacOs,
        Base::MacAppSupport,
        "Kiro/User/globalStorage/kiro.kiroagent",
    ),
    Location::new(
        Os::Windows,
        Base::AppData,
        "Kiro/User/globalStorage/kiro.kiroagent",
    ),
    Location::new(
        Os::Linux,
        Base::Home,
        ".kiro-server/data/User/globalStorage/kiro.kiroagent",
    ),
];

/// Cline's task folders: tokens, tool calls and edits; a task started from another is not
/// linked to it.
const CLINE: Records = Records {
    tokens: true,
    tool_calls: true,
    file_edits: true,
    subagents: false,
    chats_only: false,
};

/// A chat service's data export: chats with their tool calls (code runs, searches), no tokens,
/// no edits, branches kept in the conversation rather than as linked sessions.
const CHAT_EXPORT: Records = Records {
    tokens: false,
    tool_calls: true,
    file_edits: false,
    subagents: false,
    chats_only: true,
};

/// A format trail finds but cannot read: `doctor` says it found these files and why it cannot
/// read them, so a user of the agent is not left with silence.
#[derive(Debug, Clone, Copy)]
pub struct Unreadable {
    /// The agent: "Windsurf".
    pub name: &'static str,
    /// Where its files lie, per OS (resolved as [`SourceInfo::locations`] are).
    pub locations: &'static [Location],
    /// Files whose name ends with one of these are the agent's conversations.
    pub file_suffixes: &'static [&'static str],
    /// Files whose name has no extension are too (Kiro IDE's execution logs).
    pub no_extension: bool,
    /// How many folder levels under a location they may lie.
    pub depth: usize,
    /// Why trail cannot read them.
    pub why: &'static str,
}

impl Unreadable {
    /// Returns the locations that apply on `os`.
    pub fn locations_on(&self, os: Os) -> impl Iterator<Item = &'static Location> {
        self.locations.iter().filter(move |l| l.os.includes(os))
    }

    /// Returns this format's files under `roots` (folders resolved from its locations).
    pub fn files(&self, roots: &[PathBuf]) -> Vec<PathBuf> {
        let suffixes = self.file_suffixes;
        let bare = self.no_extension;
        roots
            .iter()
            .flat_map(|r| {
                crate::discover::walk_files(r, self.depth, |p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        suffixes.iter().any(|s| n.ends_with(s))
                            || (bare && !n.starts_with('.') && !n.contains('.'))
                    })
                })
            })
            .collect()
    }
}

/// Formats found but not read (see `../shared/formats/more-agents.md`).
pub static UNREADABLE: &[Unreadable] = &[
    Unreadable {
        name: "Windsurf",
        locations: &[Location::new(Os::All, Base::Home, ".codeium/windsurf/cascade")],
        file_suffixes: &[".pb"],
        no_extension: false,
        depth: 1,
        why: "Cascade conversations are encrypted protobuf, and no key is published",
    },
    Unreadable {
        name: "Trae",
        locations: user_data!["Trae/User", "Trae CN/User", "TRAE SOLO CN/User"],
        file_suffixes: &["state.vscdb"],
        no_extension: false,
        depth: 3,
        why: "current Trae versions encrypt the chat store in state.vscdb",
    },
    Unreadable {
        name: "GitHub Copilot for JetBrains",
        locations: &[
            Location::new(Os::Unix, Base::XdgConfig, "github-copilot"),
            Location::new(Os::Windows, Base::AppData, "github-copilot"),
        ],
        file_suffixes: &["-nitrite.db"],
        no_extension: false,
        depth: 4,
        why: "chats are kept in a Nitrite database (an embedded Java store) with no reader outside the JVM",
    },
    // h42z: Kiro IDE's third generation (its `.chat` files and `workspace-sessions` are read).
    Unreadable {
        name: "Kiro IDE execution logs",
        locations: KIRO_IDE_LOCATIONS,
        file_suffixes: &[],
        no_extension: true,
        depth: 3,
        why: "Kiro IDE is closed source, and the public readers of these logs disagree on where \
              their messages lie; the answers that workspace-sessions chats show as \
              \"On it.\" are kept here",
    },
];

/// Every source, in detection order.
pub fn sources() -> &'static [SourceInfo] {
    SOURCES
}

/// Returns the entry of `kind`.
///
/// # Panics
/// If `kind` has no entry (a test checks every `SourceKind` has one).
pub fn info(kind: SourceKind) -> &'static SourceInfo {
    SOURCES
        .iter()
        .find(|s| s.kind == kind)
        .unwrap_or_else(|| panic!("source {kind} has no registry entry"))
}

/// The name people know the agent by: "Claude Code".
pub fn display_name(kind: SourceKind) -> &'static str {
    info(kind).name
}

/// The display name of a source id (`claude-code`), if it is one.
pub fn name_of(id: &str) -> Option<&'static str> {
    SourceKind::parse(id).map(display_name)
}

/// Returns the source a user means by `name`: its id or one of its aliases, any case.
pub fn find(name: &str) -> Option<SourceKind> {
    let name = name.trim();
    SOURCES
        .iter()
        .find(|s| {
            s.id().eq_ignore_ascii_case(name)
                || s.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
        })
        .map(|s| s.kind)
}

/// Every source's id, in registry order.
pub fn source_ids() -> impl Iterator<Item = &'static str> {
    SOURCES.iter().map(SourceInfo::id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_covers_every_source_kind_once() {
        for kind in SourceKind::ALL {
            let n = SOURCES.iter().filter(|s| s.kind == kind).count();
            assert_eq!(n, 1, "{kind} has {n} registry entries");
        }
        assert_eq!(SOURCES.len(), SourceKind::ALL.len());
    }

    #[test]
    fn each_entry_makes_its_own_parser() {
        for s in SOURCES {
            assert_eq!((s.make)().kind(), s.kind, "{}", s.name);
        }
    }

    #[test]
    fn names_and_aliases_are_unique_and_found() {
        let mut seen = std::collections::HashSet::new();
        for s in SOURCES {
            assert!(!s.name.is_empty());
            for n in std::iter::once(s.id()).chain(s.aliases.iter().copied()) {
                assert!(seen.insert(n), "{n} names two sources");
                assert_eq!(n, n.to_ascii_lowercase());
                assert_eq!(find(n), Some(s.kind));
                assert_eq!(find(&n.to_ascii_uppercase()), Some(s.kind));
            }
        }
        assert_eq!(find("no-such-agent"), None);
    }

    #[test]
    fn resume_templates_name_the_session() {
        for s in SOURCES {
            if let Some(t) = s.resume {
                let program = t.split_whitespace().next().unwrap_or("");
                assert!(!program.is_empty() && !program.contains('{'), "{t}");
                // A word holds at most one placeholder, perhaps after a literal prefix
                // (iFlow's `session-{id}`); nothing else in braces.
                for token in t.split_whitespace().filter(|w| w.contains('{')) {
                    let rest = token.replacen("{id}", "", 1).replacen("{cwd}", "", 1);
                    assert!(!rest.contains(['{', '}']), "{t}");
                    assert!(token.ends_with("{id}") || token == "{cwd}", "{t}");
                }
            }
        }
    }

    #[test]
    fn unreadable_formats_find_their_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let put = |rel: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, b"fixture").unwrap();
        };
        put("cascade/one.pb");
        put("cascade/two.pb");
        put("cascade/notes.txt");
        put("copilot/iu/chat-sessions/h1/copilot-chat-nitrite.db");
        put("copilot/iu/chat-sessions/h1/other.db");
        let windsurf = &UNREADABLE[0];
        let found = windsurf.files(&[root.join("cascade"), root.join("absent")]);
        assert_eq!(found.len(), 2, "{found:?}");
        let jetbrains = UNREADABLE
            .iter()
            .find(|u| u.name.contains("JetBrains"))
            .unwrap();
        assert_eq!(jetbrains.files(&[root.join("copilot")]).len(), 1);
        for u in UNREADABLE {
            assert!(
                !u.why.is_empty() && u.locations_on(Os::Linux).count() > 0,
                "{}",
                u.name
            );
        }
    }

    #[test]
    fn locations_are_relative_and_os_filtered() {
        for s in SOURCES {
            for l in s.locations {
                assert!(
                    !l.path.starts_with('/') && !l.path.contains('\\'),
                    "{}",
                    l.path
                );
            }
        }
        let cline = info(SourceKind::Cline);
        let linux: Vec<_> = cline.locations_on(Os::Linux).collect();
        assert!(linux
            .iter()
            .all(|l| l.base != Base::MacAppSupport && l.base != Base::AppData));
        assert!(linux.iter().any(|l| l.path == ".cline/data"));
        let windows: Vec<_> = cline.locations_on(Os::Windows).collect();
        assert!(windows.iter().all(|l| l.base != Base::XdgConfig));
    }
}
