//! The `[tui]` section of the config file: colours, key bindings and where exports go.
//!
//! ```toml
//! [tui]
//! # Where `e` writes exports (default: $XDG_DATA_HOME/trail/exports).
//! export_dir = "~/trail-exports"
//!
//! [tui.colors]   # a name (yellow), an index (238) or #rrggbb
//! accent = "magenta"
//! match_bg = "#ffd75f"
//!
//! [tui.keys]     # r, N, ctrl-r, alt-x, enter, f2...
//! scope = "ctrl-s"
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

/// `[tui]`: every key optional.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct TuiSection {
    /// Where `e` writes exports; `~/` is the home folder.
    pub export_dir: Option<String>,
    /// `[tui.colors]`: role -> colour (roles: `trail_tui::Colors::NAMES`).
    pub colors: BTreeMap<String, String>,
    /// `[tui.keys]`: action -> key (actions: `trail_tui::Keymap::NAMES`).
    pub keys: BTreeMap<String, String>,
}

impl TuiSection {
    /// The palette with this section's colours applied.
    pub fn colors(&self) -> Result<trail_tui::Colors, String> {
        trail_tui::Colors::with_overrides(&self.colors)
    }

    /// The key map with this section's bindings applied.
    pub fn keymap(&self) -> Result<trail_tui::Keymap, String> {
        trail_tui::Keymap::with_overrides(&self.keys)
    }

    /// The export folder, `~/` read against `home`.
    pub fn export_dir(&self, home: Option<&std::path::Path>) -> Option<PathBuf> {
        let dir = self.export_dir.as_deref()?;
        match (dir.strip_prefix("~/"), home) {
            (Some(rest), Some(h)) => Some(h.join(rest)),
            _ => Some(PathBuf::from(dir)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_reads_and_checks_its_values() {
        let cfg: crate::config::Config = toml::from_str(
            "[tui]\nexport_dir = \"~/x\"\n[tui.colors]\naccent = \"magenta\"\n[tui.keys]\nscope = \"ctrl-s\"\n",
        )
        .unwrap();
        let t = &cfg.tui;
        assert_eq!(
            t.export_dir(Some(std::path::Path::new("/h"))),
            Some(PathBuf::from("/h/x"))
        );
        assert_eq!(t.keymap().unwrap().scope, trail_tui::Key::ctrl('s'));
        assert_eq!(t.colors().unwrap().accent, ratatui_color_magenta());
        let bad: crate::config::Config = toml::from_str("[tui.keys]\nlaunch = \"x\"\n").unwrap();
        assert!(bad.tui.keymap().unwrap_err().contains("launch"));
        // No file, no section: the defaults.
        let none: crate::config::Config = toml::from_str("").unwrap();
        assert_eq!(none.tui, TuiSection::default());
    }

    fn ratatui_color_magenta() -> trail_tui::Color {
        trail_tui::Color::Magenta
    }
}
