//! Colours: a named palette the config file can change (`[tui.colors]`), and the monochrome
//! styles used under `NO_COLOR` (bold, reverse and underline only).

use std::collections::BTreeMap;
use std::str::FromStr;

use ratatui::style::{Color, Modifier, Style};

/// The palette, one colour per role. Each takes a name (`yellow`, `lightblue`), an index
/// (`238`) or `#rrggbb`.
#[derive(Debug, Clone, PartialEq)]
pub struct Colors {
    /// The prompt, headings, the scope label.
    pub accent: Color,
    /// Secondary text: times, ids, folded lines.
    pub dim: Color,
    /// A search match: text colour.
    pub match_fg: Color,
    /// A search match: background.
    pub match_bg: Color,
    /// The selected row's background.
    pub selected_bg: Color,
    /// A user prompt in a transcript.
    pub prompt: Color,
    /// Tool names.
    pub tool: Color,
    /// A tool call that succeeded.
    pub ok: Color,
    /// A failed tool call, an error message.
    pub error: Color,
}

impl Default for Colors {
    fn default() -> Self {
        Colors {
            accent: Color::Cyan,
            dim: Color::DarkGray,
            match_fg: Color::Black,
            match_bg: Color::Yellow,
            selected_bg: Color::Indexed(236),
            prompt: Color::Green,
            tool: Color::Cyan,
            ok: Color::Green,
            error: Color::Red,
        }
    }
}

impl Colors {
    /// The names the config file may set.
    pub const NAMES: [&'static str; 9] = [
        "accent",
        "dim",
        "match_fg",
        "match_bg",
        "selected_bg",
        "prompt",
        "tool",
        "ok",
        "error",
    ];

    /// Returns the default palette with `overrides` (role name -> colour) applied; an unknown
    /// role or a colour that cannot be read is an error naming it.
    pub fn with_overrides(overrides: &BTreeMap<String, String>) -> Result<Colors, String> {
        let mut c = Colors::default();
        for (role, value) in overrides {
            let color = Color::from_str(value.trim()).map_err(|_| {
                format!("[tui.colors] {role} = {value:?}: not a colour (a name like yellow, an index like 238, or #rrggbb)")
            })?;
            let slot = match role.as_str() {
                "accent" => &mut c.accent,
                "dim" => &mut c.dim,
                "match_fg" => &mut c.match_fg,
                "match_bg" => &mut c.match_bg,
                "selected_bg" => &mut c.selected_bg,
                "prompt" => &mut c.prompt,
                "tool" => &mut c.tool,
                "ok" => &mut c.ok,
                "error" => &mut c.error,
                _ => {
                    return Err(format!(
                        "[tui.colors] has no colour {role:?}; one of: {}",
                        Colors::NAMES.join(", ")
                    ))
                }
            };
            *slot = color;
        }
        Ok(c)
    }
}

/// The styles the views draw with.
#[derive(Debug, Clone)]
pub struct Theme {
    pub accent: Style,
    pub dim: Style,
    pub matched: Style,
    pub selected: Style,
    pub prompt: Style,
    pub tool: Style,
    pub ok: Style,
    pub error: Style,
    pub bold: Style,
}

impl Theme {
    /// Styles from a palette, or without any colour when `no_color` (the `NO_COLOR`
    /// convention).
    pub fn new(colors: &Colors, no_color: bool) -> Theme {
        if no_color {
            let plain = Style::default();
            return Theme {
                accent: plain.add_modifier(Modifier::BOLD),
                dim: plain,
                matched: plain.add_modifier(Modifier::REVERSED | Modifier::UNDERLINED),
                selected: plain.add_modifier(Modifier::REVERSED),
                prompt: plain.add_modifier(Modifier::BOLD),
                tool: plain,
                ok: plain,
                error: plain.add_modifier(Modifier::BOLD),
                bold: plain.add_modifier(Modifier::BOLD),
            };
        }
        Theme {
            accent: Style::default().fg(colors.accent),
            dim: Style::default().fg(colors.dim),
            matched: Style::default()
                .fg(colors.match_fg)
                .bg(colors.match_bg)
                .add_modifier(Modifier::BOLD),
            selected: Style::default()
                .bg(colors.selected_bg)
                .add_modifier(Modifier::BOLD),
            prompt: Style::default()
                .fg(colors.prompt)
                .add_modifier(Modifier::BOLD),
            tool: Style::default().fg(colors.tool),
            ok: Style::default().fg(colors.ok),
            error: Style::default().fg(colors.error),
            bold: Style::default().add_modifier(Modifier::BOLD),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_are_read_and_checked() {
        let mut m = BTreeMap::new();
        m.insert("accent".to_string(), "#ff8800".to_string());
        m.insert("dim".to_string(), "244".to_string());
        let c = Colors::with_overrides(&m).unwrap();
        assert_eq!(c.accent, Color::Rgb(0xff, 0x88, 0));
        assert_eq!(c.dim, Color::Indexed(244));
        m.insert("accent".to_string(), "not-a-colour".to_string());
        assert!(Colors::with_overrides(&m).unwrap_err().contains("accent"));
        let mut m = BTreeMap::new();
        m.insert("background".to_string(), "red".to_string());
        assert!(Colors::with_overrides(&m)
            .unwrap_err()
            .contains("no colour \"background\""));
    }
}
