//! Terminal styling: `--color auto|always|never`; with `auto` (the default)
//! colour only when stdout is a terminal, `NO_COLOR` is unset or empty and
//! `TERM` is not `dumb`. Also the prompt printed before a command (`$`, or `PS>`
//! for one that runs in Windows).

use std::io::IsTerminal;
use std::sync::OnceLock;

/// `--color`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

static CHOICE: OnceLock<ColorChoice> = OnceLock::new();

/// Sets the `--color` choice for this process (the first call wins).
pub fn set_choice(c: ColorChoice) {
    let _ = CHOICE.set(c);
}

/// ANSI styles, or nothing.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    /// Colour as `--color` says; `auto`: a terminal, `NO_COLOR` unset or
    /// empty, `TERM` not `dumb`.
    #[allow(clippy::disallowed_methods)] // NO_COLOR and TERM are output settings, not machine state
    pub fn detect() -> Style {
        let color = match CHOICE.get().copied().unwrap_or_default() {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
                let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
                !no_color && !dumb && std::io::stdout().is_terminal()
            }
        };
        Style { color }
    }
    pub fn plain() -> Style {
        Style { color: false }
    }
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    pub fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }
    pub fn dim(&self, s: &str) -> String {
        self.wrap("2", s)
    }
    pub fn red(&self, s: &str) -> String {
        self.wrap("31", s)
    }
    pub fn yellow(&self, s: &str) -> String {
        self.wrap("33", s)
    }
    pub fn green(&self, s: &str) -> String {
        self.wrap("32", s)
    }
}

/// The prompt printed before a command, naming the shell it is written for: `PS>` for a
/// command that runs in Windows (the KB writes those for PowerShell, kb/FORMAT.md
/// "Windows commands"), `$` for the rest.
pub fn prompt(windows: bool) -> &'static str {
    if windows {
        "PS>"
    } else {
        "$"
    }
}
