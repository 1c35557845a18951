//! `trail mcp --print-config AGENT`: the snippet that registers trail's MCP server with each
//! agent that speaks MCP, in the format and file that agent documents.
//!
//! Where each format comes from (checked against each agent's documentation, November 2026):
//! - Claude Code: `claude mcp add [--scope user|project] NAME -- COMMAND ARGS...`; the project
//!   scope writes `.mcp.json` with `mcpServers.NAME = {type: "stdio", command, args}`.
//! - VS Code (Copilot Chat): `.vscode/mcp.json` (or the user profile's `mcp.json`) with
//!   `servers.NAME = {type: "stdio", command, args}` (code.visualstudio.com, "MCP
//!   configuration reference").
//! - Copilot CLI: `~/.copilot/mcp-config.json` (`$COPILOT_HOME`) with
//!   `mcpServers.NAME = {type: "local", command, args, tools: ["*"]}`; `tools` is required
//!   there (GitHub docs, "Adding MCP servers for GitHub Copilot CLI").
//! - Codex: `~/.codex/config.toml` (`$CODEX_HOME`), table `[mcp_servers.NAME]` with `command`
//!   and `args`; or `codex mcp add NAME -- COMMAND ARGS...` (openai/codex docs/config.md).
//! - Gemini CLI: `~/.gemini/settings.json` (or `.gemini/settings.json` in a project) with
//!   `mcpServers.NAME = {command, args}` (google-gemini/gemini-cli docs/tools/mcp-server.md).
//! - Cursor: `~/.cursor/mcp.json` (or `.cursor/mcp.json` in a project) with
//!   `mcpServers.NAME = {command, args}` (cursor.com/docs/mcp).
//! - OpenCode: `opencode.json` in a project or `~/.config/opencode/opencode.json` with
//!   `mcp.NAME = {type: "local", command: [COMMAND, ARGS...], enabled: true}`
//!   (opencode.ai/docs/mcp-servers).

use std::fmt::Write as _;
use std::str::FromStr;

use serde_json::json;

/// The name trail registers under in every agent.
pub const SERVER_NAME: &str = "trail";

/// An agent that can start trail's MCP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    ClaudeCode,
    Vscode,
    CopilotCli,
    Codex,
    GeminiCli,
    Cursor,
    Opencode,
}

impl Agent {
    /// Every agent, in the order the help lists them.
    pub const ALL: [Agent; 7] = [
        Agent::ClaudeCode,
        Agent::Vscode,
        Agent::CopilotCli,
        Agent::Codex,
        Agent::GeminiCli,
        Agent::Cursor,
        Agent::Opencode,
    ];

    /// Returns the name `--print-config` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Vscode => "vscode",
            Agent::CopilotCli => "copilot-cli",
            Agent::Codex => "codex",
            Agent::GeminiCli => "gemini-cli",
            Agent::Cursor => "cursor",
            Agent::Opencode => "opencode",
        }
    }
}

impl FromStr for Agent {
    type Err = String;

    fn from_str(s: &str) -> Result<Agent, String> {
        let wanted = s.trim().to_ascii_lowercase();
        // Names people also use for the same agents.
        let wanted = match wanted.as_str() {
            "claude" => "claude-code",
            "copilot" | "vs-code" | "copilot-vscode" | "code" => "vscode",
            "gemini" => "gemini-cli",
            _ => wanted.as_str(),
        };
        Agent::ALL
            .into_iter()
            .find(|a| a.as_str() == wanted)
            .ok_or_else(|| {
                let all: Vec<&str> = Agent::ALL.iter().map(|a| a.as_str()).collect();
                format!("unknown agent {s:?}; one of: {}", all.join(", "))
            })
    }
}

/// How to register trail with one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    /// Where the text goes (a file, and any command that does the same).
    pub place: String,
    /// The configuration itself, as that file holds it.
    pub text: String,
}

/// Returns the registration snippet for `agent`. `command` is the trail binary (an absolute
/// path, so that agents started outside a shell find it); `args` follow it (`mcp` and any
/// global options).
pub fn snippet(agent: Agent, command: &str, args: &[String]) -> Snippet {
    let json_args = serde_json::Value::from(args.to_vec());
    let pretty = |v: serde_json::Value| serde_json::to_string_pretty(&v).unwrap_or_default();
    let words = shell_words(command, args);
    let (place, text) = match agent {
        Agent::ClaudeCode => (
            format!(
                ".mcp.json at the project's root (or run: claude mcp add --scope user {SERVER_NAME} -- {words})"
            ),
            pretty(json!({
                "mcpServers": { SERVER_NAME: {
                    "type": "stdio", "command": command, "args": json_args,
                }}
            })),
        ),
        Agent::Vscode => (
            ".vscode/mcp.json in the workspace (or \"MCP: Open User Configuration\" for every workspace)"
                .to_string(),
            pretty(json!({
                "servers": { SERVER_NAME: {
                    "type": "stdio", "command": command, "args": json_args,
                }}
            })),
        ),
        Agent::CopilotCli => (
            "~/.copilot/mcp-config.json ($COPILOT_HOME/mcp-config.json), merged into \"mcpServers\""
                .to_string(),
            pretty(json!({
                "mcpServers": { SERVER_NAME: {
                    "type": "local", "command": command, "args": json_args, "tools": ["*"],
                }}
            })),
        ),
        Agent::Codex => {
            let items: Vec<String> = args.iter().map(|a| toml_string(a)).collect();
            (
                format!(
                    "~/.codex/config.toml ($CODEX_HOME/config.toml) (or run: codex mcp add {SERVER_NAME} -- {words})"
                ),
                format!(
                    "[mcp_servers.{SERVER_NAME}]\ncommand = {}\nargs = [{}]",
                    toml_string(command),
                    items.join(", ")
                ),
            )
        }
        Agent::GeminiCli => (
            "~/.gemini/settings.json (or .gemini/settings.json in a project), merged into \"mcpServers\""
                .to_string(),
            pretty(json!({
                "mcpServers": { SERVER_NAME: { "command": command, "args": json_args } }
            })),
        ),
        Agent::Cursor => (
            "~/.cursor/mcp.json (or .cursor/mcp.json in a project), merged into \"mcpServers\""
                .to_string(),
            pretty(json!({
                "mcpServers": { SERVER_NAME: { "command": command, "args": json_args } }
            })),
        ),
        Agent::Opencode => {
            let mut line = vec![command.to_string()];
            line.extend(args.iter().cloned());
            (
                "opencode.json in a project (or ~/.config/opencode/opencode.json), merged into \"mcp\""
                    .to_string(),
                pretty(json!({
                    "$schema": "https://opencode.ai/config.json",
                    "mcp": { SERVER_NAME: { "type": "local", "command": line, "enabled": true } }
                })),
            )
        }
    };
    Snippet { place, text }
}

/// Returns a TOML basic string holding `s`.
fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Returns `command` and `args` as one POSIX shell command line, each word quoted when needed.
fn shell_words(command: &str, args: &[String]) -> String {
    std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .map(shell_quote)
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> Vec<String> {
        vec!["--store".into(), "/data/my trail.db".into(), "mcp".into()]
    }

    fn body(agent: Agent) -> String {
        snippet(agent, "/opt/bin/trail", &args()).text
    }

    #[test]
    fn every_agent_parses_by_its_name() {
        for a in Agent::ALL {
            assert_eq!(a.as_str().parse::<Agent>(), Ok(a));
        }
        assert_eq!("Claude".parse::<Agent>(), Ok(Agent::ClaudeCode));
        assert!("emacs"
            .parse::<Agent>()
            .unwrap_err()
            .contains("claude-code"));
    }

    #[test]
    fn json_snippets_carry_the_command_in_each_agents_shape() {
        let v: serde_json::Value = serde_json::from_str(&body(Agent::Vscode)).unwrap();
        assert_eq!(v["servers"]["trail"]["type"], "stdio");
        assert_eq!(v["servers"]["trail"]["command"], "/opt/bin/trail");
        assert_eq!(v["servers"]["trail"]["args"][1], "/data/my trail.db");

        let v: serde_json::Value = serde_json::from_str(&body(Agent::CopilotCli)).unwrap();
        assert_eq!(v["mcpServers"]["trail"]["type"], "local");
        assert_eq!(v["mcpServers"]["trail"]["tools"][0], "*");

        for a in [Agent::GeminiCli, Agent::Cursor, Agent::ClaudeCode] {
            let v: serde_json::Value = serde_json::from_str(&body(a)).unwrap();
            assert_eq!(
                v["mcpServers"]["trail"]["command"], "/opt/bin/trail",
                "{a:?}"
            );
            assert_eq!(v["mcpServers"]["trail"]["args"][2], "mcp", "{a:?}");
        }

        let v: serde_json::Value = serde_json::from_str(&body(Agent::Opencode)).unwrap();
        let command = &v["mcp"]["trail"]["command"];
        assert_eq!(command[0], "/opt/bin/trail");
        assert_eq!(command[3], "mcp");
        assert_eq!(v["mcp"]["trail"]["type"], "local");
    }

    #[test]
    fn claude_and_codex_commands_quote_what_the_shell_would_split() {
        let s = snippet(Agent::ClaudeCode, "/opt/bin/trail", &args()).place;
        assert!(
            s.contains("claude mcp add --scope user trail -- /opt/bin/trail --store '/data/my trail.db' mcp"),
            "{s}"
        );
        let s = snippet(Agent::Codex, "C:\\bin\\trail \"x\"", &["mcp".into()]).text;
        assert!(s.contains("[mcp_servers.trail]"));
        assert!(s.contains(r#"command = "C:\\bin\\trail \"x\"""#), "{s}");
        assert!(s.contains(r#"args = ["mcp"]"#));
    }
}
