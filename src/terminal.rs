//! How wide the tables may be.
//!
//! Takes: the `--width` flag, whether stdout is a terminal, and `COLUMNS`.
//! Gives: a width in columns, or `None` for unlimited (one line per row).
//! Asking the terminal (the TIOCGWINSZ ioctl) needs `unsafe`, which this
//! crate forbids, so it goes through the `terminal_size` crate, confined to
//! this module.

use std::io::IsTerminal;

/// Width when nothing says otherwise: a pager's usual window.
pub const DEFAULT_WIDTH: u16 = 100;

/// The width tables get: `--width 0` (or `--wide`) is unlimited; `--width N`
/// is N; else the terminal's real width when stdout is one, else `COLUMNS`,
/// else [`DEFAULT_WIDTH`].
pub fn width(flag: Option<u16>, columns: Option<&str>) -> Option<u16> {
    match flag {
        Some(0) => None,
        Some(n) => Some(n),
        None => Some(
            stdout_width()
                .or_else(|| {
                    columns
                        .and_then(|c| c.trim().parse().ok())
                        .filter(|c| *c > 0)
                })
                .unwrap_or(DEFAULT_WIDTH),
        ),
    }
}

/// The terminal's width, when stdout is a terminal that says.
fn stdout_width() -> Option<u16> {
    let stdout = std::io::stdout();
    if !stdout.is_terminal() {
        return None;
    }
    terminal_size::terminal_size_of(&stdout)
        .map(|(w, _)| w.0)
        .filter(|w| *w > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_is_unlimited_and_a_number_is_kept() {
        assert_eq!(width(Some(0), Some("80")), None);
        assert_eq!(width(Some(120), Some("80")), Some(120));
    }

    #[test]
    fn columns_then_the_default_when_not_on_a_terminal() {
        // Tests run with stdout captured: not a terminal.
        if std::io::stdout().is_terminal() {
            return;
        }
        assert_eq!(width(None, Some("132")), Some(132));
        assert_eq!(width(None, Some("junk")), Some(DEFAULT_WIDTH));
        assert_eq!(width(None, None), Some(DEFAULT_WIDTH));
    }
}
