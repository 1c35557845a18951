//! Key bindings: what each configurable action is bound to (`[tui.keys]` in the config file),
//! and the key names the config and the help screen use (`ctrl-r`, `enter`, `N`, `f1`).

use std::collections::BTreeMap;
use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// One key with its modifiers, as written in the config (`ctrl-r`, `alt-x`, `G`, `space`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
}

impl Key {
    /// A plain character key.
    pub const fn char(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            ctrl: false,
            alt: false,
        }
    }

    /// A character with Ctrl.
    pub const fn ctrl(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            ctrl: true,
            alt: false,
        }
    }

    /// Reads `ctrl-r`, `alt-x`, `r`, `N`, `?`, `enter`, `esc`, `tab`, `space`, `up`, `f1`...
    pub fn parse(s: &str) -> Result<Key, String> {
        let bad =
            || format!("cannot read the key {s:?} (examples: r, N, ctrl-r, alt-x, enter, f1)");
        let mut ctrl = false;
        let mut alt = false;
        let mut rest = s.trim();
        loop {
            let lower = rest.to_ascii_lowercase();
            if rest.len() > 1 && (lower.starts_with("ctrl-") || lower.starts_with("ctrl+")) {
                ctrl = true;
                rest = &rest[5..];
            } else if rest.len() > 1 && (lower.starts_with("alt-") || lower.starts_with("alt+")) {
                alt = true;
                rest = &rest[4..];
            } else {
                break;
            }
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => KeyCode::Char(if ctrl { c.to_ascii_lowercase() } else { c }),
            _ => match rest.to_ascii_lowercase().as_str() {
                "enter" | "return" => KeyCode::Enter,
                "esc" | "escape" => KeyCode::Esc,
                "tab" => KeyCode::Tab,
                "space" => KeyCode::Char(' '),
                "backspace" => KeyCode::Backspace,
                "up" => KeyCode::Up,
                "down" => KeyCode::Down,
                "left" => KeyCode::Left,
                "right" => KeyCode::Right,
                "home" => KeyCode::Home,
                "end" => KeyCode::End,
                "pageup" => KeyCode::PageUp,
                "pagedown" => KeyCode::PageDown,
                f if f.starts_with('f') => KeyCode::F(f[1..].parse().map_err(|_| bad())?),
                _ => return Err(bad()),
            },
        };
        Ok(Key { code, ctrl, alt })
    }

    /// Returns whether a key press is this key. Shift is part of the character (`N`), so it is
    /// not compared.
    pub fn matches(&self, e: &KeyEvent) -> bool {
        let code = match e.code {
            KeyCode::Char(c) if self.ctrl => KeyCode::Char(c.to_ascii_lowercase()),
            c => c,
        };
        code == self.code
            && e.modifiers.contains(KeyModifiers::CONTROL) == self.ctrl
            && e.modifiers.contains(KeyModifiers::ALT) == self.alt
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("ctrl-")?;
        }
        if self.alt {
            f.write_str("alt-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Enter => f.write_str("enter"),
            KeyCode::Esc => f.write_str("esc"),
            KeyCode::Tab => f.write_str("tab"),
            KeyCode::Backspace => f.write_str("backspace"),
            KeyCode::Up => f.write_str("up"),
            KeyCode::Down => f.write_str("down"),
            KeyCode::Left => f.write_str("left"),
            KeyCode::Right => f.write_str("right"),
            KeyCode::Home => f.write_str("home"),
            KeyCode::End => f.write_str("end"),
            KeyCode::PageUp => f.write_str("pageup"),
            KeyCode::PageDown => f.write_str("pagedown"),
            KeyCode::F(n) => write!(f, "f{n}"),
            _ => f.write_str("?"),
        }
    }
}

/// The actions a key can be bound to, with their defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Keymap {
    /// Cycle the scope: repository, folder, branch, this host, everything.
    pub scope: Key,
    /// Resume the session in its agent.
    pub resume: Key,
    /// Continue the session in another agent.
    pub continue_elsewhere: Key,
    /// Export the session (Markdown or HTML).
    pub export: Key,
    /// Show the session's id to copy.
    pub copy_id: Key,
    /// Show or hide every tool input and output and the thinking.
    pub toggle_all: Key,
    /// Show what the open session changed (`trail diff`).
    pub diff: Key,
    /// Show the active 5-hour block's usage (`trail usage --active`); again to refresh.
    pub usage: Key,
    /// Next search match in a transcript.
    pub next_match: Key,
    /// Previous search match in a transcript.
    pub prev_match: Key,
    /// Transcript top.
    pub top: Key,
    /// Transcript bottom.
    pub bottom: Key,
    /// The list of keys.
    pub help: Key,
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap {
            scope: Key::ctrl('r'),
            resume: Key::char('r'),
            continue_elsewhere: Key::char('c'),
            export: Key::char('e'),
            copy_id: Key::char('y'),
            toggle_all: Key::char('f'),
            diff: Key::char('d'),
            usage: Key::ctrl('b'),
            next_match: Key::char('n'),
            prev_match: Key::char('N'),
            top: Key::char('g'),
            bottom: Key::char('G'),
            help: Key::char('?'),
        }
    }
}

impl Keymap {
    /// The action names the config file may bind.
    pub const NAMES: [&'static str; 13] = [
        "scope",
        "resume",
        "continue",
        "export",
        "copy_id",
        "toggle_all",
        "diff",
        "usage",
        "next_match",
        "prev_match",
        "top",
        "bottom",
        "help",
    ];

    /// Returns the defaults with `overrides` (action name -> key) applied; an unknown action
    /// or key is an error naming it.
    pub fn with_overrides(overrides: &BTreeMap<String, String>) -> Result<Keymap, String> {
        let mut k = Keymap::default();
        for (action, key) in overrides {
            let key = Key::parse(key).map_err(|e| format!("[tui.keys] {action}: {e}"))?;
            let slot = match action.as_str() {
                "scope" => &mut k.scope,
                "resume" => &mut k.resume,
                "continue" => &mut k.continue_elsewhere,
                "export" => &mut k.export,
                "copy_id" => &mut k.copy_id,
                "toggle_all" => &mut k.toggle_all,
                "diff" => &mut k.diff,
                "usage" => &mut k.usage,
                "next_match" => &mut k.next_match,
                "prev_match" => &mut k.prev_match,
                "top" => &mut k.top,
                "bottom" => &mut k.bottom,
                "help" => &mut k.help,
                _ => {
                    return Err(format!(
                        "[tui.keys] has no action {action:?}; one of: {}",
                        Keymap::NAMES.join(", ")
                    ))
                }
            };
            *slot = key;
        }
        Ok(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    #[test]
    fn keys_parse_match_and_print() {
        let k = Key::parse("ctrl-R").unwrap();
        assert!(k.matches(&press(KeyCode::Char('r'), KeyModifiers::CONTROL)));
        assert!(!k.matches(&press(KeyCode::Char('r'), KeyModifiers::NONE)));
        assert_eq!(k.to_string(), "ctrl-r");
        let n = Key::parse("N").unwrap();
        assert!(n.matches(&press(KeyCode::Char('N'), KeyModifiers::SHIFT)));
        assert!(!n.matches(&press(KeyCode::Char('n'), KeyModifiers::NONE)));
        assert_eq!(Key::parse("f1").unwrap().code, KeyCode::F(1));
        assert_eq!(Key::parse("space").unwrap().to_string(), "space");
        assert!(Key::parse("ctrl-").is_err());
        assert!(Key::parse("hyper-x").is_err());
    }

    #[test]
    fn overrides_replace_defaults() {
        let mut m = BTreeMap::new();
        m.insert("scope".to_string(), "ctrl-s".to_string());
        let k = Keymap::with_overrides(&m).unwrap();
        assert_eq!(k.scope, Key::ctrl('s'));
        assert_eq!(k.resume, Key::char('r'));
        m.insert("launch".to_string(), "x".to_string());
        assert!(Keymap::with_overrides(&m).unwrap_err().contains("launch"));
    }
}
